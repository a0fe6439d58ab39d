// `fitspeed calibrate --device NAME|FILE INPUT.csv... [--params ...] [--write FILE.json]`:
// fits a device's efficiency scales and overheads to measured cases of zoo
// networks (docs/devices.md, "Calibration"), prints the parameters with their
// intervals, the error before and after and the leave-one-network-out error,
// and optionally writes the calibrated device file.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/calibrate.h"
#include "fitspeed/device/cases.h"
#include "fitspeed/device/device.h"

namespace fitspeed::cli {

namespace {

using json = nlohmann::ordered_json;

struct CalibrateOptions {
  std::string device;               // catalog name or device JSON file
  std::vector<std::string> inputs;  // cases CSV files
  std::vector<std::string> params = {"compute", "host"};
  std::string write;  // calibrated device file; empty: none
  std::string optimizer = "sgd-momentum";
  double confidence = 0.95;
  std::string output = "table";
};

json Number(double x) { return std::isfinite(x) ? json(x) : json(); }

json ErrorJson(const DeviceCalibration::Error& e) {
  return {{"cases", e.cases}, {"rms", e.rms}, {"median_abs", e.median_abs}, {"max_abs", e.max_abs}};
}

json ResultJson(const CalibrationResult& r, const std::vector<MeasuredCase>& skipped) {
  json params = json::array();
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
  json cases = json::array();
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
  json folds = json::array();
  for (const HeldOutNetwork& f : r.held_out) {
    json values = json::object();
    for (size_t j = 0; j < f.values.size(); ++j) values[r.parameters[j].name] = f.values[j];
    folds.push_back({{"network", f.network},
                     {"cases", f.cases},
                     {"training_cases", f.training_cases},
                     {"computed", f.computed},
                     {"problem", f.problem},
                     {"parameters", values},
                     {"error", f.computed ? ErrorJson(f.error) : json()}});
  }
  json skipped_json = json::array();
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
          {"error_loo", r.loo ? ErrorJson(*r.loo) : json()},
          {"warnings", r.warnings},
          {"cases", cases},
          {"held_out", folds},
          {"skipped", skipped_json}};
}

int RunCalibrate(const CalibrateOptions& o) {
  CalibrationOptions options;
  options.parameters.clear();
  for (const std::string& name : o.params) {
    options.parameters.push_back(ParseCalibrationParameter(name));
  }
  options.optimizer = ParseOptimizer(o.optimizer);
  options.confidence = o.confidence;
  ValidateCalibrationOptions(options);
  const Device device = LoadDevice(o.device);

  // The cases of this device (by its name, or as --device was written); the others are skipped.
  std::vector<MeasuredCase> used, skipped;
  for (const std::string& input : o.inputs) {
    for (MeasuredCase& c : ReadCasesCsv(input)) {
      (c.device == device.name || c.device == o.device ? used : skipped).push_back(std::move(c));
    }
  }
  if (!skipped.empty()) {
    std::map<std::string, int> by_device;
    for (const MeasuredCase& c : skipped) ++by_device[c.device];
    std::string list;
    for (const auto& [name, count] : by_device) {
      list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", name, count);
    }
    std::cerr << fmt::format("fitspeed: skipped {} case(s) of other devices: {}\n", skipped.size(),
                             list);
  }
  if (used.empty()) {
    throw DataError(
        fmt::format("no case of device '{}' in {}", device.name, fmt::join(o.inputs, ", ")));
  }
  const CalibrationResult result = CalibrateDevice(device, used, options);
  if (o.output == "json") {
    std::cout << ResultJson(result, skipped).dump(2) << "\n";
  } else {
    std::cout << result.FullReport();
  }
  if (!result.usable()) {
    std::cerr << "fitspeed: the calibration did not converge; no device file written\n";
    return static_cast<int>(ExitCode::kFitUnusable);
  }
  if (!o.write.empty()) {
    std::ofstream file(o.write, std::ios::binary);
    file << DeviceToJson(result.device);
    file.close();
    if (!file) throw InputError(fmt::format("cannot write the device file '{}'", o.write));
    std::cerr << fmt::format("fitspeed: wrote the calibrated device to {}\n", o.write);
  }
  return 0;
}

}  // namespace

void SetupCalibrateCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* command = app.add_subcommand(
      "calibrate",
      "Fit a device's efficiency scales and overheads to measured cases of zoo networks "
      "(CSV: network,device,precision,devices,batch,throughput_sps[,framework][,note]); print "
      "the parameters with intervals, the error before and after, and the "
      "leave-one-network-out (out-of-sample) error");
  command->add_option("--device", o->device, "A catalog device or a device JSON file")->required();
  command->add_option("inputs", o->inputs, "Cases CSV files (docs/devices.md, \"Calibration\")")
      ->required();
  command
      ->add_option("--params", o->params,
                   "Parameters to fit, comma separated: compute, memory, tensor "
                   "(efficiency-curve scales; tensor: matrix work on tensor units, needs TF32, "
                   "mixed-precision or TPU cases), launch (kernel launch s), host (host s per "
                   "step)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--write", o->write, "Write the calibrated device file (fitspeed.device/1)");
  command->add_option("--optimizer", o->optimizer, "sgd, sgd-momentum (alias momentum) or adam")
      ->capture_default_str();
  command->add_option("--confidence", o->confidence, "Confidence level of the intervals")
      ->capture_default_str();
  command->add_option("--output,-o", o->output, "Output format: table or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  command->callback([o, &exit_code] { exit_code = RunCalibrate(*o); });
}

}  // namespace fitspeed::cli
