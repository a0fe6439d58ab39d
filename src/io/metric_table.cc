// Metric tables of training tools: parsing, metric names, and the samples of a
// series. Defined in docs/formats/lightning.md ("Which numbers"), keras-csv.md
// and wandb.md.
#include "metric_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr size_t kSnifferHeadSize = 64 * 1024;  // what DetectFormat passes at most
// Bounds that keep conversions to int exact and defined.
constexpr double kMaxStep = 9007199254740992.0;  // 2^53
constexpr double kMaxEpochMetricTable = 1e9;
// A clock difference whose rounding exceeds this share of it is reported.
constexpr double kMaxClockRounding = 0.05;

bool OneOfMetricTable(std::string_view s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

// --- Metric names ------------------------------------------------------------

// Lower-case words of a name: runs of letters, digits and non-ASCII bytes.
std::vector<std::string> WordsOf(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 128) {
      word += static_cast<char>(std::tolower(u));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string JoinMetricTable(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& w : words) joined += (joined.empty() ? "" : "_") + w;
  return joined;
}

std::optional<double> TimeUnitSecondsMetricTable(std::string_view w) {
  if (OneOfMetricTable(w, {"s", "sec", "secs", "second", "seconds"})) return 1.0;
  if (OneOfMetricTable(w, {"ms", "msec", "msecs", "millisecond", "milliseconds"})) return 1e-3;
  if (OneOfMetricTable(w, {"us", "usec", "usecs", "microsecond", "microseconds"})) return 1e-6;
  if (OneOfMetricTable(w, {"ns", "nanosecond", "nanoseconds"})) return 1e-9;
  if (OneOfMetricTable(w, {"min", "mins", "minute", "minutes"})) return 60.0;
  if (OneOfMetricTable(w, {"h", "hr", "hrs", "hour", "hours"})) return 3600.0;
  return std::nullopt;
}

bool IsSampleWordMetricTable(std::string_view w) {
  return OneOfMetricTable(w, {"samples", "sample", "images", "image", "img", "imgs", "examples",
                              "example", "sequences", "sequence", "seq", "seqs"});
}

// Tokens, and ThroughputMonitor's items (whatever its length_fn counts).
bool IsTokenWord(std::string_view w) {
  return OneOfMetricTable(w, {"tokens", "token", "tok", "toks", "items", "item"});
}

bool IsEvaluationWord(std::string_view w) {
  return OneOfMetricTable(w, {"val", "valid", "validation", "eval", "evaluation", "test"});
}

bool IsQualifier(std::string_view w) {
  return OneOfMetricTable(w, {"train", "training", "mean", "avg", "average", "global"});
}

// Kind and scale of a name's words (without path segments), or nullopt.
std::optional<MetricName> MatchWords(const std::vector<std::string>& original) {
  // Clocks by their whole name: "train_runtime" (Hugging Face's whole-run
  // time) is not "runtime".
  {
    double seconds = 1;
    int units = 0;
    std::vector<std::string> stem;
    for (const std::string& w : original) {
      if (const auto s = TimeUnitSecondsMetricTable(w)) {
        seconds = *s;
        ++units;
      } else {
        stem.push_back(w);
      }
    }
    if (units <= 1 &&
        OneOfMetricTable(JoinMetricTable(stem),
                         {"runtime", "elapsed", "elapsed_time", "time_elapsed", "timestamp",
                          "time_stamp", "wall_time", "walltime", "wall_clock", "wallclock"})) {
      MetricName m;
      m.kind = MetricKind::kClock;
      m.scale = seconds;
      return m;
    }
  }
  std::vector<std::string> w = original;
  while (w.size() > 1 && IsQualifier(w.front())) w.erase(w.begin());
  // Rates: WORD per UNIT, optionally after "throughput"; "sps".
  {
    std::vector<std::string> r = w;
    if (r.size() > 1 && r.front() == "throughput") r.erase(r.begin());
    MetricName m;
    m.kind = MetricKind::kRate;
    if (r.size() == 1 && r[0] == "sps") return m;
    if (r.size() == 3 && r[1] == "per" && (IsSampleWordMetricTable(r[0]) || IsTokenWord(r[0]))) {
      if (const auto seconds = TimeUnitSecondsMetricTable(r[2])) {
        m.scale = 1.0 / *seconds;
        m.tokens = IsTokenWord(r[0]);
        return m;
      }
    }
  }
  // Durations: one time unit at most, as a word anywhere in the name.
  double seconds = 1;
  int units = 0;
  std::vector<std::string> stem;
  for (const std::string& word : w) {
    if (const auto s = TimeUnitSecondsMetricTable(word)) {
      seconds = *s;
      ++units;
    } else {
      stem.push_back(word);
    }
  }
  if (units > 1) return std::nullopt;
  const std::string joined = JoinMetricTable(stem);
  MetricName m;
  m.scale = seconds;
  if (OneOfMetricTable(
          joined, {"step_time", "time_per_step", "step_duration", "batch_time", "time_per_batch",
                   "iteration_time", "iter_time", "time_per_iteration", "time_per_iter"}) ||
      (units == 1 &&
       OneOfMetricTable(joined, {"per_step", "per_batch", "per_iteration", "per_iter"}))) {
    m.kind = MetricKind::kStepTime;
    return m;
  }
  if (OneOfMetricTable(joined, {"epoch_time", "time_per_epoch", "epoch_duration"}) ||
      (units == 1 && joined == "per_epoch")) {
    m.kind = MetricKind::kEpochTime;
    return m;
  }
  return std::nullopt;
}

// --- Series ------------------------------------------------------------------

// A whole number in [0, max] from a cell, nullopt when the cell is empty.
std::optional<double> WholeCell(const std::string& cell, double max, const std::string& source,
                                int line, const std::string& field) {
  if (cell.empty()) return std::nullopt;
  const double value = ParseNumber(cell, source, line, field);
  if (!(value >= 0 && value <= max) || value != std::floor(value)) {
    throw DataError(source, line, field,
                    fmt::format("must be a whole number >= 0, got '{}'", Excerpt(cell)));
  }
  return value;
}

// A finite number >= 0 from a clock cell.
std::optional<double> ClockCell(const std::string& cell, const std::string& source, int line,
                                const std::string& field) {
  if (cell.empty()) return std::nullopt;
  const double value = ParseNumber(cell, source, line, field);
  if (std::isnan(value)) throw DataError(source, line, field, "is NaN");
  if (std::isinf(value)) throw DataError(source, line, field, "is infinite");
  if (value < 0) {
    throw DataError(source, line, field,
                    fmt::format("a clock must be >= 0 (seconds since the start or a Unix "
                                "timestamp), got {}",
                                value));
  }
  return value;
}

std::optional<double> PositiveCell(const std::string& cell, const std::string& source, int line,
                                   const std::string& field) {
  if (cell.empty()) return std::nullopt;
  return ParsePositive(cell, source, line, field);
}

bool HasValue(const std::string& cell) {
  return !cell.empty() && ToLower(cell) != "nan";  // pandas writes a missing value as empty
}

// What ReadSeries shares between the kinds of observation.
class SeriesReader {
 public:
  SeriesReader(const CsvTable& table, const Series& series, const ReaderContext& context,
               std::string_view format)
      : table_(table), series_(series), context_(context), format_(format) {
    // evaluation_before_[i]: evaluation rows among rows [0, i).
    evaluation_before_.assign(table.rows.size() + 1, 0);
    for (size_t i = 0; i < table.rows.size(); ++i) {
      const bool evaluation =
          std::any_of(series.evaluation_columns.begin(), series.evaluation_columns.end(),
                      [&](int c) { return HasValue(table.rows[i].cells[static_cast<size_t>(c)]); });
      evaluation_before_[i + 1] = evaluation_before_[i] + (evaluation ? 1 : 0);
    }
  }

  std::vector<Sample> Read() {
    switch (series_.observation.kind) {
      case Observation::kStepTime:
      case Observation::kThroughput:
        return PerRow();
      case Observation::kClock:
        return FromClock();
      case Observation::kEpochTime:
      case Observation::kEpochClock:
        return PerEpoch();
    }
    return {};
  }

 private:
  const std::string& source() const { return context_.source; }
  const std::string& Name(int column) const { return series_.names[static_cast<size_t>(column)]; }
  const std::string& Cell(size_t row, int column) const {
    return table_.rows[row].cells[static_cast<size_t>(column)];
  }
  int Line(size_t row) const { return table_.rows[row].line; }

  // Evaluation rows among rows (a, b].
  bool EvaluationBetween(size_t a, size_t b) const {
    return evaluation_before_[b + 1] > evaluation_before_[a + 1];
  }
  // The first evaluation row in (a, b], for messages.
  size_t FirstEvaluation(size_t a, size_t b) const {
    for (size_t i = a + 1; i <= b; ++i) {
      if (evaluation_before_[i + 1] > evaluation_before_[i]) return i;
    }
    return b;
  }
  // The evaluation column with a value on `row`, for messages.
  std::string EvaluationColumnOn(size_t row) const {
    for (int c : series_.evaluation_columns) {
      if (HasValue(Cell(row, c))) return Name(c);
    }
    return "";
  }

  std::optional<int> Epoch(size_t row) const {
    if (series_.epoch_column < 0) return std::nullopt;
    const auto value = WholeCell(Cell(row, series_.epoch_column), kMaxEpochMetricTable, source(),
                                 Line(row), Name(series_.epoch_column));
    if (!value) return std::nullopt;
    return static_cast<int>(*value) + (series_.zero_based_epochs ? 1 : 0);
  }

  std::optional<double> Step(size_t row) const {
    if (series_.step_column < 0) return std::nullopt;
    return WholeCell(Cell(row, series_.step_column), kMaxStep, source(), Line(row),
                     Name(series_.step_column));
  }

  Sample NewSample(size_t row) const {
    Sample s;
    s.source = context_.sample_source;
    s.line = Line(row);
    s.label = series_.label;
    s.epoch = Epoch(row);
    return s;
  }

  // Step times or rates, one per row; the first row is warm-up (with a row
  // per epoch: the epochs <= skip_first_epochs).
  std::vector<Sample> PerRow() {
    const ObservationColumn& o = series_.observation;
    std::vector<Sample> samples;
    samples.reserve(table_.rows.size());
    int first_line = 0, dropped_epochs = 0;
    for (size_t i = 0; i < table_.rows.size(); ++i) {
      const auto value = PositiveCell(Cell(i, o.column), source(), Line(i), Name(o.column));
      if (!value) continue;
      const double scaled = RequirePositive(*value * o.scale, source(), Line(i), Name(o.column));
      Sample s = NewSample(i);
      if (series_.one_row_per_epoch && s.epoch) {
        if (*s.epoch <= context_.options.skip_first_epochs) {
          ++dropped_epochs;
          first_line = Line(i);
          continue;
        }
      } else if (first_line == 0) {
        first_line = Line(i);  // warm-up: compilation, autotuning, loader start
        continue;
      }
      if (o.kind == Observation::kStepTime) {
        s.step_time_s = scaled;
      } else {
        s.throughput_sps = scaled;
      }
      samples.push_back(std::move(s));
    }
    if (samples.empty() && dropped_epochs > 0) {
      throw DataError(
          source(), first_line, "epoch",
          fmt::format("{}: every epoch with a value of '{}' ({}) is <= "
                      "skip_first_epochs = {}, which drops the compilation/warm-up "
                      "epochs; train more epochs, or keep them with --skip-epochs 0",
                      format_, Name(o.column), dropped_epochs, context_.options.skip_first_epochs));
    }
    if (samples.empty()) {
      throw DataError(source(), first_line, Name(o.column),
                      fmt::format("{}: the only value of '{}' is the first one, which is dropped "
                                  "as warm-up; no sample is left",
                                  format_, Name(o.column)));
    }
    return samples;
  }

  // Step times from a clock: dclock / dstep between consecutive logging points.
  std::vector<Sample> FromClock() {
    const ObservationColumn& o = series_.observation;
    const std::string& clock_name = Name(o.column);
    const std::string& step_name = Name(series_.step_column);
    struct Point {
      size_t row;
      double step;
      double clock;
    };
    std::vector<Point> points;
    for (size_t i = 0; i < table_.rows.size(); ++i) {
      const auto clock = ClockCell(Cell(i, o.column), source(), Line(i), clock_name);
      const auto step = Step(i);
      if (clock && step) points.push_back({i, *step, *clock});
    }
    // Loggers print floats in their shortest exact form, so the digits say
    // nothing of the clock's resolution, except when every value is whole:
    // a clock kept in whole seconds (older wandb's _runtime) is +-0.5 s.
    const bool whole_seconds = std::all_of(points.begin(), points.end(), [](const Point& p) {
      return p.clock == std::floor(p.clock);
    });
    // The logging period: the most common step difference (the smallest on a tie).
    std::map<double, int> differences;
    for (size_t k = 1; k < points.size(); ++k) {
      const double d = points[k].step - points[k - 1].step;
      if (d > 0) ++differences[d];
    }
    if (differences.empty()) {
      throw DataError(source(), points.empty() ? table_.header_line : Line(points.back().row),
                      clock_name,
                      fmt::format("{}: fewer than two rows have both '{}' and '{}' at "
                                  "different steps, so no step time can be derived",
                                  format_, step_name, clock_name));
    }
    double period = 0;
    int most = 0;
    for (const auto& [d, n] : differences) {
      if (n > most) {
        period = d;
        most = n;
      }
    }

    std::vector<Sample> samples;
    samples.reserve(points.size());
    int warm_up_line = 0;
    int gaps = 0, first_gap = 0;
    int evaluations = 0, first_evaluation = 0;
    int stalls = 0, first_stall = 0;
    int backwards = 0, first_backwards = 0;
    double worst_rounding = 0;
    int worst_rounding_line = 0;
    for (size_t k = 1; k < points.size(); ++k) {
      const Point& a = points[k - 1];
      const Point& b = points[k];
      const int line = Line(b.row);
      const double dstep = b.step - a.step;
      if (dstep == 0) continue;  // another row of the same step (evaluation, epoch end)
      if (dstep < 0) {
        if (backwards++ == 0) first_backwards = line;
        continue;
      }
      if (warm_up_line == 0) {
        warm_up_line = line;  // the first interval: warm-up
        continue;
      }
      if (dstep != period) {
        if (gaps++ == 0) first_gap = line;
        continue;
      }
      if (EvaluationBetween(a.row, b.row)) {
        if (evaluations++ == 0) first_evaluation = static_cast<int>(FirstEvaluation(a.row, b.row));
        continue;
      }
      const double dclock = b.clock - a.clock;
      if (!(dclock > 0)) {
        if (stalls++ == 0) first_stall = line;
        continue;
      }
      const double rounding = whole_seconds ? 1.0 / dclock : 0.0;
      if (rounding > worst_rounding) {
        worst_rounding = rounding;
        worst_rounding_line = line;
      }
      Sample s = NewSample(b.row);
      s.step_time_s = RequirePositive(dclock * o.scale / dstep, source(), line, clock_name);
      samples.push_back(std::move(s));
    }

    const std::string period_text = fmt::format("{:g}", period);
    if (gaps > 0) {
      Warn(context_, first_gap,
           fmt::format("{} interval(s) skipped, from this line on: their '{}' difference is not "
                       "the logging period {} (rows missing between them, a sampled export or a "
                       "restart), so they are not consecutive logging points",
                       gaps, step_name, period_text));
    }
    if (evaluations > 0) {
      const size_t row = static_cast<size_t>(first_evaluation);
      Warn(context_, Line(row),
           fmt::format("{} interval(s) skipped: evaluation ran within them ('{}' has a value on "
                       "this line, the first of them)",
                       evaluations, EvaluationColumnOn(row)));
    }
    if (stalls > 0) {
      Warn(context_, first_stall,
           fmt::format("{} interval(s) skipped, from this line on: '{}' did not advance", stalls,
                       clock_name));
    }
    if (backwards > 0) {
      Warn(context_, first_backwards,
           fmt::format("{} time(s) '{}' goes back (a resumed or restarted run): the intervals "
                       "across are skipped",
                       backwards, step_name));
    }
    if (worst_rounding > kMaxClockRounding) {
      Warn(context_, worst_rounding_line,
           fmt::format("'{}' holds whole numbers only, so an interval's time is uncertain by "
                       "up to {:.0f}% (rounding to 1 at both ends)",
                       clock_name, 100 * worst_rounding));
    }
    if (samples.empty()) {
      std::string why;
      if (evaluations > 0) {
        why = fmt::format(
            "every interval after the first (warm-up) that is one logging period ({} steps) "
            "long includes evaluation ('{}' has a value on line {}), so the clock differences "
            "would count evaluation time; log the training step time or rate instead",
            period_text, EvaluationColumnOn(static_cast<size_t>(first_evaluation)),
            Line(static_cast<size_t>(first_evaluation)));
      } else if (gaps > 0) {
        why = fmt::format(
            "no interval after the first (warm-up) joins consecutive logging points (the "
            "period is {} steps); a sampled export leaves rows out: export every row",
            period_text);
      } else if (stalls > 0) {
        why = fmt::format("'{}' never advances between logging points", clock_name);
      } else {
        why = fmt::format(
            "the only interval between logging points (ending on line {}) is "
            "dropped as warm-up",
            warm_up_line);
      }
      throw DataError(source(), warm_up_line, clock_name,
                      fmt::format("{}: no step time from '{}' and '{}': {}", format_, clock_name,
                                  step_name, why));
    }
    return samples;
  }

  // Epoch times: an epoch-time column, or clock differences between the rows
  // of consecutive epochs.
  std::vector<Sample> PerEpoch() {
    const ObservationColumn& o = series_.observation;
    const std::string& name = Name(o.column);
    const bool from_clock = o.kind == Observation::kEpochClock;
    struct EpochRow {
      size_t row;
      int epoch;
      double value;  // the epoch time, or the clock
      std::optional<double> step;
    };
    std::vector<EpochRow> rows;
    for (size_t i = 0; i < table_.rows.size(); ++i) {
      std::optional<double> value;
      if (from_clock) {
        value = ClockCell(Cell(i, o.column), source(), Line(i), name);
      } else {
        value = PositiveCell(Cell(i, o.column), source(), Line(i), name);
      }
      if (!value) continue;
      // Without an epoch column the rows count the epochs.
      const int epoch = Epoch(i).value_or(static_cast<int>(rows.size()) + 1);
      rows.push_back({i, epoch, *value, Step(i)});
    }
    if (rows.empty()) {
      throw DataError(source(), table_.header_line, name,
                      fmt::format("{}: no row has a value of '{}'", format_, name));
    }

    const Attributes& attributes = context_.attributes;
    std::vector<Sample> samples;
    samples.reserve(rows.size());
    int dropped = 0, last_dropped_line = 0;
    bool warned_evaluation = false;
    for (size_t k = 0; k < rows.size(); ++k) {
      const EpochRow& r = rows[k];
      const EpochRow* previous = k > 0 && rows[k - 1].epoch + 1 == r.epoch ? &rows[k - 1] : nullptr;
      const int line = Line(r.row);
      double epoch_time = r.value * o.scale;
      if (from_clock) {
        if (!previous) continue;  // the first epoch of a run has no start time
        const double dclock = r.value - previous->value;
        if (!(dclock > 0)) {
          throw DataError(
              source(), line, name,
              fmt::format("{}: '{}' does not advance from epoch {} (line {}) to "
                          "epoch {}",
                          format_, name, previous->epoch, Line(previous->row), r.epoch));
        }
        epoch_time = dclock * o.scale;
      }
      RequirePositive(epoch_time, source(), line, name);
      if (r.epoch <= context_.options.skip_first_epochs) {
        ++dropped;
        last_dropped_line = line;
        continue;
      }
      // The epoch ran from the row of the previous epoch (or the start) to this one.
      const size_t from = previous ? previous->row : static_cast<size_t>(-1);  // (from, row]
      if (!warned_evaluation && EvaluationBetween(from, r.row)) {
        warned_evaluation = true;
        const size_t at = FirstEvaluation(from, r.row);
        Warn(context_, line,
             fmt::format("the epoch times (from this line on) likely include validation: '{}' "
                         "is logged within the epoch (line {}); fitspeed counts them as training "
                         "time",
                         EvaluationColumnOn(at), Line(at)));
      }
      Sample s = NewSample(r.row);
      s.epoch = r.epoch;
      s.epoch_time_s = epoch_time;
      // Steps in the epoch, from the step column at the ends of consecutive epochs.
      if (previous && r.step && previous->step && *r.step > *previous->step) {
        SetSamplesPerEpoch(*r.step - *previous->step, attributes, line, s);
      }
      samples.push_back(std::move(s));
    }
    if (samples.empty() && dropped > 0) {
      throw DataError(source(), last_dropped_line, "epoch",
                      fmt::format("{}: every epoch with a time ({}) is <= skip_first_epochs = {}, "
                                  "which drops the compilation/warm-up epochs; train more epochs, "
                                  "or keep them with --skip-epochs 0",
                                  format_, dropped, context_.options.skip_first_epochs));
    }
    if (samples.empty()) {
      throw DataError(source(), Line(rows.front().row), name,
                      fmt::format("{}: '{}' is logged for one epoch only; an epoch time needs "
                                  "the clock at the end of the epoch before as well",
                                  format_, name));
    }
    return samples;
  }

  // Samples per epoch from `steps` steps: steps x batch when only the batch is
  // given (exact whatever the steps rule), and the steps rule when both are.
  void SetSamplesPerEpoch(double steps, const Attributes& attributes, int line, Sample& s) const {
    if (!attributes.batch) return;
    const double batch = *attributes.batch;
    if (!attributes.samples_per_epoch) {
      s.samples_per_epoch = steps * batch;
      return;
    }
    const double samples = *attributes.samples_per_epoch;
    const double partial = std::ceil(samples / batch);
    const double dropped = std::floor(samples / batch);
    if (steps == partial) {
      s.steps_rule = StepsRule::kKeepPartial;
    } else if (steps == dropped) {
      s.steps_rule = StepsRule::kDropRemainder;
    } else {
      throw DataError(source(), line, Name(series_.step_column),
                      fmt::format("the log shows {} steps in epoch {}, but samples={} at "
                                  "batch={} makes {} steps (last batch partial) or {} "
                                  "(remainder dropped); check PATH@batch=...,samples=...",
                                  steps, s.epoch.value_or(0), samples, batch, partial, dropped));
    }
  }

  const CsvTable& table_;
  const Series& series_;
  const ReaderContext& context_;
  const std::string format_;
  std::vector<int> evaluation_before_;
};

}  // namespace

