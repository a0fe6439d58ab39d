// The per-layer check against NeuSight's BERT-large layer times
// (fitspeed/evidence/layer_check.h): every encoder-layer node of the file is
// mapped, sums against numbers read by hand from the file, GPUs without a
// catalog device skipped, bad rows reported with their line.
#include "fitspeed/evidence/layer_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

std::string LayersFile() {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/measured/" + kNeusightBertLayersFile;
}

const LayerCheckReport& Report() {
  static const LayerCheckReport report = CheckBertLayers(LayersFile());
  return report;
}

const LayerCheckGroup* Group(const std::string& device, int64_t batch) {
  for (const LayerCheckGroup& g : Report().groups) {
    if (g.device == device && g.batch == batch) return &g;
  }
  return nullptr;
}

const LayerCheckItem* Kind(const LayerCheckGroup& g, const std::string& kind) {
  for (const LayerCheckItem& k : g.kinds) {
    if (k.name == kind) return &k;
  }
  return nullptr;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

std::string WriteFileLayerCheck(const std::string& name, const std::vector<std::string>& lines) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream file(path);
  for (const std::string& line : lines) file << line << "\n";
  return path;
}

// The first `n` comma-separated fields of a line (the file quotes only later
// fields: input_shapes and output_shape).
std::vector<std::string> LeadingFields(const std::string& line, int n) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; fields.size() < static_cast<size_t>(n) && std::getline(in, field, ',');) {
    fields.push_back(field);
  }
  return fields;
}

TEST(LayerCheck, MapsEveryEncoderLayerNodeOfTheFile) {
  // Read the file here, independently of the CSV reader: per GPU and batch,
  // the nodes from the first to the last bert_encoder_layer_0_ row.
  const std::vector<std::string> lines = ReadLines(LayersFile());
  ASSERT_GT(lines.size(), 1u);
  std::map<std::string, std::vector<std::string>> groups;  // "gpu/batch" -> nodes
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> f = LeadingFields(lines[i], 6);
    ASSERT_EQ(f.size(), 6u) << "line " << i + 1;
    groups[f[0] + "/" + f[4]].push_back(f[5]);
  }
  std::set<std::string> mapped;
  for (const LayerNodeMapping& m : BertLayerNodeMap()) mapped.insert(m.node);
  EXPECT_EQ(mapped.size(), BertLayerNodeMap().size()) << "a node is mapped twice";
  int layer_nodes = 0;
  for (const auto& [key, nodes] : groups) {
    size_t first = nodes.size(), last = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].rfind("bert_encoder_layer_0_", 0) != 0) continue;
      first = std::min(first, i);
      last = i;
    }
    ASSERT_LT(first, nodes.size()) << key;
    std::set<std::string> in_layer(nodes.begin() + first, nodes.begin() + last + 1);
    EXPECT_EQ(in_layer, mapped) << key;
    layer_nodes += static_cast<int>(last - first + 1);
  }
  // 4 GPUs x 2 batches, 41 nodes each.
  EXPECT_EQ(groups.size(), 8u);
  EXPECT_EQ(layer_nodes, 8 * 41);

  // The report keeps every node of each compared layer, mapped or explained.
  int reported = 0;
  for (const LayerCheckGroup& g : Report().groups) {
    EXPECT_EQ(g.nodes.size(), mapped.size()) << g.gpu << " " << g.batch;
    for (const MeasuredNode& n : g.nodes) {
      EXPECT_TRUE(!n.layer.empty() || !n.note.empty()) << n.node;
      ++reported;
    }
  }
  int skipped_layer_nodes = 0;
  for (const SkippedGpu& s : Report().skipped) {
    skipped_layer_nodes += 2 * 41;  // both batches of a skipped GPU
    EXPECT_EQ(s.rows, 2 * 78) << s.gpu;
  }
  EXPECT_EQ(reported + skipped_layer_nodes, layer_nodes);
}

