// A device's calibration applied (calibration.h), and the parameter table the
// calibration fit shares (calibration_terms.h).
#include "fitspeed/device/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/table.h"
#include "device/calibration_terms.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace calibration {

// The device with the free parameters of `x` (internal units) in place.
Device Apply(const Device& base, const Values& x, const std::array<bool, kParams>& free) {
  Device d = base;
  if (free[4]) {
    // From the curve ModelStep used (the compute curve when the device has no
    // tensor curve of its own), before the compute scale touches it.
    d.tensor_efficiency = base.TensorEfficiency();
    // An FP8 curve and attention curves of its own scale with it: the same
    // units, the same framework and host around them.
    for (EfficiencyCurve* curve :
         {&d.tensor_efficiency, &d.fp8_efficiency, &d.attention_forward_efficiency,
          &d.attention_backward_efficiency}) {
      for (EfficiencyCurve::Point& p : curve->points) {
        p.efficiency = std::min(1.0, p.efficiency * x[4]);
      }
    }
  }
  // <= 1 by the bound, up to rounding; implicit GEMM and Winograd curves alike.
  if (free[0]) ScaleComputeEfficiency(d, x[0]);
  if (free[1]) ScaleMemoryEfficiency(d, x[1]);
  if (free[2]) d.kernel_launch_s = x[2] * kInfo[2].internal_unit;
  if (free[3]) d.step_host_s = x[3] * kInfo[3].internal_unit;
  return d;
}

double MaxEfficiency(const EfficiencyCurve& curve) {
  double max = 0;
  for (const EfficiencyCurve::Point& p : curve.points) max = std::max(max, p.efficiency);
  return max;
}

// After parameter `j` was written into `d` (from `before`): the compute scale
// scales the Winograd and depthwise curves too, the memory scale the
// normalization curve, the tensor scale the FP8 and attention curves, and their sources and bases
// say so, those of the compute or memory curve.
void MarkScaledCurves(Device& d, const Device& before, size_t j) {
  if (j != 0 && j != 1 && j != 4) return;
  const char* with = j == 0   ? "efficiency.compute"
                     : j == 1 ? "efficiency.memory"
                              : "efficiency.tensor";
  using Scaled = std::vector<std::pair<const char*, const EfficiencyCurve*>>;
  Scaled curves;
  if (j == 4) {
    curves = {{"efficiency.fp8", &before.fp8_efficiency},
              {"efficiency.attention_forward", &before.attention_forward_efficiency},
              {"efficiency.attention_backward", &before.attention_backward_efficiency}};
  } else if (j == 0) {
    curves = {{"efficiency.winograd", &before.winograd_efficiency},
              {"efficiency.depthwise", &before.depthwise_efficiency}};
  } else {
    curves = {{"efficiency.memory_normalization", &before.normalization_memory_efficiency}};
  }
  for (const auto& [field, curve] : curves) {
    if (curve->points.empty()) continue;
    const auto old = before.sources.find(field);
    d.sources[field] =
        fmt::format("scaled with {} ({}); before: {}", with, d.sources[with],
                    old == before.sources.end() ? std::string("not recorded") : old->second);
    d.bases[field] = d.bases[with];
  }
}

// The largest efficiency the memory scale multiplies (element-wise and
// normalization curves).
double MaxMemoryEfficiency(const Device& d) {
  return std::max(MaxEfficiency(d.memory_efficiency),
                  MaxEfficiency(d.normalization_memory_efficiency));
}

// The largest efficiency the compute scale multiplies (compute, Winograd and
// depthwise curves).
double MaxComputeEfficiency(const Device& d) {
  return std::max({MaxEfficiency(d.compute_efficiency), MaxEfficiency(d.winograd_efficiency),
                   MaxEfficiency(d.depthwise_efficiency)});
}

}  // namespace calibration

using calibration::kInfo;
using calibration::kParams;
using calibration::ParameterInfo;

const char* CalibrationParameterName(CalibrationParameter parameter) {
  for (const ParameterInfo& info : kInfo) {
    if (info.id == parameter) return info.short_name;
  }
  return "unknown";
}

CalibrationParameter ParseCalibrationParameter(const std::string& name) {
  for (const ParameterInfo& info : kInfo) {
    if (name == info.short_name || name == info.name) return info.id;
  }
  throw UsageError(fmt::format(
      "unknown calibration parameter '{}' (known: compute, memory, launch, host, tensor)", name));
}

bool CalibratedParameter::at_bound() const {
  const double tolerance = 1e-9 * std::max(1.0, std::fabs(value));
  return std::fabs(value - lower) <= tolerance ||
         (std::isfinite(upper) && std::fabs(upper - value) <= tolerance);
}

Device ApplyCalibration(const Device& device, const std::vector<CalibratedParameter>& parameters) {
  calibration::Values x = {1, 1, device.kernel_launch_s / kInfo[2].internal_unit,
                           device.step_host_s / kInfo[3].internal_unit, 1};
  std::array<bool, kParams> free{};
  for (const CalibratedParameter& p : parameters) {
    const auto info = std::find_if(kInfo.begin(), kInfo.end(),
                                   [&p](const ParameterInfo& i) { return p.name == i.name; });
    if (info == kInfo.end()) {
      throw UsageError(fmt::format("ApplyCalibration: unknown parameter '{}'", p.name));
    }
    const size_t j = static_cast<size_t>(info - kInfo.begin());
    free[j] = true;
    x[j] = p.value / info->internal_unit;
  }
  Device d = calibration::Apply(device, x, free);
  for (size_t j = 0; j < kParams; ++j) {
    if (!free[j]) continue;
    const auto before = device.sources.find(kInfo[j].field);
    d.sources[kInfo[j].field] =
        fmt::format("calibrated elsewhere: {} = {}; before: {}", kInfo[j].name,
                    FormatSig(x[j] * kInfo[j].internal_unit, 6),
                    before == device.sources.end() ? std::string("not recorded") : before->second);
    d.bases[kInfo[j].field] = "carried";
    calibration::MarkScaledCurves(d, device, j);
  }
  return d;
}

}  // namespace fitspeed
