// What `fitspeed plan llm` and the transformer path of `fitspeed plan` share
// (plan_llm_command.cc): the values of a transformer plan, its options and its run.
#ifndef FITSPEED_TOOLS_FITSPEED_PLAN_LLM_H_
#define FITSPEED_TOOLS_FITSPEED_PLAN_LLM_H_

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "llm_cli.h"

namespace fitspeed::cli {

struct LlmPlanValues {
  std::string model, device, links;
  int devices = 0;
  int devices_per_node = 0;
  int64_t global_batch = 0;
  int64_t seq_len = 0;
  double tokens = NAN;
  std::string price;  // per device-hour; empty: none
  std::string fix;
  int top = 10;
  std::string precision = "mixed";
  LlmTrainingCliOptions training;
  bool no_overlap_grad_reduce = false;
  bool overlap_moe_comm = false;
  bool tp_comm_overlap = false;
  double interval_level = 0.8;
  std::string output = "table", progress;
};

// The options only a transformer plan takes: --global-batch, --seq-len,
// --tokens, --fix, --top, --precision, the training options (with
// --gradient-bytes when `gradient_bytes`) and --no-overlap-grad-reduce.
void AddLlmPlanOnlyOptions(CLI::App& command, LlmPlanValues& values, bool gradient_bytes);

// The plan of `values` printed; the exit code.
int RunLlmPlanValues(const LlmPlanValues& values);

// `plan llm` under `plan`.
void SetupPlanLlmCommand(CLI::App& plan, int& exit_code);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_PLAN_LLM_H_
