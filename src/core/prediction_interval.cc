// Prediction intervals from out-of-sample errors (prediction_interval.h).
#include "fitspeed/core/prediction_interval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "fitspeed/core/error.h"

namespace fitspeed {

std::pair<double, double> PredictionInterval::RateRange(double rate) const {
  if (!available) return {NAN, NAN};
  return {rate * low_factor, rate * high_factor};
}

std::pair<double, double> PredictionInterval::TimeRange(double time) const {
  if (!available) return {NAN, NAN};
  return {time / high_factor, time / low_factor};
}

std::vector<std::string> PublishersOfSource(const std::string& source) {
  std::vector<std::string> publishers;
  size_t begin = 0;
  for (size_t end; (end = source.find('+', begin)) != std::string::npos; begin = end + 1) {
    publishers.push_back(source.substr(begin, end - begin));
  }
  publishers.push_back(source.substr(begin));
  return publishers;
}

std::vector<double> PublisherWeights(const std::vector<ModelError>& errors) {
  std::map<std::string, int> per_source;
  for (const ModelError& m : errors) ++per_source[m.source];
  std::vector<double> weights;
  weights.reserve(errors.size());
  for (const ModelError& m : errors) weights.push_back(1.0 / per_source[m.source]);
  return weights;
}

void PublisherCoverageTally::Add(const std::string& publisher, bool covered) {
  std::pair<int, int>& t = tally_[publisher];
  ++t.first;
  t.second += covered ? 1 : 0;
}

double PublisherCoverageTally::Coverage() const {
  if (tally_.empty()) return std::nan("");
  double sum = 0;
  for (const auto& [publisher, t] : tally_) sum += static_cast<double>(t.second) / t.first;
  return sum / static_cast<double>(tally_.size());
}

namespace {

// The k-th order statistic generalized to weights: the first error, from the
// low end (or from the high end, `from_top`), whose cumulative weight share
// exceeds `excluded`, the share of the k - 1 errors beyond it ((k - 1) / n;
// with equal weights exactly e(k)). `pairs` sorted by error, weights summing to 1.
double WeightedOrderStatistic(const std::vector<std::pair<double, double>>& pairs, double excluded,
                              bool from_top) {
  double cumulative = 0;
  for (size_t j = 0; j < pairs.size(); ++j) {
    const auto& [e, w] = pairs[from_top ? pairs.size() - 1 - j : j];
    cumulative += w;
    if (cumulative > excluded + 1e-12) return e;
  }
  return from_top ? pairs.front().first : pairs.back().first;
}

// The weighted median: the middle error, or the mean of the two middle ones
// where the cumulative share lands on 1/2 exactly (equal weights, even n).
double WeightedMedian(const std::vector<std::pair<double, double>>& pairs) {
  double cumulative = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    cumulative += pairs[i].second;
    if (cumulative >= 0.5 - 1e-12) {
      if (std::fabs(cumulative - 0.5) < 1e-12 && i + 1 < pairs.size()) {
        return (pairs[i].first + pairs[i + 1].first) / 2;
      }
      return pairs[i].first;
    }
  }
  return pairs.back().first;
}

}  // namespace

PredictionInterval EmpiricalInterval(const std::vector<ModelError>& errors, double level,
                                     const std::string& basis, int min_sources) {
  if (!(level > 0 && level < 1)) {
    throw UsageError(fmt::format("interval level must be in (0, 1), got {}", level));
  }
  if (min_sources < 2) {
    throw UsageError(fmt::format("an interval needs errors from 2 or more publishers, asked for {}",
                                 min_sources));
  }
  PredictionInterval interval;
  interval.basis = basis;
  interval.level = level;
  interval.cases = static_cast<int>(errors.size());
  interval.min_sources = min_sources;
  std::set<std::string> publishers;
  for (const ModelError& m : errors) {
    for (std::string& p : PublishersOfSource(m.source)) publishers.insert(std::move(p));
  }
  interval.sources = static_cast<int>(publishers.size());
  interval.errors = errors;
  for (const ModelError& m : errors) {
    if (!std::isfinite(m.log_ratio)) {
      throw UsageError(fmt::format("error of {} ({}) is not finite", m.case_key, m.source));
    }
  }
  const int n = interval.cases;
  const double tail = (1 - level) / 2;
  // Order statistics k_lo and k_hi (1-based) of the unweighted rule; the small
  // tolerance keeps (n+1) x 0.1 = 1 exactly 1 under rounding.
  const int k_lo = static_cast<int>(std::floor((n + 1) * tail + 1e-9));
  const int k_hi = static_cast<int>(std::ceil((n + 1) * (1 - tail) - 1e-9));
  if (interval.sources < min_sources) {
    interval.reason = fmt::format(
        "{}: {} published case(s) from {} publisher(s); an interval needs cases from {} or more "
        "publishers",
        basis, n, interval.sources, min_sources);
    return interval;
  }
  if (k_lo < 1 || k_hi > n) {
    const int needed = static_cast<int>(std::ceil(1 / tail - 1 - 1e-9));
    interval.reason = fmt::format("{}: {} published cases; a {:.0f}% interval needs at least {}",
                                  basis, n, 100 * level, needed);
    return interval;
  }
  // Publishers weighted equally: each error weighs 1 / (its source's errors),
  // shares normalized to 1; the low end is the first error from below whose
  // cumulative share exceeds (k_lo - 1) / n, the high end the first from above
  // whose share exceeds (n - k_hi) / n (with equal weights, e(k_lo) and e(k_hi)).
  const std::vector<double> weights = PublisherWeights(errors);
  double total = 0;
  for (double w : weights) total += w;
  std::vector<std::pair<double, double>> pairs;
  pairs.reserve(errors.size());
  for (size_t i = 0; i < errors.size(); ++i) {
    pairs.emplace_back(errors[i].log_ratio, weights[i] / total);
  }
  std::sort(pairs.begin(), pairs.end());
  interval.available = true;
  interval.low_factor =
      std::exp(WeightedOrderStatistic(pairs, static_cast<double>(k_lo - 1) / n, false));
  interval.high_factor =
      std::exp(WeightedOrderStatistic(pairs, static_cast<double>(n - k_hi) / n, true));
  interval.median_log_ratio = WeightedMedian(pairs);
  return interval;
}

TimeFactors CombinedTimeFactors(const PredictionInterval& model, double fit_relative_half_width) {
  FITSPEED_CHECK(model.available, "a combined interval needs the model's interval");
  const double f = std::isfinite(fit_relative_half_width) ? fit_relative_half_width : 0;
  const double m = model.median_log_ratio;
  // Half-widths of the model interval on throughput, around its median.
  const double w_lo = std::max(0.0, m - std::log(model.low_factor));
  const double w_hi = std::max(0.0, std::log(model.high_factor) - m);
  // A time is the reciprocal: a throughput above the prediction shortens it.
  TimeFactors t;
  t.low = std::exp(-m - std::hypot(w_hi, f));
  t.high = std::exp(-m + std::hypot(w_lo, f));
  return t;
}

}  // namespace fitspeed
