// The frameworks a transformer trains with, as the split model needs them
// (docs/llm.md, "Frameworks"): what each fuses, how it shards and reduces,
// whether the host launches every kernel, and which splits it runs. The
// profiles are data/llm-frameworks.json, compiled in; each behaviour names
// the place in the framework's source that decides it.
//
//   fitspeed::LlmTraining t = fitspeed::MakeLlmTraining(4096, "bf16", 0, true, 0, "fsdp");
//   // t.kernels == LlmKernels::kEager, t.sharding == LlmSharding::kFsdp, gradient_bytes 2
#ifndef FITSPEED_LLM_FRAMEWORK_H_
#define FITSPEED_LLM_FRAMEWORK_H_

#include <string>
#include <vector>

#include "fitspeed/llm/split.h"

namespace fitspeed {

struct LlmFramework {
  std::string name;   // "fsdp": what --framework takes
  std::string title;  // one line: the framework and how it is run
  // The framework family of the development rows this profile belongs to
  // (LlmCalibrationTable::DevelopmentError::framework: "nemo",
  // "megatron-deepspeed", "deepspeed", "jax"; "pytorch-fsdp" has none):
  // what LlmInterval leaves out.
  std::string development_family;
  LlmKernels kernels = LlmKernels::kFused;
  bool separate_projections = false;  // LlmTraining::separate_projections
  bool compiled_step = false;         // host "compiled-step": LlmTraining::compiled_step
  LlmSharding sharding = LlmSharding::kZero;
  // Gradient bytes by precision: "fp32-main-grad" (4; 2 under fp16),
  // "model-dtype" (2), "fp32-reduce" (4).
  std::string gradient_rule;
  unsigned zero_levels = 0xF;         // bit z: ZeRO level z (LlmSplit::zero) runs
  unsigned zero_with_pipeline = 0x3;  // the same with pp > 1
  int zero_default = 0;
  // The splits it runs beside data parallelism.
  bool tp = false, pp = false, vp = false, cp = false, ep = false, sequence_parallel = false;
  // Transformer Engine's userbuffers overlap (LlmSplit::tp_comm_overlap).
  bool tp_comm_overlap = false;
  struct Behaviour {
    std::string what, source;
  };
  std::vector<Behaviour> behaviours;

  // The gradient bytes of `precision` ("fp16", "bf16", ...) under gradient_rule.
  double GradientBytes(const std::string& precision) const;
  // UsageError naming the framework and the first part of `split` it does
  // not run (a parallel size it lacks, a ZeRO level, sequence parallelism).
  void CheckSplit(const LlmSplit& split) const;
  bool RunsZero(int zero, bool pipeline) const;
};

// Parses a "fitspeed.llm-frameworks/1" document; DataError(source, line, field, problem).
std::vector<LlmFramework> ParseLlmFrameworks(const std::string& text, const std::string& source);

// The compiled-in profiles (data/llm-frameworks.json), "megatron" first.
const std::vector<LlmFramework>& LlmFrameworks();

// The profile named `name`; UsageError listing the names for another.
const LlmFramework& FindLlmFramework(const std::string& name);

// Sets `training`'s framework fields from its `framework` name (kernels,
// projections, compiled step, sharding) and, when gradient_bytes is 0, the
// framework's gradient bytes for `precision`. UsageError for an unknown name.
void ApplyLlmFramework(LlmTraining& training, const std::string& precision);

}  // namespace fitspeed

#endif  // FITSPEED_LLM_FRAMEWORK_H_
