#include "text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "fitspeed/core/error.h"

namespace fitspeed::io {

LineCursor::LineCursor(ReadBytes read, size_t chunk_bytes, std::string start)
    : ended_(false), read_(std::move(read)), chunk_bytes_(chunk_bytes), buffer_(std::move(start)) {
  FITSPEED_CHECK(chunk_bytes_ > 0, "LineCursor: chunk_bytes must be > 0");
  data_ = buffer_.data();
  size_ = buffer_.size();
}

void LineCursor::Refill() {
  const size_t kept = size_ - pos_;
  std::memmove(buffer_.data(), buffer_.data() + pos_, kept);
  pos_ = 0;
  // Room for a whole chunk after what is kept; doubling, so that a line
  // longer than a chunk is read in linear time.
  if (buffer_.size() < kept + chunk_bytes_) {
    buffer_.resize(std::max(kept + chunk_bytes_, 2 * buffer_.size()));
  }
  const size_t n = read_(buffer_.data() + kept, buffer_.size() - kept);
  ended_ = n == 0;
  data_ = buffer_.data();
  size_ = kept + n;
}

bool LineCursor::Next(std::string_view& line) {
  size_t end = pos_;
  for (;;) {
    const char* data = data_;
    const size_t size = size_;
    while (end < size && data[end] != '\n' && data[end] != '\r') ++end;
    // Done when the line's end is known: a '\n', a '\r' with what follows it
    // in the buffer (a '\n' or not), or the end of the text.
    if (ended_ || (end < size && (data[end] == '\n' || end + 1 < size))) break;
    const size_t scanned = end - pos_;
    Refill();
    end = pos_ + scanned;
  }
  if (pos_ >= size_) return false;
  line = std::string_view(data_ + pos_, end - pos_);
  // A line counts as a new editor line unless the previous one ended with a lone '\r'.
  if (!last_was_cr_) ++number_;
  last_was_cr_ = false;
  cut_ = end == size_;
  if (end < size_) {
    if (data_[end] == '\r' && end + 1 < size_ && data_[end + 1] == '\n') {
      pos_ = end + 2;
    } else {
      last_was_cr_ = data_[end] == '\r';
      pos_ = end + 1;
    }
  } else {
    pos_ = end;
  }
  return true;
}

namespace {
// std::isspace in the "C" locale, inline (Trim runs on every field of every line).
bool IsSpaceText(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
}  // namespace

std::string_view Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpaceText(s[b])) ++b;
  while (e > b && IsSpaceText(s[e - 1])) --e;
  return s.substr(b, e - b);
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> Split(std::string_view s, char delimiter, bool quotes) {
  std::vector<std::string> fields;
  std::string field;
  bool in_quotes = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quotes && c == '"') {
      if (in_quotes && i + 1 < s.size() && s[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        in_quotes = !in_quotes;
      }
    } else if (c == delimiter && !in_quotes) {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

std::optional<double> LeadingDouble(std::string_view s, std::string_view* rest) {
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  size_t skip_plus = (b < s.size() && s[b] == '+') ? 1 : 0;
  const char* first = s.data() + b + skip_plus;
  const char* last = s.data() + s.size();
  double value = 0;
  const auto result = std::from_chars(first, last, value);
  if (result.ec == std::errc::result_out_of_range) {
    // from_chars leaves value unset on overflow/underflow: say what it was.
    const bool negative = first < last && *first == '-';
    value = std::numeric_limits<double>::infinity() * (negative ? -1 : 1);
    // Underflow (tiny numbers) becomes zero rather than infinity.
    std::string literal(first, result.ptr);
    const size_t e = literal.find_first_of("eE");
    if (e != std::string::npos && e + 1 < literal.size() && literal[e + 1] == '-') value = 0;
  } else if (result.ec != std::errc()) {
    return std::nullopt;
  }
  if (rest) *rest = std::string_view(result.ptr, static_cast<size_t>(last - result.ptr));
  return value;
}

std::optional<double> ToDouble(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  std::string_view rest;
  const auto value = LeadingDouble(s, &rest);
  if (!value || !Trim(rest).empty()) return std::nullopt;
  return value;
}

double ParseNumber(std::string_view s, const std::string& source, int line,
                   std::string_view field) {
  const auto value = ToDouble(s);
  if (!value) {
    throw DataError(source, line, std::string(field),
                    fmt::format("expected a number, got '{}'", Excerpt(s)));
  }
  return *value;
}

double RequirePositive(double value, const std::string& source, int line, std::string_view field) {
  if (std::isnan(value)) throw DataError(source, line, std::string(field), "is NaN");
  if (std::isinf(value)) throw DataError(source, line, std::string(field), "is infinite");
  if (value <= 0) {
    throw DataError(source, line, std::string(field), fmt::format("must be > 0, got {}", value));
  }
  return value;
}

double ParsePositive(std::string_view s, const std::string& source, int line,
                     std::string_view field) {
  return RequirePositive(ParseNumber(s, source, line, field), source, line, field);
}

std::vector<std::string_view> SplitBlank(std::string_view s) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) fields.push_back(s.substr(start, i - start));
  }
  return fields;
}

double Printed::RelativeError() const { return value > 0 ? half_unit / value : HUGE_VAL; }

std::optional<Printed> LeadingPrinted(std::string_view s, std::string_view* rest) {
  s = Trim(s);
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0) return std::nullopt;
  size_t decimals = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      ++i;
      ++decimals;
    }
  }
  const auto value = ToDouble(s.substr(0, i));
  if (!value || !std::isfinite(*value)) return std::nullopt;
  *rest = s.substr(i);
  return Printed{*value, 0.5 * std::pow(10.0, -static_cast<double>(decimals))};
}

bool LooksBinary(std::string_view text) {
  const size_t n = std::min<size_t>(text.size(), 4096);
  size_t control = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0) return true;
    if (c < 32 && c != '\n' && c != '\r' && c != '\t' && c != '\b' && c != '\f' && c != 27) {
      ++control;
    }
  }
  return n > 0 && control * 20 > n;  // over 5% control characters
}

std::string Excerpt(std::string_view text, size_t n) {
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 32 || c == 127) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= n && text.size() > n) out += "...";
  return out;
}

std::string ReplacePythonLiterals(std::string_view json,
                                  std::string (*replacement)(std::string_view word)) {
  constexpr std::string_view kWords[] = {"-Infinity", "Infinity", "NaN"};
  std::string out;
  out.reserve(json.size());
  // The text is copied in spans between replaced words (a character at a time,
  // with every word compared at every position, this was a third of reading a
  // trainer_state.json).
  size_t copied = 0;  // json[copied, i) is still to copy
  size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {  // a string: its words stay
      ++i;
      while (i < json.size() && json[i] != '"') i += json[i] == '\\' ? 2 : 1;
      ++i;
      continue;
    }
    bool replaced = false;
    if (c == '-' || c == 'I' || c == 'N') {
      for (const std::string_view word : kWords) {
        if (json.compare(i, word.size(), word) == 0) {
          out.append(json.substr(copied, i - copied));
          out += replacement(word);
          i += word.size();
          copied = i;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) ++i;
  }
  out.append(json.substr(std::min(copied, json.size())));
  return out;
}

}  // namespace fitspeed::io
