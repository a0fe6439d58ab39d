// Reading speed and memory of every log reader (issues 12 and 31): ParseSamples
// with the format named, over a ~100k-line text held in memory, built from the
// real logs copied to tests/data (logs-wild, mllog, measured, nist). Line logs
// repeat the whole file (each copy reads as a new run, as concatenated logs of
// restarts do); tables keep their header once and repeat their rows;
// trainer_state.json repeats its log_history entries with the steps moved on.
// Warnings are counted, not printed. The MLPerf MLLOG reader (the log of
// read_mllog_bench) runs in the same process as the reference: the summary
// printed at the end gives each reader's MB/s, its ratio to MLLOG's, and the
// heap it used per sample read, counted by the global operator new/delete of
// this program: "peak" is the most the read held at once above what was
// allocated before it (the text itself is the caller's and not counted),
// "held" what the returned samples still hold. The goals (issue 31): at least
// 100 MB/s and under 200 bytes per sample.
//
//   read_logs_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench_data.h"
#include "fitspeed/io/input.h"

namespace {

// Heap in use (malloc_usable_size of every live block) and its peak, counted by
// the replaced global operator new and delete below.
size_t heap_in_use = 0;
size_t heap_peak = 0;

void* Allocate(size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  heap_in_use += malloc_usable_size(p);
  heap_peak = std::max(heap_peak, heap_in_use);
  return p;
}

void Free(void* p) {
  if (p == nullptr) return;
  heap_in_use -= malloc_usable_size(p);
  std::free(p);
}

}  // namespace

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { Free(p); }
void operator delete[](void* p) noexcept { Free(p); }
void operator delete(void* p, size_t) noexcept { Free(p); }
void operator delete[](void* p, size_t) noexcept { Free(p); }

namespace {

constexpr int kTargetLines = 100000;

std::string ReadData(const std::string& name) { return fitspeed::bench::ReadTestData(name); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line + '\n');
  return lines;
}

// The first `header` lines once, then the rest again and again until the text
// has kTargetLines lines.
std::string Repeat(const std::string& text, size_t header) {
  const std::vector<std::string> lines = Lines(text);
  std::string out;
  size_t count = 0;
  for (size_t i = 0; i < std::min(header, lines.size()); ++i, ++count) out += lines[i];
  while (count < static_cast<size_t>(kTargetLines)) {
    for (size_t i = header; i < lines.size(); ++i, ++count) out += lines[i];
  }
  return out;
}

// trainer_state.json with its per-step log_history entries repeated, steps and
// epochs moved on by the last entry's, and the end-of-training summary (the
// entry with train_runtime) once at the end, pretty-printed as the Trainer
// writes it (indent 2).
std::string RepeatTrainerState(const std::string& text) {
  nlohmann::json state = nlohmann::json::parse(text);
  nlohmann::json steps = nlohmann::json::array(), summary = nlohmann::json::array();
  for (const nlohmann::json& entry : state["log_history"]) {
    (entry.contains("train_runtime") ? summary : steps).push_back(entry);
  }
  const double last_step = steps.back().value("step", 0.0);
  const double last_epoch = steps.back().value("epoch", 0.0);
  nlohmann::json repeated = nlohmann::json::array();
  for (int copy = 0;; ++copy) {
    for (nlohmann::json entry : steps) {
      if (entry.contains("step")) entry["step"] = entry["step"].get<double>() + copy * last_step;
      if (entry.contains("epoch")) {
        entry["epoch"] = entry["epoch"].get<double>() + copy * last_epoch;
      }
      repeated.push_back(entry);
    }
    nlohmann::json history = repeated;
    for (nlohmann::json entry : summary) {
      entry["step"] = (copy + 1) * last_step;
      entry["train_runtime"] = entry["train_runtime"].get<double>() * (copy + 1);  // same rates
      history.push_back(entry);
    }
    state["log_history"] = history;
    state["global_step"] = (copy + 1) * last_step;
    state["max_steps"] = (copy + 1) * last_step;
    const std::string out = state.dump(2);
    if (std::count(out.begin(), out.end(), '\n') >= kTargetLines) return out;
  }
}

// A W&B run history (no real one in logs-wild has a time column): one row per
// wandb.log call, 0.4 s apart, as run.history().to_csv() writes it.
std::string WandbHistory() {
  std::string out = ",_step,_runtime,_timestamp,train/loss,lr\n";
  for (int i = 0; i < kTargetLines; ++i) {
    out += std::to_string(i) + "," + std::to_string(i) + "," + std::to_string(12.5 + 0.4 * i) +
           "," + std::to_string(1.7e9 + 12.5 + 0.4 * i) + ",2.5,0.0006\n";
  }
  return out;
}

