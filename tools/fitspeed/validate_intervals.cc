// `fitspeed validate intervals`: the prediction intervals built from the
// model's out-of-sample errors on the published cases (the catalog's, the
// transferred predictions' and the framework profiles'), their
// leave-one-source-out coverage and the interval each class gets from all the
// data (docs/validation.md, "Prediction intervals"); --intervals-out writes
// the table (data/intervals.json).
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

int RunValidateIntervals(const ValidateIntervalsOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  // The table holds the catalog predictions' errors, which the cross checks
  // do not change: they are left out.
  CaseCheckOptions check;
  check.validate.require_fit = options.require_fit;
  check.validate.devices = ReadDeviceFiles(options.device_files);
  check.interval_level = options.interval_level;
  ProgressLine progress(options.progress);
  check.progress = progress.Callback("validate intervals");
  const CaseValidation validation = CheckPublishedCases(options.data_dir, check);
  progress.Clear();
  if (!options.intervals_out.empty()) {
    std::ofstream out(options.intervals_out, std::ios::binary);
    out << IntervalTableToJson(validation.intervals);
    if (!out) throw InputError(fmt::format("cannot write {}", options.intervals_out));
  }
  WriteIntervalCoverage(std::cout, validation.intervals, options.interval_level, format);
  return 0;
}

void SetupValidateIntervalsCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateIntervalsOptions>();
  CLI::App* command = validate.add_subcommand(
      "intervals",
      "The prediction intervals of `sweep --device` from the model's out-of-sample errors on the "
      "published cases: their leave-one-source-out coverage per class, and the interval each "
      "class gets from all the data (docs/validation.md, \"Prediction intervals\")");
  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  AddDeviceFileOption(*command, options->device_files);
  command->add_flag("--require-fit", options->require_fit,
                    "Leave out cases whose batch the memory model says does not fit");
  AddIntervalOptions(*command, options->interval_level, options->intervals_out);
  AddOutputOption(*command, options->output);
  AddProgressOption(*command, options->progress);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateIntervals(*options);
  });
}

}  // namespace fitspeed::cli
