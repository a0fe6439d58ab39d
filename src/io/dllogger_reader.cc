// Reader for NVIDIA dllogger JSON logs: lines "DLLL {json}" as written by
// dllogger's JSONStreamBackend (github.com/NVIDIA/dllogger, dllogger/logger.py),
// used by NVIDIA DeepLearningExamples. Training throughputs become throughput
// samples; the "PARAMETER" lines give the batch. The rules are described in
// docs/formats/dllogger.md.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/precision.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

using json = nlohmann::json;

constexpr std::string_view kTag = "DLLL ";

// Data keys holding a training throughput in samples/s summed over all
// devices, most preferred first. Where each is computed in DeepLearningExamples:
constexpr std::array<std::string_view, 8> kThroughputKeys = {
    "train.total_ips",   // PyTorch ConvNets: calc_ips() = world_size * batch / iteration time
    "train_throughput",  // TensorFlow ConvNets runner summary: mean of global_batch / step time
    "imgs_per_sec",      // TensorFlow ConvNets TrainingLoggingHook: global_batch / step time
    "total_ips",         // TensorFlow ConvNets BenchmarkLoggingHook: global_batch / step time
    "throughput_train",  // BERT TF, nnU-Net, UNet: global sequences or images per second
    "training_sequences_per_second",  // BERT PyTorch summary: batch * world_size * steps / time
    // MLPerf RNN-T (NVIDIA) per epoch: the epoch's utterances / its time. Its
    // iteration records ([epoch, iteration, iterations per epoch]) are not
    // read: their train_throughput is one iteration's global batch over the
    // time of log_frequency iterations (768 / 5.03 s = 152.7 in the v3.0
    // xFusion log, whose epoch average is 1477).
    "train_avg_throughput",
    "train.compute_ips",  // PyTorch ConvNets, data loading excluded: the last resort
};

// PARAMETER keys. A global batch is used as is (PyTorch ConvNets'
// optimizer_batch_size, when > 0, is the global batch of an optimizer step
// reached by accumulation); a per-device batch is multiplied by the device count.
constexpr std::array<std::string_view, 2> kGlobalBatchKeys = {"global_batch_size",
                                                              "optimizer_batch_size"};
constexpr std::array<std::string_view, 2> kDeviceBatchKeys = {"batch_size", "train_batch_size"};
constexpr std::array<std::string_view, 4> kDeviceCountKeys = {"world_size", "num_gpus", "gpus",
                                                              "n_gpu"};
constexpr std::array<std::string_view, 3> kAccumulationKeys = {
    "gradient_accumulation_steps", "num_accumulation_steps", "grad_accumulation"};

// Logged iterations dropped as warm-up before per-iteration values are used
// (DeepLearningExamples' own scripts exclude the first 20 steps).
constexpr int kWarmupIterations = 20;

// Where in the run a LOG line is, from its "step" field.
enum class Level { kSummary, kEpoch, kIteration, kParameter, kOther };

struct Step {
  Level level = Level::kOther;
  std::int64_t epoch = 0;  // kEpoch, kIteration with [epoch, iteration]
  bool has_epoch = false;
  std::int64_t iteration = 0;  // kIteration
};

// One training throughput: the best-ranked key of a step and its value.
struct Rate {
  size_t rank = kThroughputKeys.size();
  double value_sps = 0;
  int line = 0;

  void Offer(size_t key_rank, double value, int at_line) {
    if (key_rank <= rank) {  // a later line with the same key replaces the earlier one
      rank = key_rank;
      value_sps = value;
      line = at_line;
    }
  }
  bool found() const { return rank < kThroughputKeys.size(); }
};

struct IterationRate {
  std::optional<std::int64_t> epoch;
  std::int64_t iteration = 0;
  Rate rate;
};

std::optional<double> AsNumber(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return ToDouble(v.get_ref<const std::string&>());
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return std::nullopt;
}

std::optional<std::int64_t> AsIndex(const json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d) || d < 0 || d > 1e9) return std::nullopt;
  return static_cast<std::int64_t>(d);
}

Step StepOf(const json& event) {
  Step step;
  const auto it = event.find("step");
  if (it == event.end()) return step;
  if (it->is_string()) {
    if (*it == "PARAMETER") step.level = Level::kParameter;
    return step;
  }
  if (it->is_number()) {  // BERT TF logs a bare global step
    if (const std::optional<std::int64_t> i = AsIndex(*it)) {
      step.level = Level::kIteration;
      step.iteration = *i;
    }
    return step;
  }
  if (!it->is_array()) return step;
  const size_t n = it->size();
  if (n == 0) {
    step.level = Level::kSummary;
  } else if (n <= 2) {
    // [epoch] ends an epoch, [epoch, iteration] is one iteration; a third
    // element is a validation iteration (PyTorch ConvNets), not training.
    std::optional<std::int64_t> epoch = AsIndex((*it)[0]);
    if (!epoch || (n == 2 && !AsIndex((*it)[1]))) return step;
    step.level = n == 1 ? Level::kEpoch : Level::kIteration;
    step.epoch = *epoch;
    step.has_epoch = true;
    if (n == 2) step.iteration = *AsIndex((*it)[1]);
  }
  return step;
}

