// Published LLM training measurements (data/measured/llm/README.md), one
// LlmCase per row: vTrain's 1,440 iteration times of GPT models on one node of
// A100s and MLPerf Training's GPT-3 175B and Llama-2-70B LoRA throughputs
// (rounds 3.0 to 4.1). What the LLM planner (src/llm) is validated against;
// nothing here models them.
#ifndef FITSPEED_EVIDENCE_LLM_CASES_H_
#define FITSPEED_EVIDENCE_LLM_CASES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fitspeed {

// What one MLPerf LLM run's own configuration records, as read from the
// submitters' files (data/measured/llm/mlperf_llm_run_settings.csv; README
// there says how each was read): the settings the split model can take, the
// configuration's own words, and what the model cannot express.
struct MlperfLlmSettings {
  std::string source;  // the settings file
  int line = 0;        // the row's 1-based line in `source`
  // The run: the throughput table's round, submitter, system and benchmark.
  std::string round, submitter, system, benchmark;
  // The recomputation level the setting maps to: "none", "selective" or
  // "full" (split.h's Recompute names), or "selective-or-full" for a setting
  // between the two (the lower of them that fits in the modeled memory);
  // recompute_setting is the configuration's own text ("remat_policy=minimal").
  std::string recompute;
  std::string recompute_setting;
  // FP8 attention (Transformer Engine's fp8_dot_product_attention): true,
  // false, or not recorded.
  std::optional<bool> fp8_attention;
  // The optimizer's sharding stage: 0 (none), 1 (Megatron's distributed
  // optimizer), 3 (DeepSpeed ZeRO-3, MaxText's FSDP).
  int zero = 0;
  // The weights held in FP8 alone (NeMo's fp8_params; LlmTraining::fp8_weights).
  bool fp8_weights = false;
  // Dropout in the transformer layers (a hidden or attention dropout
  // probability > 0; LoRA's adapter dropout not counted): true, false (the
  // model's TransformerConfig::dropout is set from it), or not recorded.
  std::optional<bool> dropout;
  // Transformer Engine's userbuffers tensor-parallel communication overlap
  // (NeMo's ub_tp_comm_overlap, TP_COMM_OVERLAP): true, false, or not
  // recorded or not applicable. Recorded only: the split model does not
  // overlap tensor-parallel collectives (not_modeled says so where on).
  std::optional<bool> tp_comm_overlap;
  // Bytes per gradient element reduced across the data-parallel ranks: 2
  // (NeMo's distributed optimizer with grad_sync_dtype bf16), 4 (FP32), or
  // not recorded (validate llm then assumes Megatron's FP32 main_grad, 4).
  std::optional<int> gradient_bytes;
  // LoRA's dropout on the adapters' input (NeMo's adapter_dropout, the
  // DeepSpeed runs' lora_dropout: 0.1): true (LlmTraining::lora_dropout),
  // false, or not recorded.
  std::optional<bool> lora_dropout;
  // The SwiGLU's input kept in FP8 for the backward pass (Megatron's
  // activation_func_fp8_input_store, set by NeMo's MLPerf FP8_ACTIVATION):
  // true (LlmTraining::activation_fp8_store), false, or not recorded.
  std::optional<bool> activation_fp8_store;
  // How it was read ("config (...)", "printed config in the result log",
  // "family: ..."), from where (repository, commit, ';'-separated paths),
  // and the recorded settings the split model cannot express (" | " between
  // them; "" none).
  std::string evidence, source_repo, source_commit, source_paths, not_modeled;
};

struct LlmCase {
  // The organization whose harness produced the run: "VIA-Research (vTrain)",
  // or MLPerf's submitter ("NVIDIA", "Dell", "smc-ac-power").
  std::string publisher;
  std::string source;  // the table's file
  int line = 0;        // the row's 1-based line in `source`
  std::string round;   // MLPerf round ("v4.0"); "" for vTrain
  // MLPerf's system ("dgxh100_n64_nemo"); vTrain: "1 node of 8 A100 (NVLink)",
  // of which a row uses 2, 4 or 8.
  std::string system;
  // "gpt3", "llama2_70b_lora" (MLPerf) or "vtrain-gpt".
  std::string benchmark;
  std::string accelerator;  // as the table names it ("NVIDIA H100-SXM5-80GB"; vTrain "A100")
  // The catalog device it maps to ("h100", "tpu-v6e"), by name only: the
  // device file need not exist yet. vTrain: "a100" (40 GB, assumed: the memory
  // size is not stated; README).
  std::string device;
  int accelerators = 0;  // in the run, all nodes
  int nodes = 0;

  // The model: GPT-3 175B (96 layers, 12288 hidden, 96 heads) and Llama-2-70B
  // (80, 8192, 64 heads, 8 KV heads) by benchmark name; vTrain's from its row.
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;          // = heads without grouped-query attention
  int seq_len = 0;           // tokens per sequence
  int64_t global_batch = 0;  // sequences per optimizer step

