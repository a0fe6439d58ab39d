// The per-layer check of the step model against NeuSight's per-node BERT-large
// times (fitspeed/evidence/layer_check.h, data/measured/README.md).
#include "fitspeed/evidence/layer_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "evidence/csv_table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"
#include "io/text.h"

namespace fitspeed {

namespace {

// The nodes between HF BertLayer's first and last module of encoder layer 0,
// as traced by transformers.utils.fx with eager attention (NeuSight's label
// files, e.g. Tesla_V100-PCIE-32GB/bert_large-train-512-8.csv lines 9720-9760
// of ../shared/data/kernels/neusight_model_layers.csv). BertSelfAttention
// runs key, then value, then query through transpose_for_scores (view +
// permute), so view/permute belong to K, view_1/permute_1 to V and
// view_2/permute_2 to Q. The size_N / getitem_N / add_4..add_8 triples
// compute the new shape from x.size() in Python: no GPU work, but NeuSight
// times them (~10 us each: dispatch, not kernels).
constexpr const char* kShape = "";
constexpr const char* kShapeNote = "shape arithmetic (Python ints from x.size(), no kernel)";
const std::vector<LayerNodeMapping> kBertLayerNodes = {
    {"bert_encoder_layer_0_attention_self_query", "layer0.attn.q", "query Linear"},
    {"bert_encoder_layer_0_attention_self_key", "layer0.attn.k", "key Linear"},
    {"size_2", kShape, kShapeNote},
    {"getitem_6", kShape, kShapeNote},
    {"add_4", kShape, kShapeNote},
    {"view", "layer0.attn.k_heads", "K head split: view"},
    {"permute", "layer0.attn.k_heads", "K head split: permute"},
    {"bert_encoder_layer_0_attention_self_value", "layer0.attn.v", "value Linear"},
    {"size_3", kShape, kShapeNote},
    {"getitem_7", kShape, kShapeNote},
    {"add_5", kShape, kShapeNote},
    {"view_1", "layer0.attn.v_heads", "V head split: view"},
    {"permute_1", "layer0.attn.v_heads", "V head split: permute"},
    {"size_4", kShape, kShapeNote},
    {"getitem_8", kShape, kShapeNote},
    {"add_6", kShape, kShapeNote},
    {"view_2", "layer0.attn.q_heads", "Q head split: view"},
    {"permute_2", "layer0.attn.q_heads", "Q head split: permute"},
    // key_layer.transpose(-1, -2): a strided view (no kernel). fitspeed's
    // scores reads K through transpose_b, so the view goes with K's head
    // layout, not with the matmul.
    {"transpose", "layer0.attn.k_heads", "K^T: transpose view"},
    // torch.matmul flattens its permuted 4-D operands to {B*H, T, D} with
    // reshape, which copies them: the Q and K copies (V's in matmul_1) that
    // fitspeed charges to the head splits are timed inside these two nodes,
    // while the view/permute nodes time dispatch only. Read batched_matmul
    // and split_merge_heads together.
    {"matmul", "layer0.attn.scores", "Q K^T"},
    // / sqrt(head_dim): its own elementwise kernel in HF; fitspeed folds the
    // scale into the scores matmul (MatmulAttrs::scale).
    {"truediv", "layer0.attn.scores", "scale 1/sqrt(d), folded into scores by fitspeed"},
    // scores + the extended mask (broadcast over heads and queries).
    {"add_7", "", "attention-mask add (fitspeed's bert-large has no mask)"},
    {"softmax", "layer0.attn.softmax", "softmax over keys"},
    {"bert_encoder_layer_0_attention_self_dropout", "layer0.attn.attn_dropout",
     "dropout on the attention probabilities"},
    {"matmul_1", "layer0.attn.context", "probs V"},
    {"permute_3", "layer0.attn.merge", "head merge: permute"},
    {"contiguous", "layer0.attn.merge", "head merge: contiguous copy"},
    {"size_5", kShape, kShapeNote},
    {"getitem_9", kShape, kShapeNote},
    {"add_8", kShape, kShapeNote},
    {"view_3", "layer0.attn.merge", "head merge: view"},
    {"bert_encoder_layer_0_attention_output_dense", "layer0.attn.out", "attention output Linear"},
    {"bert_encoder_layer_0_attention_output_dropout", "layer0.attn.out_dropout",
     "dropout after the attention output"},
    {"add_9", "layer0.add1", "residual add after attention", false},
    {"bert_encoder_layer_0_attention_output_layer_norm", "layer0.norm1", "LayerNorm after add1"},
    {"bert_encoder_layer_0_intermediate_dense", "layer0.mlp.fc1", "intermediate Linear (d -> 4d)"},
    {"gelu", "layer0.mlp.gelu", "GELU (erf)"},
    {"bert_encoder_layer_0_output_dense", "layer0.mlp.fc2", "output Linear (4d -> d)"},
    {"bert_encoder_layer_0_output_dropout", "layer0.mlp.mlp_dropout", "dropout after fc2"},
    {"add_10", "layer0.add2", "residual add after the MLP", false},
    {"bert_encoder_layer_0_output_layer_norm", "layer0.norm2", "LayerNorm after add2"},
};

// The catalog device that models a GPU of the file (torch's name with '_'
// for ' '): the one that lists the name among its aliases; nullopt when none.
std::optional<GpuMatch> MatchGpu(const std::string& gpu) {
  std::string name = gpu;
  std::replace(name.begin(), name.end(), '_', ' ');
  const std::optional<CatalogAlias> alias = FindCatalogAlias(name);
  if (!alias) return std::nullopt;
  return GpuMatch{gpu, alias->device, alias->note};
}

constexpr const char* kKindOrder[] = {"dense",   "batched_matmul",   "softmax",
                                      "dropout", "layer_norm",       "gelu",
                                      "add",     "split_merge_heads"};

// The comparison kind of a fitspeed layer kind: split and merge together.
std::string CheckKind(const std::string& kind) {
  if (kind == "split_heads" || kind == "merge_heads") return "split_merge_heads";
  return kind;
}

constexpr const char* kLayerPrefix = "bert_encoder_layer_0_";
const std::vector<std::string> kColumns = {"gpu",  "model", "mode",  "seq_len", "batch",
                                           "node", "fx_op", "fw_us", "bw_us",   "acc_us"};

struct Group {
  std::string gpu;
  int64_t seq_len = 0;
  int64_t batch = 0;
  std::vector<MeasuredNode> rows;  // every row of the group, in file order
};

PassCheck Compare(bool measured, double measured_s, double modeled_s) {
  PassCheck p;
  p.measured = measured && measured_s > 0;
  p.measured_s = measured_s;
  p.modeled_s = modeled_s;
  p.error_pct =
      p.measured ? PercentError(modeled_s, measured_s) : std::numeric_limits<double>::quiet_NaN();
  return p;
}

// The encoder layer's nodes of `group`, each mapped; DataError for a node the
// map does not know, twice, or missing.
std::vector<MeasuredNode> EncoderNodes(const Group& group, const std::string& source) {
  const auto is_layer = [](const MeasuredNode& n) { return io::StartsWith(n.node, kLayerPrefix); };
  const auto first = std::find_if(group.rows.begin(), group.rows.end(), is_layer);
  const std::string where = fmt::format("{} at batch {}", group.gpu, group.batch);
  if (first == group.rows.end()) {
    throw DataError(source, group.rows.front().line, "node",
                    fmt::format("{}: no {}* node (no encoder layer)", where, kLayerPrefix));
  }
  const auto last = std::find_if(group.rows.rbegin(), group.rows.rend(), is_layer).base();
  std::map<std::string, const LayerNodeMapping*> map;
  for (const LayerNodeMapping& m : kBertLayerNodes) map[m.node] = &m;
  std::vector<MeasuredNode> nodes;
  std::set<std::string> seen;
  for (auto it = first; it != last; ++it) {
    MeasuredNode n = *it;
    const auto m = map.find(n.node);
    if (m == map.end()) {
      throw DataError(source, n.line, "node",
                      fmt::format("'{}' of {}'s encoder layer is not in fitspeed's node map "
                                  "(src/device/layer_check.cc)",
                                  io::Excerpt(n.node), where));
    }
    if (!seen.insert(n.node).second) {
      throw DataError(source, n.line, "node",
                      fmt::format("'{}' appears twice in {}'s encoder layer", n.node, where));
    }
    n.layer = m->second->layer;
    n.note = m->second->note;
    n.backward_measured = n.backward_measured && m->second->backward_kernel;
    nodes.push_back(std::move(n));
  }
  for (const LayerNodeMapping& m : kBertLayerNodes) {
    if (seen.count(m.node) == 0) {
      throw DataError(source, first->line, "node",
                      fmt::format("node '{}' is missing from {}'s encoder layer (lines {}-{})",
                                  m.node, where, first->line, (last - 1)->line));
    }
  }
  return nodes;
}

// Sums the measured and modeled passes of `layers` (all modeled) and of the
// nodes mapped to them.
LayerCheckItem Sum(const std::string& name, const std::vector<const LayerTime*>& layers,
                   const std::vector<MeasuredNode>& nodes) {
  LayerCheckItem item;
  item.name = name;
  double modeled_fw = 0, modeled_bw = 0, measured_fw = 0, measured_bw = 0;
  bool backward_measured = true;
  for (const LayerTime* t : layers) {
    item.layers.push_back(t->name);
    modeled_fw += t->passes[static_cast<size_t>(Pass::kForward)].time_s;
    modeled_bw += t->passes[static_cast<size_t>(Pass::kBackwardData)].time_s +
                  t->passes[static_cast<size_t>(Pass::kBackwardWeights)].time_s;
    for (const MeasuredNode& n : nodes) {
      if (n.layer != t->name) continue;
      item.nodes.push_back(n.node);
      measured_fw += n.forward_s;
      measured_bw += n.backward_s;
      backward_measured = backward_measured && n.backward_measured;
    }
  }
  item.forward = Compare(!item.nodes.empty(), measured_fw, modeled_fw);
  item.backward = Compare(!item.nodes.empty() && backward_measured, measured_bw, modeled_bw);
  return item;
}

LayerCheckGroup CheckGroup(const Group& group, const GpuMatch& match, const Device& device,
                           const std::string& source) {
  LayerCheckGroup g;
  g.gpu = group.gpu;
  g.device = match.device;
  g.batch = group.batch;
  g.seq_len = group.seq_len;
  g.nodes = EncoderNodes(group, source);
  Network network;
  try {
    network = LoadNetwork("bert-large", ZooOptions{group.seq_len});
  } catch (const UsageError& e) {
    throw DataError(source, g.nodes.front().line, "seq_len", e.what());
  }
  DeviceModelOptions options;
  options.precision = Precision::kFp32;  // NeuSight: FP32, TF32 off for matmul and cuDNN
  // The layer times do not depend on whether the step fits in memory
  // (ModeledStep::fits); every batch was measured.
  const ModeledStep step = ModelStep(network, device, group.batch, options);
  std::vector<const LayerTime*> modeled;
  for (const LayerTime& t : step.layers) {
    if (!io::StartsWith(t.name, "layer0.")) continue;
    const bool mapped = std::any_of(g.nodes.begin(), g.nodes.end(),
                                    [&t](const MeasuredNode& n) { return n.layer == t.name; });
    FITSPEED_CHECK(mapped, fmt::format("bert-large layer {} has no NeuSight node", t.name));
    modeled.push_back(&t);
  }
  for (const MeasuredNode& n : g.nodes) {
    if (n.layer.empty()) {
      g.not_modeled_forward_s += n.forward_s;
      g.not_modeled_backward_s += n.backward_s;
      continue;
    }
    const bool found = std::any_of(modeled.begin(), modeled.end(),
                                   [&n](const LayerTime* t) { return t->name == n.layer; });
    FITSPEED_CHECK(found,
                   fmt::format("node {} maps to {}, not a layer of bert-large", n.node, n.layer));
  }
  for (const LayerTime* t : modeled) g.layers.push_back(Sum(t->name, {t}, g.nodes));
  std::vector<double> forward_errors, backward_errors;
  std::vector<const LayerTime*> backward_layers;
  for (const char* kind : kKindOrder) {
    std::vector<const LayerTime*> of_kind;
    for (const LayerTime* t : modeled) {
      if (CheckKind(t->kind) == kind) of_kind.push_back(t);
    }
    FITSPEED_CHECK(!of_kind.empty(), fmt::format("bert-large has no {} layer", kind));
    LayerCheckItem item = Sum(kind, of_kind, g.nodes);
    if (item.forward.measured) forward_errors.push_back(item.forward.error_pct);
    if (item.backward.measured) {
      backward_errors.push_back(item.backward.error_pct);
      backward_layers.insert(backward_layers.end(), of_kind.begin(), of_kind.end());
    }
    g.kinds.push_back(std::move(item));
  }
  g.forward_kinds = SummarizeErrorsPct(forward_errors);
  g.backward_kinds = SummarizeErrorsPct(backward_errors);
  // Whole layer: the forward of every layer; the backward of the kinds that
  // have a backward measurement (NeuSight times none for views and copies).
  g.encoder_layer = Sum("encoder_layer", modeled, g.nodes);
  const LayerCheckItem measured_backward = Sum("encoder_layer", backward_layers, g.nodes);
  g.encoder_layer.backward = measured_backward.backward;
  return g;
}

}  // namespace

const std::vector<LayerNodeMapping>& BertLayerNodeMap() { return kBertLayerNodes; }

LayerCheckReport CheckBertLayers(const std::string& path, const LayerCheckOptions& options) {
  const CsvTable t = ReadCsvTable(path, kColumns);
  LayerCheckReport report;
  report.source = path;
  std::vector<Group> groups;
  for (const CsvTable::Row& row : t.rows) {
    if (t.Get(row, "model") != "bert_large" || t.Get(row, "mode") != "train") continue;
    MeasuredNode n;
    n.node = t.Get(row, "node");
    n.fx_op = t.Get(row, "fx_op");
    n.line = row.line;
    n.forward_s = t.NonNegative(row, "fw_us") * 1e-6;
    n.backward_s = t.NonNegative(row, "bw_us") * 1e-6;
    n.accumulate_s = t.NonNegative(row, "acc_us") * 1e-6;
    // NeuSight's analysis.py skips the backward of call_method and getitem nodes.
    n.backward_measured = n.fx_op != "call_method" && !io::StartsWith(n.node, "getitem");
    const std::string& gpu = t.Get(row, "gpu");
    const int64_t seq_len = t.PositiveInt(row, "seq_len");
    const int64_t batch = t.PositiveInt(row, "batch");
    auto group = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.gpu == gpu && g.seq_len == seq_len && g.batch == batch;
    });
    if (group == groups.end()) {
      groups.push_back({gpu, seq_len, batch, {}});
      group = groups.end() - 1;
    }
    group->rows.push_back(std::move(n));
  }
  if (groups.empty()) {
    throw DataError(path, 0, "model", "no row of model bert_large and mode train");
  }
  std::vector<double> forward_errors, backward_errors, forward_layer, backward_layer;
  for (const Group& group : groups) {
    const std::optional<GpuMatch> match = MatchGpu(group.gpu);
    if (!match) {
      EncoderNodes(group, path);  // its layer is read all the same: no node goes unchecked
      auto skipped = std::find_if(report.skipped.begin(), report.skipped.end(),
                                  [&group](const SkippedGpu& s) { return s.gpu == group.gpu; });
      if (skipped == report.skipped.end()) {
        report.skipped.push_back({group.gpu, "no catalog device models it", 0});
        skipped = report.skipped.end() - 1;
      }
      skipped->rows += static_cast<int>(group.rows.size());
      continue;
    }
    const auto given = std::find_if(options.devices.begin(), options.devices.end(),
                                    [&match](const Device& d) { return d.name == match->device; });
    const Device device = given != options.devices.end() ? *given : LoadDevice(match->device);
    LayerCheckGroup g = CheckGroup(group, *match, device, path);
    for (const LayerCheckItem& k : g.kinds) {
      if (k.forward.measured) forward_errors.push_back(k.forward.error_pct);
      if (k.backward.measured) backward_errors.push_back(k.backward.error_pct);
    }
    forward_layer.push_back(g.encoder_layer.forward.error_pct);
    backward_layer.push_back(g.encoder_layer.backward.error_pct);
    const bool listed = std::any_of(report.matches.begin(), report.matches.end(),
                                    [&match](const GpuMatch& m) { return m.gpu == match->gpu; });
    if (!listed) report.matches.push_back(*match);
    report.groups.push_back(std::move(g));
  }
  report.forward_kinds = SummarizeErrorsPct(forward_errors);
  report.backward_kinds = SummarizeErrorsPct(backward_errors);
  report.forward_layer = SummarizeErrorsPct(forward_layer);
  report.backward_layer = SummarizeErrorsPct(backward_layer);
  return report;
}

}  // namespace fitspeed
