#include "project/validation_pass.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fitspeed/project/epochs.h"
#include "fitspeed/project/scaling.h"

namespace fitspeed {
namespace {

// 1000 validation samples, batch 64, measured law v0 = 500/s, t = 0.01 s with
// covariance C = [[100, 1e-3], [1e-3, 1e-6]] of (v0, t):
//   steps = ceil(1000/64) = 16
//   time = 1000/500 + 16*0.01 = 2.16 s
//   g = d time / d(v0, t) = (-1000/500^2, 16) = (-0.004, 16)
//   g' C g = 0.004^2*100 - 2*0.004*16*1e-3 + 16^2*1e-6
//          = 0.0016 - 0.000128 + 0.000256 = 0.001728 s^2
ValidationSpec MeasuredValidation() {
  ValidationSpec val;
  val.samples = 1000;
  val.batch = 64;
  SpeedLaw law;
  law.v0_sps = 500;
  law.t_s = 0.01;
  law.covariance << 100, 1e-3, 1e-3, 1e-6;
  law.dof = 4;
  val.law = law;
  return val;
}

SpeedLaw Training(double v0, double t) {
  SpeedLaw law;
  law.v0_sps = v0;
  law.t_s = t;
  return law;
}

TEST(ValidationPass, MeasuredLawGivesTimeAndVariance) {
  const ValidationPass pass = ValidationPassOf(MeasuredValidation(), 128, Training(250, 0.04), 2);
  EXPECT_EQ(pass.steps, 16);
  EXPECT_NEAR(pass.time_s, 2.16, 1e-12);
  EXPECT_NEAR(pass.variance_s2, 0.001728, 1e-15);
  EXPECT_EQ(pass.training_gradient, Eigen::Vector2d::Zero());
}

TEST(ValidationPass, DerivedFromTheTrainingLawAtTheTrainingBatch) {
  // No validation batch: the training batch 64, ceil(1000/64) = 16 steps.
  // Training v0 = 250/s per device on 2 devices, t = 0.04 s; forward 1/4 of
  // the per-sample time, half of t:
  //   time = 1000*0.25/(2*250) + 16*0.5*0.04 = 0.5 + 0.32 = 0.82 s
  //   d time / d(v0, t) = (-1000*0.25/(2*250^2), 16*0.5) = (-0.002, 8)
  ValidationSpec val;
  val.samples = 1000;
  val.forward_fraction = 0.25;
  val.fixed_fraction = 0.5;
  const ValidationPass pass = ValidationPassOf(val, 64, Training(250, 0.04), 2);
  EXPECT_EQ(pass.steps, 16);
  EXPECT_NEAR(pass.time_s, 0.82, 1e-12);
  EXPECT_EQ(pass.variance_s2, 0);
  EXPECT_NEAR(pass.training_gradient(0), -0.002, 1e-15);
  EXPECT_NEAR(pass.training_gradient(1), 8, 1e-12);
}

TEST(ValidationPass, BothEpochModelsAddTheMeasuredPass) {
  // A training law with dof > 0 and zero covariance adds no variance of its
  // own: the standard error of the epoch is sqrt(0.001728) = 0.0415692... s.
  SpeedLaw train;
  train.v0_sps = 1000;
  train.t_s = 0.05;
  train.dof = 5;
  Workload w;
  w.samples_per_epoch = 50000;
  w.validation = MeasuredValidation();
  const EpochModel single = EpochModelFromLaw(train, 64, w);
  DataParallelModel model;  // one device, no gradients to all-reduce
  model.single_device = train;
  model.comm.intra_node = Link{1e10, 0};
  const EpochModel parallel = EpochModelFromScaling(model, 1, 64, w);
  for (const EpochModel& m : {single, parallel}) {
    EXPECT_NEAR(m.validation_epoch_s, 2.16, 1e-12);
    EXPECT_NEAR(m.epoch_stderr_s, std::sqrt(0.001728), 1e-12);
  }
}

TEST(ValidationPass, BothEpochModelsDeriveTheSamePass) {
  // The derived pass of DerivedFromTheTrainingLawAtTheTrainingBatch, 0.82 s:
  // one law of 500/s for both devices, or 250/s per device on 2 devices, at
  // the global batch 64.
  Workload w;
  w.samples_per_epoch = 50000;
  w.validation.samples = 1000;
  w.validation.forward_fraction = 0.25;
  w.validation.fixed_fraction = 0.5;
  const EpochModel single = EpochModelFromLaw(Training(500, 0.04), 64, w);
  DataParallelModel model;  // no gradients to all-reduce
  model.single_device = Training(250, 0.04);
  model.comm.intra_node = Link{1e10, 0};
  const EpochModel parallel = EpochModelFromScaling(model, 2, 32, w);
  EXPECT_NEAR(single.validation_epoch_s, 0.82, 1e-12);
  EXPECT_NEAR(parallel.validation_epoch_s, 0.82, 1e-12);
}

}  // namespace
}  // namespace fitspeed
