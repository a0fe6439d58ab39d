// Split conformal prediction intervals (fitspeed/core/prediction_interval.h):
// order statistics by hand, the reasons an interval is not given, the coverage
// the rule promises (checked by simulation against its exact value), and the
// combination with a fit's half-width.
#include "fitspeed/core/prediction_interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

// n errors -0.4, -0.3, ..., alternating between two sources (publishers): with odd n
// they are unequal (5 and 4 of 9), which the publisher weighting sees; the
// order statistics below hold under it (prediction_interval.h, by hand per test).
std::vector<ModelError> Ladder(int n, double step = 0.1) {
  std::vector<ModelError> errors;
  for (int i = 0; i < n; ++i) {
    errors.push_back(
        {i % 2 == 0 ? "a.csv" : "b.csv", "case" + std::to_string(i), (i - (n - 1) / 2.0) * step});
  }
  return errors;
}

TEST(EmpiricalIntervalTest, NineErrorsAtEightyPercentSpanTheExtremes) {
  // n = 9, level 0.8, a/2 = 0.1: k_lo = floor(10 x 0.1) = 1, k_hi = ceil(10 x 0.9) = 9,
  // so the interval is [e(1), e(9)] = [-0.4, 0.4] in log: x[0.6703, 1.4918].
  const PredictionInterval i = EmpiricalInterval(Ladder(9), 0.8, "gpu/fp32");
  ASSERT_TRUE(i.available) << i.reason;
  EXPECT_NEAR(i.low_factor, std::exp(-0.4), 1e-12);
  EXPECT_NEAR(i.high_factor, std::exp(0.4), 1e-12);
  EXPECT_NEAR(i.high_factor / i.low_factor, 2.2255409, 1e-6);  // exp(0.8), the width
  EXPECT_NEAR(i.median_log_ratio, 0.0, 1e-12);
  EXPECT_EQ(i.cases, 9);
  EXPECT_EQ(i.sources, 2);
  EXPECT_EQ(i.basis, "gpu/fp32");
  EXPECT_EQ(i.errors.size(), 9u);
}

TEST(EmpiricalIntervalTest, NineteenErrorsDropOneAtEachEnd) {
  // n = 19: k_lo = floor(20 x 0.1) = 2, k_hi = ceil(20 x 0.9) = 18: errors
  // -0.9 + 0.1 = -0.8 and +0.8 (the ladder runs -0.9..0.9).
  const PredictionInterval i = EmpiricalInterval(Ladder(19), 0.8, "c");
  ASSERT_TRUE(i.available);
  EXPECT_NEAR(std::log(i.low_factor), -0.8, 1e-12);
  EXPECT_NEAR(std::log(i.high_factor), 0.8, 1e-12);
}

TEST(EmpiricalIntervalTest, NinetyFivePercentNeedsThirtyNine) {
  // a/2 = 0.025: n = 38 gives k_lo = floor(39 x 0.025) = 0, not an order statistic.
  const PredictionInterval thin = EmpiricalInterval(Ladder(38), 0.95, "c");
  EXPECT_FALSE(thin.available);
  EXPECT_NE(thin.reason.find("at least 39"), std::string::npos) << thin.reason;
  // n = 39: k_lo = 1, k_hi = ceil(40 x 0.975) = 39.
  const PredictionInterval enough = EmpiricalInterval(Ladder(39), 0.95, "c");
  ASSERT_TRUE(enough.available);
  EXPECT_NEAR(std::log(enough.low_factor), -1.9, 1e-12);
  EXPECT_NEAR(std::log(enough.high_factor), 1.9, 1e-12);
}

TEST(EmpiricalIntervalTest, TooFewErrorsOrOneSourceGiveNoInterval) {
  const PredictionInterval eight = EmpiricalInterval(Ladder(8), 0.8, "gpu/tensor");
  EXPECT_FALSE(eight.available);
  EXPECT_NE(eight.reason.find("at least 9"), std::string::npos) << eight.reason;
  std::vector<ModelError> one_source = Ladder(20);
  for (ModelError& e : one_source) e.source = "only.csv";
  const PredictionInterval single = EmpiricalInterval(one_source, 0.8, "tpu/tensor");
  EXPECT_FALSE(single.available);
  EXPECT_NE(single.reason.find("2 or more publishers"), std::string::npos) << single.reason;
  EXPECT_FALSE(EmpiricalInterval({}, 0.8, "x").available);
}

TEST(EmpiricalIntervalTest, AsksForTheSourcesItIsGiven) {
  // Ladder(20)'s errors come from its sources; relabelled to 3 sources, a
  // rule asking for 4 gives no interval however many the cases, 3 does.
  std::vector<ModelError> errors = Ladder(20);
  for (size_t i = 0; i < errors.size(); ++i) errors[i].source = "s" + std::to_string(i % 3);
  const PredictionInterval four = EmpiricalInterval(errors, 0.8, "gpu/tensor", 4);
  EXPECT_FALSE(four.available);
  EXPECT_EQ(four.min_sources, 4);
  EXPECT_EQ(four.sources, 3);
  EXPECT_NE(
      four.reason.find("from 3 publisher(s); an interval needs cases from 4 or more publishers"),
      std::string::npos)
      << four.reason;
  const PredictionInterval three = EmpiricalInterval(errors, 0.8, "gpu/tensor", 3);
  EXPECT_TRUE(three.available) << three.reason;
  EXPECT_EQ(three.min_sources, 3);
  EXPECT_THROW(EmpiricalInterval(errors, 0.8, "c", 1), UsageError);
}

