// Reader of the training lines of timm's train.py (huggingface/pytorch-image-models).
// Defined in docs/formats/timm.md. The line, from train_one_epoch in train.py:
//   Train: 3 [ 100/1251 (  8%)]  Loss: 6.91 (6.93)  Time: 0.345s,  742.10/s  (0.351s,  729.30/s)
//   LR: 1.000e-04  Data: 0.012 (0.015)
// "Time" is the wall time of one optimizer update (its latest value, then the
// mean since the epoch began); the rates are update_sample_count / time, where
// update_sample_count = per-device batch x accumulation steps x world size
// (train.py multiplies by args.world_size), i.e. samples/s over all devices.
// Forks print "Train: [3/300] [ 100/1251 ...]"; older train.py has the same fields.
#include <fmt/format.h>

#include <algorithm>
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

// Reads a whole number ("  100") that must fill `s` up to blanks.
std::optional<long long> WholeNumber(std::string_view s) {
  s = Trim(s);
  if (s.empty() || s.size() > 12) return std::nullopt;
  if (!std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return static_cast<long long>(*ToDouble(s));
}

// One "Train:" line.
struct TimmLine {
  int line = 0;
  long long epoch = 0;                 // as printed (timm counts from 0)
  long long index = 0;                 // update (or batch) index within the epoch, from 0
  long long total = 0;                 // updates per epoch
  Printed time_s;                      // latest update time
  Printed rate;                        // latest samples/s
  std::optional<Printed> mean_time_s;  // mean update time since the epoch began
  std::optional<Printed> mean_rate;    // samples of the latest update / mean_time_s
};

// Parses "<number><suffix>" such as "0.345s," or "742.10/s", or throws a
// DataError naming `field`.
Printed ParseSuffixed(std::string_view token, std::string_view suffix, const std::string& source,
                      int line, std::string_view field) {
  std::string_view rest;
  const auto number = LeadingPrinted(token, &rest);
  if (!number || rest != suffix) {
    throw DataError(
        source, line, std::string(field),
        fmt::format("expected a number followed by '{}', got '{}'", suffix, Excerpt(token)));
  }
  RequirePositive(number->value, source, line, field);
  return *number;
}

// Reads the line when it is a timm training line; nullopt for other text.
// A line that starts like one ("Train: 3 [ 100/1251") but whose times or
// rates cannot be read throws DataError.
std::optional<TimmLine> ParseTimmLine(std::string_view text, int line, const std::string& source) {
  const size_t at = text.find("Train: ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = Trim(text.substr(at + 7));
  TimmLine t;
  t.line = line;
  if (StartsWith(rest, "[")) {  // "[3/300] [ 100/1251 ...": the epoch and the epoch count
    const size_t close = rest.find(']');
    const size_t slash = rest.find('/');
    if (close == std::string_view::npos || slash == std::string_view::npos || slash > close) {
      return std::nullopt;
    }
    const auto epoch = WholeNumber(rest.substr(1, slash - 1));
    if (!epoch || !WholeNumber(rest.substr(slash + 1, close - slash - 1))) return std::nullopt;
    t.epoch = *epoch;
    rest = Trim(rest.substr(close + 1));
  } else {
    const size_t open = rest.find('[');
    if (open == std::string_view::npos) return std::nullopt;
    const auto epoch = WholeNumber(rest.substr(0, open));
    if (!epoch) return std::nullopt;
    t.epoch = *epoch;
    rest = rest.substr(open);
  }
  // "[ 100/1251 (  8%)]"
  if (!StartsWith(rest, "[")) return std::nullopt;
  const size_t close = rest.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view progress = rest.substr(1, close - 1);
  const size_t paren = progress.find('(');
  if (paren != std::string_view::npos) progress = progress.substr(0, paren);
  const size_t slash = progress.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto index = WholeNumber(progress.substr(0, slash));
  const auto total = WholeNumber(progress.substr(slash + 1));
  if (!index || !total) return std::nullopt;
  t.index = *index;
  t.total = *total;

  // From here on the line is a timm training line: its timing must be readable.
  rest = rest.substr(close + 1);
  const size_t time_at = rest.find("Time:");
  if (time_at == std::string_view::npos) {
    throw DataError(source, line, "Time", "a timm training line without 'Time: <s>s, <rate>/s'");
  }
  const std::vector<std::string_view> tokens = SplitBlank(rest.substr(time_at + 5));
  if (tokens.size() < 2) {
    throw DataError(source, line, "Time",
                    fmt::format("expected 'Time: <s>s, <rate>/s', got '{}'",
                                Excerpt(Trim(rest.substr(time_at)))));
  }
  t.time_s = ParseSuffixed(tokens[0], "s,", source, line, "Time");
  t.rate = ParseSuffixed(tokens[1], "/s", source, line, "rate");
  if (tokens.size() >= 4 && StartsWith(tokens[2], "(")) {
    t.mean_time_s = ParseSuffixed(tokens[2].substr(1), "s,", source, line, "Time (mean)");
    t.mean_rate = ParseSuffixed(tokens[3], "/s)", source, line, "rate (mean)");
  } else if (tokens.size() >= 3 && StartsWith(tokens[2], "(")) {
    throw DataError(source, line, "rate (mean)",
                    fmt::format("expected '(<s>s, <rate>/s)', got '{}'", Excerpt(tokens[2])));
  }
  return t;
}

// The world size from train.py's start-up line: "Training in distributed mode
// with multiple processes, 1 device per process.Process 0, total 8, device
// cuda:0." or "Training with a single process on 1 device (cuda:0)." (older:
// "... 1 GPU per process. Process 0, total 8." and "... on 4 GPUs.").
std::optional<int> ParseWorldSize(std::string_view text) {
  if (Contains(text, "Training in distributed mode")) {
    const size_t at = text.find("total ");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest;
    const auto n = LeadingPrinted(text.substr(at + 6), &rest);
    if (!n || n->half_unit != 0.5 || n->value < 1 || n->value > 1e6) return std::nullopt;
    return static_cast<int>(n->value);
  }
  if (Contains(text, "Training with a single process on ")) {
    const size_t at = text.find(" on ");
    std::string_view rest;
    const auto n = LeadingPrinted(text.substr(at + 4), &rest);
    if (!n || n->half_unit != 0.5 || n->value < 1 || n->value > 1e6) return std::nullopt;
    return static_cast<int>(n->value);
  }
  return std::nullopt;
}

// An interval [low, high] of a quantity known from rounded printouts.
struct IntervalTimm {
  double low = 0;
  double high = 0;
  bool Overlaps(const IntervalTimm& o) const { return low <= o.high && o.low <= high; }
  IntervalTimm Intersect(const IntervalTimm& o) const {
    return {std::max(low, o.low), std::min(high, o.high)};
  }
};

// The samples of the line's update, rate x time, with the bounds that the
// rounding of both printouts allows.
IntervalTimm UpdateSamples(const Printed& rate, const Printed& time_s) {
  return {
      std::max(0.0, rate.value - rate.half_unit) * std::max(0.0, time_s.value - time_s.half_unit),
      (rate.value + rate.half_unit) * (time_s.value + time_s.half_unit)};
}

IntervalTimm UpdateSamples(const TimmLine& t) {
  IntervalTimm samples = UpdateSamples(t.rate, t.time_s);
  if (t.mean_rate && t.mean_time_s) {
    const IntervalTimm from_mean = UpdateSamples(*t.mean_rate, *t.mean_time_s);
    if (samples.Overlaps(from_mean)) samples = samples.Intersect(from_mean);
  }
  return samples;
}

// The lines of one epoch of one run.
struct EpochLines {
  std::optional<int> devices;
  std::vector<TimmLine> lines;
};

class TimmReader {
 public:
  explicit TimmReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view text, int line) {
    if (const auto world = ParseWorldSize(text)) {
      devices_ = world;
      return;
    }
    const auto t = ParseTimmLine(text, line, context_.source);
    if (!t) return;
    // A new epoch when the epoch number changes; a new run also when the
    // index within the same epoch goes back.
    if (epochs_.empty() || epochs_.back().lines.back().epoch != t->epoch ||
        epochs_.back().lines.back().index >= t->index) {
      epochs_.push_back(EpochLines{devices_, {}});
    }
    epochs_.back().lines.push_back(*t);
  }

  std::vector<Sample> Finish() {
    std::vector<Sample> samples, dropped;
    for (const EpochLines& epoch : epochs_) {
      std::optional<Sample> s = EpochSample(epoch);
      if (!s) continue;
      (*s->epoch <= context_.options.skip_first_epochs ? dropped : samples)
          .push_back(std::move(*s));
    }
    if (samples.empty() && !dropped.empty()) {
      // A one-epoch log (the usual benchmarking run): its warm-up epoch is all
      // there is, so it is read, and said to hold the warm-up.
      Warn(context_, dropped.back().line,
           fmt::format("every epoch in the log ({}) is <= skip_first_epochs = {}, which holds "
                       "compilation and autotuning: read anyway, so the throughput may be low; "
                       "train more epochs for steady ones (--skip-epochs 0 keeps warm-up "
                       "epochs without this warning)",
                       dropped.size(), context_.options.skip_first_epochs));
      return dropped;
    }
    return samples;
  }

 private:
  // One sample per epoch: the throughput over the updates after the epoch's
  // first logged line, from the running means (see docs/formats/timm.md).
  std::optional<Sample> EpochSample(const EpochLines& epoch) const {
    const std::vector<TimmLine>& lines = epoch.lines;
    if (lines.size() < 2) return std::nullopt;
    const TimmLine& a = lines.front();
    // The lines whose update had as many samples as the first one's (a
    // partial last batch has fewer); their intersection bounds the batch.
    IntervalTimm batch = UpdateSamples(a);
    std::vector<const TimmLine*> consistent = {&a};
    for (size_t j = 1; j < lines.size(); ++j) {
      const IntervalTimm samples = UpdateSamples(lines[j]);
      if (samples.Overlaps(batch) && lines[j].index > consistent.back()->index) {
        batch = batch.Intersect(samples);
        consistent.push_back(&lines[j]);
      }
    }
    Sample s;
    s.source = context_.sample_source;
    s.epoch = static_cast<int>(std::min<long long>(a.epoch, 1000000000 - 1)) + 1;
    if (epoch.devices) s.devices = *epoch.devices;
    s.batch = BatchOf(batch, a.line);

    const TimmLine& last = lines.back();
    if (consistent.size() >= 2 && a.mean_rate && consistent.back()->mean_rate) {
      // Mean update time t(k) over updates 0..k is printed as c/r(k), so the
      // updates (i_a, i_b] took c * ((i_b+1)/r_b - (i_a+1)/r_a) and processed
      // c * (i_b - i_a) samples: c cancels.
      const TimmLine& b = *consistent.back();
      const double span = static_cast<double>(b.index - a.index);
      const double denominator = (static_cast<double>(b.index) + 1) / b.mean_rate->value -
                                 (static_cast<double>(a.index) + 1) / a.mean_rate->value;
      s.line = b.line;
      s.throughput_sps = Checked(span / denominator, b, a, "rate (mean)");
    } else if (consistent.size() >= 2 && !a.mean_rate) {
      // No running means printed: the harmonic mean of the latest rates after
      // the first line (each is one update of the same size).
      double inverse_sum = 0;
      for (size_t j = 1; j < consistent.size(); ++j) inverse_sum += 1 / consistent[j]->rate.value;
      s.line = consistent.back()->line;
      s.throughput_sps = static_cast<double>(consistent.size() - 1) / inverse_sum;
    } else if (a.mean_time_s && last.mean_time_s && last.index > a.index) {
      // The updates after the first line differ in size (a partial last
      // batch): the mean update time over (i_a, i_last] from the mean times.
      const double span = static_cast<double>(last.index - a.index);
      const double total_s = (static_cast<double>(last.index) + 1) * last.mean_time_s->value -
                             (static_cast<double>(a.index) + 1) * a.mean_time_s->value;
      s.line = last.line;
      s.step_time_s = Checked(total_s / span, last, a, "Time (mean)");
    } else {
      return std::nullopt;
    }
    return s;
  }

  double Checked(double value, const TimmLine& b, const TimmLine& a, const char* field) const {
    if (!(value > 0) || !std::isfinite(value)) {
      throw DataError(context_.source, b.line, field,
                      fmt::format("the running mean does not fit the one on line {} (the "
                                  "updates between them would take no time)",
                                  a.line));
    }
    return value;
  }

  // The global batch: PATH@batch=N when given (checked against the log), else
  // the one whole number that rate x time allows, else 0 (ask the user).
  double BatchOf(const IntervalTimm& samples, int line) const {
    // Slack for the rounding of the products themselves.
    const IntervalTimm slack{samples.low * (1 - 1e-9), samples.high * (1 + 1e-9)};
    if (const auto& given = context_.attributes.batch) {
      if (*given < slack.low || *given > slack.high) {
        throw DataError(context_.source, line, "batch",
                        fmt::format("batch={} contradicts the log: rate x time gives {:.4g} to "
                                    "{:.4g} samples per update; timm's rates count all devices, "
                                    "so give the global batch (per-device batch x devices x "
                                    "accumulation steps)",
                                    *given, samples.low, samples.high));
      }
      return *given;
    }
    const double low = std::ceil(slack.low);
    const double high = std::floor(slack.high);
    if (low == high && low >= 1) return low;
    return 0;
  }

  const ReaderContext& context_;
  std::optional<int> devices_;
  std::vector<EpochLines> epochs_;
};

}  // namespace

bool LooksLikeTimm(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.Next(line)) {
    try {
      if (ParseTimmLine(line, cursor.number(), "")) return true;
    } catch (const DataError&) {
      // A line that starts like timm's but is broken: keep looking.
    }
  }
  return false;
}

std::vector<Sample> ReadTimm(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<TimmReader>(lines, context);
}

}  // namespace fitspeed::io
