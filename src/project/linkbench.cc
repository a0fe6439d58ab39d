// linkbench's fits, the link they calibrate and their writers (linkbench.h).
#include "fitspeed/project/linkbench.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/table.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

std::string Interval(double low, double high, double scale, int digits = 3) {
  return fmt::format("[{}, {}]", FormatSig(low * scale, digits), FormatSig(high * scale, digits));
}

ordered_json FitJson(const AlphaBetaFit& f) {
  return ordered_json{{"alpha_s", f.alpha_s},
                      {"alpha_ci", {f.alpha_ci_low, f.alpha_ci_high}},
                      {"beta_s_per_byte", f.beta_s_per_byte},
                      {"beta_ci", {f.beta_ci_low, f.beta_ci_high}},
                      {"confidence", f.confidence},
                      {"points", f.points},
                      {"rms_relative_residual", f.rms_relative_residual},
                      {"max_relative_residual", f.max_relative_residual}};
}

// The table's closing lines: where the links file went, or the file itself.
void WriteLinksFileNote(std::ostream& out, const std::string& links_json,
                        const std::string& links_out) {
  if (!links_out.empty()) {
    out << fmt::format("links file written: {} (give it to sweep, project or plan with --links)\n",
                       links_out);
  } else {
    out << "\nlinks file (--links-out FILE writes it):\n" << links_json;
  }
}

}  // namespace

bool LinkbenchRun::has_one_way() const {
  return !points.empty() && !std::isnan(points.front().one_way_s);
}

bool LinkbenchResult::converged() const {
  return allreduce.converged && (!one_way || one_way->converged);
}

DerivedLink DeriveLink(const LinkbenchRun& run, const AlphaBetaFit& allreduce) {
  DerivedLink d;
  if (!run.two_level || run.nodes <= 1) {
    d.measured = RingLinkFromAllReduce(allreduce, run.ranks);
    d.connects = run.nodes > 1 ? "network" : "devices";
    d.how = fmt::format(
        "the ring-equivalent link (RingAllReduceTime reproduces the fit at {} "
        "ranks)",
        run.ranks);
    return d;
  }
  const int per_node = run.ranks / run.nodes;
  Link intra{std::numeric_limits<double>::infinity(), 0};
  if (run.in_node) intra = *run.in_node;
  d.measured = InterNodeLinkFromAllReduce(allreduce, per_node, run.nodes, intra);
  d.connects = "network";
  d.how = run.in_node ? fmt::format(
                            "the network link of a two-level all-reduce over {} nodes of {} "
                            "ranks (HierarchicalAllReduceTime reproduces the fit with the "
                            "in-node ring over '{}' from {}: {:.4g} B/s, {:.4g} s)",
                            run.nodes, per_node, run.in_node_name, run.in_node_source,
                            intra.bandwidth_bytes_per_s, intra.latency_s)
                      : fmt::format(
                            "the network link of a flat ring over the {} nodes: it carries the "
                            "whole measured time ({} ranks per node, no in-node link given with "
                            "--links, so the in-node ring counts as free here and the modeled "
                            "two-level all-reduce adds it again: an upper bound)",
                            run.nodes, per_node);
  return d;
}

LinkSources MeasuredLinkSources(const MeasuredLink& link, const std::string& how,
                                const std::string& latency_per, double confidence) {
  const double level = confidence * 100;
  return {fmt::format("{}: {:.4g} B/s, {:.0f}% interval {}", how, link.link.bandwidth_bytes_per_s,
                      level, Interval(link.bandwidth_low, link.bandwidth_high, 1, 4)),
          fmt::format("{}: {:.4g} s per {}, {:.0f}% interval {}", how, link.link.latency_s,
                      latency_per, level, Interval(link.latency_low, link.latency_high, 1, 4))};
}

