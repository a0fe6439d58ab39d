// The writer of the per-layer check (fitspeed/evidence/output.h): a BERT-large
// encoder layer modeled per layer against NeuSight's per-node GPU times
// (fitspeed/evidence/layer_check.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/table.h"
#include "evidence/output_util.h"
#include "fitspeed/core/precision.h"
#include "fitspeed/evidence/output.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;
using evidence_output::PercentCell;
using evidence_output::SummaryJson;

std::string Us(double seconds) { return FormatSig(seconds * 1e6, 4); }
// A pass's signed error in percent ("+12.3"), "-" when it was not measured.
std::string PassErrorCell(const PassCheck& p) {
  return p.measured ? fmt::format("{:+.1f}", p.error_pct) : "-";
}

ordered_json PassJson(const PassCheck& p) {
  return {{"measured", p.measured},
          {"measured_s", p.measured_s},
          {"modeled_s", p.modeled_s},
          {"error_pct", p.measured ? ordered_json(p.error_pct) : ordered_json(nullptr)}};
}

ordered_json ItemJson(const LayerCheckItem& item) {
  return {{"name", item.name},
          {"layers", item.layers},
          {"nodes", item.nodes},
          {"forward", PassJson(item.forward)},
          {"backward", PassJson(item.backward)}};
}

void WriteJsonLayerCheck(std::ostream& out, const LayerCheckReport& report) {
  ordered_json groups = ordered_json::array();
  for (const LayerCheckGroup& g : report.groups) {
    ordered_json nodes = ordered_json::array();
    for (const MeasuredNode& n : g.nodes) {
      nodes.push_back({{"node", n.node},
                       {"fx_op", n.fx_op},
                       {"line", n.line},
                       {"layer", n.layer.empty() ? ordered_json(nullptr) : ordered_json(n.layer)},
                       {"note", n.note},
                       {"forward_s", n.forward_s},
                       {"backward_s", n.backward_s},
                       {"backward_measured", n.backward_measured},
                       {"accumulate_grad_s", n.accumulate_s}});
    }
    ordered_json kinds = ordered_json::array(), layers = ordered_json::array();
    for (const LayerCheckItem& k : g.kinds) kinds.push_back(ItemJson(k));
    for (const LayerCheckItem& l : g.layers) layers.push_back(ItemJson(l));
    groups.push_back(
        {{"gpu", g.gpu},
         {"device", g.device},
         {"batch", g.batch},
         {"seq_len", g.seq_len},
         {"kinds", kinds},
         {"encoder_layer", ItemJson(g.encoder_layer)},
         {"forward_kinds", SummaryJson(g.forward_kinds)},
         {"backward_kinds", SummaryJson(g.backward_kinds)},
         {"not_modeled",
          {{"forward_s", g.not_modeled_forward_s}, {"backward_s", g.not_modeled_backward_s}}},
         {"layers", layers},
         {"nodes", nodes}});
  }
  ordered_json matches = ordered_json::array(), skipped = ordered_json::array();
  for (const GpuMatch& m : report.matches) {
    matches.push_back({{"gpu", m.gpu}, {"device", m.device}, {"note", m.note}});
  }
  for (const SkippedGpu& s : report.skipped) {
    skipped.push_back({{"gpu", s.gpu}, {"reason", s.reason}, {"rows", s.rows}});
  }
  const ordered_json j = {{"schema", "fitspeed.validate_layers/1"},
                          {"source", report.source},
                          {"network", report.network},
                          {"precision", PrecisionName(Precision::kFp32)},
                          {"error", "(modeled - measured) / measured time, %"},
                          {"devices", matches},
                          {"skipped", skipped},
                          {"forward_kinds", SummaryJson(report.forward_kinds)},
                          {"backward_kinds", SummaryJson(report.backward_kinds)},
                          {"forward_layer", SummaryJson(report.forward_layer)},
                          {"backward_layer", SummaryJson(report.backward_layer)},
                          {"groups", groups}};
  out << j.dump(2) << "\n";
}

void WriteCsvLayerCheck(std::ostream& out, const LayerCheckReport& report) {
  TextTable table({"device", "gpu", "batch", "seq_len", "level", "name", "layers", "nodes",
                   "fw_measured_us", "fw_modeled_us", "fw_error_pct", "bw_measured_us",
                   "bw_modeled_us", "bw_error_pct"});
  for (const LayerCheckGroup& g : report.groups) {
    auto add = [&table, &g](const char* level, const LayerCheckItem& item) {
      const auto cells = [](const PassCheck& p) -> std::array<std::string, 3> {
        return {FormatSig(p.measured_s * 1e6, 6), FormatSig(p.modeled_s * 1e6, 6),
                p.measured ? FormatSig(p.error_pct, 4) : ""};
      };
      const auto fw = cells(item.forward);
      const auto bw = cells(item.backward);
      table.AddRow({g.device, g.gpu, std::to_string(g.batch), std::to_string(g.seq_len), level,
                    item.name, fmt::format("{}", fmt::join(item.layers, " ")),
                    fmt::format("{}", fmt::join(item.nodes, " ")), fw[0], fw[1], fw[2], bw[0],
                    bw[1], bw[2]});
    };
    for (const LayerCheckItem& k : g.kinds) add("kind", k);
    add("encoder_layer", g.encoder_layer);
    for (const LayerCheckItem& l : g.layers) add("layer", l);
  }
  out << table.RenderCsv();
}

