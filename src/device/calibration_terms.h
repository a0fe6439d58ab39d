// The calibration parameters' table and the device edits they make, shared by
// ApplyCalibration (calibration.cc) and the calibration fit
// (src/evidence/calibrate.cc). Private to the library.
#ifndef FITSPEED_SRC_DEVICE_CALIBRATION_TERMS_H_
#define FITSPEED_SRC_DEVICE_CALIBRATION_TERMS_H_

#include <array>
#include <cstddef>

#include "fitspeed/device/calibration.h"
#include "fitspeed/device/device.h"

namespace fitspeed::calibration {

inline constexpr int kParams = 5;

struct ParameterInfo {
  CalibrationParameter id;
  const char* short_name;  // --params
  const char* name;        // DeviceCalibration::Parameter::name
  const char* unit;
  // SI value of one unit of the internal parameter: the overheads are fitted
  // in microseconds and milliseconds so that every parameter is of order 1.
  double internal_unit;
  const char* field;  // the device-file field it changes (Device::sources key)
};
inline constexpr std::array<ParameterInfo, kParams> kInfo = {{
    {CalibrationParameter::kComputeScale, "compute", "compute_scale", "", 1, "efficiency.compute"},
    {CalibrationParameter::kMemoryScale, "memory", "memory_scale", "", 1, "efficiency.memory"},
    {CalibrationParameter::kKernelLaunch, "launch", "kernel_launch_s", "s", 1e-6,
     "overheads.kernel_launch_s"},
    {CalibrationParameter::kStepHost, "host", "step_host_s", "s", 1e-3, "overheads.step_host_s"},
    {CalibrationParameter::kTensorScale, "tensor", "tensor_scale", "", 1, "efficiency.tensor"},
}};

using Values = std::array<double, kParams>;  // internal units, kInfo order

// The device with the free parameters of `x` (internal units) in place.
Device Apply(const Device& base, const Values& x, const std::array<bool, kParams>& free);

double MaxEfficiency(const EfficiencyCurve& curve);

// After parameter `j` was written into `d` (from `before`): the compute scale
// scales the Winograd and depthwise curves too, the memory scale the
// normalization curve, and their sources and bases say so, those of the
// compute or memory curve.
void MarkScaledCurves(Device& d, const Device& before, size_t j);

// The largest efficiency the memory scale multiplies (element-wise and
// normalization curves).
double MaxMemoryEfficiency(const Device& d);

// The largest efficiency the compute scale multiplies (compute, Winograd and
// depthwise curves).
double MaxComputeEfficiency(const Device& d);

}  // namespace fitspeed::calibration

#endif  // FITSPEED_SRC_DEVICE_CALIBRATION_TERMS_H_
