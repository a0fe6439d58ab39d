// The roofline step model (docs/devices.md, "Step model").
#include "fitspeed/device/step_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <tuple>
#include <utility>

#include "device/conv_algorithm.h"
#include "fitspeed/core/comm.h"
#include "fitspeed/core/error.h"
#include "fitspeed/timing/data_parallel.h"
#include "model/kinds/kind.h"

namespace fitspeed {

namespace {

int64_t RoundUp(int64_t value, int64_t multiple) {
  return multiple <= 1 ? value : (value + multiple - 1) / multiple * multiple;
}

double PadRatio(int64_t value, int64_t multiple) {
  return static_cast<double>(RoundUp(value, multiple)) / static_cast<double>(value);
}

// The kernel tensor of a layer whose work is a matrix product (conv2d, dense,
// and any kind with a rank >= 2 trainable "kernel"), or nullptr.
const ParamTensor* MatrixKernel(const Layer& layer) {
  for (const ParamTensor& p : layer.params) {
    if (p.name == "kernel" && p.trainable && p.shape.rank() >= 2) return &p;
  }
  return nullptr;
}

// Whether the layer runs on the matrix units, and the FLOP ratio of its padded
// to its true dimensions. GPU tensor cores and the TPU MXU pad the reduction
// and output feature dimensions: a convolution's input channels (per group)
// and output channels, a dense layer's input features and units (the rows,
// N*H*W or the batch, are padded only through the per-core batch). A grouped
// convolution with fewer input channels per group than the tile (depthwise)
// cannot fill the matrix units and runs as vector work, unpadded.
std::pair<bool, double> MatrixWork(const Network& network, const Layer& layer, int multiple) {
  if (layer.kind == LayerKind::kDense) {  // its own kernel or a tied embedding table
    const int64_t in = network.layer(layer.input_ids.front()).output_shape.dims.back();
    return {true, PadRatio(in, multiple) * PadRatio(layer.dense.units, multiple)};
  }
  if (layer.kind == LayerKind::kBatchedMatmul) {
    // Per head {M, K} x {K, N}: the reduction K and the output columns N pad;
    // the rows M as the batch does.
    const Shape& a = network.layer(layer.input_ids[0]).output_shape;
    return {true, PadRatio(a.dims[2], multiple) * PadRatio(layer.output_shape.dims[2], multiple)};
  }
  const ParamTensor* kernel = MatrixKernel(layer);
  if (kernel == nullptr) return {false, 1.0};
  if (layer.kind == LayerKind::kConv2d) {
    const int64_t in_per_group = kernel->shape.dims.at(1);
    if (layer.conv.groups > 1 && in_per_group < std::max(multiple, 8)) return {false, 1.0};
    return {true, PadRatio(in_per_group, multiple) *
                      PadRatio(layer.conv.out_channels / layer.conv.groups, multiple)};
  }
  return {true, 1.0};  // a matrix kind this model has no padding rule for
}

// The dimensions of the matrix products a matrix layer's pass runs, for the
// shape term of the matrix curves (EfficiencyCurve::ShapeFactor): a dense
// layer {rows, out, in}, a batched matmul per head {M, N, K}, a convolution
// its algorithm's (ConvGemmDims, per group). b: samples per core.
GemmDims PassGemmDims(const Network& network, const Layer& layer, Pass pass, double b,
                      ConvAlgorithm algorithm) {
  const Shape& in = network.layer(layer.input_ids.front()).output_shape;
  if (layer.kind == LayerKind::kDense) {
    const double features = static_cast<double>(in.dims.back());
    return {b * static_cast<double>(in.elements()) / features,
            static_cast<double>(layer.dense.units), features};
  }
  if (layer.kind == LayerKind::kBatchedMatmul) {
    return {static_cast<double>(in.dims[1]), static_cast<double>(layer.output_shape.dims[2]),
            static_cast<double>(in.dims[2])};
  }
  if (layer.kind == LayerKind::kConv2d) {
    const double groups = static_cast<double>(layer.conv.groups);
    const char* name = pass == Pass::kForward        ? "fwd"
                       : pass == Pass::kBackwardData ? "bwd_data"
                                                     : "bwd_weights";
    return ConvGemmDims(algorithm, name, b, static_cast<double>(in.channels()) / groups,
                        static_cast<double>(in.height()), static_cast<double>(in.width()),
                        static_cast<double>(layer.conv.out_channels) / groups,
                        static_cast<double>(layer.conv.window.kernel_h),
                        static_cast<double>(layer.conv.window.kernel_w),
                        static_cast<double>(layer.output_shape.height()),
                        static_cast<double>(layer.output_shape.width()));
  }
  return {};  // no shape term for a matrix kind without a rule
}

// With recomputation, the layers whose forward pass runs a second time: those
// of every checkpoint segment but the last whose backward pass runs (a
// gradient reaches them, so they need their saved tensors). All false without.
std::vector<bool> RecomputedForwards(const Network& network, bool recompute) {
  std::vector<bool> rerun(static_cast<size_t>(network.size()), false);
  if (!recompute) return rerun;
  const std::vector<bool> backward = GradientReaches(network);
  const std::vector<CheckpointSegment> segments = CheckpointSegments(network);
  for (size_t k = 0; k + 1 < segments.size(); ++k) {
    for (int id = segments[k].first; id <= segments[k].last; ++id) {
      rerun[static_cast<size_t>(id)] = backward[static_cast<size_t>(id)];
    }
  }
  return rerun;
}

}  // namespace

const char* ActivationLayoutName(ActivationLayout layout) {
  return layout == ActivationLayout::kNhwc ? "nhwc" : "nchw";
}

ActivationLayout ParseActivationLayout(const std::string& name) {
  if (name == "nchw") return ActivationLayout::kNchw;
  if (name == "nhwc") return ActivationLayout::kNhwc;
  throw UsageError(fmt::format("unknown activation layout '{}' (known: nchw, nhwc)", name));
}

const char* AmpOpListName(AmpOpList list) {
  switch (list) {
    case AmpOpList::kPyTorch:
      return "pytorch";
    case AmpOpList::kTensorFlow:
      return "tensorflow";
    case AmpOpList::kNone:
      return "none";
  }
  return "unknown";
}

AmpOpList ParseAmpOpList(const std::string& name) {
  if (name == "pytorch") return AmpOpList::kPyTorch;
  if (name == "tensorflow") return AmpOpList::kTensorFlow;
  if (name == "none") return AmpOpList::kNone;
  throw UsageError(
      fmt::format("unknown AMP op list '{}' (known: pytorch, tensorflow, none)", name));
}

bool RunsInFp32UnderAmp(LayerKind kind, AmpOpList list) {
  const kinds::DeviceTraits& traits = *kinds::RulesOf(kind).device;
  switch (list) {
    case AmpOpList::kPyTorch:
      return traits.fp32_under_pytorch_amp;
    case AmpOpList::kTensorFlow:
      return traits.fp32_under_tensorflow_amp;
    case AmpOpList::kNone:
      return false;
  }
  return false;
}

std::string AmpFp32KindNames(AmpOpList list) {
  // In LayerKind order but the loss last, as the report has always listed them.
  constexpr LayerKind kLoss = LayerKind::kSoftmaxCrossEntropy;
  std::vector<std::string> names;
  for (const kinds::KindRules& rules : kinds::AllRules()) {
    if (rules.kind != kLoss && RunsInFp32UnderAmp(rules.kind, list)) names.push_back(rules.name);
  }
  if (RunsInFp32UnderAmp(kLoss, list)) names.push_back(LayerKindName(kLoss));
  return fmt::format("{}", fmt::join(names, ", "));
}

const char* ElementwiseFusionName(ElementwiseFusion f) {
  return f == ElementwiseFusion::kNone ? "none" : "bn-relu-add";
}

ElementwiseFusion ParseElementwiseFusion(const std::string& name) {
  if (name == "none") return ElementwiseFusion::kNone;
  if (name == "bn-relu-add") return ElementwiseFusion::kBatchNormReluAdd;
  throw UsageError(
      fmt::format("unknown element-wise fusion '{}' (known: none, bn-relu-add)", name));
}

std::vector<FusedRole> FusedRoles(const Network& network, ElementwiseFusion fusion) {
  const size_t n = static_cast<size_t>(network.size());
  std::vector<FusedRole> roles(n, FusedRole::kNone);
  if (fusion == ElementwiseFusion::kNone) return roles;
  const auto read_by_one = [&](int id) { return network.layer(id).consumer_ids.size() == 1; };
  // cuDNN's fused batch norm applies a plain ReLU (not a clipped one: ReLU6).
  const auto is = [&](int id, LayerKind kind) {
    const Layer& l = network.layer(id);
    return l.kind == kind && (kind != LayerKind::kRelu || std::isinf(l.relu.max_value));
  };
  // Layers come after their inputs, so an add's role is known before its ReLU's.
  for (int id = 0; id < network.size(); ++id) {
    const Layer& layer = network.layer(id);
    if (layer.kind == LayerKind::kAdd && layer.input_ids.size() == 2 && read_by_one(id) &&
        is(layer.consumer_ids.front(), LayerKind::kRelu)) {
      for (const int input : layer.input_ids) {
        if (is(input, LayerKind::kBatchNorm) && read_by_one(input)) {
          roles[static_cast<size_t>(id)] = FusedRole::kAddIntoBn;
        }
      }
    } else if (is(id, LayerKind::kRelu) && layer.input_ids.size() == 1) {
      const int input = layer.input_ids.front();
      if (is(input, LayerKind::kBatchNorm) && read_by_one(input)) {
        roles[static_cast<size_t>(id)] = FusedRole::kReluIntoBn;
      } else if (roles[static_cast<size_t>(input)] == FusedRole::kAddIntoBn) {
        roles[static_cast<size_t>(id)] = FusedRole::kReluIntoBnAdd;
      }
    }
  }
  return roles;
}

bool NormalizesRows(LayerKind kind) { return kinds::RulesOf(kind).device->normalizes_rows; }

namespace {

// Whether AMP's FP32 layers and their casts are modeled: mixed precision
// (FP8's rest runs as mixed) on a GPU (a TPU's XLA fuses the conversions).
bool AmpCastsApply(const Device& device, Precision precision) {
  return SixteenBitActivations(precision) && device.kind == "gpu";
}

}  // namespace

bool MatrixOnTensorUnits(const Device& device, Precision precision) {
  return precision != Precision::kFp32 || device.fp32_matrix_on_tensor16;
}

double MatrixPeakFlops(const Device& device, Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return device.fp32_matrix_on_tensor16 ? device.tensor16_flops_per_s : device.fp32_flops_per_s;
    case Precision::kTf32:
      if (device.tf32_flops_per_s <= 0) {
        throw UsageError(fmt::format("device {} has no TF32 units (precision tf32)", device.name));
      }
      return device.tf32_flops_per_s;
    case Precision::kMixed:
      if (device.tensor16_flops_per_s <= 0) {
        throw UsageError(
            fmt::format("device {} has no FP16/BF16 units (precision mixed)", device.name));
      }
      return device.tensor16_flops_per_s;
    case Precision::kFp8:
      if (device.fp8_flops_per_s <= 0 || device.tensor16_flops_per_s <= 0) {
        throw UsageError(fmt::format(
            "device {} has no FP8 tensor units (precision fp8; the catalog's FP8 devices: "
            "`fitspeed devices` lists fp8_TFLOPS)",
            device.name));
      }
      return device.fp8_flops_per_s;
  }
  return device.fp32_flops_per_s;
}

