// The CLI's subcommands. Each lives in its own file with an options struct, a
// Setup function that adds the subcommand and its options to the app, and a
// run function. The callback stores the command's exit code in `exit_code`;
// errors are thrown as fitspeed::Error and mapped to exit codes by main.cc
// (exit_code.h).
#ifndef FITSPEED_TOOLS_FITSPEED_COMMAND_H_
#define FITSPEED_TOOLS_FITSPEED_COMMAND_H_

#include <CLI/CLI.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "exit_code.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/input.h"
#include "fitspeed/io/output.h"
#include "fitspeed/model/network.h"
#include "fitspeed/scenario/answer.h"
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

// Writes the answer's notes on stderr ("fitspeed: " before each), the answer
// on stdout in `output`'s format (table, csv, json or html) and, when it is not
// usable, its problem on stderr; returns the exit code (0, or 1 when not usable).
int PrintAnswer(const Answer& answer, const std::string& output);

// --output table|csv|json, and html where the command's answer has an HTML
// report (sweep, fit, project, plan: docs/reports.md).
enum class HtmlReport { kNo, kYes };
void AddOutputOption(CLI::App& command, std::string& output, HtmlReport html = HtmlReport::kNo);

// Checks of a number option, in place of CLI11's PositiveNumber,
// NonNegativeNumber and Range on doubles, which let "nan" through and state
// their bounds in full (309 digits for DBL_MAX): a finite number > 0, >= 0,
// or in [low, high]. The message names the option (CLI11 prefixes it), the
// value and the rule; the CLI exits with 64.
CLI::Validator PositiveFinite();
CLI::Validator NonNegativeFinite();
CLI::Validator FiniteRange(double low, double high);

// --progress auto|always|never: whether long work (host sweeps, the slower
// `validate` checks, the LLM planner) redraws a line of progress on stderr.
// Not given: FITSPEED_PROGRESS when set, else auto (only when stderr is a
// terminal, so pipes, logs and the golden tests see nothing).
void AddProgressOption(CLI::App& command, std::string& mode);

// One line of progress on stderr, redrawn in place ("\r", erase to the end of
// the line) at most ten times a second and erased by Clear() or when it is
// destroyed: call Clear() before writing results to stdout, which may be the
// same terminal. Shows nothing when `mode` (AddProgressOption's value)
// resolves to never. Throws UsageError for a bad mode or FITSPEED_PROGRESS.
class ProgressLine {
 public:
  explicit ProgressLine(const std::string& mode);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // Redraws the line with `text`; `now`: even within a tenth of a second of
  // the last redraw (a new stage).
  void Show(const std::string& text, bool now = false);
  void Clear();
  // A message on a line of its own, shown whatever the mode (the line is
  // erased first and redrawn by the next Show).
  void Message(const std::string& text);

  // A callback for an options struct's `progress`: "<title>: <stage> (<done>
  // of <total>): <what>". Refers to this line, which must outlive its calls.
  ProgressCallback Callback(std::string title);
  // The same for a host sweep (SweepOptions::progress): the batch, its place
  // in the sweep and, once measured, its time; skipped batches as messages.
  std::function<void(const SweepProgress&)> SweepCallback(std::string model);

 private:
  bool enabled_ = false;
  bool shown_ = false;
  int width_ = 0;  // the terminal's columns; 0: unknown (not a terminal)
  std::string stage_;
  std::chrono::steady_clock::time_point last_{};
};

// An SVG plot of the fitted points and curve at `path`; InputError when it
// cannot be written.
void WriteFitPlot(const std::string& path, const FitResult& fit, const std::string& title);

// `fitspeed sweep MODEL --data-parallel` (data_parallel_sweep.cc): the
// options the host sweep does not have.
struct DataParallelCliOptions {
  bool enabled = false;
  double bucket_mib = 25;       // PyTorch DDP's bucket_cap_mb
  double first_bucket_mib = 1;  // DDP's first bucket
  std::string links;            // links file: modeled communication next to the measured
  int model_ranks = 0;          // ranks the modeled table is for; 0: the run's
};
// Runs the sweep on MPI's ranks (rank 0 writes the report); returns the exit
// code. A rank that fails ends the job (MPI_Abort) with its exit code.
int RunDataParallelSweep(const Network& network, const SweepOptions& options,
                         const DataParallelCliOptions& dp, const FitOptions& fit_options,
                         OutputFormat format, bool layers, const std::string& plot_path,
                         const std::string& progress_mode);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_COMMAND_H_
