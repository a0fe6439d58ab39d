// The checks `fitspeed validate` runs, each one call that gathers what its
// report shows (docs/validation.md); fitspeed/evidence/output.h writes them.
//
//   fitspeed::CaseValidation v = fitspeed::CheckPublishedCases("data/measured");
//   fitspeed::WriteCaseValidation(std::cout, v, fitspeed::OutputFormat::kTable);
#ifndef FITSPEED_EVIDENCE_CHECKS_H_
#define FITSPEED_EVIDENCE_CHECKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/progress.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/evidence/framework_profiles.h"
#include "fitspeed/evidence/kernels.h"
#include "fitspeed/evidence/placements.h"
#include "fitspeed/evidence/transfer.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {

// ---- The published cases (`validate cases`) ------------------------------------

struct CaseCheckOptions {
  // Validate's options: devices replacing the catalog's, require_fit,
  // cross_validate, cross_device.
  ValidateOptions validate;
  // The transfer check (ValidateTransfer with validate.devices); its errors
  // go into the interval table too.
  bool transfer = true;
  // The host self-check (RunHostCheck with these options; takes seconds).
  std::optional<HostCheckOptions> host;
  // The networks and batches of the mixed-precision check on the t4 (issue 5:
  // vgg16, resnet50, mobilenet-v1 and efficientnet-b0 on a T4 at small batches).
  std::vector<std::string> mixed_networks = {"vgg16", "resnet50", "mobilenet-v1",
                                             "efficientnet-b0"};
  std::vector<int64_t> mixed_batches = {16, 32, 64};
  // Level of the prediction intervals whose coverage is reported, in (0, 1).
  double interval_level = 0.8;
  // Told each stage's progress: Validate's (and validate.progress, when that
  // is empty, gets this one), then "mixed precision", "host check",
  // "transfer check" and "framework profiles"; may be empty.
  ProgressCallback progress;
};

struct CaseValidation {
  std::string data_dir;
  ValidationReport report;
  std::vector<MixedRatio> mixed;  // on the t4 of validate.devices, else the catalog's
  std::optional<HostCheck> host;
  std::optional<TransferValidation> transfer;  // unless CaseCheckOptions::transfer is false
  // The out-of-sample errors per class (data/intervals.json is the build's
  // copy): the catalog's, the transferred predictions' (with the transfer
  // check) and the framework profiles' on held-out GPUs.
  IntervalTable intervals;
  double interval_level = 0.8;
};

// Validates the cases of `data_dir` (PublishedCases) and runs the checks
// `options` asks for. Throws as PublishedCases, Validate and the checks do.
CaseValidation CheckPublishedCases(const std::string& data_dir,
                                   const CaseCheckOptions& options = {});

// ---- Kernel fits (`validate kernels`) ------------------------------------------

struct KernelValidation {
  std::string kernel_dir;
  KernelFitReport fits;  // FitKernelTables(kernel_dir, shape_term)
  // The catalog on the kernel tables it was not fitted to (NeuSight, autoheuristic).
  std::vector<KernelCheck> catalog_checks;
  // The catalog's links on DeepBench's all-reduce timings.
  std::vector<AllReduceCheck> allreduce_checks;
};

// The catalog devices (not the host) the fits serve, with the fitted or
// carried curves and memory plateaus applied (ApplyKernelCurves,
// ApplyMemoryPlateaus): the data/devices files they regenerate.
std::vector<Device> KernelCatalogDevices(const KernelFitReport& fits);

// Checks the catalog on the second sources of `kernel_dir` and its links on
// the all-reduces. With `shape_term` (the fits carry the GEMM shape term) the
// curves differ from the catalog's, so the catalog devices are checked with
// these fits applied.
KernelValidation CheckKernelFits(KernelFitReport fits, const std::string& kernel_dir,
                                 bool shape_term);

// ---- Pollux placements (`validate placements`) ---------------------------------

struct PlacementValidation {
  PlacementCheck single_node;  // CheckPolluxPlacements
  MultiNodeCheck multi_node;   // CheckPolluxMultiNode
  std::string network_source;  // where the network link between nodes came from
};

// AWS's published network bandwidth of a g4dn.12xlarge, "50 Gigabit"
// (aws.amazon.com/ec2/instance-types/g4/): 6.25e9 B/s per direction. An
// assumption: a datasheet figure, not what NCCL gets over it, and the
// latency per message (30 us for NCCL over TCP sockets) is a guess; a
// measured links file (from `fitspeed linkbench --from`) replaces both.
DeviceLink AssumedG4dnNetwork();

// Runs both Pollux checks of `data_dir` (pollux_t4_single_node.csv,
// pollux_t4_multi_node.csv) with the t4 of `devices`, else the catalog's. The network link between
// nodes comes from `links_file` (its "network" link; its "devices" link, if any, replaces the t4's)
// when not empty, else AssumedG4dnNetwork(); the multi-node rows are also modeled over a link
// calibrated from the rows on `calibration_nodes` nodes. Throws UsageError when the links file has
// no "network" link.
PlacementValidation CheckPlacements(const std::string& data_dir, const std::vector<Device>& devices,
                                    const std::string& links_file, int calibration_nodes);

// ---- Framework profiles (`validate frameworks`) --------------------------------

struct FrameworkValidation {
  std::string data_dir;
  std::vector<std::string> device_files;  // names of the devices given instead of the catalog's
  FrameworkProfileReport report;
};

// FitFrameworkProfiles on the cases of `data_dir` with `devices` replacing the
// catalog devices of their names.
FrameworkValidation CheckFrameworkProfiles(const std::string& data_dir,
                                           const std::vector<Device>& devices,
                                           const ProgressCallback& progress = {});

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_CHECKS_H_
