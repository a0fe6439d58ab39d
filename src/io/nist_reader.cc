// Reader of NIST StRD nonlinear regression data sets (.dat), read as x = batch and
// y = throughput in samples/s. Format: https://www.itl.nist.gov/div898/strd/nls/nls_main.shtml
// (a fixed header that names the data's line range, "Data (lines 61 to 74)",
// and a column line "Data:  y  x" just before the data).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr std::string_view kSignature = "NIST/ITL StRD";

// The "Data (lines A to B)" range of the header's "File Format" block.
struct LineRange {
  int first = 0;
  int last = 0;
};

// Parses "Data   (lines 61 to 74)"; nullopt when `line` is not that entry.
std::optional<LineRange> ParseDataRange(std::string_view line) {
  line = Trim(line);
  if (!StartsWith(line, "Data")) return std::nullopt;
  std::string_view rest = Trim(line.substr(4));
  if (!StartsWith(rest, "(lines")) return std::nullopt;
  rest = rest.substr(6);
  std::string_view after_first;
  const auto first = LeadingDouble(rest, &after_first);
  if (!first) return std::nullopt;
  after_first = Trim(after_first);
  if (!StartsWith(after_first, "to")) return std::nullopt;
  std::string_view after_last;
  const auto last = LeadingDouble(after_first.substr(2), &after_last);
  if (!last || Trim(after_last) != ")") return std::nullopt;
  // Line numbers are small positive integers; anything else is not a range.
  if (*first < 1 || *last < *first || *last > 1e8 || *first != static_cast<int>(*first) ||
      *last != static_cast<int>(*last)) {
    return std::nullopt;
  }
  return LineRange{static_cast<int>(*first), static_cast<int>(*last)};
}

// The variable names of the column line "Data:   y   x" (empty when `line`
// is another "Data:" line, such as "Data:  1 Response (y = volume)").
std::vector<std::string_view> ParseColumnNames(std::string_view line) {
  line = Trim(line);
  if (!StartsWith(line, "Data:")) return {};
  std::vector<std::string_view> names = SplitBlank(line.substr(5));
  for (std::string_view name : names) {
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return {};
    for (char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) return {};
    }
  }
  return names;
}

}  // namespace

bool LooksLikeNist(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.Next(line)) {
    line = Trim(line);
    if (!line.empty()) return StartsWith(line, kSignature);
  }
  return false;
}

std::vector<Sample> ReadNist(std::string_view text, const ReaderContext& context) {
  const std::string& source = context.source;
  std::optional<LineRange> range;
  int columns_line = 0;
  std::vector<std::string_view> names;
  SharedString dataset;
  // First pass: the header entries that say where the data is and what it holds.
  {
    LineCursor cursor(text);
    std::string_view line;
    while (cursor.Next(line)) {
      if (!range) range = ParseDataRange(line);
      const std::string_view trimmed = Trim(line);
      if (dataset.empty() && StartsWith(trimmed, "Dataset Name:")) {
        const auto words = SplitBlank(trimmed.substr(13));
        if (!words.empty()) dataset = std::string(words.front());
      }
      if (columns_line == 0) {
        names = ParseColumnNames(line);
        if (!names.empty()) columns_line = cursor.number();
      }
    }
  }
  if (!range && columns_line == 0) {
    throw DataError(source, 0, "",
                    "not a NIST StRD data set: no 'Data (lines A to B)' entry in the header and "
                    "no 'Data: y x' column line");
  }
  if (columns_line != 0) {
    if (names.size() != 2) {
      throw DataError(source, columns_line, "",
                      fmt::format("the data has {} columns; fitspeed reads exactly two, the "
                                  "response y (throughput) and one predictor x (batch)",
                                  names.size()));
    }
  }
  // NIST puts the response first ("Data: y x"); follow the column line if it says otherwise.
  const bool x_first = columns_line != 0 && names[0] == "x" && names[1] == "y";
  const int first = range ? range->first : columns_line + 1;
  const int last = range ? range->last : 0;  // 0: up to the end of the file

  std::vector<Sample> samples;
  if (range) {  // as many as the range has lines, and no more than the text has
    const auto lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    samples.reserve(std::min(lines, static_cast<size_t>(std::max(0, last - first + 1))));
  }
  LineCursor cursor(text);
  std::string_view line;
  int number = 0;
  while (cursor.Next(line)) {
    number = cursor.number();
    if (number < first) continue;
    if (last != 0 && number > last) break;
    const std::vector<std::string_view> fields = SplitBlank(Trim(line));
    if (fields.empty()) {
      // The stated range has no gaps; without one, blank lines are skipped.
      if (range) throw DataError(source, number, "", "blank line inside the data range");
      continue;
    }
    if (fields.size() != 2) {
      throw DataError(source, number, "",
                      fmt::format("expected two numbers (y x), got {} fields: '{}'", fields.size(),
                                  Excerpt(Trim(line))));
    }
    const std::string_view y_text = x_first ? fields[1] : fields[0];
    const std::string_view x_text = x_first ? fields[0] : fields[1];
    Sample s;
    s.source = context.sample_source;
    s.line = number;
    s.label = dataset;
    s.throughput_sps = ParsePositive(y_text, source, number, "y");
    s.batch = ParsePositive(x_text, source, number, "x");
    samples.push_back(std::move(s));
  }
  if (range && number < range->last) {
    throw DataError(source, number, "",
                    fmt::format("the header says the data runs to line {}, but the file ends "
                                "at line {}",
                                range->last, number));
  }
  return samples;
}

}  // namespace fitspeed::io
