// Efficiency curves fitted to published kernel timings (fitspeed/evidence/kernels.h).
#include "fitspeed/evidence/kernels.h"

#include <ceres/ceres.h>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "core/median.h"
#include "device/conv_algorithm.h"
#include "evidence/csv_table.h"
#include "evidence/log_logistic.h"
#include "fit/dense_jacobian.h"
#include "fit/solver_options.h"
#include "fitspeed/core/comm.h"
#include "fitspeed/core/error.h"
#include "fitspeed/evidence/gpu_llm_check.h"

namespace fitspeed {

namespace {

// Fewer kernels than this leave a three-parameter curve undetermined.
constexpr int kMinKernels = 8;

// One kernel: the modeled time with the fitted curve, against the measured one.
struct KernelTerm {
  double flops = 0;     // of the algorithm that runs (Winograd: its multiplies x 2)
  GemmDims dims;        // of the products it runs
  double peak = 0;      // FLOP/s of the unit
  double memory_s = 0;  // bytes / (bandwidth x memory efficiency)
  double launch_s = 0;
  double measured_s = 0;
  // The shape term of EfficiencyCurve::ShapeFactor at d_half = exp(log_d).
  template <typename T>
  T Shape(const T& log_d) const {
    using std::exp;
    const T d = exp(log_d);
    return T(dims.m) / (T(dims.m) + d) * (T(dims.n) / (T(dims.n) + d)) *
           (T(dims.k) / (T(dims.k) + d));
  }
  template <typename T>
  T Modeled(const T& log_e_max, const T& log_f_half, const T& slope, const T& log_d) const {
    const T compute = T(flops / peak) /
                      (LogLogisticEfficiency(log_e_max, log_f_half, slope, flops) * Shape(log_d));
    const T bound = compute > T(memory_s) ? compute : T(memory_s);
    return bound + T(launch_s);
  }
};

struct LogTimeResidual {
  const KernelTerm* term;
  template <typename T>
  bool operator()(const T* a, const T* b, const T* k, const T* d, T* residual) const {
    using std::log;
    residual[0] = log(term->Modeled(a[0], b[0], k[0], d[0])) - T(std::log(term->measured_s));
    return true;
  }
};

// The same with the shape term's log d_half held (-inf: no shape term).
struct LogTimeResidualFixedShape {
  const KernelTerm* term;
  double log_d;
  template <typename T>
  bool operator()(const T* a, const T* b, const T* k, T* residual) const {
    using std::log;
    residual[0] = log(term->Modeled(a[0], b[0], k[0], T(log_d))) - T(std::log(term->measured_s));
    return true;
  }
};

// Whether a unit's kernels can tell the shape term from the curve: enough of
// them far from square (smallest dimension under a quarter of the largest).
// Square kernels alone cannot: their shape term is a function of F.
constexpr int kMinNonSquareKernels = 20;
bool ShapeIdentifiable(const std::vector<std::pair<KernelTerm, const KernelMeasurement*>>& list) {
  int non_square = 0;
  for (const auto& [term, m] : list) {
    const double lo = std::min({term.dims.m, term.dims.n, term.dims.k});
    const double hi = std::max({term.dims.m, term.dims.n, term.dims.k});
    non_square += lo < hi / 4;
  }
  return non_square >= kMinNonSquareKernels;
}

double Quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(at));
  const size_t j = std::min(i + 1, values.size() - 1);
  return values[i] + (at - static_cast<double>(i)) * (values[j] - values[i]);
}

KernelMeasurement Base(const CsvTable& t, const CsvTable::Row& row) {
  KernelMeasurement m;
  m.source = fmt::format("{}:{}", t.source, row.line);
  return m;
}

// DeepBench's precision column: FP32 or FP16 on tensor cores; other rows skipped.
bool DeepBenchPrecision(const CsvTable& t, const CsvTable::Row& row, bool* tensor16) {
  const std::string& p = t.Get(row, "precision");
  *tensor16 = p == "fp16_io_fp16mul_fp32acc";
  return p == "fp32" || *tensor16;
}

// NeuSight's nn.Linear table (columns B, bias), its torch.bmm table (B, op
// "bmm") or autoheuristic's GEMMs (using_tf32), already read.
std::vector<KernelMeasurement> ReadGemmCheckTable(const CsvTable& t) {
  const bool linear = t.Has("bias");
  const bool bmm = !linear && t.Has("B");
  if (bmm && !t.Has("op")) {
    throw DataError(t.source, 1, "op", "column missing from the header");
  }
  for (const char* column : {"dtype", "M", "time_us"}) {
    if (!t.Has(column)) {
      throw DataError(t.source, 1, column, "column missing from the header");
    }
  }
  if (linear && !t.Has("B")) {
    throw DataError(t.source, 1, "B", "column missing from the header");
  }
  std::vector<KernelMeasurement> out;
  for (const CsvTable::Row& row : t.rows) {
    KernelMeasurement m = Base(t, row);
    m.gpu = t.Get(row, "gpu");
    m.op = "gemm";
    m.pass = "fwd";
    const std::string& dtype = t.Get(row, "dtype");
    if (bmm) {
      if (t.Get(row, "op") != "bmm") {
        throw DataError(t.source, row.line, "op",
                        fmt::format("expected bmm, got '{}'", t.Get(row, "op")));
      }
      if (dtype != "fp32") continue;
      // B products of M x N x K: 2 B M N K FLOPs; the three operands of each
      // read or written once (the sum and the shape term are symmetric in
      // which dimension is the reduction).
      const double batch = t.Positive(row, "B"), rows = t.Positive(row, "M"),
                   cols = t.Positive(row, "N"), depth = t.Positive(row, "K");
      m.direct_flops = 2 * batch * rows * cols * depth;
      m.dims = {rows, cols, depth};
      m.bytes = 4 * batch * (rows * cols + cols * depth + rows * depth);
    } else if (linear) {
      if (dtype != "fp32") continue;
      // x [B, M, N] -> nn.Linear(N, K): 2 B M N K FLOPs.
      const double rows = t.Positive(row, "B") * t.Positive(row, "M");
      const double in = t.Positive(row, "N"), out_features = t.Positive(row, "K");
      m.direct_flops = 2 * rows * in * out_features;
      m.dims = {rows, out_features, in};
      m.bytes = 4 * (rows * in + in * out_features + rows * out_features);
    } else {
      if (dtype == "float16" || dtype == "bfloat16") {
        m.tensor16 = true;
      } else if (dtype == "float32") {
        m.tf32 = t.Get(row, "using_tf32") == "True";
      } else {
        continue;
      }
      const double rows = t.Positive(row, "M"), depth = t.Positive(row, "K"),
                   cols = t.Positive(row, "N");
      const double element = m.tensor16 ? 2 : 4;
      m.direct_flops = 2 * rows * depth * cols;
      m.dims = {rows, cols, depth};
      m.bytes = element * (rows * depth + depth * cols + rows * cols);
    }
    m.time_s = t.Positive(row, "time_us") * 1e-6;
    if (!std::isfinite(m.direct_flops) || !std::isfinite(m.bytes)) {
      throw DataError(t.source, row.line, "M", "the shape's FLOPs or bytes overflow a double");
    }
    out.push_back(std::move(m));
  }
  if (out.empty())
    throw DataError(t.source, 0, "dtype", "no FP32, TF32 or FP16/BF16 GEMM in the file");
  return out;
}

// A convolution's FLOPs, GEMM dimensions and bytes from its shape (kernel_h,
// kernel_w, strides and pass already set in `m`): N x C x H x W input, K
// filters, padding pad_h, pad_w, `element` bytes per value. Returns false
// when the filter does not fit the padded input (no output pixel).
bool SetConvShape(KernelMeasurement& m, double n, double c, double h, double w, double k,
                  double pad_h, double pad_w, double element) {
  // Output size from the shape (some sheets print a fractional P, Q).
  const double p = std::floor((h + 2 * pad_h - m.kernel_h) / m.stride_h) + 1;
  const double q = std::floor((w + 2 * pad_w - m.kernel_w) / m.stride_w) + 1;
  if (!(p >= 1 && q >= 1)) return false;
  m.direct_flops = 2 * n * k * p * q * c * m.kernel_h * m.kernel_w;
  m.dims = ConvGemmDims(ConvAlgorithm::kImplicitGemm, m.pass, n, c, h, w, k, m.kernel_h, m.kernel_w,
                        p, q);
  m.winograd_dims = ConvGemmDims(ConvAlgorithm::kWinogradF2x2_3x3, m.pass, n, c, h, w, k,
                                 m.kernel_h, m.kernel_w, p, q);
  m.bytes = element * (n * c * h * w + k * c * m.kernel_h * m.kernel_w + n * k * p * q);
  return true;
}

