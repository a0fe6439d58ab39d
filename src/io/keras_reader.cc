// Reader of the text Keras prints during model.fit: "Epoch 3/20" headers and
// progress bars. Defined in docs/formats/keras.md. Formats from the Progbar
// classes of keras (keras/utils/generic_utils.py, Keras 2), tf.keras
// (tensorflow/python/keras/utils/generic_utils.py) and Keras 3
// (keras/src/utils/progbar.py):
//   verbose 1:  "1563/1563 [======] - 45s 29ms/step - loss: 1.2"   (Keras 2 / tf.keras)
//               "1563/1563 ━━━━━━━━ 45s 29ms/step - loss: 1.2"     (Keras 3, with ANSI codes)
//               "50000/50000 [=====] - 45s 900us/sample - loss"    (tf.keras 1.x on arrays)
//   verbose 2:  "1563/1563 - 45s - loss: 1.2 - 45s/epoch - 29ms/step"   (tf.keras 2.x)
//               "1563/1563 - 45s - 29ms/step - loss: 1.2"              (Keras 3)
//               " - 45s - loss: 1.2"                                   (Keras 2.0-2.2)
// Verbose 1 redraws the bar with '\b' and '\r' (or a new line when stdout is
// not a terminal); only the last redraw that reaches M/M ends an epoch.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 15 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "Epoch 3/20" -> (3, 20).
std::optional<std::pair<int, int>> ParseEpochHeader(std::string_view t) {
  if (!StartsWith(t, "Epoch ")) return std::nullopt;
  const std::string_view rest = Trim(t.substr(6));
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view n = rest.substr(0, slash);
  const std::string_view m = rest.substr(slash + 1);
  if (!AllDigits(n) || !AllDigits(m) || n.size() > 9 || m.size() > 9) return std::nullopt;
  return std::make_pair(static_cast<int>(*ToDouble(n)), static_cast<int>(*ToDouble(m)));
}

// What a fit() call announces before its first epoch (Keras 2 and tf.keras 1.x/2.0-2.1):
// "Train on 55000 samples, validate on 5000 samples" or "Train for 100 steps, ...".
struct TrainHeader {
  bool samples = false;  // the bar counts samples, not steps
  double count = 0;
};

std::optional<TrainHeader> ParseTrainHeader(std::string_view t) {
  TrainHeader header;
  std::string_view rest;
  if (StartsWith(t, "Train on ")) {
    header.samples = true;
    rest = t.substr(9);
  } else if (StartsWith(t, "Train for ")) {
    rest = t.substr(10);
  } else {
    return std::nullopt;
  }
  const std::vector<std::string_view> words = SplitBlank(rest);
  if (words.size() < 2 || !AllDigits(words[0])) return std::nullopt;
  const std::string_view unit = words[1];
  if (!StartsWith(unit, header.samples ? "samples" : "steps")) return std::nullopt;
  header.count = *ToDouble(words[0]);
  return header;
}

// One redraw of a progress bar, reduced to what timing needs.
struct Bar {
  int line = 0;
  bool has_counter = false;  // starts with "current/target"
  double current = 0;
  std::optional<double> target;       // empty for "/Unknown" and for counter-less bars
  bool eta = false;                   // "ETA:" (tf.keras and Keras 2 before the final redraw)
  std::optional<Printed> elapsed_s;   // "45s": seconds since the epoch began
  std::optional<Printed> per_unit_s;  // "29ms/step", "900us/sample", in seconds
  bool per_sample = false;            // per_unit_s is per sample
  std::optional<Printed> epoch_s;     // "45s/epoch" (tf.keras 2.x verbose 2)
  std::string bad_token;              // first timing field that is not a time

  // The last redraw of an epoch: the counter reached its target (or the
  // target is unknown, or there is no counter), and no ETA is shown.
  bool Complete() const {
    if (eta) return false;
    if (!has_counter || !target) return true;
    return current >= *target;
  }
};

bool IsBarGlyphs(std::string_view token) {
  if (token.size() >= 2 && token.front() == '[' && token.back() == ']') return true;
  return StartsWith(token, "\xe2\x94\x81");  // U+2501 '━', Keras 3's bar
}

// Reads a timing token ("45s", "29ms/step", "900us/sample", "45s/epoch") into
// `bar`; returns false when the token is not a time.
bool ReadTimeToken(std::string_view token, Bar& bar) {
  std::string_view unit;
  const auto number = LeadingPrinted(token, &unit);
  if (!number) return false;
  std::string_view per;
  const size_t slash = unit.find('/');
  if (slash != std::string_view::npos) {
    per = unit.substr(slash + 1);
    unit = unit.substr(0, slash);
  }
  double scale = 0;
  if (unit == "s") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "us" || unit == "\xc2\xb5s") {
    scale = 1e-6;
  } else {
    return false;
  }
  const Printed seconds{number->value * scale, number->half_unit * scale};
  if (slash == std::string_view::npos) {
    if (scale != 1) return false;
    if (!bar.elapsed_s) bar.elapsed_s = seconds;
  } else if (per == "step" || per == "sample") {
    bar.per_unit_s = seconds;
    bar.per_sample = per == "sample";
  } else if (per == "epoch") {
    bar.epoch_s = seconds;
  } else {
    return false;
  }
  return true;
}

