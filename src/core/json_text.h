// Positions in JSON text, which nlohmann::json does not keep: the line of a
// key or an element, for error messages that name the line of a file
// (device and links files, config.json). The text is valid JSON, already
// parsed; these scan it again, skipping strings.
#ifndef FITSPEED_SRC_CORE_JSON_TEXT_H_
#define FITSPEED_SRC_CORE_JSON_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace fitspeed {

// 1-based line of `offset` in `text` (the last line for an offset past the end).
int LineAt(const std::string& text, size_t offset);

// Of the object whose '{' is at `begin`: the offset of its own key `key` (its
// opening quote; keys of nested objects are skipped), or npos.
size_t FindJsonKey(const std::string& text, size_t begin, const std::string& key);

// The offset of the value of the key whose opening quote is at `key`.
size_t JsonValueOfKey(const std::string& text, size_t key);

// Of the array whose '[' is at `begin`: the offset of element `index`, or npos.
size_t FindJsonElement(const std::string& text, size_t begin, int index);

// The first key given twice in one object, and the offset of its second
// appearance; nullopt when none (nlohmann::json keeps the last silently).
std::optional<std::pair<std::string, size_t>> FindDuplicateJsonKey(const std::string& text);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_JSON_TEXT_H_
