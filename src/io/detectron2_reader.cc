// Reader of the training lines that detection and classification trainers
// print with the seconds of one iteration in a `time:` field. Defined in
// docs/formats/detectron2.md. The lines:
//   detectron2 (CommonMetricPrinter):
//     [09/02 02:37:24 d2.utils.events]:  eta: 0:05:22  iter: 19  total_loss: 1.986 ...
//     time: 1.1678  data_time: 0.0222  lr: 1.6068e-05  max_mem: 2725M
//   maskrcnn-benchmark (MetricLogger, "median (global mean)"):
//     maskrcnn_benchmark.trainer INFO: eta: 6:38:07  iter: 20  loss: 2.0931 (3.3078) ...
//     time: 0.2946 (0.5975)  data: 0.0025 (0.0923)  lr: 0.002000  max mem: 7905
//   mmcv / mmdetection / mmclassification (TextLoggerHook; mmengine prints
//   "Epoch(train)  [1][ 50/7330]" and blanks instead of commas):
//     Epoch [1][100/5005]    lr: 1.000e-01, eta: 37 days, 5:46:17, time: 6.430,
//     data_time: 5.762, memory: 3086, loss: 6.8864
//   torchvision's references (MetricLogger), and the epoch's summary:
//     Epoch: [0]  [0/6]  eta: 0:00:25  lr: 0.001004  loss: 8.2773 (8.2773) ... time: 4.1973
//     data: 1.1906  max mem: 2547
//     Epoch: [0] Total time: 0:00:05 (0.9880 s / it)
// `time` is the wall time of one iteration (data loading included), averaged
// over a window of iterations; an iteration is one optimizer step of the
// global batch.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "line_reader.h"
#include "log_lines.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

// One training line: its seconds per iteration and its epoch (from 1) where
// the line names one.
struct Detectron2Line {
  int line = 0;
  double time_s = 0;
  std::optional<long long> epoch;
  bool epoch_total = false;  // torchvision's "Epoch: [0] Total time: ... (0.98 s / it)"
};

bool IsDigitDetectron2(char c) { return c >= '0' && c <= '9'; }

// The epoch printed at the start of `s` ("12]" -> 12), or nullopt when `s`
// does not start with a digit. DataError naming the field "epoch" when it has
// more than 9 digits (Sample::epoch is an int).
std::optional<long long> LeadingEpochDetectron2(std::string_view s, const std::string& source,
                                                int line) {
  size_t n = 0;
  while (n < s.size() && IsDigitDetectron2(s[n])) ++n;
  if (n == 0) return std::nullopt;
  if (n > 9) {
    throw DataError(
        source, line, "epoch",
        fmt::format("'{}' has {} digits; an epoch has at most 9", Excerpt(s.substr(0, n)), n));
  }
  return static_cast<long long>(*ToDouble(s.substr(0, n)));
}

// Where the field `key: ` starts as a field of its own (at the start, or after
// a blank or comma: "data_time: " is not "time: "), or npos.
size_t FindFieldDetectron2(std::string_view text, std::string_view key) {
  size_t from = 0;
  while (true) {
    const size_t at = text.find(key, from);
    if (at == std::string_view::npos) return at;
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == ',') return at;
    from = at + 1;
  }
}

// The epoch of an mmcv or mmengine line, "Epoch [3][100/5005]" or
// "Epoch(train)  [3][ 50/7330]" -> 3; nullopt when `rest` does not start so.
std::optional<long long> MmcvEpoch(std::string_view rest, const std::string& source, int line) {
  rest = Trim(rest);
  if (!StartsWith(rest, "[")) return std::nullopt;
  const size_t close = rest.find("][");
  if (close == std::string_view::npos) return std::nullopt;
  const auto epoch = LeadingEpochDetectron2(rest.substr(1), source, line);
  if (!epoch) return std::nullopt;
  return epoch;
}

