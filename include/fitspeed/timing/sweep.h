// Measuring a network's real training step on the host CPU at many batch
// sizes: forward, backward (data and weights) and the optimizer update run
// with oneDNN primitives (or the Eigen reference backend), timed the way
// google/benchmark times a benchmark (buffers filled first, warm-up, repeats
// until a time or count budget, median and coefficient of variation).
//
// The result converts to Samples, the type every log reader produces, so
// fitspeed::Fit fits the law v = b/(b/v0 + t) to it:
//
//   fitspeed::Network net = fitspeed::ZooNetwork("resnet18-cifar");
//   fitspeed::SweepOptions options;
//   options.batches = {1, 2, 4, 8, 16, 32, 64};
//   fitspeed::SweepResult sweep = fitspeed::Sweep(net, options);
//   fitspeed::FitResult fit = fitspeed::Fit(sweep.Samples());
#ifndef FITSPEED_TIMING_SWEEP_H_
#define FITSPEED_TIMING_SWEEP_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fitspeed/core/precision.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/output.h"
#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/timing/host.h"

namespace fitspeed {

// Who executes the step: oneDNN primitives, or the Eigen reference backend
// (im2col + GEMM, plain loops), which exists to check oneDNN's results.
enum class Backend { kOnednn, kEigen };
const char* BackendName(Backend backend);       // "onednn", "eigen"
Backend ParseBackend(const std::string& name);  // throws UsageError

// What a progress callback is told.
struct SweepProgress {
  enum class Stage {
    kStarting,  // about to build and measure `batch`
    kMeasured,  // `batch` measured: step_time_s, throughput_sps are set
    kSkipped,   // `batch` skipped: message says why
  };
  Stage stage = Stage::kStarting;
  int64_t batch = 0;
  int index = 0;  // 1-based position of `batch` in the sweep
  int total = 0;  // batches planned; 0 for an automatic sweep
  double step_time_s = 0;
  double throughput_sps = 0;
  int repeats = 0;  // kMeasured: timed steps
  std::string message;
};

struct SweepOptions {
  // Batch sizes to measure, in this order, each in [1, kMaxSweepBatch] (2^30,
  // fitspeed/core/sample.h). Empty: automatic, from 1
  // doubling until the throughput saturates, memory runs out or
  // auto_max_batch is passed.
  std::vector<int64_t> batches;
  // Automatic sweep: the largest batch tried, in [1, kMaxSweepBatch].
  int64_t auto_max_batch = 4096;
  // Automatic sweep: stops after two doublings in a row that each raise the
  // throughput by less than this fraction of the best so far (>= 0).
  double auto_saturation = 0.05;
  // Automatic sweep: batches measured at least, saturated or not (>= 1).
  int auto_min_batches = 4;

  Precision precision = Precision::kFp32;
  Backend backend = Backend::kOnednn;
  Optimizer optimizer = Optimizer::kSgdMomentum;
  // Optimizer settings (torch.optim.SGD / Adam meanings); a small learning rate
  // keeps repeated steps on one synthetic batch far from divergence.
  double learning_rate = 1e-3;  // > 0
  double momentum = 0.9;        // SGD momentum, in [0, 1)
  double beta1 = 0.9;           // Adam, in [0, 1)
  double beta2 = 0.999;         // Adam, in [0, 1)
  double epsilon = 1e-8;        // Adam, > 0

  // Kernel threads (OpenMP, as oneDNN is built here); 0: every available CPU.
  int threads = 0;
  // Steps run before timing (at least this many, and for at least
  // warmup_time_s); >= 0.
  int warmup_steps = 2;
  double warmup_time_s = 0.1;
  // Timed steps: at least min_repeats and until min_time_s of timed steps,
  // at most max_repeats (min_repeats >= 1, max_repeats >= min_repeats).
  int min_repeats = 5;
  int max_repeats = 1000;
  double min_time_s = 0.5;

  // Batches whose estimated step memory exceeds the limit are skipped with a
  // message. 0: memory_fraction of the memory available when the sweep starts.
  double memory_limit_bytes = 0;
  double memory_fraction = 0.8;  // in (0, 1]

