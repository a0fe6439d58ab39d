// Reader of the Hugging Face Trainer's speed metrics. Defined in docs/formats/hf.md.
// Trainer.train() logs, in transformers/trainer.py:
//   ***** Running training *****
//     Num examples = 900
//     Instantaneous batch size per device = 1
//     Total train batch size (w. parallel, distributed & accumulation) = 16
//     Gradient Accumulation steps = 8
// and at the end the dict of speed_metrics("train", ...) through Trainer.log:
//   {'train_runtime': 123.4, 'train_samples_per_second': 45.6, ..., 'epoch': 3.0}
// (newer versions print the values quoted: 'train_samples_per_second': '45.6'),
// which example scripts repeat with trainer.log_metrics as
//   ***** train metrics *****
//     train_samples_per_second =       45.6
// The samples per second count all devices (num_train_samples / train_runtime).
// With include_num_input_tokens_seen and include_tokens_per_second, every
// logged step's dict also carries the tokens seen so far (gathered over all
// ranks) and the time since train() began:
//   {'loss': 2.5586, ..., 'num_input_tokens_seen': 196608, 'train_runtime': 27.3002,
//    'train_tokens_per_second': 7201.711}
// Two such dicts give a per-step rate in tokens/s, all devices together.
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

constexpr std::string_view kRunHeader = "***** Running training *****";
constexpr std::string_view kSpeedKey = "train_samples_per_second";
constexpr std::string_view kTokensKey = "num_input_tokens_seen";
constexpr std::string_view kRuntimeKey = "train_runtime";
constexpr std::string_view kTokenRateKey = "train_tokens_per_second";

// The number after the '=' of a header line "  Total train batch size (...) = 1,024"
// (Trainer prints counts with thousands separators); throws DataError naming `field`.
double HeaderValue(std::string_view text, size_t key_end, const std::string& source, int line,
                   std::string_view field) {
  const size_t eq = text.find('=', key_end);
  if (eq == std::string_view::npos) {
    throw DataError(source, line, std::string(field), "expected '= <number>' after the name");
  }
  std::string digits;
  for (const char c : Trim(text.substr(eq + 1))) {
    if (c != ',') digits += c;
  }
  return ParsePositive(digits, source, line, field);
}

// The text of the value of `key` in a Python dict or JSON object on a line
// ('key': 45.6, 'key': '45.6', "key": 45.6), quotes around the value removed,
// or nullopt when the key is not there in that form.
std::optional<std::string_view> DictValue(std::string_view text, std::string_view key) {
  size_t at = text.find(key);
  while (at != std::string_view::npos) {
    const char before = at > 0 ? text[at - 1] : ' ';
    const size_t end = at + key.size();
    const char after = end < text.size() ? text[end] : ' ';
    if ((before == '\'' || before == '"') && after == before) {
      std::string_view rest = Trim(text.substr(end + 1));
      if (StartsWith(rest, ":")) {
        rest = Trim(rest.substr(1));
        std::string_view value = Trim(rest.substr(0, rest.find_first_of(",}")));
        if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
            value.back() == value.front()) {
          value = value.substr(1, value.size() - 2);
        }
        return value;
      }
    }
    at = text.find(key, end);
  }
  return std::nullopt;
}

// The value of train_samples_per_second on a line, or nullopt when the line
// does not hold it. Forms: those of DictValue, and key = 45.6 (log_metrics).
// Throws DataError when the key is there in one of these forms but its value
// is not a number.
std::optional<double> SpeedValue(std::string_view text, const std::string& source, int line) {
  if (const auto value = DictValue(text, kSpeedKey)) {
    return ParsePositive(*value, source, line, kSpeedKey);
  }
  for (size_t at = text.find(kSpeedKey); at != std::string_view::npos;
       at = text.find(kSpeedKey, at + kSpeedKey.size())) {
    const char before = at > 0 ? text[at - 1] : ' ';
    if (before != ' ' && before != '\t') continue;
    const std::string_view rest = Trim(text.substr(at + kSpeedKey.size()));
    if (StartsWith(rest, "=")) return ParsePositive(Trim(rest.substr(1)), source, line, kSpeedKey);
  }
  return std::nullopt;
}

// A per-step dict: the tokens seen and the seconds since train() began.
struct StepPoint {
  int line = 0;
  double tokens = 0;
  double runtime_s = 0;
};

