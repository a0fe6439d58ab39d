// Reading speed of the MLPerf ":::MLLOG" reader: ParseSamples (format mllog)
// over a ~100k-line log built from the real lines of the NVIDIA DGX A100 log in
// tests/data/mllog, its 4-epoch block repeated with the times and epoch
// numbers moved on. Reports bytes/s; the goal is over 50 MB/s.
//
//   read_mllog_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench_data.h"
#include "fitspeed/io/input.h"

namespace {

constexpr int kTargetLines = 100000;

std::string ReadLog() {
  return fitspeed::bench::ReadTestData("mllog/NVIDIA_dgxa100_ngc20.06_mxnet_resnet_result_0.txt");
}

// Replaces the integer after `field` (e.g. "\"time_ms\": ") in `line` with `value`.
std::string SetNumber(std::string line, const std::string& field, long long value) {
  const size_t at = line.find(field);
  if (at == std::string::npos) return line;
  const size_t begin = at + field.size();
  size_t end = begin;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  return line.replace(begin, end - begin, std::to_string(value));
}

long long NumberAfter(const std::string& line, const std::string& field) {
  const size_t at = line.find(field);
  return at == std::string::npos ? -1 : std::atoll(line.c_str() + at + field.size());
}

// The MLLOG lines before the second block (header, epoch 1) once, then the
// second block (epochs 2-5 and their evaluation) again and again.
std::string BuildLog() {
  std::istringstream in(ReadLog());
  std::vector<std::string> head, block;
  std::string line;
  int blocks_seen = 0;
  while (std::getline(in, line)) {
    if (line.compare(0, 8, ":::MLLOG") != 0) continue;
    if (line.find("\"key\": \"block_start\"") != std::string::npos) ++blocks_seen;
    if (blocks_seen < 2) {
      head.push_back(line);
    } else if (blocks_seen == 2) {
      block.push_back(line);
      if (line.find("\"key\": \"block_stop\"") != std::string::npos) ++blocks_seen;
    }
  }
  const long long t0 = NumberAfter(block.front(), "\"time_ms\": ");
  const long long period_ms = NumberAfter(block.back(), "\"time_ms\": ") - t0;
  const long long first_epoch = NumberAfter(block.front(), "\"first_epoch_num\": ");
  const long long epochs_per_block = NumberAfter(block.front(), "\"epoch_count\": ");

  std::string text;
  int lines = 0;
  for (const std::string& h : head) {
    text += h + '\n';
    ++lines;
  }
  for (long long b = 0; lines < kTargetLines; ++b) {
    for (const std::string& l : block) {
      std::string out =
          SetNumber(l, "\"time_ms\": ", NumberAfter(l, "\"time_ms\": ") + b * period_ms);
      const long long epoch = NumberAfter(l, "\"epoch_num\": ");
      if (epoch >= 0) out = SetNumber(out, "\"epoch_num\": ", epoch + b * epochs_per_block);
      if (NumberAfter(l, "\"first_epoch_num\": ") >= 0) {
        out = SetNumber(out, "\"first_epoch_num\": ", first_epoch + b * epochs_per_block);
      }
      text += out + '\n';
      ++lines;
    }
  }
  return text;
}

const std::string& Log() {
  static const std::string text = BuildLog();
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
