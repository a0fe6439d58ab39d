#include "fitspeed/timing/host.h"

#include <fmt/format.h>
#include <immintrin.h>
#include <omp.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "fitspeed/core/error.h"
#include "io/text.h"
#include "timing/executor.h"

namespace fitspeed {

namespace {

// Independent FMA chains per thread: enough to cover the FMA latency (4-5
// cycles) on two FMA ports, few enough to stay in registers.
constexpr int kChains = 12;

// The sum of every lane of the kChains accumulators.
__attribute__((target("avx512f"))) float SumChains(const __m512* acc) {
  __m512 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm512_add_ps(sum, acc[k]);
  // Not _mm512_reduce_add_ps: GCC 12 warns inside it (-Wuninitialized).
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

// Each runs `iterations` rounds of kChains vector FMAs and returns a value that
// depends on all of them (so that nothing is optimized away).
__attribute__((target("avx512f"))) float FmaLoopAvx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.001f * k);
  const __m512 mul = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], mul, add);
  }
  return SumChains(acc);
}

__attribute__((target("avx2,fma"))) float FmaLoopAvx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.001f * k);
  const __m256 mul = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], mul, add);
  }
  __m256 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm256_add_ps(sum, acc[k]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

// SSE multiply then add (no FMA): 4 lanes, 2 FLOPs per lane and round.
float MulAddLoopSse(int64_t iterations) {
  __m128 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm_set1_ps(1.0f + 0.001f * k);
  const __m128 mul = _mm_set1_ps(0.9999999f), add = _mm_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm_add_ps(_mm_mul_ps(acc[k], mul), add);
  }
  __m128 sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = _mm_add_ps(sum, acc[k]);
  float lanes[4];
  _mm_storeu_ps(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// AVX512-BF16 dot products (vdpbf16ps): each adds the products of 16 pairs of
// bf16 pairs into 16 floats, 64 FLOPs.
__attribute__((target("avx512f,avx512bf16"))) float DotLoopAvx512Bf16(int64_t iterations) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.001f * k);
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(-1e-3f));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
  for (int64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
  }
  return SumChains(acc);
}

struct FmaKernel {
  float (*loop)(int64_t);
  double flops_per_instruction;  // per vector instruction of one chain
};

FmaKernel BestFmaKernel() {
  __builtin_cpu_init();
  // 2 FLOPs per FP32 lane per FMA.
  if (__builtin_cpu_supports("avx512f")) return {FmaLoopAvx512, 2.0 * 16};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {FmaLoopAvx2, 2.0 * 8};
  }
  return {MulAddLoopSse, 2.0 * 4};
}

// CPU seconds the calling thread has run (not counting time it waited for a CPU).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// `threads` threads each run `iterations` rounds at once; returns the sum over
// the threads of rounds per CPU second of each, so that time a thread spends
// descheduled by other work on a shared machine does not count.
double FmaRoundsPerSecond(const FmaKernel& kernel, int threads, int64_t iterations) {
  volatile float sink = 0;
  double rate = 0;
#pragma omp parallel num_threads(threads)
  {
    const double start = ThreadCpuSeconds();
    const float v = kernel.loop(iterations);
    const double seconds = std::max(ThreadCpuSeconds() - start, 1e-9);
#pragma omp critical
    {
      sink = sink + v;
      rate += static_cast<double>(iterations) / seconds;
    }
  }
  (void)sink;
  return rate;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return std::string(io::Trim(line.substr(colon + 1)));
    }
  }
  return "unknown";
}

// A field of /proc/meminfo ("MemAvailable:   123456 kB") in bytes; 0 if absent.
double MemInfoBytes(const std::string& key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    double kib = 0;
    if (fields >> kib) return kib * 1024.0;
  }
  return 0;
}

std::string BuildType() {
  std::string type;
#ifdef __OPTIMIZE__
  type = "optimized";
#else
  type = "unoptimized";
#endif
#ifdef NDEBUG
  type += ", NDEBUG";
#else
  type += ", assertions on";
#endif
#if defined(__SANITIZE_ADDRESS__)
  type += ", AddressSanitizer";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  type += ", AddressSanitizer";
#endif
#endif
  return type;
}

