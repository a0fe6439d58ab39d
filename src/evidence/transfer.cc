// Transfer from a run on device A to device B (docs/devices.md, "Transfer from
// your own run"; validation: docs/validation.md, "Transfer").
#include "fitspeed/evidence/transfer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "core/median.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {

namespace {

constexpr double kNaNTransfer = std::numeric_limits<double>::quiet_NaN();
// The efficiency scales are lowered by this factor to measure how much a
// measured point's modeled step time depends on them.
constexpr double kProbeScale = 0.95;

// The measured condition of a case: cases that share it are one point.
auto Condition(const MeasuredCase& c) {
  return std::make_tuple(c.batch, c.devices, c.precision, c.layout, c.accumulation,
                         c.optimizer.has_value(), c.optimizer.value_or(Optimizer::kSgd));
}

// One case per condition, in order of first appearance, its throughput the
// median of the condition's cases (a training log has many lines per batch).
std::vector<MeasuredCase> MedianPoints(const std::vector<MeasuredCase>& cases) {
  std::vector<MeasuredCase> points;
  std::vector<std::vector<double>> throughputs;
  for (const MeasuredCase& c : cases) {
    auto it = std::find_if(points.begin(), points.end(),
                           [&c](const MeasuredCase& p) { return Condition(p) == Condition(c); });
    if (it == points.end()) {
      points.push_back(c);
      throughputs.emplace_back();
      it = std::prev(points.end());
    }
    throughputs[static_cast<size_t>(it - points.begin())].push_back(c.throughput_sps);
  }
  for (size_t i = 0; i < points.size(); ++i) points[i].throughput_sps = Median(throughputs[i]);
  return points;
}

// The modeled step of case `c` on `device`; a case it cannot model is bad data
// of that case (its file and line).
ModeledStep ModelCaseStep(const Network& network, const Device& device, const MeasuredCase& c,
                          Optimizer optimizer) {
  try {
    return ModelStep(network, device, c.batch, CaseModelOptions(c, optimizer));
  } catch (const UsageError& e) {
    throw DataError(c.source, c.line, "precision",
                    fmt::format("cannot be modeled on {}: {}", device.name, e.what()));
  }
}

// |d ln T / d ln p| of the modeled step time T of `c` on `device` for
// parameter p: host_s / T for the host overhead, a finite difference for a scale.
double Sensitivity(CalibrationParameter p, const Network& network, const Device& device,
                   const MeasuredCase& c, Optimizer optimizer) {
  const ModeledStep base = ModelCaseStep(network, device, c, optimizer);
  if (p == CalibrationParameter::kStepHost) return base.host_s / base.step_time_s;
  CalibratedParameter scale;
  scale.name = p == CalibrationParameter::kComputeScale ? "compute_scale" : "tensor_scale";
  scale.value = kProbeScale;
  const ModeledStep probed =
      ModelCaseStep(network, ApplyCalibration(device, {scale}), c, optimizer);
  return std::fabs(std::log(probed.step_time_s / base.step_time_s) / std::log(kProbeScale));
}

std::string ParameterList(const std::vector<CalibrationParameter>& parameters) {
  std::vector<std::string> names;
  for (CalibrationParameter p : parameters) names.push_back(CalibrationParameterName(p));
  return fmt::format("{}", fmt::join(names, ", "));
}

// The fitted parameters that carry over to B.
std::vector<CalibratedParameter> Carried(const std::vector<CalibratedParameter>& fitted,
                                         bool transfer_host) {
  std::vector<CalibratedParameter> carried;
  for (const CalibratedParameter& p : fitted) {
    if (p.name != "step_host_s" || transfer_host) carried.push_back(p);
  }
  return carried;
}

double MeanAbs(const std::vector<double>& values) {
  if (values.empty()) return kNaNTransfer;
  double sum = 0;
  for (double v : values) sum += std::fabs(v);
  return sum / static_cast<double>(values.size());
}

}  // namespace

void ValidateTransferOptions(const TransferOptions& options) {
  CalibrationOptions calibration = options.calibration;
  calibration.leave_one_network_out = false;
  calibration.parameters = {CalibrationParameter::kStepHost};
  ValidateCalibrationOptions(calibration);
}

