// `fitspeed validate placements`: the data-parallel step (all-reduce
// overlapped as PyTorch DDP does it, and serial) against Pollux's 2-4 GPU
// placements on one T4 node, predictions for 2 and 4 such nodes, and Pollux's
// measured 2-4 node rows (docs/validation.md, "Pollux placements").
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/evidence/checks.h"
#include "fitspeed/evidence/output.h"
#include "validate.h"

namespace fitspeed::cli {

int RunValidatePlacements(const ValidatePlacementsOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  WritePlacementValidation(std::cout,
                           CheckPlacements(options.data_dir, ReadDeviceFiles(options.device_files),
                                           options.links, options.calibration_nodes),
                           format);
  return 0;
}

void SetupValidatePlacementsCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidatePlacementsOptions>();
  CLI::App* command = validate.add_subcommand(
      "placements",
      "Check the data-parallel step (all-reduce overlapped as PyTorch DDP does it, and serial) "
      "against Pollux's 2-4 GPU placements on one T4 node, and predict 2 and 4 such nodes "
      "(docs/validation.md, \"Pollux placements\")");
  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  AddDeviceFileOption(*command, options->device_files);
  command->add_option("--links", options->links,
                      "A links file whose \"network\" link (and \"devices\" link, if any) "
                      "replace the assumed 50 Gbit/s between g4dn.12xlarge nodes");
  command
      ->add_option("--calibration-nodes", options->calibration_nodes,
                   "Calibrate the network link from Pollux's runs on this many nodes of 4 T4 "
                   "against one node (2, 3 or 4; the others are out of sample)")
      ->capture_default_str()
      ->check(CLI::Range(2, 4));
  AddOutputOption(*command, options->output);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidatePlacements(*options);
  });
}

}  // namespace fitspeed::cli
