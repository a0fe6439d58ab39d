// The loss kind: softmax_cross_entropy.
#include <fmt/format.h>

#include "kind.h"

namespace fitspeed::kinds {

namespace {

KindRules SoftmaxCrossEntropyRules() {
  KindRules r{LayerKind::kSoftmaxCrossEntropy, "softmax_cross_entropy"};
  r.host_ranks = {1, 2};
  // A row reduction; on both AMP lists (cross_entropy,
  // SoftmaxCrossEntropyWithLogits).
  r.device = DeviceTraits{/*normalizes_rows=*/true, /*fp32_under_pytorch_amp=*/true,
                          /*fp32_under_tensorflow_amp=*/true};
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {1, 2}, "class scores {classes} or {T, classes}");
    c.check.Require(c.in().dims.back() >= 2,
                    fmt::format("needs at least 2 classes, input has {}", c.in().dims.back()));
    layer.output_shape = Shape::Scalar();
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Forward per logit: max, subtract, exp, sum (4); the log and the label's
    // term per row are not counted. Backward: (softmax - onehot)/batch: 2.
    AddSample(cost.forward, 4 * c.in, c.in, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 2 * c.in, c.in, c.in);
  };
  // Its probabilities, of its input's size.
  r.saved = [](SaveContext& s) { s.extra += Elements(s.net.layer(s.input()).output_shape); };
  return r;
}

}  // namespace

std::vector<KindRules> LossKinds() { return {SoftmaxCrossEntropyRules()}; }

}  // namespace fitspeed::kinds
