// Reader of fitspeed's "epochs" format: epoch times in seconds, one per line,
// or "epoch time" pairs; '#' starts a comment. Defined in docs/formats/epochs.md.
// The batch and the samples per epoch come from the input's attributes
// (PATH@batch=256,samples=50000).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
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

// The fields of a line without its comment: numbers separated by blanks or
// commas. A line has one or two; the first two are kept and the rest counted
// (a vector per line was a third of the reader's time).
struct Fields {
  std::string_view first, second;
  size_t size = 0;
  bool empty() const { return size == 0; }
  std::string_view back() const { return size == 1 ? first : second; }
};

Fields SplitFields(std::string_view line) {
  const size_t hash = line.find('#');
  if (hash != std::string_view::npos) line = line.substr(0, hash);
  Fields fields;
  size_t i = 0;
  auto is_separator = [](char c) { return c == ' ' || c == '\t' || c == ','; };
  while (i < line.size()) {
    while (i < line.size() && is_separator(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_separator(line[i])) ++i;
    if (i == start) continue;
    const std::string_view field = line.substr(start, i - start);
    if (fields.size == 0) fields.first = field;
    if (fields.size == 1) fields.second = field;
    ++fields.size;
  }
  return fields;
}

}  // namespace

bool LooksLikeEpochs(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  int data_lines = 0;
  while (cursor.Next(line)) {
    const Fields fields = SplitFields(line);
    if (fields.empty()) continue;
    if (fields.size > 2) return false;
    if (!ToDouble(fields.first) || (fields.size == 2 && !ToDouble(fields.second))) return false;
    ++data_lines;
  }
  return data_lines > 0;
}

namespace {

// The number of a field (blank-free, non-empty): std::from_chars where it
// reads the whole field, as it does for every well-formed list; otherwise
// ParseNumber, with its rules (a leading '+', out-of-range values) and message.
double FieldNumber(std::string_view field, const std::string& source, int line,
                   std::string_view name) {
  double value = 0;
  const char* end = field.data() + field.size();
  const auto result = std::from_chars(field.data(), end, value);
  if (result.ec == std::errc() && result.ptr == end) return value;
  return ParseNumber(field, source, line, name);
}

// What one pass over the list found.
struct ListRead {
  std::vector<Sample> samples;  // those after skip_first_epochs
  size_t listed = 0;            // data lines
  int last_line = 0;            // of the last data line
  bool restart = false;         // a 0 came too late to drop the right epochs: read again
};

// Reads the list, making each sample as its line is read and dropping those
// within skip_first_epochs right away (a list of entries first, then samples,
// wrote every epoch twice to fresh memory, and dropping the first epoch
// afterwards moved every other sample). Epoch numbers that start at 0 (Keras'
// CSVLogger counts so) are shifted to 1-based: by `shift` from the start, else
// from the line with epoch 0, renumbering the samples before it, unless an
// epoch was dropped before it that the shift keeps (then `restart`).
ListRead ReadList(std::string_view text, const ReaderContext& context, int shift) {
  const std::string& source = context.source;
  const int skip = context.options.skip_first_epochs;
  ListRead read;
  std::vector<Sample>& samples = read.samples;
  samples.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  bool dropped_at_skip = false;  // an epoch equal to skip was dropped unshifted
  size_t columns = 0;            // 1 or 2, set by the first data line
  int first_data_line = 0;
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) {
    const Fields fields = SplitFields(line);
    if (fields.empty()) continue;
    const int number = cursor.number();
    if (fields.size > 2) {
      throw DataError(source, number, "",
                      fmt::format("expected an epoch time, or an epoch number and a time; got "
                                  "{} fields: '{}'",
                                  fields.size, Excerpt(Trim(line))));
    }
    if (columns == 0) {
      columns = fields.size;
      first_data_line = number;
    } else if (fields.size != columns) {
      throw DataError(source, number, "",
                      fmt::format("has {} number(s) but line {} has {}; use one form throughout "
                                  "(times only, or 'epoch time' pairs)",
                                  fields.size, first_data_line, columns));
    }
    ++read.listed;
    read.last_line = number;
    int epoch = static_cast<int>(read.listed);
    if (columns == 2) {
      const double listed = FieldNumber(fields.first, source, number, "epoch");
      if (!(listed >= 0 && listed <= kMaxEpochEpochs) || listed != std::floor(listed)) {
        throw DataError(
            source, number, "epoch",
            fmt::format("must be a whole number >= 0, got '{}'", Excerpt(fields.first)));
      }
      if (listed == 0 && shift == 0) {
        if (dropped_at_skip) {
          read.restart = true;
          return read;
        }
        shift = 1;
        for (Sample& s : samples) *s.epoch += 1;
      }
      epoch = static_cast<int>(listed) + shift;
    }
    const double epoch_time_s = RequirePositive(
        FieldNumber(fields.back(), source, number, "epoch_time"), source, number, "epoch_time");
    if (epoch <= skip) {
      dropped_at_skip = dropped_at_skip || epoch == skip;
      continue;
    }
    Sample s;
    s.source = context.sample_source;
    s.line = number;
    s.epoch = epoch;
    s.epoch_time_s = epoch_time_s;
    samples.push_back(std::move(s));
  }
  return read;
}

}  // namespace

std::vector<Sample> ReadEpochs(std::string_view text, const ReaderContext& context) {
  ListRead read = ReadList(text, context, 0);
  if (read.restart) read = ReadList(text, context, 1);
  std::vector<Sample>& samples = read.samples;
  if (samples.empty() && read.listed > 0) {
    throw DataError(context.source, read.last_line, "epoch",
                    fmt::format("every epoch listed ({}) is <= skip_first_epochs = {}, which "
                                "drops the warm-up epochs; list later epochs too",
                                read.listed, context.options.skip_first_epochs));
  }
  // The reservation counted every line; comments, blank lines and dropped
  // epochs may leave most of it unused.
  if (samples.capacity() > 2 * samples.size()) samples.shrink_to_fit();
  return std::move(samples);
}

}  // namespace fitspeed::io
