// `fitspeed read INPUT...`: print the samples the readers extract.
#include <iostream>
#include <memory>

#include "command.h"

namespace fitspeed::cli {

namespace {

struct ReadOptions {
  InputOptions input;
  std::string output = "table";
};

int RunRead(const ReadOptions& options) {
  const std::vector<Sample> samples = LoadSamples(options.input);
  WriteSamples(std::cout, samples, ParseOutputFormat(options.output));
  return 0;
}

}  // namespace

void SetupReadCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ReadOptions>();
  CLI::App* command = app.add_subcommand(
      "read",
      "Print the samples the readers extract from logs (to check what a log yields before "
      "fitting it)");
  AddInputOptions(*command, options->input);
  AddOutputOption(*command, options->output);
  command->footer(
      "Examples:\n"
      "  fitspeed read result_0.txt                  # which epochs an MLPerf log yields\n"
      "  cat train.log | fitspeed read --input-format keras -- -@batch=128,samples=50000");
  command->callback([options, &exit_code] { exit_code = RunRead(*options); });
}

}  // namespace fitspeed::cli
