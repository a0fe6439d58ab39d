// Reader of fitspeed's "epochs" format: epoch times in seconds, one per line,
// or "epoch time" pairs; '#' starts a comment. Defined in docs/formats/epochs.md.
// The batch and the samples per epoch come from the input's attributes
// (PATH@batch=256,samples=50000).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

// Largest epoch number accepted (keeps the conversion to int defined).
constexpr double kMaxEpochEpochs = 1e9;

// The fields of a line without its comment: numbers separated by blanks or commas.
std::vector<std::string_view> Fields(std::string_view line) {
  const size_t hash = line.find('#');
  if (hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> fields;
  size_t i = 0;
  auto is_separator = [](char c) { return c == ' ' || c == '\t' || c == ','; };
  while (i < line.size()) {
    while (i < line.size() && is_separator(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_separator(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

// One data line: an epoch time and, in the two-column form, its epoch number.
struct Entry {
  int line = 0;
  std::optional<double> epoch;
  double epoch_time_s = 0;
};

}  // namespace

bool LooksLikeEpochs(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  int data_lines = 0;
  while (cursor.Next(line)) {
    const std::vector<std::string_view> fields = Fields(line);
    if (fields.empty()) continue;
    if (fields.size() > 2) return false;
    for (std::string_view field : fields) {
      if (!ToDouble(field)) return false;
    }
    ++data_lines;
  }
  return data_lines > 0;
}

std::vector<Sample> ReadEpochs(std::string_view text, const ReaderContext& context) {
  const std::string& source = context.source;
  std::vector<Entry> entries;
  size_t columns = 0;  // 1 or 2, set by the first data line
  int first_data_line = 0;
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) {
    const std::vector<std::string_view> fields = Fields(line);
    if (fields.empty()) continue;
    const int number = cursor.number();
    if (fields.size() > 2) {
      throw DataError(source, number, "",
                      fmt::format("expected an epoch time, or an epoch number and a time; got "
                                  "{} fields: '{}'",
                                  fields.size(), Excerpt(Trim(line))));
    }
    if (columns == 0) {
      columns = fields.size();
      first_data_line = number;
    } else if (fields.size() != columns) {
      throw DataError(source, number, "",
                      fmt::format("has {} number(s) but line {} has {}; use one form throughout "
                                  "(times only, or 'epoch time' pairs)",
                                  fields.size(), first_data_line, columns));
    }
    Entry entry;
    entry.line = number;
    if (columns == 2) {
      const double epoch = ParseNumber(fields[0], source, number, "epoch");
      if (!(epoch >= 0 && epoch <= kMaxEpochEpochs) || epoch != std::floor(epoch)) {
        throw DataError(source, number, "epoch",
                        fmt::format("must be a whole number >= 0, got '{}'", Excerpt(fields[0])));
      }
      entry.epoch = epoch;
    }
    entry.epoch_time_s = ParsePositive(fields.back(), source, number, "epoch_time");
    entries.push_back(entry);
  }

  // Epoch numbers that start at 0 (Keras' CSVLogger counts so) are shifted to 1-based.
  const bool zero_based = std::any_of(entries.begin(), entries.end(),
                                      [](const Entry& e) { return e.epoch && *e.epoch == 0; });
  std::vector<Sample> samples;
  samples.reserve(entries.size());
  int ordinal = 0;
  for (const Entry& entry : entries) {
    ++ordinal;
    const int epoch = entry.epoch ? static_cast<int>(*entry.epoch) + (zero_based ? 1 : 0) : ordinal;
    if (epoch <= context.options.skip_first_epochs) continue;
    Sample s;
    s.source = context.sample_source;
    s.line = entry.line;
    s.epoch = epoch;
    s.epoch_time_s = entry.epoch_time_s;
    samples.push_back(std::move(s));
  }
  if (samples.empty() && !entries.empty()) {
    throw DataError(source, entries.back().line, "epoch",
                    fmt::format("every epoch listed ({}) is <= skip_first_epochs = {}, which "
                                "drops the warm-up epochs; list later epochs too",
                                entries.size(), context.options.skip_first_epochs));
  }
  return samples;
}

}  // namespace fitspeed::io
