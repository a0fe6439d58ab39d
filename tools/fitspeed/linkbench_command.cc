// `fitspeed linkbench`: times MPI all-reduce and point-to-point messages
// between the ranks of a job over message sizes (4 B .. 256 MiB by default),
// fits t = alpha + beta*S to each (fitspeed/project/links.h) and writes the
// link it calibrates as a links file (docs/devices.md, "Links files") that
// `sweep --device`, `sweep --data-parallel`, `project` and `plan` take.
//
//   mpirun -np 2 fitspeed linkbench --links-out links.json
//   mpirun -H node1,node2 -np 2 fitspeed linkbench --links-out links.json
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/core/median.h"
#include "fitspeed/core/table.h"
#include "fitspeed/device/device.h"
#include "fitspeed/project/links.h"
#include "fitspeed/timing/data_parallel.h"
#include "fitspeed/timing/mpi_communicator.h"

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
};

// One message size measured.
struct SizePoint {
  double bytes = 0;
  double allreduce_s = 0;  // median of blocking all-reduces, each after a barrier
  int allreduce_repeats = 0;
  double one_way_s = 0;  // median of ping-pong round trips with rank 1, halved
  int pingpong_repeats = 0;
};

std::vector<double> Sizes(const LinkbenchOptions& o) {
  std::vector<double> sizes;
  for (double s = o.min_bytes; s <= o.max_bytes * (1 + 1e-12); s *= o.factor) {
    sizes.push_back(std::round(s / 4) * 4);  // whole floats
  }
  if (sizes.back() < o.max_bytes) sizes.push_back(std::round(o.max_bytes / 4) * 4);
  return sizes;
}

// Times `op` as the sweep times a step: warm-up, then at least min_repeats and
// min_time_s, at most max_repeats; rank 0 decides for every rank.
template <typename Op>
std::vector<double> TimeRepeats(Communicator& comm, const LinkbenchOptions& o, Op op) {
  using Clock = std::chrono::steady_clock;
  for (int w = 0; w < o.warmup; ++w) op();
  std::vector<double> times;
  double total = 0;
  for (;;) {
    double more = (static_cast<int>(times.size()) < o.min_repeats ||
                   (total < o.min_time_s && static_cast<int>(times.size()) < o.max_repeats))
                      ? 1
                      : 0;
    comm.Broadcast(&more, 1);
    if (more == 0) break;
    comm.Barrier();
    const Clock::time_point start = Clock::now();
    op();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    times.push_back(s);
    total += s;
  }
  return times;
}