  // Seed of the synthetic inputs, labels and initial weights.
  uint64_t seed = 1;
  // Called before and after each batch (e.g. to print a progress line; the
  // library prints nothing itself); may be empty.
  std::function<void(const SweepProgress&)> progress;
};

// Throws UsageError naming the field, its value and the rule it broke.
void ValidateSweepOptions(const SweepOptions& options);

// How many timed repeats a measurement takes (SweepOptions::min_repeats,
// max_repeats, min_time_s; `fitspeed linkbench` times its messages by the same
// rule): at least min_repeats, then more until min_time_s of timed repeats, at
// most max_repeats. The defaults are SweepOptions'.
struct RepeatPolicy {
  int min_repeats = 5;
  int max_repeats = 1000;
  double min_time_s = 0.5;
  // Whether to time another repeat after `repeats` of them took `timed_s` seconds.
  bool WantsMore(int repeats, double timed_s) const;
};

// Time of one layer in one measured batch, per pass (index: Pass), each the
// median over the timed steps; 0 where the layer does not run that pass.
struct LayerTiming {
  std::string name;
  std::string kind;                           // LayerKindName()
  std::array<double, 4> seconds{};            // per pass
  std::array<double, 4> flops{};              // per pass, counted by CountCost()
  std::array<std::string, 4> implementation;  // per pass: "jit:avx2", "eigen", ...
};

// One gradient bucket of a data-parallel step (fitspeed/timing/data_parallel.h).
struct BucketTiming {
  int parameters = 0;  // parameter tensors in it
  double bytes = 0;    // gradient bytes all-reduced
  // Medians over the timed steps: when its all-reduce started (seconds from the
  // start of the backward pass, not counting the time earlier buckets' start
  // and progress calls took) and how long until it was seen complete.
  double ready_s = 0;
  double allreduce_s = 0;
  // Median of a blocking all-reduce of the bucket alone, after the timed steps.
  double bare_allreduce_s = 0;
};

// What data parallelism added to a measured step (medians over timed steps).
struct DataParallelTiming {
  int ranks = 1;
  int64_t per_rank_batch = 0;
  // Sum of the step's operations (forward, backward, update) without any
  // communication: what the step would take on one rank at this batch.
  double compute_s = 0;
  double backward_s = 0;  // backward pass, the all-reduce starts and progress calls included
  // Of backward_s, the time between its operations spent packing buckets,
  // starting their all-reduces and letting them progress: with MPI over
  // shared memory and no progress thread, the CPU moves the data there.
  double in_backward_comm_s = 0;
  double pack_s = 0;  // of in_backward_comm_s, copying gradients into their buckets
  // Waiting for the all-reduces still in flight after the backward pass: the
  // communication the step did not hide.
  double exposed_comm_s = 0;
  // Dividing the summed gradients by the ranks and copying them back from the
  // buckets (after the backward pass; DDP's default, without
  // gradient_as_bucket_view, copies too).
  double average_s = 0;
  // Sum of the buckets' bare all-reduce times: the communication of a step
  // that overlapped nothing.
  double bare_comm_s = 0;
  // What communication cost the step: its median time minus compute_s,
  // pack_s and average_s (starting and progressing all-reduces, waiting for
  // them and for the slower ranks).
  double comm_cost_s = 0;
  // 1 - comm_cost / bare_comm, in [0, 1]: the share of the communication the
  // overlap with the backward pass hid (0 when it cost the step as much as
  // all-reduces one after another would).
  double hidden_fraction() const;
  std::vector<BucketTiming> buckets;  // in the order they became ready
};

struct BatchMeasurement {
  int64_t batch = 0;       // global batch (all ranks)
  double step_time_s = 0;  // median over the timed steps
  double cv = 0;           // standard deviation / mean of the timed steps
  double min_time_s = 0;
  double mean_time_s = 0;
  int repeats = 0;                   // timed steps
  int warmup_steps = 0;              // steps run before timing
  double throughput_sps = 0;         // batch / step_time_s
  double step_flops = 0;             // FLOPs of the step, CountCost().StepFlops(batch)
  double gflops = 0;                 // step_flops / step_time_s / 1e9
  double peak_fraction = 0;          // gflops / HostContext::fp32_peak_gflops
  double memory_estimate_bytes = 0;  // planned before running
  double loss = 0;                   // loss of the last timed step (finite)
  // Involuntary context switches of this process per timed step (getrusage
  // ru_nivcsw): how often the kernel took a CPU from a kernel thread to run
  // another process. Few on an idle machine (about 30/s here); with OpenMP threads on every
  // core, each one stalls the barrier of the primitive that was running.
  double preemptions_per_step = 0;
  // The same per second of timed steps: the rate other processes took CPUs.
  double preemptions_per_s = 0;
  std::array<double, 4> pass_seconds{};  // per pass, sum of the layers' medians
  // One per network layer; in a data-parallel sweep rank 0's at the per-rank batch.
  std::vector<LayerTiming> layers;
  std::optional<DataParallelTiming> data_parallel;  // DataParallelSweep only
};

// Preemptions per second of timed steps above which a measurement counts as
// contended. Measured here (2 vCPUs, 2 threads): idle 30-35/s (timer and
// kernel work, at every batch); one compiler running 60-70/s; two, 240-260/s.
inline constexpr double kBusyPreemptionsPerSecond = 100;

struct SkippedBatch {
  int64_t batch = 0;
  double memory_estimate_bytes = 0;
  std::string reason;
};

struct SweepResult {
  std::string model;  // Network::name
  Precision precision = Precision::kFp32;
  Backend backend = Backend::kOnednn;
  Optimizer optimizer = Optimizer::kSgdMomentum;
  HostContext context;
  double memory_limit_bytes = 0;
  double forward_flops_per_sample = 0;  // CountCost()
  double train_flops_per_sample = 0;
  // Tokens per sample of a network that reads token ids (a sample is one
  // sequence: Network::TokensPerSample()), 0 otherwise; where > 0 the outputs
  // also give tokens/s = samples/s x tokens_per_sample.
  int64_t tokens_per_sample = 0;
  // Data-parallel sweep (DataParallelSweep): ranks, the communicator's
  // description and the bucket limits; 1, "" and 0 otherwise.
  int ranks = 1;
  std::string communicator;
  double bucket_bytes = 0;
  double first_bucket_bytes = 0;
  std::vector<BatchMeasurement> measurements;  // in measuring order
  std::vector<SkippedBatch> skipped;
  std::string stop_reason;  // automatic sweep: why it stopped

