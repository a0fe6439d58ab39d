// What `fitspeed linkbench` reports: all-reduce (and point-to-point) timings
// over message sizes, measured on MPI ranks or read from an nccl-tests or OSU
// log, fitted t = alpha + beta*S (fitspeed/project/links.h), the link they
// calibrate and how it was derived; or the network link of training runs on
// two node counts (fitspeed/project/link_logs.h). The writers render both as
// a table, CSV or JSON ("fitspeed.linkbench/1").
//
//   fitspeed::LinkbenchRun run = ...;  // timings and what they were measured on
//   fitspeed::LinkbenchResult r = fitspeed::FitLinkbench(run, {});
//   fitspeed::WriteLinkbench(std::cout, r, links_json, "", fitspeed::OutputFormat::kTable);
#ifndef FITSPEED_PROJECT_LINKBENCH_H_
#define FITSPEED_PROJECT_LINKBENCH_H_

#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/comm.h"
#include "fitspeed/core/output_format.h"
#include "fitspeed/project/link_logs.h"
#include "fitspeed/project/links.h"

namespace fitspeed {

// One message size timed.
struct LinkbenchPoint {
  double bytes = 0;
  double allreduce_s = 0;  // median of blocking all-reduces (or a log's average)
  int allreduce_repeats = 0;
  // Median of ping-pong round trips with rank 1, halved; NaN: not measured.
  double one_way_s = std::numeric_limits<double>::quiet_NaN();
  int pingpong_repeats = 0;
};

// All-reduce timings to fit and what they were measured on.
struct LinkbenchRun {
  std::string describe;     // the communicator or the log: library, ranks, nodes
  std::string method;       // "MPI all-reduce" or the log's benchmark and file
  std::string timing_note;  // what each time is, for the table's header
  std::string link_name;    // the links file's "name" of the link
  int ranks = 0;
  int nodes = 1;
  std::vector<LinkbenchPoint> points;  // one_way_s NaN when there are no point-to-point times
  // A log over several nodes calibrates the network link of the two-level
  // all-reduce (InterNodeLinkFromAllReduce) given the in-node link, or the
  // flat ring over the nodes without one. Otherwise (an MPI job, one node) the
  // ring-equivalent link over all ranks.
  bool two_level = false;
  std::optional<Link> in_node;
  std::string in_node_name;    // the in-node link's name in its file
  std::string in_node_source;  // the file it came from
  bool has_one_way() const;
};

// The link an all-reduce fit calibrates, what it connects and how it was derived.
struct DerivedLink {
  MeasuredLink measured;
  std::string connects;  // "devices" or "network"
  std::string how;       // one phrase for the sources and the report
};

// RingLinkFromAllReduce over run.ranks ("devices", or "network" for several
// nodes) unless the run is two-level over nodes >= 2; then
// InterNodeLinkFromAllReduce over nodes of ranks/nodes with the in-node link,
// or with an infinitely fast free one (the flat ring over the nodes) without.
DerivedLink DeriveLink(const LinkbenchRun& run, const AlphaBetaFit& allreduce);

// The "source" texts of a calibrated link's two numbers in a links file:
// `how` with the value and its interval at `confidence`, the latency per
// `latency_per` ("ring step", "message").
struct LinkSources {
  std::string bandwidth;
  std::string latency;
};
LinkSources MeasuredLinkSources(const MeasuredLink& link, const std::string& how,
                                const std::string& latency_per, double confidence);

// Which sizes are fitted, and at which confidence.
struct LinkbenchFitOptions {
  double min_bytes = 0;  // fit only sizes >= this (all are still reported)
  double max_bytes = std::numeric_limits<double>::infinity();
  double confidence = 0.95;
  std::string date;  // the day of the measurement, for the link's source ("2026-01-31")
};

// A run fitted: the alpha-beta fits, the link and where it came from.
struct LinkbenchResult {
  LinkbenchRun run;
  double confidence = 0.95;
  int fitted_sizes = 0;  // sizes within the options' bounds
  double fitted_min_bytes = 0, fitted_max_bytes = 0;
  AlphaBetaFit allreduce;
  std::optional<AlphaBetaFit> one_way;  // when the run has point-to-point times
  DerivedLink link;
  std::string source;      // the link's provenance: date, method, run, fitted sizes, derivation
  bool converged() const;  // every fit converged
};

// Fits the sizes within the bounds (FitAlphaBeta, relative residuals) and
// derives the link (DeriveLink). Throws UsageError when fewer than 3 sizes
// are within the bounds, and FitAlphaBeta's errors.
LinkbenchResult FitLinkbench(LinkbenchRun run, const LinkbenchFitOptions& options);

// Table: header, per size the times, the fits' residuals and bandwidths, the
// fits, the link with its intervals, and the links file (`links_json`,
// fitspeed.links/1) or where it was written (`links_out` not empty). CSV: one
// row per size. JSON: "fitspeed.linkbench/1", the links file included.
void WriteLinkbench(std::ostream& out, const LinkbenchResult& result, const std::string& links_json,
                    const std::string& links_out, OutputFormat format);

// The network link of training runs on two node counts (`linkbench --from-runs`).
struct NodeCountLinkbench {
  std::string from_runs;  // the runs' file
  std::vector<NodeCountRun> runs;
  NodeCountLinkFit fit;  // NetworkLinkFromNodeCounts of the runs
  std::string how;       // NodeCountLinkSource
};

// The provenance of the link of NodeCountLinkbench, dated `date`.
std::string NodeCountLinkSource(const std::string& date, const std::string& from_runs, size_t runs,
                                int fewer_nodes, int more_nodes);

// Table: per run the steps, their difference and the fit's residual, the
// fit, and the links file or where it went, as WriteLinkbench. CSV: the
// table's rows. JSON: "fitspeed.linkbench/1" with the runs and the fit.
void WriteNodeCountLinkbench(std::ostream& out, const NodeCountLinkbench& result,
                             const std::string& links_json, const std::string& links_out,
                             OutputFormat format);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_LINKBENCH_H_
