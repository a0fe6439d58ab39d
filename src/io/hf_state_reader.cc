// Reader of the Hugging Face Trainer's saved state, trainer_state.json. Defined in
// docs/formats/hf-state.md.
//
// TrainerState.save_to_json (transformers/trainer_callback.py) writes the state
// with json.dumps(indent=2, sort_keys=True): global_step, max_steps,
// train_batch_size (newer versions: the batch of one process's dataloader) and
// log_history, the list of every dict Trainer.log recorded. At the end of
// train(), Trainer logs speed_metrics("train", start_time,
// num_samples=num_train_samples, num_steps=state.max_steps):
//   {"step": 5000, "train_runtime": 77350.9963, "train_samples_per_second": 3.232,
//    "train_steps_per_second": 0.065, ...}
// train_runtime is the wall time of train() rounded to 4 decimals, the rates are
// rounded to 3, and num_train_samples is max_steps x (dataloader batch x
// gradient accumulation x world size), or the dataset size x epochs for a run
// given in epochs. Their ratio is the samples of one optimizer step, all
// devices together. Before train_steps_per_second existed, Trainer passed
// max_steps as num_samples: "train_samples_per_second" then counted steps.
// Checkpoints save the state before that summary, and the per-step dicts hold
// no times: such a file yields nothing.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/error.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

using json = nlohmann::json;

constexpr std::string_view kHistoryKey = "log_history";

// The keys of a log_history dict the reader uses; the others are dropped while
// parsing (a state logged every step holds 10^5 dicts).
constexpr std::string_view kEntryKeys[] = {"train_runtime", "train_samples_per_second",
                                           "train_steps_per_second", "step", "eval_runtime"};

// Half a unit of the last digit speed_metrics keeps (round(x, 3), round(runtime, 4)).
constexpr double kRateHalfUnit = 0.0005;
constexpr double kRuntimeHalfUnit = 0.00005;

// A step count above this is taken as corrupt rather than as a count.
constexpr double kMaxCount = 1e12;

// A scalar of the file the reader may use, with the line of its key.
struct Scalar {
  std::optional<double> number;  // set for JSON numbers
  std::string text;              // otherwise: a string's content, or "null", "true", "false"
  int line = 0;

  bool is_null() const { return !number && text == "null"; }
};

using FieldsHfState = std::map<std::string, Scalar, std::less<>>;

const Scalar* Find(const FieldsHfState& fields, std::string_view key) {
  const auto it = fields.find(key);
  return it == fields.end() || it->second.is_null() ? nullptr : &it->second;
}

// One dict of log_history.
struct EntryHfState {
  int line = 0;  // of its '{'
  FieldsHfState fields;
};

// What the reader keeps of a trainer_state.json.
struct State {
  bool top_is_object = false;
  FieldsHfState top;     // scalars of the top-level object
  int history_line = 0;  // line of the "log_history" key; 0 when absent
  bool history_is_list = false;
  int bad_entry_line = 0;  // first element of log_history that is not a dict
  std::vector<EntryHfState> history;
};

// How far the parser has read: the line ends passed and the last character.
struct ReadPosition {
  int line_ends = 0;
  char last = 0;
};

// An iterator over the text that keeps a ReadPosition, so that SAX events know
// their line. nlohmann's lexer reads strings, literals and brackets without
// looking ahead, so at a key event the position is the key's closing quote; a
// number is known only once the character after it was read.
class LineCountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  LineCountingIterator(const char* at, ReadPosition* position) : at_(at), position_(position) {}
  reference operator*() const { return *at_; }
  LineCountingIterator& operator++() {
    position_->last = *at_;
    if (*at_ == '\n') ++position_->line_ends;
    ++at_;
    return *this;
  }
  LineCountingIterator operator++(int) {
    LineCountingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const LineCountingIterator& other) const { return at_ == other.at_; }
  bool operator!=(const LineCountingIterator& other) const { return at_ != other.at_; }

 private:
  const char* at_;
  ReadPosition* position_;
};

// SAX handler keeping the top-level scalars and the kEntryKeys scalars of each
// log_history dict; deeper values (stateful_callbacks, trial_params) are
// parsed and dropped.
class StateBuilder {
 public:
  explicit StateBuilder(const ReadPosition* position) : position_(position) {}

