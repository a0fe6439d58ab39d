// Device efficiency curves fitted to published per-kernel measurements
// (docs/devices.md, "Curves from kernel measurements"; docs/validation.md,
// "Kernel fits").
//
// The step model (fitspeed/device/step_model.h) times each pass of a layer
// as max(F / (peak * eff(F)), B / (bw * mem_eff(B))) + launch. Here eff(F) is
// fitted, per GPU and per kind of unit, to kernels timed one by one: Baidu
// DeepBench's training GEMMs and convolutions (forward, backward-data,
// backward-weights; cuBLAS/cuDNN with the algorithm cuDNN picked) and cuBLAS
// SGEMM on a Tesla K40 (clBLAS performance tables), copied into
// data/kernels/ with their sources. The curve is a log-logistic in the
// kernel's FLOPs,
//   eff(F) = e_max / (1 + (F_half / F)^k),
// fitted by least squares on ln(modeled / measured time) (Ceres), with the
// device's own memory curve and launch time in the modeled time, so the
// fitted curve is what ModelStep needs. It is written into device files as
// points (EfficiencyCurve) and carried to devices without kernel data by the
// rule of CarryCurve.
//
// Convolution algorithms: the rule the step model applies is in
// src/device/conv_algorithm.h; KernelFitReport says how often it agrees
// with cuDNN's choice.
//
//   std::vector<KernelMeasurement> k = ReadKernelTable("data/kernels/deepbench_gemm.csv");
//   KernelFitReport report = FitKernelCurves(k, KernelGpus());
#ifndef FITSPEED_EVIDENCE_KERNELS_H_
#define FITSPEED_EVIDENCE_KERNELS_H_

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/device/device.h"

