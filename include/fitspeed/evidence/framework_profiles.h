// Framework profiles fitted to the published GPU runs of each framework, with
// leave-one-GPU-out folds (docs/validation.md, "Framework profiles"); the
// profiles themselves and how they apply: fitspeed/device/frameworks.h.
//
//   FrameworkProfileReport r = FitFrameworkProfiles(PublishedCases("data/measured"));
//   std::ofstream("frameworks.json") << FrameworkProfilesToJson(r.profiles);
#ifndef FITSPEED_EVIDENCE_FRAMEWORK_PROFILES_H_
#define FITSPEED_EVIDENCE_FRAMEWORK_PROFILES_H_

#include <string>
#include <vector>

#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/calibrate/cases.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/frameworks.h"

namespace fitspeed {

// One held-out GPU of a framework: the profile fitted on the framework's
// cases on its other GPUs, the held-out GPU's cases predicted.
struct FrameworkFold {
  std::string framework;
  std::string device;
  std::string publisher;  // of the held-out runs (CasePublisher); the training runs are others'
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
// `progress` is told each framework (stage "framework profiles").
FrameworkProfileReport FitFrameworkProfiles(const std::vector<MeasuredCase>& cases,
                                            const CalibrationOptions& options = {},
                                            const std::vector<Device>& devices = {},
                                            const ProgressCallback& progress = {});

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_FRAMEWORK_PROFILES_H_
