// Transfer from a user's own run as `fitspeed sweep MODEL --device B --from RUN
// --from-device A` takes it (docs/devices.md, "Transfer from your own run"):
// RUN is a training log any reader of `fitspeed fit` takes, with PATH@key=value
// attributes (precision, layout=nchw|nhwc, network=NAME, and the readers'
// own), a host sweep CSV, or a cases CSV (ReadCasesCsv). Its samples or rows
// become cases of MODEL on A, checked against what is modeled on B (network,
// precision, layout, sequence length), and A's calibration carries over to B
// (CalibrateTransfer, fitspeed/calibrate/transfer.h). Errors name the command
// line's options.
#ifndef FITSPEED_CALIBRATE_TRANSFER_RUN_H_
#define FITSPEED_CALIBRATE_TRANSFER_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/calibrate/transfer.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/network.h"

namespace fitspeed {

// What the command line (`sweep --device B --from RUN --from-device A`) says
// about the measurement on A.
struct TransferSource {
  std::string from;         // --from: PATH[@key=value,...] (a log, a cases CSV, a host sweep CSV)
  std::string from_device;  // --from-device: A, catalog name or device JSON file
  std::string model;        // MODEL as written
  int64_t seq_len = 0;      // --seq-len (0: the model's default)
  bool precision_given = false;  // --precision was on the command line
  bool layout_given = false;     // --layout was on the command line
};

// The measurement read and the transfer calibrated.
struct TransferRun {
  TransferSource source;
  std::string source_kind;  // "log" or "cases"
  Precision precision = Precision::kFp32;
  ActivationLayout layout = ActivationLayout::kNchw;
  TransferCalibration calibration;  // calibration.target: B with the carried parameters
  // What of the measurement was left out, one sentence each (the CLI says them
  // on stderr).
  std::vector<std::string> notes;
};

// Reads --from, checks it against what is modeled (network, precision,
// layout), calibrates on A and applies what carries over to `target` (B as
// the sweep models it, links applied). `options`: the sweep's options for B.
// Throws UsageError (64) for missing or contradicting attributes and options,
// DataError (65) for a measurement of another network or precision (file and
// line named), InputError (66) for an unreadable file.
TransferRun CalibrateFromRun(const Network& network, const Device& target,
                             const DeviceModelOptions& options, const TransferSource& source);

}  // namespace fitspeed

#endif  // FITSPEED_CALIBRATE_TRANSFER_RUN_H_
