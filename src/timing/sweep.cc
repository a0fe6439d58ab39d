#include "fitspeed/timing/sweep.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "core/median.h"
#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"
#include "fitspeed/timing/data_parallel.h"
#include "timing/executor.h"
#include "timing/gradient_sync.h"

namespace fitspeed {

namespace {

using timing::kPasses;
using timing::ThreadScope;

int ResolveThreads(const SweepOptions& options) {
  return options.threads > 0 ? options.threads : AvailableCpus();
}

void Require(bool ok, const char* field, double value, const char* rule) {
  if (!ok) throw UsageError(fmt::format("SweepOptions.{} = {}: {}", field, value, rule));
}

// Involuntary context switches of the whole process so far.
double InvoluntarySwitches() {
  rusage usage{};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<double>(usage.ru_nivcsw) : 0.0;
}

std::string Gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1u << 30)); }

// A data-parallel sweep's ranks and options; null in a plain sweep.
struct DataParallelRun {
  Communicator& comm;
  DataParallelOptions options;
};

// Rank 0's value of `mine`, on every rank of a data-parallel run.
bool RankZeroDecides(const DataParallelRun* dp, bool mine) {
  if (dp == nullptr) return mine;
  double flag = mine ? 1 : 0;
  dp->comm.Broadcast(&flag, 1);
  return flag != 0;
}

