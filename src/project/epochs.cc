// Epoch and run totals (see epochs.h and docs/design.md, "Epochs").
#include "fitspeed/project/epochs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "core/finite.h"
#include "core/table.h"
#include "fit/statistics.h"
#include "fitspeed/core/error.h"
#include "io/text.h"
#include "project/validation_pass.h"

namespace fitspeed {

namespace {

size_t ParamIndex(const GroupFit& fit, const std::string& name) {
  for (size_t i = 0; i < fit.params.size(); ++i) {
    if (fit.params[i].name == name) return i;
  }
  throw DataError(
      fmt::format("fit of {} has no parameter '{}' (law '{}'); projections need "
                  "the hyperbolic law's v0 and t",
                  fit.group.ToString(), name, fit.law));
}

const char* RuleWords(StepsRule rule) {
  return rule == StepsRule::kKeepPartial ? "ceil(N/b) steps, the last batch partial"
                                         : "floor(N/b) steps, the remainder dropped";
}

}  // namespace

void ValidateSpeedLaw(const SpeedLaw& law, const std::string& what) {
  if (!PositiveFinite(law.v0_sps)) {
    throw UsageError(fmt::format("{}: v0 must be > 0 and finite, got {}", what, law.v0_sps));
  }
  if (!NonNegativeFinite(law.t_s)) {
    throw UsageError(fmt::format("{}: t must be >= 0 and finite, got {}", what, law.t_s));
  }
  if (law.dof < 0) throw UsageError(fmt::format("{}: dof must be >= 0, got {}", what, law.dof));
  if (law.dof > 0 && !law.covariance.allFinite()) {
    throw UsageError(fmt::format("{}: the covariance of (v0, t) is not finite", what));
  }
}

SpeedLaw SpeedLawFromFit(const GroupFit& fit) {
  if (fit.law != "hyperbolic") {
    throw DataError(
        fmt::format("fit of {} is of law '{}'; projections need the hyperbolic law "
                    "T(b) = b/v0 + t",
                    fit.group.ToString(), fit.law));
  }
  const size_t iv = ParamIndex(fit, "v0");
  const size_t it = ParamIndex(fit, "t");
  SpeedLaw law;
  law.v0_sps = fit.params[iv].value;
  law.t_s = fit.params[it].value;
  law.counts = fit.CountName();
  const auto n = static_cast<Eigen::Index>(fit.params.size());
  const bool have_covariance = fit.covariance.rows() == n && fit.covariance.cols() == n;
  if (have_covariance && fit.dof > 0) {
    const auto v = static_cast<Eigen::Index>(iv), t = static_cast<Eigen::Index>(it);
    law.covariance << fit.covariance(v, v), fit.covariance(v, t), fit.covariance(t, v),
        fit.covariance(t, t);
    if (law.covariance.allFinite()) law.dof = fit.dof;
  }
  if (law.dof == 0) law.covariance.setZero();
  if (!PositiveFinite(law.v0_sps) || !NonNegativeFinite(law.t_s)) {
    throw DataError(
        fmt::format("fit of {} has v0 = {} and t = {}; projections need v0 > 0 "
                    "and t >= 0",
                    fit.group.ToString(), law.v0_sps, law.t_s));
  }
  return law;
}

ValidationSpec MakeValidationSpec(double samples, double batch, double v0_sps, double t_s,
                                  double forward_fraction, double fixed_fraction) {
  ValidationSpec spec;
  spec.samples = samples;
  spec.batch = batch;
  spec.forward_fraction = forward_fraction;
  spec.fixed_fraction = fixed_fraction;
  if (std::isnan(v0_sps) != std::isnan(t_s)) {
    throw UsageError("--val-v0 and --val-t go together");
  }
  if (!std::isnan(v0_sps)) {
    SpeedLaw law;
    law.v0_sps = v0_sps;
    law.t_s = t_s;
    spec.law = law;
  }
  return spec;
}

void ValidateWorkload(const Workload& w) {
  if (!PositiveFinite(w.samples_per_epoch)) {
    throw UsageError(
        fmt::format("samples per epoch must be > 0 and finite, got {}", w.samples_per_epoch));
  }
  const ValidationSpec& v = w.validation;
  if (!NonNegativeFinite(v.samples)) {
    throw UsageError(fmt::format("validation samples must be >= 0 and finite, got {}", v.samples));
  }
  if (!NonNegativeFinite(v.batch)) {
    throw UsageError(fmt::format("validation batch must be >= 0 and finite, got {}", v.batch));
  }
  if (!(v.forward_fraction > 0 && v.forward_fraction <= 1)) {
    throw UsageError(
        fmt::format("validation forward fraction must be in (0, 1], got {}", v.forward_fraction));
  }
  if (!(v.fixed_fraction >= 0 && v.fixed_fraction <= 1)) {
    throw UsageError(
        fmt::format("validation fixed-time fraction must be in [0, 1], got {}", v.fixed_fraction));
  }
  if (v.law) ValidateSpeedLaw(*v.law, "validation law");
  if (!NonNegativeFinite(w.startup_s)) {
    throw UsageError(fmt::format("startup time must be >= 0 and finite, got {}", w.startup_s));
  }
  if (!NonNegativeFinite(w.first_epoch_extra_s)) {
    throw UsageError(fmt::format("first-epoch extra time must be >= 0 and finite, got {}",
                                 w.first_epoch_extra_s));
  }
}

double EpochModel::Total(double epochs) const {
  return startup_s + first_epoch_extra_s + epochs * epoch_s;
}

EpochModel EpochModelFromLaw(const SpeedLaw& law, double batch, const Workload& workload,
                             const std::string& label, int devices) {
  ValidateSpeedLaw(law, "training law");
  ValidateWorkload(workload);
  if (!PositiveFinite(batch)) {
    throw UsageError(fmt::format("batch must be > 0 and finite, got {}", batch));
  }
  if (devices < 1) throw UsageError(fmt::format("devices must be >= 1, got {}", devices));
  const double n = workload.samples_per_epoch;
  if (workload.steps_rule == StepsRule::kDropRemainder && batch > n) {
    throw UsageError(
        fmt::format("batch {} exceeds the {} samples per epoch: dropping the "
                    "remainder leaves no step",
                    batch, n));
  }
  EpochModel m;
  m.label = label;
  m.devices = devices;
  m.batch = batch;
  m.startup_s = workload.startup_s;
  m.first_epoch_extra_s = workload.first_epoch_extra_s;
  m.origin = "law";
  m.model_errors = law.model_errors;
  m.steps_per_epoch = StepsPerEpoch(n, batch, workload.steps_rule);
  m.samples_used = SamplesUsedPerEpoch(n, batch, workload.steps_rule);
  // docs/design.md, "Epochs": T_epoch = N_used/v0 + steps*t.
  m.train_epoch_s = m.samples_used / law.v0_sps + m.steps_per_epoch * law.t_s;
  // d T_epoch / d(v0, t).
  Eigen::Vector2d gradient(-m.samples_used / (law.v0_sps * law.v0_sps), m.steps_per_epoch);
  m.assumptions.push_back(
      fmt::format("epoch time = N_used/v0 + steps*t with {}", RuleWords(workload.steps_rule)));
  if (law.counts != "samples") {
    m.assumptions.push_back(fmt::format(
        "the law counts {0}: the batch, the samples per epoch N and v0 are in {0}", law.counts));
  }

  const ValidationSpec& val = workload.validation;
  double validation_variance = 0;
  bool validation_exact = true;  // the validation time has no uncertainty of its own
  int validation_dof = 0;
  if (val.samples > 0) {
    const ValidationPass pass = ValidationPassOf(val, batch, law, 1);
    m.validation_epoch_s = pass.time_s;
    if (val.law) {
      if (val.law->has_covariance()) {
        validation_variance = pass.variance_s2;
        validation_exact = false;
        validation_dof = val.law->dof;
      }
      m.assumptions.push_back(
          "validation pass: its own measured forward-only law, every validation sample, last "
          "batch partial");
    } else {
      gradient += pass.training_gradient;
      m.assumptions.push_back(fmt::format(
          "validation pass derived, not measured (assumption): forward only, time per sample "
          "{} of training's (forward ~ 1/3 of the training FLOPs), fixed time per step {} of t "
          "(no optimizer update, no all-reduce)",
          FormatSig(val.forward_fraction, 3), FormatSig(val.fixed_fraction, 3)));
    }
  }
  m.epoch_s = m.train_epoch_s + m.validation_epoch_s;

  if (law.has_covariance()) {
    m.epoch_stderr_s = std::sqrt(LawVariance(gradient, law.covariance) + validation_variance);
    m.dof = validation_exact ? law.dof : std::min(law.dof, validation_dof);
  }
  return m;
}

EpochModel EpochModelFromLog(const EpochLog& log) {
  const size_t e = log.epoch_times_s.size();
  if (e < 2) {
    throw DataError(log.source, 0, "epoch",
                    fmt::format("series '{}' batch {} has {} epoch(s); a steady epoch needs "
                                "epochs 1 and 2 at least",
                                log.label, log.batch, e));
  }
  for (size_t i = 0; i < e; ++i) {
    if (!PositiveFinite(log.epoch_times_s[i])) {
      throw DataError(log.source, 0, "epoch_time",
                      fmt::format("series '{}' epoch {} has time {}; it must be > 0", log.label,
                                  i + 1, log.epoch_times_s[i]));
    }
  }
  if (log.startup_s && !NonNegativeFinite(*log.startup_s)) {
    throw DataError(log.source, 0, "startup",
                    fmt::format("series '{}' has startup time {}", log.label, *log.startup_s));
  }
  EpochModel m;
  m.label = log.label;
  m.devices = log.devices;
  m.batch = log.batch;
  m.origin = "measured";
  m.startup_s = log.startup_s.value_or(0.0);
  const auto steady_begin = log.epoch_times_s.begin() + 1;
  const double count = static_cast<double>(e - 1);
  const double mean = std::accumulate(steady_begin, log.epoch_times_s.end(), 0.0) / count;
  double squares = 0;
  for (auto it = steady_begin; it != log.epoch_times_s.end(); ++it) {
    squares += (*it - mean) * (*it - mean);
  }
  m.epoch_s = m.train_epoch_s = mean;
  m.first_epoch_extra_s = log.epoch_times_s[0] - mean;
  if (e >= 3) {
    m.epoch_sd_s = std::sqrt(squares / (count - 1));
    m.epoch_stderr_s = m.epoch_sd_s / std::sqrt(count);
    m.dof = static_cast<int>(e) - 2;
  }
  if (log.samples_per_epoch && log.batch > 0) {
    m.steps_per_epoch = StepsPerEpoch(*log.samples_per_epoch, log.batch, log.steps_rule);
    m.samples_used = SamplesUsedPerEpoch(*log.samples_per_epoch, log.batch, log.steps_rule);
  } else {
    m.steps_per_epoch = m.samples_used = std::nan("");
  }
  m.assumptions.push_back(
      "measured: startup = time before epoch 1, steady epoch = mean of epochs 2..E, first-epoch "
      "extra = epoch 1 - steady; total(E) = startup + epoch 1 + (E-1)*steady");
  if (!log.startup_s) {
    m.assumptions.push_back("startup before epoch 1 not in the log: taken as 0");
  }
  return m;
}

std::vector<EpochLog> EpochLogsFromSamples(const std::vector<Sample>& samples,
                                           const std::string& startup_tag) {
  using Key = std::tuple<int, std::string, std::string, double>;
  std::map<Key, std::vector<const Sample*>> series;
  std::vector<Key> order;
  for (const Sample& s : samples) {
    if (!s.epoch_time_s) {
      throw DataError(s.source, s.line, "epoch_time",
                      "a per-epoch projection needs epoch times; this sample has none");
    }
    if (!s.epoch) {
      throw DataError(s.source, s.line, "epoch",
                      "a per-epoch projection needs the epoch number of every sample");
    }
    const Key key{s.devices, s.label, s.precision, s.batch};
    auto [it, inserted] = series.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(&s);
  }
  std::vector<EpochLog> logs;
  for (const Key& key : order) {
    std::vector<const Sample*>& rows = series[key];
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Sample* a, const Sample* b) { return *a->epoch < *b->epoch; });
    const Sample& first = *rows.front();
    EpochLog log;
    log.devices = first.devices;
    log.label = first.label;
    log.batch = first.batch;
    log.samples_per_epoch = first.samples_per_epoch;
    log.steps_rule = first.steps_rule;
    log.source = first.source;
    std::optional<double> startup;
    for (size_t i = 0; i < rows.size(); ++i) {
      const Sample& s = *rows[i];
      if (*s.epoch != static_cast<int>(i) + 1) {
        throw DataError(s.source, s.line, "epoch",
                        fmt::format("series '{}' batch {}: expected epoch {}, found epoch {} "
                                    "(epochs must run 1, 2, ... once each; read with "
                                    "--skip-epochs 0)",
                                    s.label.str(), s.batch, i + 1, *s.epoch));
      }
      log.epoch_times_s.push_back(*s.epoch_time_s);
      const std::optional<std::string_view> tag = s.tags.Find(startup_tag);
      if (!tag) continue;
      const std::optional<double> value = io::ToDouble(*tag);
      if (!value || !NonNegativeFinite(*value)) {
        throw DataError(
            s.source, s.line, startup_tag,
            fmt::format("expected a startup time >= 0 in seconds, got '{}'", io::Excerpt(*tag)));
      }
      if (startup && std::fabs(*startup - *value) > 1e-9 * std::max(1.0, *value)) {
        throw DataError(s.source, s.line, startup_tag,
                        fmt::format("series '{}' batch {} has startup {} here and {} before",
                                    s.label.str(), s.batch, *value, *startup));
      }
      startup = value;
    }
    log.startup_s = startup;
    logs.push_back(std::move(log));
  }
  return logs;
}