constexpr char kMegatron[] =
    "logs-wild/megatron-nemo/"
    "microsoft-Megatron-DeepSpeed_examples_random_ltd_gpt3-0.125B-baseline.excerpt.log";
// Keras' CSVLogger rows (Aditya24jar's training.log, which has no time column)
// with an `epoch_time` column as a timing callback adds it, keys sorted by
// name as CSVLogger writes them; epochs counted on from 0.
std::string KerasCsvWithEpochTimes() {
  const std::vector<std::string> rows = Lines(
      ReadData("logs-wild/keras-csvlogger/Aditya24jar-Emotion-Detection-Resnet50_training.log"));
  std::string out = "epoch,accuracy,epoch_time,loss,val_accuracy,val_loss\n";
  for (int epoch = 0; epoch < kTargetLines - 1; ++epoch) {
    const std::string& row = rows[1 + epoch % (rows.size() - 1)];
    const size_t comma = row.find(',');
    const size_t second = row.find(',', comma + 1);
    out += fmt::format("{},{},{:.3f}{}", epoch, row.substr(comma + 1, second - comma - 1),
                       470 + 0.25 * (epoch % 40), row.substr(second));
  }
  return out;
}

// A long Megatron-DeepSpeed run as bench/make_megatron_log.py writes it (the
// log of the end-to-end timing): the real log's arguments dump, then only
// iteration lines in its layout, one every 10 iterations.
std::string MegatronIterations() {
  const std::vector<std::string> lines = Lines(ReadData(kMegatron));
  std::string out;
  for (const std::string& line : lines) {
    out += line;
    if (line.find("end of arguments") != std::string::npos) break;
  }
  for (long k = 1; k <= kTargetLines; ++k) {
    const long it = 10 * k;
    out += fmt::format(
        " iteration {:>8d}/  171661 | consumed samples: {:>12d} | consumed tokens: {:>12d} | "
        "elapsed time per iteration (ms): {:.1f} | learning rate: {:.3E} | global batch size:   "
        "256 |reserve_length:   256 | lm loss: {:.6E} | loss scale: 2048.0 | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |\n",
        it, it * 256, it * 256 * 2048, 484.7 + 3.0 * std::sin(k / 7.0),
        static_cast<double>(std::min(it, 3000L)) * 9.339e-09, 10.78 * std::exp(-k / 50000.0) + 2.0);
  }
  return out;
}

// A hand-written epoch list in its two-column form ("2 50.2").
std::string EpochList() {
  std::string out = "# epoch, seconds\n";
  for (int epoch = 1; epoch < kTargetLines; ++epoch) {
    out += fmt::format("{} {:.1f}\n", epoch, 50 + 0.1 * (epoch % 17));
  }
  return out;
}

// NIST's Misra1d.dat with its 14 observations repeated to ~100k data lines and
// the header's "Data (lines 61 to N)" range moved to match.
std::string NistRepeated() {
  const std::vector<std::string> lines = Lines(ReadData("nist/Misra1d.dat"));
  std::string out;
  const size_t data_begin = 60;  // 0-based index of line 61
  const size_t last = data_begin + kTargetLines - 61;
  for (size_t i = 0; i < data_begin; ++i) {
    const size_t range = lines[i].find("(lines 61 to 74)");
    out += range == std::string::npos
               ? lines[i]
               : lines[i].substr(0, range) + fmt::format("(lines 61 to {})\n", last + 1);
  }
  for (size_t i = data_begin; i <= last; ++i) {
    out += lines[data_begin + (i - data_begin) % (lines.size() - data_begin)];
  }
  return out;
}

// An event file is records, not lines: the file again and again (each copy
// reads as a restarted run) up to kTargetLines records.
std::string RepeatRecords(const std::string& bytes, size_t records_in_file) {
  std::string out;
  for (size_t records = 0; records < static_cast<size_t>(kTargetLines);
       records += records_in_file) {
    out += bytes;
  }
  return out;
}

fitspeed::Attributes Batch(double batch, double samples_per_epoch = 0) {
  fitspeed::Attributes a;
  a.batch = batch;
  if (samples_per_epoch > 0) a.samples_per_epoch = samples_per_epoch;
  return a;
}

struct Case {
  const char* name;
  fitspeed::Format format;
  std::string (*build)();  // the ~100k-line text
  fitspeed::Attributes attributes;
  const char* tag = "";  // TensorBoard: the scalar read and what it counts
  const char* tag_unit = "";
};

// Line logs: the whole file again and again.
template <const char* kFile>
std::string RepeatFile() {
  return Repeat(ReadData(kFile), 0);
}
// Tables: the header once, the rows again and again.
template <const char* kFile>
std::string RepeatRows() {
  return Repeat(ReadData(kFile), 1);
}