LinkbenchResult FitLinkbench(LinkbenchRun run, const LinkbenchFitOptions& options) {
  std::vector<LinkTiming> allreduce, one_way;
  const bool two = run.has_one_way();
  for (const LinkbenchPoint& p : run.points) {
    if (p.bytes < options.min_bytes || p.bytes > options.max_bytes) continue;
    allreduce.push_back({p.bytes, p.allreduce_s});
    if (two) one_way.push_back({p.bytes, p.one_way_s});
  }
  if (allreduce.size() < 3) {
    throw UsageError(
        fmt::format("--fit-min-bytes {} .. --fit-max-bytes {} leaves {} size(s); the fit needs 3",
                    options.min_bytes, options.max_bytes, allreduce.size()));
  }
  LinkbenchResult r;
  r.confidence = options.confidence;
  r.fitted_sizes = static_cast<int>(allreduce.size());
  r.fitted_min_bytes = allreduce.front().bytes;
  r.fitted_max_bytes = allreduce.back().bytes;
  r.allreduce = FitAlphaBeta(allreduce, options.confidence);
  if (two) r.one_way = FitAlphaBeta(one_way, options.confidence);
  r.link = DeriveLink(run, r.allreduce);
  r.source = fmt::format(
      "{} {} by fitspeed linkbench: {}, {}, t = alpha + beta*S fitted on relative residuals at "
      "{} sizes {:.0f} B..{:.0f} B; {}",
      run.two_level ? "fitted" : "measured", options.date, run.method, run.describe, r.fitted_sizes,
      r.fitted_min_bytes, r.fitted_max_bytes, r.link.how);
  r.run = std::move(run);
  return r;
}

void WriteLinkbench(std::ostream& out, const LinkbenchResult& r, const std::string& links_json,
                    const std::string& links_out, OutputFormat format) {
  const LinkbenchRun& m = r.run;
  const bool two = m.has_one_way();
  switch (format) {
    case OutputFormat::kTable: {
      out << fmt::format("fitspeed linkbench: {}\n{}; fitted sizes {:.0f} B..{:.0f} B\n\n",
                         m.describe, m.timing_note, r.fitted_min_bytes, r.fitted_max_bytes);
      std::vector<std::string> header = {"bytes", "allreduce_us", "allreduce_fit_%", "algbw_GB/s"};
      if (two) {
        for (const char* h : {"one_way_us", "one_way_fit_%", "p2p_GB/s", "repeats"}) {
          header.push_back(h);
        }
      }
      TextTable table(header);
      for (const LinkbenchPoint& p : m.points) {
        std::vector<std::string> row = {
            fmt::format("{:.0f}", p.bytes), FormatSig(p.allreduce_s * 1e6),
            FormatSig((r.allreduce.Predict(p.bytes) / p.allreduce_s - 1) * 100, 2),
            FormatSig(p.bytes / p.allreduce_s / 1e9, 3)};
        if (two) {
          row.push_back(FormatSig(p.one_way_s * 1e6));
          row.push_back(FormatSig((r.one_way->Predict(p.bytes) / p.one_way_s - 1) * 100, 2));
          row.push_back(FormatSig(p.bytes / p.one_way_s / 1e9, 3));
          row.push_back(fmt::format("{}/{}", p.allreduce_repeats, p.pingpong_repeats));
        }
        table.AddRow(row);
      }
      out << table.Render() << "\n"
          << "all-reduce: " << r.allreduce.BriefReport() << "\n";
      if (two) out << "one-way:    " << r.one_way->BriefReport() << "\n";
      const MeasuredLink& ring = r.link.measured;
      out << "\n"
          << fmt::format(
                 "{} link: bandwidth {} GB/s {:.0f}% {}, latency {} us per ring "
                 "step {}\n  ({})\n",
                 r.link.connects, FormatSig(ring.link.bandwidth_bytes_per_s / 1e9, 4),
                 r.confidence * 100, Interval(ring.bandwidth_low, ring.bandwidth_high, 1e-9),
                 FormatSig(ring.link.latency_s * 1e6, 4),
                 Interval(ring.latency_low, ring.latency_high, 1e6), r.link.how);
      if (two) {
        const MeasuredLink direct = LinkFromPointToPoint(*r.one_way);
        out << fmt::format("point-to-point link: bandwidth {} GB/s {}, latency {} us {}\n",
                           FormatSig(direct.link.bandwidth_bytes_per_s / 1e9, 4),
                           Interval(direct.bandwidth_low, direct.bandwidth_high, 1e-9),
                           FormatSig(direct.link.latency_s * 1e6, 4),
                           Interval(direct.latency_low, direct.latency_high, 1e6));
      }
      WriteLinksFileNote(out, links_json, links_out);
      break;
    }
    case OutputFormat::kCsv: {
      TextTable table(
          {"bytes", "allreduce_s", "one_way_s", "allreduce_repeats", "pingpong_repeats"});
      for (const LinkbenchPoint& p : m.points) {
        table.AddRow({fmt::format("{:.0f}", p.bytes), fmt::format("{:.6g}", p.allreduce_s),
                      two ? fmt::format("{:.6g}", p.one_way_s) : "",
                      two ? std::to_string(p.allreduce_repeats) : "",
                      two ? std::to_string(p.pingpong_repeats) : ""});
      }
      out << table.RenderCsv();
      break;
    }
    case OutputFormat::kJson: {
      ordered_json j = {{"schema", "fitspeed.linkbench/1"},
                        {"communicator", m.describe},
                        {"ranks", m.ranks},
                        {"nodes", m.nodes},
                        {"points", ordered_json::array()}};
      for (const LinkbenchPoint& p : m.points) {
        j["points"].push_back(
            {{"bytes", p.bytes},
             {"allreduce_s", p.allreduce_s},
             {"one_way_s", two ? ordered_json(p.one_way_s) : ordered_json(nullptr)},
             {"allreduce_repeats", p.allreduce_repeats},
             {"pingpong_repeats", p.pingpong_repeats}});
      }
      j["allreduce_fit"] = FitJson(r.allreduce);
      j["one_way_fit"] = two ? FitJson(*r.one_way) : ordered_json(nullptr);
      j["link_derivation"] = r.link.how;
      j["links"] = ordered_json::parse(links_json);
      out << j.dump(2) << "\n";
      break;
    }
  }
}