// --- The table -----------------------------------------------------------------

std::vector<std::vector<std::string>> HeadRecords(std::string_view head, size_t count) {
  std::vector<std::vector<std::string>> records;
  // A record that reaches the end of a head cut at the sniffers' limit may be cut.
  const bool maybe_cut = head.size() >= kSnifferHeadSize;
  const size_t last_end = head.find_last_of("\r\n");
  const std::string_view whole =
      maybe_cut ? head.substr(0, last_end == std::string_view::npos ? 0 : last_end) : head;
  const CsvDialect dialect{};
  CsvRecordCursor cursor(whole, dialect);
  std::string record;
  int line = 0;
  bool open = false;
  while (records.size() < count && cursor.Next(record, line, open) && !open) {
    records.push_back(CsvCells(record, dialect.delimiter));
  }
  return records;
}

std::string ColumnList(const std::vector<std::string>& names, size_t max) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < max; ++i) {
    list += (i ? ", " : "") + names[i];
  }
  if (names.size() > max) list += fmt::format(", ... ({} columns)", names.size());
  return list;
}

bool IsFitspeedBatchColumn(std::string_view name) {
  return OneOfMetricTable(JoinMetricTable(WordsOf(name)), {"batch",
                                                           "batch_size",
                                                           "batchsize",
                                                           "bs",
                                                           "bsz",
                                                           "global_batch",
                                                           "global_batch_size",
                                                           "global_bs",
                                                           "global_bsz",
                                                           "total_batch",
                                                           "total_batch_size",
                                                           "effective_batch_size",
                                                           "local_bsz",
                                                           "local_bs",
                                                           "local_batch",
                                                           "local_batch_size",
                                                           "batch_size_per_gpu",
                                                           "batch_per_gpu",
                                                           "per_gpu_batch_size",
                                                           "batch_size_per_device",
                                                           "batch_per_device",
                                                           "per_device_batch_size",
                                                           "per_device_train_batch_size",
                                                           "batch_size_per_replica",
                                                           "per_replica_batch_size",
                                                           "batch_size_per_core",
                                                           "per_core_batch_size"});
}

