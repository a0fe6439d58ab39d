#include "fitspeed/project/whatif.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

TEST(FitHostOverhead, SplitsDeviceAndHostTime) {
  // t(k) = 0.002 + 0.03/k: k = 1 -> 0.032, k = 10 -> 0.005, k = 100 -> 0.0023.
  const HostOverheadFit fit = FitHostOverhead({{1, 0.032}, {10, 0.005}, {100, 0.0023}});
  EXPECT_NEAR(fit.t_device_s, 0.002, 1e-15);
  EXPECT_NEAR(fit.t_host_s, 0.03, 1e-14);
  EXPECT_EQ(fit.dof, 1);
  // The gain of k = 1000: t = 0.002 + 0.00003 = 0.00203 s.
  EXPECT_NEAR(fit.FixedTime(1000), 0.00203, 1e-15);
}

TEST(FitHostOverhead, TwoRunsDetermineItExactly) {
  // k = 1: 0.05, k = 4: 0.02 -> t_host*(1 - 1/4) = 0.03, t_host = 0.04, t_device = 0.01.
  const HostOverheadFit fit = FitHostOverhead({{1, 0.05}, {4, 0.02}});
  EXPECT_NEAR(fit.t_host_s, 0.04, 1e-15);
  EXPECT_NEAR(fit.t_device_s, 0.01, 1e-15);
  EXPECT_EQ(fit.dof, 0);
}

TEST(FitHostOverhead, NeedsTwoDistinctK) {
  EXPECT_THROW(FitHostOverhead({{4, 0.02}, {4, 0.021}}), DataError);
  EXPECT_THROW(FitHostOverhead({{0.5, 0.02}, {4, 0.021}}), DataError);
  EXPECT_THROW(FitHostOverhead({{1, -0.02}, {4, 0.021}}), DataError);
}

TEST(WithStepsPerCall, ReplacesTheFixedTime) {
  SpeedLaw law;
  law.v0_sps = 1000;
  law.t_s = 0.032;
  const SpeedLaw faster = WithStepsPerCall(law, FitHostOverhead({{1, 0.032}, {10, 0.005}}), 100);
  // t(k) through (1, 0.032) and (10, 0.005): t_host = 0.027/0.9 = 0.03, t_device = 0.002;
  // t(100) = 0.0023.
  EXPECT_NEAR(faster.t_s, 0.0023, 1e-15);
  EXPECT_EQ(faster.v0_sps, 1000);
}

TEST(ScaleSpeedLaw, ScalesValuesAndCovariance) {
  // Mixed precision what-if: v0 x2, t x0.5. Cov(a X, b Y) = ab Cov(X, Y):
  // (100, 0.004; 0.004, 1e-6) -> (400, 0.004; 0.004, 2.5e-7).
  SpeedLaw law;
  law.v0_sps = 1000;
  law.t_s = 0.05;
  law.covariance << 100, 0.004, 0.004, 1e-6;
  law.dof = 3;
  const SpeedLaw scaled = ScaleSpeedLaw(law, 2, 0.5);
  EXPECT_EQ(scaled.v0_sps, 2000);
  EXPECT_EQ(scaled.t_s, 0.025);
  EXPECT_NEAR(scaled.covariance(0, 0), 400, 1e-12);
  EXPECT_NEAR(scaled.covariance(0, 1), 0.004, 1e-15);
  EXPECT_NEAR(scaled.covariance(1, 1), 2.5e-7, 1e-20);
  EXPECT_EQ(scaled.dof, 3);
  EXPECT_THROW(ScaleSpeedLaw(law, 0, 1), UsageError);
}

TEST(ThroughputCurve, FollowsTheLaw) {
  // v0 = 1000, t = 0.064: b_half = 64, so v(64) = 500 and v(576) = 900 (b = 9 b_half).
  SpeedLaw law;
  law.v0_sps = 1000;
  law.t_s = 0.064;
  const std::vector<double> v = ThroughputCurve(law, {64, 576});
  EXPECT_NEAR(v[0], 500, 1e-9);
  EXPECT_NEAR(v[1], 900, 1e-9);
}

