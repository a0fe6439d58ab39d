// All-reduce timings from the logs of the two benchmarks people run on GPU
// clusters, and the link between nodes they calibrate. `fitspeed linkbench
// --from FILE` reads them, fits t = alpha + beta*S (fitspeed/project/links.h)
// and writes a links file (docs/devices.md, "Links files").
//
//   fitspeed::LinkLog log = fitspeed::ReadLinkLogFile("all_reduce_perf.txt");
//   fitspeed::AlphaBetaFit fit = fitspeed::FitAlphaBeta(log.timings);
//   // log.nodes > 1: the network link of the two-level all-reduce
//   fitspeed::MeasuredLink net = fitspeed::InterNodeLinkFromAllReduce(
//       fit, log.ranks / log.nodes, log.nodes, in_node_link);
//
// Formats (docs/devices.md, "Links from nccl-tests or OSU logs"):
// - nccl-tests all_reduce_perf (github.com/NVIDIA/nccl-tests, print_header()
//   in src/common.cu and doc/PERFORMANCE.md): "#  Rank  0 Group  0 Pid ... on
//   HOST device  0 [...] NAME" lines, one per rank, then the table
//   "size count type redop root time algbw busbw #wrong" for out-of-place and
//   again time .. #wrong for in-place; size in bytes, time in microseconds (the
//   average over the iterations). Older versions lack the root column and call
//   #wrong "error"; the columns are read by the header's names.
// - OSU micro-benchmarks osu_allreduce (mvapich.cse.ohio-state.edu/benchmarks):
//   "# OSU MPI Allreduce Latency Test vX.Y", optionally "# Datatype: ...", then
//   "# Size       Avg Latency(us)" (with -f also Min, Max, Iterations) and one
//   row per size, bytes and microseconds. It names neither ranks nor nodes.
#ifndef FITSPEED_PROJECT_LINK_LOGS_H_
#define FITSPEED_PROJECT_LINK_LOGS_H_

#include <string>
#include <vector>

#include "fitspeed/project/links.h"
#include "fitspeed/project/scaling.h"

