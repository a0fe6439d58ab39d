// Data parallelism measured for real: every rank of a job runs the timing
// layer's training step on its share of the global batch, and the gradients
// are averaged with an all-reduce as PyTorch's DistributedDataParallel does
// it (Li et al., "PyTorch Distributed", VLDB 2020): parameters in the order
// their gradients become ready in the backward pass, packed into buckets of
// bucket_bytes (the first one first_bucket_bytes), each bucket's all-reduce
// started as soon as its last gradient is ready, so communication overlaps the
// rest of the backward pass; after the backward pass the step waits for the
// buckets still in flight, divides by the rank count and updates.
//
// The ranks and their collectives come through Communicator: MPI
// (mpi/mpi_communicator.h, library fitspeed_mpi) or this process
// alone (MakeSelfCommunicator).
//
//   std::unique_ptr<fitspeed::Communicator> comm = fitspeed::InitMpi(&argc, &argv);
//   fitspeed::SweepResult sweep = fitspeed::DataParallelSweep(net, options, *comm);
//   // rank 0: sweep.Samples() have devices = ranks; fit them with a 1-rank sweep.
#ifndef FITSPEED_TIMING_DATA_PARALLEL_H_
#define FITSPEED_TIMING_DATA_PARALLEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fitspeed/core/comm.h"
#include "fitspeed/model/network.h"
#include "fitspeed/timing/sweep.h"

namespace fitspeed {

// The ranks of a job and the collectives the timing layer uses. Every rank
// must make the same calls in the same order.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Ranks on this rank's node (they share its CPUs and memory) and nodes.
  virtual int local_size() const = 0;
  virtual int nodes() const = 0;
  // One line: the library, its version, ranks and nodes.
  virtual std::string Describe() const = 0;

  // A non-blocking in-place sum over every rank, in flight.
  class Pending {
   public:
    virtual ~Pending() = default;
    virtual bool Test() = 0;  // lets it progress; true once complete
    virtual void Wait() = 0;
  };
  virtual std::unique_ptr<Pending> StartSum(float* data, int64_t count) = 0;
  virtual std::unique_ptr<Pending> StartSum(double* data, int64_t count) = 0;
  // Blocking in-place sum over every rank.
  virtual void Sum(float* data, int64_t count) = 0;
  virtual void Sum(double* data, int64_t count) = 0;
  // Rank 0's `count` values to every rank.
  virtual void Broadcast(double* values, int count) = 0;
  virtual void Barrier() = 0;
  // Point to point between rank 0 and `peer`: rank 0 sends `bytes` and waits
  // for them back, `peer` receives and returns them; other ranks do nothing.
  virtual void PingPong(int peer, char* buffer, int64_t bytes) = 0;
};

// This process alone: one rank, collectives that change nothing.
std::unique_ptr<Communicator> MakeSelfCommunicator();

// PyTorch DDP's defaults: bucket_cap_mb = 25 (25 MiB) and
// dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB for the first bucket, which closes
// early so that communication starts soon after the backward pass does.
inline constexpr double kDefaultBucketBytes = 25.0 * 1024 * 1024;
inline constexpr double kDefaultFirstBucketBytes = 1024.0 * 1024;

struct DataParallelOptions {
  double bucket_bytes = kDefaultBucketBytes;             // > 0
  double first_bucket_bytes = kDefaultFirstBucketBytes;  // > 0
  // Repeats of the blocking all-reduce of each bucket alone (BucketTiming::
  // bare_allreduce_s), median taken; >= 1.
  int bare_repeats = 5;
};
void ValidateDataParallelOptions(const DataParallelOptions& options);  // throws UsageError

// Gradients of `bytes` each, in the order they become ready, assigned to
// buckets as DDP's compute_bucket_assignment_by_size does: in order, a bucket
// closing once it holds at least its limit (first_bucket_bytes for the first,
// bucket_bytes after). Returns the indices in each bucket.
std::vector<std::vector<int>> PlanGradientBuckets(const std::vector<double>& bytes,
                                                  double bucket_bytes, double first_bucket_bytes);

// One bucket's all-reduce on a timeline: ready when its last gradient is
// (seconds from the start of the backward pass), taking comm_s.
struct BucketComm {
  double ready_s = 0;
  double comm_s = 0;
};
struct OverlapTimeline {
  std::vector<double> start_s, end_s;  // per bucket
  double comm_s = 0;                   // sum of the buckets' comm_s
  double exposed_s = 0;                // time after the backward pass ends, >= 0
  double hidden_fraction() const {     // 1 - exposed/comm (0 without communication)
    return comm_s > 0 ? 1 - exposed_s / comm_s : 0;
  }
};
// The all-reduces run one at a time in bucket order on one communicator, as
// DDP's do: bucket k starts at max(ready_k, end of bucket k-1); exposed is how
// far the last one ends after `backward_s`. Buckets must be in ready order.
OverlapTimeline ScheduleBucketedAllReduce(const std::vector<BucketComm>& buckets,
                                          double backward_s);

