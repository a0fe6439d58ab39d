// The catalog's H200 against first-hand H200 measurements
// (fitspeed/evidence/gpu_llm_check.h; data/llm-gpu/README.md).
#include "fitspeed/evidence/gpu_llm_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/finite.h"
#include "core/median.h"
#include "core/table.h"
#include "evidence/csv_table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/llm/calibration.h"
#include "io/text.h"
#include "llm/layer_kernels.h"

namespace fitspeed {

namespace {

// ---- Reading -------------------------------------------------------------------

bool OneOfGpuLlmCheck(const std::string& value, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (value == name) return true;
  }
  return false;
}

std::string JoinGpuLlmCheck(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// The field of `name`, refused unless it is one of `names`.
const std::string& ChoiceGpuLlmCheck(const CsvTable& table, const CsvTable::Row& row,
                                     const char* name, std::initializer_list<const char*> names) {
  const std::string& value = table.Get(row, name);
  if (!OneOfGpuLlmCheck(value, names)) {
    throw DataError(table.source, row.line, name,
                    fmt::format("'{}' is none of {}", io::Excerpt(value), JoinGpuLlmCheck(names)));
  }
  return value;
}

// A whole number >= 1 that fits an int.
int SmallIntGpuLlmCheck(const CsvTable& table, const CsvTable::Row& row, const char* name) {
  const int64_t value = table.PositiveInt(row, name);
  if (value > 1'000'000'000) {
    throw DataError(table.source, row.line, name, fmt::format("{} is out of range", value));
  }
  return static_cast<int>(value);
}

// `value` (the file's count) equal to `expected` (computed from the row): both
// whole numbers below 2^53, exact in a double.
void RequireEqualGpuLlmCheck(const CsvTable& table, const CsvTable::Row& row, const char* name,
                             double value, double expected, const std::string& rule) {
  if (!(std::fabs(value - expected) < 0.5)) {
    throw DataError(
        table.source, row.line, name,
        fmt::format("{} is not {} = {}", FormatSig(value, 12), rule, FormatSig(expected, 12)));
  }
}

// True for a status-ok row; a row of another known status is recorded in
// `skipped`; an unknown status is a DataError.
bool TimedGpuLlmCheck(const CsvTable& table, const CsvTable::Row& row,
                      std::vector<GpuLlmSkippedRow>* skipped) {
  const std::string& status =
      ChoiceGpuLlmCheck(table, row, "status", {"ok", "error", "oom", "skipped"});
  if (status == "ok") return true;
  if (skipped) skipped->push_back({table.source, row.line, status, table.Get(row, "note")});
  return false;
}

double MillisecondsGpuLlmCheck(const CsvTable& table, const CsvTable::Row& row, const char* name) {
  return table.Positive(row, name) / 1000.0;
}

// The architecture bench/gpu/llm_kernels.py's STEP_MODELS give each step model
// beyond the shape its CSV rows state.
struct StepArchitectureGpuLlmCheck {
  const char* name;
  const char* architecture;
  int64_t ffn_per_hidden;  // 0: ffn given
  int64_t ffn;
  PositionEncoding positions;
  NormKind norm;
  FeedForwardKind feed_forward;
  bool bias;
  bool dropout;  // the script's dropout > 0
};
// gpt2-medium: ffn 4096 = 4 x 1024, learned positions, LayerNorm, GELU MLP,
// biases, tied head, dropout 0.1. llama-1b: Llama-3.2-1B's shape, ffn 8192,
// RoPE, RMSNorm, SwiGLU, no biases, tied head, no dropout.
constexpr StepArchitectureGpuLlmCheck kStepModelsGpuLlmCheck[] = {
    {"gpt2-medium", "gpt2", 4, 0, PositionEncoding::kLearned, NormKind::kLayerNorm,
     FeedForwardKind::kPlain, true, true},
    {"llama-1b", "llama", 0, 8192, PositionEncoding::kRope, NormKind::kRmsNorm,
     FeedForwardKind::kGated, false, false},
};

}  // namespace

std::vector<GpuGemm> ReadGpuGemms(const std::string& path, std::vector<GpuLlmSkippedRow>* skipped) {
  const CsvTable table =
      ReadCsvTable(path, {"section", "model", "op", "pass", "dtype", "m", "n", "k", "tp", "tokens",
                          "flops", "median_ms", "status", "note"});
  std::vector<GpuGemm> out;
  for (const CsvTable::Row& row : table.rows) {
    if (!TimedGpuLlmCheck(table, row, skipped)) continue;
    GpuGemm g;
    g.source = table.source;
    g.line = row.line;
    g.section = ChoiceGpuLlmCheck(table, row, "section", {"llm", "square", "vtrain"});
    g.model = table.Get(row, "model");
    g.op = table.Get(row, "op");
    g.pass = ChoiceGpuLlmCheck(table, row, "pass", {"fwd", "bwd_act", "bwd_weight"});
    g.dtype = ChoiceGpuLlmCheck(table, row, "dtype", {"bf16", "fp16", "fp8_e4m3", "fp8_e4m3_fast"});
    g.m = table.PositiveInt(row, "m");
    g.n = table.PositiveInt(row, "n");
    g.k = table.PositiveInt(row, "k");
    g.tp = SmallIntGpuLlmCheck(table, row, "tp");
    g.flops = table.Positive(row, "flops");
    RequireEqualGpuLlmCheck(
        table, row, "flops", g.flops,
        2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k),
        "2 m n k");
    g.median_s = MillisecondsGpuLlmCheck(table, row, "median_ms");
    out.push_back(std::move(g));
  }
  return out;
}

