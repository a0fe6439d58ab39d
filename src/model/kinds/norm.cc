// Normalization kinds: batch_norm, layer_norm and rms_norm.
#include <fmt/format.h>

#include "kind.h"

namespace fitspeed::kinds {

namespace {

// Per-step traffic and the gradient of a norm over the last dimension: the
// parameters are read in each pass and their gradients (summed over the batch
// and the rows) written once.
void LastDimNormParams(const CostContext& c, LayerCost& cost) {
  const double params = static_cast<double>(c.layer.TrainableParamCount());
  AddStep(cost.forward, params, 0);
  if (c.input_grad) AddStep(cost.backward_data, params, 0);
  if (params > 0) AddStep(cost.backward_weights, 0, params);
}

void NormJsonRead(ObjectReader& j, Layer& layer) {
  layer.norm.epsilon = j.Number("epsilon", layer.norm.epsilon);
  layer.norm.scale = j.Bool("scale", true);
  if (layer.kind == LayerKind::kLayerNorm) layer.norm.center = j.Bool("center", true);
}

void NormJsonWrite(const Layer& layer, json& out) {
  out["epsilon"] = layer.norm.epsilon;
  out["scale"] = layer.norm.scale;
  if (layer.kind == LayerKind::kLayerNorm) out["center"] = layer.norm.center;
}

KindRules BatchNormRules() {
  KindRules r{LayerKind::kBatchNorm, "batch_norm"};
  r.host_ranks = {1, 3};
  // Element-wise on a device: its statistics reduce over the batch and the
  // pixels of a channel, not along rows, and no sweep of it was found
  // (docs/validation.md, "Memory-bound kernels").
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {1, 3}, "features {F} or an image {C, H, W}");
    const BatchNormAttrs& a = layer.batch_norm;
    c.check.RequirePositive(a.epsilon, "epsilon");
    c.check.Require(a.momentum >= 0 && a.momentum <= 1,
                    fmt::format("momentum {} must be in [0, 1]", a.momentum));
    layer.output_shape = c.in();
    const Shape channels = Shape::Vector(c.in().dims.front());
    if (a.scale) layer.params.push_back({"gamma", channels, true});
    if (a.center) layer.params.push_back({"beta", channels, true});
    layer.params.push_back({"moving_mean", channels, false});
    layer.params.push_back({"moving_variance", channels, false});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    const double in = c.in;
    const double channels = static_cast<double>(c.InShape().dims.front());
    const double params = static_cast<double>(c.layer.ParamCount());
    const double trainable = static_cast<double>(c.layer.TrainableParamCount());
    // Forward (training): sum x (1) and sum x*x (2) per element, then
    // y = a*x + c with per-channel a = gamma/sqrt(var + eps), c = beta - a*mean (2).
    AddSample(cost.forward, 5 * in, 2 * in, c.out);
    AddStep(cost.forward, params, 2 * channels);  // moving statistics updated
    // Backward (Ioffe & Szegedy 2015, sec. 3): the sums sum(dy) (1) and
    // sum(dy*xhat) with xhat recomputed (4) give dbeta and dgamma; then
    // dx = a*(dy - sum(dy)/m - xhat*sum(dy*xhat)/m) with xhat recomputed: 6 per element.
    PassCost& sums = trainable > 0 ? cost.backward_weights : cost.backward_data;
    if (trainable > 0 || c.input_grad) {
      AddSample(sums, 5 * in, 2 * in, 0);
      if (trainable > 0) AddStep(cost.backward_weights, 0, trainable);
    }
    if (c.input_grad) {
      AddSample(cost.backward_data, 6 * in, 2 * in, in);
      AddStep(cost.backward_data, params, 0);
    }
  };
  // PyTorch saves x with the batch mean and inverse std (those 2*C per step
  // are not counted).
  r.saved = [](SaveContext& s) { s.KeepInput(); };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.batch_norm.epsilon = j.Number("epsilon", layer.batch_norm.epsilon);
    layer.batch_norm.momentum = j.Number("momentum", layer.batch_norm.momentum);
    layer.batch_norm.scale = j.Bool("scale", true);
    layer.batch_norm.center = j.Bool("center", true);
  };
  r.write_json = [](const Layer& layer, json& out) {
    out["epsilon"] = layer.batch_norm.epsilon;
    out["momentum"] = layer.batch_norm.momentum;
    out["scale"] = layer.batch_norm.scale;
    out["center"] = layer.batch_norm.center;
  };
  return r;
}

