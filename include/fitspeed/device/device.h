// A device a training step can be modeled on: peaks per precision, memory,
// efficiency against kernel size, overheads, tiles and links. The catalog's
// devices are JSON files (schema "fitspeed.device/1", docs/devices.md) under
// data/devices/, compiled into the library; users pass their own file path
// wherever a device name is accepted. `host` is this CPU, probed at run time.
//
//   fitspeed::Device v100 = fitspeed::LoadDevice("v100-sxm2");
//   double eff = v100.compute_efficiency.At(1e9);  // at a 1 GFLOP kernel
#ifndef FITSPEED_DEVICE_DEVICE_H_
#define FITSPEED_DEVICE_DEVICE_H_

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/comm.h"
#include "fitspeed/core/output_format.h"

namespace fitspeed {

// The dimensions of the matrix product a kernel runs, for the shape term of
// the matrix curves (EfficiencyCurve::ShapeFactor, symmetric in the three):
// rows m, columns n and reduction k.
struct GemmDims {
  double m = 1, n = 1, k = 1;
};

// (size, efficiency) points, interpolated linearly in log(size) and held
// constant beyond the first and last points (as Calculon's system files do
// for its matrix and vector efficiency tables).
struct EfficiencyCurve {
  struct Point {
    double size = 0;        // FLOPs (compute) or bytes (memory) of one kernel, > 0
    double efficiency = 0;  // fraction of the peak reached, in (0, 1]
  };
  std::vector<Point> points;  // sizes strictly increasing; at least one point
  double At(double size) const;
  // Matrix curves (compute, winograd, tensor): the GEMM dimension d_half at
  // which one small dimension alone halves the efficiency. A GEMM of
  // dimensions m x n x k (rows, columns, reduction; a convolution's implicit
  // GEMM) runs at At(F) x ShapeFactor(m, n, k), ShapeFactor = the product of
  // d / (d + d_half) over the three: output tiles of a small dimension are
  // partly empty, and a short reduction leaves each tile's load and store
  // unamortised. 0: no shape term (memory curves, older device files).
  double half_dim = 0;
  // Matrix curves fitted to kernel timings (fitspeed/evidence/kernels.h): the
  // GPU whose kernels they were fitted on, as KernelGpu::name ("V100",
  // "H200"), whether this device's own (basis "fitted") or carried from it.
  // JSON "from"; "" when not recorded (assumed curves, older device files).
  std::string from;
  double ShapeFactor(double m, double n, double k) const;
  double ShapeFactor(const GemmDims& d) const { return ShapeFactor(d.m, d.n, d.k); }
};

// A link between cores, devices, the host or nodes: a Link (bandwidth one
// direction, > 0 in a device file; latency per message, >= 0) with its name and
// what it connects, so it is timed by the all-reduce formulas of
// fitspeed/core/comm.h as it is.
struct DeviceLink : Link {
  std::string name;  // "nvlink", "pcie", "ici", "network"
  // What it connects: "cores" (the cores of one device, e.g. a TPU board's ICI),
  // "devices" (devices of one node, used for data-parallel all-reduce),
  // "host" (device to host) or "network" (between nodes).
  std::string connects;
  // A network link only: true when each device has an interface of its own of
  // this bandwidth (JSON "per": "device", a DGX node's NIC per GPU), false when
  // the link is the node's one interface ("per": "node", the default, what a
  // links file fitted by `linkbench --from` describes).
  bool per_device = false;
};

// How a device's efficiencies and overheads were calibrated (fitspeed calibrate,
// fitspeed/calibrate/calibrate.h): the "calibration" object of a device file.
struct DeviceCalibration {
  // One fitted parameter: "compute_scale" and "memory_scale" (factors applied
  // to every point of the efficiency curves, dimensionless), "kernel_launch_s"
  // and "step_host_s" (seconds), "tensor_scale" (factor on the tensor-unit
  // curve), in that order.
  struct Parameter {
    std::string name;
    double value = 0;
    double std_error = 0;  // NaN when it could not be estimated (JSON null)
    double ci_low = 0;     // confidence interval at `confidence` (NaN: none)
    double ci_high = 0;
  };
  // Relative throughput errors (predicted/measured - 1) over a set of cases.
  struct Error {
    int cases = 0;
    double rms = 0;         // root mean square of the signed errors
    double median_abs = 0;  // median of |error|
    double max_abs = 0;     // largest |error|
  };
  std::string method;  // one line: objective, solver, what was fitted
  double confidence = 0.95;
  std::vector<Parameter> parameters;
  Error error_before;              // the cases with the uncalibrated device
  Error error_after;               // the same cases after calibration (in-sample)
  std::optional<Error> error_loo;  // leave-one-network-out (out-of-sample), if computed
};

// A name under which published measurements list the GPU a device models
// (an MLPerf submission's accelerator, a kernel table's or a profiler's GPU
// name), with how the device differs from that GPU when it does.
struct DeviceAlias {
  std::string name;  // non-empty, "NVIDIA H100-SXM5-80GB"
  std::string note;  // "" or one line: how the device differs from the GPU so named
  bool operator==(const DeviceAlias& o) const { return name == o.name && note == o.note; }
};

// The measured GPUs (`fitspeed validate kernels`) whose fitted curves a device
// takes: its own kernels' (fitted) or another GPU's, carried by F/peak.
struct CurveSources {
  std::vector<std::string> fitted;   // GPUs measured as this device
  std::vector<std::string> carried;  // other GPUs whose curves it carries
  bool empty() const { return fitted.empty() && carried.empty(); }
};

struct Device {
  std::string name;         // "v100-sxm2", "host", or the file's "name"
  std::string description;  // one line
  std::string kind;         // "gpu", "tpu" or "cpu"
  std::string origin;       // "catalog:v100-sxm2", a file path, or "probe:host"

