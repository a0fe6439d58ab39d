// The checks of `fitspeed validate` (fitspeed/evidence/checks.h).
#include "fitspeed/evidence/checks.h"

#include <fmt/format.h>

#include <fstream>
#include <utility>

#include "fitspeed/core/error.h"
#include "fitspeed/evidence/interval_table.h"
#include "fitspeed/evidence/mlperf.h"

namespace fitspeed {

CaseValidation CheckPublishedCases(const std::string& data_dir, const CaseCheckOptions& options) {
  CaseValidation v;
  v.data_dir = data_dir;
  v.interval_level = options.interval_level;
  const std::vector<Device>& devices = options.validate.devices;
  // A step of one call: its stage shown while it runs, then done.
  auto step = [&](const char* stage, const char* what, auto&& run) {
    ReportProgress(options.progress, stage, 0, 1, [&] { return std::string(what); });
    run();
    ReportProgress(options.progress, stage, 1, 1, [&] { return std::string(what); });
  };
  if (options.progress && !options.validate.progress) {
    ValidateOptions validate = options.validate;
    validate.progress = options.progress;
    v.report = Validate(PublishedCases(data_dir), validate);
  } else {
    v.report = Validate(PublishedCases(data_dir), options.validate);
  }
  Device t4;
  bool t4_given = false;
  for (const Device& d : devices) {
    if (d.name == "t4") {
      t4 = d;
      t4_given = true;
    }
  }
  if (!t4_given) t4 = LoadDevice("t4");
  step("mixed precision", "fp16 against fp32 on the t4",
       [&] { v.mixed = MixedPrecisionRatios(t4, options.mixed_networks, options.mixed_batches); });
  if (options.host) {
    step("host check", "a host sweep measured and modeled",
         [&] { v.host = RunHostCheck(*options.host); });
  }
  if (options.transfer) {
    step("transfer check", "each device's cases from one other device", [&] {
      TransferOptions transfer;
      transfer.devices = devices;
      v.transfer = ValidateTransfer(PublishedCases(data_dir), transfer);
    });
  }
  // The catalog's out-of-sample errors give the prediction intervals
  // (fitspeed/device/intervals.h), with the transferred predictions' errors.
  v.intervals = IntervalTableFromValidation(v.report);
  if (v.transfer) AddTransferErrors(v.intervals, *v.transfer);
  // MLPerf Training's development publishers (validate mlperf), with the
  // catalog devices: their setups are new publishers' (the test split never
  // enters). A data directory without the table, or device files given in
  // place of the catalog's, leaves them out.
  const std::string mlperf_table = data_dir + "/" + kMlperfResnetBertTable;
  if (devices.empty() && std::ifstream(mlperf_table).good()) {
    step("mlperf", "MLPerf Training's development publishers", [&] {
      MlperfValidationOptions mlperf;
      mlperf.split = "development";
      AddMlperfErrors(v.intervals,
                      ValidateMlperf(ReadMlperfCases(mlperf_table, BuiltinPublishers()), mlperf));
    });
  }
  // The framework profiles' predictions on GPUs they were not fitted on give
  // the intervals of `sweep --framework` (`validate frameworks` shows them).
  AddFrameworkErrors(v.intervals,
                     FitFrameworkProfiles(PublishedCases(data_dir), CalibrationOptions{}, devices,
                                          options.progress));
  v.intervals.generated_by =
      "fitspeed validate --intervals-out (data/measured; MLPerf: the development split)";
  return v;
}

std::vector<Device> KernelCatalogDevices(const KernelFitReport& fits) {
  const std::vector<KernelGpu> gpus = KernelGpus();
  const std::vector<MemorySweepGpu> memory_gpus = MemorySweepGpus();
  std::vector<Device> devices;
  for (const std::string& name : CatalogDeviceNames()) {
    if (name == "host") continue;
    Device device = LoadDevice(name);
    const bool curves = !ApplyKernelCurves(device, fits, gpus).empty();
    const bool memory = !ApplyMemoryPlateaus(device, fits.memory, memory_gpus).empty();
    if (curves || memory) devices.push_back(std::move(device));
  }
  return devices;
}

KernelValidation CheckKernelFits(KernelFitReport fits, const std::string& kernel_dir,
                                 bool shape_term) {
  KernelValidation v;
  v.kernel_dir = kernel_dir;
  // With the shape term the curves differ from the catalog's: the second
  // sources check the catalog devices with these fits applied.
  std::vector<Device> refitted;
  if (shape_term) {
    for (const std::string& name : CatalogDeviceNames()) {
      if (name == "host") continue;
      Device device = LoadDevice(name);
      if (!ApplyKernelCurves(device, fits, KernelGpus()).empty()) refitted.push_back(device);
    }
  }
  // NeuSight times one eager call: under 50 us its dispatch floor (25-40 us) dominates.
  for (const auto& [file, floor_s] :
       {std::pair{"neusight_linear_test.csv", 50e-6}, std::pair{"neusight_bmm.csv", 50e-6},
        std::pair{"neusight_conv.csv", 50e-6}, std::pair{"autoheuristic_train_mm.csv", 0.0}}) {
    const std::vector<KernelCheck> some =
        CheckCatalogOnKernels(ReadKernelTable(kernel_dir + "/" + file), file, floor_s, refitted);
    v.catalog_checks.insert(v.catalog_checks.end(), some.begin(), some.end());
  }
  v.allreduce_checks =
      CheckLinksOnAllReduce(ReadAllReduceTable(kernel_dir + "/deepbench_allreduce.csv"));
  v.fits = std::move(fits);
  return v;
}

DeviceLink AssumedG4dnNetwork() {
  DeviceLink link;
  link.name = "g4dn.12xlarge 50 Gbit/s (assumed)";
  link.connects = "network";
  link.bandwidth_bytes_per_s = 50e9 / 8;
  link.latency_s = 30e-6;
  return link;
}

PlacementValidation CheckPlacements(const std::string& data_dir, const std::vector<Device>& devices,
                                    const std::string& links_file, int calibration_nodes) {
  Device t4 = LoadDevice("t4");
  for (const Device& d : devices) {
    if (d.name == "t4") t4 = d;
  }
  DeviceLink network = AssumedG4dnNetwork();
  PlacementValidation v;
  v.network_source = "assumed: AWS's published 50 Gbit/s of a g4dn.12xlarge, 30 us per message";
  if (!links_file.empty()) {
    const LinksFile links = ReadLinksJsonFile(links_file);
    bool found = false;
    for (const DeviceLink& l : links.links) {
      if (l.connects == "network") {
        network = l;
        found = true;
      }
      if (l.connects == "devices") {
        LinksFile in_node;
        in_node.links.push_back(l);
        ApplyLinks(t4, in_node);
      }
    }
    if (!found) {
      throw UsageError(
          fmt::format("--links {}: no \"network\" link for the 2x4 and 4x4 "
                      "predictions",
                      links_file));
    }
    v.network_source = fmt::format("from {}", links_file);
  }
  v.single_node = CheckPolluxPlacements(data_dir + "/pollux_t4_single_node.csv", t4, network);
  // Pollux's 2-4 node rows over the same link and over one calibrated from
  // the rows on calibration_nodes nodes against the 1-node ones.
  v.multi_node =
      CheckPolluxMultiNode(data_dir + "/pollux_t4_multi_node.csv",
                           data_dir + "/pollux_t4_single_node.csv", t4, network, calibration_nodes);
  return v;
}

FrameworkValidation CheckFrameworkProfiles(const std::string& data_dir,
                                           const std::vector<Device>& devices,
                                           const ProgressCallback& progress) {
  FrameworkValidation v;
  v.data_dir = data_dir;
  for (const Device& d : devices) v.device_files.push_back(d.name);
  v.report =
      FitFrameworkProfiles(PublishedCases(data_dir), CalibrationOptions{}, devices, progress);
  return v;
}

}  // namespace fitspeed
