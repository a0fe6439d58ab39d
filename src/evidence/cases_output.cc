// The writer of the published cases' validation (fitspeed/evidence/output.h):
// predicted against measured throughput per case, % error, in- or
// out-of-sample, median and maximum absolute errors per device, setup and
// workload, the folds, the mixed/FP32 ratio check on the T4 and the host
// self-check (docs/validation.md).
#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/evidence/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;
using evidence_output::IntervalCoverageJson;
using evidence_output::Number;
using evidence_output::PercentCell;
using evidence_output::SummaryJson;
using evidence_output::TransferValidationJson;

ordered_json ParametersJson(const std::vector<CalibratedParameter>& parameters) {
  ordered_json j = ordered_json::object();
  for (const CalibratedParameter& p : parameters) {
    j[p.name] = {{"value", p.value}, {"std_error", Number(p.std_error)}};
  }
  return j;
}

ordered_json CrossDeviceJson(const ValidationReport& report) {
  ordered_json folds = ordered_json::array();
  for (const CrossDeviceFold& f : report.cross_device_folds) {
    folds.push_back({{"device", f.device},
                     {"network", f.network},
                     {"training_devices", f.training_devices},
                     {"cases", f.cases},
                     {"training_cases", f.training_cases},
                     {"computed", f.computed},
                     {"problem", f.computed ? ordered_json(nullptr) : ordered_json(f.problem)},
                     {"parameters", ParametersJson(f.parameters)},
                     {"error", SummaryJson(f.error)}});
  }
  return {{"summary", SummaryJson(report.cross_device)}, {"folds", folds}};
}

// A case's batch as the table prints it: "16x4096" with gradient
// accumulation (micro-batch x micro-batches per step).
std::string BatchText(const MeasuredCase& c) {
  return c.accumulation > 1 ? fmt::format("{}x{}", c.batch, c.accumulation)
                            : std::to_string(c.batch);
}

