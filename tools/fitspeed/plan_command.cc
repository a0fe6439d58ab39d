// `fitspeed plan`: the (device, count, batch) configurations that meet a
// deadline and/or a budget, fastest or cheapest first, Pareto set marked.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/project/plan.h"
#include "fitspeed/project/report.h"
#include "project/units.h"
#include "project_options.h"

namespace fitspeed::cli {

namespace {

struct PlanCommandOptions {
  InputOptions input;
  FitCliOptions fit;
  LawSourceOptions law;
  ScalingCliOptions scaling;
  std::string output = "table";
  double epochs = NAN;
  double e_min = NAN;
  double b_noise = NAN;
  std::string deadline;
  double budget = NAN;
  std::string sort = "fastest";
  bool no_optimal_batch = false;
};

int RunPlan(const PlanCommandOptions& o) {
  std::vector<Sample> samples;
  const std::vector<Configuration> configs = LoadConfigurations(o.input, o.fit, o.law, samples);
  const Workload workload = MakeWorkload(o.law, samples);

  PlanRequest request;
  request.samples_per_epoch = workload.samples_per_epoch;
  request.steps_rule = workload.steps_rule;
  request.startup_s = workload.startup_s;
  request.first_epoch_extra_s = workload.first_epoch_extra_s;
  if (!std::isnan(o.epochs)) request.epochs = o.epochs;
  if (std::isnan(o.e_min) != std::isnan(o.b_noise)) {
    throw UsageError("--e-min and --b-noise go together (E(B) = E_min*(1 + B/B_noise))");
  }
  if (!std::isnan(o.e_min)) request.epochs_vs_batch = EpochsVsBatch{o.e_min, o.b_noise};
  if (!o.deadline.empty()) request.deadline_s = ParseSeconds(o.deadline, "--deadline");
  if (!std::isnan(o.budget)) request.budget = o.budget;
  request.prices = ParsePrices(o.law.prices);
  request.add_optimal_batch = !o.no_optimal_batch;
  // A law fitted to a modeled sweep carries the model's errors: their interval
  // at the fit options' confidence level (--confidence).
  request.interval_level = o.fit.confidence;

  std::vector<PlanCandidate> candidates;
  std::vector<std::string> notes;
  bool all_usable = true;
  for (const Configuration& c : configs) {
    all_usable = all_usable && c.usable;
    candidates.push_back(CandidateFromLaw(c.Name(), c.devices, c.law, c.batches));
  }
  if (!o.scaling.devices.empty()) {
    bool any = false;
    for (const Configuration& c : configs) {
      if (c.devices != 1) continue;
      any = true;
      const DataParallelModel model = MakeDataParallelModel(c, o.scaling, configs, notes);
      for (int n : o.scaling.devices) {
        if (n == 1) continue;  // the configuration itself
        // Without --batch, each measured batch per device, on n devices.
        std::vector<double> batches = c.batches;
        if (o.law.batches.empty()) {
          for (double& b : batches) b *= n;
        }
        candidates.push_back(CandidateFromScaling(c.Name(), n, model, batches));
      }
    }
    if (!any) throw UsageError("--devices scales single-device configurations; none was given");
  }
  PlanResult plan =
      Plan(candidates, request, o.sort == "cheapest" ? PlanOrder::kCheapest : PlanOrder::kFastest);
  plan.assumptions.insert(plan.assumptions.end(), notes.begin(), notes.end());
  WritePlan(std::cout, plan, ParseOutputFormat(o.output));
  return all_usable ? 0 : static_cast<int>(ExitCode::kFitUnusable);
}

}  // namespace

void SetupPlanCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "plan",
      "Plan a training job: for every configuration (device, count, batch) the time and cost of "
      "the run, which meet --deadline and --budget, fastest (or cheapest) first, with the Pareto "
      "set (nothing both faster and cheaper) marked. Epochs are fixed (--epochs) or follow the "
      "batch, E(B) = E_min(1 + B/B_noise) (McCandlish et al. 2018), whose best batch "
      "B* = sqrt(B_noise n v0 t) is added per configuration. The law comes from logs (fitted "
      "first), a fit JSON (--fit) or numbers (--v0, --t); --devices adds data-parallel "
      "configurations of the single-device ones.");
  AddInputOptions(*command, options->input, /*inputs_required=*/false);
  AddFitOptions(*command, options->fit);
  AddLawSourceOptions(*command, options->law);
  AddScalingOptions(*command, options->scaling);
  AddOutputOption(*command, options->output);
  command->add_option("--epochs", options->epochs, "Epochs of the run, at every batch")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--e-min", options->e_min,
                   "Epochs to the target at a very small batch, E_min (with --b-noise)")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--b-noise", options->b_noise,
                   "Gradient noise scale B_noise, samples (with --e-min)")
      ->check(CLI::PositiveNumber);
  command->add_option("--deadline", options->deadline,
                      "Longest acceptable run, e.g. 12h, 90m, 1:30:00");
  command
      ->add_option("--budget", options->budget,
                   "Largest acceptable cost, in the currency of --price")
      ->check(CLI::PositiveNumber);
  command->add_option("--sort", options->sort, "Order: fastest or cheapest first")
      ->capture_default_str()
      ->check(CLI::IsMember({"fastest", "cheapest"}));
  command->add_flag("--no-optimal-batch", options->no_optimal_batch,
                    "With --e-min/--b-noise: do not add B* to the batches");
  command->callback([options, &exit_code] { exit_code = RunPlan(*options); });
}

}  // namespace fitspeed::cli