constexpr char kDeepspeed[] =
    "logs-wild/deepspeed/"
    "DeepSpeedExamples_DeepSpeed-Chat_step1_opt-1.3b-globalBatchSize128.excerpt.log";
constexpr char kNanogpt[] =
    "logs-wild/nanogpt-torchtitan/torchtitan_autoresearch-may19-qwen3-14b_run214_run.log";
constexpr char kLightning[] =
    "logs-wild/lightning-csvlogger/0Xero7-slm_training_lightning_logs_version_0_metrics.csv";
constexpr char kHf[] =
    "logs-wild/hf-trainer-console/saforem2-ezpz_docs_examples_hf-trainer_index.md";
constexpr char kKeras[] =
    "logs-wild/keras/"
    "ttukei-Twitter-language-models-about-Ukraine_TCSS456_NLP_FinalProject_ReadMe.txt";
constexpr char kTimm[] = "logs-wild/timm/fabfish-Monarch-README_utils_mlp.log";
constexpr char kTfcnn[] =
    "logs-wild/tf-cnn-benchmarks/"
    "lambda-tensorflow-benchmark_7742-A100-SXM4-40GB-TF2.3-XLA_real-fp16-8gpu_resnet50-448.log";
constexpr char kDllogger[] = "logs-wild/dllogger/mlperf-v3.0_xFusion_2288H_V7x6xL4_rnnt_nvlog.json";
constexpr char kCsv[] = "measured/pollux_t4_single_node.csv";
// 7967 records (tests/io/tensorboard_reader_test.cc).
constexpr char kTensorboard[] =
    "logs-wild/tensorboard/"
    "mlperf-v3.0_xFusion_2288H_V7x6xL4_rnnt_train_events.out.tfevents.1683859779.mlperf1.328.0";
constexpr size_t kTensorboardRecords = 7967;

const std::vector<Case>& Cases() {
  using fitspeed::Format;
  static const std::vector<Case> cases = {
      {"mllog (reference)",
       Format::kMllog,
       [] { return fitspeed::bench::BuildMllogLog(kTargetLines); },
       {}},
      {"megatron", Format::kMegatron, RepeatFile<kMegatron>, {}},
      {"megatron (iteration lines)", Format::kMegatron, MegatronIterations, {}},
      {"deepspeed", Format::kDeepspeed, RepeatFile<kDeepspeed>, Batch(128)},
      {"nanogpt (torchtitan)", Format::kNanogpt, RepeatFile<kNanogpt>, {}},
      {"lightning", Format::kLightning, RepeatRows<kLightning>, Batch(32)},
      {"wandb (synthetic history)", Format::kWandb, WandbHistory, Batch(12)},
      // RNN-T's batch of 768.
      {"tensorboard", Format::kTensorboard,
       [] { return RepeatRecords(ReadData(kTensorboard), kTensorboardRecords); }, Batch(768),
       "took", "s/interval"},
      {"hf (console in Markdown)", Format::kHf, RepeatFile<kHf>, {}},
      {"hf-state",
       Format::kHfState,
       [] {
         return RepeatTrainerState(
             ReadData("logs-wild/hf-trainer-state/"
                      "P4P4N1CK-whisper-large-v2-japanese-5k-steps_trainer_state.json"));
       },
       {}},
      // Keras' default batch of 32 (tests/io/logs_wild_test.cc).
      {"keras (console)", Format::kKeras, RepeatFile<kKeras>, Batch(32)},
      // FER-2013: 28,709 images at batch 64.
      {"keras-csv (CSVLogger + epoch_time)", Format::kKerasCsv, KerasCsvWithEpochTimes,
       Batch(64, 28709)},
      {"timm", Format::kTimm, RepeatFile<kTimm>, {}},
      {"tfcnn (tf_cnn_benchmarks)", Format::kTfcnn, RepeatFile<kTfcnn>, {}},
      // RNN-T's batch of 768 (as for its event file).
      {"dllogger", Format::kDllogger, RepeatFile<kDllogger>, Batch(768)},
      {"csv (Pollux placements)", Format::kCsv, RepeatRows<kCsv>, {}},
      // WideResNet on CIFAR-100 (docs/formats/epochs.md's example).
      {"epochs (list)", Format::kEpochs, EpochList, Batch(1024, 50000)},
      {"nist (Misra1d)", Format::kNist, NistRepeated, {}},
  };
  return cases;
}

// Heap used by one read, per sample read; see the comment at the top.
struct Memory {
  size_t samples = 0;
  double peak_per_sample = 0;
  double held_per_sample = 0;
};

