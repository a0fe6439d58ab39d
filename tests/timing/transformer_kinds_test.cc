// The transformer kinds (embeddings, layer and RMS norm, GELU, tanh, dropout,
// head split and merge, batched matmul, softmax, rotary, token selection,
// class token, image to sequence, tied dense layers, several losses) on both
// host backends: the shared plumbing (token ids, labels of every loss, the
// dropout mask), the Eigen reference against finite differences (in double;
// FP32 differences of embeddings under a norm are too coarse), oneDNN against
// the reference, and the zoo transformers building their step.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"
#include "timing/agreement.h"
#include "timing/executor.h"
#include "timing/test_networks.h"

namespace fitspeed::timing {
namespace {

using fitspeed::testing::RelativeError;
using fitspeed::testing::TransformerTestNetworks;

StepConfig ConfigTransformerKinds(int64_t batch, Optimizer optimizer = Optimizer::kSgdMomentum) {
  return fitspeed::testing::AgreementConfig(batch, optimizer);
}

TEST(TransformerKinds, TokenInputsAreWholeIdsAndEveryLossHasLabels) {
  const Network bert = fitspeed::testing::TinyBertNet();
  EXPECT_EQ(InputVocab(bert), 11);
  for (double id : InitialInput(bert, 3, 7)) {
    EXPECT_EQ(id, std::floor(id));
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 11);
  }
  // The masked-LM loss reads 2 rows of 11 classes per sequence, the
  // next-sentence loss one row of 2 classes: 3*2 + 3*1 labels, in that order.
  const std::vector<LossLabels> layout = LabelLayout(bert, 3);
  ASSERT_EQ(layout.size(), 2u);
  EXPECT_EQ(layout[0].layer, bert.LayerId("mlm.loss"));
  EXPECT_EQ(layout[0].offset, 0);
  EXPECT_EQ(layout[0].rows, 6);
  EXPECT_EQ(layout[0].classes, 11);
  EXPECT_EQ(layout[1].layer, bert.LayerId("nsp.loss"));
  EXPECT_EQ(layout[1].offset, 6);
  EXPECT_EQ(layout[1].rows, 3);
  EXPECT_EQ(layout[1].classes, 2);
  const std::vector<int32_t> labels = InitialLabels(bert, 3, 7);
  ASSERT_EQ(labels.size(), 9u);
  for (size_t i = 6; i < 9; ++i) EXPECT_LT(labels[i], 2);
  EXPECT_EQ(InputVocab(fitspeed::testing::TinyVitNet()), 0);
}

TEST(TransformerKinds, LossIsTheSumOfTheLossesMeans) {
  // All-zero parameters but gamma: every logit is 0, so each loss is the log
  // of its class count (Forward sums the means): ln 11 + ln 2.
  const Network bert = fitspeed::testing::TinyBertNet();
  auto step = MakeEigenExecutor<double>(bert, ConfigTransformerKinds(2));
  for (size_t i = 0; i < step->params().size(); ++i) {
    std::vector<double> values = step->Param(i);
    if (bert.layer(step->params()[i].layer).params[step->params()[i].index].name != "gamma") {
      std::fill(values.begin(), values.end(), 0.0);
    }
    step->SetParam(i, values);
  }
  EXPECT_NEAR(step->Forward(), std::log(11.0) + std::log(2.0), 1e-12);
}

TEST(TransformerKinds, DropoutMaskIsDeterministicAndChangesEveryStep) {
  const DropoutMask a = MakeDropoutMask(1, 5, 0, 0.25), b = MakeDropoutMask(1, 5, 0, 0.25);
  const DropoutMask next = MakeDropoutMask(1, 5, 1, 0.25), other = MakeDropoutMask(1, 6, 0, 0.25);
  // Kept fraction 0.75 +- 4 standard deviations of a binomial of 10^5 draws (0.0055).
  int kept = 0, same_next = 0, same_other = 0;
  constexpr int kDraws = 100000;
  for (uint64_t i = 0; i < kDraws; ++i) {
    EXPECT_EQ(a.Keep(i), b.Keep(i));
    kept += a.Keep(i);
    same_next += a.Keep(i) == next.Keep(i);
    same_other += a.Keep(i) == other.Keep(i);
  }
  EXPECT_NEAR(kept / static_cast<double>(kDraws), 0.75, 0.0055);
  // Independent masks agree on 0.75^2 + 0.25^2 = 0.625 of the elements.
  EXPECT_NEAR(same_next / static_cast<double>(kDraws), 0.625, 0.01);
  EXPECT_NEAR(same_other / static_cast<double>(kDraws), 0.625, 0.01);
  EXPECT_TRUE(MakeDropoutMask(1, 5, 0, 0.0).Keep(0));  // rate 0 keeps everything
}

TEST(TransformerKinds, EigenComputesHandValues) {
  // Rotary at position 0 is the identity and rotates row t by t*theta_i;
  // causal softmax rows put zero weight on later positions and sum to 1.
  const Network llama = fitspeed::testing::TinyLlamaNet();
  auto step = MakeEigenExecutor<double>(llama, ConfigTransformerKinds(1));
  step->Forward();
  const std::vector<double> q = step->Output(llama.LayerId("attn.qh"));
  const std::vector<double> r = step->Output(llama.LayerId("attn.q_rotary"));
  const int64_t tokens = 5, d = 4;  // {4 heads, 5 tokens, 4}
  for (int64_t h = 0; h < 4; ++h) {
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t i = 0; i < d / 2; ++i) {
        const size_t lo = static_cast<size_t>((h * tokens + t) * d + i), hi = lo + d / 2;
        const double angle = static_cast<double>(t) * std::pow(10000.0, -2.0 * i / d);
        EXPECT_NEAR(r[lo], q[lo] * std::cos(angle) - q[hi] * std::sin(angle), 1e-14);
        EXPECT_NEAR(r[hi], q[hi] * std::cos(angle) + q[lo] * std::sin(angle), 1e-14);
      }
    }
  }
  const std::vector<double> p = step->Output(llama.LayerId("attn.softmax"));  // {4, 5, 5}
  for (int64_t row = 0; row < 4 * tokens; ++row) {
    double sum = 0;
    for (int64_t j = 0; j < tokens; ++j) {
      const double v = p[static_cast<size_t>(row * tokens + j)];
      if (j > row % tokens) {
        EXPECT_EQ(v, 0.0);
      }
      sum += v;
    }
    EXPECT_NEAR(sum, 1.0, 1e-14);
  }
}

