// Transfer from a run on device A to device B (docs/devices.md, "Transfer from
// your own run"; its validation: src/evidence/transfer.cc).
#include "fitspeed/calibrate/transfer.h"

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

}  // namespace

std::vector<CalibratedParameter> CarriedParameters(const std::vector<CalibratedParameter>& fitted,
                                                   bool transfer_host) {
  std::vector<CalibratedParameter> carried;
  for (const CalibratedParameter& p : fitted) {
    if (p.name != "step_host_s" || transfer_host) carried.push_back(p);
  }
  return carried;
}

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
  t.applied = CarriedParameters(r.parameters, options.transfer_host);
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

}  // namespace fitspeed
