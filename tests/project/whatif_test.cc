#include "fitspeed/project/whatif.h"

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

}  // namespace
}  // namespace fitspeed
