// `fitspeed validate [--data DIR] [--device-file FILE ...] [--host-check]
// [--layers] [--output table|csv|json]`: the device step model against the
// published measurements of data/measured (docs/validation.md): predicted
// against measured throughput per case, % error, in- or out-of-sample, median
// and maximum absolute errors per device; the mixed/FP32 ratio check on the
// T4; with --host-check, the modeled host against a measured host sweep; with
// --layers, instead, the per-layer check of a BERT-large encoder layer against
// NeuSight's per-node GPU times (fitspeed/evidence/layer_check.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/core/table.h"
#include "fitspeed/device/frameworks.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/evidence/framework_profiles.h"
#include "fitspeed/evidence/interval_table.h"
#include "fitspeed/evidence/layer_check.h"
#include "fitspeed/evidence/validate.h"
#include "transfer_cli.h"
#include "validate_frameworks.h"
#include "validate_intervals.h"
#include "validate_kernels.h"
#include "validate_placements.h"
#include "validate_util.h"

#ifndef FITSPEED_SOURCE_DATA_DIR
#define FITSPEED_SOURCE_DATA_DIR "data"
#endif

namespace fitspeed::cli {

namespace {

using json = nlohmann::ordered_json;

struct ValidateCliOptions {
  std::string data_dir = std::string(FITSPEED_SOURCE_DATA_DIR) + "/measured";
  std::vector<std::string> device_files;
  bool host_check = false;
  int host_threads = 0;
  bool require_fit = false;
  bool no_cross_validation = false;
  bool no_cross_device = false;
  bool no_transfer = false;
  bool layers = false;
  bool placements = false;               // --placements: the Pollux placements check instead
  std::string placements_links;          // --placements-links FILE: its network link
  int placements_calibration_nodes = 2;  // --placements-calibration-nodes N
  double interval_level = 0.8;
  std::string intervals_out;   // write the interval table (data/intervals.json) here
  bool frameworks = false;     // --frameworks: the framework profiles instead
  std::string frameworks_out;  // --frameworks-out FILE: write the profiles there
  bool kernels = false;        // --kernels: the kernel fits instead
  std::string kernel_dir = std::string(FITSPEED_SOURCE_DATA_DIR) + "/kernels";
  std::string catalog_out;  // --catalog-out DIR: write the refitted catalog devices there
  bool shape_term = false;  // --shape-term: fit the GEMM shape term with the curves
  std::string output = "table";
};

// The networks and batches of the mixed-precision check (issue 5: vgg16,
// resnet50, mobilenet-v1 and efficientnet-b0 on a T4 at small batches).
const std::vector<std::string> kMixedNetworks = {"vgg16", "resnet50", "mobilenet-v1",
                                                 "efficientnet-b0"};
const std::vector<int64_t> kMixedBatches = {16, 32, 64};

using validate_util::Number;
using validate_util::Pct;
using validate_util::SummaryJson;

json ParametersJson(const std::vector<CalibratedParameter>& parameters) {
  json j = json::object();
  for (const CalibratedParameter& p : parameters) {
    j[p.name] = {{"value", p.value}, {"std_error", Number(p.std_error)}};
  }
  return j;
}

json CrossDeviceJson(const ValidationReport& report) {
  json folds = json::array();
  for (const CrossDeviceFold& f : report.cross_device_folds) {
    folds.push_back({{"device", f.device},
                     {"network", f.network},
                     {"training_devices", f.training_devices},
                     {"cases", f.cases},
                     {"training_cases", f.training_cases},
                     {"computed", f.computed},
                     {"problem", f.computed ? json(nullptr) : json(f.problem)},
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

void WriteJson(const std::string& data_dir, const ValidationReport& report,
               const std::vector<MixedRatio>& mixed, const HostCheck* host, const json& intervals,
               const json& transfer) {
  json cases = json::array();
  for (const ValidatedCase& v : report.cases) {
    const MeasuredCase& c = v.measured;
    cases.push_back(
        {{"key", v.key},
         {"network", c.network},
         {"device", c.device},
         {"precision", DevicePrecisionName(c.precision)},
         {"layout", ActivationLayoutName(c.layout)},
         {"optimizer", c.optimizer ? json(OptimizerName(*c.optimizer)) : json(nullptr)},
         {"devices", c.devices},
         {"batch", c.batch},
         {"seq_len", c.seq_len > 0 ? json(c.seq_len) : json(nullptr)},
         {"accumulation", c.accumulation},
         {"framework", c.framework},
         {"measured_sps", c.throughput_sps},
         {"modeled", v.modeled},
         {"predicted_sps", v.modeled ? json(v.predicted_sps) : json(nullptr)},
         {"error_pct", v.modeled ? json(v.error_pct) : json(nullptr)},
         {"in_sample", v.in_sample},
         {"reason", v.modeled ? json(nullptr) : json(v.reason)},
         {"memory_note", v.memory_note.empty() ? json(nullptr) : json(v.memory_note)},
         {"cross_validation",
          report.cross_validated_run && v.modeled && !v.in_sample
              ? json{{"calibrated", v.cv_calibrated},
                     {"held_out_group", v.cv_calibrated ? json(v.cv_group) : json(nullptr)},
                     {"predicted_sps", v.cv_predicted_sps},
                     {"error_pct", v.cv_error_pct}}
              : json(nullptr)},
         {"cross_device", report.cross_device_run && v.modeled && !v.in_sample
                              ? json{{"calibrated", v.xdev_calibrated},
                                     {"predicted_sps", v.xdev_predicted_sps},
                                     {"error_pct", v.xdev_error_pct}}
                              : json(nullptr)},
         {"source", c.source},
         {"line", c.line},
         {"note", c.note}});
  }
  json devices = json::array();
  for (const DeviceValidation& d : report.devices) {
    json folds = json::array();
    for (const CrossValidationFold& f : d.folds) {
      const json parameters = ParametersJson(f.parameters);
      folds.push_back({{"held_out", f.group},
                       {"cases", f.cases},
                       {"training_cases", f.training_cases},
                       {"computed", f.computed},
                       {"problem", f.computed ? json(nullptr) : json(f.problem)},
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
              ? json{{"held_out_by", d.held_out_by.empty() ? json(nullptr) : json(d.held_out_by)},
                     {"summary", SummaryJson(d.cross_validated)},
                     {"folds", folds}}
              : json(nullptr)},
         {"cross_device", report.cross_device_run ? SummaryJson(d.cross_device) : json(nullptr)}});
  }
  json ratios = json::array();
  for (const MixedRatio& r : mixed) {
    ratios.push_back({{"network", r.network},
                      {"batch", r.batch},
                      {"fp32_step_s", r.fp32_step_s},
                      {"mixed_step_s", r.mixed_step_s},
                      {"ratio", r.ratio},
                      {"in_band", r.in_band},
                      {"mixed_nhwc_step_s", r.mixed_nhwc_step_s},
                      {"ratio_nhwc", r.ratio_nhwc}});
  }
  json host_json = nullptr;
  if (host) {
    json rows = json::array();
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
  json setups = json::array();
  for (const SetupSummary& s : SummarizeBySetup(report)) {
    setups.push_back(
        {{"device", s.device},
         {"framework", s.framework},
         {"out_of_sample", SummaryJson(s.catalog)},
         {"cross_validated",
          report.cross_validated_run ? SummaryJson(s.cross_validated) : json(nullptr)},
         {"cross_device", report.cross_device_run ? SummaryJson(s.cross_device) : json(nullptr)}});
  }
  json workloads = json::array();
  for (const WorkloadSummary& s : SummarizeByWorkload(report)) {
    workloads.push_back(
        {{"network", s.network},
         {"precision", s.precision},
         {"kind", s.kind},
         {"out_of_sample", SummaryJson(s.catalog)},
         {"cross_validated",
          report.cross_validated_run ? SummaryJson(s.cross_validated) : json(nullptr)},
         {"cross_device", report.cross_device_run ? SummaryJson(s.cross_device) : json(nullptr)}});
  }
  const json j = {
      {"schema", "fitspeed.validate/1"},
      {"data_dir", data_dir},
      {"cases", cases},
      {"devices", devices},
      {"setups", setups},
      {"workloads", workloads},
      {"out_of_sample", SummaryJson(report.out_of_sample)},
      {"cross_validated",
       report.cross_validated_run ? SummaryJson(report.cross_validated) : json(nullptr)},
      {"cross_device", report.cross_device_run ? CrossDeviceJson(report) : json(nullptr)},
      {"in_sample", SummaryJson(report.in_sample)},
      {"not_modeled", report.not_modeled},
      {"mixed_precision",
       {{"device", "t4"}, {"band", {kMixedRatioLow, kMixedRatioHigh}}, {"ratios", ratios}}},
      {"host_check", host_json},
      {"intervals", intervals},
      {"transfer", transfer}};
  std::cout << j.dump(2) << "\n";
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
        {c.device, CaseNetworkKey(c), DevicePrecisionName(c.precision),
         ActivationLayoutName(c.layout), std::to_string(c.devices), BatchText(c), c.framework,
         FormatSig(c.throughput_sps, 4), FormatSig(v.predicted_sps, 4),
         fmt::format("{:+.1f}", v.error_pct), v.in_sample ? "in" : "out",
         cv ? FormatSig(v.cv_predicted_sps, 4) + (v.cv_calibrated ? "" : "=") : "-",
         cv ? fmt::format("{:+.1f}", v.cv_error_pct) : "-",
         xdev ? FormatSig(v.xdev_predicted_sps, 4) + (v.xdev_calibrated ? "" : "=") : "-",
         xdev ? fmt::format("{:+.1f}", v.xdev_error_pct) : "-", v.memory_note.empty() ? "" : "oom*",
         fmt::format("{}:{}", std::filesystem::path(c.source).filename().string(), c.line)});
  }
  return table;
}

void WriteTable(const ValidationReport& report, const std::vector<MixedRatio>& mixed,
                const HostCheck* host, bool csv) {
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
                    DevicePrecisionName(c.precision),
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
    std::cout << table.RenderCsv();
    return;
  }
  std::cout << "Predicted against measured throughput (samples/s; a sequence model's sample is "
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
    std::cout << "\nCases not modeled:\n";
    TextTable table(
        {"device", "network", "precision", "devices", "batch", "measured_sps", "reason"});
    for (const ValidatedCase& v : report.cases) {
      if (v.modeled) continue;
      const MeasuredCase& c = v.measured;
      table.AddRow({c.device, CaseNetworkKey(c), DevicePrecisionName(c.precision),
                    std::to_string(c.devices), BatchText(c), FormatSig(c.throughput_sps, 4),
                    v.reason});
    }
    std::cout << table.Render();
  }
  std::cout << "\nAbsolute % error per device; every figure is out-of-sample except in_*. "
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
    summary.AddRow(
        {name, std::to_string(out.cases), Pct(out.median_abs_error_pct), Pct(out.max_abs_error_pct),
         cv_run ? held_out_by : "-", cv_run ? Pct(cv.median_abs_error_pct) : "-",
         cv_run ? Pct(cv.max_abs_error_pct) : "-", xdev_run ? Pct(xdev.median_abs_error_pct) : "-",
         xdev_run ? Pct(xdev.max_abs_error_pct) : "-", std::to_string(in.cases),
         Pct(in.median_abs_error_pct), std::to_string(not_modeled)});
  };
  for (const DeviceValidation& d : report.devices) {
    add(d.device, d.out_of_sample, d.held_out_by.empty() ? "none (catalog)" : d.held_out_by,
        d.cross_validated, d.cross_device, d.in_sample, d.not_modeled);
  }
  add("all", report.out_of_sample, "", report.cross_validated, report.cross_device,
      report.in_sample, report.not_modeled);
  std::cout << summary.Render();
  std::cout << "\nAbsolute % error per device and framework (out-of-sample): frameworks and math "
               "libraries on one device can differ several-fold in speed, which the step model "
               "does not see\n";
  TextTable setups({"device", "framework", "cases", "catalog_median_%", "catalog_max_%",
                    "cv_median_%", "xdev_median_%"});
  for (const SetupSummary& s : SummarizeBySetup(report)) {
    setups.AddRow({s.device, s.framework.empty() ? "-" : s.framework,
                   std::to_string(s.catalog.cases), Pct(s.catalog.median_abs_error_pct),
                   Pct(s.catalog.max_abs_error_pct),
                   report.cross_validated_run ? Pct(s.cross_validated.median_abs_error_pct) : "-",
                   report.cross_device_run ? Pct(s.cross_device.median_abs_error_pct) : "-"});
  }
  std::cout << setups.Render();
  std::cout << "\nAbsolute % error per network and precision (out-of-sample), over every device "
               "of a kind and framework that ran it\n";
  TextTable workloads({"network", "precision", "kind", "cases", "catalog_median_%", "catalog_max_%",
                       "cv_median_%", "xdev_median_%"});
  for (const WorkloadSummary& s : SummarizeByWorkload(report)) {
    workloads.AddRow(
        {s.network, s.precision, s.kind, std::to_string(s.catalog.cases),
         Pct(s.catalog.median_abs_error_pct), Pct(s.catalog.max_abs_error_pct),
         report.cross_validated_run ? Pct(s.cross_validated.median_abs_error_pct) : "-",
         report.cross_device_run ? Pct(s.cross_device.median_abs_error_pct) : "-"});
  }
  std::cout << workloads.Render();
  if (report.cross_validated_run) {
    std::cout << "\nCross-validation folds: parameters fitted on the training cases, errors of "
                 "the held-out cases (host overhead always; the compute scale when training "
                 "has FP32 matrix work on CUDA cores, the tensor scale when it has TF32 or 16-bit "
                 "tensor-unit work)\n";
    TextTable folds({"device", "held_out", "cases", "training_cases", "compute_scale",
                     "tensor_scale", "step_host_ms", "median_%", "max_%", "problem"});
    for (const DeviceValidation& d : report.devices) {
      for (const CrossValidationFold& f : d.folds) {
        const auto [compute, tensor, host] = ParameterCells(f.parameters);
        folds.AddRow({d.device, f.group, std::to_string(f.cases), std::to_string(f.training_cases),
                      compute, tensor, host, f.computed ? Pct(f.error.median_abs_error_pct) : "-",
                      f.computed ? Pct(f.error.max_abs_error_pct) : "-", f.problem});
      }
    }
    std::cout << folds.Render();
  }
  if (report.cross_device_run) {
    std::cout << "\nCross-device folds: a network's cases on one device predicted with the "
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
           f.computed ? Pct(f.error.median_abs_error_pct) : "-",
           f.computed ? Pct(f.error.max_abs_error_pct) : "-", f.problem});
    }
    std::cout << folds.Render();
  }

  std::cout << fmt::format(
      "\nMixed precision on t4: modeled mixed/FP32 step time (published band {:.0f}-{:.0f}%); "
      "mixed with NCHW activations (PyTorch's default: tensor-core convolutions pay layout "
      "transposes), and with NHWC (channels_last) beside it\n",
      100 * kMixedRatioLow, 100 * kMixedRatioHigh);
  TextTable ratios({"network", "batch", "fp32_step_ms", "mixed_step_ms", "ratio_%", "in_band",
                    "mixed_nhwc_step_ms", "ratio_nhwc_%"});
  for (const MixedRatio& r : mixed) {
    ratios.AddRow({r.network, std::to_string(r.batch), FormatSig(r.fp32_step_s * 1e3, 4),
                   FormatSig(r.mixed_step_s * 1e3, 4), fmt::format("{:.1f}", 100 * r.ratio),
                   r.in_band ? "yes" : "no", FormatSig(r.mixed_nhwc_step_s * 1e3, 4),
                   fmt::format("{:.1f}", 100 * r.ratio_nhwc)});
  }
  std::cout << ratios.Render();
  if (host) {
    std::cout << fmt::format(
        "\nHost self-check: modeled host against a measured sweep of {} ({})\n", host->network,
        host->threads == 0   ? std::string("all threads")
        : host->threads == 1 ? std::string("1 thread")
                             : fmt::format("{} threads", host->threads));
    TextTable rows({"batch", "measured_step_ms", "predicted_step_ms", "error_%", "contended"});
    for (const HostCheckRow& r : host->rows) {
      rows.AddRow({std::to_string(r.batch), FormatSig(r.measured_step_s * 1e3, 4),
                   FormatSig(r.predicted_step_s * 1e3, 4), fmt::format("{:+.1f}", r.error_pct),
                   r.contended ? "yes" : "no"});
    }
    std::cout << rows.Render()
              << fmt::format("median |error| {}%, max {}%\n",
                             Pct(host->summary.median_abs_error_pct),
                             Pct(host->summary.max_abs_error_pct));
  }
}

