// The step model against Pollux's 2-4 GPU placements (placements.h).
#include "fitspeed/evidence/placements.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "core/median.h"
#include "evidence/csv_table.h"
#include "fitspeed/core/comm.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/evidence/validate.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {

namespace {

constexpr double kNaNPlacements = std::numeric_limits<double>::quiet_NaN();

// Pollux's trace names and how validate models them (published_cases.cc,
// AddPolluxCases): ImageNet's ResNet-50 in mixed precision (apex AMP O1,
// NCHW), the others FP32; PyTorch's SGD with momentum for the ResNets, AdamW
// (modeled as Adam) for BERT-base fine-tuned on SQuAD at 384 tokens.
struct PolluxModel {
  const char* model;
  const char* network;
  int64_t seq_len;
  Optimizer optimizer;
  Precision precision;
};
constexpr PolluxModel kModels[] = {
    {"imagenet", "resnet50", 0, Optimizer::kSgdMomentum, Precision::kMixed},
    {"cifar10", "resnet18-cifar", 0, Optimizer::kSgdMomentum, Precision::kFp32},
    {"bert", "bert-base", 384, Optimizer::kAdam, Precision::kFp32},
};

DeviceModelOptions Options(const PolluxModel& m, int gpus, bool overlap) {
  DeviceModelOptions o;
  o.precision = m.precision;
  o.optimizer = m.optimizer;
  o.devices = gpus;
  o.overlap = overlap;
  return o;
}

// The error of a prediction in percent, (predicted / measured - 1) * 100:
// PercentError (validate.h) rounded another way, kept so that the placements'
// JSON prints the same digits.
double PercentErrorFromRatio(double predicted, double measured) {
  return (predicted / measured - 1) * 100;
}

// The median and maximum |error| (SummarizeErrorsPct); NaN for both without errors.
std::pair<double, double> MedianMaxAbs(const std::vector<double>& errors_pct) {
  const ErrorSummary s = SummarizeErrorsPct(errors_pct);
  return {s.median_abs_error_pct, s.max_abs_error_pct};
}

PlacementSummary Summarise(const std::string& model, const std::vector<PlacementCase>& cases) {
  PlacementSummary s;
  s.model = model;
  std::vector<double> over, serial, measured, over_extra, serial_extra, anchored_over,
      anchored_serial;
  for (const PlacementCase& c : cases) {
    if (model != "all" && c.model != model) continue;
    ++s.cases;
    over.push_back(c.overlapped_error_pct);
    serial.push_back(c.serial_error_pct);
    if (!std::isnan(c.measured_single_s)) {
      measured.push_back(c.measured_step_s - c.measured_single_s);
      over_extra.push_back(c.overlapped_step_s - c.single_step_s);
      serial_extra.push_back(c.serial_step_s - c.single_step_s);
      anchored_over.push_back(c.anchored_overlapped_error_pct);
      anchored_serial.push_back(c.anchored_serial_error_pct);
    }
  }
  std::tie(s.overlapped_median_pct, s.overlapped_max_pct) = MedianMaxAbs(over);
  std::tie(s.serial_median_pct, s.serial_max_pct) = MedianMaxAbs(serial);
  std::tie(s.anchored_overlapped_median_pct, s.anchored_overlapped_max_pct) =
      MedianMaxAbs(anchored_over);
  std::tie(s.anchored_serial_median_pct, s.anchored_serial_max_pct) = MedianMaxAbs(anchored_serial);
  s.measured_extra_median_s = measured.empty() ? kNaNPlacements : Median(measured);
  s.overlapped_extra_median_s = over_extra.empty() ? kNaNPlacements : Median(over_extra);
  s.serial_extra_median_s = serial_extra.empty() ? kNaNPlacements : Median(serial_extra);
  return s;
}

const PolluxModel* FindModel(const std::string& model) {
  for (const PolluxModel& m : kModels) {
    if (model == m.model) return &m;
  }
  return nullptr;
}

// The t4 with `link` as its network link between nodes.
Device WithNetwork(const Device& t4, DeviceLink link) {
  Device nodes = t4;
  LinksFile links;
  link.connects = "network";
  links.links.push_back(link);
  ApplyLinks(nodes, links);
  return nodes;
}

// One link's serial and overlapped step of `c`, with the errors.
MultiNodePrediction PredictNodes(const PolluxModel& m, const Network& net, const Device& nodes,
                                 const MultiNodeCase& c) {
  DeviceModelOptions o = Options(m, c.nodes * c.gpus_per_node, false);
  o.devices_per_node = c.gpus_per_node;
  const int64_t batch = c.per_gpu_batch * c.nodes * c.gpus_per_node;
  MultiNodePrediction p;
  p.serial_step_s = ModelStep(net, nodes, batch, o).step_time_s;
  o.overlap = true;
  p.overlapped_step_s = ModelStep(net, nodes, batch, o).step_time_s;
  p.serial_error_pct = PercentErrorFromRatio(p.serial_step_s, c.measured_step_s);
  p.overlapped_error_pct = PercentErrorFromRatio(p.overlapped_step_s, c.measured_step_s);
  p.anchored_serial_error_pct = PercentErrorFromRatio(
      c.measured_one_node_s + p.serial_step_s - c.one_node_serial_s, c.measured_step_s);
  p.anchored_overlapped_error_pct = PercentErrorFromRatio(
      c.measured_one_node_s + p.overlapped_step_s - c.one_node_overlapped_s, c.measured_step_s);
  return p;
}

MultiNodeErrors Errors(const std::vector<const MultiNodePrediction*>& predictions) {
  std::vector<double> serial, over, anchored_serial, anchored_over;
  for (const MultiNodePrediction* p : predictions) {
    serial.push_back(p->serial_error_pct);
    over.push_back(p->overlapped_error_pct);
    if (!std::isnan(p->anchored_serial_error_pct)) {
      anchored_serial.push_back(p->anchored_serial_error_pct);
      anchored_over.push_back(p->anchored_overlapped_error_pct);
    }
  }
  MultiNodeErrors e;
  std::tie(e.serial_median_pct, e.serial_max_pct) = MedianMaxAbs(serial);
  std::tie(e.overlapped_median_pct, e.overlapped_max_pct) = MedianMaxAbs(over);
  std::tie(e.anchored_serial_median_pct, e.anchored_serial_max_pct) = MedianMaxAbs(anchored_serial);
  std::tie(e.anchored_overlapped_median_pct, e.anchored_overlapped_max_pct) =
      MedianMaxAbs(anchored_over);
  return e;
}

}  // namespace

