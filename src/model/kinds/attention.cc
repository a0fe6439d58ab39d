// Attention kinds: split_heads, merge_heads, batched_matmul, softmax, rotary,
// select_token and gather_tokens.
#include <fmt/format.h>

#include <cmath>

#include "kind.h"

namespace fitspeed::kinds {

namespace {

// A transpose or copy of every element, both ways.
void CopyCost(const CostContext& c, LayerCost& cost) {
  AddSample(cost.forward, 0, c.in, c.out);
  if (c.input_grad) AddSample(cost.backward_data, 0, c.out, c.in);
}

// The M, K and N of a batched matmul's operands (after Finalize's checks).
struct MatmulDims {
  double heads, m, k, n;
};
MatmulDims DimsOf(const Shape& a, const Shape& b, bool transpose_b) {
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  return {d(a.dims[0]), d(a.dims[1]), d(a.dims[2]), d(transpose_b ? b.dims[1] : b.dims[2])};
}

KindRules SplitHeadsRules() {
  KindRules r{LayerKind::kSplitHeads, "split_heads"};
  r.host_ranks = {2};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {2}, "a sequence {T, F}");
    const int64_t heads = layer.heads.heads;
    const int64_t features = c.in().dims.back();
    c.check.Require(
        heads >= 1 && features % heads == 0,
        fmt::format("heads {} must be >= 1 and divide the {} features", heads, features));
    layer.output_shape = Shape({heads, c.in().dims.front(), features / heads});
  };
  r.cost = CopyCost;
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.heads.heads = j.RequiredInteger("heads", 1, kMaxElements);
  };
  r.write_json = [](const Layer& layer, json& out) { out["heads"] = layer.heads.heads; };
  return r;
}

KindRules MergeHeadsRules() {
  KindRules r{LayerKind::kMergeHeads, "merge_heads"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {3}, "heads {H, T, D}");
    const Shape& in = c.in();
    layer.output_shape = Shape({in.dims[1], in.dims[0] * in.dims[2]});
  };
  r.cost = CopyCost;
  return r;
}

KindRules BatchedMatmulRules() {
  KindRules r{LayerKind::kBatchedMatmul, "batched_matmul"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.min_inputs = r.max_inputs = 2;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& a = c.in(0);
    const Shape& b = c.in(1);
    c.check.RequireRank(a, {3}, "heads of matrices {H, M, K}");
    c.check.Require(b.rank() == 3, fmt::format("input '{}' {} is not heads of matrices {{Hb, K, "
                                               "N}}",
                                               layer.inputs[1], b.ToString()));
    const MatmulAttrs& m = layer.matmul;
    c.check.Require(std::isfinite(m.scale), "scale must be finite");
    const int64_t k_b = m.transpose_b ? b.dims[2] : b.dims[1];
    c.check.Require(a.dims[0] % b.dims[0] == 0,
                    fmt::format("the {} heads of '{}' must divide the {} heads of '{}'", b.dims[0],
                                layer.inputs[1], a.dims[0], layer.inputs[0]));
    c.check.Require(a.dims[2] == k_b,
                    fmt::format("shape mismatch: '{}' {} times '{}' {}{}: inner dimensions {} "
                                "and {}",
                                layer.inputs[0], a.ToString(), layer.inputs[1], b.ToString(),
                                m.transpose_b ? " transposed" : "", a.dims[2], k_b));
    layer.output_shape = Shape({a.dims[0], a.dims[1], m.transpose_b ? b.dims[1] : b.dims[2]});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // A multiply-add per (h, m, n, k); the scale, when not 1, a multiply per
    // output. Backward: da = dy b^T and db = a^T dy, the same multiply-adds
    // each; with grouped heads, the heads sharing b are one product with their
    // rows stacked, so db needs no extra sum.
    const MatmulDims d = DimsOf(c.InShape(0), c.InShape(1), c.layer.matmul.transpose_b);
    const double macs = d.heads * d.m * d.n * d.k;
    const double scale = c.layer.matmul.scale == 1.0 ? 0 : c.out;
    const double a = c.InElements(0);
    const double b = c.InElements(1);
    AddSample(cost.forward, 2 * macs + scale, a + b, c.out);
    if (c.GradTo(0)) AddSample(cost.backward_data, 2 * macs + scale, c.out + b, a);
    if (c.GradTo(1)) AddSample(cost.backward_data, 2 * macs, c.out + a, b);
  };
  r.saved = [](SaveContext& s) {
    if (s.grads[static_cast<size_t>(s.input(1))]) s.KeepInput(0);
    if (s.grads[static_cast<size_t>(s.input(0))]) s.KeepInput(1);
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.matmul.transpose_b = j.Bool("transpose_b", false);
    layer.matmul.scale = j.Number("scale", 1.0);
  };
  r.write_json = [](const Layer& layer, json& out) {
    out["transpose_b"] = layer.matmul.transpose_b;
    out["scale"] = layer.matmul.scale;
  };
  return r;
}

