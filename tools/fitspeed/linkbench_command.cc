// `fitspeed linkbench`: times MPI all-reduce and point-to-point messages
// between the ranks of a job over message sizes (4 B .. 256 MiB by default),
// fits t = alpha + beta*S to each (fitspeed/project/links.h) and writes the
// link it calibrates as a links file (docs/devices.md, "Links files") that
// `sweep --device`, `sweep --data-parallel`, `project` and `plan` take.
//
//   mpirun -np 2 fitspeed linkbench --links-out links.json
//   mpirun -H node1,node2 -np 2 fitspeed linkbench --links-out links.json
//
// With --from FILE it runs without MPI: the all-reduce times come from the
// output of nccl-tests all_reduce_perf or OSU osu_allreduce
// (fitspeed/project/link_logs.h), fitted and written the same way; a run over
// several nodes gives the network link of the two-level all-reduce.
//
//   fitspeed linkbench --from all_reduce_perf.txt --links in_node.json --links-out links.json
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "command.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/project/link_logs.h"
#include "fitspeed/project/linkbench.h"
#include "fitspeed/project/links.h"
#include "fitspeed/timing/data_parallel.h"
#include "fitspeed/timing/sweep.h"
#include "mpi/mpi_communicator.h"

namespace fitspeed::cli {

namespace {

struct LinkbenchOptions {
  double min_bytes = 4;
  double max_bytes = 256.0 * 1024 * 1024;
  double factor = 4;
  int warmup = 2;
  int min_repeats = 5;
  int max_repeats = 1000;
  double min_time_s = 0.2;
  double confidence = 0.95;
  // Sizes the alpha-beta fits use (all measured sizes by default).
  double fit_min_bytes = 0;
  double fit_max_bytes = std::numeric_limits<double>::infinity();
  std::string links_out;
  std::string output = "table";
  // --from FILE: fit an nccl-tests or osu_allreduce log instead of measuring.
  std::string from;
  std::string from_format = "auto";
  int ranks = 0;      // 0: as the log says
  int nodes = 0;      // 0: as the log says
  std::string links;  // a links file whose "devices" link is the in-node one
  // --from-runs FILE: the network link from steps on two node counts.
  std::string from_runs;
  int fewer_nodes = 0;
  int more_nodes = 0;
};

std::vector<double> Sizes(const LinkbenchOptions& o) {
  std::vector<double> sizes;
  for (double s = o.min_bytes; s <= o.max_bytes * (1 + 1e-12); s *= o.factor) {
    sizes.push_back(std::round(s / 4) * 4);  // whole floats
  }
  if (sizes.back() < o.max_bytes) sizes.push_back(std::round(o.max_bytes / 4) * 4);
  return sizes;
}

std::vector<LinkbenchPoint> Measure(Communicator& comm, const LinkbenchOptions& o) {
  std::vector<LinkbenchPoint> points;
  for (const CollectiveTiming& t : TimeCollectives(
           comm, Sizes(o), o.warmup, RepeatPolicy{o.min_repeats, o.max_repeats, o.min_time_s})) {
    points.push_back(
        {t.bytes, t.allreduce_s, t.allreduce_repeats, t.one_way_s, t.pingpong_repeats});
  }
  return points;
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

// The links file of one calibrated link, its sources MeasuredLinkSources:
// written to --links-out when given; returns its JSON text.
std::string WriteLinks(const LinkbenchOptions& o, const std::string& name,
                       const std::string& connects, const MeasuredLink& measured,
                       const std::string& how, const std::string& latency_per) {
  LinksFile file;
  DeviceLink link;
  link.name = name;
  link.connects = connects;
  static_cast<Link&>(link) = measured.link;
  file.links.push_back(link);
  const LinkSources sources = MeasuredLinkSources(measured, how, latency_per, o.confidence);
  file.sources["links[0].bandwidth_bytes_per_s"] = sources.bandwidth;
  file.sources["links[0].latency_s"] = sources.latency;
  if (!o.links_out.empty()) WriteLinksJsonFile(o.links_out, file);
  return LinksToJson(file);
}

// Fits, writes the links file and reports: the part of linkbench that MPI
// runs and logs share. Returns the exit code.
int ReportLinks(const LinkbenchOptions& o, LinkbenchRun run, OutputFormat format) {
  const LinkbenchResult r =
      FitLinkbench(std::move(run), {o.fit_min_bytes, o.fit_max_bytes, o.confidence, Today()});
  const std::string links_json =
      WriteLinks(o, r.run.link_name, r.link.connects, r.link.measured, r.source, "ring step");
  WriteLinkbench(std::cout, r, links_json, o.links_out, format);
  std::fflush(stdout);
  return r.converged() ? 0 : static_cast<int>(ExitCode::kFitUnusable);
}

void CheckSizes(const LinkbenchOptions& o) {
  if (!(o.min_bytes >= 4 && o.max_bytes >= o.min_bytes && o.factor > 1)) {
    throw UsageError(fmt::format(
        "--min-bytes {}, --max-bytes {}, --factor {}: need 4 <= min <= max and factor > 1",
        o.min_bytes, o.max_bytes, o.factor));
  }
  if (Sizes(o).size() < 3) {
    throw UsageError(
        "linkbench needs at least 3 message sizes to fit alpha and beta; widen "
        "--min-bytes..--max-bytes or lower --factor");
  }
}

// `linkbench --from FILE`: the timings of an nccl-tests or osu_allreduce log, no MPI.
int RunFromLog(const LinkbenchOptions& o) {
  const OutputFormat format = ParseOutputFormat(o.output);
  const LinkLog log = ReadLinkLogFile(o.from, ParseLinkLogFormat(o.from_format));
  LinkbenchRun m;
  m.two_level = true;
  m.link_name = log.format == LinkLogFormat::kNcclTests ? "nccl" : "mpi";
  // The log's own counts win; an option that contradicts them is a mistake.
  auto count = [&](int from_log, int given, const char* option, const char* what) {
    if (from_log > 0 && given > 0 && given != from_log) {
      throw UsageError(
          fmt::format("{} {}: the log {} names {} {}", option, given, o.from, from_log, what));
    }
    if (from_log > 0) return from_log;
    if (given > 0) return given;
    throw UsageError(fmt::format("the log {} ({}) does not say how many {} took part: give {} N",
                                 o.from, LinkLogFormatName(log.format), what, option));
  };
  m.ranks = count(log.ranks, o.ranks, "--ranks", "ranks");
  m.nodes = count(log.nodes, o.nodes, "--nodes", "nodes");
  if (m.ranks < 2) {
    throw UsageError(
        fmt::format("{}: {} rank(s); an all-reduce link needs 2 or more", o.from, m.ranks));
  }
  if (m.nodes > m.ranks || m.ranks % m.nodes != 0) {
    throw UsageError(
        fmt::format("{} ranks on {} nodes: the two-level all-reduce needs the same "
                    "number of ranks on every node",
                    m.ranks, m.nodes));
  }
  if (!o.links.empty()) {
    const LinksFile in_node = ReadLinksJsonFile(o.links);
    const DeviceLink* l = in_node.FindLink("devices");
    if (!l) {
      throw UsageError(
          fmt::format("--links {}: no link that connects \"devices\" (the in-node "
                      "link the network link is separated from)",
                      o.links));
    }
    m.in_node = *l;
    m.in_node_name = l->name;
    m.in_node_source = o.links;
    if (m.nodes == 1) {
      std::cerr << fmt::format(
          "fitspeed: --links {} not used: the log is one node, so it "
          "measures the in-node link itself\n",
          o.links);
    }
  }
  m.describe = fmt::format("{} log {}, {} ranks on {} node{}", log.benchmark, o.from, m.ranks,
                           m.nodes, m.nodes == 1 ? "" : "s");
  m.method = log.format == LinkLogFormat::kNcclTests
                 ? "nccl-tests all_reduce_perf in-place times (us, averages over its iterations)"
                 : "osu_allreduce average latencies (us)";
  m.timing_note = log.format == LinkLogFormat::kNcclTests
                      ? "all-reduce times read from nccl-tests all_reduce_perf: in-place column, "
                        "the average over its iterations"
                      : "all-reduce times read from osu_allreduce: Avg Latency(us), the average "
                        "over its iterations";
  for (const LinkTiming& t : log.timings) {
    LinkbenchPoint p;
    p.bytes = t.bytes;
    p.allreduce_s = t.seconds;
    m.points.push_back(p);  // one_way_s NaN: no point-to-point times
  }
  return ReportLinks(o, std::move(m), format);
}

// `linkbench --from-runs FILE`: the network link from a job's steps on two
// node counts (NetworkLinkFromNodeCounts), no MPI.
int RunFromRuns(const LinkbenchOptions& o) {
  if (!o.from.empty() || o.ranks != 0 || o.nodes != 0 || !o.links.empty()) {
    throw UsageError("--from-runs does not go with --from, --ranks, --nodes or --links");
  }
  if (o.fewer_nodes < 1 || o.more_nodes <= o.fewer_nodes) {
    throw UsageError(fmt::format(
        "--from-runs needs --fewer-nodes K1 >= 1 and --more-nodes K2 > K1, got {} and {}",
        o.fewer_nodes, o.more_nodes));
  }
  const OutputFormat format = ParseOutputFormat(o.output);
  NodeCountLinkbench r;
  r.from_runs = o.from_runs;
  r.runs = ReadNodeCountRuns(o.from_runs);
  r.fit = NetworkLinkFromNodeCounts(r.runs, o.fewer_nodes, o.more_nodes, o.confidence);
  r.how = NodeCountLinkSource(Today(), o.from_runs, r.runs.size(), o.fewer_nodes, o.more_nodes);
  const std::string links_json =
      WriteLinks(o, "network", "network", r.fit.network, r.how, "message");
  WriteNodeCountLinkbench(std::cout, r, links_json, o.links_out, format);
  std::fflush(stdout);
  return r.fit.fit.converged ? 0 : static_cast<int>(ExitCode::kFitUnusable);
}

int Run(const LinkbenchOptions& o) {
  if (!o.from_runs.empty()) return RunFromRuns(o);
  if (o.fewer_nodes != 0 || o.more_nodes != 0) {
    throw UsageError("--fewer-nodes and --more-nodes go with --from-runs FILE");
  }
  if (!o.from.empty()) return RunFromLog(o);
  if (o.ranks != 0 || o.nodes != 0 || !o.links.empty() || o.from_format != "auto") {
    throw UsageError("--ranks, --nodes, --links and --from-format go with --from FILE");
  }
  CheckSizes(o);
  const OutputFormat format = ParseOutputFormat(o.output);
  std::unique_ptr<Communicator> comm = InitMpi(nullptr, nullptr);
  if (comm->size() < 2) {
    throw UsageError(
        "linkbench times communication between ranks: start 2 or more, e.g. "
        "`mpirun -np 2 fitspeed linkbench` (as root add --allow-run-as-root), or read a "
        "measurement with --from FILE");
  }
  const bool root = comm->rank() == 0;
  try {
    LinkbenchRun m;
    m.points = Measure(*comm, o);
    int code = 0;
    if (root) {
      m.describe = comm->Describe();
      m.method = "MPI all-reduce";
      m.link_name = "mpi";
      m.ranks = comm->size();
      m.nodes = comm->nodes();
      m.timing_note =
          "medians of blocking operations, each after a barrier (all-reduce: in-place float "
          "sum; one-way: half a ping-pong round trip between ranks 0 and 1)";
      code = ReportLinks(o, std::move(m), format);
    }
    double shared = code;
    comm->Broadcast(&shared, 1);
    return static_cast<int>(shared);
  } catch (const Error& e) {
    std::fflush(stdout);
    std::cerr << fmt::format("fitspeed (rank {} of {}): {}\n", comm->rank(), comm->size(),
                             e.what());
    AbortMpi(static_cast<int>(ExitCodeOf(e)));
  }
}

}  // namespace

void SetupLinkbenchCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<LinkbenchOptions>();
  CLI::App* command = app.add_subcommand(
      "linkbench",
      "Time MPI all-reduce and point-to-point messages between the ranks of an MPI job "
      "(mpirun -np N fitspeed linkbench; across machines mpirun -H host1,host2 ...) over "
      "message sizes, fit t = alpha + beta*bytes to each with intervals, and write the link it "
      "calibrates (the ring-equivalent bandwidth and per-step latency of the all-reduce) as a "
      "links file for `sweep --device/--data-parallel`, `project` and `plan` (--links FILE)");
  command->add_option("--min-bytes", o->min_bytes, "Smallest message, bytes (>= 4)")
      ->capture_default_str();
  command->add_option("--max-bytes", o->max_bytes, "Largest message, bytes")->capture_default_str();
  command->add_option("--factor", o->factor, "Ratio of one message size to the next (> 1)")
      ->capture_default_str();
  command->add_option("--warmup", o->warmup, "Untimed operations per size and kind")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  command->add_option("--min-repeats", o->min_repeats, "Timed operations per size, at least")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command->add_option("--max-repeats", o->max_repeats, "Timed operations per size, at most")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command
      ->add_option("--min-time", o->min_time_s,
                   "Seconds of timed operations per size and kind, at least (after "
                   "--min-repeats, up to --max-repeats)")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command
      ->add_option("--fit-min-bytes", o->fit_min_bytes,
                   "Fit only sizes >= this, bytes (the sizes the link will carry: gradient "
                   "buckets are 1-25 MiB); all are still measured and shown")
      ->capture_default_str();
  command->add_option("--fit-max-bytes", o->fit_max_bytes, "Fit only sizes <= this, bytes");
  command->add_option("--confidence", o->confidence, "Level of the fit's intervals")
      ->capture_default_str()
      ->check(FiniteRange(0.5, 0.999));
  command->add_option("--links-out", o->links_out,
                      "Write the calibrated link as a links file (fitspeed.links/1) here");
  command->add_option(
      "--from", o->from,
      "Do not measure: read the all-reduce times of a run of nccl-tests all_reduce_perf or OSU "
      "osu_allreduce (its standard output saved to FILE), fit them and write the link. One "
      "node: the \"devices\" link (ring over the ranks); several: the \"network\" link of "
      "the two-level all-reduce (in-node ring, then a ring over the nodes), separated from the "
      "in-node link given with --links, else a flat ring over the nodes (docs/devices.md)");
  command->add_option("--from-format", o->from_format, "Format of --from: auto, nccl-tests or osu")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "nccl-tests", "osu"}));
  command
      ->add_option("--ranks", o->ranks,
                   "With --from: ranks of the run (required for osu_allreduce, which does not "
                   "print them; nccl-tests lists its ranks)")
      ->check(CLI::Range(2, 1 << 24));
  command
      ->add_option("--nodes", o->nodes,
                   "With --from: nodes of the run (required for osu_allreduce; nccl-tests "
                   "names each rank's host)")
      ->check(CLI::Range(1, 1 << 24));
  command->add_option("--links", o->links,
                      "With --from over several nodes: a links file whose \"devices\" link is "
                      "the in-node link (measured on one node, or a catalog device's), taken "
                      "out of the measured time to leave the network link");
  command->add_option(
      "--from-runs", o->from_runs,
      "Do not measure: the network link from a training job's step times on two node counts "
      "(CSV: fewer_nodes_step_s, more_nodes_step_s, and gradient_bytes or params; one row per "
      "job or model at a per-GPU batch small enough that the all-reduce is exposed; 3 or more "
      "rows of 2 or more gradient sizes). The difference of the steps is the two-level "
      "all-reduce's ring over the nodes (docs/devices.md)");
  command
      ->add_option("--fewer-nodes", o->fewer_nodes, "With --from-runs: the smaller node count K1")
      ->check(CLI::Range(1, 1 << 24));
  command->add_option("--more-nodes", o->more_nodes, "With --from-runs: the larger node count K2")
      ->check(CLI::Range(2, 1 << 24));
  AddOutputOption(*command, o->output);
  command->callback([o, &exit_code] {
    if (o->max_repeats < o->min_repeats) {
      throw UsageError(
          fmt::format("--max-repeats {} < --min-repeats {}", o->max_repeats, o->min_repeats));
    }
    exit_code = Run(*o);
  });
}

}  // namespace fitspeed::cli
