#include "fitspeed/project/epochs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

SpeedLaw Law(double v0, double t) {
  SpeedLaw law;
  law.v0_sps = v0;
  law.t_s = t;
  return law;
}

Workload Cifar(StepsRule rule = StepsRule::kKeepPartial) {
  Workload w;
  w.samples_per_epoch = 50000;
  w.steps_rule = rule;
  return w;
}

TEST(EpochModelFromLaw, KeepsThePartialLastBatch) {
  // 50000/64 = 781.25: 782 steps, all 50000 samples.
  // T = 50000/1000 + 782*0.05 = 50 + 39.1 = 89.1 s.
  const EpochModel m = EpochModelFromLaw(Law(1000, 0.05), 64, Cifar());
  EXPECT_EQ(m.steps_per_epoch, 782);
  EXPECT_EQ(m.samples_used, 50000);
  EXPECT_NEAR(m.epoch_s, 89.1, 1e-12);
  EXPECT_EQ(m.dof, 0);  // numbers, no covariance: no interval
}

TEST(EpochModelFromLaw, DropsTheRemainder) {
  // floor(781.25) = 781 steps of 64 = 49984 samples.
  // T = 49984/1000 + 781*0.05 = 49.984 + 39.05 = 89.034 s.
  const EpochModel m = EpochModelFromLaw(Law(1000, 0.05), 64, Cifar(StepsRule::kDropRemainder));
  EXPECT_EQ(m.steps_per_epoch, 781);
  EXPECT_EQ(m.samples_used, 49984);
  EXPECT_NEAR(m.epoch_s, 89.034, 1e-12);
}

TEST(EpochModelFromLaw, BothRulesAgreeWhenTheBatchDivides) {
  // 50000/100 = 500 steps either way: 50 + 500*0.05 = 75 s.
  EXPECT_NEAR(EpochModelFromLaw(Law(1000, 0.05), 100, Cifar()).epoch_s, 75, 1e-12);
  EXPECT_NEAR(EpochModelFromLaw(Law(1000, 0.05), 100, Cifar(StepsRule::kDropRemainder)).epoch_s, 75,
              1e-12);
}

TEST(EpochModelFromLaw, DerivesAForwardOnlyValidationPass) {
  // Training: 50000/1000 + 500*0.03 = 65 s. Validation: 10000 samples at
  // batch 100 = 100 steps, forward 1/3 of the per-sample time and 1/3 of t:
  // 10000/3/1000 + 100*0.03/3 = 3.3333 + 1 = 4.3333 s.
  Workload w = Cifar();
  w.validation.samples = 10000;
  const EpochModel m = EpochModelFromLaw(Law(1000, 0.03), 100, w);
  EXPECT_NEAR(m.train_epoch_s, 65, 1e-12);
  EXPECT_NEAR(m.validation_epoch_s, 10.0 / 3.0 + 1.0, 1e-12);
  EXPECT_NEAR(m.epoch_s, 65 + 13.0 / 3.0, 1e-12);
  bool labelled = false;
  for (const std::string& a : m.assumptions) {
    if (a.find("assumption") != std::string::npos) labelled = true;
  }
  EXPECT_TRUE(labelled) << "a derived validation pass must be labelled as an assumption";
}

TEST(EpochModelFromLaw, UsesAMeasuredValidationLaw) {
  // 10000 samples at batch 250 = 40 steps: 10000/4000 + 40*0.01 = 2.5 + 0.4 = 2.9 s.
  Workload w = Cifar();
  w.validation.samples = 10000;
  w.validation.batch = 250;
  w.validation.law = Law(4000, 0.01);
  const EpochModel m = EpochModelFromLaw(Law(1000, 0.03), 100, w);
  EXPECT_NEAR(m.validation_epoch_s, 2.9, 1e-12);
}

