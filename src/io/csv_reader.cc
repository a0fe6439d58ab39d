// Reader of delimited tables (comma, tab or semicolon separated, RFC 4180
// quoting) with a header row; columns are recognised by name. The recognised
// names and the rules for series keys are defined in docs/formats/csv.md.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "io/csv_table.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

// A numeric column that is not recognised becomes a series key only when it
// holds whole numbers with at most this many distinct values (docs/formats/csv.md).
constexpr size_t kMaxNumericKeyValues = 16;
// Bounds that keep conversions to int defined.
constexpr double kMaxDevices = 1e7;
constexpr double kMaxEpoch = 1e9;
constexpr size_t kMaxPlacementNodes = 64;

constexpr char kDelimiters[] = {',', '\t', ';'};

enum class Role {
  kKey,              // categorical series key: Sample::tags and the label
  kIgnored,          // read past
  kBatch,            // global batch per optimizer step
  kLocalBatch,       // per-device batch: global = local x devices
  kDevices,          // data-parallel devices
  kPlacement,        // Pollux placement: one digit per node, the GPUs on it
  kThroughput,       // samples per second, all devices
  kStepTime,         // seconds per optimizer step
  kEpochTime,        // seconds per epoch
  kEpoch,            // epoch number
  kSamplesPerEpoch,  // samples in one epoch
  kPrecision,        // "fp32", "amp", ...
};

std::string RoleName(Role role) {
  switch (role) {
    case Role::kBatch:
      return "global batch";
    case Role::kLocalBatch:
      return "per-device batch";
    case Role::kDevices:
    case Role::kPlacement:
      return "devices";
    case Role::kThroughput:
      return "throughput";
    case Role::kStepTime:
      return "step time";
    case Role::kEpochTime:
      return "epoch time";
    case Role::kEpoch:
      return "epoch";
    case Role::kSamplesPerEpoch:
      return "samples per epoch";
    case Role::kPrecision:
      return "precision";
    case Role::kKey:
    case Role::kIgnored:
      break;
  }
  return "key";
}

struct RoleMatch {
  Role role = Role::kKey;
  double scale = 1;  // converts cells to seconds or samples per second
};

// --- Column names ------------------------------------------------------------

// The words of a name: lower-case runs of letters, digits and non-ASCII bytes;
// '/' reads as "per" and '%' as "percent"; everything else separates.
std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(std::move(word));
    word.clear();
  };
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 128) {
      word += static_cast<char>(std::tolower(u));
    } else {
      flush();
      if (c == '/') words.push_back("per");
      if (c == '%') words.push_back("percent");
    }
  }
  flush();
  return words;
}

std::string Join(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& w : words) joined += (joined.empty() ? "" : "_") + w;
  return joined;
}

bool OneOf(const std::string& s, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return s == n; });
}

// Seconds per unit of a time-unit word, nullopt for other words.
std::optional<double> TimeUnitSeconds(const std::string& w) {
  if (OneOf(w, {"s", "sec", "secs", "second", "seconds"})) return 1.0;
  if (OneOf(w, {"ms", "msec", "msecs", "millisecond", "milliseconds"})) return 1e-3;
  if (OneOf(w, {"us", "usec", "usecs", "\xc2\xb5s", "microsecond", "microseconds"})) return 1e-6;
  if (OneOf(w, {"ns", "nanosecond", "nanoseconds"})) return 1e-9;
  if (OneOf(w, {"min", "mins", "minute", "minutes"})) return 60.0;
  if (OneOf(w, {"h", "hr", "hrs", "hour", "hours"})) return 3600.0;
  return std::nullopt;
}

bool IsSampleWord(const std::string& w) {
  return OneOf(
      w, {"samples", "sample", "images", "image", "img", "imgs", "tokens", "token", "tok", "toks",
          "sequences", "sequence", "seq", "seqs", "examples", "example", "items", "item"});
}

// Leading words that do not change what a timing or rate column measures.
std::vector<std::string> DropQualifiers(std::vector<std::string> words) {
  while (words.size() > 1 &&
         OneOf(words.front(), {"train", "training", "mean", "avg", "average", "total", "global"})) {
    words.erase(words.begin());
  }
  return words;
}

