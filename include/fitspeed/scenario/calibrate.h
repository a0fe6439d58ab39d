// Calibration as a request (fitspeed/scenario/answer.h): `fitspeed calibrate`
// fits a device's efficiency scales and overheads to measured cases of zoo
// networks, or (with `from`) fits the scales jointly on other devices' cases
// and carries them to a device without measurements of its own
// (docs/devices.md, "Calibration").
#ifndef FITSPEED_SCENARIO_CALIBRATE_H_
#define FITSPEED_SCENARIO_CALIBRATE_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/calibrate/cases.h"
#include "fitspeed/device/device.h"
#include "fitspeed/scenario/answer.h"

namespace fitspeed {

struct CalibrateAnswer;

struct CalibrateRequest {
  // The device calibrated: a catalog name or a fitspeed.device/1 file. Required.
  std::string device;
  // Devices whose cases are fitted jointly, the scales then applied to
  // `device` (which needs no cases); empty: `device`'s own cases.
  std::vector<std::string> from;
  // Cases CSV files (ReadCasesCsv; docs/devices.md, "The cases file"). At
  // least one; the cases of other devices are skipped (and counted in a note).
  std::vector<std::string> cases_files;
  // Parameters fitted, optimizer of cases without one, confidence, solver
  // settings. With `from` and `parameters_stated` false, the parameters are
  // the scales the cases determine (ScalesDetermined).
  CalibrationOptions options;
  bool parameters_stated = false;

  void Validate() const;
  CalibrateAnswer Run() const;
};

struct CalibrateAnswer : Answer {
  // Without `from`: the calibration on the device's own cases.
  std::optional<CalibrationResult> result;
  std::vector<MeasuredCase> skipped;  // cases of other devices
  // With `from`: the scales fitted on the other devices' cases.
  std::optional<SharedCalibration> shared;
  std::vector<std::string> from;
  std::string target;
  size_t cases = 0;
  // The calibrated device (to be written as a fitspeed.device/1 file when usable).
  Device device;

  // Table, CSV or JSON: fitspeed.calibration/1 or fitspeed.calibration-transfer/1.
  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
};

}  // namespace fitspeed

#endif  // FITSPEED_SCENARIO_CALIBRATE_H_
