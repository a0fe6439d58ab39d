// The scenario layer's requests (fitspeed/scenario/): each refuses a bad field
// by name, and Run() gives what the library's own steps give when assembled
// by hand, so the CLI and Python, which only fill requests, answer alike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "fitspeed/core/error.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/scenario/llm.h"
#include "fitspeed/scenario/sweep.h"

namespace fitspeed {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The message of the UsageError `run` throws ("" when it throws none).
template <class F>
std::string UsageMessage(F run) {
  try {
    run();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ParseBatchList, DoublesFromAToB) {
  EXPECT_THAT(ParseBatchList("3:24", "--batches"), ElementsAre(3, 6, 12, 24));
  EXPECT_THAT(ParseBatchList("1,5,2", "--batches"), ElementsAre(1, 5, 2));
  EXPECT_TRUE(ParseBatchList("auto", "--batches").empty());
}

TEST(ParseBatchList, RefusesBatchesAboveTwoToTheThirtyNamingTheOption) {
  // 2^62 doubled from 1 would overflow int64 after 2^62; the list stops at 2^30.
  EXPECT_THAT(UsageMessage([] { ParseBatchList("1:4611686018427387904", "--batches"); }),
              HasSubstr("--batches: 4611686018427387904 is above the largest batch"));
  EXPECT_THAT(UsageMessage([] { ParseBatchList("0,2", "--batches"); }),
              HasSubstr("'0' is not a batch size >= 1"));
  EXPECT_THAT(UsageMessage([] { ParseBatchList("8:2", "--batches"); }), HasSubstr("2 < 8"));
  // The largest batch itself is taken.
  EXPECT_THAT(ParseBatchList("1073741824", "-b"), ElementsAre(int64_t{1} << 30));
}

TEST(JudgeSweep, OneBatchAloneIsAMeasurementNotAFailure) {
  HostSweepAnswer one;
  JudgeSweep(1, /*all_fitted=*/true, FitResult(), one);
  EXPECT_TRUE(one.usable);
  ASSERT_EQ(one.notes.size(), 1u);
  EXPECT_THAT(one.notes[0], HasSubstr("1 batch size(s) measured"));
  HostSweepAnswer skipped;
  JudgeSweep(1, /*all_fitted=*/false, FitResult(), skipped);
  EXPECT_FALSE(skipped.usable);
  EXPECT_THAT(skipped.problem, HasSubstr("needs 2 or more"));
}

TEST(DeviceSweepRequest, RefusesFieldsByName) {
  DeviceSweepRequest r;
  r.model = "resnet50";
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("device"));
  r.device = "a100";
  r.interval_level = 1;
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("interval_level 1"));
  r.interval_level = 0.8;
  r.options.max_batch = int64_t{1} << 62;
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("max_batch"));
}

TEST(DeviceSweepRequest, RunIsTheLibrarysStepsAssembledByHand) {
  DeviceSweepRequest r;
  r.model = "resnet50";
  r.device = "a100";
  r.options.batches = {32, 64, 128};
  r.options.precision = Precision::kMixed;
  const DeviceSweepAnswer answer = r.Run();

  // By hand: the network, the device, the pytorch AMP list (no framework
  // given), every batch modeled, the catalog's interval for (a100, mixed).
  DeviceModelOptions options = r.options;
  options.amp_ops = AmpOpList::kPyTorch;
  options.fusion = ElementwiseFusion::kNone;
  const Device device = LoadDevice("a100");
  const DeviceSweepResult sweep = ModelSweep(LoadNetwork("resnet50"), device, options);
  ASSERT_EQ(answer.sweep.steps.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(answer.sweep.steps[i].step_time_s, sweep.steps[i].step_time_s);
  }
  const PredictionInterval interval = BuiltinIntervalTable().For(device, Precision::kMixed, 0.8);
  EXPECT_EQ(answer.interval.low_factor, interval.low_factor);
  EXPECT_EQ(answer.interval.high_factor, interval.high_factor);
  ASSERT_EQ(answer.fit.fits.size(), 1u);
  EXPECT_TRUE(answer.usable);
  EXPECT_TRUE(answer.notes.empty());
  EXPECT_THAT(answer.ToJson(), HasSubstr("\"model_interval\""));
  EXPECT_THAT(answer.BriefReport(), HasSubstr("resnet50 modeled on a100 (mixed, 1 device)"));
}

