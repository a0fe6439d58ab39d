// `fitspeed validate`: one subcommand per question (validate.h), and the
// older spelling, `validate [--kernels | --frameworks | --layers |
// --placements] [options]`, which runs the same subcommands with the same
// output.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "validate.h"

namespace fitspeed::cli {

namespace {

// The older spelling's options: those of every subcommand, with the question
// chosen by a flag (none: the cases).
struct ValidateCliOptions {
  std::string data_dir = kMeasuredDir;
  std::vector<std::string> device_files;
  ValidateCasesOptions cases;            // without data_dir, device_files and output
  bool kernels = false;                  // --kernels: the kernel fits instead
  ValidateKernelsOptions kernel;         // without output
  bool frameworks = false;               // --frameworks: the framework profiles instead
  std::string frameworks_out;            // --frameworks-out FILE: write the profiles there
  bool layers = false;                   // --layers: the per-layer check instead
  bool placements = false;               // --placements: the Pollux placements check instead
  std::string placements_links;          // --placements-links FILE: its network link
  int placements_calibration_nodes = 2;  // --placements-calibration-nodes N
  std::string output = "table";
  std::string progress;  // --progress (cases and frameworks)
};

int RunValidate(const ValidateCliOptions& options) {
  ParseOutputFormat(options.output);  // a bad --output is named first, as it always was
  if (options.kernel.shape_term && !options.kernels) {
    throw UsageError("--shape-term needs --kernels");
  }
  if (options.kernels) {
    ValidateKernelsOptions kernels = options.kernel;
    kernels.output = options.output;
    return RunValidateKernels(kernels);
  }
  RequireDataDirectory(options.data_dir);
  if (options.frameworks || !options.frameworks_out.empty()) {
    return RunValidateFrameworks({options.data_dir, options.device_files, options.frameworks_out,
                                  options.output, options.progress});
  }
  if (options.layers) {
    return RunValidateLayers({options.data_dir, options.device_files, options.output});
  }
  if (options.placements) {
    return RunValidatePlacements({options.data_dir, options.device_files, options.placements_links,
                                  options.placements_calibration_nodes, options.output});
  }
  ValidateCasesOptions cases = options.cases;
  cases.data_dir = options.data_dir;
  cases.device_files = options.device_files;
  cases.output = options.output;
  cases.progress = options.progress;
  return RunValidateCases(cases);
}

}  // namespace

void RequireDataDirectory(const std::string& data_dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(data_dir, error)) {
    throw InputError(fmt::format(
        "measurement directory '{}' not found (give the tables' directory with --data DIR)",
        data_dir));
  }
}

std::vector<Device> ReadDeviceFiles(const std::vector<std::string>& files) {
  std::vector<Device> devices;
  for (const std::string& file : files) devices.push_back(ReadDeviceJsonFile(file));
  return devices;
}

void AddDataOption(CLI::App& command, std::string& data_dir, const std::string& what) {
  command.add_option("--data", data_dir, "Directory of " + what)->capture_default_str();
}

void AddDeviceFileOption(CLI::App& command, std::vector<std::string>& device_files) {
  command.add_option("--device-file", device_files,
                     "A device JSON file (e.g. calibrated) used instead of the catalog device "
                     "of the same name; repeatable");
}

void AddIntervalOptions(CLI::App& command, double& level, std::string& intervals_out) {
  command
      .add_option("--interval-level", level,
                  "Level of the prediction intervals whose leave-one-source-out coverage is "
                  "reported, in (0, 1)")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 0.99));
  command.add_option("--intervals-out", intervals_out,
                     "Write the out-of-sample errors per class (schema fitspeed.intervals/1) "
                     "to this file: data/intervals.json is the build's copy");
}

void RejectValidateOptions(const CLI::App& subcommand) {
  for (const CLI::Option* option : subcommand.get_parent()->get_options()) {
    if (option->count() > 0) {
      throw UsageError(fmt::format(
          "validate {}: {} belongs to the older spelling (`validate [options]`); give the "
          "subcommand's own options after its name",
          subcommand.get_name(), option->get_name()));
    }
  }
}

void SetupValidateCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ValidateCliOptions>();
  CLI::App* command = app.add_subcommand(
      "validate",
      "The device model against published measurements, one subcommand per question "
      "(`fitspeed validate cases --help`, ...). The options below are the older spelling: "
      "`validate` alone is `validate cases`, `validate --kernels` is `validate kernels`, and so "
      "on for --frameworks, --layers and --placements");
  SetupValidateCasesCommand(*command, exit_code);
  SetupValidateKernelsCommand(*command, exit_code);
  SetupValidateLayersCommand(*command, exit_code);
  SetupValidatePlacementsCommand(*command, exit_code);
  SetupValidateFrameworksCommand(*command, exit_code);
  SetupValidateIntervalsCommand(*command, exit_code);
  SetupValidateLlmCommand(*command, exit_code);
  SetupValidateGpuLlmCommand(*command, exit_code);
  SetupValidateMlperfCommand(*command, exit_code);
  // One question per call; a subcommand's options are its own (the older
  // spelling's, before it, are refused by RejectValidateOptions).
  command->require_subcommand(0, 1);
  for (CLI::App* subcommand : command->get_subcommands([](CLI::App*) { return true; })) {
    subcommand->fallthrough(false);
  }

  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  AddDeviceFileOption(*command, options->device_files);
  ValidateCasesOptions& cases = options->cases;
  command->add_flag("--host-check", cases.host_check,
                    "Also measure a host sweep of cnn-cifar-small at batches 8, 16, 32 and "
                    "compare it with the modeled host (seconds)");
  command
      ->add_option("--host-threads", cases.host_threads,
                   "With --host-check: threads of the measured sweep and of the host probe it "
                   "is compared with; 0: every CPU")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command->add_flag("--require-fit", cases.require_fit,
                    "Do not predict cases whose batch the memory model says does not fit "
                    "(by default they are predicted and marked oom*: they were measured)");
  command->add_flag("--no-cross-validation", cases.no_cross_validation,
                    "Skip the cross-validation (per device, calibrate on the other networks' "
                    "or frameworks' cases and predict the held-out ones)");
  command->add_flag("--no-cross-device", cases.no_cross_device,
                    "Skip the cross-device check (predict a network's cases on each device from "
                    "its cases on the other devices)");
  command->add_flag("--no-transfer", cases.no_transfer,
                    "Skip the transfer check (predict each device's cases from the same "
                    "network's cases on one other device, calibrated on those only)");
  command->add_flag("--frameworks", options->frameworks,
                    "Instead, fit a profile per framework (`validate frameworks`)");
  command->add_option("--frameworks-out", options->frameworks_out,
                      "Write the framework profiles (schema fitspeed.frameworks/1; "
                      "data/frameworks.json is the copy compiled into fitspeed) to this file; "
                      "implies --frameworks");
  command->add_flag("--kernels", options->kernels,
                    "Instead, fit the device efficiency curves to the kernel timings of "
                    "--kernel-data (`validate kernels`)");
  command
      ->add_option("--kernel-data", options->kernel.kernel_dir,
                   "With --kernels: the directory of the kernel tables")
      ->capture_default_str();
  command
      ->add_option("--first-hand-data", options->kernel.first_hand_dir,
                   "With --kernels: this project's H200 tables fitted with them "
                   "(`validate kernels --first-hand-data`)")
      ->capture_default_str();
  command->add_option("--catalog-out", options->kernel.catalog_out,
                      "With --kernels: write the catalog devices the fits serve, with the fitted "
                      "or carried curves, into this directory (data/devices regenerates the "
                      "catalog)");
  command->add_flag("--shape-term", options->kernel.shape_term,
                    "With --kernels: fit each matrix curve with a GEMM shape term "
                    "(`validate kernels --shape-term`)");
  command->add_flag("--placements", options->placements,
                    "Instead, check the data-parallel step against Pollux's placements "
                    "(`validate placements`)");
  command->add_option("--placements-links", options->placements_links,
                      "With --placements: a links file whose \"network\" link (and \"devices\" "
                      "link, if any) replace the assumed 50 Gbit/s between g4dn.12xlarge nodes");
  command
      ->add_option("--placements-calibration-nodes", options->placements_calibration_nodes,
                   "With --placements: calibrate the network link from Pollux's runs on this "
                   "many nodes of 4 T4 against one node (2, 3 or 4; the others are out of sample)")
      ->check(CLI::Range(2, 4));
  command->add_flag("--layers", options->layers,
                    "Instead, check the step model per layer (`validate layers`)");
  AddIntervalOptions(*command, cases.interval_level, cases.intervals_out);
  AddOutputOption(*command, options->output);
  AddProgressOption(*command, options->progress);
  command->callback([command, options, &exit_code] {
    // A subcommand given ran in its own callback, before this one.
    if (!command->get_subcommands().empty()) return;
    exit_code = RunValidate(*options);
  });
}

}  // namespace fitspeed::cli