// The step point of a line that holds both keys in dict form and is not the
// end-of-training summary (which has train_samples_per_second), or nullopt.
std::optional<StepPoint> StepPointOf(std::string_view text, const std::string& source, int line) {
  const auto tokens = DictValue(text, kTokensKey);
  const auto runtime = DictValue(text, kRuntimeKey);
  if (!tokens || !runtime || DictValue(text, kSpeedKey)) return std::nullopt;
  StepPoint p;
  p.line = line;
  p.tokens = ParsePositive(*tokens, source, line, kTokensKey);
  p.runtime_s = ParsePositive(*runtime, source, line, kRuntimeKey);
  // The dict's own cumulative rate, rounded to 3 decimals, must be tokens / runtime:
  // otherwise the two keys do not mean what this reader takes them to.
  if (const auto rate = DictValue(text, kTokenRateKey)) {
    const double logged = ParsePositive(*rate, source, line, kTokenRateKey);
    const double computed = p.tokens / p.runtime_s;
    if (std::fabs(logged - computed) > 1e-3 * computed + 1e-3) {
      throw DataError(source, line, std::string(kTokenRateKey),
                      fmt::format("{} is not {} / {} = {:.3f}: the dict's tokens and runtime "
                                  "are not what the Trainer logs",
                                  logged, p.tokens, p.runtime_s, computed));
    }
  }
  return p;
}