  // Batches measured while other processes took the CPUs (preemptions_per_s
  // above kBusyPreemptionsPerSecond); their step times include that time.
  std::vector<int64_t> ContendedBatches() const;
  // A warning saying which batches were measured on a busy CPU and what to do;
  // empty when none was.
  std::string ContentionWarning() const;

  // One Sample per measurement: batch, devices = ranks, step_time_s, label = model,
  // precision, source "sweep:<model>" with line = the measurement's 1-based
  // position, tags backend/threads/optimizer/isa.
  std::vector<Sample> Samples() const;
};

// Memory a step at `batch` allocates, planned without allocating (oneDNN
// primitive descriptors are created, no buffer is), in bytes.
double EstimateStepMemoryBytes(const Network& network, int64_t batch,
                               const SweepOptions& options = {});

// Builds and measures one batch (no memory check). `network` must be finalized.
BatchMeasurement MeasureBatch(const Network& network, int64_t batch,
                              const SweepOptions& options = {});

// Measures every batch of options.batches (or an automatic sequence).
// Throws UsageError for bad options, a network the host backend cannot run, or
// BF16 on a CPU without BF16 kernels.
SweepResult Sweep(const Network& network, const SweepOptions& options = {});

// Writes a sweep and its fit. Table: context, the fit report and the
// per-batch table (step time, samples/s, GFLOPS, % of the FP32 peak), plus the
// per-layer breakdown of the largest batch when `layers` is set. CSV: one row
// per batch. JSON: the fit JSON ("fitspeed.fit/1") plus "measurements",
// "skipped" and "context" (see docs/timing.md).
void WriteSweep(std::ostream& out, const SweepResult& sweep, const FitResult& fit,
                OutputFormat format, bool layers = false);
std::string SweepToJson(const SweepResult& sweep, const FitResult& fit);

// The per-batch table (also used by `fitspeed demo`).
std::string SweepTable(const SweepResult& sweep);

// The demo sweep (`fitspeed demo`): kDemoSweepModel, a small zoo network, at
// batches 1..256 with short time budgets: about 10 s on 2 idle cores.
inline constexpr const char* kDemoSweepModel = "cnn-cifar-small";
SweepOptions DemoSweepOptions();

}  // namespace fitspeed

#endif  // FITSPEED_TIMING_SWEEP_H_