namespace fitspeed {

enum class LinkLogFormat {
  kAuto,       // nccl-tests when a "#" line names busbw, OSU when one starts "# OSU"
  kNcclTests,  // all_reduce_perf
  kOsu,        // osu_allreduce
};
const char* LinkLogFormatName(LinkLogFormat format);        // "auto", "nccl-tests", "osu"
LinkLogFormat ParseLinkLogFormat(const std::string& name);  // throws UsageError

// What a log yields.
struct LinkLog {
  std::string source;                           // file name, as given
  LinkLogFormat format = LinkLogFormat::kAuto;  // the one read (never kAuto)
  // One timing per table row, in file order: bytes all-reduced (the whole
  // buffer, as both benchmarks print it) and seconds. nccl-tests: the in-place
  // time (PyTorch DDP all-reduces its buckets in place); OSU: the average.
  std::vector<LinkTiming> timings;
  std::vector<int> lines;  // the 1-based line of each timing
  // Ranks and nodes the log names (nccl-tests' rank lines: distinct ranks and
  // distinct hosts); 0 when it names none (OSU, or a table without them).
  int ranks = 0;
  int nodes = 0;
  std::vector<std::string> hosts;  // distinct hosts in order of first rank
  std::string benchmark;  // "nccl-tests all_reduce_perf", "OSU MPI Allreduce Latency Test v7.3"
};

// Parses a log. Throws DataError(source, line, field, problem) for a row whose
// fields are not numbers or are missing, a time not > 0, a row with wrong
// results (#wrong > 0), a table of another collective (redop "none", a root
// >= 0, an OSU test other than Allreduce), no rows, or text that is neither
// format (with kAuto).
LinkLog ParseLinkLog(const std::string& text, const std::string& source,
                     LinkLogFormat format = LinkLogFormat::kAuto);

// Reads and parses `path`; InputError when it cannot be read.
LinkLog ReadLinkLogFile(const std::string& path, LinkLogFormat format = LinkLogFormat::kAuto);

// The effective link between nodes of a two-level all-reduce fitted over
// per_node x nodes ranks: the measured t = alpha + beta*S is taken to be
// HierarchicalAllReduceTime (fitspeed/core/comm.h), an in-node ring over
// `intra` plus a ring over the nodes,
//   alpha = 2(p-1) a_intra + 2(k-1) a,   beta = 2(p-1)/p / B_intra + 2(k-1)/k / B,
// solved for the network link (a, B) by subtracting the in-node terms and
// inverting the ring over k nodes as RingLinkFromAllReduce does; intervals
// carried the same way. A latency left below 0 is clipped to 0. With an
// in-node link of infinite bandwidth and no latency (none known) this is the
// flat ring over the nodes: the network link carries the whole measured time.
// Throws UsageError unless nodes >= 2 and per_node >= 1, DataError when the
// in-node link alone takes as much per byte as the whole measurement (no
// bandwidth left for the network).
MeasuredLink InterNodeLinkFromAllReduce(const AlphaBetaFit& fit, int per_node, int nodes,
                                        const Link& intra);

// The network link calibrated from training runs instead of an all-reduce
// benchmark: the same model stepped on k1 and on k2 > k1 nodes of the same
// GPUs per node p, at the same per-GPU batch. Under the serial two-level model
// (the all-reduce of the whole gradient S after the backward pass,
// HierarchicalAllReduceTime) the step is
//   T(k) = compute(b) + update + R_p(S) + 2(k-1)/k * S/B + 2(k-1) a   (k >= 2)
//   T(1) = compute(b) + update + R_p(S)
// with R_p(S) the in-node ring over the devices link (RingAllReduceTime over p
// ranks), and (a, B) the network link's latency per message and bandwidth per
// direction. Compute, update and the in-node ring are the same on k1 and k2
// nodes and cancel in the difference, so no single-GPU or in-node model enters:
//   D = T(k2) - T(k1) = alpha + beta*S,
//   alpha = 2(k2-k1) a,   beta = (2(k2-1)/k2 - 2(k1-1)/k1) / B.
// One model has one S, so it cannot tell latency from bandwidth: runs of
// models with different gradient sizes are fitted with FitAlphaBeta (relative
// residuals, >= 3 runs, >= 2 sizes) and the fit inverted for (a, B) as
// RingLinkFromAllReduce does (for k1 = 1 exactly its ring over k2 ranks).
// Use batches small enough that the all-reduce is exposed (the serial model's
// premise): with DDP overlap at large batches D shrinks toward 0.
struct NodeCountRun {
  double gradient_bytes = 0;  // S: bytes all-reduced per step (FP32 gradient: 4 B per parameter)
  double fewer_nodes_step_s = 0;  // measured step on k1 nodes
  double more_nodes_step_s = 0;   // measured step on k2 nodes, same per-GPU batch
};

struct NodeCountLinkFit {
  int fewer_nodes = 0, more_nodes = 0;  // k1, k2
  AlphaBetaFit fit;                     // of D = T(k2) - T(k1) against S
  MeasuredLink network;                 // (a, B) with the intervals of the fit
  std::string BriefReport() const;      // one line: the link, its intervals, the fit's residuals
};

// Fits the network link from `runs` (see above). Throws UsageError unless
// more_nodes > fewer_nodes >= 1; DataError naming the run for a step not > 0
// and finite, or a difference D not > 0 (more nodes not slower: the runs do
// not expose the all-reduce); and FitAlphaBeta's DataErrors (fewer than 3
// runs, all gradient sizes equal).
NodeCountLinkFit NetworkLinkFromNodeCounts(const std::vector<NodeCountRun>& runs, int fewer_nodes,
                                           int more_nodes, double confidence = 0.95);

// The runs of a CSV file (`fitspeed linkbench --from-runs`): a header naming
// fewer_nodes_step_s, more_nodes_step_s and either gradient_bytes or params
// (FP32 gradients: 4 bytes per parameter); other columns (e.g. a model name)
// are kept out; blank lines and lines starting with '#' are skipped. Steps in
// seconds: each the step of the same job at the same per-GPU batch on the two
// node counts. Throws InputError when the file cannot be read, DataError naming
// file, line and field for a missing column, a row of another width, a field
// that is not a number > 0, or no rows.
std::vector<NodeCountRun> ReadNodeCountRuns(const std::string& path);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_LINK_LOGS_H_