// Parses one redraw; nullopt when the text is not a progress bar.
std::optional<Bar> ParseBar(std::string_view t, int line) {
  const std::vector<std::string_view> tokens = SplitBlank(t);
  if (tokens.empty()) return std::nullopt;
  Bar bar;
  bar.line = line;
  size_t k = 0;
  const size_t slash = tokens[0].find('/');
  if (slash != std::string_view::npos) {
    const std::string_view current = tokens[0].substr(0, slash);
    const std::string_view target = tokens[0].substr(slash + 1);
    if (!AllDigits(current) || !(AllDigits(target) || target == "Unknown")) return std::nullopt;
    bar.has_counter = true;
    bar.current = *ToDouble(current);
    if (target != "Unknown") bar.target = *ToDouble(target);
    if (bar.target && *bar.target <= 0) return std::nullopt;
    k = 1;
    // After the counter comes the bar, a " - " separator or a time; a bare
    // "12/50" is something else.
    if (tokens.size() < 2) return std::nullopt;
    Bar probe;
    if (!IsBarGlyphs(tokens[1]) && tokens[1] != "-" && !ReadTimeToken(tokens[1], probe)) {
      return std::nullopt;
    }
  } else if (tokens[0] == "-" && tokens.size() >= 2) {
    // Keras 2.0-2.2 verbose 2: " - 45s - loss: ..." without a counter.
    Bar probe;
    if (!ReadTimeToken(tokens[1], probe) || !probe.elapsed_s) return std::nullopt;
  } else {
    return std::nullopt;
  }
  for (; k < tokens.size(); ++k) {
    const std::string_view token = tokens[k];
    if (token == "-" || IsBarGlyphs(token)) continue;
    if (token == "ETA:") {
      bar.eta = true;
      ++k;  // the ETA itself ("45s", "1:02", "1:02:03")
      continue;
    }
    if (EndsWith(token, ":")) {
      ++k;  // a metric and its value
      continue;
    }
    const char c = token.front();
    if ((c >= '0' && c <= '9') || c == '.') {
      if (!ReadTimeToken(token, bar) && bar.bad_token.empty()) bar.bad_token = std::string(token);
    }
  }
  return bar;
}

// The bars of one "Epoch N/M" block.
struct Block {
  int epoch = 0;
  int header_line = 0;
  bool seen_counter = false;
  std::optional<double> target;  // of the block's first counted bar
  std::optional<Bar> final_bar;  // the last complete redraw so far
  bool closed = false;           // another progress bar (evaluate, predict) began
};

// One model.fit call: the epochs that follow a "Train on ..." header or whose
// numbering continues.
struct Run {
  std::optional<TrainHeader> header;
};

class KerasParser {
 public:
  explicit KerasParser(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view raw, int line) {
    // Keras 3 colours the bar; Keras erases the previous redraw with backspaces.
    const std::string_view t = Trim(StripTerminalCodes(raw, buffer_));
    if (t.empty()) return;
    if (const auto header = ParseEpochHeader(t)) {
      StartEpoch(header->first, header->second, line);
    } else if (const auto train = ParseTrainHeader(t)) {
      pending_header_ = train;
    } else if (block_ && !block_->closed) {
      if (const auto bar = ParseBar(t, line)) AddBar(*bar);
    }
  }

  std::vector<Sample> Finish() {
    CloseBlock();
    if (samples_.empty() && !dropped_.empty()) {
      // A log of warm-up epochs only (a one-epoch run): read them, and say so.
      Warn(context_, dropped_.back().line,
           fmt::format("every epoch in the log ({}) is <= skip_first_epochs = {}, so they are "
                       "read anyway, but they include compilation and warm-up: the throughput "
                       "is a lower bound (--skip-epochs 0 keeps them without this warning)",
                       dropped_.size(), context_.options.skip_first_epochs));
      return std::move(dropped_);
    }
    return std::move(samples_);
  }

 private:
  void StartEpoch(int epoch, int total, int line) {
    CloseBlock();
    // A new fit() call: numbering restarts, the total changes, or a "Train on"
    // header came since the last epoch.
    if (!run_ || epoch <= last_epoch_ || total != last_total_ || pending_header_) {
      run_ = Run{pending_header_};
      pending_header_.reset();
    }
    last_epoch_ = epoch;
    last_total_ = total;
    block_ = Block{};
    block_->epoch = epoch;
    block_->header_line = line;
  }

  void AddBar(const Bar& bar) {
    Block& block = *block_;
    if (bar.has_counter) {
      if (!block.seen_counter) {
        block.seen_counter = true;
        block.target = bar.target;
      } else if (bar.target != block.target ||
                 (block.final_bar && bar.target && bar.current < *bar.target)) {
        // A bar with another target, or one that starts over after the epoch
        // completed: model.evaluate or model.predict after fit.
        block.closed = true;
        return;
      }
    }
    if (bar.Complete()) block.final_bar = bar;
  }