class HfReader {
 public:
  explicit HfReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view text, int line) {
    const std::string& source = context_.source;
    if (Contains(text, kRunHeader)) {
      FinishRun();
      run_ = Run{};
      run_.header_line = line;
      return;
    }
    if (const size_t at = text.find("Total train batch size"); at != std::string_view::npos) {
      run_.total_batch = HeaderValue(text, at, source, line, "Total train batch size");
    } else if (const size_t at = text.find("Instantaneous batch size per device");
               at != std::string_view::npos) {
      run_.per_device_batch = HeaderValue(text, at, source, line, "batch size per device");
    } else if (const size_t at = text.find("Gradient Accumulation steps");
               at != std::string_view::npos) {
      run_.accumulation = HeaderValue(text, at, source, line, "Gradient Accumulation steps");
    } else if (const size_t at = text.find("Total optimization steps");
               at != std::string_view::npos) {
      run_.max_steps = HeaderValue(text, at, source, line, "Total optimization steps");
    } else if (const auto speed = SpeedValue(text, source, line)) {
      // The dict and the log_metrics block of one run repeat the same value.
      if (run_.summary && std::fabs(run_.summary->speed - *speed) <= 5e-4 * (1 + *speed)) return;
      if (run_.summary) NewRunWithoutHeader(line);
      Summary summary{line, *speed, std::nullopt};
      if (const auto tokens = DictValue(text, kTokensKey)) {
        summary.tokens = ParsePositive(*tokens, source, line, kTokensKey);
      }
      run_.summary = summary;
    } else if (const auto point = StepPointOf(text, source, line)) {
      const bool restart =
          !run_.points.empty() && (point->tokens <= run_.points.back().tokens ||
                                   point->runtime_s <= run_.points.back().runtime_s);
      if (run_.summary || restart) NewRunWithoutHeader(line);
      run_.points.push_back(*point);
    }
  }

  std::vector<Sample> Finish() {
    FinishRun();
    return std::move(samples_);
  }

 private:
  struct Summary {
    int line = 0;
    double speed = 0;              // train_samples_per_second
    std::optional<double> tokens;  // num_input_tokens_seen at the end
  };

  struct Run {
    int header_line = 0;  // 0 when the run has no header in the text
    std::optional<double> total_batch;
    std::optional<double> per_device_batch;
    std::optional<double> accumulation;
    std::optional<double> max_steps;
    std::optional<Summary> summary;
    std::vector<StepPoint> points;

    // total = per-device batch x accumulation x devices (Trainer's
    // total_train_batch_size, where a DataParallel GPU counts as a device).
    std::optional<int> Devices() const {
      if (!total_batch || !per_device_batch || !accumulation) return std::nullopt;
      const double devices = *total_batch / (*per_device_batch * *accumulation);
      if (devices < 1 || devices > 1e6 || devices != std::floor(devices)) return std::nullopt;
      return static_cast<int>(devices);
    }
  };

  // A second run's lines under one header (a page that pastes two runs, a
  // restart): what was read so far is one run; the next is read with the same
  // header, and a warning says so.
  void NewRunWithoutHeader(int line) {
    FinishRun();
    if (run_.header_line > 0) {
      Warn(context_, line,
           fmt::format("a new training run without a '{}' header of its own: read with the "
                       "batch and devices of the header at line {}",
                       kRunHeader, run_.header_line));
    }
  }

  // Emits the run's samples: per-step token rates where two step dicts or more
  // give them, else the summary's whole-run samples/s. Keeps the header.
  void FinishRun() {
    if (run_.points.size() >= 2) {
      EmitStepRates();
    } else if (run_.summary) {
      Sample s = NewSample(run_.summary->line);
      s.throughput_sps = run_.summary->speed;
      if (run_.total_batch) s.batch = *run_.total_batch;
      samples_.push_back(std::move(s));
    }
    run_.summary.reset();
    run_.points.clear();
  }

  Sample NewSample(int line) const {
    Sample s;
    s.source = context_.sample_source;
    s.line = line;
    if (const auto devices = run_.Devices()) s.devices = *devices;
    return s;
  }

  // One sample per pair of consecutive step dicts: (tokens seen) / (runtime)
  // between them, in tokens/s of all devices. The first dict's own rate counts
  // from the start of train() (warm-up, compilation) and gives no sample.
  void EmitStepRates() {
    const std::string& source = context_.source;
    const Attributes& a = context_.attributes;
    std::optional<double> per_step;  // tokens in one optimizer step
    std::optional<double> seq_len;
    std::string origin;
    if (a.batch) {
      per_step = *a.batch;
      origin = fmt::format("@batch={}", *a.batch);
    } else if (a.seq_len && run_.total_batch) {
      per_step = *run_.total_batch * *a.seq_len;
      seq_len = a.seq_len;
      origin = fmt::format("{} sequences per step (line {}) x @seq_len={}", *run_.total_batch,
                           run_.header_line, *a.seq_len);
    } else if (run_.summary && run_.summary->tokens && run_.max_steps) {
      const double value = *run_.summary->tokens / *run_.max_steps;
      if (value == std::floor(value)) {
        per_step = value;
        origin = fmt::format("{} tokens seen (line {}) / {} optimization steps",
                             *run_.summary->tokens, run_.summary->line, *run_.max_steps);
        Warn(context_, run_.summary->line,
             fmt::format("{} tokens per optimizer step = {}, if the run trained all its steps; "
                         "give @batch=<tokens per step> or @seq_len=N otherwise",
                         value, origin));
      }
    }
    if (!per_step) {
      Warn(context_, run_.points.front().line,
           "the log does not say how many tokens one optimizer step takes: give "
           "@batch=<tokens per step>, or @seq_len=N with the header's global batch");
    }
    for (size_t i = 0; i < run_.points.size(); ++i) {
      const StepPoint& point = run_.points[i];
      if (per_step) {
        // Every logged total is a whole number of steps, no more than the run plans.
        const double steps = point.tokens / *per_step;
        if (std::fabs(steps - std::round(steps)) > 1e-9 * steps) {
          throw DataError(source, point.line, std::string(kTokensKey),
                          fmt::format("{} tokens seen is not a whole number of optimizer steps "
                                      "of {} tokens ({})",
                                      point.tokens, *per_step, origin));
        }
        if (run_.max_steps && std::round(steps) > *run_.max_steps) {
          throw DataError(source, point.line, std::string(kTokensKey),
                          fmt::format("{} tokens seen are {} optimizer steps of {} tokens ({}), "
                                      "more than the {} of the header at line {}",
                                      point.tokens, std::round(steps), *per_step, origin,
                                      *run_.max_steps, run_.header_line));
        }
      }
      if (i == 0) continue;
      const StepPoint& previous = run_.points[i - 1];
      Sample s = NewSample(point.line);
      s.unit = Unit::kTokens;
      s.throughput_sps = (point.tokens - previous.tokens) / (point.runtime_s - previous.runtime_s);
      s.batch = per_step.value_or(0);
      s.seq_len = seq_len;
      samples_.push_back(std::move(s));
    }
  }

  const ReaderContext& context_;
  Run run_;
  std::vector<Sample> samples_;
};

}  // namespace

bool LooksLikeHf(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.Next(line)) {
    if (Contains(line, kRunHeader)) return true;
    try {
      if (SpeedValue(line, "", cursor.number())) return true;
      if (DictValue(line, kTokensKey) && DictValue(line, kRuntimeKey)) return true;
    } catch (const DataError&) {
      return true;  // the key in Trainer's form, with a broken value: still this format
    }
  }
  return false;
}

std::vector<Sample> ReadHf(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<HfReader>(lines, context);
}

}  // namespace fitspeed::io
