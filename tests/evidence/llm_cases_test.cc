// The published LLM training tables (fitspeed/evidence/llm_cases.h) read from
// data/measured/llm, rows checked by hand against the files, every error
// path, and fitspeed's MLLOG reader on the eleven raw result logs of
// tests/data/mlperf-llm against the table rows they belong to.
#include "fitspeed/evidence/llm_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"

namespace fitspeed {
namespace {

std::string LlmDataDir() {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/measured/llm";
}
std::string VtrainPath() {
  return LlmDataDir() + "/vtrain_megatron_deepspeed_single_node_a100.csv";
}
std::string MlperfPath() { return LlmDataDir() + "/mlperf_training_llm_throughput_v3.0-v4.1.csv"; }

const std::vector<LlmCase>& Vtrain() {
  static const std::vector<LlmCase> cases = ReadVtrainCases(VtrainPath());
  return cases;
}
const std::vector<LlmCase>& Mlperf() {
  static const std::vector<LlmCase> cases = ReadMlperfLlmCases(MlperfPath());
  return cases;
}

const LlmCase& AtLine(const std::vector<LlmCase>& cases, int line) {
  for (const LlmCase& c : cases) {
    if (c.line == line) return c;
  }
  ADD_FAILURE() << "no case at line " << line;
  return cases.front();
}

// ---- vTrain -------------------------------------------------------------------

TEST(ReadVtrainCases, ReadsEveryRow) {
  ASSERT_EQ(Vtrain().size(), 1440u);
  std::map<int, int> by_gpus;
  for (const LlmCase& c : Vtrain()) {
    ++by_gpus[c.accelerators];
    EXPECT_EQ(c.tp * c.pp * c.dp, c.accelerators) << c.line;
    EXPECT_EQ(c.device, "a100");
    EXPECT_EQ(c.benchmark, "vtrain-gpt");
    EXPECT_EQ(c.publisher, "VIA-Research (vTrain)");
    EXPECT_EQ(c.precision, "fp16");
    EXPECT_GT(c.iteration_time_s, 0);
    EXPECT_EQ(c.tokens_per_s, 0);
  }
  // README: 2, 4 and 8 GPUs; 8 shapes x 18 splits x 10 batch settings, the
  // splits of 8 GPUs 9, of 4 GPUs 6, of 2 GPUs 3 (counted in the file: 720,
  // 480 and 240 rows).
  EXPECT_EQ(by_gpus, (std::map<int, int>{{2, 240}, {4, 480}, {8, 720}}));
}

TEST(ReadVtrainCases, RowsAsTheFileWritesThem) {
  // Line 2: "2,16,8,1024,16,24,1024,1,1,2,372.160408" (after the byte-order
  // mark of line 1): 2 GPUs, global 16, micro 8, hidden 1024, 16 heads, 24
  // layers, sequence 1024, tp 1, dp 1, pp 2.
  const LlmCase& a = AtLine(Vtrain(), 2);
  EXPECT_EQ(a.accelerators, 2);
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.global_batch, 16);
  EXPECT_EQ(a.micro_batch, 8);
  EXPECT_EQ(a.hidden, 1024);
  EXPECT_EQ(a.heads, 16);
  EXPECT_EQ(a.kv_heads, 16);
  EXPECT_EQ(a.layers, 24);
  EXPECT_EQ(a.seq_len, 1024);
  EXPECT_EQ(a.tp, 1);
  EXPECT_EQ(a.dp, 1);
  EXPECT_EQ(a.pp, 2);
  EXPECT_EQ(a.cp, 1);
  EXPECT_EQ(a.vp, 0);
  EXPECT_TRUE(a.split_known);
  EXPECT_DOUBLE_EQ(a.iteration_time_s, 0.372160408);
  // Line 3: "8,32,4,1024,16,24,1024,2,2,2,219.732754".
  const LlmCase& b = AtLine(Vtrain(), 3);
  EXPECT_EQ(b.accelerators, 8);
  EXPECT_EQ(b.tp, 2);
  EXPECT_EQ(b.dp, 2);
  EXPECT_EQ(b.pp, 2);
  EXPECT_DOUBLE_EQ(b.iteration_time_s, 0.219732754);
  // The last line, 1441: "4,64,8,1024,16,24,1024,1,4,1,474.725583".
  const LlmCase& z = AtLine(Vtrain(), 1441);
  EXPECT_EQ(z.accelerators, 4);
  EXPECT_EQ(z.global_batch, 64);
  EXPECT_EQ(z.dp, 4);
  EXPECT_EQ(z.pp, 1);
  EXPECT_DOUBLE_EQ(z.iteration_time_s, 0.474725583);
}

TEST(GroupLlmCases, VtrainMakes144Groups) {
  const std::vector<LlmCaseGroup> groups = GroupLlmCases(Vtrain());
  ASSERT_EQ(groups.size(), 144u);
  size_t rows = 0, smallest = 1000, largest = 0;
  std::set<std::pair<int, int>> shapes;
  for (const LlmCaseGroup& g : groups) {
    rows += g.cases.size();
    smallest = std::min(smallest, g.cases.size());
    largest = std::max(largest, g.cases.size());
    shapes.insert({g.layers, g.hidden});
    std::set<std::vector<int>> splits;
    for (const LlmCase& c : g.cases) {
      EXPECT_EQ(c.layers, g.layers);
      EXPECT_EQ(c.hidden, g.hidden);
      EXPECT_EQ(c.accelerators, g.accelerators);
      EXPECT_EQ(c.global_batch, g.global_batch);
      // Within a group the rows differ in split or micro-batch only.
      EXPECT_TRUE(splits.insert({c.tp, c.pp, c.dp, c.micro_batch}).second) << c.line;
    }
  }
  EXPECT_EQ(rows, 1440u);
  EXPECT_EQ(shapes.size(), 8u);  // layers 12, 16, 20, 24 x hidden 1024, 2048
  EXPECT_EQ(smallest, 2u);       // counted in the file with a script
  EXPECT_EQ(largest, 26u);
  // Ordered by shape, GPUs, then global batch: the first is 12 layers, hidden
  // 1024, 2 GPUs, the smallest global batch of 2 GPUs in the file (2).
  EXPECT_EQ(groups.front().layers, 12);
  EXPECT_EQ(groups.front().hidden, 1024);
  EXPECT_EQ(groups.front().accelerators, 2);
  EXPECT_EQ(groups.front().global_batch, 2);
}

// ---- MLPerf -------------------------------------------------------------------

TEST(ReadMlperfLlmCases, ReadsEveryRowWithItsDuplicatesAndUnknownSplits) {
  ASSERT_EQ(Mlperf().size(), 102u);
  int gpt3 = 0, lora = 0, duplicates = 0, unknown_split = 0, with_eval = 0;
  std::set<std::string> publishers, distinct_publishers;
  for (const LlmCase& c : Mlperf()) {
    (c.benchmark == "gpt3" ? gpt3 : lora) += 1;
    duplicates += c.duplicate ? 1 : 0;
    unknown_split += c.split_known ? 0 : 1;
    with_eval += c.includes_eval ? 1 : 0;
    publishers.insert(c.publisher);
    if (!c.duplicate) distinct_publishers.insert(c.publisher);
    EXPECT_EQ(c.lora, c.benchmark == "llama2_70b_lora") << c.line;
    EXPECT_FALSE(c.device.empty()) << c.line;
    EXPECT_GT(c.tokens_per_s, 0) << c.line;
    EXPECT_EQ(c.iteration_time_s, 0) << c.line;
    if (c.split_known) {
      EXPECT_EQ(c.dp * c.tp * c.pp * c.cp, c.accelerators) << c.line;
    } else {
      EXPECT_EQ(c.tp, 0) << c.line;
      EXPECT_EQ(c.precision, "") << c.line;
    }
  }
  // README: 42 gpt3 and 60 LoRA rows (counted: `cut -d, -f4 | sort | uniq -c`),
  // 8 marked DUPLICATE, 8 without a matched configuration, 16 measured T2.
  EXPECT_EQ(gpt3, 42);
  EXPECT_EQ(lora, 60);
  EXPECT_EQ(duplicates, 8);
  EXPECT_EQ(unknown_split, 8);
  EXPECT_EQ(with_eval, 16);
  EXPECT_EQ(publishers.size(), 21u);
  // Every row of smc-dc-power is a duplicate of smc or smc-ac-power.
  EXPECT_EQ(distinct_publishers.size(), 20u);
  EXPECT_EQ(publishers.count("smc-dc-power"), 1u);
  EXPECT_EQ(distinct_publishers.count("smc-dc-power"), 0u);
}

TEST(ReadMlperfLlmCases, RowsAsTheFileWritesThem) {
  // Line 2: v3.0 Intel-HabanaLabs HLS-Gaudi2-N32-PT gpt3, Habana Gaudi2, 256
  // accelerators on 32 nodes, BF16, seq 2048, global 1536, micro 1, tp 8, pp
  // 8, vp blank, cp 1, dp 4, 23.4162 samples/s = 47956.3 tokens/s, T1, 3 logs.
  const LlmCase& h = AtLine(Mlperf(), 2);
  EXPECT_EQ(h.round, "v3.0");
  EXPECT_EQ(h.publisher, "Intel-HabanaLabs");
  EXPECT_EQ(h.system, "HLS-Gaudi2-N32-PT");
  EXPECT_EQ(h.benchmark, "gpt3");
  EXPECT_EQ(h.accelerator, "Habana Gaudi2");
  EXPECT_EQ(h.device, "gaudi2");
  EXPECT_EQ(h.accelerators, 256);
  EXPECT_EQ(h.nodes, 32);
  EXPECT_EQ(h.precision, "bf16");
  EXPECT_EQ(h.seq_len, 2048);
  EXPECT_EQ(h.global_batch, 1536);
  EXPECT_EQ(h.micro_batch, 1);
  EXPECT_EQ(h.tp, 8);
  EXPECT_EQ(h.pp, 8);
  EXPECT_EQ(h.vp, 0);
  EXPECT_EQ(h.cp, 1);
  EXPECT_EQ(h.dp, 4);
  EXPECT_EQ(h.layers, 96);
  EXPECT_EQ(h.hidden, 12288);
  EXPECT_EQ(h.heads, 96);
  EXPECT_EQ(h.kv_heads, 96);
  EXPECT_FALSE(h.lora);
  EXPECT_FALSE(h.duplicate);
  EXPECT_FALSE(h.includes_eval);
  EXPECT_DOUBLE_EQ(h.tokens_per_s, 47956.3);
  EXPECT_EQ(h.logs, 3);
  // Line 4: v3.0 NVIDIA dgxh100_n64_nemo, FP8, tp 4, pp 8, vp 12, dp 16.
  const LlmCase& n = AtLine(Mlperf(), 4);
  EXPECT_EQ(n.device, "h100");
  EXPECT_EQ(n.precision, "fp8");
  EXPECT_EQ(n.vp, 12);
  EXPECT_EQ(n.dp, 16);
  // Line 10: v3.1 Google cloud-tpu-v5e-4096-PAX, "INT8 AQT matmuls (bf16
  // fprop)", tp 16, dp 256, micro 8, 457521.9 tokens/s measured T2.
  const LlmCase& g = AtLine(Mlperf(), 10);
  EXPECT_EQ(g.device, "tpu-v5e");
  EXPECT_EQ(g.precision, "int8");
  EXPECT_EQ(g.tp, 16);
  EXPECT_EQ(g.dp, 256);
  EXPECT_EQ(g.micro_batch, 8);
  EXPECT_TRUE(g.includes_eval);
  // Line 18: v3.1 NVIDIA eos_n64_ngc23.09_nemo, no configuration matched:
  // precision and split blank.
  const LlmCase& u = AtLine(Mlperf(), 18);
  EXPECT_FALSE(u.split_known);
  EXPECT_EQ(u.precision, "");
  EXPECT_EQ(u.accelerators, 512);
  EXPECT_DOUBLE_EQ(u.tokens_per_s, 378692.5);
  // Line 31: TPU-trillium, the catalog's tpu-v6e.
  EXPECT_EQ(AtLine(Mlperf(), 31).device, "tpu-v6e");
  // Line 50: v4.0 Habana LoRA, "FP8 (--fp8) + BF16", Llama-2-70B, seq 8192.
  const LlmCase& l = AtLine(Mlperf(), 50);
  EXPECT_EQ(l.device, "gaudi2");
  EXPECT_EQ(l.precision, "fp8");
  EXPECT_TRUE(l.lora);
  EXPECT_EQ(l.layers, 80);
  EXPECT_EQ(l.hidden, 8192);
  EXPECT_EQ(l.heads, 64);
  EXPECT_EQ(l.kv_heads, 8);
  EXPECT_EQ(l.seq_len, 8192);
  EXPECT_DOUBLE_EQ(l.tokens_per_s, 5339.3);
  EXPECT_TRUE(l.includes_eval);
  // Line 59: v4.0 NVIDIA l40s_n96 LoRA: 384 L40S, tp 4, cp 2, dp 48.
  const LlmCase& s = AtLine(Mlperf(), 59);
  EXPECT_EQ(s.device, "l40s");
  EXPECT_EQ(s.cp, 2);
  EXPECT_EQ(s.dp, 48);
  // Line 29: v4.0 smc-ac-power 64xSMC-H100-SXM-80GB gpt3, a DUPLICATE.
  EXPECT_TRUE(AtLine(Mlperf(), 29).duplicate);
}

// ---- Error paths ----------------------------------------------------------------

std::string WriteTempLlmCases(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/fitspeed_llm_cases_" + name + ".csv";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The DataError message of reading `text` with `read`, or "no DataError".
template <typename Read>
std::string ErrorLlmCases(Read read, const std::string& name, const std::string& text) {
  const std::string path = WriteTempLlmCases(name, text);
  std::string message = "no DataError";
  try {
    read(path);
  } catch (const DataError& e) {
    message = e.what();
  }
  std::remove(path.c_str());
  return message;
}

constexpr const char* kVtrainHeaderLlmCases =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
    "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";

std::string VtrainError(const std::string& row) {
  return ErrorLlmCases(ReadVtrainCases, "vtrain", std::string(kVtrainHeaderLlmCases) + row + "\n");
}

TEST(ReadVtrainCases, ErrorsNameFileLineAndField) {
  // A good row reads.
  const std::string good = WriteTempLlmCases(
      "good", std::string(kVtrainHeaderLlmCases) + "8,32,4,1024,16,24,1024,2,2,2,219.7\n");
  EXPECT_EQ(ReadVtrainCases(good).size(), 1u);
  std::remove(good.c_str());

  std::string m = ErrorLlmCases(ReadVtrainCases, "missing", "# GPUs,global batch\n2,16\n");
  EXPECT_NE(m.find(":1"), std::string::npos) << m;
  EXPECT_NE(m.find("micro batch"), std::string::npos) << m;
  EXPECT_NE(m.find("column missing"), std::string::npos) << m;

  m = VtrainError("8,32,4,1024,16,24,1024,2,2,x,219.7");
  EXPECT_NE(m.find(":2"), std::string::npos) << m;
  EXPECT_NE(m.find("pipeline parallelism"), std::string::npos) << m;

  m = VtrainError("8,32,4,1024,16,24,1024,2,2,2,0");
  EXPECT_NE(m.find("iteration time (ms)"), std::string::npos) << m;
  m = VtrainError("8,32,4,1024,-16,24,1024,2,2,2,219.7");
  EXPECT_NE(m.find("attention heads"), std::string::npos) << m;
  m = VtrainError("8,32,4,1024,16,24,1024,2,2,2.5,219.7");
  EXPECT_NE(m.find("whole number"), std::string::npos) << m;

  m = VtrainError("8,32,4,1024,16,24,1024,2,2,4,219.7");  // 2 x 4 x 2 = 16 != 8
  EXPECT_NE(m.find(":2"), std::string::npos) << m;
  EXPECT_NE(m.find("= 16, not the 8 GPUs"), std::string::npos) << m;

  m = VtrainError("8,24,4,1024,16,24,1024,2,4,1,219.7");  // 24 % (4 x 4) != 0
  EXPECT_NE(m.find("global batch"), std::string::npos) << m;
  EXPECT_NE(m.find("not a multiple"), std::string::npos) << m;

  EXPECT_THROW(ReadVtrainCases(LlmDataDir() + "/no_such_file.csv"), InputError);
}

constexpr const char* kMlperfHeaderLlmCases =
    "round,submitter,system,benchmark,accelerator,n_accelerators,n_nodes,framework,precision,"
    "seq_len,global_batch,micro_batch,tp,pp,vp,cp,dp,samples_per_s,tokens_per_s,method,n_logs\n";

// Line 4 of the table, shortened: 512 H100, tp 4, pp 8, vp 12, cp 1, dp 16.
constexpr const char* kMlperfGoodRowLlmCases =
    "v3.0,NVIDIA,dgxh100_n64_nemo,gpt3,NVIDIA H100-SXM5-80GB,512,64,NeMo,FP8,2048,2048,1,4,8,12,1,"
    "16,169.0063,346124.9,T1 train-only,3";

// `row` with the fields at `indices` (0-based) replaced by `value`.
std::string SetCellsLlmCases(const std::string& row, const std::vector<int>& indices,
                             const std::string& value) {
  std::vector<std::string> cells;
  std::stringstream in(row);
  std::string cell;
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!row.empty() && row.back() == ',') cells.emplace_back();
  for (int i : indices) cells.at(static_cast<size_t>(i)) = value;
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
  return out;
}

std::string MlperfRowWith(int index, const std::string& value) {
  return SetCellsLlmCases(kMlperfGoodRowLlmCases, {index}, value);
}

std::string MlperfError(const std::string& row) {
  return ErrorLlmCases(ReadMlperfLlmCases, "mlperf",
                       std::string(kMlperfHeaderLlmCases) + row + "\n");
}

TEST(ReadMlperfLlmCases, ErrorsNameFileLineAndField) {
  const std::string good =
      WriteTempLlmCases("good", std::string(kMlperfHeaderLlmCases) + kMlperfGoodRowLlmCases + "\n");
  ASSERT_EQ(ReadMlperfLlmCases(good).size(), 1u);
  std::remove(good.c_str());

  struct Bad {
    int index;
    const char* value;
    const char* field;
    const char* problem;
  };
  const Bad bad[] = {
      {0, "", "round", "is blank"},
      {3, "bert", "benchmark", "neither gpt3 nor llama2_70b_lora"},
      {4, "NVIDIA H999", "accelerator", "maps to no catalog device"},
      {5, "0", "n_accelerators", "must be > 0"},
      {6, "many", "n_nodes", ""},
      {8, "FP4", "precision", "none of FP8, BF16, FP16, INT8"},
      {9, "8192", "seq_len", "whose sequences have 2048 tokens"},
      {10, "-1", "global_batch", ""},
      {12, "", "tp", "give all of micro_batch, tp, pp, cp, dp or none"},
      {16, "8", "dp", "= 256, not the 512 n_accelerators"},
      {14, "0", "vp", ""},
      {18, "1", "tokens_per_s", "is not samples_per_s x seq_len"},
      {17, "x", "samples_per_s", ""},
      {19, "T3 something", "method", "neither T1"},
      {20, "0", "n_logs", ""},
  };
  for (const Bad& b : bad) {
    const std::string m = MlperfError(MlperfRowWith(b.index, b.value));
    EXPECT_NE(m.find("fitspeed_llm_cases_mlperf.csv:2"), std::string::npos) << b.field << ": " << m;
    EXPECT_NE(m.find(b.field), std::string::npos) << b.field << ": " << m;
    EXPECT_NE(m.find(b.problem), std::string::npos) << b.field << ": " << m;
  }

  // All of micro_batch, tp, pp, cp, dp blank (and vp): kept, split unknown; a vp then is an error.
  const std::string row = SetCellsLlmCases(kMlperfGoodRowLlmCases, {11, 12, 13, 14, 15, 16}, "");
  const std::string unknown =
      WriteTempLlmCases("unknown", std::string(kMlperfHeaderLlmCases) + row + "\n");
  const std::vector<LlmCase> read = ReadMlperfLlmCases(unknown);
  std::remove(unknown.c_str());
  ASSERT_EQ(read.size(), 1u);
  EXPECT_FALSE(read[0].split_known);
  EXPECT_EQ(read[0].dp, 0);
  EXPECT_EQ(read[0].vp, 0);
  const std::string m = MlperfError(SetCellsLlmCases(row, {14}, "12"));
  EXPECT_NE(m.find("vp"), std::string::npos) << m;
  EXPECT_NE(m.find("given while the split is blank"), std::string::npos) << m;

  const std::string missing = ErrorLlmCases(ReadMlperfLlmCases, "missing", "round,submitter\n");
  EXPECT_NE(missing.find("column missing"), std::string::npos) << missing;
}

// ---- The settings the runs' configurations record --------------------------------

std::string SettingsPath() { return LlmDataDir() + "/mlperf_llm_run_settings.csv"; }

const MlperfLlmSettings& SettingsOf(const std::vector<LlmCase>& cases, const std::string& round,
                                    const std::string& system) {
  for (const LlmCase& c : cases) {
    if (c.round == round && c.system == system && c.settings) return *c.settings;
  }
  ADD_FAILURE() << "no settings for " << round << " " << system;
  static const MlperfLlmSettings none;
  return none;
}

TEST(ReadMlperfLlmSettings, EveryRowNamesOneRunOfTheTable) {
  const std::vector<MlperfLlmSettings> settings = ReadMlperfLlmSettings(SettingsPath());
  // 48 Llama-2-70B LoRA runs, the 9 Google MaxText GPT-3 runs whose launch
  // scripts are in the stored copies (trillium-1024 and -3072 are not), and
  // 25 NeMo and Megatron-DeepSpeed GPT-3 runs (data/measured/llm/README.md
  // lists the 8 GPT-3 runs left out and why).
  ASSERT_EQ(settings.size(), 82u);
  std::vector<LlmCase> cases = Mlperf();
  AttachMlperfLlmSettings(cases, settings);
  int attached = 0, lora = 0;
  for (const LlmCase& c : cases) {
    if (!c.settings) continue;
    ++attached;
    lora += c.lora ? 1 : 0;
    EXPECT_FALSE(c.duplicate) << c.line;
    EXPECT_TRUE(c.split_known) << c.line;
  }
  EXPECT_EQ(attached, 82);
  EXPECT_EQ(lora, 48);
}

TEST(ReadMlperfLlmSettings, RowsAsTheConfigurationsRecordThem) {
  std::vector<LlmCase> cases = Mlperf();
  AttachMlperfLlmSettings(cases, ReadMlperfLlmSettings(SettingsPath()));
  // smc's 8-node LoRA run: its result log prints NeMo's configuration with
  // activations_checkpoint_granularity: null and fp8_dot_product_attention: 1;
  // NVIDIA's v4.0 yaml optimizes with fused_adam (no sharding).
  const MlperfLlmSettings& smc = SettingsOf(cases, "v4.0", "8xSMC-H100-SXM-80GB");
  EXPECT_EQ(smc.recompute, "none");
  EXPECT_EQ(smc.fp8_attention, std::optional<bool>(true));
  EXPECT_EQ(smc.zero, 0);
  EXPECT_EQ(smc.evidence.rfind("printed config in the result log", 0), 0u) << smc.evidence;
  EXPECT_EQ(smc.source_commit, "62f111b7690f163b269f32e4f93dcaaa13717c9c");
  // The yaml's adapter_dropout 0.1 on the adapters' input.
  EXPECT_EQ(smc.lora_dropout, std::optional<bool>(true));
  // Juniper's DeepSpeed runs: --use_gradient_checkpointing True, ZeRO stage 3, BF16.
  const MlperfLlmSettings& juniper = SettingsOf(cases, "v4.0", "h100_n4_ngc24.1_pytorch_deepspeed");
  EXPECT_EQ(juniper.recompute, "full");
  EXPECT_EQ(juniper.zero, 3);
  EXPECT_EQ(juniper.fp8_attention, std::optional<bool>(false));
  // Lenovo's v4.1 H200 config (tp 1, cp 2) exports FP8_ACTIVATION=True, which
  // v4.1's yaml maps to Megatron's activation_func_fp8_input_store; v4.0's
  // yaml key (fp8_activation_input_store) reached no field: smc's log prints 0.
  EXPECT_EQ(SettingsOf(cases, "v4.1", "SR685aV3-8xH200_SXM_141GB_700W").activation_fp8_store,
            std::optional<bool>(true));
  EXPECT_EQ(smc.activation_fp8_store, std::optional<bool>(false));
  // Azure's v4.1 config: FP8_DPA=0, CUDA graphs (not modeled, so noted).
  const MlperfLlmSettings& azure = SettingsOf(cases, "v4.1", "ND_H200_v5_n64_nemo");
  EXPECT_EQ(azure.fp8_attention, std::optional<bool>(false));
  EXPECT_NE(azure.not_modeled.find("CUDA graphs"), std::string::npos) << azure.not_modeled;
  // A run whose own config is not in the stored copy: nothing read on FP8 attention.
  const MlperfLlmSettings& asus = SettingsOf(cases, "v4.0", "ESC_N8A-E12");
  EXPECT_EQ(asus.evidence.rfind("family", 0), 0u) << asus.evidence;
  EXPECT_FALSE(asus.fp8_attention.has_value());
  // MaxText: v5p-8192 remat_policy=minimal (selective), v5p-2048
  // save_dot_except_logits_ffn1 (between selective and full), trillium-512 full, all FSDP.
  const MlperfLlmSettings& v5p8192 = SettingsOf(cases, "v4.1", "cloud-tpu-v5p-8192-maxtext");
  EXPECT_EQ(v5p8192.recompute, "selective");
  EXPECT_EQ(v5p8192.recompute_setting, "remat_policy=minimal");
  EXPECT_EQ(v5p8192.zero, 3);
  EXPECT_EQ(SettingsOf(cases, "v4.0", "cloud-tpu-v5p-2048-maxtext").recompute, "selective-or-full");
  EXPECT_EQ(SettingsOf(cases, "v4.1", "cloud-tpu-trillium-512-maxtext").recompute, "full");
  // NVIDIA's v4.0 NeMo GPT-3 at 64 nodes: custom.yaml reads ACT_CKPT_GRANULARITY
  // (null when unset, as no config sets it), hidden and attention dropout 0.0,
  // USE_DIST_OPTIMIZER, FP8_PARAMS and TP_COMM_OVERLAP True; the distributed
  // optimizer's yaml reduces the gradients in BF16 (grad_sync_dtype).
  const MlperfLlmSettings& eos = SettingsOf(cases, "v4.0", "eos_n64_ngc24.04_nemo");
  EXPECT_EQ(eos.benchmark, "gpt3");
  EXPECT_EQ(eos.recompute, "none");
  EXPECT_EQ(eos.zero, 1);
  EXPECT_TRUE(eos.fp8_weights);
  EXPECT_EQ(eos.dropout, std::optional<bool>(false));
  EXPECT_EQ(eos.tp_comm_overlap, std::optional<bool>(true));
  EXPECT_EQ(eos.gradient_bytes, std::optional<int>(2));
  // Habana's Megatron-DeepSpeed GPT-3: selective checkpointing, ZeRO 0, DROPOUT=0.0.
  const MlperfLlmSettings& gaudi = SettingsOf(cases, "v3.0", "HLS-Gaudi2-N32-PT");
  EXPECT_EQ(gaudi.recompute, "selective");
  EXPECT_EQ(gaudi.zero, 0);
  EXPECT_EQ(gaudi.dropout, std::optional<bool>(false));
  EXPECT_FALSE(gaudi.tp_comm_overlap.has_value());
  EXPECT_FALSE(gaudi.gradient_bytes.has_value());
}

constexpr const char* kSettingsHeaderLlmCases =
    "round,submitter,system,benchmark,recompute,recompute_setting,fp8_attention,zero,fp8_weights,"
    "evidence,"
    "source_repo,"
    "source_commit,source_paths,not_modeled,dropout,tp_comm_overlap,gradient_bytes,"
    "lora_dropout,activation_fp8_store\n";
constexpr const char* kSettingsGoodRowLlmCases =
    "v4.0,NVIDIA,eos_ngc24.04_nemo,llama2_70b_lora,none,ACG unset,True,0,True,config,repo,"
    "62f111b7690f163b269f32e4f93dcaaa13717c9c,a.sh;b.yaml,,False,True,2,True,False";

std::string SettingsError(const std::string& rows) {
  return ErrorLlmCases(ReadMlperfLlmSettings, "settings",
                       std::string(kSettingsHeaderLlmCases) + rows + "\n");
}

TEST(ReadMlperfLlmSettings, ErrorsNameFileLineAndField) {
  const std::string good = WriteTempLlmCases(
      "good_settings", std::string(kSettingsHeaderLlmCases) + kSettingsGoodRowLlmCases + "\n");
  const std::vector<MlperfLlmSettings> read = ReadMlperfLlmSettings(good);
  std::remove(good.c_str());
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].line, 2);
  EXPECT_EQ(read[0].benchmark, "llama2_70b_lora");
  EXPECT_EQ(read[0].recompute, "none");
  EXPECT_EQ(read[0].fp8_attention, std::optional<bool>(true));
  EXPECT_TRUE(read[0].fp8_weights);
  EXPECT_EQ(read[0].source_paths, "a.sh;b.yaml");
  EXPECT_EQ(read[0].dropout, std::optional<bool>(false));
  EXPECT_EQ(read[0].tp_comm_overlap, std::optional<bool>(true));
  EXPECT_EQ(read[0].gradient_bytes, std::optional<int>(2));
  EXPECT_EQ(read[0].lora_dropout, std::optional<bool>(true));
  EXPECT_EQ(read[0].activation_fp8_store, std::optional<bool>(false));
  // Blank: not recorded.
  const std::string blank = WriteTempLlmCases(
      "blank_settings", std::string(kSettingsHeaderLlmCases) +
                            SetCellsLlmCases(kSettingsGoodRowLlmCases, {14, 15, 16, 17, 18}, "") +
                            "\n");
  const std::vector<MlperfLlmSettings> unread = ReadMlperfLlmSettings(blank);
  std::remove(blank.c_str());
  ASSERT_EQ(unread.size(), 1u);
  EXPECT_FALSE(unread[0].dropout.has_value());
  EXPECT_FALSE(unread[0].tp_comm_overlap.has_value());
  EXPECT_FALSE(unread[0].gradient_bytes.has_value());
  EXPECT_FALSE(unread[0].lora_dropout.has_value());
  EXPECT_FALSE(unread[0].activation_fp8_store.has_value());

  struct Bad {
    int index;
    const char* value;
    const char* field;
    const char* problem;
  };
  const Bad bad[] = {
      {0, "", "round", "is blank"},
      {2, "", "system", "is blank"},
      {3, "", "benchmark", "is blank"},
      {4, "partial", "recompute", "none of none, selective, full, selective-or-full"},
      {5, "", "recompute_setting", "is blank"},
      {6, "yes", "fp8_attention", "expected True or False"},
      {7, "4", "zero", "none of 0, 1, 2, 3"},
      {8, "maybe", "fp8_weights", "expected True or False"},
      {9, "", "evidence", "is blank"},
      {11, "62f111b", "source_commit", "is not a commit"},
      {12, "", "source_paths", "is blank"},
      {14, "0.1", "dropout", "expected True or False"},
      {15, "on", "tp_comm_overlap", "expected True or False"},
      {16, "3", "gradient_bytes", "none of 2, 4 or blank"},
      {17, "0.1", "lora_dropout", "expected True or False"},
      {18, "1", "activation_fp8_store", "expected True or False"},
  };
  for (const Bad& b : bad) {
    const std::string m =
        SettingsError(SetCellsLlmCases(kSettingsGoodRowLlmCases, {b.index}, b.value));
    EXPECT_NE(m.find("fitspeed_llm_cases_settings.csv:2"), std::string::npos)
        << b.field << ": " << m;
    EXPECT_NE(m.find(b.field), std::string::npos) << b.field << ": " << m;
    EXPECT_NE(m.find(b.problem), std::string::npos) << b.field << ": " << m;
  }

  // The same run twice: the second line names the first.
  std::string m =
      SettingsError(std::string(kSettingsGoodRowLlmCases) + "\n" + kSettingsGoodRowLlmCases);
  EXPECT_NE(m.find("fitspeed_llm_cases_settings.csv:3"), std::string::npos) << m;
  EXPECT_NE(m.find("system"), std::string::npos) << m;
  EXPECT_NE(m.find("given on line 2 already"), std::string::npos) << m;

  // A settings row naming no run of the throughput table.
  const std::string path = WriteTempLlmCases(
      "orphan", std::string(kSettingsHeaderLlmCases) +
                    SetCellsLlmCases(kSettingsGoodRowLlmCases, {2}, "eos_n9999_nemo") + "\n");
  std::vector<LlmCase> cases = Mlperf();
  m = "no DataError";
  try {
    AttachMlperfLlmSettings(cases, ReadMlperfLlmSettings(path));
  } catch (const DataError& e) {
    m = e.what();
  }
  std::remove(path.c_str());
  EXPECT_NE(m.find("fitspeed_llm_cases_orphan.csv:2"), std::string::npos) << m;
  EXPECT_NE(m.find("is no run of the throughput table"), std::string::npos) << m;

  m = ErrorLlmCases(ReadMlperfLlmSettings, "settings_missing", "round,submitter\n");
  EXPECT_NE(m.find("column missing"), std::string::npos) << m;
  // The header without its benchmark column.
  std::string header = kSettingsHeaderLlmCases;
  header.erase(header.find("benchmark,"), 10);
  m = ErrorLlmCases(ReadMlperfLlmSettings, "settings_no_benchmark", header);
  EXPECT_NE(m.find("benchmark"), std::string::npos) << m;
  EXPECT_NE(m.find("column missing"), std::string::npos) << m;
}

