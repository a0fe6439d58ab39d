// Elementwise and shape kinds: relu, sigmoid, swish, gelu, tanh, dropout,
// add, mul, concat and flatten.
#include <fmt/format.h>

#include <cmath>

#include "kind.h"

namespace fitspeed::kinds {

namespace {

// The output is the input's shape (any rank).
void SameShape(const ShapeContext& c, Layer& layer) { layer.output_shape = c.in(); }

// A dropout mask element is one byte (PyTorch's bool mask): a quarter of an
// FP32 element, the unit these counts use.
constexpr double kMaskElement = 0.25;

KindRules ReluRules() {
  KindRules r{LayerKind::kRelu, "relu"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.Require(layer.relu.max_value > 0,
                    fmt::format("max_value {} must be > 0", layer.relu.max_value));
    layer.output_shape = c.in();
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    AddSample(cost.forward, c.in, c.in, c.out);  // one max (and one min when capped, not counted)
    if (c.input_grad) AddSample(cost.backward_data, c.in, 2 * c.out, c.in);  // dy where 0 < y < max
  };
  // ReLU(inplace=True) saves its result.
  r.saved = [](SaveContext& s) { s.KeepOutput(); };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.relu.max_value = j.Number("max_value", layer.relu.max_value);
  };
  r.write_json = [](const Layer& layer, json& out) {
    if (std::isfinite(layer.relu.max_value)) out["max_value"] = layer.relu.max_value;
  };
  return r;
}

KindRules SigmoidRules() {
  KindRules r{LayerKind::kSigmoid, "sigmoid"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.shape = SameShape;
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // s = 1/(1 + exp(-x)): exp, add, divide (3). Backward from the output:
    // dx = dy*s*(1 - s): subtract, two multiplies (3), reads s and dy.
    AddSample(cost.forward, 3 * c.in, c.in, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 3 * c.in, 2 * c.out, c.in);
  };
  r.saved = [](SaveContext& s) { s.KeepOutput(); };
  return r;
}

KindRules SwishRules() {
  KindRules r{LayerKind::kSwish, "swish"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.shape = SameShape;
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // y = x*s(x): s (3) and a multiply (4). Backward from the input, s
    // recomputed (3): dx = dy*s*(1 + x*(1 - s)): subtract, multiply, add,
    // multiply, multiply (5): 8; reads x and dy.
    AddSample(cost.forward, 4 * c.in, c.in, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 8 * c.in, 2 * c.out, c.in);
  };
  r.saved = [](SaveContext& s) { s.KeepInput(); };  // s recomputed from x
  return r;
}

KindRules GeluRules() {
  KindRules r{LayerKind::kGelu, "gelu"};
  r.host_ranks = {1, 2, 3};
  // TensorFlow's AMP keeps the tf.pow of the tanh form BERT's code writes in
  // FP32 (deny list); PyTorch autocast runs gelu in FP16.
  r.device = DeviceTraits{/*normalizes_rows=*/false, /*fp32_under_pytorch_amp=*/false,
                          /*fp32_under_tensorflow_amp=*/true};
  r.shape = SameShape;
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // erf form, y = 0.5x(1 + erf(x/sqrt2)): scale, erf, add, two multiplies (5).
    // Backward dx = dy*(Phi(x) + x*phi(x)): Phi again (4), phi = exp(-x^2/2)/sqrt(2pi)
    // (4), x*phi, add, *dy (3): 11.
    // tanh form, u = k(x + 0.044715x^3): x^2, x^3, scale, add, scale (5), tanh,
    // add 1, *x, *0.5 (4): 9. Backward: u and tanh again (6), 0.5(1 + t) (2),
    // 1 - t^2 (2), du/dx = k(1 + 3c x^2) (3), the chain's products (3), add, *dy (2): 18.
    const bool tanh = c.layer.gelu.tanh_approximation;
    AddSample(cost.forward, (tanh ? 9 : 5) * c.in, c.in, c.out);
    if (c.input_grad) AddSample(cost.backward_data, (tanh ? 18 : 11) * c.in, 2 * c.out, c.in);
  };
  r.saved = [](SaveContext& s) { s.KeepInput(); };  // PyTorch's GeluBackward reads x
  r.read_json = [](ObjectReader& j, Layer& layer) {
    const std::string approximate = j.String("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      j.Fail("approximate",
             fmt::format("expected \"none\" (erf) or \"tanh\", got \"{}\"", approximate));
    }
    layer.gelu.tanh_approximation = approximate == "tanh";
  };
  r.write_json = [](const Layer& layer, json& out) {
    out["approximate"] = layer.gelu.tanh_approximation ? "tanh" : "none";
  };
  return r;
}

KindRules TanhRules() {
  KindRules r{LayerKind::kTanh, "tanh"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.shape = SameShape;
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // tanh (1); backward from the output: dx = dy*(1 - y*y) (3).
    AddSample(cost.forward, c.in, c.in, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 3 * c.in, 2 * c.out, c.in);
  };
  r.saved = [](SaveContext& s) { s.KeepOutput(); };
  return r;
}

