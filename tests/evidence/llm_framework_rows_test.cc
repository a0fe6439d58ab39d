// The framework rows (fitspeed/evidence/llm_framework_rows.h): IBM's fms-fsdp
// table read as its README prints it, every error path, and each prediction
// the split model's own for the row's split.
#include "fitspeed/evidence/llm_framework_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"

namespace fitspeed {
namespace {

std::string FmsFsdpPath() {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/measured/llm/fms_fsdp_a100.csv";
}

TEST(LlmFrameworkRows, FmsFsdpReadmeRowsAsPrinted) {
  // fms-fsdp's README @0d31998: 7b HSDP batch 2 3760, 13b HSDP batch 1 1700,
  // 34b FSDP with checkpointing batch 8 772, 70b batch 6 380 token/gpu/sec,
  // 128 A100s each.
  const std::vector<LlmFrameworkRow> rows = ReadLlmFrameworkRows(FmsFsdpPath());
  ASSERT_EQ(rows.size(), 4u);
  const double tokens[] = {3760, 1700, 772, 380};
  const int64_t batch[] = {2, 1, 8, 6};
  const char* recompute[] = {"none", "none", "full", "full"};
  const int shard[] = {8, 8, 0, 0};  // HSDP (a node of 8) for 7b and 13b
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].tokens_per_s_per_device, tokens[i]);
    EXPECT_EQ(rows[i].micro_batch, batch[i]);
    EXPECT_EQ(rows[i].recompute, recompute[i]);
    EXPECT_EQ(rows[i].shard_group, shard[i]);
    EXPECT_EQ(rows[i].accelerators, 128);
    EXPECT_EQ(rows[i].seq_len, 4096);
    EXPECT_EQ(rows[i].framework, "fsdp");
    EXPECT_EQ(rows[i].line, static_cast<int>(i) + 2);
  }
  // The 34B shape written out: 48 layers of 8,192 with 8 KV heads.
  const TransformerConfig m34 = LoadTransformer(rows[2].model);
  EXPECT_EQ(m34.layers, 48);
  EXPECT_EQ(m34.kv_heads, 8);
}

TEST(LlmFrameworkRows, EachPredictionIsTheSplitModelsForTheRow) {
  std::vector<LlmFrameworkRow> rows = ReadLlmFrameworkRows(FmsFsdpPath());
  rows.resize(1);
  const LlmFrameworkRowResult r = ValidateLlmFrameworkRows(rows).front();
  // Llama-2-7B on 128 A100-80GB, dp 128, micro-batch 2, HYBRID_SHARD over 8.
  const LlmCluster c = MakeCluster(LoadDevice("a100-80gb"), 128);
  LlmSplit s;
  s.dp = 128;
  s.micro_batch = 2;
  s.global_batch = 256;
  s.zero = 3;
  s.shard_group = 8;
  const LlmStep fsdp = ModelLlmStep(LoadTransformer("llama-2-7b"), c,
                                    MakeLlmTraining(4096, "bf16", 0, true, 0, "fsdp"), s,
                                    LlmCalibrationFor(c.device));
  EXPECT_DOUBLE_EQ(r.predicted, fsdp.tokens_per_s / 128);
  EXPECT_DOUBLE_EQ(r.log_ratio, std::log(3760 / r.predicted));
  EXPECT_NE(r.predicted, r.predicted_megatron);
}

// A copy of the file with one field replaced, for the error paths.
class BadRowFile {
 public:
  explicit BadRowFile(const std::string& from, const std::string& to)
      : path_(std::string(::testing::TempDir()) + "fms_fsdp_bad.csv") {
    std::ifstream in(FmsFsdpPath());
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    const size_t at = s.find(from);
    if (at != std::string::npos) s.replace(at, from.size(), to);
    std::ofstream(path_) << s;
  }
  ~BadRowFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(LlmFrameworkRows, BadFieldsNameTheLineAndField) {
  const auto message = [](const std::string& from, const std::string& to) {
    const BadRowFile f(from, to);
    try {
      ReadLlmFrameworkRows(f.path());
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(",fsdp,3,8,none,2,", ",pytorch,3,8,none,2,").find("framework"),
            std::string::npos);
  EXPECT_NE(message(",fsdp,3,8,none,2,", ",fsdp,7,8,none,2,").find("zero"), std::string::npos);
  EXPECT_NE(message(",fsdp,3,8,none,2,", ",fsdp,1e300,8,none,2,").find("zero"), std::string::npos);
  EXPECT_NE(message(",fsdp,3,8,none,2,", ",fsdp,3,8,most,2,").find("recompute"), std::string::npos);
  EXPECT_NE(message(",3760,", ",-1,").find("tokens_per_s_per_device"), std::string::npos);
  EXPECT_NE(message(",fsdp,3,8,none,2,", ",fsdp,3,-8,none,2,").find("shard_group"),
            std::string::npos);
  EXPECT_NE(message(",fsdp,3,8,none,2,", ",fsdp,3,8,none,2,").find("no error"), std::string::npos);
  EXPECT_THROW(ReadLlmFrameworkRows(FmsFsdpPath() + ".missing"), InputError);
}

}  // namespace
}  // namespace fitspeed
