// Reading speed of the MLPerf ":::MLLOG" reader: ParseSamples (format mllog)
// over a ~100k-line log built from the real lines of the NVIDIA DGX A100 log in
// tests/data/mllog, its 4-epoch block repeated with the times and epoch
// numbers moved on. Reports bytes/s; the goal is over 50 MB/s.
//
//   read_mllog_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_data.h"
#include "fitspeed/io/input.h"

namespace {

const std::string& Log() {
  static const std::string text = fitspeed::bench::BuildMllogLog(100000);
  return text;
}
void BM_ReadMllog(benchmark::State& state) {
  const std::string& text = Log();
  fitspeed::ReadOptions options;
  options.format = fitspeed::Format::kMllog;
  size_t samples = 0;
  for (auto _ : state) {
    const std::vector<fitspeed::Sample> read =
        fitspeed::ParseSamples(text, "bench.log", {}, options);
    samples = read.size();
    benchmark::DoNotOptimize(read.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  state.counters["bytes"] = static_cast<double>(text.size());
  state.counters["samples"] = static_cast<double>(samples);
}
BENCHMARK(BM_ReadMllog)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