// ---- The MLLOG reader on the raw logs ----------------------------------------------

// One raw log of tests/data/mlperf-llm and the table row it belongs to.
struct LogCheckLlmCases {
  const char* file;  // <round>__<submitter>__results__<system>__<benchmark>__result_0.txt
  int table_line;    // the row of data/measured/llm/mlperf_training_llm_throughput_v3.0-v4.1.csv
};

// |reader / table - 1| allowed. The table's method reproduced by hand (a
// script over each log's events) reads within 0.73% of the row: the row is
// the median over n_logs result files, this is result_0 alone.
constexpr double kReaderToleranceLlmCases = 0.01;

// The raw logs of tests/data/mlperf-llm and their rows.
constexpr LogCheckLlmCases kLogChecksLlmCases[] = {
    {"v3.0__Intel-HabanaLabs__results__HLS-Gaudi2-N32-PT__gpt3__result_0.txt", 2},
    {"v3.1__Google__results__cloud-tpu-v5e-4096-PAX__gpt3__result_0.txt", 10},
    {"v3.1__NVIDIA__results__eos_n96_ngc23.09_nemo__gpt3__result_0.txt", 19},
    {"v4.0__Intel-HabanaLabs__results__HLS-Gaudi2-PT__llama2_70b_lora__result_0.txt", 50},
    {"v4.0__NVIDIA__results__eos_n64_ngc24.04_nemo__gpt3__result_0.txt", 27},
    {"v4.0__NVIDIA__results__eos_n8_ngc24.04_nemo__llama2_70b_lora__result_0.txt", 55},
    {"v4.0__NVIDIA__results__l40s_n16_ngc24.04_nemo__llama2_70b_lora__result_0.txt", 58},
    {"v4.1__Azure__results__ND_H200_v5_n64_nemo__llama2_70b_lora__result_0.txt", 76},
    {"v4.1__Dell__results__XE9680x8H100-SXM-80GB__llama2_70b_lora__result_0.txt", 83},
    {"v4.1__Google__results__cloud-tpu-v5p-4096-maxtext__gpt3__result_0.txt", 36},
    {"v4.1__NVIDIA__results__b200_n8_preview_nemo__gpt3__result_0.txt", 38},
};

