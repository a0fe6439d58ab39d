// Reports of networks for `fitspeed models`: a summary per network (table,
// CSV or JSON schema "fitspeed.models/1", docs/design.md "Schemas") and a
// per-layer breakdown.
#ifndef FITSPEED_MODEL_REPORT_H_
#define FITSPEED_MODEL_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/output_format.h"
#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"

namespace fitspeed {

// The numbers `fitspeed models` lists for one network.
struct ModelSummary {
  std::string name;
  std::string description;
  std::string reference;
  Shape input_shape;                    // per sample
  int64_t classes = 0;                  // classes of the loss
  int layers = 0;                       // layers without the input
  int64_t params = 0;                   // Keras convention: incl. batch-norm moving statistics
  int64_t trainable_params = 0;         // updated by the optimizer
  double forward_flops_per_sample = 0;  // NetworkCost::ForwardFlopsPerSample()
  double train_flops_per_sample = 0;    // NetworkCost::TrainFlopsPerSample()
  double update_flops_per_step = 0;     // NetworkCost::UpdateFlopsPerStep() for `optimizer`
  int64_t activation_elements_per_sample = 0;  // LayerCost::activation_elements summed
  // Bytes the backward pass keeps per sample in FP32 (EstimateTrainingMemory's
  // saved tensors at batch 1 with 4-byte activations): per sequence for a
  // sequence model.
  double saved_activation_bytes_per_sample = 0;
  int64_t tokens_per_sample = 0;  // Network::TokensPerSample(): 0 unless it reads token ids
  Optimizer optimizer = Optimizer::kSgdMomentum;
};

// The summary of a finalized network.
ModelSummary Summarize(const Network& network, Optimizer optimizer = Optimizer::kSgdMomentum);

// One row per network: name, parameters (total, trainable), GFLOPs per sample
// forward and per training sample, per token for sequence models, update
// FLOPs per step, saved activations per sample, input and description.
// JSON: {"schema": "fitspeed.models/1", "models": [{"name", "params",
// "trainable_params", "forward_flops_per_sample", "train_flops_per_sample",
// "tokens_per_sample", "forward_flops_per_token", "train_flops_per_token"
// (null unless a sequence model), "saved_activation_bytes_per_sample", ...}]}.
void WriteModels(std::ostream& out, const std::vector<ModelSummary>& models, OutputFormat format);

// One network layer by layer: kind, inputs, output shape, parameters, and per
// sample the FLOPs of each pass and the activation elements, then the totals.
// JSON: the "fitspeed.models/1" document of this one network with a "layers"
// list added to its entry.
void WriteModelLayers(std::ostream& out, const Network& network, OutputFormat format,
                      Optimizer optimizer = Optimizer::kSgdMomentum);

}  // namespace fitspeed

#endif  // FITSPEED_MODEL_REPORT_H_
