// `fitspeed plan`: the (device, count, batch) configurations that meet a
// deadline and/or a budget, fastest or cheapest first, Pareto set marked.
// `plan llm MODEL --device D ...` (plan_llm_command.cc), or `plan MODEL --device
// D ...` as earlier versions spell it: every split of the cluster for a
// transformer, ranked (fitspeed/scenario/llm.h; docs/llm.md, "The CLI").
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/project/plan.h"
#include "fitspeed/project/report.h"
#include "fitspeed/scenario/llm.h"
#include "plan_llm.h"
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
  // The transformer planner (--device and a transformer MODEL).
  LlmPlanValues llm;
  std::string progress;  // --progress; empty: FITSPEED_PROGRESS, else auto
};

// The options of the law-based plan, which the transformer planner refuses, and its own.
constexpr const char* kLawOnlyPlan[] = {"--fit",
                                        "--v0",
                                        "--t",
                                        "--label",
                                        "--law-devices",
                                        "--samples",
                                        "--drop-remainder",
                                        "--batch",
                                        "--startup",
                                        "--first-epoch-extra",
                                        "--allreduce",
                                        "--intra-bw",
                                        "--intra-latency",
                                        "--inter-bw",
                                        "--inter-latency",
                                        "--overlap",
                                        "--params",
                                        "--model",
                                        "--bytes-per-param",
                                        "--comm-from-fit",
                                        "--epochs",
                                        "--e-min",
                                        "--b-noise",
                                        "--deadline",
                                        "--budget",
                                        "--sort",
                                        "--no-optimal-batch",
                                        "--input-format",
                                        "--skip-epochs",
                                        "--tag",
                                        "--tag-unit",
                                        "--where",
                                        "--law",
                                        "--objective",
                                        "--loss",
                                        "--loss-scale",
                                        "--no-loo"};
// `plan MODEL --device D`: the splits of the cluster, ranked.
int RunLlmPlan(const PlanCommandOptions& o, const CLI::App& command) {
  for (const char* name : kLawOnlyPlan) {
    if (command.count(name) > 0) {
      throw UsageError(fmt::format(
          "{} is for plans from a fitted law; `plan MODEL --device D` plans a transformer's "
          "splits (docs/llm.md, \"The CLI\")",
          name));
    }
  }
  if (o.input.inputs.size() != 1) {
    throw UsageError(
        "plan --device D plans one transformer: give one MODEL (a built-in name, "
        "transformer:..., or a config.json)");
  }
  if (o.scaling.devices.size() != 1) {
    throw UsageError("plan --device D needs --devices N: one device count (the cluster)");
  }
  if (o.law.prices.size() > 1) {
    throw UsageError("plan --device D takes one --price: the price per device-hour");
  }
  LlmPlanValues v = o.llm;
  v.model = o.input.inputs.front();
  v.devices = o.scaling.devices.front();
  v.devices_per_node = o.scaling.devices_per_node;
  v.links = o.scaling.links;
  if (!std::isnan(o.scaling.gradient_bytes)) v.training.gradient_bytes = o.scaling.gradient_bytes;
  if (!o.law.prices.empty()) v.price = o.law.prices.front();
  // --confidence when given; else the 80% interval the other device predictions carry.
  v.interval_level = command.count("--confidence") > 0 ? o.fit.confidence : 0.8;
  v.output = o.output;
  v.progress = o.progress;
  return RunLlmPlanValues(v);
}

int RunPlan(const PlanCommandOptions& o, const CLI::App& command,
            const std::vector<const CLI::Option*>& llm_only) {
  if (!o.llm.device.empty()) return RunLlmPlan(o, command);
  for (const CLI::Option* option : llm_only) {
    if (option->count() > 0) {
      throw UsageError(
          fmt::format("{} plans a transformer's splits: give --device D and a transformer MODEL",
                      option->get_name()));
    }
  }
  LawPlanRequest r;
  r.source = ToLawSource(o.input, o.fit, o.law);
  if (!std::isnan(o.law.samples_per_epoch)) r.samples_per_epoch = o.law.samples_per_epoch;
  PlanRequest& request = r.plan;
  request.steps_rule = o.law.drop_remainder ? StepsRule::kDropRemainder : StepsRule::kKeepPartial;
  if (!o.law.startup.empty()) request.startup_s = ParseSeconds(o.law.startup, "--startup");
  if (!o.law.first_epoch_extra.empty()) {
    request.first_epoch_extra_s = ParseSeconds(o.law.first_epoch_extra, "--first-epoch-extra");
  }
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
  r.scaling = ToScalingSpec(o.scaling);
  r.order = o.sort == "cheapest" ? PlanOrder::kCheapest : PlanOrder::kFastest;
  return PrintAnswer(r.Run(), o.output);
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
  AddOutputOption(*command, options->output, HtmlReport::kYes);
  AddProgressOption(*command, options->progress);
  command->add_option("--epochs", options->epochs, "Epochs of the run, at every batch")
      ->check(PositiveFinite());
  command
      ->add_option("--e-min", options->e_min,
                   "Epochs to the target at a very small batch, E_min (with --b-noise)")
      ->check(PositiveFinite());
  command
      ->add_option("--b-noise", options->b_noise,
                   "Gradient noise scale B_noise, samples (with --e-min)")
      ->check(PositiveFinite());
  command->add_option("--deadline", options->deadline,
                      "Longest acceptable run, e.g. 12h, 90m, 1:30:00");
  command
      ->add_option("--budget", options->budget,
                   "Largest acceptable cost, in the currency of --price")
      ->check(PositiveFinite());
  command->add_option("--sort", options->sort, "Order: fastest or cheapest first")
      ->capture_default_str()
      ->check(CLI::IsMember({"fastest", "cheapest"}));
  command->add_flag("--no-optimal-batch", options->no_optimal_batch,
                    "With --e-min/--b-noise: do not add B* to the batches");
  // The transformer planner (docs/llm.md, "The CLI").
  command->add_option("--device", options->llm.device,
                      "Plan a transformer: MODEL (the one input: a built-in transformer, "
                      "transformer:..., or a config.json) on --devices N of this catalogued "
                      "device (see `fitspeed devices`) or device JSON file; every split (tp, pp, "
                      "vp, cp, ep, dp, micro-batch, recompute, sequence parallel, ZeRO) is "
                      "modeled and the fastest that fit in memory are ranked. With it, --devices "
                      "is one count, --price one price per device-hour, --links and "
                      "--devices-per-node shape the cluster, --gradient-bytes is 2 or 4 bytes "
                      "per gradient element (default 2), and --confidence sets the interval's "
                      "level (default 0.8 here)");
  // Every option from here on is the transformer planner's alone.
  const size_t llm_first = command->get_options().size();
  AddLlmPlanOnlyOptions(*command, options->llm, /*gradient_bytes=*/false);
  const std::vector<CLI::Option*> all = command->get_options();
  const std::vector<const CLI::Option*> llm_only(all.begin() + llm_first, all.end());
  SetupPlanLlmCommand(*command, exit_code);
  command->require_subcommand(0, 1);
  command->callback([options, command, llm_only, &exit_code] {
    if (!command->get_subcommands().empty()) return;  // `plan llm` ran
    exit_code = RunPlan(*options, *command, llm_only);
  });
}

}  // namespace fitspeed::cli
