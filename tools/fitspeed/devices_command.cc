// `fitspeed devices [NAME|FILE] [--output table|csv|json]`: the device catalog
// (data/devices/*.json, docs/devices.md) with peaks, memory and links, or one
// device in full; `host` probes this CPU (about a second).
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/device/device.h"

namespace fitspeed::cli {

namespace {

struct DevicesOptions {
  std::string name;  // catalog name, "host" or a device JSON file; empty lists the catalog
  std::string output = "table";
};

int RunDevices(const DevicesOptions& options) {
  std::vector<Device> devices;
  if (options.name.empty()) {
    for (const std::string& name : CatalogDeviceNames()) {
      if (name != "host") devices.push_back(LoadDevice(name));  // host: probed on request only
    }
  } else {
    devices.push_back(LoadDevice(options.name));
  }
  WriteDevices(std::cout, devices, ParseOutputFormat(options.output), !options.name.empty());
  if (options.name.empty() && options.output == "table") {
    std::cout << "host: this CPU, probed on request (`fitspeed devices host`)\n";
  }
  return 0;
}

}  // namespace

void SetupDevicesCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* command = app.add_subcommand(
      "devices",
      "List the device catalog (peak FLOPS per precision, memory bandwidth and capacity, "
      "links); with NAME or FILE, that device in full. `host` probes this CPU");
  command->add_option("name", options->name,
                      "A catalog device, host, or a device JSON file (docs/devices.md)");
  command
      ->add_option("--output,-o", options->output,
                   "Output format: table, csv (the table's columns, one row per device) or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "csv", "json"}));
  command->callback([options, &exit_code] { exit_code = RunDevices(*options); });
}

}  // namespace fitspeed::cli
