// Capacity planning: which (device, count, batch) configurations meet a
// deadline and/or a budget for a training job, fastest and cheapest first,
// with the Pareto set (no other configuration is both faster and cheaper)
// marked.
//
// Epochs are either fixed or follow the batch: E(B) = E_min*(1 + B/B_noise)
// (McCandlish, Kaplan, Amodei et al., "An Empirical Model of Large-Batch
// Training", 2018, eq. 2.11), and with the law the wall time to target on n
// devices is minimised near B* = sqrt(B_noise * n * v0 * t) (docs/design.md, "Epochs to a target").
#ifndef FITSPEED_PROJECT_PLAN_H_
#define FITSPEED_PROJECT_PLAN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/project/cost.h"
#include "fitspeed/project/epochs.h"
#include "fitspeed/project/scaling.h"

namespace fitspeed {

// E(B) = e_min * (1 + B/b_noise).
struct EpochsVsBatch {
  double e_min = 0;    // epochs to target at a very small batch; > 0
  double b_noise = 0;  // the gradient noise scale, samples; > 0
  double Epochs(double global_batch) const { return e_min * (1 + global_batch / b_noise); }
};

// B* = sqrt(b_noise * v0 * t) with v0 the throughput of all devices together
// (n times the per-device v0): the batch that minimises
// E(B) * N/B * (B/v0 + t) (setting d/dB = 0 gives B^2 = b_noise*v0*t).
double OptimalBatch(double b_noise, const SpeedLaw& law_all_devices);

// One configuration: a device kind and count, and how long a step takes.
struct PlanCandidate {
  std::string device;  // name, also the key of its price
  int devices = 1;
  // Seconds per step at a global batch (all devices together).
  std::function<double(double)> step_time_s;
  // The law at this device count (for B*); empty when the step time is not of
  // the law's form.
  std::optional<SpeedLaw> law;
  // Global batches to consider.
  std::vector<double> batches;
  // Notes on how the step time was obtained (copied to the plan's assumptions).
  std::vector<std::string> assumptions;
};

// A candidate whose step time is `law` (v0 of all `devices` together).
PlanCandidate CandidateFromLaw(const std::string& device, int devices, const SpeedLaw& law,
                               std::vector<double> batches);

// A candidate on `devices` devices of `model`; `batches` are global.
PlanCandidate CandidateFromScaling(const std::string& device, int devices,
                                   const DataParallelModel& model, std::vector<double> batches);

struct PlanRequest {
  double samples_per_epoch = 0;  // N > 0
  StepsRule steps_rule = StepsRule::kKeepPartial;
  // Exactly one of: a fixed number of epochs, or the epochs-vs-batch law.
  std::optional<double> epochs;
  std::optional<EpochsVsBatch> epochs_vs_batch;
  // Limits; a configuration must meet every limit given.
  std::optional<double> deadline_s;
  std::optional<double> budget;  // in the prices' currency
  PriceList prices;              // by candidate device name
  double startup_s = 0;          // added to every run
  double first_epoch_extra_s = 0;
  // With epochs_vs_batch: also consider B* of each candidate, rounded to a
  // multiple of its device count.
  bool add_optimal_batch = true;
  // Level of the interval of a total whose law carries a model's errors
  // (SpeedLaw::model_errors: a law fitted to a device model's sweep), in (0, 1).
  double interval_level = 0.8;
};
void ValidatePlanRequest(const PlanRequest& request);  // throws UsageError

enum class PlanOrder { kFastest, kCheapest };

struct PlanRow {
  std::string device;
  int devices = 1;
  double batch = 0;            // global
  bool optimal_batch = false;  // this batch is the candidate's B*
  double epochs = 0;
  double steps_per_epoch = 0;
  double epoch_s = 0;
  double total_s = 0;
  std::optional<double> cost;
  bool meets_deadline = true;
  bool meets_budget = true;
  bool pareto = false;  // among the configurations that meet the limits
  // The model's interval of total_s at PlanRequest::interval_level, when the
  // candidate's law carries a model's errors and they give one (the fit's own
  // uncertainty is not included: a plan compares point laws).
  std::optional<double> total_low_s;
  std::optional<double> total_high_s;
  std::string interval_basis;  // the errors' class, e.g. "gpu/tensor"
  // The deadline is met by total_s but not by total_high_s.
  bool deadline_at_risk = false;
  bool feasible() const { return meets_deadline && meets_budget; }
};

struct PlanResult {
  // Every configuration considered; those that meet the limits first, each
  // part ordered by the requested order (ties by the other criterion).
  std::vector<PlanRow> rows;
  std::vector<std::string> assumptions;
  // Index into rows of the fastest and cheapest feasible configurations.
  std::optional<size_t> fastest;
  std::optional<size_t> cheapest;
};

// Evaluates every candidate at every batch. Batches with fewer than one sample
// per device, or more than the epoch's samples under the drop-remainder rule,
// are skipped. A row is on the Pareto set when no other feasible row is at
// least as fast and at least as cheap and better in one (rows without a cost
// compare on time alone). Throws UsageError on an invalid request or candidate.
PlanResult Plan(const std::vector<PlanCandidate>& candidates, const PlanRequest& request,
                PlanOrder order = PlanOrder::kFastest);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_PLAN_H_
