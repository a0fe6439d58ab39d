// Transfer from a user's own run in the CLI (fitspeed/evidence/transfer.h,
// fitspeed/evidence/transfer_run.h):
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
#include "fitspeed/evidence/transfer_run.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/output.h"

namespace fitspeed::cli {

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