namespace fitspeed {

// The units a kernel's matrix work runs on, each with its own curve.
enum class KernelUnit {
  kFp32,      // FP32 CUDA cores, direct or implicit-GEMM (Device::compute_efficiency)
  kWinograd,  // FP32 CUDA cores, Winograd convolution (Device::winograd_efficiency)
  kTensor16,  // FP16 tensor cores (Device::tensor_efficiency)
  kFp8,       // FP8 tensor cores (Device::fp8_efficiency)
  // Fused attention on the 16-bit tensor cores (Device::attention_forward_efficiency,
  // attention_backward_efficiency): no shape term.
  kAttentionForward,
  kAttentionBackward,
};
// "fp32", "winograd", "tensor16", "fp8", "attention_fwd", "attention_bwd"
const char* KernelUnitName(KernelUnit unit);

// One published kernel timing.
struct KernelMeasurement {
  std::string gpu;        // as the source names it: "V100", "P100", "T4", "Tesla K40"
  std::string op;         // "gemm" or "conv"
  std::string pass;       // "fwd", "bwd_data", "bwd_weights" (GEMMs: "fwd")
  bool tensor16 = false;  // FP16/BF16 inputs on tensor cores (DeepBench "FP16 ip, mixed math")
  bool tf32 = false;      // FP32 inputs on TF32 tensor cores (autoheuristic using_tf32)
  bool fp8 = false;       // FP8 inputs on FP8 tensor cores (torch._scaled_mm, E4M3)
  // conv only: shape and the algorithm cuDNN chose for the forward pass
  // (DeepBench's column; backward rows repeat it), "" when not recorded.
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  std::string cudnn_algorithm;
  double direct_flops = 0;  // 2 M N K, or 2 N K P Q C R S
  // Matrix dimensions (GemmDims): a GEMM's own; a convolution's implicit GEMM
  // (ConvGemmDims) and, for a 3x3 stride-1 one, its Winograd products.
  GemmDims dims, winograd_dims;
  double bytes = 0;    // inputs read and output written once, at the element size
  double time_s = 0;   // measured, > 0
  std::string source;  // "file:line"
};

// Reads a DeepBench GEMM or convolution table (data/kernels/deepbench_*.csv),
// the K40 SGEMM table (k40_cublas_sgemm.csv), NeuSight's nn.Linear timings
// (neusight_linear_test.csv: y = x W^T + b on x of B x M x N, W of K x N),
// its torch.bmm timings (neusight_bmm.csv: B products of M x N x K, 2 B M N K
// FLOPs), its convolutions (neusight_conv.csv: cuDNN's kernel name in
// cudnn_algorithm; groups must be 1) or PyTorch's autoheuristic cuBLAS GEMMs
// (autoheuristic_train_mm.csv: M x K times K x N), recognised by their headers; only FP32, TF32 and
// FP16/BF16 tensor-core training rows. Throws InputError when the file cannot be read,
// DataError(file, line, field) for a missing column, a value that is not a
// positive number, or an unrecognised header.
std::vector<KernelMeasurement> ReadKernelTable(const std::string& path);

// The matrix products of this project's first-hand GEMM table
// (data/llm-gpu/gemm.csv, read by ReadGpuGemms of
// fitspeed/evidence/gpu_llm_check.h) as kernels of `gpu`: BF16 and FP16 rows
// on the 16-bit tensor cores, FP8 rows (E4M3, with and without fast
// accumulation) on the FP8 ones, at their median time; bytes are the inputs
// at their element size and a 16-bit output. Throws as ReadGpuGemms.
std::vector<KernelMeasurement> ReadFirstHandGemms(const std::string& path, const std::string& gpu);

// The cuDNN fused-attention rows of this project's first-hand table
// (data/llm-gpu/attention.csv, read by ReadGpuAttention) as kernels of `gpu`
// (op "attention"): each forward row as a forward kernel of its causal
// FLOPs (2 x 2 b h s^2 d / 2); each forward+backward row, less the forward
// row of the same shape, as a backward kernel of 2.5x those FLOPs (the
// backward pass recomputes the scores: five products to the forward's two).
// The cuDNN backend is what Transformer Engine's fused attention and
// PyTorch's default SDPA run on Hopper (the table's default rows repeat it);
// bytes are Q, K, V and the output read or written once, 16-bit. Throws as
// ReadGpuAttention; DataError when a forward+backward row has no forward row
// of its shape, or is not slower than it.
std::vector<KernelMeasurement> ReadFirstHandAttention(const std::string& path,
                                                      const std::string& gpu);

// A GPU whose kernels are in the tables: its peaks as measured (the clocks
// of the measurement) and its bandwidth. The devices its curves serve name it
// in their Device::kernel_curves_from: `fitted` take them as fitted (the same
// chip and board), `carried` by CarryCurve (another board or a later
// generation).
struct KernelGpu {
  std::string name;                 // KernelMeasurement::gpu
  std::string description;          // one line, with the source of the peaks
  double fp32_flops_per_s = 0;      // > 0
  double tensor16_flops_per_s = 0;  // 0: no tensor cores
  double memory_bandwidth_bytes_per_s = 0;
  double kernel_launch_s = 5e-6;
  double fp8_flops_per_s = 0;  // 0: no FP8 units
  // Where its kernels come from, as the fitted curves' source text names it.
  std::string data = "data/kernels";
  // The device whose memory curve times the fitted kernels' bytes; "": the
  // first catalog device fitted on this GPU, else the first carrying it.
  std::string memory_device = {};
};
// The GPUs of data/kernels/: V100 (SXM2, DGX-1), P100 (SXM2), T4 and Tesla K40
// (boost clock), and the H200 of this project's first-hand GEMM table
// (data/llm-gpu). A device that names several (Device::kernel_curves_from)
// takes each unit's curve from the last one with a fit of that unit
// (the Hopper devices: FP32, Winograd and depthwise curves from the V100,
// tensor and FP8 curves from the H200).
std::vector<KernelGpu> KernelGpus();

// The fitted log-logistic efficiency curve of one GPU and unit.
struct KernelCurveFit {
  std::string gpu;
  KernelUnit unit = KernelUnit::kFp32;
  int kernels = 0;  // measurements fitted
  // eff(F) = e_max / (1 + (f_half / F)^slope), each with its standard error
  // sqrt(s^2 (J^T J)^-1_ii), s^2 = RSS/dof, of the log-time residuals.
  double e_max = 0, e_max_se = 0;
  double f_half = 0, f_half_se = 0;  // FLOPs
  double slope = 0, slope_se = 0;
  // The shape term's GEMM dimension (EfficiencyCurve::half_dim): fitted with
  // the curve when the kernels include non-square ones (half_dim_fitted),
  // else fixed at the V100's of the unit (half_dim_se NaN): square kernels
  // cannot tell it from the curve.
  double half_dim = 0, half_dim_se = 0;
  bool half_dim_fitted = false;
  bool converged = false;
  // |modeled / measured time - 1| over the fitted kernels.
  double median_abs_error = 0;
  double p90_abs_error = 0;
  // Per op and pass ("gemm", "conv/fwd", ...): kernels and median |error|.
  struct Group {
    std::string name;
    int kernels = 0;
    double median_abs_error = 0;
    double median_signed_error = 0;
  };
  std::vector<Group> groups;
  double At(double flops) const;  // the fitted eff(F), before the shape term
  // The curve as device-file points: at 10^5 .. 10^12 FLOPs, four per decade,
  // and half_dim. Where the fitted time F / (peak At(F)) would grow toward
  // smaller F (slope > 1), the points hold it at its minimum instead: a
  // kernel with less work never takes longer.
  EfficiencyCurve Curve() const;
};

// How often ConvAlgorithmFor agrees with cuDNN's forward choice, per GPU
// (FP32 convolutions with a recorded algorithm).
struct AlgorithmAgreement {
  std::string gpu;
  int convolutions = 0;  // FP32 forward convolutions with an algorithm
  int agree = 0;         // the rule picks the same family (Winograd or not)
  int winograd_by_cudnn = 0;
  int winograd_by_rule = 0;
};

// Depthwise convolutions: no per-kernel sweep on a catalog GPU was found, so
// their efficiency is derived from one published pair of forward timings
// (tlkh/depsep-conv-benchmarks, V100, TensorFlow 2.1, cuDNN 7.6.5, FP16 NHWC,
// 16x224x224x128, 3x3 "valid"): a Conv2D 128->128 at `conv_images_per_s` and a
// SeparableConv2D (depthwise 3x3, then pointwise 1x1 128->128) at
// `separable_images_per_s`. The pointwise part is timed with the V100's fitted
// tensor curve and its memory curve (max of the two, plus a launch); what the
// separable layer took beyond it is the depthwise kernel's. Its efficiency is
// the depthwise FLOPs over that time, as a fraction of the FP32 peak (depthwise
// work runs on CUDA cores): one number, applied at every size (a flat curve)
// and to every pass, and carried unchanged to other GPUs. The Conv2D row,
// timed with the same fitted tensor curve, is an out-of-sample check of it.
struct DepthwiseDerivation {
  std::string source;  // "file:line,line"
  double conv_images_per_s = 0;
  double separable_images_per_s = 0;
  int batch = 16;
  double depthwise_flops = 0;      // per batch: 2 N P Q C R S
  double pointwise_modeled_s = 0;  // per batch
  double depthwise_s = 0;          // per batch: N / separable rate - pointwise
  double efficiency = 0;           // depthwise_flops / (depthwise_s x FP32 peak)
  double conv_modeled_s = 0;       // per batch, fitted tensor curve
  double conv_measured_s = 0;      // per batch: N / conv rate
  double conv_error() const { return conv_modeled_s / conv_measured_s - 1; }
};

// ---- Memory-bound kernels -------------------------------------------------
//
// The memory curve's plateau, measured: NeuSight's sweeps of element-wise,
// LayerNorm and softmax kernels (sitar-lab/NeuSight @ 6945927, PyTorch 2.1,
// FP32 [B, H] tensors; data/kernels/neusight_vec_large.csv keeps the rows that
// move at least 1 GB, where the 25-40 us of eager dispatch inside each timed
// call is at most ~5% of it). Two classes of kernel reach different fractions of
// the datasheet bandwidth:
enum class MemoryClass {
  kElementwise,    // add, mul, div, pow (two inputs), the same with a scalar, relu, gelu, tanh
  kNormalization,  // LayerNorm and softmax: a reduction over each row, then a sweep over it
};
const char* MemoryClassName(MemoryClass c);  // "elementwise", "normalization"

// A GPU of the sweeps and its datasheet bandwidth. The devices its plateaus
// serve name it in their Device::memory_curves_from: `fitted` (the same chip,
// memory system and board family) and `carried` (the same fraction of
// another board's bandwidth).
struct MemorySweepGpu {
  std::string name;  // NeuSight's gpu column
  std::string description;
  double memory_bandwidth_bytes_per_s = 0;
  // Its kernels are this project's first-hand BF16 run
  // (data/llm-gpu/memory_ops.csv), not NeuSight's FP32 sweeps.
  bool first_hand = false;
};
// NeuSight's GPUs: V100 PCIe 32 GB, A100 PCIe 40 GB, A100 80 GB PCIe, T4,
// P100 PCIe, P4 and L4 (P4 serves no catalog device); then the
// H200 of this project's memory_ops.csv (FitFirstHandNormalizationPlateau),
// whose normalization plateau replaces the one the Hopper devices carry
// from the A100 80 GB PCIe (a device that names several takes each class
// from the last GPU with a fit of it).
std::vector<MemorySweepGpu> MemorySweepGpus();

// One GPU and class: the efficiency bytes / (time x bandwidth) of each kernel,
// and its median with a distribution-free 95% confidence interval (order
// statistics of the binomial, n/2 -/+ 1.96 sqrt(n)/2) and its quartiles. The
// bytes of a kernel: 12 per element for two inputs and one output, 8 for one
// input and one output (LayerNorm's and softmax's single pass, as the step
// model counts them).
struct MemoryPlateauFit {
  std::string gpu;
  MemoryClass memory_class = MemoryClass::kElementwise;
  int kernels = 0;
  double efficiency = 0;           // median
  double ci_low = 0, ci_high = 0;  // 95% confidence interval of the median
  double q25 = 0, q75 = 0;         // quartiles of the kernels' efficiencies
  struct Op {
    std::string name;  // NeuSight's op column
    int kernels = 0;
    double median_efficiency = 0;
  };
  std::vector<Op> ops;
};

// Reads neusight_vec_large.csv at `path` and fits every GPU of `gpus` and
// class with at least 8 kernels there, in the order of `gpus`. Rows of other
// GPUs are skipped, rows under 1 GB moved are refused (they would mix the
// dispatch floor into the plateau). Throws InputError when the file cannot be
// read, DataError(file, line, field) for a missing column, an unknown op, a
// non-positive number or a row under 1 GB.
std::vector<MemoryPlateauFit> FitMemoryPlateaus(const std::string& path,
                                                const std::vector<MemorySweepGpu>& gpus);

// The normalization plateau of `gpu` from this project's first-hand
// memory-bound kernels (data/llm-gpu/memory_ops.csv, read by ReadGpuMemoryOps
// of fitspeed/evidence/gpu_llm_check.h): the LayerNorm, RMSNorm and softmax
// rows, forward and backward, BF16 at 134-403 MB, efficiency = the bench's
// minimum bytes / (median time x gpu's bandwidth), with the statistics of
// FitMemoryPlateaus. Only that class: the element-wise rows are not fitted,
// because the step model's NCHW rules (transposes and cuDNN's NCHW batch
// norm, fitspeed/device/step_model.h) are defined against the element-wise
// plateau and were derived with the carried one (docs/validation.md).
// Throws as ReadGpuMemoryOps; DataError when fewer than 8 rows are there.
MemoryPlateauFit FitFirstHandNormalizationPlateau(const std::string& path,
                                                  const MemorySweepGpu& gpu);

// The memory curve with a measured plateau: the catalog's assumed shape
// (2% of the bandwidth at 10 kB, 10% at 100 kB, 35% at 1 MB, 70% at 10 MB,
// its plateau 85% from 100 MB: latency-bound small kernels) scaled so that the
// plateau is `plateau`. Below 1 GB NeuSight's times are dominated by dispatch,
// so the shape is not measured (docs/validation.md, "Memory-bound kernels").
EfficiencyCurve MemoryCurveWithPlateau(double plateau);

// Sets efficiency.memory (the element-wise plateau) and
// efficiency.memory_normalization (the normalization plateau) of `device`
// when a GPU of `gpus` serves it (its memory_curves_from names the GPU),
// with MemoryCurveWithPlateau, sources and
// bases ("fitted" or "carried"). Returns the fields set, empty when no GPU
// serves the device or `fits` lacks its plateaus.
std::vector<std::string> ApplyMemoryPlateaus(Device& device,
                                             const std::vector<MemoryPlateauFit>& fits,
                                             const std::vector<MemorySweepGpu>& gpus);

struct KernelFitReport {
  std::vector<KernelCurveFit> fits;  // per GPU and unit with enough kernels, in KernelGpus order
  // From tlkh_depsep_conv.csv with the V100's fits (FitKernelTables); absent
  // when not derived.
  std::optional<DepthwiseDerivation> depthwise;
  // From neusight_vec_large.csv (FitMemoryPlateaus with MemorySweepGpus);
  // empty when not fitted.
  std::vector<MemoryPlateauFit> memory;
  std::vector<AlgorithmAgreement> agreement;
  // Kernels left out, and why (each reason once with its count).
  std::vector<std::string> skipped;
};

// Fits every GPU of `gpus` and unit that has at least 8 kernels in
// `measurements`. A GEMM is timed with the unit's curve; a convolution with the
// unit ConvAlgorithmFor gives (Winograd's curve on its 16/36 FLOPs, or the FP32
// or tensor curve on its direct FLOPs). With `shape_term`, each curve is
// fitted with the shape term of EfficiencyCurve::ShapeFactor (its half_dim a
// fourth parameter where the kernels include non-square ones, else the
// V100's of the unit held); without, half_dim is 0 (the catalog's curves:
// docs/validation.md, "Kernel fits", says why).
KernelFitReport FitKernelCurves(const std::vector<KernelMeasurement>& measurements,
                                const std::vector<KernelGpu>& gpus, bool shape_term = false);

// The catalog's curves against kernels they were not fitted to: NeuSight's
// FP32 nn.Linear and torch.bmm timings on V100 PCIe, P100 PCIe, T4, A100
// 40/80 GB and H100 (PyTorch 2.1, TF32 off), its FP32 3x3 forward
// convolutions (cuDNN 8.9, cudnn.benchmark on) and autoheuristic's cuBLAS FP16/BF16/TF32 GEMMs on
// A100 and H100 (real HuggingFace and TIMM training shapes). Each kernel is
// timed as the step model times a pass on the catalog device the GPU maps to
// (its own board where the catalog has it, else the closest: NeuSight's
// PCIe A100s on the SXM a100/a100-80gb), and compared with the measurement.
struct KernelCheck {
  std::string gpu;              // as the table names it
  std::string device;           // the catalog device it is checked on
  std::string unit;             // "fp32", "tf32", "tensor16"
  std::string basis;            // of the device curve used: "fitted" (a second source) or "carried"
  std::string table;            // file name
  int kernels = 0;              // checked (measured time >= the floor)
  int below_floor = 0;          // left out: shorter than the floor
  double median_abs_error = 0;  // |modeled / measured - 1|
  double median_signed_error = 0;  // > 0: the model too slow
  double p90_abs_error = 0;
  // Convolutions whose library algorithm is recorded (KernelMeasurement::
  // cudnn_algorithm; NeuSight's kernel names): how often the model's rule
  // (ConvAlgorithmFor) picks the library's family, Winograd or not, and the
  // median signed error of those the library ran with Winograd and of the
  // others (NaN when there are none).
  int convolutions = 0;
  int winograd_by_library = 0;
  int winograd_by_rule = 0;
  int agree = 0;
  double median_signed_error_library_winograd = std::nan("");
  double median_signed_error_library_other = std::nan("");
  // The same convolutions each timed with whichever of the device's
  // implicit-GEMM and Winograd curves is faster (an autotuner's choice, as
  // cudnn.benchmark makes it): agreement with the library and median |error|.
  int agree_fastest = 0;
  double median_abs_error_fastest = std::nan("");
};

// Checks the catalog devices on `measurements` (ReadKernelTable of the two
// tables above), leaving out kernels measured under `floor_s` (NeuSight times
// one eager call, whose 25-40 us of dispatch the kernel model does not
// include). One KernelCheck per table, GPU and unit, in order of appearance.
// `devices` replace the catalog devices of their names (e.g. the catalog with
// refitted curves, ApplyKernelCurves).
std::vector<KernelCheck> CheckCatalogOnKernels(const std::vector<KernelMeasurement>& measurements,
                                               const std::string& table, double floor_s,
                                               const std::vector<Device>& devices = {});

// ---- All-reduce -----------------------------------------------------------
//
// The links' all-reduce model (RingAllReduceTime, fitspeed/core/comm.h,
// on the link that connects a device's devices) against Baidu DeepBench's
// all-reduce timings (data/kernels/deepbench_allreduce.csv: FP32 buffers of
// 100 K to 64.5 M floats on 2, 4 and 8 P100s of one node with NCCL 2.0, and
// 16 over two nodes). Not calibrated on: an error record of the link model.
struct AllReduceMeasurement {
  std::string gpu;        // as the source names it ("P100")
  double bytes = 0;       // size_floats x 4
  int devices = 0;        // GPUs taking part, >= 2
  int nodes = 1;          // nodes they span (blank in the source: 1)
  double time_s = 0;      // measured, > 0
  std::string algorithm;  // "NCCL 2.0 MPI", "NCCL 2.0 Single", "Baidu RingAllReduce"
  std::string source;     // "file:line"
};

// Reads a DeepBench all-reduce table (columns gpu, op, precision,
// size_floats, n_gpus, n_nodes, time_us, algorithm); only FP32 rows. Throws
// InputError when the file cannot be read, DataError(file, line, field) for a
// missing column, another op than allreduce, a size, GPU or node count that is
// not a positive whole number, fewer than 2 GPUs or more nodes than GPUs, or a
// time that is not a positive number.
std::vector<AllReduceMeasurement> ReadAllReduceTable(const std::string& path);

// One GPU, device count and node count: the catalog device's ring time
// against the measured times. Bus bandwidth (nccl-tests' busbw): the bytes
// each device sends and receives per direction, 2 (n - 1) / n x S, over the
// time, of the largest buffer; against the link's bandwidth.
struct AllReduceCheck {
  std::string gpu;
  std::string device;  // catalog device the GPU maps to
  std::string link;    // its link that connects devices, "" when none
  double link_bandwidth_bytes_per_s = 0;
  int devices = 0;
  int nodes = 1;
  int measurements = 0;
  double median_abs_error = 0;     // |modeled / measured - 1|
  double median_signed_error = 0;  // > 0: the model too slow
  double largest_bytes = 0;
  double measured_bus_bandwidth = 0;  // bytes/s, of the largest buffer
  // Why the rows were not modeled ("" when they were): more than one node
  // needs a network link that a catalog device does not have.
  std::string problem;
};

// Checks the catalog devices (or `devices`, which replace those of their
// names) on `measurements`, grouped by GPU, device count and node count, in
// order of appearance. Rows of a GPU no catalog device models are left out.
std::vector<AllReduceCheck> CheckLinksOnAllReduce(
    const std::vector<AllReduceMeasurement>& measurements, const std::vector<Device>& devices = {});

// Carries a curve fitted on a device of peak `from_peak` to one of peak
// `to_peak` (same unit): a kernel of F FLOPs on the new device reaches the
// efficiency that a kernel of the same ideal time F / peak reached on the
// measured one, e_to(F) = e_from(F x from_peak / to_peak). A larger device
// needs proportionally larger kernels to fill it (more SMs, the same tile
// and wave quantisation per SM). Checked on the end-to-end cases of A100,
// H100 and K80 (docs/validation.md).
EfficiencyCurve CarryCurve(const KernelCurveFit& fit, double from_peak, double to_peak);

// The kernel tables of a data/kernels directory, read with ReadKernelTable:
// deepbench_gemm.csv, deepbench_conv.csv and k40_cublas_sgemm.csv.
std::vector<KernelMeasurement> ReadKernelTables(const std::string& directory);

// Derives the depthwise efficiency (DepthwiseDerivation) from the V100 rows of
// the tlkh table at `path`, with the V100 fits of `report` and the memory
// curve and launch time of the catalog's v100-sxm2. Throws InputError /
// DataError for an unreadable table or one without the two V100 FP16 rows;
// UsageError when `report` has no V100 tensor16 fit.
DepthwiseDerivation DeriveDepthwise(const std::string& path, const KernelFitReport& report);

// ReadKernelTables of `directory` and, unless `first_hand_dir` is empty,
// ReadFirstHandGemms of its gemm.csv and ReadFirstHandAttention of its
// attention.csv as the H200's, fitted by FitKernelCurves
// with KernelGpus(); the depthwise derivation from its tlkh_depsep_conv.csv,
// the memory plateaus from its neusight_vec_large.csv and, with
// `first_hand_dir`, the H200's normalization plateau from its
// memory_ops.csv: what `fitspeed validate --kernels` reports and the
// catalog's curves come from.
KernelFitReport FitKernelTables(const std::string& directory, bool shape_term = false,
                                const std::string& first_hand_dir = "");

// Sets the curves of `device` that the fits of `report` serve (the GPUs its
// kernel_curves_from names): efficiency.compute from the GPU's
// FP32 fit, efficiency.winograd from its Winograd fit (a device without
// one keeps running every convolution as implicit GEMM), efficiency.tensor
// from its FP16 tensor-core fit when the device has 16-bit or TF32 units,
// efficiency.fp8 from its FP8 fit when the device has FP8 units,
// efficiency.attention_forward and .attention_backward from its attention
// fits when the device has 16-bit tensor units, efficiency.depthwise (flat) from report.depthwise
// when derived, each through CarryCurve from the GPU's peak to the device's (the identity for a
// fitted device), with its source and basis ("fitted" or "carried"). Returns the fields it set,
// empty when no GPU serves the device.
std::vector<std::string> ApplyKernelCurves(Device& device, const KernelFitReport& report,
                                           const std::vector<KernelGpu>& gpus);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_KERNELS_H_
