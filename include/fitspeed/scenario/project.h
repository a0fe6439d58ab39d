// Fits, projections and plans from a law as requests
// (fitspeed/scenario/answer.h): `fitspeed fit`, `fitspeed project` and
// `fitspeed plan` (without --device) fill these; so do the Python module's
// fit() and project().
#ifndef FITSPEED_SCENARIO_PROJECT_H_
#define FITSPEED_SCENARIO_PROJECT_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/comm.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/project/config.h"
#include "fitspeed/project/epochs.h"
#include "fitspeed/project/plan.h"
#include "fitspeed/project/report.h"
#include "fitspeed/project/scaling.h"
#include "fitspeed/project/whatif.h"
#include "fitspeed/scenario/answer.h"

namespace fitspeed {

struct FitAnswer;

// `fitspeed fit`: the law fitted to every group of samples.
struct FitRequest {
  // The samples (ReadSamples of each log, filtered). At least one.
  std::vector<Sample> samples;
  // Law, objective, loss, confidence, leave-one-out (fitspeed/fit/fit.h).
  FitOptions options;

  void Validate() const;
  FitAnswer Run() const;
};

struct FitAnswer : Answer {
  FitResult fit;
  // Table: the fit report of every group; CSV: one row per group; JSON:
  // fitspeed.fit/1 (WriteFit).
  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
  void WriteHtml(std::ostream& out) const override;
};

// Where the law of a projection or a plan comes from: exactly one of
// `samples` (fitted with `fit`), `fit_json` (a fitspeed.fit/1 document) or
// `law` (numbers).
struct LawSource {
  // Samples of logs, fitted per group (devices, label, precision, unit).
  std::vector<Sample> samples;
  FitOptions fit;
  // The text of a fitspeed.fit/1 document: a fit, or a modeled sweep whose
  // model interval then widens the totals. `fit_json_name` names it in messages.
  std::string fit_json;
  std::string fit_json_name = "<fit>";
  // v0 (samples/s of all `law_devices` devices together, > 0) and t (s, >= 0).
  std::optional<SpeedLaw> law;
  std::string label;    // the law's configuration name (also its price's key)
  int law_devices = 1;  // devices the law was measured on, >= 1
  // Global batches (> 0) replacing each configuration's measured ones; empty:
  // their own, which a law given as numbers does not have.
  std::vector<double> batches;

  // UsageError unless exactly one source is given, and for bad numbers.
  void Validate() const;
  // The configurations of the source; `notes` receives a warning per
  // configuration whose fit is not usable. A per-epoch log at one batch size,
  // which cannot be fitted, gets a DataError pointing to `project --measured`.
  std::vector<Configuration> Configurations(std::vector<std::string>& notes) const;
};

// Data parallelism of single-device configurations (`--devices`): the
// gradient all-reduce over the links given (numbers, a links file, or
// calibrated from fits on several device counts).
struct ScalingSpec {
  std::vector<int> devices;  // device counts (>= 1); empty: no scaling
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::kRing;
  // In-node and between-node links: bandwidth (bytes/s per direction, > 0) and
  // latency (s per message, >= 0); a links file's "devices" and "network"
  // links instead; `comm_from_fit`: the in-node link fitted to t(n) - t(1).
  std::optional<double> intra_bandwidth, intra_latency, inter_bandwidth, inter_latency;
  std::string links;  // a fitspeed.links/1 file; empty: none
  bool comm_from_fit = false;
  int devices_per_node = 0;  // 0: every device in one node
  double overlap = 1;        // overlap exponent g >= 1 (Pollux: T = (Tc^g + Tn^g)^(1/g))
  // The bytes all-reduced per step: exactly one of gradient_bytes (> 0),
  // params (> 0) x bytes_per_param, or a published model's parameters
  // (FindPublishedModel) x bytes_per_param.
  std::optional<double> gradient_bytes;
  std::optional<double> params;
  std::string model;
  double bytes_per_param = 4;

  // The model of `config` (on one device); `all` supplies the fits on other
  // device counts for comm_from_fit; `notes` receives where the links and the
  // gradient size came from. UsageError for a missing or contradicting link.
  DataParallelModel ModelOf(const Configuration& config, const std::vector<Configuration>& all,
                            std::vector<std::string>& notes) const;
};

struct ProjectAnswer;

// `fitspeed project`: epoch and run totals, with their intervals and costs.
struct ProjectRequest {
  LawSource source;
  // `source.samples` are per-epoch logs, projected as measured (no law):
  // startup, steady epoch and first-epoch extra from the epochs themselves.
  bool measured = false;
  // Training samples per epoch N (> 0); 0: the samples' own (one value).
  double samples_per_epoch = 0;
  StepsRule steps_rule = StepsRule::kKeepPartial;
  // Seconds before epoch 1 (>= 0); a measured log's own when it has one.
  std::optional<double> startup_s;
  double first_epoch_extra_s = 0;  // seconds epoch 1 takes beyond a steady one, >= 0
  ValidationSpec validation;       // a validation pass per epoch; none by default
  WhatIfs whatifs;                 // rows with v0 or t scaled, or another steps per call
  ScalingSpec scaling;
  bool weak = true;             // with scaling: per-device batch fixed
  bool strong = false;          // with scaling: global batch fixed
  int max_devices = 0;          // > 0: where strong scaling stops paying, up to this
  double min_efficiency = 0.5;  // the scaling efficiency still worth paying for, in (0, 1]
  // Epoch counts, confidence of the intervals, prices per device-hour.
  ProjectOptions options;

  void Validate() const;
  ProjectAnswer Run() const;
};

struct ProjectAnswer : Answer {
  Projection projection;
  // Table, CSV or JSON (fitspeed.project/1): WriteProjection.
  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
  void WriteHtml(std::ostream& out) const override;
};

struct LawPlanAnswer;

// `fitspeed plan` from a law: the (device, count, batch) configurations that
// meet a deadline and a budget, fastest or cheapest first.
struct LawPlanRequest {
  LawSource source;
  double samples_per_epoch = 0;  // N (> 0); 0: the samples' own
  // Epochs (fixed or against the batch), deadline, budget, prices, startup,
  // B*, the interval's level (fitspeed/project/plan.h); its samples_per_epoch
  // and steps rule are this request's.
  PlanRequest plan;
  ScalingSpec scaling;  // adds data-parallel configurations of single-device ones
  PlanOrder order = PlanOrder::kFastest;

  void Validate() const;
  LawPlanAnswer Run() const;
};

struct LawPlanAnswer : Answer {
  PlanRequest request;  // what was planned: the deadline, budget and interval level
  PlanResult plan;
  // Table, CSV or JSON (fitspeed.plan/1): WritePlan.
  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
  void WriteHtml(std::ostream& out) const override;
};

}  // namespace fitspeed

#endif  // FITSPEED_SCENARIO_PROJECT_H_
