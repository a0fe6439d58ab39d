// Transfer from a user's own run in the CLI (fitspeed/evidence/transfer.h):
// `fitspeed sweep MODEL --device B --from LOG --from-device A`
// (transfer_sweep.cc).
#ifndef FITSPEED_TOOLS_FITSPEED_TRANSFER_CLI_H_
#define FITSPEED_TOOLS_FITSPEED_TRANSFER_CLI_H_

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/device/step_model.h"
#include "fitspeed/evidence/transfer.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/output.h"

namespace fitspeed::cli {

// What the sweep's command line says about the measurement on A.
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
  DevicePrecision precision = DevicePrecision::kFp32;
  ActivationLayout layout = ActivationLayout::kNchw;
  TransferCalibration calibration;  // calibration.target: B with the carried parameters
};

// Reads --from, checks it against what is modeled (network, precision,
// layout), calibrates on A and applies what carries over to `target` (B as
// the sweep models it, links applied). `options`: the sweep's options for B.
// Throws UsageError (64) for missing or contradicting attributes and options,
// DataError (65) for a measurement of another network or precision (file and
// line named), InputError (66) for an unreadable file.
TransferRun CalibrateFromRun(const Network& network, const Device& target,
                             const DeviceModelOptions& options, const TransferSource& source);

// B's sweep as WriteDeviceSweep writes it, with the transfer's header: table
// lines before it, '#' comment lines before the CSV, a "transfer" object in the
// JSON. `interval`: the transfer's prediction interval, passed on to
// WriteDeviceSweep; nullptr: the header says none is given yet.
void WriteTransferSweep(std::ostream& out, const TransferRun& run, const DeviceSweepResult& sweep,
                        const FitResult& fit, OutputFormat format, bool layers,
                        const PredictionInterval* interval = nullptr);

// The sweep's exit code `code`, or 1 (fit unusable) when the calibration on A
// did not converge (said on stderr).
int TransferExitCode(const TransferRun& run, int code);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_TRANSFER_CLI_H_
