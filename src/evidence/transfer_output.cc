// The writer of the transfer check (fitspeed/evidence/output.h): every
// published case predicted from the same network's cases on another device of
// its kind (same precision, framework and device count), calibrated on those
// only (fitspeed/evidence/transfer.h; docs/validation.md, "Transfer").
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/evidence/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;
using evidence_output::Number;
using evidence_output::PercentCell;
using evidence_output::SummaryJson;

ordered_json ParametersJsonTransfer(const std::vector<CalibratedParameter>& parameters) {
  ordered_json j = ordered_json::object();
  for (const CalibratedParameter& p : parameters) j[p.name] = p.value;
  return j;
}

// "compute_scale 0.91, step_host_s 3.2 ms"; "-" for none.
std::string ParametersText(const std::vector<CalibratedParameter>& parameters) {
  std::vector<std::string> items;
  for (const CalibratedParameter& p : parameters) {
    items.push_back(p.unit == "s" ? fmt::format("{} {} ms", p.name, FormatSig(p.value * 1e3, 3))
                                  : fmt::format("{} {}", p.name, FormatSig(p.value, 3)));
  }
  return items.empty() ? "-" : fmt::format("{}", fmt::join(items, ", "));
}

std::string BatchTextTransfer(const TransferredCase& c) {
  return c.accumulation > 1 ? fmt::format("{}x{}", c.batch, c.accumulation)
                            : std::to_string(c.batch);
}

std::string RuleText(bool transfer_host) {
  return transfer_host ? "efficiency scales and host overhead carried to B"
                       : "efficiency scales carried to B, B keeps its host overhead";
}

void WriteSection(std::ostream& out, const TransferValidation& report, bool csv) {
  if (csv) {
    out << "\n# Transfer: each case on device B predicted from the same network's cases on "
           "device A (same precision, framework and devices), calibrated on A only; "
        << RuleText(report.transfer_host) << "\n";
    TextTable table({"pair", "source_device", "target_device", "network", "precision", "framework",
                     "devices", "batch", "accumulation", "measured_sps", "predicted_sps",
                     "error_pct", "catalog_sps", "catalog_error_pct", "log_ratio", "key", "source",
                     "line"});
    for (const TransferredCase& c : report.cases) {
      table.AddRow({c.pair, c.source_device, c.target_device, c.network, PrecisionName(c.precision),
                    c.framework, std::to_string(c.devices), std::to_string(c.batch),
                    std::to_string(c.accumulation), FormatSig(c.measured_sps, 6),
                    FormatSig(c.predicted_sps, 6), FormatSig(c.error_pct, 4),
                    FormatSig(c.catalog_sps, 6), FormatSig(c.catalog_error_pct, 4),
                    FormatSig(c.log_ratio, 6), c.key, c.source, std::to_string(c.line)});
    }
    out << table.RenderCsv();
    for (const TransferPairSummary& p : report.pairs) {
      out << fmt::format("# transfer {}: {} cases, median |error| {}%\n", p.pair, p.error.cases,
                         PercentCell(p.error.median_abs_error_pct));
    }
    out << fmt::format("# transfer overall: {} cases, median |error| {}%, mean {}%\n",
                       report.overall.cases, PercentCell(report.overall.median_abs_error_pct),
                       PercentCell(report.overall_mean_abs_error_pct));
    return;
  }
  out << "\nTransfer: each case on device B predicted from the same network's cases on device "
         "A of its kind (same precision, framework and device count), the step model calibrated "
         "on A's cases only (what a user who measured a run on A learns about B; "
      << RuleText(report.transfer_host)
      << "); catalog_error_%: B as catalogued, no transfer; log_ratio = "
         "ln(measured/predicted)\n";
  TextTable cases({"pair", "network", "precision", "framework", "devices", "batch", "measured_sps",
                   "predicted_sps", "error_%", "catalog_error_%", "log_ratio", "source"});
  for (const TransferredCase& c : report.cases) {
    cases.AddRow(
        {c.pair, c.network, PrecisionName(c.precision), c.framework.empty() ? "-" : c.framework,
         std::to_string(c.devices), BatchTextTransfer(c), FormatSig(c.measured_sps, 4),
         FormatSig(c.predicted_sps, 4), fmt::format("{:+.1f}", c.error_pct),
         fmt::format("{:+.1f}", c.catalog_error_pct), fmt::format("{:+.3f}", c.log_ratio),
         fmt::format("{}:{}", std::filesystem::path(c.source).filename().string(), c.line)});
  }
  out << cases.Render();
  out << "\nTransfer folds: A's cases of a group calibrated (the host overhead and the scale "
         "their precision uses; one parameter per measured batch), B's cases of the group "
         "predicted\n";
  TextTable folds({"pair", "network", "precision", "framework", "devices", "a_cases", "b_cases",
                   "fitted_on_a", "a_fit_median_%", "median_%", "problem"});
  for (const TransferFold& f : report.folds) {
    folds.AddRow({f.source_device + "->" + f.target_device, f.network, PrecisionName(f.precision),
                  f.framework.empty() ? "-" : f.framework, std::to_string(f.devices),
                  std::to_string(f.source_cases), std::to_string(f.target_cases),
                  ParametersText(f.fitted),
                  f.computed ? PercentCell(100 * f.source_after.median_abs) : "-",
                  f.computed ? PercentCell(f.error.median_abs_error_pct) : "-", f.problem});
  }
  out << folds.Render();
  out << "\nTransfer: absolute % error per ordered pair (out-of-sample); catalog: the same "
         "cases predicted by B as catalogued\n";
  TextTable pairs({"pair", "cases", "median_%", "mean_%", "max_%", "catalog_median_%"});
  for (const TransferPairSummary& p : report.pairs) {
    pairs.AddRow({p.pair, std::to_string(p.error.cases), PercentCell(p.error.median_abs_error_pct),
                  PercentCell(p.mean_abs_error_pct), PercentCell(p.error.max_abs_error_pct),
                  PercentCell(p.catalog.median_abs_error_pct)});
  }
  pairs.AddRow({"all", std::to_string(report.overall.cases),
                PercentCell(report.overall.median_abs_error_pct),
                PercentCell(report.overall_mean_abs_error_pct),
                PercentCell(report.overall.max_abs_error_pct),
                PercentCell(report.overall_catalog.median_abs_error_pct)});
  out << pairs.Render();
  out << fmt::format(
      "the other rule ({}): median |error| {}%, mean {}% over the same cases (goal: median <= "
      "10%; Habitat, Yu et al. ATC'21: 11.8% mean iteration-time error)\n",
      RuleText(!report.transfer_host), PercentCell(report.other_rule.median_abs_error_pct),
      PercentCell(report.other_rule_mean_abs_error_pct));
}

}  // namespace