  // Names published measurements give the GPU this device models
  // (FindCatalogAlias). JSON: "aliases": ["H100-SXM-80GB", {"name": ...,
  // "note": ...}, ...].
  std::vector<DeviceAlias> aliases;
  // Whose fitted curves `fitspeed validate kernels` gives the device: the
  // kernel tables' GPUs (KernelGpus, fitspeed/evidence/kernels.h) and the
  // memory sweeps' (MemorySweepGpus). JSON: "curves_from": {"kernels":
  // {"fitted": [...], "carried": [...]}, "memory_sweeps": {...}}.
  CurveSources kernel_curves_from;
  CurveSources memory_curves_from;
  // The prediction interval of `sweep --device` is its error class's
  // although no published case ran on it (IntervalTable::For): the catalog's
  // devices before issue 30, whose intervals docs/validation.md reports.
  // JSON: "class_interval": true.
  bool class_interval = false;
  // Block-scaled matrix formats the tensor units run natively ("mxfp8":
  // OCP MX FP8, one power-of-two scale per 32 values; "nvfp4": FP4 with an
  // FP8 scale per 16), and where that is stated. JSON: "block_scaled":
  // {"formats": ["mxfp8", "nvfp4"], "source": "..."}.
  std::vector<std::string> block_scaled_formats;
  std::string block_scaled_source;
  // The highest matrix-product rate measured on the device, FLOP/s, dense
  // (the maximum achievable matmul FLOPS of a brute-force search over shapes,
  // one method across devices), 16-bit and FP8, with the shape that reached
  // it and the source; 0: none published. The LLM step never times a product
  // faster (KernelTimer). JSON: "achievable_matmul": {"bf16": {"flops_per_s":
  // F, "shape": [m, n, k]}, "fp8": {...}, "source": "..."}.
  struct AchievableMatmul {
    double flops_per_s = 0;
    double m = 0, n = 0, k = 0;
  };
  AchievableMatmul achievable16, achievable_fp8;
  std::string achievable_source;

  // Data-parallel cores sharing the device (TPU v2-8: 8); peaks, bandwidth and
  // capacity below are of the whole device, split evenly between the cores.
  int cores = 1;
  double fp32_flops_per_s = 0;      // FP32 peak (vector units / CUDA cores), > 0
  double tf32_flops_per_s = 0;      // TF32 tensor-core peak, dense; 0: none
  double tensor16_flops_per_s = 0;  // FP16/BF16 matrix peak, dense; 0: none
  std::string tensor16_type;        // "fp16" or "bf16" ("" when none)
  // Low-precision matrix peaks, dense; the CNN step model's precisions do not use
  // them (fp32, tf32, mixed); the LLM split model does (fitspeed/llm/split.h, MatrixFormat).
  // FP8 matrix peak, dense (E4M3/E5M2 GEMMs as Transformer Engine runs them); 0: none
  double fp8_flops_per_s = 0;
  double int8_flops_per_s = 0;  // INT8 matrix peak, dense (TPU AQT); 0: none
  double fp4_flops_per_s = 0;   // FP4 matrix peak, dense (Blackwell NVFP4/MXFP4); 0: none
  // Matrix work in FP32 mode runs on the 16-bit matrix units (TPU: XLA's
  // default precision multiplies FP32 tensors in one bfloat16 pass).
  bool fp32_matrix_on_tensor16 = false;