TEST(EmpiricalIntervalTest, RejectsBadLevelsAndErrors) {
  EXPECT_THROW(EmpiricalInterval(Ladder(9), 0.0, "c"), UsageError);
  EXPECT_THROW(EmpiricalInterval(Ladder(9), 1.0, "c"), UsageError);
  EXPECT_THROW(EmpiricalInterval(Ladder(9), std::nan(""), "c"), UsageError);
  std::vector<ModelError> bad = Ladder(9);
  bad[3].log_ratio = std::nan("");
  EXPECT_THROW(EmpiricalInterval(bad, 0.8, "c"), UsageError);
}

TEST(EmpiricalIntervalTest, CoversANewErrorAtTheRateTheOrderStatisticsGive) {
  // For n exchangeable continuous errors and a new one, P(e(k_lo) <= e_new <=
  // e(k_hi)) = (k_hi - k_lo) / (n + 1) exactly: 16/20 = 0.80 for n = 19 at
  // 80%. Each error its own publisher, so the weights are equal and the rule is
  // the plain order statistics. 4000 seeded draws: the standard error of the
  // share is 0.0063. The same draws labelled as two publishers of 10 and 9
  // errors (weights 1/20 and 1/18) move each end outwards where a publisher's
  // share falls short of (k - 1)/n: the rule is then conservative, not exact.
  std::mt19937_64 rng(20261126);
  std::lognormal_distribution<double> skewed(0.0, 0.7);  // any continuous law
  int covered = 0, covered_two = 0;
  const int trials = 4000;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<ModelError> errors;
    for (int i = 0; i < 19; ++i) {
      errors.push_back({"p" + std::to_string(i), "", std::log(skewed(rng))});
    }
    const PredictionInterval i = EmpiricalInterval(errors, 0.8, "sim");
    ASSERT_TRUE(i.available);
    for (int k = 0; k < 19; ++k) errors[static_cast<size_t>(k)].source = k % 2 ? "a" : "b";
    const PredictionInterval two = EmpiricalInterval(errors, 0.8, "sim");
    ASSERT_TRUE(two.available);
    const double fresh = skewed(rng);  // a throughput ratio
    if (fresh >= i.low_factor && fresh <= i.high_factor) ++covered;
    if (fresh >= two.low_factor && fresh <= two.high_factor) ++covered_two;
  }
  EXPECT_NEAR(static_cast<double>(covered) / trials, 0.80, 0.025);
  EXPECT_GE(covered_two, covered);  // never narrower: each end moves outwards or stays
}

TEST(CombinedTimeFactorsTest, QuadratureAroundTheMedianBias) {
  // Model on throughput: x[exp(-0.3), exp(0.1)], median -0.1 (the model is
  // too fast by ~10%): half-widths w_lo = 0.2, w_hi = 0.2. A fit half-width of
  // 15%: sqrt(0.2^2 + 0.15^2) = 0.25 on each side. A time moves the other way
  // around -m = +0.1: [exp(0.1 - 0.25), exp(0.1 + 0.25)] = [0.86071, 1.41907].
  PredictionInterval model;
  model.available = true;
  model.low_factor = std::exp(-0.3);
  model.high_factor = std::exp(0.1);
  model.median_log_ratio = -0.1;
  const TimeFactors f = CombinedTimeFactors(model, 0.15);
  EXPECT_NEAR(f.low, std::exp(-0.15), 1e-12);
  EXPECT_NEAR(f.high, std::exp(0.35), 1e-12);
  EXPECT_NEAR(f.low, 0.860708, 1e-6);
  EXPECT_NEAR(f.high, 1.419068, 1e-6);
  // Without a fit's part it is the model interval itself, inverted for time.
  const TimeFactors alone = CombinedTimeFactors(model, 0);
  EXPECT_NEAR(alone.low, 1 / model.high_factor, 1e-12);
  EXPECT_NEAR(alone.high, 1 / model.low_factor, 1e-12);
}

// A rate's interval scales it by the factors; the time it implies divides by
// them the other way round: throughput 100/s in x [0.5, 1.25] is [50, 125]/s,
// and a 10 s step is 10 / [1.25, 0.5] = [8, 20] s.
TEST(PredictionInterval, RateAndTimeRangesInvertTheFactors) {
  PredictionInterval i;
  i.available = true;
  i.low_factor = 0.5;
  i.high_factor = 1.25;
  EXPECT_DOUBLE_EQ(i.RateRange(100).first, 50);
  EXPECT_DOUBLE_EQ(i.RateRange(100).second, 125);
  EXPECT_DOUBLE_EQ(i.TimeRange(10).first, 8);
  EXPECT_DOUBLE_EQ(i.TimeRange(10).second, 20);
  i.available = false;
  EXPECT_TRUE(std::isnan(i.RateRange(100).first));
  EXPECT_TRUE(std::isnan(i.TimeRange(10).second));
}

}  // namespace
}  // namespace fitspeed
