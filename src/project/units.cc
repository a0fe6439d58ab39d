// Bandwidths and durations with units.
#include "project/units.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

namespace {

// A number followed by a unit from `units` (exact case first, then any case);
// nullopt when the text is no number or the unit is unknown or ambiguous.
template <size_t N>
std::optional<double> NumberWithUnit(std::string_view text,
                                     const std::array<std::pair<const char*, double>, N>& units) {
  std::string_view rest;
  const std::optional<double> number = io::LeadingDouble(io::Trim(text), &rest);
  if (!number) return std::nullopt;
  rest = io::Trim(rest);
  for (const auto& [name, factor] : units) {
    if (rest == name) return *number * factor;
  }
  // Case-insensitive only when that leaves one meaning ("gb/s" could be
  // gigabytes or gigabits per second and is refused).
  std::optional<double> match;
  for (const auto& [name, factor] : units) {
    if (io::ToLower(rest) != io::ToLower(name)) continue;
    if (match && *match != factor) return std::nullopt;
    match = factor;
  }
  if (!match) return std::nullopt;
  return *number * *match;
}

}  // namespace

double ParseBandwidth(std::string_view text, std::string_view what) {
  // Decimal prefixes are powers of 1000 and binary ones of 1024 (IEC 80000-13);
  // a bit is 1/8 byte. Exact-case names first, so "Mb/s" is megabits and "MB/s" megabytes.
  static const std::array<std::pair<const char*, double>, 23> kUnits = {{
      {"", 1},
      {"B/s", 1},
      {"kB/s", 1e3},
      {"KB/s", 1e3},
      {"MB/s", 1e6},
      {"GB/s", 1e9},
      {"TB/s", 1e12},
      {"KiB/s", 1024.0},
      {"MiB/s", 1048576.0},
      {"GiB/s", 1073741824.0},
      {"bit/s", 0.125},
      {"kbit/s", 125.0},
      {"Mbit/s", 1.25e5},
      {"Gbit/s", 1.25e8},
      {"Tbit/s", 1.25e11},
      {"bps", 0.125},
      {"Kbps", 125.0},
      {"Mbps", 1.25e5},
      {"Gbps", 1.25e8},
      {"Tbps", 1.25e11},
      {"Mb/s", 1.25e5},
      {"Gb/s", 1.25e8},
      {"Tb/s", 1.25e11},
  }};
  const std::optional<double> value = NumberWithUnit(text, kUnits);
  if (!value) {
    throw UsageError(fmt::format(
        "{} '{}' is not a bandwidth: give a number and a unit such as 12GB/s, 50Gbit/s or "
        "900MiB/s (a bare number is bytes per second)",
        what, text));
  }
  if (!std::isfinite(*value) || *value <= 0) {
    throw UsageError(fmt::format("{} '{}' must be > 0 and finite", what, text));
  }
  return *value;
}

double ParseSeconds(std::string_view text, std::string_view what) {
  const std::string_view trimmed = io::Trim(text);
  std::optional<double> value;
  if (trimmed.find(':') != std::string_view::npos) {
    // h:mm:ss or m:ss; every field a non-negative number.
    const std::vector<std::string> fields = io::Split(trimmed, ':');
    if (fields.size() <= 3) {
      double total = 0;
      bool ok = true;
      for (const std::string& field : fields) {
        const std::optional<double> part = io::ToDouble(field);
        if (!part || *part < 0) ok = false;
        total = total * 60 + (part ? *part : 0);
      }
      if (ok) value = total;
    }
  } else {
    static const std::array<std::pair<const char*, double>, 9> kUnits = {{
        {"", 1},
        {"ns", 1e-9},
        {"us", 1e-6},
        {"ms", 1e-3},
        {"s", 1},
        {"m", 60},
        {"min", 60},
        {"h", 3600},
        {"d", 86400},
    }};
    value = NumberWithUnit(trimmed, kUnits);
  }
  if (!value) {
    throw UsageError(fmt::format(
        "{} '{}' is not a duration: give h:mm:ss or a number with a unit (ns, us, ms, s, m, h, "
        "d; a bare number is seconds)",
        what, text));
  }
  if (!std::isfinite(*value) || *value < 0) {
    throw UsageError(fmt::format("{} '{}' must be >= 0 and finite", what, text));
  }
  return *value;
}

}  // namespace fitspeed