TEST(LayerCheck, EveryLayerOfTheEncoderLayerIsMeasured) {
  const Network bert = LoadNetwork("bert-large", ZooOptions{512});
  std::set<std::string> layer0, mapped;
  for (const fitspeed::Layer& layer : bert.layers()) {
    if (layer.name.rfind("layer0.", 0) == 0) layer0.insert(layer.name);
  }
  for (const LayerNodeMapping& m : BertLayerNodeMap()) {
    if (*m.layer != '\0') mapped.insert(m.layer);
  }
  EXPECT_EQ(mapped, layer0);
  EXPECT_EQ(layer0.size(), 21u);
  // Not modeled: the attention-mask add and 12 shape computations.
  int not_modeled = 0;
  for (const LayerNodeMapping& m : BertLayerNodeMap()) not_modeled += *m.layer == '\0';
  EXPECT_EQ(not_modeled, 13);
}

TEST(LayerCheck, ComparesTheCataloguedGpusAndSkipsTheOthers) {
  const LayerCheckReport& r = Report();
  ASSERT_EQ(r.groups.size(), 6u);
  ASSERT_EQ(r.matches.size(), 3u);
  EXPECT_EQ(r.matches[0].device, "a100-80gb");
  EXPECT_EQ(r.matches[1].device, "h100");
  EXPECT_EQ(r.matches[2].device, "v100-pcie");
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].gpu, "NVIDIA_L4");
  for (const LayerCheckGroup& g : r.groups) {
    EXPECT_EQ(g.seq_len, 512);
    EXPECT_EQ(g.kinds.size(), 8u);
    EXPECT_EQ(g.layers.size(), 21u);
    EXPECT_EQ(g.forward_kinds.cases, 8);
    // No backward kernel timed for the head split/merge and the residual adds.
    EXPECT_EQ(g.backward_kinds.cases, 6);
    EXPECT_TRUE(std::isfinite(g.encoder_layer.forward.error_pct));
    EXPECT_TRUE(std::isfinite(g.encoder_layer.backward.error_pct));
  }
  EXPECT_EQ(r.forward_kinds.cases, 6 * 8);
  EXPECT_EQ(r.backward_kinds.cases, 6 * 6);
}

TEST(LayerCheck, DenseKindOnV100AtBatch8SumsTheFile) {
  // data/measured/neusight_bert_large_train_layers.csv, Tesla_V100-PCIE-32GB,
  // batch 8, fw_us / bw_us:
  //   577 attention_self_query    848.077 / 1522.07
  //   578 attention_self_key      848.685 / 1521.02
  //   584 attention_self_value    847.667 / 1521.04
  //   608 attention_output_dense  772.915 / 1375.03
  //   612 intermediate_dense     2669.76  / 5261.3
  //   614 output_dense           2641.11  / 5196.99
  // forward 8628.214 us, backward 16397.45 us.
  const LayerCheckGroup* g = Group("v100-pcie", 8);
  ASSERT_NE(g, nullptr);
  const LayerCheckItem* dense = Kind(*g, "dense");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->nodes.size(), 6u);
  EXPECT_NEAR(dense->forward.measured_s, 8628.214e-6, 1e-12);
  EXPECT_NEAR(dense->backward.measured_s, 16397.45e-6, 1e-12);
  // The modeled side: the six dense layers of ModelStep, forward and
  // backward-data + backward-weights.
  const ModeledStep step =
      ModelStep(LoadNetwork("bert-large", ZooOptions{512}), LoadDevice("v100-pcie"), 8);
  double forward = 0, backward = 0;
  for (const LayerTime& t : step.layers) {
    if (t.name.rfind("layer0.", 0) != 0 || t.kind != "dense") continue;
    forward += t.passes[0].time_s;
    backward += t.passes[1].time_s + t.passes[2].time_s;
  }
  EXPECT_DOUBLE_EQ(dense->forward.modeled_s, forward);
  EXPECT_DOUBLE_EQ(dense->backward.modeled_s, backward);
  EXPECT_DOUBLE_EQ(dense->forward.error_pct, 100 * (forward - 8628.214e-6) / 8628.214e-6);

  // Batched matmul: matmul 581.837 / 1043.6 (line 596), truediv 343.635 /
  // 337.299 (597, the scale fitspeed folds into scores), matmul_1 586.554 /
  // 978.509 (601): 1512.026 / 2359.408 us.
  const LayerCheckItem* bmm = Kind(*g, "batched_matmul");
  ASSERT_NE(bmm, nullptr);
  EXPECT_NEAR(bmm->forward.measured_s, 1512.026e-6, 1e-12);
  EXPECT_NEAR(bmm->backward.measured_s, 2359.408e-6, 1e-12);
  // Head split/merge: views and a copy, whose backward NeuSight does not time.
  const LayerCheckItem* heads = Kind(*g, "split_merge_heads");
  ASSERT_NE(heads, nullptr);
  EXPECT_TRUE(heads->forward.measured);
  EXPECT_FALSE(heads->backward.measured);
  EXPECT_TRUE(std::isnan(heads->backward.error_pct));
  // add_7 (the mask add, 374.579 / 9.4208 us, line 598) is outside the layer's
  // measured time.
  EXPECT_GE(g->not_modeled_forward_s, 374.579e-6);
}

