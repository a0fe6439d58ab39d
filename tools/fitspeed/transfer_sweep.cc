// `fitspeed sweep MODEL --device B --from RUN --from-device A`: a measurement
// of MODEL on device A (a training log any reader of `fitspeed fit` takes, with
// PATH@key=value attributes; a cases CSV; a host sweep CSV) calibrates the step
// model on A (CalibrateFromRun, fitspeed/evidence/transfer_run.h), and B is
// modeled with what carries over; its report is WriteTransferSweep
// (fitspeed/evidence/output.h); here its exit code (docs/devices.md,
// "Transfer from your own run").
#include <fmt/format.h>

#include <iostream>

#include "exit_code.h"
#include "fitspeed/core/error.h"
#include "transfer_cli.h"

namespace fitspeed::cli {

int TransferExitCode(const TransferRun& run, int code) {
  if (run.calibration.converged) return code;
  std::cerr << fmt::format("fitspeed: the calibration on {} did not converge ({})\n",
                           run.calibration.source_device, run.calibration.solver_message);
  return static_cast<int>(ExitCode::kFitUnusable);
}

}  // namespace fitspeed::cli
