// Reading a JSON object's fields with errors that name the file, line and
// field (the network format, docs/models.md). Private to the model layer.
#ifndef FITSPEED_SRC_MODEL_KINDS_JSON_OBJECT_H_
#define FITSPEED_SRC_MODEL_KINDS_JSON_OBJECT_H_

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/core/error.h"

namespace fitspeed::kinds {

using nlohmann::json;

// Reads the fields of one JSON object, naming them in errors, and checks that
// no unknown key remains.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string source, int line, std::string where)
      : object_(object), source_(std::move(source)), line_(line), where_(std::move(where)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& problem) const {
    const std::string field = key.empty() ? where_ : (where_.empty() ? key : where_ + "." + key);
    throw DataError(source_, line_, field, problem);
  }

  bool Has(const std::string& key) {
    used_.insert(key);
    return object_.contains(key);
  }
  const json& Get(const std::string& key) {
    used_.insert(key);
    return object_.at(key);
  }

  std::string String(const std::string& key, const std::string& fallback) {
    if (!Has(key)) return fallback;
    const json& v = Get(key);
    if (!v.is_string()) Fail(key, fmt::format("expected a string, got {}", Excerpt(v)));
    return v.get<std::string>();
  }

  bool Bool(const std::string& key, bool fallback) {
    if (!Has(key)) return fallback;
    const json& v = Get(key);
    if (!v.is_boolean()) Fail(key, fmt::format("expected true or false, got {}", Excerpt(v)));
    return v.get<bool>();
  }

  double Number(const std::string& key, double fallback) {
    if (!Has(key)) return fallback;
    const json& v = Get(key);
    if (!v.is_number()) Fail(key, fmt::format("expected a number, got {}", Excerpt(v)));
    const double value = v.get<double>();
    if (!std::isfinite(value)) Fail(key, "expected a finite number");
    return value;
  }

  // An integer in [lo, hi]; `value` is the element at `key` (or inside it).
  int64_t Integer(const std::string& key, const json& value, int64_t lo, int64_t hi) {
    if (!value.is_number_integer()) {
      Fail(key, fmt::format("expected an integer, got {}", Excerpt(value)));
    }
    // nlohmann::json stores non-negative integers as unsigned.
    const bool in_range = value.is_number_unsigned()
                              ? value.get<uint64_t>() <= static_cast<uint64_t>(hi) &&
                                    static_cast<int64_t>(value.get<uint64_t>()) >= lo
                              : value.get<int64_t>() >= lo && value.get<int64_t>() <= hi;
    if (!in_range) Fail(key, fmt::format("{} is out of range [{}, {}]", Excerpt(value), lo, hi));
    return value.get<int64_t>();
  }
  int64_t Integer(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
    if (!Has(key)) return fallback;
    return Integer(key, Get(key), lo, hi);
  }
  int64_t RequiredInteger(const std::string& key, int64_t lo, int64_t hi) {
    if (!Has(key)) Fail(key, "missing");
    return Integer(key, Get(key), lo, hi);
  }

  // An int or a list of `sizes` ints (e.g. kernel 3 or [3, 5]).
  std::vector<int64_t> IntegerList(const std::string& key, const std::vector<size_t>& sizes,
                                   int64_t lo, int64_t hi) {
    const json& v = Get(key);
    if (v.is_array()) {
      bool size_ok = false;
      for (size_t n : sizes) size_ok = size_ok || v.size() == n;
      if (!size_ok) {
        Fail(key, fmt::format("expected an integer or a list of {} integers, got {}",
                              fmt::join(sizes, " or "), Excerpt(v)));
      }
      std::vector<int64_t> out;
      for (const json& e : v) out.push_back(Integer(key, e, lo, hi));
      return out;
    }
    return {Integer(key, v, lo, hi)};
  }

  void RejectUnknownKeys() const {
    for (const auto& item : object_.items()) {
      if (used_.count(item.key()) == 0) Fail(item.key(), "unknown key");
    }
  }

  static std::string Excerpt(const json& v) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }

 private:
  const json& object_;
  std::string source_;
  int line_;
  std::string where_;
  std::set<std::string> used_;
};

}  // namespace fitspeed::kinds

#endif  // FITSPEED_SRC_MODEL_KINDS_JSON_OBJECT_H_