std::vector<double> DefaultEpochCounts() { return {10, 20, 50, 100, 200, 500, 1000, 2000}; }

std::optional<double> TotalHalfWidth(const EpochModel& model, double epochs, double confidence) {
  if (model.dof <= 0) return std::nullopt;
  const double q = StudentTQuantile(0.5 + confidence / 2, model.dof);
  if (!std::isfinite(q)) return std::nullopt;
  // The mean epoch's error scales with E; measured epochs also vary around
  // their mean, independently: Var = E^2 se^2 + E sd^2.
  const double variance = epochs * epochs * model.epoch_stderr_s * model.epoch_stderr_s +
                          epochs * model.epoch_sd_s * model.epoch_sd_s;
  return q * std::sqrt(variance);
}

TotalInterval TotalIntervalOf(const EpochModel& model, double epochs, double confidence) {
  TotalInterval interval;
  const double total = model.Total(epochs);
  const std::optional<double> half = TotalHalfWidth(model, epochs, confidence);
  if (half) {
    interval.low_s = total - *half;
    interval.high_s = total + *half;
    interval.basis = "fit";
  }
  if (model.model_errors.empty()) return interval;
  const PredictionInterval m = model.model_errors.At(confidence);
  if (!m.available) {
    interval.note = m.reason;
    return interval;
  }
  const double part = epochs * model.epoch_s;
  const double fixed = total - part;
  const TimeFactors f = CombinedTimeFactors(m, half && part > 0 ? *half / part : 0);
  interval.low_s = fixed + part * f.low;
  interval.high_s = fixed + part * f.high;
  interval.basis = fmt::format("{}model {}", half ? "fit + " : "", m.basis);
  return interval;
}

