#include "timing/gradient_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/median.h"
#include "fitspeed/core/error.h"

namespace fitspeed::timing {

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

GradientSync::GradientSync(StepExecutor& step, Communicator& comm,
                           const DataParallelOptions& options)
    : step_(step), comm_(comm) {
  ValidateDataParallelOptions(options);
  const std::vector<int> ready = step.GradientReadyOps();
  // Trainable parameters in the order their gradients become final; among
  // those final after the same operation, in reverse network order (DDP
  // assigns buckets over the reversed parameter list).
  std::vector<size_t> order;
  for (size_t i = 0; i < ready.size(); ++i) {
    if (step.params()[i].trainable && ready[i] >= 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ready[a] != ready[b] ? ready[a] < ready[b] : a > b;
  });
  std::vector<double> bytes;
  for (size_t i : order) {
    const StepExecutor::GradientStorage g = step.MutableGrad(i);
    bytes.push_back(static_cast<double>(g.elements) * (g.f64 != nullptr ? 8 : 4));
  }
  for (const std::vector<int>& members :
       PlanGradientBuckets(bytes, options.bucket_bytes, options.first_bucket_bytes)) {
    Bucket bucket;
    int64_t elements = 0;
    bool f64 = false;
    for (int m : members) {
      const size_t param = order[static_cast<size_t>(m)];
      const StepExecutor::GradientStorage g = step.MutableGrad(param);
      bucket.params.push_back(param);
      bucket.ready_op = std::max(bucket.ready_op, ready[param]);
      bucket.bytes += bytes[static_cast<size_t>(m)];
      elements += g.elements;
      f64 = g.f64 != nullptr;
    }
    if (f64) {
      bucket.f64.assign(static_cast<size_t>(elements), 0.0);
    } else {
      bucket.f32.assign(static_cast<size_t>(elements), 0.0f);
    }
    buckets_.push_back(std::move(bucket));
  }
  pending_.resize(buckets_.size());
  started_.resize(buckets_.size());
  done_.assign(buckets_.size(), false);
  step_.SetBackwardHook([this](int op) { OnBackwardOp(op); });
}

GradientSync::~GradientSync() { step_.SetBackwardHook({}); }

void GradientSync::Pack(Bucket& bucket) {
  size_t at = 0;
  for (size_t param : bucket.params) {
    const StepExecutor::GradientStorage g = step_.MutableGrad(param);
    const size_t n = static_cast<size_t>(g.elements);
    if (g.f64 != nullptr) {
      std::copy(g.f64, g.f64 + n, bucket.f64.begin() + static_cast<std::ptrdiff_t>(at));
    } else {
      std::copy(g.f32, g.f32 + n, bucket.f32.begin() + static_cast<std::ptrdiff_t>(at));
    }
    at += n;
  }
}

void GradientSync::Unpack(Bucket& bucket) {
  const double scale = 1.0 / comm_.size();
  size_t at = 0;
  for (size_t param : bucket.params) {
    const StepExecutor::GradientStorage g = step_.MutableGrad(param);
    const size_t n = static_cast<size_t>(g.elements);
    if (g.f64 != nullptr) {
      for (size_t k = 0; k < n; ++k) g.f64[k] = bucket.f64[at + k] * scale;
    } else {
      const float s = static_cast<float>(scale);
      for (size_t k = 0; k < n; ++k) g.f32[k] = bucket.f32[at + k] * s;
    }
    at += n;
  }
}

void GradientSync::TestInFlight() {
  const Clock::time_point now = Clock::now();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (pending_[b] == nullptr || done_[b]) continue;
    if (pending_[b]->Test()) {
      done_[b] = true;
      last_.allreduce_s[b] = Seconds(now - started_[b]);
    }
  }
}

