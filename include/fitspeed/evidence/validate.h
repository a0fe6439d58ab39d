// Validation of the device step model against measured cases: predicted
// against measured throughput per case, % error, whether the device was
// calibrated on that very case (in-sample) or not (out-of-sample), and median
// and maximum absolute errors per device (docs/validation.md).
//
//   std::vector<fitspeed::MeasuredCase> cases = fitspeed::PublishedCases("data/measured");
//   fitspeed::ValidationReport report = fitspeed::Validate(cases);
//   std::cout << report.overall.median_abs_error_pct;  // out-of-sample
//
// With cross-validation, every case is also predicted by its device calibrated
// (fitspeed/calibrate/calibrate.h) on the device's other cases only: those of the
// other networks when the device has cases of two or more networks (leave one
// network out), else those of the other frameworks (leave one framework out);
// a device with one network and one framework keeps its catalog prediction,
// which is out-of-sample too.
//
// With cross-device validation, every case is also predicted from the same
// network's cases on the other devices of its kind (GPUs from GPUs, CPUs from
// CPUs: the scales describe a kind's kernel libraries): the parameters are
// fitted to those jointly (CalibrateShared) and applied to the case's device
// (ApplyCalibration) - what a user who measured a network on one GPU learns
// about another GPU. A network measured on no other device of the kind keeps
// the catalog prediction.
//
// Also the mixed-precision check (modeled mixed/FP32 step-time ratios) and
// the host self-check (the modeled `host` device against a measured host
// sweep of the same network).
#ifndef FITSPEED_EVIDENCE_VALIDATE_H_
#define FITSPEED_EVIDENCE_VALIDATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/calibrate/cases.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/step_model.h"

namespace fitspeed {

// The published cases fitspeed can model, read from the tables in
// `measured_dir` (copies of ../shared/data/measured: NVIDIA DLE, Pollux T4,
// koshian2 Colab TPU/GPU, Paddle K40m and Xeon). src/evidence/published_cases.cc.
std::vector<MeasuredCase> PublishedCases(const std::string& measured_dir);

struct ValidateOptions {
  // Devices used instead of the catalog device of the same Device::name (e.g.
  // calibrated device files); cases naming other devices load the catalog's.
  std::vector<Device> devices;
  // Optimizer of every modeled step (MeasuredCase does not record one).
  Optimizer optimizer = Optimizer::kSgdMomentum;
  // true: a case whose batch the memory model says does not fit is not modeled
  // (as a planner would refuse it). false: every published case ran, so its
  // step is predicted anyway and the memory model's verdict kept in
  // ValidatedCase::memory_note.
  bool require_fit = false;
  // Also predict every case out-of-sample from a calibrated device (file comment).
  bool cross_validate = false;
  // Also predict every case from its network's cases on the other devices.
  bool cross_device = false;
  // The solver settings of those calibrations; `parameters` and
  // `leave_one_network_out` are ignored: each fold fits the host overhead, and
  // the compute scale and the tensor scale when its training cases have
  // matrix work off and on tensor units (TF32, FP16/BF16) respectively.
  CalibrationOptions calibration;
  // Told each case modeled (stage "cases"), each (device, network) group of
  // the cross-device check and each device cross-validated; may be empty.
  ProgressCallback progress;
};

// One case, modeled or not.
struct ValidatedCase {
  MeasuredCase measured;
  std::string key;              // CaseKey(measured)
  bool modeled = false;         // false: `reason` says why it could not be
  std::string reason;           // out of memory, unsupported precision, unknown network
  double predicted_sps = 0;     // modeled throughput (all devices together)
  double predicted_step_s = 0;  // modeled step time
  double error_pct = 0;         // PercentError(predicted_sps, measured.throughput_sps)
  bool in_sample = false;       // key is in the device's calibrated_on
  // Set when the memory model says the batch does not fit (needed and available
  // GiB per core) although the case was measured; empty otherwise.
  std::string memory_note;

  // Cross-validation (ValidateOptions::cross_validate), for modeled cases:
  bool cv_calibrated = false;   // predicted by a device calibrated without this case's group
  std::string cv_group;         // that group (a network or a framework); "" when not calibrated
  double cv_predicted_sps = 0;  // the calibrated prediction, else predicted_sps
  double cv_error_pct = 0;      // PercentError(cv_predicted_sps, measured.throughput_sps)

