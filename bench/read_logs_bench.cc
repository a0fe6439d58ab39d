// Reading speed of the log readers added for real logs (issue 12): ParseSamples
// with the format named, over a ~100k-line text held in memory, built from the
// real logs copied to tests/data/logs-wild. Line logs repeat the whole file
// (each copy reads as a new run, as concatenated logs of restarts do); tables
// keep their header once and repeat their rows; trainer_state.json repeats its
// log_history entries with the steps moved on. Warnings are counted, not
// printed. Reports bytes/s and lines/s; the goal is over 50 MB/s, the
// MLPerf reader's (read_mllog_bench).
//
//   read_logs_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench_data.h"
#include "fitspeed/io/input.h"

namespace {

constexpr int kTargetLines = 100000;

std::string ReadData(const std::string& name) {
  return fitspeed::bench::ReadTestData("logs-wild/" + name);
}

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

struct Case {
  const char* name;
  fitspeed::Format format;
  const char* file;  // under tests/data/logs-wild
  size_t header;     // lines kept once (a table's header); TensorBoard: records in the file
  fitspeed::Attributes attributes;
  const char* tag = "";       // TensorBoard: the scalar read and what it counts
  const char* tag_unit = "";
};

// An event file is records, not lines: the file again and again (each copy
// reads as a restarted run) up to kTargetLines records.
std::string RepeatRecords(const std::string& bytes, size_t records_in_file) {
  std::string out;
  for (size_t records = 0; records < static_cast<size_t>(kTargetLines); records += records_in_file) {
    out += bytes;
  }
  return out;
}

void ReadLog(benchmark::State& state, const Case& c, const std::string& text) {
  fitspeed::ReadOptions options;
  options.format = c.format;
  options.tensorboard_tag = c.tag;
  options.tensorboard_unit = c.tag_unit;
  size_t warnings = 0;
  options.warn = [&warnings](const std::string&) { ++warnings; };
  size_t samples = 0;
  for (auto _ : state) {
    const std::vector<fitspeed::Sample> read =
        fitspeed::ParseSamples(text, "bench.log", c.attributes, options);
    samples = read.size();
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
  state.counters["samples"] = static_cast<double>(samples);
  state.counters["warnings"] = static_cast<double>(warnings);
}

fitspeed::Attributes Batch(double batch) {
  fitspeed::Attributes a;
  a.batch = batch;
  return a;
}

const std::vector<Case>& Cases() {
  using fitspeed::Format;
  static const std::vector<Case> cases = {
      {"megatron", Format::kMegatron,
       "megatron-nemo/microsoft-Megatron-DeepSpeed_examples_random_ltd_gpt3-0.125B-baseline."
       "excerpt.log",
       0, {}},
      {"deepspeed", Format::kDeepspeed,
       "deepspeed/DeepSpeedExamples_DeepSpeed-Chat_step1_opt-1.3b-globalBatchSize128.excerpt.log",
       0, Batch(128)},
      {"nanogpt (torchtitan)", Format::kNanogpt,
       "nanogpt-torchtitan/torchtitan_autoresearch-may19-qwen3-14b_run214_run.log", 0, {}},
      {"lightning", Format::kLightning,
       "lightning-csvlogger/0Xero7-slm_training_lightning_logs_version_0_metrics.csv", 1,
       Batch(32)},
      {"wandb (synthetic history)", Format::kWandb, "", 0, Batch(12)},
      // 7967 records (tests/io/tensorboard_reader_test.cc); RNN-T's batch of 768.
      {"tensorboard", Format::kTensorboard,
       "tensorboard/mlperf-v3.0_xFusion_2288H_V7x6xL4_rnnt_train_events.out.tfevents.1683859779."
       "mlperf1.328.0",
       7967, Batch(768), "took", "s/interval"},
      {"hf (console in Markdown)", Format::kHf,
       "hf-trainer-console/saforem2-ezpz_docs_examples_hf-trainer_index.md", 0, {}},
      {"hf-state", Format::kHfState,
       "hf-trainer-state/P4P4N1CK-whisper-large-v2-japanese-5k-steps_trainer_state.json", 0, {}},
  };
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  static std::vector<std::string> texts;
  texts.reserve(Cases().size());
  for (const Case& c : Cases()) {
    if (c.format == fitspeed::Format::kWandb) {
      texts.push_back(WandbHistory());
    } else if (c.format == fitspeed::Format::kTensorboard) {
      texts.push_back(RepeatRecords(ReadData(c.file), c.header));
    } else if (c.format == fitspeed::Format::kHfState) {
      texts.push_back(RepeatTrainerState(ReadData(c.file)));
    } else {
      texts.push_back(Repeat(ReadData(c.file), c.header));
    }
    const std::string& text = texts.back();
    benchmark::RegisterBenchmark(c.name, [&c, &text](benchmark::State& state) {
      ReadLog(state, c, text);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
