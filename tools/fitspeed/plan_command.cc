// `fitspeed plan`: the (device, count, batch) configurations that meet a
// deadline and/or a budget, fastest or cheapest first, Pareto set marked.
// With --device and a transformer MODEL: every split of the cluster for the
// model, ranked (fitspeed/llm/planner.h; docs/llm.md, "The CLI").
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
#include "llm_cli.h"
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
  std::string device;
  int64_t global_batch = 0;
  int64_t seq_len = 0;
  double tokens = NAN;
  std::string fix;
  int top = 10;
  std::string precision = "mixed";
  int64_t lora_rank = 0;
  bool fp8_weights = false;  // --fp8-weights
  bool activation_fp8_store = false;  // --activation-fp8-store
  std::string dropout;       // --dropout on|off; "": the model's
  bool lora_dropout = false;  // --lora-dropout
  bool no_flash = false;
  bool no_overlap_grad_reduce = false;
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
constexpr const char* kLlmOnlyPlan[] = {"--global-batch",
                                        "--seq-len",
                                        "--tokens",
                                        "--fix",
                                        "--top",
                                        "--precision",
                                        "--lora-rank",
                                        "--no-flash",
                                        "--no-overlap-grad-reduce",
                                        "--fp8-weights",
                                        "--dropout",
                                        "--lora-dropout",
                                        "--activation-fp8-store"};

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
  const std::string& name = o.input.inputs.front();
  if (!IsTransformerSpecLlmCli(name)) {
    LoadTransformerLlmCli(name, "plan --device");  // the zoo's message, or LoadTransformer's
  }
  TransformerConfig model = LoadTransformer(name);
  ApplyDropoutLlmCli(model, o.dropout);
  if (o.scaling.devices.size() != 1) {
    throw UsageError("plan --device D needs --devices N: one device count (the cluster)");
  }
  if (o.global_batch < 1)
    throw UsageError("plan --device D needs --global-batch B (sequences per step)");
  std::optional<double> price;
  if (!o.law.prices.empty()) {
    size_t used = 0;
    double p = NAN;
    try {
      p = std::stod(o.law.prices.front(), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (o.law.prices.size() != 1 || used != o.law.prices.front().size() || !std::isfinite(p) ||
        p < 0) {
      throw UsageError(fmt::format(
          "plan --device D takes one --price: the price per device-hour, finite and >= 0, got '{}'",
          o.law.prices.front()));
    }
    price = p;
  }
  if (price && std::isnan(o.tokens)) {
    throw UsageError("--price prices a run: give its --tokens as well");
  }
  if (!std::isnan(o.tokens) && !(o.tokens > 0)) throw UsageError("--tokens must be > 0");
  LlmCliOptions c;
  c.device = o.device;
  c.devices = o.scaling.devices.front();
  c.devices_per_node = o.scaling.devices_per_node;
  c.links = o.scaling.links;
  c.seq_len = o.seq_len;
  c.precision = o.precision;
  c.lora_rank = o.lora_rank;
  c.fp8_weights = o.fp8_weights;
  c.activation_fp8_store = o.activation_fp8_store;
  c.lora_dropout = o.lora_dropout;
  c.flash_attention = !o.no_flash;
  if (!std::isnan(o.scaling.gradient_bytes)) c.gradient_bytes = o.scaling.gradient_bytes;
  const LlmCluster cluster = MakeClusterLlmCli(c);
  LlmPlanOptions options;
  options.global_batch = o.global_batch;
  options.training = MakeTrainingLlmCli(c);
  options.overlap_grad_reduce = !o.no_overlap_grad_reduce;
  options.top = o.top;
  ApplyLlmPlanFix(o.fix, options);
  const LlmCalibration calibration = LlmCalibrationFor(cluster.device);
  ProgressLine progress(o.progress);
  options.progress = progress.Callback("plan " + model.name);
  const LlmPlan plan = PlanLlm(model, cluster, options, calibration);
  progress.Clear();
  // --confidence when given; else the 80% interval the other device predictions carry.
  const double level = command.count("--confidence") > 0 ? o.fit.confidence : 0.8;
  const PredictionInterval interval = LlmInterval(cluster.device, level);
  std::optional<double> tokens;
  if (!std::isnan(o.tokens)) tokens = o.tokens;
  WriteLlmPlan(std::cout, model, cluster, options, plan, interval, calibration, tokens, price,
               ParseOutputFormat(o.output));
  return 0;
}

int RunPlan(const PlanCommandOptions& o, const CLI::App& command) {
  if (!o.device.empty()) return RunLlmPlan(o, command);
  for (const char* name : kLlmOnlyPlan) {
    if (command.count(name) > 0) {
      throw UsageError(fmt::format(
          "{} plans a transformer's splits: give --device D and a transformer MODEL", name));
    }
  }
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
  command->add_option("--device", options->device,
                      "Plan a transformer: MODEL (the one input: a built-in transformer, "
                      "transformer:..., or a config.json) on --devices N of this catalogued "
                      "device (see `fitspeed devices`) or device JSON file; every split (tp, pp, "
                      "vp, cp, ep, dp, micro-batch, recompute, sequence parallel, ZeRO) is "
                      "modeled and the fastest that fit in memory are ranked. With it, --devices "
                      "is one count, --price one price per device-hour, --links and "
                      "--devices-per-node shape the cluster, --gradient-bytes is 2 or 4 bytes "
                      "per gradient element (default 2), and --confidence sets the interval's "
                      "level (default 0.8 here)");
  command
      ->add_option("--global-batch", options->global_batch,
                   "With --device: sequences per optimizer step")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command->add_option("--seq-len", options->seq_len, "With --device: tokens per sequence")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  command
      ->add_option("--tokens", options->tokens,
                   "With --device: tokens of the whole run; adds its days (and with --price "
                   "its cost) to every split, days = tokens / (tokens/s) / 86400, with the "
                   "interval [low, high]")
      ->check(PositiveFinite());
  command->add_option("--fix", options->fix,
                      "With --device: sizes fixed instead of searched, comma-separated key=value: "
                      "tp, pp, vp, cp, ep, dp, mb (micro-batch), recompute (none, selective, "
                      "full), sp (sequence parallel 0/1), zero (0-3); e.g. tp=8,pp=4,zero=1");
  command
      ->add_option("--top", options->top,
                   "With --device: splits listed, fitting and not fitting each")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  command
      ->add_option("--precision", options->precision,
                   "With --device: mixed, bf16 or fp16 (16-bit matrix units), fp8 (matrix "
                   "products in FP8, the rest in BF16), int8 or fp4, on a device that has them")
      ->capture_default_str()
      ->check(CLI::IsMember({"mixed", "bf16", "fp16", "fp8", "int8", "fp4"}));
  command
      ->add_option("--lora-rank", options->lora_rank,
                   "With --device: LoRA adapters of this rank on a frozen base; 0: full "
                   "training")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  command->add_flag("--fp8-weights", options->fp8_weights,
                    "With --device --precision fp8: the weights held in FP8 alone (Transformer "
                    "Engine's FP8 parameters, NeMo's fp8_params), 1 byte each and no 16-bit "
                    "copy: memory only");
  command->add_flag("--lora-dropout", options->lora_dropout, kLoraDropoutHelpLlmCli);
  command->add_flag("--activation-fp8-store", options->activation_fp8_store,
                    kActivationFp8StoreHelpLlmCli);
  command->add_option("--dropout", options->dropout, kDropoutHelpLlmCli)
      ->check(CLI::IsMember({"on", "off"}));
  command->add_flag("--no-flash", options->no_flash,
                    "With --device: attention without flash attention (score matrices in memory; "
                    "no context parallelism)");
  command->add_flag("--no-overlap-grad-reduce", options->no_overlap_grad_reduce,
                    "With --device: the gradient reduction runs after the last micro-batch, "
                    "exposed (default: overlapped with the backward pass)");
  command->callback([options, command, &exit_code] { exit_code = RunPlan(*options, *command); });
}

}  // namespace fitspeed::cli
