// Writers of the calibration reports as text tables, CSV or JSON: `fitspeed
// calibrate` and `fitspeed sweep device --from` (docs/devices.md). The JSON
// schemas are named in each.
#ifndef FITSPEED_CALIBRATE_OUTPUT_H_
#define FITSPEED_CALIBRATE_OUTPUT_H_

#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/calibrate/transfer_run.h"
#include "fitspeed/core/output_format.h"
#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/fit/fit.h"

namespace fitspeed {

// A sweep of device B transferred from the user's run on A (`sweep --device B
// --from RUN --from-device A`): B's sweep as WriteDeviceSweep writes it, with
// the transfer's header (what was fitted on A, applied to B, kept, A's error
// before and after, where the interval comes from): table lines before it,
// '#' comment lines before the CSV, a "transfer" object in the JSON.
// `interval`: the transfer's prediction interval, passed on to
// WriteDeviceSweep; nullptr: the header says none is given.
void WriteTransferSweep(std::ostream& out, const TransferRun& run, const DeviceSweepResult& sweep,
                        const FitResult& fit, OutputFormat format, bool layers,
                        const PredictionInterval* interval = nullptr);

// A device calibrated on its cases (`fitspeed calibrate`): table, its
// FullReport; CSV, one row per case (measured, modeled before, after and
// out-of-sample throughputs and their errors); JSON schema
// "fitspeed.calibration/1" with the parameters, errors, cases, the
// leave-one-network-out folds and the `skipped` cases of other devices.
void WriteCalibration(std::ostream& out, const CalibrationResult& result,
                      const std::vector<MeasuredCase>& skipped, OutputFormat format);

// Efficiency scales fitted jointly to `cases` cases of the devices `from`
// and applied to `target` (`fitspeed calibrate --from`): table, the scales
// and the in-sample error; CSV, one row per parameter; JSON schema
// "fitspeed.calibration-transfer/1".
void WriteSharedCalibration(std::ostream& out, const SharedCalibration& result,
                            const std::string& target, const std::vector<std::string>& from,
                            size_t cases, OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_CALIBRATE_OUTPUT_H_
