// Properties every fit must have: exact data recovered, invariance under row
// order, the scaling law of throughput, agreement of objectives on exact data,
// and epoch-time samples under both steps rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "fitspeed/fit/fit.h"

namespace fitspeed {
namespace {

constexpr double kV0 = 1500;  // samples/s
constexpr double kT = 0.8;    // s
const std::vector<double> kBatchesProperties = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};

// Step time of the law: T(b) = b/v0 + t.
double StepTime(double batch, double v0 = kV0, double t = kT) { return batch / v0 + t; }

std::vector<Sample> ThroughputSamples(double v0, double t, const std::vector<double>& noise = {}) {
  std::vector<Sample> samples;
  for (size_t i = 0; i < kBatchesProperties.size(); ++i) {
    Sample s;
    s.source = "synthetic";
    s.line = static_cast<int>(i) + 1;
    s.batch = kBatchesProperties[i];
    s.throughput_sps = kBatchesProperties[i] / StepTime(kBatchesProperties[i], v0, t);
    if (!noise.empty()) *s.throughput_sps *= 1 + noise[i];
    samples.push_back(s);
  }
  return samples;
}

// Fixed multiplicative noise of a few per cent, so that the fits have residuals.
const std::vector<double> kNoiseProperties = {0.013,  -0.021, 0.008,  0.017, -0.012,
                                              -0.004, 0.022,  -0.015, 0.006, -0.009};

void ExpectRelNear(double value, double expected, double rel, const char* what) {
  EXPECT_NEAR(value, expected, rel * std::fabs(expected)) << what;
}

TEST(FitProperties, RecoversExactThroughputData) {
  const GroupFit fit = FitGroup(ThroughputSamples(kV0, kT));
  ASSERT_TRUE(fit.converged) << fit.solver_message;
  ExpectRelNear(fit.Param("v0").value, kV0, 1e-10, "v0");
  ExpectRelNear(fit.Param("t").value, kT, 1e-10, "t");
  // b_half = v0*t = 1200 samples, b_90 = 9*1200 = 10800.
  ExpectRelNear(fit.b_half, 1200, 1e-10, "b_half");
  ExpectRelNear(fit.b_90, 10800, 1e-10, "b_90");
  EXPECT_LT(fit.rel_rmse, 1e-12);
}

TEST(FitProperties, RecoversExactStepTimeDataWithEveryObjective) {
  std::vector<Sample> samples;
  for (double b : kBatchesProperties) {
    Sample s;
    s.batch = b;
    s.step_time_s = StepTime(b);
    samples.push_back(s);
  }
  for (Objective objective :
       {Objective::kRelativeTime, Objective::kAbsoluteTime, Objective::kAbsoluteThroughput}) {
    FitOptions options;
    options.objective = objective;
    const GroupFit fit = FitGroup(samples, options);
    ASSERT_TRUE(fit.converged) << ObjectiveName(objective) << ": " << fit.solver_message;
    ExpectRelNear(fit.Param("v0").value, kV0, 1e-10, "v0");
    ExpectRelNear(fit.Param("t").value, kT, 1e-10, "t");
  }
}

TEST(FitProperties, ExactDataRecoveredFromAFarStart) {
  FitOptions options;
  options.initial = {50, 20};  // 30x too slow, 25x too much fixed cost
  const GroupFit fit = FitGroup(ThroughputSamples(kV0, kT), options);
  ASSERT_TRUE(fit.converged) << fit.solver_message;
  ExpectRelNear(fit.Param("v0").value, kV0, 1e-10, "v0");
  ExpectRelNear(fit.Param("t").value, kT, 1e-10, "t");
}

TEST(FitProperties, ShufflingRowsLeavesTheFitUnchanged) {
  const std::vector<Sample> samples = ThroughputSamples(kV0, kT, kNoiseProperties);
  const GroupFit reference = FitGroup(samples);
  std::mt19937 random(12345);
  for (int round = 0; round < 3; ++round) {
    std::vector<Sample> shuffled = samples;
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    const GroupFit fit = FitGroup(shuffled);
    for (size_t j = 0; j < fit.params.size(); ++j) {
      ExpectRelNear(fit.params[j].value, reference.params[j].value, 1e-10, "value");
      ExpectRelNear(fit.params[j].std_error, reference.params[j].std_error, 1e-8, "stderr");
    }
    ExpectRelNear(fit.rss, reference.rss, 1e-9, "rss");
    ExpectRelNear(fit.loo_rel_rmse, reference.loo_rel_rmse, 1e-8, "loo");
  }
}

TEST(FitProperties, ScalingThroughputScalesV0AndInverselyT) {
  // v' = c v for every point: b/(b/v0' + t') = c b/(b/v0 + t) holds with
  // v0' = c v0 and t' = t/c.
  const double c = 3.7;
  for (Objective objective :
       {Objective::kRelativeTime, Objective::kAbsoluteTime, Objective::kAbsoluteThroughput}) {
    FitOptions options;
    options.objective = objective;
    std::vector<Sample> scaled = ThroughputSamples(kV0, kT, kNoiseProperties);
    const GroupFit base = FitGroup(scaled, options);
    for (Sample& s : scaled) *s.throughput_sps *= c;
    const GroupFit fit = FitGroup(scaled, options);
    ExpectRelNear(fit.Param("v0").value, c * base.Param("v0").value, 1e-9, "v0");
    ExpectRelNear(fit.Param("t").value, base.Param("t").value / c, 1e-9, "t");
    // Relative uncertainties do not change either.
    ExpectRelNear(fit.Param("v0").std_error / fit.Param("v0").value,
                  base.Param("v0").std_error / base.Param("v0").value, 1e-7, "rel stderr");
  }
}

TEST(FitProperties, RelativeAndAbsoluteTimeAgreeOnExactData) {
  FitOptions relative, absolute;
  relative.objective = Objective::kRelativeTime;
  absolute.objective = Objective::kAbsoluteTime;
  const GroupFit a = FitGroup(ThroughputSamples(kV0, kT), relative);
  const GroupFit b = FitGroup(ThroughputSamples(kV0, kT), absolute);
  ExpectRelNear(a.Param("v0").value, b.Param("v0").value, 1e-10, "v0");
  ExpectRelNear(a.Param("t").value, b.Param("t").value, 1e-10, "t");
}

TEST(FitProperties, EpochTimeSamplesRecoverTheLawUnderBothStepsRules) {
  // T_epoch = N_used/v0 + steps*t (docs/design.md "Epochs"), N = 50000:
  // keep partial: steps = ceil(N/b), N_used = N; drop remainder: steps =
  // floor(N/b), N_used = steps*b. E.g. b = 4096: 13 steps (keep), 12 (drop).
  const double n = 50000;
  for (StepsRule rule : {StepsRule::kKeepPartial, StepsRule::kDropRemainder}) {
    std::vector<Sample> samples;
    for (double b : {64.0, 96.0, 128.0, 300.0, 512.0, 1000.0, 2048.0, 4096.0}) {
      const bool keep = rule == StepsRule::kKeepPartial;
      const double steps = keep ? std::ceil(n / b) : std::floor(n / b);
      const double used = keep ? n : steps * b;
      Sample s;
      s.batch = b;
      s.epoch_time_s = used / kV0 + steps * kT;
      s.samples_per_epoch = n;
      s.steps_rule = rule;
      samples.push_back(s);
    }
    const GroupFit fit = FitGroup(samples);
    ASSERT_TRUE(fit.converged) << fit.solver_message;
    ExpectRelNear(fit.Param("v0").value, kV0, 1e-10, "v0");
    ExpectRelNear(fit.Param("t").value, kT, 1e-10, "t");
    // Predicted epoch time at b = 4096 from the fit: 13*T(50000/13) keep, 12*T(4096) drop.
    const double expected =
        rule == StepsRule::kKeepPartial ? 50000 / kV0 + 13 * kT : 12 * 4096 / kV0 + 12 * kT;
    const double b_eff = rule == StepsRule::kKeepPartial ? 50000.0 / 13 : 4096;
    const double steps = rule == StepsRule::kKeepPartial ? 13 : 12;
    ExpectRelNear(steps * fit.PredictStepTime(b_eff), expected, 1e-10, "epoch time");
  }
}

TEST(FitProperties, PredictionsFollowTheFittedLaw) {
  const GroupFit fit = FitGroup(ThroughputSamples(kV0, kT));
  // b = 1200 = b_half: v = 1500/2 = 750 samples/s, T = 1200/750 = 1.6 s.
  ExpectRelNear(fit.PredictThroughput(1200), 750, 1e-10, "v(b_half)");
  ExpectRelNear(fit.PredictStepTime(1200), 1.6, 1e-10, "T(b_half)");
}

}  // namespace
}  // namespace fitspeed
