// The writer of a sweep transferred from the user's own run
// (fitspeed/calibrate/output.h; fitspeed/calibrate/transfer_run.h): B's modeled
// sweep with the calibration on A as its header.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/finite.h"
#include "core/table.h"
#include "fitspeed/calibrate/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

std::string ParameterText(const CalibratedParameter& p) {
  return p.unit == "s" ? fmt::format("{} = {} ms", p.name, FormatSig(p.value * 1e3, 4))
                       : fmt::format("{} = {}", p.name, FormatSig(p.value, 4));
}

std::string ParametersTextTransferRun(const std::vector<CalibratedParameter>& parameters) {
  std::vector<std::string> items;
  for (const CalibratedParameter& p : parameters) items.push_back(ParameterText(p));
  return items.empty() ? "none" : fmt::format("{}", fmt::join(items, ", "));
}

std::string FractionAsPercent(double fraction) { return FormatSig(100 * fraction, 3) + "%"; }

// The header lines (without a comment prefix).
std::vector<std::string> HeaderLines(const TransferRun& run, bool interval_given) {
  const TransferCalibration& t = run.calibration;
  std::vector<std::string> lines;
  lines.push_back(fmt::format(
      "transferred from {}: {} measured in {} ({}, {} case{} -> {} measured point{}), {}, {}",
      t.source_device, t.network, run.source.from, run.source_kind, t.cases,
      t.cases == 1 ? "" : "s", t.points, t.points == 1 ? "" : "s", PrecisionName(run.precision),
      ActivationLayoutName(run.layout)));
  lines.push_back(fmt::format("fitted on {} to {} measured point{}: {}", t.source_device, t.points,
                              t.points == 1 ? "" : "s", ParametersTextTransferRun(t.fitted)));
  lines.push_back(
      fmt::format("applied to {}: {}", t.target_device, ParametersTextTransferRun(t.applied)));
  for (const TransferCalibration::Kept& k : t.kept) {
    lines.push_back(
        fmt::format("kept at {}'s catalog value: {} ({})", t.target_device, k.name, k.reason));
  }
  lines.push_back(fmt::format(
      "{} fit error (in-sample, throughput): median |e| {}, max {} (catalog before: median {}){}",
      t.source_device, FractionAsPercent(t.source_after.median_abs),
      FractionAsPercent(t.source_after.max_abs), FractionAsPercent(t.source_before.median_abs),
      t.points <= static_cast<int>(t.fitted.size()) ? "; as many parameters as points: exact"
                                                    : ""));
  if (!t.converged) {
    lines.push_back(fmt::format("the calibration on {} did not converge: {}", t.source_device,
                                t.solver_message));
  }
  // The interval itself is printed by WriteDeviceSweep; here only where it
  // comes from.
  if (!interval_given) {
    lines.push_back(
        "prediction interval: none given; the transfer errors on the published cases: "
        "`fitspeed validate`, section Transfer");
  } else {
    lines.push_back(
        "prediction interval: from the errors of transferred predictions on the published "
        "cases (`fitspeed validate`, sections Transfer and Prediction intervals), not the "
        "catalog's");
  }
  return lines;
}

ordered_json ParametersJsonTransferRun(const std::vector<CalibratedParameter>& parameters) {
  ordered_json j = ordered_json::array();
  for (const CalibratedParameter& p : parameters) {
    j.push_back({{"name", p.name}, {"unit", p.unit}, {"value", p.value}, {"initial", p.initial}});
  }
  return j;
}

ordered_json ErrorJsonTransferRun(const DeviceCalibration::Error& e) {
  return {{"cases", e.cases},
          {"rms", FiniteOrNull<ordered_json>(e.rms)},
          {"median_abs", FiniteOrNull<ordered_json>(e.median_abs)},
          {"max_abs", FiniteOrNull<ordered_json>(e.max_abs)}};
}

ordered_json TransferJson(const TransferRun& run) {
  const TransferCalibration& t = run.calibration;
  ordered_json kept = ordered_json::array();
  for (const TransferCalibration::Kept& k : t.kept) {
    kept.push_back({{"name", k.name}, {"reason", k.reason}});
  }
  return {{"from", run.source.from},
          {"from_kind", run.source_kind},
          {"source_device", t.source_device},
          {"target_device", t.target_device},
          {"network", t.network},
          {"precision", PrecisionName(run.precision)},
          {"layout", ActivationLayoutName(run.layout)},
          {"cases", t.cases},
          {"points", t.points},
          {"fitted", ParametersJsonTransferRun(t.fitted)},
          {"applied", ParametersJsonTransferRun(t.applied)},
          {"kept", kept},
          {"source_error_before", ErrorJsonTransferRun(t.source_before)},
          {"source_error_after", ErrorJsonTransferRun(t.source_after)},
          {"converged", t.converged},
          {"solver_message", t.solver_message}};
}

}  // namespace

void WriteTransferSweep(std::ostream& out, const TransferRun& run, const DeviceSweepResult& sweep,
                        const FitResult& fit, OutputFormat format, bool layers,
                        const PredictionInterval* interval) {
  switch (format) {
    case OutputFormat::kTable:
      for (const std::string& line : HeaderLines(run, interval)) out << line << "\n";
      out << "\n";
      WriteDeviceSweep(out, sweep, fit, format, layers, interval);
      break;
    case OutputFormat::kCsv:
      for (const std::string& line : HeaderLines(run, interval)) out << "# " << line << "\n";
      WriteDeviceSweep(out, sweep, fit, format, layers, interval);
      break;
    case OutputFormat::kJson: {
      std::stringstream text;
      WriteDeviceSweep(text, sweep, fit, format, layers, interval);
      ordered_json j = ordered_json::parse(text.str());
      j["transfer"] = TransferJson(run);
      out << j.dump(2) << "\n";
      break;
    }
  }
}

}  // namespace fitspeed