// ---- --layers: the per-layer check -------------------------------------------

std::string Us(double seconds) { return FormatSig(seconds * 1e6, 4); }
std::string SignedPct(const PassCheck& p) {
  return p.measured ? fmt::format("{:+.1f}", p.error_pct) : "-";
}

json PassJson(const PassCheck& p) {
  return {{"measured", p.measured},
          {"measured_s", p.measured_s},
          {"modeled_s", p.modeled_s},
          {"error_pct", p.measured ? json(p.error_pct) : json(nullptr)}};
}

json ItemJson(const LayerCheckItem& item) {
  return {{"name", item.name},
          {"layers", item.layers},
          {"nodes", item.nodes},
          {"forward", PassJson(item.forward)},
          {"backward", PassJson(item.backward)}};
}

void WriteLayerCheckJson(const LayerCheckReport& report) {
  json groups = json::array();
  for (const LayerCheckGroup& g : report.groups) {
    json nodes = json::array();
    for (const MeasuredNode& n : g.nodes) {
      nodes.push_back({{"node", n.node},
                       {"fx_op", n.fx_op},
                       {"line", n.line},
                       {"layer", n.layer.empty() ? json(nullptr) : json(n.layer)},
                       {"note", n.note},
                       {"forward_s", n.forward_s},
                       {"backward_s", n.backward_s},
                       {"backward_measured", n.backward_measured},
                       {"accumulate_grad_s", n.accumulate_s}});
    }
    json kinds = json::array(), layers = json::array();
    for (const LayerCheckItem& k : g.kinds) kinds.push_back(ItemJson(k));
    for (const LayerCheckItem& l : g.layers) layers.push_back(ItemJson(l));
    groups.push_back(
        {{"gpu", g.gpu},
         {"device", g.device},
         {"batch", g.batch},
         {"seq_len", g.seq_len},
         {"kinds", kinds},
         {"encoder_layer", ItemJson(g.encoder_layer)},
         {"forward_kinds", SummaryJson(g.forward_kinds)},
         {"backward_kinds", SummaryJson(g.backward_kinds)},
         {"not_modeled",
          {{"forward_s", g.not_modeled_forward_s}, {"backward_s", g.not_modeled_backward_s}}},
         {"layers", layers},
         {"nodes", nodes}});
  }
  json matches = json::array(), skipped = json::array();
  for (const GpuMatch& m : report.matches) {
    matches.push_back({{"gpu", m.gpu}, {"device", m.device}, {"note", m.note}});
  }
  for (const SkippedGpu& s : report.skipped) {
    skipped.push_back({{"gpu", s.gpu}, {"reason", s.reason}, {"rows", s.rows}});
  }
  const json j = {{"schema", "fitspeed.validate_layers/1"},
                  {"source", report.source},
                  {"network", report.network},
                  {"precision", "fp32"},
                  {"error", "(modeled - measured) / measured time, %"},
                  {"devices", matches},
                  {"skipped", skipped},
                  {"forward_kinds", SummaryJson(report.forward_kinds)},
                  {"backward_kinds", SummaryJson(report.backward_kinds)},
                  {"forward_layer", SummaryJson(report.forward_layer)},
                  {"backward_layer", SummaryJson(report.backward_layer)},
                  {"groups", groups}};
  std::cout << j.dump(2) << "\n";
}