TEST(ParseFixedTimesAtK, ReadsKAndADuration) {
  // "4=50ms": k = 4 at 0.05 s; "1=0.08": a bare number is seconds.
  const std::vector<FixedTimeAtK> points = ParseFixedTimesAtK({"1=0.08", "4=50ms"});
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].steps_per_call, 1);
  EXPECT_DOUBLE_EQ(points[0].t_s, 0.08);
  EXPECT_EQ(points[1].steps_per_call, 4);
  EXPECT_DOUBLE_EQ(points[1].t_s, 0.05);
}

TEST(ParseFixedTimesAtK, RefusesItemsNotKEqualsSeconds) {
  EXPECT_THROW(ParseFixedTimesAtK({"4"}), UsageError);       // no '='
  EXPECT_THROW(ParseFixedTimesAtK({"x=1"}), UsageError);     // K not a number
  EXPECT_THROW(ParseFixedTimesAtK({"4=fast"}), UsageError);  // not a duration
  try {
    ParseFixedTimesAtK({"4"}, "--spe-t");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--spe-t '4' is not K=SECONDS");
  }
}

// v0 = 1000 samples/s, t = 0.05 s at batch 100 over N = 50000: 500 steps of
// 100/1000 + 0.05 = 0.15 s, a 75 s epoch.
Configuration OneConfiguration() {
  Configuration c;
  c.label = "gpu";
  c.law.v0_sps = 1000;
  c.law.t_s = 0.05;
  c.batches = {100};
  return c;
}

Workload FiftyThousand() {
  Workload w;
  w.samples_per_epoch = 50000;
  return w;
}

TEST(LawModels, OneModelPerBatchWithoutWhatIfs) {
  const std::vector<EpochModel> models = LawModels(OneConfiguration(), FiftyThousand());
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].label, "gpu");
  EXPECT_NEAR(models[0].epoch_s, 75, 1e-9);
}

TEST(LawModels, ScaledAndStepsPerCallRowsFollowEachBatch) {
  WhatIfs whatifs;
  // v0 x2, t x1: 500 x (100/2000 + 0.05) = 50 s.
  whatifs.scale_v0 = 2;
  // t(k) = 0.02 + 0.12/k; at k = 8, 0.035 s: 500 x (0.1 + 0.035) = 67.5 s.
  whatifs.host = FitHostOverhead({{1, 0.14}, {4, 0.05}});
  whatifs.steps_per_call = 8;
  const std::vector<EpochModel> models = LawModels(OneConfiguration(), FiftyThousand(), whatifs);
  ASSERT_EQ(models.size(), 3u);
  EXPECT_NEAR(models[0].epoch_s, 75, 1e-9);
  EXPECT_EQ(models[1].label, "gpu what-if v0x2 tx1");
  EXPECT_EQ(models[1].origin, "what-if");
  EXPECT_NEAR(models[1].epoch_s, 50, 1e-9);
  EXPECT_EQ(models[2].label, "gpu k=8");
  EXPECT_EQ(models[2].origin, "what-if");
  EXPECT_NEAR(models[2].epoch_s, 67.5, 1e-9);
}

TEST(WhatIfNotes, NameTheHostFitAndTheFactors) {
  EXPECT_TRUE(WhatIfNotes({}).empty());
  WhatIfs whatifs;
  whatifs.scale_t = 0.5;
  whatifs.host = FitHostOverhead({{1, 0.14}, {4, 0.05}});  // t_device 0.02, t_host 0.12
  whatifs.steps_per_call = 8;                              // t(8) = 0.035
  const std::vector<std::string> notes = WhatIfNotes(whatifs);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], ::testing::HasSubstr("t_device = 0.02 s, t_host = 0.12 s"));
  EXPECT_THAT(notes[0], ::testing::HasSubstr("rows 'k=8' use t(8) = 0.035 s"));
  EXPECT_THAT(notes[1], ::testing::HasSubstr("v0 x1 and t x0.5"));
}

}  // namespace
}  // namespace fitspeed