KindRules SoftmaxRules() {
  KindRules r{LayerKind::kSoftmax, "softmax"};
  r.host_ranks = {1, 2, 3};
  // A row reduction; PyTorch autocast runs softmax in FP32, TensorFlow's
  // Softmax follows its FP16 input.
  r.device = DeviceTraits{/*normalizes_rows=*/true, /*fp32_under_pytorch_amp=*/true,
                          /*fp32_under_tensorflow_amp=*/false};
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& in = c.in();
    c.check.Require(in.rank() >= 1, "needs an input of rank >= 1");
    if (layer.softmax.causal) {
      c.check.Require(
          in.rank() >= 2 && in.dims[static_cast<size_t>(in.rank() - 1)] ==
                                in.dims[static_cast<size_t>(in.rank() - 2)],
          fmt::format("a causal mask needs square {{.., T, T}} scores, not {}", in.ToString()));
    }
    layer.output_shape = in;
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Per element: max, subtract, exp, sum, divide (5); the causal mask is
    // applied in the same pass (the masked half is still visited, as in
    // unfused kernels). Backward from the output: dx = y*(dy - sum(dy*y)) (4).
    AddSample(cost.forward, 5 * c.in, c.in, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 4 * c.in, 2 * c.out, c.in);
  };
  r.saved = [](SaveContext& s) { s.KeepOutput(); };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.softmax.causal = j.Bool("causal", false);
  };
  r.write_json = [](const Layer& layer, json& out) { out["causal"] = layer.softmax.causal; };
  return r;
}

KindRules RotaryRules() {
  KindRules r{LayerKind::kRotary, "rotary"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {3}, "heads {H, T, D}");
    c.check.Require(c.in().dims[2] % 2 == 0,
                    fmt::format("the head size {} must be even", c.in().dims[2]));
    c.check.Require(layer.rotary.base > 1 && std::isfinite(layer.rotary.base),
                    fmt::format("base {} must be > 1", layer.rotary.base));
    layer.output_shape = c.in();
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // y = x*cos + rotate_half(x)*sin: two multiplies and an add per element;
    // the {T, D} cos and sin tables are read once per step. The backward is
    // the inverse rotation, the same work.
    const Shape& in = c.InShape();
    const double tables = 2 * static_cast<double>(in.dims[1] * in.dims[2]);
    AddSample(cost.forward, 3 * c.in, c.in, c.out);
    AddStep(cost.forward, tables, 0);
    if (c.input_grad) {
      AddSample(cost.backward_data, 3 * c.in, c.out, c.in);
      AddStep(cost.backward_data, tables, 0);
    }
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.rotary.base = j.Number("base", layer.rotary.base);
  };
  r.write_json = [](const Layer& layer, json& out) { out["base"] = layer.rotary.base; };
  return r;
}

KindRules SelectTokenRules() {
  KindRules r{LayerKind::kSelectToken, "select_token"};
  r.host_ranks = {2};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {2}, "a sequence {T, F}");
    const int64_t index = layer.tokens.index;
    c.check.Require(index >= 0 && index < c.in().dims.front(),
                    fmt::format("index {} is not a row of the {} input", index, c.in().ToString()));
    layer.output_shape = Shape::Vector(c.in().dims.back());
  };
  // Copies one row; backward writes dy into it and zeros elsewhere.
  r.cost = [](const CostContext& c, LayerCost& cost) {
    AddSample(cost.forward, 0, c.out, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 0, c.out, c.in);
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.tokens.index = j.Integer("index", 0, 0, kMaxElements);
  };
  r.write_json = [](const Layer& layer, json& out) { out["index"] = layer.tokens.index; };
  return r;
}

KindRules GatherTokensRules() {
  KindRules r{LayerKind::kGatherTokens, "gather_tokens"};
  r.host_ranks = {2};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {2}, "a sequence {T, F}");
    const int64_t count = layer.tokens.count;
    c.check.Require(
        count >= 1 && count <= c.in().dims.front(),
        fmt::format("count {} must be from 1 to the {} tokens", count, c.in().dims.front()));
    layer.output_shape = Shape({count, c.in().dims.back()});
  };
  // Copies `count` rows (and reads their positions); backward scatters dy
  // into them, zeros elsewhere.
  r.cost = [](const CostContext& c, LayerCost& cost) {
    const double count = static_cast<double>(c.layer.tokens.count);
    AddSample(cost.forward, 0, c.out + count, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 0, c.out + count, c.in);
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.tokens.count = j.RequiredInteger("count", 1, kMaxElements);
  };
  r.write_json = [](const Layer& layer, json& out) { out["count"] = layer.tokens.count; };
  return r;
}

}  // namespace

std::vector<KindRules> AttentionKinds() {
  return {
      SplitHeadsRules(), MergeHeadsRules(),  BatchedMatmulRules(), SoftmaxRules(),
      RotaryRules(),     SelectTokenRules(), GatherTokensRules(),
  };
}

}  // namespace fitspeed::kinds