void WriteTableLayerCheck(std::ostream& out, const LayerCheckReport& report) {
  out << fmt::format(
      "Per-layer check: {} (seq {}, fp32) modeled per layer against NeuSight's per-node GPU "
      "times of one HF BertLayer (torch.fx nodes timed one at a time in PyTorch eager; {}). "
      "error = (modeled - measured) / measured time: positive = modeled slower; backward = "
      "backward-data + backward-weights against bw_us; '-': no backward kernel measured "
      "(NeuSight runs no backward for views and copies; a residual add's backward launches no "
      "kernel). Not calibrated on these rows.\n\n",
      report.network, report.groups.empty() ? 0 : report.groups.front().seq_len,
      std::filesystem::path(report.source).filename().string());
  TextTable kinds({"device", "batch", "kind", "nodes", "fw_measured_us", "fw_modeled_us",
                   "fw_error_%", "bw_measured_us", "bw_modeled_us", "bw_error_%"});
  for (const LayerCheckGroup& g : report.groups) {
    auto add = [&kinds, &g](const LayerCheckItem& item) {
      kinds.AddRow({g.device, std::to_string(g.batch), item.name, std::to_string(item.nodes.size()),
                    Us(item.forward.measured_s), Us(item.forward.modeled_s),
                    PassErrorCell(item.forward),
                    item.backward.measured ? Us(item.backward.measured_s) : "-",
                    Us(item.backward.modeled_s), PassErrorCell(item.backward)});
    };
    for (const LayerCheckItem& k : g.kinds) add(k);
    add(g.encoder_layer);
  }
  out << kinds.Render();
  out << "\nAbsolute % error over the kinds, and of the whole encoder layer (its backward "
         "over the kinds with a measured backward); not_modeled: "
         "measured time of the nodes fitspeed does not model (attention-mask add, shape "
         "arithmetic), not in the layer's measured time; all: over every GPU and batch (the "
         "layer columns there: median |error|):\n";
  TextTable summary({"device", "gpu", "batch", "fw_median_%", "fw_max_%", "bw_median_%", "bw_max_%",
                     "layer_fw_error_%", "layer_bw_error_%", "not_modeled_fw_us",
                     "not_modeled_bw_us"});
  for (const LayerCheckGroup& g : report.groups) {
    summary.AddRow({g.device, g.gpu, std::to_string(g.batch),
                    PercentCell(g.forward_kinds.median_abs_error_pct),
                    PercentCell(g.forward_kinds.max_abs_error_pct),
                    PercentCell(g.backward_kinds.median_abs_error_pct),
                    PercentCell(g.backward_kinds.max_abs_error_pct),
                    PassErrorCell(g.encoder_layer.forward), PassErrorCell(g.encoder_layer.backward),
                    Us(g.not_modeled_forward_s), Us(g.not_modeled_backward_s)});
  }
  summary.AddRow({"all", "", "", PercentCell(report.forward_kinds.median_abs_error_pct),
                  PercentCell(report.forward_kinds.max_abs_error_pct),
                  PercentCell(report.backward_kinds.median_abs_error_pct),
                  PercentCell(report.backward_kinds.max_abs_error_pct),
                  PercentCell(report.forward_layer.median_abs_error_pct),
                  PercentCell(report.backward_layer.median_abs_error_pct), "", ""});
  out << summary.Render();
  out << "\nNodes fitspeed does not model (measured; not in the comparison):\n";
  TextTable absent({"device", "batch", "what", "nodes", "fw_measured_us", "bw_measured_us"});
  for (const LayerCheckGroup& g : report.groups) {
    std::vector<std::string> notes;  // in order of first appearance
    for (const MeasuredNode& n : g.nodes) {
      if (n.layer.empty() && std::find(notes.begin(), notes.end(), n.note) == notes.end()) {
        notes.push_back(n.note);
      }
    }
    for (const std::string& note : notes) {
      std::vector<std::string> nodes;
      double forward_s = 0, backward_s = 0;
      for (const MeasuredNode& n : g.nodes) {
        if (!n.layer.empty() || n.note != note) continue;
        nodes.push_back(n.node);
        forward_s += n.forward_s;
        backward_s += n.backward_s;
      }
      absent.AddRow({g.device, std::to_string(g.batch), note,
                     nodes.size() == 1 ? nodes.front() : fmt::format("{} nodes", nodes.size()),
                     Us(forward_s), Us(backward_s)});
    }
  }
  out << absent.Render();
  out << "\nDevices (NeuSight GPU -> catalog device):\n";
  for (const GpuMatch& m : report.matches) {
    out << fmt::format("  {} -> {}: {}\n", m.gpu, m.device, m.note);
  }
  for (const SkippedGpu& s : report.skipped) {
    out << fmt::format("  {}: skipped, {} ({} rows)\n", s.gpu, s.reason, s.rows);
  }
}

}  // namespace

void WriteLayerCheck(std::ostream& out, const LayerCheckReport& report, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    WriteJsonLayerCheck(out, report);
  } else if (format == OutputFormat::kCsv) {
    WriteCsvLayerCheck(out, report);
  } else {
    WriteTableLayerCheck(out, report);
  }
}

}  // namespace fitspeed