KindRules LayerNormRules() {
  KindRules r{LayerKind::kLayerNorm, "layer_norm"};
  r.host_ranks = {1, 2, 3};
  // A row reduction; PyTorch autocast keeps layer_norm in FP32, TensorFlow's
  // AMP its Mean.
  r.device = DeviceTraits{/*normalizes_rows=*/true, /*fp32_under_pytorch_amp=*/true,
                          /*fp32_under_tensorflow_amp=*/true};
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.Require(c.in().rank() >= 1, "needs an input of rank >= 1");
    c.check.RequirePositive(layer.norm.epsilon, "epsilon");
    layer.output_shape = c.in();
    const Shape features = Shape::Vector(c.in().dims.back());
    if (layer.norm.scale) layer.params.push_back({"gamma", features, true});
    if (layer.norm.center) layer.params.push_back({"beta", features, true});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Per element, a row held in cache (x read once): sum x (1), sum x*x (2),
    // xhat = (x - mean)*rstd (2), *gamma (1), +beta (1).
    const double affine = (c.layer.norm.scale ? 1 : 0) + (c.layer.norm.center ? 1 : 0);
    AddSample(cost.forward, (5 + affine) * c.in, c.in, c.out);
    // Backward (Ba et al. 2016): xhat recomputed (2), g = dy*gamma (1), the row
    // sums of g and g*xhat (3), dx = rstd*(g - mean(g) - xhat*mean(g*xhat)) (4):
    // 10 per element; dgamma = sum dy*xhat (xhat recomputed: 4), dbeta = sum dy (1).
    if (c.input_grad) AddSample(cost.backward_data, 10 * c.in, 2 * c.in, c.in);
    if (affine > 0) {
      AddSample(cost.backward_weights, (c.layer.norm.scale ? 4 : 0) * c.in + c.in, 2 * c.in, 0);
    }
    LastDimNormParams(c, cost);
  };
  r.saved = [](SaveContext& s) { s.KeepInput(); };  // x (and per-row mean, rstd: not counted)
  r.read_json = NormJsonRead;
  r.write_json = NormJsonWrite;
  return r;
}

KindRules RmsNormRules() {
  KindRules r{LayerKind::kRmsNorm, "rms_norm"};
  r.host_ranks = {1, 2, 3};
  // A row reduction; computed in FP32 as Hugging Face writes RMSNorm, and
  // TensorFlow's AMP keeps its Mean in FP32.
  r.device = DeviceTraits{/*normalizes_rows=*/true, /*fp32_under_pytorch_amp=*/true,
                          /*fp32_under_tensorflow_amp=*/true};
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.Require(c.in().rank() >= 1, "needs an input of rank >= 1");
    c.check.RequirePositive(layer.norm.epsilon, "epsilon");
    layer.output_shape = c.in();
    if (layer.norm.scale) {
      layer.params.push_back({"gamma", Shape::Vector(c.in().dims.back()), true});
    }
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Per element: sum x*x (2), x*rstd (1), *gamma (1).
    const bool scale = c.layer.norm.scale;
    AddSample(cost.forward, (scale ? 4 : 3) * c.in, c.in, c.out);
    // Backward (Zhang & Sennrich 2019): g = dy*gamma (1), sum g*x (2),
    // dx = rstd*g - x*rstd^3*sum/F (3): 6; dgamma = sum dy*x*rstd (3).
    if (c.input_grad) AddSample(cost.backward_data, 6 * c.in, 2 * c.in, c.in);
    if (scale) AddSample(cost.backward_weights, 3 * c.in, 2 * c.in, 0);
    LastDimNormParams(c, cost);
  };
  r.saved = [](SaveContext& s) { s.KeepInput(); };
  r.read_json = NormJsonRead;
  r.write_json = NormJsonWrite;
  return r;
}

}  // namespace

std::vector<KindRules> NormKinds() { return {BatchNormRules(), LayerNormRules(), RmsNormRules()}; }

}  // namespace fitspeed::kinds