  bool null() { return Value(Scalar{std::nullopt, "null", 0}); }
  bool boolean(bool value) { return Value(Scalar{std::nullopt, value ? "true" : "false", 0}); }
  bool number_integer(json::number_integer_t value) {
    return Value(Scalar{static_cast<double>(value), "", 0});
  }
  bool number_unsigned(json::number_unsigned_t value) {
    return Value(Scalar{static_cast<double>(value), "", 0});
  }
  bool number_float(json::number_float_t value, const json::string_t&) {
    return Value(Scalar{value, "", 0});
  }
  bool string(json::string_t& value) { return Value(Scalar{std::nullopt, value, 0}); }
  bool binary(json::binary_t&) { return Value(Scalar{std::nullopt, "<binary>", 0}); }

  bool key(json::string_t& key) {
    key_ = key;
    key_line_ = line();
    return true;
  }

  bool start_object(std::size_t) {
    if (stack_.empty()) {
      state_.top_is_object = true;
    } else if (InHistoryList()) {
      state_.history.push_back(EntryHfState{line(), {}});
    } else {
      Container();
    }
    stack_.push_back('{');
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    if (stack_.size() == 1 && key_ == kHistoryKey) {
      state_.history_line = key_line_;
      state_.history_is_list = true;
      history_open_ = true;
    } else {
      Container();
    }
    stack_.push_back('[');
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    if (stack_.size() == 1) history_open_ = false;
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const json::exception& e) {
    error_position_ = position;
    error_ = e.what();
    return false;
  }

  State& state() { return state_; }
  std::size_t error_position() const { return error_position_; }
  const std::string& error() const { return error_; }

 private:
  // The line of the token just read (a number's look-ahead may be a line end).
  int line() const { return position_->line_ends + 1 - (position_->last == '\n' ? 1 : 0); }
  bool InHistoryList() const { return history_open_ && stack_.size() == 2; }

  // A container that is not the top, log_history or one of its dicts.
  void Container() {
    if (stack_.size() == 1 && key_ == kHistoryKey) state_.history_line = key_line_;
    if (InHistoryList() && state_.bad_entry_line == 0) state_.bad_entry_line = line();
  }

  bool Value(Scalar scalar) {
    scalar.line = key_line_;
    if (stack_.size() == 1) {
      if (key_ == kHistoryKey) state_.history_line = key_line_;
      state_.top[key_] = std::move(scalar);
    } else if (InHistoryList()) {
      if (state_.bad_entry_line == 0) state_.bad_entry_line = line();
    } else if (history_open_ && stack_.size() == 3 && stack_.back() == '{' &&
               std::find(std::begin(kEntryKeys), std::end(kEntryKeys), key_) !=
                   std::end(kEntryKeys)) {
      state_.history.back().fields[key_] = std::move(scalar);
    }
    return true;
  }

  const ReadPosition* position_;
  State state_;
  std::vector<char> stack_;  // '{' or '[' per open container
  std::string key_;
  int key_line_ = 0;
  bool history_open_ = false;
  std::size_t error_position_ = 0;
  std::string error_;
};

// Parses the text; throws DataError naming the line where the JSON breaks.
State ParseState(std::string_view text, const std::string& source) {
  // NaN and Infinity become strings, so that a field holding one is reported by name.
  const std::string prepared = ReplacePythonLiterals(
      text, [](std::string_view word) { return fmt::format("\"{}\"", word); });
  ReadPosition position;
  StateBuilder builder(&position);
  const char* begin = prepared.data();
  const bool ok =
      json::sax_parse(LineCountingIterator(begin, &position),
                      LineCountingIterator(begin + prepared.size(), &position), &builder);
  if (!ok) {
    // nlohmann counts the offending character in `position`.
    const size_t end = std::min(prepared.size(), builder.error_position());
    int line = 1;
    for (size_t i = 0; i + 1 < end; ++i) line += prepared[i] == '\n';
    std::string problem = builder.error();
    if (const size_t at = problem.find("column "); at != std::string::npos) {
      if (const size_t colon = problem.find(": ", at); colon != std::string::npos) {
        problem = problem.substr(colon + 2);
      }
    }
    throw DataError(source, line, "", fmt::format("not valid JSON: {}", problem));
  }
  return std::move(builder.state());
}

