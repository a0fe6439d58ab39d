// The layer kinds added with efficientnet-b0, alexnet and googlenet (sigmoid,
// swish, mul, concat, lrn) on both host backends: hand-computed values, the
// Eigen reference against finite differences, oneDNN against the reference,
// and the zoo networks that use them building their training step.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/model/zoo.h"
#include "timing/agreement.h"
#include "timing/executor.h"
#include "timing/test_networks.h"

namespace fitspeed::timing {
namespace {

using fitspeed::testing::DenseUnits;
using fitspeed::testing::NewKindTestNetworks;
using fitspeed::testing::RelativeError;

StepConfig ConfigNewKinds(int64_t batch, Optimizer optimizer = Optimizer::kSgdMomentum) {
  return fitspeed::testing::AgreementConfig(batch, optimizer);
}

// 3x1x1 input x -> sigmoid, swish, lrn and a concatenation of them; mul of x
// by the sigmoid; all flattened into a dense layer so that every output is
// readable.
Network HandNet() {
  Network net("hand", Shape::Chw(3, 1, 1));
  const std::string sig = net.Sigmoid("input", "sig");
  const std::string sw = net.Swish("input", "swish");
  LrnAttrs lrn;
  lrn.size = 3;
  lrn.alpha = 3;  // alpha/size = 1
  lrn.beta = 1;
  lrn.k = 1;
  const std::string n = net.Lrn("input", lrn, "lrn");
  const std::string m = net.Mul("input", sig, "mul");
  const std::string cat = net.Concat({sig, sw, n, m}, "cat");
  net.SoftmaxCrossEntropy(net.Dense(net.Flatten(cat, "flat"), DenseUnits(2), "d"), "loss");
  net.Finalize();
  return net;
}

void ExpectHandValues(StepExecutor& step) {
  SCOPED_TRACE(step.network().name);
  // x = (1, 2, 3) on three channels of one pixel.
  step.SetInput({1, 2, 3}, {0});
  step.Forward();
  const Network& net = step.network();
  const double e1 = 1 / (1 + std::exp(-1.0)), e2 = 1 / (1 + std::exp(-2.0)),
               e3 = 1 / (1 + std::exp(-3.0));
  // sigmoid(1) = 0.7310585786..., sigmoid(2) = 0.8807970779..., sigmoid(3) = 0.9525741268...
  const std::vector<double> sig{e1, e2, e3};
  const std::vector<double> swish{1 * e1, 2 * e2, 3 * e3};
  // LRN with alpha/size = 1, beta = 1, k = 1 over channel windows {0,1},
  // {0,1,2}, {1,2}: 1/(1 + 1 + 4) = 1/6, 2/(1 + 1 + 4 + 9) = 2/15, 3/(1 + 4 + 9) = 3/14.
  const std::vector<double> lrn{1.0 / 6, 2.0 / 15, 3.0 / 14};
  const std::vector<double> mul{1 * e1, 2 * e2, 3 * e3};
  EXPECT_LT(RelativeError(step.Output(net.LayerId("sig")), sig), 1e-6);
  EXPECT_LT(RelativeError(step.Output(net.LayerId("swish")), swish), 1e-6);
  EXPECT_LT(RelativeError(step.Output(net.LayerId("lrn")), lrn), 1e-6);
  EXPECT_LT(RelativeError(step.Output(net.LayerId("mul")), mul), 1e-6);
  std::vector<double> cat = sig;
  for (const auto* part : {&swish, &lrn, &mul}) cat.insert(cat.end(), part->begin(), part->end());
  EXPECT_LT(RelativeError(step.Output(net.LayerId("cat")), cat), 1e-6);
}

TEST(NewKinds, EigenComputesHandValues) {
  auto step = MakeEigenExecutor<double>(HandNet(), ConfigNewKinds(1));
  ExpectHandValues(*step);
}

TEST(NewKinds, OnednnComputesHandValues) {
  StepConfig c = ConfigNewKinds(1);
  c.reuse_memory = false;  // every output readable after the forward pass
  auto step = MakeOnednnExecutor(HandNet(), c);
  ExpectHandValues(*step);
}

TEST(NewKinds, EigenGradientsMatchFiniteDifferences) {
  // Double precision: h = 1e-5 gives truncation ~1e-10 and rounding ~1e-11.
  for (const Network& net : NewKindTestNetworks()) {
    auto step = MakeEigenExecutor<double>(net, ConfigNewKinds(3));
    fitspeed::testing::ExpectGradientsMatchFiniteDifferences(*step, 1e-5, 1e-7, 1e-5, 12);
  }
}

TEST(NewKinds, OnednnGradientsMatchFiniteDifferences) {
  // FP32 loss of order 1: h = 1e-3 (as the other oneDNN gradient test).
  for (const Network& net : NewKindTestNetworks()) {
    StepConfig c = ConfigNewKinds(3);
    c.threads = 1;
    auto step = MakeOnednnExecutor(net, c);
    fitspeed::testing::ExpectGradientsMatchFiniteDifferences(*step, 1e-3, 1e-3, 2e-2, 12);
  }
}

TEST(NewKinds, OnednnAgreesWithEigenReference) {
  // FP32 against the double reference: a few float roundings per value.
  for (const Network& net : NewKindTestNetworks()) {
    for (Optimizer optimizer : {Optimizer::kSgdMomentum, Optimizer::kAdam, Optimizer::kRmsprop}) {
      fitspeed::testing::ExpectFp32AgreesWithReference(net, ConfigNewKinds(4, optimizer), 2e-4);
    }
  }
}

TEST(NewKinds, OnednnBf16AgreesWithEigenReference) {
  if (!OnednnBf16Supported()) GTEST_SKIP() << "no BF16 kernels on this CPU (" << OnednnIsa() << ")";
  // Tolerances: the error analysis in agreement.h.
  for (const Network& net : NewKindTestNetworks()) {
    for (Optimizer optimizer : {Optimizer::kSgdMomentum, Optimizer::kAdam, Optimizer::kRmsprop}) {
      fitspeed::testing::ExpectBf16AgreesWithEmulation(net, ConfigNewKinds(4, optimizer));
    }
  }
}

TEST(NewKinds, OnednnDryRunPlansExactlyWhatARealStepAllocates) {
  // The views of concat's gradient and mul's plain copies share the arena
  // like every other buffer: planning and allocating agree, with and without reuse.
  for (const Network& net : NewKindTestNetworks()) {
    for (bool reuse : {true, false}) {
      StepConfig c = ConfigNewKinds(5, Optimizer::kAdam);
      c.reuse_memory = reuse;
      const double real = MakeOnednnExecutor(net, c)->allocated_bytes();
      c.dry_run = true;
      EXPECT_EQ(MakeOnednnExecutor(net, c)->allocated_bytes(), real) << net.name;
    }
  }
}

TEST(NewKinds, ZooNetworksBuildTheirStepOnBothBackends) {
  // A dry run creates every oneDNN primitive (and plans every Eigen buffer)
  // without allocating: each layer kind and shape of the three networks is
  // accepted at batch 2.
  for (const char* name : {"efficientnet-b0", "alexnet", "googlenet"}) {
    const Network net = ZooNetwork(name);
    StepConfig c = ConfigNewKinds(2);
    c.dry_run = true;
    EXPECT_GT(MakeOnednnExecutor(net, c)->allocated_bytes(), 0.0) << name;
    EXPECT_GT(MakeEigenExecutor<float>(net, c)->allocated_bytes(), 0.0) << name;
  }
}

}  // namespace
}  // namespace fitspeed::timing