// --- Metric names ----------------------------------------------------------------

MetricName ClassifyMetric(std::string_view name) {
  // Path segments: "train/device/samples_per_sec", "val/loss".
  std::vector<std::string_view> segments;
  for (size_t start = 0;;) {
    const size_t slash = name.find('/', start);
    const std::string_view segment = Trim(name.substr(start, slash - start));
    if (!segment.empty()) segments.push_back(segment);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  MetricName result;
  if (segments.empty()) return result;
  // "img/s": a time unit as the last segment is the denominator of a rate.
  std::vector<std::string> words;
  size_t prefix = segments.size() - 1;
  if (segments.size() >= 2 && TimeUnitSecondsMetricTable(ToLower(segments.back()))) {
    words = WordsOf(segments[segments.size() - 2]);
    words.push_back("per");
    words.push_back(ToLower(segments.back()));
    prefix = segments.size() - 2;
  } else {
    words = WordsOf(segments.back());
  }
  bool evaluation = false, per_device = false;
  for (size_t i = 0; i < prefix; ++i) {
    for (const std::string& w : WordsOf(segments[i])) {
      if (IsEvaluationWord(w)) evaluation = true;
      if (w == "device") per_device = true;
    }
  }
  if (!words.empty() && IsEvaluationWord(words.front())) evaluation = true;
  if (words.empty()) {
    result.evaluation = evaluation;
    return result;
  }
  std::optional<MetricName> match = MatchWords(words);
  // Lightning logs a metric with on_step and on_epoch as "<name>_step" and
  // "<name>_epoch" (its mean over the epoch).
  bool epoch_mean = false;
  if (!match && words.size() > 1 && (words.back() == "step" || words.back() == "epoch")) {
    epoch_mean = words.back() == "epoch";
    words.pop_back();
    match = MatchWords(words);
  }
  if (match) {
    result = *match;
    result.epoch_mean = epoch_mean;
  }
  result.evaluation = evaluation;
  result.per_device = per_device;
  return result;
}

// --- Series --------------------------------------------------------------------

std::optional<ObservationColumn> ChooseObservation(const std::vector<MetricColumn>& candidates,
                                                   bool has_step, bool has_epoch,
                                                   const ReaderContext& context, int header_line) {
  // Rank of a candidate's kind (lower is better), or -1 when it cannot serve.
  // A step time or a rate needs values on two rows: the first is warm-up.
  auto kind_rank = [&](const MetricColumn& c) -> int {
    if (c.metric.evaluation) return -1;
    switch (c.metric.kind) {
      case MetricKind::kStepTime:
        return c.values >= 2 ? 0 : -1;
      case MetricKind::kRate:
        return c.values >= 2 ? 1 : -1;
      case MetricKind::kClock:
        if (has_step) return 2;
        return has_epoch ? 4 : -1;
      case MetricKind::kEpochTime:
        return 3;
      case MetricKind::kOther:
        break;
    }
    return -1;
  };
  // Within a kind: global before per-device rates, samples before tokens,
  // per-step values before epoch means.
  auto sub_rank = [](const MetricColumn& c) {
    return (c.metric.per_device ? 4 : 0) + (c.metric.tokens ? 2 : 0) +
           (c.metric.epoch_mean ? 1 : 0);
  };
  const MetricColumn* best = nullptr;
  for (const MetricColumn& c : candidates) {
    const int rank = kind_rank(c);
    if (rank < 0) continue;
    if (!best || rank < kind_rank(*best) ||
        (rank == kind_rank(*best) && sub_rank(c) < sub_rank(*best))) {
      best = &c;
    }
  }
  if (!best) return std::nullopt;
  const int rank = kind_rank(*best);
  for (const MetricColumn& c : candidates) {
    if (&c != best && kind_rank(c) == rank && sub_rank(c) == sub_rank(*best)) {
      Warn(context, header_line,
           fmt::format("'{}' and '{}' measure the same; reading '{}' only", best->name, c.name,
                       best->name));
    }
  }
  if (best->metric.per_device) {
    Warn(context, header_line,
         fmt::format("reading the per-device rate '{}' as the rate of all devices: Lightning's "
                     "ThroughputMonitor logs the global rate only when there are several "
                     "devices, and this log has none",
                     best->name));
  }
  ObservationColumn o;
  o.column = best->column;
  o.scale = best->metric.scale;
  switch (rank) {
    case 0:
      o.kind = Observation::kStepTime;
      break;
    case 1:
      o.kind = Observation::kThroughput;
      break;
    case 2:
      o.kind = Observation::kClock;
      break;
    case 3:
      o.kind = Observation::kEpochTime;
      break;
    default:
      o.kind = Observation::kEpochClock;
      break;
  }
  return o;
}

std::vector<Sample> ReadSeries(const CsvTable& table, const Series& series,
                               const ReaderContext& context, std::string_view format) {
  return SeriesReader(table, series, context, format).Read();
}

}  // namespace fitspeed::io
