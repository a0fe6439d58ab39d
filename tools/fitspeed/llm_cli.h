// What `fitspeed sweep llm` and `fitspeed plan llm` share (docs/llm.md, "The
// CLI"): the options that say how a transformer is trained, one row each, so
// that an option added to LlmTraining is added to both commands here.
#ifndef FITSPEED_TOOLS_FITSPEED_LLM_CLI_H_
#define FITSPEED_TOOLS_FITSPEED_LLM_CLI_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "fitspeed/llm/split.h"
#include "fitspeed/scenario/llm.h"

namespace fitspeed::cli {

struct LlmTrainingCliOptions {
  int64_t lora_rank = 0;
  bool fp8_weights = false;
  bool lora_dropout = false;
  bool activation_fp8_store = false;
  bool cuda_graphs = false;
  bool no_flash = false;
  std::string dropout;                 // on|off; "": the model's
  double gradient_bytes = 0;           // 0: the framework's for the precision (MakeLlmTraining)
  std::string framework = "megatron";  // LlmFrameworks()
  // Mixture of experts and multi-token prediction (LlmTraining).
  double capacity_factor = 0;
  double moe_imbalance = 1;
  int64_t mtp_layers = -1;
  // Selective recomputation's modules (LlmSplit::recompute_modules); "": core_attn.
  std::string recompute_modules;
  // The pipeline's stages (LlmSplit::layout, PipelineLayoutOf).
  std::string pipeline_layout;
  int64_t first_stage_layers = 0, last_stage_layers = 0;
  bool embedding_as_layer = false, loss_as_layer = false;
};

// --framework, --lora-rank, --fp8-weights, --lora-dropout, --activation-fp8-store,
// --no-flash, --dropout, --capacity-factor, --moe-imbalance, --mtp-layers,
// the stage options (--pipeline-layout, --first-stage-layers,
// --last-stage-layers, --embedding-as-layer, --loss-as-layer), unless
// `gradient_bytes` is false (plan's --gradient-bytes is also the law plan's)
// --gradient-bytes, and unless `framework` is false --framework.
void AddLlmTrainingOptions(CLI::App& command, LlmTrainingCliOptions& options,
                           bool gradient_bytes = true, bool framework = true);

// --framework's help: what it sets and each LLM framework's name and title
// (`sweep` shares the option with its device mode's CNN frameworks, and so
// adds it itself: `framework` false above).
const std::string& LlmFrameworkHelp();

// The training of `seq_len` tokens per sequence in `precision` (mixed, bf16,
// fp16, fp8, int8, fp4) with these options.
LlmTraining ToLlmTraining(const LlmTrainingCliOptions& options, int64_t seq_len,
                          const std::string& precision);

// --dropout on|off over the model's own; not given: nullopt.
std::optional<bool> DropoutOf(const LlmTrainingCliOptions& options);

// The cluster of `sweep llm` and `plan llm`: --device, --devices,
// --devices-per-node and --links as the request takes them.
LlmClusterRequest ToLlmCluster(const std::string& device, int devices, int devices_per_node,
                               const std::string& links);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_LLM_CLI_H_
