// Large-model training as requests (fitspeed/scenario/answer.h): one split
// of a transformer modeled (LlmStepRequest, `fitspeed sweep llm`), or every
// split of a cluster ranked (LlmPlanRequest, `fitspeed plan llm`); docs/llm.md.
#ifndef FITSPEED_SCENARIO_LLM_H_
#define FITSPEED_SCENARIO_LLM_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"
#include "fitspeed/scenario/answer.h"

namespace fitspeed {

// The devices a transformer trains on.
struct LlmClusterRequest {
  // A catalog device (`fitspeed devices`) or a fitspeed.device/1 file. Required.
  std::string device;
  // Devices in all, 1..65536; 0: tp x pp x cp of the split (LlmStepRequest only).
  int devices = 0;
  // Devices per scale-up domain (NVLink node, TPU slice), 0..65536, dividing
  // `devices` when below it; 0: the device's scale_up_domain, else 8.
  int devices_per_node = 0;
  // A fitspeed.links/1 file applied to the device first ("devices": inside a
  // scale-up domain, "network": between domains); empty: the device's links.
  std::string links;

  // UsageError naming the field (`devices` 0 is refused unless allowed).
  void Validate(bool devices_may_be_zero) const;
  // The cluster of `devices` (> 0) devices; `notes` receives where each link
  // of the links file came from.
  LlmCluster Make(int devices, std::vector<std::string>& notes) const;
};

// `model` names a transformer and not a zoo network: a short form
// ("transformer:..."), a built-in transformer the zoo lacks, a folder with a
// config.json, or a JSON file with a "model_type" (a Hugging Face config.json).
bool IsTransformerModel(const std::string& model);

// The transformer of `model` (a built-in name, transformer:key=value,..., a
// config.json file or a folder with one) with `dropout` over its own when set.
// UsageError naming the zoo for a zoo-only network ("resnet50").
TransformerConfig LoadLlmModel(const std::string& model, std::optional<bool> dropout);

struct LlmStepAnswer;

// One training step of one split: its time by part, memory per GPU, interval.
struct LlmStepRequest {
  // The transformer (LoadLlmModel). Required.
  std::string model;
  // Dropout in the layers on or off; not set: the model's (config.json's probabilities).
  std::optional<bool> dropout;
  LlmClusterRequest cluster;
  // Sequence length (required, >= 1), format, LoRA, attention kernels, memory
  // allowances and the framework (fitspeed/llm/split.h, framework.h; its
  // gradient_bytes 0: the framework's for bf16).
  LlmTraining training;
  // The split (fitspeed/llm/split.h). Its dp is not read: it is what the
  // devices leave, devices / (tp x pp x cp), which must divide exactly; its
  // global_batch 0 (the default here) means micro_batch x dp, times pp when
  // interleaved (vp > 1): the fewest micro-batches the schedule runs; its
  // zero -1 (the default here) means the framework's default
  // (LlmFramework::zero_default: Megatron's 0, FSDP's FULL_SHARD 3).
  LlmSplit split = DefaultSplit();
  // Uneven pipeline stages as Megatron's options give them, turned into
  // split.layout by PipelineLayoutOf (fitspeed/llm/split.h): the first and
  // last stage's transformer layers (0: even), the embedding and the loss
  // counted as layers. Exclusive with a layout of the split's own.
  int64_t first_stage_layers = 0, last_stage_layers = 0;
  bool embedding_as_layer = false, loss_as_layer = false;
  // Level of the prediction interval (LlmInterval), in (0, 1).
  double interval_level = 0.8;

  // UsageError naming the field, its value and the rule it broke (what needs
  // the model and the device is checked by Run(), by ValidateSplit).
  void Validate() const;
  LlmStepAnswer Run() const;

  static LlmSplit DefaultSplit() {
    LlmSplit split;
    split.global_batch = 0;
    split.zero = -1;
    return split;
  }
};

struct LlmStepAnswer : Answer {
  TransformerConfig model;
  LlmCluster cluster;
  LlmTraining training;
  LlmCalibration calibration;
  LlmStep step;
  PredictionInterval interval;

  // Table: a summary and the parts; CSV: one row; JSON: fitspeed.llm-step/1.
  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
  void WriteHtml(std::ostream& out) const override;
};

struct LlmPlanAnswer;

// Every split of a cluster for a model and global batch, fastest fitting first.
struct LlmPlanRequest {
  // The transformer (LoadLlmModel). Required.
  std::string model;
  // Dropout on or off; not set: the model's.
  std::optional<bool> dropout;
  // The cluster; its `devices` is required (>= 1).
  LlmClusterRequest cluster;
  // Global batch (required, >= 1), training, the sizes fixed instead of
  // searched (ApplyLlmPlanFix fills them from `--fix` text), top and the
  // progress callback (fitspeed/llm/planner.h).
  LlmPlanOptions options;
  // Tokens of the whole run (> 0): adds its days to every split; not set: none.
  std::optional<double> tokens;
  // Price per device-hour (finite, >= 0; needs tokens): adds the run's cost.
  std::optional<double> price_per_device_hour;
  // Level of the prediction interval (LlmInterval), in (0, 1).
  double interval_level = 0.8;

  void Validate() const;
  LlmPlanAnswer Run() const;
};

struct LlmPlanAnswer : Answer {
  TransformerConfig model;
  LlmCluster cluster;
  LlmPlanOptions options;
  LlmCalibration calibration;
  LlmPlan plan;
  PredictionInterval interval;
  std::optional<double> tokens;
  std::optional<double> price_per_device_hour;

  // Table: the ranked splits; JSON: fitspeed.llm-plan/1.
  void Write(std::ostream& out, OutputFormat format) const override;
  std::string BriefReport() const override;
  void WriteHtml(std::ostream& out) const override;
};

}  // namespace fitspeed

#endif  // FITSPEED_SCENARIO_LLM_H_