fitspeed::ReadOptions OptionsOf(const Case& c, size_t& warnings) {
  fitspeed::ReadOptions options;
  options.format = c.format;
  options.tensorboard_tag = c.tag;
  options.tensorboard_unit = c.tag_unit;
  options.warn = [&warnings](const std::string&) { ++warnings; };
  return options;
}

Memory MeasureMemory(const Case& c, const std::string& text) {
  size_t warnings = 0;
  const fitspeed::ReadOptions options = OptionsOf(c, warnings);
  const std::string source = "/data/runs/2026-11-27/train.log";  // a path as users give it
  const size_t before = heap_in_use;
  heap_peak = heap_in_use;
  const std::vector<fitspeed::Sample> read =
      fitspeed::ParseSamples(text, source, c.attributes, options);
  const size_t held = heap_in_use - before;
  const double n = static_cast<double>(read.size());
  return {read.size(), static_cast<double>(heap_peak - before) / n, static_cast<double>(held) / n};
}

void ReadLog(benchmark::State& state, const Case& c, const std::string& text,
             const Memory& memory) {
  size_t warnings = 0;
  const fitspeed::ReadOptions options = OptionsOf(c, warnings);
  for (auto _ : state) {
    const std::vector<fitspeed::Sample> read =
        fitspeed::ParseSamples(text, "bench.log", c.attributes, options);
    benchmark::DoNotOptimize(read.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
  if (c.format != fitspeed::Format::kTensorboard) {
    const double lines = static_cast<double>(std::count(text.begin(), text.end(), '\n'));
    state.counters["lines"] = lines;
    state.counters["lines/s"] =
        benchmark::Counter(lines, benchmark::Counter::kIsIterationInvariantRate);
  }
  state.counters["samples"] = static_cast<double>(memory.samples);
  state.counters["warnings"] =
      static_cast<double>(warnings / std::max<size_t>(state.iterations(), 1));
  state.counters["peak_B/sample"] = memory.peak_per_sample;
  state.counters["held_B/sample"] = memory.held_per_sample;
}

// The console output as usual, and each benchmark's CPU seconds per read (the
// median where there are repetitions) kept for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type != Run::RT_Iteration && !median) continue;
      if (run.run_type == Run::RT_Iteration && medians_.count(run.run_name.function_name)) continue;
      // CPU time: a read is single-threaded, and on the shared machine the
      // wall time also counts the other processes' turns.
      seconds_[run.run_name.function_name] =
          run.cpu_accumulated_time / static_cast<double>(run.iterations);
      if (median) medians_[run.run_name.function_name] = true;
    }
  }
  double SecondsOf(const std::string& name) const {
    const auto it = seconds_.find(name);
    return it == seconds_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, double> seconds_;
  std::map<std::string, bool> medians_;
};

}  // namespace

int main(int argc, char** argv) {
  // Texts are built, and their reads' memory measured, on a benchmark's first
  // run, so that a --benchmark_filter leaves the others out altogether.
  static std::vector<std::string> texts(Cases().size());
  static std::vector<Memory> memory(Cases().size());
  for (size_t i = 0; i < Cases().size(); ++i) {
    benchmark::RegisterBenchmark(Cases()[i].name, [i](benchmark::State& state) {
      const Case& c = Cases()[i];
      if (texts[i].empty()) {
        texts[i] = c.build();
        memory[i] = MeasureMemory(c, texts[i]);
      }
      ReadLog(state, c, texts[i], memory[i]);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  // The summary, as a Markdown table (bench/README.md, "Reading real logs").
  const double mllog_seconds = reporter.SecondsOf(Cases()[0].name);
  const double mllog_mbps = mllog_seconds > 0 ? texts[0].size() / 1e6 / mllog_seconds : 0;
  std::printf("\nsizeof(Sample) = %zu bytes\n\n", sizeof(fitspeed::Sample));
  std::printf(
      "| reader | text MB | lines | samples | CPU ms per read | MB/s | / MLLOG | peak B/sample | "
      "held B/sample |\n|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < Cases().size(); ++i) {
    const double seconds = reporter.SecondsOf(Cases()[i].name);
    if (seconds <= 0) continue;  // filtered out
    const double mbps = texts[i].size() / 1e6 / seconds;
    const long lines = Cases()[i].format == fitspeed::Format::kTensorboard
                           ? 0
                           : static_cast<long>(std::count(texts[i].begin(), texts[i].end(), '\n'));
    std::printf("| %s | %.1f | %ld | %zu | %.1f | %.0f | %.2f | %.0f | %.0f |\n", Cases()[i].name,
                texts[i].size() / 1e6, lines, memory[i].samples, seconds * 1e3, mbps,
                mllog_mbps > 0 ? mbps / mllog_mbps : 0, memory[i].peak_per_sample,
                memory[i].held_per_sample);
  }
  return 0;
}