  void CloseBlock() {
    if (block_ && block_->final_bar) Emit(*block_, *block_->final_bar);
    block_.reset();
  }

  // The epoch time of the final bar: the elapsed seconds ("45s"), the epoch
  // time ("358ms/epoch", tf.keras 2 verbose 2) or the time per step (or
  // sample) times the count, whichever is printed with the smallest relative
  // rounding error (Keras prints each with no decimals); a tie keeps the
  // earlier one in that order.
  double EpochTime(const Block& block, const Bar& bar, std::optional<double> count) const {
    std::optional<Printed> best;
    double scale = 1;
    auto consider = [&](const std::optional<Printed>& time, double times) {
      if (!time || time->value <= 0 || !(times > 0)) return;
      if (!best || time->RelativeError() < best->RelativeError()) {
        best = time;
        scale = times;
      }
    };
    consider(bar.elapsed_s, 1);
    consider(bar.epoch_s, 1);
    if (count) consider(bar.per_unit_s, *count);
    if (best) return best->value * scale;
    throw DataError(context_.source, bar.line, "epoch_time",
                    fmt::format("the progress bar that ends epoch {} (header on line {}) shows "
                                "no time above 0 s",
                                block.epoch, block.header_line));
  }

  void Emit(const Block& block, const Bar& bar) {
    const std::string& source = context_.source;
    if (!bar.bad_token.empty()) {
      throw DataError(source, bar.line, "time",
                      fmt::format("expected a time such as '45s' or '29ms/step' in the progress "
                                  "bar that ends epoch {}, got '{}'",
                                  block.epoch, Excerpt(bar.bad_token)));
    }
    const std::optional<double> count =
        bar.has_counter ? std::optional<double>(bar.current) : std::nullopt;
    const Attributes& attributes = context_.attributes;
    const std::optional<TrainHeader>& header = run_->header;
    // The bar counts samples when its unit says so, when the fit() call
    // announced "Train on N samples", or when the count equals the samples
    // the user gave (a log cut before its "Train on" line).
    const bool counts_samples =
        bar.per_sample || (header && header->samples) ||
        (count && attributes.samples_per_epoch && *count == *attributes.samples_per_epoch);

    Sample s;
    s.source = context_.sample_source;
    s.line = bar.line;
    s.epoch = block.epoch;
    s.epoch_time_s = EpochTime(block, bar, count);
    if (counts_samples && count) {
      s.samples_per_epoch = *count;
    } else if (!count) {
      // No counter (Keras 2.0-2.2 verbose 2): the samples come from the
      // "Train on N samples" header or from PATH@samples=N.
      if (header && header->samples) s.samples_per_epoch = header->count;
    } else if (attributes.batch && attributes.samples_per_epoch) {
      s.steps_rule = StepsRuleOf(*count, *attributes.samples_per_epoch, *attributes.batch, bar);
    } else if (attributes.batch) {
      // M full steps of the batch: exact whatever the steps rule.
      s.samples_per_epoch = *count * *attributes.batch;
    }
    if (block.epoch <= context_.options.skip_first_epochs) {
      dropped_.push_back(std::move(s));
      return;
    }
    samples_.push_back(std::move(s));
  }

  // The steps rule under which N samples at batch b make the M steps the log
  // shows; throws DataError when neither rule does.
  StepsRule StepsRuleOf(double steps, double samples, double batch, const Bar& bar) const {
    const double partial = std::ceil(samples / batch);
    const double dropped = std::floor(samples / batch);
    if (steps == partial) return StepsRule::kKeepPartial;
    if (steps == dropped) return StepsRule::kDropRemainder;
    throw DataError(context_.source, bar.line, "samples",
                    fmt::format("the log shows {} steps per epoch, but samples={} at batch={} "
                                "makes {} steps (last batch partial) or {} (remainder "
                                "dropped); check PATH@batch=...,samples=...",
                                steps, samples, batch, partial, dropped));
  }

  const ReaderContext& context_;
  std::string buffer_;  // a line without terminal codes, when it had some
  std::optional<Block> block_;
  std::optional<Run> run_;
  std::optional<TrainHeader> pending_header_;
  int last_epoch_ = 0;
  int last_total_ = 0;
  std::vector<Sample> samples_;
  std::vector<Sample> dropped_;  // warm-up epochs (<= skip_first_epochs)
};

}  // namespace

bool LooksLikeKeras(std::string_view head) {
  LineCursor cursor(head);
  std::string_view raw;
  bool header = false;
  std::string buffer;
  while (cursor.Next(raw)) {
    const std::string_view t = Trim(StripTerminalCodes(raw, buffer));
    if (ParseEpochHeader(t)) {
      header = true;
    } else if (header) {
      const auto bar = ParseBar(t, cursor.number());
      if (bar && (bar->eta || bar->elapsed_s || bar->per_unit_s)) return true;
    }
  }
  return false;
}

std::vector<Sample> ReadKeras(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<KerasParser>(lines, context);
}

}  // namespace fitspeed::io