  // Activation layout the tensor-unit convolution kernels work in: "nhwc"
  // (NVIDIA tensor cores) or "nchw"; "" when the device has no such rule (a
  // TPU's compiler chooses layouts itself). A step modeled with the other
  // ActivationLayout pays transposes (fitspeed/device/step_model.h). JSON:
  // "tensor_layout": {"value": "nhwc", "source": ...}, only with tensor peaks.
  std::string tensor_layout;

  double memory_bandwidth_bytes_per_s = 0;  // > 0
  double memory_capacity_bytes = 0;         // > 0

  EfficiencyCurve compute_efficiency;  // against FLOPs of one kernel
  EfficiencyCurve memory_efficiency;   // against bytes of one kernel
  // Matrix work on the tensor units (TF32 and FP16/BF16 tensor cores, a TPU's
  // MXU), against FLOPs of one kernel. Empty (JSON: no "efficiency.tensor"):
  // compute_efficiency serves for it too. Tensor-core kernels reach a smaller
  // fraction of their much larger peak than FP32 kernels do, so calibrating it
  // separately matters for TF32 and mixed precision.
  EfficiencyCurve tensor_efficiency;
  // FP8 matrix products (Transformer Engine's E4M3/E5M2 GEMMs), against their
  // FLOPs at fp8_flops_per_s. Empty (JSON: no "efficiency.fp8"): they are
  // timed on TensorEfficiency() at the same fraction of the peak as a 16-bit
  // product (Fp8Matrix()). Needs fp8_flops_per_s > 0.
  EfficiencyCurve fp8_efficiency;
  // FP32 3x3 stride-1 convolutions run with Winograd F(2x2, 3x3) (cuDNN's
  // choice on Maxwell to Turing CUDA cores; fitspeed/evidence/kernels.h), against
  // the FLOPs of the algorithm (16/36 of the direct ones). Empty (JSON: no
  // "efficiency.winograd"): every convolution runs as implicit GEMM at
  // compute_efficiency.
  EfficiencyCurve winograd_efficiency;
  // Depthwise convolutions (groups with fewer input channels than the
  // tensor tile; vector work on CUDA cores), against their FLOPs at the FP32
  // peak (fitspeed/evidence/kernels.h, DepthwiseDerivation). Empty (JSON: no
  // "efficiency.depthwise"): compute_efficiency serves for them.
  EfficiencyCurve depthwise_efficiency;
  // Memory-bound passes of the row-normalizing layers (layer norm, RMS norm,
  // softmax, softmax cross-entropy: a reduction over each row, then a second
  // sweep over it), against bytes of one kernel. They reach a smaller
  // fraction of the bandwidth than element-wise kernels (NeuSight's sweeps:
  // fitspeed/evidence/kernels.h, MemoryPlateauFit). Empty (JSON: no
  // "efficiency.memory_normalization"): memory_efficiency serves for them.
  EfficiencyCurve normalization_memory_efficiency;
  // Fused (flash) attention kernels on the 16-bit tensor units, forward and
  // backward, against the FLOPs of one kernel (the unmasked score and value
  // products: 4 b h s_q s_kv d, half of it when causal; the backward pass
  // 2.5x the forward) at tensor16_flops_per_s. They reach a smaller fraction
  // of the peak than a GEMM of the same FLOPs (the online softmax between
  // the two products; fitspeed/evidence/kernels.h, ReadFirstHandAttention).
  // Empty (JSON: no "efficiency.attention_forward" / "attention_backward"):
  // TensorEfficiency() serves for them.
  EfficiencyCurve attention_forward_efficiency;
  EfficiencyCurve attention_backward_efficiency;
  // The attention curve of a pass, or TensorEfficiency() when it is empty.
  const EfficiencyCurve& AttentionEfficiency(bool backward) const {
    const EfficiencyCurve& c =
        backward ? attention_backward_efficiency : attention_forward_efficiency;
    return c.points.empty() ? TensorEfficiency() : c;
  }
  // tensor_efficiency, or compute_efficiency when it is empty.
  const EfficiencyCurve& TensorEfficiency() const {
    return tensor_efficiency.points.empty() ? compute_efficiency : tensor_efficiency;
  }
  // The curve an FP8 matrix product of F FLOPs is timed with, read at
  // F x size_factor: fp8_efficiency at F when the device has one, else
  // TensorEfficiency() at F x (16-bit peak / FP8 peak), the 16-bit curve
  // carried to the faster format at the same F/peak (the rule curves are
  // carried between devices by, docs/devices.md). Needs fp8_flops_per_s > 0.
  struct MatrixCurve {
    const EfficiencyCurve* curve = nullptr;
    double size_factor = 1;
  };
  MatrixCurve Fp8Matrix() const;
  // normalization_memory_efficiency, or memory_efficiency when it is empty.
  const EfficiencyCurve& NormalizationMemoryEfficiency() const {
    return normalization_memory_efficiency.points.empty() ? memory_efficiency
                                                          : normalization_memory_efficiency;
  }