// The value of a field that must be a positive number; throws DataError naming it.
double PositiveValue(const Scalar& s, const std::string& source, std::string_view field) {
  if (s.number) return RequirePositive(*s.number, source, s.line, field);
  return RequirePositive(ParseNumber(s.text, source, s.line, field), source, s.line, field);
}

// The value of a field that must be a positive (or, with zero_allowed, a
// non-negative) whole number.
double CountValue(const Scalar& s, const std::string& source, std::string_view field,
                  bool zero_allowed = false) {
  const double value = s.number ? *s.number : ParseNumber(s.text, source, s.line, field);
  if (!zero_allowed || value != 0) RequirePositive(value, source, s.line, field);
  if (value != std::floor(value) || value > kMaxCount) {
    throw DataError(
        source, s.line, std::string(field),
        fmt::format("must be a whole number of at most {:g}, got {}", kMaxCount, value));
  }
  return value;
}

std::optional<double> OptionalCount(const FieldsHfState& fields, std::string_view key,
                                    const std::string& source, bool zero_allowed = false) {
  const Scalar* s = Find(fields, key);
  if (!s) return std::nullopt;
  return CountValue(*s, source, key, zero_allowed);
}

// "21:29:11" for 77351 s.
std::string Duration(double seconds) {
  const double total = std::round(seconds);
  const double hours = std::floor(total / 3600);
  const double minutes = std::floor((total - 3600 * hours) / 60);
  return fmt::format("{:.0f}:{:02.0f}:{:02.0f}", hours, minutes,
                     total - 3600 * hours - 60 * minutes);
}

class HfStateReader {
 public:
  HfStateReader(const State& state, const ReaderContext& context)
      : state_(state), context_(context), source_(context.source) {}

  std::vector<Sample> Read() {
    if (!state_.top_is_object) {
      throw DataError(source_, 1, "",
                      "not a trainer_state.json: the top level is not a JSON object");
    }
    if (state_.history_line == 0) {
      throw DataError(source_, 0, std::string(kHistoryKey),
                      "missing: not a trainer_state.json (the Trainer keeps its logged metrics "
                      "there)");
    }
    if (!state_.history_is_list) {
      throw DataError(source_, state_.history_line, std::string(kHistoryKey),
                      "must be a list of dicts");
    }
    if (state_.bad_entry_line != 0) {
      throw DataError(source_, state_.bad_entry_line, std::string(kHistoryKey),
                      "every entry must be a dict");
    }
    global_step_ = OptionalCount(state_.top, "global_step", source_, /*zero_allowed=*/true);
    max_steps_ = OptionalCount(state_.top, "max_steps", source_);
    train_batch_size_ = OptionalCount(state_.top, "train_batch_size", source_);

    // The end-of-training summaries (one per train() call the state saw).
    std::vector<size_t> summaries;
    for (size_t i = 0; i < state_.history.size(); ++i) {
      const FieldsHfState& fields = state_.history[i].fields;
      if (Find(fields, "train_runtime") || Find(fields, "train_samples_per_second")) {
        summaries.push_back(i);
      }
    }
    std::vector<Sample> samples;
    size_t evals_from = 0;  // evaluations since the previous summary belong to this run
    for (const size_t i : summaries) {
      const bool last = i == summaries.back();
      samples.push_back(FromSummary(state_.history[i], last, EvaluationSeconds(evals_from, i)));
      evals_from = i + 1;
    }
    if (samples.empty()) {
      std::string where;
      if (global_step_ && max_steps_) {
        where = fmt::format(" (this one at global_step {} of max_steps {})", *global_step_,
                            *max_steps_);
      }
      throw DataError(
          source_, state_.history_line, "train_runtime",
          fmt::format("log_history has no end-of-training summary (train_runtime, "
                      "train_samples_per_second): the Trainer saves trainer_state.json without "
                      "one at every checkpoint{}, and its per-step entries hold no times; read "
                      "the trainer_state.json that trainer.save_state() writes after training, "
                      "or the console log (--input-format hf)",
                      where));
    }
    return samples;
  }

 private:
  struct Evaluations {
    int count = 0;
    double seconds = 0;
  };

  // The evaluations log_history lists among entries [from, to).
  Evaluations EvaluationSeconds(size_t from, size_t to) const {
    Evaluations e;
    for (size_t i = from; i < to; ++i) {
      const Scalar* s = Find(state_.history[i].fields, "eval_runtime");
      if (!s || !s->number || !std::isfinite(*s->number) || *s->number < 0) continue;
      ++e.count;
      e.seconds += *s->number;
    }
    return e;
  }