// Samples-per-second factor of a rate "WORD per UNIT" (img/s, samples_per_sec).
std::optional<double> RateScale(const std::vector<std::string>& w) {
  if (w.size() == 1 && w[0] == "sps") return 1.0;
  if (w.size() != 3 || !IsSampleWord(w[0]) || w[1] != "per") return std::nullopt;
  const auto seconds = TimeUnitSeconds(w[2]);
  if (!seconds) return std::nullopt;
  return 1.0 / *seconds;
}

std::optional<RoleMatch> MatchThroughput(const std::vector<std::string>& name_words,
                                         const std::vector<std::string>& unit) {
  const std::vector<std::string> w = DropQualifiers(name_words);
  std::optional<double> scale;
  if (!w.empty() && w[0] == "throughput") {
    const std::vector<std::string> rest(w.begin() + 1, w.end());
    if (rest.empty() && unit.empty()) {
      scale = 1.0;
    } else if (rest.empty()) {
      scale = RateScale(unit);
    } else if (unit.empty()) {
      scale = RateScale(rest);
    }
  } else if (unit.empty()) {
    scale = RateScale(w);
  }
  if (!scale) return std::nullopt;
  return RoleMatch{Role::kThroughput, *scale};
}

std::optional<RoleMatch> MatchDuration(const std::vector<std::string>& name_words,
                                       const std::vector<std::string>& unit) {
  // At most one time unit: a word of the name (step_time_ms) or the bracket (step time [ms]).
  double seconds = 1;
  int units = 0;
  std::vector<std::string> stem;
  for (const std::string& w : name_words) {
    if (const auto s = TimeUnitSeconds(w)) {
      seconds = *s;
      ++units;
    } else {
      stem.push_back(w);
    }
  }
  if (!unit.empty()) {
    const auto s = unit.size() == 1 ? TimeUnitSeconds(unit[0]) : std::nullopt;
    if (!s) return std::nullopt;
    seconds = *s;
    ++units;
  }
  if (units > 1) return std::nullopt;
  const std::string joined = Join(DropQualifiers(stem));
  // "per_step" alone needs its unit: ms_per_step, sec_per_step.
  if (OneOf(joined, {"step_time", "time_per_step", "step_duration", "batch_time", "time_per_batch",
                     "iteration_time", "iter_time", "time_per_iteration", "time_per_iter"}) ||
      (units == 1 && OneOf(joined, {"per_step", "per_batch", "per_iteration", "per_iter"}))) {
    return RoleMatch{Role::kStepTime, seconds};
  }
  if (OneOf(joined, {"epoch_time", "time_per_epoch", "epoch_duration"}) ||
      (units == 1 && joined == "per_epoch")) {
    return RoleMatch{Role::kEpochTime, seconds};
  }
  return std::nullopt;
}

// Roles recognised by the whole name (docs/formats/csv.md lists them).
std::optional<Role> FixedRole(const std::string& joined) {
  if (OneOf(joined, {"batch", "batch_size", "batchsize", "bs", "bsz", "global_batch",
                     "global_batch_size", "global_bs", "global_bsz", "total_batch",
                     "total_batch_size", "effective_batch_size"})) {
    return Role::kBatch;
  }
  if (OneOf(joined,
            {"local_bsz", "local_bs", "local_batch", "local_batch_size", "batch_size_per_gpu",
             "batch_per_gpu", "per_gpu_batch_size", "batch_size_per_device", "batch_per_device",
             "per_device_batch_size", "per_device_train_batch_size", "batch_size_per_replica",
             "per_replica_batch_size", "batch_size_per_core", "per_core_batch_size"})) {
    return Role::kLocalBatch;
  }
  if (OneOf(joined,
            {"devices", "num_devices", "n_devices", "ndevices", "device_count", "gpus", "num_gpus",
             "n_gpus", "ngpus", "gpu_count", "num_replicas", "replicas", "world_size"})) {
    return Role::kDevices;
  }
  if (joined == "placement") return Role::kPlacement;
  if (OneOf(joined, {"epoch", "epoch_num", "epoch_number"})) return Role::kEpoch;
  if (OneOf(joined, {"samples_per_epoch", "samples", "num_samples", "n_samples", "train_samples",
                     "num_train_samples", "dataset_size", "epoch_size", "epoch_samples"})) {
    return Role::kSamplesPerEpoch;
  }
  if (OneOf(joined, {"precision", "dtype"})) return Role::kPrecision;
  return std::nullopt;
}

