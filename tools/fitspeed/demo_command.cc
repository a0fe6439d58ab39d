// `fitspeed demo`: the main job on embedded defaults. Fits the law to a real
// log compiled into the program (ResNet-18 / CIFAR-10 on 1-4 T4 GPUs, from the
// Pollux artifact; data/examples/README.md) and shows how t grows with the
// device count.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "command.h"
#include "embedded_data.h"
#include "fitspeed/core/error.h"

namespace fitspeed::cli {

namespace {

struct DemoOptions {
  std::string output = "table";
};

int RunDemo(const DemoOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  const std::vector<Sample> samples = ParseSamples(kDemoLogText, kDemoLogName);
  if (format == OutputFormat::kTable) {
    std::cout << fmt::format(
        "fitspeed demo: fitting v(b) = b/(b/v0 + t) to {} ({} samples, embedded).\n"
        "ResNet-18 / CIFAR-10 on 1-4 NVIDIA T4 GPUs in one node (Pollux, OSDI'21 artifact).\n"
        "batch = global batch (local_bsz x GPUs); one fit per GPU count.\n\n",
        kDemoLogName, samples.size());
  }
  const FitResult result = Fit(samples);
  WriteFit(std::cout, result, format);
  return result.AllUsable() ? 0 : static_cast<int>(ExitCode::kFitUnusable);
}

}  // namespace

void SetupDemoCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* command =
      app.add_subcommand("demo", "Run the main job on embedded example data (no input needed)");
  AddOutputOption(*command, options->output);
  command->callback([options, &exit_code] { exit_code = RunDemo(*options); });
}

}  // namespace fitspeed::cli