// NeuSight's convolution table (columns R, S, stride, pad, groups, kernel):
// FP32 forward convolutions timed with cudnn.benchmark on, the kernel cuDNN
// ran in `kernel`, already read.
std::vector<KernelMeasurement> ReadNeuSightConvTable(const CsvTable& t) {
  for (const char* column : {"op", "dtype", "pass", "C", "H", "W", "R", "S", "stride", "pad",
                             "groups", "time_us", "kernel"}) {
    if (!t.Has(column)) {
      throw DataError(t.source, 1, column, "column missing from the header");
    }
  }
  std::vector<KernelMeasurement> out;
  for (const CsvTable::Row& row : t.rows) {
    KernelMeasurement m = Base(t, row);
    m.gpu = t.Get(row, "gpu");
    m.op = t.Get(row, "op");
    if (m.op != "conv") {
      throw DataError(t.source, row.line, "op", fmt::format("expected conv, got '{}'", m.op));
    }
    if (t.Get(row, "dtype") != "fp32") continue;
    m.pass = t.Get(row, "pass");
    if (m.pass != "fwd" && m.pass != "bwd_data" && m.pass != "bwd_weights") {
      throw DataError(t.source, row.line, "pass",
                      fmt::format("expected fwd, bwd_data or bwd_weights, got '{}'", m.pass));
    }
    if (t.PositiveInt(row, "groups") != 1) {
      throw DataError(t.source, row.line, "groups",
                      "a grouped convolution: only groups = 1 is read from this table");
    }
    const double n = t.Positive(row, "N"), c = t.Positive(row, "C"), h = t.Positive(row, "H"),
                 w = t.Positive(row, "W"), k = t.Positive(row, "K");
    m.kernel_h = static_cast<int>(t.PositiveInt(row, "R"));
    m.kernel_w = static_cast<int>(t.PositiveInt(row, "S"));
    m.stride_h = m.stride_w = static_cast<int>(t.PositiveInt(row, "stride"));
    const double pad = t.NonNegative(row, "pad");
    if (!SetConvShape(m, n, c, h, w, k, pad, pad, 4)) {
      throw DataError(t.source, row.line, "R",
                      "the filter does not fit the padded input (no output pixel)");
    }
    m.cudnn_algorithm = t.Get(row, "kernel");
    if (m.cudnn_algorithm.empty()) {
      throw DataError(t.source, row.line, "kernel", "empty: the kernel cuDNN ran is needed");
    }
    m.time_s = t.Positive(row, "time_us") * 1e-6;
    if (!std::isfinite(m.direct_flops) || !std::isfinite(m.bytes)) {
      throw DataError(t.source, row.line, "N", "the shape's FLOPs or bytes overflow a double");
    }
    out.push_back(std::move(m));
  }
  if (out.empty()) throw DataError(t.source, 0, "dtype", "no FP32 convolution in the file");
  return out;
}

// Whether a library's algorithm or kernel name is a Winograd one (DeepBench:
// WINOGRAD, WINOGRAD_NONFUSED; NeuSight: ..._scudnn_winograd_...).
bool NamesWinograd(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return name.find("winograd") != std::string::npos;
}

// Whether `list` (the GPUs a device's curves are fitted on or carried from) holds `name`.
bool Names(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// The catalog device a checked GPU maps to: the one that lists its name among
// its aliases ("" when none).
std::string CatalogDeviceOf(const std::string& gpu) {
  const std::optional<CatalogAlias> alias = FindCatalogAlias(gpu);
  return alias ? alias->device : std::string();
}

// The catalog device whose memory curve times `gpu`'s fitted kernels: the
// first fitted on its kernels, else the first that carries their curves
// (Device::kernel_curves_from).
std::string CatalogDeviceTakingCurves(const std::string& gpu) {
  std::string carried;
  for (const std::string& name : CatalogDeviceNames()) {
    if (name == "host") continue;
    const Device d = LoadDevice(name);
    if (Names(d.kernel_curves_from.fitted, gpu)) return name;
    if (carried.empty() && Names(d.kernel_curves_from.carried, gpu)) carried = name;
  }
  if (carried.empty()) {
    throw UsageError(
        fmt::format("no catalog device takes the curves of GPU '{}' (curves_from): give its "
                    "KernelGpu::memory_device",
                    gpu));
  }
  return carried;
}

}  // namespace

std::vector<KernelCheck> CheckCatalogOnKernels(const std::vector<KernelMeasurement>& measurements,
                                               const std::string& table, double floor_s,
                                               const std::vector<Device>& given) {
  std::vector<KernelCheck> checks;
  // Per check (index into checks): signed errors, and for convolutions the
  // signed errors by the library's family and the |errors| of the fastest curve.
  struct Errors {
    std::vector<double> all, library_winograd, library_other, fastest;
  };
  std::vector<Errors> errors;
  std::map<std::string, Device> devices;
  for (const Device& d : given) devices.emplace(d.name, d);
  for (const KernelMeasurement& m : measurements) {
    const std::string name = CatalogDeviceOf(m.gpu);
    if (name.empty()) continue;
    if (devices.count(name) == 0) devices.emplace(name, LoadDevice(name));
    const Device& d = devices.at(name);
    const bool tensor = m.tensor16 || m.tf32;
    const bool conv = m.op == "conv";
    const ConvAlgorithm rule =
        conv ? ConvAlgorithmFor(m.kernel_h, m.kernel_w, m.stride_h, m.stride_w, 1, tensor,
                                !d.winograd_efficiency.points.empty())
             : ConvAlgorithm::kImplicitGemm;
    const bool winograd = rule == ConvAlgorithm::kWinogradF2x2_3x3;
    const std::string unit = m.tensor16 ? "tensor16"
                             : m.tf32   ? "tf32"
                             : winograd ? "winograd"
                                        : "fp32";
    auto check = std::find_if(checks.begin(), checks.end(), [&](const KernelCheck& c) {
      return c.gpu == m.gpu && c.unit == unit;
    });
    if (check == checks.end()) {
      KernelCheck c;
      c.gpu = m.gpu;
      c.device = name;
      c.unit = unit;
      c.table = table;
      const std::string field = unit == "fp32"       ? "efficiency.compute"
                                : unit == "winograd" ? "efficiency.winograd"
                                                     : "efficiency.tensor";
      const auto basis = d.bases.find(field);
      c.basis = basis == d.bases.end() ? "assumed" : basis->second;
      checks.push_back(c);
      errors.emplace_back();
      check = checks.end() - 1;
    }
    Errors& e = errors[static_cast<size_t>(check - checks.begin())];
    if (m.time_s < floor_s) {
      ++check->below_floor;
      continue;
    }
    const double peak = m.tensor16 ? d.tensor16_flops_per_s
                        : m.tf32   ? d.tf32_flops_per_s
                                   : d.fp32_flops_per_s;
    if (!(peak > 0)) continue;
    const double memory =
        m.bytes / (d.memory_bandwidth_bytes_per_s * d.memory_efficiency.At(m.bytes));
    // The pass as ModelStep times it with `algorithm`.
    const auto modeled = [&](ConvAlgorithm algorithm) {
      const bool on_winograd = algorithm == ConvAlgorithm::kWinogradF2x2_3x3;
      const EfficiencyCurve& curve = tensor        ? d.TensorEfficiency()
                                     : on_winograd ? d.winograd_efficiency
                                                   : d.compute_efficiency;
      const double flops = AlgorithmFlops(algorithm, m.direct_flops);
      const double compute = flops / (peak * curve.At(flops) *
                                      curve.ShapeFactor(on_winograd ? m.winograd_dims : m.dims));
      return std::max(compute, memory) + d.kernel_launch_s;
    };
    const double error = modeled(rule) / m.time_s - 1;
    e.all.push_back(error);
    if (conv && !m.cudnn_algorithm.empty()) {
      const bool by_library = NamesWinograd(m.cudnn_algorithm);
      ++check->convolutions;
      check->winograd_by_library += by_library;
      check->winograd_by_rule += winograd;
      check->agree += by_library == winograd;
      (by_library ? e.library_winograd : e.library_other).push_back(error);
      // Only a device with a Winograd curve has two to choose from.
      const double gemm = modeled(ConvAlgorithm::kImplicitGemm);
      const double wino =
          d.winograd_efficiency.points.empty() ? gemm : modeled(ConvAlgorithm::kWinogradF2x2_3x3);
      const bool fastest_winograd = !tensor && m.kernel_h == 3 && m.kernel_w == 3 &&
                                    m.stride_h == 1 && m.stride_w == 1 && wino < gemm;
      check->agree_fastest += fastest_winograd == by_library;
      e.fastest.push_back(std::abs((fastest_winograd ? wino : gemm) / m.time_s - 1));
    }
  }
  const auto median_or_nan = [](const std::vector<double>& v) {
    return v.empty() ? std::nan("") : Median(v);
  };
  for (size_t i = 0; i < checks.size(); ++i) {
    KernelCheck& c = checks[i];
    const Errors& e = errors[i];
    c.kernels = static_cast<int>(e.all.size());
    if (e.all.empty()) continue;
    std::vector<double> abs;
    for (double x : e.all) abs.push_back(std::abs(x));
    c.median_abs_error = Median(abs);
    c.median_signed_error = Median(e.all);
    c.p90_abs_error = Quantile(abs, 0.9);
    c.median_signed_error_library_winograd = median_or_nan(e.library_winograd);
    c.median_signed_error_library_other = median_or_nan(e.library_other);
    c.median_abs_error_fastest = median_or_nan(e.fastest);
  }
  return checks;
}

