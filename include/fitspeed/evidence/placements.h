// The data-parallel step model against Pollux's multi-GPU placements: the
// Pollux (OSDI'21) artifact's traces of 1 to 4 NVIDIA T4 in one AWS
// g4dn.12xlarge node (PCIe, no NVLink; data/measured/pollux_t4_single_node.csv)
// give the measured step time of ResNet-50/ImageNet, ResNet-18/CIFAR-10 and
// BERT-base/SQuAD at each per-GPU batch on 2, 3 and 4 GPUs. Each is modeled
// (ModelStep on the catalog t4 at the same per-GPU batch) with the
// all-reduce overlapped as PyTorch DDP does it and serial, and the errors
// are summarised per model (docs/validation.md, "Pollux placements").
// `fitspeed validate --placements` prints it; it also predicts the same
// batches on 2 and 4 such nodes (2x4, 4x4) over a given network link, and
// checks the multi-node model against Pollux's measured 2-4 node rows
// (CheckPolluxMultiNode below).
//
//   fitspeed::PlacementCheck check = fitspeed::CheckPolluxPlacements(
//       "data/measured/pollux_t4_single_node.csv", fitspeed::LoadDevice("t4"));
#ifndef FITSPEED_EVIDENCE_PLACEMENTS_H_
#define FITSPEED_EVIDENCE_PLACEMENTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/device/device.h"
#include "fitspeed/project/link_logs.h"

