// `fitspeed validate frameworks`: a profile per framework fitted on the
// published GPU runs, and each GPU's runs predicted by the profile fitted on
// the framework's other GPUs (docs/validation.md, "Framework profiles");
// --frameworks-out writes the profiles (data/frameworks.json).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/evidence/checks.h"
#include "fitspeed/evidence/output.h"
#include "validate.h"

namespace fitspeed::cli {

int RunValidateFrameworks(const ValidateFrameworksOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  ProgressLine progress(options.progress);
  const FrameworkValidation validation =
      CheckFrameworkProfiles(options.data_dir, ReadDeviceFiles(options.device_files),
                             progress.Callback("validate frameworks"));
  progress.Clear();
  if (!options.frameworks_out.empty()) {
    std::ofstream file(options.frameworks_out);
    file << FrameworkProfilesToJson(validation.report.profiles);
    if (!file) {
      throw InputError(fmt::format("cannot write profiles file '{}'", options.frameworks_out));
    }
  }
  WriteFrameworkValidation(std::cout, validation, format);
  return 0;
}

void SetupValidateFrameworksCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateFrameworksOptions>();
  CLI::App* command = validate.add_subcommand(
      "frameworks",
      "Fit a profile per framework (its efficiency scales and host overhead over every GPU it "
      "ran on) and predict each GPU's runs from the profile fitted on the framework's other "
      "GPUs (docs/validation.md, \"Framework profiles\")");
  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  AddDeviceFileOption(*command, options->device_files);
  command->add_option("--frameworks-out", options->frameworks_out,
                      "Write the framework profiles (schema fitspeed.frameworks/1; "
                      "data/frameworks.json is the copy compiled into fitspeed) to this file");
  AddOutputOption(*command, options->output);
  AddProgressOption(*command, options->progress);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateFrameworks(*options);
  });
}

}  // namespace fitspeed::cli
