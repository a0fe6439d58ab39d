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
  bool no_flash = false;
  std::string dropout;  // on|off; "": the model's
  double gradient_bytes = 2;
};

// --lora-rank, --fp8-weights, --lora-dropout, --activation-fp8-store,
// --no-flash, --dropout and, unless `gradient_bytes` is false (plan's
// --gradient-bytes is also the law plan's), --gradient-bytes.
void AddLlmTrainingOptions(CLI::App& command, LlmTrainingCliOptions& options,
                           bool gradient_bytes = true);

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