  double kernel_launch_s = 0;  // per kernel (layer and pass), >= 0
  double step_host_s = 0;      // per call of the host into the device, >= 0

  // Padding: the per-core batch is rounded up to batch_multiple; conv/dense
  // channel and feature dimensions to feature_multiple_fp32 (FP32 mode on
  // vector units) or feature_multiple_tensor (tensor units).
  int batch_multiple = 1;
  int feature_multiple_fp32 = 1;
  int feature_multiple_tensor = 1;

  std::vector<DeviceLink> links;
  // Devices joined all-to-all by the "devices" link: 8 on an HGX/DGX board, 72
  // in a GB200/GB300 NVL72 rack, the chips of a TPU pod slice's ICI; 0: not
  // stated. JSON: "scale_up_domain": {"value": 8, "source": ..., "basis": ...}.
  int scale_up_domain = 0;
  // Streaming multiprocessors of an NVIDIA GPU (108 on an A100, 132 on an
  // H100 SXM): what Transformer Engine's communication overlap takes SMs from
  // (LlmSplit::tp_comm_overlap); 0: not stated. JSON:
  // "streaming_multiprocessors": {"value": 132, "source": ..., "basis": ...}.
  int streaming_multiprocessors = 0;

  // Price of one device for an hour, in the user's currency; the catalog ships
  // none (prices change and differ by region and contract): users write it into
  // their own device files. JSON: "price_per_hour": {"value": 2.48, "source": ...}.
  std::optional<double> price_per_hour;

  // Cases (CaseKey() of fitspeed/calibrate/cases.h) whose measurements this
  // device's efficiencies and overheads were calibrated on; empty for the
  // catalog's datasheet-and-assumption devices. JSON: "calibration":
  // {"cases": [...], ...} (docs/devices.md).
  std::vector<std::string> calibrated_on;

  // The rest of the "calibration" object (present when calibrated_on is not empty).
  DeviceCalibration calibration;

  // The "source" text of every sourced field, by its path in the JSON document
  // ("memory.bandwidth_bytes_per_s", "efficiency.compute", "links[0].latency_s"):
  // kept so that DeviceToJson writes a device back with its sources.
  std::map<std::string, std::string> sources;
  // How each sourced number was obtained, by the same paths as `sources`, for
  // the fields whose JSON object gives a "basis": "datasheet" (a vendor's or a
  // standard's published figure), "measured" (timed directly), "fitted" (to
  // measurements of this device), "carried" (fitted on another device and
  // carried by a stated rule) or "assumed".
  std::map<std::string, std::string> bases;

