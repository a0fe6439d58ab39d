// `fitspeed sweep MODEL --data-parallel`: the host sweep on every rank of an
// MPI job, gradients all-reduced in buckets overlapped with the backward
// pass (fitspeed/timing/data_parallel.h). Rank 0 writes the report; with
// --links, a table of the same steps with their communication modeled from
// the links file (fitspeed linkbench) follows.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "command.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/timing/data_parallel.h"
#include "mpi/mpi_communicator.h"

namespace fitspeed::cli {

namespace {

constexpr double kMib = 1024.0 * 1024.0;

// The communication model of a links file: its "devices" link within a node,
// its "network" link between nodes (hierarchical all-reduce when it has
// both). A file with only a network link (linkbench across nodes) models a
// ring at its pace.
CommModel CommModelFromLinks(const std::string& path, int devices_per_node) {
  const LinksFile file = ReadLinksJsonFile(path);
  CommModel comm;
  comm.devices_per_node = devices_per_node;  // 0: every rank in one node
  const DeviceLink* intra = file.FindLink("devices");
  const DeviceLink* inter = file.FindLink("network");
  if (intra) comm.intra_node = *intra;
  if (inter) comm.inter_node = *inter;
  if (!intra && !inter) {
    throw DataError(path, 0, "links",
                    "no link with \"connects\": \"devices\" or \"network\" (the ranks' "
                    "all-reduce link)");
  }
  if (!intra) {
    comm.intra_node = comm.inter_node;
  } else if (inter) {
    comm.algorithm = AllReduceAlgorithm::kHierarchical;
  }
  return comm;
}

struct ModeledRow {
  const BatchMeasurement* measured;
  ModeledDataParallelStep modeled;
};

std::string ModeledTable(const std::vector<ModeledRow>& rows, int run_ranks) {
  const bool same = rows.front().modeled.ranks == run_ranks;
  std::vector<std::string> header{"batch_per_rank", "ranks",     "batch",
                                  "compute_ms",     "copies_ms", "modeled_comm_ms",
                                  "overlapped_ms",  "serial_ms"};
  if (same) {
    for (const char* h : {"measured_ms", "overlapped_err_%", "serial_err_%"}) header.push_back(h);
  }
  TextTable table(header);
  for (const ModeledRow& r : rows) {
    const ModeledDataParallelStep& m = r.modeled;
    std::vector<std::string> row{std::to_string(r.measured->data_parallel->per_rank_batch),
                                 std::to_string(m.ranks),
                                 std::to_string(m.global_batch),
                                 FormatSig(m.compute_s * 1e3, 4),
                                 FormatSig(m.copies_s * 1e3, 3),
                                 FormatSig(m.timeline.comm_s * 1e3, 3),
                                 FormatSig(m.overlapped_step_s * 1e3, 4),
                                 FormatSig(m.serial_step_s * 1e3, 4)};
    if (same) {
      const double measured = r.measured->step_time_s;
      row.push_back(FormatSig(measured * 1e3, 4));
      row.push_back(FormatSig((m.overlapped_step_s / measured - 1) * 100, 3));
      row.push_back(FormatSig((m.serial_step_s / measured - 1) * 100, 3));
    }
    table.AddRow(row);
  }
  return table.Render();
}

nlohmann::ordered_json ModeledJson(const std::vector<ModeledRow>& rows, int run_ranks,
                                   const std::string& links) {
  nlohmann::ordered_json j = {{"links", links}, {"steps", nlohmann::ordered_json::array()}};
  for (const ModeledRow& r : rows) {
    const ModeledDataParallelStep& m = r.modeled;
    nlohmann::ordered_json row = {{"per_rank_batch", r.measured->data_parallel->per_rank_batch},
                                  {"ranks", m.ranks},
                                  {"batch", m.global_batch},
                                  {"compute_s", m.compute_s},
                                  {"copies_s", m.copies_s},
                                  {"modeled_comm_s", m.timeline.comm_s},
                                  {"modeled_exposed_s", m.timeline.exposed_s},
                                  {"overlapped_step_s", m.overlapped_step_s},
                                  {"serial_step_s", m.serial_step_s}};
    if (m.ranks == run_ranks) {
      row["measured_step_s"] = r.measured->step_time_s;
      row["overlapped_relative_error"] = m.overlapped_step_s / r.measured->step_time_s - 1;
      row["serial_relative_error"] = m.serial_step_s / r.measured->step_time_s - 1;
    }
    j["steps"].push_back(row);
  }
  return j;
}

// The report of rank 0; returns the exit code.
int Report(const Network& network, const SweepResult& result, const DataParallelCliOptions& dp,
           const FitOptions& fit_options, OutputFormat format, bool layers,
           const std::string& plot_path, int local_size, int nodes) {
  const bool fittable = result.measurements.size() >= 2;
  const FitResult fit = fittable ? Fit(result.Samples(), fit_options) : FitResult();
  std::vector<ModeledRow> rows;
  if (!dp.links.empty()) {
    // A run on one node models its ranks on one node.
    const CommModel comm = CommModelFromLinks(dp.links, nodes > 1 ? local_size : 0);
    const int ranks = dp.model_ranks > 0 ? dp.model_ranks : result.ranks;
    for (const BatchMeasurement& m : result.measurements) {
      rows.push_back({&m, ModelMeasuredDataParallelStep(m, comm, ranks)});
    }
  }
  if (format == OutputFormat::kJson && !rows.empty()) {
    std::ostringstream text;
    WriteSweep(text, result, fit, format, layers);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.str());
    j["modeled_communication"] = ModeledJson(rows, result.ranks, dp.links);
    std::cout << j.dump(2) << "\n";
  } else {
    WriteSweep(std::cout, result, fit, format, layers);
  }
  if (format == OutputFormat::kTable && !rows.empty()) {
    std::cout << fmt::format(
                     "\nthe same steps with the all-reduces modeled from {} on {} rank{}: "
                     "measured compute and gradient copies, each bucket's all-reduce from the "
                     "links, from its measured ready time, one at a time; overlapped: only what "
                     "outlasts the backward pass counts (communication beside the compute, as "
                     "NCCL on a GPU); serial: all of it (the ranks' CPUs move the data, as MPI "
                     "over shared memory does):\n",
                     dp.links, rows.front().modeled.ranks,
                     rows.front().modeled.ranks == 1 ? "" : "s")
              << ModeledTable(rows, result.ranks);
  } else if (!rows.empty() && format == OutputFormat::kCsv) {
    std::cerr << "fitspeed: the modeled communication (--links) is in table and json output\n";
  }
  if (fittable && !plot_path.empty()) {
    WriteFitPlot(plot_path, fit,
                 fmt::format("{} data-parallel on {} rank{}", network.name, result.ranks,
                             result.ranks == 1 ? "" : "s"));
  }
  return SweepFitExitCode(result.measurements.size(), result.skipped.empty(), fit);
}

}  // namespace