class DlloggerParser {
 public:
  explicit DlloggerParser(const ReaderContext& context) : context_(context) {}

  // `cut` marks a last line without a line end: a file cut short or still
  // being written, whose unparsable tail is ignored.
  void Line(std::string_view line, int number, bool cut);
  std::vector<Sample> Finish();

 private:
  const std::string& source() const { return context_.source; }
  std::optional<std::pair<size_t, double>> BestRate(const json& data, int line) const;
  std::optional<double> Parameter(const std::string& key, int* line) const;
  void ResolveBatch(Sample& s) const;
  Sample MakeSample(const Rate& rate) const;
  std::vector<Sample> FromIterations() const;

  const ReaderContext& context_;
  std::map<std::string, std::pair<json, int>> parameters_;  // key -> value, line
  std::map<std::int64_t, Rate> epochs_;
  Rate summary_;
  std::vector<IterationRate> iterations_;
};

void DlloggerParser::Line(std::string_view line, int number, bool cut) {
  const size_t tag = line.find(kTag);
  if (tag == std::string_view::npos) return;
  const std::string_view payload = line.substr(tag + kTag.size());
  if (!StartsWith(Trim(payload), "{")) return;  // "DLLL " inside other text
  json event = json::parse(payload.begin(), payload.end(), nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded()) {
    // Python's NaN and Infinity are read as null.
    event = json::parse(
        ReplacePythonLiterals(payload, [](std::string_view) { return std::string("null"); }),
        nullptr, /*allow_exceptions=*/false);
  }
  if (event.is_discarded() || !event.is_object()) {
    if (cut) return;
    throw DataError(source(), number, "",
                    fmt::format("malformed JSON after 'DLLL': {}", Excerpt(payload, 60)));
  }
  const auto type = event.find("type");
  if (type != event.end() && *type != "LOG") return;  // METADATA lines describe units
  const auto data = event.find("data");
  if (data == event.end() || !data->is_object()) return;
  const Step step = StepOf(event);
  if (step.level == Level::kParameter) {
    for (const auto& item : data->items()) parameters_[item.key()] = {item.value(), number};
    return;
  }
  if (step.level == Level::kOther) return;
  const auto best = BestRate(*data, number);
  if (!best) return;
  switch (step.level) {
    case Level::kSummary:
      summary_.Offer(best->first, best->second, number);
      break;
    case Level::kEpoch:
      epochs_[step.epoch].Offer(best->first, best->second, number);
      break;
    default: {
      std::optional<std::int64_t> epoch;
      if (step.has_epoch) epoch = step.epoch;
      // Consecutive lines of one step (DEFAULT and VERBOSE metrics, or every
      // rank logging the same step) are one iteration.
      if (iterations_.empty() || iterations_.back().epoch != epoch ||
          iterations_.back().iteration != step.iteration) {
        iterations_.push_back(IterationRate{epoch, step.iteration, Rate{}});
      }
      iterations_.back().rate.Offer(best->first, best->second, number);
    }
  }
}

// The most preferred throughput key in `data`, as (rank, value).
std::optional<std::pair<size_t, double>> DlloggerParser::BestRate(const json& data,
                                                                  int line) const {
  for (size_t rank = 0; rank < kThroughputKeys.size(); ++rank) {
    const auto it = data.find(std::string(kThroughputKeys[rank]));
    if (it == data.end()) continue;
    const std::optional<double> v = AsNumber(*it);
    const std::string field = fmt::format("data.{}", kThroughputKeys[rank]);
    if (!v || it->is_boolean()) {
      throw DataError(source(), line, field,
                      fmt::format("expected a number, got {}", Excerpt(it->dump())));
    }
    if (!std::isfinite(*v) || *v <= 0) {
      throw DataError(source(), line, field, fmt::format("must be a positive number, got {}", *v));
    }
    return std::make_pair(rank, *v);
  }
  return std::nullopt;
}

std::optional<double> DlloggerParser::Parameter(const std::string& key, int* line) const {
  const auto it = parameters_.find(key);
  if (it == parameters_.end()) return std::nullopt;
  if (line) *line = it->second.second;
  return AsNumber(it->second.first);
}