  Sample FromSummary(const EntryHfState& entry, bool last, const Evaluations& evaluations) const {
    const Scalar* runtime_field = Find(entry.fields, "train_runtime");
    if (!runtime_field) {
      throw DataError(source_, entry.line, "train_runtime",
                      "missing beside train_samples_per_second");
    }
    const double runtime_s = PositiveValue(*runtime_field, source_, "train_runtime");
    if (!max_steps_) {
      throw DataError(source_, 0, "max_steps",
                      "missing: the Trainer's rates are per max_steps steps, and without it "
                      "the steps of train_runtime are unknown");
    }
    const double max_steps = *max_steps_;
    // The steps the run took: the summary's step (global_step when it was logged).
    double steps = max_steps;
    const Scalar* steps_field = Find(entry.fields, "step");
    std::string_view steps_name = "step";
    if (steps_field) {
      steps = CountValue(*steps_field, source_, steps_name);
    } else if (last && global_step_) {
      steps_field = Find(state_.top, "global_step");
      steps_name = "global_step";
      steps = *global_step_;
      if (steps == 0) {
        throw DataError(source_, steps_field->line, std::string(steps_name),
                        "is 0, but log_history holds a training summary");
      }
    }
    if (steps > max_steps) {
      throw DataError(source_, steps_field ? steps_field->line : 0, std::string(steps_name),
                      fmt::format("{} exceeds max_steps {}", steps, max_steps));
    }

    const Scalar* sps_field = Find(entry.fields, "train_samples_per_second");
    const Scalar* steps_rate_field = Find(entry.fields, "train_steps_per_second");
    Sample s;
    s.source = context_.sample_source;
    s.line = sps_field ? sps_field->line : runtime_field->line;

    std::string no_batch;       // why the file does not give the batch
    std::string derived_batch;  // how it gives it
    double batch = 0;
    double sps = 0;
    if (!sps_field) {
      no_batch =
          "the summary has no train_samples_per_second, so the samples per step are "
          "unknown";
    } else {
      sps = PositiveValue(*sps_field, source_, "train_samples_per_second");
      if (steps_rate_field) CheckStepRate(*steps_rate_field, runtime_s, max_steps);
      // Samples per optimizer step, and how far the rounding of the printed
      // rate and runtime may move it.
      const double per_step = sps * runtime_s / max_steps;
      const double slack = per_step * (kRateHalfUnit / sps + kRuntimeHalfUnit / runtime_s + 1e-9);
      const double whole = std::round(per_step);
      const std::string derived = fmt::format(
          "train_samples_per_second x train_runtime / max_steps = {} x {} / {} = {:.6g} (+/- "
          "{:.2g} from the rounding) samples per optimizer step",
          sps, runtime_s, max_steps, per_step, slack);
      if (!steps_rate_field && std::fabs(per_step - 1) <= slack) {
        no_batch = fmt::format(
            "{}, and there is no train_steps_per_second: transformers versions that lacked it "
            "logged max_steps / train_runtime, steps per second, as train_samples_per_second",
            derived);
      } else if (slack >= 0.5) {
        no_batch = fmt::format("{}: the rounded numbers do not fix a whole batch", derived);
      } else if (whole < 1 || std::fabs(per_step - whole) > slack) {
        no_batch = fmt::format(
            "{}, not a whole number (a run given in epochs counts dataset size x epochs "
            "samples, so partial last batches make this an average)",
            derived);
      } else if (train_batch_size_ && std::fmod(whole, *train_batch_size_) != 0) {
        no_batch = fmt::format(
            "{}, not a multiple of train_batch_size {} (the batch of one process's "
            "dataloader)",
            derived, *train_batch_size_);
      } else {
        batch = whole;
        derived_batch = fmt::format("{}, so {}", derived, whole);
      }
    }

    if (batch > 0 && context_.attributes.batch && *context_.attributes.batch != batch) {
      throw DataError(source_, s.line, "batch",
                      fmt::format("PATH@batch={} contradicts the file: {} (the global batch of "
                                  "an optimizer step, all devices and accumulation steps "
                                  "together)",
                                  *context_.attributes.batch, derived_batch));
    }
    if (batch > 0) {
      s.batch = batch;
      // speed_metrics divides max_steps' samples by the runtime of the steps taken.
      s.throughput_sps = sps * steps / max_steps;
    } else {
      if (!context_.attributes.batch) {
        throw DataError(source_, s.line, "batch",
                        fmt::format("{}; give the global batch per optimizer step as "
                                    "PATH@batch=N",
                                    no_batch));
      }
      s.step_time_s = runtime_s / steps;  // the batch comes from the attribute
    }
    WarnAbout(s, runtime_s, steps, max_steps, evaluations);
    return s;
  }

