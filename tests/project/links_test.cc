#include "fitspeed/project/links.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/project/scaling.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

constexpr double kPi = 3.14159265358979323846;

// Message sizes 4 B, 16 B, ..., 256 MiB (4^1 .. 4^14), as linkbench times them.
std::vector<double> Sizes() {
  std::vector<double> sizes;
  for (double s = 4; s <= 268435456; s *= 4) sizes.push_back(s);
  return sizes;
}

std::vector<LinkTiming> Exact(double alpha, double beta) {
  std::vector<LinkTiming> timings;
  for (double s : Sizes()) timings.push_back({s, alpha + beta * s});
  return timings;
}

// Times alpha + beta*S multiplied by exp(sigma*z), z standard normal from
// Box-Muller over mt19937 (whose output the standard fixes): the same data on
// every platform.
std::vector<LinkTiming> Noisy(double alpha, double beta, double sigma, unsigned seed) {
  std::mt19937 engine(seed);
  auto uniform = [&engine] { return (engine() + 0.5) / 4294967296.0; };
  std::vector<LinkTiming> timings;
  for (double s : Sizes()) {
    const double z = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * kPi * uniform());
    timings.push_back({s, (alpha + beta * s) * std::exp(sigma * z)});
  }
  return timings;
}

constexpr double kAlpha = 3e-6;       // 3 us per all-reduce
constexpr double kBeta = 1 / 1.2e10;  // 12 GB/s
constexpr double kBytes256M = 268435456;

TEST(FitAlphaBeta, RecoversExactDataExactly) {
  const AlphaBetaFit fit = FitAlphaBeta(Exact(kAlpha, kBeta));
  EXPECT_TRUE(fit.converged);
  EXPECT_EQ(fit.points, 14);
  EXPECT_NEAR(fit.alpha_s / kAlpha, 1, 1e-9);
  EXPECT_NEAR(fit.beta_s_per_byte / kBeta, 1, 1e-9);
  EXPECT_LT(fit.rms_relative_residual, 1e-10);
  EXPECT_LT(fit.max_relative_residual, 1e-10);
  EXPECT_LT(fit.alpha_std_error, 1e-9 * kAlpha);
  EXPECT_LT(fit.beta_std_error, 1e-9 * kBeta);
  EXPECT_LE(fit.alpha_ci_low, fit.alpha_s);
  EXPECT_GE(fit.alpha_ci_high, fit.alpha_s);
  EXPECT_NEAR(fit.Predict(kBytes256M), kAlpha + kBeta * kBytes256M, 1e-9 * fit.Predict(kBytes256M));
}

TEST(FitAlphaBeta, RecoversNoisyDataWithinItsIntervals) {
  const AlphaBetaFit fit = FitAlphaBeta(Noisy(kAlpha, kBeta, 0.05, 16));
  EXPECT_TRUE(fit.converged);
  EXPECT_LE(fit.alpha_ci_low, kAlpha);
  EXPECT_GE(fit.alpha_ci_high, kAlpha);
  EXPECT_LE(fit.beta_ci_low, kBeta);
  EXPECT_GE(fit.beta_ci_high, kBeta);
  EXPECT_GT(fit.alpha_std_error, 0);
  EXPECT_GT(fit.beta_std_error, 0);
  // 5% noise: the residuals are of that size.
  EXPECT_GT(fit.rms_relative_residual, 0.01);
  EXPECT_LT(fit.rms_relative_residual, 0.15);
  EXPECT_GE(fit.max_relative_residual, fit.rms_relative_residual);
}

TEST(FitAlphaBeta, IntervalsCoverTheTruthAtAboutTheirConfidence) {
  // Gaussian relative noise is the model the t intervals assume: over 400 data
  // sets about 95% of them hold the true value (binomial sd ~1.1%).
  int alpha_in = 0, beta_in = 0;
  constexpr int kSets = 400;
  for (unsigned seed = 1; seed <= kSets; ++seed) {
    const AlphaBetaFit fit = FitAlphaBeta(Noisy(kAlpha, kBeta, 0.05, seed));
    alpha_in += fit.alpha_ci_low <= kAlpha && kAlpha <= fit.alpha_ci_high;
    beta_in += fit.beta_ci_low <= kBeta && kBeta <= fit.beta_ci_high;
  }
  EXPECT_GT(alpha_in, 0.90 * kSets);
  EXPECT_LT(alpha_in, 0.99 * kSets);
  EXPECT_GT(beta_in, 0.90 * kSets);
  EXPECT_LT(beta_in, 0.99 * kSets);
}