bool RunsInFp8(const Layer& layer, Precision precision, AttentionKernel attention) {
  if (precision != Precision::kFp8) return false;
  return layer.kind == LayerKind::kDense ||
         (layer.kind == LayerKind::kBatchedMatmul && attention == AttentionKernel::kFused);
}

double GradientBytesPerParameter(const DeviceModelOptions& options) {
  return SixteenBitActivations(options.precision) && options.amp_ops == AmpOpList::kNone ? 2.0
                                                                                         : 4.0;
}

bool ModelsTransposes(const Device& device, const DeviceModelOptions& options) {
  return MatrixOnTensorUnits(device, options.precision) && !device.tensor_layout.empty() &&
         device.tensor_layout != ActivationLayoutName(options.layout);
}

bool RunsAsNchwGemm(const Layer& layer) {
  if (layer.kind != LayerKind::kConv2d) return false;
  const Window2d& w = layer.conv.window;
  const bool pointwise = w.kernel_h == 1 && w.kernel_w == 1 && w.stride_h == 1 && w.stride_w == 1 &&
                         w.pad_top == 0 && w.pad_bottom == 0 && w.pad_left == 0 &&
                         w.pad_right == 0 && layer.conv.groups == 1;
  // Per image Y[K, HW] = W[K, C] X[C, HW]: NCHW is already the GEMM's layout.
  // ResNet-50 has 33 such convolutions, 16 of them at 56x56 and 28x28 and 17 at
  // 14x14 and 7x7 (196 and 49 pixels). On the H200 (data/resnet50-gpu) cuDNN 9
  // ran 16 backward-weights passes as cuBLAS GEMMs, each with a
  // reduce_wgrad_nchw_helper, and 43 (AMP) or 54 (TF32) forward and
  // backward-data passes: at least the 32 of the 16 aligned convolutions,
  // plus 11 or 22 of the other 34, which this rule charges transposes.
  return pointwise && layer.output_shape.height() * layer.output_shape.width() % 8 == 0;
}