// A data-parallel sweep: options.batches are global batches, each split
// evenly over comm.size() ranks (batches that do not divide are skipped with a
// reason); an automatic sweep doubles from comm.size(). Each rank runs its
// share of the synthetic global batch (InitialInput at the global batch,
// rank r taking samples [r*b, (r+1)*b)) with the weights every rank
// initializes alike. options.threads = 0 gives each rank an equal share of
// its node's CPUs, at most the CPUs its binding allows. Rank 0's result is the report: its step
// times (every step ends in the all-reduce, so the ranks keep pace), its per-layer times at the
// per-rank batch and BatchMeasurement::data_parallel. Rank 0 decides how many
// steps each loop runs, the memory limit (shared by the ranks of a node) and
// when an automatic sweep stops, so every rank measures the same batches.
SweepResult DataParallelSweep(const Network& network, const SweepOptions& options,
                              Communicator& comm, const DataParallelOptions& dp = {});

// A data-parallel step modeled from a measured one: its compute (the
// step's operations, measured) and gradient copies (packing and averaging,
// measured) with the all-reduces modeled: each bucket's from
// AllReduceTime(bytes, ranks, comm_model), scheduled from its measured ready
// time by ScheduleBucketedAllReduce. Two bounds:
//   overlapped = compute + copies + exposed: communication runs beside the
//     backward pass (a GPU's NCCL kernels, an MPI with a progress thread or
//     offload), only what is left after it counts;
//   serial = compute + copies + every all-reduce: the ranks' own CPUs move
//     the data (MPI over shared memory progresses inside the rank's calls).
// From a 1-rank measurement (it has the ready times and no communication)
// this predicts `ranks` ranks at the same per-rank batch; on the run's own
// rank count it checks the communication model. Throws UsageError when
// `measured` has no data-parallel timing or ranks < 1.
struct ModeledDataParallelStep {
  int ranks = 1;
  int64_t global_batch = 0;  // per-rank batch x ranks
  double compute_s = 0;      // measured
  double copies_s = 0;       // measured pack + average
  OverlapTimeline timeline;  // modeled all-reduces
  double overlapped_step_s = 0;
  double serial_step_s = 0;
};
ModeledDataParallelStep ModelMeasuredDataParallelStep(const BatchMeasurement& measured,
                                                      const CommModel& comm_model, int ranks);

// The measured steps of a data-parallel sweep with their all-reduces modeled
// (`sweep --data-parallel --links FILE`).
struct ModeledCommunication {
  std::string links;  // where the communication model came from (the links file)
  int ranks = 1;      // the ranks modeled, at the measured per-rank batches
  // ModelMeasuredDataParallelStep of each of the sweep's measurements, in order.
  std::vector<ModeledDataParallelStep> steps;
};
ModeledCommunication ModelCommunication(const SweepResult& sweep, const CommModel& comm_model,
                                        int ranks, const std::string& links);

// A data-parallel sweep as WriteSweep writes it, with its modeled
// communication (`modeled`, whose steps are those of `sweep`; nullptr or no
// steps: none). Table: after the sweep, what the model assumes and per step
// the compute, copies, modeled all-reduces and the overlapped and serial
// steps, with their errors against the measured step when the ranks modeled
// are the run's. JSON: the sweep's document with a "modeled_communication"
// object. CSV: the sweep only.
void WriteDataParallelSweep(std::ostream& out, const SweepResult& sweep, const FitResult& fit,
                            OutputFormat format, bool layers, const ModeledCommunication* modeled);

// One message size of a collective benchmark (`fitspeed linkbench`): the
// median blocking all-reduce of `bytes` (floats) over every rank, and half the
// median round trip of `bytes` between ranks 0 and 1.
struct CollectiveTiming {
  double bytes = 0;
  double allreduce_s = 0;
  int allreduce_repeats = 0;
  double one_way_s = 0;
  int pingpong_repeats = 0;
};

// Times the all-reduce and the ping-pong at each of `sizes` (bytes, multiples
// of 4) as a sweep times a step: `warmup` untimed runs, then `repeats`; rank 0
// decides how many for every rank, and its medians are every rank's.
std::vector<CollectiveTiming> TimeCollectives(Communicator& comm, const std::vector<double>& sizes,
                                              int warmup, const RepeatPolicy& repeats);

}  // namespace fitspeed

#endif  // FITSPEED_TIMING_DATA_PARALLEL_H_