std::vector<Sample> ReadLogLlmCases(const std::string& file, std::vector<std::string>* warnings) {
  ReadOptions options;
  options.warn = [warnings](const std::string& w) {
    if (warnings) warnings->push_back(w);
  };
  return ReadSamples(InputSpec{std::string(FITSPEED_TEST_DATA_DIR) + "/mlperf-llm/" + file, {}},
                     options);
}

// Each throughput sample is the units between two counts over the training
// time between them, and every interval of these logs holds the same count
// (one evaluation period, or one step where NeMo logs tracked_stats), so the
// run's throughput, units over time summed, is their harmonic mean.
double HarmonicMeanLlmCases(const std::vector<Sample>& samples) {
  double inverse = 0;
  for (const Sample& s : samples) inverse += 1 / *s.throughput_sps;
  return static_cast<double>(samples.size()) / inverse;
}

TEST(MllogReaderOnLlmLogs, ReproducesTheTableWithinOnePercent) {
  for (const LogCheckLlmCases& check : kLogChecksLlmCases) {
    SCOPED_TRACE(check.file);
    const LlmCase& row = AtLine(Mlperf(), check.table_line);
    // The file is named after its row.
    EXPECT_NE(std::string(check.file)
                  .find(row.round + "__" + row.publisher + "__results__" + row.system + "__" +
                        row.benchmark + "__"),
              std::string::npos);
    std::vector<std::string> warnings;
    const std::vector<Sample> samples = ReadLogLlmCases(check.file, &warnings);
    ASSERT_GE(samples.size(), 3u);
    for (const Sample& s : samples) {
      ASSERT_TRUE(s.throughput_sps.has_value()) << s.line;
      EXPECT_EQ(s.batch, static_cast<double>(row.global_batch)) << s.line;  // sequences
    }
    // gpt3's token counts are read in sequences of max_sequence_length 2048;
    // LoRA's samples_count counts sequences of 8192 (the log does not say).
    if (row.benchmark == "gpt3") {
      ASSERT_TRUE(samples.front().seq_len.has_value());
      EXPECT_EQ(*samples.front().seq_len, 2048);
    }
    const double tokens_per_s = HarmonicMeanLlmCases(samples) * row.seq_len;
    EXPECT_NEAR(tokens_per_s / row.tokens_per_s, 1, kReaderToleranceLlmCases)
        << "reader " << tokens_per_s << " tokens/s, table " << row.tokens_per_s;
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(row.benchmark == "gpt3" ? "counts tokens" : "counts samples"),
              std::string::npos)
        << warnings[0];
  }
}