// Builds the step, warms it up and times it (google/benchmark's method:
// https://github.com/google/benchmark/blob/main/docs/user_guide.md#runtime-and-reporting-considerations).
// Data-parallel: each rank runs its share of `batch` and the loops run as
// many steps as rank 0 decides, so that every rank makes the same collectives.
BatchMeasurement Measure(const Network& network, int64_t batch, const SweepOptions& options,
                         const NetworkCost& cost, double peak_gflops,
                         const DataParallelRun* dp = nullptr) {
  using Clock = std::chrono::steady_clock;
  const int ranks = dp != nullptr ? dp->comm.size() : 1;
  const int64_t local_batch = batch / ranks;
  std::unique_ptr<timing::StepExecutor> step =
      timing::MakeExecutor(options.backend, network,
                           timing::MakeStepConfig(options, local_batch, ResolveThreads(options)));
  std::unique_ptr<timing::GradientSync> sync;
  if (dp != nullptr) {
    const timing::RankShare share =
        timing::MakeRankShare(network, batch, dp->comm.rank(), ranks, options.seed);
    step->SetInput(share.input, share.labels);
    sync = std::make_unique<timing::GradientSync>(*step, dp->comm, dp->options);
  }
  auto run_step = [&] { return sync ? sync->Step() : step->Step(); };
  BatchMeasurement m;
  m.batch = batch;

  const Clock::time_point warm_start = Clock::now();
  while (RankZeroDecides(dp, m.warmup_steps < options.warmup_steps ||
                                 std::chrono::duration<double>(Clock::now() - warm_start).count() <
                                     options.warmup_time_s)) {
    run_step();
    ++m.warmup_steps;
  }

  const size_t layers = static_cast<size_t>(network.size());
  std::vector<double> step_times;
  std::vector<std::vector<double>> op_times(layers * kPasses);
  std::vector<double> backward_times, exposed_times, average_times, in_backward_times, pack_times,
      compute_times;
  std::vector<std::vector<double>> ready_times, allreduce_times;
  if (sync) {
    ready_times.resize(sync->buckets().size());
    allreduce_times.resize(sync->buckets().size());
  }
  double total = 0;
  const double switches_before = InvoluntarySwitches();
  const RepeatPolicy repeats{options.min_repeats, options.max_repeats, options.min_time_s};
  while (RankZeroDecides(dp, repeats.WantsMore(static_cast<int>(step_times.size()), total))) {
    step->ResetTimes();
    const Clock::time_point start = Clock::now();
    m.loss = run_step();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    step_times.push_back(seconds);
    total += seconds;
    for (size_t l = 0; l < layers; ++l) {
      for (int p = 0; p < kPasses; ++p) op_times[l * kPasses + p].push_back(step->times()[l][p]);
    }
    if (sync) {
      const timing::GradientSync::StepTimes& t = sync->last();
      backward_times.push_back(t.backward_s);
      exposed_times.push_back(t.exposed_s);
      average_times.push_back(t.average_s);
      in_backward_times.push_back(t.in_backward_s);
      pack_times.push_back(t.pack_s);
      double compute = 0;
      for (const auto& layer : step->times()) {
        for (double x : layer) compute += x;
      }
      compute_times.push_back(compute);
      for (size_t b = 0; b < t.ready_s.size(); ++b) {
        ready_times[b].push_back(t.ready_s[b]);
        allreduce_times[b].push_back(t.allreduce_s[b]);
      }
    }
  }
  const double switches = InvoluntarySwitches() - switches_before;
  if (sync) {
    DataParallelTiming d;
    d.ranks = ranks;
    d.per_rank_batch = local_batch;
    d.backward_s = Median(backward_times);
    d.exposed_comm_s = Median(exposed_times);
    d.average_s = Median(average_times);
    d.in_backward_comm_s = Median(in_backward_times);
    d.pack_s = Median(pack_times);
    d.compute_s = Median(compute_times);
    const std::vector<double> bare = sync->BareAllReduceTimes(dp->options.bare_repeats);
    for (size_t b = 0; b < sync->buckets().size(); ++b) {
      BucketTiming bt;
      bt.parameters = static_cast<int>(sync->buckets()[b].params.size());
      bt.bytes = sync->buckets()[b].bytes;
      bt.ready_s = Median(ready_times[b]);
      bt.allreduce_s = Median(allreduce_times[b]);
      bt.bare_allreduce_s = bare[b];
      d.bare_comm_s += bt.bare_allreduce_s;
      d.buckets.push_back(bt);
    }
    m.data_parallel = std::move(d);
  }

  m.repeats = static_cast<int>(step_times.size());
  m.preemptions_per_step = switches / m.repeats;
  m.preemptions_per_s = total > 0 ? switches / total : 0.0;
  m.step_time_s = Median(step_times);
  if (m.data_parallel) {
    DataParallelTiming& d = *m.data_parallel;
    d.comm_cost_s = std::max(0.0, m.step_time_s - d.compute_s - d.pack_s - d.average_s);
  }
  m.min_time_s = *std::min_element(step_times.begin(), step_times.end());
  m.mean_time_s = total / m.repeats;
  double squares = 0;
  for (double t : step_times) squares += (t - m.mean_time_s) * (t - m.mean_time_s);
  m.cv = m.repeats > 1 ? std::sqrt(squares / (m.repeats - 1)) / m.mean_time_s : 0.0;
  m.throughput_sps = static_cast<double>(batch) / m.step_time_s;
  m.step_flops = cost.StepFlops(static_cast<double>(batch));
  m.gflops = m.step_flops / m.step_time_s / 1e9;
  m.peak_fraction = peak_gflops > 0 ? m.gflops / peak_gflops : 0.0;

  for (size_t l = 0; l < layers; ++l) {
    const Layer& layer = network.layer(static_cast<int>(l));
    LayerTiming t;
    t.name = layer.name;
    t.kind = LayerKindName(layer.kind);
    for (int p = 0; p < kPasses; ++p) {
      t.seconds[p] = Median(op_times[l * kPasses + p]);
      t.flops[p] = cost.layers[l].pass(kAllPasses[p]).flops.At(static_cast<double>(local_batch));
      t.implementation[p] = step->implementations()[l][p];
      m.pass_seconds[p] += t.seconds[p];
    }
    m.layers.push_back(std::move(t));
  }
  return m;
}

}  // namespace

const char* BackendName(Backend backend) { return backend == Backend::kEigen ? "eigen" : "onednn"; }

Backend ParseBackend(const std::string& name) {
  if (name == "onednn") return Backend::kOnednn;
  if (name == "eigen") return Backend::kEigen;
  throw UsageError(fmt::format("backend '{}': expected onednn or eigen", name));
}

bool RepeatPolicy::WantsMore(int repeats, double timed_s) const {
  return repeats < min_repeats || (timed_s < min_time_s && repeats < max_repeats);
}