std::string NodeCountLinkSource(const std::string& date, const std::string& from_runs, size_t runs,
                                int fewer_nodes, int more_nodes) {
  return fmt::format(
      "fitted {} by fitspeed linkbench --from-runs {}: {} runs' step on {} nodes minus the step "
      "on {} at the same per-GPU batch, D = alpha + beta*S fitted on relative residuals over "
      "their gradient sizes S and inverted for the ring over the nodes of the two-level "
      "all-reduce (serial: the all-reduce exposed)",
      date, from_runs, runs, more_nodes, fewer_nodes);
}

void WriteNodeCountLinkbench(std::ostream& out, const NodeCountLinkbench& r,
                             const std::string& links_json, const std::string& links_out,
                             OutputFormat format) {
  const AlphaBetaFit& fit = r.fit.fit;
  if (format == OutputFormat::kJson) {
    ordered_json j = {
        {"schema", "fitspeed.linkbench/1"}, {"from_runs", r.from_runs},
        {"fewer_nodes", r.fit.fewer_nodes}, {"more_nodes", r.fit.more_nodes},
        {"runs", ordered_json::array()},    {"difference_fit", FitJson(fit)},
        {"link_derivation", r.how},         {"links", ordered_json::parse(links_json)}};
    for (const NodeCountRun& run : r.runs) {
      j["runs"].push_back({{"gradient_bytes", run.gradient_bytes},
                           {"fewer_nodes_step_s", run.fewer_nodes_step_s},
                           {"more_nodes_step_s", run.more_nodes_step_s}});
    }
    out << j.dump(2) << "\n";
    return;
  }
  TextTable table(
      {"gradient_bytes", "fewer_nodes_step_s", "more_nodes_step_s", "difference_s", "fit_%"});
  for (const NodeCountRun& run : r.runs) {
    const double d = run.more_nodes_step_s - run.fewer_nodes_step_s;
    table.AddRow({fmt::format("{:.0f}", run.gradient_bytes), FormatSig(run.fewer_nodes_step_s, 4),
                  FormatSig(run.more_nodes_step_s, 4), FormatSig(d, 4),
                  FormatSig((fit.Predict(run.gradient_bytes) / d - 1) * 100, 2)});
  }
  if (format == OutputFormat::kCsv) {
    out << table.RenderCsv();
    return;
  }
  out << fmt::format("fitspeed linkbench: network link from {} runs on {} and {} nodes ({})\n\n",
                     r.runs.size(), r.fit.fewer_nodes, r.fit.more_nodes, r.from_runs)
      << table.Render() << "\n"
      << r.fit.BriefReport() << "\n"
      << "  (the two-level all-reduce's ring over the nodes; three runs fix two numbers with one "
         "degree of freedom: read the intervals; docs/devices.md, \"The network link from "
         "runs\")\n";
  WriteLinksFileNote(out, links_json, links_out);
}

}  // namespace fitspeed