// What a header name means. Unrecognised names come back as kKey or kIgnored;
// ReadCsv then looks at the values of the kKey ones (see KeepsAsKey).
RoleMatch MatchColumn(std::string_view header) {
  std::string_view name = Trim(header);
  std::vector<std::string> unit;
  // A trailing "[unit]" or "(unit)".
  if (!name.empty() && (name.back() == ']' || name.back() == ')')) {
    const char open = name.back() == ']' ? '[' : '(';
    const size_t at = name.rfind(open);
    if (at != std::string_view::npos && at > 0) {
      unit = Words(name.substr(at + 1, name.size() - at - 2));
      name = Trim(name.substr(0, at));
    }
  }
  const std::vector<std::string> words = Words(name);
  const std::string joined = Join(words);
  if (words.empty() || words[0] == "unnamed") return {Role::kIgnored};  // e.g. a pandas index
  // A bracket that is not a unit may be part of the name: "Batch size (per GPU)".
  std::vector<std::string> with_bracket = words;
  with_bracket.insert(with_bracket.end(), unit.begin(), unit.end());
  for (const std::string& candidate : {Join(with_bracket), joined}) {
    if (const auto role = FixedRole(candidate)) return {*role};
  }
  if (const auto match = MatchThroughput(words, unit)) return *match;
  if (const auto match = MatchDuration(words, unit)) return *match;
  // Per-run bookkeeping, and durations that are not a step or an epoch
  // (Pollux's sync_time is part of step_time; koshian2's initial_time_s is
  // model build and compile time): read past them.
  if (OneOf(joined, {"source_file", "file",     "filename", "file_name", "path",  "filepath",
                     "url",         "comment",  "comments", "note",      "notes", "timestamp",
                     "date",        "datetime", "run_id",   "seed",      "step",  "global_step",
                     "iteration",   "iter",     "index",    "sync_time"}) ||
      words.back() == "file" || words.back() == "path" || words.back() == "url") {
    return {Role::kIgnored};
  }
  const bool duration =
      std::any_of(words.begin(), words.end(),
                  [](const std::string& w) {
                    return w == "time" || w == "duration" || TimeUnitSeconds(w).has_value();
                  }) ||
      (unit.size() == 1 && TimeUnitSeconds(unit[0]));
  if (duration) return {Role::kIgnored};
  return {Role::kKey};
}

// --- Rows --------------------------------------------------------------------

// fitspeed's tables: one record a line, '#' comments; the delimiter is sniffed.
CsvDialect Dialect(char delimiter) {
  CsvDialect dialect;
  dialect.delimiter = delimiter;
  dialect.multiline_quotes = false;
  dialect.comments = true;
  return dialect;
}

// The first two lines that hold data or the header (not blank, not a '#'
// comment), for sniffing the delimiter.
std::vector<std::string> FirstLines(std::string_view text) {
  std::vector<std::string> lines;
  const CsvDialect dialect = Dialect(',');
  CsvRecordCursor cursor(text, dialect);
  std::string record;
  int line = 0;
  bool open = false;
  while (lines.size() < 2 && cursor.Next(record, line, open)) lines.push_back(record);
  return lines;
}

size_t FieldCount(std::string_view line, char delimiter) {
  return Split(line, delimiter, true).size();
}

// The delimiter that splits the header into the most fields with the next line
// splitting into as many; failing that, the one that splits the header most.
char SniffDelimiter(std::string_view header, std::optional<std::string_view> next) {
  char best = ',';
  size_t best_fields = 0;
  bool best_consistent = false;
  for (char d : kDelimiters) {
    const size_t fields = FieldCount(header, d);
    const bool consistent = fields >= 2 && (!next || FieldCount(*next, d) == fields);
    if ((consistent && !best_consistent) ||
        (consistent == best_consistent && fields > best_fields)) {
      best = d;
      best_fields = fields;
      best_consistent = consistent;
    }
  }
  return best;
}