TEST(FitAlphaBeta, MatchesAHandCalculatedThreePointFit) {
  // (S, t) = (0, 1), (1, 2), (2, 4). Residual r_i = alpha*u_i + beta*v_i - 1 with
  // u = 1/t = (1, 1/2, 1/4), v = S/t = (0, 1/2, 1/2). Normal equations:
  //   [sum u^2, sum uv; sum uv, sum v^2] = [21/16, 3/8; 3/8, 1/2], rhs (sum u, sum v) = (7/4, 1)
  //   x16: [21 6; 6 8] (alpha, beta) = (28, 16), det 132:
  //   alpha = (28*8 - 6*16)/132 = 32/33, beta = (21*16 - 6*28)/132 = 14/11.
  // Residuals: 32/33 - 1 = -1/33; (32/33 + 14/11)/2 - 1 = 4/33; (32/33 + 28/11)/4 - 1 = -4/33.
  // RSS = 33/1089 = 1/33, dof 1, s^2 = 1/33; rms = sqrt(1/99), max = 4/33.
  // (J^T J)^-1 = 64/33 * [1/2, -3/8; -3/8, 21/16] = [32/33, -24/33; -24/33, 84/33]:
  //   se(alpha) = sqrt(32)/33, se(beta) = sqrt(84)/33.
  // t with 1 dof is Cauchy: t_0.975 = tan(0.475 pi) = 12.7062...; alpha's lower end
  // 32/33 - 12.7*0.171 < 0 is clipped at 0.
  const AlphaBetaFit fit = FitAlphaBeta({{0, 1}, {1, 2}, {2, 4}});
  EXPECT_TRUE(fit.converged);
  EXPECT_NEAR(fit.alpha_s, 32.0 / 33, 1e-10);
  EXPECT_NEAR(fit.beta_s_per_byte, 14.0 / 11, 1e-10);
  EXPECT_NEAR(fit.rms_relative_residual, std::sqrt(1.0 / 99), 1e-10);
  EXPECT_NEAR(fit.max_relative_residual, 4.0 / 33, 1e-10);
  EXPECT_NEAR(fit.alpha_std_error, std::sqrt(32.0) / 33, 1e-8);
  EXPECT_NEAR(fit.beta_std_error, std::sqrt(84.0) / 33, 1e-8);
  const double t = std::tan(0.475 * kPi);
  EXPECT_EQ(fit.alpha_ci_low, 0);
  EXPECT_NEAR(fit.alpha_ci_high, 32.0 / 33 + t * std::sqrt(32.0) / 33, 1e-6);
  EXPECT_EQ(fit.beta_ci_low, 0);  // 14/11 - 12.7*0.278 < 0
  EXPECT_NEAR(fit.beta_ci_high, 14.0 / 11 + t * std::sqrt(84.0) / 33, 1e-6);
  EXPECT_EQ(fit.points, 3);
}

TEST(FitAlphaBeta, ShufflingLeavesTheFitUnchanged) {
  std::vector<LinkTiming> timings = Noisy(kAlpha, kBeta, 0.05, 7);
  const AlphaBetaFit a = FitAlphaBeta(timings);
  std::reverse(timings.begin(), timings.end());
  std::rotate(timings.begin(), timings.begin() + 5, timings.end());
  const AlphaBetaFit b = FitAlphaBeta(timings);
  EXPECT_NEAR(b.alpha_s / a.alpha_s, 1, 1e-8);
  EXPECT_NEAR(b.beta_s_per_byte / a.beta_s_per_byte, 1, 1e-8);
  EXPECT_NEAR(b.alpha_std_error / a.alpha_std_error, 1, 1e-6);
}

