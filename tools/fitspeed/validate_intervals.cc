// The prediction-interval section of `fitspeed validate` (validate_intervals.h).
#include "validate_intervals.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "fitspeed/core/table.h"
#include "validate_util.h"

namespace fitspeed::cli {

namespace {

using json = nlohmann::ordered_json;

using IntervalOf = std::function<PredictionInterval(const std::string&)>;

std::string Factor(double x) { return std::isfinite(x) ? FormatSig(x, 3) : "-"; }
std::string Share(int part, int whole) {
  return whole > 0 ? fmt::format("{:.1f}", 100.0 * part / whole) : "-";
}
using validate_util::Number;

void AddCoverageRow(TextTable& t, const CoverageRow& row, const PredictionInterval* shipped) {
  std::string shipped_cells = "-", basis = "-";
  if (shipped != nullptr) {
    basis = shipped->available ? shipped->basis : "none";
    if (shipped->available) {
      shipped_cells =
          fmt::format("[{}, {}]", Factor(shipped->low_factor), Factor(shipped->high_factor));
    }
  }
  t.AddRow({row.error_class, std::to_string(row.cases), std::to_string(row.with_interval),
            std::to_string(row.covered), std::to_string(row.below), std::to_string(row.above),
            Share(row.covered, row.with_interval), Factor(row.median_width), shipped_cells, basis});
}

void WriteCoverage(std::ostream& out, const CoverageReport& report, const IntervalOf& shipped) {
  TextTable t({"class", "cases", "with_interval", "covered", "below", "above", "coverage_%",
               "median_width", "interval_now", "basis"});
  std::vector<PredictionInterval> now;
  for (const CoverageRow& row : report.classes) {
    const PredictionInterval i = shipped(row.error_class);
    AddCoverageRow(t, row, &i);
    if (!i.available) now.push_back(i);
  }
  AddCoverageRow(t, report.overall, nullptr);
  out << t.Render();
  for (const PredictionInterval& i : now) out << "  no interval: " << i.reason << "\n";
}

json CoverageRowJson(const CoverageRow& row) {
  return {{"class", row.error_class},
          {"cases", row.cases},
          {"with_interval", row.with_interval},
          {"covered", row.covered},
          {"below", row.below},
          {"above", row.above},
          {"coverage", row.with_interval > 0 ? json(row.coverage()) : json(nullptr)},
          {"median_width", Number(row.median_width)}};
}

json IntervalJson(const PredictionInterval& i) {
  if (!i.available) return {{"available", false}, {"reason", i.reason}};
  return {{"available", true},
          {"basis", i.basis},
          {"cases", i.cases},
          {"sources", i.sources},
          {"level", i.level},
          {"low_factor", i.low_factor},
          {"high_factor", i.high_factor},
          {"median_log_ratio", i.median_log_ratio}};
}

json CoverageJson(const CoverageReport& report, const IntervalOf& shipped) {
  json classes = json::array();
  for (const CoverageRow& row : report.classes) {
    json j = CoverageRowJson(row);
    j["interval_now"] = IntervalJson(shipped(row.error_class));
    classes.push_back(j);
  }
  return {{"classes", classes}, {"overall", CoverageRowJson(report.overall)}};
}

}  // namespace

void WriteIntervalSection(std::ostream& out, const IntervalTable& table, double level) {
  out << fmt::format(
      "\nPrediction intervals ({:.0f}%): leave one source out - each case's error "
      "ln(measured/predicted) against the split conformal interval built from the other sources' "
      "errors of its class (device kind x fp32 or tensor units; the kind's errors when the class "
      "has too few cases or errors from fewer than {} sources; none when the kind falls short "
      "too); "
      "coverage should be near {:.0f}%; below: measured slower than the interval (the model too "
      "fast); median_width: high/low factor; interval_now: the throughput factors `sweep "
      "--device` prints, from all sources\n",
      100 * level, kModelIntervalMinSources, 100 * level);
  WriteCoverage(out, LeaveOneSourceOutCoverage(table, level),
                [&](const std::string& c) { return table.For(c, level); });
  if (!table.transfer.empty()) {
    out << fmt::format(
        "\nTransferred predictions (sweep --from), {:.0f}% intervals, leave one source out:\n",
        100 * level);
    WriteCoverage(out, LeaveOneSourceOutTransferCoverage(table, level),
                  [&](const std::string& kind) { return table.ForTransfer(kind, level); });
  }
  if (!table.framework.empty()) {
    out << fmt::format(
        "\nPredictions with a framework profile (sweep --framework) on a GPU the profile was not "
        "fitted on, {:.0f}% intervals, leave one source out (every framework's held-out GPUs "
        "together, the kind's errors as the fallback):\n",
        100 * level);
    WriteCoverage(out, LeaveOneSourceOutFrameworkCoverage(table, level),
                  [&](const std::string& c) { return table.ForFramework(c, level); });
  }
}

json IntervalSectionJson(const IntervalTable& table, double level) {
  json j = {{"level", level},
            {"method", "split conformal on ln(measured/predicted), leave one source out"},
            {"catalog", CoverageJson(LeaveOneSourceOutCoverage(table, level),
                                     [&](const std::string& c) { return table.For(c, level); })}};
  j["transfer"] =
      table.transfer.empty()
          ? json(nullptr)
          : CoverageJson(LeaveOneSourceOutTransferCoverage(table, level),
                         [&](const std::string& k) { return table.ForTransfer(k, level); });
  j["framework"] =
      table.framework.empty()
          ? json(nullptr)
          : CoverageJson(LeaveOneSourceOutFrameworkCoverage(table, level),
                         [&](const std::string& c) { return table.ForFramework(c, level); });
  return j;
}

}  // namespace fitspeed::cli
