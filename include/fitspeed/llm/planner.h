// The planner: every split of a cluster for a model and a global batch,
// modeled (fitspeed/llm/split.h) and ranked by time per token, the splits
// that do not fit reported with their shortfall (docs/llm.md, "The planner").
//
//   fitspeed::LlmPlanOptions o;  o.global_batch = 1024;  o.training.seq_len = 8192;
//   fitspeed::LlmPlan plan = fitspeed::PlanLlm(model, cluster, o);
//   plan.ranked[0]  // the fastest split that fits
#ifndef FITSPEED_LLM_PLANNER_H_
#define FITSPEED_LLM_PLANNER_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/core/output_format.h"
#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/llm/split.h"

namespace fitspeed {

// What the search may choose. A fixed value (> 0, or set) is the only one
// tried; otherwise:
//   tp: divisors of the devices that divide the heads, within one scale-up domain;
//   cp: powers of two with 2 x cp dividing the sequence, within the devices left;
//   pp: divisors of the devices left up to the layers;
//   vp: 1, and with pp > 1 every divisor of layers / pp up to max_vp (when pp
//     divides the layers), else every vp up to max_vp with pp x vp <= layers;
//   the stages' layers: even when pp x vp divides the layers; else the
//     embedding and the loss counted as layers when that divides
//     (PipelineLayoutOf), else the layers spread as evenly as they go with
//     the extra ones on the middle stages (a layout); a fixed layout, or
//     fixed first/last stage layers, alone;
//   ep: divisors of the experts with ep x etp dividing tp x cp x dp (MoE only);
//   etp: tp, and 1 when tp > 1 (MoE only);
//   dp: what is left; micro-batch: divisors of global_batch / dp up to max_micro_batch;
//   recompute: none, selective (without flash attention: with it selective is none), full;
//   sequence parallel: off, and on when tp > 1;
//   zero: the levels the framework runs (LlmFramework::RunsZero: Megatron's and
//     DeepSpeed's 0 and 1, and 2 and 3 when pp = 1; FSDP's 0, 2 and 3);
// and only the splits the training's framework runs (LlmFramework::CheckSplit):
// FSDP and DeepSpeed over Hugging Face modules search data parallelism alone.
struct LlmPlanOptions {
  int64_t global_batch = 0;  // sequences per step, > 0
  LlmTraining training;      // seq_len, format, LoRA, attention kernels, memory allowances
  int tp = 0, pp = 0, vp = 0, cp = 0, ep = 0, dp = 0;  // 0: searched
  int etp = 0;                                         // 0: searched
  // Uneven stages (LlmSplit::layout, PipelineLayoutOf): a fixed layout, or
  // the first and last stage's layers, or the embedding and loss counted as
  // layers; none given: searched as above.
  std::string layout;
  int64_t first_stage_layers = 0, last_stage_layers = 0;
  bool embedding_as_layer = false, loss_as_layer = false;
  int64_t micro_batch = 0;  // 0: searched
  std::optional<Recompute> recompute;
  // What selective recomputation reruns (RecomputeModule bits) in every
  // split that recomputes selectively.
  unsigned recompute_modules = kRecomputeCoreAttn;
  std::optional<bool> sequence_parallel;
  std::optional<int> zero;
  // LlmSplit::shard_group for every split with ZeRO >= 1 whose dp x cp it
  // divides (the others are not searched); 0: every rank (not searched).
  int shard_group = 0;
  bool overlap_grad_reduce = true;
  bool overlap_moe_comm = false;  // LlmSplit::overlap_moe_comm, for every split
  // LlmSplit::tp_comm_overlap for every split with sequence parallelism whose
  // framework has it (LlmFramework::tp_comm_overlap).
  bool tp_comm_overlap = false;
  int64_t max_micro_batch = 64;
  int max_vp = 8;
  int top = 10;  // splits listed (fitting, and best not fitting), >= 1
  // Told each (tp, cp, pp) group as its search starts (stage "planner", done:
  // groups searched, total: groups), and once more at the end; may be empty.
  ProgressCallback progress;
};

struct LlmPlan {
  std::vector<LlmStep> ranked;       // fitting splits, fastest first, at most `top`
  std::vector<LlmStep> not_fitting;  // the fastest splits that do not fit, at most `top`
  int64_t evaluated = 0;             // splits modeled
  int64_t fitting = 0;               // of which fit in memory
  double search_s = 0;               // wall time of the search
};

// UsageError for options that allow no split (a fixed size that does not
// divide, global_batch < 1, top < 1), naming what to change.
LlmPlan PlanLlm(const TransformerConfig& model, const LlmCluster& cluster,
                const LlmPlanOptions& options, const LlmCalibration& calibration = {});

// `--fix`: "tp=8,pp=4,mb=2,recompute=full,sp=1,zero=1" (keys tp, pp, vp, cp,
// ep, etp, dp, mb, recompute, sp, zero, shard: the shard group) pins those choices in `o`; empty
// pins none. UsageError naming the item for a malformed one, an unknown key or a value out of
// range.
void ApplyLlmPlanFix(const std::string& text, LlmPlanOptions& o);

// What a run of `tokens` tokens takes at `step`: days, and with a price per
// device-hour the cost; the interval's factors widen both.
struct LlmRunTotals {
  double tokens = 0;
  double seconds = 0, days = 0;
  double device_hours = 0;
  std::optional<double> cost;
  double days_low = 0, days_high = 0;  // from the interval (equal to days when none)
};
LlmRunTotals LlmTotals(const LlmStep& step, const LlmCluster& cluster, double tokens,
                       std::optional<double> price_per_device_hour,
                       const PredictionInterval& interval);

// A step's parts and its memory per GPU by component, named as every output
// names them ("compute_s", ... "overhead_s"; "weights", ... "fragmentation"),
// in the order of LlmStepParts and LlmMemory (totals not included).
std::vector<std::pair<std::string, double>> NamedStepParts(const LlmStepParts& parts);
std::vector<std::pair<std::string, double>> NamedMemoryParts(const LlmMemory& memory);

// What the table of one step, and of a plan (its fastest split's notes), lists
// under "assumptions:": the step's notes, the interval, (for a plan with
// tokens) how days are counted, the calibration and the links.
std::vector<std::string> LlmStepAssumptions(const LlmStep& step, const LlmCluster& cluster,
                                            const PredictionInterval& interval,
                                            const LlmCalibration& calibration);
std::vector<std::string> LlmPlanAssumptions(const LlmPlan& plan, const LlmCluster& cluster,
                                            const PredictionInterval& interval,
                                            const LlmCalibration& calibration, bool tokens);

// `fitspeed sweep MODEL --tp ...`: one split, its parts, memory and interval.
// Table: a summary and the parts; CSV: one row; JSON: schema "fitspeed.llm-step/1".
void WriteLlmStep(std::ostream& out, const TransformerConfig& model, const LlmCluster& cluster,
                  const LlmTraining& training, const LlmStep& step,
                  const PredictionInterval& interval, const LlmCalibration& calibration,
                  OutputFormat format);

// `fitspeed plan MODEL --device ...`: the ranked splits with memory, MFU and,
// with a token budget, days and cost. JSON: schema "fitspeed.llm-plan/1".
void WriteLlmPlan(std::ostream& out, const TransformerConfig& model, const LlmCluster& cluster,
                  const LlmPlanOptions& options, const LlmPlan& plan,
                  const PredictionInterval& interval, const LlmCalibration& calibration,
                  std::optional<double> tokens, std::optional<double> price_per_device_hour,
                  OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_LLM_PLANNER_H_
