// A prediction interval from a model's out-of-sample errors, by split
// conformal prediction (Vovk et al. 2005; Lei et al., JASA 2018), and its
// combination with a fit's own uncertainty. Layer-neutral: the device layer
// builds these from published cases (fitspeed/device/intervals.h), the
// projection layer carries them into totals (fitspeed/project/epochs.h).
//
// An error is the log ratio e = ln(measured / predicted) of a throughput
// predicted by a model that was not calibrated on that case. With n
// exchangeable errors sorted e(1) <= ... <= e(n) and a = 1 - level, a new
// throughput lies in
//   predicted x [exp(e(k_lo)), exp(e(k_hi))],
//   k_lo = floor((n+1) a/2),  k_hi = ceil((n+1)(1 - a/2)),
// with probability >= level, each tail <= a/2. It needs k_lo >= 1 and
// k_hi <= n (n >= 9 at 80%, n >= 39 at 95%), and errors from a minimum
// number of publishers (two or more): cases of one publisher share its
// harness and method, so they are not exchangeable with another's, and an
// interval for a new setup has to see how far publishers differ.
//
// Publishers are weighted equally (issue 32): each error weighs 1 / (the
// errors of its source), shares summing to 1, and the low end is the first
// sorted error whose cumulative share exceeds (k_lo - 1) / n, the high end the
// first from the top whose share exceeds (n - k_hi) / n; with equal weights
// (one error per publisher, or equal counts) this is e(k_lo) and e(k_hi). A
// source is a publisher's name, or several joined by '+' where an error
// involves more than one (a transfer from one publisher's run to another's):
// each counts towards the publishers, and the joined source is weighted as
// one.
#ifndef FITSPEED_CORE_PREDICTION_INTERVAL_H_
#define FITSPEED_CORE_PREDICTION_INTERVAL_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fitspeed {

// One out-of-sample error of the model.
struct ModelError {
  std::string source;    // its publisher ("NVIDIA"), or several joined by '+' (file comment)
  std::string case_key;  // the case it was measured on (e.g. a CaseKey and its line)
  double log_ratio = 0;  // ln(measured / predicted throughput)
};

// The interval of one prediction: throughput = predicted x [low_factor,
// high_factor] (a step time divides by them).
struct PredictionInterval {
  bool available = false;
  std::string reason;   // why not, when !available
  std::string basis;    // the class whose errors built it, e.g. "gpu/tensor"
  int cases = 0;        // errors it was built from
  int sources = 0;      // distinct publishers among them
  int min_sources = 2;  // the sources the rule asked for (EmpiricalInterval)
  double level = 0.8;
  double low_factor = 1;
  double high_factor = 1;
  // Median of the errors' log ratios: the model's bias on the class.
  double median_log_ratio = 0;
  // The errors it was built from (those of `basis`), so that a later step can
  // rebuild it at another level (fitspeed project does, at its confidence).
  std::vector<ModelError> errors;

  // A predicted rate's interval, rate x [low_factor, high_factor], and that of
  // the time it implies (time = work / rate), time / [high_factor, low_factor];
  // both ends NaN when !available.
  std::pair<double, double> RateRange(double rate) const;
  std::pair<double, double> TimeRange(double time) const;
};

// The publishers of a source: its '+'-separated parts ("NVIDIA+Pollux").
std::vector<std::string> PublishersOfSource(const std::string& source);
// Each error's weight, 1 / (errors with its source), in the errors' order:
// every source (publisher) weighs 1 in all.
std::vector<double> PublisherWeights(const std::vector<ModelError>& errors);

// Coverage with publishers weighted equally: each checked case is added with
// its publisher and whether the interval covered it; the result is the mean
// over publishers of the share of their cases covered (NaN with none), so a
// publisher of 60 cases counts as much as one of 2.
class PublisherCoverageTally {
 public:
  void Add(const std::string& publisher, bool covered);
  int Publishers() const { return static_cast<int>(tally_.size()); }
  double Coverage() const;

 private:
  std::map<std::string, std::pair<int, int>> tally_;  // publisher -> (checked, covered)
};

// The split conformal interval (file comment) of `errors` at `level` in (0, 1),
// built on the class `basis`. Not available, with the reason, when the errors
// come from fewer than `min_sources` (>= 2) publishers or are too few for the
// level. Throws UsageError for a level outside (0, 1), min_sources < 2 or a
// non-finite log ratio.
PredictionInterval EmpiricalInterval(const std::vector<ModelError>& errors, double level,
                                     const std::string& basis, int min_sources = 2);

// A model's out-of-sample errors with the rule that builds their interval:
// what a law fitted to a modeled sweep carries (the sweep JSON's
// "model_interval"), so that a later step can rebuild the interval at its own
// level under the same rule.
struct ModelErrorRecord {
  std::vector<ModelError> errors;  // empty: no model behind the numbers
  std::string basis;               // the class they are of, e.g. "gpu/tensor"
  int min_sources = 2;             // EmpiricalInterval's source rule
  bool empty() const { return errors.empty(); }
  PredictionInterval At(double level) const {
    return EmpiricalInterval(errors, level, basis, min_sources);
  }
};

// The interval of a quantity Q predicted by the model (a step time or a total
// of steps) when a fit adds its own uncertainty: in log space around the
// model errors' median bias m, each side's width combined in quadrature,
//   ln(Q_low / Q) = -m - sqrt(w_hi^2 + f^2),  ln(Q_high / Q) = -m + sqrt(w_lo^2 + f^2)
// with w_lo = m - ln(low_factor), w_hi = ln(high_factor) - m the model
// interval's log half-widths on throughput (a time moves the other way) and f
// = fit_half_width / Q the fit's relative half-width at the same level.
// Returns the factors {low, high} that multiply Q.
struct TimeFactors {
  double low = 1;
  double high = 1;
};
TimeFactors CombinedTimeFactors(const PredictionInterval& model, double fit_relative_half_width);

}  // namespace fitspeed

#endif  // FITSPEED_CORE_PREDICTION_INTERVAL_H_
