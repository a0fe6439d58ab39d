// Reader for MLPerf Training result logs: one JSON event per line after the tag
// ":::MLLOG" (format of the mlperf-logging package, github.com/mlcommons/logging,
// mllog/mllog.py). Epoch intervals (epoch_start/epoch_stop) or, when a log has
// none, block intervals (block_start/block_stop) become epoch-time samples;
// in logs whose "epoch" numbers count samples (BERT) or tokens (GPT-3), or
// whose events carry metadata.samples_count (Llama-2-70B LoRA), the training
// time between two known counts becomes a throughput sample.
// The rules are described in docs/formats/mllog.md.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/core/error.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr std::string_view kTagMllog = ":::MLLOG";

// An epoch number above this is taken as corrupt rather than cast to an integer
// (token counts of LLM benchmarks reach 1e12; 2^53 is exact in a double).
constexpr double kMaxEpochNumber = 9e15;

// An "epoch" number above this counts samples or tokens: no run has so many epochs.
constexpr double kMaxRealEpochs = 1e5;

// The fields of one event the reader uses. Everything else is parsed (so that
// malformed JSON is caught) and dropped.
struct Event {
  std::optional<double> time_ms;
  std::optional<std::string> key;
  std::optional<double> value_number;
  std::optional<std::string> value_string;
  std::optional<double> epoch_num;        // metadata.epoch_num
  std::optional<double> first_epoch_num;  // metadata.first_epoch_num
  std::optional<double> epoch_count;      // metadata.epoch_count
  std::optional<double> step;             // metadata.step (tracked_stats)
  std::optional<double> samples_count;    // metadata.samples_count (Llama-2-70B LoRA)
};

// A validating JSON parser for one event (RFC 8259 grammar, plus the NaN,
// Infinity and -Infinity that Python's json module writes) that keeps only the
// fields of Event. It is several times faster than a general DOM or SAX
// parser because it allocates nothing for the fields it drops. Bytes of 0x80
// and above inside strings are taken as they are, without checking UTF-8.
class EventParser {
 public:
  // Parses `text`, which must hold one JSON object and nothing else but blanks.
  // Returns false and sets error() when it is not valid JSON.
  bool Parse(std::string_view text, Event& event) {
    begin_ = p_ = text.data();
    end_ = begin_ + text.size();
    event_ = &event;
    error_.clear();
    SkipBlanks();
    if (p_ == end_ || *p_ != '{') return Fail("expected a JSON object");
    if (!Object(1, Place::kRoot)) return false;
    SkipBlanks();
    if (p_ != end_) return Fail("unexpected text after the JSON object");
    return true;
  }

  // What is wrong and where (1-based column within the parsed text).
  const std::string& error() const { return error_; }

 private:
  // Where a value goes.
  enum class Slot {
    kDrop,
    kTime,
    kKey,
    kValue,
    kMetadata,
    kEpochNum,
    kFirstEpochNum,
    kEpochCount,
    kStep,
    kSamplesCount
  };
  // Which object is being read.
  enum class Place { kOther, kRoot, kMetadata };

  static constexpr int kMaxDepth = 64;

  bool Fail(const char* what) {
    error_ = fmt::format("{} at column {}", what, p_ - begin_ + 1);
    return false;
  }