TEST(FitAlphaBeta, ScalingTimesScalesAlphaAndBeta) {
  std::vector<LinkTiming> timings = Noisy(kAlpha, kBeta, 0.05, 9);
  const AlphaBetaFit a = FitAlphaBeta(timings);
  for (LinkTiming& p : timings) p.seconds *= 3;
  const AlphaBetaFit b = FitAlphaBeta(timings);
  EXPECT_NEAR(b.alpha_s / a.alpha_s, 3, 3e-8);
  EXPECT_NEAR(b.beta_s_per_byte / a.beta_s_per_byte, 3, 3e-8);
  EXPECT_NEAR(b.rms_relative_residual, a.rms_relative_residual, 1e-10);
}

TEST(FitAlphaBeta, HigherConfidenceWidensTheIntervals) {
  const std::vector<LinkTiming> timings = Noisy(kAlpha, kBeta, 0.05, 3);
  const AlphaBetaFit a = FitAlphaBeta(timings, 0.9);
  const AlphaBetaFit b = FitAlphaBeta(timings, 0.99);
  EXPECT_EQ(b.confidence, 0.99);
  EXPECT_GT(b.beta_ci_high - b.beta_ci_low, a.beta_ci_high - a.beta_ci_low);
  EXPECT_DOUBLE_EQ(a.beta_std_error, b.beta_std_error);
}

TEST(FitAlphaBeta, LatencyBoundAtZero) {
  // Pure bandwidth data: alpha's bound holds it at 0, not below.
  const AlphaBetaFit fit = FitAlphaBeta(Exact(0, kBeta));
  EXPECT_GE(fit.alpha_s, 0);
  EXPECT_LT(fit.alpha_s, 1e-9 * kBeta * 4);
  EXPECT_NEAR(fit.beta_s_per_byte / kBeta, 1, 1e-9);
}

TEST(FitAlphaBeta, HoldsAlphaAtItsBoundWhenTheLineCrossesBelowZero) {
  // (S, t) = (1, 1), (2, 3), (3, 5) lie on t = 2S - 1: the unconstrained fit has
  // alpha < 0. At alpha = 0 the residuals are beta*v - 1 with v = S/t = (1, 2/3, 3/5):
  //   beta = sum v / sum v^2 = (34/15)/(406/225) = 255/203,
  // and d cost/d alpha = sum r/t = 52/203 - 33/203/3 - 50/203/5 = 31/203 > 0, so
  // alpha = 0 is the constrained optimum.
  const AlphaBetaFit fit = FitAlphaBeta({{1, 1}, {2, 3}, {3, 5}});
  EXPECT_NEAR(fit.alpha_s, 0, 1e-10);
  EXPECT_NEAR(fit.beta_s_per_byte, 255.0 / 203, 1e-10);
  EXPECT_NEAR(fit.max_relative_residual, 52.0 / 203, 1e-10);
}

TEST(FitAlphaBeta, BriefReportNamesTheNumbers) {
  const std::string report = FitAlphaBeta(Exact(kAlpha, kBeta)).BriefReport();
  EXPECT_THAT(report, HasSubstr("alpha = 3.000e-06 s"));
  EXPECT_THAT(report, HasSubstr("1/beta = 1.200e+10 B/s"));
  EXPECT_THAT(report, HasSubstr("14 points"));
}

TEST(FitAlphaBeta, RejectsTooFewPoints) {
  try {
    FitAlphaBeta({{4, 1e-6}, {1024, 2e-6}});
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr(">= 3 link timings, got 2"));
  }
}

TEST(FitAlphaBeta, RejectsBadSecondsNamingThePoint) {
  for (double bad : {0.0, -1e-6, std::nan(""), HUGE_VAL}) {
    try {
      FitAlphaBeta({{4, 1e-6}, {1024, bad}, {4096, 3e-6}});
      FAIL() << "expected DataError for " << bad;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr("link timing 1 (1024 bytes"));
      EXPECT_THAT(e.what(), HasSubstr("seconds must be > 0 and finite"));
    }
  }
}

TEST(FitAlphaBeta, RejectsBadBytesNamingThePoint) {
  for (double bad : {-4.0, std::nan(""), HUGE_VAL}) {
    try {
      FitAlphaBeta({{4, 1e-6}, {1024, 2e-6}, {bad, 3e-6}});
      FAIL() << "expected DataError for " << bad;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr("link timing 2 ("));
      EXPECT_THAT(e.what(), HasSubstr("bytes must be >= 0 and finite"));
    }
  }
}

