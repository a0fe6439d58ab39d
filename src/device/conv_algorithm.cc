// The convolution-algorithm rule of the step model (conv_algorithm.h).
#include "device/conv_algorithm.h"

#include <fmt/format.h>

#include <cmath>

#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

// Winograd F(2x2, 3x3): (2 + 3 - 1)^2 = 16 multiplies per 2x2 output tile and
// input/output channel pair, against 2 x 2 x 3 x 3 = 36 direct (Lavin & Gray 2016, eq. 6).
constexpr double kWinogradF2x2Ratio = 16.0 / 36.0;

}  // namespace

const char* ConvAlgorithmName(ConvAlgorithm algorithm) {
  return algorithm == ConvAlgorithm::kWinogradF2x2_3x3 ? "winograd-f2x2-3x3" : "implicit-gemm";
}

ConvAlgorithm ConvAlgorithmFor(int kernel_h, int kernel_w, int stride_h, int stride_w, int groups,
                               bool tensor_units, bool device_has_winograd) {
  const bool winograd = device_has_winograd && !tensor_units && kernel_h == 3 && kernel_w == 3 &&
                        stride_h == 1 && stride_w == 1 && groups == 1;
  return winograd ? ConvAlgorithm::kWinogradF2x2_3x3 : ConvAlgorithm::kImplicitGemm;
}

double AlgorithmFlops(ConvAlgorithm algorithm, double direct_flops) {
  return algorithm == ConvAlgorithm::kWinogradF2x2_3x3 ? direct_flops * kWinogradF2x2Ratio
                                                       : direct_flops;
}

GemmDims ConvGemmDims(ConvAlgorithm algorithm, const std::string& pass, double n, double c,
                      double h, double w, double k, double r, double s, double p, double q) {
  if (algorithm == ConvAlgorithm::kWinogradF2x2_3x3) {
    const double out_tiles = n * std::ceil(p / 2) * std::ceil(q / 2);
    const double in_tiles = n * std::ceil(h / 2) * std::ceil(w / 2);
    if (pass == "fwd") return {out_tiles, k, c};
    if (pass == "bwd_data") return {in_tiles, c, k};
    if (pass == "bwd_weights") return {k, c, out_tiles};
  } else {
    if (pass == "fwd") return {n * p * q, k, c * r * s};
    if (pass == "bwd_data") return {n * h * w, c, k * r * s};
    if (pass == "bwd_weights") return {k, c * r * s, n * p * q};
  }
  throw UsageError(fmt::format("ConvGemmDims: no pass '{}'", pass));
}

}  // namespace fitspeed
