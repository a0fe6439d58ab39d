// Transfer from a user's own run in the CLI (fitspeed/evidence/transfer.h,
// fitspeed/evidence/transfer_run.h):
// `fitspeed sweep MODEL --device B --from LOG --from-device A`
// (transfer_sweep.cc); the report is WriteTransferSweep (fitspeed/evidence/output.h).
#ifndef FITSPEED_TOOLS_FITSPEED_TRANSFER_CLI_H_
#define FITSPEED_TOOLS_FITSPEED_TRANSFER_CLI_H_

#include "fitspeed/evidence/output.h"
#include "fitspeed/evidence/transfer_run.h"

namespace fitspeed::cli {

// The sweep's exit code `code`, or 1 (fit unusable) when the calibration on A
// did not converge (said on stderr).
int TransferExitCode(const TransferRun& run, int code);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_TRANSFER_CLI_H_
