// `fitspeed plan llm MODEL --device D --devices N --global-batch B --seq-len S`:
// every split of a cluster for a transformer, ranked (fitspeed/scenario/llm.h,
// LlmPlanRequest; docs/llm.md, "The CLI"). `plan MODEL --device D ...`, the
// spelling of earlier versions, fills the same values (plan_command.cc).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/scenario/llm.h"
#include "plan_llm.h"

namespace fitspeed::cli {

namespace {

// "2.5": a finite price >= 0 per device-hour; UsageError otherwise.
double ParsePricePerDeviceHour(const std::string& text) {
  size_t used = 0;
  double p = NAN;
  try {
    p = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(p) || p < 0) {
    throw UsageError(fmt::format(
        "--price {}: a transformer plan takes one price per device-hour, a finite number >= 0",
        text));
  }
  return p;
}

}  // namespace

void AddLlmPlanOnlyOptions(CLI::App& command, LlmPlanValues& v, bool gradient_bytes) {
  command.add_option("--global-batch", v.global_batch, "Sequences per optimizer step (required)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command.add_option("--seq-len", v.seq_len, "Tokens per sequence (required)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  command
      .add_option("--tokens", v.tokens,
                  "Tokens of the whole run: adds its days (and with --price its cost) to every "
                  "split, days = tokens / (tokens/s) / 86400, with the interval [low, high]")
      ->check(PositiveFinite());
  command.add_option(
      "--fix", v.fix,
      "Sizes fixed instead of searched, comma-separated key=value: tp, pp, vp, cp, "
      "ep, etp, dp, mb (micro-batch), recompute (none, selective, full), sp (sequence "
      "parallel 0/1), zero (0-3), shard (hybrid sharding: ZeRO's state sharded over groups of "
      "this many data-parallel ranks, replicated across them); e.g. tp=8,pp=4,zero=1");
  command.add_option("--top", v.top, "Splits listed, fitting and not fitting each")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  command
      .add_option("--precision", v.precision,
                  "mixed, bf16 or fp16 (16-bit matrix units), fp8 (matrix products in FP8, the "
                  "rest in BF16), fp8-block (DeepSeek-style 1x128/128x128 blocks), mxfp8 or "
                  "nvfp4 (block-scaled, Blackwell), int8 or fp4, on a device that has them")
      ->capture_default_str()
      ->check(CLI::IsMember(
          {"mixed", "bf16", "fp16", "fp8", "fp8-block", "mxfp8", "int8", "fp4", "nvfp4"}));
  AddLlmTrainingOptions(command, v.training, gradient_bytes);
  command.add_flag("--overlap-moe-comm", v.overlap_moe_comm,
                   "MoE: the expert all-to-alls overlapped with another micro-batch's compute "
                   "(Megatron-Core's --overlap-moe-expert-parallel-comm, DeepSeek's DualPipe)");
  command.add_flag("--tp-comm-overlap", v.tp_comm_overlap,
                   "Transformer Engine's userbuffers overlap of the tensor-parallel collectives "
                   "in every split with sequence parallelism, where the framework has it "
                   "(Megatron's --tp-comm-overlap)");
  command.add_flag("--no-overlap-grad-reduce", v.no_overlap_grad_reduce,
                   "The gradient reduction runs after the last micro-batch, exposed (default: "
                   "overlapped with the backward pass)");
}

int RunLlmPlanValues(const LlmPlanValues& v) {
  if (v.global_batch < 1) throw UsageError("a transformer plan needs --global-batch B");
  LlmPlanRequest r;
  r.model = v.model;
  r.dropout = DropoutOf(v.training);
  r.cluster = ToLlmCluster(v.device, v.devices, v.devices_per_node, v.links);
  r.options.global_batch = v.global_batch;
  r.options.training = ToLlmTraining(v.training, v.seq_len, v.precision);
  r.options.overlap_grad_reduce = !v.no_overlap_grad_reduce;
  r.options.overlap_moe_comm = v.overlap_moe_comm;
  r.options.tp_comm_overlap = v.tp_comm_overlap;
  r.options.top = v.top;
  r.options.layout = v.training.pipeline_layout;
  r.options.first_stage_layers = v.training.first_stage_layers;
  r.options.last_stage_layers = v.training.last_stage_layers;
  r.options.embedding_as_layer = v.training.embedding_as_layer;
  r.options.loss_as_layer = v.training.loss_as_layer;
  ApplyLlmPlanFix(v.fix, r.options);
  if (!v.training.recompute_modules.empty()) {
    r.options.recompute_modules = ParseRecomputeModules(v.training.recompute_modules);
    if (!r.options.recompute) r.options.recompute = Recompute::kSelective;
    if (*r.options.recompute != Recompute::kSelective)
      throw UsageError(
          "--recompute-modules is selective recomputation's: --fix recompute="
          "selective or leave it out");
  }
  if (!v.price.empty()) r.price_per_device_hour = ParsePricePerDeviceHour(v.price);
  if (!std::isnan(v.tokens)) r.tokens = v.tokens;
  r.interval_level = v.interval_level;
  r.Validate();
  ProgressLine progress(v.progress);
  r.options.progress = progress.Callback("plan " + r.model);
  const LlmPlanAnswer answer = r.Run();
  progress.Clear();
  return PrintAnswer(answer, v.output);
}

void SetupPlanLlmCommand(CLI::App& plan, int& exit_code) {
  auto v = std::make_shared<LlmPlanValues>();
  CLI::App* command = plan.add_subcommand(
      "llm",
      "Plan a transformer on a cluster: every split (tp, pp, vp, cp, ep, etp, dp, the stages' "
      "layers, micro-batch, "
      "recompute, sequence parallel, ZeRO) of --devices N catalogued devices modeled, the "
      "fastest that fit in memory ranked, with memory per GPU, MFU, the interval and, with "
      "--tokens, the run's days (and cost with --price)");
  command->fallthrough(false);
  command
      ->add_option("model", v->model,
                   "The transformer: a built-in name (`fitspeed models --llm`), "
                   "transformer:key=value,... or a Hugging Face config.json")
      ->required();
  command
      ->add_option("--device", v->device,
                   "A catalogued device (see `fitspeed devices`) or a device JSON file")
      ->required();
  command->add_option("--devices", v->devices, "Devices in the cluster")
      ->required()
      ->check(CLI::Range(1, 65536));
  command
      ->add_option("--devices-per-node", v->devices_per_node,
                   "Devices per scale-up domain (0: the device's scale_up_domain, else 8)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65536));
  command->add_option("--links", v->links,
                      "A links file (schema fitspeed.links/1) applied to the device first "
                      "(\"devices\": inside a scale-up domain, \"network\": between domains)");
  command->add_option("--price", v->price, "Price per device-hour (with --tokens)");
  command
      ->add_option("--interval-level", v->interval_level,
                   "Level of the interval of LlmInterval (docs/llm.md)")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 0.99));
  AddLlmPlanOnlyOptions(*command, *v, /*gradient_bytes=*/true);
  AddOutputOption(*command, v->output, HtmlReport::kYes);
  AddProgressOption(*command, v->progress);
  command->callback([v, &exit_code] { exit_code = RunLlmPlanValues(*v); });
}

}  // namespace fitspeed::cli
