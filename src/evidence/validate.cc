#include "fitspeed/evidence/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "core/median.h"
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
  s.max_abs_error_pct = *std::max_element(abs_errors.begin(), abs_errors.end());
  s.median_abs_error_pct = Median(std::move(abs_errors));
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

  // The network of case `c` (its zoo name or file, at its sequence length).
  const Network* GetNetwork(const MeasuredCase& c, std::string& reason) {
    const std::string key = CaseNetworkKey(c);
    auto it = networks_.find(key);
    if (it == networks_.end()) {
      Entry<Network> entry;
      try {
        entry.value = std::make_unique<Network>(LoadNetwork(c.network, CaseZooOptions(c)));
      } catch (const Error& e) {
        entry.reason = fmt::format("network not loaded: {}", e.what());
      }
      it = networks_.emplace(key, std::move(entry)).first;
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

// ValidationReport::kinds from the modeled out-of-sample cases: the
// accelerators ("gpu+tpu") and the GPUs alone.
void SummarizeKinds(Loader& loader, ValidationReport& report) {
  for (const std::vector<std::string>& kinds :
       {std::vector<std::string>{"gpu", "tpu"}, std::vector<std::string>{"gpu"}}) {
    std::vector<double> catalog, cv, xdev;
    for (const ValidatedCase& v : report.cases) {
      if (!v.modeled || v.in_sample) continue;
      std::string reason;
      const Device* device = loader.GetDevice(v.measured.device, reason);
      if (device == nullptr || std::find(kinds.begin(), kinds.end(), device->kind) == kinds.end()) {
        continue;
      }
      catalog.push_back(v.error_pct);
      if (report.cross_validated_run) cv.push_back(v.cv_error_pct);
      if (report.cross_device_run) xdev.push_back(v.xdev_error_pct);
    }
    KindValidation k;
    k.kinds = fmt::format("{}", fmt::join(kinds, "+"));
    k.catalog = SummarizeErrorsPct(catalog);
    k.cross_validated = SummarizeErrorsPct(cv);
    k.cross_device = SummarizeErrorsPct(xdev);
    report.kinds.push_back(std::move(k));
  }
}

ValidatedCase ValidateCase(const MeasuredCase& c, const ValidateOptions& options, Loader& loader) {
  ValidatedCase v;
  v.measured = c;
  v.key = CaseKey(c);
  const Device* device = loader.GetDevice(c.device, v.reason);
  if (!device) return v;
  v.in_sample = std::find(device->calibrated_on.begin(), device->calibrated_on.end(), v.key) !=
                device->calibrated_on.end();
  const Network* network = loader.GetNetwork(c, v.reason);
  if (!network) return v;
  ModeledStep step;
  try {
    step = ModelStep(*network, *device, c.batch, CaseModelOptions(c, options.optimizer));
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

// The network of a modeled case (loaded when the case was modeled).
const Network& ModeledNetwork(Loader& loader, const MeasuredCase& c) {
  std::string reason;
  const Network* network = loader.GetNetwork(c, reason);
  FITSPEED_CHECK(network != nullptr, "a modeled case's network was loaded");
  return *network;
}

// The calibration parameters a set of training cases determines: the host
// overhead always, and the efficiency scales (ScalesDetermined); in enum order.
std::vector<CalibrationParameter> ParametersFor(const std::vector<MeasuredCase>& training,
                                                const std::vector<const Device*>& devices) {
  std::vector<CalibrationParameter> parameters = ScalesDetermined(training, devices);
  parameters.push_back(CalibrationParameter::kStepHost);
  std::sort(parameters.begin(), parameters.end());
  return parameters;
}

// The modeled throughput of a case (of `network`) on `device` into `predicted_sps`, its %
// error into `error_pct`; returns the error.
double PredictCase(const MeasuredCase& c, const Network& network, const Device& device,
                   Optimizer optimizer, double& predicted_sps, double& error_pct) {
  predicted_sps =
      ModelStep(network, device, c.batch, CaseModelOptions(c, optimizer)).throughput_sps;
  error_pct = PercentError(predicted_sps, c.throughput_sps);
  return error_pct;
}

// The cross-validation of one device's modeled, out-of-sample cases `which`
// (indices into report.cases): fills their cv_ fields and the device's.
void CrossValidateDevice(const Device& device, const std::vector<size_t>& which,
                         const ValidateOptions& options, Loader& loader, ValidationReport& report,
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
    std::vector<size_t> held, training_index;
    for (size_t i : which) {
      const MeasuredCase& c = report.cases[i].measured;
      (group_of(c) == group ? held : training_index).push_back(i);
    }
    for (size_t i : training_index) training.push_back(report.cases[i].measured);
    fold.cases = static_cast<int>(held.size());
    fold.training_cases = static_cast<int>(training.size());
    CalibrationOptions calibration = options.calibration;
    calibration.optimizer = options.optimizer;
    calibration.leave_one_network_out = false;
    calibration.parameters =
        ParametersFor(training, std::vector<const Device*>(training.size(), &device));
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
            v.cv_calibrated = true;
            v.cv_group = group;
            errors.push_back(PredictCase(v.measured, ModeledNetwork(loader, v.measured), r.device,
                                         options.optimizer, v.cv_predicted_sps, v.cv_error_pct));
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

// Cross-device validation of the modeled, out-of-sample cases `which`.
void CrossDeviceValidate(const std::vector<size_t>& which, const ValidateOptions& options,
                         Loader& loader, ValidationReport& report) {
  for (size_t i : which) {
    ValidatedCase& v = report.cases[i];
    v.xdev_predicted_sps = v.predicted_sps;
    v.xdev_error_pct = v.error_pct;
  }
  // Groups (device, network) in order of first appearance.
  std::vector<std::pair<std::string, std::string>> groups;
  for (size_t i : which) {
    const MeasuredCase& c = report.cases[i].measured;
    const std::pair<std::string, std::string> key(c.device, c.network);
    if (std::find(groups.begin(), groups.end(), key) == groups.end()) groups.push_back(key);
  }
  const auto total = static_cast<int64_t>(groups.size());
  int64_t done = 0;
  for (const auto& [device_name, network] : groups) {
    ReportProgress(options.progress, "cross-device check", done++, total,
                   [&, &device_name = device_name, &network = network] {
                     return fmt::format("{} on the {}, from the other devices", network,
                                        device_name);
                   });
    CrossDeviceFold fold;
    fold.device = device_name;
    fold.network = network;
    std::vector<size_t> held;
    std::vector<MeasuredCase> training;
    std::vector<const Device*> training_devices;
    std::vector<Device> devices;
    std::string reason;
    const Device* held_device = loader.GetDevice(device_name, reason);
    FITSPEED_CHECK(held_device != nullptr, "a device with modeled cases was loaded");
    bool other_kinds = false;  // the network has cases on devices of another kind
    for (size_t i : which) {
      const MeasuredCase& c = report.cases[i].measured;
      if (c.network != network) continue;
      if (c.device == device_name) {
        held.push_back(i);
        continue;
      }
      const Device* d = loader.GetDevice(c.device, reason);
      FITSPEED_CHECK(d != nullptr, "a device with modeled cases was loaded");
      // Efficiency scales describe a kind's kernel libraries (cuDNN on GPUs,
      // oneDNN on CPUs, XLA on TPUs) against the catalog's curves: they carry
      // between devices of one kind only.
      if (d->kind != held_device->kind) {
        other_kinds = true;
        continue;
      }
      training.push_back(c);
      training_devices.push_back(d);
      if (std::find(fold.training_devices.begin(), fold.training_devices.end(), c.device) ==
          fold.training_devices.end()) {
        fold.training_devices.push_back(c.device);
        devices.push_back(*d);
      }
    }
    fold.cases = static_cast<int>(held.size());
    fold.training_cases = static_cast<int>(training.size());
    CalibrationOptions calibration = options.calibration;
    calibration.optimizer = options.optimizer;
    // The efficiency scales only: how the network's kernels fare against the
    // roofline carries over to another device; the host overhead belongs to the
    // setup (framework, host, link) and stays the target device's own.
    calibration.parameters = ParametersFor(training, training_devices);
    calibration.parameters.erase(
        std::remove(calibration.parameters.begin(), calibration.parameters.end(),
                    CalibrationParameter::kStepHost),
        calibration.parameters.end());
    // The scales this device's cases need (compute and/or tensor) must all be
    // fitted, or the prediction would be the catalog's in disguise.
    std::vector<MeasuredCase> held_cases;
    for (size_t i : held) held_cases.push_back(report.cases[i].measured);
    std::string reason_target;
    const Device* target = loader.GetDevice(device_name, reason_target);
    FITSPEED_CHECK(target != nullptr, "a device with modeled cases was loaded");
    std::vector<std::string> missing;
    for (CalibrationParameter p :
         ParametersFor(held_cases, std::vector<const Device*>(held_cases.size(), target))) {
      if (p == CalibrationParameter::kStepHost) continue;
      if (std::find(calibration.parameters.begin(), calibration.parameters.end(), p) ==
          calibration.parameters.end()) {
        missing.push_back(CalibrationParameterName(p));
      }
    }
    if (training.empty()) {
      fold.problem = other_kinds
                         ? fmt::format("no other {} has cases of this network", held_device->kind)
                         : "no other device has cases of this network";
    } else if (!missing.empty()) {
      fold.problem = fmt::format(
          "the other devices' cases do not determine the {} scale this device's cases need",
          fmt::join(missing, " and "));
    } else if (training.size() <= calibration.parameters.size()) {
      fold.problem = fmt::format("{} training case(s) for {} parameters leave no degree of freedom",
                                 training.size(), calibration.parameters.size());
    } else {
      try {
        const SharedCalibration r = CalibrateShared(devices, training, calibration);
        if (!r.converged) {
          fold.problem = fmt::format("the calibration did not converge: {}", r.solver_message);
        } else {
          fold.computed = true;
          fold.parameters = r.parameters;
          const Device calibrated = ApplyCalibration(*target, r.parameters);
          std::vector<double> errors;
          for (size_t i : held) {
            ValidatedCase& v = report.cases[i];
            v.xdev_calibrated = true;
            errors.push_back(PredictCase(v.measured, ModeledNetwork(loader, v.measured), calibrated,
                                         options.optimizer, v.xdev_predicted_sps,
                                         v.xdev_error_pct));
          }
          fold.error = SummarizeErrorsPct(errors);
        }
      } catch (const Error& e) {
        fold.problem = e.what();
      }
    }
    report.cross_device_folds.push_back(std::move(fold));
  }
  ReportProgress(options.progress, "cross-device check", total, total,
                 [&] { return fmt::format("{} groups", total); });
}

}  // namespace

namespace {

// The catalog, cross-validated and cross-device errors of the modeled
// out-of-sample cases, grouped by `key` (a tuple of names), in order of first
// appearance.
struct GroupErrors {
  std::vector<double> catalog, cross_validated, cross_device;
};
template <typename Key>
std::vector<std::pair<Key, GroupErrors>> GroupBy(const ValidationReport& report,
                                                 Key (*key_of)(const ValidatedCase&)) {
  std::vector<std::pair<Key, GroupErrors>> groups;
  for (const ValidatedCase& v : report.cases) {
    if (!v.modeled || v.in_sample) continue;
    const Key key = key_of(v);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& entry) { return entry.first == key; });
    if (it == groups.end()) {
      groups.emplace_back(key, GroupErrors{});
      it = std::prev(groups.end());
    }
    it->second.catalog.push_back(v.error_pct);
    if (report.cross_validated_run) it->second.cross_validated.push_back(v.cv_error_pct);
    if (report.cross_device_run) it->second.cross_device.push_back(v.xdev_error_pct);
  }
  return groups;
}

using SetupKey = std::pair<std::string, std::string>;
SetupKey SetupOf(const ValidatedCase& v) { return {v.measured.device, v.measured.framework}; }

using WorkloadKey = std::array<std::string, 3>;
WorkloadKey WorkloadOf(const ValidatedCase& v) {
  // The device kind from the catalog name or file; a device that cannot be
  // loaded was not modeled, so this succeeds for every modeled case.
  return {v.measured.network, PrecisionName(v.measured.precision),
          LoadDevice(v.measured.device).kind};
}

}  // namespace

std::vector<SetupSummary> SummarizeBySetup(const ValidationReport& report) {
  std::vector<SetupSummary> summaries;
  for (const auto& [key, errors] : GroupBy<SetupKey>(report, &SetupOf)) {
    SetupSummary s;
    s.device = key.first;
    s.framework = key.second;
    s.catalog = SummarizeErrorsPct(errors.catalog);
    s.cross_validated = SummarizeErrorsPct(errors.cross_validated);
    s.cross_device = SummarizeErrorsPct(errors.cross_device);
    summaries.push_back(s);
  }
  return summaries;
}

std::vector<WorkloadSummary> SummarizeByWorkload(const ValidationReport& report) {
  std::vector<WorkloadSummary> summaries;
  for (const auto& [key, errors] : GroupBy<WorkloadKey>(report, &WorkloadOf)) {
    WorkloadSummary s;
    s.network = key[0];
    s.precision = key[1];
    s.kind = key[2];
    s.catalog = SummarizeErrorsPct(errors.catalog);
    s.cross_validated = SummarizeErrorsPct(errors.cross_validated);
    s.cross_device = SummarizeErrorsPct(errors.cross_device);
    summaries.push_back(s);
  }
  return summaries;
}

ValidationReport Validate(const std::vector<MeasuredCase>& cases, const ValidateOptions& options) {
  ValidationReport report;
  Loader loader(options);
  struct Errors {
    std::vector<double> out_of_sample, in_sample;
    int not_modeled = 0;
  };
  std::vector<std::pair<std::string, Errors>> per_device;
  Errors all;
  const auto total = static_cast<int64_t>(cases.size());
  for (const MeasuredCase& c : cases) {
    ReportProgress(
        options.progress, "cases", static_cast<int64_t>(report.cases.size()), total,
        [&] { return fmt::format("{} on the {}, batch {}", c.network, c.device, c.batch); });
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
  ReportProgress(options.progress, "cases", total, total,
                 [&] { return fmt::format("{} cases", total); });
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
  std::vector<size_t> out_of_sample;
  for (size_t i = 0; i < report.cases.size(); ++i) {
    if (report.cases[i].modeled && !report.cases[i].in_sample) out_of_sample.push_back(i);
  }
  if (options.cross_device) {
    report.cross_device_run = true;
    CrossDeviceValidate(out_of_sample, options, loader, report);
    std::vector<double> all_errors;
    for (DeviceValidation& summary : report.devices) {
      std::vector<double> errors;
      for (size_t i : out_of_sample) {
        if (report.cases[i].measured.device == summary.device) {
          errors.push_back(report.cases[i].xdev_error_pct);
        }
      }
      summary.cross_device = SummarizeErrorsPct(errors);
      all_errors.insert(all_errors.end(), errors.begin(), errors.end());
    }
    report.cross_device = SummarizeErrorsPct(all_errors);
  }
  if (!options.cross_validate) {
    SummarizeKinds(loader, report);
    return report;
  }

  report.cross_validated_run = true;
  std::vector<double> cv_all;
  const auto devices = static_cast<int64_t>(report.devices.size());
  int64_t devices_done = 0;
  for (DeviceValidation& summary : report.devices) {
    ReportProgress(options.progress, "cross-validation", devices_done++, devices, [&] {
      return fmt::format("the {}, one group held out at a time", summary.device);
    });
    std::vector<size_t> which;
    for (size_t i = 0; i < report.cases.size(); ++i) {
      const ValidatedCase& v = report.cases[i];
      if (v.measured.device == summary.device && v.modeled && !v.in_sample) which.push_back(i);
    }
    if (which.empty()) continue;
    std::string reason;
    const Device* device = loader.GetDevice(summary.device, reason);
    FITSPEED_CHECK(device != nullptr, "a device with modeled cases was loaded");
    CrossValidateDevice(*device, which, options, loader, report, summary);
    std::vector<double> errors;
    for (size_t i : which) errors.push_back(report.cases[i].cv_error_pct);
    summary.cross_validated = SummarizeErrorsPct(errors);
    cv_all.insert(cv_all.end(), errors.begin(), errors.end());
  }
  ReportProgress(options.progress, "cross-validation", devices, devices,
                 [&] { return fmt::format("{} devices", devices); });
  report.cross_validated = SummarizeErrorsPct(cv_all);
  SummarizeKinds(loader, report);
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
      options.precision = Precision::kFp32;
      const ModeledStep fp32 = ModelStep(network, device, batch, options);
      options.precision = Precision::kMixed;
      const ModeledStep mixed = ModelStep(network, device, batch, options);
      options.layout = ActivationLayout::kNhwc;
      const ModeledStep mixed_nhwc = ModelStep(network, device, batch, options);
      MixedRatio r;
      r.network = name;
      r.batch = batch;
      r.fp32_step_s = fp32.step_time_s;
      r.mixed_step_s = mixed.step_time_s;
      r.ratio = mixed.step_time_s / fp32.step_time_s;
      r.in_band = r.ratio >= kMixedRatioLow && r.ratio <= kMixedRatioHigh;
      r.mixed_nhwc_step_s = mixed_nhwc.step_time_s;
      r.ratio_nhwc = mixed_nhwc.step_time_s / fp32.step_time_s;
      ratios.push_back(r);
    }
  }
  return ratios;
}

HostCheck RunHostCheck(const HostCheckOptions& options) {
  if (options.batches.empty()) throw UsageError("HostCheckOptions.batches: empty");
  // The modeled host is probed on the threads the sweep uses: its peaks, bandwidth
  // and efficiencies are those of that many CPUs.
  if (options.threads < 0 || options.threads > AvailableCpus()) {
    throw UsageError(fmt::format("HostCheckOptions.threads = {}: must be in [0, {}] (0: every CPU)",
                                 options.threads, AvailableCpus()));
  }
  if (!(options.min_time_s > 0)) {
    throw UsageError(
        fmt::format("HostCheckOptions.min_time_s = {}: must be > 0", options.min_time_s));
  }
  const Network network = LoadNetwork(options.network);
  const Device host = ProbeHostDevice(options.threads);
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
