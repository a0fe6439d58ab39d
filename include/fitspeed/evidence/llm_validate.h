// The LLM split model against measured iterations (docs/validation.md, "LLM
// training"): vTrain's 1,440 Megatron-DeepSpeed steps on 2-8 A100s, predicted
// by calibrations fitted without the rows' GPU count (three folds, so every
// row is predicted out of sample), and the ranking of each group's splits.
#ifndef FITSPEED_EVIDENCE_LLM_VALIDATE_H_
#define FITSPEED_EVIDENCE_LLM_VALIDATE_H_

#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/output_format.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/evidence/llm_cases.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/split.h"

namespace fitspeed {

// The model, cluster, training and split a case ran (vTrain's records:
// GPT shape with learned positions, FP16, full recomputation, Megatron's
// unfused attention, no gradient bucketing, 16-bit gradients, 1F1B).
struct LlmCaseSetup {
  TransformerConfig model;
  LlmCluster cluster;
  LlmTraining training;
  LlmSplit split;
};
LlmCaseSetup SetupForVtrainCase(const LlmCase& c, const Device& device);

// The calibration that minimizes the squared log errors of the step times of
// `cases` (matrix_size_scale, dispatch_s and step_overhead_s; memory_scale 1), by
// a deterministic coordinate search in log space.
LlmCalibration FitLlmCalibration(const std::vector<LlmCaseSetup>& setups,
                                 const std::vector<double>& measured_step_s);

struct LlmValidation {
  struct Row {
    LlmCase c;
    double predicted_s = 0;  // by the fold that left its GPU count out
    double error = 0;        // predicted / measured - 1
  };
  std::vector<Row> rows;
  std::vector<std::pair<int, LlmCalibration>> folds;  // GPU count left out, its calibration
  LlmCalibrationTable table;           // fitted on every row, with the held-out errors
  int groups = 0, top1 = 0, top3 = 0;  // measured fastest split ranked first / in the top 3
  double median_abs_error = 0, mean_abs_error = 0, max_abs_error = 0;
};

// `progress` is told each calibration fitted (stage "vTrain calibrations": one
// per GPU count left out, then the one on every row).
LlmValidation ValidateLlmOnVtrain(const std::vector<LlmCase>& cases, const Device& a100,
                                  const std::string& generated_by,
                                  const ProgressCallback& progress = {});

// The tables of docs/validation.md, "LLM training": overall, by split
// pattern, by micro-batch, by GPU count, the ranking and the calibrations.
void WriteLlmValidation(std::ostream& out, const LlmValidation& v, OutputFormat format);

// The MLPerf Training LLM rows (GPT-3 175B pre-training, Llama-2-70B LoRA;
// docs/validation.md, "LLM training cases"), development data of the split
// model (docs/llm.md says what was changed after their first score). Each
// distinct run (duplicates left out) with a known split is modeled on the
// catalog device it ran on with the compiled-in calibration carried there
// (vTrain's A100 constants): flash attention, sequence parallelism where tp >
// 1, the gradient reduction overlapped, FP32 gradients (Megatron-Core's
// main_grad), LoRA rank 16 on the attention. Where the run's configuration
// was read (LlmCase::settings) its recomputation and optimizer sharding are
// taken as recorded and what the model cannot express goes into the row's
// notes; elsewhere they are assumed: selective recomputation (full where the
// split does not fit with it: the run did fit), the distributed optimizer
// (ZeRO-1) on GPUs and FSDP (ZeRO-3) on TPUs.
struct LlmMlperfValidation {
  struct Row {
    LlmCase c;
    bool modeled = false;
    std::string reason;  // why not, when !modeled
    double predicted_tokens_per_s = 0;
    double error = 0;            // predicted / measured - 1
    double memory_fraction = 0;  // modeled memory per GPU / capacity
    std::string recompute;       // the level modeled: recorded, or assumed (see above)
    // "config" (the run's own configuration or printed config was read),
    // "family" (only the configuration it derives from was read), "assumed".
    std::string settings;
    // The recorded settings the model cannot express, a recorded setting it
    // replaced, a memory the recorded settings fit in but the model does not.
    std::vector<std::string> notes;
  };
  std::vector<Row> rows;  // every distinct run with a known split
  struct Publisher {
    std::string name;
    int runs = 0;
    double median_abs_error = 0, median_error = 0;
  };
  std::vector<Publisher> publishers;  // by name, modeled runs only
  // The median over publishers of their median |error| (each publisher once),
  // and over every modeled run; with and without the runs whose throughput
  // includes evaluation (they read low).
  double publisher_median = 0, run_median = 0, publisher_median_no_eval = 0;
};

LlmMlperfValidation ValidateLlmOnMlperf(const std::vector<LlmCase>& cases);

// The framework family of a development row, from its framework column and
// system: "jax" (MaxText, PAX), "deepspeed" (the DeepSpeed LoRA runs),
// "habana" (Intel-Habana's PyTorch: Megatron-DeepSpeed, Optimum Habana),
// "megatron-deepspeed" (vTrain) and "nemo" (NVIDIA's NeMo / Megatron-Core
// containers and the submissions built on them: every other GPU run).
std::string LlmFrameworkFamily(const LlmCase& c);
// The framework profile (fitspeed/llm/framework.h) a user would give for the
// run: maxtext for JAX, deepspeed for DeepSpeed over Hugging Face modules,
// megatron-deepspeed for Habana's GPT-3, nemo for NVIDIA's NeMo containers.
std::string LlmFrameworkProfileOf(const LlmCase& c);

// The split model's errors on every development row (LlmCalibrationTable::
// development): vTrain's held-out rows, and the modeled MLPerf runs whose
// throughput excludes evaluation, each with its publisher, accelerator and
// framework family.
std::vector<LlmCalibrationTable::DevelopmentError> LlmDevelopmentErrors(
    const LlmValidation& vtrain, const LlmMlperfValidation& mlperf);

// How intervals built from the other rows hold on the rows of a left-out
// accelerator, framework and publisher (LlmLeaveOutCoverageOf), at `level`.
void WriteLlmLeaveOutCoverage(std::ostream& out,
                              const std::vector<LlmCalibrationTable::DevelopmentError>& development,
                              double level);
void WriteLlmMlperfValidation(std::ostream& out, const LlmMlperfValidation& v, OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_LLM_VALIDATE_H_
