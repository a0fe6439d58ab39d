// `fitspeed calibrate --device NAME|FILE INPUT.csv... [--params ...] [--write FILE.json]`:
// fits a device's efficiency scales and overheads to measured cases of zoo
// networks (docs/devices.md, "Calibration"), prints the parameters with their
// intervals, the error before and after and the leave-one-network-out error,
// and optionally writes the calibrated device file. With `--from D1,D2,...`,
// the efficiency scales are fitted to the cases of those devices jointly and
// applied to --device, a device without measurements of its own.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/evidence/calibrate.h"
#include "fitspeed/evidence/cases.h"

namespace fitspeed::cli {

namespace {

using json = nlohmann::ordered_json;

struct CalibrateOptions {
  std::string device;               // catalog name or device JSON file
  std::string from;                 // --from: devices whose cases are fitted for --device
  std::vector<std::string> inputs;  // cases CSV files
  std::string params = "compute,host";
  bool params_given = false;  // --params was on the command line
  std::string write;          // calibrated device file; empty: none
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

// "a,b, c" -> {"a", "b", "c"}; UsageError for an empty item.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(',', begin);
    std::string item =
        text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty()) throw UsageError(fmt::format("empty item in the list '{}'", text));
    items.push_back(item);
    if (end == std::string::npos) return items;
    begin = end + 1;
  }
}