TEST(MakeValidationSpec, AMeasuredLawNeedsBothNumbers) {
  // v0 4000 and t 0.01 at batch 250: as UsesAMeasuredValidationLaw, 2.9 s.
  Workload w = Cifar();
  w.validation = MakeValidationSpec(10000, 250, 4000, 0.01);
  ASSERT_TRUE(w.validation.law.has_value());
  EXPECT_NEAR(EpochModelFromLaw(Law(1000, 0.03), 100, w).validation_epoch_s, 2.9, 1e-12);
  EXPECT_THROW(MakeValidationSpec(10000, 250, 4000, NAN), UsageError);
  EXPECT_THROW(MakeValidationSpec(10000, 250, NAN, 0.01), UsageError);
}

TEST(MakeValidationSpec, WithoutALawTheFractionsDeriveIt) {
  // Forward 1/2 and fixed 0 of training's: 10000 samples at batch 100 =
  // 100 steps of 100*0.5/1000 + 0 = 0.05 s, 5 s.
  Workload w = Cifar();
  w.validation = MakeValidationSpec(10000, 0, NAN, NAN, 0.5, 0);
  EXPECT_FALSE(w.validation.law.has_value());
  EXPECT_NEAR(EpochModelFromLaw(Law(1000, 0.03), 100, w).validation_epoch_s, 5, 1e-12);
}

TEST(EpochModelFromLaw, AddsStartupAndFirstEpochExtra) {
  // 120 + 30 + 10*89.1 = 1041 s.
  Workload w = Cifar();
  w.startup_s = 120;
  w.first_epoch_extra_s = 30;
  const EpochModel m = EpochModelFromLaw(Law(1000, 0.05), 64, w);
  EXPECT_NEAR(m.Total(10), 1041, 1e-9);
}

TEST(EpochModelFromLaw, TotalsAreLinearInEpochs) {
  Workload w = Cifar();
  w.startup_s = 7;
  w.first_epoch_extra_s = 3;
  const EpochModel m = EpochModelFromLaw(Law(1234, 0.071), 96, w);
  const double slope = m.Total(1) - m.Total(0);
  for (double e : {2.0, 17.0, 333.0, 2000.0}) {
    EXPECT_NEAR(m.Total(e), m.Total(0) + e * slope, 1e-9 * m.Total(e));
  }
}

TEST(EpochModelFromLaw, PropagatesTheFitCovariance) {
  // v0 = 1000 +- 10, t = 0.05 +- 0.001, uncorrelated, 5 dof. At batch 64:
  // g = (-50000/1000^2, 782) = (-0.05, 782);
  // Var = 0.05^2*100 + 782^2*1e-6 = 0.25 + 0.611524 = 0.861524, se = 0.9281832.
  // t(0.975, 5) = 2.5705818; 100 epochs: 100*2.5705818*0.9281832 = 238.5971 s.
  SpeedLaw law = Law(1000, 0.05);
  law.covariance << 100, 0, 0, 1e-6;
  law.dof = 5;
  const EpochModel m = EpochModelFromLaw(law, 64, Cifar());
  EXPECT_NEAR(m.epoch_stderr_s, 0.9281832, 1e-6);
  EXPECT_EQ(m.dof, 5);
  const auto half = TotalHalfWidth(m, 100, 0.95);
  ASSERT_TRUE(half.has_value());
  EXPECT_NEAR(*half, 238.5971, 1e-3);
}

TEST(EpochModelFromLaw, CorrelationChangesTheInterval) {
  // Same as above with Cov(v0, t) = 0.005 (correlation 0.5):
  // Var = 0.861524 + 2*(-0.05)*782*0.005 = 0.861524 - 0.391 = 0.470524.
  SpeedLaw law = Law(1000, 0.05);
  law.covariance << 100, 0.005, 0.005, 1e-6;
  law.dof = 5;
  EXPECT_NEAR(EpochModelFromLaw(law, 64, Cifar()).epoch_stderr_s, std::sqrt(0.470524), 1e-9);
}

TEST(EpochModelFromLaw, RejectsBadInput) {
  EXPECT_THROW(EpochModelFromLaw(Law(0, 0.05), 64, Cifar()), UsageError);
  EXPECT_THROW(EpochModelFromLaw(Law(1000, -1), 64, Cifar()), UsageError);
  EXPECT_THROW(EpochModelFromLaw(Law(1000, 0.05), 0, Cifar()), UsageError);
  EXPECT_THROW(EpochModelFromLaw(Law(1000, 0.05), 60000, Cifar(StepsRule::kDropRemainder)),
               UsageError);
  Workload w = Cifar();
  w.samples_per_epoch = NAN;
  EXPECT_THROW(EpochModelFromLaw(Law(1000, 0.05), 64, w), UsageError);
}