std::vector<GpuAttention> ReadGpuAttention(const std::string& path,
                                           std::vector<GpuLlmSkippedRow>* skipped) {
  const CsvTable table = ReadCsvTable(
      path, {"backend", "pass", "dtype", "batch", "heads", "kv_heads", "head_dim", "seq", "causal",
             "flops_full", "flops_causal", "median_ms", "status", "note"});
  std::vector<GpuAttention> out;
  for (const CsvTable::Row& row : table.rows) {
    if (!TimedGpuLlmCheck(table, row, skipped)) continue;
    GpuAttention a;
    a.source = table.source;
    a.line = row.line;
    a.backend = ChoiceGpuLlmCheck(table, row, "backend",
                                  {"default", "flash", "cudnn", "efficient", "eager"});
    a.pass = ChoiceGpuLlmCheck(table, row, "pass", {"fwd", "fwd_bwd"});
    ChoiceGpuLlmCheck(table, row, "dtype", {"bf16", "fp16"});
    a.batch = table.PositiveInt(row, "batch");
    a.heads = table.PositiveInt(row, "heads");
    a.kv_heads = table.PositiveInt(row, "kv_heads");
    a.head_dim = table.PositiveInt(row, "head_dim");
    a.seq = table.PositiveInt(row, "seq");
    if (a.heads % a.kv_heads != 0) {
      throw DataError(table.source, row.line, "kv_heads",
                      fmt::format("{} does not divide the {} heads", a.kv_heads, a.heads));
    }
    a.causal = ChoiceGpuLlmCheck(table, row, "causal", {"0", "1"}) == "1";
    // The bench's count: 4 b h s^2 d forward (scores and values), x 3.5 with
    // the backward pass; causal: half of it.
    const double full = 4.0 * static_cast<double>(a.batch) * static_cast<double>(a.heads) *
                        static_cast<double>(a.seq) * static_cast<double>(a.seq) *
                        static_cast<double>(a.head_dim) * (a.pass == "fwd_bwd" ? 3.5 : 1.0);
    RequireEqualGpuLlmCheck(table, row, "flops_full", table.Positive(row, "flops_full"), full,
                            "4 b h s^2 d (x 3.5 with the backward pass)");
    a.flops_causal = table.Positive(row, "flops_causal");
    RequireEqualGpuLlmCheck(table, row, "flops_causal", a.flops_causal, a.causal ? full / 2 : full,
                            a.causal ? "half of flops_full" : "flops_full");
    a.median_s = MillisecondsGpuLlmCheck(table, row, "median_ms");
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<GpuMemoryOp> ReadGpuMemoryOps(const std::string& path,
                                          std::vector<GpuLlmSkippedRow>* skipped) {
  const CsvTable table = ReadCsvTable(path, {"op", "impl", "pass", "dtype", "tokens", "hidden",
                                             "elements", "bytes", "median_ms", "status", "note"});
  std::vector<GpuMemoryOp> out;
  for (const CsvTable::Row& row : table.rows) {
    if (!TimedGpuLlmCheck(table, row, skipped)) continue;
    GpuMemoryOp o;
    o.source = table.source;
    o.line = row.line;
    o.op = ChoiceGpuLlmCheck(table, row, "op",
                             {"copy", "add", "layernorm", "rmsnorm", "gelu", "gelu_tanh",
                              "silu_mul", "softmax", "dropout"});
    o.impl = table.Get(row, "impl");
    o.pass = ChoiceGpuLlmCheck(table, row, "pass", {"fwd", "bwd"});
    ChoiceGpuLlmCheck(table, row, "dtype", {"bf16", "fp16"});
    o.tokens = table.PositiveInt(row, "tokens");
    o.hidden = table.PositiveInt(row, "hidden");
    RequireEqualGpuLlmCheck(table, row, "elements", table.Positive(row, "elements"),
                            static_cast<double>(o.tokens) * static_cast<double>(o.hidden),
                            "tokens x hidden");
    o.bytes = table.Positive(row, "bytes");
    o.median_s = MillisecondsGpuLlmCheck(table, row, "median_ms");
    o.normalizes_rows = OneOfGpuLlmCheck(o.op, {"layernorm", "rmsnorm", "softmax"});
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<GpuStep> ReadGpuSteps(const std::string& path, std::vector<GpuLlmSkippedRow>* skipped) {
  const CsvTable table = ReadCsvTable(
      path, {"model", "impl", "micro_batch", "seq", "tokens", "params", "layers", "hidden", "heads",
             "kv_heads", "vocab", "median_ms", "host_ms", "status", "note"});
  std::vector<GpuStep> out;
  for (const CsvTable::Row& row : table.rows) {
    if (!TimedGpuLlmCheck(table, row, skipped)) continue;
    GpuStep s;
    s.source = table.source;
    s.line = row.line;
    s.model = ChoiceGpuLlmCheck(table, row, "model", {"gpt2-medium", "llama-1b"});
    s.impl = ChoiceGpuLlmCheck(table, row, "impl", {"fitspeed-torch", "hf-transformers"});
    s.micro_batch = table.PositiveInt(row, "micro_batch");
    s.seq = table.PositiveInt(row, "seq");
    RequireEqualGpuLlmCheck(table, row, "tokens", table.Positive(row, "tokens"),
                            static_cast<double>(s.micro_batch) * static_cast<double>(s.seq),
                            "micro_batch x seq");
    const StepArchitectureGpuLlmCheck* arch = nullptr;
    for (const StepArchitectureGpuLlmCheck& a : kStepModelsGpuLlmCheck) {
      if (s.model == a.name) arch = &a;
    }
    FITSPEED_CHECK(arch != nullptr, "a step model without its architecture: " + s.model);
    TransformerConfig& m = s.config;
    m.name = s.model;
    m.architecture = arch->architecture;
    m.source = fmt::format("{}:{} (bench/gpu/llm_kernels.py STEP_MODELS)", table.source, row.line);
    m.layers = SmallIntGpuLlmCheck(table, row, "layers");
    m.hidden = SmallIntGpuLlmCheck(table, row, "hidden");
    m.heads = SmallIntGpuLlmCheck(table, row, "heads");
    m.kv_heads = SmallIntGpuLlmCheck(table, row, "kv_heads");
    m.vocab = SmallIntGpuLlmCheck(table, row, "vocab");
    if (m.hidden % m.heads != 0 || m.heads % m.kv_heads != 0) {
      throw DataError(table.source, row.line, "heads",
                      fmt::format("{} heads and {} key/value heads do not divide hidden {} and "
                                  "the heads",
                                  m.heads, m.kv_heads, m.hidden));
    }
    m.head_dim = m.hidden / m.heads;
    m.ffn_hidden = arch->ffn_per_hidden > 0 ? arch->ffn_per_hidden * m.hidden : arch->ffn;
    m.positions = arch->positions;
    m.max_positions = s.seq;
    m.norm = arch->norm;
    m.feed_forward = arch->feed_forward;
    m.attention_bias = arch->bias;
    m.feed_forward_bias = arch->bias;
    m.tied_embeddings = true;
    m.dropout = arch->dropout;
    const double params = table.Positive(row, "params");
    RequireEqualGpuLlmCheck(table, row, "params", params,
                            static_cast<double>(CountParameters(m).total),
                            "the parameters of the model built from the row's shape");
    s.median_s = MillisecondsGpuLlmCheck(table, row, "median_ms");
    s.host_s = MillisecondsGpuLlmCheck(table, row, "host_ms");
    out.push_back(std::move(s));
  }
  return out;
}

GpuLlmData ReadGpuLlmData(const std::string& dir) {
  GpuLlmData d;
  d.gemms = ReadGpuGemms(dir + "/gemm.csv", &d.skipped);
  d.attention = ReadGpuAttention(dir + "/attention.csv", &d.skipped);
  d.memory_ops = ReadGpuMemoryOps(dir + "/memory_ops.csv", &d.skipped);
  d.steps = ReadGpuSteps(dir + "/steps.csv", &d.skipped);
  return d;
}

// ---- Predictions -----------------------------------------------------------------

namespace {

// The catalog's curves as they are: LlmCalibration's neutral factors, no
// dispatch time, no per-step overhead.
LlmCalibration UncalibratedGpuLlmCheck() {
  LlmCalibration c;
  c.matrix_size_scale = 1;
  c.memory_scale = 1;
  c.dispatch_s = 0;
  c.step_overhead_s = 0;
  c.source =
      "uncalibrated: the catalog's curves (matrix and memory scale 1), no host dispatch, "
      "no per-step overhead";
  return c;
}

KernelTimer TimerGpuLlmCheck(const Device& device, MatrixFormat format) {
  KernelTimer t = MakeKernelTimer(device, format, UncalibratedGpuLlmCheck());
  t.fp8_casts = false;  // the measured products take their inputs in FP8 already
  return t;
}

}  // namespace

double PredictGpuGemmSeconds(const Device& device, const std::string& dtype, double m, double n,
                             double k) {
  MatrixFormat format = MatrixFormat::k16;
  if (dtype == "fp8_e4m3" || dtype == "fp8_e4m3_fast") {
    format = MatrixFormat::kFp8;
    if (!(device.fp8_flops_per_s > 0)) {
      throw UsageError(
          fmt::format("{} has no FP8 peak: cannot time an {} product", device.name, dtype));
    }
  } else if (dtype != "bf16" && dtype != "fp16") {
    throw UsageError(
        fmt::format("dtype '{}' is none of bf16, fp16, fp8_e4m3, fp8_e4m3_fast", dtype));
  }
  if (!(device.tensor16_flops_per_s > 0)) {
    throw UsageError(fmt::format("{} has no 16-bit matrix peak", device.name));
  }
  return TimerGpuLlmCheck(device, format).Gemm(m, n, k);
}

double PredictGpuAttentionSeconds(const Device& device, const GpuAttention& row) {
  const KernelTimer t = TimerGpuLlmCheck(device, MatrixFormat::k16);
  // The split model's flash attention (src/llm/layer_kernels.cc, TimeFlashAttention).
  const double seq = static_cast<double>(row.seq);
  const FlashAttentionTimes fa =
      TimeFlashAttention(t, static_cast<double>(row.batch) * static_cast<double>(row.heads), seq,
                         seq, static_cast<double>(row.head_dim), row.causal);
  double s = fa.forward_s;
  if (row.pass == "fwd_bwd") s += fa.backward_s;
  return s;
}

double PredictGpuMemoryOpSeconds(const Device& device, const GpuMemoryOp& row) {
  const KernelTimer t = TimerGpuLlmCheck(device, MatrixFormat::k16);
  return row.normalizes_rows ? t.NormalizationTime(row.bytes) : t.MemoryTime(row.bytes);
}

GpuStepSetup SetupForGpuStep(const GpuStep& step, const Device& device) {
  GpuStepSetup s;
  s.cluster = MakeCluster(device, 1);
  s.training.seq_len = step.seq;
  s.training.format = MatrixFormat::k16;  // autocast BF16
  s.training.flash_attention = true;      // SDPA picks the flash (or cuDNN) kernel
  s.training.gradient_bytes = 4;          // FP32 master weights: FP32 gradients
  s.split.micro_batch = step.micro_batch;
  s.split.global_batch = step.micro_batch;
  s.split.recompute = Recompute::kNone;
  return s;
}

// ---- The check -------------------------------------------------------------------

namespace {

GpuLlmRow MakeRowGpuLlmCheck(std::string cls, const std::string& source, int line,
                             std::string label, double measured_s, double predicted_s) {
  GpuLlmRow r;
  r.cls = std::move(cls);
  r.source = source;
  r.line = line;
  r.label = std::move(label);
  r.measured_s = measured_s;
  r.predicted_s = predicted_s;
  r.error = predicted_s / measured_s - 1.0;
  return r;
}

std::string GemmClassGpuLlmCheck(const GpuGemm& g) {
  if (g.dtype == "bf16") {
    if (g.flops < 1e10) return "BF16 GEMM < 10 GFLOP";
    if (g.flops < 1e11) return "BF16 GEMM 10-100 GFLOP";
    if (g.flops < 1e12) return "BF16 GEMM 0.1-1 TFLOP";
    return "BF16 GEMM >= 1 TFLOP";
  }
  if (g.dtype == "fp16") {
    return g.section == "vtrain" ? "FP16 GEMM, vTrain's GPT shapes"
                                 : "FP16 GEMM, LLM and square shapes";
  }
  return g.dtype == "fp8_e4m3" ? "FP8 GEMM (E4M3)" : "FP8 GEMM (E4M3, fast accumulation)";
}

// The classes in the report's order.
const std::vector<std::string>& ClassOrderGpuLlmCheck() {
  static const std::vector<std::string> order = {
      "BF16 GEMM < 10 GFLOP",
      "BF16 GEMM 10-100 GFLOP",
      "BF16 GEMM 0.1-1 TFLOP",
      "BF16 GEMM >= 1 TFLOP",
      "FP16 GEMM, vTrain's GPT shapes",
      "FP16 GEMM, LLM and square shapes",
      "FP8 GEMM (E4M3)",
      "FP8 GEMM (E4M3, fast accumulation)",
      "attention, flash, forward",
      "attention, flash, forward+backward",
      "attention, cuDNN, forward",
      "attention, cuDNN, forward+backward",
      "normalization (LayerNorm, RMSNorm, softmax)",
      "element-wise (copy, add, GELU, SiLU x mul, dropout)",
  };
  return order;
}

std::string StepClassGpuLlmCheck(bool calibrated, int64_t micro_batch) {
  return fmt::format("steps, {}, micro-batch {}", calibrated ? "calibrated" : "uncalibrated",
                     micro_batch);
}

// A step as a row of its class: under the carried calibration, or without.
GpuLlmRow StepRowGpuLlmCheck(const GpuLlmStepRow& r, bool calibrated) {
  const GpuStep& s = r.step;
  return MakeRowGpuLlmCheck(StepClassGpuLlmCheck(calibrated, s.micro_batch), s.source, s.line,
                            fmt::format("{} {} micro-batch {}", s.model, s.impl, s.micro_batch),
                            s.median_s, calibrated ? r.calibrated_s : r.uncalibrated_s);
}

}  // namespace

GpuLlmClassSummary SummarizeGpuLlmRows(const std::string& cls, const std::vector<GpuLlmRow>& rows) {
  GpuLlmClassSummary s;
  s.cls = cls;
  std::vector<double> abs_err, err;
  std::vector<GpuLlmRow> mine;
  for (const GpuLlmRow& r : rows) {
    if (r.cls != cls) continue;
    abs_err.push_back(std::fabs(r.error));
    err.push_back(r.error);
    mine.push_back(r);
  }
  s.n = static_cast<int>(mine.size());
  if (mine.empty()) {
    s.median_abs_error = s.median_error = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  s.median_abs_error = Median(abs_err);
  s.median_error = Median(err);
  std::stable_sort(mine.begin(), mine.end(), [](const GpuLlmRow& a, const GpuLlmRow& b) {
    return std::fabs(a.error) > std::fabs(b.error);
  });
  mine.resize(std::min<size_t>(mine.size(), 3));
  s.worst = std::move(mine);
  return s;
}

GpuLlmCheck CheckGpuLlm(const GpuLlmData& data, const Device& device) {
  GpuLlmCheck c;
  c.device = device.name;
  c.skipped = data.skipped;
  for (const GpuGemm& g : data.gemms) {
    const std::string label =
        g.section == "square"
            ? fmt::format("square {} {}", g.m, g.dtype)
            : fmt::format("{} {} {} tp {} {}x{}x{}", g.model, g.op, g.pass, g.tp, g.m, g.n, g.k);
    c.kernels.push_back(MakeRowGpuLlmCheck(
        GemmClassGpuLlmCheck(g), g.source, g.line, label, g.median_s,
        PredictGpuGemmSeconds(device, g.dtype, static_cast<double>(g.m), static_cast<double>(g.n),
                              static_cast<double>(g.k))));
  }
  for (const GpuAttention& a : data.attention) {
    if (a.backend != "flash" && a.backend != "cudnn") {
      ++c.not_predicted;
      continue;
    }
    const std::string cls =
        fmt::format("attention, {}, {}", a.backend == "flash" ? "flash" : "cuDNN",
                    a.pass == "fwd" ? "forward" : "forward+backward");
    const std::string label = fmt::format("{} {} heads {}/{} d {} seq {}", a.backend, a.pass,
                                          a.heads, a.kv_heads, a.head_dim, a.seq);
    c.kernels.push_back(MakeRowGpuLlmCheck(cls, a.source, a.line, label, a.median_s,
                                           PredictGpuAttentionSeconds(device, a)));
  }
  for (const GpuMemoryOp& o : data.memory_ops) {
    const std::string cls = o.normalizes_rows
                                ? "normalization (LayerNorm, RMSNorm, softmax)"
                                : "element-wise (copy, add, GELU, SiLU x mul, dropout)";
    const std::string label = fmt::format("{} {} {}x{}", o.op, o.pass, o.tokens, o.hidden);
    c.kernels.push_back(MakeRowGpuLlmCheck(cls, o.source, o.line, label, o.median_s,
                                           PredictGpuMemoryOpSeconds(device, o)));
  }
  for (const std::string& cls : ClassOrderGpuLlmCheck()) {
    GpuLlmClassSummary s = SummarizeGpuLlmRows(cls, c.kernels);
    if (s.n > 0) c.classes.push_back(std::move(s));
  }

  // Whole steps, with the carried calibration and without any.
  const LlmCalibration calibrated = LlmCalibrationFor(device);
  const LlmCalibration uncalibrated = UncalibratedGpuLlmCheck();
  c.calibration_source = calibrated.source;
  c.calibration_dispatch_s = calibrated.dispatch_s;
  std::vector<GpuLlmRow> step_rows;
  std::vector<int64_t> micro_batches;
  for (const GpuStep& s : data.steps) {
    const GpuStepSetup setup = SetupForGpuStep(s, device);
    GpuLlmStepRow r;
    r.step = s;
    r.calibrated_s =
        ModelLlmStep(s.config, setup.cluster, setup.training, setup.split, calibrated).step_s;
    r.uncalibrated_s =
        ModelLlmStep(s.config, setup.cluster, setup.training, setup.split, uncalibrated).step_s;
    r.calibrated_error = r.calibrated_s / s.median_s - 1.0;
    r.uncalibrated_error = r.uncalibrated_s / s.median_s - 1.0;
    c.steps.push_back(r);
    for (bool cal : {true, false}) step_rows.push_back(StepRowGpuLlmCheck(r, cal));
    if (std::find(micro_batches.begin(), micro_batches.end(), s.micro_batch) == micro_batches.end())
      micro_batches.push_back(s.micro_batch);
  }
  std::sort(micro_batches.begin(), micro_batches.end());
  for (bool cal : {true, false}) {
    for (int64_t mb : micro_batches) {
      c.step_classes.push_back(SummarizeGpuLlmRows(StepClassGpuLlmCheck(cal, mb), step_rows));
    }
  }

  // The micro-batch-1 regime per (model, impl), in file order.
  std::vector<std::pair<std::string, std::string>> keys;
  for (const GpuLlmStepRow& r : c.steps) {
    const auto key = std::make_pair(r.step.model, r.step.impl);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [model, impl] : keys) {
    std::map<int64_t, const GpuLlmStepRow*> by_mb;
    for (const GpuLlmStepRow& r : c.steps) {
      if (r.step.model == model && r.step.impl == impl) by_mb[r.step.micro_batch] = &r;
    }
    auto measured = [&](int64_t mb) { return by_mb.count(mb) ? by_mb[mb]->step.median_s : nan; };
    GpuLlmRegime g;
    g.model = model;
    g.impl = impl;
    g.mb1_s = measured(1);
    g.mb2_s = measured(2);
    g.mb4_s = measured(4);
    g.modeled_work_s = by_mb.count(1) ? by_mb[1]->uncalibrated_s : nan;
    g.unexplained_modeled = 1.0 - g.modeled_work_s / g.mb1_s;
    g.line_s = nan;
    g.unexplained_line = nan;
    if (by_mb.size() >= 2) {
      // The two largest micro-batches measured: T(b) = t + b / v0 through them.
      auto last = by_mb.rbegin();
      const GpuLlmStepRow* hi = last->second;
      const GpuLlmStepRow* lo = (++last)->second;
      g.line_b1 = lo->step.micro_batch;
      g.line_b2 = hi->step.micro_batch;
      const double per_sequence =
          (hi->step.median_s - lo->step.median_s) / static_cast<double>(g.line_b2 - g.line_b1);
      g.line_s = lo->step.median_s - per_sequence * static_cast<double>(g.line_b1 - 1);
      g.unexplained_line = 1.0 - g.line_s / g.mb1_s;
    }
    c.regimes.push_back(g);
  }
  return c;
}

// ---- Writing ---------------------------------------------------------------------

namespace {

std::string PercentGpuLlmCheck(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", 100 * fraction) : "-";
}
std::string SignedPercentGpuLlmCheck(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:+.1f}%", 100 * fraction) : "-";
}
std::string MsGpuLlmCheck(double seconds) {
  return std::isfinite(seconds) ? FormatSig(seconds * 1e3, 4) : "-";
}

nlohmann::ordered_json RowJsonGpuLlmCheck(const GpuLlmRow& r) {
  return {{"class", r.cls},   {"source", r.source},         {"line", r.line},
          {"label", r.label}, {"measured_s", r.measured_s}, {"predicted_s", r.predicted_s},
          {"error", r.error}};
}

nlohmann::ordered_json SummaryJsonGpuLlmCheck(const GpuLlmClassSummary& s) {
  nlohmann::ordered_json j = {
      {"class", s.cls},
      {"n", s.n},
      {"median_abs_error", FiniteOrNull<nlohmann::ordered_json>(s.median_abs_error)},
      {"median_error", FiniteOrNull<nlohmann::ordered_json>(s.median_error)}};
  j["worst"] = nlohmann::ordered_json::array();
  for (const GpuLlmRow& r : s.worst) j["worst"].push_back(RowJsonGpuLlmCheck(r));
  return j;
}

void WriteJsonGpuLlmCheck(std::ostream& out, const GpuLlmCheck& c) {
  nlohmann::ordered_json j;
  j["schema"] = "fitspeed.gpu-llm-check/1";
  j["device"] = c.device;
  j["error"] = "predicted / measured - 1 of the times: positive when the model is too slow";
  j["kernel_rule"] =
      "the split model's KernelTimer with matrix and memory scale 1 and no dispatch time (no "
      "calibration); FP8 products without the cast kernel";
  j["calibration"] = {{"source", c.calibration_source}, {"dispatch_s", c.calibration_dispatch_s}};
  j["classes"] = nlohmann::ordered_json::array();
  for (const GpuLlmClassSummary& s : c.classes) j["classes"].push_back(SummaryJsonGpuLlmCheck(s));
  j["kernels"] = nlohmann::ordered_json::array();
  for (const GpuLlmRow& r : c.kernels) j["kernels"].push_back(RowJsonGpuLlmCheck(r));
  j["attention_not_predicted"] = c.not_predicted;
  j["steps"] = nlohmann::ordered_json::array();
  for (const GpuLlmStepRow& r : c.steps) {
    j["steps"].push_back({{"source", r.step.source},
                          {"line", r.step.line},
                          {"model", r.step.model},
                          {"impl", r.step.impl},
                          {"micro_batch", r.step.micro_batch},
                          {"seq_len", r.step.seq},
                          {"measured_s", r.step.median_s},
                          {"host_s", r.step.host_s},
                          {"calibrated_s", r.calibrated_s},
                          {"calibrated_error", r.calibrated_error},
                          {"uncalibrated_s", r.uncalibrated_s},
                          {"uncalibrated_error", r.uncalibrated_error}});
  }
  j["step_classes"] = nlohmann::ordered_json::array();
  for (const GpuLlmClassSummary& s : c.step_classes) {
    j["step_classes"].push_back(SummaryJsonGpuLlmCheck(s));
  }
  j["micro_batch_1"] = nlohmann::ordered_json::array();
  for (const GpuLlmRegime& g : c.regimes) {
    j["micro_batch_1"].push_back(
        {{"model", g.model},
         {"impl", g.impl},
         {"mb1_s", FiniteOrNull<nlohmann::ordered_json>(g.mb1_s)},
         {"mb2_s", FiniteOrNull<nlohmann::ordered_json>(g.mb2_s)},
         {"mb4_s", FiniteOrNull<nlohmann::ordered_json>(g.mb4_s)},
         {"modeled_work_s", FiniteOrNull<nlohmann::ordered_json>(g.modeled_work_s)},
         {"unexplained_modeled", FiniteOrNull<nlohmann::ordered_json>(g.unexplained_modeled)},
         {"line_micro_batches", {g.line_b1, g.line_b2}},
         {"line_s", FiniteOrNull<nlohmann::ordered_json>(g.line_s)},
         {"unexplained_line", FiniteOrNull<nlohmann::ordered_json>(g.unexplained_line)}});
  }
  j["skipped"] = nlohmann::ordered_json::array();
  for (const GpuLlmSkippedRow& s : c.skipped) {
    j["skipped"].push_back(
        {{"source", s.source}, {"line", s.line}, {"status", s.status}, {"note", s.note}});
  }
  out << j.dump(2) << "\n";
}

void WriteCsvGpuLlmCheck(std::ostream& out, const GpuLlmCheck& c) {
  TextTable t({"class", "source", "line", "label", "measured_s", "predicted_s", "error"});
  auto add = [&](const GpuLlmRow& r) {
    t.AddRow({r.cls, r.source, std::to_string(r.line), r.label, FormatSig(r.measured_s, 6),
              FormatSig(r.predicted_s, 6), FormatSig(r.error, 6)});
  };
  for (const GpuLlmRow& r : c.kernels) add(r);
  for (const GpuLlmStepRow& r : c.steps) {
    for (bool cal : {true, false}) add(StepRowGpuLlmCheck(r, cal));
  }
  out << t.RenderCsv();
}

std::string FileLineGpuLlmCheck(const std::string& source, int line) {
  const size_t slash = source.find_last_of('/');
  return fmt::format("{}:{}", slash == std::string::npos ? source : source.substr(slash + 1), line);
}

void WriteTableGpuLlmCheck(std::ostream& out, const GpuLlmCheck& c) {
  out << fmt::format(
      "The catalog's {} against first-hand H200 measurements (data/llm-gpu: one run, 2026-11-27, "
      "bench/gpu/llm_kernels.py). The Hopper devices' BF16/FP16 and FP8 matrix curves are "
      "fitted to the GEMM rows, their attention curves to the cuDNN attention rows and their "
      "normalization plateau to the LayerNorm, RMSNorm and softmax rows (`validate kernels`): "
      "those rows are in sample; nothing in the flash, memory-efficient and eager attention, "
      "element-wise and step rows set or chose a catalog number. error = "
      "predicted / measured - 1 of the times (positive: the model is too slow, pessimistic). "
      "Kernels by the split model's "
      "rules (src/llm/layer_kernels.cc) with no calibration: matrix and memory scale 1, no "
      "dispatch time; FP8 products without the cast kernel\n",
      c.device);
  TextTable s({"class", "n", "median |err|", "median err"});
  for (const GpuLlmClassSummary& k : c.classes) {
    s.AddRow({k.cls, std::to_string(k.n), PercentGpuLlmCheck(k.median_abs_error),
              SignedPercentGpuLlmCheck(k.median_error)});
  }
  out << s.Render();
  if (c.not_predicted > 0) {
    out << fmt::format(
        "{} attention rows of the default, memory-efficient and eager paths are read, not "
        "predicted\n",
        c.not_predicted);
  }
  out << "\nworst rows (largest |err| of each class)\n";
  TextTable w({"class", "row", "what", "measured ms", "predicted ms", "err"});
  for (const GpuLlmClassSummary& k : c.classes) {
    for (const GpuLlmRow& r : k.worst) {
      w.AddRow({k.cls, FileLineGpuLlmCheck(r.source, r.line), r.label, MsGpuLlmCheck(r.measured_s),
                MsGpuLlmCheck(r.predicted_s), SignedPercentGpuLlmCheck(r.error)});
    }
  }
  out << w.Render();

  out << fmt::format(
      "\nwhole steps on one {} (tp = pp = dp = 1, global batch = micro-batch, BF16, flash "
      "attention, no recomputation): calibrated = LlmCalibrationFor({}), {}; uncalibrated = "
      "the device's work alone (scales 1, no dispatch, no step overhead)\n",
      c.device, c.device, c.calibration_source);
  TextTable st({"model", "impl", "mb", "measured ms", "host ms", "calibrated ms", "err",
                "uncalibrated ms", "err"});
  for (const GpuLlmStepRow& r : c.steps) {
    st.AddRow({r.step.model, r.step.impl, std::to_string(r.step.micro_batch),
               MsGpuLlmCheck(r.step.median_s), MsGpuLlmCheck(r.step.host_s),
               MsGpuLlmCheck(r.calibrated_s), SignedPercentGpuLlmCheck(r.calibrated_error),
               MsGpuLlmCheck(r.uncalibrated_s), SignedPercentGpuLlmCheck(r.uncalibrated_error)});
  }
  out << st.Render();
  TextTable sc({"steps by", "n", "median |err|", "median err"});
  for (const GpuLlmClassSummary& k : c.step_classes) {
    sc.AddRow({k.cls.substr(std::string("steps, ").size()), std::to_string(k.n),
               PercentGpuLlmCheck(k.median_abs_error), SignedPercentGpuLlmCheck(k.median_error)});
  }
  out << sc.Render();

  out << "\nthe micro-batch-1 regime: the measured steps at micro-batch 1, 2 and 4; the device's "
         "work at micro-batch 1 by the uncalibrated model, and by the line T(b) = t + b/v0 "
         "through the two largest measured micro-batches; unexplained = 1 - work / measured\n";
  TextTable rg({"model", "impl", "mb 1 ms", "mb 2 ms", "mb 4 ms", "modeled work ms", "unexplained",
                "line through", "line at 1 ms", "unexplained"});
  for (const GpuLlmRegime& g : c.regimes) {
    rg.AddRow({g.model, g.impl, MsGpuLlmCheck(g.mb1_s), MsGpuLlmCheck(g.mb2_s),
               MsGpuLlmCheck(g.mb4_s), MsGpuLlmCheck(g.modeled_work_s),
               PercentGpuLlmCheck(g.unexplained_modeled),
               fmt::format("mb {} and {}", g.line_b1, g.line_b2), MsGpuLlmCheck(g.line_s),
               PercentGpuLlmCheck(g.unexplained_line)});
  }
  out << rg.Render();
  for (const GpuLlmSkippedRow& k : c.skipped) {
    out << fmt::format("not timed: {} ({}): {}\n", FileLineGpuLlmCheck(k.source, k.line), k.status,
                       io::Excerpt(k.note, 60));
  }
}

}  // namespace

void WriteGpuLlmCheck(std::ostream& out, const GpuLlmCheck& check, OutputFormat format) {
  switch (format) {
    case OutputFormat::kJson:
      WriteJsonGpuLlmCheck(out, check);
      break;
    case OutputFormat::kCsv:
      WriteCsvGpuLlmCheck(out, check);
      break;
    case OutputFormat::kTable:
      WriteTableGpuLlmCheck(out, check);
      break;
  }
}

}  // namespace fitspeed