TEST(FitAlphaBeta, RejectsOneMessageSize) {
  try {
    FitAlphaBeta({{1024, 1e-6}, {1024, 2e-6}, {1024, 3e-6}});
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("all 3 link timings move 1024 bytes"));
  }
}

TEST(FitAlphaBeta, RejectsAConfidenceOutsideTheUnitInterval) {
  EXPECT_THROW(FitAlphaBeta(Exact(kAlpha, kBeta), 0), UsageError);
  EXPECT_THROW(FitAlphaBeta(Exact(kAlpha, kBeta), 1), UsageError);
}

TEST(RingLinkFromAllReduce, RingFormulaReproducesTheFittedAllReduce) {
  const AlphaBetaFit fit = FitAlphaBeta(Noisy(kAlpha, kBeta, 0.05, 11));
  for (int n : {2, 4}) {
    const MeasuredLink m = RingLinkFromAllReduce(fit, n);
    for (double s : {4.0, 65536.0, kBytes256M}) {
      EXPECT_NEAR(RingAllReduceTime(s, n, m.link) / fit.Predict(s), 1, 1e-12) << n << " " << s;
    }
    // a = alpha/(2(n-1)), B = 2(n-1)/n / beta: n = 4 gives alpha/6 and 1.5/beta.
    if (n == 4) {
      EXPECT_NEAR(m.link.latency_s, fit.alpha_s / 6, 1e-20);
      EXPECT_NEAR(m.link.bandwidth_bytes_per_s * fit.beta_s_per_byte, 1.5, 1e-12);
    }
    EXPECT_LE(m.latency_low, m.link.latency_s);
    EXPECT_GE(m.latency_high, m.link.latency_s);
    EXPECT_LE(m.bandwidth_low, m.link.bandwidth_bytes_per_s);
    EXPECT_GE(m.bandwidth_high, m.link.bandwidth_bytes_per_s);
    EXPECT_NEAR(m.bandwidth_low * fit.beta_ci_high, 2.0 * (n - 1) / n, 1e-12);
    EXPECT_NEAR(m.latency_high, fit.alpha_ci_high / (2.0 * (n - 1)), 1e-20);
  }
}

TEST(RingLinkFromAllReduce, ZeroBetaIsInfiniteBandwidth) {
  AlphaBetaFit fit;
  fit.alpha_s = 2e-6;
  fit.alpha_ci_high = 3e-6;
  fit.beta_ci_high = 1e-10;
  const MeasuredLink m = RingLinkFromAllReduce(fit, 2);
  EXPECT_TRUE(std::isinf(m.link.bandwidth_bytes_per_s));
  EXPECT_TRUE(std::isinf(m.bandwidth_high));
  EXPECT_DOUBLE_EQ(m.bandwidth_low, 1e10);  // 2(n-1)/n = 1 over beta's upper end
  EXPECT_DOUBLE_EQ(m.link.latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(RingAllReduceTime(1e6, 2, m.link), 2e-6);
}

TEST(RingLinkFromAllReduce, NeedsTwoRanks) {
  const AlphaBetaFit fit = FitAlphaBeta(Exact(kAlpha, kBeta));
  EXPECT_THROW(RingLinkFromAllReduce(fit, 1), UsageError);
  EXPECT_THROW(RingLinkFromAllReduce(fit, 0), UsageError);
}

TEST(LinkFromPointToPoint, OneWayTimeIsLatencyPlusSizeOverBandwidth) {
  const AlphaBetaFit fit = FitAlphaBeta(Noisy(kAlpha, kBeta, 0.05, 5));
  const MeasuredLink m = LinkFromPointToPoint(fit);
  EXPECT_EQ(m.link.latency_s, fit.alpha_s);
  EXPECT_EQ(m.latency_low, fit.alpha_ci_low);
  EXPECT_EQ(m.latency_high, fit.alpha_ci_high);
  for (double s : {4.0, 65536.0, kBytes256M}) {
    EXPECT_NEAR((m.link.latency_s + s / m.link.bandwidth_bytes_per_s) / fit.Predict(s), 1, 1e-12);
  }
  EXPECT_NEAR(m.bandwidth_low, 1 / fit.beta_ci_high, 1e-6 * m.bandwidth_low);
}

}  // namespace
}  // namespace fitspeed