  void SkipBlanks() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      return Fail("invalid literal");
    }
    p_ += word.size();
    return true;
  }

  std::optional<double>* NumberSlot(Slot slot) const {
    switch (slot) {
      case Slot::kTime:
        return &event_->time_ms;
      case Slot::kValue:
        return &event_->value_number;
      case Slot::kEpochNum:
        return &event_->epoch_num;
      case Slot::kFirstEpochNum:
        return &event_->first_epoch_num;
      case Slot::kEpochCount:
        return &event_->epoch_count;
      case Slot::kStep:
        return &event_->step;
      case Slot::kSamplesCount:
        return &event_->samples_count;
      default:
        return nullptr;
    }
  }

  bool Value(int depth, Slot slot) {
    if (p_ == end_) return Fail("unexpected end of the event");
    switch (*p_) {
      case '{':
        return Object(depth + 1, slot == Slot::kMetadata ? Place::kMetadata : Place::kOther);
      case '[':
        return Array(depth + 1);
      case '"': {
        std::string* out = nullptr;
        if (slot == Slot::kKey) out = &event_->key.emplace();
        if (slot == Slot::kValue) out = &event_->value_string.emplace();
        return String(out);
      }
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      case 'N':
        return Special("NaN", std::numeric_limits<double>::quiet_NaN(), slot);
      case 'I':
        return Special("Infinity", std::numeric_limits<double>::infinity(), slot);
      default:
        if (*p_ == '-' && end_ - p_ > 1 && p_[1] == 'I') {
          ++p_;
          return Special("Infinity", -std::numeric_limits<double>::infinity(), slot);
        }
        return Number(slot);
    }
  }

  bool Special(std::string_view word, double value, Slot slot) {
    if (!Literal(word)) return false;
    if (std::optional<double>* out = NumberSlot(slot)) *out = value;
    return true;
  }

  bool Number(Slot slot) {
    const char* start = p_;
    auto digits = [&] {
      const char* d = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ > d;
    };
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return Fail("invalid value");
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return Fail("invalid number");
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return Fail("invalid number");
    }
    if (std::optional<double>* out = NumberSlot(slot)) {
      double v = 0;
      const auto result = std::from_chars(start, p_, v);
      if (result.ec == std::errc::result_out_of_range) {
        v = *start == '-' ? -std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::infinity();
      }
      *out = v;
    }
    return true;
  }

  static int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool Hex4(unsigned& code) {
    if (end_ - p_ < 4) return Fail("invalid \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = HexDigit(p_[i]);
      if (d < 0) return Fail("invalid \\u escape");
      code = code * 16 + static_cast<unsigned>(d);
    }
    p_ += 4;
    return true;
  }

  static void AppendUtf8(unsigned code, std::string& out) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // Reads a string at p_ (on its opening quote) into `out`, or only checks it
  // when `out` is null.
  bool String(std::string* out) {
    ++p_;
    while (true) {
      const char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) {
        ++p_;
      }
      if (out) out->append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) return Fail("unterminated string");
      if (*p_ == '"') {
        ++p_;
        return true;
      }
      if (*p_ != '\\') return Fail("control character in a string");
      ++p_;
      if (p_ == end_) return Fail("unterminated string");
      const char c = *p_++;
      char plain = 0;
      switch (c) {
        case '"':
        case '\\':
        case '/':
          plain = c;
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          unsigned code = 0;
          if (!Hex4(code)) return false;
          if (code >= 0xD800 && code <= 0xDBFF) {  // a surrogate pair
            unsigned low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
              return Fail("unpaired surrogate in \\u escape");
            }
            p_ += 2;
            if (!Hex4(low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) return Fail("unpaired surrogate in \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            return Fail("unpaired surrogate in \\u escape");
          }
          if (out) AppendUtf8(code, *out);
          continue;
        }
        default:
          return Fail("invalid escape in a string");
      }
      if (out) *out += plain;
    }
  }

  Slot SlotOf(std::string_view key, Place place) const {
    if (place == Place::kRoot) {
      if (key == "time_ms") return Slot::kTime;
      if (key == "key") return Slot::kKey;
      if (key == "value") return Slot::kValue;
      if (key == "metadata") return Slot::kMetadata;
    } else if (place == Place::kMetadata) {
      if (key == "epoch_num") return Slot::kEpochNum;
      if (key == "first_epoch_num") return Slot::kFirstEpochNum;
      if (key == "epoch_count") return Slot::kEpochCount;
      if (key == "step") return Slot::kStep;
      if (key == "samples_count") return Slot::kSamplesCount;
    }
    return Slot::kDrop;
  }

  bool Object(int depth, Place place) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    ++p_;  // '{'
    SkipBlanks();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    while (true) {
      if (p_ == end_ || *p_ != '"') return Fail("expected a key in quotes");
      key_.clear();
      if (!String(&key_)) return false;
      const Slot slot = SlotOf(key_, place);
      SkipBlanks();
      if (p_ == end_ || *p_ != ':') return Fail("expected ':'");
      ++p_;
      SkipBlanks();
      if (!Value(depth, slot)) return false;
      SkipBlanks();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        SkipBlanks();
        continue;
      }
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  bool Array(int depth) {
    if (depth > kMaxDepth) return Fail("nested too deeply");
    ++p_;  // '['
    SkipBlanks();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    while (true) {
      if (!Value(depth, Slot::kDrop)) return false;
      SkipBlanks();
      if (p_ < end_ && *p_ == ',') {
        ++p_;
        SkipBlanks();
        continue;
      }
      if (p_ < end_ && *p_ == ']') {
        ++p_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }

  const char* begin_ = nullptr;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  Event* event_ = nullptr;
  std::string key_;  // decoded key, reused
  std::string error_;
};

// One end of an interval: when and on which line.
struct Mark {
  double time_ms = 0;
  int line = 0;
};

// An interval as several ranks may log it: the earliest start and the latest
// stop of the same key and epoch count once.
struct Interval {
  std::optional<Mark> start;
  std::optional<Mark> stop;
  std::optional<double> epoch_count;  // blocks only
  int count_line = 0;                 // line the epoch count came from

  void Start(const Mark& m) {
    if (!start || m.time_ms < start->time_ms) start = m;
  }
  void Stop(const Mark& m) {
    if (!stop || m.time_ms > stop->time_ms) stop = m;
  }
  bool complete() const { return start && stop; }
};

using IntervalMap = std::map<std::int64_t, Interval>;

// What the whole log says, gathered line by line.
struct LogState {
  std::optional<int> batch_line;  // where global_batch_size was stated first
  double global_batch_size = 0;
  std::optional<int> samples_line;  // where train_samples was stated first
  double train_samples = 0;
  SharedString platform;
  std::string benchmark;            // submission_benchmark ("resnet", "bert", "gpt3")
  std::optional<int> seq_len_line;  // where max_sequence_length was stated first
  double max_sequence_length = 0;
  // Counts (epoch numbers of counted-unit logs) at known times: eval epoch_num,
  // tracked_stats step, epoch_start/epoch_stop epoch_num, block_start
  // first_epoch_num; used only when the log counts samples or tokens.
  std::vector<std::pair<Mark, double>> counts;
  double largest_number = 0;  // largest epoch, block or step number seen
  int largest_line = 0;
  // Where metadata.samples_count was first read (Llama-2-70B LoRA's counts of
  // sequences trained: its block and eval events carry no epoch numbers).
  std::optional<int> samples_count_line;
  std::optional<Mark> run_start;  // the first run_start: 0 trained
  IntervalMap epochs;             // by metadata.epoch_num
  IntervalMap blocks;             // by metadata.first_epoch_num
  IntervalMap evals;              // by metadata.epoch_num
  // Evaluations without an epoch number: open starts, paired first in first out.
  std::deque<Mark> open_unnumbered_evals;
  std::vector<std::pair<Mark, Mark>> unnumbered_evals;
};

class MllogParser {
 public:
  explicit MllogParser(const ReaderContext& context) : context_(context) {}

  // `cut` marks a last line without a line end: a file cut short or still
  // being written, whose unparsable tail is ignored.
  void Line(std::string_view line, int number, bool cut) {
    const size_t tag = line.find(kTagMllog);
    if (tag == std::string_view::npos) {
      TrainerIteration(line, number);
      return;
    }
    const std::string_view payload = line.substr(tag + kTagMllog.size());
    Event event;
    if (!parser_.Parse(payload, event)) {
      if (cut) return;
      throw DataError(context_.source, number, "",
                      fmt::format("malformed JSON after {}: {}", kTagMllog, parser_.error()));
    }
    if (!event.key) return;  // not an event fitspeed knows
    Use(event, number);
  }

  std::vector<Sample> Finish();

 private:
  const std::string& source() const { return context_.source; }

  void Use(const Event& e, int line);
  // maskrcnn-benchmark's trainer line "... maskrcnn_benchmark.trainer INFO:
  // eta: 3:20:23  iter: 1540  loss: ...": the optimizer steps done so far.
  void TrainerIteration(std::string_view line, int number) {
    if (line.find("maskrcnn_benchmark.trainer") == std::string_view::npos) return;
    const size_t at = line.find(" iter: ");
    if (at == std::string_view::npos) return;
    const std::vector<std::string_view> words = SplitBlank(line.substr(at + 7));
    if (words.empty()) return;
    const std::optional<double> iteration = ToDouble(words[0]);
    if (iteration && *iteration > 0) last_iteration_ = {*iteration, number};
  }
  // Drops train_samples when the trainer's iteration counter shows more
  // samples trained by an epoch_stop than the epochs stopped so far hold.
  void CheckTrainSamples();
  // Records that `count` (a sample or token count in logs that count so) was
  // reached at `mark`.
  void Count(const Mark& mark, std::int64_t count) {
    log_.counts.emplace_back(mark, static_cast<double>(count));
    if (count > log_.largest_number) {
      log_.largest_number = static_cast<double>(count);
      log_.largest_line = mark.line;
    }
  }
  Mark TimeOf(const Event& e, int line) const;
  std::int64_t EpochOf(const std::optional<double>& value, int line, const char* field) const;
  // metadata.samples_count of `e`, noting that the log counts so.
  std::int64_t SamplesCountOf(const Event& e, int line) {
    if (!log_.samples_count_line) log_.samples_count_line = line;
    return EpochOf(e.samples_count, line, "metadata.samples_count");
  }
  double PositiveValue(const Event& e, int line) const;
  void SetOnce(const Event& e, int line, std::optional<int>& first_line, double& value);
  void CheckIntervals(const IntervalMap& intervals, const char* start_key,
                      const char* stop_key) const;
  void MergeEvals();
  double EvalOverlap_ms(const Mark& start, const Mark& stop) const;
  Sample MakeSample(const Interval& interval, std::int64_t first_epoch, double epochs) const;
  void PairShiftedStops(IntervalMap& intervals, const char* stop_key, const char* start_key);
  // What the log's epoch numbers count: "" (epochs), "samples" or "tokens".
  std::string CountedUnit() const;
  std::vector<Sample> FinishCounted(const std::string& unit);
  std::vector<Sample> DropWarmup(std::vector<Sample> all) const;

  const ReaderContext& context_;
  EventParser parser_;
  LogState log_;
  std::vector<std::pair<double, double>> evals_;          // merged evaluation intervals, ms
  std::optional<std::pair<double, int>> last_iteration_;  // trainer's iteration, its line
  // At each epoch_stop in file order: its line and the trainer's last iteration before it.
  std::vector<std::pair<int, std::optional<std::pair<double, int>>>> iterations_at_stops_;
};

Mark MllogParser::TimeOf(const Event& e, int line) const {
  if (!e.time_ms) {
    throw DataError(source(), line, "time_ms", fmt::format("event '{}' has no time", *e.key));
  }
  if (!std::isfinite(*e.time_ms)) {
    throw DataError(source(), line, "time_ms", "is not a finite number");
  }
  return {*e.time_ms, line};
}

std::int64_t MllogParser::EpochOf(const std::optional<double>& value, int line,
                                  const char* field) const {
  if (!value) {
    throw DataError(source(), line, field, "missing; an interval needs its epoch number");
  }
  const double v = *value;
  if (!std::isfinite(v) || v != std::floor(v) || v < 0 || v > kMaxEpochNumber) {
    throw DataError(source(), line, field, fmt::format("must be a whole number >= 0, got {}", v));
  }
  return static_cast<std::int64_t>(v);
}

double MllogParser::PositiveValue(const Event& e, int line) const {
  std::optional<double> v = e.value_number;
  if (!v && e.value_string) v = ToDouble(*e.value_string);
  if (!v || !std::isfinite(*v) || *v <= 0) {
    throw DataError(source(), line, "value", fmt::format("'{}' must be a positive number", *e.key));
  }
  return *v;
}

// The first statement of a log-wide constant wins; a later, different one is an error
// (two runs in one file).
void MllogParser::SetOnce(const Event& e, int line, std::optional<int>& first_line, double& value) {
  const double v = PositiveValue(e, line);
  if (!first_line) {
    first_line = line;
    value = v;
  } else if (v != value) {
    throw DataError(
        source(), line, "value",
        fmt::format("'{}' is {} here but {} on line {}", *e.key, v, value, *first_line));
  }
}

void MllogParser::Use(const Event& e, int line) {
  const std::string& key = *e.key;
  if (key == "global_batch_size") {
    SetOnce(e, line, log_.batch_line, log_.global_batch_size);
  } else if (key == "train_samples") {
    SetOnce(e, line, log_.samples_line, log_.train_samples);
  } else if (key == "submission_platform") {
    if (e.value_string && log_.platform.empty()) log_.platform = *e.value_string;
  } else if (key == "submission_benchmark") {
    if (e.value_string && log_.benchmark.empty()) log_.benchmark = ToLower(*e.value_string);
  } else if (key == "max_sequence_length") {
    SetOnce(e, line, log_.seq_len_line, log_.max_sequence_length);
  } else if (key == "tracked_stats") {
    // NeMo's per-step statistics; metadata.step is the count trained so far.
    if (e.step) Count(TimeOf(e, line), EpochOf(e.step, line, "metadata.step"));
  } else if (key == "epoch_start" || key == "epoch_stop") {
    const std::int64_t epoch = EpochOf(e.epoch_num, line, "metadata.epoch_num");
    const Mark mark = TimeOf(e, line);
    key == "epoch_start" ? log_.epochs[epoch].Start(mark) : log_.epochs[epoch].Stop(mark);
    if (key == "epoch_stop") iterations_at_stops_.emplace_back(line, last_iteration_);
    Count(mark, epoch);
  } else if (key == "run_start") {
    if (!log_.run_start && e.time_ms) log_.run_start = TimeOf(e, line);
  } else if ((key == "block_start" || key == "block_stop") && !e.first_epoch_num &&
             e.samples_count) {
    // A block counted in samples (LoRA): its stop is a count. A start is one only at 0:
    // Habana's LoRA logs number later block_starts with the samples of a step (192)
    // after 1536 were trained.
    const std::int64_t count = SamplesCountOf(e, line);
    if (key == "block_stop" || count == 0) Count(TimeOf(e, line), count);
  } else if (key == "block_start" || key == "block_stop") {
    const std::int64_t first = EpochOf(e.first_epoch_num, line, "metadata.first_epoch_num");
    Interval& block = log_.blocks[first];
    const Mark mark = TimeOf(e, line);
    if (key == "block_start") {
      block.Start(mark);
      // A count at the block's start where the block counts more than one
      // "epoch" (GPT-3's tokens); Graphcore's BERT numbers its blocks 0, 1, ...
      // (epoch_count 1), where only the first, 0, is also a count.
      if ((e.epoch_count && *e.epoch_count > 1) || first == 0) Count(mark, first);
    } else {
      block.Stop(mark);
    }
    // block_start carries epoch_count; some logs repeat it on block_stop.
    if (e.epoch_count && (!block.epoch_count || key == "block_start")) {
      block.epoch_count = e.epoch_count;
      block.count_line = line;
    }
  } else if (key == "eval_accuracy") {
    if (e.epoch_num && e.time_ms) {
      Count(TimeOf(e, line), EpochOf(e.epoch_num, line, "metadata.epoch_num"));
    } else if (e.samples_count && e.time_ms) {
      Count(TimeOf(e, line), SamplesCountOf(e, line));
    }
  } else if (key == "eval_start" || key == "eval_stop") {
    const Mark mark = TimeOf(e, line);
    const bool start = key == "eval_start";
    // LoRA's evaluations carry the samples trained, not an epoch number: a
    // count, and an evaluation paired first in, first out below.
    if (!e.epoch_num && e.samples_count) Count(mark, SamplesCountOf(e, line));
    if (e.epoch_num) {
      const std::int64_t epoch = EpochOf(e.epoch_num, line, "metadata.epoch_num");
      Interval& eval = log_.evals[epoch];
      start ? eval.Start(mark) : eval.Stop(mark);
      Count(mark, epoch);
    } else if (start) {
      log_.open_unnumbered_evals.push_back(mark);
    } else if (!log_.open_unnumbered_evals.empty()) {
      log_.unnumbered_evals.emplace_back(log_.open_unnumbered_evals.front(), mark);
      log_.open_unnumbered_evals.pop_front();
    }
  }
}

// A stop needs a start, and may not come before it. A start without a stop is
// an interval the log ends in (a cut or still running log): it is left out.
void MllogParser::CheckIntervals(const IntervalMap& intervals, const char* start_key,
                                 const char* stop_key) const {
  for (const auto& [epoch, interval] : intervals) {
    if (interval.stop && !interval.start) {
      throw DataError(source(), interval.stop->line, "key",
                      fmt::format("{} for epoch {} has no {}", stop_key, epoch, start_key));
    }
    if (interval.complete() && interval.stop->time_ms < interval.start->time_ms) {
      throw DataError(source(), interval.stop->line, "time_ms",
                      fmt::format("{} for epoch {} at {} ms is before its {} at {} ms (line {})",
                                  stop_key, epoch, interval.stop->time_ms, start_key,
                                  interval.start->time_ms, interval.start->line));
    }
  }
}

// Merges the evaluation intervals into sorted, disjoint ones (several ranks
// and overlapping evaluations count once).
void MllogParser::MergeEvals() {
  std::vector<std::pair<double, double>> parts;
  for (const auto& [epoch, eval] : log_.evals) {
    if (eval.complete()) parts.emplace_back(eval.start->time_ms, eval.stop->time_ms);
  }
  for (const auto& [a, b] : log_.unnumbered_evals) parts.emplace_back(a.time_ms, b.time_ms);
  std::sort(parts.begin(), parts.end());
  for (const auto& [a, b] : parts) {
    if (b <= a) continue;
    if (!evals_.empty() && a <= evals_.back().second) {
      evals_.back().second = std::max(evals_.back().second, b);
    } else {
      evals_.emplace_back(a, b);
    }
  }
}

// Milliseconds of [start, stop] covered by evaluation, so that an evaluation
// inside a block is not counted as training time.
double MllogParser::EvalOverlap_ms(const Mark& start, const Mark& stop) const {
  // evals_ is disjoint and sorted, so its ends are sorted too.
  auto it = std::upper_bound(evals_.begin(), evals_.end(), start.time_ms,
                             [](double t, const auto& e) { return t < e.second; });
  double covered = 0;
  for (; it != evals_.end() && it->first < stop.time_ms; ++it) {
    // An evaluation that began before the interval ran beside its training
    // (the interval started while it was running: MLPerf Mask R-CNN scores
    // asynchronously), not in place of it.
    if (it->first < start.time_ms) continue;
    covered += std::min(it->second, stop.time_ms) - it->first;
  }
  return covered;
}

void MllogParser::CheckTrainSamples() {
  if (!log_.samples_line || !log_.batch_line) return;
  for (size_t k = 0; k < iterations_at_stops_.size(); ++k) {
    const auto& [stop_line, iteration] = iterations_at_stops_[k];
    if (!iteration) continue;
    const double trained = iteration->first * log_.global_batch_size;
    const double stated = static_cast<double>(k + 1) * log_.train_samples;
    if (trained <= stated) continue;
    Warn(context_, *log_.samples_line,
         fmt::format("train_samples {0} is contradicted by the trainer's lines: line {1} shows "
                     "iteration {2} at global_batch_size {3} ({4} samples) before epoch_stop "
                     "number {5} (line {6}), more than {5} x {0}; the samples per epoch are not "
                     "in the log, so train_samples is not read; give them as PATH@samples=N",
                     log_.train_samples, iteration->second, iteration->first,
                     log_.global_batch_size, trained, k + 1, stop_line));
    log_.samples_line.reset();
    return;
  }
}

Sample MllogParser::MakeSample(const Interval& interval, std::int64_t first_epoch,
                               double epochs) const {
  const double span_ms = interval.stop->time_ms - interval.start->time_ms;
  const double train_ms = span_ms - EvalOverlap_ms(*interval.start, *interval.stop);
  if (!(train_ms > 0)) {
    throw DataError(source(), interval.stop->line, "time_ms",
                    fmt::format("the interval from line {} lasts {} ms without evaluation; "
                                "it must be > 0",
                                interval.start->line, train_ms));
  }
  Sample s;
  s.source = context_.sample_source;
  s.line = interval.stop->line;
  s.batch = log_.global_batch_size;  // 0 when not logged: ParseSamples asks for PATH@batch=N
  s.devices = 1;                     // not logged in MLPerf v0.7: give PATH@devices=N
  s.label = log_.platform;
  s.epoch_time_s = train_ms / 1000.0 / epochs;
  if (log_.samples_line) s.samples_per_epoch = log_.train_samples;
  s.epoch = static_cast<int>(first_epoch);
  // TF and TPU reference input pipelines batch with drop_remainder=True.
  s.steps_rule = StepsRule::kDropRemainder;
  return s;
}

// MosaicML Composer numbers epoch_stop (and block_stop) with the epochs
// completed, one more than its start: a stop then precedes the start of its
// own number. When pairing each stop with the start numbered one less explains
// every such stop, the intervals are re-paired that way (with a warning);
// otherwise they are left for CheckIntervals to report.
void MllogParser::PairShiftedStops(IntervalMap& epochs, const char* stop_key,
                                   const char* start_key) {
  auto broken = [](const Interval& i) {
    return i.stop && (!i.start || i.stop->time_ms < i.start->time_ms);
  };
  const auto first_broken =
      std::find_if(epochs.begin(), epochs.end(), [&](const auto& e) { return broken(e.second); });
  if (first_broken == epochs.end()) return;
  IntervalMap shifted;
  for (const auto& [epoch, interval] : epochs) {
    if (interval.start) shifted[epoch].start = interval.start;
    if (interval.stop) {
      if (epoch == 0) return;
      shifted[epoch - 1].stop = interval.stop;
    }
  }
  for (const auto& [epoch, interval] : shifted) {
    if (broken(interval)) return;
    const auto next = shifted.find(epoch + 1);
    if (interval.stop && next != shifted.end() && next->second.start &&
        interval.stop->time_ms > next->second.start->time_ms) {
      return;
    }
  }
  Warn(context_, first_broken->second.stop->line,
       fmt::format("{0} carries the number of the next epoch (the epochs completed, as MosaicML "
                   "Composer logs it): each {0} is paired with the {1} numbered one less",
                   stop_key, start_key));
  epochs = std::move(shifted);
}

std::string MllogParser::CountedUnit() const {
  // MLPerf's rules: BERT counts training samples, GPT-3 tokens, as "epochs".
  if (log_.benchmark == "bert") return "samples";
  if (log_.benchmark == "gpt3") return "tokens";
  // Llama-2-70B LoRA: sequences of 8192 tokens, packed.
  if (log_.samples_count_line) return "samples";
  if (log_.largest_number > kMaxRealEpochs) {
    throw DataError(
        source(), log_.largest_line, "epoch number",
        fmt::format("{} cannot count epochs: this log counts samples or tokens as its epoch "
                    "numbers, and fitspeed knows which only for MLPerf's bert (samples) and "
                    "gpt3 (tokens), not for benchmark '{}'",
                    log_.largest_number, log_.benchmark.empty() ? "(not stated)" : log_.benchmark));
  }
  return "";
}

// Samples from a log whose epoch numbers count samples or tokens: between two
// consecutive known counts, the units trained over the training time between
// them (inside complete blocks, else complete epochs, less evaluation).
std::vector<Sample> MllogParser::FinishCounted(const std::string& unit) {
  MergeEvals();
  std::vector<std::pair<double, double>> spans;
  for (const IntervalMap* intervals : {&log_.blocks, &log_.epochs}) {
    for (const auto& [number, interval] : *intervals) {
      if (interval.complete()) spans.emplace_back(interval.start->time_ms, interval.stop->time_ms);
    }
    if (!spans.empty()) break;
  }
  std::sort(spans.begin(), spans.end());
  // Milliseconds of training in [a, b]: inside the spans (all of it without
  // spans), less evaluation.
  auto training_ms = [&](double a, double b) {
    if (spans.empty()) return (b - a) - EvalOverlap_ms({a, 0}, {b, 0});
    double ms = 0, covered_until = a;
    for (const auto& [s0, s1] : spans) {
      const double lo = std::max(covered_until, s0), hi = std::min(b, s1);
      if (hi <= lo) continue;
      ms += (hi - lo) - EvalOverlap_ms({lo, 0}, {hi, 0});
      covered_until = hi;
    }
    return ms;
  };
  double per_sample = 1;
  if (unit == "tokens") {
    if (!log_.seq_len_line) {
      throw DataError(source(), log_.largest_line, "max_sequence_length",
                      fmt::format("MLPerf {} counts tokens, but the log states no "
                                  "max_sequence_length to turn them into sequences, the unit of "
                                  "its global_batch_size",
                                  log_.benchmark));
    }
    per_sample = log_.max_sequence_length;
  }
  std::vector<std::pair<Mark, double>> counts = log_.counts;
  // samples_count logs start counting at run_start (Habana's LoRA logs have no block_start 0).
  if (log_.samples_count_line && log_.run_start) counts.emplace_back(*log_.run_start, 0.0);
  std::stable_sort(counts.begin(), counts.end(),
                   [](const auto& x, const auto& y) { return x.first.time_ms < y.first.time_ms; });
  std::vector<Sample> all;
  for (size_t i = 1; i < counts.size(); ++i) {
    const auto& [from, from_count] = counts[i - 1];
    const auto& [to, to_count] = counts[i];
    if (to_count < from_count) {
      throw DataError(
          source(), to.line, "epoch number",
          fmt::format("{} {} trained by here, fewer than the {} of line {} logged "
                      "{} ms earlier",
                      to_count, unit, from_count, from.line, to.time_ms - from.time_ms));
    }
    if (to_count == from_count) continue;
    const double ms = training_ms(from.time_ms, to.time_ms);
    if (!(ms > 0)) {
      Warn(context_, to.line,
           fmt::format("{} {} counted since line {} but no training time between them: skipped",
                       to_count - from_count, unit, from.line));
      continue;
    }
    Sample s;
    s.source = context_.sample_source;
    s.line = to.line;
    s.batch = log_.global_batch_size;  // 0 when not logged: ParseSamples asks for PATH@batch=N
    s.label = log_.platform;
    s.throughput_sps = (to_count - from_count) / per_sample / (ms / 1000.0);
    if (unit == "tokens") s.seq_len = per_sample;  // already in sequences, for tokens/s
    s.epoch = static_cast<int>(all.size()) + 1;
    all.push_back(std::move(s));
  }
  Warn(
      context_, 0,
      fmt::format("MLPerf {} counts {} {}: {} throughput samples, each the {} "
                  "trained between two logged counts over the training time between them{}",
                  log_.benchmark, unit,
                  log_.samples_count_line && unit == "samples"
                      ? fmt::format("in metadata.samples_count (line {})", *log_.samples_count_line)
                      : "as its epoch numbers",
                  all.size(), unit,
                  unit == "tokens"
                      ? fmt::format(", in sequences of max_sequence_length {} tokens (line {})",
                                    log_.max_sequence_length, *log_.seq_len_line)
                      : ""));
  return DropWarmup(std::move(all));
}

// Dropping the warm-up epochs (or first intervals) must not leave nothing: a
// short log keeps them.
std::vector<Sample> MllogParser::DropWarmup(std::vector<Sample> all) const {
  std::vector<Sample> kept;
  for (const Sample& sample : all) {
    if (*sample.epoch > context_.options.skip_first_epochs) kept.push_back(sample);
  }
  return kept.empty() ? all : kept;
}

std::vector<Sample> MllogParser::Finish() {
  const std::string unit = CountedUnit();
  if (!unit.empty()) return FinishCounted(unit);
  // Epochs when the log has any complete one, else blocks; only the intervals
  // used are checked (MosaicML's blocks open per epoch and close per evaluation).
  PairShiftedStops(log_.epochs, "epoch_stop", "epoch_start");
  CheckIntervals(log_.epochs, "epoch_start", "epoch_stop");
  const bool by_epoch = std::any_of(log_.epochs.begin(), log_.epochs.end(),
                                    [](const auto& e) { return e.second.complete(); });
  if (!by_epoch) {
    PairShiftedStops(log_.blocks, "block_stop", "block_start");
    CheckIntervals(log_.blocks, "block_start", "block_stop");
  }
  MergeEvals();
  CheckTrainSamples();

  const IntervalMap& intervals = by_epoch ? log_.epochs : log_.blocks;
  // Logs count epochs from 0 or from 1; Sample::epoch counts from 1.
  const std::int64_t offset = !intervals.empty() && intervals.begin()->first == 0 ? 1 : 0;

  std::vector<std::pair<double, Sample>> timed;  // start time, sample
  for (const auto& [epoch, interval] : intervals) {
    if (!interval.complete()) continue;
    double epochs = 1;
    if (!by_epoch) {
      if (!interval.epoch_count) {
        throw DataError(source(), interval.start->line, "metadata.epoch_count",
                        fmt::format("block_start for epoch {} does not say how many epochs "
                                    "the block has",
                                    epoch));
      }
      epochs = *interval.epoch_count;
      if (!std::isfinite(epochs) || epochs < 1 || epochs != std::floor(epochs)) {
        throw DataError(source(), interval.count_line, "metadata.epoch_count",
                        fmt::format("must be a whole number >= 1, got {}", epochs));
      }
    }
    timed.emplace_back(interval.start->time_ms, MakeSample(interval, epoch + offset, epochs));
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  std::vector<Sample> all;
  for (auto& [start, sample] : timed) all.push_back(std::move(sample));
  if (log_.benchmark == "transformer" && log_.batch_line && !all.empty()) {
    // MLPerf's Transformer states its batch in tokens (fairseq's max_tokens
    // over all GPUs) but its epoch in sentence pairs (train_samples): the
    // sentence pairs of a step are not in the log.
    Warn(context_, *log_.batch_line,
         fmt::format("MLPerf transformer's global_batch_size {} counts tokens while train_samples "
                     "counts sentence pairs: the batch in sentence pairs is not in the log, so it "
                     "is not read; give it as PATH@batch=N",
                     log_.global_batch_size));
    for (Sample& sample : all) sample.batch = 0;
  }
  return DropWarmup(std::move(all));
}

}  // namespace

std::vector<Sample> ReadMllog(LineCursor& lines, const ReaderContext& context) {
  MllogParser parser(context);
  std::string_view line;
  while (lines.Next(line)) parser.Line(line, lines.number(), lines.cut());
  return parser.Finish();
}

bool LooksLikeMllog(std::string_view head) {
  size_t at = head.find(kTagMllog);
  while (at != std::string_view::npos) {
    const std::string_view rest = Trim(head.substr(at + kTagMllog.size(), 8));
    if (StartsWith(rest, "{")) return true;
    at = head.find(kTagMllog, at + 1);
  }
  return false;
}

}  // namespace fitspeed::io
