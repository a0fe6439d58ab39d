// `fitspeed demo`: the main job on embedded defaults. Measures a small zoo
// network's real training step on this CPU at batches 1..256 (the host sweep of
// fitspeed/timing/sweep.h), fits v(b) = b/(b/v0 + t) to it and projects what
// training that network on CIFAR-10 would take here. `--log` fits a real log
// compiled into the program instead (ResNet-18 / CIFAR-10 on 1-4 T4 GPUs, from
// the Pollux artifact; data/examples/README.md), which needs no measuring.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command.h"
#include "embedded_data.h"
#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"
#include "fitspeed/project/config.h"
#include "fitspeed/project/report.h"

namespace fitspeed::cli {

namespace {

struct DemoOptions {
  std::string output = "table";
  bool log = false;
  std::string progress;  // --progress; empty: FITSPEED_PROGRESS, else auto
};

// CIFAR-10: 50,000 training and 10,000 test images.
constexpr double kCifarTrainSamples = 50000;
constexpr double kCifarTestSamples = 10000;

int RunLogDemo(OutputFormat format) {
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

// The projection of the sweep's law: CIFAR-10 epochs at three measured
// batches, with a test pass after every epoch.
Projection ProjectSweep(const SweepResult& sweep, const FitResult& fit) {
  const std::vector<Configuration> configs = ConfigurationsFromFit(fit, sweep.Samples());
  FITSPEED_CHECK(configs.size() == 1, "a sweep is one configuration");
  Workload workload;
  workload.samples_per_epoch = kCifarTrainSamples;
  workload.validation.samples = kCifarTestSamples;
  std::vector<EpochModel> models;
  for (double batch : {16.0, 64.0, 256.0}) {
    models.push_back(EpochModelFromLaw(configs[0].law, batch, workload, sweep.model));
  }
  ProjectOptions options;
  options.epochs = {1, 10, 100, 200};
  Projection projection = MakeProjection(std::move(models), options);
  projection.assumptions.insert(
      projection.assumptions.begin(),
      fmt::format("law fitted to the sweep above ({} on this CPU, {}, {} threads); "
                  "CIFAR-10: {:.0f} training and {:.0f} test samples per epoch",
                  sweep.model, PrecisionName(sweep.precision, PrecisionContext::kHost),
                  sweep.context.threads, kCifarTrainSamples, kCifarTestSamples));
  return projection;
}

// The demo's threads: one per idle CPU (at least 1). With a thread on a CPU
// that another process keeps busy, every oneDNN primitive's barrier waits for
// that thread's time slice, and the step times measure the other process.
int DemoThreads(std::string& why) {
  const int cpus = AvailableCpus();
  const double idle = IdleCpus();
  if (idle < 0) {
    why = fmt::format("{} (every CPU; idle time unknown)", cpus);
    return cpus;
  }
  const int threads = std::clamp(static_cast<int>(idle + 0.5), 1, cpus);
  why = fmt::format("{} of {} CPUs ({:.1f} idle when the demo started{})", threads, cpus, idle,
                    threads < cpus ? "; the others were busy" : "");
  return threads;
}

int RunSweepDemo(OutputFormat format, const std::string& progress_mode) {
  SweepOptions options = DemoSweepOptions();
  std::string threads_why;
  options.threads = DemoThreads(threads_why);
  if (format == OutputFormat::kTable) {
    std::cout << fmt::format(
        "fitspeed demo: measuring the training step (forward, backward, SGD-momentum update) of\n"
        "{} on this CPU at {} batch sizes, then fitting v(b) = b/(b/v0 + t) and projecting\n"
        "CIFAR-10 training. Threads: {}.\n"
        "`fitspeed sweep MODEL` does this for any zoo network; `fitspeed demo --log` fits a real\n"
        "GPU log instead.\n\n",
        kDemoSweepModel, options.batches.size(), threads_why);
  }
  ProgressLine progress(progress_mode);
  options.progress = progress.SweepCallback(kDemoSweepModel);
  const SweepResult sweep = Sweep(ZooNetwork(kDemoSweepModel), options);
  progress.Clear();
  if (sweep.measurements.size() < 2) {
    throw DataError(fmt::format("the demo sweep measured {} batch size(s); fitting needs 2",
                                sweep.measurements.size()));
  }
  const FitResult fit = Fit(sweep.Samples());
  const bool usable = fit.AllUsable();
  if (format == OutputFormat::kJson) {
    std::ostringstream projection_json;
    if (usable) WriteProjection(projection_json, ProjectSweep(sweep, fit), OutputFormat::kJson);
    nlohmann::ordered_json out = {
        {"schema", "fitspeed.demo/1"},
        {"sweep", nlohmann::ordered_json::parse(SweepToJson(sweep, fit))},
        {"projection", usable ? nlohmann::ordered_json::parse(projection_json.str())
                              : nlohmann::ordered_json(nullptr)}};
    std::cout << out.dump(2) << "\n";
  } else {
    WriteSweep(std::cout, sweep, fit, format);
    if (usable) {
      if (format == OutputFormat::kTable) {
        std::cout << fmt::format(
            "\nWhat training {} on CIFAR-10 would take on this CPU (h:mm:ss, 95% interval):\n",
            sweep.model);
      }
      WriteProjection(std::cout, ProjectSweep(sweep, fit), format);
    }
  }
  if (!usable) {
    std::cerr << "fitspeed: the fit of the demo sweep is not usable (see its warnings); "
                 "a busy machine makes step times noisy\n";
    return static_cast<int>(ExitCode::kFitUnusable);
  }
  return 0;
}

}  // namespace

void SetupDemoCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* command = app.add_subcommand(
      "demo",
      "Run the main job with no input: measure a small network's training step on this CPU "
      "at batches 1..256 (10-30 s, one thread per idle CPU), fit the law and project CIFAR-10 "
      "epochs");
  command->add_flag("--log", options->log,
                    "Fit the embedded real log (ResNet-18 / CIFAR-10 on 1-4 T4 GPUs, Pollux) "
                    "instead of measuring this CPU");
  AddOutputOption(*command, options->output);
  AddProgressOption(*command, options->progress);
  command->callback([options, &exit_code] {
    const OutputFormat format = ParseOutputFormat(options->output);
    exit_code = options->log ? RunLogDemo(format) : RunSweepDemo(format, options->progress);
  });
}

}  // namespace fitspeed::cli