  // The first link connecting `what` ("cores", "devices", ...), or nullptr.
  const DeviceLink* FindLink(const std::string& what) const;
};

// Multiplies every point of the curves of the device's CUDA-core (vector
// unit) convolution and matrix work, compute_efficiency, winograd_efficiency
// and depthwise_efficiency, by `scale`
// (> 0), capping each at 1: what calibration's compute scale changes.
void ScaleComputeEfficiency(Device& device, double scale);

// Multiplies every point of memory_efficiency and
// normalization_memory_efficiency by `scale` (> 0), capping each at 1: what
// calibration's memory scale changes.
void ScaleMemoryEfficiency(Device& device, double scale);

// Parses a "fitspeed.device/1" document. Throws DataError(source, line, field,
// problem) for malformed JSON, a missing or unknown field, a wrong type, or a
// value that breaks its rule (negative bandwidth, efficiency outside (0, 1],
// sizes not increasing, ...). The line is that of the offending field.
Device ParseDeviceJson(const std::string& text, const std::string& source);

// The "fitspeed.device/1" document of `device` (2-space indented JSON, the
// catalog files' field order), with its recorded sources (a field without one
// gets "not recorded (written from <origin>)") and its calibration, if any.
// ParseDeviceJson reads it back into the same Device (origin aside).
std::string DeviceToJson(const Device& device);

// Reads and parses `path`; InputError when it cannot be read.
Device ReadDeviceJsonFile(const std::string& path);

// Links measured once (`fitspeed linkbench`) and given to any device: a
// "fitspeed.links/1" document (docs/devices.md, "Links files"), whose "links"
// array has the entries of a device file's.
struct LinksFile {
  std::vector<DeviceLink> links;  // at most one per `connects`
  // The "source" text of each link's quantities by path, "links[0].latency_s".
  std::map<std::string, std::string> sources;
  // The link connecting `what` ("devices", "network", ...; a file has at most
  // one of each), or nullptr.
  const DeviceLink* FindLink(const std::string& what) const;
};

// Parses a "fitspeed.links/1" document (or the "links" of a "fitspeed.device/1"
// one). Throws DataError(source, line, field, problem) as ParseDeviceJson does,
// and for an empty list or two links that connect the same thing.
LinksFile ParseLinksJson(const std::string& text, const std::string& source);

// The "fitspeed.links/1" document of `links` (2-space indented JSON) with their
// sources; ParseLinksJson reads it back equal. Throws UsageError for a link
// without a finite bandwidth > 0 and a finite latency >= 0 (an infinite
// bandwidth, from a fitted beta of 0, has no JSON number).
std::string LinksToJson(const LinksFile& links);

// Reads and parses `path`; InputError when it cannot be read.
LinksFile ReadLinksJsonFile(const std::string& path);

// Writes LinksToJson(links) to `path`; InputError when it cannot be written.
void WriteLinksJsonFile(const std::string& path, const LinksFile& links);

// The communication model of a links file read from `source`: its "devices"
// link within a node and its "network" link between nodes, a hierarchical
// all-reduce when it has both; with only one of the two, a ring at that
// link's pace. `devices_per_node` 0: every rank in one node. Throws
// DataError(source, 0, "links", ...) when it has neither.
CommModel CommModelFromLinks(const LinksFile& links, const std::string& source,
                             int devices_per_node);

// Replaces every link of `device` whose `connects` is that of a link in
// `links` by that link, adds the links whose `connects` the device lacks, and
// takes their sources along; nothing else of the device changes. UsageError
// as LinksToJson for a link that breaks the parser's rules.
void ApplyLinks(Device& device, const LinksFile& links);

// Writes devices (`fitspeed devices`). Table: one row per device (peak
// FLOPS per precision, memory bandwidth and capacity, links), and with
// `detail` each device's description, origin, overheads, tiles, efficiency
// curves, price and tensor layout below; CSV: the rows; JSON schema
// "fitspeed.devices/1", every device's fields.
void WriteDevices(std::ostream& out, const std::vector<Device>& devices, OutputFormat format,
                  bool detail = false);

// Names of the catalog devices compiled into the library, in listing order,
// followed by "host".
std::vector<std::string> CatalogDeviceNames();

// The JSON text of a catalog device (not "host"); UsageError naming the known
// devices for another name.
const std::string& CatalogDeviceJson(const std::string& name);

// The catalog device that lists `alias` among its aliases (Device::aliases),
// and that alias's note; nullopt when no catalog device does.
struct CatalogAlias {
  std::string device;
  std::string note;
};
std::optional<CatalogAlias> FindCatalogAlias(const std::string& alias);

// A catalog device, "host" (ProbeHostDevice), or else a path to a device JSON
// file. Throws UsageError for a name that is neither a device nor an existing
// file, InputError / DataError as ReadDeviceJsonFile does.
Device LoadDevice(const std::string& name_or_path);

// This CPU as a device: FP32 FMA peak (MeasureFmaPeakGflops over every
// available CPU), memory bandwidth from a STREAM-like triad, compute
// efficiency from oneDNN dense layers of three sizes run by the timing layer,
// capacity = MemAvailable. Measured once per process (about a second) and cached.
//
// `threads`: the CPUs the probe runs on, in [0, AvailableCpus()]; 0: every one
// (what LoadDevice("host") probes). Cached per thread count; UsageError out of range.
Device ProbeHostDevice(int threads = 0);

// Memory bandwidth of a STREAM triad a[i] = b[i] + s*c[i] over `bytes_per_array`
// byte arrays on `threads` threads (McCalpin's STREAM counts 3 arrays of
// traffic per element), best of `repeats`, in bytes per second.
double MeasureTriadBandwidth(double bytes_per_array, int threads, int repeats = 5);

}  // namespace fitspeed

#endif  // FITSPEED_DEVICE_DEVICE_H_