TEST(SpeedLawFromFit, TakesValueCovarianceAndDof) {
  GroupFit fit;
  fit.law = "hyperbolic";
  fit.dof = 4;
  fit.params = {{"t", "s", 0.2, 0.01, 0, 0}, {"v0", "samples/s", 500, 5, 0, 0}};
  fit.covariance.resize(2, 2);
  fit.covariance << 1e-4, 0.03, 0.03, 25;  // order (t, v0) as in params
  const SpeedLaw law = SpeedLawFromFit(fit);
  EXPECT_EQ(law.v0_sps, 500);
  EXPECT_EQ(law.t_s, 0.2);
  EXPECT_EQ(law.covariance(0, 0), 25);  // reordered to (v0, t)
  EXPECT_EQ(law.covariance(1, 1), 1e-4);
  EXPECT_EQ(law.covariance(0, 1), 0.03);
  EXPECT_EQ(law.dof, 4);
}

TEST(SpeedLawFromFit, RefusesOtherLaws) {
  GroupFit fit;
  fit.law = "exponential";
  fit.params = {{"vmax", "samples/s", 500, 5, 0, 0}, {"b_scale", "samples", 20, 1, 0, 0}};
  EXPECT_THROW(SpeedLawFromFit(fit), DataError);
}

TEST(SpeedLawFromFit, NoIntervalWithoutDegreesOfFreedom) {
  GroupFit fit;
  fit.law = "hyperbolic";
  fit.dof = 0;
  fit.params = {{"v0", "samples/s", 500, 0, 0, 0}, {"t", "s", 0.2, 0, 0, 0}};
  fit.covariance = Eigen::MatrixXd::Constant(2, 2, NAN);
  const SpeedLaw law = SpeedLawFromFit(fit);
  EXPECT_EQ(law.dof, 0);
  EXPECT_FALSE(TotalHalfWidth(EpochModelFromLaw(law, 64, Cifar()), 10, 0.95).has_value());
}

TEST(SpeedLawFromFit, CarriesWhatTheFitCountsIntoTheAssumptions) {
  GroupFit fit;
  fit.law = "hyperbolic";
  fit.group.unit = Unit::kTokens;
  fit.params = {{"v0", "tokens/s", 5e5, 0, 0, 0}, {"t", "s", 0.2, 0, 0, 0}};
  const SpeedLaw law = SpeedLawFromFit(fit);
  EXPECT_EQ(law.counts, "tokens");
  const EpochModel m = EpochModelFromLaw(law, 65536, Cifar());
  EXPECT_NE(std::find(m.assumptions.begin(), m.assumptions.end(),
                      "the law counts tokens: the batch, the samples per epoch N and v0 are in "
                      "tokens"),
            m.assumptions.end());
  fit.group.unit = Unit::kSamples;
  fit.seq_len = 2048;
  EXPECT_EQ(SpeedLawFromFit(fit).counts, "sequences");
}

TEST(EpochModelFromLog, MeasuresStartupFirstEpochAndSteadyEpoch) {
  // Epochs 100, 50, 52, 54: steady = 52, sd = 2, extra = 100 - 52 = 48.
  // total(E) = 5 + 100 + (E-1)*52: E = 10 -> 573.
  // 95%: se = 2/sqrt(3); half(10) = t(0.975, 2)*sqrt(100*4/3 + 10*4)
  //      = 4.3026527*sqrt(173.3333) = 4.3026527*13.165612 = 56.6470.
  EpochLog log;
  log.epoch_times_s = {100, 50, 52, 54};
  log.startup_s = 5;
  const EpochModel m = EpochModelFromLog(log);
  EXPECT_NEAR(m.epoch_s, 52, 1e-12);
  EXPECT_NEAR(m.first_epoch_extra_s, 48, 1e-12);
  EXPECT_NEAR(m.Total(10), 573, 1e-9);
  EXPECT_EQ(m.dof, 2);
  EXPECT_NEAR(*TotalHalfWidth(m, 10, 0.95), 56.6470, 1e-3);
}

