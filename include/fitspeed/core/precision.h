// The precision a training step runs in: one type for the host timing
// (timing/sweep.h) and the device model (device/step_model.h), one table of
// its names and one parser (src/core/precision.cc). Each layer refuses, with a
// UsageError, the values it cannot run: the host runs fp32 and bf16 (kMixed),
// not tf32; a device runs what its catalog entry has units for.
//
// The names depend on where they are written, and only on that: the host's
// mixed precision is BF16 (the only 16-bit type its oneDNN kernels run), so
// its options and outputs say "bf16"; a device's is FP16 or BF16 as the
// framework chooses, so its options, the cases CSV and their outputs say
// "mixed" (PrecisionContext).
#ifndef FITSPEED_CORE_PRECISION_H_
#define FITSPEED_CORE_PRECISION_H_

#include <string>

namespace fitspeed {

enum class Precision {
  kFp32,  // FP32 everywhere (matrix work on CUDA cores, TPU MXU passes or the CPU's FP32 FMA units)
  kTf32,  // FP32 tensors, matrix work on TF32 tensor cores (A100, H100); a device's only
  kMixed,  // mixed precision (Micikevicius et al. 2018): matrix work in a 16-bit type, FP32
           // master weights, weight gradients and optimizer. On a device FP16/BF16 on tensor
           // units with 2-byte activations and weight copies; on the host BF16 activations,
           // weights converted from the FP32 master copies every step (oneDNN runs it on AMX
           // when the CPU has it, on AVX-512 otherwise; oneDNN 2.6 has no BF16 kernels below
           // AVX-512).
  kFp8,    // a device's only: mixed precision whose matrix products of dense layers (and of a
           // fused attention core) run in FP8 as NVIDIA's Transformer Engine runs them (H100,
           // H200, B200, L40S...), the rest as kMixed (device/step_model.h says what is modeled)
};

// Whether `precision` keeps activations and weight copies in 16 bits with
// FP32 master weights (kMixed, and kFp8, whose products outside FP8 run as
// kMixed): what AMP's cast rules, 16-bit gradients and the 2-byte tensors
// of the step model turn on.
constexpr bool SixteenBitActivations(Precision precision) {
  return precision == Precision::kMixed || precision == Precision::kFp8;
}

// Where a precision is named (the columns of the name table).
enum class PrecisionContext {
  kDevice,  // the device model's options, the cases CSV and every output but the host's:
            // "fp32", "tf32", "mixed", "fp8"
  kHost,    // the host timing's options and outputs: "fp32" (or "float32"), "bf16" (or
            // "bfloat16"); no tf32
  kLog,     // what logs and `@precision=` write, in any case: the device names, "float32" and
            // "float" for fp32, and for mixed the 16-bit types and AMP as frameworks name them
            // ("amp", "fp16", "bf16", "float16", "bfloat16", "half"); "float8" for fp8
};

// The name of `precision` in `context` ("fp32", "tf32", "mixed"; on the host
// "bf16" for kMixed); kLog names as kDevice. A value the context has no name
// for (tf32 on the host) is an internal error.
const char* PrecisionName(Precision precision,
                          PrecisionContext context = PrecisionContext::kDevice);

// The precision `name` spells in `context`. Throws UsageError naming the
// context's names for a name it does not know ("unknown device precision
// 'fp4' (known: fp32, tf32, mixed, fp8)"), and for the host one it cannot run.
Precision ParsePrecision(const std::string& name, PrecisionContext context);

}  // namespace fitspeed

#endif  // FITSPEED_CORE_PRECISION_H_
