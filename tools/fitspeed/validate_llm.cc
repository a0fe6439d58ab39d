// `fitspeed validate llm`: the LLM split model against vTrain's 1,440
// measured Megatron-DeepSpeed iterations, every row predicted by a
// calibration fitted without its GPU count (fitspeed/evidence/llm_validate.h;
// docs/validation.md, "LLM training"); --llm-calibration-out writes the
// compiled-in calibration (data/llm-calibration.json).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/evidence/llm_cases.h"
#include "fitspeed/evidence/llm_framework_rows.h"
#include "fitspeed/evidence/llm_validate.h"
#include "validate.h"

namespace fitspeed::cli {

namespace {

struct ValidateLlmOptions {
  std::string data_dir = kMeasuredDir;
  std::string calibration_out;
  std::string output = "table";
  std::string progress;  // --progress; empty: FITSPEED_PROGRESS, else auto
};

int RunValidateLlm(const ValidateLlmOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  const std::vector<LlmCase> cases =
      ReadVtrainCases(options.data_dir + "/llm/vtrain_megatron_deepspeed_single_node_a100.csv");
  ProgressLine progress(options.progress);
  LlmValidation v =
      ValidateLlmOnVtrain(cases, LoadDevice("a100"), "fitspeed validate llm --llm-calibration-out",
                          progress.Callback("validate llm"));
  progress.Clear();
  std::vector<LlmCase> mlperf_cases =
      ReadMlperfLlmCases(options.data_dir + "/llm/mlperf_training_llm_throughput_v3.0-v4.1.csv");
  AttachMlperfLlmSettings(
      mlperf_cases, ReadMlperfLlmSettings(options.data_dir + "/llm/mlperf_llm_run_settings.csv"));
  const LlmMlperfValidation mlperf = ValidateLlmOnMlperf(mlperf_cases);
  // What the compiled-in table carries for the intervals of setups unlike
  // vTrain's (LlmInterval).
  v.table.development = LlmDevelopmentErrors(v, mlperf);
  v.table.accelerator_widening =
      LlmLeaveOutWidening(v.table.development, LlmLeaveOut::kAccelerator, 0.8);
  WriteLlmValidation(std::cout, v, format);
  if (format != OutputFormat::kJson) {
    std::cout << "\n";
    WriteLlmMlperfValidation(std::cout, mlperf, format);
    std::cout << "\n";
    WriteLlmLeaveOutCoverage(std::cout, v.table.development, 0.8);
    std::cout << "\n";
    WriteLlmFrameworkRows(std::cout, ValidateLlmFrameworkRows(ReadLlmFrameworkRows(
                                         options.data_dir + "/llm/fms_fsdp_a100.csv")));
  }
  if (!options.calibration_out.empty()) {
    std::ofstream out(options.calibration_out);
    if (!out) throw InputError("cannot write " + options.calibration_out);
    out << LlmCalibrationToJson(v.table);
    if (!out) throw InputError("cannot write " + options.calibration_out);
  }
  return 0;
}

}  // namespace

void SetupValidateLlmCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateLlmOptions>();
  CLI::App* command = validate.add_subcommand(
      "llm",
      "Check the LLM split model against vTrain's 1,440 Megatron-DeepSpeed iterations on 2-8 A100s "
      "(llm/vtrain_megatron_deepspeed_single_node_a100.csv), each predicted by a calibration "
      "fitted without its GPU count, and how each group's fastest split is ranked");
  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  command->add_option("--llm-calibration-out", options->calibration_out,
                      "Write the calibration fitted on every row, with the held-out errors, here "
                      "(data/llm-calibration.json is compiled into the library)");
  AddOutputOption(*command, options->output);
  AddProgressOption(*command, options->progress);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateLlm(*options);
  });
}

}  // namespace fitspeed::cli