TransferCalibration CalibrateTransfer(const Device& source, const Device& target,
                                      const std::vector<MeasuredCase>& measured_on_a,
                                      const TransferOptions& options) {
  ValidateTransferOptions(options);
  if (source.kind != target.kind) {
    throw UsageError(fmt::format(
        "transfer from {} ({}) to {} ({}): the efficiency scales describe one kind's kernel "
        "libraries (cuDNN, XLA, oneDNN) and carry over between devices of one kind only",
        source.name, source.kind, target.name, target.kind));
  }
  if (measured_on_a.empty()) {
    throw DataError(fmt::format("transfer from {}: no measured cases", source.name));
  }
  const MeasuredCase& first = measured_on_a.front();
  for (const MeasuredCase& c : measured_on_a) {
    if (c.device != source.name) {
      throw DataError(c.source, c.line, "device",
                      fmt::format("'{}', but the transfer is from '{}'", c.device, source.name));
    }
    if (CaseNetworkKey(c) != CaseNetworkKey(first)) {
      throw DataError(c.source, c.line, "network",
                      fmt::format("'{}', but the transfer's first case is of '{}': a transfer "
                                  "carries one network's measurement",
                                  CaseNetworkKey(c), CaseNetworkKey(first)));
    }
  }
  TransferCalibration t;
  t.source_device = source.name;
  t.target_device = target.name;
  t.network = CaseNetworkKey(first);
  t.cases = static_cast<int>(measured_on_a.size());
  const std::vector<MeasuredCase> points = MedianPoints(measured_on_a);
  t.points = static_cast<int>(points.size());

  Network network;
  try {
    network = LoadNetwork(first.network, CaseZooOptions(first));
  } catch (const Error& e) {
    throw DataError(first.source, first.line, "network", e.what());
  }
  const std::vector<const Device*> on_source(points.size(), &source);
  std::vector<CalibrationParameter> candidates = ScalesDetermined(points, on_source);
  candidates.push_back(CalibrationParameter::kStepHost);
  std::vector<CalibrationParameter> chosen = candidates;
  if (points.size() < candidates.size()) {
    // Fewer points than parameters: the ones the points' step times depend on
    // most (a scale before the host overhead on a tie: scales carry over).
    std::vector<std::pair<double, CalibrationParameter>> ranked;
    for (CalibrationParameter p : candidates) {
      double sensitivity = 0;
      for (const MeasuredCase& c : points) {
        sensitivity += Sensitivity(p, network, source, c, options.optimizer);
      }
      ranked.emplace_back(sensitivity, p);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    chosen.clear();
    for (size_t i = 0; i < points.size(); ++i) chosen.push_back(ranked[i].second);
    std::sort(chosen.begin(), chosen.end());
    for (size_t i = points.size(); i < ranked.size(); ++i) {
      t.kept.push_back(
          {CalibrationParameterName(ranked[i].second),
           fmt::format("not fitted: {} measured point{} fit{} {} parameter{}; the step time "
                       "depends most on {}",
                       points.size(), points.size() == 1 ? "" : "s", points.size() == 1 ? "s" : "",
                       points.size(), points.size() == 1 ? "" : "s", ParameterList(chosen))});
    }
  }
  const bool has_compute =
      std::count(candidates.begin(), candidates.end(), CalibrationParameter::kComputeScale) > 0;
  const bool has_tensor =
      std::count(candidates.begin(), candidates.end(), CalibrationParameter::kTensorScale) > 0;
  if (!has_compute) {
    t.kept.push_back({"compute",
                      "not determined: no measured point has matrix work off "
                      "tensor units"});
  }
  if (!has_tensor) {
    t.kept.push_back({"tensor",
                      "not determined: no measured point has matrix work on tensor "
                      "units"});
  }
  t.kept.push_back({"memory",
                    "not fitted: one network's run does not separate it from the "
                    "compute scale"});
  t.kept.push_back({"launch",
                    "not fitted: one network's run does not separate it from the "
                    "host overhead"});

  CalibrationOptions calibration = options.calibration;
  calibration.parameters = chosen;
  calibration.optimizer = options.optimizer;
  calibration.leave_one_network_out = false;
  CalibrationResult r;
  try {
    r = CalibrateDevice(source, points, calibration);
  } catch (const UsageError& e) {
    throw DataError(first.source, first.line, "precision", e.what());
  }
  t.fitted = r.parameters;
  t.applied = Carried(r.parameters, options.transfer_host);
  if (t.applied.size() < t.fitted.size()) {
    t.kept.push_back({"host", fmt::format("fitted on {} but not carried "
                                          "(TransferOptions::transfer_host false)",
                                          source.name)});
  }
  t.source_before = r.before;
  t.source_after = r.after;
  t.converged = r.converged;
  t.solver_message = r.solver_message;
  t.target = ApplyCalibration(target, t.applied);
  return t;
}

TransferValidation ValidateTransfer(const std::vector<MeasuredCase>& cases,
                                    const TransferOptions& options) {
  ValidateTransferOptions(options);
  TransferValidation report;
  report.transfer_host = options.transfer_host;
  // The modeled, out-of-sample cases and their catalog predictions.
  ValidateOptions validate;
  validate.devices = options.devices;
  validate.optimizer = options.optimizer;
  const ValidationReport catalog = Validate(cases, validate);

  std::vector<std::string> device_names;  // in order of first appearance
  std::map<std::string, Device> devices;
  for (const ValidatedCase& v : catalog.cases) {
    if (!v.modeled || devices.count(v.measured.device)) continue;
    const auto given = std::find_if(options.devices.begin(), options.devices.end(),
                                    [&v](const Device& d) { return d.name == v.measured.device; });
    devices.emplace(v.measured.device,
                    given != options.devices.end() ? *given : LoadDevice(v.measured.device));
    device_names.push_back(v.measured.device);
  }
  // Groups: network (with its sequence length), precision, framework, devices.
  using Group = std::tuple<std::string, Precision, std::string, int>;
  auto group_of = [](const MeasuredCase& c) {
    return Group(CaseNetworkKey(c), c.precision, c.framework, c.devices);
  };
  std::vector<Group> groups;
  for (const ValidatedCase& v : catalog.cases) {
    if (v.modeled &&
        std::find(groups.begin(), groups.end(), group_of(v.measured)) == groups.end()) {
      groups.push_back(group_of(v.measured));
    }
  }
  std::map<std::string, Network> networks;
  auto network_of = [&networks](const MeasuredCase& c) -> const Network& {
    auto it = networks.find(CaseNetworkKey(c));
    if (it == networks.end()) {
      it = networks.emplace(CaseNetworkKey(c), LoadNetwork(c.network, CaseZooOptions(c))).first;
    }
    return it->second;
  };

  std::vector<double> all_errors, all_catalog, all_other;
  for (const std::string& a : device_names) {
    for (const std::string& b : device_names) {
      if (a == b || devices.at(a).kind != devices.at(b).kind) continue;
      TransferPairSummary pair;
      pair.source_device = a;
      pair.target_device = b;
      pair.pair = a + "->" + b;
      std::vector<double> errors, catalog_errors;
      for (const Group& g : groups) {
        std::vector<MeasuredCase> on_a;
        std::vector<const ValidatedCase*> on_b;
        for (const ValidatedCase& v : catalog.cases) {
          if (!v.modeled || group_of(v.measured) != g) continue;
          if (v.measured.device == a) on_a.push_back(v.measured);
          // A case B was calibrated on is not predicted: nothing is fitted to it.
          if (v.measured.device == b && !v.in_sample) on_b.push_back(&v);
        }
        if (on_a.empty() || on_b.empty()) continue;
        TransferFold fold;
        fold.source_device = a;
        fold.target_device = b;
        std::tie(fold.network, fold.precision, fold.framework, fold.devices) = g;
        fold.source_cases = static_cast<int>(on_a.size());
        fold.target_cases = static_cast<int>(on_b.size());
        try {
          const TransferCalibration t =
              CalibrateTransfer(devices.at(a), devices.at(b), on_a, options);
          if (!t.converged) {
            fold.problem =
                fmt::format("the calibration on {} did not converge: {}", a, t.solver_message);
          } else {
            fold.computed = true;
            fold.fitted = t.fitted;
            fold.applied = t.applied;
            fold.source_after = t.source_after;
            const Device other =
                ApplyCalibration(devices.at(b), Carried(t.fitted, !options.transfer_host));
            std::vector<double> fold_errors;
            for (const ValidatedCase* v : on_b) {
              const MeasuredCase& c = v->measured;
              const Network& network = network_of(c);
              const DeviceModelOptions model = CaseModelOptions(c, options.optimizer);
              TransferredCase p;
              p.source_device = a;
              p.target_device = b;
              p.pair = pair.pair;
              p.network = CaseNetworkKey(c);
              p.precision = c.precision;
              p.framework = c.framework;
              p.devices = c.devices;
              p.batch = c.batch;
              p.accumulation = c.accumulation;
              p.key = v->key;
              p.source = c.source;
              for (const MeasuredCase& from : on_a) {
                if (std::find(p.from_sources.begin(), p.from_sources.end(), from.source) ==
                    p.from_sources.end()) {
                  p.from_sources.push_back(from.source);
                }
              }
              p.line = c.line;
              p.measured_sps = c.throughput_sps;
              p.predicted_sps = ModelStep(network, t.target, c.batch, model).throughput_sps;
              p.catalog_sps = v->predicted_sps;
              p.error_pct = PercentError(p.predicted_sps, p.measured_sps);
              p.catalog_error_pct = v->error_pct;
              p.log_ratio = std::log(p.measured_sps / p.predicted_sps);
              fold_errors.push_back(p.error_pct);
              catalog_errors.push_back(p.catalog_error_pct);
              all_other.push_back(PercentError(
                  ModelStep(network, other, c.batch, model).throughput_sps, p.measured_sps));
              report.cases.push_back(std::move(p));
            }
            fold.error = SummarizeErrorsPct(fold_errors);
            errors.insert(errors.end(), fold_errors.begin(), fold_errors.end());
          }
        } catch (const Error& e) {
          fold.problem = e.what();
        }
        report.folds.push_back(std::move(fold));
      }
      if (errors.empty()) continue;
      pair.error = SummarizeErrorsPct(errors);
      pair.catalog = SummarizeErrorsPct(catalog_errors);
      pair.mean_abs_error_pct = MeanAbs(errors);
      all_errors.insert(all_errors.end(), errors.begin(), errors.end());
      all_catalog.insert(all_catalog.end(), catalog_errors.begin(), catalog_errors.end());
      report.pairs.push_back(std::move(pair));
    }
  }
  report.overall = SummarizeErrorsPct(all_errors);
  report.overall_catalog = SummarizeErrorsPct(all_catalog);
  report.overall_mean_abs_error_pct = MeanAbs(all_errors);
  report.other_rule = SummarizeErrorsPct(all_other);
  report.other_rule_mean_abs_error_pct = MeanAbs(all_other);
  return report;
}

}  // namespace fitspeed