bool HasLetter(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

bool IsMissingMark(std::string_view cell) {
  const std::string_view trimmed = Trim(cell);
  if (trimmed.size() > 3) return false;  // no mark is longer (a lower-cased copy per row cost 5%)
  const std::string lower = ToLower(trimmed);
  return OneOf(lower, {"", "-", "n/a", "na", "oom"});
}

// An unrecognised column whose cells are all numbers stays a series key only
// when they are whole numbers, at most kMaxNumericKeyValues distinct values,
// each on two rows or more (a setting such as num_workers = 1 or 4, not a
// per-run measurement); a column with any non-number cell is always a key.
bool KeepsAsKey(const std::vector<CsvRow>& rows, size_t column) {
  std::map<double, int> counts;
  for (const CsvRow& row : rows) {
    const std::string& cell = row.cells[column];
    if (Trim(cell).empty()) continue;
    const auto value = ToDouble(cell);
    if (!value) return true;  // text: categorical
    if (!std::isfinite(*value) || *value != std::floor(*value)) return false;
    ++counts[*value];
  }
  if (counts.empty() || counts.size() > kMaxNumericKeyValues) return false;
  return std::all_of(counts.begin(), counts.end(), [](const auto& c) { return c.second >= 2; });
}

struct Column {
  std::string name;  // as the header writes it (trimmed)
  RoleMatch match;
};

// The single column of `role`, or -1; two columns of one role are an error.
int FindRole(const std::vector<Column>& columns, Role role, const std::string& source,
             int header_line) {
  int found = -1;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].match.role != role) continue;
    if (found >= 0) {
      throw DataError(
          source, header_line, columns[i].name,
          fmt::format("columns '{}' and '{}' both give the {}; keep one",
                      columns[static_cast<size_t>(found)].name, columns[i].name, RoleName(role)));
    }
    found = static_cast<int>(i);
  }
  return found;
}

int ParseWhole(const std::string& cell, double min, double max, const std::string& source, int line,
               const std::string& field) {
  const double value = ParseNumber(cell, source, line, field);
  if (!(value >= min && value <= max) || value != std::floor(value)) {
    throw DataError(source, line, field,
                    fmt::format("must be a whole number >= {}, got '{}'", min, Excerpt(cell)));
  }
  return static_cast<int>(value);
}

// Devices of a Pollux placement: one digit per node, each the GPUs on that node
// (petuum/adaptdl simulator/applications.py: num_replicas = sum of the digits).
int ParsePlacement(const std::string& cell, const std::string& source, int line,
                   const std::string& field) {
  const std::string_view digits = Trim(cell);
  bool ok = !digits.empty() && digits.size() <= kMaxPlacementNodes;
  int devices = 0;
  for (size_t i = 0; ok && i < digits.size(); ++i) {
    ok = std::isdigit(static_cast<unsigned char>(digits[i])) != 0;
    devices += digits[i] - '0';
  }
  if (!ok || devices <= 0) {
    throw DataError(source, line, field,
                    fmt::format("a placement is one digit per node, the GPUs on it (e.g. 4 or "
                                "22), got '{}'",
                                Excerpt(cell)));
  }
  return devices;
}

// For messages; docs/formats/csv.md has the full lists.
constexpr char kRecognisedBatch[] =
    "batch, batch_size, bs, global_batch_size, total_batch_size, local_bsz, batch_size_per_gpu, "
    "... (docs/formats/csv.md)";
constexpr char kRecognisedObservation[] =
    "throughput, samples_per_s, img/s, tokens/s, step_time, step_time_ms, time_ms_per_batch, "
    "epoch_time, epoch_time_s, ... (docs/formats/csv.md)";

}  // namespace

bool LooksLikeCsv(std::string_view head) {
  const std::vector<std::string> lines = FirstLines(head);
  if (lines.size() < 2) return false;
  for (char d : kDelimiters) {
    const std::vector<std::string> fields = Split(lines[0], d, true);
    if (fields.size() < 2 || FieldCount(lines[1], d) != fields.size()) continue;
    const auto named = std::count_if(fields.begin(), fields.end(),
                                     [](const std::string& f) { return HasLetter(f); });
    const bool any_number = std::any_of(
        fields.begin(), fields.end(), [](const std::string& f) { return ToDouble(f).has_value(); });
    if (named >= 2 && !any_number) return true;
  }
  return false;
}

