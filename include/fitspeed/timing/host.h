// The host a training step runs on: CPU, the instruction set oneDNN dispatches
// to, threads, library versions, build and the FP32 FMA peak. A sweep reports
// it as its `context` block, as google/benchmark prints its context before the
// results.
#ifndef FITSPEED_TIMING_HOST_H_
#define FITSPEED_TIMING_HOST_H_

#include <string>

namespace fitspeed {

struct HostContext {
  std::string cpu_model;        // /proc/cpuinfo "model name" ("AMD EPYC 7B13")
  int logical_cpus = 0;         // processors available to this process
  int threads = 0;              // threads the kernels run on
  std::string isa;              // oneDNN's effective ISA: "avx2", "avx512_core_amx", ...
  bool bf16_supported = false;  // oneDNN runs BF16 primitives on this CPU (AVX-512 or newer)
  bool amx = false;             // the ISA includes AMX tiles (BF16 matrix units)
  std::string onednn_version;   // "2.6.3"
  std::string onednn_runtime;   // CPU threading runtime oneDNN was built with ("OpenMP")
  std::string build_type;       // how fitspeed was compiled ("optimized, NDEBUG")
  std::string compiler;         // "GCC 12.2.0"
  // FP32 fused multiply-add peak over `threads` threads, measured with a
  // register-only FMA loop (2 FLOPs per lane per FMA), in GFLOP/s
  // (MeasureFmaPeakGflops).
  double fp32_peak_gflops = 0;
  double memory_total_bytes = 0;      // /proc/meminfo MemTotal
  double memory_available_bytes = 0;  // /proc/meminfo MemAvailable

  // Several lines "key: value" for text reports.
  std::string ToString() const;
};

// The host as seen with `threads` kernel threads (>= 1); measures the FMA peak
// the first time for each thread count (~0.2 s) and caches it.
HostContext DescribeHost(int threads);

// FP32 FMA peak in GFLOP/s over `threads` threads running at once: each runs
// independent vector FMA chains (AVX-512 when the CPU has it, else AVX2+FMA,
// else SSE multiply+add) for about `duration_s` and is timed by its own CPU
// time, so that time taken by other processes on a shared machine does not
// lower it; the sum over the threads, best of five runs.
double MeasureFmaPeakGflops(int threads, double duration_s = 0.03);

// BF16 dot-product peak in GFLOP/s over `threads` threads, measured as
// MeasureFmaPeakGflops measures FP32, with AVX512-BF16 vdpbf16ps chains (64
// FLOPs per instruction); 0 when the CPU lacks AVX512-BF16. AMX tiles are not
// measured by it: on AMX CPUs oneDNN's BF16 GEMMs run faster than this.
double MeasureBf16DotPeakGflops(int threads, double duration_s = 0.03);

// Logical CPUs available to this process (the default thread count).
int AvailableCpus();

// CPUs left idle by every process on the machine, measured over `duration_s`
// from /proc/stat (idle + iowait jiffies of all CPUs; e.g. 1.6 on a 2-CPU
// machine where another process keeps 0.4 of a CPU busy); -1 when unknown.
double IdleCpus(double duration_s = 0.25);

// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
double AvailableMemoryBytes();

}  // namespace fitspeed

#endif  // FITSPEED_TIMING_HOST_H_
