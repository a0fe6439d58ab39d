// Epoch and run totals: steps per epoch, epoch time from the law, a
// validation pass, startup and first-epoch overheads, and totals for a list
// of epoch counts with a confidence interval propagated from the fit.
//
//   T_epoch = N_used/v0 + steps*t                      (docs/design.md, "Epochs")
//   total(E) = startup + first_epoch_extra + E*(T_epoch + T_validation)
#ifndef FITSPEED_PROJECT_EPOCHS_H_
#define FITSPEED_PROJECT_EPOCHS_H_

#include <Eigen/Core>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/project/cost.h"

namespace fitspeed {

// The hyperbolic law of one configuration, step time T(b) = b/v0 + t at the
// global batch b, with the uncertainty of the fit it came from.
struct SpeedLaw {
  double v0_sps = 0;  // ideal throughput of all devices together, counts/s
  double t_s = 0;     // fixed time per step, s
  // What v0, the batch and the samples per epoch count: "samples", "sequences"
  // or "tokens" (GroupFit::CountName).
  std::string counts = "samples";
  // Covariance of (v0, t) in that order, as FitGroup reports it (scaled by
  // s^2 = RSS/dof). Only used when dof > 0.
  Eigen::Matrix2d covariance = Eigen::Matrix2d::Zero();
  // Degrees of freedom of the fit, for the Student t quantile of intervals;
  // 0 when the law was given as numbers (no interval).
  int dof = 0;
  // The out-of-sample errors of the model whose predictions the law was
  // fitted to (a modeled sweep's "model_interval", written by `fitspeed sweep
  // --device --output json`; fitspeed/core/prediction_interval.h) and their
  // class; empty for a law fitted to measurements. Totals combine them with
  // the fit's uncertainty (TotalInterval).
  ModelErrorRecord model_errors;

  double StepTime(double batch) const { return batch / v0_sps + t_s; }
  bool has_covariance() const { return dof > 0; }
};

// Throws UsageError unless v0 > 0 and t >= 0 are finite; `what` names the law.
void ValidateSpeedLaw(const SpeedLaw& law, const std::string& what);

// The law of a hyperbolic fit: its v0, t, covariance and dof. Throws DataError
// when the fit is of another law or lacks v0 or t.
SpeedLaw SpeedLawFromFit(const GroupFit& fit);

// A validation pass run after every training epoch.
struct ValidationSpec {
  // Validation samples per epoch; 0 means no validation pass.
  double samples = 0;
  // Batch of the validation pass; 0 means the training batch.
  double batch = 0;
  // The measured forward-only law of the validation pass (global, all devices).
  // Empty: derived from the training law with the two fractions below and
  // labelled as an assumption.
  std::optional<SpeedLaw> law;
  // Derived law: a forward pass is about a third of the training FLOPs
  // (forward, backward-data, backward-weights), so time per sample is
  // forward_fraction/v0. Must be in (0, 1].
  double forward_fraction = 1.0 / 3.0;
  // Derived law: no optimizer update and no all-reduce, so the fixed time is
  // fixed_fraction*t (the launches of the forward kernels). Must be in [0, 1].
  double fixed_fraction = 1.0 / 3.0;
};

// A validation pass of `samples` samples at `batch` (0: the training batch);
// `v0_sps` and `t_s` its measured forward-only law, both NaN to derive it
// from the training law by the two fractions. Throws UsageError when one of
// v0 and t is given without the other; ValidateWorkload checks the rest.
ValidationSpec MakeValidationSpec(double samples, double batch, double v0_sps, double t_s,
                                  double forward_fraction = 1.0 / 3.0,
                                  double fixed_fraction = 1.0 / 3.0);

// What one training run does besides the steps: the data and the overheads.
struct Workload {
  // Training samples per epoch, N; must be > 0.
  double samples_per_epoch = 0;
  // How an epoch is cut into steps (ceil or floor of N/b).
  StepsRule steps_rule = StepsRule::kKeepPartial;
  ValidationSpec validation;
  // Seconds before epoch 1 (model build, compilation); >= 0.
  double startup_s = 0;
  // Seconds epoch 1 takes beyond a steady epoch (graph compilation, warm-up); >= 0.
  double first_epoch_extra_s = 0;
};

// Throws UsageError naming the field that breaks its rule.
void ValidateWorkload(const Workload& workload);

// The time model of one configuration: total(E) = startup_s +
// first_epoch_extra_s + E*epoch_s, with the standard error of epoch_s.
struct EpochModel {
  std::string label;
  int devices = 1;
  double batch = 0;            // global batch per step
  double steps_per_epoch = 0;  // training steps (NaN when not known)
  double samples_used = 0;     // training samples actually trained per epoch (NaN when not known)
  double train_epoch_s = 0;    // training steps of one steady epoch
  double validation_epoch_s = 0;  // validation pass of one epoch
  double epoch_s = 0;             // steady epoch: train + validation
  double startup_s = 0;
  double first_epoch_extra_s = 0;
  // Standard error of epoch_s: from the fit covariance (delta method) or from
  // the spread of measured steady epochs (sd/sqrt(n)). Used when dof > 0.
  double epoch_stderr_s = 0;
  // Spread (sample standard deviation) of measured steady epochs around their
  // mean; 0 for a law. A run of E epochs adds E such independent deviations.
  double epoch_sd_s = 0;
  int dof = 0;
  // Where the numbers came from: "fit", "numbers", "measured", "scaling", ...
  std::string origin;
  // Assumptions behind the numbers, in words (shown with every projection).
  std::vector<std::string> assumptions;
  // SpeedLaw::model_errors of the law it came from: the epoch is a model's
  // prediction with these out-of-sample errors.
  ModelErrorRecord model_errors;