// Global batch: global_batch_size as logged, or a per-device batch times the
// device count (PARAMETER, else PATH@devices=N). Left at 0 when unknown, so
// that ParseSamples asks for PATH@batch=N.
void DlloggerParser::ResolveBatch(Sample& s) const {
  std::optional<int> devices;
  for (std::string_view key : kDeviceCountKeys) {
    int line = 0;
    const std::optional<double> n = Parameter(std::string(key), &line);
    if (!n) continue;
    if (!std::isfinite(*n) || *n < 1 || *n != std::floor(*n) || *n > 1e7) {
      throw DataError(source(), line, fmt::format("data.{}", key),
                      fmt::format("must be a whole number >= 1, got {}", *n));
    }
    devices = static_cast<int>(*n);
    break;
  }
  if (devices) s.devices = *devices;

  for (std::string_view key : kAccumulationKeys) {
    const std::optional<double> k = Parameter(std::string(key), nullptr);
    // With gradient accumulation the logged batch is not the batch of an optimizer step.
    if (k && *k > 1) return;
  }
  for (std::string_view key : kGlobalBatchKeys) {
    const std::optional<double> b = Parameter(std::string(key), nullptr);
    if (b && std::isfinite(*b) && *b > 0) {
      s.batch = *b;
      return;
    }
  }
  for (std::string_view key : kDeviceBatchKeys) {
    int line = 0;
    const std::optional<double> b = Parameter(std::string(key), &line);
    if (!b || !std::isfinite(*b) || *b <= 0) continue;
    if (!devices) devices = context_.attributes.devices;
    if (!devices) {
      if (context_.attributes.batch) return;  // the user gave the global batch
      throw DataError(source(), line, fmt::format("data.{}", key),
                      fmt::format("{} = {} is per device, but the log does not say on how many "
                                  "devices; give PATH@devices=N (or the global batch as "
                                  "PATH@batch=N)",
                                  key, *b));
    }
    s.batch = *b * *devices;
    return;
  }
}

Sample DlloggerParser::MakeSample(const Rate& rate) const {
  Sample s;
  s.source = context_.sample_source;
  s.line = rate.line;
  s.throughput_sps = rate.value_sps;
  ResolveBatch(s);
  const std::optional<double> amp = Parameter("amp", nullptr);
  const std::optional<double> fp16 = Parameter("fp16", nullptr);
  if ((amp && *amp == 1) || (fp16 && *fp16 == 1)) s.precision = PrecisionName(Precision::kMixed);
  return s;
}

// Per-iteration values: the first kWarmupIterations logged iterations (half,
// if fewer than twice that many were logged) are dropped, then each epoch
// gives the median of its iterations.
std::vector<Sample> DlloggerParser::FromIterations() const {
  const size_t n = iterations_.size();
  const size_t warmup = std::min<size_t>(kWarmupIterations, n / 2);
  std::map<std::int64_t, std::vector<const Rate*>> by_epoch;  // -1: no epoch in the step
  for (size_t i = warmup; i < n; ++i) {
    by_epoch[iterations_[i].epoch.value_or(-1)].push_back(&iterations_[i].rate);
  }
  std::vector<Sample> samples;
  for (auto& [epoch, rates] : by_epoch) {
    std::vector<double> values;
    for (const Rate* r : rates) values.push_back(r->value_sps);
    std::sort(values.begin(), values.end());
    const size_t m = values.size();
    Rate median = *rates.back();  // the line of the epoch's last iteration
    median.value_sps = m % 2 ? values[m / 2] : 0.5 * (values[m / 2 - 1] + values[m / 2]);
    Sample s = MakeSample(median);
    if (epoch >= 0) s.epoch = static_cast<int>(epoch);
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<Sample> DlloggerParser::Finish() {
  // Epoch averages first, the summary next, single iterations last.
  std::vector<Sample> samples;
  if (!epochs_.empty()) {
    for (const auto& [epoch, rate] : epochs_) {
      Sample s = MakeSample(rate);
      s.epoch = static_cast<int>(epoch);
      samples.push_back(std::move(s));
    }
  } else if (summary_.found()) {
    samples.push_back(MakeSample(summary_));
  } else if (!iterations_.empty()) {
    samples = FromIterations();
  }
  // DeepLearningExamples count epochs from 0; Sample::epoch counts from 1.
  const bool zero_based = std::any_of(samples.begin(), samples.end(),
                                      [](const Sample& s) { return s.epoch && *s.epoch == 0; });
  if (zero_based) {
    for (Sample& s : samples) {
      if (s.epoch) ++*s.epoch;
    }
  }
  std::vector<Sample> kept;
  for (const Sample& s : samples) {
    if (!s.epoch || *s.epoch > context_.options.skip_first_epochs) kept.push_back(s);
  }
  // Dropping the warm-up epochs must not leave nothing: a short log keeps them.
  return kept.empty() ? samples : kept;
}

}  // namespace

std::vector<Sample> ReadDllogger(LineCursor& lines, const ReaderContext& context) {
  DlloggerParser parser(context);
  std::string_view line;
  while (lines.Next(line)) parser.Line(line, lines.number(), lines.cut());
  return parser.Finish();
}

bool LooksLikeDllogger(std::string_view head) {
  size_t at = head.find(kTag);
  while (at != std::string_view::npos) {
    if (StartsWith(Trim(head.substr(at + kTag.size(), 8)), "{")) return true;
    at = head.find(kTag, at + 1);
  }
  return false;
}

}  // namespace fitspeed::io
