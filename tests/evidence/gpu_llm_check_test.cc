// The first-hand H200GpuLlmCheck tables (fitspeed/evidence/gpu_llm_check.h) read from
// data/llm-gpu: row counts against the files, every error path of the
// readers, predictions worked by hand from data/devices/h200.json, and the
// report's summaries against the rows they summarize. Nothing here asserts
// on speed, and nothing asserts how well the catalog predicts the rows.
#include "fitspeed/evidence/gpu_llm_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"

namespace fitspeed {
namespace {

std::string GpuDataDirGpuLlmCheck() {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/llm-gpu";
}

const GpuLlmData& DataGpuLlmCheck() {
  static const GpuLlmData data = ReadGpuLlmData(GpuDataDirGpuLlmCheck());
  return data;
}

const Device& H200GpuLlmCheck() {
  static const Device device = LoadDevice("h200");
  return device;
}

const GpuLlmCheck& CheckGpuLlmCheck() {
  static const GpuLlmCheck check = CheckGpuLlm(DataGpuLlmCheck(), H200GpuLlmCheck());
  return check;
}

// A CSV written to a temporary file for the error paths.
class TempCsvGpuLlmCheck {
 public:
  explicit TempCsvGpuLlmCheck(const std::string& text)
      : path_(testing::TempDir() + "gpu_llm_check_" + std::to_string(counter_++) + ".csv") {
    std::ofstream(path_) << text;
  }
  ~TempCsvGpuLlmCheck() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// The DataError message of `read` on `text`, or "" when it reads.
template <typename Reader>
std::string DataErrorOfGpuLlmCheck(Reader read, const std::string& text) {
  TempCsvGpuLlmCheck file(text);
  try {
    read(file.path(), nullptr);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

const char* kGemmHeaderGpuLlmCheck =
    "section,model,op,pass,dtype,m,n,k,tp,tokens,flops,median_ms,min_ms,tflops,layout,reps,status,"
    "note\n";
const char* kGemmRowGpuLlmCheck =
    "llm,llama-3-8b,qkv,fwd,bf16,2048,6144,4096,1,2048,103079215104,0.13792,0.13616,747.384,rc,100,"
    "ok,\n";
const char* kStepHeaderGpuLlmCheck =
    "section,model,impl,micro_batch,seq,tokens,params,params_matmul,layers,hidden,heads,kv_heads,"
    "vocab,precision,optimizer,attention,model_flops,model_flops_causal,median_ms,min_ms,host_ms,"
    "steps,tokens_per_s,tflops,tflops_causal,peak_mem_gb,status,note\n";
const char* kStepRowGpuLlmCheck =
    "steps,gpt2-medium,fitspeed-torch,1,1024,1024,354823168,353774592,24,1024,16,16,50257,bf16,"
    "AdamW,sdpa,1,1,52.6702,32.6345,48.8573,30,1,1,1,1,ok,\n";

std::string ReplaceGpuLlmCheck(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// ---- Readers -------------------------------------------------------------------

TEST(GpuLlmCheckRead, ReadsEveryTimedRow) {
  // README: gemm.csv 1,492 rows (all ok), attention.csv 102 (2 memory-efficient
  // GQA rows failed: "No available kernel"), memory_ops.csv 32, steps.csv 20
  // (hf-transformers llama-1b at micro-batch 16 ran out of memory).
  EXPECT_EQ(DataGpuLlmCheck().gemms.size(), 1492u);
  EXPECT_EQ(DataGpuLlmCheck().attention.size(), 100u);
  EXPECT_EQ(DataGpuLlmCheck().memory_ops.size(), 32u);
  EXPECT_EQ(DataGpuLlmCheck().steps.size(), 19u);
  ASSERT_EQ(DataGpuLlmCheck().skipped.size(), 3u);
  std::map<std::string, int> status;
  for (const GpuLlmSkippedRow& s : DataGpuLlmCheck().skipped) ++status[s.status];
  EXPECT_EQ(status, (std::map<std::string, int>{{"error", 2}, {"oom", 1}}));

  // Counted in the file with awk, by dtype:
  std::map<std::string, int> dtypes;
  for (const GpuGemm& g : DataGpuLlmCheck().gemms) ++dtypes[g.dtype];
  // bf16: 192 fwd + 96 bwd (llm) + 13 square = 301; fp16: 288 llm + 13
  // square + 480 vtrain = 781; fp8: 192 llm + 13 square each.
  EXPECT_EQ(dtypes, (std::map<std::string, int>{
                        {"bf16", 301}, {"fp16", 781}, {"fp8_e4m3", 205}, {"fp8_e4m3_fast", 205}}));
  std::map<std::string, int> backends;
  for (const GpuAttention& a : DataGpuLlmCheck().attention) ++backends[a.backend];
  EXPECT_EQ(backends,
            (std::map<std::string, int>{
                {"cudnn", 24}, {"default", 24}, {"eager", 16}, {"efficient", 12}, {"flash", 24}}));
  int norms = 0;
  for (const GpuMemoryOp& o : DataGpuLlmCheck().memory_ops) norms += o.normalizes_rows ? 1 : 0;
  EXPECT_EQ(norms, 12);  // layernorm, rmsnorm, softmax x fwd, bwd x hidden 4096, 8192
}

TEST(GpuLlmCheckRead, RowsAsTheFilesWriteThem) {
  // gemm.csv line 2, kGemmRowGpuLlmCheck above.
  const GpuGemm& g = DataGpuLlmCheck().gemms.front();
  EXPECT_EQ(g.line, 2);
  EXPECT_EQ(g.model, "llama-3-8b");
  EXPECT_EQ(g.op, "qkv");
  EXPECT_EQ(g.pass, "fwd");
  EXPECT_EQ(g.m, 2048);
  EXPECT_EQ(g.n, 6144);
  EXPECT_EQ(g.k, 4096);
  EXPECT_DOUBLE_EQ(g.flops, 103079215104.0);
  EXPECT_DOUBLE_EQ(g.median_s, 0.13792e-3);
  // steps.csv line 2, kStepRowGpuLlmCheck above: GPT-2-medium built from its shape has
  // transformers' GPT2LMHeadModel count, 354,823,168 (docs/llm.md's table).
  const GpuStep& s = DataGpuLlmCheck().steps.front();
  EXPECT_EQ(s.line, 2);
  EXPECT_EQ(s.micro_batch, 1);
  EXPECT_EQ(s.config.ffn_hidden, 4096);
  EXPECT_EQ(s.config.positions, PositionEncoding::kLearned);
  EXPECT_EQ(CountParameters(s.config).total, 354823168);
  EXPECT_DOUBLE_EQ(s.median_s, 52.6702e-3);
  EXPECT_DOUBLE_EQ(s.host_s, 48.8573e-3);
  // The Llama-3.2-1B shape: 16 layers of hidden 2048, 32 heads of 64, 8 KV
  // heads, SwiGLU 8192, tied: 1,235,814,400 (the bench's comment and CSV).
  const auto llama = std::find_if(DataGpuLlmCheck().steps.begin(), DataGpuLlmCheck().steps.end(),
                                  [](const GpuStep& x) { return x.model == "llama-1b"; });
  ASSERT_NE(llama, DataGpuLlmCheck().steps.end());
  EXPECT_EQ(llama->config.head_dim, 64);
  EXPECT_EQ(llama->config.kv_heads, 8);
  EXPECT_EQ(llama->config.feed_forward, FeedForwardKind::kGated);
  EXPECT_EQ(CountParameters(llama->config).total, 1235814400);
}

TEST(GpuLlmCheckRead, RejectsMalformedRowsNamingFileLineAndField) {
  const std::string gemm = std::string(kGemmHeaderGpuLlmCheck) + kGemmRowGpuLlmCheck;
  EXPECT_EQ(DataErrorOfGpuLlmCheck(ReadGpuGemms, gemm), "");
  std::string e =
      DataErrorOfGpuLlmCheck(ReadGpuGemms, ReplaceGpuLlmCheck(gemm, ",bf16,", ",fp32,"));
  EXPECT_NE(e.find(":2: field 'dtype'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuGemms,
                             ReplaceGpuLlmCheck(gemm, "103079215104", "103079215105"));
  EXPECT_NE(e.find(":2: field 'flops'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuGemms, ReplaceGpuLlmCheck(gemm, "0.13792", "fast"));
  EXPECT_NE(e.find(":2: field 'median_ms'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuGemms, ReplaceGpuLlmCheck(gemm, "0.13792", "-1"));
  EXPECT_NE(e.find(":2: field 'median_ms'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuGemms, ReplaceGpuLlmCheck(gemm, ",ok,", ",done,"));
  EXPECT_NE(e.find(":2: field 'status'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuGemms,
                             ReplaceGpuLlmCheck(gemm, ",2048,6144,", ",2048.5,6144,"));
  EXPECT_NE(e.find(":2: field 'm'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuGemms, ReplaceGpuLlmCheck(gemm, "section,", "part,"));
  EXPECT_NE(e.find(":1: field 'section': column missing"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuGemms, ReplaceGpuLlmCheck(gemm, ",ok,\n", ",ok\n"));
  EXPECT_NE(e.find(":2"), std::string::npos) << e;  // a field short of the header
  // A row that was not timed is skipped whatever its numbers.
  EXPECT_EQ(DataErrorOfGpuLlmCheck(ReadGpuGemms,
                                   ReplaceGpuLlmCheck(gemm, "0.13792,0.13616,747.384,rc,100,ok,",
                                                      ",,,rc,,error,RuntimeError")),
            "");

  const std::string step = std::string(kStepHeaderGpuLlmCheck) + kStepRowGpuLlmCheck;
  EXPECT_EQ(DataErrorOfGpuLlmCheck(ReadGpuSteps, step), "");
  e = DataErrorOfGpuLlmCheck(ReadGpuSteps, ReplaceGpuLlmCheck(step, ",354823168,", ",354823169,"));
  EXPECT_NE(e.find(":2: field 'params'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuSteps, ReplaceGpuLlmCheck(step, ",gpt2-medium,", ",gpt2-xl,"));
  EXPECT_NE(e.find(":2: field 'model'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuSteps, ReplaceGpuLlmCheck(step, ",1024,1024,", ",1024,2048,"));
  EXPECT_NE(e.find(":2: field 'tokens'"), std::string::npos) << e;

  const std::string attention =
      "backend,pass,dtype,batch,heads,kv_heads,head_dim,seq,causal,flops_full,flops_causal,median_"
      "ms,"
      "status,note\nflash,fwd,bf16,1,32,8,128,1024,1,17179869184,8589934592,0.03,ok,\n";
  EXPECT_EQ(DataErrorOfGpuLlmCheck(ReadGpuAttention, attention), "");
  e = DataErrorOfGpuLlmCheck(ReadGpuAttention,
                             ReplaceGpuLlmCheck(attention, "8589934592", "17179869184"));
  EXPECT_NE(e.find(":2: field 'flops_causal'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuAttention,
                             ReplaceGpuLlmCheck(attention, "flash,", "xformers,"));
  EXPECT_NE(e.find(":2: field 'backend'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuAttention, ReplaceGpuLlmCheck(attention, ",32,8,", ",32,5,"));
  EXPECT_NE(e.find(":2: field 'kv_heads'"), std::string::npos) << e;

  const std::string memory =
      "op,impl,pass,dtype,tokens,hidden,elements,bytes,median_ms,status,note\n"
      "copy,torch,fwd,bf16,8192,4096,33554432,134217728,0.036224,ok,\n";
  EXPECT_EQ(DataErrorOfGpuLlmCheck(ReadGpuMemoryOps, memory), "");
  e = DataErrorOfGpuLlmCheck(ReadGpuMemoryOps, ReplaceGpuLlmCheck(memory, "copy,", "scatter,"));
  EXPECT_NE(e.find(":2: field 'op'"), std::string::npos) << e;
  e = DataErrorOfGpuLlmCheck(ReadGpuMemoryOps,
                             ReplaceGpuLlmCheck(memory, ",33554432,", ",33554431,"));
  EXPECT_NE(e.find(":2: field 'elements'"), std::string::npos) << e;

  EXPECT_THROW(ReadGpuGemms(testing::TempDir() + "no_such_gemm.csv"), InputError);
  EXPECT_THROW(ReadGpuLlmData(testing::TempDir() + "no_such_dir"), InputError);
}

// ---- Predictions by hand ---------------------------------------------------------

TEST(GpuLlmCheckPredict, Bf16GemmFromTheH200File) {
  // llama-3-8b qkv forward, m 2048, n 6144, k 4096: F = 2 x 2048 x 6144 x 4096
  // = 103,079,215,104. h200.json: tensor16 9.895e14 FLOP/s; efficiency.tensor
  // (fitted to this file's BF16/FP16 rows) between (1e11, 0.6867) and
  // (1.778e11, 0.6886), linear in log(size):
  //   f = ln(1.03079215104) / ln(1.778) = 0.0303276 / 0.5754891 = 0.0526988
  //   eff = 0.6867 + f x (0.6886 - 0.6867) = 0.6867 + 0.0001001 = 0.6868001
  //   t = F / (9.895e14 x 0.6868001) = 1.03079215104e11 / 6.7958870e14 = 1.516788e-4 s
  // No shape term (the curve has no half_dim), no calibration factor.
  EXPECT_NEAR(PredictGpuGemmSeconds(H200GpuLlmCheck(), "bf16", 2048, 6144, 4096), 1.516788e-4,
              1e-9);
  // FP16 runs at the same 16-bit peak and curve.
  EXPECT_DOUBLE_EQ(PredictGpuGemmSeconds(H200GpuLlmCheck(), "fp16", 2048, 6144, 4096),
                   PredictGpuGemmSeconds(H200GpuLlmCheck(), "bf16", 2048, 6144, 4096));
}

TEST(GpuLlmCheckPredict, Fp8GemmAtTheFp8PeakOnTheH200sFp8Curve) {
  // Square 4096 in FP8: F = 2 x 4096^3 = 137,438,953,472 at the FP8 peak
  // 1.979e15 on h200.json's efficiency.fp8 (fitted to this file's FP8 rows),
  // read at F itself, between (1e11, 0.6096) and (1.778e11, 0.6218):
  //   f = ln(1.37438953472) / ln(1.778) = 0.3180081 / 0.5754891 = 0.5525902
  //   eff = 0.6096 + f x 0.0122 = 0.6163416
  //   t = F / (1.979e15 x 0.6163416) = 1.37438953472e11 / 1.2197400e15 = 1.126789e-4 s
  // (no cast kernel: the measured product takes FP8 inputs).
  EXPECT_NEAR(PredictGpuGemmSeconds(H200GpuLlmCheck(), "fp8_e4m3", 4096, 4096, 4096), 1.126789e-4,
              1e-9);
  EXPECT_DOUBLE_EQ(PredictGpuGemmSeconds(H200GpuLlmCheck(), "fp8_e4m3_fast", 4096, 4096, 4096),
                   PredictGpuGemmSeconds(H200GpuLlmCheck(), "fp8_e4m3", 4096, 4096, 4096));
  EXPECT_THROW(PredictGpuGemmSeconds(H200GpuLlmCheck(), "fp32", 64, 64, 64), UsageError);
  EXPECT_THROW(PredictGpuGemmSeconds(LoadDevice("a100"), "fp8_e4m3", 64, 64, 64), UsageError);
}

TEST(GpuLlmCheckPredict, MemoryOpsAndAttention) {
  // copy forward, 134,217,728 bytes: beyond the memory curve's last point
  // (1e8, 0.8644), so eff 0.8644 of 4.8e12 B/s:
  //   t = 1.34217728e8 / (4.8e12 x 0.8644) = 1.34217728e8 / 4.14912e12 = 3.234849e-5 s
  GpuMemoryOp copy;
  copy.op = "copy";
  copy.bytes = 134217728;
  EXPECT_NEAR(PredictGpuMemoryOpSeconds(H200GpuLlmCheck(), copy), 3.234849e-5, 1e-10);
  // LayerNorm on the normalization curve (its plateau fitted to this file's
  // normalization rows), its last point (1e8, 0.3781):
  //   t = 1.34217728e8 / (4.8e12 x 0.3781) = 1.34217728e8 / 1.81488e12 = 7.395405e-5 s
  GpuMemoryOp norm = copy;
  norm.op = "layernorm";
  norm.normalizes_rows = true;
  EXPECT_NEAR(PredictGpuMemoryOpSeconds(H200GpuLlmCheck(), norm), 7.395405e-5, 1e-10);

  // Causal flash attention, b 1, 32 heads of 128, seq 1024: forward is one
  // kernel of F = 2 x 512 x 1024 x 128 x (2 x 32) = 8,589,934,592 (the CSV's
  // flops_causal) on the attention-forward curve (fitted to the cuDNN rows),
  // between (5.623e9, 0.239) and (1e10, 0.3035):
  //   f = ln(8.589934592e9 / 5.623e9) / ln(1e10 / 5.623e9) = 0.4237258 / 0.5757198 = 0.7359931
  //   eff = 0.239 + f x 0.0645 = 0.2864716
  //   t = 8.589934592e9 / (9.895e14 x 0.2864716) = 8.589934592e9 / 2.8346365e14 = 3.030348e-5 s
  GpuAttention a;
  a.pass = "fwd";
  a.batch = 1;
  a.heads = 32;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.seq = 1024;
  a.causal = true;
  EXPECT_NEAR(PredictGpuAttentionSeconds(H200GpuLlmCheck(), a), 3.030348e-5, 1e-10);
  // Forward and backward adds the backward kernel, 2.5 x F = 21,474,836,480,
  // on the attention-backward curve between (1.778e10, 0.1433) and (3.162e10, 0.2079):
  //   f = ln(2.147483648e10 / 1.778e10) / ln(3.162e10 / 1.778e10) = 0.1888076 / 0.5757156 =
  //   0.3279529; eff = 0.1433 + f x 0.0646 = 0.1644858; t = 2.147483648e10 / (9.895e14 x
  //   0.1644858) = 1.319428e-4 s; with the forward 1.622463e-4 s
  a.pass = "fwd_bwd";
  EXPECT_NEAR(PredictGpuAttentionSeconds(H200GpuLlmCheck(), a), 1.622463e-4, 1e-10);
}

// ---- The report ----------------------------------------------------------------

double MiddleOfGpuLlmCheck(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TEST(GpuLlmCheckReport, ClassMediansAreWhatTheRowsGive) {
  const GpuLlmCheck& c = CheckGpuLlmCheck();
  // Every GEMM, the 48 flash and cuDNN attention rows, every memory op.
  EXPECT_EQ(c.kernels.size(), 1492u + 48u + 32u);
  EXPECT_EQ(c.not_predicted, 52);  // default 24, efficient 12, eager 16
  size_t total = 0;
  for (const GpuLlmClassSummary& s : c.classes) {
    std::vector<double> abs_err, err;
    for (const GpuLlmRow& r : c.kernels) {
      if (r.cls != s.cls) continue;
      EXPECT_DOUBLE_EQ(r.error, r.predicted_s / r.measured_s - 1.0);
      abs_err.push_back(std::fabs(r.error));
      err.push_back(r.error);
    }
    ASSERT_EQ(static_cast<size_t>(s.n), err.size()) << s.cls;
    total += err.size();
    EXPECT_DOUBLE_EQ(s.median_abs_error, MiddleOfGpuLlmCheck(abs_err)) << s.cls;
    EXPECT_DOUBLE_EQ(s.median_error, MiddleOfGpuLlmCheck(err)) << s.cls;
    ASSERT_FALSE(s.worst.empty());
    EXPECT_DOUBLE_EQ(std::fabs(s.worst.front().error),
                     *std::max_element(abs_err.begin(), abs_err.end()))
        << s.cls;
  }
  EXPECT_EQ(total, c.kernels.size());
  // The bands split the 301 BF16 products by FLOPs (counted with awk: 7 below
  // 10 GFLOP, 44 to 100 GFLOP, 155 to 1 TFLOP, 95 above).
  std::map<std::string, int> n;
  for (const GpuLlmClassSummary& s : c.classes) n[s.cls] = s.n;
  EXPECT_EQ(n["BF16 GEMM < 10 GFLOP"], 7);
  EXPECT_EQ(n["BF16 GEMM 10-100 GFLOP"], 44);
  EXPECT_EQ(n["BF16 GEMM 0.1-1 TFLOP"], 155);
  EXPECT_EQ(n["BF16 GEMM >= 1 TFLOP"], 95);
  EXPECT_EQ(n["FP16 GEMM, vTrain's GPT shapes"], 480);
}

TEST(GpuLlmCheckReport, StepsAndTheMicroBatchOneRegime) {
  const GpuLlmCheck& c = CheckGpuLlmCheck();
  ASSERT_EQ(c.steps.size(), 19u);
  for (const GpuLlmStepRow& r : c.steps) {
    EXPECT_DOUBLE_EQ(r.calibrated_error, r.calibrated_s / r.step.median_s - 1.0);
    EXPECT_DOUBLE_EQ(r.uncalibrated_error, r.uncalibrated_s / r.step.median_s - 1.0);
  }
  // Both calibrations at micro-batches 1, 2, 4, 8, 16.
  ASSERT_EQ(c.step_classes.size(), 10u);
  EXPECT_EQ(c.step_classes[0].cls, "steps, calibrated, micro-batch 1");
  EXPECT_EQ(c.step_classes[0].n, 4);
  EXPECT_EQ(c.step_classes[4].n, 3);  // micro-batch 16: hf-transformers llama-1b ran out of memory

  ASSERT_EQ(c.regimes.size(), 4u);
  const GpuLlmRegime& g = c.regimes[0];
  EXPECT_EQ(g.model, "gpt2-medium");
  EXPECT_EQ(g.impl, "fitspeed-torch");
  EXPECT_DOUBLE_EQ(g.mb1_s, 52.6702e-3);
  EXPECT_DOUBLE_EQ(g.mb2_s, 48.1076e-3);
  EXPECT_DOUBLE_EQ(g.mb4_s, 44.922e-3);
  // The line through micro-batches 8 (76.4676 ms) and 16 (145.201 ms):
  // (145.201 - 76.4676) / 8 = 8.591675 ms per sequence; at 1:
  // 76.4676 - 7 x 8.591675 = 16.325875 ms; unexplained 1 - 16.325875 / 52.6702 = 0.6900360.
  EXPECT_EQ(g.line_b1, 8);
  EXPECT_EQ(g.line_b2, 16);
  EXPECT_NEAR(g.line_s, 16.325875e-3, 1e-9);
  EXPECT_NEAR(g.unexplained_line, 0.6900360, 1e-6);
  EXPECT_DOUBLE_EQ(g.unexplained_modeled, 1.0 - g.modeled_work_s / g.mb1_s);
  // hf-transformers llama-1b has no micro-batch 16: its line goes through 4 and 8.
  const GpuLlmRegime& h = c.regimes[3];
  EXPECT_EQ(h.model, "llama-1b");
  EXPECT_EQ(h.impl, "hf-transformers");
  EXPECT_EQ(h.line_b1, 4);
  EXPECT_EQ(h.line_b2, 8);
}

TEST(GpuLlmCheckReport, WritesEveryFormat) {
  std::ostringstream table, csv, json;
  WriteGpuLlmCheck(table, CheckGpuLlmCheck(), OutputFormat::kTable);
  WriteGpuLlmCheck(csv, CheckGpuLlmCheck(), OutputFormat::kCsv);
  WriteGpuLlmCheck(json, CheckGpuLlmCheck(), OutputFormat::kJson);
  EXPECT_NE(table.str().find("BF16 GEMM >= 1 TFLOP"), std::string::npos);
  EXPECT_NE(table.str().find("micro-batch-1 regime"), std::string::npos);
  // CSV: a header and one row per kernel and two per step.
  const std::string text = csv.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'),
            static_cast<long>(1 + CheckGpuLlmCheck().kernels.size() +
                              2 * CheckGpuLlmCheck().steps.size()));
  EXPECT_NE(json.str().find("\"schema\": \"fitspeed.gpu-llm-check/1\""), std::string::npos);
}

}  // namespace
}  // namespace fitspeed