  // train_steps_per_second is max_steps / train_runtime rounded to 3 decimals.
  void CheckStepRate(const Scalar& field, double runtime_s, double max_steps) const {
    const double rate = PositiveValue(field, source_, "train_steps_per_second");
    const double expected = max_steps / runtime_s;
    const double slack =
        kRateHalfUnit + expected * (kRuntimeHalfUnit / runtime_s) + 1e-9 * (1 + expected);
    if (std::fabs(rate - expected) > slack) {
      throw DataError(source_, field.line, "train_steps_per_second",
                      fmt::format("is {}, but max_steps / train_runtime = {} / {} = {:.6g}: "
                                  "the summary does not belong to this state's run",
                                  rate, max_steps, runtime_s, expected));
    }
  }

  void WarnAbout(const Sample& s, double runtime_s, double steps, double max_steps,
                 const Evaluations& evaluations) const {
    std::string message = fmt::format(
        "the sample is a whole-run average: train_runtime {} s ({}) includes start-up, the "
        "first steps' warm-up and checkpoint saving",
        runtime_s, Duration(runtime_s));
    if (evaluations.count > 0) {
      const double train_s = runtime_s - evaluations.seconds;
      message +=
          fmt::format(", and {} evaluation{} that log_history lists (eval_runtime {:.6g} s",
                      evaluations.count, evaluations.count == 1 ? "" : "s", evaluations.seconds);
      if (train_s <= 0) {
        message += ", as long as the run or longer: some ran outside it, e.g. before a resume)";
      } else if (s.throughput_sps) {
        message += fmt::format(", {:.3g}% of it; without them {:.4g} samples/s)",
                               100 * evaluations.seconds / runtime_s, s.batch * steps / train_s);
      } else {
        message += fmt::format(", {:.3g}% of it; without them {:.4g} s per step)",
                               100 * evaluations.seconds / runtime_s, train_s / steps);
      }
    }
    Warn(context_, s.line, message);
    if (steps < max_steps) {
      Warn(context_, s.line,
           fmt::format("training stopped at step {} of max_steps {} (early stopping?); the "
                       "Trainer's rates count all max_steps steps, so the sample is taken over "
                       "the {} steps done",
                       steps, max_steps, steps));
    }
    if (s.throughput_sps && train_batch_size_ && s.batch > *train_batch_size_) {
      Warn(context_, s.line,
           fmt::format("batch {} = {} x train_batch_size {}: processes, gradient accumulation "
                       "steps or both, which the file does not tell apart; devices = 1 unless "
                       "given as PATH@devices=N",
                       s.batch, s.batch / *train_batch_size_, *train_batch_size_));
    }
  }

  const State& state_;
  const ReaderContext& context_;
  const std::string& source_;
  std::optional<double> global_step_;
  std::optional<double> max_steps_;
  std::optional<double> train_batch_size_;
};

}  // namespace

bool LooksLikeHfState(std::string_view head) {
  if (StartsWith(head, "\xEF\xBB\xBF")) head.remove_prefix(3);
  if (!StartsWith(Trim(head), "{")) return false;
  constexpr std::string_view kQuotedKey = "\"log_history\"";
  for (size_t at = head.find(kQuotedKey); at != std::string_view::npos;
       at = head.find(kQuotedKey, at + 1)) {
    std::string_view rest = Trim(head.substr(at + kQuotedKey.size()));
    if (!StartsWith(rest, ":")) continue;
    if (StartsWith(Trim(rest.substr(1)), "[")) return true;
  }
  return false;
}

std::vector<Sample> ReadHfState(std::string_view text, const ReaderContext& context) {
  const State state = ParseState(text, context.source);
  return HfStateReader(state, context).Read();
}

}  // namespace fitspeed::io
