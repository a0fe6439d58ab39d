// Helpers for launcher and framework log lines; see log_lines.h.
#include "log_lines.h"

#include <cctype>

#include "text.h"

namespace fitspeed::io {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

// The number of the `n` digits at s[at], or -1 when they are not all digits.
int Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return -1;
  int value = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!IsDigit(s[i])) return -1;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

// Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
long long DaysFromCivil(long long y, long long m, long long d) {
  y -= m <= 2 ? 1 : 0;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The timestamp "YYYY-MM-DD HH:MM:SS[,mmm]]" at s[at] (after the '[').
std::optional<double> TimestampAt(std::string_view s, size_t at) {
  const int year = Digits(s, at, 4);
  const int month = Digits(s, at + 5, 2);
  const int day = Digits(s, at + 8, 2);
  const int hour = Digits(s, at + 11, 2);
  const int minute = Digits(s, at + 14, 2);
  const int second = Digits(s, at + 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60 || s[at + 4] != '-' ||
      s[at + 7] != '-' || s[at + 10] != ' ' || s[at + 13] != ':' || s[at + 16] != ':') {
    return std::nullopt;
  }
  size_t end = at + 19;
  double fraction = 0;
  if (end < s.size() && (s[end] == ',' || s[end] == '.')) {
    double scale = 0.1;
    ++end;
    const size_t first = end;
    while (end < s.size() && IsDigit(s[end]) && end - first < 9) {
      fraction += scale * (s[end] - '0');
      scale /= 10;
      ++end;
    }
    if (end == first) return std::nullopt;
  }
  if (end >= s.size() || s[end] != ']') return std::nullopt;
  const long long days = DaysFromCivil(year, month, day);
  return static_cast<double>(days) * 86400.0 + hour * 3600.0 + minute * 60.0 + second + fraction;
}

}  // namespace

std::string_view StripTerminalCodes(std::string_view line, std::string& buffer) {
  // Two memchr scans: find_first_of of a set calls memchr once per character
  // of the line (a fifth of the time of reading a Megatron log went there).
  if (line.find('\x1b') == std::string_view::npos && line.find('\b') == std::string_view::npos) {
    return line;
  }
  buffer.clear();
  buffer.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\x1b') {
      if (i + 1 < line.size() && line[i + 1] == '[') {
        size_t j = i + 2;
        while (j < line.size() && !(line[j] >= 0x40 && line[j] <= 0x7e)) ++j;
        i = j;  // the final byte of the sequence goes too
      }
      continue;
    }
    if (c != '\b') buffer += c;
  }
  return buffer;
}

std::optional<Setting> ParseSetting(std::string_view text) {
  const std::string_view t = Trim(text);
  if (t.empty() || !IsNameStart(t[0])) return std::nullopt;
  size_t i = 1;
  while (i < t.size() && IsNameChar(t[i])) ++i;
  const std::string_view name = t.substr(0, i);
  size_t blanks = 0;
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) {
    ++i;
    ++blanks;
  }
  if (blanks == 0) return std::nullopt;
  if (i < t.size() && t[i] == '.') {
    while (i < t.size() && t[i] == '.') ++i;
    if (i < t.size() && t[i] != ' ' && t[i] != '\t') return std::nullopt;  // "a ...b"
  } else if (blanks < 2) {
    return std::nullopt;  // prose ("Detected CUDA files"), not a setting
  }
  return Setting{name, Trim(t.substr(i))};
}

std::optional<double> LogTimestamp(std::string_view line) {
  for (size_t at = line.find('['); at != std::string_view::npos; at = line.find('[', at + 1)) {
    if (const auto t = TimestampAt(line, at + 1)) return t;
  }
  return std::nullopt;
}

std::optional<double> WholeSettingAfter(std::string_view text, std::string_view key) {
  size_t from = 0;
  while (true) {
    const size_t at = text.find(key, from);
    if (at == std::string_view::npos) return std::nullopt;
    from = at + key.size();
    if (at > 0 && IsNameChar(text[at - 1])) continue;
    std::string_view rest = text.substr(from);
    if (StartsWith(rest, "'") || StartsWith(rest, "\"")) rest = rest.substr(1);
    if (!StartsWith(rest, "=") && !StartsWith(rest, ":")) continue;
    rest = Trim(rest.substr(1));
    if (StartsWith(rest, "[")) rest = rest.substr(1);
    std::string_view tail;
    const auto n = LeadingPrinted(rest, &tail);
    if (!n || n->half_unit != 0.5 || n->value < 1) continue;
    return n->value;
  }
}

std::optional<double> MllogWholeValue(std::string_view text, std::string_view key) {
  if (!Contains(text, ":::MLLOG")) return std::nullopt;
  const size_t at_key = text.find(key);
  if (at_key == std::string_view::npos || at_key == 0 || text[at_key - 1] != '"' ||
      !StartsWith(text.substr(at_key + key.size()), "\"")) {
    return std::nullopt;
  }
  const size_t at = text.find("\"value\"");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = Trim(text.substr(at + 7));
  if (!StartsWith(rest, ":")) return std::nullopt;
  std::string_view tail;
  const auto n = LeadingPrinted(Trim(rest.substr(1)), &tail);
  if (!n || n->half_unit != 0.5 || n->value < 1) return std::nullopt;
  return n->value;
}

}  // namespace fitspeed::io
