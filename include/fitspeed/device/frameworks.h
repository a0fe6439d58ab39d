// Framework profiles (docs/devices.md, "Framework profiles"; docs/validation.md,
// "Framework profiles"): what one framework does to the same network on the
// same GPU, against the kernel-fitted step model, as data.
//
// The same ResNet-50 on the same A100 runs 35% faster in MXNet than in PyTorch
// AMP (NVIDIA's tables): fusion of element-wise work, per-kernel dispatch, the
// per-step host work, AMP's casts and loss scaling, optimizer kernels. A
// profile is the calibration parameters (fitspeed/device/calibrate.h) that a
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

#include "fitspeed/device/calibrate.h"
#include "fitspeed/device/cases.h"
#include "fitspeed/device/device.h"

namespace fitspeed {

struct FrameworkProfile {
  std::string name;                  // MeasuredCase::framework: "pytorch", "tensorflow", ...
  std::vector<std::string> devices;  // the GPUs of the cases it was fitted on
  std::vector<std::string> networks;
  int cases = 0;
  // compute_scale and/or tensor_scale (what the cases determine) and step_host_s,
  // with standard errors and intervals (CalibrateShared).
  std::vector<CalibratedParameter> parameters;
  bool converged = false;
  double rms_error = 0;  // of its own cases after the fit (in-sample), relative
};

// One held-out GPU of a framework: the profile fitted on the framework's
// cases on its other GPUs, the held-out GPU's cases predicted.
struct FrameworkFold {
  std::string framework;
  std::string device;
  std::vector<std::string> training_devices;
  int cases = 0;
  int training_cases = 0;
  bool computed = false;  // false: `problem` says why; catalog predictions kept
  std::string problem;
  std::vector<CalibratedParameter> parameters;
  // The held-out GPU's cases, in the order of the errors below.
  std::vector<MeasuredCase> held_out;
  std::vector<double> catalog_errors;  // predicted/measured - 1, the device as catalogued
  std::vector<double> profile_errors;  // the same cases with the fold's profile (when computed)
};

// A framework with GPU cases but no profile, and why.
struct SkippedFramework {
  std::string name;
  int cases = 0;
  std::string reason;
};

struct FrameworkProfileReport {
  std::vector<FrameworkProfile> profiles;  // frameworks with GPU cases, in order of appearance
  std::vector<FrameworkFold> folds;        // one per framework and GPU
  std::vector<SkippedFramework> skipped;   // frameworks whose cases could not be fitted
};

// Fits a profile per framework to the GPU cases of `cases` (cases on TPUs and
// CPUs, and cases without a framework, are left out: a framework's effect is
// measured against the GPU kernel fits), and the leave-one-device-out folds.
// `options`' solver settings are used; its parameters are chosen per profile.
// A framework whose cases cannot be fitted (no more cases than parameters)
// has no profile and is listed in `skipped` with the reason; a fold that
// cannot be fitted says why. `devices` replace the catalog devices of the
// same name (e.g. calibrated device files); the others are loaded by name.
FrameworkProfileReport FitFrameworkProfiles(const std::vector<MeasuredCase>& cases,
                                            const CalibrationOptions& options = {},
                                            const std::vector<Device>& devices = {});

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

}  // namespace fitspeed

#endif  // FITSPEED_DEVICE_FRAMEWORKS_H_