void WriteJson(std::ostream& out, const CaseValidation& v) {
  const ValidationReport& report = v.report;
  const std::optional<HostCheck>& host = v.host;
  ordered_json cases = ordered_json::array();
  for (const ValidatedCase& v : report.cases) {
    const MeasuredCase& c = v.measured;
    cases.push_back(
        {{"key", v.key},
         {"network", c.network},
         {"device", c.device},
         {"precision", PrecisionName(c.precision)},
         {"layout", ActivationLayoutName(c.layout)},
         {"optimizer",
          c.optimizer ? ordered_json(OptimizerName(*c.optimizer)) : ordered_json(nullptr)},
         {"devices", c.devices},
         {"batch", c.batch},
         {"seq_len", c.seq_len > 0 ? ordered_json(c.seq_len) : ordered_json(nullptr)},
         {"accumulation", c.accumulation},
         {"framework", c.framework},
         {"measured_sps", c.throughput_sps},
         {"modeled", v.modeled},
         {"predicted_sps", v.modeled ? ordered_json(v.predicted_sps) : ordered_json(nullptr)},
         {"error_pct", v.modeled ? ordered_json(v.error_pct) : ordered_json(nullptr)},
         {"in_sample", v.in_sample},
         {"reason", v.modeled ? ordered_json(nullptr) : ordered_json(v.reason)},
         {"memory_note",
          v.memory_note.empty() ? ordered_json(nullptr) : ordered_json(v.memory_note)},
         {"cross_validation",
          report.cross_validated_run && v.modeled && !v.in_sample
              ? ordered_json{{"calibrated", v.cv_calibrated},
                             {"held_out_group",
                              v.cv_calibrated ? ordered_json(v.cv_group) : ordered_json(nullptr)},
                             {"predicted_sps", v.cv_predicted_sps},
                             {"error_pct", v.cv_error_pct}}
              : ordered_json(nullptr)},
         {"cross_device", report.cross_device_run && v.modeled && !v.in_sample
                              ? ordered_json{{"calibrated", v.xdev_calibrated},
                                             {"predicted_sps", v.xdev_predicted_sps},
                                             {"error_pct", v.xdev_error_pct}}
                              : ordered_json(nullptr)},
         {"source", c.source},
         {"line", c.line},
         {"note", c.note}});
  }
  ordered_json devices = ordered_json::array();
  for (const DeviceValidation& d : report.devices) {
    ordered_json folds = ordered_json::array();
    for (const CrossValidationFold& f : d.folds) {
      const ordered_json parameters = ParametersJson(f.parameters);
      folds.push_back({{"held_out", f.group},
                       {"cases", f.cases},
                       {"training_cases", f.training_cases},
                       {"computed", f.computed},
                       {"problem", f.computed ? ordered_json(nullptr) : ordered_json(f.problem)},
                       {"parameters", parameters},
                       {"error", SummaryJson(f.error)}});
    }
    devices.push_back(
        {{"device", d.device},
         {"out_of_sample", SummaryJson(d.out_of_sample)},
         {"in_sample", SummaryJson(d.in_sample)},
         {"not_modeled", d.not_modeled},
         {"cross_validation",
          report.cross_validated_run
              ? ordered_json{{"held_out_by", d.held_out_by.empty() ? ordered_json(nullptr)
                                                                   : ordered_json(d.held_out_by)},
                             {"summary", SummaryJson(d.cross_validated)},
                             {"folds", folds}}
              : ordered_json(nullptr)},
         {"cross_device",
          report.cross_device_run ? SummaryJson(d.cross_device) : ordered_json(nullptr)}});
  }
  ordered_json ratios = ordered_json::array();
  for (const MixedRatio& r : v.mixed) {
    ratios.push_back({{"network", r.network},
                      {"batch", r.batch},
                      {"fp32_step_s", r.fp32_step_s},
                      {"mixed_step_s", r.mixed_step_s},
                      {"ratio", r.ratio},
                      {"in_band", r.in_band},
                      {"mixed_nhwc_step_s", r.mixed_nhwc_step_s},
                      {"ratio_nhwc", r.ratio_nhwc}});
  }
  ordered_json host_json = nullptr;
  if (host) {
    ordered_json rows = ordered_json::array();
    for (const HostCheckRow& r : host->rows) {
      rows.push_back({{"batch", r.batch},
                      {"measured_step_s", r.measured_step_s},
                      {"predicted_step_s", r.predicted_step_s},
                      {"error_pct", r.error_pct},
                      {"contended", r.contended}});
    }
    host_json = {{"network", host->network},
                 {"threads", host->threads},
                 {"rows", rows},
                 {"summary", SummaryJson(host->summary)}};
  }
  ordered_json setups = ordered_json::array();
  for (const SetupSummary& s : SummarizeBySetup(report)) {
    setups.push_back(
        {{"device", s.device},
         {"framework", s.framework},
         {"out_of_sample", SummaryJson(s.catalog)},
         {"cross_validated",
          report.cross_validated_run ? SummaryJson(s.cross_validated) : ordered_json(nullptr)},
         {"cross_device",
          report.cross_device_run ? SummaryJson(s.cross_device) : ordered_json(nullptr)}});
  }
  ordered_json workloads = ordered_json::array();
  for (const WorkloadSummary& s : SummarizeByWorkload(report)) {
    workloads.push_back(
        {{"network", s.network},
         {"precision", s.precision},
         {"kind", s.kind},
         {"out_of_sample", SummaryJson(s.catalog)},
         {"cross_validated",
          report.cross_validated_run ? SummaryJson(s.cross_validated) : ordered_json(nullptr)},
         {"cross_device",
          report.cross_device_run ? SummaryJson(s.cross_device) : ordered_json(nullptr)}});
  }
  ordered_json kinds = ordered_json::array();
  for (const KindValidation& k : report.kinds) {
    kinds.push_back({{"kinds", k.kinds},
                     {"out_of_sample", SummaryJson(k.catalog)},
                     {"cross_validated", report.cross_validated_run ? SummaryJson(k.cross_validated)
                                                                    : ordered_json(nullptr)},
                     {"cross_device", report.cross_device_run ? SummaryJson(k.cross_device)
                                                              : ordered_json(nullptr)}});
  }
  const ordered_json j = {
      {"schema", "fitspeed.validate/1"},
      {"data_dir", v.data_dir},
      {"cases", cases},
      {"devices", devices},
      {"setups", setups},
      {"workloads", workloads},
      {"out_of_sample", SummaryJson(report.out_of_sample)},
      {"cross_validated",
       report.cross_validated_run ? SummaryJson(report.cross_validated) : ordered_json(nullptr)},
      {"cross_device", report.cross_device_run ? CrossDeviceJson(report) : ordered_json(nullptr)},
      {"in_sample", SummaryJson(report.in_sample)},
      {"kinds", kinds},
      {"not_modeled", report.not_modeled},
      {"mixed_precision",
       {{"device", "t4"}, {"band", {kMixedRatioLow, kMixedRatioHigh}}, {"ratios", ratios}}},
      {"host_check", host_json},
      {"intervals", IntervalCoverageJson(v.intervals, v.interval_level)},
      {"transfer", v.transfer ? TransferValidationJson(*v.transfer) : ordered_json(nullptr)}};
  out << j.dump(2) << "\n";
}

