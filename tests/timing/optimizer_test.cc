#include "timing/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace fitspeed::timing {
namespace {

TEST(Optimizer, SgdStepsAgainstTheGradient) {
  // w = 1 - 0.1*0.5 = 0.95; w = -2 - 0.1*(-1) = -1.9.
  std::vector<float> w{1.0f, -2.0f};
  const std::vector<float> g{0.5f, -1.0f};
  SgdUpdate(w.data(), g.data(), 2, 0.1);
  EXPECT_FLOAT_EQ(w[0], 0.95f);
  EXPECT_FLOAT_EQ(w[1], -1.9f);
}

TEST(Optimizer, MomentumAccumulatesVelocity) {
  // lr 0.1, mu 0.9, g = 0.5 twice: m1 = 0.5, w1 = 1 - 0.05 = 0.95;
  // m2 = 0.9*0.5 + 0.5 = 0.95, w2 = 0.95 - 0.095 = 0.855.
  std::vector<double> w{1.0}, m{0.0};
  const std::vector<double> g{0.5};
  MomentumUpdate(w.data(), g.data(), m.data(), 1, 0.1, 0.9);
  EXPECT_DOUBLE_EQ(m[0], 0.5);
  EXPECT_DOUBLE_EQ(w[0], 0.95);
  MomentumUpdate(w.data(), g.data(), m.data(), 1, 0.1, 0.9);
  EXPECT_DOUBLE_EQ(m[0], 0.95);
  EXPECT_NEAR(w[0], 0.855, 1e-15);
}

TEST(Optimizer, AdamStepSizeHasBiasCorrections) {
  // t = 1: sqrt(1 - 0.999)/(1 - 0.9) = 0.0316227766/0.1 = 0.316227766.
  EXPECT_NEAR(AdamStepSize(1.0, 0.9, 0.999, 1), 0.31622776601683794, 1e-15);
  // t = 2: sqrt(1 - 0.998001)/(1 - 0.81) = 0.0447101778/0.19 = 0.2353167254.
  EXPECT_NEAR(AdamStepSize(1.0, 0.9, 0.999, 2), 0.23531672540, 1e-10);
}

TEST(Optimizer, AdamFirstStepMovesByTheLearningRate) {
  // Kingma & Ba 2015, section 2.1: the first step is lr*sign(g) (up to eps).
  // g = 0.5: m = 0.05, v = 0.00025, step 0.0316227766*0.05/0.0158113883 = 0.1.
  std::vector<double> w{1.0, 1.0}, m{0.0, 0.0}, v{0.0, 0.0};
  const std::vector<double> g{0.5, -4.0};
  AdamUpdate(w.data(), g.data(), m.data(), v.data(), 2, AdamStepSize(0.1, 0.9, 0.999, 1), 0.9,
             0.999, 1e-8);
  EXPECT_DOUBLE_EQ(m[0], 0.05);
  EXPECT_DOUBLE_EQ(v[0], 0.00025);
  EXPECT_NEAR(w[0], 0.9, 1e-6);
  EXPECT_NEAR(w[1], 1.1, 1e-6);
}

TEST(Optimizer, RmspropScalesTheStepByTheGradientsRootMeanSquare) {
  // torch.optim.RMSprop(lr=0.01, alpha=0.99, eps=1e-8, momentum=0.9), g = 0.5 twice:
  //   v1 = 0.01*0.25 = 0.0025, sqrt = 0.05, m1 = 0.5/0.05 = 10 (up to eps), w1 = 1 - 0.1 = 0.9;
  //   v2 = 0.99*0.0025 + 0.0025 = 0.004975, sqrt = 0.0705336798,
  //   m2 = 0.9*10 + 0.5/0.0705336799 = 9 + 7.0888112 = 16.0888112, w2 = 0.9 - 0.160888112
  //   (eps moves m by ~2e-6).
  std::vector<double> w{1.0}, m{0.0}, v{0.0};
  const std::vector<double> g{0.5};
  RmspropUpdate(w.data(), g.data(), m.data(), v.data(), 1, 0.01, 0.99, 0.9, 1e-8);
  EXPECT_NEAR(v[0], 0.0025, 1e-17);
  EXPECT_NEAR(m[0], 10.0, 1e-5);
  EXPECT_NEAR(w[0], 0.9, 1e-7);
  RmspropUpdate(w.data(), g.data(), m.data(), v.data(), 1, 0.01, 0.99, 0.9, 1e-8);
  EXPECT_NEAR(v[0], 0.004975, 1e-15);
  EXPECT_NEAR(m[0], 16.0888112, 1e-5);
  EXPECT_NEAR(w[0], 0.9 - 0.160888112, 1e-7);
  // Through UpdateAll, float: the same first step.
  std::vector<float> wf{1.0f}, mf{0.0f}, vf{0.0f};
  const std::vector<float> gf{0.5f};
  UpdateSettings s;
  s.optimizer = Optimizer::kRmsprop;
  s.learning_rate = 0.01;
  s.momentum = 0.9;
  s.rmsprop_alpha = 0.99;
  s.epsilon = 1e-8;
  UpdateAll(s, std::vector<UpdateSlot<float>>{{wf.data(), gf.data(), mf.data(), vf.data(), 1}});
  EXPECT_NEAR(wf[0], 0.9f, 1e-6f);
}

TEST(Optimizer, UpdateAllUpdatesEveryTensorOnce) {
  // Two tensors, one momentum step each (m = g, w -= 0.1*g): 1 - 0.1*0.5 = 0.95,
  // 2 - 0.1*(-1) = 2.1, 3 - 0.1*2 = 2.8.
  std::vector<float> w1{1.0f, 2.0f}, m1{0.0f, 0.0f}, w2{3.0f}, m2{0.0f};
  const std::vector<float> g1{0.5f, -1.0f}, g2{2.0f};
  UpdateSettings s;
  s.optimizer = Optimizer::kSgdMomentum;
  s.learning_rate = 0.1;
  s.momentum = 0.9;
  std::vector<UpdateSlot<float>> slots(2);
  slots[0] = {w1.data(), g1.data(), m1.data(), nullptr, 2};
  slots[1] = {w2.data(), g2.data(), m2.data(), nullptr, 1};
  UpdateAll(s, slots);
  EXPECT_FLOAT_EQ(w1[0], 0.95f);
  EXPECT_FLOAT_EQ(w1[1], 2.1f);
  EXPECT_FLOAT_EQ(w2[0], 2.8f);
  EXPECT_FLOAT_EQ(m2[0], 2.0f);
}

TEST(Optimizer, MovingAverageFollowsKeras) {
  // 0.99*1 + 0.01*3 = 1.02.
  std::vector<float> moving{1.0f};
  const std::vector<float> batch{3.0f};
  MovingAverage(moving.data(), batch.data(), 1, 0.99);
  EXPECT_FLOAT_EQ(moving[0], 1.02f);
}

}  // namespace
}  // namespace fitspeed::timing
