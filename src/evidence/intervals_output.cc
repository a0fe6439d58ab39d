// The writer of the prediction intervals' coverage (fitspeed/evidence/output.h):
// the leave-one-source-out coverage of the intervals (fitspeed/device/intervals.h)
// and the interval each class gets from all the data.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/evidence/interval_table.h"
#include "fitspeed/evidence/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;
using evidence_output::Number;

using IntervalOf = std::function<PredictionInterval(const std::string&)>;

std::string Factor(double x) { return std::isfinite(x) ? FormatSig(x, 3) : "-"; }
std::string Share(int part, int whole) {
  return whole > 0 ? fmt::format("{:.1f}", 100.0 * part / whole) : "-";
}

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
            Share(row.covered, row.with_interval), std::to_string(row.publishers),
            std::isfinite(row.publisher_coverage) && row.publishers > 0
                ? fmt::format("{:.1f}", 100 * row.publisher_coverage)
                : "-",
            Factor(row.median_width), shipped_cells, basis});
}

void WriteCoverage(std::ostream& out, const CoverageReport& report, const IntervalOf& shipped) {
  TextTable t({"class", "cases", "with_interval", "covered", "below", "above", "coverage_%",
               "publishers", "by_publisher_%", "median_width", "interval_now", "basis"});
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

ordered_json CoverageRowJson(const CoverageRow& row) {
  return {
      {"class", row.error_class},
      {"cases", row.cases},
      {"with_interval", row.with_interval},
      {"covered", row.covered},
      {"below", row.below},
      {"above", row.above},
      {"coverage", row.with_interval > 0 ? ordered_json(row.coverage()) : ordered_json(nullptr)},
      {"publishers", row.publishers},
      {"publisher_coverage",
       row.publishers > 0 ? ordered_json(row.publisher_coverage) : ordered_json(nullptr)},
      {"median_width", Number(row.median_width)}};
}

ordered_json IntervalJson(const PredictionInterval& i) {
  if (!i.available) return {{"available", false}, {"reason", i.reason}};
  return {{"available", true},
          {"basis", i.basis},
          {"cases", i.cases},
          {"sources", i.sources},  // publishers (fitspeed/core/prediction_interval.h)
          {"level", i.level},
          {"low_factor", i.low_factor},
          {"high_factor", i.high_factor},
          {"median_log_ratio", i.median_log_ratio}};
}

ordered_json CoverageJson(const CoverageReport& report, const IntervalOf& shipped) {
  ordered_json classes = ordered_json::array();
  for (const CoverageRow& row : report.classes) {
    ordered_json j = CoverageRowJson(row);
    j["interval_now"] = IntervalJson(shipped(row.error_class));
    classes.push_back(j);
  }
  return {{"classes", classes}, {"overall", CoverageRowJson(report.overall)}};
}

void WriteTableIntervals(std::ostream& out, const IntervalTable& table, double level) {
  out << fmt::format(
      "Prediction intervals ({:.0f}%): leave one publisher out - each case's error "
      "ln(measured/predicted) against the split conformal interval built from the other "
      "publishers' errors of its class, publishers weighted equally (device kind x fp32 or tensor "
      "units; the kind's errors when the class has too few cases or errors from fewer than {} "
      "publishers; none when the kind falls short too); coverage should be near {:.0f}%, by case "
      "(coverage_%) and with publishers weighted equally (by_publisher_%: the mean of each "
      "publisher's share covered); below: measured slower than the interval (the model too "
      "fast); median_width: high/low factor; interval_now: the throughput factors `sweep "
      "--device` prints, from all publishers\n",
      100 * level, kModelIntervalMinSources, 100 * level);
  WriteCoverage(out, LeaveOneSourceOutCoverage(table, level),
                [&](const std::string& c) { return table.For(c, level); });
  if (!table.transfer.empty()) {
    out << fmt::format(
        "\nTransferred predictions (sweep --from), {:.0f}% intervals, leave one publisher out "
        "(a transfer between two publishers' runs is left out with either):\n",
        100 * level);
    WriteCoverage(out, LeaveOneSourceOutTransferCoverage(table, level),
                  [&](const std::string& kind) { return table.ForTransfer(kind, level); });
  }
  if (!table.framework.empty()) {
    out << fmt::format(
        "\nPredictions with a framework profile (sweep --framework) on a GPU the profile was not "
        "fitted on, {:.0f}% intervals, leave one publisher out (every framework's held-out GPUs "
        "together, the kind's errors as the fallback; each profile fitted on other publishers' "
        "runs):\n",
        100 * level);
    WriteCoverage(out, LeaveOneSourceOutFrameworkCoverage(table, level),
                  [&](const std::string& c) { return table.ForFramework(c, level); });
  }
}

// CSV: one row per kind of prediction and class (the coverage rows of the
// table, the interval now split into its two factors).
void WriteCsv(std::ostream& out, const IntervalTable& table, double level) {
  TextTable t({"predictions", "class", "cases", "with_interval", "covered", "below", "above",
               "coverage_pct", "publishers", "publisher_coverage_pct", "median_width",
               "low_factor_now", "high_factor_now", "basis"});
  auto add = [&t](const char* predictions, const CoverageReport& report, const IntervalOf& now) {
    auto row = [&](const CoverageRow& r, const PredictionInterval* i) {
      const bool available = i != nullptr && i->available;
      t.AddRow({predictions, r.error_class, std::to_string(r.cases),
                std::to_string(r.with_interval), std::to_string(r.covered), std::to_string(r.below),
                std::to_string(r.above),
                r.with_interval > 0 ? FormatSig(100 * r.coverage(), 4) : "",
                std::to_string(r.publishers),
                r.publishers > 0 ? FormatSig(100 * r.publisher_coverage, 4) : "",
                std::isfinite(r.median_width) ? FormatSig(r.median_width, 4) : "",
                available ? FormatSig(i->low_factor, 4) : "",
                available ? FormatSig(i->high_factor, 4) : "",
                i == nullptr ? "" : (available ? i->basis : "none")});
    };
    for (const CoverageRow& r : report.classes) {
      const PredictionInterval i = now(r.error_class);
      row(r, &i);
    }
    row(report.overall, nullptr);
  };
  add("catalog", LeaveOneSourceOutCoverage(table, level),
      [&](const std::string& c) { return table.For(c, level); });
  if (!table.transfer.empty()) {
    add("transfer", LeaveOneSourceOutTransferCoverage(table, level),
        [&](const std::string& k) { return table.ForTransfer(k, level); });
  }
  if (!table.framework.empty()) {
    add("framework", LeaveOneSourceOutFrameworkCoverage(table, level),
        [&](const std::string& c) { return table.ForFramework(c, level); });
  }
  out << t.RenderCsv();
}

}  // namespace

