// `fitspeed validate kernels`: the device efficiency curves fitted to
// published per-kernel timings (DeepBench, K40 SGEMM), their residuals, the
// convolution-algorithm rule against cuDNN, and the catalog on the kernels and
// all-reduces it was not fitted to (docs/validation.md, "Kernel fits"). With
// --catalog-out, it writes the catalog devices the fits serve (data/devices).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/evidence/checks.h"
#include "fitspeed/evidence/output.h"
#include "validate.h"

namespace fitspeed::cli {

namespace {

// Writes the catalog devices the fits serve into `directory`, naming each file
// on stderr.
void WriteCatalog(const KernelFitReport& fits, const std::string& directory) {
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw InputError(fmt::format("--catalog-out: '{}' is not a directory", directory));
  }
  for (const Device& device : KernelCatalogDevices(fits)) {
    const std::string path = directory + "/" + device.name + ".json";
    std::ofstream file(path);
    file << DeviceToJson(device);
    if (!file) throw InputError(fmt::format("cannot write device file '{}'", path));
    std::cerr << "wrote " << path << "\n";
  }
}

}  // namespace

int RunValidateKernels(const ValidateKernelsOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  KernelFitReport fits =
      FitKernelTables(options.kernel_dir, options.shape_term, options.first_hand_dir);
  if (!options.catalog_out.empty()) WriteCatalog(fits, options.catalog_out);
  WriteKernelValidation(
      std::cout, CheckKernelFits(std::move(fits), options.kernel_dir, options.shape_term), format);
  return 0;
}

void SetupValidateKernelsCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateKernelsOptions>();
  CLI::App* command = validate.add_subcommand(
      "kernels",
      "Fit the device efficiency curves to the published kernel timings (DeepBench GEMMs and "
      "convolutions, K40 SGEMM) and this project's H200 GEMMs and normalization kernels, and "
      "report the fits, their residuals, the "
      "convolution-algorithm rule's agreement with cuDNN and the catalog on the kernels it was "
      "not fitted to (docs/validation.md, \"Kernel fits\")");
  AddDataOption(*command, options->kernel_dir, "the kernel tables (data/kernels/README.md)");
  command
      ->add_option("--first-hand-data", options->first_hand_dir,
                   "This project's H200 tables (data/llm-gpu/README.md): gemm.csv fitted as the "
                   "H200's BF16/FP16 tensor and FP8 curves, memory_ops.csv's LayerNorm, RMSNorm "
                   "and softmax rows as its normalization plateau, both carried to the H100 "
                   "boards; \"\": leave them out (the Hopper devices then keep the carried curves)")
      ->capture_default_str();
  command->add_option("--catalog-out", options->catalog_out,
                      "Write the catalog devices the fits serve, with the fitted or carried "
                      "curves, into this directory (data/devices regenerates the catalog)");
  command->add_flag("--shape-term", options->shape_term,
                    "Fit each matrix curve with a GEMM shape term, efficiency x prod d/(d + "
                    "half_dim) over the kernel's three matrix dimensions, and check those curves "
                    "on the second sources; the catalog is fitted without it "
                    "(docs/validation.md, \"Kernel fits\", says why); with --catalog-out, "
                    "device files that carry it (\"half_dim\")");
  AddOutputOption(*command, options->output);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateKernels(*options);
  });
}

}  // namespace fitspeed::cli
