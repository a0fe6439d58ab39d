// The CLI's subcommands. Each lives in its own file with an options struct, a
// Setup function that adds the subcommand and its options to the app, and a
// run function. The callback stores the command's exit code in `exit_code`;
// errors are thrown as fitspeed::Error and mapped to exit codes by main.cc.
#ifndef FITSPEED_TOOLS_FITSPEED_COMMAND_H_
#define FITSPEED_TOOLS_FITSPEED_COMMAND_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/input.h"
#include "fitspeed/io/output.h"
#include "fitspeed/timing/sweep.h"

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

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_COMMAND_H_
