// The CLI's subcommands. Each lives in its own file with an options struct, a
// Setup function that adds the subcommand and its options to the app, and a
// run function. The callback stores the command's exit code in `exit_code`;
// errors are thrown as fitspeed::Error and mapped to exit codes by main.cc
// (exit_code.h).
#ifndef FITSPEED_TOOLS_FITSPEED_COMMAND_H_
#define FITSPEED_TOOLS_FITSPEED_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/input.h"
#include "fitspeed/io/output.h"
#include "fitspeed/model/network.h"
#include "fitspeed/timing/sweep.h"
#include "exit_code.h"

namespace fitspeed::cli {

void SetupReadCommand(CLI::App& app, int& exit_code);
void SetupFitCommand(CLI::App& app, int& exit_code);
void SetupDemoCommand(CLI::App& app, int& exit_code);
void SetupProjectCommand(CLI::App& app, int& exit_code);
void SetupPlanCommand(CLI::App& app, int& exit_code);
void SetupModelsCommand(CLI::App& app, int& exit_code);
void SetupSweepCommand(CLI::App& app, int& exit_code);
void SetupDevicesCommand(CLI::App& app, int& exit_code);
void SetupCalibrateCommand(CLI::App& app, int& exit_code);
void SetupValidateCommand(CLI::App& app, int& exit_code);
void SetupLinkbenchCommand(CLI::App& app, int& exit_code);

// Options shared by every command that reads logs.
struct InputOptions {
  std::vector<std::string> inputs;  // PATH[@key=value,...], "-" for stdin
  std::string input_format = "auto";
  int skip_epochs = 1;             // samples of epochs <= this are dropped
  std::string tag;                 // TensorBoard scalar tag; empty: chosen by its name
  std::string tag_unit;            // what the tag's values count; empty: from its name
  std::vector<std::string> where;  // key=value filters on tags, label, devices, precision
};
void AddInputOptions(CLI::App& command, InputOptions& options, bool inputs_required = true);
// Reads every input, applies the filters; throws fitspeed::Error (DataError
// when the filters leave nothing).
std::vector<Sample> LoadSamples(const InputOptions& options);

// Options shared by every command that fits.
struct FitCliOptions {
  std::string law = "hyperbolic";
  std::string objective = "relative-time";
  std::string loss = "squared";
  double loss_scale = 0.05;
  double confidence = 0.95;
  bool no_loo = false;
};
void AddFitOptions(CLI::App& command, FitCliOptions& options);
FitOptions ToFitOptions(const FitCliOptions& options);

// --output table|csv|json
void AddOutputOption(CLI::App& command, std::string& output);

// A sweep's progress on stderr: one line redrawn in place, only when stderr
// is a terminal (so pipes and logs stay clean); skipped batches are always
// reported, on a line of their own. The line is erased when it is destroyed.
class SweepProgressLine {
 public:
  explicit SweepProgressLine(std::string model);
  ~SweepProgressLine();
  SweepProgressLine(const SweepProgressLine&) = delete;
  SweepProgressLine& operator=(const SweepProgressLine&) = delete;

  void operator()(const SweepProgress& progress);

 private:
  void Clear();
  std::string model_;
  bool tty_;
  bool shown_ = false;
};

// An SVG plot of the fitted points and curve at `path`; InputError when it
// cannot be written.
void WriteFitPlot(const std::string& path, const FitResult& fit, const std::string& title);
// Exit code of a sweep with `fitted` batches fitted; `all_fitted`: no batch was
// skipped. One batch alone is a measurement, not a fit: fine when it was the
// only one. Says why on stderr.
int SweepFitExitCode(size_t fitted, bool all_fitted, const FitResult& fit);

// `fitspeed sweep MODEL --data-parallel` (data_parallel_sweep.cc): the
// options the host sweep does not have.
struct DataParallelCliOptions {
  bool enabled = false;
  double bucket_mib = 25;        // PyTorch DDP's bucket_cap_mb
  double first_bucket_mib = 1;   // DDP's first bucket
  std::string links;             // links file: modeled communication next to the measured
  int model_ranks = 0;           // ranks the modeled table is for; 0: the run's
};
void AddDataParallelOptions(CLI::App& command, DataParallelCliOptions& options);
// Runs the sweep on MPI's ranks (rank 0 writes the report); returns the exit
// code. A rank that fails ends the job (MPI_Abort) with its exit code.
int RunDataParallelSweep(const Network& network, const SweepOptions& options,
                         const DataParallelCliOptions& dp, const FitOptions& fit_options,
                         OutputFormat format, bool layers, const std::string& plot_path);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_COMMAND_H_
