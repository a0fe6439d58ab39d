// The modeled communication of a data-parallel sweep and its writer
// (fitspeed/timing/data_parallel.h), on the measured step worked by hand in
// data_parallel_test.cc (ModelMeasuredDataParallelStep).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fitspeed/timing/data_parallel.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

// 2 ranks of batch 4, a measured 50 ms step of 40 ms compute, 30 ms of own
// backward work, copies 0.5 + 0.7 ms; buckets of 1e6 B ready at 10 ms and
// 4e6 B at 29 ms.
SweepResult OneMeasuredStep() {
  BatchMeasurement m;
  m.batch = 8;
  m.step_time_s = 0.050;
  DataParallelTiming d;
  d.ranks = 2;
  d.per_rank_batch = 4;
  d.compute_s = 0.040;
  d.backward_s = 0.031;
  d.in_backward_comm_s = 0.0015;
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
  SweepResult sweep;
  sweep.model = "hand";
  sweep.ranks = 2;
  sweep.measurements = {m};
  return sweep;
}

CommModel OneGigabytePerSecond() {
  CommModel comm;
  comm.intra_node = {1e9, 1e-5};  // 1 GB/s, 10 us
  return comm;
}

TEST(ModelCommunication, ModelsEveryMeasuredStep) {
  // As data_parallel_test.cc: each bucket S/1e9 + 2e-5 s over 2 ranks,
  // 1.02 + 4.02 = 5.04 ms; overlapped 40 + 1.2 + 3.02 = 44.22 ms, serial
  // 40 + 1.2 + 5.04 = 46.24 ms.
  const ModeledCommunication modeled =
      ModelCommunication(OneMeasuredStep(), OneGigabytePerSecond(), 2, "links.json");
  EXPECT_EQ(modeled.links, "links.json");
  EXPECT_EQ(modeled.ranks, 2);
  ASSERT_EQ(modeled.steps.size(), 1u);
  EXPECT_NEAR(modeled.steps[0].overlapped_step_s, 44.22e-3, 1e-12);
  EXPECT_NEAR(modeled.steps[0].serial_step_s, 46.24e-3, 1e-12);
}

TEST(WriteDataParallelSweep, JsonAddsTheModeledStepsAndTheirErrors) {
  const SweepResult sweep = OneMeasuredStep();
  const ModeledCommunication modeled =
      ModelCommunication(sweep, OneGigabytePerSecond(), 2, "links.json");
  std::ostringstream out;
  WriteDataParallelSweep(out, sweep, FitResult(), OutputFormat::kJson, false, &modeled);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const nlohmann::json& step = j["modeled_communication"]["steps"][0];
  EXPECT_EQ(j["modeled_communication"]["links"], "links.json");
  EXPECT_EQ(step["per_rank_batch"], 4);
  EXPECT_EQ(step["batch"], 8);
  // 44.22/50 - 1 = -0.1156; 46.24/50 - 1 = -0.0752.
  EXPECT_NEAR(step["overlapped_relative_error"].get<double>(), -0.1156, 1e-10);
  EXPECT_NEAR(step["serial_relative_error"].get<double>(), -0.0752, 1e-10);
  EXPECT_NEAR(step["modeled_exposed_s"].get<double>(), 3.02e-3, 1e-12);
}

TEST(WriteDataParallelSweep, TableComparesWithTheMeasuredStepOnlyAtTheRunsRanks) {
  const SweepResult sweep = OneMeasuredStep();
  const ModeledCommunication same = ModelCommunication(sweep, OneGigabytePerSecond(), 2, "l.json");
  std::ostringstream out;
  WriteDataParallelSweep(out, sweep, FitResult(), OutputFormat::kTable, false, &same);
  EXPECT_THAT(out.str(), HasSubstr("modeled from l.json on 2 ranks"));
  EXPECT_THAT(out.str(), HasSubstr("measured_ms"));
  EXPECT_THAT(out.str(), HasSubstr("-11.6"));  // (44.22/50 - 1) x 100, 3 digits
  EXPECT_THAT(out.str(), HasSubstr("-7.52"));  // (46.24/50 - 1) x 100
  // Four ranks predicted from a 2-rank run: nothing measured to compare with.
  const ModeledCommunication four = ModelCommunication(sweep, OneGigabytePerSecond(), 4, "l.json");
  std::ostringstream other;
  WriteDataParallelSweep(other, sweep, FitResult(), OutputFormat::kTable, false, &four);
  EXPECT_THAT(other.str(), HasSubstr("on 4 ranks"));
  EXPECT_THAT(other.str(), ::testing::Not(HasSubstr("measured_ms")));
}

TEST(WriteDataParallelSweep, WithoutModeledStepsItIsTheSweep) {
  const SweepResult sweep = OneMeasuredStep();
  std::ostringstream plain, written;
  WriteSweep(plain, sweep, FitResult(), OutputFormat::kCsv);
  WriteDataParallelSweep(written, sweep, FitResult(), OutputFormat::kCsv, false, nullptr);
  EXPECT_EQ(written.str(), plain.str());
}

}  // namespace
}  // namespace fitspeed
