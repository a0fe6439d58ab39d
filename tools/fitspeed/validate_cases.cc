// `fitspeed validate cases`: the device step model against the published
// measurements of data/measured (docs/validation.md): predicted against
// measured throughput per case, % error, in- or out-of-sample, median and
// maximum absolute errors per device; the mixed/FP32 ratio check on the T4;
// the transfer check; the prediction intervals' coverage; with --host-check,
// the modeled host against a measured host sweep.
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

int RunValidateCases(const ValidateCasesOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  CaseCheckOptions check;
  check.validate.require_fit = options.require_fit;
  check.validate.cross_validate = !options.no_cross_validation;
  check.validate.cross_device = !options.no_cross_device;
  check.validate.devices = ReadDeviceFiles(options.device_files);
  check.transfer = !options.no_transfer;
  check.interval_level = options.interval_level;
  if (options.host_check) {
    std::cerr << "host self-check: measuring the host sweep (seconds)...\n";
    check.host = HostCheckOptions{};
    check.host->threads = options.host_threads;
  }
  ProgressLine progress(options.progress);
  check.progress = progress.Callback("validate cases");
  const CaseValidation validation = CheckPublishedCases(options.data_dir, check);
  progress.Clear();
  if (!options.intervals_out.empty()) {
    if (!validation.transfer) {
      throw UsageError(
          "--intervals-out needs the transfer check (drop --no-transfer): the "
          "table holds the transferred predictions' errors too");
    }
    std::ofstream out(options.intervals_out, std::ios::binary);
    out << IntervalTableToJson(validation.intervals);
    if (!out) throw InputError(fmt::format("cannot write {}", options.intervals_out));
  }
  WriteCaseValidation(std::cout, validation, format);
  return 0;
}

void SetupValidateCasesCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateCasesOptions>();
  CLI::App* command = validate.add_subcommand(
      "cases",
      "The device step model against published measurements (data/measured): predicted and "
      "measured throughput per case, % error, median and maximum error per device; the "
      "cross-validation, cross-device and transfer checks and the prediction intervals");
  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  AddDeviceFileOption(*command, options->device_files);
  command->add_flag("--host-check", options->host_check,
                    "Also measure a host sweep of cnn-cifar-small at batches 8, 16, 32 and "
                    "compare it with the modeled host (seconds)");
  command
      ->add_option("--host-threads", options->host_threads,
                   "With --host-check: threads of the measured sweep and of the host probe it "
                   "is compared with; 0: every CPU")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command->add_flag("--require-fit", options->require_fit,
                    "Do not predict cases whose batch the memory model says does not fit "
                    "(by default they are predicted and marked oom*: they were measured)");
  command->add_flag("--no-cross-validation", options->no_cross_validation,
                    "Skip the cross-validation (per device, calibrate on the other networks' "
                    "or frameworks' cases and predict the held-out ones)");
  command->add_flag("--no-cross-device", options->no_cross_device,
                    "Skip the cross-device check (predict a network's cases on each device from "
                    "its cases on the other devices)");
  command->add_flag("--no-transfer", options->no_transfer,
                    "Skip the transfer check (predict each device's cases from the same "
                    "network's cases on one other device, calibrated on those only)");
  AddIntervalOptions(*command, options->interval_level, options->intervals_out);
  AddOutputOption(*command, options->output);
  AddProgressOption(*command, options->progress);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateCases(*options);
  });
}

}  // namespace fitspeed::cli