  // startup + first-epoch extra + epochs * epoch_s.
  double Total(double epochs) const;
};

// The epoch model of `law` at global `batch` on `devices` devices. The epoch
// time is N_used/v0 + steps*t; with a covariance, its standard error is
// sqrt(g' C g) with g = dT/d(v0, t) = (-N_used/v0^2, steps) (plus the validation
// pass's terms). Throws UsageError on an invalid law, batch or workload.
EpochModel EpochModelFromLaw(const SpeedLaw& law, double batch, const Workload& workload,
                             const std::string& label = "", int devices = 1);

// Measured epoch times of one configuration: epoch 1 first, in order.
struct EpochLog {
  std::string label;
  int devices = 1;
  double batch = 0;
  std::optional<double> samples_per_epoch;
  StepsRule steps_rule = StepsRule::kKeepPartial;
  std::vector<double> epoch_times_s;  // epochs 1, 2, ..., E
  std::optional<double> startup_s;    // time before epoch 1, when logged
  std::string source;                 // file, for messages
};

// The epoch model measured from a log: startup = time before epoch 1 (0, and
// said so in the assumptions, when not logged), steady = mean of epochs 2..E,
// first-epoch extra = epoch 1 - steady (may be negative when epoch 1 was not
// slow), standard error sd/sqrt(E-1) with E-2 dof.
// Needs E >= 2 epochs; throws DataError otherwise.
EpochModel EpochModelFromLog(const EpochLog& log);

// Splits epoch-time samples (read with ReadOptions::skip_first_epochs = 0)
// into one log per (devices, label, precision, batch), epochs sorted. The
// startup time is read from the tag named `startup_tag` when present (e.g. the
// koshian2 CSV column "initial_time_s"). Throws DataError when a series lacks
// epoch numbers, lacks epoch 1, repeats or skips an epoch, or has
// disagreeing startup times.
std::vector<EpochLog> EpochLogsFromSamples(const std::vector<Sample>& samples,
                                           const std::string& startup_tag = "initial_time_s");

// 10, 20, 50, 100, 200, 500, 1000, 2000.
std::vector<double> DefaultEpochCounts();

// One projected run.
struct ProjectionRow {
  std::string label;
  int devices = 1;
  double batch = 0;
  double epochs = 0;
  double steps_per_epoch = 0;
  double epoch_s = 0;
  double total_s = 0;
  std::optional<double> ci_low_s;  // interval of total_s (TotalInterval)
  std::optional<double> ci_high_s;
  std::string interval_basis;  // TotalInterval::basis; "" without an interval
  std::optional<double> price_per_device_hour;
  std::optional<double> cost;  // devices * hours * price
};

struct ProjectOptions {
  // Epoch counts to project; each must be > 0.
  std::vector<double> epochs = DefaultEpochCounts();
  // Level of the interval, in (0, 1).
  double confidence = 0.95;
  // Prices per device-hour; rows without a price have no cost.
  PriceList prices;
};

// The interval half-width of total(E): q*sqrt(E^2*epoch_stderr_s^2 + E*epoch_sd_s^2),
// q the Student t quantile at (1+confidence)/2 with the model's dof (for a law:
// the delta method, E*q*stderr); nullopt when dof == 0.
std::optional<double> TotalHalfWidth(const EpochModel& model, double epochs, double confidence);

// The interval of total(E) at `confidence`. Without model errors: total +-
// TotalHalfWidth (basis "fit"; nullopt without dof). With them, the epochs'
// part P = E x epoch_s is a model's prediction: the model's split conformal
// interval at the same level (EmpiricalInterval of model_errors) is combined
// with the fit's relative half-width TotalHalfWidth/P by CombinedTimeFactors,
//   [fixed + P x low, fixed + P x high],  fixed = startup + first-epoch extra,
// basis "fit + model <class>" (or "model <class>" without a fit interval).
// When the errors are too few for the level, the fit's interval alone, and
// `note` says why the model's is missing.
struct TotalInterval {
  std::optional<double> low_s;
  std::optional<double> high_s;
  std::string basis;
  std::string note;  // the model interval's reason when it was not available
};
TotalInterval TotalIntervalOf(const EpochModel& model, double epochs, double confidence);

// One row per model and epoch count, models in the given order.
std::vector<ProjectionRow> ProjectTotals(const std::vector<EpochModel>& models,
                                         const ProjectOptions& options = {});

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_EPOCHS_H_