void WriteLayerCheckCsv(const LayerCheckReport& report) {
  TextTable table({"device", "gpu", "batch", "seq_len", "level", "name", "layers", "nodes",
                   "fw_measured_us", "fw_modeled_us", "fw_error_pct", "bw_measured_us",
                   "bw_modeled_us", "bw_error_pct"});
  for (const LayerCheckGroup& g : report.groups) {
    auto add = [&table, &g](const char* level, const LayerCheckItem& item) {
      const auto cells = [](const PassCheck& p) -> std::array<std::string, 3> {
        return {FormatSig(p.measured_s * 1e6, 6), FormatSig(p.modeled_s * 1e6, 6),
                p.measured ? FormatSig(p.error_pct, 4) : ""};
      };
      const auto fw = cells(item.forward);
      const auto bw = cells(item.backward);
      table.AddRow({g.device, g.gpu, std::to_string(g.batch), std::to_string(g.seq_len), level,
                    item.name, fmt::format("{}", fmt::join(item.layers, " ")),
                    fmt::format("{}", fmt::join(item.nodes, " ")), fw[0], fw[1], fw[2], bw[0],
                    bw[1], bw[2]});
    };
    for (const LayerCheckItem& k : g.kinds) add("kind", k);
    add("encoder_layer", g.encoder_layer);
    for (const LayerCheckItem& l : g.layers) add("layer", l);
  }
  std::cout << table.RenderCsv();
}