TEST(LayerCheck, GivenDevicesReplaceTheCatalog) {
  Device slow = LoadDevice("v100-pcie");
  slow.memory_bandwidth_bytes_per_s /= 2;
  LayerCheckOptions options;
  options.devices = {slow};
  const LayerCheckReport r = CheckBertLayers(LayersFile(), options);
  for (const LayerCheckGroup& g : r.groups) {
    const LayerCheckGroup* catalog = Group(g.device, g.batch);
    ASSERT_NE(catalog, nullptr);
    const double softmax = Kind(g, "softmax")->forward.modeled_s;
    const double softmax_catalog = Kind(*catalog, "softmax")->forward.modeled_s;
    if (g.device == "v100-pcie") {
      EXPECT_GT(softmax, 1.5 * softmax_catalog);
    } else {
      EXPECT_DOUBLE_EQ(softmax, softmax_catalog);
    }
  }
}

// The message of the DataError CheckBertLayers throws for `path` ("" if none).
std::string DataErrorOf(const std::string& path) {
  try {
    CheckBertLayers(path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(LayerCheck, MissingColumnIsADataErrorOnTheHeader) {
  std::vector<std::string> lines = ReadLines(LayersFile());
  const size_t at = lines[0].find(",bw_us");
  ASSERT_NE(at, std::string::npos);
  lines[0].replace(at, 6, ",bw_usec");
  const std::string message = DataErrorOf(WriteFileLayerCheck("layers_no_bw_us.csv", lines));
  EXPECT_THAT(message, HasSubstr("layers_no_bw_us.csv:1: field 'bw_us'"));
  EXPECT_THAT(message, HasSubstr("missing"));
}

TEST(LayerCheck, NonNumericTimeIsADataErrorWithItsLine) {
  std::vector<std::string> lines = ReadLines(LayersFile());
  // Line 599: V100 batch 8 softmax, fw_us 345.907.
  std::string& line = lines[598];
  ASSERT_THAT(line, HasSubstr(",softmax,"));
  const size_t at = line.find(",345.907,");
  ASSERT_NE(at, std::string::npos);
  line.replace(at, 9, ",fast,");
  const std::string message = DataErrorOf(WriteFileLayerCheck("layers_bad_fw.csv", lines));
  EXPECT_THAT(message, HasSubstr("layers_bad_fw.csv:599: field 'fw_us'"));
  EXPECT_THAT(message, HasSubstr("'fast'"));
}

TEST(LayerCheck, UnknownOrMissingNodeIsADataError) {
  std::vector<std::string> lines = ReadLines(LayersFile());
  lines[598].replace(lines[598].find(",softmax,"), 9, ",softmax_2,");
  EXPECT_THAT(DataErrorOf(WriteFileLayerCheck("layers_unknown_node.csv", lines)),
              HasSubstr("layers_unknown_node.csv:599: field 'node': 'softmax_2'"));
  lines.erase(lines.begin() + 598);
  EXPECT_THAT(DataErrorOf(WriteFileLayerCheck("layers_missing_node.csv", lines)),
              HasSubstr("node 'softmax' is missing"));
}

}  // namespace
}  // namespace fitspeed