bool ModelsNchwBatchNorm(const Device& device, const DeviceModelOptions& options) {
  return device.kind == "gpu" && device.tensor_layout == "nhwc" &&
         options.layout == ActivationLayout::kNchw;
}

void ValidateDeviceModelOptions(const DeviceModelOptions& o) {
  for (int64_t b : o.batches) {
    if (b < 1 || b > kMaxSweepBatch) {
      throw UsageError(
          fmt::format("DeviceModelOptions.batches: {} is not in [1, {}]", b, kMaxSweepBatch));
    }
  }
  if (o.max_batch < 1 || o.max_batch > kMaxSweepBatch) {
    throw UsageError(fmt::format("DeviceModelOptions.max_batch = {}: must be in [1, {}]",
                                 o.max_batch, kMaxSweepBatch));
  }
  if (o.devices < 1) {
    throw UsageError(fmt::format("DeviceModelOptions.devices = {}: must be >= 1", o.devices));
  }
  if (o.steps_per_execution < 1) {
    throw UsageError(fmt::format("DeviceModelOptions.steps_per_execution = {}: must be >= 1",
                                 o.steps_per_execution));
  }
  if (o.devices_per_node < 0) {
    throw UsageError(
        fmt::format("DeviceModelOptions.devices_per_node = {}: must be >= 0 (0: one "
                    "node)",
                    o.devices_per_node));
  }
  if (o.devices_per_node > 0 && o.devices > o.devices_per_node &&
      o.devices % o.devices_per_node != 0) {
    throw UsageError(fmt::format(
        "DeviceModelOptions.devices_per_node = {}: must divide devices = {} (whole nodes)",
        o.devices_per_node, o.devices));
  }
  for (const auto& [value, name] : {std::pair{o.bucket_bytes, "bucket_bytes"},
                                    std::pair{o.first_bucket_bytes, "first_bucket_bytes"}}) {
    if (!(value > 0) || !std::isfinite(value)) {
      throw UsageError(
          fmt::format("DeviceModelOptions.{} = {}: must be finite and > 0", name, value));
    }
  }
  if (o.accumulation < 1) {
    throw UsageError(
        fmt::format("DeviceModelOptions.accumulation = {}: must be >= 1", o.accumulation));
  }
  if (!(o.input_samples_per_s >= 0) || !std::isfinite(o.input_samples_per_s)) {
    throw UsageError(fmt::format(
        "DeviceModelOptions.input_samples_per_s = {}: must be finite and >= 0 (0: unlimited)",
        o.input_samples_per_s));
  }
}

double LayerTime::time_s() const {
  double sum = 0;
  for (const PassTime& p : passes) sum += p.time_s;
  return sum;
}

bool LayerTime::memory_bound() const {
  double compute = 0;
  double memory = 0;
  for (const PassTime& p : passes) {
    compute += p.compute_s;
    memory += p.memory_s;
  }
  return memory > compute;
}

