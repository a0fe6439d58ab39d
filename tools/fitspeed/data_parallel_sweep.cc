// `fitspeed sweep MODEL --data-parallel`: the host sweep on every rank of an
// MPI job, gradients all-reduced in buckets overlapped with the backward
// pass (fitspeed/timing/data_parallel.h). Rank 0 writes the report; with
// --links, a table of the same steps with their communication modeled from
// the links file (fitspeed linkbench) follows.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "command.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/scenario/sweep.h"
#include "fitspeed/timing/data_parallel.h"
#include "mpi/mpi_communicator.h"

namespace fitspeed::cli {

namespace {

constexpr double kMib = 1024.0 * 1024.0;

// The communication model of the links file `path` (CommModelFromLinks).
CommModel ReadCommModel(const std::string& path, int devices_per_node) {
  return CommModelFromLinks(ReadLinksJsonFile(path), path, devices_per_node);
}

// The report of rank 0; returns the exit code.
int Report(const Network& network, const SweepResult& result, const DataParallelCliOptions& dp,
           const FitOptions& fit_options, OutputFormat format, bool layers,
           const std::string& plot_path, int local_size, int nodes) {
  const bool fittable = result.measurements.size() >= 2;
  const FitResult fit = fittable ? Fit(result.Samples(), fit_options) : FitResult();
  std::optional<ModeledCommunication> modeled;
  if (!dp.links.empty()) {
    // A run on one node models its ranks on one node.
    const CommModel comm = ReadCommModel(dp.links, nodes > 1 ? local_size : 0);
    const int ranks = dp.model_ranks > 0 ? dp.model_ranks : result.ranks;
    modeled = ModelCommunication(result, comm, ranks, dp.links);
  }
  WriteDataParallelSweep(std::cout, result, fit, format, layers, modeled ? &*modeled : nullptr);
  if (modeled && !modeled->steps.empty() && format == OutputFormat::kCsv) {
    std::cerr << "fitspeed: the modeled communication (--links) is in table and json output\n";
  }
  if (fittable && !plot_path.empty()) {
    WriteFitPlot(plot_path, fit,
                 fmt::format("{} data-parallel on {} rank{}", network.name, result.ranks,
                             result.ranks == 1 ? "" : "s"));
  }
  HostSweepAnswer judged;  // only its usable, problem and notes (JudgeSweep)
  JudgeSweep(result.measurements.size(), result.skipped.empty(), fit, judged);
  for (const std::string& note : judged.notes) std::cerr << "fitspeed: " << note << "\n";
  if (judged.usable) return 0;
  std::cerr << "fitspeed: " << judged.problem << "\n";
  return static_cast<int>(ExitCode::kFitUnusable);
}

}  // namespace

int RunDataParallelSweep(const Network& network, const SweepOptions& options,
                         const DataParallelCliOptions& dp, const FitOptions& fit_options,
                         OutputFormat format, bool layers, const std::string& plot_path,
                         const std::string& progress_mode) {
  DataParallelOptions dpo;
  dpo.bucket_bytes = dp.bucket_mib * kMib;
  dpo.first_bucket_bytes = dp.first_bucket_mib * kMib;
  ValidateDataParallelOptions(dpo);
  ValidateSweepOptions(options);
  // A bad links file fails before any rank measures.
  if (!dp.links.empty()) ReadCommModel(dp.links, 0);
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
    // Rank 0 shows the progress; the other ranks report nothing.
    ProgressLine progress(root ? progress_mode : "never");
    if (root) run.progress = progress.SweepCallback(network.name);
    const SweepResult result = DataParallelSweep(network, run, *comm, dpo);
    progress.Clear();
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
