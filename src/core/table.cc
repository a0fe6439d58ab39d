#include "core/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "fitspeed/core/error.h"

namespace fitspeed {

std::string FormatSig(double value, int digits) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-4 && magnitude < 1e9) {
    const int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
    const int decimals = std::max(0, digits - 1 - exponent);
    std::string text = fmt::format("{:.{}f}", value, decimals);
    // Trailing zeros after the point carry no information: 1000.000 -> 1000.
    if (text.find('.') != std::string::npos) {
      text.erase(text.find_last_not_of('0') + 1);
      if (text.back() == '.') text.pop_back();
    }
    return text;
  }
  return fmt::format("{:.{}e}", value, std::max(0, digits - 1));
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return FormatSig(seconds);
  if (std::fabs(seconds) < 60) return fmt::format("{} s", FormatSig(seconds, 3));
  const double rounded = std::round(seconds);
  const long long total = static_cast<long long>(std::fabs(rounded));
  const char* sign = rounded < 0 ? "-" : "";
  const long long days = total / 86400, hours = total % 86400 / 3600;
  const long long minutes = total % 3600 / 60, secs = total % 60;
  if (days > 0) return fmt::format("{}{}-{}:{:02}:{:02}", sign, days, hours, minutes, secs);
  return fmt::format("{}{}:{:02}:{:02}", sign, hours, minutes, secs);
}

TextTable::TextTable(std::vector<std::string> header) : header_(std::move(header)) {}

void TextTable::AddRow(std::vector<std::string> row) {
  FITSPEED_CHECK(row.size() == header_.size(), "table row width differs from its header");
  rows_.push_back(std::move(row));
}

namespace {
bool LooksNumeric(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end != s.c_str();
}
}  // namespace

std::string TextTable::Render() const {
  std::vector<size_t> width(header_.size());
  std::vector<bool> right(header_.size(), true);
  for (size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& row : rows_) {
      width[c] = std::max(width[c], row[c].size());
      if (!row[c].empty() && !LooksNumeric(row[c])) right[c] = false;
    }
  }
  auto render_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      line += right[c] ? fmt::format("{:>{}}", row[c], width[c])
                       : fmt::format("{:<{}}", row[c], width[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string text = render_row(header_);
  for (const auto& row : rows_) text += render_row(row);
  return text;
}

std::string CsvField(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string TextTable::RenderCsv() const {
  auto render_row = [](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += ',';
      line += CsvField(row[c]);
    }
    return line + "\n";
  };
  std::string text = render_row(header_);
  for (const auto& row : rows_) text += render_row(row);
  return text;
}

}  // namespace fitspeed