void ValidateSweepOptions(const SweepOptions& o) {
  switch (o.precision) {
    case Precision::kFp32:
    case Precision::kMixed:
      break;
    case Precision::kTf32:
    case Precision::kFp8:
      throw UsageError(
          fmt::format("SweepOptions.precision = {}: the host cannot run it (it runs fp32, bf16)",
                      PrecisionName(o.precision)));
  }
  for (int64_t b : o.batches) {
    if (b < 1 || b > kMaxSweepBatch) {
      throw UsageError(fmt::format("SweepOptions.batches[] = {}: every batch must be in [1, {}]", b,
                                   kMaxSweepBatch));
    }
  }
  if (o.auto_max_batch < 1 || o.auto_max_batch > kMaxSweepBatch) {
    throw UsageError(fmt::format("SweepOptions.auto_max_batch = {}: must be in [1, {}]",
                                 o.auto_max_batch, kMaxSweepBatch));
  }
  Require(std::isfinite(o.auto_saturation) && o.auto_saturation >= 0, "auto_saturation",
          o.auto_saturation, "must be finite and >= 0");
  Require(o.auto_min_batches >= 1, "auto_min_batches", o.auto_min_batches, "must be >= 1");
  Require(std::isfinite(o.learning_rate) && o.learning_rate > 0, "learning_rate", o.learning_rate,
          "must be finite and > 0");
  Require(o.momentum >= 0 && o.momentum < 1, "momentum", o.momentum, "must be in [0, 1)");
  Require(o.beta1 >= 0 && o.beta1 < 1, "beta1", o.beta1, "must be in [0, 1)");
  Require(o.beta2 >= 0 && o.beta2 < 1, "beta2", o.beta2, "must be in [0, 1)");
  Require(std::isfinite(o.epsilon) && o.epsilon > 0, "epsilon", o.epsilon,
          "must be finite and > 0");
  Require(o.threads >= 0 && o.threads <= 4096, "threads", o.threads,
          "must be in [0, 4096] (0: every available CPU)");
  Require(o.warmup_steps >= 0, "warmup_steps", o.warmup_steps, "must be >= 0");
  Require(std::isfinite(o.warmup_time_s) && o.warmup_time_s >= 0, "warmup_time_s", o.warmup_time_s,
          "must be finite and >= 0");
  Require(o.min_repeats >= 1, "min_repeats", o.min_repeats, "must be >= 1");
  Require(o.max_repeats >= o.min_repeats, "max_repeats", o.max_repeats, "must be >= min_repeats");
  Require(std::isfinite(o.min_time_s) && o.min_time_s >= 0, "min_time_s", o.min_time_s,
          "must be finite and >= 0");
  Require(std::isfinite(o.memory_limit_bytes) && o.memory_limit_bytes >= 0, "memory_limit_bytes",
          o.memory_limit_bytes, "must be finite and >= 0 (0: memory_fraction of available)");
  Require(o.memory_fraction > 0 && o.memory_fraction <= 1, "memory_fraction", o.memory_fraction,
          "must be in (0, 1]");
}

std::vector<int64_t> SweepResult::ContendedBatches() const {
  std::vector<int64_t> batches;
  for (const BatchMeasurement& m : measurements) {
    if (m.preemptions_per_s > kBusyPreemptionsPerSecond) batches.push_back(m.batch);
  }
  return batches;
}

std::string SweepResult::ContentionWarning() const {
  const std::vector<int64_t> batches = ContendedBatches();
  if (batches.empty()) return "";
  double worst = 0;
  for (const BatchMeasurement& m : measurements) worst = std::max(worst, m.preemptions_per_s);
  return fmt::format(
      "the CPU was busy while measuring batch{} {}: other processes preempted the kernel threads "
      "up to {:.3g} times per second (about 30/s on an idle machine), and every preemption stalls "
      "a "
      "multi-threaded primitive. These "
      "step times include other processes' time (worst at small batches, where it reads as fixed "
      "cost t). Measure on an idle machine, or with fewer --threads than CPUs.",
      batches.size() == 1 ? "" : "es", fmt::join(batches, ", "), worst);
}

