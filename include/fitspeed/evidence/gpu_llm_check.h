// The catalog's H200 against this project's own H200 measurements
// (data/llm-gpu/README.md: bench/gpu/llm_kernels.py, one run on 2026-11-27):
// GEMMs, attention and memory-bound kernels at transformer shapes, and whole
// training steps of GPT-2-medium and a Llama-3.2-1B-shaped decoder, each
// predicted by the rules the LLM split model uses (src/llm/layer_kernels.cc)
// and ModelLlmStep. The GEMM rows are the Hopper devices' matrix curves' fit
// data (ReadFirstHandGemms, fitspeed/evidence/kernels.h) and the
// normalization rows their normalization plateau's
// (FitFirstHandNormalizationPlateau): in sample. The attention, element-wise
// and step rows test the catalog out of sample:
// nothing in them sets or chooses any catalog number or model constant
// (docs/validation.md, "First-hand H200 measurements").
//
//   fitspeed::GpuLlmData data = fitspeed::ReadGpuLlmData("data/llm-gpu");
//   fitspeed::GpuLlmCheck check = fitspeed::CheckGpuLlm(data, fitspeed::LoadDevice("h200"));
//   fitspeed::WriteGpuLlmCheck(std::cout, check, fitspeed::OutputFormat::kTable);
#ifndef FITSPEED_EVIDENCE_GPU_LLM_CHECK_H_
#define FITSPEED_EVIDENCE_GPU_LLM_CHECK_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/output_format.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"

