#include "fitspeed/timing/data_parallel.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/median.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

class SelfCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_size() const override { return 1; }
  int nodes() const override { return 1; }
  std::string Describe() const override { return "this process alone (1 rank)"; }

  class Done final : public Pending {
   public:
    bool Test() override { return true; }
    void Wait() override {}
  };
  std::unique_ptr<Pending> StartSum(float*, int64_t) override { return std::make_unique<Done>(); }
  std::unique_ptr<Pending> StartSum(double*, int64_t) override { return std::make_unique<Done>(); }
  void Sum(float*, int64_t) override {}
  void Sum(double*, int64_t) override {}
  void Broadcast(double*, int) override {}
  void Barrier() override {}
  void PingPong(int peer, char*, int64_t) override {
    throw UsageError(fmt::format("ping-pong with rank {}: this process is the only rank", peer));
  }
};

}  // namespace

std::unique_ptr<Communicator> MakeSelfCommunicator() {
  return std::make_unique<SelfCommunicator>();
}

void ValidateDataParallelOptions(const DataParallelOptions& o) {
  if (!(std::isfinite(o.bucket_bytes) && o.bucket_bytes > 0)) {
    throw UsageError(fmt::format("DataParallelOptions.bucket_bytes = {}: must be finite and > 0",
                                 o.bucket_bytes));
  }
  if (!(std::isfinite(o.first_bucket_bytes) && o.first_bucket_bytes > 0)) {
    throw UsageError(
        fmt::format("DataParallelOptions.first_bucket_bytes = {}: must be finite and > 0",
                    o.first_bucket_bytes));
  }
  if (o.bare_repeats < 1) {
    throw UsageError(
        fmt::format("DataParallelOptions.bare_repeats = {}: must be >= 1", o.bare_repeats));
  }
}

double DataParallelTiming::hidden_fraction() const {
  if (bare_comm_s <= 0) return 0;
  return std::clamp(1 - comm_cost_s / bare_comm_s, 0.0, 1.0);
}

std::vector<std::vector<int>> PlanGradientBuckets(const std::vector<double>& bytes,
                                                  double bucket_bytes, double first_bucket_bytes) {
  FITSPEED_CHECK(bucket_bytes > 0 && first_bucket_bytes > 0, "bucket limits are positive");
  std::vector<std::vector<int>> buckets;
  std::vector<int> open;
  double held = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    open.push_back(static_cast<int>(i));
    held += bytes[i];
    const double limit = buckets.empty() ? first_bucket_bytes : bucket_bytes;
    if (held >= limit) {
      buckets.push_back(std::move(open));
      open.clear();
      held = 0;
    }
  }
  if (!open.empty()) buckets.push_back(std::move(open));
  return buckets;
}

OverlapTimeline ScheduleBucketedAllReduce(const std::vector<BucketComm>& buckets,
                                          double backward_s) {
  OverlapTimeline t;
  double free_at = 0;  // when the communicator is next free
  for (size_t k = 0; k < buckets.size(); ++k) {
    FITSPEED_CHECK(k == 0 || buckets[k].ready_s >= buckets[k - 1].ready_s,
                   "buckets are in ready order");
    const double start = std::max(buckets[k].ready_s, free_at);
    free_at = start + buckets[k].comm_s;
    t.start_s.push_back(start);
    t.end_s.push_back(free_at);
    t.comm_s += buckets[k].comm_s;
  }
  t.exposed_s = std::max(0.0, free_at - backward_s);
  return t;
}

ModeledDataParallelStep ModelMeasuredDataParallelStep(const BatchMeasurement& measured,
                                                      const CommModel& comm_model, int ranks) {
  if (!measured.data_parallel) {
    throw UsageError(fmt::format("batch {} was not measured data-parallel", measured.batch));
  }
  if (ranks < 1) throw UsageError(fmt::format("ranks = {}: must be >= 1", ranks));
  const DataParallelTiming& d = *measured.data_parallel;
  std::vector<BucketComm> buckets;
  for (const BucketTiming& b : d.buckets) {
    buckets.push_back({b.ready_s, AllReduceTime(b.bytes, ranks, comm_model)});
  }
  ModeledDataParallelStep step;
  step.ranks = ranks;
  step.global_batch = d.per_rank_batch * ranks;
  step.compute_s = d.compute_s;
  step.copies_s = d.pack_s + d.average_s;
  // The ready times count from the start of the backward pass, which takes
  // its operations' time and the packing; the progress calls are what the
  // model replaces.
  step.timeline =
      ScheduleBucketedAllReduce(buckets, d.backward_s - d.in_backward_comm_s + d.pack_s);
  step.overlapped_step_s = step.compute_s + step.copies_s + step.timeline.exposed_s;
  step.serial_step_s = step.compute_s + step.copies_s + step.timeline.comm_s;
  return step;
}

namespace {

// Times `op` as the sweep times a step: warm-up, then `repeats`; rank 0
// decides for every rank.
template <typename Op>
std::vector<double> TimeRepeatsOf(Communicator& comm, int warmup, const RepeatPolicy& repeats,
                                  Op op) {
  using Clock = std::chrono::steady_clock;
  for (int w = 0; w < warmup; ++w) op();
  std::vector<double> times;
  double total = 0;
  for (;;) {
    double more = repeats.WantsMore(static_cast<int>(times.size()), total) ? 1 : 0;
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

}  // namespace

std::vector<CollectiveTiming> TimeCollectives(Communicator& comm, const std::vector<double>& sizes,
                                              int warmup, const RepeatPolicy& repeats) {
  std::vector<CollectiveTiming> points;
  if (sizes.empty()) return points;
  const double largest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<float> data(static_cast<size_t>(largest / 4), 1.0f);
  std::vector<char> bytes(static_cast<size_t>(largest), 1);
  for (double size : sizes) {
    CollectiveTiming p;
    p.bytes = size;
    const int64_t count = static_cast<int64_t>(size / 4);
    std::vector<double> t =
        TimeRepeatsOf(comm, warmup, repeats, [&] { comm.Sum(data.data(), count); });
    // Sums of ones grow; keep them small so no value overflows.
    std::fill(data.begin(), data.begin() + count, 1.0f);
    p.allreduce_s = Median(t);
    p.allreduce_repeats = static_cast<int>(t.size());
    t = TimeRepeatsOf(comm, warmup, repeats,
                      [&] { comm.PingPong(1, bytes.data(), static_cast<int64_t>(size)); });
    p.one_way_s = Median(t) / 2;
    p.pingpong_repeats = static_cast<int>(t.size());
    // Rank 0's times are the report; every rank holds them.
    comm.Broadcast(&p.allreduce_s, 1);
    comm.Broadcast(&p.one_way_s, 1);
    points.push_back(p);
  }
  return points;
}

}  // namespace fitspeed