  // The split, when known (split_known): micro-batch (sequences), tensor,
  // pipeline, virtual pipeline (interleaved stages; 0 when none), context and
  // data parallel degrees, dp*tp*pp*cp = accelerators. MLPerf rows whose
  // configuration could not be matched have split_known false and these 0.
  bool split_known = true;
  int micro_batch = 0;
  int tp = 0;
  int pp = 0;
  int vp = 0;
  int cp = 0;
  int dp = 0;

  std::string precision;  // of the matrix products: "fp16", "bf16", "fp8", "int8"; "" not stated
  bool lora = false;      // LoRA fine-tuning: frozen base, rank-16 adapters trained
  // The same run as another row (identical timestamps; MLPerf's method column
  // says DUPLICATE): count it once.
  bool duplicate = false;

  // The measurement: vTrain's time of one optimizer step (s), MLPerf's tokens
  // per second of the whole run; the other is 0.
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  // MLPerf: the throughput was measured between eval_accuracy events, so it
  // includes evaluation and reads low (about 9% for gpt3, 17% for LoRA; README).
  bool includes_eval = false;
  int logs = 0;           // MLPerf: result logs the median was taken over
  std::string framework;  // MLPerf's framework column; vTrain "Megatron-DeepSpeed"
  // MLPerf: what the run's own configuration records (AttachMlperfLlmSettings);
  // empty where it was not read and the validation assumes.
  std::optional<MlperfLlmSettings> settings;
};

// Reads vTrain's data/ground_truth_single.csv (UTF-8 byte-order mark
// allowed): columns `# GPUs`, `global batch`, `micro batch`, `hidden size`,
// `attention heads`, `# layers`, `sequence length`, `tensor parallelism`,
// `data parallelism`, `pipeline parallelism`, `iteration time (ms)`. Throws
// InputError when the file cannot be opened, DataError(file, line, field) on
// a missing column, a field that is not a whole number >= 1 (the time: a
// number > 0), tp*pp*dp != `# GPUs`, or a global batch that is not a multiple
// of micro batch x dp.
std::vector<LlmCase> ReadVtrainCases(const std::string& path);

// Reads the MLPerf Training LLM table (mlperf_training_llm_throughput_*.csv).
// Rows whose tp, pp, cp, dp and micro_batch are all blank are kept with
// split_known false. Throws InputError when the file cannot be opened,
// DataError(file, line, field) on a missing column, an unknown benchmark or
// accelerator, a seq_len other than the benchmark's (2048, 8192), a count or
// throughput that is not a number > 0, a split given in part or with
// dp*tp*pp*cp != n_accelerators, an unknown precision, tokens_per_s !=
// samples_per_s x seq_len (0.1%), or a method that is neither T1 nor T2.
std::vector<LlmCase> ReadMlperfLlmCases(const std::string& path);

// Reads the settings the MLPerf LLM runs' configurations record
// (mlperf_llm_run_settings.csv): columns round, submitter, system, benchmark,
// recompute, recompute_setting, fp8_attention, zero, fp8_weights, evidence,
// source_repo, source_commit, source_paths, not_modeled, dropout,
// tp_comm_overlap, gradient_bytes, lora_dropout, activation_fp8_store. Throws
// InputError when the file
// cannot be opened, DataError(file, line, field) on a missing column, a blank
// round, submitter, system, benchmark, recompute_setting, evidence,
// source_repo, source_commit or source_paths, a recompute other than none,
// selective, full, selective-or-full, an fp8_attention, fp8_weights, dropout
// tp_comm_overlap, lora_dropout or activation_fp8_store other than True, False
// or blank, a gradient_bytes other
// than 2, 4 or blank, a zero other than 0, 1, 2, 3, a source_commit that is not 40
// hexadecimal digits, or a run given twice.
std::vector<MlperfLlmSettings> ReadMlperfLlmSettings(const std::string& path);

// Gives each case of `cases` the settings row of its round, submitter,
// system and benchmark. Throws DataError(settings file, line, "system") for a
// settings row that names no case.
void AttachMlperfLlmSettings(std::vector<LlmCase>& cases,
                             const std::vector<MlperfLlmSettings>& settings);

// vTrain's rows of one model shape (layers, hidden, heads, seq_len), GPU count
// and global batch: the splits and micro-batches a planner ranks against each
// other. 144 groups of 2 to 26 rows.
struct LlmCaseGroup {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int seq_len = 0;
  int accelerators = 0;
  int64_t global_batch = 0;
  std::vector<LlmCase> cases;  // in file order
};

// The groups of `cases`, ordered by (layers, hidden, heads, seq_len,
// accelerators, global_batch).
std::vector<LlmCaseGroup> GroupLlmCases(const std::vector<LlmCase>& cases);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_LLM_CASES_H_
