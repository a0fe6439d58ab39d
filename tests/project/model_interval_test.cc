// Totals of a law fitted to a device model's predictions: the model's
// out-of-sample errors widen the interval of a projection (TotalIntervalOf)
// and a plan's totals, by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "fitspeed/project/epochs.h"
#include "fitspeed/project/plan.h"

namespace fitspeed {
namespace {

// Nine errors -0.4 .. 0.4 from two sources: at 80%, n = 9 gives k_lo = 1 and
// k_hi = 9, the interval x[exp(-0.4), exp(0.4)] with median 0.
std::vector<ModelError> NineErrors() {
  std::vector<ModelError> errors;
  for (int i = 0; i < 9; ++i) errors.push_back({i % 2 ? "a" : "b", "", 0.1 * (i - 4)});
  return errors;
}

EpochModel ModeledEpochs() {
  EpochModel m;
  m.label = "v100";
  m.batch = 256;
  m.startup_s = 100;
  m.epoch_s = 1000;
  m.train_epoch_s = 1000;
  m.model_errors = {NineErrors(), "gpu/fp32"};
  return m;
}

TEST(ModelIntervalTest, ModelAloneScalesTheEpochsButNotTheStartup) {
  // E = 10: P = 10 x 1000 s. No fit interval (dof 0): [100 + P e^-0.4, 100 + P e^0.4]
  // = [6803.20, 15018.25] s.
  const TotalInterval i = TotalIntervalOf(ModeledEpochs(), 10, 0.8);
  ASSERT_TRUE(i.low_s && i.high_s);
  EXPECT_NEAR(*i.low_s, 6803.200460, 1e-5);
  EXPECT_NEAR(*i.high_s, 15018.246976, 1e-5);
  EXPECT_EQ(i.basis, "model gpu/fp32");
}

TEST(ModelIntervalTest, FitAndModelCombineInQuadrature) {
  // A fit with 10 dof and epoch standard error 50 s: at 80% the half-width is
  // q x E x se = 1.372184 x 10 x 50 = 686.09 s, f = 686.09 / 10000 = 0.068609;
  // each side sqrt(0.4^2 + f^2) = 0.405841: [100 + 1e4 e^-0.405841, 100 + 1e4 e^0.405841]
  // = [6764.16, 15105.65] s.
  EpochModel m = ModeledEpochs();
  m.dof = 10;
  m.epoch_stderr_s = 50;
  const TotalInterval i = TotalIntervalOf(m, 10, 0.8);
  ASSERT_TRUE(i.low_s && i.high_s);
  EXPECT_NEAR(*i.low_s, 6764.158707, 1e-4);
  EXPECT_NEAR(*i.high_s, 15105.645032, 1e-4);
  EXPECT_EQ(i.basis, "fit + model gpu/fp32");
  // ProjectTotals carries it into the rows.
  ProjectOptions options;
  options.epochs = {10};
  options.confidence = 0.8;
  const std::vector<ProjectionRow> rows = ProjectTotals({m}, options);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(*rows[0].ci_low_s, 6764.158707, 1e-4);
  EXPECT_EQ(rows[0].interval_basis, "fit + model gpu/fp32");
}

TEST(ModelIntervalTest, TooFewErrorsForTheLevelKeepTheFitsIntervalAndSayWhy) {
  // Nine errors give no 95% interval (it needs 39): the fit's symmetric one stays.
  EpochModel m = ModeledEpochs();
  m.dof = 10;
  m.epoch_stderr_s = 50;
  const TotalInterval i = TotalIntervalOf(m, 10, 0.95);
  ASSERT_TRUE(i.low_s && i.high_s);
  EXPECT_EQ(i.basis, "fit");
  EXPECT_NEAR(*i.high_s - m.Total(10), m.Total(10) - *i.low_s, 1e-9);
  EXPECT_NE(i.note.find("at least 39"), std::string::npos) << i.note;
}

TEST(ModelIntervalTest, PlanRowsCarryTheModelsIntervalAndFlagADeadlineAtRisk) {
  // v0 = 1000 samples/s, t = 0.1 s, N = 100000, batch 100: 1000 steps of
  // 0.2 s = 200 s per epoch, 2000 s for 10 epochs; the model's 80% interval
  // x[e^-0.4, e^0.4] on the epochs: [1340.64, 2983.65] s. A 2500 s deadline is
  // met by the prediction, not by the interval's slow end.
  SpeedLaw law;
  law.v0_sps = 1000;
  law.t_s = 0.1;
  law.model_errors = {NineErrors(), "gpu/fp32"};
  PlanRequest request;
  request.samples_per_epoch = 100000;
  request.epochs = 10;
  request.deadline_s = 2500;
  request.interval_level = 0.8;
  const PlanResult plan = Plan({CandidateFromLaw("v100", 1, law, {100})}, request);
  ASSERT_EQ(plan.rows.size(), 1u);
  const PlanRow& row = plan.rows[0];
  EXPECT_NEAR(row.total_s, 2000, 1e-9);
  EXPECT_NEAR(*row.total_low_s, 1340.640092, 1e-5);
  EXPECT_NEAR(*row.total_high_s, 2983.649395, 1e-5);
  EXPECT_TRUE(row.meets_deadline);
  EXPECT_TRUE(row.deadline_at_risk);
  EXPECT_EQ(row.interval_basis, "gpu/fp32");
}

}  // namespace
}  // namespace fitspeed
