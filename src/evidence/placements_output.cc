// The writer of the Pollux placements check (fitspeed/evidence/output.h): the
// step model with the all-reduce overlapped (PyTorch DDP buckets) and serial
// against Pollux's 2-4 GPU placements on one T4 node, predictions for 2 and 4
// such nodes, and Pollux's measured 2-4 node rows over an assumed and a
// calibrated network link (fitspeed/evidence/placements.h; docs/validation.md,
// "Pollux placements").
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/evidence/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;
using evidence_output::Number;
using evidence_output::PercentCell;
using evidence_output::SignedPercentCell;

std::string Ms(double s) { return std::isnan(s) ? "-" : FormatSig(s * 1e3, 3); }

}  // namespace

void WritePlacementValidation(std::ostream& out, const PlacementValidation& v,
                              OutputFormat format) {
  const PlacementCheck& check = v.single_node;
  const MultiNodeCheck& multi = v.multi_node;
  const std::string& network_source = v.network_source;
  switch (format) {
    case OutputFormat::kTable: {
      out << fmt::format(
          "Pollux placements: {} on 2-4 {} in one g4dn.12xlarge node (PCIe), per-GPU batch as "
          "measured; step modeled with the all-reduce overlapped (PyTorch DDP: 25 MiB buckets, "
          "the first 1 MiB) and serial (one all-reduce after the backward pass); error = "
          "predicted / measured step - 1\n\n",
          check.source, check.device);
      TextTable cases({"model", "gpus", "batch/gpu", "measured_ms", "overlap_ms", "overlap_%",
                       "serial_ms", "serial_%", "comm_ms", "exposed_ms", "sync_ms"});
      for (const PlacementCase& c : check.cases) {
        cases.AddRow({c.model, std::to_string(c.gpus), std::to_string(c.per_gpu_batch),
                      Ms(c.measured_step_s), Ms(c.overlapped_step_s),
                      SignedPercentCell(c.overlapped_error_pct), Ms(c.serial_step_s),
                      SignedPercentCell(c.serial_error_pct), Ms(c.overlapped_comm_s),
                      Ms(c.overlapped_exposed_s), Ms(c.measured_sync_s)});
      }
      out << cases.Render() << "\n";
      TextTable summary({"model", "cases", "overlap_median_%", "overlap_max_%", "serial_median_%",
                         "serial_max_%", "anchored_overlap_median_%", "anchored_overlap_max_%",
                         "anchored_serial_median_%", "anchored_serial_max_%", "extra_measured_ms",
                         "extra_overlap_ms", "extra_serial_ms"});
      for (const PlacementSummary& s : check.summaries) {
        summary.AddRow(
            {s.model, std::to_string(s.cases), PercentCell(s.overlapped_median_pct),
             PercentCell(s.overlapped_max_pct), PercentCell(s.serial_median_pct),
             PercentCell(s.serial_max_pct), PercentCell(s.anchored_overlapped_median_pct),
             PercentCell(s.anchored_overlapped_max_pct), PercentCell(s.anchored_serial_median_pct),
             PercentCell(s.anchored_serial_max_pct), Ms(s.measured_extra_median_s),
             Ms(s.overlapped_extra_median_s), Ms(s.serial_extra_median_s)});
      }
      out << "absolute errors per model (%); anchored: the one-GPU step measured, the "
             "cost of the other GPUs modeled; extra = step on N GPUs - step on 1 at the "
             "same per-GPU batch (medians):\n"
          << summary.Render() << "\n";
      out << fmt::format(
          "predicted on 2 and 4 nodes of 4 T4 (two-level all-reduce: in-node ring over the "
          "t4's devices link, ring over the nodes over the network link {}, {}):\n",
          check.network_link, network_source);
      TextTable predictions({"model", "nodes x gpus", "batch/gpu", "overlap_ms", "exposed_ms",
                             "comm_ms", "serial_ms"});
      for (const NodePrediction& p : check.predictions) {
        predictions.AddRow({p.model, fmt::format("{}x{}", p.nodes, p.gpus_per_node),
                            std::to_string(p.per_gpu_batch), Ms(p.overlapped_step_s),
                            Ms(p.overlapped_exposed_s), Ms(p.comm_s), Ms(p.serial_step_s)});
      }
      out << predictions.Render() << "\n";
      out << fmt::format(
          "measured on 2, 3 and 4 nodes of 4 T4 ({}), modeled over the network link above "
          "(\"assumed\") and over one calibrated from the {}-node rows (\"calibrated\", the "
          "serial model's step on {} nodes minus that on 1 at each model's smallest per-GPU "
          "batch, marked *; other node counts are out of sample): {}\n",
          multi.source, multi.calibration_nodes, multi.calibration_nodes,
          multi.calibration.BriefReport());
      TextTable multi_cases({"model", "nodes x gpus", "batch/gpu", "measured_ms", "sync_ms",
                             "1x4_measured_ms", "assumed_serial_%", "assumed_overlap_%",
                             "calibrated_serial_ms", "calibrated_serial_%", "calibrated_overlap_ms",
                             "calibrated_overlap_%"});
      for (const MultiNodeCase& c : multi.cases) {
        multi_cases.AddRow(
            {c.model, fmt::format("{}x{}", c.nodes, c.gpus_per_node),
             std::to_string(c.per_gpu_batch) + (c.calibration_run ? "*" : ""),
             Ms(c.measured_step_s), Ms(c.measured_sync_s), Ms(c.measured_one_node_s),
             SignedPercentCell(c.assumed.serial_error_pct),
             SignedPercentCell(c.assumed.overlapped_error_pct), Ms(c.calibrated.serial_step_s),
             SignedPercentCell(c.calibrated.serial_error_pct), Ms(c.calibrated.overlapped_step_s),
             SignedPercentCell(c.calibrated.overlapped_error_pct)});
      }
      out << multi_cases.Render() << "\n";
      TextTable multi_summary({"model", "nodes", "cases", "calibration", "assumed_serial_%",
                               "assumed_overlap_%", "calibrated_serial_%", "calibrated_overlap_%",
                               "anchored_assumed_serial_%", "anchored_assumed_overlap_%",
                               "anchored_calibrated_serial_%", "anchored_calibrated_overlap_%"});
      auto pair = [](double median, double max) {
        return fmt::format("{} / {}", PercentCell(median), PercentCell(max));
      };
      for (const MultiNodeSummary& s : multi.summaries) {
        multi_summary.AddRow(
            {s.model, std::to_string(s.nodes), std::to_string(s.cases),
             s.in_sample ? "in sample" : "out of sample",
             pair(s.assumed.serial_median_pct, s.assumed.serial_max_pct),
             pair(s.assumed.overlapped_median_pct, s.assumed.overlapped_max_pct),
             pair(s.calibrated.serial_median_pct, s.calibrated.serial_max_pct),
             pair(s.calibrated.overlapped_median_pct, s.calibrated.overlapped_max_pct),
             pair(s.assumed.anchored_serial_median_pct, s.assumed.anchored_serial_max_pct),
             pair(s.assumed.anchored_overlapped_median_pct, s.assumed.anchored_overlapped_max_pct),
             pair(s.calibrated.anchored_serial_median_pct, s.calibrated.anchored_serial_max_pct),
             pair(s.calibrated.anchored_overlapped_median_pct,
                  s.calibrated.anchored_overlapped_max_pct)});
      }
      out << "absolute step-time errors per model and node count, median / max (%); "
             "anchored: the measured 1x4 step plus the modeled change from 1x4:\n"
          << multi_summary.Render();
      break;
    }
    case OutputFormat::kCsv: {
      TextTable table({"model", "network", "nodes", "gpus", "per_gpu_batch", "measured_step_s",
                       "measured_sync_s", "overlapped_step_s", "overlapped_comm_s",
                       "overlapped_exposed_s", "serial_step_s", "overlapped_error_pct",
                       "serial_error_pct", "network_link"});
      auto g = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{:.6g}", v); };
      for (const PlacementCase& c : check.cases) {
        table.AddRow({c.model, c.network, "1", std::to_string(c.gpus),
                      std::to_string(c.per_gpu_batch), g(c.measured_step_s), g(c.measured_sync_s),
                      g(c.overlapped_step_s), g(c.overlapped_comm_s), g(c.overlapped_exposed_s),
                      g(c.serial_step_s), g(c.overlapped_error_pct), g(c.serial_error_pct), ""});
      }
      for (const NodePrediction& p : check.predictions) {
        table.AddRow({p.model, p.network, std::to_string(p.nodes),
                      std::to_string(p.nodes * p.gpus_per_node), std::to_string(p.per_gpu_batch),
                      "", "", g(p.overlapped_step_s), g(p.comm_s), g(p.overlapped_exposed_s),
                      g(p.serial_step_s), "", "", "assumed"});
      }
      // Pollux's multi-node rows, once per link (comm and exposed are not kept).
      for (const MultiNodeCase& c : multi.cases) {
        for (const auto& [p, link] :
             {std::pair{&c.assumed, "assumed"}, std::pair{&c.calibrated, "calibrated"}}) {
          table.AddRow({c.model, c.network, std::to_string(c.nodes),
                        std::to_string(c.nodes * c.gpus_per_node), std::to_string(c.per_gpu_batch),
                        g(c.measured_step_s), g(c.measured_sync_s), g(p->overlapped_step_s), "", "",
                        g(p->serial_step_s), g(p->overlapped_error_pct), g(p->serial_error_pct),
                        link});
        }
      }
      out << table.RenderCsv();
      break;
    }
    case OutputFormat::kJson: {
      ordered_json j = {{"schema", "fitspeed.placements/1"},
                        {"source", check.source},
                        {"device", check.device},
                        {"network_link", check.network_link},
                        {"network_link_source", network_source},
                        {"cases", ordered_json::array()},
                        {"summaries", ordered_json::array()},
                        {"predictions", ordered_json::array()}};
      for (const PlacementCase& c : check.cases) {
        j["cases"].push_back(
            {{"model", c.model},
             {"network", c.network},
             {"gpus", c.gpus},
             {"per_gpu_batch", c.per_gpu_batch},
             {"line", c.line},
             {"measured_step_s", c.measured_step_s},
             {"measured_sync_s", c.measured_sync_s},
             {"measured_single_s", Number(c.measured_single_s)},
             {"overlapped_step_s", c.overlapped_step_s},
             {"overlapped_comm_s", c.overlapped_comm_s},
             {"overlapped_exposed_s", c.overlapped_exposed_s},
             {"serial_step_s", c.serial_step_s},
             {"single_step_s", c.single_step_s},
             {"overlapped_error_pct", c.overlapped_error_pct},
             {"serial_error_pct", c.serial_error_pct},
             {"anchored_overlapped_error_pct", Number(c.anchored_overlapped_error_pct)},
             {"anchored_serial_error_pct", Number(c.anchored_serial_error_pct)}});
      }
      for (const PlacementSummary& s : check.summaries) {
        j["summaries"].push_back(
            {{"model", s.model},
             {"cases", s.cases},
             {"overlapped_median_abs_pct", Number(s.overlapped_median_pct)},
             {"overlapped_max_abs_pct", Number(s.overlapped_max_pct)},
             {"serial_median_abs_pct", Number(s.serial_median_pct)},
             {"serial_max_abs_pct", Number(s.serial_max_pct)},
             {"anchored_overlapped_median_abs_pct", Number(s.anchored_overlapped_median_pct)},
             {"anchored_overlapped_max_abs_pct", Number(s.anchored_overlapped_max_pct)},
             {"anchored_serial_median_abs_pct", Number(s.anchored_serial_median_pct)},
             {"anchored_serial_max_abs_pct", Number(s.anchored_serial_max_pct)},
             {"measured_extra_median_s", Number(s.measured_extra_median_s)},
             {"overlapped_extra_median_s", Number(s.overlapped_extra_median_s)},
             {"serial_extra_median_s", Number(s.serial_extra_median_s)}});
      }
      for (const NodePrediction& p : check.predictions) {
        j["predictions"].push_back({{"model", p.model},
                                    {"network", p.network},
                                    {"nodes", p.nodes},
                                    {"gpus_per_node", p.gpus_per_node},
                                    {"per_gpu_batch", p.per_gpu_batch},
                                    {"overlapped_step_s", p.overlapped_step_s},
                                    {"overlapped_exposed_s", p.overlapped_exposed_s},
                                    {"comm_s", p.comm_s},
                                    {"serial_step_s", p.serial_step_s}});
      }
      auto prediction = [](const MultiNodePrediction& p) {
        return ordered_json{
            {"serial_step_s", p.serial_step_s},
            {"overlapped_step_s", p.overlapped_step_s},
            {"serial_error_pct", p.serial_error_pct},
            {"overlapped_error_pct", p.overlapped_error_pct},
            {"anchored_serial_error_pct", Number(p.anchored_serial_error_pct)},
            {"anchored_overlapped_error_pct", Number(p.anchored_overlapped_error_pct)}};
      };
      auto errors = [](const MultiNodeErrors& e) {
        return ordered_json{
            {"serial_median_abs_pct", Number(e.serial_median_pct)},
            {"serial_max_abs_pct", Number(e.serial_max_pct)},
            {"overlapped_median_abs_pct", Number(e.overlapped_median_pct)},
            {"overlapped_max_abs_pct", Number(e.overlapped_max_pct)},
            {"anchored_serial_median_abs_pct", Number(e.anchored_serial_median_pct)},
            {"anchored_serial_max_abs_pct", Number(e.anchored_serial_max_pct)},
            {"anchored_overlapped_median_abs_pct", Number(e.anchored_overlapped_median_pct)},
            {"anchored_overlapped_max_abs_pct", Number(e.anchored_overlapped_max_pct)}};
      };
      const MeasuredLink& cal = multi.calibration.network;
      ordered_json m = {{"source", multi.source},
                        {"single_node_source", multi.single_node_source},
                        {"assumed_link", network_source},
                        {"calibration_nodes", multi.calibration_nodes},
                        {"calibrated_link",
                         {{"bandwidth_bytes_per_s", cal.link.bandwidth_bytes_per_s},
                          {"bandwidth_low", Number(cal.bandwidth_low)},
                          {"bandwidth_high", Number(cal.bandwidth_high)},
                          {"latency_s", cal.link.latency_s},
                          {"latency_low", Number(cal.latency_low)},
                          {"latency_high", Number(cal.latency_high)},
                          {"runs", multi.calibration.fit.points},
                          {"rms_relative_residual", multi.calibration.fit.rms_relative_residual}}},
                        {"cases", ordered_json::array()},
                        {"summaries", ordered_json::array()}};
      for (const MultiNodeCase& c : multi.cases) {
        m["cases"].push_back({{"model", c.model},
                              {"network", c.network},
                              {"nodes", c.nodes},
                              {"gpus_per_node", c.gpus_per_node},
                              {"per_gpu_batch", c.per_gpu_batch},
                              {"line", c.line},
                              {"measured_step_s", c.measured_step_s},
                              {"measured_sync_s", c.measured_sync_s},
                              {"measured_one_node_s", Number(c.measured_one_node_s)},
                              {"one_node_serial_s", c.one_node_serial_s},
                              {"one_node_overlapped_s", c.one_node_overlapped_s},
                              {"calibration_run", c.calibration_run},
                              {"assumed", prediction(c.assumed)},
                              {"calibrated", prediction(c.calibrated)}});
      }
      for (const MultiNodeSummary& s : multi.summaries) {
        m["summaries"].push_back({{"model", s.model},
                                  {"nodes", s.nodes},
                                  {"cases", s.cases},
                                  {"in_sample", s.in_sample},
                                  {"assumed", errors(s.assumed)},
                                  {"calibrated", errors(s.calibrated)}});
      }
      j["multi_node"] = m;
      out << j.dump(2) << "\n";
      break;
    }
  }
}

}  // namespace fitspeed