std::vector<Sample> SweepResult::Samples() const {
  std::vector<Sample> samples;
  for (const BatchMeasurement& m : measurements) {
    Sample s;
    s.source = "sweep:" + model;
    s.line = static_cast<int>(samples.size()) + 1;
    s.batch = static_cast<double>(m.batch);
    s.devices = ranks;
    s.label = model;
    s.precision = PrecisionName(precision, PrecisionContext::kHost);
    s.step_time_s = m.step_time_s;
    // A sequence model's sample is one sequence: the fit reports tokens/s too.
    if (tokens_per_sample > 0) s.seq_len = static_cast<double>(tokens_per_sample);
    s.tags = TagMap{{"backend", BackendName(backend)},
                    {"optimizer", OptimizerName(optimizer)},
                    {"threads", std::to_string(context.threads)},
                    {"isa", context.isa}};
    samples.push_back(std::move(s));
  }
  return samples;
}

double EstimateStepMemoryBytes(const Network& network, int64_t batch, const SweepOptions& options) {
  // Scratchpads depend on the thread count: plan with the threads that will run.
  timing::StepConfig config = timing::MakeStepConfig(options, batch, ResolveThreads(options));
  config.dry_run = true;
  return timing::MakeExecutor(options.backend, network, config)->allocated_bytes();
}

BatchMeasurement MeasureBatch(const Network& network, int64_t batch, const SweepOptions& options) {
  ValidateSweepOptions(options);
  const int threads = ResolveThreads(options);
  ThreadScope scope(threads);
  const double peak = DescribeHost(threads).fp32_peak_gflops;
  BatchMeasurement m =
      Measure(network, batch, options, CountCost(network, options.optimizer), peak);
  m.memory_estimate_bytes = EstimateStepMemoryBytes(network, batch, options);
  return m;
}

