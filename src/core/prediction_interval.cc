// Prediction intervals from out-of-sample errors (prediction_interval.h).
#include "fitspeed/core/prediction_interval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/median.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

PredictionInterval EmpiricalInterval(const std::vector<ModelError>& errors, double level,
                                     const std::string& basis, int min_sources) {
  if (!(level > 0 && level < 1)) {
    throw UsageError(fmt::format("interval level must be in (0, 1), got {}", level));
  }
  if (min_sources < 2) {
    throw UsageError(
        fmt::format("an interval needs errors from 2 or more sources, asked for {}", min_sources));
  }
  PredictionInterval interval;
  interval.basis = basis;
  interval.level = level;
  interval.cases = static_cast<int>(errors.size());
  interval.min_sources = min_sources;
  std::set<std::string> sources;
  for (const ModelError& m : errors) sources.insert(m.source);
  interval.sources = static_cast<int>(sources.size());
  interval.errors = errors;
  std::vector<double> e;
  for (const ModelError& m : errors) {
    if (!std::isfinite(m.log_ratio)) {
      throw UsageError(fmt::format("error of {} ({}) is not finite", m.case_key, m.source));
    }
    e.push_back(m.log_ratio);
  }
  const int n = interval.cases;
  const double tail = (1 - level) / 2;
  // Order statistics k_lo and k_hi (1-based); the small tolerance keeps
  // (n+1) x 0.1 = 1 exactly 1 under rounding.
  const int k_lo = static_cast<int>(std::floor((n + 1) * tail + 1e-9));
  const int k_hi = static_cast<int>(std::ceil((n + 1) * (1 - tail) - 1e-9));
  if (interval.sources < min_sources) {
    interval.reason = fmt::format(
        "{}: {} published case(s) from {} source(s); an interval needs cases from {} or more "
        "sources",
        basis, n, interval.sources, min_sources);
    return interval;
  }
  if (k_lo < 1 || k_hi > n) {
    const int needed = static_cast<int>(std::ceil(1 / tail - 1 - 1e-9));
    interval.reason = fmt::format("{}: {} published cases; a {:.0f}% interval needs at least {}",
                                  basis, n, 100 * level, needed);
    return interval;
  }
  std::sort(e.begin(), e.end());
  interval.available = true;
  interval.low_factor = std::exp(e[static_cast<size_t>(k_lo - 1)]);
  interval.high_factor = std::exp(e[static_cast<size_t>(k_hi - 1)]);
  interval.median_log_ratio = Median(e);
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