TEST(TransformerKinds, EigenGradientsMatchFiniteDifferences) {
  // Double precision, central differences with h = 1e-6. Error analysis: the
  // truncation error is h^2/6 |L'''| and the rounding error about
  // 2*eps*|L|/h = 2*1.1e-16*3/1e-6 ~ 7e-10. L''' is largest through the
  // norms of the embeddings, whose tables are N(0, 0.02^2): a layer or RMS
  // norm of a row of std ~0.03 multiplies each derivative by rstd ~ 30-50, so
  // |L'''| <~ 50^3 ~ 1.3e5 and the truncation error <~ 2e-8. The tolerance
  // 1e-7 + 1e-5|fd| is 4x that; a wrong term or factor is off by the
  // gradient's own size (1e-3 and more). Dropout masks stay fixed between
  // updates (MakeDropoutMask), and no kink (ReLU, max) is in these networks.
  for (const Network& net : TransformerTestNetworks()) {
    auto step = MakeEigenExecutor<double>(net, ConfigTransformerKinds(2));
    const double worst =
        fitspeed::testing::ExpectGradientsMatchFiniteDifferences(*step, 1e-6, 1e-7, 1e-5, 12);
    RecordProperty(net.name + "_worst_fd_error_over_tolerance", std::to_string(worst));
  }
}

