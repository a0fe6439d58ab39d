// Formatting at the edges: numbers with significant digits, durations, and a
// small column-aligned text table that also renders as CSV.
#ifndef FITSPEED_SRC_CORE_TABLE_H_
#define FITSPEED_SRC_CORE_TABLE_H_

#include <string>
#include <vector>

namespace fitspeed {

// `value` rounded to `digits` significant digits, no exponent for
// 1e-4 <= |v| < 1e9 and no trailing zeros ("1593", "0.05412", "0.05", "1.2e-07");
// "nan"/"inf" as such.
std::string FormatSig(double value, int digits = 4);

// Seconds as h:mm:ss ("2:03:07"), or d-h:mm:ss past a day; sub-minute
// durations as seconds ("12.3 s").
std::string FormatDuration(double seconds);

// A table of strings with a header row. Render() aligns columns (numbers to the
// right), RenderCsv() quotes fields that need it (RFC 4180).
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void AddRow(std::vector<std::string> row);  // must have as many fields as the header
  std::string Render() const;
  std::string RenderCsv() const;
  size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// A CSV field quoted when it contains a comma, quote or line break.
std::string CsvField(const std::string& field);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_TABLE_H_