// Llama-2-70B LoRA logs carry metadata.samples_count, no epoch numbers; NeMo's
// block_start at 0, and the count at each block_stop, eval_start, eval_stop.
TEST(MllogReaderOnLlmLogs, NvidiaLoraCountsSamples) {
  const std::vector<Sample> samples = ReadLogLlmCases(
      "v4.0__NVIDIA__results__eos_n8_ngc24.04_nemo__llama2_70b_lora__result_0.txt", nullptr);
  // 6 blocks, the first (lines 24-26: 1536 samples from 0, warm-up) dropped.
  ASSERT_EQ(samples.size(), 5u);
  // Line 29: eval_stop samples_count 1536 at 1714861530010; line 31:
  // tracked_stats step 1920 at 1714861560593: 384 sequences in 30.583 s
  // (NeMo's own throughput there: 12.5749).
  EXPECT_EQ(samples[0].line, 31);
  EXPECT_NEAR(*samples[0].throughput_sps, 384 / 30.583, 1e-9);
  EXPECT_EQ(samples[0].batch, 8);  // line 11: global_batch_size 8
}

// Habana's LoRA log has no eval_start/eval_stop and numbers its later
// block_starts 192 (a step's samples): the counts are run_start (0),
// block_stop and eval_accuracy, and the evaluation stays in the time (the
// table's T2).
TEST(MllogReaderOnLlmLogs, HabanaLoraCountsFromRunStart) {
  const std::vector<Sample> samples = ReadLogLlmCases(
      "v4.0__Intel-HabanaLabs__results__HLS-Gaudi2-PT__llama2_70b_lora__result_0.txt", nullptr);
  ASSERT_FALSE(samples.empty());
  // Lines 28-29: block_stop and eval_accuracy 1536 at 1715242795848; line 32:
  // block_stop 1920 at 1715243386252: 384 sequences in 590.404 s.
  EXPECT_EQ(samples[0].line, 32);
  EXPECT_NEAR(*samples[0].throughput_sps, 384 / 590.404, 1e-9);
}

}  // namespace
}  // namespace fitspeed