TEST(EpochModelFromLog, NeedsTwoEpochs) {
  EpochLog log;
  log.epoch_times_s = {100};
  EXPECT_THROW(EpochModelFromLog(log), DataError);
  log.epoch_times_s = {100, -1};
  EXPECT_THROW(EpochModelFromLog(log), DataError);
}

Sample EpochSample(int epoch, double seconds, const std::string& startup) {
  Sample s;
  s.source = "log.csv";
  s.line = epoch + 1;
  s.batch = 128;
  s.label = "tpu";
  s.epoch = epoch;
  s.epoch_time_s = seconds;
  s.samples_per_epoch = 50000;
  if (!startup.empty()) s.tags = s.tags.With("initial_time_s", startup);
  return s;
}

TEST(EpochLogsFromSamples, GroupsSortsAndReadsStartup) {
  std::vector<Sample> samples = {EpochSample(2, 40, "3.5"), EpochSample(1, 90, "3.5"),
                                 EpochSample(3, 41, "3.5")};
  Sample other = EpochSample(1, 70, "");
  other.batch = 256;
  samples.push_back(other);
  other.epoch = 2;
  other.epoch_time_s = 30;
  samples.push_back(other);
  const std::vector<EpochLog> logs = EpochLogsFromSamples(samples);
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].batch, 128);
  EXPECT_EQ(logs[0].epoch_times_s, (std::vector<double>{90, 40, 41}));
  EXPECT_EQ(logs[0].startup_s, 3.5);
  EXPECT_EQ(logs[1].epoch_times_s, (std::vector<double>{70, 30}));
  EXPECT_FALSE(logs[1].startup_s.has_value());  // not logged
  // 50000/128 = 390.6: 391 steps under the keep-partial rule.
  EXPECT_EQ(EpochModelFromLog(logs[0]).steps_per_epoch, 391);
}

TEST(EpochLogsFromSamples, RefusesGapsRepeatsAndDisagreeingStartups) {
  EXPECT_THROW(EpochLogsFromSamples({EpochSample(2, 40, ""), EpochSample(3, 40, "")}), DataError);
  EXPECT_THROW(EpochLogsFromSamples({EpochSample(1, 40, ""), EpochSample(1, 40, "")}), DataError);
  EXPECT_THROW(EpochLogsFromSamples({EpochSample(1, 40, "1"), EpochSample(2, 40, "2")}), DataError);
  EXPECT_THROW(EpochLogsFromSamples({EpochSample(1, 40, "x")}), DataError);
  Sample no_epoch = EpochSample(1, 40, "");
  no_epoch.epoch.reset();
  EXPECT_THROW(EpochLogsFromSamples({no_epoch}), DataError);
}

TEST(ProjectTotals, OneRowPerModelAndEpochWithCost) {
  // 89.1 s epochs, 3 devices at 2.5 per device-hour: E = 100 -> 8910 s,
  // cost = 3 * 8910/3600 * 2.5 = 18.5625.
  EpochModel m = EpochModelFromLaw(Law(1000, 0.05), 64, Cifar(), "gpu", 3);
  ProjectOptions options;
  options.epochs = {10, 100};
  options.prices.default_per_device_hour = 2.5;
  const std::vector<ProjectionRow> rows = ProjectTotals({m, m}, options);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].epochs, 100);
  EXPECT_NEAR(rows[1].total_s, 8910, 1e-9);
  ASSERT_TRUE(rows[1].cost.has_value());
  EXPECT_NEAR(*rows[1].cost, 18.5625, 1e-9);
  EXPECT_FALSE(rows[1].ci_low_s.has_value());
}

TEST(ProjectTotals, DefaultEpochCountsAreTheDocumentedOnes) {
  EXPECT_EQ(DefaultEpochCounts(), (std::vector<double>{10, 20, 50, 100, 200, 500, 1000, 2000}));
  ProjectOptions options;
  options.epochs = {0};
  EXPECT_THROW(ProjectTotals({}, options), UsageError);
}

}  // namespace
}  // namespace fitspeed