namespace fitspeed {

// One measured placement and its two predictions.
struct PlacementCase {
  std::string model;    // Pollux's trace name: imagenet, cifar10, bert
  std::string network;  // the zoo network: resnet50, resnet18-cifar, bert-base
  int gpus = 1;         // placement: GPUs in the node
  int64_t per_gpu_batch = 0;
  int line = 0;  // of the CSV file
  double measured_step_s = 0;
  double measured_sync_s = 0;  // Pollux's sync_time
  // The same per-GPU batch at placement 1, measured (NaN when the trace
  // lacks it): measured_step_s - measured_single_s is what the other GPUs cost.
  double measured_single_s = 0;
  // Modeled: the step, the all-reduce (all of it) and its exposed part.
  double overlapped_step_s = 0, overlapped_comm_s = 0, overlapped_exposed_s = 0;
  double serial_step_s = 0, serial_comm_s = 0;
  double single_step_s = 0;  // modeled at placement 1
  // (predicted / measured - 1) x 100 of the step time.
  double overlapped_error_pct = 0, serial_error_pct = 0;
  // The same with the one-GPU step measured instead of modeled, so that only
  // the cost of the other GPUs is modeled: predicted = measured_single_s +
  // (modeled step on N GPUs - modeled step on 1). NaN without measured_single_s.
  double anchored_overlapped_error_pct = 0, anchored_serial_error_pct = 0;
};

// Median and maximum |error| of one model's cases, for each mode.
struct PlacementSummary {
  std::string model;
  int cases = 0;
  double overlapped_median_pct = 0, overlapped_max_pct = 0;
  double serial_median_pct = 0, serial_max_pct = 0;
  // Of the anchored errors (PlacementCase::anchored_*), over the cases that have them.
  double anchored_overlapped_median_pct = 0, anchored_overlapped_max_pct = 0;
  double anchored_serial_median_pct = 0, anchored_serial_max_pct = 0;
  // The cost of the other GPUs, measured (step_N - step_1 at the same batch)
  // against modeled (exposed communication), medians over the cases, seconds.
  double measured_extra_median_s = 0;
  double overlapped_extra_median_s = 0;
  double serial_extra_median_s = 0;
};

// A prediction over several nodes (no measurement to compare).
struct NodePrediction {
  std::string model, network;
  int nodes = 0, gpus_per_node = 0;
  int64_t per_gpu_batch = 0;
  double overlapped_step_s = 0, overlapped_exposed_s = 0;
  double serial_step_s = 0;
  double comm_s = 0;  // the bucketed all-reduces, all of them
};

struct PlacementCheck {
  std::string source;                       // the CSV file
  std::string device;                       // Device::name
  std::vector<PlacementCase> cases;         // placements 2-4 of the three models
  std::vector<PlacementSummary> summaries;  // per model, then "all"
  std::vector<NodePrediction> predictions;  // 2x4 and 4x4, when a network link is given
  std::string network_link;                 // how the network link was given ("" without)
};

// Reads Pollux's placements from `csv_path` and models them on `t4` (its
// "devices" link for the in-node ring). With `network` (a link between
// nodes), also predicts 2 and 4 nodes of 4 GPUs at the per-GPU batches of
// placement 4 (two-level all-reduce). Throws InputError / DataError for the
// file, UsageError as ModelStep does.
PlacementCheck CheckPolluxPlacements(const std::string& csv_path, const Device& t4,
                                     const std::optional<DeviceLink>& network = std::nullopt);

// Pollux's multi-node rows (data/measured/pollux_t4_multi_node.csv: 2, 3 and 4
// g4dn.12xlarge nodes of 4 T4, placements "44", "444", "4444") modeled on the
// catalog t4 with devices_per_node 4 (two-level all-reduce: the in-node ring
// over the t4's devices link, a ring over the nodes over the network link),
// serial and overlapped, over two network links: an assumed one (a datasheet
// figure) and one calibrated from the runs on `calibration_nodes` nodes
// against the 1x4 runs (NetworkLinkFromNodeCounts, fitspeed/project/link_logs.h,
// at each model's smallest per-GPU batch, where Pollux's sync_time shows the
// all-reduce exposed). Rows on other node counts are out of sample for it.
//
//   fitspeed::MultiNodeCheck m = fitspeed::CheckPolluxMultiNode(
//       "data/measured/pollux_t4_multi_node.csv",
//       "data/measured/pollux_t4_single_node.csv", fitspeed::LoadDevice("t4"), assumed);

// One network link's predictions of a multi-node row.
struct MultiNodePrediction {
  double serial_step_s = 0, overlapped_step_s = 0;
  // (predicted / measured - 1) x 100 of the step time.
  double serial_error_pct = 0, overlapped_error_pct = 0;
  // Anchored: the measured 1x4 step at the same per-GPU batch plus the
  // modeled change from 1x4 to this placement (NaN without the 1x4 row).
  double anchored_serial_error_pct = 0, anchored_overlapped_error_pct = 0;
};

struct MultiNodeCase {
  std::string model, network;  // Pollux's trace name, the zoo network
  int nodes = 0, gpus_per_node = 0;
  int64_t per_gpu_batch = 0;
  int line = 0;  // of the multi-node CSV file
  double measured_step_s = 0, measured_sync_s = 0;
  double measured_one_node_s = 0;  // placement 4 at the same batch (NaN when missing)
  double one_node_serial_s = 0, one_node_overlapped_s = 0;  // modeled 1x4
  bool calibration = false;      // on calibration_nodes nodes (in sample for the calibrated link)
  bool calibration_run = false;  // one of the runs the link was fitted to
  MultiNodePrediction assumed, calibrated;
};

// Median and max |error| of one link's predictions over a set of cases.
struct MultiNodeErrors {
  double serial_median_pct = 0, serial_max_pct = 0;
  double overlapped_median_pct = 0, overlapped_max_pct = 0;
  double anchored_serial_median_pct = 0, anchored_serial_max_pct = 0;
  double anchored_overlapped_median_pct = 0, anchored_overlapped_max_pct = 0;
};

struct MultiNodeSummary {
  std::string model;  // a trace name or "all"
  int nodes = 0;
  int cases = 0;
  bool in_sample = false;  // nodes == calibration_nodes
  MultiNodeErrors assumed, calibrated;
};

struct MultiNodeCheck {
  std::string source, single_node_source, device;
  DeviceLink assumed_link;     // as given
  DeviceLink calibrated_link;  // from calibration.network
  NodeCountLinkFit calibration;
  int calibration_nodes = 0;
  std::vector<MultiNodeCase> cases;         // file order
  std::vector<MultiNodeSummary> summaries;  // per model and node count, then "all" per node count
};

// Reads the multi-node rows of `csv_path` (columns model, placement,
// local_bsz, step_time, sync_time; placements of equal digits >= 2 nodes) and
// the 1x4 rows of `single_node_csv_path`, calibrates the network link from
// the runs on `calibration_nodes` nodes and models every row over both
// links. Throws InputError / DataError for the files (DataError for a
// placement whose nodes hold different GPU counts), DataError when the
// calibration has no runs or they do not expose the all-reduce
// (NetworkLinkFromNodeCounts), UsageError as ModelStep does.
MultiNodeCheck CheckPolluxMultiNode(const std::string& csv_path,
                                    const std::string& single_node_csv_path, const Device& t4,
                                    const DeviceLink& assumed_network, int calibration_nodes = 2);

}  // namespace fitspeed

#endif  // FITSPEED_EVIDENCE_PLACEMENTS_H_
