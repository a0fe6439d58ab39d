// `fitspeed validate gpu-llm`: the catalog's H200 against this project's own
// H200 measurements of LLM kernels and training steps (data/llm-gpu;
// fitspeed/evidence/gpu_llm_check.h; docs/validation.md, "First-hand H200
// measurements"). Nothing in those tables sets a catalog number.
#include <iostream>
#include <memory>
#include <string>

#include "command.h"
#include "fitspeed/device/device.h"
#include "fitspeed/evidence/gpu_llm_check.h"
#include "validate.h"

namespace fitspeed::cli {

int RunValidateGpuLlm(const ValidateGpuLlmOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  const Device device = LoadDevice(options.device);
  WriteGpuLlmCheck(std::cout, CheckGpuLlm(ReadGpuLlmData(options.data_dir), device), format);
  return 0;
}

void SetupValidateGpuLlmCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateGpuLlmOptions>();
  CLI::App* command = validate.add_subcommand(
      "gpu-llm",
      "Check the catalog's H200 curves and the LLM split model against first-hand H200 "
      "measurements (data/llm-gpu: GEMMs, attention, memory-bound kernels and whole training "
      "steps), out of sample");
  AddDataOption(*command, options->data_dir,
                "the H200 tables: gemm.csv, attention.csv, memory_ops.csv, steps.csv "
                "(data/llm-gpu/README.md)");
  command->add_option("--device", options->device,
                      "The device that predicts them: a catalog name or a device file "
                      "(default: h200, the GPU they were measured on)");
  AddOutputOption(*command, options->output);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateGpuLlm(*options);
  });
}

}  // namespace fitspeed::cli
