// The step model against Pollux's 2-4 GPU placements
// (fitspeed/device/placements.h): what is read, and the relations the two
// all-reduce models must keep. The errors themselves are reported by
// `fitspeed validate --placements` and docs/validation.md.
#include "fitspeed/device/placements.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

namespace fitspeed {
namespace {

PlacementCheck Check() {
  DeviceLink network;
  network.name = "test";
  network.connects = "network";
  network.bandwidth_bytes_per_s = 6.25e9;
  network.latency_s = 30e-6;
  return CheckPolluxPlacements(std::string(FITSPEED_TEST_DATA_DIR) +
                                   "/measured/pollux_t4_single_node.csv",
                               LoadDevice("t4"), network);
}

TEST(PolluxPlacements, ReadsPlacementsTwoToFourOfTheThreeModels) {
  const PlacementCheck check = Check();
  // pollux_t4_single_node.csv: bert 5 batches, cifar10 11, imagenet 8, each at
  // placements 2, 3 and 4.
  std::map<std::string, int> per_model;
  for (const PlacementCase& c : check.cases) {
    ++per_model[c.model];
    EXPECT_GE(c.gpus, 2);
    EXPECT_LE(c.gpus, 4);
    EXPECT_FALSE(std::isnan(c.measured_single_s)) << c.model << " " << c.per_gpu_batch;
  }
  EXPECT_EQ(per_model["bert"], 15);
  EXPECT_EQ(per_model["cifar10"], 33);
  EXPECT_EQ(per_model["imagenet"], 24);
  ASSERT_EQ(check.summaries.size(), 4u);
  EXPECT_EQ(check.summaries.back().model, "all");
  EXPECT_EQ(check.summaries.back().cases, 72);
}

TEST(PolluxPlacements, OverlapNeverLengthensTheStep) {
  for (const PlacementCase& c : Check().cases) {
    EXPECT_LE(c.overlapped_exposed_s, c.overlapped_comm_s + 1e-15);
    EXPECT_LE(c.overlapped_step_s, c.serial_step_s + 1e-12) << c.model << " x" << c.gpus;
    // Buckets pay the latency each: all of it is at least the serial all-reduce.
    EXPECT_GE(c.overlapped_comm_s, c.serial_comm_s - 1e-15);
  }
}

TEST(PolluxPlacements, MoreNodesCostMore) {
  const PlacementCheck check = Check();
  // 2x4 and 4x4 at the 4-GPU placement's batches: 24 each.
  ASSERT_EQ(check.predictions.size(), 48u);
  std::map<std::pair<std::string, int64_t>, double> two;
  for (const NodePrediction& p : check.predictions) {
    if (p.nodes == 2) two[{p.model, p.per_gpu_batch}] = p.overlapped_step_s;
  }
  for (const NodePrediction& p : check.predictions) {
    EXPECT_LE(p.overlapped_step_s, p.serial_step_s + 1e-12);
    if (p.nodes == 4) {
      EXPECT_GE(p.overlapped_step_s, two.at({p.model, p.per_gpu_batch}));
    }
  }
}

}  // namespace
}  // namespace fitspeed
