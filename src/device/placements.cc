// The step model against Pollux's 2-4 GPU placements (placements.h).
#include "fitspeed/device/placements.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

#include "device/csv_table.h"
#include "fitspeed/core/median.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Pollux's trace names and how validate models them (published_cases.cc,
// AddPolluxCases): FP32, PyTorch's SGD with momentum for the ResNets, AdamW
// (modeled as Adam) for BERT-base fine-tuned on SQuAD at 384 tokens.
struct PolluxModel {
  const char* model;
  const char* network;
  int64_t seq_len;
  Optimizer optimizer;
};
constexpr PolluxModel kModels[] = {
    {"imagenet", "resnet50", 0, Optimizer::kSgdMomentum},
    {"cifar10", "resnet18-cifar", 0, Optimizer::kSgdMomentum},
    {"bert", "bert-base", 384, Optimizer::kAdam},
};

DeviceModelOptions Options(const PolluxModel& m, int gpus, bool overlap) {
  DeviceModelOptions o;
  o.precision = DevicePrecision::kFp32;
  o.optimizer = m.optimizer;
  o.devices = gpus;
  o.overlap = overlap;
  return o;
}

double Pct(double predicted, double measured) { return (predicted / measured - 1) * 100; }

double MedianAbs(const std::vector<double>& values) {
  std::vector<double> abs;
  for (double v : values) abs.push_back(std::fabs(v));
  return abs.empty() ? kNaN : Median(abs);
}

double MaxAbs(const std::vector<double>& values) {
  double max = values.empty() ? kNaN : 0;
  for (double v : values) max = std::max(max, std::fabs(v));
  return max;
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
  s.overlapped_median_pct = MedianAbs(over);
  s.overlapped_max_pct = MaxAbs(over);
  s.serial_median_pct = MedianAbs(serial);
  s.serial_max_pct = MaxAbs(serial);
  s.anchored_overlapped_median_pct = MedianAbs(anchored_over);
  s.anchored_overlapped_max_pct = MaxAbs(anchored_over);
  s.anchored_serial_median_pct = MedianAbs(anchored_serial);
  s.anchored_serial_max_pct = MaxAbs(anchored_serial);
  s.measured_extra_median_s = measured.empty() ? kNaN : Median(measured);
  s.overlapped_extra_median_s = over_extra.empty() ? kNaN : Median(over_extra);
  s.serial_extra_median_s = serial_extra.empty() ? kNaN : Median(serial_extra);
  return s;
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
      single[{t.Get(row, "model"), t.PositiveInt(row, "local_bsz")}] =
          t.Positive(row, "step_time");
    }
  }
  std::map<std::string, Network> networks;
  for (const PolluxModel& m : kModels) {
    networks.emplace(m.model, LoadNetwork(m.network, ZooOptions{m.seq_len}));
  }
  std::map<std::string, std::vector<int64_t>> largest_placement_batches;
  for (const CsvTable::Row& row : t.rows) {
    const std::string model = t.Get(row, "model");
    const PolluxModel* m = nullptr;
    for (const PolluxModel& candidate : kModels) {
      if (model == candidate.model) m = &candidate;
    }
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
    c.measured_single_s = one != single.end() ? one->second : kNaN;
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
    c.overlapped_error_pct = Pct(c.overlapped_step_s, c.measured_step_s);
    c.serial_error_pct = Pct(c.serial_step_s, c.measured_step_s);
    c.anchored_overlapped_error_pct =
        Pct(c.measured_single_s + c.overlapped_step_s - c.single_step_s, c.measured_step_s);
    c.anchored_serial_error_pct =
        Pct(c.measured_single_s + c.serial_step_s - c.single_step_s, c.measured_step_s);
    if (c.gpus == 4) largest_placement_batches[c.model].push_back(c.per_gpu_batch);
    check.cases.push_back(std::move(c));
  }
  for (const PolluxModel& m : kModels) check.summaries.push_back(Summarise(m.model, check.cases));
  check.summaries.push_back(Summarise("all", check.cases));

  if (network) {
    Device nodes = t4;
    LinksFile links;
    DeviceLink link = *network;
    link.connects = "network";
    links.links.push_back(link);
    ApplyLinks(nodes, links);
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

}  // namespace fitspeed
