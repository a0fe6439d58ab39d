// The modeled training step of a network on a catalogued device: a roofline
// per layer and pass, with the device's efficiency curves, tiles, overheads
// and memory capacity. It yields Samples of the same kind as a measured host
// sweep, so fitspeed::Fit fits the law to them:
//
//   fitspeed::Device v100 = fitspeed::LoadDevice("v100-sxm2");
//   fitspeed::DeviceModelOptions options;
//   options.batches = {32, 64, 128, 256};
//   fitspeed::DeviceSweepResult sweep = fitspeed::ModelSweep(net, v100, options);
//   fitspeed::FitResult fit = fitspeed::Fit(sweep.Samples());
//
// Per layer and pass (docs/devices.md, "Step model"):
//   time = max(F / (peak * compute_eff(F)), B / (bw * mem_eff(B))) + launch
// with F the pass's FLOPs and B its bytes at the padded per-core batch
// (Williams, Waterman & Patterson, "Roofline", CACM 2009; efficiency against
// kernel size as in Calculon, Isaev et al., SC'23).
#ifndef FITSPEED_DEVICE_STEP_MODEL_H_
#define FITSPEED_DEVICE_STEP_MODEL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/precision.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/device/device.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/output.h"
#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"

namespace fitspeed {

// Memory layout of the framework's activations. Tensor-unit convolution
// kernels of a GPU work in one layout (Device::tensor_layout, NHWC on NVIDIA
// tensor cores); a framework keeping its activations in the other one pays
// transposes around its convolutions (ModelsTransposes) and, in NCHW, cuDNN's
// slower NCHW batch norm (ModelsNchwBatchNorm) (NVIDIA Deep Learning
// Performance Guide, "Tensor Layouts In Memory"; PyTorch keeps NCHW unless a
// model is converted to channels_last).
enum class ActivationLayout {
  kNchw,  // channels first: PyTorch's and MXNet's default, TensorFlow graphs built NCHW
  kNhwc,  // channels last: PyTorch channels_last, TensorFlow's layout optimizer for FP16
};
const char* ActivationLayoutName(ActivationLayout layout);        // "nchw", "nhwc"
ActivationLayout ParseActivationLayout(const std::string& name);  // throws UsageError

// Which layers automatic mixed precision keeps in FP32 (docs/devices.md,
// "Step model"). Both frameworks run matrix work in FP16/BF16 and keep
// numerically sensitive ops in FP32, casting their inputs up and their
// outputs down, but their lists differ:
// - PyTorch autocast ("CUDA ops that can autocast to float32", torch.amp docs):
//   layer_norm, softmax, cross_entropy; RMSNorm as Hugging Face writes it
//   (computed in FP32, cast back).
// - TensorFlow's AMP graph rewrite (auto_mixed_precision_lists.h, deny list:
//   Mean, Pow, Sum, Exp, SoftmaxCrossEntropyWithLogits, ...): layer norm and
//   RMSNorm (their Mean), GELU in the tanh approximation BERT's code writes
//   with tf.pow, and the softmax cross-entropy; Softmax itself follows its
//   FP16 input.
// - None: the whole model cast to 16 bits (apex amp opt_level O2, or
//   model.half() with FP32 master weights in the optimizer, as NVIDIA's MLPerf
//   BERT runs): no layer is kept in FP32 and nothing is cast; norms, softmax
//   and the loss read and write 16-bit tensors (computing in FP32 inside their
//   kernels).
enum class AmpOpList {
  kPyTorch,
  kTensorFlow,
  kNone,
};
const char* AmpOpListName(AmpOpList list);          // "pytorch", "tensorflow", "none"
AmpOpList ParseAmpOpList(const std::string& name);  // throws UsageError
// Whether a layer of `kind` runs in FP32 under mixed precision with `list`
// (each kind states it in its file of src/model/kinds/).
bool RunsInFp32UnderAmp(LayerKind kind, AmpOpList list);
// The layer kinds of `list`, comma-separated ("layer_norm, rms_norm, ...").
std::string AmpFp32KindNames(AmpOpList list);

// Element-wise work a framework fuses into the kernels around it, as its
// documented configuration says:
// - kNone: every layer its own kernel through memory (PyTorch eager).
// - kBatchNormReluAdd: a ReLU that reads a batch norm, and an add (with the
//   ReLU after it) that reads one, run inside the batch norm's kernel (cuDNN's
//   batch norm with CUDNN_BATCHNORM_OPS_BN_ACTIVATION / _BN_ADD_ACTIVATION, as
//   NVIDIA's MXNet ResNet-50 runs FP16 with --fuse-bn-relu 1
//   --fuse-bn-add-relu 1; XLA fuses the same element-wise consumers of a batch
//   norm's normalization). The ReLU then moves no data in the forward pass and
//   reads its output once in the backward pass (the mask); the add reads its
//   other input in the forward pass, and the ReLU after it writes the residual
//   branch's gradient in the backward pass; neither launches a kernel.
enum class ElementwiseFusion {
  kNone,
  kBatchNormReluAdd,
};
const char* ElementwiseFusionName(ElementwiseFusion f);             // "none", "bn-relu-add"
ElementwiseFusion ParseElementwiseFusion(const std::string& name);  // throws UsageError

// How a layer runs under ElementwiseFusion::kBatchNormReluAdd (FusedRoles).
enum class FusedRole {
  kNone,           // its own kernels
  kReluIntoBn,     // a plain ReLU (not ReLU6) whose input is a batch norm read by it alone
  kAddIntoBn,      // an add of two inputs, one a batch norm read by it alone, read by one ReLU
  kReluIntoBnAdd,  // the ReLU after such an add
};
// The role of each layer of `network` (finalized) under `fusion`, by layer id;
// all kNone for kNone.
std::vector<FusedRole> FusedRoles(const Network& network, ElementwiseFusion fusion);

// Whether the memory-bound passes (forward, backward-data) of a layer of
// `kind` run at the device's normalization memory curve
// (Device::NormalizationMemoryEfficiency): layer norm, RMS norm, softmax and
// softmax cross-entropy, whose kernels reduce each row before writing it.
// Every other memory-bound pass, the optimizer's update, and AMP's casts and
// layout transposes run at the element-wise curve (Device::memory_efficiency).
// Batch norm stays element-wise: its statistics reduce over the batch and the
// pixels of a channel, and no sweep of it was found (docs/validation.md,
// "Memory-bound kernels"). Each kind states it in its file of src/model/kinds/.
bool NormalizesRows(LayerKind kind);

struct DeviceModelOptions {
  // Global batch sizes (all devices together), each in [1, kMaxSweepBatch] (2^30,
  // fitspeed/core/sample.h). Empty: 1, 2, 4, ... up to max_batch.
  std::vector<int64_t> batches;
  int64_t max_batch = 4096;  // in [1, kMaxSweepBatch]
  Precision precision = Precision::kFp32;
  Optimizer optimizer = Optimizer::kSgdMomentum;
  // Data-parallel devices sharing each global batch (>= 1); the gradients are
  // all-reduced over the device's "devices" link by the ring formula.
  int devices = 1;
  // Devices per node (>= 0; 0: every device in one node). When it is below
  // `devices` (which it must then divide), the all-reduce is two-level
  // (HierarchicalAllReduceTime, fitspeed/core/comm.h): a ring in each
  // node over the "devices" link, then a ring over the nodes over the
  // device's "network" link (from a links file: `fitspeed linkbench`).
  int devices_per_node = 0;
  // How the all-reduce between devices meets the backward pass. true: as
  // PyTorch DDP does it (Li et al., "PyTorch Distributed", VLDB 2020): the
  // gradients, in the order the backward pass finishes them (last layer
  // first), are packed into buckets (the first of first_bucket_bytes, then
  // bucket_bytes; PlanGradientBuckets in fitspeed/timing/data_parallel.h),
  // each bucket's all-reduce starts when its last gradient is ready and the
  // previous all-reduce has finished, and the step waits only for what
  // outlasts the backward pass. false (the default): one all-reduce of all
  // gradients after the backward pass, all of it exposed. Serial is the
  // default because on Pollux's 2-4 T4 placements it predicts the cost of the
  // other GPUs better with the catalog's datasheet links (docs/validation.md,
  // "Pollux placements"), and calibration (fitspeed/calibrate/calibrate.h)
  // decomposes a step into passes plus a fixed communication time; overlap
  // is for a link measured with `fitspeed linkbench`.
  bool overlap = false;
  double bucket_bytes = 25.0 * 1024 * 1024;   // > 0; DDP's bucket_cap_mb = 25 (MiB)
  double first_bucket_bytes = 1024.0 * 1024;  // > 0; DDP's first bucket, 1 MiB
  // Training steps per host call (Keras steps_per_execution, >= 1): the host
  // overhead is paid once per call.
  int steps_per_execution = 1;
  // Gradient accumulation (>= 1): micro-batches per optimizer step. Each
  // micro-batch is one forward and backward pass over the global batch (all
  // devices) and one host call; the gradients are all-reduced and the
  // optimizer updates once per step, so a step trains accumulation x batch
  // samples and its update and all-reduce are shared by all of them.
  int accumulation = 1;
  // The framework's activation layout; it matters only for convolutions on
  // tensor units of a device whose tensor_layout differs (transposes).
  ActivationLayout layout = ActivationLayout::kNchw;
  // Samples per second the input pipeline (read, decode, augment, copy)
  // delivers to one device, >= 0; 0: unlimited. It runs ahead of the device,
  // so a step takes the longer of the device's step and per_device_batch / rate.
  double input_samples_per_s = 0;
  // How attention cores run (fitspeed/model/network_cost.h): a kernel per layer, or
  // one fused (FlashAttention-style) kernel per pass. Networks without
  // attention are not affected.
  AttentionKernel attention = AttentionKernel::kUnfused;
  // Activation recomputation (CheckpointSegments, fitspeed/model/network_cost.h): the
  // forward pass keeps only the tensors at the network's cuts, and every
  // segment but the last runs its forward again before its backward. Less
  // activation memory, more compute.
  bool recompute = false;
  // With Precision::kMixed: the layers AMP keeps in FP32 (AmpOpList).
  // Each such layer reads and writes 4-byte activations, and in its forward
  // and backward-data passes a cast kernel converts its input up (read 2,
  // write 4 bytes per element) and one its output down (read 4, write 2).
  AmpOpList amp_ops = AmpOpList::kPyTorch;
  // Element-wise work fused into the batch norms' kernels (ElementwiseFusion).
  ElementwiseFusion fusion = ElementwiseFusion::kNone;
};
// Throws UsageError naming the field, its value and the rule it broke.
void ValidateDeviceModelOptions(const DeviceModelOptions& options);

// Whether `precision`'s matrix work runs on `device`'s tensor units: TF32,
// mixed precision and FP8, and FP32 on a device with fp32_matrix_on_tensor16
// (a TPU).
bool MatrixOnTensorUnits(const Device& device, Precision precision);

// The dense matrix peak (FLOP/s, all cores) of `device` at `precision`: TF32,
// FP16/BF16 or FP8 tensor units, else FP32 (the MXU's for a TPU). Throws
// UsageError for a precision the device has no units for (fp8 also needs
// 16-bit units, for the layers it leaves in 16 bits).
double MatrixPeakFlops(const Device& device, Precision precision);

// Whether `layer`'s matrix products run in FP8 under `precision`
// (Precision::kFp8, as NVIDIA's Transformer Engine runs them): dense layers
// (te.Linear), and a fused attention core's two products (TE's FP8 fused
// attention, which NVIDIA's MLPerf BERT runs); an unfused core's batched
// products and every convolution stay in 16 bits. ModelStep times an FP8
// product at the FP8 peak on the 16-bit tensor curve carried at the same
// fraction of the peak (read at F x peak16 / peak8), adds Transformer
// Engine's cast-transpose kernels in front of each FP8 dense layer (its input
// and weight in the forward pass, the output gradient in the backward-data
// pass: read 2, write 1 + 1 bytes per element), and the FP8 weights and their
// transposes to memory (2 bytes per parameter). Everything else runs as
// kMixed (AMP's FP32 layers included).
bool RunsInFp8(const Layer& layer, Precision precision, AttentionKernel attention);

// Bytes per parameter of the gradients ModelStep all-reduces: 2 when the
// model is cast to 16 bits whole (mixed or fp8 with AmpOpList::kNone: its
// weights, so their gradients, are FP16/BF16, as NVIDIA's MLPerf BERT reduces
// them: allreduce_post_accumulation_fp16, distributed LAMB's FP16
// reduce-scatter), else 4 (FP32 weights' gradients, under autocast too).
double GradientBytesPerParameter(const DeviceModelOptions& options);

// Whether a step on `device` with `options` transposes activations around its
// tensor-unit convolutions: the precision runs matrix work on tensor units and
// the device's tensor_layout is set and differs from options.layout. Which
// passes transpose what (docs/devices.md, "Step model"; measured on an H200
// with cuDNN 9, data/resnet50-gpu): a pass run by cuDNN's NHWC implicit-GEMM
// kernels transposes its activations (x and y, or dy and dx) and, when the
// window is larger than 1x1, its kernel (W or dW); a 1x1 stride-1 ungrouped
// convolution whose output has a multiple of 8 pixels runs every pass as a GEMM
// on the NCHW tensors and transposes nothing (RunsAsNchwGemm). cuDNN's
// transpose kernels move 2-byte elements at the rate of 4-byte ones, so every
// transpose is timed as 4 bytes per element, read once and written once.
bool ModelsTransposes(const Device& device, const DeviceModelOptions& options);
// Whether a conv2d layer runs as GEMMs on NCHW tensors (no transposes): a 1x1
// window, stride 1, no padding, one group, and output height x width a
// multiple of 8. False for every other layer.
bool RunsAsNchwGemm(const Layer& layer);

// Whether batch norm runs cuDNN's NCHW per-channel kernels on `device`: a GPU
// whose tensor-unit convolutions work in NHWC (Device::tensor_layout "nhwc":
// the catalog's tensor-core GPUs) with options.layout NCHW, at any precision.
// Those kernels reduce each channel in one thread block and move a 2-byte
// element in the time of a 4-byte one; on an H200 (cuDNN 9.19) they took
// kNchwBatchNormTimeRatio times the element-wise memory time of the same
// elements at 4 bytes (docs/validation.md, "First-hand ResNet-50 on one
// H200"). Measured on the H200 only; carried to the other tensor-core GPUs as
// the same ratio.
bool ModelsNchwBatchNorm(const Device& device, const DeviceModelOptions& options);
// From the H200 kernel table (data/resnet50-gpu/resnet50_kernels.csv), batch
// 256: ResNet-50's 53 batch norms normalize 2,845,179,904 elements per step;
// the model counts 8 tensor sweeps per element over the forward (x read twice,
// y written), backward-weights (x, dy read) and backward-data (x, dy read, dx
// written) passes: 32 bytes per element at 4 bytes, 91.04 GB in 159 passes of
// 51-2,466 MB, which the H200's element-wise curve (0.8644 of 4.8 TB/s from
// 100 MB) times at 21.95 ms (8.23 forward, 13.72 backward). cuDNN's NCHW
// kernels took 40.29 ms (FP16) and 43.32 ms (FP32): 1.836x and 1.973x; their
// mean, 1.905 (forward alone 1.76x and 1.74x, backward 1.88x and 2.11x).
inline constexpr double kNchwBatchNormTimeRatio = 1.905;

// One pass of one layer on one core.
struct PassTime {
  double flops = 0;  // at the padded per-core batch, padded dimensions
  double bytes = 0;  // read + written
  // flops / (peak * efficiency): Device::TensorEfficiency() for matrix work
  // on tensor units (tensor_units true), else Device::compute_efficiency
  double compute_s = 0;
  double memory_s = 0;  // bytes / (bandwidth * memory efficiency)
  // Kernels the pass launches: 1, or 0 when it does nothing or runs inside
  // another layer's kernel (LayerTime::fused).
  int kernels = 0;
  double launch_s = 0;  // kernels x kernel launch overhead
  // Layout transposes around a tensor-unit convolution (DeviceModelOptions::layout
  // differs from Device::tensor_layout): the bytes they read and write, their
  // memory time (each its own kernel, at the memory efficiency of its size),
  // and how many kernels they launch.
  double layout_bytes = 0;
  double layout_memory_s = 0;
  int layout_kernels = 0;
  double layout_s = 0;  // layout_memory_s + layout_kernels * kernel launch
  // Casts: AMP's around a layer kept in FP32 (DeviceModelOptions::amp_ops),
  // FP8's in front of an FP8 dense layer (RunsInFp8): the bytes the cast
  // kernels read and write, their memory time (each at the memory efficiency
  // of its size) and how many kernels they launch.
  double cast_bytes = 0;
  double cast_memory_s = 0;
  int cast_kernels = 0;
  double cast_s = 0;          // cast_memory_s + cast_kernels * kernel launch
  double time_s = 0;          // max(compute_s, memory_s) + launch_s + layout_s + cast_s
  bool tensor_units = false;  // matrix work on tensor units (TF32, FP16/BF16, TPU MXU)
  // A convolution pass run with Winograd F(2x2, 3x3) (ConvAlgorithmFor,
  // src/device/conv_algorithm.h): compute_s is then algorithm_flops at the
  // device's Winograd curve; `flops` stays the direct count.
  bool winograd = false;
  double algorithm_flops = 0;  // FLOPs the pass's algorithm performs (flops unless winograd)
  bool memory_bound() const { return memory_s > compute_s; }
};

struct LayerTime {
  std::string name;
  std::string kind;                    // LayerKindName()
  bool matrix = false;                 // runs on the matrix units (conv2d/dense with a kernel)
  FusedRole fused = FusedRole::kNone;  // DeviceModelOptions::fusion
  double padding = 1;                  // padded / true FLOPs of the matrix work (1: no padding)
  std::array<PassTime, 4> passes{};    // index: Pass
  double time_s() const;
  // Bound of the layer as a whole: the sums of its passes' compute and memory times.
  bool memory_bound() const;
};

// The modeled step at one global batch.
struct ModeledStep {
  int64_t batch = 0;     // global batch of one micro-batch (all devices)
  int accumulation = 1;  // micro-batches per optimizer step (DeviceModelOptions)
  int devices = 1;
  double per_device_batch = 0;  // batch / devices
  int64_t per_core_batch = 0;   // ceil(per-device batch / cores), padded to the tile
  // Times per optimizer step: with accumulation, compute, layout, host and
  // input are those of all its micro-batches.
  double compute_s = 0;    // sum of the layers' forward and backward passes
  double recompute_s = 0;  // of which forward passes run again (DeviceModelOptions::recompute)
  double layout_s = 0;     // of which layout transposes (PassTime::layout_s)
  double cast_s = 0;       // of which AMP's and FP8's casts (PassTime::cast_s)
  double update_s = 0;     // sum of the layers' optimizer updates
  double comm_s = 0;       // all-reduce between cores and between devices, all of it
  // Of comm_s, the time the step waits for: all of it without overlap; with
  // overlap (DeviceModelOptions::overlap) the all-reduce between cores and
  // what the bucketed all-reduce between devices lasts past the backward pass.
  double exposed_comm_s = 0;
  int comm_buckets = 0;       // all-reduces between devices per step (0 on one device)
  int nodes = 1;              // devices / devices_per_node (1: one node)
  double backward_s = 0;      // the backward pass of one micro-batch (the overlap's window)
  double host_s = 0;          // accumulation x step_host_s / steps_per_execution
  double device_step_s = 0;   // compute + update + exposed_comm + host
  double input_s = 0;         // accumulation x per_device_batch / input rate (0: unlimited)
  bool input_bound = false;   // input_s > device_step_s
  double step_time_s = 0;     // max(device_step_s, input_s)
  double throughput_sps = 0;  // accumulation x batch / step_time_s
  double step_flops = 0;      // FLOPs of the whole step, unpadded (CountCost)
  // Model FLOPs utilization (Chowdhery et al. 2022, PaLM, appendix B): the
  // forward and backward FLOPs of the batch without recomputation (unfused
  // attention's count) per second, over the devices' dense matrix peak at the
  // precision (MatrixPeakFlops x devices).
  double mfu = 0;
  double memory_bytes = 0;           // per core: parameters, gradients, state, activations
  double memory_capacity_bytes = 0;  // per core
  bool fits = true;                  // memory_bytes <= memory_capacity_bytes
  std::vector<LayerTime> layers;     // one per network layer (the input included)
};

struct DeviceSweepResult {
  std::string device;   // Device::name
  std::string network;  // Network::name
  Precision precision = Precision::kFp32;
  ActivationLayout layout = ActivationLayout::kNchw;
  Optimizer optimizer = Optimizer::kSgdMomentum;
  int devices = 1;
  int devices_per_node = 0;       // DeviceModelOptions::devices_per_node
  bool overlap = false;           // DeviceModelOptions::overlap
  double bucket_bytes = 0;        // DeviceModelOptions::bucket_bytes
  double first_bucket_bytes = 0;  // DeviceModelOptions::first_bucket_bytes
  int steps_per_execution = 1;
  int accumulation = 1;            // DeviceModelOptions::accumulation
  double input_samples_per_s = 0;  // DeviceModelOptions::input_samples_per_s
  // The device transposes activations for its tensor-unit convolutions
  // (tensor units in use and Device::tensor_layout differs from `layout`).
  bool transposes = false;
  // Batch norm runs cuDNN's NCHW kernels (ModelsNchwBatchNorm) and the network has one.
  bool nchw_batch_norm = false;
  std::optional<double> price_per_hour;  // Device::price_per_hour, per device
  double forward_flops_per_sample = 0;
  double train_flops_per_sample = 0;  // as modeled (a fused attention's recomputation included)
  // Tokens per sample of a sequence model (Network::TokensPerSample()), else 0:
  // a sample is then one sequence and tokens/s = samples/s x tokens.
  int64_t tokens_per_sample = 0;
  AttentionKernel attention = AttentionKernel::kUnfused;
  bool recompute = false;                   // DeviceModelOptions::recompute
  AmpOpList amp_ops = AmpOpList::kPyTorch;  // DeviceModelOptions::amp_ops
  bool amp_casts = false;  // mixed precision or fp8 on a GPU, amp_ops not none: its layers in FP32
  ElementwiseFusion fusion = ElementwiseFusion::kNone;  // DeviceModelOptions::fusion
  int fused_layers = 0;                    // layers fused into batch norms (FusedRoles)
  int checkpoint_segments = 0;             // CheckpointSegments() of the network
  int attention_cores = 0;                 // FindAttentionCores() of the network
  double matrix_peak_flops = 0;            // MatrixPeakFlops() per device
  std::vector<ModeledStep> steps;          // batches that fit, in order
  std::vector<ModeledStep> out_of_memory;  // batches that do not fit