std::vector<Sample> ReadCsv(std::string_view text, const ReaderContext& context) {
  const std::string& source = context.source;
  const std::vector<std::string> lines = FirstLines(text);
  if (lines.empty()) return {};
  const char delimiter = SniffDelimiter(
      lines[0], lines.size() > 1 ? std::optional<std::string_view>(lines[1]) : std::nullopt);
  // Every row with the header's field count, cells trimmed.
  const CsvTable table = ParseCsvTable(text, source, Dialect(delimiter));
  const int header_number = table.header_line;

  // Header.
  std::vector<Column> columns;
  {
    std::set<std::string> seen;
    bool all_numbers = true;
    for (const std::string& name : table.columns) {
      Column column;
      column.name = name;
      column.match = MatchColumn(column.name);
      if (!ToDouble(column.name)) all_numbers = false;
      if (!column.name.empty() && !seen.insert(ToLower(column.name)).second) {
        throw DataError(source, header_number, column.name, "the header names this column twice");
      }
      columns.push_back(std::move(column));
    }
    if (all_numbers) {
      throw DataError(source, header_number, "",
                      "the first line holds numbers, not column names; a CSV log needs a header "
                      "row naming its columns");
    }
  }
  if (table.rows.empty()) {
    throw DataError(source, header_number, "", "the header is not followed by any data row");
  }
  const std::vector<CsvRow>& rows = table.rows;

  // Unrecognised numeric columns: series keys or read past, by their values.
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].match.role == Role::kKey && !KeepsAsKey(rows, c)) {
      columns[c].match.role = Role::kIgnored;
    }
  }

  const int batch_col = FindRole(columns, Role::kBatch, source, header_number);
  const int local_col = FindRole(columns, Role::kLocalBatch, source, header_number);
  int devices_col = FindRole(columns, Role::kDevices, source, header_number);
  const int placement_col = FindRole(columns, Role::kPlacement, source, header_number);
  if (devices_col >= 0 && placement_col >= 0) {
    throw DataError(source, header_number, columns[static_cast<size_t>(placement_col)].name,
                    fmt::format("columns '{}' and '{}' both give the devices; keep one",
                                columns[static_cast<size_t>(devices_col)].name,
                                columns[static_cast<size_t>(placement_col)].name));
  }
  if (devices_col < 0) devices_col = placement_col;
  const int epoch_col = FindRole(columns, Role::kEpoch, source, header_number);
  const int samples_col = FindRole(columns, Role::kSamplesPerEpoch, source, header_number);
  const int precision_col = FindRole(columns, Role::kPrecision, source, header_number);
  // One observation per sample: a step time first, then a throughput, then an epoch time.
  Role observation = Role::kStepTime;
  int observation_col = -1;
  for (Role role : {Role::kStepTime, Role::kThroughput, Role::kEpochTime}) {
    const int col = FindRole(columns, role, source, header_number);
    if (col >= 0 && observation_col < 0) {
      observation = role;
      observation_col = col;
    }
  }
  if (batch_col < 0 && local_col < 0 && !context.attributes.batch) {
    throw DataError(source, header_number, "",
                    fmt::format("no batch column (recognised names: {}); give the batch as "
                                "PATH@batch=N if it is the same on every row",
                                kRecognisedBatch));
  }
  if (observation_col < 0) {
    throw DataError(source, header_number, "",
                    fmt::format("no throughput, step time or epoch time column (recognised "
                                "names: {})",
                                kRecognisedObservation));
  }
  const Column& observed = columns[static_cast<size_t>(observation_col)];

  // Epoch numbers that start at 0 (Keras' CSVLogger counts so) are shifted to 1-based.
  bool zero_based = false;
  if (epoch_col >= 0) {
    for (const CsvRow& row : rows) {
      const auto value = ToDouble(row.cells[static_cast<size_t>(epoch_col)]);
      if (value && *value == 0) zero_based = true;
    }
  }

  std::vector<Sample> samples;
  samples.reserve(rows.size());
  size_t measured_rows = 0;
  // Rows of one series share their label and tags: one of each per distinct
  // set of key and ignored cells (joined with '\0' as the look-up key).
  struct Series {
    SharedString label;
    Tags tags;
  };
  std::map<std::string, Series, std::less<>> series;
  std::string series_key;
  std::string last_key;
  const Series* last_series = nullptr;  // the previous row's, tried first
  StringPool precisions;
  for (const CsvRow& row : rows) {
    auto cell = [&](int col) -> const std::string& { return row.cells[static_cast<size_t>(col)]; };
    auto name = [&](int col) -> const std::string& {
      return columns[static_cast<size_t>(col)].name;
    };
    if (IsMissingMark(cell(observation_col))) continue;  // not measured (e.g. OOM)
    ++measured_rows;
    Sample s;
    s.source = context.sample_source;
    s.line = row.line;
    const double value = ParsePositive(cell(observation_col), source, row.line, observed.name) *
                         observed.match.scale;
    RequirePositive(value, source, row.line, observed.name);  // a scale may underflow
    if (observation == Role::kThroughput) s.throughput_sps = value;
    if (observation == Role::kStepTime) s.step_time_s = value;
    if (observation == Role::kEpochTime) s.epoch_time_s = value;

    if (devices_col == placement_col && placement_col >= 0) {
      s.devices = ParsePlacement(cell(devices_col), source, row.line, name(devices_col));
    } else if (devices_col >= 0) {
      s.devices =
          ParseWhole(cell(devices_col), 1, kMaxDevices, source, row.line, name(devices_col));
    }
    // With both batch columns, an empty cell in one defers to the other
    // (Paddle's K40m table leaves the per-GPU batch of its multi-GPU LSTM rows empty).
    auto batch_cell = [&](int col, int other) -> std::optional<double> {
      if (col < 0 || (other >= 0 && cell(col).empty() && !cell(other).empty())) {
        return std::nullopt;
      }
      return ParsePositive(cell(col), source, row.line, name(col));
    };
    const std::optional<double> global = batch_cell(batch_col, local_col);
    const std::optional<double> local = batch_cell(local_col, batch_col);
    if (global && local) {
      if (devices_col < 0) {
        // Both batches and no devices column: the devices are their ratio.
        const double ratio = *global / *local;
        if (ratio < 1 || ratio > kMaxDevices ||
            std::fabs(ratio - std::round(ratio)) > 1e-9 * ratio) {
          throw DataError(source, row.line, name(batch_col),
                          fmt::format("global batch {} is not a whole multiple of the per-device "
                                      "batch {} in column '{}'",
                                      *global, *local, name(local_col)));
        }
        s.devices = static_cast<int>(std::round(ratio));
      } else if (std::fabs(*global - *local * s.devices) > 1e-9 * *global) {
        throw DataError(source, row.line, name(batch_col),
                        fmt::format("global batch {} is not the per-device batch {} times {} "
                                    "devices",
                                    *global, *local, s.devices));
      }
      s.batch = *global;
    } else if (global) {
      s.batch = *global;
    } else if (local) {
      s.batch = *local * s.devices;
    }

    if (samples_col >= 0) {
      s.samples_per_epoch = ParsePositive(cell(samples_col), source, row.line, name(samples_col));
    }
    if (precision_col >= 0) s.precision = precisions.Get(ToLower(cell(precision_col)));
    if (epoch_col >= 0) {
      s.epoch = ParseWhole(cell(epoch_col), 0, kMaxEpoch, source, row.line, name(epoch_col)) +
                (zero_based ? 1 : 0);
    }
    series_key.clear();
    for (size_t c = 0; c < columns.size(); ++c) {
      const Role role = columns[c].match.role;
      if (role != Role::kKey && role != Role::kIgnored) continue;
      series_key += row.cells[c];
      series_key += '\0';
    }
    if (last_series == nullptr || series_key != last_key) {
      auto it = series.find(series_key);
      if (it == series.end()) {
        Series made;
        std::string label;
        TagMap tags;
        for (size_t c = 0; c < columns.size(); ++c) {
          const Role role = columns[c].match.role;
          if ((role != Role::kKey && role != Role::kIgnored) || row.cells[c].empty()) continue;
          // Columns read past still travel as tags (not in the label): the
          // projection layer takes koshian2's initial_time_s from there.
          tags[columns[c].name] = row.cells[c];
          if (role != Role::kKey) continue;
          label += fmt::format("{}{}={}", label.empty() ? "" : ",", columns[c].name, row.cells[c]);
        }
        made.label = std::move(label);
        made.tags = tags;
        it = series.emplace(series_key, std::move(made)).first;
      }
      last_series = &it->second;
      last_key = series_key;
    }
    s.label = last_series->label;
    s.tags = last_series->tags;
    if (observation == Role::kEpochTime && s.epoch &&
        *s.epoch <= context.options.skip_first_epochs) {
      continue;
    }
    samples.push_back(std::move(s));
  }
  if (measured_rows == 0) {
    throw DataError(source, header_number, observed.name,
                    "no row has a measurement in this column (all empty, N/A or OOM)");
  }
  if (samples.empty()) {
    // Only the epoch rule drops measured rows.
    throw DataError(source, header_number, columns[static_cast<size_t>(epoch_col)].name,
                    fmt::format("every row is an epoch <= skip_first_epochs = {}, which drops "
                                "the warm-up epochs; the log needs later epochs too",
                                context.options.skip_first_epochs));
  }
  return samples;
}

}  // namespace fitspeed::io
