#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "fitspeed/core/error.h"
#include "timing/executor.h"
#include "timing/test_networks.h"

namespace fitspeed::timing {
namespace {

using fitspeed::testing::DenseUnits;

StepConfig Config(int64_t batch, Optimizer optimizer = Optimizer::kSgdMomentum) {
  StepConfig c;
  c.batch = batch;
  c.optimizer = optimizer;
  c.learning_rate = 0.1;
  // Adam divides by sqrt(v) + eps: a gradient that is zero up to rounding (a
  // bias before a batch-norm) would otherwise move by a whole learning rate.
  c.epsilon = 1e-3;
  return c;
}

// input {4} -> dense 3 -> loss.
Network LinearNet() {
  Network net("linear", Shape::Vector(4));
  net.SoftmaxCrossEntropy(net.Dense("input", DenseUnits(3), "d"), "loss");
  net.Finalize();
  return net;
}

// input 1x3x3 -> conv 3x3 pad 1 -> flatten -> dense 2 -> loss.
Network ConvNet() {
  Network net("conv", Shape::Chw(1, 3, 3));
  const std::string c =
      net.Conv2d("input", fitspeed::testing::ConvAttrs(1, MakeWindow(3, 1, 1)), "c");
  net.SoftmaxCrossEntropy(net.Dense(net.Flatten(c, "f"), DenseUnits(2), "d"), "loss");
  net.Finalize();
  return net;
}

TEST(EigenExecutor, ConvolutionOfOnesCountsTheWindowInsideTheImage) {
  // A 3x3 kernel of ones over a 3x3 image of ones with zero padding 1 sums the
  // in-bounds window: 4 at corners, 6 at edges, 9 in the centre; bias 0.5.
  auto step = MakeEigenExecutor<double>(ConvNet(), Config(1));
  step->SetParam(0, std::vector<double>(9, 1.0));
  step->SetParam(1, {0.5});
  step->SetInput(std::vector<double>(9, 1.0), {1});
  step->Forward();
  const std::vector<double> expected{4.5, 6.5, 4.5, 6.5, 9.5, 6.5, 4.5, 6.5, 4.5};
  const std::vector<double> out = step->Output(1);
  ASSERT_EQ(out.size(), expected.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_DOUBLE_EQ(out[i], expected[i]) << i;
}

TEST(EigenExecutor, ZeroLogitsGiveLogClassesAndHandGradients) {
  // Zero weights: p = 1/3 for every class, loss = ln 3. With inputs e_0..e_3 and
  // labels {0, 2, 2, 1}: dL/db_c = mean_n(1/3 - [y_n = c]) = {1/12, 1/12, -1/6};
  // dL/dW[c][f] = (1/3 - [y_f = c])/4, e.g. W[0][0]: -1/6, W[2][1]: -1/6, W[1][1]: 1/12.
  auto step = MakeEigenExecutor<double>(LinearNet(), Config(4));
  step->SetParam(0, std::vector<double>(12, 0.0));
  step->SetParam(1, std::vector<double>(3, 0.0));
  std::vector<double> x(16, 0.0);
  for (int n = 0; n < 4; ++n) x[static_cast<size_t>(n * 4 + n)] = 1.0;
  step->SetInput(x, {0, 2, 2, 1});
  EXPECT_NEAR(step->Forward(), std::log(3.0), 1e-15);
  step->Backward();
  const std::vector<double> gb = step->Grad(1);
  EXPECT_NEAR(gb[0], 1.0 / 12, 1e-15);
  EXPECT_NEAR(gb[1], 1.0 / 12, 1e-15);
  EXPECT_NEAR(gb[2], -1.0 / 6, 1e-15);
  const std::vector<double> gw = step->Grad(0);  // {units, features}
  EXPECT_NEAR(gw[0 * 4 + 0], -1.0 / 6, 1e-15);
  EXPECT_NEAR(gw[2 * 4 + 1], -1.0 / 6, 1e-15);
  EXPECT_NEAR(gw[1 * 4 + 1], 1.0 / 12, 1e-15);
  EXPECT_NEAR(gw[1 * 4 + 3], -1.0 / 6, 1e-15);
  // First momentum step: m = g, b = -0.1*g = {-1/120, -1/120, 1/60}.
  step->Update();
  const std::vector<double> b = step->Param(1);
  EXPECT_NEAR(b[0], -1.0 / 120, 1e-15);
  EXPECT_NEAR(b[2], 1.0 / 60, 1e-15);
}

TEST(EigenExecutor, GradientsMatchFiniteDifferences) {
  // Double precision: central differences with h = 1e-6 are exact to ~1e-9
  // (truncation h^2, rounding 1e-16/h); a ReLU or max-pool kink within h of an
  // activation is improbable at these sizes.
  for (const Network& net : fitspeed::testing::AllTestNetworks()) {
    auto step = MakeEigenExecutor<double>(net, Config(3));
    fitspeed::testing::ExpectGradientsMatchFiniteDifferences(*step, 1e-6, 1e-7, 1e-5, 1000);
  }
}

TEST(EigenExecutor, FloatAgreesWithDouble) {
  for (const Network& net : fitspeed::testing::AllTestNetworks()) {
    auto d = MakeEigenExecutor<double>(net, Config(3));
    auto f = MakeEigenExecutor<float>(net, Config(3));
    EXPECT_NEAR(f->Step(), d->Step(), 1e-5) << net.name;
    for (size_t i = 0; i < d->params().size(); ++i) {
      EXPECT_LT(fitspeed::testing::RelativeError(f->Param(i), d->Param(i)), 1e-5)
          << net.name << " " << d->params()[i].name;
    }
  }
}

TEST(EigenExecutor, BatchNormNormalizesEachChannel) {
  // After batch-norm with gamma 1 and beta 0, every channel of the batch has
  // mean 0 and variance var/(var + eps) (Ioffe & Szegedy 2015, Algorithm 1).
  const Network net = fitspeed::testing::ResidualNet();
  auto step = MakeEigenExecutor<double>(net, Config(3));
  step->Forward();
  const int b1 = net.LayerId("b1");
  const std::vector<double> x = step->Output(net.LayerId("c1"));
  const std::vector<double> y = step->Output(b1);
  const int64_t channels = 8, area = 36, n = 3;
  for (int64_t c = 0; c < channels; ++c) {
    double mean = 0, sq = 0, xm = 0, xsq = 0;
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t i = 0; i < area; ++i) {
        mean += y[static_cast<size_t>((s * channels + c) * area + i)];
        xm += x[static_cast<size_t>((s * channels + c) * area + i)];
      }
    }
    mean /= n * area;
    xm /= n * area;
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t i = 0; i < area; ++i) {
        sq += std::pow(y[static_cast<size_t>((s * channels + c) * area + i)], 2);
        xsq += std::pow(x[static_cast<size_t>((s * channels + c) * area + i)] - xm, 2);
      }
    }
    const double var = xsq / (n * area);
    EXPECT_NEAR(mean, 0.0, 1e-12);
    EXPECT_NEAR(sq / (n * area), var / (var + net.layer(b1).batch_norm.epsilon), 1e-12);
  }
}

TEST(EigenExecutor, DryRunCountsBuffersWithoutAllocating) {
  // LinearNet at batch 2 with Adam, float: input 2x4, logits 2x3 and their
  // gradient 2x3, log-probabilities 2x3, kernel 12 and bias 3 each with
  // gradient, m and v: (8 + 6 + 6 + 6 + 4*(12 + 3)) * 4 bytes = 344 bytes.
  StepConfig c = Config(2, Optimizer::kAdam);
  c.dry_run = true;
  EXPECT_DOUBLE_EQ(MakeEigenExecutor<float>(LinearNet(), c)->allocated_bytes(), 344.0);
  c.dry_run = false;
  EXPECT_DOUBLE_EQ(MakeEigenExecutor<float>(LinearNet(), c)->allocated_bytes(), 344.0);
}

TEST(EigenExecutor, RejectsABatchBelowOne) {
  EXPECT_THROW(MakeEigenExecutor<double>(LinearNet(), Config(0)), UsageError);
}

}  // namespace
}  // namespace fitspeed::timing
