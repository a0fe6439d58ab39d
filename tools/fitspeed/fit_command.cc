// `fitspeed fit INPUT...`: fit the law to measured data and report v0, t and
// their uncertainty.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/scenario/project.h"

namespace fitspeed::cli {

namespace {

struct FitCommandOptions {
  InputOptions input;
  FitCliOptions fit;
  std::string output = "table";
  std::string plot_path;
};

void WritePlot(const std::string& path, const FitResult& result) {
  std::ofstream file(path);
  if (!file) throw InputError(fmt::format("cannot write the plot to '{}'", path));
  WriteFitSvg(file, result);
  if (!file.flush()) throw InputError(fmt::format("cannot write the plot to '{}'", path));
}

int RunFit(const FitCommandOptions& options) {
  FitRequest request;
  request.options = ToFitOptions(options.fit);
  request.samples = LoadSamples(options.input);
  const FitAnswer answer = request.Run();
  const int code = PrintAnswer(answer, options.output);
  if (!options.plot_path.empty()) WritePlot(options.plot_path, answer.fit);
  return code;
}

}  // namespace

void SetupFitCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<FitCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "fit",
      "Fit v(b) = b/(b/v0 + t) to measured data: v0 (samples/s) and t (s/step) with standard "
      "errors and confidence intervals, one fit per (devices, label, precision) group");
  AddInputOptions(*command, options->input);
  AddFitOptions(*command, options->fit);
  AddOutputOption(*command, options->output, HtmlReport::kYes);
  command->add_option("--plot", options->plot_path,
                      "Also write an SVG plot of the points and fitted curves to this file");
  command->footer(
      "Examples:\n"
      "  fitspeed fit speed.csv                      # columns batch + throughput or step_time\n"
      "  fitspeed fit epochs.csv@samples=50000 --where device=tpu\n"
      "  fitspeed fit result_0.txt --output json     # an MLPerf :::MLLOG log\n"
      "  fitspeed fit train.log@batch=256,samples=50000 --input-format keras --plot fit.svg");
  command->callback([options, &exit_code] { exit_code = RunFit(*options); });
}

}  // namespace fitspeed::cli