std::vector<SizePoint> Measure(Communicator& comm, const LinkbenchOptions& o) {
  std::vector<SizePoint> points;
  const std::vector<double> sizes = Sizes(o);
  std::vector<float> data(static_cast<size_t>(sizes.back() / 4), 1.0f);
  std::vector<char> bytes(static_cast<size_t>(sizes.back()), 1);
  for (double size : sizes) {
    SizePoint p;
    p.bytes = size;
    const int64_t count = static_cast<int64_t>(size / 4);
    std::vector<double> t =
        TimeRepeats(comm, o, [&] { comm.Sum(data.data(), count); });
    // Sums of ones grow; keep them small so no value overflows.
    std::fill(data.begin(), data.begin() + count, 1.0f);
    p.allreduce_s = Median(t);
    p.allreduce_repeats = static_cast<int>(t.size());
    t = TimeRepeats(comm, o, [&] { comm.PingPong(1, bytes.data(), static_cast<int64_t>(size)); });
    p.one_way_s = Median(t) / 2;
    p.pingpong_repeats = static_cast<int>(t.size());
    // Rank 0's times are the report; every rank holds them.
    comm.Broadcast(&p.allreduce_s, 1);
    comm.Broadcast(&p.one_way_s, 1);
    points.push_back(p);
  }
  return points;
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

std::string Interval(double low, double high, double scale, int digits = 3) {
  return fmt::format("[{}, {}]", FormatSig(low * scale, digits), FormatSig(high * scale, digits));
}

int Run(const LinkbenchOptions& o) {
  if (!(o.min_bytes >= 4 && o.max_bytes >= o.min_bytes && o.factor > 1)) {
    throw UsageError(fmt::format(
        "--min-bytes {}, --max-bytes {}, --factor {}: need 4 <= min <= max and factor > 1",
        o.min_bytes, o.max_bytes, o.factor));
  }
  if (Sizes(o).size() < 3) {
    throw UsageError("linkbench needs at least 3 message sizes to fit alpha and beta; widen "
                     "--min-bytes..--max-bytes or lower --factor");
  }
  const OutputFormat format = ParseOutputFormat(o.output);
  std::unique_ptr<Communicator> comm = InitMpi(nullptr, nullptr);
  if (comm->size() < 2) {
    throw UsageError(
        "linkbench times communication between ranks: start 2 or more, e.g. "
        "`mpirun -np 2 fitspeed linkbench` (as root add --allow-run-as-root)");
  }
  const bool root = comm->rank() == 0;
  try {
    const std::vector<SizePoint> points = Measure(*comm, o);
    int code = 0;
    if (root) {
      std::vector<LinkTiming> allreduce, one_way;
      for (const SizePoint& p : points) {
        if (p.bytes < o.fit_min_bytes || p.bytes > o.fit_max_bytes) continue;
        allreduce.push_back({p.bytes, p.allreduce_s});
        one_way.push_back({p.bytes, p.one_way_s});
      }
      if (allreduce.size() < 3) {
        throw UsageError(fmt::format(
            "--fit-min-bytes {} .. --fit-max-bytes {} leaves {} measured size(s); the fit needs 3",
            o.fit_min_bytes, o.fit_max_bytes, allreduce.size()));
      }
      const AlphaBetaFit ar = FitAlphaBeta(allreduce, o.confidence);
      const AlphaBetaFit p2p = FitAlphaBeta(one_way, o.confidence);
      const MeasuredLink ring = RingLinkFromAllReduce(ar, comm->size());
      const MeasuredLink direct = LinkFromPointToPoint(p2p);

      // The ring-equivalent link of the all-reduce: between nodes when the job spans them.
      LinksFile file;
      DeviceLink link;
      link.name = "mpi";
      link.connects = comm->nodes() > 1 ? "network" : "devices";
      link.bandwidth_bytes_per_s = ring.link.bandwidth_bytes_per_s;
      link.latency_s = ring.link.latency_s;
      file.links.push_back(link);
      const std::string measured = fmt::format(
          "measured {} by fitspeed linkbench: MPI all-reduce, {}, "
          "t = alpha + beta*S fitted on relative residuals at {} sizes {:.0f} B..{:.0f} B; the "
          "ring-equivalent link (RingAllReduceTime reproduces the fit at {} ranks)",
          Today(), comm->Describe(), allreduce.size(), allreduce.front().bytes,
          allreduce.back().bytes, comm->size());
      const double level = o.confidence * 100;
      file.sources["links[0].bandwidth_bytes_per_s"] = fmt::format(
          "{}: {:.4g} B/s, {:.0f}% interval {}", measured, ring.link.bandwidth_bytes_per_s,
          level, Interval(ring.bandwidth_low, ring.bandwidth_high, 1, 4));
      file.sources["links[0].latency_s"] =
          fmt::format("{}: {:.4g} s per ring step, {:.0f}% interval {}", measured,
                      ring.link.latency_s, level, Interval(ring.latency_low, ring.latency_high, 1, 4));
      const std::string links_json = LinksToJson(file);
      if (!o.links_out.empty()) {
        std::ofstream out(o.links_out);
        out << links_json;
        if (!out || !out.flush()) {
          throw InputError(fmt::format("cannot write the links file '{}'", o.links_out));
        }
      }

      switch (format) {
        case OutputFormat::kTable: {
          std::cout << fmt::format(
              "fitspeed linkbench: {}\nmedians of blocking operations, each after a barrier "
              "(all-reduce: in-place float sum; one-way: half a ping-pong round trip between "
              "ranks 0 and 1); fitted sizes {:.0f} B..{:.0f} B\n\n",
              comm->Describe(), allreduce.front().bytes, allreduce.back().bytes);
          TextTable table({"bytes", "allreduce_us", "allreduce_fit_%", "algbw_GB/s", "one_way_us",
                           "one_way_fit_%", "p2p_GB/s", "repeats"});
          for (const SizePoint& p : points) {
            table.AddRow({fmt::format("{:.0f}", p.bytes), FormatSig(p.allreduce_s * 1e6),
                          FormatSig((ar.Predict(p.bytes) / p.allreduce_s - 1) * 100, 2),
                          FormatSig(p.bytes / p.allreduce_s / 1e9, 3),
                          FormatSig(p.one_way_s * 1e6),
                          FormatSig((p2p.Predict(p.bytes) / p.one_way_s - 1) * 100, 2),
                          FormatSig(p.bytes / p.one_way_s / 1e9, 3),
                          fmt::format("{}/{}", p.allreduce_repeats, p.pingpong_repeats)});
          }
          std::cout << table.Render() << "\n"
                    << "all-reduce: " << ar.BriefReport() << "\n"
                    << "one-way:    " << p2p.BriefReport() << "\n\n"
                    << fmt::format(
                           "ring-equivalent link ({} ranks): bandwidth {} GB/s {:.0f}% {}, "
                           "latency {} us per ring step {}\n",
                           comm->size(), FormatSig(ring.link.bandwidth_bytes_per_s / 1e9, 4),
                           level, Interval(ring.bandwidth_low, ring.bandwidth_high, 1e-9),
                           FormatSig(ring.link.latency_s * 1e6, 4),
                           Interval(ring.latency_low, ring.latency_high, 1e6))
                    << fmt::format(
                           "point-to-point link: bandwidth {} GB/s {}, latency {} us {}\n",
                           FormatSig(direct.link.bandwidth_bytes_per_s / 1e9, 4),
                           Interval(direct.bandwidth_low, direct.bandwidth_high, 1e-9),
                           FormatSig(direct.link.latency_s * 1e6, 4),
                           Interval(direct.latency_low, direct.latency_high, 1e6));
          if (!o.links_out.empty()) {
            std::cout << fmt::format("links file written: {} (give it to sweep, project or plan "
                                     "with --links)\n",
                                     o.links_out);
          } else {
            std::cout << "\nlinks file (--links-out FILE writes it):\n" << links_json;
          }
          break;
        }
        case OutputFormat::kCsv: {
          TextTable table({"bytes", "allreduce_s", "one_way_s", "allreduce_repeats",
                           "pingpong_repeats"});
          for (const SizePoint& p : points) {
            table.AddRow({fmt::format("{:.0f}", p.bytes), fmt::format("{:.6g}", p.allreduce_s),
                          fmt::format("{:.6g}", p.one_way_s), std::to_string(p.allreduce_repeats),
                          std::to_string(p.pingpong_repeats)});
          }
          std::cout << table.RenderCsv();
          break;
        }
        case OutputFormat::kJson: {
          using json = nlohmann::ordered_json;
          auto fit_json = [](const AlphaBetaFit& f) {
            return json{{"alpha_s", f.alpha_s},
                        {"alpha_ci", {f.alpha_ci_low, f.alpha_ci_high}},
                        {"beta_s_per_byte", f.beta_s_per_byte},
                        {"beta_ci", {f.beta_ci_low, f.beta_ci_high}},
                        {"confidence", f.confidence},
                        {"points", f.points},
                        {"rms_relative_residual", f.rms_relative_residual},
                        {"max_relative_residual", f.max_relative_residual}};
          };
          json j = {{"schema", "fitspeed.linkbench/1"},
                    {"communicator", comm->Describe()},
                    {"ranks", comm->size()},
                    {"nodes", comm->nodes()},
                    {"points", json::array()}};
          for (const SizePoint& p : points) {
            j["points"].push_back({{"bytes", p.bytes},
                                   {"allreduce_s", p.allreduce_s},
                                   {"one_way_s", p.one_way_s},
                                   {"allreduce_repeats", p.allreduce_repeats},
                                   {"pingpong_repeats", p.pingpong_repeats}});
          }
          j["allreduce_fit"] = fit_json(ar);
          j["one_way_fit"] = fit_json(p2p);
          j["links"] = json::parse(links_json);
          std::cout << j.dump(2) << "\n";
          break;
        }
      }
      std::fflush(stdout);
      code = ar.converged && p2p.converged ? 0 : static_cast<int>(ExitCode::kFitUnusable);
    }
    double shared = code;
    comm->Broadcast(&shared, 1);
    return static_cast<int>(shared);
  } catch (const Error& e) {
    std::fflush(stdout);
    std::cerr << fmt::format("fitspeed (rank {} of {}): {}\n", comm->rank(), comm->size(),
                             e.what());
    AbortMpi(static_cast<int>(e.exit_code()));
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
  command->add_option("--max-bytes", o->max_bytes, "Largest message, bytes")
      ->capture_default_str();
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
      ->check(CLI::NonNegativeNumber);
  command
      ->add_option("--fit-min-bytes", o->fit_min_bytes,
                   "Fit only sizes >= this, bytes (the sizes the link will carry: gradient "
                   "buckets are 1-25 MiB); all are still measured and shown")
      ->capture_default_str();
  command->add_option("--fit-max-bytes", o->fit_max_bytes, "Fit only sizes <= this, bytes");
  command->add_option("--confidence", o->confidence, "Level of the fit's intervals")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999));
  command->add_option("--links-out", o->links_out,
                      "Write the calibrated link as a links file (fitspeed.links/1) here");
  AddOutputOption(*command, o->output);
  command->callback([o, &exit_code] {
    if (o->max_repeats < o->min_repeats) {
      throw UsageError(fmt::format("--max-repeats {} < --min-repeats {}", o->max_repeats,
                                   o->min_repeats));
    }
    exit_code = Run(*o);
  });
}

}  // namespace fitspeed::cli
