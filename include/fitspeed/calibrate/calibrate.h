// Calibration of a device's free parameters to measured training cases of zoo
// networks: a scale on the compute-efficiency curve, a scale on the
// memory-efficiency curve, the kernel launch overhead, the per-step host
// overhead and a scale on the tensor-unit (TF32, FP16/BF16) curve, fitted by bounded least squares
// (Ceres) on the log ratio of modeled to measured step time, with standard errors s^2 (J^T J)^-1
// and t-quantile intervals, errors before and after, and leave-one-network-out cross-validation
// (the out-of-sample error). docs/devices.md, "Calibration".
//
//   std::vector<fitspeed::MeasuredCase> cases = fitspeed::ReadCasesCsv("t4.csv");
//   fitspeed::CalibrationResult r = fitspeed::CalibrateDevice(fitspeed::LoadDevice("t4"), cases);
//   std::cout << r.FullReport();
//   std::ofstream("t4-calibrated.json") << fitspeed::DeviceToJson(r.device);
#ifndef FITSPEED_CALIBRATE_CALIBRATE_H_
#define FITSPEED_CALIBRATE_CALIBRATE_H_

#include <optional>
#include <string>
#include <vector>

#include "fitspeed/calibrate/cases.h"
#include "fitspeed/device/calibration.h"
#include "fitspeed/device/device.h"
#include "fitspeed/model/network_cost.h"

namespace fitspeed {

struct CalibrationOptions {
  // The parameters fitted (each at most once, at least one); the others keep
  // the device's values. The default pair is what a few networks determine:
  // the compute scale sets the large-batch throughput, the host overhead the
  // small-batch one; memory scale and launch overhead need networks that
  // differ in memory-bound work and kernel count.
  std::vector<CalibrationParameter> parameters = {CalibrationParameter::kComputeScale,
                                                  CalibrationParameter::kStepHost};
  // The optimizer whose update the modeled step includes.
  Optimizer optimizer = Optimizer::kSgdMomentum;
  // Lower bound of the efficiency scales, in (0, 1). The upper bound is
  // 1 / (the curve's largest efficiency), so every efficiency stays in (0, 1].
  double min_scale = 0.01;
  // Solver iteration limit per fit (the calibration and each held-out fit), >= 1.
  int max_iterations = 100;
  // Confidence level of the parameter intervals, in (0, 1).
  double confidence = 0.95;
  // Refit without each network in turn and predict its cases. Needs cases of
  // at least 2 networks.
  bool leave_one_network_out = true;
};
// Throws UsageError naming the field, its value and the rule it broke.
void ValidateCalibrationOptions(const CalibrationOptions& options);

// One measured case and its modeled step times.
struct CaseFit {
  MeasuredCase measured;
  std::string key;             // CaseKey(measured)
  double measured_step_s = 0;  // batch / throughput_sps
  double before_step_s = 0;    // modeled on the device as given
  double after_step_s = 0;     // modeled on the calibrated device (in-sample)
  // Modeled on the device calibrated without this case's network
  // (out-of-sample); NaN when that fit was not possible.
  double loo_step_s = 0;
  bool fits_memory = true;  // the modeled memory fits the device
  // Relative throughput errors, predicted/measured - 1 (= measured/modeled step - 1).
  double error_before() const { return measured_step_s / before_step_s - 1; }
  double error_after() const { return measured_step_s / after_step_s - 1; }
  double error_loo() const { return measured_step_s / loo_step_s - 1; }
};

// One fold of the leave-one-network-out cross-validation.
struct HeldOutNetwork {
  std::string network;
  int cases = 0;           // its cases, predicted
  int training_cases = 0;  // the other networks' cases, fitted
  bool computed = false;   // false: the fit was not possible (`problem` says why)
  std::string problem;
  std::vector<double> values;      // the fitted values, in CalibrationResult::parameters order
  DeviceCalibration::Error error;  // of its cases' out-of-sample predictions
};

struct CalibrationResult {
  // The calibrated device: curves scaled, overheads set, sources of the fitted
  // fields rewritten, calibrated_on = the case keys, calibration filled.
  Device device;
  std::string device_before;                    // name and origin of the device as given
  std::vector<CalibratedParameter> parameters;  // the fitted ones, in enum order
  std::vector<std::string> fixed;               // names of those kept at the device's values
  std::vector<CaseFit> cases;                   // in input order
  std::vector<std::string> networks;            // distinct networks, in order of appearance
  DeviceCalibration::Error before;
  DeviceCalibration::Error after;
  std::optional<DeviceCalibration::Error> loo;  // over every case whose fold was computed
  std::vector<HeldOutNetwork> held_out;         // one per network (with leave_one_network_out)
  double confidence = 0.95;
  int dof = 0;     // cases - fitted parameters
  double rss = 0;  // sum of squared log ratios at the solution
  bool converged = false;
  int iterations = 0;
  std::string solver_message;  // Ceres's
  std::vector<std::string> warnings;

  bool usable() const { return converged; }
  std::string BriefReport() const;  // one line
  // Parameters with intervals, errors before/after/out-of-sample, warnings, and
  // the per-case and per-network tables.
  std::string FullReport() const;
};

// Calibrates `device` to `cases` (all assumed to be of this device; callers
// select them). Each case is modeled with ModelStep(LoadNetwork(network),
// device, batch, {precision, devices, optimizer}). Throws DataError when there
// are fewer cases than fitted parameters, fewer than 2 networks with
// leave_one_network_out, or a case that cannot be modeled (unknown network,
// a precision the device lacks; naming the case's file and line); UsageError
// for bad options. A fit that does not converge is reported in the result.
CalibrationResult CalibrateDevice(const Device& device, const std::vector<MeasuredCase>& cases,
                                  const CalibrationOptions& options = {});

// Parameters fitted jointly to cases of several devices: each case is modeled
// on its own device (the one of `devices` whose name is MeasuredCase::device);
// a scale multiplies every device's curve, a fitted overhead replaces every
// device's value, and what is not fitted stays each device's own. This is how
// measurements on some devices predict another one (fitspeed validate's
// cross-device check): the fitted parameters are applied to it with
// ApplyCalibration. Throws DataError for fewer cases than parameters, a case
// whose device is not in `devices` or that cannot be modeled; UsageError for
// bad options. `leave_one_network_out` is ignored.
struct SharedCalibration {
  std::vector<CalibratedParameter> parameters;  // the fitted ones, in enum order
  bool converged = false;
  int iterations = 0;
  std::string solver_message;
  DeviceCalibration::Error after;  // the cases, on their calibrated devices (in-sample)
};
SharedCalibration CalibrateShared(const std::vector<Device>& devices,
                                  const std::vector<MeasuredCase>& cases,
                                  const CalibrationOptions& options = {});

// Whether a case's matrix work runs on `device`'s tensor units (TF32, mixed
// precision, or FP32 on a device with fp32_matrix_on_tensor16), as ModelStep decides.
bool OnTensorUnits(const MeasuredCase& c, const Device& device);

// The efficiency scales a set of cases determines, in enum order: the compute
// scale when some run matrix work off tensor units, the tensor scale when some
// run it on them. `devices[i]` is the device of `cases[i]`.
std::vector<CalibrationParameter> ScalesDetermined(const std::vector<MeasuredCase>& cases,
                                                   const std::vector<const Device*>& devices);

// Summary of relative errors: rms of the signed values, median and max of |e|.
DeviceCalibration::Error SummarizeErrors(const std::vector<double>& errors);

}  // namespace fitspeed

#endif  // FITSPEED_CALIBRATE_CALIBRATE_H_
