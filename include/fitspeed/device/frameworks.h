// Framework profiles (docs/devices.md, "Framework profiles"; docs/validation.md,
// "Framework profiles"): what one framework does to the same network on the
// same GPU, against the kernel-fitted step model, as data.
//
// The same ResNet-50 on the same A100 runs 35% faster in MXNet than in PyTorch
// AMP (NVIDIA's tables): fusion of element-wise work, per-kernel dispatch, the
// per-step host work, AMP's casts and loss scaling, optimizer kernels. A
// profile is the calibration parameters (fitspeed/device/calibration.h) that a
// framework's published GPU runs determine, fitted jointly over every GPU they
// ran on (CalibrateShared): the efficiency scales its runs need (compute for
// FP32 on CUDA cores, tensor for TF32 and mixed precision) and the host
// overhead per step. `sweep --device D --framework F` applies it to D
// (ApplyCalibration). Its accuracy on a GPU it has not seen is measured by
// leaving each device out in turn: the profile fitted on the framework's
// other GPUs predicts the held-out GPU's runs, never fitted to them.
//
//   const FrameworkProfile& pytorch = FindFrameworkProfile("pytorch");
//   Device d = ApplyFrameworkProfile(LoadDevice("a100"), pytorch);
#ifndef FITSPEED_DEVICE_FRAMEWORKS_H_
#define FITSPEED_DEVICE_FRAMEWORKS_H_

#include <string>
#include <vector>

#include "fitspeed/device/calibration.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/step_model.h"

namespace fitspeed {

struct FrameworkProfile {
  std::string name;                  // MeasuredCase::framework: "pytorch", "tensorflow", ...
  std::vector<std::string> devices;  // the GPUs of the cases it was fitted on
  std::vector<std::string> networks;
  int cases = 0;
  // compute_scale and/or tensor_scale (what the cases determine) and step_host_s,
  // with standard errors and intervals (CalibrateShared,
  // fitspeed/evidence/framework_profiles.h).
  std::vector<CalibratedParameter> parameters;
  bool converged = false;
  double rms_error = 0;  // of its own cases after the fit (in-sample), relative
};

// "fitspeed.frameworks/1": {"schema", "method", "profiles": [{"name", "devices",
// "networks", "cases", "converged", "rms_error", "parameters": [{"name", "value",
// "std_error", "ci_low", "ci_high"}]}]}.
std::string FrameworkProfilesToJson(const std::vector<FrameworkProfile>& profiles);
// Throws DataError(source, line, field, problem) for a malformed document.
std::vector<FrameworkProfile> ParseFrameworkProfiles(const std::string& text,
                                                     const std::string& source);

// data/frameworks.json, compiled in (`fitspeed validate --frameworks-out`).
const std::vector<FrameworkProfile>& BuiltinFrameworkProfiles();

// The built-in profile `name`. UsageError naming the known profiles, and for
// a framework of the list with no published runs here (xla, jax)
// saying so.
const FrameworkProfile& FindFrameworkProfile(const std::string& name);

// `device` with the profile's parameters applied (ApplyCalibration): its
// efficiency scales multiply the device's curves, its host overhead replaces
// the device's. The sources name the profile.
Device ApplyFrameworkProfile(const Device& device, const FrameworkProfile& profile);

// What a framework does beyond its profile's numbers, for a sweep that names
// it (`sweep --device D --framework F`) and does not say otherwise: the layers
// its automatic mixed precision keeps in FP32 (AmpOpList::kTensorFlow for
// "tensorflow" and "keras", which runs on TensorFlow; kPyTorch for any other
// name, the empty one included) ...
AmpOpList FrameworkAmpOps(const std::string& framework);
// ... and the element-wise work it fuses into the batch norms' kernels:
// kBatchNormReluAdd for "mxnet" at Precision::kMixed (NVIDIA's MXNet
// examples run float16 with cuDNN's fused batch norm + ReLU (+ add) kernels;
// the mxnet profile was fitted on such runs), kNone otherwise.
ElementwiseFusion FrameworkFusion(const std::string& framework, Precision precision);

}  // namespace fitspeed

#endif  // FITSPEED_DEVICE_FRAMEWORKS_H_
