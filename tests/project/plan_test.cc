#include "fitspeed/project/plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

SpeedLaw LawPlan(double v0, double t) {
  SpeedLaw law;
  law.v0_sps = v0;
  law.t_s = t;
  return law;
}

TEST(OptimalBatch, MinimisesTimeToTarget) {
  // B* = sqrt(B_noise * v0 * t) = sqrt(1000 * 400 * 0.1) = sqrt(40000) = 200.
  const SpeedLaw law = LawPlan(400, 0.1);
  EXPECT_NEAR(OptimalBatch(1000, law), 200, 1e-12);
  // Time to target E_min(1 + B/B_noise) * N/B * (B/v0 + t) is larger on either side.
  const EpochsVsBatch e{10, 1000};
  auto time = [&](double b) { return e.Epochs(b) * 50000 / b * law.StepTime(b); };
  EXPECT_LT(time(200), time(190));
  EXPECT_LT(time(200), time(210));
  // E(B) = 10 * (1 + 200/1000) = 12 epochs.
  EXPECT_NEAR(e.Epochs(200), 12, 1e-12);
}

// Three configurations on N = 10000 samples, 10 epochs, batch 100 (100 steps):
//   A: 1 device, v0 = 100, t = 0.1: 100*(1 + 0.1) = 110 s/epoch, 1100 s, cost 1100/3600 = 0.305556
//   B: 4 devices, v0 = 380, t = 0.15: 100*(100/380 + 0.15) = 41.31579 s/epoch, 413.1579 s,
//      cost 4*413.1579/3600 = 0.459064
//   C: 2 devices, v0 = 150, t = 0.2: 100*(0.666667 + 0.2) = 86.6667 s/epoch, 866.667 s,
//      cost 2*866.667/3600 = 0.481481 (slower and dearer than B: not on the Pareto set)
std::vector<PlanCandidate> ThreeCandidates() {
  return {CandidateFromLaw("a", 1, LawPlan(100, 0.1), {100}),
          CandidateFromLaw("b", 4, LawPlan(380, 0.15), {100}),
          CandidateFromLaw("c", 2, LawPlan(150, 0.2), {100})};
}

PlanRequest TenEpochs() {
  PlanRequest r;
  r.samples_per_epoch = 10000;
  r.epochs = 10;
  r.prices.default_per_device_hour = 1.0;
  return r;
}

TEST(Plan, OrdersFastestFirstAndMarksPareto) {
  const PlanResult plan = Plan(ThreeCandidates(), TenEpochs());
  ASSERT_EQ(plan.rows.size(), 3u);
  EXPECT_EQ(plan.rows[0].device, "b");
  EXPECT_NEAR(plan.rows[0].total_s, 413.15789, 1e-4);
  EXPECT_NEAR(*plan.rows[0].cost, 0.459064, 1e-6);
  EXPECT_EQ(plan.rows[1].device, "c");
  EXPECT_EQ(plan.rows[2].device, "a");
  EXPECT_NEAR(plan.rows[2].total_s, 1100, 1e-9);
  EXPECT_TRUE(plan.rows[0].pareto);
  EXPECT_FALSE(plan.rows[1].pareto);
  EXPECT_TRUE(plan.rows[2].pareto);
  EXPECT_EQ(plan.rows[*plan.fastest].device, "b");
  EXPECT_EQ(plan.rows[*plan.cheapest].device, "a");
}

TEST(Plan, CheapestOrder) {
  const PlanResult plan = Plan(ThreeCandidates(), TenEpochs(), PlanOrder::kCheapest);
  EXPECT_EQ(plan.rows[0].device, "a");
  EXPECT_EQ(plan.rows[1].device, "b");
  EXPECT_EQ(plan.rows[2].device, "c");
}

TEST(Plan, DeadlineAndBudgetFilter) {
  // Deadline 600 s: only B (413 s) meets it; budget 0.4: only A (0.3056) meets it.
  PlanRequest r = TenEpochs();
  r.deadline_s = 600;
  PlanResult plan = Plan(ThreeCandidates(), r);
  EXPECT_TRUE(plan.rows[0].feasible());
  EXPECT_EQ(plan.rows[0].device, "b");
  EXPECT_FALSE(plan.rows[1].feasible());
  EXPECT_FALSE(plan.rows[1].pareto);  // only feasible rows are on the Pareto set
  r.deadline_s.reset();
  r.budget = 0.4;
  plan = Plan(ThreeCandidates(), r);
  EXPECT_EQ(plan.rows[0].device, "a");
  EXPECT_TRUE(plan.rows[0].feasible());
  EXPECT_FALSE(plan.rows[1].meets_budget);
  // Both limits: nothing meets them.
  r.deadline_s = 600;
  plan = Plan(ThreeCandidates(), r);
  EXPECT_FALSE(plan.fastest.has_value());
}

TEST(Plan, AddsTheOptimalBatchWithEpochsVsBatch) {
  // One device, v0 = 400, t = 0.1, B_noise = 1000: B* = 200 (above). N = 50000,
  // E(200) = 10*1.2 = 12 epochs of 250 steps * (0.5 + 0.1) = 150 s: 1800 s.
  PlanRequest r;
  r.samples_per_epoch = 50000;
  r.epochs_vs_batch = EpochsVsBatch{10, 1000};
  const PlanResult plan = Plan({CandidateFromLaw("x", 1, LawPlan(400, 0.1), {64, 1024})}, r);
  ASSERT_EQ(plan.rows.size(), 3u);
  EXPECT_TRUE(plan.rows[0].optimal_batch);
  EXPECT_EQ(plan.rows[0].batch, 200);
  EXPECT_NEAR(plan.rows[0].epochs, 12, 1e-12);
  EXPECT_NEAR(plan.rows[0].total_s, 1800, 1e-9);
  EXPECT_FALSE(plan.rows[0].cost.has_value());  // no price given
}

TEST(Plan, ScalingCandidatesPayTheAllReduce) {
  // 2 devices of v0 = 100, t = 0.1; ring of 1e9 B at 1e10 B/s: 2*1/2*0.1 = 0.1 s.
  // Batch 100 (50 per device): 0.5 + 0.1 + 0.1 = 0.7 s/step; N = 1000, 10 steps,
  // 1 epoch: 7 s.
  DataParallelModel m;
  m.single_device = LawPlan(100, 0.1);
  m.gradient_bytes = 1e9;
  m.comm.intra_node = Link{1e10, 0};
  PlanRequest r;
  r.samples_per_epoch = 1000;
  r.epochs = 1;
  const PlanResult plan = Plan({CandidateFromScaling("gpu", 2, m, {100})}, r);
  EXPECT_NEAR(plan.rows[0].total_s, 7, 1e-12);
}

TEST(Plan, RejectsIncompleteRequests) {
  PlanRequest r = TenEpochs();
  r.epochs_vs_batch = EpochsVsBatch{10, 1000};  // both epochs and E(B)
  EXPECT_THROW(Plan(ThreeCandidates(), r), UsageError);
  r = TenEpochs();
  r.prices = PriceList{};
  r.budget = 5;  // a budget without prices
  EXPECT_THROW(Plan(ThreeCandidates(), r), UsageError);
  EXPECT_THROW(Plan({}, TenEpochs()), UsageError);
}

}  // namespace
}  // namespace fitspeed