PlacementCheck CheckPolluxPlacements(const std::string& csv_path, const Device& t4,
                                     const std::optional<DeviceLink>& network) {
  const CsvTable t =
      ReadCsvTable(csv_path, {"model", "placement", "local_bsz", "step_time", "sync_time"});
  PlacementCheck check;
  check.source = csv_path;
  check.device = t4.name;
  // Placement 1's step at each (model, batch), for the cost of more GPUs.
  std::map<std::pair<std::string, int64_t>, double> single;
  for (const CsvTable::Row& row : t.rows) {
    if (t.PositiveInt(row, "placement") == 1) {
      single[{t.Get(row, "model"), t.PositiveInt(row, "local_bsz")}] = t.Positive(row, "step_time");
    }
  }
  std::map<std::string, Network> networks;
  for (const PolluxModel& m : kModels) {
    networks.emplace(m.model, LoadNetwork(m.network, ZooOptions{m.seq_len}));
  }
  std::map<std::string, std::vector<int64_t>> largest_placement_batches;
  for (const CsvTable::Row& row : t.rows) {
    const std::string model = t.Get(row, "model");
    const PolluxModel* m = FindModel(model);
    const int64_t gpus = t.PositiveInt(row, "placement");
    if (m == nullptr || gpus < 2) continue;
    PlacementCase c;
    c.model = m->model;
    c.network = m->network;
    c.gpus = static_cast<int>(gpus);
    c.per_gpu_batch = t.PositiveInt(row, "local_bsz");
    c.line = row.line;
    c.measured_step_s = t.Positive(row, "step_time");
    c.measured_sync_s = t.NonNegative(row, "sync_time");
    const auto one = single.find({c.model, c.per_gpu_batch});
    c.measured_single_s = one != single.end() ? one->second : kNaNPlacements;
    const Network& net = networks.at(c.model);
    const int64_t batch = c.per_gpu_batch * c.gpus;
    const ModeledStep over = ModelStep(net, t4, batch, Options(*m, c.gpus, true));
    const ModeledStep serial = ModelStep(net, t4, batch, Options(*m, c.gpus, false));
    c.overlapped_step_s = over.step_time_s;
    c.overlapped_comm_s = over.comm_s;
    c.overlapped_exposed_s = over.exposed_comm_s;
    c.serial_step_s = serial.step_time_s;
    c.serial_comm_s = serial.comm_s;
    c.single_step_s = ModelStep(net, t4, c.per_gpu_batch, Options(*m, 1, true)).step_time_s;
    c.overlapped_error_pct = PercentErrorFromRatio(c.overlapped_step_s, c.measured_step_s);
    c.serial_error_pct = PercentErrorFromRatio(c.serial_step_s, c.measured_step_s);
    c.anchored_overlapped_error_pct = PercentErrorFromRatio(
        c.measured_single_s + c.overlapped_step_s - c.single_step_s, c.measured_step_s);
    c.anchored_serial_error_pct = PercentErrorFromRatio(
        c.measured_single_s + c.serial_step_s - c.single_step_s, c.measured_step_s);
    if (c.gpus == 4) largest_placement_batches[c.model].push_back(c.per_gpu_batch);
    check.cases.push_back(std::move(c));
  }
  for (const PolluxModel& m : kModels) check.summaries.push_back(Summarise(m.model, check.cases));
  check.summaries.push_back(Summarise("all", check.cases));

  if (network) {
    DeviceLink link = *network;
    link.connects = "network";
    const Device nodes = WithNetwork(t4, link);
    check.network_link = fmt::format("'{}', {:.4g} B/s per direction, {:.4g} s per message",
                                     link.name, link.bandwidth_bytes_per_s, link.latency_s);
    for (const PolluxModel& m : kModels) {
      for (int count : {2, 4}) {
        for (int64_t b : largest_placement_batches[m.model]) {
          DeviceModelOptions o = Options(m, 4 * count, true);
          o.devices_per_node = 4;
          const ModeledStep over = ModelStep(networks.at(m.model), nodes, b * 4 * count, o);
          o.overlap = false;
          const ModeledStep serial = ModelStep(networks.at(m.model), nodes, b * 4 * count, o);
          NodePrediction p;
          p.model = m.model;
          p.network = m.network;
          p.nodes = count;
          p.gpus_per_node = 4;
          p.per_gpu_batch = b;
          p.overlapped_step_s = over.step_time_s;
          p.overlapped_exposed_s = over.exposed_comm_s;
          p.comm_s = over.comm_s;
          p.serial_step_s = serial.step_time_s;
          check.predictions.push_back(p);
        }
      }
    }
  }
  return check;
}

