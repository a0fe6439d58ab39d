// Data parallelism on real MPI ranks (ctest starts this under
// `mpirun --oversubscribe -np 2`, one thread per rank): after data-parallel
// steps every rank holds identical parameters, equal to those of one process
// stepping on the whole global batch; a data-parallel sweep measures the
// buckets' all-reduces and reports its samples on 2 devices.
//
// Every rank makes the same collective calls whatever a check finds (no
// ASSERT between collectives), or a failure on one rank would hang the other.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "fitspeed/timing/data_parallel.h"
#include "mpi/mpi_communicator.h"
#include "timing/gradient_sync.h"
#include "timing/test_network_builders.h"

namespace fitspeed {
namespace {

Communicator* world = nullptr;

using Factory = std::unique_ptr<timing::StepExecutor> (*)(const Network&,
                                                          const timing::StepConfig&);

std::unique_ptr<timing::StepExecutor> EigenDouble(const Network& n, const timing::StepConfig& c) {
  return timing::MakeEigenExecutor<double>(n, c);
}
std::unique_ptr<timing::StepExecutor> Onednn(const Network& n, const timing::StepConfig& c) {
  return timing::MakeOnednnExecutor(n, c);
}

// Runs `steps` data-parallel steps on this rank's share of `global` samples
// and `steps` plain steps of one process on all of them; checks the ranks
// agree exactly and match the single process within `tolerance` (relative to
// the parameter's largest magnitude).
void CheckAgainstOneProcess(const Network& net, Factory make, Optimizer optimizer,
                            double tolerance) {
  const int ranks = world->size();
  const int64_t global = 2 * ranks;
  timing::StepConfig local = testing::AgreementConfig(global / ranks, optimizer);
  local.threads = 1;
  timing::StepConfig whole = local;
  whole.batch = global;
  auto dp = make(net, local);
  const timing::RankShare share =
      timing::MakeRankShare(net, global, world->rank(), ranks, local.seed);
  dp->SetInput(share.input, share.labels);
  auto one = make(net, whole);  // InitialInput at the global batch: the same samples

  DataParallelOptions options;
  options.bucket_bytes = 256;  // several buckets, all in flight at once
  options.first_bucket_bytes = 64;
  timing::GradientSync sync(*dp, *world, options);
  EXPECT_GT(sync.buckets().size(), 2u);
  for (int s = 0; s < 3; ++s) {
    sync.Step();
    one->Step();
  }
  for (size_t i = 0; i < dp->params().size(); ++i) {
    std::vector<double> mine = dp->Param(i);
    // Identical on every rank: the sum over ranks is ranks x this rank's, and
    // the spread around the mean is exactly 0.
    std::vector<double> sum = mine;
    world->Sum(sum.data(), static_cast<int64_t>(sum.size()));
    double spread = 0;
    for (size_t k = 0; k < mine.size(); ++k) {
      const double d = mine[k] - sum[k] / ranks;
      spread += d * d;
    }
    world->Sum(&spread, 1);
    EXPECT_EQ(spread, 0) << net.name << " " << dp->params()[i].name;

    const std::vector<double> expected = one->Param(i);
    double scale = 0, worst = 0;
    for (size_t k = 0; k < mine.size(); ++k) {
      scale = std::max(scale, std::fabs(expected[k]));
      worst = std::max(worst, std::fabs(mine[k] - expected[k]));
    }
    EXPECT_LE(worst, tolerance * std::max(scale, 1e-3))
        << net.name << " " << dp->params()[i].name << ": largest difference " << worst;
  }
}

TEST(DataParallelMpi, EigenDoubleStepsEqualOneProcessOnTheGlobalBatch) {
  for (const Network& net : {testing::DataParallelConvNet(), testing::DataParallelTiedNet()}) {
    for (Optimizer optimizer : {Optimizer::kSgdMomentum, Optimizer::kAdam}) {
      CheckAgainstOneProcess(net, EigenDouble, optimizer, 1e-12);
    }
  }
}

TEST(DataParallelMpi, OnednnFp32StepsEqualOneProcessOnTheGlobalBatch) {
  // FP32: the ranks sum their halves' mean gradients in another order than
  // one process sums the whole batch; Adam's update divides by sqrt(v) + eps.
  for (const Network& net : {testing::DataParallelConvNet(), testing::DataParallelTiedNet()}) {
    CheckAgainstOneProcess(net, Onednn, Optimizer::kSgdMomentum, 1e-5);
  }
}

TEST(DataParallelMpi, SweepMeasuresBucketsOnEveryRank) {
  SweepOptions options;
  options.batches = {2, 3, 4};
  options.threads = 1;
  options.warmup_steps = 1;
  options.warmup_time_s = 0;
  options.min_repeats = 3;
  options.min_time_s = 0;
  DataParallelOptions dp;
  dp.bucket_bytes = 2048;
  dp.first_bucket_bytes = 512;
  const SweepResult r = DataParallelSweep(testing::DataParallelConvNet(), options, *world, dp);
  const int ranks = world->size();
  EXPECT_EQ(r.ranks, ranks);
  EXPECT_NE(r.communicator.find("rank"), std::string::npos) << r.communicator;
  // 3 does not divide over 2 ranks: skipped with the reason.
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].batch, 3);
  EXPECT_NE(r.skipped[0].reason.find("ranks"), std::string::npos);
  ASSERT_EQ(r.measurements.size(), 2u);
  for (const BatchMeasurement& m : r.measurements) {
    ASSERT_TRUE(m.data_parallel.has_value());
    const DataParallelTiming& d = *m.data_parallel;
    EXPECT_EQ(d.ranks, ranks);
    EXPECT_EQ(d.per_rank_batch, m.batch / ranks);
    EXPECT_GT(d.buckets.size(), 1u);
    for (const BucketTiming& b : d.buckets) {
      EXPECT_GT(b.bytes, 0);
      EXPECT_GT(b.bare_allreduce_s, 0);
      EXPECT_GE(b.ready_s, 0);
      EXPECT_LE(b.ready_s, d.backward_s);
    }
    EXPECT_GE(d.exposed_comm_s, 0);
    // Each step's compute and exposed communication are parts of it, so each
    // one's median is at most the step's median (order statistics keep a
    // pointwise bound). Their sum is not bounded: the median of a sum is not
    // the sum of the medians, and 3 noisy repeats can put it above.
    EXPECT_LE(d.compute_s, m.step_time_s);
    EXPECT_LE(d.exposed_comm_s, m.step_time_s);
  }
  for (const Sample& s : r.Samples()) EXPECT_EQ(s.devices, ranks);
}

}  // namespace
}  // namespace fitspeed

namespace {

// The failures of a rank other than 0, each line prefixed with the rank (its
// default printer is removed so that only rank 0 prints the report).
// The test's name is remembered when it starts: OnTestPartResult runs while
// Google Test holds the lock that UnitTest::current_test_info() takes, so
// asking it there would deadlock the failing rank (and the job with it).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestStart(const ::testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestEnd(const ::testing::TestInfo&) override { test_ = "?"; }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s failed at %s:%d\n%s\n", rank_, test_.c_str(),
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(),
                 result.message());
  }

 private:
  int rank_;
  std::string test_ = "?";
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<fitspeed::Communicator> comm = fitspeed::InitMpi(&argc, &argv);
  fitspeed::world = comm.get();
  if (comm->rank() != 0) {
    // Rank 0 prints the report; the others only their failures.
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(comm->rank()));
  }
  double failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  comm->Sum(&failed, 1);  // the job fails when any rank failed
  comm.reset();
  return failed != 0 ? 1 : 0;
}
