// One data-parallel training step on a built executor: the backward pass
// starts each gradient bucket's all-reduce as soon as its gradients are final
// (StepExecutor::GradientReadyOps), lets the ones in flight progress after
// every backward operation, and after the pass waits for the rest, averages
// and updates (fitspeed/timing/data_parallel.h has the method).
#ifndef FITSPEED_TIMING_GRADIENT_SYNC_H_
#define FITSPEED_TIMING_GRADIENT_SYNC_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "fitspeed/timing/data_parallel.h"
#include "timing/executor.h"

namespace fitspeed::timing {

class GradientSync {
 public:
  // Plans the buckets and installs the backward hook; `step` and `comm` must
  // outlive this object, which removes the hook when destroyed.
  GradientSync(StepExecutor& step, Communicator& comm, const DataParallelOptions& options);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // Forward, backward with the overlapped all-reduces, wait, average, update;
  // returns this rank's loss.
  double Step();

  struct StepTimes {
    double backward_s = 0;
    double exposed_s = 0;  // waiting for all-reduces after the backward pass
    double average_s = 0;  // dividing by the ranks and copying back, after the backward pass
    // In the backward pass, between its operations: packing buckets, starting
    // their all-reduces and letting those in flight progress (an MPI library
    // without a progress thread moves shared-memory data in these calls).
    double in_backward_s = 0;
    double pack_s = 0;  // of which copying gradients into their buckets
    // Per bucket, when its all-reduce started: seconds from the start of the
    // backward pass, not counting the earlier hooks' starting and progress
    // calls (the timeline of the pass's own work and packing).
    std::vector<double> ready_s;
    std::vector<double> allreduce_s;  // per bucket, start to completion seen
  };
  const StepTimes& last() const { return last_; }

  // Per bucket, the median of `repeats` blocking all-reduces of it alone.
  std::vector<double> BareAllReduceTimes(int repeats);

  struct Bucket {
    std::vector<size_t> params;  // params() indices, in ready order
    int ready_op = -1;           // backward op after which all are final
    std::vector<float> f32;      // packed gradients (one of the two is used)
    std::vector<double> f64;
    double bytes = 0;
  };
  const std::vector<Bucket>& buckets() const { return buckets_; }

 private:
  using Clock = std::chrono::steady_clock;
  void OnBackwardOp(int op);
  void Pack(Bucket& bucket);
  void Unpack(Bucket& bucket);
  void TestInFlight();

  StepExecutor& step_;
  Communicator& comm_;
  std::vector<Bucket> buckets_;
  std::vector<std::unique_ptr<Communicator::Pending>> pending_;  // per bucket, null when idle
  std::vector<bool> done_;
  std::vector<Clock::time_point> started_;  // per bucket, when its all-reduce started
  Clock::time_point backward_start_;
  double progress_s_ = 0;  // this step's hook time so far, packing excluded
  StepTimes last_;
};

// Rank `rank`'s share of the synthetic global batch of InitialInput /
// InitialLabels at `global_batch`: samples [rank*b, (rank+1)*b) with
// b = global_batch / ranks, and every loss's labels of those samples.
struct RankShare {
  std::vector<double> input;
  std::vector<int32_t> labels;
};
RankShare MakeRankShare(const Network& network, int64_t global_batch, int rank, int ranks,
                        uint64_t seed);

}  // namespace fitspeed::timing

#endif  // FITSPEED_TIMING_GRADIENT_SYNC_H_
