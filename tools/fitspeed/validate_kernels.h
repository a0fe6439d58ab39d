// The kernel section of `fitspeed validate --kernels`: the device efficiency
// curves fitted to published per-kernel timings (DeepBench, K40 SGEMM), their
// residuals per GPU, unit, op and pass, and how often the model's convolution
// algorithm rule agrees with cuDNN's choice (fitspeed/evidence/kernels.h;
// docs/validation.md, "Kernel fits"). With a catalog directory, it writes the
// catalog devices the fits serve with their new curves.
#ifndef FITSPEED_TOOLS_FITSPEED_VALIDATE_KERNELS_H_
#define FITSPEED_TOOLS_FITSPEED_VALIDATE_KERNELS_H_

#include <string>

#include "fitspeed/io/output.h"

namespace fitspeed::cli {

// Fits the tables of `kernel_dir` and writes the report as a table, CSV or
// JSON. When `catalog_out` is not empty, writes there (a directory) the
// device file of every catalog device the fits serve, with the fitted or
// carried curves (ApplyKernelCurves), and names each file on stderr. With
// `shape_term`, the curves are fitted with the GEMM shape term
// (FitKernelCurves) and the second-source checks use them. Returns 0.
int RunKernelCheck(const std::string& kernel_dir, const std::string& catalog_out, bool shape_term,
                   OutputFormat format);

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_VALIDATE_KERNELS_H_
