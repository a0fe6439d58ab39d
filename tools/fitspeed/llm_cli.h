// What `fitspeed sweep` and `fitspeed plan` share on their transformer paths
// (a split modeled, splits planned; docs/llm.md, "The CLI"): which MODEL is a
// transformer, the cluster from --device/--devices/--links, the training from
// the precision, LoRA and memory options.
#ifndef FITSPEED_TOOLS_FITSPEED_LLM_CLI_H_
#define FITSPEED_TOOLS_FITSPEED_LLM_CLI_H_

#include <cstdint>
#include <string>

#include "fitspeed/llm/split.h"

namespace fitspeed::cli {

struct LlmCliOptions {
  std::string device;        // --device NAME|FILE
  int devices = 1;           // --devices
  int devices_per_node = 0;  // --devices-per-node; 0: the device's scale-up domain
  std::string links;         // --links FILE applied before the cluster is made
  int64_t seq_len = 0;       // --seq-len, required
  std::string precision = "mixed";
  int64_t lora_rank = 0;
  bool flash_attention = true;  // --no-flash: false
  double gradient_bytes = 2;    // --gradient-bytes 2|4
  bool fp8_weights = false;     // --fp8-weights
  bool lora_dropout = false;    // --lora-dropout
  bool activation_fp8_store = false;  // --activation-fp8-store
};

// --dropout on|off over the model's own (TransformerConfig::dropout); "" keeps it.
void ApplyDropoutLlmCli(TransformerConfig& model, const std::string& dropout);

// The --dropout option's help, shared by sweep and plan.
constexpr const char* kLoraDropoutHelpLlmCli =
    "Transformer with --lora-rank: dropout on each adapter's input (PEFT's lora_dropout, NeMo's "
    "adapter_dropout > 0): a dropout pass forward and backward, the dropped input and mask held";

constexpr const char* kActivationFp8StoreHelpLlmCli =
    "Transformer with a gated feed-forward: the SwiGLU's input kept for the backward pass in FP8 "
    "(Megatron's activation_func_fp8_input_store, NeMo's FP8_ACTIVATION): 1 byte an element "
    "instead of 2, and a cast forward and backward";

constexpr const char* kDropoutHelpLlmCli =
    "Transformer: dropout in the layers, on or off (masks held and dropout kernels timed); "
    "default: as the model's configuration gives it (config.json's dropout probabilities; "
    "GPT-2/BERT 0.1: on, Llama family: off)";

// MODEL is a transformer and not a zoo network: a short form
// ("transformer:..."), a built-in transformer the zoo lacks, a folder, or a
// JSON file with a "model_type" (a Hugging Face config.json).
bool IsTransformerSpecLlmCli(const std::string& model);

// LoadTransformer, with a UsageError naming the zoo when MODEL is a zoo-only network.
TransformerConfig LoadTransformerLlmCli(const std::string& model, const std::string& why);

// --device with --links applied (each link's source on stderr), then MakeCluster.
LlmCluster MakeClusterLlmCli(const LlmCliOptions& o);

// The training of --seq-len, --precision, --lora-rank, --no-flash, --gradient-bytes,
// --fp8-weights, --lora-dropout, --activation-fp8-store.
LlmTraining MakeTrainingLlmCli(const LlmCliOptions& o);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_LLM_CLI_H_