// The cases of `devices` (by name, or as written on the command line in
// `written`); the others are counted on stderr.
std::vector<MeasuredCase> CasesOf(const std::vector<Device>& devices,
                                  const std::vector<std::string>& written,
                                  const std::vector<std::string>& inputs,
                                  std::vector<MeasuredCase>& skipped) {
  std::vector<MeasuredCase> used;
  for (const std::string& input : inputs) {
    for (MeasuredCase& c : ReadCasesCsv(input)) {
      bool ours = std::find(written.begin(), written.end(), c.device) != written.end();
      for (const Device& d : devices) ours = ours || c.device == d.name;
      (ours ? used : skipped).push_back(std::move(c));
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
    throw DataError(fmt::format("no case of device{} '{}' in {}", written.size() > 1 ? "s" : "",
                                fmt::join(written, "', '"), fmt::join(inputs, ", ")));
  }
  return used;
}

// Writes `device` to `path` (fitspeed.device/1).
void WriteDevice(const Device& device, const std::string& path) {
  std::ofstream file(path, std::ios::binary);
  file << DeviceToJson(device);
  file.close();
  if (!file) throw InputError(fmt::format("cannot write the device file '{}'", path));
  std::cerr << fmt::format("fitspeed: wrote the calibrated device to {}\n", path);
}

// --from: the scales fitted jointly to the cases of the --from devices,
// applied to --device.
int RunTransfer(const CalibrateOptions& o, CalibrationOptions options,
                const std::vector<std::string>& from_names) {
  std::vector<Device> from;
  for (const std::string& name : from_names) from.push_back(LoadDevice(name));
  const Device target = LoadDevice(o.device);
  std::vector<MeasuredCase> skipped;
  std::vector<MeasuredCase> used = CasesOf(from, from_names, o.inputs, skipped);
  // Each case named by its device's name (a case may name it as written on
  // the command line, a file path), as CalibrateShared matches them.
  std::vector<const Device*> devices;
  for (MeasuredCase& c : used) {
    for (size_t i = 0; i < from.size(); ++i) {
      if (c.device == from[i].name || c.device == from_names[i]) {
        c.device = from[i].name;
        devices.push_back(&from[i]);
        break;
      }
    }
  }
  if (!o.params_given) {
    // The scales the cases determine: compute for work on CUDA cores, tensor
    // for tensor-unit work (TF32, FP16/BF16, a TPU's FP32). Overheads belong to
    // each setup and are not carried to another device unless asked for.
    options.parameters = ScalesDetermined(used, devices);
  }
  const SharedCalibration r = CalibrateShared(from, used, options);
  const Device calibrated = ApplyCalibration(target, r.parameters);
  if (o.output == "json") {
    json params = json::array();
    for (const CalibratedParameter& p : r.parameters) {
      params.push_back({{"name", p.name},
                        {"unit", p.unit},
                        {"value", p.value},
                        {"bounds", {Number(p.lower), Number(p.upper)}},
                        {"at_bound", p.at_bound()}});
    }
    std::cout << json{{"schema", "fitspeed.calibration-transfer/1"},
                      {"device", target.name},
                      {"from", from_names},
                      {"cases", used.size()},
                      {"converged", r.converged},
                      {"parameters", params},
                      {"error_after", ErrorJson(r.after)}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format(
        "efficiency scales fitted to {} case(s) of {} jointly ({} after {} iterations), applied "
        "to {}; its overheads are its own\n",
        used.size(), fmt::join(from_names, ", "), r.converged ? "converged" : "DID NOT CONVERGE",
        r.iterations, target.name);
    for (const CalibratedParameter& p : r.parameters) {
      std::cout << fmt::format("  {} = {}{}{}\n", p.name, FormatSig(p.value, 4),
                               p.unit.empty() ? "" : " " + p.unit,
                               p.at_bound() ? " (at its bound)" : "");
    }
    std::cout << fmt::format(
        "error on the fitted cases (in-sample): rms {:.1f}%, median |e| {:.1f}%, max |e| "
        "{:.1f}%\n"
        "how well this carries to another device: fitspeed validate, cross-device check "
        "(docs/validation.md)\n",
        100 * r.after.rms, 100 * r.after.median_abs, 100 * r.after.max_abs);
  }
  if (!r.converged) {
    std::cerr << "fitspeed: the calibration did not converge; no device file written\n";
    return static_cast<int>(ExitCode::kFitUnusable);
  }
  if (!o.write.empty()) WriteDevice(calibrated, o.write);
  return 0;
}

int RunCalibrate(const CalibrateOptions& o) {
  CalibrationOptions options;
  options.parameters.clear();
  for (const std::string& name : SplitList(o.params)) {
    options.parameters.push_back(ParseCalibrationParameter(name));
  }
  options.optimizer = ParseOptimizer(o.optimizer);
  options.confidence = o.confidence;
  ValidateCalibrationOptions(options);
  if (!o.from.empty()) return RunTransfer(o, options, SplitList(o.from));
  const Device device = LoadDevice(o.device);

  // The cases of this device (by its name, or as --device was written); the others are skipped.
  std::vector<MeasuredCase> skipped;
  const std::vector<MeasuredCase> used = CasesOf({device}, {o.device}, o.inputs, skipped);
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
  if (!o.write.empty()) WriteDevice(result.device, o.write);
  return 0;
}

}  // namespace

void SetupCalibrateCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* command = app.add_subcommand(
      "calibrate",
      "Fit a device's efficiency scales and overheads to measured cases of zoo networks "
      "(CSV: "
      "network,device,precision,devices,batch,throughput_sps[,framework][,layout][,optimizer][,"
      "note]); "
      "print "
      "the parameters with intervals, the error before and after, and the "
      "leave-one-network-out (out-of-sample) error");
  command->add_option("--device", o->device, "A catalog device or a device JSON file")->required();
  command->add_option("--from", o->from,
                      "Devices (comma separated) whose cases are fitted jointly; the efficiency "
                      "scales are then applied to --device, which needs no cases of its own "
                      "(default --params: the scales the cases determine)");
  command->add_option("inputs", o->inputs, "Cases CSV files (docs/devices.md, \"Calibration\")")
      ->required();
  command
      ->add_option("--params", o->params,
                   "Parameters to fit, comma separated: compute, memory, tensor "
                   "(efficiency-curve scales; tensor: matrix work on tensor units, needs TF32, "
                   "mixed-precision or TPU cases), launch (kernel launch s), host (host s per "
                   "step)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->params_given = true; });
  command->add_option("--write", o->write, "Write the calibrated device file (fitspeed.device/1)");
  command
      ->add_option(
          "--optimizer", o->optimizer,
          "sgd, sgd-momentum (alias momentum), adam or rmsprop: the update modeled for cases "
          "without an optimizer column")
      ->capture_default_str();
  command->add_option("--confidence", o->confidence, "Confidence level of the intervals")
      ->capture_default_str();
  command->add_option("--output,-o", o->output, "Output format: table or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  command->callback([o, &exit_code] { exit_code = RunCalibrate(*o); });
}

}  // namespace fitspeed::cli