MultiNodeCheck CheckPolluxMultiNode(const std::string& csv_path,
                                    const std::string& single_node_csv_path, const Device& t4,
                                    const DeviceLink& assumed_network, int calibration_nodes) {
  const std::vector<std::string> columns = {"model", "placement", "local_bsz", "step_time",
                                            "sync_time"};
  const CsvTable t = ReadCsvTable(csv_path, columns);
  const CsvTable single = ReadCsvTable(single_node_csv_path, columns);
  MultiNodeCheck check;
  check.source = csv_path;
  check.single_node_source = single_node_csv_path;
  check.device = t4.name;
  check.assumed_link = assumed_network;
  check.calibration_nodes = calibration_nodes;
  // The one-node step at each (model, GPUs, batch).
  std::map<std::tuple<std::string, int64_t, int64_t>, double> one_node;
  for (const CsvTable::Row& row : single.rows) {
    one_node[{single.Get(row, "model"), single.PositiveInt(row, "placement"),
              single.PositiveInt(row, "local_bsz")}] = single.Positive(row, "step_time");
  }
  std::map<std::string, Network> networks;
  std::map<std::string, double> gradient_bytes;
  for (const PolluxModel& m : kModels) {
    const Network& net =
        networks.emplace(m.model, LoadNetwork(m.network, ZooOptions{m.seq_len})).first->second;
    // As ModelStep all-reduces it: FP32, 4 B per trainable parameter.
    gradient_bytes[m.model] =
        GradientBytes(static_cast<double>(CountCost(net, m.optimizer).total.trainable_params), 4);
  }
  for (const CsvTable::Row& row : t.rows) {
    const PolluxModel* m = FindModel(t.Get(row, "model"));
    if (m == nullptr) continue;
    const std::string& placement = t.Get(row, "placement");
    if (placement.size() < 2 || placement.find_first_not_of(placement[0]) != std::string::npos ||
        placement[0] < '1' || placement[0] > '9') {
      throw DataError(
          csv_path, row.line, "placement",
          fmt::format("'{}' is not 2 or more nodes of the same GPU count (\"44\")", placement));
    }
    MultiNodeCase c;
    c.model = m->model;
    c.network = m->network;
    c.nodes = static_cast<int>(placement.size());
    c.gpus_per_node = placement[0] - '0';
    c.per_gpu_batch = t.PositiveInt(row, "local_bsz");
    c.line = row.line;
    c.measured_step_s = t.Positive(row, "step_time");
    c.measured_sync_s = t.NonNegative(row, "sync_time");
    const auto one = one_node.find({c.model, c.gpus_per_node, c.per_gpu_batch});
    c.measured_one_node_s = one != one_node.end() ? one->second : kNaNPlacements;
    c.calibration = c.nodes == calibration_nodes;
    const Network& net = networks.at(c.model);
    DeviceModelOptions o = Options(*m, c.gpus_per_node, false);
    c.one_node_serial_s = ModelStep(net, t4, c.per_gpu_batch * c.gpus_per_node, o).step_time_s;
    o.overlap = true;
    c.one_node_overlapped_s = ModelStep(net, t4, c.per_gpu_batch * c.gpus_per_node, o).step_time_s;
    check.cases.push_back(std::move(c));
  }

  // The calibration runs: each model's smallest per-GPU batch on
  // calibration_nodes nodes with a measured one-node step.
  std::map<std::string, size_t> smallest;
  for (size_t i = 0; i < check.cases.size(); ++i) {
    const MultiNodeCase& c = check.cases[i];
    if (!c.calibration || std::isnan(c.measured_one_node_s)) continue;
    const auto it = smallest.find(c.model);
    if (it == smallest.end() || c.per_gpu_batch < check.cases[it->second].per_gpu_batch) {
      smallest[c.model] = i;
    }
  }
  std::vector<NodeCountRun> runs;
  for (const auto& [model, i] : smallest) {
    MultiNodeCase& c = check.cases[i];
    c.calibration_run = true;
    runs.push_back({gradient_bytes.at(model), c.measured_one_node_s, c.measured_step_s});
  }
  check.calibration = NetworkLinkFromNodeCounts(runs, 1, calibration_nodes);
  check.calibrated_link.name = fmt::format("calibrated from {}x{} vs 1x{} runs", calibration_nodes,
                                           check.cases.empty() ? 0 : check.cases[0].gpus_per_node,
                                           check.cases.empty() ? 0 : check.cases[0].gpus_per_node);
  check.calibrated_link.connects = "network";
  static_cast<Link&>(check.calibrated_link) = check.calibration.network.link;

  const Device assumed = WithNetwork(t4, assumed_network);
  const Device calibrated = WithNetwork(t4, check.calibrated_link);
  for (MultiNodeCase& c : check.cases) {
    const PolluxModel& m = *FindModel(c.model);
    c.assumed = PredictNodes(m, networks.at(c.model), assumed, c);
    c.calibrated = PredictNodes(m, networks.at(c.model), calibrated, c);
  }

  std::vector<int> node_counts;
  for (const MultiNodeCase& c : check.cases) {
    if (std::find(node_counts.begin(), node_counts.end(), c.nodes) == node_counts.end()) {
      node_counts.push_back(c.nodes);
    }
  }
  std::sort(node_counts.begin(), node_counts.end());
  std::vector<std::string> models;
  for (const PolluxModel& m : kModels) models.push_back(m.model);
  models.push_back("all");
  for (const std::string& model : models) {
    for (int nodes : node_counts) {
      MultiNodeSummary s;
      s.model = model;
      s.nodes = nodes;
      s.in_sample = nodes == calibration_nodes;
      std::vector<const MultiNodePrediction*> assumed_p, calibrated_p;
      for (const MultiNodeCase& c : check.cases) {
        if (c.nodes != nodes || (model != "all" && c.model != model)) continue;
        ++s.cases;
        assumed_p.push_back(&c.assumed);
        calibrated_p.push_back(&c.calibrated);
      }
      if (s.cases == 0) continue;
      s.assumed = Errors(assumed_p);
      s.calibrated = Errors(calibrated_p);
      check.summaries.push_back(s);
    }
  }
  return check;
}

}  // namespace fitspeed
