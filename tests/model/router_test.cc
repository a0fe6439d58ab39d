// The router kind (the gate of a mixture-of-experts layer): its shape and
// parameters, FLOPs and elements by hand, saved tensors, device traits and
// JSON attributes. Both host backends run it in tests/timing (TinyMoeNet).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/model/network_json.h"
#include "model/attrs_util.h"
#include "model/kinds/kind.h"

namespace fitspeed {
namespace {

std::string Router(Network& net, const std::string& input, int64_t experts,
                   const std::string& name) {
  Layer layer;
  layer.name = name;
  layer.kind = LayerKind::kRouter;
  layer.inputs = {input};
  layer.router.experts = experts;
  return net.Append(layer);
}

// input {4, 6} -> dense 6 -> router (3 experts) -> loss.
Network TokensNet() {
  Network net("router-tokens", Shape({4, 6}));
  net.SoftmaxCrossEntropy(Router(net, net.Dense("input", test::Units(6), "d"), 3, "router"),
                          "loss");
  net.Finalize();
  return net;
}

TEST(Router, ShapeAndKernel) {
  const Network net = TokensNet();
  const Layer& router = net.layer(net.LayerId("router"));
  EXPECT_EQ(router.output_shape, Shape({4, 3}));
  ASSERT_EQ(router.params.size(), 1u);
  EXPECT_EQ(router.params[0].name, "kernel");
  EXPECT_EQ(router.params[0].shape, Shape({3, 6}));  // {experts, features}, no bias
  EXPECT_TRUE(router.params[0].trainable);
  EXPECT_EQ(router.ParamCount(), 18);
}

TEST(Router, CostByHand) {
  const Network net = TokensNet();
  const NetworkCost cost = CountCost(net, Optimizer::kSgdMomentum);
  const LayerCost& c = cost.layers[static_cast<size_t>(net.LayerId("router"))];
  // 4 tokens of 6 features, 3 experts: 4*3 = 12 logits of 6 multiply-adds each
  // (72, 144 FLOPs), the softmax 5 per logit (60): 204. Reads the 24 inputs
  // (and the 18 kernel elements per step), writes the 12 probabilities.
  EXPECT_DOUBLE_EQ(c.forward.flops.per_sample, 204.0);
  EXPECT_DOUBLE_EQ(c.forward.elements_read.per_sample, 24.0);
  EXPECT_DOUBLE_EQ(c.forward.elements_read.per_step, 18.0);
  EXPECT_DOUBLE_EQ(c.forward.elements_written.per_sample, 12.0);
  // backward-weights: the logits' gradient 4*12 = 48 plus dW 144: 192; reads
  // x, dy and p (24 + 12 + 12), writes g (12) for backward-data and the 18
  // kernel gradients per step.
  EXPECT_DOUBLE_EQ(c.backward_weights.flops.per_sample, 192.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.elements_read.per_sample, 48.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.elements_written.per_sample, 12.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.elements_written.per_step, 18.0);
  // backward-data: dx = g W, 144 FLOPs; reads g (12) and W (18), writes dx (24).
  EXPECT_DOUBLE_EQ(c.backward_data.flops.per_sample, 144.0);
  EXPECT_DOUBLE_EQ(c.backward_data.elements_read.per_sample, 12.0);
  EXPECT_DOUBLE_EQ(c.backward_data.elements_read.per_step, 18.0);
  EXPECT_DOUBLE_EQ(c.backward_data.elements_written.per_sample, 24.0);
  // SGD with momentum: 4 FLOPs per trainable parameter.
  EXPECT_DOUBLE_EQ(c.update.flops.per_step, 4 * 18.0);
  EXPECT_EQ(c.activation_elements, 12);
}

TEST(Router, OnTheInputComputesNoInputGradient) {
  // input {6} -> router (4 experts) -> loss: nothing before it learns.
  Network net("router-input", Shape::Vector(6));
  net.SoftmaxCrossEntropy(Router(net, "input", 4, "router"), "loss");
  net.Finalize();
  const NetworkCost cost = CountCost(net, Optimizer::kSgd);
  const LayerCost& c = cost.layers[static_cast<size_t>(net.LayerId("router"))];
  // 4 logits of 6 multiply-adds (48) and the softmax (20); backward-weights
  // 4*4 + 48 = 64, reading x, dy and p (6 + 4 + 4) and writing no g.
  EXPECT_DOUBLE_EQ(c.forward.flops.per_sample, 68.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.flops.per_sample, 64.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.elements_read.per_sample, 14.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.elements_written.per_sample, 0.0);
  EXPECT_DOUBLE_EQ(c.backward_data.flops.per_sample, 0.0);
  EXPECT_DOUBLE_EQ(c.backward_data.elements_read.per_step, 0.0);
}

TEST(Router, SavesItsInputAndItsOutput) {
  const Network net = TokensNet();
  const int id = net.LayerId("router");
  const std::vector<bool> grads(static_cast<size_t>(net.size()), true);
  std::vector<int> keep;
  kinds::SaveContext save{net, net.layer(id), id, grads, keep};
  kinds::RulesOf(LayerKind::kRouter).saved(save);
  // x for dW = g^T x, p for the softmax's gradient.
  EXPECT_EQ(keep, (std::vector<int>{net.LayerId("d"), id}));
  EXPECT_DOUBLE_EQ(save.extra, 0.0);
}

TEST(Router, RunsAsAMatrixProductOnADevice) {
  const kinds::DeviceTraits& traits = *kinds::RulesOf(LayerKind::kRouter).device;
  EXPECT_FALSE(traits.normalizes_rows);
  EXPECT_FALSE(traits.fp32_under_pytorch_amp);
  EXPECT_FALSE(traits.fp32_under_tensorflow_amp);
}

TEST(Router, JsonRoundTripAndErrors) {
  const std::string text =
      "{\"input\": [4, 6],\n"
      " \"layers\": [\n"
      "  {\"name\": \"gate\", \"kind\": \"router\", \"experts\": 3},\n"
      "  {\"kind\": \"softmax_cross_entropy\"}]}\n";
  const Network net = ParseNetworkJson(text, "net.json");
  EXPECT_EQ(net.layer(1).kind, LayerKind::kRouter);
  EXPECT_EQ(net.layer(1).router.experts, 3);
  const Network again = ParseNetworkJson(NetworkToJson(net), "again.json");
  EXPECT_EQ(again.layer(1).router.experts, 3);
  EXPECT_EQ(again.layer(1).params[0].shape, Shape({3, 6}));
  for (const char* bad : {"\"experts\": 1", "\"experts\": 2.5", "\"units\": 3"}) {
    std::string wrong = text;
    wrong.replace(wrong.find("\"experts\": 3"), 12, bad);
    try {
      ParseNetworkJson(wrong, "net.json");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("net.json:3"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace fitspeed