void AddDataParallelOptions(CLI::App& command, DataParallelCliOptions& o) {
  CLI::Option* flag = command.add_flag(
      "--data-parallel", o.enabled,
      "Run on every rank of an MPI job (mpirun -np N fitspeed sweep MODEL --data-parallel): each "
      "rank trains on its 1/N of every batch, the gradients are averaged by MPI all-reduce in "
      "buckets started as soon as the backward pass finishes them (PyTorch DDP's method), rank "
      "0 prints the report with the exposed communication; batches are global. Threads default "
      "to the node's CPUs shared between its ranks");
  command
      .add_option("--bucket-mb", o.bucket_mib,
                  "With --data-parallel or --device: gradient bucket size, MiB (DDP's "
                  "bucket_cap_mb)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--first-bucket-mb", o.first_bucket_mib,
                  "With --data-parallel or --device: size of the first bucket, MiB (DDP: 1), so "
                  "the first all-reduce starts early")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      .add_option("--model-ranks", o.model_ranks,
                  "With --data-parallel --links: the ranks the modeled table predicts, at the "
                  "same per-rank batch (e.g. 2 from a 1-rank run); default: the run's own")
      ->check(CLI::Range(1, 1 << 20))
      ->needs(flag);
}

int RunDataParallelSweep(const Network& network, const SweepOptions& options,
                         const DataParallelCliOptions& dp, const FitOptions& fit_options,
                         OutputFormat format, bool layers, const std::string& plot_path) {
  DataParallelOptions dpo;
  dpo.bucket_bytes = dp.bucket_mib * kMib;
  dpo.first_bucket_bytes = dp.first_bucket_mib * kMib;
  ValidateDataParallelOptions(dpo);
  ValidateSweepOptions(options);
  // A bad links file fails before any rank measures.
  if (!dp.links.empty()) CommModelFromLinks(dp.links, 0);
  if (dp.model_ranks > 0 && dp.links.empty()) {
    throw UsageError("--model-ranks needs --links FILE (the links to model the all-reduce with)");
  }

  const bool launched = LaunchedByMpi();  // before MPI_Init, which sets Open MPI's variables
  std::unique_ptr<Communicator> comm = InitMpi(nullptr, nullptr);
  const bool root = comm->rank() == 0;
  try {
    if (root && comm->size() == 1 && !launched) {
      std::cerr << "fitspeed: --data-parallel without mpirun: 1 rank (start N with "
                   "`mpirun -np N fitspeed sweep ... --data-parallel`)\n";
    }
    SweepOptions run = options;
    std::shared_ptr<SweepProgressLine> progress;
    if (root) {
      progress = std::make_shared<SweepProgressLine>(network.name);
      run.progress = [progress](const SweepProgress& p) { (*progress)(p); };
    }
    const SweepResult result = DataParallelSweep(network, run, *comm, dpo);
    progress.reset();
    int code = 0;
    if (root) {
      code = Report(network, result, dp, fit_options, format, layers, plot_path, comm->local_size(),
                    comm->nodes());
      std::fflush(stdout);
    }
    double shared = code;
    comm->Broadcast(&shared, 1);  // every rank exits alike
    return static_cast<int>(shared);
  } catch (const Error& e) {
    if (comm->size() == 1) throw;
    std::fflush(stdout);
    std::cerr << fmt::format("fitspeed (rank {} of {}): {}\n", comm->rank(), comm->size(),
                             e.what());
    AbortMpi(static_cast<int>(ExitCodeOf(e)));
  }
}

}  // namespace fitspeed::cli
