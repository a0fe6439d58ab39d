// The leave-one-out error of large groups (GroupFit::loo_one_step): one
// Gauss-Newton step per point instead of a refit. For least squares the error
// of a point predicted without it is its residual / (1 - h_ii), h_ii its
// leverage, whose mean is p/n: with n = 2,400 points and p = 2 the
// leave-one-out RMSE lies just above the in-sample one, by about p/n.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fitspeed/fit/fit.h"

namespace fitspeed {
namespace {

// v(b) = b/(b/v0 + t), v0 = 1000 samples/s, t = 0.1 s, times 1 + a deterministic
// noise of about 1%, at six batches.
std::vector<Sample> Points(int n) {
  const double batches[] = {16, 32, 64, 128, 256, 512};
  std::vector<Sample> samples;
  for (int i = 0; i < n; ++i) {
    Sample s;
    s.source = "bench.csv";
    s.line = i + 2;
    s.batch = batches[i % 6];
    s.throughput_sps = s.batch / (s.batch / 1000 + 0.1) * (1 + 0.01 * std::sin(1.7 * i + 0.3));
    samples.push_back(s);
  }
  return samples;
}

TEST(LeaveOneOut, LargeGroupsTakeOneStepAndLandJustAboveTheInSampleError) {
  const GroupFit fit = FitGroup(Points(kExactLeaveOneOutPoints + 400));
  ASSERT_TRUE(fit.usable);
  EXPECT_TRUE(fit.loo_one_step);
  EXPECT_GT(fit.loo_rel_rmse, fit.rel_rmse);
  EXPECT_LT(fit.loo_rel_rmse, fit.rel_rmse * 1.01);
}

TEST(LeaveOneOut, GroupsUpToTheLimitAreRefitted) {
  const GroupFit fit = FitGroup(Points(60));
  ASSERT_TRUE(fit.usable);
  EXPECT_FALSE(fit.loo_one_step);
  // 60 points, p = 2: above the in-sample error by a few percent (p/n = 3%).
  EXPECT_GT(fit.loo_rel_rmse, fit.rel_rmse);
  EXPECT_LT(fit.loo_rel_rmse, fit.rel_rmse * 1.1);
}

// On either side of the limit, the one-step error (2,001 points) and the
// refits' (2,000 points) each land at rel_rmse x (1 + p/n), the leverage
// formula of the file's comment, within 0.1%: the two methods agree with it,
// hence with each other, where every leverage is small.
TEST(LeaveOneOut, OneStepAndRefitsBothMatchTheLeverageFormulaAtTheLimit) {
  const GroupFit big = FitGroup(Points(kExactLeaveOneOutPoints + 1));
  const GroupFit exact = FitGroup(Points(kExactLeaveOneOutPoints));
  ASSERT_TRUE(big.loo_one_step);
  ASSERT_FALSE(exact.loo_one_step);
  const double expected_big = big.rel_rmse * (1 + 2.0 / big.n_points);
  const double expected_exact = exact.rel_rmse * (1 + 2.0 / exact.n_points);
  EXPECT_NEAR(big.loo_rel_rmse / expected_big, 1, 1e-3);
  EXPECT_NEAR(exact.loo_rel_rmse / expected_exact, 1, 1e-3);
}

}  // namespace
}  // namespace fitspeed
