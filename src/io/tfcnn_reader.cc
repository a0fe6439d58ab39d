// Reader of tf_cnn_benchmarks output (tensorflow/benchmarks,
// scripts/tf_cnn_benchmarks/benchmark_cnn.py). Defined in docs/formats/tfcnn.md.
// print_info() writes
//   Mode:        training
//   Batch size:  512 global
//                64 per device
//   Devices:     ['/gpu:0', ..., '/gpu:7']
// then, after "Running warm up" / "Done warm up", step lines
//   10	images/sec: 146.6 +/- 0.3 (jitter = 0.6)	7.906
// and at the end "total images/sec: 1163.82". The total is
// num_workers * steps * batch / elapsed time of the timed loop: samples/s over
// all devices and workers, warm-up batches (num_warmup_batches) excluded.
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "line_reader.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr std::string_view kTotal = "total images/sec:";

// The text after `key` on the line, or nullopt when the key is absent.
std::optional<std::string_view> After(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return Trim(text.substr(at + key.size()));
}

// A step line: "<step><blank>images/sec: <mean> +/- <err> (jitter = <j>)<blank><loss>".
bool IsStepLine(std::string_view text) {
  const std::optional<std::string_view> rest = After(text, "images/sec:");
  if (!rest || Contains(text, kTotal) || !Contains(*rest, "+/-")) return false;
  const std::string_view before = Trim(text.substr(0, text.find("images/sec:")));
  const std::vector<std::string_view> words = SplitBlank(before);
  return !words.empty() && ToDouble(words.back()).has_value();
}

// What one benchmark run printed before its total.
struct RunTfcnn {
  std::optional<double> global_batch;
  std::optional<double> per_device_batch;
  std::optional<int> num_gpus;        // "Num GPUs:" (some versions and forks)
  std::optional<int> listed_devices;  // entries of "Devices: [...]"
  std::string mode;                   // "training", "forward-only", "evaluation", ...

  std::optional<int> Devices() const {
    if (global_batch && per_device_batch) {
      const double devices = *global_batch / *per_device_batch;
      if (devices >= 1 && devices <= 1e6 && devices == std::floor(devices)) {
        return static_cast<int>(devices);
      }
    }
    if (num_gpus) return num_gpus;
    return listed_devices;
  }
};

class TfcnnReader {
 public:
  explicit TfcnnReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view text, int line) {
    const std::string& source = context_.source;
    if (const auto total = After(text, kTotal)) {
      AddTotal(ParsePositive(*total, source, line, "total images/sec"), line);
    } else if (const auto batch = After(text, "Batch size:")) {
      // "Batch size:  512 global"; the next line says "64 per device".
      NextRun();
      const std::vector<std::string_view> words = SplitBlank(*batch);
      if (words.empty()) throw DataError(source, line, "batch size", "no number after it");
      run_.global_batch = ParsePositive(words[0], source, line, "batch size");
      batch_line_ = line;
    } else if (line == batch_line_ + 1 && Contains(text, " per device")) {
      const std::vector<std::string_view> words =
          SplitBlank(text.substr(0, text.find(" per device")));
      if (words.empty()) throw DataError(source, line, "batch per device", "no number before it");
      run_.per_device_batch = ParsePositive(words.back(), source, line, "batch per device");
    } else if (const auto gpus = After(text, "Num GPUs:")) {
      NextRun();
      const std::vector<std::string_view> words = SplitBlank(*gpus);
      if (words.empty()) throw DataError(source, line, "Num GPUs", "no number after it");
      const double n = ParsePositive(words[0], source, line, "Num GPUs");
      if (n != std::floor(n) || n > 1e6) {
        throw DataError(source, line, "Num GPUs", fmt::format("must be a whole number, got {}", n));
      }
      run_.num_gpus = static_cast<int>(n);
    } else if (const auto devices = After(text, "Devices:")) {
      NextRun();
      if (StartsWith(*devices, "[")) {
        int count = 0;
        for (const std::string& item : Split(devices->substr(1, devices->find(']') - 1), ',')) {
          if (!Trim(item).empty()) ++count;
        }
        if (count > 0) run_.listed_devices = count;
      }
    } else if (const auto mode = After(text, "Mode:")) {
      NextRun();
      run_.mode = ToLower(*mode);
    } else if (Contains(text, "Running warm up") || Contains(text, "Done warm up") ||
               (Contains(text, "Step") && Contains(text, "Img/sec"))) {
      NextRun();
    }
  }

  std::vector<Sample> Finish() {
    std::vector<Sample> samples;
    for (const Group& group : groups_) {
      // Evaluation runs (--eval) time inference on the validation set.
      if (Contains(group.run.mode, "eval") && !Contains(group.run.mode, "train")) continue;
      Sample s;
      s.source = context_.sample_source;
      s.line = group.line;
      s.throughput_sps = group.sum / group.count;
      if (group.run.global_batch) s.batch = *group.run.global_batch;
      if (const auto devices = group.run.Devices()) s.devices = *devices;
      if (group.run.mode == "forward-only") s.label = "forward-only";
      samples.push_back(std::move(s));
    }
    return samples;
  }

 private:
  // The totals of one run that follow one another: the ranks of one job
  // (Horovod runs print the job's total on every rank). One sample, their mean.
  struct Group {
    int line = 0;
    double sum = 0;
    int count = 0;
    RunTfcnn run;
  };

  void AddTotal(double value, int line) {
    if (!group_open_) {
      groups_.push_back(Group{line, 0, 0, run_});
      group_open_ = true;
    }
    groups_.back().sum += value;
    ++groups_.back().count;
  }

  // A header or warm-up line after a total begins the next run.
  void NextRun() {
    if (!group_open_) return;
    group_open_ = false;
    run_ = RunTfcnn{};
  }

  const ReaderContext& context_;
  RunTfcnn run_;
  int batch_line_ = -1;
  bool group_open_ = false;
  std::vector<Group> groups_;
};

}  // namespace

bool LooksLikeTfcnn(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.Next(line)) {
    if (Contains(line, kTotal) || IsStepLine(line)) return true;
  }
  return false;
}

std::vector<Sample> ReadTfcnn(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<TfcnnReader>(lines, context);
}

}  // namespace fitspeed::io