namespace evidence_output {

ordered_json IntervalCoverageJson(const IntervalTable& table, double level) {
  ordered_json j = {
      {"level", level},
      {"method",
       "split conformal on ln(measured/predicted), publishers weighted equally, leave one "
       "publisher out"},
      {"catalog", CoverageJson(LeaveOneSourceOutCoverage(table, level),
                               [&](const std::string& c) { return table.For(c, level); })}};
  j["transfer"] =
      table.transfer.empty()
          ? ordered_json(nullptr)
          : CoverageJson(LeaveOneSourceOutTransferCoverage(table, level),
                         [&](const std::string& k) { return table.ForTransfer(k, level); });
  j["framework"] =
      table.framework.empty()
          ? ordered_json(nullptr)
          : CoverageJson(LeaveOneSourceOutFrameworkCoverage(table, level),
                         [&](const std::string& c) { return table.ForFramework(c, level); });
  return j;
}

}  // namespace evidence_output

void WriteIntervalCoverage(std::ostream& out, const IntervalTable& table, double level,
                           OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      WriteTableIntervals(out, table, level);
      break;
    case OutputFormat::kCsv:
      WriteCsv(out, table, level);
      break;
    case OutputFormat::kJson:
      out << evidence_output::IntervalCoverageJson(table, level).dump(2) << "\n";
      break;
  }
}

}  // namespace fitspeed
