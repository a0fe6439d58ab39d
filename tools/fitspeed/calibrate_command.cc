// `fitspeed calibrate --device NAME|FILE INPUT.csv... [--params ...] [--write FILE.json]`:
// fits a device's efficiency scales and overheads to measured cases of zoo
// networks (docs/devices.md, "Calibration"), prints the parameters with their
// intervals, the error before and after and the leave-one-network-out error,
// and optionally writes the calibrated device file. With `--from D1,D2,...`,
// the efficiency scales are fitted to the cases of those devices jointly and
// applied to --device, a device without measurements of its own.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <utility>

#include "command.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/scenario/calibrate.h"

namespace fitspeed::cli {

namespace {

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

// Writes `device` to `path` (fitspeed.device/1).
void WriteDevice(const Device& device, const std::string& path) {
  std::ofstream file(path, std::ios::binary);
  file << DeviceToJson(device);
  file.close();
  if (!file) throw InputError(fmt::format("cannot write the device file '{}'", path));
  std::cerr << fmt::format("fitspeed: wrote the calibrated device to {}\n", path);
}

int RunCalibrate(const CalibrateOptions& o) {
  CalibrateRequest r;
  r.device = o.device;
  if (!o.from.empty()) r.from = SplitList(o.from);
  r.cases_files = o.inputs;
  r.options.parameters.clear();
  for (const std::string& name : SplitList(o.params)) {
    r.options.parameters.push_back(ParseCalibrationParameter(name));
  }
  r.parameters_stated = o.params_given;
  r.options.optimizer = ParseOptimizer(o.optimizer);
  r.options.confidence = o.confidence;
  const CalibrateAnswer answer = r.Run();
  const int code = PrintAnswer(answer, o.output);
  if (code == 0 && !o.write.empty()) WriteDevice(answer.device, o.write);
  return code;
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