void GradientSync::OnBackwardOp(int op) {
  const Clock::time_point start = Clock::now();
  const double packed_before = last_.pack_s;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    if (bucket.ready_op != op) continue;
    const Clock::time_point pack_start = Clock::now();
    Pack(bucket);
    const Clock::time_point packed = Clock::now();
    last_.pack_s += Seconds(packed - pack_start);
    // On the timeline of the backward pass's own work: its operations and
    // packing, without the time earlier hooks spent starting and progressing
    // all-reduces (what a model of the communication replaces).
    last_.ready_s[b] = Seconds(packed - backward_start_) - progress_s_;
    started_[b] = packed;
    pending_[b] = bucket.f64.empty()
                      ? comm_.StartSum(bucket.f32.data(), static_cast<int64_t>(bucket.f32.size()))
                      : comm_.StartSum(bucket.f64.data(), static_cast<int64_t>(bucket.f64.size()));
  }
  TestInFlight();
  const double hook = Seconds(Clock::now() - start);
  last_.in_backward_s += hook;
  progress_s_ += hook - (last_.pack_s - packed_before);
}

double GradientSync::Step() {
  const size_t n = buckets_.size();
  last_.ready_s.assign(n, 0.0);
  last_.allreduce_s.assign(n, 0.0);
  last_.average_s = 0;
  last_.in_backward_s = 0;
  last_.pack_s = 0;
  progress_s_ = 0;
  std::fill(done_.begin(), done_.end(), false);
  for (auto& p : pending_) p.reset();

  const double loss = step_.Forward();
  backward_start_ = Clock::now();
  step_.Backward();
  const Clock::time_point backward_end = Clock::now();
  last_.backward_s = Seconds(backward_end - backward_start_);
  for (size_t b = 0; b < n; ++b) {
    FITSPEED_CHECK(pending_[b] != nullptr, "every bucket's all-reduce starts in the backward pass");
    if (!done_[b]) {
      pending_[b]->Wait();
      done_[b] = true;
      last_.allreduce_s[b] = Seconds(Clock::now() - started_[b]);
    }
    const Clock::time_point unpack_start = Clock::now();
    Unpack(buckets_[b]);
    last_.average_s += Seconds(Clock::now() - unpack_start);
  }
  last_.exposed_s = Seconds(Clock::now() - backward_end) - last_.average_s;
  step_.Update();
  return loss;
}

std::vector<double> GradientSync::BareAllReduceTimes(int repeats) {
  FITSPEED_CHECK(repeats >= 1, "at least one repeat");
  std::vector<double> medians;
  for (Bucket& bucket : buckets_) {
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      comm_.Barrier();
      const Clock::time_point start = Clock::now();
      if (bucket.f64.empty()) {
        comm_.Sum(bucket.f32.data(), static_cast<int64_t>(bucket.f32.size()));
      } else {
        comm_.Sum(bucket.f64.data(), static_cast<int64_t>(bucket.f64.size()));
      }
      times.push_back(Seconds(Clock::now() - start));
    }
    medians.push_back(Median(times));
  }
  return medians;
}

RankShare MakeRankShare(const Network& network, int64_t global_batch, int rank, int ranks,
                        uint64_t seed) {
  FITSPEED_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, "rank out of range");
  FITSPEED_CHECK(global_batch % ranks == 0, "the global batch divides evenly over the ranks");
  const int64_t b = global_batch / ranks;
  const std::vector<double> input = InitialInput(network, global_batch, seed);
  const std::vector<int32_t> labels = InitialLabels(network, global_batch, seed);
  RankShare share;
  const int64_t per_sample = static_cast<int64_t>(input.size()) / global_batch;
  share.input.assign(input.begin() + rank * b * per_sample,
                     input.begin() + (rank + 1) * b * per_sample);
  // Each loss's labels are batch-major rows: the rank's samples own a
  // contiguous run of rows of every loss.
  const std::vector<LossLabels> global = LabelLayout(network, global_batch);
  const std::vector<LossLabels> local = LabelLayout(network, b);
  for (size_t l = 0; l < global.size(); ++l) {
    const int64_t begin = global[l].offset + rank * local[l].rows;
    share.labels.insert(share.labels.end(), labels.begin() + begin,
                        labels.begin() + begin + local[l].rows);
  }
  return share;
}

}  // namespace fitspeed::timing