namespace evidence_output {

ordered_json TransferValidationJson(const TransferValidation& report) {
  ordered_json cases = ordered_json::array();
  for (const TransferredCase& c : report.cases) {
    cases.push_back({{"pair", c.pair},
                     {"source_device", c.source_device},
                     {"target_device", c.target_device},
                     {"network", c.network},
                     {"precision", PrecisionName(c.precision)},
                     {"framework", c.framework},
                     {"devices", c.devices},
                     {"batch", c.batch},
                     {"accumulation", c.accumulation},
                     {"key", c.key},
                     {"measured_sps", c.measured_sps},
                     {"predicted_sps", c.predicted_sps},
                     {"error_pct", c.error_pct},
                     {"catalog_sps", c.catalog_sps},
                     {"catalog_error_pct", c.catalog_error_pct},
                     {"log_ratio", c.log_ratio},
                     {"source", c.source},
                     {"line", c.line}});
  }
  ordered_json folds = ordered_json::array();
  for (const TransferFold& f : report.folds) {
    folds.push_back({{"source_device", f.source_device},
                     {"target_device", f.target_device},
                     {"network", f.network},
                     {"precision", PrecisionName(f.precision)},
                     {"framework", f.framework},
                     {"devices", f.devices},
                     {"source_cases", f.source_cases},
                     {"target_cases", f.target_cases},
                     {"computed", f.computed},
                     {"problem", f.computed ? ordered_json(nullptr) : ordered_json(f.problem)},
                     {"fitted", ParametersJsonTransfer(f.fitted)},
                     {"applied", ParametersJsonTransfer(f.applied)},
                     {"source_fit_median_abs",
                      f.computed ? Number(f.source_after.median_abs) : ordered_json(nullptr)},
                     {"error", SummaryJson(f.error)}});
  }
  ordered_json pairs = ordered_json::array();
  for (const TransferPairSummary& p : report.pairs) {
    pairs.push_back({{"pair", p.pair},
                     {"source_device", p.source_device},
                     {"target_device", p.target_device},
                     {"error", SummaryJson(p.error)},
                     {"mean_abs_error_pct", Number(p.mean_abs_error_pct)},
                     {"catalog", SummaryJson(p.catalog)}});
  }
  return {{"transfer_host", report.transfer_host},
          {"rule", RuleText(report.transfer_host)},
          {"overall", SummaryJson(report.overall)},
          {"overall_mean_abs_error_pct", Number(report.overall_mean_abs_error_pct)},
          {"overall_catalog", SummaryJson(report.overall_catalog)},
          {"other_rule",
           {{"transfer_host", !report.transfer_host},
            {"error", SummaryJson(report.other_rule)},
            {"mean_abs_error_pct", Number(report.other_rule_mean_abs_error_pct)}}},
          {"pairs", pairs},
          {"folds", folds},
          {"cases", cases}};
}

}  // namespace evidence_output

void WriteTransferValidation(std::ostream& out, const TransferValidation& transfer,
                             OutputFormat format) {
  if (format == OutputFormat::kJson) {
    out << evidence_output::TransferValidationJson(transfer).dump(2) << "\n";
  } else {
    WriteSection(out, transfer, format == OutputFormat::kCsv);
  }
}

}  // namespace fitspeed
