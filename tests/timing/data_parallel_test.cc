// Data parallelism without MPI: the bucket plan, the overlap schedule and the
// modeled step (hand calculations), which backward operation finishes each
// gradient, the ranks' shares of a batch, and a step on a communicator of
// one rank. Two ranks under mpirun: tests/mpi/.
#include "fitspeed/timing/data_parallel.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fitspeed/core/error.h"
#include "timing/gradient_sync.h"
#include "timing/test_network_builders.h"

namespace fitspeed {
namespace {

using testing::DataParallelConvNet;
using testing::DataParallelTiedNet;

TEST(PlanGradientBuckets, ClosesEachBucketOnceItHoldsItsLimit) {
  // Limits: first 10 B, then 25 B. 4 -> 4+8 = 12 >= 10 closes {0,1};
  // 20 -> 20 < 25, +6 = 26 closes {2,3}; 30 alone >= 25 closes {4}; 1 is left {5}.
  const std::vector<std::vector<int>> buckets = PlanGradientBuckets({4, 8, 20, 6, 30, 1}, 25, 10);
  ASSERT_EQ(buckets.size(), 4u);
  EXPECT_EQ(buckets[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(buckets[1], (std::vector<int>{2, 3}));
  EXPECT_EQ(buckets[2], (std::vector<int>{4}));
  EXPECT_EQ(buckets[3], (std::vector<int>{5}));
  EXPECT_TRUE(PlanGradientBuckets({}, 25, 10).empty());
}

TEST(ScheduleBucketedAllReduce, RunsBucketsOneAtATimeAfterTheyAreReady) {
  // Backward ends at 10 ms. Bucket 1 ready at 2, takes 3 -> [2, 5]; bucket 2
  // ready at 4 but the communicator is busy until 5 -> [5, 9]; bucket 3 ready
  // at 9.5, takes 2 -> [9.5, 11.5]. Exposed 11.5 - 10 = 1.5 of 9 ms.
  const OverlapTimeline t =
      ScheduleBucketedAllReduce({{2e-3, 3e-3}, {4e-3, 4e-3}, {9.5e-3, 2e-3}}, 10e-3);
  ASSERT_EQ(t.start_s.size(), 3u);
  EXPECT_DOUBLE_EQ(t.start_s[1], 5e-3);
  EXPECT_DOUBLE_EQ(t.end_s[1], 9e-3);
  EXPECT_DOUBLE_EQ(t.start_s[2], 9.5e-3);
  EXPECT_DOUBLE_EQ(t.comm_s, 9e-3);
  EXPECT_NEAR(t.exposed_s, 1.5e-3, 1e-15);
  EXPECT_NEAR(t.hidden_fraction(), 1 - 1.5 / 9, 1e-12);
  // Everything hidden: exposed 0, not negative.
  EXPECT_EQ(ScheduleBucketedAllReduce({{1e-3, 1e-3}}, 5e-3).exposed_s, 0);
}

TEST(ModelMeasuredDataParallelStep, ModelsTheAllReducesAroundTheMeasuredCompute) {
  BatchMeasurement m;
  m.batch = 8;
  m.step_time_s = 0.050;
  DataParallelTiming d;
  d.ranks = 2;
  d.per_rank_batch = 4;
  d.compute_s = 0.040;
  d.backward_s = 0.031;           // of which 1 ms starting and progressing all-reduces
  d.in_backward_comm_s = 0.0015;  // 0.5 ms of it packing
  d.pack_s = 0.0005;
  d.average_s = 0.0007;
  d.exposed_comm_s = 0.004;
  BucketTiming b1, b2;
  b1.bytes = 1e6;
  b1.ready_s = 0.010;
  b2.bytes = 4e6;
  b2.ready_s = 0.029;
  d.buckets = {b1, b2};
  m.data_parallel = d;
  CommModel comm;
  comm.intra_node = {1e9, 1e-5};  // 1 GB/s, 10 us
  // Ring over 2: 2(n-1)/n S/B + 2(n-1) a = S/1e9 + 2e-5 s.
  // Backward's own work: 31 - 1.5 + 0.5 = 30 ms. Bucket 1: 1.02 ms, [10, 11.02];
  // bucket 2: 4.02 ms, [29, 33.02]: exposed 3.02 ms of 5.04 ms.
  // Copies 0.5 + 0.7 = 1.2 ms. Overlapped 40 + 1.2 + 3.02 = 44.22 ms;
  // serial 40 + 1.2 + 5.04 = 46.24 ms.
  const ModeledDataParallelStep two = ModelMeasuredDataParallelStep(m, comm, 2);
  EXPECT_NEAR(two.timeline.comm_s, 5.04e-3, 1e-12);
  EXPECT_NEAR(two.timeline.exposed_s, 3.02e-3, 1e-12);
  EXPECT_NEAR(two.copies_s, 1.2e-3, 1e-15);
  EXPECT_NEAR(two.overlapped_step_s, 44.22e-3, 1e-12);
  EXPECT_NEAR(two.serial_step_s, 46.24e-3, 1e-12);
  EXPECT_EQ(two.global_batch, 8);
  // The same per-rank batch on 4 ranks: 2(3)/4 S/B + 6a = 1.5 S/1e9 + 6e-5.
  // Bucket 1 1.56 ms, [10, 11.56]; bucket 2 6.06 ms, [29, 35.06]: exposed 5.06.
  const ModeledDataParallelStep four = ModelMeasuredDataParallelStep(m, comm, 4);
  EXPECT_NEAR(four.overlapped_step_s, (40 + 1.2 + 5.06) * 1e-3, 1e-12);
  EXPECT_NEAR(four.serial_step_s, (40 + 1.2 + 7.62) * 1e-3, 1e-12);
  EXPECT_EQ(four.global_batch, 16);
  // One rank communicates nothing.
  EXPECT_NEAR(ModelMeasuredDataParallelStep(m, comm, 1).serial_step_s, 41.2e-3, 1e-15);
  BatchMeasurement plain;
  EXPECT_THROW(ModelMeasuredDataParallelStep(plain, comm, 2), UsageError);
  EXPECT_THROW(ModelMeasuredDataParallelStep(m, comm, 0), UsageError);
}

TEST(GradientReadyOps, ATiedTableIsReadyOnlyAfterTheEmbeddingsBackward) {
  const Network net = DataParallelTiedNet();
  timing::StepConfig config = testing::AgreementConfig(2);
  auto step = timing::MakeEigenExecutor<double>(net, config);
  const std::vector<int> ready = step->GradientReadyOps();
  int table = -1, ln_f_gamma = -1;
  for (size_t i = 0; i < step->params().size(); ++i) {
    const timing::ParamRef& p = step->params()[i];
    if (p.layer == net.LayerId("wte")) table = static_cast<int>(i);
    if (p.layer == net.LayerId("ln_f") && ln_f_gamma < 0) ln_f_gamma = static_cast<int>(i);
  }
  ASSERT_GE(table, 0);
  ASSERT_GE(ln_f_gamma, 0);
  // The table is the input's embedding: the last gradient the backward pass
  // finishes; the final layer norm's is among the first.
  for (size_t i = 0; i < ready.size(); ++i) {
    EXPECT_GE(ready[i], 0) << step->params()[i].name;
    EXPECT_LE(ready[i], ready[static_cast<size_t>(table)]) << step->params()[i].name;
  }
  EXPECT_LT(ready[static_cast<size_t>(ln_f_gamma)], ready[static_cast<size_t>(table)]);
  EXPECT_EQ(ready[static_cast<size_t>(table)], step->BackwardOpCount() - 1);
}

TEST(MakeRankShare, TheRanksSharesMakeTheGlobalBatch) {
  for (const Network& net : {DataParallelConvNet(), DataParallelTiedNet()}) {
    const std::vector<double> input = timing::InitialInput(net, 6, 7);
    const std::vector<int32_t> labels = timing::InitialLabels(net, 6, 7);
    std::vector<double> joined_input;
    std::vector<int32_t> joined_labels;
    for (int r = 0; r < 3; ++r) {
      const timing::RankShare share = timing::MakeRankShare(net, 6, r, 3, 7);
      joined_input.insert(joined_input.end(), share.input.begin(), share.input.end());
      joined_labels.insert(joined_labels.end(), share.labels.begin(), share.labels.end());
    }
    EXPECT_EQ(joined_input, input) << net.name;
    EXPECT_EQ(joined_labels, labels) << net.name;
  }
}

TEST(GradientSync, OneRankStepsExactlyAsThePlainStep) {
  const Network net = DataParallelTiedNet();
  const timing::StepConfig config = testing::AgreementConfig(3);
  auto plain = timing::MakeEigenExecutor<double>(net, config);
  auto synced = timing::MakeEigenExecutor<double>(net, config);
  std::unique_ptr<Communicator> self = MakeSelfCommunicator();
  DataParallelOptions options;
  options.bucket_bytes = 512;  // several buckets
  options.first_bucket_bytes = 128;
  timing::GradientSync sync(*synced, *self, options);
  EXPECT_GT(sync.buckets().size(), 2u);
  for (int s = 0; s < 2; ++s) EXPECT_EQ(sync.Step(), plain->Step());
  for (size_t i = 0; i < plain->params().size(); ++i) {
    EXPECT_EQ(synced->Param(i), plain->Param(i)) << plain->params()[i].name;
  }
  // Every trainable parameter is in exactly one bucket.
  std::vector<int> seen(plain->params().size(), 0);
  for (const auto& bucket : sync.buckets()) {
    for (size_t p : bucket.params) ++seen[p];
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], plain->params()[i].trainable ? 1 : 0) << plain->params()[i].name;
  }
}

TEST(DataParallelSweep, OneRankMeasuresWithBucketsAndSkipsNothing) {
  SweepOptions options;
  options.batches = {2, 4};
  options.threads = 1;
  options.warmup_steps = 1;
  options.warmup_time_s = 0;
  options.min_repeats = 2;
  options.min_time_s = 0;
  std::unique_ptr<Communicator> self = MakeSelfCommunicator();
  const SweepResult r = DataParallelSweep(DataParallelConvNet(), options, *self);
  ASSERT_EQ(r.measurements.size(), 2u);
  EXPECT_EQ(r.ranks, 1);
  EXPECT_EQ(r.bucket_bytes, kDefaultBucketBytes);
  for (const BatchMeasurement& m : r.measurements) {
    ASSERT_TRUE(m.data_parallel.has_value());
    EXPECT_EQ(m.data_parallel->per_rank_batch, m.batch);
    ASSERT_EQ(m.data_parallel->buckets.size(), 1u);  // a few KiB: one bucket
    EXPECT_GT(m.data_parallel->compute_s, 0);
    EXPECT_LE(m.data_parallel->compute_s, m.step_time_s);
  }
  EXPECT_EQ(r.Samples().front().devices, 1);
  DataParallelOptions bad;
  bad.bucket_bytes = 0;
  EXPECT_THROW(DataParallelSweep(DataParallelConvNet(), options, *self, bad), UsageError);
}

}  // namespace
}  // namespace fitspeed
