// Cells and JSON values shared by the evidence writers (*_output.cc), and the
// sections that the cases report's JSON embeds.
#ifndef FITSPEED_SRC_EVIDENCE_OUTPUT_UTIL_H_
#define FITSPEED_SRC_EVIDENCE_OUTPUT_UTIL_H_

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/finite.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/evidence/transfer.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed::evidence_output {

// A table cell of a percentage, with one decimal ("12.3"), "-" for NaN.
inline std::string PercentCell(double percent) {
  return std::isnan(percent) ? "-" : fmt::format("{:.1f}", percent);
}

// A table cell of a signed percentage (an error), with one decimal and its
// sign ("+12.3", "-4.0"), "-" for NaN.
inline std::string SignedPercentCell(double percent) {
  return std::isnan(percent) ? "-" : fmt::format("{:+.1f}", percent);
}

// A number, null when not finite: the evidence writers' short name for
// FiniteOrNull (core/finite.h).
inline nlohmann::ordered_json Number(double value) {
  return FiniteOrNull<nlohmann::ordered_json>(value);
}

// {"cases", "median_abs_error_pct", "max_abs_error_pct"}.
inline nlohmann::ordered_json SummaryJson(const ErrorSummary& s) {
  return {{"cases", s.cases},
          {"median_abs_error_pct", Number(s.median_abs_error_pct)},
          {"max_abs_error_pct", Number(s.max_abs_error_pct)}};
}

// The "transfer" object of "fitspeed.validate/1" (transfer_output.cc).
nlohmann::ordered_json TransferValidationJson(const TransferValidation& report);

// The "intervals" object of "fitspeed.validate/1": {"level", "method",
// "catalog": {"classes", "overall"}, "transfer", "framework"}
// (intervals_output.cc).
nlohmann::ordered_json IntervalCoverageJson(const IntervalTable& table, double level);

}  // namespace fitspeed::evidence_output

#endif  // FITSPEED_SRC_EVIDENCE_OUTPUT_UTIL_H_