namespace {

// What every layer's passes in one ModelStep share: the device's peaks and
// bandwidth per core, its curves for the precision, and the bytes of an
// activation and of a weight.
struct StepUnits {
  const Device* device = nullptr;
  double matrix_peak = 0;        // the peak of matrix work (MatrixPeakFlops)
  int feature_multiple = 1;      // the tile matrix layers' feature dimensions pad to
  bool on_tensor_units = false;  // matrix work on tensor units (MatrixOnTensorUnits)
  const EfficiencyCurve* matrix_efficiency = nullptr;
  // FP8 (RunsInFp8): its layers' products at the FP8 peak on the device's
  // FP8 curve (Device::Fp8Matrix: its own, or the 16-bit curve carried at
  // the same fraction of the peak); every other matrix layer as mixed.
  Device::MatrixCurve fp8_matrix;
  bool transposes = false;       // ModelsTransposes
  bool nchw_batch_norm = false;  // ModelsNchwBatchNorm
  // Each core runs its share of the batch on its share of the device.
  double core_peak16 = 0, core_fp8_peak = 0, core_vector_peak = 0, core_bandwidth = 0;
  double b = 0;  // samples per core
  // Mixed precision (Micikevicius et al., ICLR 2018): activations and the
  // weight copies the layers read are 2 bytes; the optimizer updates FP32
  // master weights and casts them to the 2-byte copy (read 4, write 2 per
  // trainable parameter). FP8 keeps the same tensors (Transformer Engine
  // casts to FP8 only in front of its products).
  bool mixed = false;
  double sample_bytes = 4, weight_bytes = 4;
  bool amp_casts = false;  // AmpCastsApply
};

StepUnits MakeStepUnits(const Device& device, const DeviceModelOptions& options,
                        int64_t per_core_batch) {
  const Precision precision = options.precision;
  StepUnits u;
  u.device = &device;
  u.matrix_peak = MatrixPeakFlops(device, precision);
  const bool fp8 = precision == Precision::kFp8;
  const double peak16 = fp8 ? MatrixPeakFlops(device, Precision::kMixed) : u.matrix_peak;
  u.on_tensor_units = MatrixOnTensorUnits(device, precision);
  u.feature_multiple =
      u.on_tensor_units ? device.feature_multiple_tensor : device.feature_multiple_fp32;
  u.matrix_efficiency = u.on_tensor_units ? &device.TensorEfficiency() : &device.compute_efficiency;
  u.fp8_matrix = fp8 ? device.Fp8Matrix() : Device::MatrixCurve{u.matrix_efficiency, 1.0};
  u.transposes = ModelsTransposes(device, options);
  u.nchw_batch_norm = ModelsNchwBatchNorm(device, options);
  const double cores = device.cores;
  u.core_peak16 = peak16 / cores;
  u.core_fp8_peak = u.matrix_peak / cores;
  u.core_vector_peak = device.fp32_flops_per_s / cores;
  u.core_bandwidth = device.memory_bandwidth_bytes_per_s / cores;
  u.b = static_cast<double>(per_core_batch);
  u.mixed = SixteenBitActivations(precision);
  u.sample_bytes = u.mixed ? 2 : 4;
  u.weight_bytes = u.mixed ? 2 : 4;
  u.amp_casts = AmpCastsApply(device, precision);
  return u;
}

// Time of a memory-bound kernel moving `bytes`, at the element-wise curve.
double MemoryTimeStep(const StepUnits& u, double bytes) {
  return bytes / (u.core_bandwidth * u.device->memory_efficiency.At(bytes));
}

// What the passes of one layer share.
struct LayerPlanStep {
  const Layer* layer = nullptr;
  const LayerCost* cost = nullptr;
  bool matrix = false;    // MatrixWork
  double padding = 1;     // MatrixWork
  bool amp_fp32 = false;  // AMP keeps it in FP32: 4-byte tensors, casts around it
  double sample_bytes = 4, weight_bytes = 4;
  bool fp8 = false;  // RunsInFp8
  FusedRole fused = FusedRole::kNone;
};

// Elements of the layer's (first) input and of its output, per sample.
double InputElementsStep(const Network& network, const Layer& layer) {
  return static_cast<double>(network.layer(layer.input_ids.front()).output_shape.elements());
}
double OutputElementsStep(const Layer& layer) {
  return static_cast<double>(layer.output_shape.elements());
}

// Adds cast kernels to the pass, one per tensor, each moving `moved` bytes.
void AddCastsStep(const StepUnits& u, std::initializer_list<double> moved_bytes, PassTime& p) {
  for (const double moved : moved_bytes) {
    p.cast_bytes += moved;
    p.cast_memory_s += MemoryTimeStep(u, moved);
    p.cast_kernels += 1;
  }
  p.cast_s = p.cast_memory_s + p.cast_kernels * u.device->kernel_launch_s;
}

// AMP's casts around a layer it keeps in FP32. Forward: the input cast up,
// the output cast down; backward-data: the output gradient up, the input
// gradient down. Each cast reads 2 and writes 4 bytes per element, or reads
// 4 and writes 2.
void AddAmpCastsStep(const StepUnits& u, const Network& network, const Layer& layer, PassTime& p) {
  const double in = InputElementsStep(network, layer);
  const double out = OutputElementsStep(layer);
  AddCastsStep(u, {6 * in * u.b, 6 * out * u.b}, p);
}

// Transformer Engine's fused cast-transpose in front of an FP8 dense layer
// (te.Linear; NVIDIA's MLPerf BERT te_layers.py): the forward pass casts its
// input and its weight, the backward-data pass the output gradient, each to
// FP8 and to FP8 transposed for the weight-gradient product (read 2, write 1
// + 1 bytes per element). A product that writes FP8 itself (a GEMM-GELU
// epilogue) would spare its reader the input cast: not modeled (every input
// is cast).
void AddFp8CastsStep(const StepUnits& u, const Network& network, const LayerPlanStep& l, Pass pass,
                     PassTime& p) {
  if (pass == Pass::kForward) {
    const double in = InputElementsStep(network, *l.layer);
    AddCastsStep(u, {4 * (in * u.b), 4 * static_cast<double>(l.cost->trainable_params)}, p);
  } else {
    AddCastsStep(u, {4 * (OutputElementsStep(*l.layer) * u.b)}, p);
  }
}

// A layer fused into a batch norm's kernel (FusedRoles): its own work runs
// there and launches nothing, and it moves only what the fused kernel moves
// on its account, in tensors of its output: the add its other inputs in the
// forward pass (unfused: all inputs and the output); the ReLU its output for
// the mask in the backward pass (unfused: dy and y read, dx written), and
// after an add also the residual branch's gradient. A sum of the gradients
// from several readers (CountCost) stays a kernel of its own. Takes the bytes
// off `p`; whether the pass runs inside the fused kernel.
bool FuseIntoBatchNormStep(const StepUnits& u, const LayerPlanStep& l, Pass pass, PassTime& p) {
  const Layer& layer = *l.layer;
  const double tensor = OutputElementsStep(layer) * u.b * l.sample_bytes;
  const double inputs = static_cast<double>(layer.input_ids.size());
  double unfused = 0, kept = 0;  // tensors of the layer's own pass
  if (pass == Pass::kForward) {
    unfused = l.fused == FusedRole::kAddIntoBn ? inputs + 1 : 2;
    kept = l.fused == FusedRole::kAddIntoBn ? inputs - 1 : 0;
  } else if (pass == Pass::kBackwardData && l.fused != FusedRole::kAddIntoBn) {
    unfused = 3;
    kept = l.fused == FusedRole::kReluIntoBnAdd ? 2 : 1;
  }
  p.bytes = std::max(0.0, p.bytes - (unfused - kept) * tensor);
  return !(pass == Pass::kBackwardData && layer.consumer_ids.size() > 1);
}

// The convolution algorithm of a pass (ConvAlgorithmFor) on the matrix units;
// implicit GEMM for everything else.
ConvAlgorithm PassAlgorithmStep(const StepUnits& u, const Layer& layer, bool on_matrix_units,
                                bool tensor_units) {
  if (layer.kind != LayerKind::kConv2d || !on_matrix_units) return ConvAlgorithm::kImplicitGemm;
  const Window2d& w = layer.conv.window;
  return ConvAlgorithmFor(w.kernel_h, w.kernel_w, w.stride_h, w.stride_w,
                          static_cast<int>(layer.conv.groups), tensor_units,
                          !u.device->winograd_efficiency.points.empty());
}

// The compute time of a forward or backward pass: its algorithm's FLOPs on
// the units and curve it runs on. Matrix work: the curve at the kernel's
// FLOPs times its shape term (its dimensions worked out only when the curve
// has one). A grouped convolution off the matrix units (depthwise) at the
// device's depthwise curve, when it has one.
void TimePassComputeStep(const StepUnits& u, const Network& network, const LayerPlanStep& l,
                         Pass pass, bool fused_pass, PassTime& p) {
  const Device& device = *u.device;
  const Layer& layer = *l.layer;
  const bool on_matrix_units = l.matrix;
  const double peak = !on_matrix_units ? u.core_vector_peak
                      : l.fp8          ? u.core_fp8_peak
                                       : u.core_peak16;
  const double curve_size = on_matrix_units && l.fp8 ? u.fp8_matrix.size_factor : 1.0;
  p.tensor_units = on_matrix_units && u.on_tensor_units;
  const ConvAlgorithm algorithm = PassAlgorithmStep(u, layer, on_matrix_units, p.tensor_units);
  p.winograd = algorithm == ConvAlgorithm::kWinogradF2x2_3x3;
  p.algorithm_flops = AlgorithmFlops(algorithm, p.flops);
  const bool depthwise =
      layer.kind == LayerKind::kConv2d && !l.matrix && !device.depthwise_efficiency.points.empty();
  const EfficiencyCurve& efficiency = p.winograd                 ? device.winograd_efficiency
                                      : on_matrix_units && l.fp8 ? *u.fp8_matrix.curve
                                      : on_matrix_units          ? *u.matrix_efficiency
                                      : depthwise                ? device.depthwise_efficiency
                                                                 : device.compute_efficiency;
  if (!(p.flops > 0) || fused_pass) return;
  const double shape =
      on_matrix_units && efficiency.half_dim > 0
          ? efficiency.ShapeFactor(PassGemmDims(network, layer, pass, u.b, algorithm))
          : 1.0;
  p.compute_s = p.algorithm_flops / (peak * efficiency.At(p.algorithm_flops * curve_size) * shape);
}

// The memory time of a forward or backward pass: a row-normalizing layer at
// the device's normalization curve; a batch norm under cuDNN's NCHW
// per-channel kernels (ModelsNchwBatchNorm) its tensors and parameters at 4
// bytes per element, at kNchwBatchNormTimeRatio times the element-wise
// memory time.
void TimePassMemoryStep(const StepUnits& u, const LayerPlanStep& l, const PassCost& work,
                        PassTime& p) {
  if (!(p.bytes > 0)) return;
  const Device& device = *u.device;
  const Layer& layer = *l.layer;
  const EfficiencyCurve& memory_efficiency = NormalizesRows(layer.kind)
                                                 ? device.NormalizationMemoryEfficiency()
                                                 : device.memory_efficiency;
  p.memory_s = p.bytes / (u.core_bandwidth * memory_efficiency.At(p.bytes));
  if (u.nchw_batch_norm && layer.kind == LayerKind::kBatchNorm) {
    const double fp32_bytes = work.BytesRead(u.b, 4, 4) + work.BytesWritten(u.b, 4, 4);
    p.memory_s = kNchwBatchNormTimeRatio * fp32_bytes /
                 (u.core_bandwidth * device.memory_efficiency.At(fp32_bytes));
  }
}

// Layout transposes around a tensor-unit convolution (ModelsTransposes). Each
// pass of a convolution touches its input (x or dx) and its output (y or
// dy): in the other layout each is transposed to the kernel's layout or back,
// read once and written once by a kernel of its own (cuDNN's nchwToNhwcKernel
// and nhwcToNchwKernel); its kernel (W or dW) too unless the window is 1x1,
// where both layouts are the same bytes. Timed as 4-byte elements whatever
// the precision. From the H200 kernel table: AMP's 169 + 79 transposes per
// step are exactly this count for the passes cuDNN ran through its NHWC
// kernels; TF32's 159 + 67 within one.
void AddLayoutTransposesStep(const StepUnits& u, const Network& network, const Layer& layer,
                             PassTime& p) {
  const double x = InputElementsStep(network, layer);
  const double y = OutputElementsStep(layer);
  const bool window = layer.conv.window.kernel_h * layer.conv.window.kernel_w > 1;
  const double w = window ? static_cast<double>(MatrixKernel(layer)->shape.elements()) : 0.0;
  for (const auto& [elements, bytes_per_element] :
       {std::pair{x * u.b, u.sample_bytes}, std::pair{y * u.b, u.sample_bytes},
        std::pair{w, u.weight_bytes}}) {
    if (elements <= 0) continue;
    const double as_fp32 = 2 * elements * 4;
    p.layout_bytes += 2 * elements * bytes_per_element;
    p.layout_memory_s += MemoryTimeStep(u, as_fp32);
    p.layout_kernels += 1;
  }
  p.layout_s = p.layout_memory_s + p.layout_kernels * u.device->kernel_launch_s;
}

// A forward or backward pass of a layer: its work (padded on the matrix
// units), AMP's and FP8's casts, its fusion into a batch norm, its compute
// and memory times, its launch and layout transposes.
PassTime TimeLayerPassStep(const StepUnits& u, const Network& network, const LayerPlanStep& l,
                           Pass pass) {
  const Layer& layer = *l.layer;
  const PassCost& work = l.cost->pass(pass);
  const bool casts_pass = pass == Pass::kForward || pass == Pass::kBackwardData;
  PassTime p;
  p.flops = work.flops.At(u.b) * (l.matrix ? l.padding : 1.0);
  p.bytes = work.BytesRead(u.b, l.sample_bytes, l.weight_bytes) +
            work.BytesWritten(u.b, l.sample_bytes, l.weight_bytes);
  if (l.amp_fp32 && casts_pass && (p.flops > 0 || p.bytes > 0)) {
    AddAmpCastsStep(u, network, layer, p);
  }
  if (l.fp8 && layer.kind == LayerKind::kDense && casts_pass) {
    AddFp8CastsStep(u, network, l, pass, p);
  }
  const bool fused_pass = l.fused != FusedRole::kNone && FuseIntoBatchNormStep(u, l, pass, p);
  TimePassComputeStep(u, network, l, pass, fused_pass, p);
  TimePassMemoryStep(u, l, work, p);
  p.kernels = (p.flops > 0 || p.bytes > 0) && !fused_pass ? 1 : 0;
  p.launch_s = p.kernels * u.device->kernel_launch_s;
  if (u.transposes && p.tensor_units && layer.kind == LayerKind::kConv2d && p.flops > 0 &&
      !RunsAsNchwGemm(layer)) {
    AddLayoutTransposesStep(u, network, layer, p);
  }
  p.time_s = std::max(p.compute_s, p.memory_s) + p.launch_s + p.layout_s + p.cast_s;
  return p;
}

// A layer's update pass: the optimizer's vector work over FP32 state and,
// under mixed precision, the 2-byte copy of each weight written (read 4,
// write 2 per trainable parameter).
PassTime TimeUpdatePassStep(const StepUnits& u, const LayerPlanStep& l) {
  const Device& device = *u.device;
  const PassCost& work = l.cost->pass(Pass::kUpdate);
  PassTime p;
  p.flops = work.flops.At(u.b);
  p.bytes = work.BytesRead(u.b, l.sample_bytes, 4) + work.BytesWritten(u.b, l.sample_bytes, 4);
  if (u.mixed) p.bytes += 6 * static_cast<double>(l.cost->trainable_params);
  p.algorithm_flops = AlgorithmFlops(ConvAlgorithm::kImplicitGemm, p.flops);
  if (p.flops > 0) {
    p.compute_s =
        p.algorithm_flops / (u.core_vector_peak * device.compute_efficiency.At(p.algorithm_flops));
  }
  if (p.bytes > 0) p.memory_s = MemoryTimeStep(u, p.bytes);
  p.kernels = p.flops > 0 || p.bytes > 0 ? 1 : 0;
  p.launch_s = p.kernels * device.kernel_launch_s;
  p.time_s = std::max(p.compute_s, p.memory_s) + p.launch_s + p.layout_s + p.cast_s;
  return p;
}

// What one layer's passes share (LayerPlanStep).
LayerPlanStep PlanLayerStep(const StepUnits& u, const Network& network, const Layer& layer,
                            const LayerCost& cost, FusedRole fused,
                            const DeviceModelOptions& options) {
  LayerPlanStep l;
  l.layer = &layer;
  l.cost = &cost;
  l.fused = fused;
  std::tie(l.matrix, l.padding) = MatrixWork(network, layer, u.feature_multiple);
  l.amp_fp32 = u.amp_casts && layer.kind != LayerKind::kInput &&
               RunsInFp32UnderAmp(layer.kind, options.amp_ops);
  l.sample_bytes = l.amp_fp32 ? 4 : u.sample_bytes;
  l.weight_bytes = l.amp_fp32 ? 4 : u.weight_bytes;
  l.fp8 = l.matrix && RunsInFp8(layer, options.precision, options.attention);
  return l;
}

// One layer's passes, each timed (TimeLayerPassStep, TimeUpdatePassStep).
LayerTime TimeLayerStep(const StepUnits& u, const Network& network, const LayerPlanStep& l) {
  LayerTime t;
  t.name = l.layer->name;
  t.kind = LayerKindName(l.layer->kind);
  t.fused = l.fused;
  t.matrix = l.matrix;
  t.padding = l.padding;
  for (Pass pass : kAllPasses) {
    t.passes[static_cast<size_t>(pass)] =
        pass == Pass::kUpdate ? TimeUpdatePassStep(u, l) : TimeLayerPassStep(u, network, l, pass);
  }
  return t;
}

// Adds a layer's passes to one micro-batch's totals: the update to
// update_s, the others to compute_s (the forward twice when recomputed,
// `rerun`), and to `backward_s` its part of the backward pass (its backward
// passes, and its forward again when recomputed, run just before them).
void AddLayerToStep(const LayerTime& t, bool rerun, ModeledStep& step, double& backward_s) {
  for (Pass pass : kAllPasses) {
    const PassTime& p = t.passes[static_cast<size_t>(pass)];
    if (pass == Pass::kUpdate) {
      step.update_s += p.time_s;
      continue;
    }
    const bool twice = pass == Pass::kForward && rerun;
    const double runs = twice ? 2 : 1;
    step.compute_s += runs * p.time_s;
    step.layout_s += runs * p.layout_s;
    step.cast_s += runs * p.cast_s;
    if (twice) step.recompute_s += p.time_s;
    if (pass != Pass::kForward || twice) backward_s += p.time_s;
  }
}

// DDP: gradients in the order the backward pass finishes them (the last
// layer first), a layer's ready when its backward passes end; packed into
// buckets, each all-reduced once its last gradient is ready and the
// communicator is free (fitspeed/timing/data_parallel.h). Adds the
// all-reduces and what of them the backward pass does not hide to `step`.
template <typename AllReduce>
void OverlapGradientBucketsStep(const NetworkCost& cost, const std::vector<double>& backward_s,
                                double grad_bytes_per_param, const DeviceModelOptions& options,
                                AllReduce all_reduce, ModeledStep& step) {
  std::vector<double> bytes, ready;
  double clock = 0;
  for (int id = static_cast<int>(backward_s.size()) - 1; id >= 0; --id) {
    clock += backward_s[static_cast<size_t>(id)];
    const double params =
        static_cast<double>(cost.layers[static_cast<size_t>(id)].trainable_params);
    if (params <= 0) continue;
    bytes.push_back(GradientBytes(params, grad_bytes_per_param));
    ready.push_back(clock);
  }
  std::vector<BucketComm> buckets;
  for (const std::vector<int>& bucket :
       PlanGradientBuckets(bytes, options.bucket_bytes, options.first_bucket_bytes)) {
    double size = 0;
    for (int i : bucket) size += bytes[static_cast<size_t>(i)];
    buckets.push_back({ready[static_cast<size_t>(bucket.back())], all_reduce(size)});
  }
  const OverlapTimeline timeline = ScheduleBucketedAllReduce(buckets, step.backward_s);
  step.comm_s += timeline.comm_s;
  step.exposed_comm_s += timeline.exposed_s;
  step.comm_buckets = static_cast<int>(buckets.size());
}

// The gradients all-reduced between the devices: a ring in one node, or a
// ring in each node and one over the nodes (HierarchicalAllReduceTime); once
// after the backward pass, or bucket by bucket behind it (options.overlap).
void AllReduceBetweenDevicesStep(const Device& device, const NetworkCost& cost,
                                 const std::vector<double>& backward_s, double gradient_bytes,
                                 double grad_bytes_per_param, const DeviceModelOptions& options,
                                 ModeledStep& step) {
  const DeviceLink* link = device.FindLink("devices");
  if (link == nullptr) {
    throw UsageError(
        fmt::format("device {} has no link that connects devices: cannot model {} devices",
                    device.name, options.devices));
  }
  const Link intra = *link;
  const int per_node = options.devices_per_node > 0
                           ? std::min(options.devices_per_node, options.devices)
                           : options.devices;
  step.nodes = options.devices / per_node;
  Link inter;
  int rails = 1;  // the node's interfaces that carry the between-node ring at once
  if (step.nodes > 1) {
    const DeviceLink* network_link = device.FindLink("network");
    if (network_link == nullptr) {
      throw UsageError(fmt::format(
          "{} devices over {} nodes of {}: device {} has no network link between nodes; give "
          "one with a links file (--links FILE, written by `fitspeed linkbench --from` from "
          "an nccl-tests or osu_allreduce log; docs/devices.md, \"Links files\")",
          options.devices, step.nodes, per_node, device.name));
    }
    inter = *network_link;
    if (network_link->per_device) rails = per_node;
  }
  auto all_reduce = [&](double bytes) {
    return step.nodes > 1
               ? HierarchicalAllReduceTime(bytes, per_node, step.nodes, intra, inter, rails)
               : RingAllReduceTime(bytes, options.devices, intra);
  };
  if (options.overlap) {
    OverlapGradientBucketsStep(cost, backward_s, grad_bytes_per_param, options, all_reduce, step);
    return;
  }
  // One all-reduce of every gradient after the backward pass.
  const double t = all_reduce(gradient_bytes);
  step.comm_s += t;
  step.exposed_comm_s += t;
  step.comm_buckets = 1;
}

// Gradients all-reduced between the cores of the device, then between
// devices, each by the ring formula (core/comm.h): FP32 (the gradients of
// FP32 weights, autocast's too), or 16-bit when the model is cast to 16 bits
// whole (GradientBytesPerParameter).
void ReduceGradientsStep(const Device& device, const NetworkCost& cost,
                         const std::vector<double>& backward_s, const DeviceModelOptions& options,
                         ModeledStep& step) {
  const double grad_bytes_per_param = GradientBytesPerParameter(options);
  const double gradient_bytes =
      GradientBytes(static_cast<double>(cost.total.trainable_params), grad_bytes_per_param);
  if (device.cores > 1) {
    // Between the cores of one device (a TPU board's ICI): one all-reduce
    // after the backward pass, exposed whole.
    const DeviceLink* link = device.FindLink("cores");
    FITSPEED_CHECK(link != nullptr, "a device with several cores has a cores link (validated)");
    step.comm_s += RingAllReduceTime(gradient_bytes, device.cores, *link);
    step.exposed_comm_s = step.comm_s;
  }
  if (options.devices > 1) {
    AllReduceBetweenDevicesStep(device, cost, backward_s, gradient_bytes, grad_bytes_per_param,
                                options, step);
  }
}

// The step from one micro-batch's passes: gradient accumulation (every
// micro-batch runs its passes and is a host call of its own; the all-reduce
// and the update run once per step), the input pipeline, throughput and MFU.
void CompleteStepTimes(const Network& network, const Device& device, const NetworkCost& cost,
                       double matrix_peak, const DeviceModelOptions& options, ModeledStep& step) {
  const double micro = options.accumulation;
  step.accumulation = options.accumulation;
  step.compute_s *= micro;
  step.recompute_s *= micro;
  step.layout_s *= micro;
  step.cast_s *= micro;
  step.host_s = micro * device.step_host_s / options.steps_per_execution;
  step.device_step_s = step.compute_s + step.update_s + step.exposed_comm_s + step.host_s;
  // The input pipeline prepares the next batches while the device trains on
  // this one (DataLoader workers, tf.data, DALI prefetch): the slower of the
  // two sets the pace.
  if (options.input_samples_per_s > 0) {
    step.input_s = micro * step.per_device_batch / options.input_samples_per_s;
  }
  step.input_bound = step.input_s > step.device_step_s;
  step.step_time_s = std::max(step.device_step_s, step.input_s);
  const double samples = micro * static_cast<double>(step.batch);
  step.throughput_sps = samples / step.step_time_s;
  step.step_flops = cost.StepFlops(samples) - (micro - 1) * cost.UpdateFlopsPerStep();
  const double model_flops = options.attention == AttentionKernel::kUnfused
                                 ? cost.TrainFlopsPerSample()
                                 : CountCost(network, options.optimizer).TrainFlopsPerSample();
  step.mfu = model_flops * samples / step.step_time_s / (matrix_peak * options.devices);
}

// Memory of one core: every core holds the parameters, gradients and
// optimizer state, and the activations of its share of the batch. Mixed
// precision adds the 2-byte copy of every parameter (half the FP32 bytes);
// FP8 the FP8 weight of each FP8 dense layer and its transpose (2 bytes per
// parameter, `fp8_weights` parameters). Activations are counted at 2 bytes
// under FP8 too (Transformer Engine keeps some inputs for the backward pass
// in FP8: an upper bound).
void EstimateStepMemory(const Network& network, const StepUnits& u, double fp8_weights,
                        const DeviceModelOptions& options, ModeledStep& step) {
  const MemoryEstimate memory = EstimateTrainingMemory(
      network, u.b, options.optimizer, u.sample_bytes, 4, options.attention, options.recompute);
  step.memory_bytes =
      memory.total_bytes() + (u.mixed ? memory.parameter_bytes / 2 : 0) + 2 * fp8_weights;
  step.memory_capacity_bytes =
      u.device->memory_capacity_bytes / static_cast<double>(u.device->cores);
  step.fits = step.memory_bytes <= step.memory_capacity_bytes;
}

}  // namespace