  // Cross-device validation (ValidateOptions::cross_device), for modeled cases:
  bool xdev_calibrated = false;   // predicted from the network's cases on other devices
  double xdev_predicted_sps = 0;  // that prediction, else predicted_sps
  double xdev_error_pct = 0;      // PercentError(xdev_predicted_sps, measured.throughput_sps)
};

// Absolute % errors of a group of cases.
struct ErrorSummary {
  int cases = 0;                    // cases summarised
  double median_abs_error_pct = 0;  // NaN when cases == 0
  double max_abs_error_pct = 0;     // NaN when cases == 0
};

// One fold of a device's cross-validation: a group held out, the device
// calibrated on the rest, the group predicted.
struct CrossValidationFold {
  std::string group;       // the held-out network or framework
  int cases = 0;           // its modeled cases
  int training_cases = 0;  // the device's other modeled cases, fitted
  bool computed = false;   // false: no calibration (`problem` says why); catalog predictions kept
  std::string problem;
  std::vector<CalibratedParameter> parameters;  // the fitted ones
  ErrorSummary error;                           // of the held-out cases' predictions
};

// One group of the cross-device validation: a network's cases on one device,
// predicted from its cases on the other devices of the same kind.
struct CrossDeviceFold {
  std::string device;
  std::string network;
  std::vector<std::string> training_devices;  // the other devices with cases of the network
  int cases = 0;
  int training_cases = 0;
  bool computed = false;  // false: catalog predictions kept (`problem` says why)
  std::string problem;
  std::vector<CalibratedParameter> parameters;  // fitted jointly on the training devices
  ErrorSummary error;
};

struct DeviceValidation {
  std::string device;          // MeasuredCase::device
  ErrorSummary out_of_sample;  // catalog (or given) device, cases it was not calibrated on
  ErrorSummary in_sample;
  int not_modeled = 0;
  // Cross-validation: "network", "framework", or "" (one network and one
  // framework: catalog predictions); the out-of-sample errors of every modeled
  // case the given device was not calibrated on; the folds.
  std::string held_out_by;
  ErrorSummary cross_validated;
  std::vector<CrossValidationFold> folds;
  ErrorSummary cross_device;  // ValidatedCase::xdev_error_pct of the same cases
};

// The out-of-sample errors of the cases on the devices of some kinds
// together (ValidationReport::kinds: "gpu+tpu", "gpu").
struct KindValidation {
  std::string kinds;             // "gpu+tpu": Device::kind values joined by '+'
  ErrorSummary catalog;          // ValidatedCase::error_pct
  ErrorSummary cross_validated;  // cv_error_pct (cases == 0 unless cross_validated_run)
  ErrorSummary cross_device;     // xdev_error_pct (cases == 0 unless cross_device_run)
};

struct ValidationReport {
  std::vector<ValidatedCase> cases;       // in the input's order
  std::vector<DeviceValidation> devices;  // in order of first appearance
  ErrorSummary out_of_sample;             // every device, as catalogued: out-of-sample
  ErrorSummary in_sample;
  int not_modeled = 0;
  bool cross_validated_run = false;  // ValidateOptions::cross_validate
  // Every device, each case predicted by its device calibrated without its group.
  ErrorSummary cross_validated;
  bool cross_device_run = false;  // ValidateOptions::cross_device
  ErrorSummary cross_device;      // each case predicted from other devices
  std::vector<CrossDeviceFold> cross_device_folds;
  // The accelerators' cases, "gpu+tpu" and "gpu" (the CPU cases, Baidu's
  // 2016 Caffe/Paddle runs, weigh on "all" as no accelerator's do).
  std::vector<KindValidation> kinds;
};

// 100 * (predicted - measured) / measured: positive when the model is too fast.
// Throws UsageError unless measured > 0 and both are finite.
double PercentError(double predicted, double measured);

// Median (mean of the middle two for an even count) and maximum of |e| over
// `errors_pct`; NaN for both when it is empty.
ErrorSummary SummarizeErrorsPct(const std::vector<double>& errors_pct);

// Models every case with ModelStep at its global batch, devices and precision.
// A case whose network or device cannot be loaded, whose precision the device
// lacks, or (with require_fit) whose batch does not fit in memory is kept with
// modeled = false and the reason.
ValidationReport Validate(const std::vector<MeasuredCase>& cases,
                          const ValidateOptions& options = {});

// The out-of-sample errors of one setup: a device and a framework (the same
// hardware runs at very different speeds under different frameworks and math
// libraries, which the step model does not see).
struct SetupSummary {
  std::string device;
  std::string framework;         // MeasuredCase::framework ("" unknown)
  ErrorSummary catalog;          // ValidatedCase::error_pct of its modeled out-of-sample cases
  ErrorSummary cross_validated;  // cv_error_pct (cases 0 unless cross-validation ran)
  ErrorSummary cross_device;     // xdev_error_pct (cases 0 unless the cross-device check ran)
};

// One SetupSummary per (device, framework) with modeled out-of-sample cases,
// in order of first appearance.
std::vector<SetupSummary> SummarizeBySetup(const ValidationReport& report);

// The out-of-sample errors of one network at one precision, over every device
// and framework that ran it.
struct WorkloadSummary {
  std::string network;    // MeasuredCase::network
  std::string precision;  // PrecisionName
  std::string kind;       // of the devices: "gpu", "tpu", "cpu" (a network on two kinds: two rows)
  ErrorSummary catalog;
  ErrorSummary cross_validated;
  ErrorSummary cross_device;
};

// One WorkloadSummary per (network, precision, device kind) with modeled
// out-of-sample cases, in order of first appearance.
std::vector<WorkloadSummary> SummarizeByWorkload(const ValidationReport& report);

// ---- Mixed-precision check ---------------------------------------------------

// The band of mixed/FP32 step-time ratios published for small-batch training on
// a T4: 45-60% (the figure of fitspeed issue 5; docs/design.md, "Mixed precision").
inline constexpr double kMixedRatioLow = 0.45;
inline constexpr double kMixedRatioHigh = 0.60;

struct MixedRatio {
  std::string network;
  int64_t batch = 0;
  double fp32_step_s = 0;
  double mixed_step_s = 0;       // NCHW activations (DeviceModelOptions' default, PyTorch's)
  double ratio = 0;              // mixed_step_s / fp32_step_s
  bool in_band = false;          // kMixedRatioLow <= ratio <= kMixedRatioHigh
  double mixed_nhwc_step_s = 0;  // NHWC activations (channels_last): no layout transposes
  double ratio_nhwc = 0;         // mixed_nhwc_step_s / fp32_step_s
};

// Modeled mixed/FP32 step-time ratios of each network at each batch on
// `device`, the mixed step in both activation layouts.
std::vector<MixedRatio> MixedPrecisionRatios(const Device& device,
                                             const std::vector<std::string>& networks,
                                             const std::vector<int64_t>& batches,
                                             Optimizer optimizer = Optimizer::kSgdMomentum);

// ---- Host self-check ---------------------------------------------------------

struct HostCheckOptions {
  std::string network = "cnn-cifar-small";     // a zoo network the host backend runs
  std::vector<int64_t> batches = {8, 16, 32};  // each >= 1
  // Kernel threads of the measured sweep and of the host probe it is compared
  // with (ProbeHostDevice(threads)), in [0, AvailableCpus()]; 0: every CPU.
  int threads = 0;
  double min_time_s = 0.2;  // timed steps per batch at least this long (> 0)
};

struct HostCheckRow {
  int64_t batch = 0;
  double measured_step_s = 0;
  double predicted_step_s = 0;
  double error_pct = 0;    // PercentError on throughput (predicted vs measured)
  bool contended = false;  // measured while other processes took the CPUs
};

struct HostCheck {
  std::string network;
  int threads = 0;
  std::vector<HostCheckRow> rows;
  ErrorSummary summary;
};

// Measures `options.network` on the host (fitspeed/timing/sweep.h) and models
// it on LoadDevice("host"); takes seconds.
HostCheck RunHostCheck(const HostCheckOptions& options = {});

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_VALIDATE_H_
