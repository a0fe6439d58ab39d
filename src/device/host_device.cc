// `host`: this CPU probed with the timing layer (docs/devices.md, "host").
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/timing/host.h"
#include "fitspeed/timing/sweep.h"

namespace fitspeed {

namespace {

// A dense layer of `features` inputs and units at `batch` run by the oneDNN
// executor in `precision`: FLOPs of its forward GEMM and the rate it reached
// (FLOP/s).
EfficiencyCurve::Point GemmRate(int64_t features, int64_t batch, int threads, Precision precision) {
  Network net("host-probe-dense", Shape::Vector(features));
  DenseAttrs dense;
  dense.units = features;
  net.SoftmaxCrossEntropy(net.Dense("input", dense, "dense"));
  net.Finalize();
  SweepOptions options;
  options.threads = threads;
  options.precision = precision;
  options.warmup_steps = 1;
  options.warmup_time_s = 0.01;
  options.min_repeats = 3;
  options.min_time_s = 0.05;
  const BatchMeasurement m = MeasureBatch(net, batch, options);
  const LayerTiming& layer = m.layers.at(1);
  const double seconds = layer.seconds[static_cast<size_t>(Pass::kForward)];
  const double flops = layer.flops[static_cast<size_t>(Pass::kForward)];
  return {flops, seconds > 0 ? flops / seconds : 0.0};
}

// GEMMs of 0.5 MFLOP, 34 MFLOP and 1.1 GFLOP (2*batch*features^2) in
// `precision`: their FLOPs and rates.
std::vector<EfficiencyCurve::Point> GemmRates(int threads, Precision precision) {
  std::vector<EfficiencyCurve::Point> rates;
  for (const auto& [features, batch] :
       std::vector<std::pair<int64_t, int64_t>>{{64, 64}, {256, 256}, {1024, 512}}) {
    const EfficiencyCurve::Point p = GemmRate(features, batch, threads, precision);
    if (rates.empty() || p.size > rates.back().size) rates.push_back(p);
  }
  return rates;
}

// The rates as fractions of `peak_flops_per_s`, in [1e-3, 1].
EfficiencyCurve Efficiencies(const std::vector<EfficiencyCurve::Point>& rates,
                             double peak_flops_per_s) {
  EfficiencyCurve curve;
  for (const EfficiencyCurve::Point& r : rates) {
    curve.points.push_back({r.size, std::clamp(r.efficiency / peak_flops_per_s, 1e-3, 1.0)});
  }
  return curve;
}

Device Probe(int threads) {
  Device d;
  d.name = "host";
  d.kind = "cpu";
  d.origin = "probe:host";
  const HostContext context = DescribeHost(threads);
  d.description =
      fmt::format("this CPU: {}, {} thread{}, oneDNN ISA {}{} (probed)", context.cpu_model, threads,
                  threads == 1 ? "" : "s", context.isa, context.bf16_supported ? " with BF16" : "");
  d.fp32_flops_per_s = context.fp32_peak_gflops * 1e9;
  // 3 arrays of 32 MiB: well past the last-level caches of current CPUs.
  d.memory_bandwidth_bytes_per_s = MeasureTriadBandwidth(32.0 * (1 << 20), threads);
  d.memory_capacity_bytes = AvailableMemoryBytes();
  if (!(d.memory_capacity_bytes > 0)) d.memory_capacity_bytes = context.memory_total_bytes;
  d.compute_efficiency = Efficiencies(GemmRates(threads, Precision::kFp32), d.fp32_flops_per_s);
  // BF16 matrix units, where oneDNN runs BF16: the peak of a register-only
  // AVX512-BF16 dot-product loop (as the FP32 peak is an FMA loop's), or the
  // best rate of the same GEMMs in BF16 where that is higher (AMX tiles, which
  // no loop here measures: then a lower bound on the peak).
  if (context.bf16_supported) {
    const std::vector<EfficiencyCurve::Point> rates = GemmRates(threads, Precision::kMixed);
    double gemm = 0;
    for (const EfficiencyCurve::Point& r : rates) gemm = std::max(gemm, r.efficiency);
    const double dot = MeasureBf16DotPeakGflops(threads) * 1e9;
    const std::string on = threads == 1 ? "1 thread" : fmt::format("{} threads", threads);
    d.tensor16_flops_per_s = std::max(gemm, dot);
    if (d.tensor16_flops_per_s > 0) {
      d.tensor16_type = "bf16";
      d.tensor_efficiency = Efficiencies(rates, d.tensor16_flops_per_s);
      d.sources["peak_flops_per_s.tensor16"] =
          dot >= gemm ? fmt::format("measured: AVX512-BF16 dot-product loop (vdpbf16ps), {}", on)
                      : fmt::format(
                            "measured: best oneDNN BF16 GEMM on {} (ISA {}), above the AVX512-BF16 "
                            "dot-product loop's {} TFLOPS; a lower bound on the peak",
                            on, context.isa, dot > 0 ? fmt::format("{:.3g}", dot / 1e12) : "0");
    }
  }
  // The triad bandwidth is what large kernels reach: efficiency 1 by definition.
  d.memory_efficiency.points = {{1e6, 1.0}};
  // oneDNN primitive execution costs microseconds; the executor runs in-process.
  d.kernel_launch_s = 2e-6;
  d.step_host_s = 0;
  return d;
}

}  // namespace

double MeasureTriadBandwidth(double bytes_per_array, int threads, int repeats) {
  if (!(bytes_per_array >= 8)) {
    throw UsageError(fmt::format("bytes_per_array = {}: must be >= 8", bytes_per_array));
  }
  if (threads < 1) throw UsageError(fmt::format("threads = {}: must be >= 1", threads));
  if (repeats < 1) throw UsageError(fmt::format("repeats = {}: must be >= 1", repeats));
  const auto n = static_cast<int64_t>(bytes_per_array / sizeof(double));
  std::vector<double> a(static_cast<size_t>(n)), b(static_cast<size_t>(n)),
      c(static_cast<size_t>(n));
  // Filled (and so paged in) on the threads that use them.
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[static_cast<size_t>(i)] = 0;
    b[static_cast<size_t>(i)] = 1.0 + static_cast<double>(i % 7);
    c[static_cast<size_t>(i)] = 2.0 - static_cast<double>(i % 5);
  }
  const double scalar = 3.0;
  double best_s = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<size_t>(i);
      a[k] = b[k] + scalar * c[k];
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r == 0 || seconds < best_s) best_s = seconds;
  }
  FITSPEED_CHECK(a[0] == b[0] + scalar * c[0], "the triad ran");
  // STREAM's triad counts 3 arrays of traffic (McCalpin, STREAM benchmark).
  return 3.0 * static_cast<double>(n) * sizeof(double) / std::max(best_s, 1e-9);
}

Device ProbeHostDevice(int threads) {
  const int available = AvailableCpus();
  if (threads < 0 || threads > available) {
    throw UsageError(fmt::format("host probe threads = {}: must be in [0, {}] (0: every CPU)",
                                 threads, available));
  }
  if (threads == 0) threads = available;
  // Measured once per thread count and process (about a second each).
  static std::mutex mutex;
  static std::map<int, Device> probed;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = probed.find(threads);
  if (it == probed.end()) it = probed.emplace(threads, Probe(threads)).first;
  return it->second;
}

}  // namespace fitspeed