const char* KernelUnitName(KernelUnit unit) {
  switch (unit) {
    case KernelUnit::kFp32:
      return "fp32";
    case KernelUnit::kWinograd:
      return "winograd";
    case KernelUnit::kTensor16:
      return "tensor16";
    case KernelUnit::kFp8:
      return "fp8";
    case KernelUnit::kAttentionForward:
      return "attention_fwd";
    case KernelUnit::kAttentionBackward:
      return "attention_bwd";
  }
  return "unknown";
}

std::vector<KernelMeasurement> ReadKernelTable(const std::string& path) {
  {
    const CsvTable probe = ReadCsvTable(path, {"gpu", "N", "K"});
    if (probe.Has("groups") && probe.Has("kernel")) {
      return ReadNeuSightConvTable(probe);
    }
    if (probe.Has("using_tf32") || probe.Has("bias") || probe.Has("B")) {
      return ReadGemmCheckTable(probe);
    }
  }
  const CsvTable t = ReadCsvTable(path, {"gpu", "op", "precision", "N", "K"});
  const bool k40 = t.Has("time_us_derived");
  const bool conv = !k40 && t.Has("R_filter_h");
  if (!k40 && !t.Has("time_us")) {
    throw DataError(
        path, 1, "header",
        "neither a DeepBench table (time_us) nor the K40 SGEMM table (time_us_derived)");
  }
  // The columns each kind of table needs beyond the common ones.
  const std::vector<std::string> needed =
      conv  ? std::vector<std::string>{"phase", "pass",       "C",          "H",
                                       "W",     "R_filter_h", "S_filter_w", "pad_h",
                                       "pad_w", "stride_h",   "stride_w",   "fwd_algo"}
      : k40 ? std::vector<std::string>{"M"}
            : std::vector<std::string>{"phase", "M"};
  for (const std::string& column : needed) {
    if (!t.Has(column)) {
      throw DataError(path, 1, column, "column missing from the header");
    }
  }
  std::vector<KernelMeasurement> out;
  for (const CsvTable::Row& row : t.rows) {
    KernelMeasurement m = Base(t, row);
    m.gpu = t.Get(row, "gpu");
    if (k40) {
      if (t.Get(row, "precision") != "fp32") continue;
      m.time_s = t.Positive(row, "time_us_derived") * 1e-6;
    } else {
      if (t.Get(row, "phase") != "train" || !DeepBenchPrecision(t, row, &m.tensor16)) continue;
      m.time_s = t.Positive(row, "time_us") * 1e-6;
    }
    const double element = m.tensor16 ? 2 : 4;
    if (!conv) {
      const double rows = t.Positive(row, "M");
      const double cols = t.Positive(row, "N");
      const double depth = t.Positive(row, "K");
      m.op = "gemm";
      m.pass = "fwd";
      m.direct_flops = 2 * rows * cols * depth;
      m.dims = {rows, cols, depth};
      m.bytes = element * (rows * depth + depth * cols + rows * cols);
    } else {
      m.op = "conv";
      m.pass = t.Get(row, "pass");
      if (m.pass != "fwd" && m.pass != "bwd_data" && m.pass != "bwd_weights") {
        throw DataError(path, row.line, "pass",
                        fmt::format("expected fwd, bwd_data or bwd_weights, got '{}'", m.pass));
      }
      const double n = t.Positive(row, "N"), c = t.Positive(row, "C"), h = t.Positive(row, "H"),
                   w = t.Positive(row, "W"), k = t.Positive(row, "K");
      m.kernel_h = static_cast<int>(t.PositiveInt(row, "R_filter_h"));
      m.kernel_w = static_cast<int>(t.PositiveInt(row, "S_filter_w"));
      m.stride_h = static_cast<int>(t.PositiveInt(row, "stride_h"));
      m.stride_w = static_cast<int>(t.PositiveInt(row, "stride_w"));
      const double pad_h = t.NonNegative(row, "pad_h"), pad_w = t.NonNegative(row, "pad_w");
      if (!SetConvShape(m, n, c, h, w, k, pad_h, pad_w, element)) {
        throw DataError(path, row.line, "R_filter_h",
                        "the filter does not fit the padded input (no output pixel)");
      }
      m.cudnn_algorithm = t.Get(row, "fwd_algo");
    }
    if (!std::isfinite(m.direct_flops) || !std::isfinite(m.bytes)) {
      throw DataError(path, row.line, conv ? "N" : "M",
                      "the shape's FLOPs or bytes overflow a double");
    }
    out.push_back(std::move(m));
  }
  if (out.empty()) {
    throw DataError(path, 0, "precision",
                    "no FP32 or FP16-tensor-core training kernel in the file");
  }
  return out;
}

std::vector<KernelGpu> KernelGpus() {
  // The devices name the GPUs in their curves_from. The V100's fits are
  // carried to the devices nothing of whose was measured here (issue 30's and
  // issue 32's: the catalog's nearest; AMD and Gaudi: another vendor's
  // kernels, carried by the same F/peak rule; docs/devices.md); the H200's to
  // the same GH100 chip on other boards (the H100 SXM at the same peaks, the
  // H100 PCIe at its lower clocks, by F/peak).
  std::vector<KernelGpu> gpus(5);
  gpus[0] = {"V100",
             "Tesla V100 SXM2 in a DGX-1 (DeepBench sheet; CUDA 10.1, cuDNN 7.6.2): 15.7 TFLOPS "
             "FP32, 125 TFLOPS FP16 tensor, 900 GB/s (datasheet)",
             15.7e12,
             125e12,
             9e11,
             5e-6};
  gpus[1] = {"P100",
             "Tesla P100 (DeepBench sheet; CUDA 8, cuDNN 6): read as the SXM2 board, 10.6 TFLOPS "
             "FP32 and 732 GB/s (datasheet); its largest SGEMMs reach 9.1 TFLOPS, 98% of the PCIe "
             "board's 9.3",
             10.6e12,
             0,
             7.32e11,
             5e-6};
  gpus[2] = {"T4",
             "Tesla T4 (DeepBench sheet; CUDA 10.1, cuDNN 7.6.2): 8.1 TFLOPS FP32, 65 TFLOPS FP16 "
             "tensor, 320 GB/s (datasheet)",
             8.1e12,
             65e12,
             3.2e11,
             5e-6};
  gpus[3] = {"Tesla K40",
             "Tesla K40 at its 875 MHz boost clock, as the clBLAS tables were measured: 2880 cores "
             "x 2 x 0.875 GHz = 5.04 TFLOPS FP32, 288 GB/s",
             5.04e12,
             0,
             2.88e11,
             5e-6};
  // After the V100, which names the Hopper devices for the units the H200
  // table has no kernels of (FP32, Winograd, depthwise).
  gpus[4] = {"H200",
             "NVIDIA H200 SXM of this project's first-hand run (data/llm-gpu/README.md: "
             "bench/gpu/llm_kernels.py, 2026-11-27, PyTorch 2.11, CUDA 13.0; SM clocks "
             "1845-1980 MHz): 67 TFLOPS FP32, 989.5 TFLOPS BF16/FP16 and 1,979 TFLOPS FP8 dense "
             "tensor, 4.8 TB/s (datasheet)",
             67e12,
             989.5e12,
             4.8e12,
             5e-6,
             1979e12,
             "data/llm-gpu/gemm.csv"};
  return gpus;
}