namespace {

// A sweep, plain (dp null) or data-parallel.
SweepResult RunSweep(const Network& network, const SweepOptions& options,
                     const DataParallelRun* dp) {
  ValidateSweepOptions(options);
  timing::StepConfig probe = timing::MakeStepConfig(options, 1);
  timing::CheckExecutable(network, probe);
  if (options.backend == Backend::kOnednn) timing::RequirePrecisionSupported(options.precision);
  if (options.backend == Backend::kEigen && options.precision != Precision::kFp32) {
    throw UsageError("the eigen backend runs fp32 only");
  }

  const int ranks = dp != nullptr ? dp->comm.size() : 1;
  const int local_ranks = dp != nullptr ? dp->comm.local_size() : 1;
  const int threads = ResolveThreads(options);
  ThreadScope scope(threads);
  SweepResult result;
  result.model = network.name;
  result.precision = options.precision;
  result.backend = options.backend;
  result.optimizer = options.optimizer;
  result.context = DescribeHost(threads);
  result.memory_limit_bytes = options.memory_limit_bytes > 0
                                  ? options.memory_limit_bytes
                                  : options.memory_fraction * result.context.memory_available_bytes;
  if (result.memory_limit_bytes <= 0) {
    result.memory_limit_bytes = std::numeric_limits<double>::infinity();
  }
  if (dp != nullptr) {
    dp->comm.Broadcast(&result.memory_limit_bytes, 1);  // one decision on every rank
    result.ranks = ranks;
    result.communicator = dp->comm.Describe();
    result.bucket_bytes = dp->options.bucket_bytes;
    result.first_bucket_bytes = dp->options.first_bucket_bytes;
  }
  const NetworkCost cost = CountCost(network, options.optimizer);
  result.forward_flops_per_sample = cost.ForwardFlopsPerSample();
  result.train_flops_per_sample = cost.TrainFlopsPerSample();
  result.tokens_per_sample = network.TokensPerSample();

  auto report = [&](SweepProgress::Stage stage, int64_t batch, int index, int total,
                    const std::string& message) {
    if (!options.progress) return;
    SweepProgress p;
    p.stage = stage;
    p.batch = batch;
    p.index = index;
    p.total = total;
    p.message = message;
    if (stage == SweepProgress::Stage::kMeasured) {
      p.step_time_s = result.measurements.back().step_time_s;
      p.throughput_sps = result.measurements.back().throughput_sps;
      p.repeats = result.measurements.back().repeats;
    }
    options.progress(p);
  };
  auto skip = [&](int64_t batch, double estimate, const std::string& reason, int index, int total) {
    result.skipped.push_back({batch, estimate, reason});
    report(SweepProgress::Stage::kSkipped, batch, index, total,
           fmt::format("batch {} skipped: {}", batch, reason));
  };
  // Measures `batch` unless its memory estimate is over the limit; false when skipped.
  auto measure = [&](int64_t batch, int index, int total) {
    if (batch % ranks != 0) {
      skip(batch, 0, fmt::format("does not divide evenly over {} ranks", ranks), index, total);
      return true;  // not a memory limit: an automatic sweep goes on
    }
    // The ranks of a node share its memory.
    const double estimate = EstimateStepMemoryBytes(network, batch / ranks, options) * local_ranks;
    if (estimate > result.memory_limit_bytes) {
      skip(batch, estimate,
           fmt::format("needs about {} of memory{}, over the limit of {}", Gib(estimate),
                       local_ranks > 1 ? fmt::format(" ({} ranks on a node)", local_ranks) : "",
                       Gib(result.memory_limit_bytes)),
           index, total);
      return false;
    }
    report(SweepProgress::Stage::kStarting, batch, index, total, "");
    BatchMeasurement m =
        Measure(network, batch, options, cost, result.context.fp32_peak_gflops, dp);
    if (dp != nullptr) {
      // Rank 0's pace decides an automatic sweep on every rank.
      dp->comm.Broadcast(&m.step_time_s, 1);
      m.throughput_sps = static_cast<double>(batch) / m.step_time_s;
    }
    m.memory_estimate_bytes = estimate;
    result.measurements.push_back(std::move(m));
    report(SweepProgress::Stage::kMeasured, batch, index, total, "");
    return true;
  };

  if (!options.batches.empty()) {
    const int total = static_cast<int>(options.batches.size());
    for (int i = 0; i < total; ++i) measure(options.batches[static_cast<size_t>(i)], i + 1, total);
    return result;
  }
  // Automatic: doubling from one sample per rank until saturation, the memory
  // limit or auto_max_batch.
  double best = 0;
  int flat = 0, index = 0;
  for (int64_t batch = ranks;; batch *= 2) {
    if (batch > options.auto_max_batch) {
      result.stop_reason =
          fmt::format("reached the largest batch allowed ({})", options.auto_max_batch);
      break;
    }
    if (!measure(batch, ++index, 0)) {
      result.stop_reason = fmt::format("batch {} would exceed the memory limit", batch);
      break;
    }
    const double throughput = result.measurements.back().throughput_sps;
    flat = throughput > best * (1 + options.auto_saturation) ? 0 : flat + 1;
    best = std::max(best, throughput);
    if (flat >= 2 && static_cast<int>(result.measurements.size()) >= options.auto_min_batches) {
      result.stop_reason = fmt::format(
          "throughput saturated: two doublings each gained less than {:.0f}% (best {:.4g} "
          "samples/s)",
          100 * options.auto_saturation, best);
      break;
    }
  }
  return result;
}

}  // namespace

SweepResult Sweep(const Network& network, const SweepOptions& options) {
  return RunSweep(network, options, nullptr);
}

SweepResult DataParallelSweep(const Network& network, const SweepOptions& options,
                              Communicator& comm, const DataParallelOptions& dp) {
  ValidateDataParallelOptions(dp);
  SweepOptions per_rank = options;
  if (per_rank.threads == 0) {
    // The ranks of a node share its CPUs: an equal share, and no more than
    // the launcher's binding leaves this rank (mpirun binds each rank to a
    // core for 2 ranks, to a socket beyond, where ranks share the socket).
    const int node_cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    per_rank.threads =
        std::max(1, std::min(AvailableCpus(), node_cpus / std::max(1, comm.local_size())));
  }
  const DataParallelRun run{comm, dp};
  return RunSweep(network, per_rank, &run);
}

SweepOptions DemoSweepOptions() {
  SweepOptions options;
  options.batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  options.warmup_steps = 1;
  options.warmup_time_s = 0.05;
  options.min_repeats = 3;
  options.min_time_s = 0.5;
  return options;
}

}  // namespace fitspeed