ModeledStep ModelStep(const Network& network, const Device& device, int64_t batch,
                      const DeviceModelOptions& options) {
  ValidateDeviceModelOptions(options);
  if (!network.finalized()) throw UsageError("ModelStep needs a finalized network");
  if (batch < options.devices) {
    throw UsageError(
        fmt::format("batch {} cannot be split over {} devices", batch, options.devices));
  }
  ModeledStep step;
  step.batch = batch;
  step.devices = options.devices;
  step.per_device_batch = static_cast<double>(batch) / options.devices;
  const double cores = device.cores;
  step.per_core_batch = RoundUp(static_cast<int64_t>(std::ceil(step.per_device_batch / cores)),
                                device.batch_multiple);
  const StepUnits u = MakeStepUnits(device, options, step.per_core_batch);

  const NetworkCost cost = CountCost(network, options.optimizer, options.attention);
  const std::vector<bool> rerun = RecomputedForwards(network, options.recompute);
  const std::vector<FusedRole> fused = FusedRoles(network, options.fusion);
  // Each layer's part of one micro-batch's backward pass (AddLayerToStep).
  std::vector<double> backward_s(static_cast<size_t>(network.size()), 0.0);
  double fp8_weights = 0;  // parameters of the dense layers run in FP8
  step.layers.reserve(static_cast<size_t>(network.size()));
  for (int id = 0; id < network.size(); ++id) {
    const size_t i = static_cast<size_t>(id);
    const Layer& layer = network.layer(id);
    const LayerPlanStep l = PlanLayerStep(u, network, layer, cost.layers[i], fused[i], options);
    if (l.fp8 && layer.kind == LayerKind::kDense) {
      fp8_weights += static_cast<double>(cost.layers[i].trainable_params);
    }
    LayerTime t = TimeLayerStep(u, network, l);
    AddLayerToStep(t, rerun[i], step, backward_s[i]);
    step.layers.push_back(std::move(t));
  }
  for (double s : backward_s) step.backward_s += s;
  ReduceGradientsStep(device, cost, backward_s, options, step);
  CompleteStepTimes(network, device, cost, u.matrix_peak, options, step);
  EstimateStepMemory(network, u, fp8_weights, options, step);
  return step;
}

