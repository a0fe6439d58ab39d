// The writers of `fitspeed calibrate`'s reports (fitspeed/calibrate/output.h):
// a device calibrated on its own cases (fitspeed/calibrate/calibrate.h,
// CalibrateDevice) and efficiency scales fitted on other devices' cases and
// carried to it (CalibrateShared).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/table.h"
#include "fitspeed/calibrate/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

// A number, null when not finite (JSON has no NaN or infinity).
ordered_json Number(double value) {
  return std::isfinite(value) ? ordered_json(value) : ordered_json(nullptr);
}

ordered_json ErrorJson(const DeviceCalibration::Error& e) {
  return {{"cases", e.cases}, {"rms", e.rms}, {"median_abs", e.median_abs}, {"max_abs", e.max_abs}};
}

ordered_json CalibrationJson(const CalibrationResult& r, const std::vector<MeasuredCase>& skipped) {
  ordered_json params = ordered_json::array();
  for (const CalibratedParameter& p : r.parameters) {
    params.push_back({{"name", p.name},
                      {"unit", p.unit},
                      {"initial", p.initial},
                      {"value", p.value},
                      {"stderr", Number(p.std_error)},
                      {"ci", {Number(p.ci_low), Number(p.ci_high)}},
                      {"bounds", {Number(p.lower), Number(p.upper)}},
                      {"at_bound", p.at_bound()}});
  }
  ordered_json cases = ordered_json::array();
  for (const CaseFit& c : r.cases) {
    const double b = static_cast<double>(c.measured.batch);
    cases.push_back({{"key", c.key},
                     {"source", c.measured.source},
                     {"line", c.measured.line},
                     {"measured_sps", c.measured.throughput_sps},
                     {"before_sps", b / c.before_step_s},
                     {"after_sps", b / c.after_step_s},
                     {"loo_sps", Number(b / c.loo_step_s)},
                     {"error_before", c.error_before()},
                     {"error_after", c.error_after()},
                     {"error_loo", Number(c.error_loo())},
                     {"fits_memory", c.fits_memory}});
  }
  ordered_json folds = ordered_json::array();
  for (const HeldOutNetwork& f : r.held_out) {
    ordered_json values = ordered_json::object();
    for (size_t j = 0; j < f.values.size(); ++j) values[r.parameters[j].name] = f.values[j];
    folds.push_back({{"network", f.network},
                     {"cases", f.cases},
                     {"training_cases", f.training_cases},
                     {"computed", f.computed},
                     {"problem", f.problem},
                     {"parameters", values},
                     {"error", f.computed ? ErrorJson(f.error) : ordered_json()}});
  }
  ordered_json skipped_json = ordered_json::array();
  for (const MeasuredCase& c : skipped) {
    skipped_json.push_back({{"key", CaseKey(c)}, {"source", c.source}, {"line", c.line}});
  }
  return {{"schema", "fitspeed.calibration/1"},
          {"device", r.device.name},
          {"device_before", r.device_before},
          {"networks", r.networks},
          {"confidence", r.confidence},
          {"dof", r.dof},
          {"rss", r.rss},
          {"converged", r.converged},
          {"iterations", r.iterations},
          {"parameters", params},
          {"fixed", r.fixed},
          {"error_before", ErrorJson(r.before)},
          {"error_after", ErrorJson(r.after)},
          {"error_loo", r.loo ? ErrorJson(*r.loo) : ordered_json()},
          {"warnings", r.warnings},
          {"cases", cases},
          {"held_out", folds},
          {"skipped", skipped_json}};
}

}  // namespace

void WriteCalibration(std::ostream& out, const CalibrationResult& result,
                      const std::vector<MeasuredCase>& skipped, OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      out << result.FullReport();
      break;
    case OutputFormat::kCsv: {
      TextTable table({"key", "source", "line", "measured_sps", "before_sps", "after_sps",
                       "loo_sps", "error_before", "error_after", "error_loo", "fits_memory"});
      for (const CaseFit& c : result.cases) {
        const double b = static_cast<double>(c.measured.batch);
        table.AddRow(
            {c.key, c.measured.source, std::to_string(c.measured.line),
             fmt::format("{:.6g}", c.measured.throughput_sps),
             fmt::format("{:.6g}", b / c.before_step_s), fmt::format("{:.6g}", b / c.after_step_s),
             fmt::format("{:.6g}", b / c.loo_step_s), fmt::format("{:.6g}", c.error_before()),
             fmt::format("{:.6g}", c.error_after()), fmt::format("{:.6g}", c.error_loo()),
             c.fits_memory ? "true" : "false"});
      }
      out << table.RenderCsv();
      break;
    }
    case OutputFormat::kJson:
      out << CalibrationJson(result, skipped).dump(2) << "\n";
      break;
  }
}

void WriteSharedCalibration(std::ostream& out, const SharedCalibration& result,
                            const std::string& target, const std::vector<std::string>& from,
                            size_t cases, OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      out << fmt::format(
          "efficiency scales fitted to {} case(s) of {} jointly ({} after {} iterations), "
          "applied to {}; its overheads are its own\n",
          cases, fmt::join(from, ", "), result.converged ? "converged" : "DID NOT CONVERGE",
          result.iterations, target);
      for (const CalibratedParameter& p : result.parameters) {
        out << fmt::format("  {} = {}{}{}\n", p.name, FormatSig(p.value, 4),
                           p.unit.empty() ? "" : " " + p.unit,
                           p.at_bound() ? " (at its bound)" : "");
      }
      out << fmt::format(
          "error on the fitted cases (in-sample): rms {:.1f}%, median |e| {:.1f}%, max |e| "
          "{:.1f}%\n"
          "how well this carries to another device: fitspeed validate, cross-device check "
          "(docs/validation.md)\n",
          100 * result.after.rms, 100 * result.after.median_abs, 100 * result.after.max_abs);
      break;
    case OutputFormat::kCsv: {
      TextTable table({"name", "unit", "value", "lower", "upper", "at_bound"});
      for (const CalibratedParameter& p : result.parameters) {
        table.AddRow({p.name, p.unit, fmt::format("{:.6g}", p.value),
                      fmt::format("{:.6g}", p.lower), fmt::format("{:.6g}", p.upper),
                      p.at_bound() ? "true" : "false"});
      }
      out << table.RenderCsv();
      break;
    }
    case OutputFormat::kJson: {
      ordered_json params = ordered_json::array();
      for (const CalibratedParameter& p : result.parameters) {
        params.push_back({{"name", p.name},
                          {"unit", p.unit},
                          {"value", p.value},
                          {"bounds", {Number(p.lower), Number(p.upper)}},
                          {"at_bound", p.at_bound()}});
      }
      out << ordered_json{{"schema", "fitspeed.calibration-transfer/1"},
                          {"device", target},
                          {"from", from},
                          {"cases", cases},
                          {"converged", result.converged},
                          {"parameters", params},
                          {"error_after", ErrorJson(result.after)}}
                 .dump(2)
          << "\n";
      break;
    }
  }
}

}  // namespace fitspeed
