// A device's calibration parameters and how they apply: the efficiency scales
// and overheads that `fitspeed calibrate` fits (fitspeed/calibrate/calibrate.h),
// that framework profiles carry (fitspeed/device/frameworks.h) and that a
// calibrated device file records (docs/devices.md, "Calibration").
//
//   fitspeed::CalibratedParameter host;
//   host.name = "step_host_s";
//   host.value = 2e-3;
//   fitspeed::Device d = fitspeed::ApplyCalibration(fitspeed::LoadDevice("t4"), {host});
#ifndef FITSPEED_DEVICE_CALIBRATION_H_
#define FITSPEED_DEVICE_CALIBRATION_H_

#include <string>
#include <vector>

#include "fitspeed/device/device.h"

namespace fitspeed {

// The parameters a calibration can fit.
enum class CalibrationParameter {
  kComputeScale,  // factor on every point of Device::compute_efficiency
  kMemoryScale,   // factor on every point of Device::memory_efficiency
  kKernelLaunch,  // Device::kernel_launch_s
  kStepHost,      // Device::step_host_s
  // Factor on every point of Device::TensorEfficiency() (matrix work on tensor
  // units: TF32, FP16/BF16); the calibrated device gets its own tensor curve.
  kTensorScale,
};
// Short names of --params: "compute", "memory", "launch", "host", "tensor".
const char* CalibrationParameterName(CalibrationParameter parameter);
// A short name, or the DeviceCalibration name ("compute_scale", "memory_scale",
// "kernel_launch_s", "step_host_s", "tensor_scale"); throws UsageError for
// anything else.
CalibrationParameter ParseCalibrationParameter(const std::string& name);

// One fitted parameter, in SI units (scales are dimensionless).
struct CalibratedParameter {
  std::string name;    // "compute_scale", ..., "tensor_scale" (DeviceCalibration::Parameter)
  std::string unit;    // "" (scales) or "s"
  double initial = 0;  // the device's value (scales: 1)
  double value = 0;
  double std_error = 0;  // sqrt(s^2 (J^T J)^-1_ii), s^2 = RSS/dof; NaN when not estimable
  double ci_low = 0;     // value -/+ t quantile x std_error (NaN when not estimable)
  double ci_high = 0;
  double lower = 0;  // bounds of the fit
  double upper = 0;  // +inf for the overheads
  bool at_bound() const;
};

// `device` with calibrated parameters (CalibratedParameter::name and value)
// applied: compute_scale, memory_scale and tensor_scale multiply every point of
// its compute, memory and tensor-unit curve (the tensor curve starting from the
// compute curve when the device has none), capped at 1; kernel_launch_s and
// step_host_s replace its overheads. Its sources say so. UsageError for an
// unknown name.
Device ApplyCalibration(const Device& device, const std::vector<CalibratedParameter>& parameters);

}  // namespace fitspeed

#endif  // FITSPEED_DEVICE_CALIBRATION_H_