double KernelCurveFit::At(double flops) const {
  return LogLogisticEfficiency(std::log(e_max), std::log(f_half), slope, flops);
}

EfficiencyCurve KernelCurveFit::Curve() const {
  EfficiencyCurve curve;
  for (int i = 0; i <= 28; ++i) {
    const double size = std::pow(10.0, 5 + i / 4.0);
    // Four significant digits, as the device files print them; never 0.
    const double eff = std::max(1e-6, std::stod(fmt::format("{:.4g}", At(size))));
    curve.points.push_back({std::stod(fmt::format("{:.4g}", size)), eff});
  }
  // A kernel with less work never takes longer: where the log-logistic's
  // time F / (peak eff(F)) would rise toward small F (slope k > 1), hold it at
  // its minimum (eff in proportion to F below that point).
  for (size_t i = curve.points.size() - 1; i-- > 0;) {
    EfficiencyCurve::Point& p = curve.points[i];
    const EfficiencyCurve::Point& next = curve.points[i + 1];
    const double floor = next.efficiency * p.size / next.size;
    if (p.efficiency < floor) p.efficiency = std::stod(fmt::format("{:.4g}", floor));
  }
  curve.half_dim = half_dim > 0 ? std::stod(fmt::format("{:.4g}", half_dim)) : 0;
  return curve;
}

KernelFitReport FitKernelCurves(const std::vector<KernelMeasurement>& measurements,
                                const std::vector<KernelGpu>& gpus, bool shape_term) {
  KernelFitReport report;
  std::map<std::string, int> skipped;
  for (const KernelGpu& gpu : gpus) {
    const Device memory_of = LoadDevice(
        gpu.memory_device.empty() ? CatalogDeviceTakingCurves(gpu.name) : gpu.memory_device);
    AlgorithmAgreement agreement;
    agreement.gpu = gpu.name;
    std::map<KernelUnit, std::vector<std::pair<KernelTerm, const KernelMeasurement*>>> terms;
    for (const KernelMeasurement& m : measurements) {
      if (m.gpu != gpu.name) continue;
      if (m.tensor16 && gpu.tensor16_flops_per_s <= 0) {
        ++skipped[fmt::format("{}: FP16 tensor-core kernels on a GPU without tensor cores", m.gpu)];
        continue;
      }
      if (m.fp8 && gpu.fp8_flops_per_s <= 0) {
        ++skipped[fmt::format("{}: FP8 kernels on a GPU without FP8 units", m.gpu)];
        continue;
      }
      const bool attention = m.op == "attention";
      KernelUnit unit = attention    ? (m.pass == "bwd" ? KernelUnit::kAttentionBackward
                                                        : KernelUnit::kAttentionForward)
                        : m.fp8      ? KernelUnit::kFp8
                        : m.tensor16 ? KernelUnit::kTensor16
                                     : KernelUnit::kFp32;
      double flops = m.direct_flops;
      GemmDims dims = m.dims;
      if (m.op == "conv") {
        const ConvAlgorithm a =
            ConvAlgorithmFor(m.kernel_h, m.kernel_w, m.stride_h, m.stride_w, 1, m.tensor16, true);
        if (a == ConvAlgorithm::kWinogradF2x2_3x3) {
          unit = KernelUnit::kWinograd;
          dims = m.winograd_dims;
        }
        flops = AlgorithmFlops(a, m.direct_flops);
        if (!m.tensor16 && m.pass == "fwd" && !m.cudnn_algorithm.empty()) {
          const bool by_cudnn = NamesWinograd(m.cudnn_algorithm);
          const bool by_rule = a == ConvAlgorithm::kWinogradF2x2_3x3;
          ++agreement.convolutions;
          agreement.agree += by_cudnn == by_rule;
          agreement.winograd_by_cudnn += by_cudnn;
          agreement.winograd_by_rule += by_rule;
        }
      }
      KernelTerm term;
      term.flops = flops;
      term.dims = dims;
      term.peak = m.fp8        ? gpu.fp8_flops_per_s
                  : m.tensor16 ? gpu.tensor16_flops_per_s
                               : gpu.fp32_flops_per_s;
      term.memory_s =
          m.bytes / (gpu.memory_bandwidth_bytes_per_s * memory_of.memory_efficiency.At(m.bytes));
      term.launch_s = gpu.kernel_launch_s;
      term.measured_s = m.time_s;
      terms[unit].emplace_back(term, &m);
    }
    if (agreement.convolutions > 0) report.agreement.push_back(agreement);
    for (KernelUnit unit :
         {KernelUnit::kFp32, KernelUnit::kWinograd, KernelUnit::kTensor16, KernelUnit::kFp8,
          KernelUnit::kAttentionForward, KernelUnit::kAttentionBackward}) {
      const bool attention_unit =
          unit == KernelUnit::kAttentionForward || unit == KernelUnit::kAttentionBackward;
      const auto& list = terms[unit];
      if (list.empty()) continue;
      if (static_cast<int>(list.size()) < kMinKernels) {
        ++skipped[fmt::format("{} {}: fewer than {} kernels", gpu.name, KernelUnitName(unit),
                              kMinKernels)];
        continue;
      }
      // Start: 80% at the top, half of it at 1 GFLOP, one decade per factor ~2,
      // the shape term halving at a dimension of 16.
      double a = std::log(0.8), b = std::log(1e9), k = 1.0, d = std::log(16.0);
      // The shape term: fitted where the kernels tell it from the curve, else
      // the V100's of the unit (fitted first), else none.
      // Attention has none: its kernels are not one GEMM's tiles.
      const bool shape_fitted = shape_term && !attention_unit && ShapeIdentifiable(list);
      double fixed_half_dim = 0;
      if (!shape_fitted) {
        for (const KernelCurveFit& f : report.fits) {
          if (f.unit == unit && f.half_dim_fitted && fixed_half_dim == 0) {
            fixed_half_dim = f.half_dim;
          }
        }
        d = fixed_half_dim > 0 ? std::log(fixed_half_dim)
                               : -std::numeric_limits<double>::infinity();
      }
      ceres::Problem problem;
      for (const auto& [term, m] : list) {
        if (shape_fitted) {
          problem.AddResidualBlock(new ceres::AutoDiffCostFunction<LogTimeResidual, 1, 1, 1, 1, 1>(
                                       new LogTimeResidual{&term}),
                                   nullptr, &a, &b, &k, &d);
        } else {
          problem.AddResidualBlock(
              new ceres::AutoDiffCostFunction<LogTimeResidualFixedShape, 1, 1, 1, 1>(
                  new LogTimeResidualFixedShape{&term, d}),
              nullptr, &a, &b, &k);
        }
      }
      if (shape_fitted) {
        problem.SetParameterLowerBound(&d, 0, std::log(0.01));
        problem.SetParameterUpperBound(&d, 0, std::log(1e4));
      }
      problem.SetParameterUpperBound(&a, 0, 0.0);  // e_max <= 1
      problem.SetParameterLowerBound(&a, 0, std::log(1e-3));
      problem.SetParameterLowerBound(&b, 0, std::log(1e3));
      problem.SetParameterUpperBound(&b, 0, std::log(1e14));
      problem.SetParameterLowerBound(&k, 0, 0.05);
      problem.SetParameterUpperBound(&k, 0, 5.0);
      ceres::Solver::Summary summary;
      ceres::Solve(QuietSolverOptions({200, 1e-12, 1e-12}), &problem, &summary);

      KernelCurveFit fit;
      fit.gpu = gpu.name;
      fit.unit = unit;
      fit.kernels = static_cast<int>(list.size());
      fit.converged = summary.IsSolutionUsable() && summary.termination_type == ceres::CONVERGENCE;
      fit.e_max = std::exp(a);
      fit.f_half = std::exp(b);
      fit.slope = k;
      fit.half_dim = std::exp(d);  // 0 without a shape term
      fit.half_dim_fitted = shape_fitted;
      // Standard errors: s^2 (J^T J)^-1 from the Jacobian at the solution
      // (the free parameters' columns: a constant block has none).
      std::vector<double> residuals;
      ceres::CRSMatrix crs;
      problem.Evaluate(ceres::Problem::EvaluateOptions(), nullptr, &residuals, nullptr, &crs);
      const Eigen::MatrixXd jac = DenseJacobian(crs);
      double rss = 0;
      for (double r : residuals) rss += r * r;
      const double dof = static_cast<double>(residuals.size() - jac.cols());
      const Eigen::MatrixXd jtj = jac.transpose() * jac;
      const Eigen::FullPivLU<Eigen::MatrixXd> lu(jtj);
      fit.half_dim_se = std::nan("");
      if (dof > 0 && lu.isInvertible()) {
        const Eigen::MatrixXd cov = lu.inverse() * (rss / dof);
        fit.e_max_se = fit.e_max * std::sqrt(cov(0, 0));
        fit.f_half_se = fit.f_half * std::sqrt(cov(1, 1));
        fit.slope_se = std::sqrt(cov(2, 2));
        if (shape_fitted) fit.half_dim_se = fit.half_dim * std::sqrt(cov(3, 3));
      } else {
        fit.e_max_se = fit.f_half_se = fit.slope_se = std::nan("");
      }
      std::vector<double> abs_errors;
      std::map<std::string, std::vector<double>> by_group;
      for (const auto& [term, m] : list) {
        const double e = term.Modeled(a, b, k, d) / term.measured_s - 1;
        abs_errors.push_back(std::abs(e));
        by_group[m->op == "gemm"        ? "gemm"
                 : m->op == "attention" ? "attention/" + m->pass
                                        : "conv/" + m->pass]
            .push_back(e);
      }
      fit.median_abs_error = Median(abs_errors);
      fit.p90_abs_error = Quantile(abs_errors, 0.9);
      for (const auto& [name, errors] : by_group) {
        std::vector<double> abs;
        for (double e : errors) abs.push_back(std::abs(e));
        fit.groups.push_back({name, static_cast<int>(errors.size()), Median(abs), Median(errors)});
      }
      report.fits.push_back(std::move(fit));
    }
  }
  for (const auto& [reason, count] : skipped) {
    report.skipped.push_back(fmt::format("{} ({} kernels)", reason, count));
  }
  return report;
}