// Reads the line when it is one of the training lines above; nullopt for
// other text (validation: "Epoch(val)", torchvision's "Test:"). A training
// line whose time cannot be read throws DataError naming the field "time".
std::optional<Detectron2Line> ParseDetectron2Line(std::string_view text, int line,
                                                  const std::string& source) {
  Detectron2Line t;
  t.line = line;
  const size_t torchvision = text.find("Epoch: [");
  if (torchvision != std::string_view::npos) {
    const auto epoch = LeadingEpochDetectron2(text.substr(torchvision + 8), source, line);
    if (!epoch) return std::nullopt;
    t.epoch = *epoch + 1;  // printed from 0
    const size_t total = text.find("Total time: ", torchvision);
    if (total != std::string_view::npos) {
      const size_t open = text.find('(', total);
      std::string_view rest;
      const auto per_it = open == std::string_view::npos
                              ? std::nullopt
                              : LeadingDouble(text.substr(open + 1), &rest);
      if (!per_it || !StartsWith(Trim(rest), "s / it")) {
        throw DataError(source, line, "time",
                        fmt::format("expected 'Total time: H:MM:SS (<s> s / it)', got '{}'",
                                    Excerpt(text.substr(total))));
      }
      t.time_s = RequirePositive(*per_it, source, line, "time");
      t.epoch_total = true;
      return t;
    }
  } else if (const size_t mm = text.find("Epoch");
             mm != std::string_view::npos && (StartsWith(text.substr(mm + 5), " [") ||
                                              StartsWith(text.substr(mm + 5), "(train)"))) {
    std::string_view rest = text.substr(mm + 5);
    if (StartsWith(rest, "(train)")) rest = rest.substr(7);
    const auto epoch = MmcvEpoch(rest, source, line);
    if (!epoch) return std::nullopt;
    t.epoch = *epoch;  // printed from 1
  } else if (Contains(text, "Iter [") || Contains(text, "Iter(train)")) {
    // mmcv's and mmengine's iteration-based runners: no epoch.
  } else if (FindFieldDetectron2(text, "iter: ") == std::string_view::npos) {
    return std::nullopt;  // not detectron2's or maskrcnn-benchmark's "iter: 19"
  }
  const size_t at = FindFieldDetectron2(text, "time: ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view value = Trim(text.substr(at + 6));
  value = value.substr(0, value.find_first_of(" ,\t"));
  t.time_s = ParsePositive(value, source, line, "time");
  return t;
}

class Detectron2Reader {
 public:
  explicit Detectron2Reader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view text, int line) {
    if (auto t = ParseDetectron2Line(text, line, context_.source)) {
      lines_.push_back(*t);
      return;
    }
    ReadSettings(text, line);
  }

  std::vector<Sample> Finish() {
    const bool has_totals = std::any_of(lines_.begin(), lines_.end(),
                                        [](const Detectron2Line& t) { return t.epoch_total; });
    std::vector<Sample> samples, dropped;
    bool first_without_epoch = true;
    for (const Detectron2Line& t : lines_) {
      if (has_totals && !t.epoch_total) continue;
      Sample s;
      s.source = context_.sample_source;
      s.line = t.line;
      s.step_time_s = t.time_s;
      bool warm_up = false;
      if (t.epoch) {
        s.epoch = static_cast<int>(std::min<long long>(*t.epoch, 1000000000));
        warm_up = *s.epoch <= context_.options.skip_first_epochs;
      } else {
        // Iteration-counted logs: the first line's window holds the warm-up.
        warm_up = first_without_epoch && context_.options.skip_first_epochs > 0;
        first_without_epoch = false;
      }
      (warm_up ? dropped : samples).push_back(s);
    }
    if (samples.empty() && !dropped.empty()) {
      Warn(context_, dropped.back().line,
           fmt::format("every training line of the log is in the warm-up (epochs <= "
                       "skip_first_epochs = {}, or the first line of a log without epochs): "
                       "read anyway, so the step time may be high (--skip-epochs 0 keeps them "
                       "without this warning)",
                       context_.options.skip_first_epochs));
      samples = std::move(dropped);
    }
    if (samples.empty()) return samples;
    const auto [batch, devices] = Batch();
    for (Sample& s : samples) {
      s.batch = batch;
      s.devices = devices;
    }
    return samples;
  }

 private:
  struct Found {
    double value = 0;
    int line = 0;
    std::string name;
  };

  static void Keep(std::optional<Found>& slot, std::optional<double> value, int line,
                   std::string_view name) {
    if (!slot && value) slot = Found{*value, line, std::string(name)};
  }

  static void KeepLast(std::optional<Found>& slot, std::optional<double> value, int line,
                       std::string_view name) {
    if (value) slot = Found{*value, line, std::string(name)};
  }
  // The global batch (MLPerf's tag, IMS_PER_BATCH of the config dump's SOLVER
  // section or of the command line's options: detectron2 and maskrcnn-benchmark
  // count it over all GPUs), the per-GPU one (mmcv's samples_per_gpu, torchvision's
  // --batch-size in the argparse Namespace) and the world size (detectron2's
  // "World size: 8", torchvision's world_size=8, mmcv's gpu_ids).
  void ReadSettings(std::string_view text, int line) {
    if (Contains(text, ":::MLLOG")) {
      Keep(mllog_, MllogWholeValue(text, "global_batch_size"), line, "global_batch_size");
      return;
    }
    if (!text.empty() && text[0] != ' ' && EndsWith(Trim(text), ":")) {
      section_ = std::string(Trim(text));  // a top-level YAML key: "SOLVER:"
    } else if (section_ == "SOLVER:" && StartsWith(text, "  ") && !StartsWith(text, "   ")) {
      // The config file's dump first, the merged config last: the last counts.
      KeepLast(yaml_, WholeSettingAfter(Trim(text), "IMS_PER_BATCH"), line, "SOLVER.IMS_PER_BATCH");
    }
    if (const size_t at = text.find("SOLVER.IMS_PER_BATCH"); at != std::string_view::npos) {
      // Command-line options: "SOLVER.IMS_PER_BATCH 16" or "'SOLVER.IMS_PER_BATCH', '16'".
      std::string_view rest = text.substr(at + 20);
      const size_t digit = rest.find_first_of("0123456789");
      if (digit != std::string_view::npos &&
          rest.substr(0, digit).find_first_not_of(" ',=\"") == std::string_view::npos) {
        std::string_view tail;
        const auto n = LeadingPrinted(rest.substr(digit), &tail);
        if (n && n->half_unit == 0.5 && n->value >= 1) {
          KeepLast(option_, n->value, line, "SOLVER.IMS_PER_BATCH");
        }
      }
    }
    Keep(per_gpu_, WholeSettingAfter(text, "samples_per_gpu"), line, "samples_per_gpu");
    if (Contains(text, "Namespace(")) {
      Keep(per_gpu_, WholeSettingAfter(text, "batch_size"), line, "batch_size");
    }
    Keep(world_, WholeSettingAfter(text, "World size"), line, "World size");
    Keep(world_, WholeSettingAfter(text, "world_size"), line, "world_size");
    Keep(world_, WholeSettingAfter(text, "WORLD_SIZE"), line, "WORLD_SIZE");
    Keep(world_, WholeSettingAfter(text, "GPU number"), line, "GPU number");
    if (const size_t at = text.find("gpu_ids = range(0, "); at != std::string_view::npos) {
      std::string_view tail;  // mmcv's config dump: "gpu_ids = range(0, 8)"
      const auto n = LeadingPrinted(text.substr(at + 19), &tail);
      if (n && n->half_unit == 0.5 && n->value >= 1 && StartsWith(tail, ")")) {
        Keep(world_, n->value, line, "gpu_ids");
      }
    }
  }

  // The global batch and the devices: the log's global batch; else its
  // per-GPU batch times the world size it names (with a warning), or times
  // @devices=; else 0 (ParseSamples asks for @batch=N).
  std::pair<double, int> Batch() const {
    const int devices = world_ ? static_cast<int>(std::min(world_->value, 1e6)) : 1;
    // A command-line option overrides the config file; MLPerf's tag states
    // the batch the run used, which the config must not contradict.
    const std::optional<Found>& config = option_ ? option_ : yaml_;
    if (mllog_ && config && config->value != mllog_->value) {
      throw DataError(context_.source, config->line, config->name,
                      fmt::format("{} {} contradicts global_batch_size {} on line {}", config->name,
                                  config->value, mllog_->value, mllog_->line));
    }
    if (mllog_) return {mllog_->value, devices};
    if (config) return {config->value, devices};
    if (!per_gpu_ || context_.attributes.batch) return {0, devices};
    if (world_) {
      Warn(context_, per_gpu_->line,
           fmt::format("{} {} is a per-GPU batch: read as {} x {} ({}, line {}) = {} per "
                       "iteration",
                       per_gpu_->name, per_gpu_->value, per_gpu_->value, world_->value,
                       world_->name, world_->line, per_gpu_->value * world_->value));
      return {per_gpu_->value * world_->value, devices};
    }
    if (const auto& given = context_.attributes.devices) {
      Warn(context_, per_gpu_->line,
           fmt::format("{} {} is a per-GPU batch: read as {} x {} (@devices) = {} per iteration",
                       per_gpu_->name, per_gpu_->value, per_gpu_->value, *given,
                       per_gpu_->value * *given));
      return {per_gpu_->value * *given, *given};
    }
    throw UsageError(fmt::format(
        "{}:{}: {} {} is a per-GPU batch and the log does not say how many GPUs share an "
        "iteration; give them as {}@devices=N (or the global batch as @batch=N)",
        context_.source, per_gpu_->line, per_gpu_->name, per_gpu_->value, context_.source));
  }

  const ReaderContext& context_;
  std::vector<Detectron2Line> lines_;
  std::string section_;
  std::optional<Found> mllog_, yaml_, option_, per_gpu_, world_;
};

}  // namespace

bool LooksLikeDetectron2(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.Next(line)) {
    if (!Contains(line, "eta: ") && !Contains(line, "Total time: ")) continue;
    try {
      if (ParseDetectron2Line(line, cursor.number(), "")) return true;
    } catch (const DataError&) {
      // A line that starts like a training line but is broken: keep looking.
    }
  }
  return false;
}

std::vector<Sample> ReadDetectron2(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<Detectron2Reader>(lines, context);
}

}  // namespace fitspeed::io
