// Cells and JSON values shared by the sections of `fitspeed validate`
// (validate_command.cc, validate_transfer.cc, validate_intervals.cc,
// validate_placements.cc).
#ifndef FITSPEED_TOOLS_FITSPEED_VALIDATE_UTIL_H_
#define FITSPEED_TOOLS_FITSPEED_VALIDATE_UTIL_H_

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "fitspeed/evidence/validate.h"

namespace fitspeed::cli::validate_util {

// A percentage with one decimal, "-" for NaN.
inline std::string Pct(double value) {
  return std::isnan(value) ? "-" : fmt::format("{:.1f}", value);
}

// A number, null when not finite (JSON has no NaN or infinity).
inline nlohmann::ordered_json Number(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

// {"cases", "median_abs_error_pct", "max_abs_error_pct"}.
inline nlohmann::ordered_json SummaryJson(const ErrorSummary& s) {
  return {{"cases", s.cases},
          {"median_abs_error_pct", Number(s.median_abs_error_pct)},
          {"max_abs_error_pct", Number(s.max_abs_error_pct)}};
}

}  // namespace fitspeed::cli::validate_util

#endif  // FITSPEED_TOOLS_FITSPEED_VALIDATE_UTIL_H_
