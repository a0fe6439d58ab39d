// Per-layer check of the device step model against published per-layer GPU
// measurements: NeuSight's (Lee et al., ASPLOS'25) forward and backward times
// of every torch.fx node of one encoder layer of HF BERT-large, FP32, 512
// tokens, measured one node at a time on several GPUs
// (data/measured/neusight_bert_large_train_layers.csv, docs/validation.md).
// Each node is mapped to the layer of fitspeed's bert-large it computes
// (BertLayerNodeMap), and measured against modeled (ModelStep) forward and
// backward time is compared per layer kind and for the whole encoder layer.
// Nothing is calibrated on these rows: they are a check only.
//
//   fitspeed::LayerCheckReport report =
//       fitspeed::CheckBertLayers("data/measured/neusight_bert_large_train_layers.csv");
//   for (const auto& g : report.groups) std::cout << g.forward_kinds.median_abs_error_pct;
#ifndef FITSPEED_EVIDENCE_LAYER_CHECK_H_
#define FITSPEED_EVIDENCE_LAYER_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/device/device.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {

// The measurement table's name in data/measured.
inline constexpr const char* kNeusightBertLayersFile = "neusight_bert_large_train_layers.csv";

// What one node of HF BertLayer's torch.fx graph (transformers' BertLayer,
// eager attention) is in fitspeed's bert-large encoder layer.
struct LayerNodeMapping {
  const char* node;   // NeuSight's fx node name ("bert_encoder_layer_0_attention_self_query")
  const char* layer;  // fitspeed's layer in encoder layer 0 ("layer0.attn.q"); "" not modeled
  const char* note;   // how the node relates to that layer, or why it is not modeled
  // false: the node's backward launches no kernel (AddBackward0 hands dy to
  // both inputs), so NeuSight's bw_us is the dispatch of the Python call only.
  bool backward_kernel = true;
};

// Every node between the first and the last "bert_encoder_layer_0_" node of
// a BERT-large training file, in graph order.
const std::vector<LayerNodeMapping>& BertLayerNodeMap();

// A GPU of the file and the catalog device that models it: the one that
// lists the GPU's name (spaces for the file's '_') among its aliases, whose
// note says how it differs (FindCatalogAlias). GPUs without one are skipped.
struct GpuMatch {
  std::string gpu;     // the file's name (torch.cuda.get_device_name with '_' for ' ')
  std::string device;  // the catalog device
  std::string note;    // how the catalog device differs from the measured card
};

struct LayerCheckOptions {
  // Devices used instead of the catalog device of the same Device::name (e.g.
  // calibrated device files).
  std::vector<Device> devices;
};

// One measured fx node of the encoder layer.
struct MeasuredNode {
  std::string node;
  std::string fx_op;        // call_module, call_function or call_method
  int line = 0;             // line of the file
  std::string layer;        // LayerNodeMapping::layer ("" not modeled)
  std::string note;         // LayerNodeMapping::note
  double forward_s = 0;     // fw_us
  double backward_s = 0;    // bw_us: the node's grad_fn chain, weight gradients included
  double accumulate_s = 0;  // acc_us: AccumulateGrad of its parameters (not compared)
  // Whether bw_us times a backward kernel: NeuSight runs no backward for
  // call_method and getitem nodes (views, permutes, contiguous copies, sizes),
  // bw_us is 0 there; and LayerNodeMapping::backward_kernel.
  bool backward_measured = true;
};

// Measured against modeled time of one pass of a set of layers.
struct PassCheck {
  // false: NeuSight timed no kernel for this pass (a view's backward is not
  // run, a residual add's launches none): measured_s is 0 or dispatch only,
  // error_pct NaN.
  bool measured = false;
  double measured_s = 0;
  double modeled_s = 0;
  // 100 * (modeled_s - measured_s) / measured_s: positive when the model is
  // slower than the measurement. NaN when not measured.
  double error_pct = 0;
};

// A fitspeed layer, or a kind of layers, or the whole encoder layer, with the
// nodes that measure it.
struct LayerCheckItem {
  std::string name;                 // layer name, kind name, or "encoder_layer"
  std::vector<std::string> layers;  // fitspeed layers summed
  std::vector<std::string> nodes;   // NeuSight nodes summed
  PassCheck forward;
  PassCheck backward;  // backward-data + backward-weights against bw_us
};

// One GPU at one batch.
struct LayerCheckGroup {
  std::string gpu;     // the file's name
  std::string device;  // the catalog device (GpuMatch::device)
  int64_t batch = 0;
  int64_t seq_len = 0;
  std::vector<MeasuredNode> nodes;     // every node of the encoder layer, in file order
  std::vector<LayerCheckItem> layers;  // each fitspeed layer of encoder layer 0
  // Per kind: dense, batched_matmul, softmax, dropout, layer_norm, gelu, add,
  // split_merge_heads (split_heads and merge_heads together).
  std::vector<LayerCheckItem> kinds;
  // Every modeled layer against every mapped node; the backward over the
  // layers whose nodes have a backward measurement.
  LayerCheckItem encoder_layer;
  ErrorSummary forward_kinds;        // |forward error| over the kinds
  ErrorSummary backward_kinds;       // |backward error| over the kinds with a backward measurement
  double not_modeled_forward_s = 0;  // measured time of the nodes fitspeed does not model
  double not_modeled_backward_s = 0;
};

// A GPU of the file that is not compared.
struct SkippedGpu {
  std::string gpu;
  std::string reason;
  int rows = 0;
};

struct LayerCheckReport {
  std::string source;                   // the file read
  std::string network = "bert-large";   // the zoo network modeled
  std::vector<LayerCheckGroup> groups;  // in order of first appearance
  std::vector<GpuMatch> matches;        // the matches used, in order of first appearance
  std::vector<SkippedGpu> skipped;
  ErrorSummary forward_kinds;  // over every group's kinds
  ErrorSummary backward_kinds;
  ErrorSummary forward_layer;  // |encoder-layer forward error| over the groups
  ErrorSummary backward_layer;
};

// Reads `path` (NeuSight's per-node table: gpu, model, mode, seq_len, batch,
// node, fx_op, fw_us, bw_us, acc_us; the rows of model bert_large and mode
// train are used) and compares each catalogued GPU's encoder layer at each
// batch with ModelStep of bert-large at the file's sequence length in FP32.
// Throws InputError when the file cannot be opened, DataError naming the
// file, line and field for a missing column, a bad number, an encoder-layer
// node BertLayerNodeMap does not know, or a node of the map missing from a
// GPU's layer.
LayerCheckReport CheckBertLayers(const std::string& path, const LayerCheckOptions& options = {});

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_LAYER_CHECK_H_
