// The convolution algorithm the step model runs a convolution with, its
// FLOPs and the dimensions of its matrix products (docs/devices.md, "Step
// model").
//
// cuDNN runs FP32 3x3 stride-1 convolutions with
// Winograd's minimal filtering (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016): F(2x2, 3x3) computes a 2x2
// output tile with 16 multiplies instead of 36, 2.25x fewer. The model
// times such a convolution as 16/36 of its direct FLOPs at the device's
// Winograd efficiency curve (Device::winograd_efficiency), itself fitted to
// those kernels; ConvAlgorithmFor states the rule;
// KernelFitReport (fitspeed/evidence/kernels.h) says how often it agrees with
// cuDNN's choice.
#ifndef FITSPEED_SRC_DEVICE_CONV_ALGORITHM_H_
#define FITSPEED_SRC_DEVICE_CONV_ALGORITHM_H_

#include <string>

#include "fitspeed/device/device.h"

namespace fitspeed {

// A convolution's algorithm as the model runs it.
enum class ConvAlgorithm {
  kImplicitGemm,      // direct / implicit GEMM: 2 N K P Q C R S FLOPs
  kWinogradF2x2_3x3,  // Winograd F(2x2, 3x3): 16/36 of the direct multiplies
};
const char* ConvAlgorithmName(ConvAlgorithm algorithm);  // "implicit-gemm", "winograd-f2x2-3x3"

// The rule the model applies, read from DeepBench's algorithm columns: on
// P100, V100 and T4, cuDNN chose a Winograd kernel for 80 of the 96 FP32 3x3
// stride-1 forward convolutions (the others are small), for 4 of the 186 other
// FP32 ones, and for none of the FP16 tensor-core ones. Winograd for a 3x3
// convolution of stride 1 and one group, on CUDA cores (not tensor units),
// when the device has a Winograd curve; implicit GEMM otherwise.
ConvAlgorithm ConvAlgorithmFor(int kernel_h, int kernel_w, int stride_h, int stride_w, int groups,
                               bool tensor_units, bool device_has_winograd);

// The FLOPs a convolution's algorithm performs, from its direct FLOPs:
// direct for implicit GEMM, direct x 16/36 for Winograd F(2x2, 3x3).
double AlgorithmFlops(ConvAlgorithm algorithm, double direct_flops);

// The dimensions of the matrix product (GemmDims, fitspeed/device/device.h)
// of a convolution, per group, for a pass ("fwd", "bwd_data", "bwd_weights"):
// implicit GEMM: forward {N P Q, K, C R S}, backward-data {N H W, C, K R S},
// backward-weights {K, C R S, N P Q}; Winograd F(2x2, 3x3) runs 16 products
// over 2x2 tiles, forward {N ceil(P/2) ceil(Q/2), K, C}, backward-data
// {N ceil(H/2) ceil(W/2), C, K}, backward-weights {K, C, N ceil(P/2) ceil(Q/2)}.
// c and k are per group. Throws UsageError for another pass.
GemmDims ConvGemmDims(ConvAlgorithm algorithm, const std::string& pass, double n, double c,
                      double h, double w, double k, double r, double s, double p, double q);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_DEVICE_CONV_ALGORITHM_H_
