// Distributions and tests behind the fit's intervals and warnings, against
// hand calculations and statistical tables.
#include "fit/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fitspeed {
namespace {

TEST(StudentTQuantile, MatchesTables) {
  // t_0.975 with 12 and 1 degrees of freedom; t_0.995(5) (standard tables).
  EXPECT_NEAR(StudentTQuantile(0.975, 12), 2.178812829667, 1e-11);
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.706204736175, 1e-10);
  EXPECT_NEAR(StudentTQuantile(0.995, 5), 4.032142983558, 1e-10);
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.975, 0)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(1.5, 4)));
}

TEST(FUpperTail, MatchesTables) {
  // The 5% critical value of F(1, 10) is 4.964602743; of F(1, 30) 4.170876786.
  EXPECT_NEAR(FUpperTail(4.964602743, 1, 10), 0.05, 1e-9);
  EXPECT_NEAR(FUpperTail(4.170876786, 1, 30), 0.05, 1e-9);
  EXPECT_TRUE(std::isnan(FUpperTail(1, 1, 0)));
}

TEST(WaldWolfowitzRuns, ExactProbabilities) {
  // ++++---- : 2 runs of n1 = n2 = 4; P(R = 2) = 2/C(8,4) = 2/70.
  RunsTest test = WaldWolfowitzRuns({true, true, true, true, false, false, false, false});
  EXPECT_EQ(test.runs, 2);
  EXPECT_EQ(test.positive, 4);
  EXPECT_EQ(test.negative, 4);
  EXPECT_NEAR(test.p_few_runs, 2.0 / 70, 1e-14);
  // +++--- then +: n1 = 4, n2 = 3, R = 3. C(7,4) = 35; P(R=2) = 2/35;
  // P(R=3) = [C(3,0)C(2,1) + C(3,1)C(2,0)]/35 = 5/35; P(R <= 3) = 7/35 = 0.2.
  test = WaldWolfowitzRuns({true, true, true, false, false, false, true});
  EXPECT_EQ(test.runs, 3);
  EXPECT_NEAR(test.p_few_runs, 0.2, 1e-14);
  // Alternating signs have the most runs possible: P(R <= max) = 1.
  test = WaldWolfowitzRuns({true, false, true, false, true, false});
  EXPECT_EQ(test.runs, 6);
  EXPECT_NEAR(test.p_few_runs, 1, 1e-14);
  // One sign only: no test.
  EXPECT_EQ(WaldWolfowitzRuns({true, true, true}).p_few_runs, 1);
}

TEST(ConstantModelRss, AbsoluteAndRelative) {
  // Absolute: {1, 2, 3} about their mean 2: 1 + 0 + 1 = 2.
  EXPECT_DOUBLE_EQ(ConstantModelRss(Objective::kAbsoluteTime, {1, 2, 3}), 2);
  EXPECT_DOUBLE_EQ(ConstantModelRss(Objective::kAbsoluteThroughput, {1, 2, 3}), 2);
  // Relative-time {1, 2}: c = (1 + 1/2)/(1 + 1/4) = 1.2; (0.2)^2 + (0.6 - 1)^2 = 0.2.
  EXPECT_NEAR(ConstantModelRss(Objective::kRelativeTime, {1, 2}), 0.2, 1e-15);
}

}  // namespace
}  // namespace fitspeed