KindRules DropoutRules() {
  KindRules r{LayerKind::kDropout, "dropout"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const double rate = layer.dropout.rate;
    c.check.Require(rate >= 0 && rate < 1, fmt::format("rate {} must be in [0, 1)", rate));
    layer.output_shape = c.in();
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    if (c.layer.dropout.rate == 0) return;  // the identity: frameworks skip it
    // A random draw, a compare and a scaled multiply (3); the one-byte mask is
    // written beside y. Backward: dx = dy*mask/(1 - rate) (1).
    AddSample(cost.forward, 3 * c.in, c.in, c.out * (1 + kMaskElement));
    if (c.input_grad) {
      AddSample(cost.backward_data, c.in, c.out * (1 + kMaskElement), c.in);
    }
  };
  r.saved = [](SaveContext& s) {
    if (s.layer.dropout.rate > 0) s.extra += kMaskElement * Elements(s.layer.output_shape);
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.dropout.rate = j.Number("rate", layer.dropout.rate);
  };
  r.write_json = [](const Layer& layer, json& out) { out["rate"] = layer.dropout.rate; };
  return r;
}

KindRules AddRules() {
  KindRules r{LayerKind::kAdd, "add"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.min_inputs = 2;
  r.max_inputs = kAnyCount;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    for (size_t k = 1; k < c.inputs.size(); ++k) {
      c.check.Require(
          c.in(k) == c.in(),
          fmt::format("shape mismatch: input '{}' is {} but input '{}' is {}", layer.inputs.front(),
                      c.in().ToString(), layer.inputs[k], c.in(k).ToString()));
    }
    layer.output_shape = c.in();
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    const double n = static_cast<double>(c.layer.input_ids.size());
    AddSample(cost.forward, (n - 1) * c.out, n * c.out, c.out);
    // Backward: each input's gradient is dy itself (shared, no work).
  };
  return r;
}

KindRules MulRules() {
  KindRules r{LayerKind::kMul, "mul"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.min_inputs = r.max_inputs = 2;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& in = c.in();
    const Shape& scale = c.in(1);
    const bool broadcast = in.rank() == 3 && scale == Shape::Vector(in.channels());
    c.check.Require(scale == in || broadcast,
                    fmt::format("shape mismatch: input '{}' is {}, so input '{}' must be {} "
                                "or {} channel scales, but is {}",
                                layer.inputs[0], in.ToString(), layer.inputs[1], in.ToString(),
                                in.dims.front(), scale.ToString()));
    layer.output_shape = in;
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // y = a*b (b broadcast): one multiply per output element.
    const double b = c.InElements(1);
    AddSample(cost.forward, c.out, c.in + b, c.out);
    // da = dy*b: a multiply per element, reads dy and b.
    if (c.GradTo(0)) AddSample(cost.backward_data, c.out, c.out + b, c.in);
    // db = dy*a, summed over H*W when broadcast: a multiply-add per element.
    if (c.GradTo(1)) AddSample(cost.backward_data, b == c.out ? c.out : 2 * c.out, 2 * c.out, b);
  };
  // a if b needs a gradient, b if a needs one.
  r.saved = [](SaveContext& s) {
    if (s.grads[static_cast<size_t>(s.input(1))]) s.KeepInput(0);
    if (s.grads[static_cast<size_t>(s.input(0))]) s.KeepInput(1);
  };
  return r;
}

KindRules ConcatRules() {
  KindRules r{LayerKind::kConcat, "concat"};
  r.host_ranks = {1, 3};
  r.device = kNoDeviceTraits;
  r.min_inputs = 2;
  r.max_inputs = kAnyCount;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& in = c.in();
    c.check.RequireRank(in, {1, 3}, "features {F} or an image {C, H, W}");
    layer.output_shape = in;
    for (size_t k = 1; k < c.inputs.size(); ++k) {
      const Shape& other = c.in(k);
      bool same_rest = other.rank() == in.rank();
      for (int d = 1; same_rest && d < in.rank(); ++d) {
        same_rest = other.dims[static_cast<size_t>(d)] == in.dims[static_cast<size_t>(d)];
      }
      c.check.Require(
          same_rest,
          fmt::format("shape mismatch: input '{}' is {} but input '{}' is {}; "
                      "only the first (channel) dimension may differ",
                      layer.inputs.front(), in.ToString(), layer.inputs[k], other.ToString()));
      layer.output_shape.dims.front() += other.dims.front();
      c.check.Require(layer.output_shape.dims.front() <= kMaxElements,
                      "concatenation has more than 2^40 channels");
    }
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Copies: every input read once, the output written once; backward
    // splits dy into the parts of the inputs that need a gradient.
    AddSample(cost.forward, 0, c.out, c.out);
    for (size_t k = 0; k < c.layer.input_ids.size(); ++k) {
      if (c.GradTo(k)) AddSample(cost.backward_data, 0, c.InElements(k), c.InElements(k));
    }
  };
  return r;
}

KindRules FlattenRules() {
  KindRules r{LayerKind::kFlatten, "flatten"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.view = true;  // no data moves in either direction
  r.shape = [](const ShapeContext& c, Layer& layer) {
    layer.output_shape = Shape::Vector(c.in().elements());
  };
  return r;
}

}  // namespace

std::vector<KindRules> ElementwiseKinds() {
  return {
      ReluRules(),    SigmoidRules(), SwishRules(), GeluRules(),   TanhRules(),
      DropoutRules(), AddRules(),     MulRules(),   ConcatRules(), FlattenRules(),
  };
}

}  // namespace fitspeed::kinds
