// Golden tests of `fitspeed sweep` and `fitspeed demo`: they run real training
// steps on this CPU, so they use the small mlp-mnist network, one thread and
// short time budgets, and assert on structure and identities, never on speed.
//
// A sweep's fit can come out unusable (exit 1) when other processes share the
// CPU (ctest runs tests in parallel): its step times are then noise. The tests
// accept exit 0 or 1 and check that the exit code agrees with the fit's
// "usable" field and that everything else is there either way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_util.h"

namespace {

using ::fitspeed::test::CliRun;
using ::fitspeed::test::RunCli;
using ::testing::HasSubstr;

TEST(SweepCli, MeasuresEachBatchAndFitsTheLaw) {
  const CliRun run = RunCli(
      "sweep mlp-mnist --batches 1,4,16 --threads 1 --min-time 0 --min-repeats 3 --output json");
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["fits"].size(), 1u);
  EXPECT_EQ(json["fits"][0]["usable"].get<bool>(), run.exit_code == 0);
  EXPECT_EQ(json["schema"], "fitspeed.fit/1");
  ASSERT_EQ(json["measurements"].size(), 3u);
  const int64_t batches[] = {1, 4, 16};
  for (size_t i = 0; i < 3; ++i) {
    const auto& m = json["measurements"][i];
    EXPECT_EQ(m["batch"], batches[i]);
    EXPECT_GE(m["repeats"].get<int>(), 3);
    const double step_s = m["step_time_s"].get<double>();
    ASSERT_GT(step_s, 0);
    // samples/s = batch / step time.
    EXPECT_NEAR(m["throughput_sps"].get<double>(), batches[i] / step_s, 1e-9 * batches[i] / step_s);
  }
  // mlp-mnist is 784-512-512-10: forward multiply-adds per sample
  // 784*512 + 512*512 + 512*10 = 668,672, i.e. 1,337,344 FLOPs, plus the
  // elementwise bias, ReLU and loss work (< 0.5% more).
  const double forward = json["sweep"]["forward_flops_per_sample"].get<double>();
  EXPECT_GE(forward, 1337344);
  EXPECT_LT(forward, 1337344 * 1.005);
  EXPECT_EQ(json["fits"][0]["n_points"], 3);
  EXPECT_EQ(json["fits"][0]["group"]["label"], "mlp-mnist");
  EXPECT_EQ(json["context"]["threads"].get<int>(), 1);
  EXPECT_FALSE(json["context"]["isa"].get<std::string>().empty());
}

TEST(SweepCli, CsvHasAHeaderAndOneRowPerBatch) {
  const CliRun run =
      RunCli("sweep mlp-mnist --batches 2:8 --threads 1 --min-time 0 --min-repeats 2 --output csv");
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  std::istringstream lines(run.out);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  // 2:8 doubles from 2 to 8: batches 2, 4, 8.
  ASSERT_EQ(rows.size(), 4u) << run.out;
  EXPECT_THAT(rows[0], HasSubstr("batch,step_time_s"));
  EXPECT_EQ(rows[1].rfind("mlp-mnist,fp32,2,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[3].rfind("mlp-mnist,fp32,8,", 0), 0u) << rows[3];
}

TEST(SweepCli, UnknownModelIsAUsageErrorListingTheZoo) {
  const CliRun run = RunCli("sweep no-such-net");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("no-such-net"));
  EXPECT_THAT(run.err, HasSubstr("resnet18-cifar"));
}

TEST(SweepCli, BadBatchListIsAUsageError) {
  for (const char* batches : {"0", "1,x", "8:2", "1,,2"}) {
    const CliRun run = RunCli(std::string("sweep mlp-mnist --batches ") + batches);
    EXPECT_EQ(run.exit_code, 64) << batches;
    EXPECT_THAT(run.err, HasSubstr("--batches")) << batches;
  }
}

TEST(DemoCli, MeasuresThisCpuFitsAndProjectsCifarEpochs) {
  const CliRun run = RunCli("demo");
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  EXPECT_THAT(run.out, HasSubstr("cnn-cifar-small"));
  EXPECT_THAT(run.out, HasSubstr("v0 = "));
  EXPECT_THAT(run.out, HasSubstr("samples/s"));
  if (run.exit_code == 1) {  // the projection needs a usable fit
    EXPECT_THAT(run.err, HasSubstr("not usable"));
    return;
  }
  // The projection table: CIFAR-10 at batch 256 is ceil(50000/256) = 196 steps.
  EXPECT_THAT(run.out, HasSubstr("E=200"));
  EXPECT_THAT(run.out, HasSubstr(" 196 "));
  EXPECT_THAT(run.out, HasSubstr("Assumptions"));
}

TEST(DemoCli, LogFitsTheEmbeddedT4LogPerGpuCount) {
  const CliRun run = RunCli("demo --log --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.fit/1");
  // The embedded Pollux log has runs on 1, 2, 3 and 4 T4 GPUs: one fit each.
  EXPECT_EQ(json["fits"].size(), 4u);
}

}  // namespace
