#include "fitspeed/device/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"
#include "fitspeed/timing/host.h"
#include "fitspeed/timing/sweep.h"

namespace fitspeed {

double PercentError(double predicted, double measured) {
  if (!std::isfinite(predicted) || !std::isfinite(measured) || !(measured > 0)) {
    throw UsageError(fmt::format(
        "PercentError: measured must be finite and > 0 and predicted finite, got {} and {}",
        measured, predicted));
  }
  return 100.0 * (predicted - measured) / measured;
}

ErrorSummary SummarizeErrorsPct(const std::vector<double>& errors_pct) {
  ErrorSummary s;
  s.cases = static_cast<int>(errors_pct.size());
  if (errors_pct.empty()) {
    s.median_abs_error_pct = std::numeric_limits<double>::quiet_NaN();
    s.max_abs_error_pct = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::vector<double> abs_errors;
  abs_errors.reserve(errors_pct.size());
  for (double e : errors_pct) abs_errors.push_back(std::fabs(e));
  std::sort(abs_errors.begin(), abs_errors.end());
  const size_t n = abs_errors.size();
  s.median_abs_error_pct =
      n % 2 == 1 ? abs_errors[n / 2] : 0.5 * (abs_errors[n / 2 - 1] + abs_errors[n / 2]);
  s.max_abs_error_pct = abs_errors.back();
  return s;
}

namespace {

// Loads each device and network once; remembers why one could not be loaded.
class Loader {
 public:
  explicit Loader(const ValidateOptions& options) : options_(options) {}

  // nullptr with `reason` set when the device cannot be loaded.
  const Device* GetDevice(const std::string& name, std::string& reason) {
    for (const Device& d : options_.devices) {
      if (d.name == name) return &d;
    }
    auto it = devices_.find(name);
    if (it == devices_.end()) {
      Entry<Device> entry;
      try {
        entry.value = std::make_unique<Device>(LoadDevice(name));
      } catch (const Error& e) {
        entry.reason = fmt::format("device not loaded: {}", e.what());
      }
      it = devices_.emplace(name, std::move(entry)).first;
    }
    reason = it->second.reason;
    return it->second.value.get();
  }

  const Network* GetNetwork(const std::string& name, std::string& reason) {
    auto it = networks_.find(name);
    if (it == networks_.end()) {
      Entry<Network> entry;
      try {
        entry.value = std::make_unique<Network>(LoadNetwork(name));
      } catch (const Error& e) {
        entry.reason = fmt::format("network not loaded: {}", e.what());
      }
      it = networks_.emplace(name, std::move(entry)).first;
    }
    reason = it->second.reason;
    return it->second.value.get();
  }

 private:
  template <typename T>
  struct Entry {
    std::unique_ptr<T> value;
    std::string reason;
  };
  const ValidateOptions& options_;
  std::map<std::string, Entry<Device>> devices_;
  std::map<std::string, Entry<Network>> networks_;
};

ValidatedCase ValidateCase(const MeasuredCase& c, const ValidateOptions& options, Loader& loader) {
  ValidatedCase v;
  v.measured = c;
  v.key = CaseKey(c);
  const Device* device = loader.GetDevice(c.device, v.reason);
  if (!device) return v;
  v.in_sample = std::find(device->calibrated_on.begin(), device->calibrated_on.end(), v.key) !=
                device->calibrated_on.end();
  const Network* network = loader.GetNetwork(c.network, v.reason);
  if (!network) return v;
  DeviceModelOptions model;
  model.precision = c.precision;
  model.devices = c.devices;
  model.optimizer = options.optimizer;
  ModeledStep step;
  try {
    step = ModelStep(*network, *device, c.batch, model);
  } catch (const UsageError& e) {
    v.reason = e.what();  // a precision the device lacks, no link for devices > 1, ...
    return v;
  }
  if (!step.fits) {
    const std::string verdict =
        fmt::format("out of memory: {:.1f} GiB per core needed, {:.1f} GiB available",
                    step.memory_bytes / (1u << 30), step.memory_capacity_bytes / (1u << 30));
    if (options.require_fit) {
      v.reason = verdict;
      return v;
    }
    v.memory_note = "memory model: " + verdict;
  }
  v.modeled = true;
  v.predicted_sps = step.throughput_sps;
  v.predicted_step_s = step.step_time_s;
  v.error_pct = PercentError(step.throughput_sps, c.throughput_sps);
  return v;
}

// Whether a case's matrix work runs on the device's tensor units (as ModelStep decides).
bool OnTensorUnits(const MeasuredCase& c, const Device& device) {
  return c.precision != DevicePrecision::kFp32 || device.fp32_matrix_on_tensor16;
}

// The cross-validation of one device's modeled, out-of-sample cases `which`
// (indices into report.cases): fills their cv_ fields and the device's.
void CrossValidateDevice(const Device& device, const std::vector<size_t>& which,
                         const ValidateOptions& options, ValidationReport& report,
                         DeviceValidation& summary) {
  std::vector<std::string> networks, frameworks;
  for (size_t i : which) {
    const MeasuredCase& c = report.cases[i].measured;
    if (std::find(networks.begin(), networks.end(), c.network) == networks.end()) {
      networks.push_back(c.network);
    }
    if (std::find(frameworks.begin(), frameworks.end(), c.framework) == frameworks.end()) {
      frameworks.push_back(c.framework);
    }
  }
  const bool by_network = networks.size() >= 2;
  summary.held_out_by = by_network ? "network" : frameworks.size() >= 2 ? "framework" : "";
  auto group_of = [by_network](const MeasuredCase& c) {
    return by_network ? c.network : c.framework;
  };
  for (size_t i : which) {
    ValidatedCase& v = report.cases[i];
    v.cv_predicted_sps = v.predicted_sps;
    v.cv_error_pct = v.error_pct;
  }
  if (summary.held_out_by.empty()) return;
  for (const std::string& group : by_network ? networks : frameworks) {
    CrossValidationFold fold;
    fold.group = group;
    std::vector<MeasuredCase> training;
    std::vector<size_t> held;
    bool off_tensor = false;
    bool on_tensor = false;
    for (size_t i : which) {
      const MeasuredCase& c = report.cases[i].measured;
      if (group_of(c) == group) {
        held.push_back(i);
      } else {
        training.push_back(c);
        (OnTensorUnits(c, device) ? on_tensor : off_tensor) = true;
      }
    }
    fold.cases = static_cast<int>(held.size());
    fold.training_cases = static_cast<int>(training.size());
    CalibrationOptions calibration = options.calibration;
    calibration.optimizer = options.optimizer;
    calibration.leave_one_network_out = false;
    calibration.parameters = {CalibrationParameter::kStepHost};
    if (off_tensor) calibration.parameters.push_back(CalibrationParameter::kComputeScale);
    if (on_tensor) calibration.parameters.push_back(CalibrationParameter::kTensorScale);
    std::sort(calibration.parameters.begin(), calibration.parameters.end());
    if (training.size() <= calibration.parameters.size()) {
      fold.problem = fmt::format("{} training case(s) for {} parameters leave no degree of freedom",
                                 training.size(), calibration.parameters.size());
    } else {
      try {
        const CalibrationResult r = CalibrateDevice(device, training, calibration);
        if (!r.usable()) {
          fold.problem = fmt::format("the calibration did not converge: {}", r.solver_message);
        } else {
          fold.computed = true;
          fold.parameters = r.parameters;
          std::vector<double> errors;
          for (size_t i : held) {
            ValidatedCase& v = report.cases[i];
            const MeasuredCase& c = v.measured;
            DeviceModelOptions model;
            model.precision = c.precision;
            model.devices = c.devices;
            model.optimizer = options.optimizer;
            const ModeledStep step = ModelStep(LoadNetwork(c.network), r.device, c.batch, model);
            v.cv_calibrated = true;
            v.cv_group = group;
            v.cv_predicted_sps = step.throughput_sps;
            v.cv_error_pct = PercentError(step.throughput_sps, c.throughput_sps);
            errors.push_back(v.cv_error_pct);
          }
          fold.error = SummarizeErrorsPct(errors);
        }
      } catch (const Error& e) {
        fold.problem = e.what();
      }
    }
    summary.folds.push_back(std::move(fold));
  }
}

}  // namespace

ValidationReport Validate(const std::vector<MeasuredCase>& cases, const ValidateOptions& options) {
  ValidationReport report;
  Loader loader(options);
  struct Errors {
    std::vector<double> out_of_sample, in_sample;
    int not_modeled = 0;
  };
  std::vector<std::pair<std::string, Errors>> per_device;
  Errors all;
  for (const MeasuredCase& c : cases) {
    ValidatedCase v = ValidateCase(c, options, loader);
    auto it = std::find_if(per_device.begin(), per_device.end(),
                           [&](const auto& entry) { return entry.first == c.device; });
    if (it == per_device.end()) {
      per_device.emplace_back(c.device, Errors{});
      it = std::prev(per_device.end());
    }
    for (Errors* errors : {&it->second, &all}) {
      if (!v.modeled) {
        ++errors->not_modeled;
      } else {
        (v.in_sample ? errors->in_sample : errors->out_of_sample).push_back(v.error_pct);
      }
    }
    report.cases.push_back(std::move(v));
  }
  for (const auto& [device, errors] : per_device) {
    DeviceValidation summary;
    summary.device = device;
    summary.out_of_sample = SummarizeErrorsPct(errors.out_of_sample);
    summary.in_sample = SummarizeErrorsPct(errors.in_sample);
    summary.not_modeled = errors.not_modeled;
    report.devices.push_back(std::move(summary));
  }
  report.out_of_sample = SummarizeErrorsPct(all.out_of_sample);
  report.in_sample = SummarizeErrorsPct(all.in_sample);
  report.not_modeled = all.not_modeled;
  if (!options.cross_validate) return report;

  report.cross_validated_run = true;
  std::vector<double> cv_all;
  for (DeviceValidation& summary : report.devices) {
    std::vector<size_t> which;
    for (size_t i = 0; i < report.cases.size(); ++i) {
      const ValidatedCase& v = report.cases[i];
      if (v.measured.device == summary.device && v.modeled && !v.in_sample) which.push_back(i);
    }
    if (which.empty()) continue;
    std::string reason;
    const Device* device = loader.GetDevice(summary.device, reason);
    FITSPEED_CHECK(device != nullptr, "a device with modeled cases was loaded");
    CrossValidateDevice(*device, which, options, report, summary);
    std::vector<double> errors;
    for (size_t i : which) errors.push_back(report.cases[i].cv_error_pct);
    summary.cross_validated = SummarizeErrorsPct(errors);
    cv_all.insert(cv_all.end(), errors.begin(), errors.end());
  }
  report.cross_validated = SummarizeErrorsPct(cv_all);
  return report;
}

std::vector<MixedRatio> MixedPrecisionRatios(const Device& device,
                                             const std::vector<std::string>& networks,
                                             const std::vector<int64_t>& batches,
                                             Optimizer optimizer) {
  std::vector<MixedRatio> ratios;
  for (const std::string& name : networks) {
    const Network network = LoadNetwork(name);
    for (int64_t batch : batches) {
      DeviceModelOptions options;
      options.optimizer = optimizer;
      options.precision = DevicePrecision::kFp32;
      const ModeledStep fp32 = ModelStep(network, device, batch, options);
      options.precision = DevicePrecision::kMixed;
      const ModeledStep mixed = ModelStep(network, device, batch, options);
      MixedRatio r;
      r.network = name;
      r.batch = batch;
      r.fp32_step_s = fp32.step_time_s;
      r.mixed_step_s = mixed.step_time_s;
      r.ratio = mixed.step_time_s / fp32.step_time_s;
      r.in_band = r.ratio >= kMixedRatioLow && r.ratio <= kMixedRatioHigh;
      ratios.push_back(r);
    }
  }
  return ratios;
}

HostCheck RunHostCheck(const HostCheckOptions& options) {
  if (options.batches.empty()) throw UsageError("HostCheckOptions.batches: empty");
  // ProbeHostDevice measures the modeled host's peaks on every available CPU:
  // a sweep on fewer threads would be compared with a faster device.
  if (options.threads != 0 && options.threads != AvailableCpus()) {
    throw UsageError(fmt::format(
        "HostCheckOptions.threads = {}: must be 0 or {} (every CPU, as the host probe measures)",
        options.threads, AvailableCpus()));
  }
  if (!(options.min_time_s > 0)) {
    throw UsageError(
        fmt::format("HostCheckOptions.min_time_s = {}: must be > 0", options.min_time_s));
  }
  const Network network = LoadNetwork(options.network);
  const Device host = LoadDevice("host");
  SweepOptions sweep_options;
  sweep_options.batches = options.batches;
  sweep_options.threads = options.threads;
  sweep_options.min_time_s = options.min_time_s;
  const SweepResult sweep = Sweep(network, sweep_options);
  const std::vector<int64_t> contended = sweep.ContendedBatches();
  HostCheck check;
  check.network = options.network;
  check.threads = options.threads;
  std::vector<double> errors;
  for (const BatchMeasurement& m : sweep.measurements) {
    DeviceModelOptions model;
    model.optimizer = sweep_options.optimizer;
    const ModeledStep step = ModelStep(network, host, m.batch, model);
    HostCheckRow row;
    row.batch = m.batch;
    row.measured_step_s = m.step_time_s;
    row.predicted_step_s = step.step_time_s;
    row.error_pct = PercentError(step.throughput_sps, m.throughput_sps);
    row.contended = std::find(contended.begin(), contended.end(), m.batch) != contended.end();
    errors.push_back(row.error_pct);
    check.rows.push_back(row);
  }
  check.summary = SummarizeErrorsPct(errors);
  return check;
}

}  // namespace fitspeed
