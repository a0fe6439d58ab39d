// GroupFit::ThroughputInterval, the band of the fitted curve that the HTML
// reports draw, against the delta method written out by hand for the
// hyperbolic law.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fitspeed/fit/fit.h"

namespace fitspeed {
namespace {

// v(b) = b/(b/v0 + t) with v0 = 1000 samples/s, t = 0.1 s, times (1 + noise).
std::vector<Sample> Noisy() {
  const std::vector<double> batches = {8, 16, 32, 64, 128, 256, 512, 1024};
  const std::vector<double> noise = {0.02, -0.015, 0.01, -0.02, 0.015, -0.01, 0.02, -0.015};
  std::vector<Sample> samples;
  for (size_t i = 0; i < batches.size(); ++i) {
    Sample s;
    s.source = "bench.csv";
    s.line = static_cast<int>(i) + 2;
    s.batch = batches[i];
    s.throughput_sps = batches[i] / (batches[i] / 1000 + 0.1) * (1 + noise[i]);
    samples.push_back(s);
  }
  return samples;
}

TEST(CurveInterval, IsTheDeltaMethodOfTheHyperbolicLaw) {
  const GroupFit fit = FitGroup(Noisy());
  ASSERT_TRUE(fit.usable);
  ASSERT_EQ(fit.params[0].name, "v0");
  ASSERT_EQ(fit.params[1].name, "t");
  const double v0 = fit.params[0].value, t = fit.params[1].value;
  // The Student t quantile the fit used for its parameters' intervals at its
  // own confidence: ci_high = value + q x std_error.
  const double q = (fit.params[0].ci_high - v0) / fit.params[0].std_error;
  for (double b : {4.0, 100.0, 700.0, 5000.0}) {
    // v = b / T, T = b/v0 + t: dv/dv0 = (b/T)^2 / v0^2, dv/dt = -b / T^2.
    const double T = b / v0 + t, v = b / T;
    const double g0 = (v / v0) * (v / v0), g1 = -b / (T * T);
    const double var = g0 * g0 * fit.covariance(0, 0) + 2 * g0 * g1 * fit.covariance(0, 1) +
                       g1 * g1 * fit.covariance(1, 1);
    const auto [low, high] = fit.ThroughputInterval(b, fit.confidence);
    EXPECT_NEAR(high - v, q * std::sqrt(var), 1e-5 * q * std::sqrt(var)) << "b = " << b;
    EXPECT_NEAR(v - low, q * std::sqrt(var), 1e-5 * q * std::sqrt(var)) << "b = " << b;
  }
}

TEST(CurveInterval, NarrowsAsTheLevelFalls) {
  const GroupFit fit = FitGroup(Noisy());
  const auto [low95, high95] = fit.ThroughputInterval(256, 0.95);
  const auto [low50, high50] = fit.ThroughputInterval(256, 0.5);
  EXPECT_LT(high50 - low50, high95 - low95);
  EXPECT_LT(low95, fit.PredictThroughput(256));
  EXPECT_GT(high95, fit.PredictThroughput(256));
}

TEST(CurveInterval, IsNaNWithoutAUsableFit) {
  GroupFit fit = FitGroup(Noisy());
  fit.usable = false;
  const auto [low, high] = fit.ThroughputInterval(256, 0.95);
  EXPECT_TRUE(std::isnan(low));
  EXPECT_TRUE(std::isnan(high));
  const GroupFit ok = FitGroup(Noisy());
  EXPECT_TRUE(std::isnan(ok.ThroughputInterval(256, 1.0).first));  // level outside (0, 1)
}

}  // namespace
}  // namespace fitspeed