std::vector<KernelMeasurement> ReadKernelTables(const std::string& directory) {
  std::vector<KernelMeasurement> all;
  for (const char* file : {"deepbench_gemm.csv", "deepbench_conv.csv", "k40_cublas_sgemm.csv"}) {
    std::vector<KernelMeasurement> some = ReadKernelTable(directory + "/" + file);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

std::vector<KernelMeasurement> ReadFirstHandGemms(const std::string& path, const std::string& gpu) {
  std::vector<KernelMeasurement> out;
  for (const GpuGemm& g : ReadGpuGemms(path)) {
    KernelMeasurement m;
    m.source = fmt::format("{}:{}", g.source, g.line);
    m.gpu = gpu;
    m.op = "gemm";
    m.pass = "fwd";  // each product is its own kernel, whatever pass of the layer it serves
    m.fp8 = g.dtype == "fp8_e4m3" || g.dtype == "fp8_e4m3_fast";
    m.tensor16 = !m.fp8;  // bf16, fp16 (ReadGpuGemms refuses any other dtype)
    const double rows = static_cast<double>(g.m), cols = static_cast<double>(g.n),
                 depth = static_cast<double>(g.k);
    m.direct_flops = g.flops;
    m.dims = {rows, cols, depth};
    const double element = m.fp8 ? 1 : 2;
    m.bytes = element * (rows * depth + depth * cols) + 2 * rows * cols;
    m.time_s = g.median_s;
    out.push_back(std::move(m));
  }
  if (out.empty()) throw DataError(path, 0, "status", "no timed matrix product in the file");
  return out;
}

std::vector<KernelMeasurement> ReadFirstHandAttention(const std::string& path,
                                                      const std::string& gpu) {
  const std::vector<GpuAttention> rows = ReadGpuAttention(path);
  auto same_shape = [](const GpuAttention& a, const GpuAttention& b) {
    return a.backend == b.backend && a.batch == b.batch && a.heads == b.heads &&
           a.kv_heads == b.kv_heads && a.head_dim == b.head_dim && a.seq == b.seq &&
           a.causal == b.causal;
  };
  std::vector<KernelMeasurement> out;
  for (const GpuAttention& a : rows) {
    if (a.backend != "cudnn") continue;
    KernelMeasurement m;
    m.source = fmt::format("{}:{}", a.source, a.line);
    m.gpu = gpu;
    m.op = "attention";
    m.tensor16 = true;
    const double b = static_cast<double>(a.batch), s = static_cast<double>(a.seq),
                 d = static_cast<double>(a.head_dim);
    // Q and the output of every head, K and V of every key/value head.
    m.bytes = 2.0 * b * s * d *
              (2.0 * static_cast<double>(a.heads) + 2.0 * static_cast<double>(a.kv_heads));
    // The products' dimensions as the split model counts them (TimeFlashAttention); the fit
    // holds no shape term for attention, whose factor is 1 only for dimensions > 0.
    m.dims = {(a.causal ? 0.5 : 1.0) * s, s, d};
    if (a.pass == "fwd") {
      m.pass = "fwd";
      m.direct_flops = a.flops_causal;  // the unmasked products, as ReadGpuAttention checked
      m.time_s = a.median_s;
    } else {
      const auto fwd = std::find_if(rows.begin(), rows.end(), [&](const GpuAttention& f) {
        return f.pass == "fwd" && same_shape(f, a);
      });
      if (fwd == rows.end()) {
        throw DataError(a.source, a.line, "pass",
                        "a forward+backward row without the forward row of its shape");
      }
      if (!(a.median_s > fwd->median_s)) {
        throw DataError(a.source, a.line, "median_ms",
                        fmt::format("forward+backward {} ms is not longer than the forward "
                                    "{} ms of line {}",
                                    a.median_s * 1e3, fwd->median_s * 1e3, fwd->line));
      }
      m.pass = "bwd";
      m.direct_flops = 2.5 * fwd->flops_causal;
      m.time_s = a.median_s - fwd->median_s;
    }
    out.push_back(std::move(m));
  }
  if (out.empty()) throw DataError(path, 0, "backend", "no timed cuDNN attention row in the file");
  return out;
}

DepthwiseDerivation DeriveDepthwise(const std::string& path, const KernelFitReport& report) {
  const KernelCurveFit* tensor = nullptr;
  for (const KernelCurveFit& f : report.fits) {
    if (f.gpu == "V100" && f.unit == KernelUnit::kTensor16) tensor = &f;
  }
  if (tensor == nullptr) {
    throw UsageError("DeriveDepthwise needs the V100's FP16 tensor-core fit");
  }
  const KernelGpu v100 = KernelGpus().front();
  const Device memory_of = LoadDevice("v100-sxm2");
  const CsvTable t = ReadCsvTable(path, {"device", "layer", "dtype", "input_NHWC", "filters",
                                         "kernel", "padding", "metric", "value"});
  DepthwiseDerivation d;
  int conv_line = 0, separable_line = 0;
  for (const CsvTable::Row& row : t.rows) {
    if (t.Get(row, "device").rfind("Tesla V100", 0) != 0 || t.Get(row, "dtype") != "float16" ||
        t.Get(row, "metric") != "images_per_s") {
      continue;
    }
    if (t.Get(row, "input_NHWC") != "16x224x224x128" || t.Get(row, "filters") != "128" ||
        t.Get(row, "kernel") != "3x3" || t.Get(row, "padding") != "valid") {
      throw DataError(path, row.line, "input_NHWC",
                      "expected the 16x224x224x128, 128 filters, 3x3 valid microbenchmark");
    }
    const std::string& layer = t.Get(row, "layer");
    if (layer == "Conv2D") {
      d.conv_images_per_s = t.Positive(row, "value");
      conv_line = row.line;
    } else if (layer == "SeparableConv2D") {
      d.separable_images_per_s = t.Positive(row, "value");
      separable_line = row.line;
    }
  }
  if (conv_line == 0 || separable_line == 0) {
    throw DataError(path, 0, "layer",
                    "needs the V100 FP16 Conv2D and SeparableConv2D forward rows");
  }
  d.source = fmt::format("{}:{},{}", path, conv_line, separable_line);
  // 16 x 224 x 224 x 128 in, 3x3 "valid": 222 x 222 out; 2-byte activations and weights.
  const double n = d.batch, in_pixels = 224.0 * 224, out_pixels = 222.0 * 222, c = 128, k = 128;
  auto kernel_s = [&](double flops, double bytes, double peak, const EfficiencyCurve* curve,
                      const GemmDims& dims) {
    const double compute =
        curve != nullptr ? flops / (peak * curve->At(flops) * curve->ShapeFactor(dims)) : 0.0;
    const double memory =
        bytes / (v100.memory_bandwidth_bytes_per_s * memory_of.memory_efficiency.At(bytes));
    return std::max(compute, memory) + v100.kernel_launch_s;
  };
  const EfficiencyCurve tensor_curve = tensor->Curve();
  const double pointwise_flops = 2 * n * out_pixels * c * k;
  const double pointwise_bytes = 2 * (2 * n * out_pixels * c + c * k);
  d.pointwise_modeled_s = kernel_s(pointwise_flops, pointwise_bytes, v100.tensor16_flops_per_s,
                                   &tensor_curve, GemmDims{n * out_pixels, k, c});
  d.depthwise_flops = 2 * n * out_pixels * c * 9;
  d.depthwise_s = n / d.separable_images_per_s - d.pointwise_modeled_s;
  if (!(d.depthwise_s > 0)) {
    throw DataError(path, separable_line, "value",
                    "the separable layer is faster than its modeled pointwise part alone");
  }
  d.efficiency = d.depthwise_flops / (d.depthwise_s * v100.fp32_flops_per_s);
  const double conv_flops = 2 * n * out_pixels * c * k * 9;
  const double conv_bytes = 2 * (n * in_pixels * c + n * out_pixels * k + 9 * c * k);
  d.conv_modeled_s = kernel_s(conv_flops, conv_bytes, v100.tensor16_flops_per_s, &tensor_curve,
                              GemmDims{n * out_pixels, k, 9 * c});
  d.conv_measured_s = n / d.conv_images_per_s;
  return d;
}

KernelFitReport FitKernelTables(const std::string& directory, bool shape_term,
                                const std::string& first_hand_dir) {
  std::vector<KernelMeasurement> kernels = ReadKernelTables(directory);
  if (!first_hand_dir.empty()) {
    std::vector<KernelMeasurement> h200 = ReadFirstHandGemms(first_hand_dir + "/gemm.csv", "H200");
    kernels.insert(kernels.end(), h200.begin(), h200.end());
    std::vector<KernelMeasurement> attention =
        ReadFirstHandAttention(first_hand_dir + "/attention.csv", "H200");
    kernels.insert(kernels.end(), attention.begin(), attention.end());
  }
  KernelFitReport report = FitKernelCurves(kernels, KernelGpus(), shape_term);
  report.depthwise = DeriveDepthwise(directory + "/tlkh_depsep_conv.csv", report);
  const std::vector<MemorySweepGpu> memory_gpus = MemorySweepGpus();
  report.memory = FitMemoryPlateaus(directory + "/neusight_vec_large.csv", memory_gpus);
  if (!first_hand_dir.empty()) {
    report.memory.push_back(
        FitFirstHandNormalizationPlateau(first_hand_dir + "/memory_ops.csv", memory_gpus.back()));
  }
  return report;
}

std::vector<std::string> ApplyKernelCurves(Device& device, const KernelFitReport& report,
                                           const std::vector<KernelGpu>& gpus) {
  std::vector<std::string> set;
  for (const KernelGpu& gpu : gpus) {
    const bool fitted = Names(device.kernel_curves_from.fitted, gpu.name);
    const bool carried = Names(device.kernel_curves_from.carried, gpu.name);
    if (!fitted && !carried) continue;
    for (const KernelCurveFit& fit : report.fits) {
      if (fit.gpu != gpu.name) continue;
      const bool tensor = fit.unit == KernelUnit::kTensor16;
      const bool fp8 = fit.unit == KernelUnit::kFp8;
      const bool attention_fwd = fit.unit == KernelUnit::kAttentionForward;
      const bool attention_bwd = fit.unit == KernelUnit::kAttentionBackward;
      const bool attention = attention_fwd || attention_bwd;
      const double device_peak =
          fp8         ? device.fp8_flops_per_s
          : attention ? device.tensor16_flops_per_s
          : tensor    ? (device.tensor16_flops_per_s > 0 ? device.tensor16_flops_per_s
                                                         : device.tf32_flops_per_s)
                      : device.fp32_flops_per_s;
      if (device_peak <= 0) continue;  // no such units
      const double gpu_peak = fp8                   ? gpu.fp8_flops_per_s
                              : tensor || attention ? gpu.tensor16_flops_per_s
                                                    : gpu.fp32_flops_per_s;
      const char* field = fit.unit == KernelUnit::kFp32       ? "efficiency.compute"
                          : fit.unit == KernelUnit::kWinograd ? "efficiency.winograd"
                          : fp8                               ? "efficiency.fp8"
                          : attention_fwd                     ? "efficiency.attention_forward"
                          : attention_bwd                     ? "efficiency.attention_backward"
                                                              : "efficiency.tensor";
      EfficiencyCurve& curve = fit.unit == KernelUnit::kFp32       ? device.compute_efficiency
                               : fit.unit == KernelUnit::kWinograd ? device.winograd_efficiency
                               : fp8                               ? device.fp8_efficiency
                               : attention_fwd ? device.attention_forward_efficiency
                               : attention_bwd ? device.attention_backward_efficiency
                                               : device.tensor_efficiency;
      curve = CarryCurve(fit, gpu_peak, device_peak);
      curve.from = gpu.name;
      bool convolutions = false;
      for (const KernelCurveFit::Group& g : fit.groups) {
        convolutions = convolutions || g.name.rfind("conv", 0) == 0;
      }
      const std::string what =
          fit.unit == KernelUnit::kFp32 ? "FP32 GEMMs and implicit-GEMM convolutions"
          : fit.unit == KernelUnit::kWinograd
              ? "FP32 3x3 stride-1 convolutions run as Winograd F(2x2,3x3) (16/36 of the "
                "direct FLOPs; Lavin & Gray 2016)"
          : fp8 ? "FP8 (E4M3) tensor-core GEMMs (torch._scaled_mm, per-tensor scales, with and "
                  "without fast accumulation)"
          : attention_fwd
              ? "BF16 causal fused attention forward kernels (cuDNN SDPA; FLOPs 2 x 2 b h s^2 d "
                "/ 2)"
          : attention_bwd
              ? "BF16 causal fused attention backward kernels (cuDNN SDPA: forward+backward "
                "less forward, 2.5x the forward FLOPs)"
          : convolutions ? "FP16 tensor-core GEMMs and convolutions"
                         : "BF16 and FP16 tensor-core GEMMs";
      std::string text = fmt::format(
          "{}: log-logistic e_max/(1+(F_half/F)^k) fitted to {} {} kernels of {} "
          "({}, `fitspeed validate --kernels`): e_max {:.3g} +/- {:.2g}, F_half {:.3g} "
          "+/- {:.2g} FLOPs, k {:.3g} +/- {:.2g}; median |time error| {:.1f}%",
          fitted ? "fitted" : "carried", fit.kernels, gpu.name, what,
          attention ? std::string("data/llm-gpu/attention.csv") : gpu.data, fit.e_max, fit.e_max_se,
          fit.f_half, fit.f_half_se, fit.slope, fit.slope_se, 100 * fit.median_abs_error);
      if (fit.half_dim > 0) {
        text +=
            fmt::format("; shape term (half_dim) {:.4g}{}", fit.half_dim,
                        fit.half_dim_fitted ? fmt::format(" +/- {:.2g}, fitted", fit.half_dim_se)
                                            : " held at the V100's (square kernels only)");
      }
      if (carried) {
        text += fmt::format(
            "; carried from the {} ({:.4g} TFLOPS) to this device ({:.4g} TFLOPS) at the same "
            "F/peak, F_half x {:.4g} (CarryCurve)",
            gpu.name, gpu_peak / 1e12, device_peak / 1e12, device_peak / gpu_peak);
      }
      device.sources[field] = text;
      device.bases[field] = fitted ? "fitted" : "carried";
      set.push_back(field);
    }
    if (report.depthwise) {
      const DepthwiseDerivation& d = *report.depthwise;
      const double eff = std::stod(fmt::format("{:.4g}", d.efficiency));
      device.depthwise_efficiency.points = {{1.0, eff}};
      // The derivation's V100 is a DGX Station's V100 (the same GV100 at 15.7 TFLOPS FP32).
      const bool v100 = device.name == "v100-sxm2";
      device.sources["efficiency.depthwise"] = fmt::format(
          "{}: depthwise 3x3 convolutions at {:.4g} of the FP32 peak, at every size and pass: "
          "derived from one published V100 forward pair (tlkh/depsep-conv-benchmarks @ 331845a, "
          "TF 2.1, cuDNN 7.6.5, FP16 NHWC 16x224x224x128: SeparableConv2D {:.4g} images/s, less "
          "its pointwise 1x1 modeled with the fitted V100 tensor curve, {:.3g} ms of {:.3g} ms "
          "per batch); no depthwise sweep of a catalog GPU was found (docs/validation.md, "
          "\"Kernel fits\"){}",
          v100 ? "fitted" : "carried", eff, d.separable_images_per_s, 1e3 * d.pointwise_modeled_s,
          1e3 * d.batch / d.separable_images_per_s,
          v100 ? "" : "; carried unchanged as a fraction of this device's FP32 peak");
      device.bases["efficiency.depthwise"] = v100 ? "fitted" : "carried";
      set.push_back("efficiency.depthwise");
    }
  }
  return set;
}

// ---- Memory-bound kernels ----------------------------------------------------

namespace {

// From this many bytes moved, the eager dispatch inside NeuSight's one-call
// times (about 30 us on the A100s) is at most ~5% of them (1 GB streams in
// 0.6-0.7 ms there), less on the slower GPUs and in the larger rows.
constexpr double kPlateauMinBytes = 1e9;
// The catalog's assumed memory curve (every device file before the sweeps):
// its shape, and the plateau it reaches from 100 MB.
constexpr double kAssumedMemoryPlateau = 0.85;
const std::vector<EfficiencyCurve::Point> kAssumedMemoryShape = {
    {1e4, 0.02}, {1e5, 0.1}, {1e6, 0.35}, {1e7, 0.7}, {1e8, kAssumedMemoryPlateau}};

// Bytes per element of a NeuSight vec op and its class; false for an unknown op.
bool VecOp(const std::string& op, double* bytes_per_element, MemoryClass* memory_class) {
  static const std::map<std::string, std::pair<double, MemoryClass>> ops = {
      {"add", {12, MemoryClass::kElementwise}},     {"mul", {12, MemoryClass::kElementwise}},
      {"div", {12, MemoryClass::kElementwise}},     {"pow", {12, MemoryClass::kElementwise}},
      {"addu", {8, MemoryClass::kElementwise}},     {"mulu", {8, MemoryClass::kElementwise}},
      {"divu", {8, MemoryClass::kElementwise}},     {"powu", {8, MemoryClass::kElementwise}},
      {"relu", {8, MemoryClass::kElementwise}},     {"gelu", {8, MemoryClass::kElementwise}},
      {"tanh", {8, MemoryClass::kElementwise}},     {"ln", {8, MemoryClass::kNormalization}},
      {"softmax", {8, MemoryClass::kNormalization}}};
  const auto it = ops.find(op);
  if (it == ops.end()) return false;
  *bytes_per_element = it->second.first;
  *memory_class = it->second.second;
  return true;
}

}  // namespace

const char* MemoryClassName(MemoryClass c) {
  return c == MemoryClass::kElementwise ? "elementwise" : "normalization";
}

std::vector<MemorySweepGpu> MemorySweepGpus() {
  return {
      {"Tesla V100-PCIE-32GB", "Tesla V100 PCIe 32 GB: 900 GB/s HBM2 (datasheet)", 9e11},
      {"NVIDIA A100-PCIE-40GB", "A100 PCIe 40 GB: 1555 GB/s HBM2 (datasheet)", 1.555e12},
      {"NVIDIA A100 80GB PCIe", "A100 80 GB PCIe: 1935 GB/s HBM2e (datasheet); test split only",
       1.935e12},
      {"Tesla T4", "Tesla T4: 320 GB/s GDDR6 (datasheet)", 3.2e11},
      {"Tesla P100-PCIE-16GB", "Tesla P100 PCIe 16 GB: 732 GB/s HBM2 (datasheet)", 7.32e11},
      {"Tesla P4", "Tesla P4: 192 GB/s GDDR5 (datasheet)", 1.92e11},
      {"NVIDIA L4", "L4: 300 GB/s GDDR6 (datasheet); test split only", 3e11},
      // Last: FitMemoryPlateaus finds no NeuSight rows of it; its
      // normalization plateau is FitFirstHandNormalizationPlateau's.
      {"H200",
       "NVIDIA H200 SXM of this project's first-hand run (data/llm-gpu/memory_ops.csv): 4.8 "
       "TB/s HBM3e (datasheet)",
       4.8e12, true},
  };
}

namespace {

// The plateau statistics of one GPU and class from its kernels' (op,
// efficiency) in file order: median, its 95% interval, quartiles, per op.
MemoryPlateauFit PlateauOf(const std::string& gpu, MemoryClass c,
                           const std::vector<std::pair<std::string, double>>& kernels) {
  MemoryPlateauFit fit;
  fit.gpu = gpu;
  fit.memory_class = c;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_op;
  std::vector<std::string> op_order;
  for (const auto& [op, efficiency] : kernels) {
    all.push_back(efficiency);
    if (by_op.count(op) == 0) op_order.push_back(op);
    by_op[op].push_back(efficiency);
  }
  fit.kernels = static_cast<int>(all.size());
  fit.efficiency = Median(all);
  fit.q25 = Quantile(all, 0.25);
  fit.q75 = Quantile(all, 0.75);
  // Ranks of the 95% interval of the median (normal approximation to the
  // binomial): the order statistics n/2 -/+ 1.96 sqrt(n)/2, 1-based.
  std::sort(all.begin(), all.end());
  const double n = static_cast<double>(all.size());
  const double half_width = 1.96 * std::sqrt(n) / 2;
  const auto rank = [&](double r) { return all[static_cast<size_t>(std::clamp(r, 1.0, n)) - 1]; };
  fit.ci_low = rank(std::floor(n / 2 - half_width));
  fit.ci_high = rank(std::ceil(n / 2 + half_width + 1));
  for (const std::string& op : op_order) {
    fit.ops.push_back({op, static_cast<int>(by_op[op].size()), Median(by_op[op])});
  }
  return fit;
}

}  // namespace

std::vector<MemoryPlateauFit> FitMemoryPlateaus(const std::string& path,
                                                const std::vector<MemorySweepGpu>& gpus) {
  const CsvTable t = ReadCsvTable(path, {"gpu", "op", "dtype", "B", "H", "time_us"});
  // (gpu, class) -> (op, efficiency) of each kernel, in file order.
  std::map<std::pair<std::string, MemoryClass>, std::vector<std::pair<std::string, double>>> rows;
  for (const CsvTable::Row& row : t.rows) {
    const std::string& gpu_name = t.Get(row, "gpu");
    const auto gpu = std::find_if(gpus.begin(), gpus.end(),
                                  [&](const MemorySweepGpu& g) { return g.name == gpu_name; });
    if (gpu == gpus.end()) continue;
    const std::string& op = t.Get(row, "op");
    double per_element = 0;
    MemoryClass memory_class{};
    if (!VecOp(op, &per_element, &memory_class)) {
      throw DataError(t.source, row.line, "op", fmt::format("unknown op '{}'", op));
    }
    if (t.Get(row, "dtype") != "fp32") {
      throw DataError(t.source, row.line, "dtype",
                      fmt::format("expected fp32, got '{}'", t.Get(row, "dtype")));
    }
    const double bytes = per_element * t.Positive(row, "B") * t.Positive(row, "H");
    if (bytes < kPlateauMinBytes) {
      throw DataError(t.source, row.line, "B",
                      fmt::format("{:.3g} bytes moved, under the plateau's {:.3g}: its time "
                                  "would be mostly dispatch",
                                  bytes, kPlateauMinBytes));
    }
    const double time_s = t.Positive(row, "time_us") * 1e-6;
    rows[{gpu_name, memory_class}].emplace_back(
        op, bytes / (time_s * gpu->memory_bandwidth_bytes_per_s));
  }
  std::vector<MemoryPlateauFit> fits;
  for (const MemorySweepGpu& gpu : gpus) {
    for (MemoryClass c : {MemoryClass::kElementwise, MemoryClass::kNormalization}) {
      const auto it = rows.find({gpu.name, c});
      if (it == rows.end() || it->second.size() < static_cast<size_t>(kMinKernels)) continue;
      fits.push_back(PlateauOf(gpu.name, c, it->second));
    }
  }
  return fits;
}

MemoryPlateauFit FitFirstHandNormalizationPlateau(const std::string& path,
                                                  const MemorySweepGpu& gpu) {
  std::vector<std::pair<std::string, double>> kernels;
  for (const GpuMemoryOp& o : ReadGpuMemoryOps(path)) {
    if (!o.normalizes_rows) continue;
    kernels.emplace_back(o.op, o.bytes / (o.median_s * gpu.memory_bandwidth_bytes_per_s));
  }
  if (kernels.size() < static_cast<size_t>(kMinKernels)) {
    throw DataError(path, 0, "op",
                    fmt::format("{} LayerNorm, RMSNorm and softmax rows: a plateau needs {}",
                                kernels.size(), kMinKernels));
  }
  return PlateauOf(gpu.name, MemoryClass::kNormalization, kernels);
}

EfficiencyCurve MemoryCurveWithPlateau(double plateau) {
  FITSPEED_CHECK(plateau > 0 && plateau <= 1, "MemoryCurveWithPlateau needs 0 < plateau <= 1");
  EfficiencyCurve curve;
  for (const EfficiencyCurve::Point& p : kAssumedMemoryShape) {
    const double eff =
        std::stod(fmt::format("{:.4g}", p.efficiency * plateau / kAssumedMemoryPlateau));
    curve.points.push_back({p.size, std::min(1.0, eff)});
  }
  return curve;
}

std::vector<std::string> ApplyMemoryPlateaus(Device& device,
                                             const std::vector<MemoryPlateauFit>& fits,
                                             const std::vector<MemorySweepGpu>& gpus) {
  std::vector<std::string> set;
  for (const MemorySweepGpu& gpu : gpus) {
    const bool fitted = Names(device.memory_curves_from.fitted, gpu.name);
    const bool carried = Names(device.memory_curves_from.carried, gpu.name);
    if (!fitted && !carried) continue;
    for (const MemoryPlateauFit& fit : fits) {
      if (fit.gpu != gpu.name) continue;
      const bool normalization = fit.memory_class == MemoryClass::kNormalization;
      const char* field = normalization ? "efficiency.memory_normalization" : "efficiency.memory";
      EfficiencyCurve& curve =
          normalization ? device.normalization_memory_efficiency : device.memory_efficiency;
      curve = MemoryCurveWithPlateau(fit.efficiency);
      const bool first_hand = gpu.first_hand;
      std::string text = fmt::format(
          "{}: plateau {:.3g} of the datasheet bandwidth (95% CI {:.3g}-{:.3g}), the median "
          "of {} {} {} kernels {}, `fitspeed validate --kernels`); the shape below 100 MB is "
          "the catalog's assumed one (latency-bound small kernels), scaled to that plateau",
          fitted ? "fitted" : "carried", fit.efficiency, fit.ci_low, fit.ci_high, fit.kernels,
          gpu.name,
          first_hand      ? "LayerNorm, RMSNorm and softmax"
          : normalization ? "LayerNorm and softmax"
                          : "element-wise",
          first_hand ? "of this project's BF16 run, forward and backward, 134-403 MB each "
                       "(PyTorch 2.11; data/llm-gpu/memory_ops.csv"
                     : "moving >= 1 GB in NeuSight's FP32 sweeps (PyTorch 2.1; "
                       "data/kernels/neusight_vec_large.csv");
      if (carried) {
        text += fmt::format(
            "; carried from the {} at the same fraction of this device's bandwidth "
            "({:.4g} GB/s there, {:.4g} GB/s here)",
            gpu.name, gpu.memory_bandwidth_bytes_per_s / 1e9,
            device.memory_bandwidth_bytes_per_s / 1e9);
      }
      device.sources[field] = text;
      device.bases[field] = fitted ? "fitted" : "carried";
      set.push_back(field);
    }
  }
  return set;
}

std::vector<AllReduceMeasurement> ReadAllReduceTable(const std::string& path) {
  const CsvTable t = ReadCsvTable(
      path, {"gpu", "op", "precision", "size_floats", "n_gpus", "n_nodes", "time_us", "algorithm"});
  std::vector<AllReduceMeasurement> out;
  for (const CsvTable::Row& row : t.rows) {
    if (t.Get(row, "op") != "allreduce") {
      throw DataError(path, row.line, "op",
                      fmt::format("expected allreduce, got '{}'", t.Get(row, "op")));
    }
    if (t.Get(row, "precision") != "fp32") continue;
    AllReduceMeasurement m;
    m.gpu = t.Get(row, "gpu");
    m.bytes = 4 * static_cast<double>(t.PositiveInt(row, "size_floats"));
    const int64_t devices = t.PositiveInt(row, "n_gpus");
    if (devices < 2 || devices > 1 << 20) {
      throw DataError(
          path, row.line, "n_gpus",
          fmt::format("an all-reduce needs 2 or more GPUs (at most 2^20), got {}", devices));
    }
    m.devices = static_cast<int>(devices);
    if (!t.Get(row, "n_nodes").empty()) {
      const int64_t nodes = t.PositiveInt(row, "n_nodes");
      if (nodes > devices) {
        throw DataError(path, row.line, "n_nodes",
                        fmt::format("{} nodes for {} GPUs", nodes, devices));
      }
      m.nodes = static_cast<int>(nodes);
    }
    m.time_s = t.Positive(row, "time_us") * 1e-6;
    m.algorithm = t.Get(row, "algorithm");
    m.source = fmt::format("{}:{}", t.source, row.line);
    out.push_back(std::move(m));
  }
  if (out.empty()) throw DataError(path, 0, "precision", "no FP32 all-reduce in the file");
  return out;
}

std::vector<AllReduceCheck> CheckLinksOnAllReduce(
    const std::vector<AllReduceMeasurement>& measurements, const std::vector<Device>& given) {
  std::map<std::string, Device> devices;
  for (const Device& d : given) devices.emplace(d.name, d);
  std::vector<AllReduceCheck> checks;
  std::vector<std::vector<double>> errors;
  for (const AllReduceMeasurement& m : measurements) {
    const std::string name = CatalogDeviceOf(m.gpu);
    if (name.empty()) continue;
    if (devices.count(name) == 0) devices.emplace(name, LoadDevice(name));
    const Device& d = devices.at(name);
    auto check = std::find_if(checks.begin(), checks.end(), [&](const AllReduceCheck& c) {
      return c.gpu == m.gpu && c.devices == m.devices && c.nodes == m.nodes;
    });
    const DeviceLink* link = d.FindLink("devices");
    if (check == checks.end()) {
      AllReduceCheck c;
      c.gpu = m.gpu;
      c.device = d.name;
      c.devices = m.devices;
      c.nodes = m.nodes;
      if (link != nullptr) {
        c.link = link->name;
        c.link_bandwidth_bytes_per_s = link->bandwidth_bytes_per_s;
      }
      if (link == nullptr) {
        c.problem = "the catalog device has no link that connects devices";
      } else if (m.nodes > 1) {
        c.problem = fmt::format(
            "{} nodes: the catalog device has no network link (a links file gives one)", m.nodes);
      }
      checks.push_back(c);
      errors.emplace_back();
      check = checks.end() - 1;
    }
    if (m.bytes >= check->largest_bytes) {
      check->largest_bytes = m.bytes;
      check->measured_bus_bandwidth = 2.0 * (m.devices - 1) / m.devices * m.bytes / m.time_s;
    }
    if (!check->problem.empty()) continue;
    ++check->measurements;
    const double modeled = RingAllReduceTime(m.bytes, m.devices, *link);
    errors[static_cast<size_t>(check - checks.begin())].push_back(modeled / m.time_s - 1);
  }
  for (size_t i = 0; i < checks.size(); ++i) {
    if (errors[i].empty()) continue;
    std::vector<double> abs;
    for (double e : errors[i]) abs.push_back(std::abs(e));
    checks[i].median_abs_error = Median(abs);
    checks[i].median_signed_error = Median(errors[i]);
  }
  return checks;
}

EfficiencyCurve CarryCurve(const KernelCurveFit& fit, double from_peak, double to_peak) {
  FITSPEED_CHECK(from_peak > 0 && to_peak > 0, "CarryCurve needs peaks > 0");
  KernelCurveFit carried = fit;
  carried.f_half = fit.f_half * to_peak / from_peak;
  return carried.Curve();
}

}  // namespace fitspeed