namespace fitspeed {

// A row the bench did not time (status error, oom or skipped): not read further.
struct GpuLlmSkippedRow {
  std::string source;
  int line = 0;
  std::string status;
  std::string note;
};

// One matrix product of gemm.csv (status ok).
struct GpuGemm {
  std::string source;
  int line = 0;
  std::string section;  // "llm" (layer shapes), "square", "vtrain" (vTrain's GPT shapes)
  std::string model;    // "llama-3-8b", "vtrain-gpt-h1024", "square"
  std::string op;       // "qkv", "attn_out", "ffn_up", "ffn_up_gate", "ffn_down", "matmul"
  std::string pass;     // "fwd", "bwd_act", "bwd_weight"
  std::string dtype;    // "bf16", "fp16", "fp8_e4m3", "fp8_e4m3_fast"
  int64_t m = 0, n = 0, k = 0;
  int tp = 1;
  double flops = 0;     // 2 m n k (checked)
  double median_s = 0;  // the median of the timed repetitions
};

// One causal SDPA call of attention.csv (status ok).
struct GpuAttention {
  std::string source;
  int line = 0;
  std::string backend;  // "default", "flash", "cudnn", "efficient", "eager"
  std::string pass;     // "fwd" or "fwd_bwd"
  int64_t batch = 0, heads = 0, kv_heads = 0, head_dim = 0, seq = 0;
  bool causal = true;
  double flops_causal = 0;  // the unmasked half: 2 x 2 b h s^2 d / 2 (x 3.5 forward and backward)
  double median_s = 0;
};

// One memory-bound kernel of memory_ops.csv (status ok).
struct GpuMemoryOp {
  std::string source;
  int line = 0;
  std::string op;    // "copy", "add", "layernorm", "rmsnorm", "gelu", "gelu_tanh", "silu_mul",
                     // "softmax", "dropout"
  std::string impl;  // the PyTorch call
  std::string pass;  // "fwd" or "bwd"
  int64_t tokens = 0, hidden = 0;
  double bytes = 0;  // the minimum traffic the bench counts (inputs read, outputs written once)
  double median_s = 0;
  // LayerNorm, RMSNorm and softmax: a reduction over each row, timed on the
  // device's normalization curve; the others on its element-wise curve.
  bool normalizes_rows = false;
};

// One whole training step of steps.csv (status ok).
struct GpuStep {
  std::string source;
  int line = 0;
  std::string model;  // "gpt2-medium" or "llama-1b"
  std::string impl;   // "fitspeed-torch" (the script's own decoder) or "hf-transformers"
  int64_t micro_batch = 0;
  // The shape: the CSV's layers, hidden, heads, kv_heads, vocab and seq, the
  // rest (feed-forward size, positions, norm, gating, biases, tied head) as
  // bench/gpu/llm_kernels.py's STEP_MODELS build the model; its parameter
  // count is checked against the CSV's `params`.
  TransformerConfig config;
  int64_t seq = 0;
  double median_s = 0;  // GPU time per step (CUDA events around each step)
  double host_s = 0;    // wall time per step over the timed loop
};

struct GpuLlmData {
  std::vector<GpuGemm> gemms;
  std::vector<GpuAttention> attention;
  std::vector<GpuMemoryOp> memory_ops;
  std::vector<GpuStep> steps;
  std::vector<GpuLlmSkippedRow> skipped;  // of all four files
};

// The readers: every status-ok row; rows of another status (error, oom,
// skipped) go to `skipped` when given. InputError when the file cannot be
// read; DataError(file, line, field) for a missing column, a field that is
// not a number in range, an unknown status, dtype, backend, pass, op or step
// model, FLOPs that are not 2 m n k (GEMMs) or not the causal count
// (attention), and a step whose parameter count differs from the model built
// from its shape.
std::vector<GpuGemm> ReadGpuGemms(const std::string& path,
                                  std::vector<GpuLlmSkippedRow>* skipped = nullptr);
std::vector<GpuAttention> ReadGpuAttention(const std::string& path,
                                           std::vector<GpuLlmSkippedRow>* skipped = nullptr);
std::vector<GpuMemoryOp> ReadGpuMemoryOps(const std::string& path,
                                          std::vector<GpuLlmSkippedRow>* skipped = nullptr);
std::vector<GpuStep> ReadGpuSteps(const std::string& path,
                                  std::vector<GpuLlmSkippedRow>* skipped = nullptr);
// gemm.csv, attention.csv, memory_ops.csv and steps.csv of `dir`.
GpuLlmData ReadGpuLlmData(const std::string& dir);

// ---- Predictions (the split model's rules, no calibration) ------------------
//
// The kernels are timed by KernelTimer (src/llm/layer_kernels.h) built with
// LlmCalibration's neutral factors (matrix and memory scale 1) and no
// dispatch time: the catalog's curves as they are.

// A matrix product: F / (peak x TensorEfficiency().At(F x curve_size) x
// ShapeFactor(m, n, k)), F = 2 m n k; "bf16" and "fp16" at the 16-bit peak
// (curve_size 1), "fp8_e4m3" and "fp8_e4m3_fast" at fp8_flops_per_s with
// curve_size = peak16 / peak8. The measured FP8 product takes FP8 inputs, so
// the split model's cast kernel is not added. UsageError for another dtype or
// a device without that peak.
double PredictGpuGemmSeconds(const Device& device, const std::string& dtype, double m, double n,
                             double k);
// Causal flash attention as the split model times it: one kernel of the
// unmasked half of the score and value products forward, 2.5x that backward
// (`pass` "fwd" or "fwd_bwd").
double PredictGpuAttentionSeconds(const Device& device, const GpuAttention& row);
// bytes / (bandwidth x curve(bytes)), the normalization curve for row reductions.
double PredictGpuMemoryOpSeconds(const Device& device, const GpuMemoryOp& row);

// The one-GPU setup a step row ran: tp = pp = dp = 1, micro-batch = global
// batch = the row's, BF16 (16-bit matrix products), flash attention, no
// recomputation, FP32 gradients (autocast keeps the master weights in FP32).
struct GpuStepSetup {
  LlmCluster cluster;
  LlmTraining training;
  LlmSplit split;
};
GpuStepSetup SetupForGpuStep(const GpuStep& step, const Device& device);

// ---- The check ---------------------------------------------------------------

// One predicted measurement: a kernel, or a step under one calibration.
struct GpuLlmRow {
  std::string cls;  // the class it is summarized in ("BF16 GEMM 10-100 GFLOP", ...)
  std::string source;
  int line = 0;
  std::string label;  // what it is ("llama-3-70b ffn_down bwd_act tp 2 2048x8192x3584")
  double measured_s = 0;
  double predicted_s = 0;
  double error = 0;  // predicted / measured - 1 of the times: positive when the model is too slow
};

// The rows of one class: median |error|, median signed error and the worst rows.
struct GpuLlmClassSummary {
  std::string cls;
  int n = 0;
  double median_abs_error = 0;
  double median_error = 0;
  std::vector<GpuLlmRow> worst;  // the largest |error| first, at most three
};

// One step row, predicted twice.
struct GpuLlmStepRow {
  GpuStep step;
  double calibrated_s = 0;  // with LlmCalibrationFor(device) (carried from vTrain's A100 fit)
  double uncalibrated_s =
      0;  // the device's work alone: matrix/memory scale 1, no dispatch, no overhead
  double calibrated_error = 0;
  double uncalibrated_error = 0;
};

// The micro-batch-1 regime of one (model, impl): the measured steps at
// micro-batch 1, 2 and 4 and what of the micro-batch-1 step the device's work
// explains, by the uncalibrated model and by the line through the two largest
// measured micro-batches (T(b) = b / v0 + t, evaluated at b = 1).
struct GpuLlmRegime {
  std::string model, impl;
  double mb1_s = 0, mb2_s = 0, mb4_s = 0;  // NaN where not measured
  double modeled_work_s = 0;               // uncalibrated prediction at micro-batch 1
  double unexplained_modeled = 0;          // 1 - modeled_work_s / mb1_s
  int64_t line_b1 = 0, line_b2 = 0;        // the micro-batches the line goes through
  double line_s = 0;                       // the line at micro-batch 1
  double unexplained_line = 0;             // 1 - line_s / mb1_s
};

struct GpuLlmCheck {
  std::string device;                       // the device's name ("h200")
  std::string calibration_source;           // LlmCalibrationFor(device).source
  double calibration_dispatch_s = 0;        // its host dispatch per kernel
  std::vector<GpuLlmRow> kernels;           // every predicted kernel row, in file order
  std::vector<GpuLlmClassSummary> classes;  // in the report's order
  int not_predicted = 0;  // attention rows of other backends (default, efficient, eager)
  std::vector<GpuLlmStepRow> steps;
  std::vector<GpuLlmClassSummary> step_classes;  // per calibration and micro-batch
  std::vector<GpuLlmRegime> regimes;
  std::vector<GpuLlmSkippedRow> skipped;
};

// Summarizes `rows` of one class (exposed for the tests).
GpuLlmClassSummary SummarizeGpuLlmRows(const std::string& cls, const std::vector<GpuLlmRow>& rows);

GpuLlmCheck CheckGpuLlm(const GpuLlmData& data, const Device& device);

// Table: the per-class summary, the worst rows, the steps per micro-batch and
// the micro-batch-1 regime; CSV: every predicted row (kernels, then each step
// under both calibrations); JSON "fitspeed.gpu-llm-check/1": all of it.
void WriteGpuLlmCheck(std::ostream& out, const GpuLlmCheck& check, OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_GPU_LLM_CHECK_H_