TEST(TransformerKinds, EigenFloatAgreesWithDouble) {
  // Float against double: rounding of 2^-24 per operation, amplified by the
  // norms of small embeddings (rstd ~ 30): below 1e-4 relative after a step.
  for (const Network& net : TransformerTestNetworks()) {
    auto d = MakeEigenExecutor<double>(net, ConfigTransformerKinds(2));
    auto f = MakeEigenExecutor<float>(net, ConfigTransformerKinds(2));
    const double loss = d->Step();
    EXPECT_NEAR(f->Step(), loss, 1e-5 * std::abs(loss)) << net.name;
    for (size_t i = 0; i < d->params().size(); ++i) {
      EXPECT_LT(RelativeError(f->Param(i), d->Param(i)), 1e-5)
          << net.name << " " << d->params()[i].name;
    }
  }
}

TEST(TransformerKinds, OnednnAgreesWithEigenReference) {
  // FP32 against the double reference, as the CNN kinds (onednn_executor_test):
  // a few float roundings per value (2^-24 relative), summed over dot
  // products of at most 32 terms and amplified by the norms of small
  // embeddings (rstd ~ 30, a factor ~30 on 1e-7): 2e-4 keeps a margin of ~10.
  for (const Network& net : TransformerTestNetworks()) {
    for (Optimizer optimizer : {Optimizer::kSgdMomentum, Optimizer::kAdam}) {
      fitspeed::testing::ExpectFp32AgreesWithReference(net, ConfigTransformerKinds(3, optimizer),
                                                       2e-4);
    }
  }
}

TEST(TransformerKinds, OnednnBf16AgreesWithEmulationOrIsRefused) {
  if (!OnednnBf16Supported()) GTEST_SKIP() << "no BF16 kernels on this CPU (" << OnednnIsa() << ")";
  // Tolerances: the error analysis in agreement.h.
  for (const Network& net : TransformerTestNetworks()) {
    fitspeed::testing::ExpectBf16AgreesWithEmulation(
        net, ConfigTransformerKinds(3, Optimizer::kSgdMomentum));
  }
}

TEST(TransformerKinds, OnednnDryRunPlansExactlyWhatARealStepAllocates) {
  for (const Network& net : TransformerTestNetworks()) {
    for (bool reuse : {true, false}) {
      StepConfig c = ConfigTransformerKinds(3, Optimizer::kAdam);
      c.reuse_memory = reuse;
      const double real = MakeOnednnExecutor(net, c)->allocated_bytes();
      c.dry_run = true;
      EXPECT_EQ(MakeOnednnExecutor(net, c)->allocated_bytes(), real) << net.name;
    }
  }
}

TEST(TransformerKinds, ZooTransformersBuildTheirStepOnBothBackends) {
  // A dry run creates every oneDNN primitive (and plans every Eigen buffer)
  // without allocating: every kind and shape of the zoo transformers is
  // accepted (16 tokens, batch 2).
  ZooOptions options;
  options.seq_len = 16;
  for (const char* name : {"bert-base", "gpt2", "vit-b16", "tinyllama-1.1b"}) {
    const Network net = ZooNetwork(name, std::string(name) == "vit-b16" ? ZooOptions{} : options);
    StepConfig c = ConfigTransformerKinds(2);
    c.dry_run = true;
    EXPECT_GT(MakeOnednnExecutor(net, c)->allocated_bytes(), 0.0) << name;
    EXPECT_GT(MakeEigenExecutor<float>(net, c)->allocated_bytes(), 0.0) << name;
  }
}

TEST(TransformerKinds, TokenIdsReadByAnythingButAnEmbeddingAreRefused) {
  Network net("ids-to-dense", Shape::Vector(4));
  EmbeddingAttrs e;
  e.vocab = 5;
  e.dim = 3;
  const std::string x = net.Embedding("input", e, "embed");
  const std::string d = net.Dense("input", fitspeed::testing::DenseUnits(3), "dense");
  net.SoftmaxCrossEntropy(
      net.Add({net.Flatten(x, "flat"), net.Dense(d, fitspeed::testing::DenseUnits(12), "d2")},
              "add"),
      "loss");
  net.Finalize();
  EXPECT_THROW(CheckExecutable(net, ConfigTransformerKinds(1)), UsageError);
}

}  // namespace
}  // namespace fitspeed::timing