// Table cells of the fitted compute scale, tensor scale and host overhead (ms),
// "-" for those not fitted.
std::array<std::string, 3> ParameterCells(const std::vector<CalibratedParameter>& parameters) {
  std::array<std::string, 3> cells = {"-", "-", "-"};
  for (const CalibratedParameter& p : parameters) {
    if (p.name == "compute_scale") cells[0] = FormatSig(p.value, 3);
    if (p.name == "tensor_scale") cells[1] = FormatSig(p.value, 3);
    if (p.name == "step_host_s") cells[2] = FormatSig(p.value * 1e3, 3);
  }
  return cells;
}

TextTable CaseTable(const ValidationReport& report) {
  TextTable table({"device", "network", "precision", "layout", "devices", "batch", "framework",
                   "measured_sps", "predicted_sps", "error_%", "sample", "cv_sps", "cv_error_%",
                   "xdev_sps", "xdev_error_%", "mem", "source"});
  for (const ValidatedCase& v : report.cases) {
    if (!v.modeled) continue;
    const MeasuredCase& c = v.measured;
    const bool cv = report.cross_validated_run && !v.in_sample;
    const bool xdev = report.cross_device_run && !v.in_sample;
    table.AddRow(
        {c.device, CaseNetworkKey(c), PrecisionName(c.precision), ActivationLayoutName(c.layout),
         std::to_string(c.devices), BatchText(c), c.framework, FormatSig(c.throughput_sps, 4),
         FormatSig(v.predicted_sps, 4), fmt::format("{:+.1f}", v.error_pct),
         v.in_sample ? "in" : "out",
         cv ? FormatSig(v.cv_predicted_sps, 4) + (v.cv_calibrated ? "" : "=") : "-",
         cv ? fmt::format("{:+.1f}", v.cv_error_pct) : "-",
         xdev ? FormatSig(v.xdev_predicted_sps, 4) + (v.xdev_calibrated ? "" : "=") : "-",
         xdev ? fmt::format("{:+.1f}", v.xdev_error_pct) : "-", v.memory_note.empty() ? "" : "oom*",
         fmt::format("{}:{}", std::filesystem::path(c.source).filename().string(), c.line)});
  }
  return table;
}