std::string Compiler() {
#if defined(__clang__)
  return fmt::format("Clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("GCC {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

// GFLOP/s of `kernel` over `threads` threads for about duration_s, best of five.
double MeasurePeakGflops(const FmaKernel& kernel, int threads, double duration_s) {
  if (threads < 1) throw UsageError(fmt::format("threads = {}: must be >= 1", threads));
  // Calibrate the rounds to about duration_s per thread, then keep the best of five.
  int64_t iterations = 1 << 16;
  double seconds = iterations * threads / FmaRoundsPerSecond(kernel, threads, iterations);
  while (seconds < duration_s / 4 && iterations < (int64_t{1} << 40)) {
    iterations *= 4;
    seconds = iterations * threads / FmaRoundsPerSecond(kernel, threads, iterations);
  }
  iterations = std::max<int64_t>(1, static_cast<int64_t>(iterations * duration_s / seconds));
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const double flops_per_round = kernel.flops_per_instruction * kChains;
    best = std::max(best, flops_per_round * FmaRoundsPerSecond(kernel, threads, iterations) / 1e9);
  }
  return best;
}

}  // namespace

double MeasureFmaPeakGflops(int threads, double duration_s) {
  return MeasurePeakGflops(BestFmaKernel(), threads, duration_s);
}

double MeasureBf16DotPeakGflops(int threads, double duration_s) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) {
    if (threads < 1) throw UsageError(fmt::format("threads = {}: must be >= 1", threads));
    return 0;
  }
  return MeasurePeakGflops({DotLoopAvx512Bf16, 64.0}, threads, duration_s);
}

int AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

double AvailableMemoryBytes() { return MemInfoBytes("MemAvailable"); }

namespace {

// The aggregate "cpu" line of /proc/stat: idle (idle + iowait) and total
// jiffies over all CPUs (proc(5)); false when it cannot be read.
bool ReadCpuJiffies(double& idle, double& total) {
  std::ifstream stat("/proc/stat");
  std::string label;
  if (!(stat >> label) || label != "cpu") return false;
  // user nice system idle iowait irq softirq steal (guest time is inside user).
  double fields[8] = {};
  for (double& f : fields) {
    if (!(stat >> f)) return false;
  }
  idle = fields[3] + fields[4];
  total = 0;
  for (double f : fields) total += f;
  return true;
}

}  // namespace

double IdleCpus(double duration_s) {
  double idle0 = 0, total0 = 0, idle1 = 0, total1 = 0;
  if (!ReadCpuJiffies(idle0, total0)) return -1;
  std::this_thread::sleep_for(std::chrono::duration<double>(duration_s));
  if (!ReadCpuJiffies(idle1, total1) || total1 <= total0) return -1;
  // Jiffies of all CPUs together: the idle share times the CPU count.
  const double cpus = static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
  return (idle1 - idle0) / (total1 - total0) * cpus;
}

HostContext DescribeHost(int threads) {
  if (threads < 1) throw UsageError(fmt::format("threads = {}: must be >= 1", threads));
  static std::mutex mutex;
  static std::map<int, double> peaks;
  HostContext c;
  c.cpu_model = CpuModel();
  c.logical_cpus = AvailableCpus();
  c.threads = threads;
  c.isa = timing::OnednnIsa();
  c.bf16_supported = timing::OnednnBf16Supported();
  c.amx = c.isa.find("amx") != std::string::npos;
  c.onednn_version = timing::OnednnVersion();
  c.onednn_runtime = timing::OnednnRuntime();
  c.build_type = BuildType();
  c.compiler = Compiler();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = peaks.find(threads);
    if (it == peaks.end()) it = peaks.emplace(threads, MeasureFmaPeakGflops(threads)).first;
    c.fp32_peak_gflops = it->second;
  }
  c.memory_total_bytes = MemInfoBytes("MemTotal");
  c.memory_available_bytes = AvailableMemoryBytes();
  return c;
}

std::string HostContext::ToString() const {
  return fmt::format(
      "cpu: {} ({} logical CPUs)\n"
      "threads: {}\n"
      "isa: {} (oneDNN effective ISA; bf16 {}{})\n"
      "onednn: {} ({})\n"
      "fp32 fma peak: {:.1f} GFLOPS over {} threads (measured)\n"
      "memory: {:.1f} GiB available of {:.1f} GiB\n"
      "build: {}, {}\n",
      cpu_model, logical_cpus, threads, isa, bf16_supported ? "supported" : "not supported",
      amx ? ", AMX" : "", onednn_version, onednn_runtime, fp32_peak_gflops, threads,
      memory_available_bytes / (1u << 30), memory_total_bytes / (1u << 30), build_type, compiler);
}

}  // namespace fitspeed