TEST(DeviceSweepRequest, SaysWhereEachLinkCameFrom) {
  const std::string path = ::testing::TempDir() + "scenario_links.json";
  std::ofstream(path) << R"({"schema": "fitspeed.links/1", "links": [{"name": "ib",
    "connects": "devices", "bandwidth_bytes_per_s": {"value": 2.5e10, "source": "measured"},
    "latency_s": {"value": 2e-6, "source": "assumed"}}]})";
  DeviceSweepRequest r;
  r.model = "resnet50";
  r.device = "a100";
  r.links = path;
  r.options.batches = {32, 64};
  r.options.devices = 2;
  const DeviceSweepAnswer answer = r.Run();
  ASSERT_EQ(answer.notes.size(), 1u);
  EXPECT_THAT(answer.notes[0], HasSubstr("the devices link of a100 comes from " + path +
                                         ": 'ib', 2.5e+10 B/s (measured), latency 2e-06 s "
                                         "(assumed)"));
}

TEST(DeviceSweepRequest, SaysAZooTransformerIsAlsoTheSplitModels) {
  // gpt2 is in the zoo and among the built-in transformers (two models of it).
  DeviceSweepRequest r;
  r.model = "gpt2";
  r.device = "a100";
  r.zoo.seq_len = 128;
  r.options.batches = {1, 2};
  const DeviceSweepAnswer answer = r.Run();
  ASSERT_FALSE(answer.notes.empty());
  EXPECT_THAT(answer.notes[0], HasSubstr("`fitspeed sweep llm gpt2 --device a100 ...`"));
}

TEST(LlmStepRequest, DerivesTheDataParallelSizeAndGlobalBatch) {
  LlmStepRequest r;
  r.model = "llama-2-7b";
  r.cluster.device = "h100";
  r.cluster.devices = 16;
  r.training.seq_len = 4096;
  r.split.tp = 2;
  r.split.pp = 2;
  r.split.micro_batch = 2;
  const LlmStepAnswer answer = r.Run();
  // dp = 16 / (tp 2 x pp 2 x cp 1) = 4; global batch = micro-batch 2 x dp 4 = 8.
  EXPECT_EQ(answer.step.split.dp, 4);
  EXPECT_EQ(answer.step.split.global_batch, 8);
  // The same step from the library's own calls.
  LlmSplit split = r.split;
  split.dp = 4;
  split.global_batch = 8;
  split.zero = 0;  // what the request's -1 means under Megatron, the default framework
  const LlmCluster cluster = MakeCluster(LoadDevice("h100"), 16);
  const LlmStep step = ModelLlmStep(LoadTransformer("llama-2-7b"), cluster, r.training, split,
                                    LlmCalibrationFor(cluster.device));
  EXPECT_EQ(answer.step.step_s, step.step_s);
  // Without devices: tp x pp x cp of them, dp 1.
  r.cluster.devices = 0;
  r.split.global_batch = 0;
  EXPECT_EQ(r.Run().cluster.devices, 4);
}

TEST(LlmStepRequest, RefusesAZooNetworkAndPartialDomains) {
  LlmStepRequest r;
  r.model = "resnet50";
  r.cluster.device = "h100";
  r.training.seq_len = 2048;
  EXPECT_THAT(UsageMessage([&] { r.Run(); }), HasSubstr("'resnet50' is a zoo network"));
  r.model = "llama-2-7b";
  r.cluster.devices = 8;
  r.cluster.devices_per_node = 3;
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("devices_per_node 3"));
}

TEST(LlmPlanRequest, RefusesNonFiniteTokensAndPrices) {
  LlmPlanRequest r;
  r.model = "llama-2-7b";
  r.cluster.device = "h100";
  r.cluster.devices = 8;
  r.options.global_batch = 64;
  r.options.training.seq_len = 4096;
  r.tokens = std::nan("");
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("tokens nan"));
  r.tokens = 1e12;
  r.price_per_device_hour = std::numeric_limits<double>::infinity();
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("price per device-hour inf"));
  r.tokens.reset();
  r.price_per_device_hour = 2.0;
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("give its tokens"));
  r.cluster.devices = 0;
  EXPECT_THAT(UsageMessage([&] { r.Validate(); }), HasSubstr("devices 0"));
}

}  // namespace
}  // namespace fitspeed