void WriteTable(std::ostream& out, const CaseValidation& v, bool csv) {
  const ValidationReport& report = v.report;
  const std::optional<HostCheck>& host = v.host;
  if (csv) {
    TextTable table({"key",
                     "device",
                     "network",
                     "precision",
                     "layout",
                     "optimizer",
                     "devices",
                     "batch",
                     "framework",
                     "measured_sps",
                     "predicted_sps",
                     "error_pct",
                     "sample",
                     "cv_calibrated",
                     "cv_held_out",
                     "cv_predicted_sps",
                     "cv_error_pct",
                     "xdev_calibrated",
                     "xdev_predicted_sps",
                     "xdev_error_pct",
                     "reason",
                     "memory_note",
                     "source",
                     "line"});
    for (const ValidatedCase& v : report.cases) {
      const MeasuredCase& c = v.measured;
      const bool cv = report.cross_validated_run && v.modeled && !v.in_sample;
      const bool xdev = report.cross_device_run && v.modeled && !v.in_sample;
      table.AddRow({v.key,
                    c.device,
                    c.network,
                    PrecisionName(c.precision),
                    ActivationLayoutName(c.layout),
                    c.optimizer ? OptimizerName(*c.optimizer) : "",
                    std::to_string(c.devices),
                    std::to_string(c.batch),
                    c.framework,
                    FormatSig(c.throughput_sps, 6),
                    v.modeled ? FormatSig(v.predicted_sps, 6) : "",
                    v.modeled ? FormatSig(v.error_pct, 4) : "",
                    v.in_sample ? "in" : "out",
                    cv ? (v.cv_calibrated ? "yes" : "no") : "",
                    v.cv_group,
                    cv ? FormatSig(v.cv_predicted_sps, 6) : "",
                    cv ? FormatSig(v.cv_error_pct, 4) : "",
                    xdev ? (v.xdev_calibrated ? "yes" : "no") : "",
                    xdev ? FormatSig(v.xdev_predicted_sps, 6) : "",
                    xdev ? FormatSig(v.xdev_error_pct, 4) : "",
                    v.reason,
                    v.memory_note,
                    c.source,
                    std::to_string(c.line)});
    }
    out << table.RenderCsv();
    return;
  }
  out << "Predicted against measured throughput (samples/s; a sequence model's sample is "
         "one sequence, its network named with /s<tokens>); batch: global, all devices, "
         "BxA with gradient accumulation (A micro-batches of B per step); error = "
         "(predicted - measured) / measured; predicted_sps: the device as catalogued (or "
         "given); sample: in = that device was calibrated on this case, out = not; cv_sps: "
         "predicted by the device calibrated on its other networks' cases (or, with one "
         "network, its other frameworks'), never this case's group; xdev_sps: predicted "
         "by this device with the parameters fitted to the same network's cases on the "
         "other devices; '=': no such calibration, the catalog prediction; mem oom*: "
         "measured, but the memory model says it does not fit (predicted anyway)\n\n"
      << CaseTable(report).Render();
  if (report.not_modeled > 0) {
    out << "\nCases not modeled:\n";
    TextTable table(
        {"device", "network", "precision", "devices", "batch", "measured_sps", "reason"});
    for (const ValidatedCase& v : report.cases) {
      if (v.modeled) continue;
      const MeasuredCase& c = v.measured;
      table.AddRow({c.device, CaseNetworkKey(c), PrecisionName(c.precision),
                    std::to_string(c.devices), BatchText(c), FormatSig(c.throughput_sps, 4),
                    v.reason});
    }
    out << table.Render();
  }
  out << "\nAbsolute % error per device; every figure is out-of-sample except in_*. "
         "catalog: the device as catalogued (or given), what a user without measurements "
         "gets; cv: each case predicted by the device calibrated on the device's other "
         "networks (held_out_by network) or frameworks (held_out_by framework), what "
         "calibrating on other work gets; xdev: each case predicted from its network's "
         "cases on the other devices, what measuring your network elsewhere gets:\n";
  TextTable summary({"device", "cases", "catalog_median_%", "catalog_max_%", "held_out_by",
                     "cv_median_%", "cv_max_%", "xdev_median_%", "xdev_max_%", "in_cases",
                     "in_median_%", "not_modeled"});
  auto add = [&summary, &report](const std::string& name, const ErrorSummary& out,
                                 const std::string& held_out_by, const ErrorSummary& cv,
                                 const ErrorSummary& xdev, const ErrorSummary& in,
                                 int not_modeled) {
    const bool cv_run = report.cross_validated_run;
    const bool xdev_run = report.cross_device_run;
    summary.AddRow({name, std::to_string(out.cases), PercentCell(out.median_abs_error_pct),
                    PercentCell(out.max_abs_error_pct), cv_run ? held_out_by : "-",
                    cv_run ? PercentCell(cv.median_abs_error_pct) : "-",
                    cv_run ? PercentCell(cv.max_abs_error_pct) : "-",
                    xdev_run ? PercentCell(xdev.median_abs_error_pct) : "-",
                    xdev_run ? PercentCell(xdev.max_abs_error_pct) : "-", std::to_string(in.cases),
                    PercentCell(in.median_abs_error_pct), std::to_string(not_modeled)});
  };
  for (const DeviceValidation& d : report.devices) {
    add(d.device, d.out_of_sample, d.held_out_by.empty() ? "none (catalog)" : d.held_out_by,
        d.cross_validated, d.cross_device, d.in_sample, d.not_modeled);
  }
  add("all", report.out_of_sample, "", report.cross_validated, report.cross_device,
      report.in_sample, report.not_modeled);
  out << summary.Render();
  for (const KindValidation& k : report.kinds) {
    out << fmt::format("{} only: {} cases, median |error| catalog {}%", k.kinds, k.catalog.cases,
                       PercentCell(k.catalog.median_abs_error_pct));
    if (report.cross_validated_run) {
      out << fmt::format(", cv {}%", PercentCell(k.cross_validated.median_abs_error_pct));
    }
    if (report.cross_device_run) {
      out << fmt::format(", xdev {}%", PercentCell(k.cross_device.median_abs_error_pct));
    }
    out << "\n";
  }
  out << "\nAbsolute % error per device and framework (out-of-sample): frameworks and math "
         "libraries on one device can differ several-fold in speed, which the step model "
         "does not see\n";
  TextTable setups({"device", "framework", "cases", "catalog_median_%", "catalog_max_%",
                    "cv_median_%", "xdev_median_%"});
  for (const SetupSummary& s : SummarizeBySetup(report)) {
    setups.AddRow(
        {s.device, s.framework.empty() ? "-" : s.framework, std::to_string(s.catalog.cases),
         PercentCell(s.catalog.median_abs_error_pct), PercentCell(s.catalog.max_abs_error_pct),
         report.cross_validated_run ? PercentCell(s.cross_validated.median_abs_error_pct) : "-",
         report.cross_device_run ? PercentCell(s.cross_device.median_abs_error_pct) : "-"});
  }
  out << setups.Render();
  out << "\nAbsolute % error per network and precision (out-of-sample), over every device "
         "of a kind and framework that ran it\n";
  TextTable workloads({"network", "precision", "kind", "cases", "catalog_median_%", "catalog_max_%",
                       "cv_median_%", "xdev_median_%"});
  for (const WorkloadSummary& s : SummarizeByWorkload(report)) {
    workloads.AddRow(
        {s.network, s.precision, s.kind, std::to_string(s.catalog.cases),
         PercentCell(s.catalog.median_abs_error_pct), PercentCell(s.catalog.max_abs_error_pct),
         report.cross_validated_run ? PercentCell(s.cross_validated.median_abs_error_pct) : "-",
         report.cross_device_run ? PercentCell(s.cross_device.median_abs_error_pct) : "-"});
  }
  out << workloads.Render();
  if (report.cross_validated_run) {
    out << "\nCross-validation folds: parameters fitted on the training cases, errors of "
           "the held-out cases (host overhead always; the compute scale when training "
           "has FP32 matrix work on CUDA cores, the tensor scale when it has TF32 or 16-bit "
           "tensor-unit work)\n";
    TextTable folds({"device", "held_out", "cases", "training_cases", "compute_scale",
                     "tensor_scale", "step_host_ms", "median_%", "max_%", "problem"});
    for (const DeviceValidation& d : report.devices) {
      for (const CrossValidationFold& f : d.folds) {
        const auto [compute, tensor, host] = ParameterCells(f.parameters);
        folds.AddRow({d.device, f.group, std::to_string(f.cases), std::to_string(f.training_cases),
                      compute, tensor, host,
                      f.computed ? PercentCell(f.error.median_abs_error_pct) : "-",
                      f.computed ? PercentCell(f.error.max_abs_error_pct) : "-", f.problem});
      }
    }
    out << folds.Render();
  }
  if (report.cross_device_run) {
    out << "\nCross-device folds: a network's cases on one device predicted with the "
           "parameters fitted jointly to its cases on the other devices\n";
    TextTable folds({"device", "network", "cases", "training_devices", "training_cases",
                     "compute_scale", "tensor_scale", "step_host_ms", "median_%", "max_%",
                     "problem"});
    for (const CrossDeviceFold& f : report.cross_device_folds) {
      const auto [compute, tensor, host] = ParameterCells(f.parameters);
      folds.AddRow(
          {f.device, f.network, std::to_string(f.cases),
           f.training_devices.empty() ? "-" : fmt::format("{}", fmt::join(f.training_devices, " ")),
           std::to_string(f.training_cases), compute, tensor, host,
           f.computed ? PercentCell(f.error.median_abs_error_pct) : "-",
           f.computed ? PercentCell(f.error.max_abs_error_pct) : "-", f.problem});
    }
    out << folds.Render();
  }

  out << fmt::format(
      "\nMixed precision on t4: modeled mixed/FP32 step time (published band {:.0f}-{:.0f}%); "
      "mixed with NCHW activations (PyTorch's default: tensor-core convolutions pay layout "
      "transposes), and with NHWC (channels_last) beside it\n",
      100 * kMixedRatioLow, 100 * kMixedRatioHigh);
  TextTable ratios({"network", "batch", "fp32_step_ms", "mixed_step_ms", "ratio_%", "in_band",
                    "mixed_nhwc_step_ms", "ratio_nhwc_%"});
  for (const MixedRatio& r : v.mixed) {
    ratios.AddRow({r.network, std::to_string(r.batch), FormatSig(r.fp32_step_s * 1e3, 4),
                   FormatSig(r.mixed_step_s * 1e3, 4), fmt::format("{:.1f}", 100 * r.ratio),
                   r.in_band ? "yes" : "no", FormatSig(r.mixed_nhwc_step_s * 1e3, 4),
                   fmt::format("{:.1f}", 100 * r.ratio_nhwc)});
  }
  out << ratios.Render();
  if (host) {
    out << fmt::format("\nHost self-check: modeled host against a measured sweep of {} ({})\n",
                       host->network,
                       host->threads == 0   ? std::string("all threads")
                       : host->threads == 1 ? std::string("1 thread")
                                            : fmt::format("{} threads", host->threads));
    TextTable rows({"batch", "measured_step_ms", "predicted_step_ms", "error_%", "contended"});
    for (const HostCheckRow& r : host->rows) {
      rows.AddRow({std::to_string(r.batch), FormatSig(r.measured_step_s * 1e3, 4),
                   FormatSig(r.predicted_step_s * 1e3, 4), fmt::format("{:+.1f}", r.error_pct),
                   r.contended ? "yes" : "no"});
    }
    out << rows.Render()
        << fmt::format("median |error| {}%, max {}%\n",
                       PercentCell(host->summary.median_abs_error_pct),
                       PercentCell(host->summary.max_abs_error_pct));
  }
}

}  // namespace

void WriteCaseValidation(std::ostream& out, const CaseValidation& validation, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    WriteJson(out, validation);
    return;
  }
  WriteTable(out, validation, format == OutputFormat::kCsv);
  if (validation.transfer) WriteTransferValidation(out, *validation.transfer, format);
  if (format == OutputFormat::kTable) {
    out << "\n";
    WriteIntervalCoverage(out, validation.intervals, validation.interval_level, format);
  }
}

}  // namespace fitspeed