void WriteLayerCheckTable(const LayerCheckReport& report) {
  std::cout << fmt::format(
      "Per-layer check: {} (seq {}, fp32) modeled per layer against NeuSight's per-node GPU "
      "times of one HF BertLayer (torch.fx nodes timed one at a time in PyTorch eager; {}). "
      "error = (modeled - measured) / measured time: positive = modeled slower; backward = "
      "backward-data + backward-weights against bw_us; '-': no backward kernel measured "
      "(NeuSight runs no backward for views and copies; a residual add's backward launches no "
      "kernel). Not calibrated on these rows.\n\n",
      report.network, report.groups.empty() ? 0 : report.groups.front().seq_len,
      std::filesystem::path(report.source).filename().string());
  TextTable kinds({"device", "batch", "kind", "nodes", "fw_measured_us", "fw_modeled_us",
                   "fw_error_%", "bw_measured_us", "bw_modeled_us", "bw_error_%"});
  for (const LayerCheckGroup& g : report.groups) {
    auto add = [&kinds, &g](const LayerCheckItem& item) {
      kinds.AddRow({g.device, std::to_string(g.batch), item.name, std::to_string(item.nodes.size()),
                    Us(item.forward.measured_s), Us(item.forward.modeled_s),
                    SignedPct(item.forward),
                    item.backward.measured ? Us(item.backward.measured_s) : "-",
                    Us(item.backward.modeled_s), SignedPct(item.backward)});
    };
    for (const LayerCheckItem& k : g.kinds) add(k);
    add(g.encoder_layer);
  }
  std::cout << kinds.Render();
  std::cout << "\nAbsolute % error over the kinds, and of the whole encoder layer (its backward "
               "over the kinds with a measured backward); not_modeled: "
               "measured time of the nodes fitspeed does not model (attention-mask add, shape "
               "arithmetic), not in the layer's measured time; all: over every GPU and batch (the "
               "layer columns there: median |error|):\n";
  TextTable summary({"device", "gpu", "batch", "fw_median_%", "fw_max_%", "bw_median_%", "bw_max_%",
                     "layer_fw_error_%", "layer_bw_error_%", "not_modeled_fw_us",
                     "not_modeled_bw_us"});
  for (const LayerCheckGroup& g : report.groups) {
    summary.AddRow(
        {g.device, g.gpu, std::to_string(g.batch), Pct(g.forward_kinds.median_abs_error_pct),
         Pct(g.forward_kinds.max_abs_error_pct), Pct(g.backward_kinds.median_abs_error_pct),
         Pct(g.backward_kinds.max_abs_error_pct), SignedPct(g.encoder_layer.forward),
         SignedPct(g.encoder_layer.backward), Us(g.not_modeled_forward_s),
         Us(g.not_modeled_backward_s)});
  }
  summary.AddRow(
      {"all", "", "", Pct(report.forward_kinds.median_abs_error_pct),
       Pct(report.forward_kinds.max_abs_error_pct), Pct(report.backward_kinds.median_abs_error_pct),
       Pct(report.backward_kinds.max_abs_error_pct), Pct(report.forward_layer.median_abs_error_pct),
       Pct(report.backward_layer.median_abs_error_pct), "", ""});
  std::cout << summary.Render();
  std::cout << "\nNodes fitspeed does not model (measured; not in the comparison):\n";
  TextTable absent({"device", "batch", "what", "nodes", "fw_measured_us", "bw_measured_us"});
  for (const LayerCheckGroup& g : report.groups) {
    std::vector<std::string> notes;  // in order of first appearance
    for (const MeasuredNode& n : g.nodes) {
      if (n.layer.empty() && std::find(notes.begin(), notes.end(), n.note) == notes.end()) {
        notes.push_back(n.note);
      }
    }
    for (const std::string& note : notes) {
      std::vector<std::string> nodes;
      double forward_s = 0, backward_s = 0;
      for (const MeasuredNode& n : g.nodes) {
        if (!n.layer.empty() || n.note != note) continue;
        nodes.push_back(n.node);
        forward_s += n.forward_s;
        backward_s += n.backward_s;
      }
      absent.AddRow({g.device, std::to_string(g.batch), note,
                     nodes.size() == 1 ? nodes.front() : fmt::format("{} nodes", nodes.size()),
                     Us(forward_s), Us(backward_s)});
    }
  }
  std::cout << absent.Render();
  std::cout << "\nDevices (NeuSight GPU -> catalog device):\n";
  for (const GpuMatch& m : report.matches) {
    std::cout << fmt::format("  {} -> {}: {}\n", m.gpu, m.device, m.note);
  }
  for (const SkippedGpu& s : report.skipped) {
    std::cout << fmt::format("  {}: skipped, {} ({} rows)\n", s.gpu, s.reason, s.rows);
  }
}