  // One Sample per step that fits: batch, devices, step_time_s, label = network,
  // precision, source "model:<device>:<network>", line = 1-based position.
  std::vector<Sample> Samples() const;
  // devices x price_per_hour / 3600 x 1e6 / throughput: the cost of training
  // on a million samples at `step`'s pace; nullopt without a price.
  std::optional<double> CostPerMillionSamples(const ModeledStep& step) const;
};

// Models one global batch. `network` must be finalized. Throws UsageError for
// bad options or a precision the device cannot run (tf32 without TF32 units,
// mixed without 16-bit units, fp8 without FP8 units, a device without a "devices" link for devices
// > 1, without a "network" link for devices over several nodes).
ModeledStep ModelStep(const Network& network, const Device& device, int64_t batch,
                      const DeviceModelOptions& options = {});

// Models every batch of options.batches (or 1, 2, 4, ... max_batch).
DeviceSweepResult ModelSweep(const Network& network, const Device& device,
                             const DeviceModelOptions& options = {});

struct PredictionInterval;  // fitspeed/device/intervals.h

// Writes a modeled sweep and its fit, as WriteSweep does for a host sweep.
// Table: header, fit report, per-batch table, batches that do not fit, and the
// per-layer breakdown at the largest fitting batch when `layers` (each layer's
// time and whether it is compute- or memory-bound). CSV: one row per batch.
// JSON: the fit JSON ("fitspeed.fit/1") plus "model", "steps" and
// "model_interval". With `interval` (the model's prediction interval for the
// sweep's class, e.g. BuiltinIntervalTable().For(device, precision, 0.8)),
// every step's throughput and step time carry it, and the JSON carries its
// errors so that `fitspeed project` combines them with the fit's; without one
// the output says none was given.
void WriteDeviceSweep(std::ostream& out, const DeviceSweepResult& sweep, const FitResult& fit,
                      OutputFormat format, bool layers = false,
                      const PredictionInterval* interval = nullptr);

}  // namespace fitspeed

#endif  // FITSPEED_DEVICE_STEP_MODEL_H_
