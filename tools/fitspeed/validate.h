// `fitspeed validate`: one subcommand per question, each in its own file
// (validate_<question>.cc) with its options, its run function and its setup:
//   validate cases       the step model against the published measurements
//   validate kernels     the device efficiency curves fitted to kernel timings
//   validate layers      a BERT-large encoder layer per layer against NeuSight
//   validate placements  the data-parallel step against Pollux's placements
//   validate frameworks  the framework profiles, leave one GPU out
//   validate intervals   the prediction intervals' coverage
//   validate llm         the LLM split model against vTrain's A100 iterations
//   validate gpu-llm     the catalog's H200 against first-hand H200 kernels and steps
//   validate mlperf      MLPerf ResNet-50 and BERT of every submitter, by publisher
// validate_command.cc adds them and keeps the older spelling (`validate`
// alone, `validate --kernels`, ...), which runs the same functions.
#ifndef FITSPEED_TOOLS_FITSPEED_VALIDATE_H_
#define FITSPEED_TOOLS_FITSPEED_VALIDATE_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "fitspeed/device/device.h"

#ifndef FITSPEED_SOURCE_DATA_DIR
#define FITSPEED_SOURCE_DATA_DIR "data"
#endif

namespace fitspeed::cli {

// The default directories of the measurement tables and the kernel tables.
inline const std::string kMeasuredDir = std::string(FITSPEED_SOURCE_DATA_DIR) + "/measured";
inline const std::string kKernelDir = std::string(FITSPEED_SOURCE_DATA_DIR) + "/kernels";
inline const std::string kGpuLlmDir = std::string(FITSPEED_SOURCE_DATA_DIR) + "/llm-gpu";

struct ValidateCasesOptions {
  std::string data_dir = kMeasuredDir;
  std::vector<std::string> device_files;
  bool host_check = false;
  int host_threads = 0;
  bool require_fit = false;
  bool no_cross_validation = false;
  bool no_cross_device = false;
  bool no_transfer = false;
  double interval_level = 0.8;
  std::string intervals_out;  // write the interval table (data/intervals.json) here
  std::string output = "table";
  std::string progress;  // --progress; empty: FITSPEED_PROGRESS, else auto
};
int RunValidateCases(const ValidateCasesOptions& options);
void SetupValidateCasesCommand(CLI::App& validate, int& exit_code);

struct ValidateKernelsOptions {
  std::string kernel_dir = kKernelDir;
  // This project's H200 tables (gemm.csv, memory_ops.csv) fitted with them; "": none.
  std::string first_hand_dir = kGpuLlmDir;
  std::string catalog_out;  // write the refitted catalog devices there
  bool shape_term = false;  // fit the GEMM shape term with the curves
  std::string output = "table";
};
int RunValidateKernels(const ValidateKernelsOptions& options);
void SetupValidateKernelsCommand(CLI::App& validate, int& exit_code);

struct ValidateLayersOptions {
  std::string data_dir = kMeasuredDir;
  std::vector<std::string> device_files;
  std::string output = "table";
};
int RunValidateLayers(const ValidateLayersOptions& options);
// `validate llm` (validate_llm.cc).
void SetupValidateLlmCommand(CLI::App& validate, int& exit_code);
void SetupValidateLayersCommand(CLI::App& validate, int& exit_code);

struct ValidateGpuLlmOptions {
  std::string data_dir = kGpuLlmDir;
  std::string device = "h200";  // the catalog device (or device file) that predicts the rows
  std::string output = "table";
};
int RunValidateGpuLlm(const ValidateGpuLlmOptions& options);
void SetupValidateGpuLlmCommand(CLI::App& validate, int& exit_code);

// `validate mlperf` (validate_mlperf.cc).
void SetupValidateMlperfCommand(CLI::App& validate, int& exit_code);

struct ValidatePlacementsOptions {
  std::string data_dir = kMeasuredDir;
  std::vector<std::string> device_files;
  std::string links;          // a links file: its network link between nodes
  int calibration_nodes = 2;  // the network link is calibrated on these rows
  std::string output = "table";
};
int RunValidatePlacements(const ValidatePlacementsOptions& options);
void SetupValidatePlacementsCommand(CLI::App& validate, int& exit_code);

struct ValidateFrameworksOptions {
  std::string data_dir = kMeasuredDir;
  std::vector<std::string> device_files;
  std::string frameworks_out;  // write the profiles (data/frameworks.json) here
  std::string output = "table";
  std::string progress;  // --progress; empty: FITSPEED_PROGRESS, else auto
};
int RunValidateFrameworks(const ValidateFrameworksOptions& options);
void SetupValidateFrameworksCommand(CLI::App& validate, int& exit_code);

struct ValidateIntervalsOptions {
  std::string data_dir = kMeasuredDir;
  std::vector<std::string> device_files;
  bool require_fit = false;
  double interval_level = 0.8;
  std::string intervals_out;  // write the interval table (data/intervals.json) here
  std::string output = "table";
  std::string progress;  // --progress; empty: FITSPEED_PROGRESS, else auto
};
int RunValidateIntervals(const ValidateIntervalsOptions& options);
void SetupValidateIntervalsCommand(CLI::App& validate, int& exit_code);

// ---- Shared by the subcommands (validate_command.cc) -------------------------

// InputError naming `data_dir` unless it is a directory.
void RequireDataDirectory(const std::string& data_dir);
// The devices of --device-file, read in order.
std::vector<Device> ReadDeviceFiles(const std::vector<std::string>& files);
// The options most subcommands share: --data DIR (the tables' directory,
// `what`) and --device-file FILE ...
void AddDataOption(CLI::App& command, std::string& data_dir, const std::string& what);
void AddDeviceFileOption(CLI::App& command, std::vector<std::string>& device_files);
// --interval-level and --intervals-out (`validate cases` and `validate intervals`).
void AddIntervalOptions(CLI::App& command, double& level, std::string& intervals_out);
// A subcommand of validate takes its options after its name: the older
// spelling's options before it (`validate --kernels layers`) are a UsageError.
void RejectValidateOptions(const CLI::App& subcommand);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_VALIDATE_H_