int RunLayerCheck(const ValidateCliOptions& options, OutputFormat format) {
  LayerCheckOptions check;
  for (const std::string& file : options.device_files) {
    check.devices.push_back(ReadDeviceJsonFile(file));
  }
  const LayerCheckReport report =
      CheckBertLayers(options.data_dir + "/" + kNeusightBertLayersFile, check);
  if (format == OutputFormat::kJson) {
    WriteLayerCheckJson(report);
  } else if (format == OutputFormat::kCsv) {
    WriteLayerCheckCsv(report);
  } else {
    WriteLayerCheckTable(report);
  }
  return 0;
}

int RunValidate(const ValidateCliOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  if (options.shape_term && !options.kernels) {
    throw UsageError("--shape-term needs --kernels");
  }
  if (options.kernels) {
    return RunKernelCheck(options.kernel_dir, options.catalog_out, options.shape_term, format);
  }
  std::error_code error;
  if (!std::filesystem::is_directory(options.data_dir, error)) {
    throw InputError(fmt::format(
        "measurement directory '{}' not found (give the tables' directory with --data DIR)",
        options.data_dir));
  }
  if (options.frameworks || !options.frameworks_out.empty()) {
    return RunFrameworkCheck(options.data_dir, options.device_files, options.frameworks_out,
                             format);
  }
  if (options.layers) return RunLayerCheck(options, format);
  if (options.placements) {
    return RunPlacementCheck(options.data_dir, options.device_files, options.placements_links,
                             options.placements_calibration_nodes, format);
  }
  ValidateOptions validate;
  validate.require_fit = options.require_fit;
  validate.cross_validate = !options.no_cross_validation;
  validate.cross_device = !options.no_cross_device;
  for (const std::string& file : options.device_files) {
    validate.devices.push_back(ReadDeviceJsonFile(file));
  }
  const ValidationReport report = Validate(PublishedCases(options.data_dir), validate);
  Device t4;
  bool t4_given = false;
  for (const Device& d : validate.devices) {
    if (d.name == "t4") {
      t4 = d;
      t4_given = true;
    }
  }
  if (!t4_given) t4 = LoadDevice("t4");
  const std::vector<MixedRatio> mixed = MixedPrecisionRatios(t4, kMixedNetworks, kMixedBatches);
  std::unique_ptr<HostCheck> host;
  if (options.host_check) {
    std::cerr << "host self-check: measuring the host sweep (seconds)...\n";
    HostCheckOptions host_options;
    host_options.threads = options.host_threads;
    host = std::make_unique<HostCheck>(RunHostCheck(host_options));
  }
  // The catalog's out-of-sample errors give the prediction intervals
  // (fitspeed/device/intervals.h); --intervals-out writes them for the build.
  // The transfer check (validate_transfer.cc).
  std::optional<TransferValidation> transfer;
  if (!options.no_transfer) {
    transfer = RunTransferValidation(PublishedCases(options.data_dir), validate.devices);
  }
  IntervalTable intervals = IntervalTableFromValidation(report);
  if (transfer) AddTransferErrors(intervals, *transfer);
  // The framework profiles' predictions on GPUs they were not fitted on give
  // the intervals of `sweep --framework` (validate_frameworks.cc shows them).
  AddFrameworkErrors(intervals, FitFrameworkProfiles(PublishedCases(options.data_dir),
                                                     CalibrationOptions{}, validate.devices));
  intervals.generated_by = "fitspeed validate --intervals-out (data/measured)";
  if (!options.intervals_out.empty()) {
    if (!transfer) {
      throw UsageError(
          "--intervals-out needs the transfer check (drop --no-transfer): the "
          "table holds the transferred predictions' errors too");
    }
    std::ofstream out(options.intervals_out, std::ios::binary);
    out << IntervalTableToJson(intervals);
    if (!out) throw InputError(fmt::format("cannot write {}", options.intervals_out));
  }
  if (format == OutputFormat::kJson) {
    WriteJson(options.data_dir, report, mixed, host.get(),
              IntervalSectionJson(intervals, options.interval_level),
              transfer ? TransferValidationJson(*transfer) : json(nullptr));
  } else {
    WriteTable(report, mixed, host.get(), format == OutputFormat::kCsv);
    if (transfer) WriteTransferSection(std::cout, *transfer, format == OutputFormat::kCsv);
    if (format == OutputFormat::kTable) {
      WriteIntervalSection(std::cout, intervals, options.interval_level);
    }
  }
  return 0;
}

}  // namespace

void SetupValidateCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ValidateCliOptions>();
  CLI::App* command = app.add_subcommand(
      "validate",
      "The device step model against published measurements (data/measured): predicted and "
      "measured throughput per case, % error, median and maximum error per device");
  command
      ->add_option("--data", options->data_dir,
                   "Directory of the measurement tables (data/measured/README.md)")
      ->capture_default_str();
  command->add_option("--device-file", options->device_files,
                      "A device JSON file (e.g. calibrated) used instead of the catalog device "
                      "of the same name; repeatable");
  command->add_flag("--host-check", options->host_check,
                    "Also measure a host sweep of cnn-cifar-small at batches 8, 16, 32 and "
                    "compare it with the modeled host (seconds)");
  command
      ->add_option("--host-threads", options->host_threads,
                   "With --host-check: threads of the measured sweep and of the host probe it "
                   "is compared with; 0: every CPU")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--require-fit", options->require_fit,
                    "Do not predict cases whose batch the memory model says does not fit "
                    "(by default they are predicted and marked oom*: they were measured)");
  command->add_flag("--no-cross-validation", options->no_cross_validation,
                    "Skip the cross-validation (per device, calibrate on the other networks' "
                    "or frameworks' cases and predict the held-out ones)");
  command->add_flag("--no-cross-device", options->no_cross_device,
                    "Skip the cross-device check (predict a network's cases on each device from "
                    "its cases on the other devices)");
  command->add_flag("--no-transfer", options->no_transfer,
                    "Skip the transfer check (predict each device's cases from the same "
                    "network's cases on one other device, calibrated on those only)");
  command->add_flag("--frameworks", options->frameworks,
                    "Instead, fit a profile per framework (its efficiency scales and host "
                    "overhead over every GPU it ran on) and predict each GPU's runs from the "
                    "profile fitted on the framework's other GPUs (docs/validation.md, "
                    "\"Framework profiles\")");
  command->add_option("--frameworks-out", options->frameworks_out,
                      "Write the framework profiles (schema fitspeed.frameworks/1; "
                      "data/frameworks.json is the copy compiled into fitspeed) to this file; "
                      "implies --frameworks");
  command->add_flag("--kernels", options->kernels,
                    "Instead, fit the device efficiency curves to the published kernel timings "
                    "of --kernel-data (DeepBench GEMMs and convolutions, K40 SGEMM) and report "
                    "the fits, their residuals and the convolution-algorithm rule's agreement "
                    "with cuDNN (docs/validation.md, \"Kernel fits\")");
  command
      ->add_option("--kernel-data", options->kernel_dir,
                   "With --kernels: the directory of the kernel tables")
      ->capture_default_str();
  command->add_option("--catalog-out", options->catalog_out,
                      "With --kernels: write the catalog devices the fits serve, with the fitted "
                      "or carried curves, into this directory (data/devices regenerates the "
                      "catalog)");
  command->add_flag("--shape-term", options->shape_term,
                    "With --kernels: fit each matrix curve with a GEMM shape term, efficiency x "
                    "prod d/(d + half_dim) over the kernel's three matrix dimensions, and check "
                    "those curves on the second sources; the catalog is fitted without it "
                    "(docs/validation.md, \"Kernel fits\", says why); with --catalog-out, "
                    "device files that carry it (\"half_dim\")");
  command->add_flag("--placements", options->placements,
                    "Instead, check the data-parallel step (all-reduce overlapped as PyTorch DDP "
                    "does it, and serial) against Pollux's 2-4 GPU placements on one T4 node, and "
                    "predict 2 and 4 such nodes (docs/validation.md, \"Pollux placements\")");
  command->add_option("--placements-links", options->placements_links,
                      "With --placements: a links file whose \"network\" link (and \"devices\" "
                      "link, if any) replace the assumed 50 Gbit/s between g4dn.12xlarge nodes");
  command
      ->add_option("--placements-calibration-nodes", options->placements_calibration_nodes,
                   "With --placements: calibrate the network link from Pollux's runs on this "
                   "many nodes of 4 T4 against one node (2, 3 or 4; the others are out of sample)")
      ->check(CLI::Range(2, 4));
  command->add_flag("--layers", options->layers,
                    "Instead, check the step model per layer: a BERT-large encoder layer against "
                    "NeuSight's per-node GPU times (neusight_bert_large_train_layers.csv)");
  command
      ->add_option("--interval-level", options->interval_level,
                   "Level of the prediction intervals whose leave-one-source-out coverage is "
                   "reported, in (0, 1)")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 0.99));
  command->add_option("--intervals-out", options->intervals_out,
                      "Write the out-of-sample errors per class (schema fitspeed.intervals/1) "
                      "to this file: data/intervals.json is the build's copy");
  AddOutputOption(*command, options->output);
  command->callback([options, &exit_code] { exit_code = RunValidate(*options); });
}

}  // namespace fitspeed::cli