DeviceSweepResult ModelSweep(const Network& network, const Device& device,
                             const DeviceModelOptions& options) {
  ValidateDeviceModelOptions(options);
  if (!network.finalized()) throw UsageError("ModelSweep needs a finalized network");
  std::vector<int64_t> batches = options.batches;
  if (batches.empty()) {
    for (int64_t b = options.devices; b <= options.max_batch; b *= 2) batches.push_back(b);
  }
  DeviceSweepResult result;
  result.device = device.name;
  result.network = network.name;
  result.precision = options.precision;
  result.layout = options.layout;
  result.amp_ops = options.amp_ops;
  result.amp_casts =
      AmpCastsApply(device, options.precision) && options.amp_ops != AmpOpList::kNone;
  result.fusion = options.fusion;
  for (const FusedRole role : FusedRoles(network, options.fusion)) {
    result.fused_layers += role != FusedRole::kNone;
  }
  bool convolutions = false;
  bool batch_norms = false;
  for (const Layer& layer : network.layers()) {
    convolutions |= layer.kind == LayerKind::kConv2d;
    batch_norms |= layer.kind == LayerKind::kBatchNorm;
  }
  // Only convolutions transpose (ModelStep), so only then is it reported.
  result.transposes = convolutions && ModelsTransposes(device, options);
  result.nchw_batch_norm = batch_norms && ModelsNchwBatchNorm(device, options);
  result.price_per_hour = device.price_per_hour;
  result.optimizer = options.optimizer;
  result.devices = options.devices;
  result.devices_per_node = options.devices_per_node;
  result.overlap = options.overlap;
  result.bucket_bytes = options.bucket_bytes;
  result.first_bucket_bytes = options.first_bucket_bytes;
  result.steps_per_execution = options.steps_per_execution;
  result.accumulation = options.accumulation;
  result.input_samples_per_s = options.input_samples_per_s;
  const NetworkCost cost = CountCost(network, options.optimizer, options.attention);
  result.forward_flops_per_sample = cost.ForwardFlopsPerSample();
  result.train_flops_per_sample = cost.TrainFlopsPerSample();
  const std::vector<bool> rerun = RecomputedForwards(network, options.recompute);
  for (int id = 0; id < network.size(); ++id) {
    if (rerun[static_cast<size_t>(id)]) {
      result.train_flops_per_sample +=
          cost.layers[static_cast<size_t>(id)].pass(Pass::kForward).flops.per_sample;
    }
  }
  result.tokens_per_sample = network.TokensPerSample();
  result.attention = options.attention;
  result.recompute = options.recompute;
  result.checkpoint_segments = static_cast<int>(CheckpointSegments(network).size());
  result.attention_cores = static_cast<int>(FindAttentionCores(network).size());
  result.matrix_peak_flops = MatrixPeakFlops(device, options.precision);
  for (int64_t batch : batches) {
    ModeledStep step = ModelStep(network, device, batch, options);
    (step.fits ? result.steps : result.out_of_memory).push_back(std::move(step));
  }
  return result;
}

std::optional<double> DeviceSweepResult::CostPerMillionSamples(const ModeledStep& step) const {
  if (!price_per_hour || !(step.throughput_sps > 0)) return std::nullopt;
  return step.devices * *price_per_hour / 3600 * 1e6 / step.throughput_sps;
}

std::vector<Sample> DeviceSweepResult::Samples() const {
  std::vector<Sample> samples;
  for (size_t i = 0; i < steps.size(); ++i) {
    Sample s;
    s.source = fmt::format("model:{}:{}", device, network);
    s.line = static_cast<int>(i + 1);
    // A step trains all its micro-batches: the law's batch is their sum.
    s.batch = static_cast<double>(steps[i].batch) * steps[i].accumulation;
    s.devices = steps[i].devices;
    s.label = network;
    s.precision = PrecisionName(precision);
    TagMap tags{{"device", device}, {"optimizer", OptimizerName(optimizer)}};
    if (accumulation > 1) tags["accumulation"] = std::to_string(accumulation);
    s.tags = tags;
    s.step_time_s = steps[i].step_time_s;
    if (tokens_per_sample > 0) s.seq_len = static_cast<double>(tokens_per_sample);
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace fitspeed