std::vector<ProjectionRow> ProjectTotals(const std::vector<EpochModel>& models,
                                         const ProjectOptions& options) {
  if (!(options.confidence > 0 && options.confidence < 1)) {
    throw UsageError(fmt::format("confidence must be in (0, 1), got {}", options.confidence));
  }
  if (options.epochs.empty()) throw UsageError("no epoch counts to project");
  for (double e : options.epochs) {
    if (!PositiveFinite(e)) {
      throw UsageError(fmt::format("epoch counts must be > 0 and finite, got {}", e));
    }
  }
  std::vector<ProjectionRow> rows;
  for (const EpochModel& m : models) {
    const std::optional<double> price = options.prices.For(m.label);
    for (double e : options.epochs) {
      ProjectionRow row;
      row.label = m.label;
      row.devices = m.devices;
      row.batch = m.batch;
      row.epochs = e;
      row.steps_per_epoch = m.steps_per_epoch;
      row.epoch_s = m.epoch_s;
      row.total_s = m.Total(e);
      const TotalInterval interval = TotalIntervalOf(m, e, options.confidence);
      row.ci_low_s = interval.low_s;
      row.ci_high_s = interval.high_s;
      row.interval_basis = interval.basis;
      row.price_per_device_hour = price;
      if (price) row.cost = RunCost(row.total_s, m.devices, *price);
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace fitspeed
