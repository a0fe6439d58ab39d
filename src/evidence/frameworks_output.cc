// The writer of the framework profiles' check (fitspeed/evidence/output.h):
// the profiles fitted on the published GPU runs and their leave-one-device-out
// errors (fitspeed/evidence/framework_profiles.h; docs/validation.md,
// "Framework profiles").
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/median.h"
#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/evidence/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;
using evidence_output::Number;
using evidence_output::PercentCell;

// Median |error| in %, NaN for none.
double MedianAbsPct(const std::vector<double>& errors) {
  if (errors.empty()) return std::nan("");
  std::vector<double> abs;
  for (double e : errors) abs.push_back(100 * std::abs(e));
  return Median(abs);
}

std::string Value(const std::vector<CalibratedParameter>& parameters, const std::string& name,
                  double unit = 1) {
  for (const CalibratedParameter& p : parameters) {
    if (p.name == name) return FormatSig(p.value / unit, 3);
  }
  return "-";
}

ordered_json ParametersJsonFrameworks(const std::vector<CalibratedParameter>& parameters) {
  ordered_json j = ordered_json::object();
  for (const CalibratedParameter& p : parameters) j[p.name] = Number(p.value);
  return j;
}

}  // namespace

void WriteFrameworkValidation(std::ostream& out, const FrameworkValidation& v,
                              OutputFormat format) {
  const FrameworkProfileReport& report = v.report;
  // All computed folds' held-out cases together, and per device.
  std::vector<double> catalog_all, profile_all;
  for (const FrameworkFold& f : report.folds) {
    if (!f.computed) continue;
    catalog_all.insert(catalog_all.end(), f.catalog_errors.begin(), f.catalog_errors.end());
    profile_all.insert(profile_all.end(), f.profile_errors.begin(), f.profile_errors.end());
  }
  if (format == OutputFormat::kJson) {
    ordered_json profiles =
        ordered_json::parse(FrameworkProfilesToJson(report.profiles))["profiles"];
    ordered_json folds = ordered_json::array();
    for (const FrameworkFold& f : report.folds) {
      folds.push_back({{"framework", f.framework},
                       {"device", f.device},
                       {"publisher", f.publisher},
                       {"training_devices", f.training_devices},
                       {"cases", f.cases},
                       {"training_cases", f.training_cases},
                       {"computed", f.computed},
                       {"problem", f.problem},
                       {"parameters", ParametersJsonFrameworks(f.parameters)},
                       {"catalog_median_abs_error_pct", Number(MedianAbsPct(f.catalog_errors))},
                       {"profile_median_abs_error_pct", Number(MedianAbsPct(f.profile_errors))}});
    }
    ordered_json skipped = ordered_json::array();
    for (const SkippedFramework& s : report.skipped) {
      skipped.push_back({{"framework", s.name}, {"cases", s.cases}, {"reason", s.reason}});
    }
    ordered_json files = ordered_json::array();
    for (const std::string& name : v.device_files) files.push_back(name);
    out << ordered_json{{"schema", "fitspeed.validate_frameworks/1"},
                        {"data_dir", v.data_dir},
                        {"device_files", files},
                        {"profiles", profiles},
                        {"skipped", skipped},
                        {"folds", folds},
                        {"held_out_cases", catalog_all.size()},
                        {"catalog_median_abs_error_pct", Number(MedianAbsPct(catalog_all))},
                        {"profile_median_abs_error_pct", Number(MedianAbsPct(profile_all))}}
               .dump(2)
        << "\n";
    return;
  }
  TextTable folds({"framework", "held_out_device", "publisher", "cases", "training_devices",
                   "training_cases", "compute_scale", "tensor_scale", "step_host_ms",
                   "catalog_median_%", "profile_median_%", "problem"});
  for (const FrameworkFold& f : report.folds) {
    folds.AddRow(
        {f.framework, f.device, f.publisher, std::to_string(f.cases),
         f.training_devices.empty() ? "-" : fmt::format("{}", fmt::join(f.training_devices, "+")),
         std::to_string(f.training_cases), Value(f.parameters, "compute_scale"),
         Value(f.parameters, "tensor_scale"), Value(f.parameters, "step_host_s", 1e-3),
         PercentCell(MedianAbsPct(f.catalog_errors)), PercentCell(MedianAbsPct(f.profile_errors)),
         f.problem.empty() ? "-" : f.problem});
  }
  if (format == OutputFormat::kCsv) {
    out << folds.RenderCsv();
    return;
  }
  TextTable profiles({"framework", "gpus", "cases", "networks", "compute_scale", "tensor_scale",
                      "step_host_ms", "rms_error_%", "converged"});
  for (const FrameworkProfile& p : report.profiles) {
    profiles.AddRow({p.name, fmt::format("{}", fmt::join(p.devices, "+")), std::to_string(p.cases),
                     fmt::format("{}", fmt::join(p.networks, "+")),
                     Value(p.parameters, "compute_scale"), Value(p.parameters, "tensor_scale"),
                     Value(p.parameters, "step_host_s", 1e-3), PercentCell(100 * p.rms_error),
                     p.converged ? "yes" : "no"});
  }
  out << "Framework profiles (`sweep --device D --framework F`): per framework, the "
         "efficiency scales its published GPU runs determine (compute: FP32 on CUDA cores; "
         "tensor: TF32 and mixed precision) and its host overhead per step, fitted jointly "
         "over every GPU it ran on against the kernel-fitted catalog (in-sample rms)\n"
      << profiles.Render();
  for (const SkippedFramework& s : report.skipped) {
    out << fmt::format("  {}: no profile from its {} GPU run(s): {}\n", s.name, s.cases, s.reason);
  }
  for (const std::string& name : v.device_files) {
    out << fmt::format("  {}: the device file given, not the catalog's\n", name);
  }
  out << "\n";
  out << "Leave one GPU out: each GPU's runs of a framework predicted by the profile "
         "fitted on the framework's runs on its other GPUs (out-of-sample); catalog: the "
         "same runs without a profile\n"
      << folds.Render();
  out << fmt::format(
      "held-out runs: {}; median |error| catalog {}%, with the framework profile {}%\n",
      catalog_all.size(), PercentCell(MedianAbsPct(catalog_all)),
      PercentCell(MedianAbsPct(profile_all)));
}

}  // namespace fitspeed
