// Positions in JSON text (json_text.h).
#include "core/json_text.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace fitspeed {

namespace {

// The string whose opening quote is at `i`: its characters (an escaped one
// as the character after the backslash) and the offset of its closing quote.
std::pair<std::string, size_t> StringAt(const std::string& text, size_t i) {
  std::string s;
  for (++i; i < text.size() && text[i] != '"'; ++i) {
    if (text[i] == '\\') ++i;
    if (i < text.size()) s += text[i];
  }
  return {s, i};
}

size_t SkipSpace(const std::string& text, size_t i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

// Whether the string ending at `end` is a key (a ':' follows it).
bool IsKey(const std::string& text, size_t end) {
  const size_t next = SkipSpace(text, end + 1);
  return next < text.size() && text[next] == ':';
}

}  // namespace

int LineAt(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(),
                                         text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

size_t FindJsonKey(const std::string& text, size_t begin, const std::string& key) {
  int depth = 0;
  for (size_t i = begin; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"') {
      const size_t start = i;
      const auto [s, end] = StringAt(text, i);
      if (depth == 1 && s == key && IsKey(text, end)) return start;
      i = end;
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ']') {
      if (--depth == 0) return std::string::npos;
    }
  }
  return std::string::npos;
}

size_t JsonValueOfKey(const std::string& text, size_t key) {
  const size_t colon = SkipSpace(text, StringAt(text, key).second + 1);
  return SkipSpace(text, colon + 1);
}

size_t FindJsonElement(const std::string& text, size_t begin, int index) {
  int depth = 0;
  int element = 0;
  bool expect = true;
  for (size_t i = begin; i < text.size(); ++i) {
    const char ch = text[i];
    if (depth == 1 && expect && !std::isspace(static_cast<unsigned char>(ch)) && ch != ']') {
      if (element == index) return i;
      expect = false;
    }
    if (ch == '"') {
      i = StringAt(text, i).second;
    } else if (ch == '{' || ch == '[') {
      ++depth;
    } else if (ch == '}' || ch == ']') {
      if (--depth == 0) return std::string::npos;
    } else if (ch == ',' && depth == 1) {
      ++element;
      expect = true;
    }
  }
  return std::string::npos;
}

std::optional<std::pair<std::string, size_t>> FindDuplicateJsonKey(const std::string& text) {
  std::vector<std::set<std::string>> objects;  // the keys of each open object
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"') {
      const size_t start = i;
      const auto [s, end] = StringAt(text, i);
      i = end;
      if (IsKey(text, end) && !objects.empty() && !objects.back().insert(s).second) {
        return std::pair{s, start};
      }
    } else if (ch == '{') {
      objects.emplace_back();
    } else if (ch == '}' && !objects.empty()) {
      objects.pop_back();
    }
  }
  return std::nullopt;
}

}  // namespace fitspeed
