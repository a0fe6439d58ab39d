// The training options of the transformer commands (llm_cli.h).
#include "llm_cli.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/llm/framework.h"

namespace fitspeed::cli {

const std::string& LlmFrameworkHelp() {
  static const std::string help = [] {
    std::string text =
        "The framework the step runs under: what it fuses, how it shards and reduces the "
        "gradients, which splits it runs (docs/llm.md, \"Frameworks\"; default megatron):";
    for (const LlmFramework& f : LlmFrameworks())
      text += fmt::format("\n  {:<19}{}", f.name, f.title);
    return text;
  }();
  return help;
}

void AddLlmTrainingOptions(CLI::App& command, LlmTrainingCliOptions& o, bool gradient_bytes,
                           bool framework) {
  if (framework) command.add_option("--framework", o.framework, LlmFrameworkHelp());
  command
      .add_option("--lora-rank", o.lora_rank,
                  "LoRA adapters of this rank on every attention and feed-forward matrix of a "
                  "frozen base; 0: full training (default)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  command.add_flag("--fp8-weights", o.fp8_weights,
                   "With --precision fp8: the weights held in FP8 alone (Transformer Engine's "
                   "FP8 parameters, NeMo's fp8_params), 1 byte each and no 16-bit copy: memory "
                   "only");
  command.add_flag("--lora-dropout", o.lora_dropout,
                   "With --lora-rank: dropout on each adapter's input (PEFT's lora_dropout, "
                   "NeMo's adapter_dropout > 0): a dropout pass forward and backward, the dropped "
                   "input and mask held");
  command.add_flag("--activation-fp8-store", o.activation_fp8_store,
                   "With a gated feed-forward: the SwiGLU's input kept for the backward pass in "
                   "FP8 (Megatron's activation_func_fp8_input_store, NeMo's FP8_ACTIVATION): 1 "
                   "byte an element instead of 2, and a cast forward and backward");
  command.add_flag("--cuda-graphs", o.cuda_graphs,
                   "Each transformer layer's forward and backward pass run as one CUDA graph "
                   "(NeMo's enable_cuda_graph, MLPerf's LAYER_CUDA_GRAPH=1): the host launches "
                   "one graph a pass, not each kernel (default: every kernel dispatched, "
                   "dispatch_s each)");
  command
      .add_option("--dropout", o.dropout,
                  "Dropout in the layers, on or off (masks held and dropout kernels timed); "
                  "default: as the model's configuration gives it (config.json's dropout "
                  "probabilities; GPT-2/BERT 0.1: on, Llama family: off)")
      ->check(CLI::IsMember({"on", "off"}));
  command.add_flag("--no-flash", o.no_flash,
                   "Attention without flash attention (score matrices in memory, Megatron's "
                   "kernels before FlashAttention; no context parallelism)");
  command
      .add_option("--capacity-factor", o.capacity_factor,
                  "MoE: each expert sized for this x its balanced share of the tokens, those "
                  "above dropped (Switch Transformer's capacity factor); 0: dropless, every "
                  "routed token computed (Megatron-Core's default)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  command
      .add_option("--moe-imbalance", o.moe_imbalance,
                  "MoE: the busiest expert rank's routed tokens over the mean (1: balanced, "
                  "the load-balancing loss's aim, assumed by default; give a measured max/mean "
                  "ratio); capped by --capacity-factor")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  command
      .add_option("--mtp-layers", o.mtp_layers,
                  "Multi-token prediction modules trained (Megatron's --mtp-num-layers); "
                  "default: as the model's config gives them (DeepSeek-V3: 1)")
      ->check(CLI::Range(int64_t{0}, int64_t{64}));
  command.add_option(
      "--recompute-modules", o.recompute_modules,
      "What selective recomputation reruns, comma-separated as Megatron-Core's "
      "--recompute-modules: core_attn (the default), moe_act, layernorm, mla_up_proj, mlp, "
      "moe, shared_experts; implies --recompute selective");
  command.add_option(
      "--pipeline-layout", o.pipeline_layout,
      "The layers of each virtual pipeline stage in Megatron's layout grammar "
      "(--pipeline-model-parallel-layout): pp x vp stages separated by '|', each of 't' "
      "(a layer), 'E' (embedding), 'L' (loss), 'm' (an MTP module), 'X*n' and '(...)*n' "
      "repeating; e.g. \"Et*3|(tt|)*29m|L\"");
  command
      .add_option("--first-stage-layers", o.first_stage_layers,
                  "Transformer layers of the first pipeline stage, the rest spread evenly "
                  "(Megatron's --decoder-first-pipeline-num-layers)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  command
      .add_option("--last-stage-layers", o.last_stage_layers,
                  "Transformer layers of the last pipeline stage "
                  "(--decoder-last-pipeline-num-layers)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  command.add_flag("--embedding-as-layer", o.embedding_as_layer,
                   "Count the embedding as one layer when dividing the layers over the stages "
                   "(Megatron's --account-for-embedding-in-pipeline-split)");
  command.add_flag("--loss-as-layer", o.loss_as_layer,
                   "Count the output and loss as one layer when dividing "
                   "(--account-for-loss-in-pipeline-split)");
  if (gradient_bytes) {
    command.add_option(
        "--gradient-bytes", o.gradient_bytes,
        "Bytes per gradient element reduced and accumulated: 4 (Megatron's FP32 "
        "main_grad; 2 with --precision fp16, as Megatron keeps them; torchtitan's and "
        "MaxText's FP32 reduction) or 2 (16-bit: DeepSpeed's and FSDP's default, NeMo's "
        "grad_sync_dtype bf16); default: the framework's");
  }
}

LlmTraining ToLlmTraining(const LlmTrainingCliOptions& o, int64_t seq_len,
                          const std::string& precision) {
  LlmTraining t =
      MakeLlmTraining(seq_len, precision, o.lora_rank, !o.no_flash, o.gradient_bytes, o.framework);
  t.fp8_weights = o.fp8_weights;
  t.lora_dropout = o.lora_dropout;
  t.activation_fp8_store = o.activation_fp8_store;
  t.cuda_graphs = o.cuda_graphs;
  t.capacity_factor = o.capacity_factor;
  t.moe_imbalance = o.moe_imbalance;
  t.mtp_layers = o.mtp_layers;
  return t;
}

std::optional<bool> DropoutOf(const LlmTrainingCliOptions& o) {
  if (o.dropout.empty()) return std::nullopt;
  if (o.dropout != "on" && o.dropout != "off") {
    throw UsageError(fmt::format("--dropout {}: expected on or off", o.dropout));
  }
  return o.dropout == "on";
}

LlmClusterRequest ToLlmCluster(const std::string& device, int devices, int devices_per_node,
                               const std::string& links) {
  LlmClusterRequest cluster;
  cluster.device = device;
  cluster.devices = devices;
  cluster.devices_per_node = devices_per_node;
  cluster.links = links;
  return cluster;
}

}  // namespace fitspeed::cli
