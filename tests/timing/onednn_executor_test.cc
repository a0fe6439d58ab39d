#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/model/network_cost.h"
#include "timing/agreement.h"
#include "timing/executor.h"
#include "timing/test_networks.h"

namespace fitspeed::timing {
namespace {

using fitspeed::testing::AllTestNetworks;
using fitspeed::testing::RelativeError;

StepConfig ConfigOnednnExecutor(int64_t batch, Optimizer optimizer = Optimizer::kSgdMomentum,
                                Precision precision = Precision::kFp32) {
  StepConfig c = fitspeed::testing::AgreementConfig(batch, optimizer);
  c.precision = precision;
  return c;
}

TEST(OnednnExecutor, ConvolutionOfOnesCountsTheWindowInsideTheImage) {
  // As in the Eigen test: 4 at corners, 6 at edges, 9 in the centre, plus bias 0.5.
  Network net("conv", Shape::Chw(1, 3, 3));
  const std::string c =
      net.Conv2d("input", fitspeed::testing::ConvAttrs(1, MakeWindow(3, 1, 1)), "c");
  net.SoftmaxCrossEntropy(net.Dense(net.Flatten(c, "f"), fitspeed::testing::DenseUnits(2), "d"),
                          "loss");
  net.Finalize();
  auto step = MakeOnednnExecutor(net, ConfigOnednnExecutor(1));
  step->SetParam(0, std::vector<double>(9, 1.0));
  step->SetParam(1, {0.5});
  step->SetInput(std::vector<double>(9, 1.0), {1});
  step->Forward();
  const std::vector<double> expected{4.5, 6.5, 4.5, 6.5, 9.5, 6.5, 4.5, 6.5, 4.5};
  const std::vector<double> out = step->Output(1);
  ASSERT_EQ(out.size(), expected.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
}

TEST(OnednnExecutor, AgreesWithEigenReferenceInFp32) {
  // FP32 against the double reference: a few float roundings per value, each
  // 2^-24 relative, summed over dot products of up to a few hundred terms and
  // amplified by the batch-norms' cancellation (batch 4): below 2e-4.
  for (const Network& net : AllTestNetworks()) {
    for (Optimizer optimizer : {Optimizer::kSgd, Optimizer::kSgdMomentum, Optimizer::kAdam}) {
      fitspeed::testing::ExpectFp32AgreesWithReference(net, ConfigOnednnExecutor(4, optimizer),
                                                       2e-4);
    }
  }
}

TEST(OnednnExecutor, GradientsMatchFiniteDifferences) {
  // FP32 loss of order 1: h = 1e-3 gives rounding errors of ~1e-7/h = 1e-4
  // and truncation errors of ~h^2, against gradients of order 1e-2..1.
  for (const Network& net : AllTestNetworks()) {
    StepConfig c = ConfigOnednnExecutor(3);
    c.threads = 1;  // hundreds of tiny forward passes: no thread hand-offs
    auto step = MakeOnednnExecutor(net, c);
    fitspeed::testing::ExpectGradientsMatchFiniteDifferences(*step, 1e-3, 1e-3, 2e-2, 12);
  }
}

TEST(OnednnExecutor, Bf16AgreesWithEigenOrIsRefused) {
  if (!OnednnBf16Supported()) {
    // oneDNN 2.6 has BF16 kernels on AVX-512 and newer only.
    try {
      MakeOnednnExecutor(fitspeed::testing::ResidualNet(),
                         ConfigOnednnExecutor(2, Optimizer::kSgdMomentum, Precision::kMixed));
      FAIL() << "bf16 accepted on a CPU without BF16 kernels";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
    }
    GTEST_SKIP() << "no BF16 kernels on this CPU (" << OnednnIsa() << ")";
  }
  // Tolerances: the error analysis in agreement.h.
  for (const Network& net : AllTestNetworks()) {
    fitspeed::testing::ExpectBf16AgreesWithEmulation(
        net, ConfigOnednnExecutor(4, Optimizer::kSgdMomentum));
  }
}

TEST(OnednnExecutor, OperationTimesAddUpToAtMostTheStep) {
  // Every op is timed between two clock reads inside Step(), so their sum
  // cannot exceed the time around the whole step.
  const Network net = fitspeed::testing::ResidualNet();
  auto step = MakeOnednnExecutor(net, ConfigOnednnExecutor(4));
  step->ResetTimes();
  const auto start = std::chrono::steady_clock::now();
  step->Step();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double sum = 0;
  for (const auto& layer : step->times()) {
    for (double t : layer) sum += t;
  }
  EXPECT_GT(sum, 0.0);
  EXPECT_LE(sum, wall);
  const int c1 = net.LayerId("c1");
  EXPECT_GT(step->times()[static_cast<size_t>(c1)][PassIndex(Pass::kForward)], 0.0);
  EXPECT_FALSE(step->implementations()[static_cast<size_t>(c1)][PassIndex(Pass::kForward)].empty());
  // The first convolution's input needs no gradient: no backward-data there.
  EXPECT_EQ(step->times()[static_cast<size_t>(c1)][PassIndex(Pass::kBackwardData)], 0.0);
}

TEST(OnednnExecutor, DryRunPlansExactlyWhatARealStepAllocates) {
  for (const Network& net : AllTestNetworks()) {
    for (bool reuse : {true, false}) {
      StepConfig c = ConfigOnednnExecutor(5, Optimizer::kAdam);
      c.reuse_memory = reuse;
      const double real = MakeOnednnExecutor(net, c)->allocated_bytes();
      c.dry_run = true;
      EXPECT_EQ(MakeOnednnExecutor(net, c)->allocated_bytes(), real) << net.name;
    }
  }
}

TEST(OnednnExecutor, ReusingMemoryNeedsLessButNotLessThanTheParameters) {
  for (const Network& net : AllTestNetworks()) {
    StepConfig c = ConfigOnednnExecutor(5, Optimizer::kAdam);
    c.dry_run = true;
    const double shared = MakeOnednnExecutor(net, c)->allocated_bytes();
    c.reuse_memory = false;
    const double separate = MakeOnednnExecutor(net, c)->allocated_bytes();
    EXPECT_LT(shared, separate) << net.name;
    // Parameters, gradients and Adam's two moments (fitspeed/model/network_cost.h), and
    // the input, can share nothing: 4 bytes each.
    const MemoryEstimate minimal = EstimateTrainingMemory(net, 5, Optimizer::kAdam);
    const double input = 5.0 * net.input_shape().elements() * 4;
    EXPECT_GE(shared, minimal.parameter_bytes + minimal.gradient_bytes +
                          minimal.optimizer_state_bytes + input)
        << net.name;
  }
}

}  // namespace
}  // namespace fitspeed::timing
