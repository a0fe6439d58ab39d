// Image kinds: conv2d, avg_pool, max_pool, global_avg_pool, lrn and
// image_to_sequence.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kind.h"

namespace fitspeed::kinds {

namespace {

// One window dimension: resolves "same"/"valid" padding into the two pads and
// returns the output size (TensorFlow's padding rule for "same",
// tensorflow/python/ops/nn_ops.py; floor division as torch.nn.Conv2d).
int64_t WindowOutput(int64_t in, int kernel, int stride, Padding padding, int& pad_lo,
                     int& pad_hi) {
  if (padding == Padding::kValid) {
    pad_lo = pad_hi = 0;
  } else if (padding == Padding::kSame) {
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + kernel - in, 0);
    pad_lo = static_cast<int>(total / 2);
    pad_hi = static_cast<int>(total - total / 2);
  }
  const int64_t span = in + pad_lo + pad_hi - kernel;
  if (span < 0) return 0;
  return span / stride + 1;
}

void CheckWindow(const LayerChecker& check, const Window2d& w) {
  check.Require(std::max({w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.pad_top, w.pad_bottom,
                          w.pad_left, w.pad_right}) <= kMaxWindow,
                fmt::format("kernel, stride and padding must be at most {}", kMaxWindow));
  check.Require(w.kernel_h >= 1 && w.kernel_w >= 1,
                fmt::format("kernel {}x{} must be at least 1x1", w.kernel_h, w.kernel_w));
  check.Require(w.stride_h >= 1 && w.stride_w >= 1,
                fmt::format("stride {}x{} must be at least 1x1", w.stride_h, w.stride_w));
  if (w.padding == Padding::kExplicit) {
    check.Require(w.pad_top >= 0 && w.pad_bottom >= 0 && w.pad_left >= 0 && w.pad_right >= 0,
                  fmt::format("padding ({}, {}, {}, {}) must not be negative", w.pad_top,
                              w.pad_left, w.pad_bottom, w.pad_right));
  }
}

// Applies the window to a {C, H, W} shape; resolves the padding in `w`.
Shape WindowShape(const LayerChecker& check, const Shape& in, int64_t out_channels, Window2d& w) {
  const int64_t h =
      WindowOutput(in.height(), w.kernel_h, w.stride_h, w.padding, w.pad_top, w.pad_bottom);
  const int64_t wd =
      WindowOutput(in.width(), w.kernel_w, w.stride_w, w.padding, w.pad_left, w.pad_right);
  w.padding = Padding::kExplicit;
  check.Require(h >= 1 && wd >= 1,
                fmt::format("a {}x{} window with padding ({}, {}, {}, {}) does not fit the "
                            "{} input",
                            w.kernel_h, w.kernel_w, w.pad_top, w.pad_left, w.pad_bottom,
                            w.pad_right, in.ToString()));
  return Shape::Chw(out_channels, h, wd);
}

// "kernel", "stride" and "padding" of a conv2d or pooling layer.
Window2d ReadWindow(ObjectReader& r, bool stride_defaults_to_kernel) {
  Window2d w;
  if (!r.Has("kernel")) r.Fail("kernel", "missing");
  const std::vector<int64_t> kernel = r.IntegerList("kernel", {2}, 1, kMaxInt);
  w.kernel_h = static_cast<int>(kernel.front());
  w.kernel_w = static_cast<int>(kernel.back());
  if (r.Has("stride")) {
    const std::vector<int64_t> stride = r.IntegerList("stride", {2}, 1, kMaxInt);
    w.stride_h = static_cast<int>(stride.front());
    w.stride_w = static_cast<int>(stride.back());
  } else if (stride_defaults_to_kernel) {
    w.stride_h = w.kernel_h;
    w.stride_w = w.kernel_w;
  }
  w.padding = Padding::kValid;
  if (r.Has("padding")) {
    const json& p = r.Get("padding");
    if (p.is_string()) {
      const std::string mode = p.get<std::string>();
      if (mode == "same") {
        w.padding = Padding::kSame;
      } else if (mode != "valid") {
        r.Fail("padding", fmt::format("expected \"same\", \"valid\" or pixels, got {}",
                                      ObjectReader::Excerpt(p)));
      }
    } else {
      // p, [vertical, horizontal] or [top, bottom, left, right].
      const std::vector<int64_t> pad = r.IntegerList("padding", {2, 4}, 0, kMaxInt);
      w.padding = Padding::kExplicit;
      if (pad.size() == 4) {
        w.pad_top = static_cast<int>(pad[0]);
        w.pad_bottom = static_cast<int>(pad[1]);
        w.pad_left = static_cast<int>(pad[2]);
        w.pad_right = static_cast<int>(pad[3]);
      } else {
        w.pad_top = w.pad_bottom = static_cast<int>(pad.front());
        w.pad_left = w.pad_right = static_cast<int>(pad.back());
      }
    }
  }
  return w;
}

void WindowJson(const Window2d& w, json& out) {
  out["kernel"] = {w.kernel_h, w.kernel_w};
  out["stride"] = {w.stride_h, w.stride_w};
  switch (w.padding) {
    case Padding::kSame:
      out["padding"] = "same";
      break;
    case Padding::kValid:
      out["padding"] = "valid";
      break;
    case Padding::kExplicit:
      out["padding"] = {w.pad_top, w.pad_bottom, w.pad_left, w.pad_right};
      break;
  }
}

// The shape rule of avg_pool and max_pool.
void PoolShape(const ShapeContext& c, Layer& layer) {
  c.check.RequireRank(c.in(), {3}, "an image {C, H, W}");
  Window2d& w = layer.pool.window;
  CheckWindow(c.check, w);
  layer.output_shape = WindowShape(c.check, c.in(), c.in().channels(), w);
  // A window entirely in the padding would average or maximise nothing.
  c.check.Require(w.pad_top < w.kernel_h && w.pad_bottom < w.kernel_h && w.pad_left < w.kernel_w &&
                      w.pad_right < w.kernel_w,
                  "padding must be smaller than the window");
}

double WindowElements(const Layer& layer) {
  return static_cast<double>(layer.pool.window.kernel_h) * layer.pool.window.kernel_w;
}

KindRules Conv2dRules() {
  KindRules r{LayerKind::kConv2d, "conv2d"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& in = c.in();
    c.check.RequireRank(in, {3}, "an image {C, H, W}");
    Conv2dAttrs& a = layer.conv;
    c.check.Require(a.out_channels >= 1 && a.out_channels <= kMaxElements,
                    fmt::format("out_channels {} must be >= 1", a.out_channels));
    c.check.Require(a.groups >= 1, fmt::format("groups {} must be >= 1", a.groups));
    c.check.Require(in.channels() % a.groups == 0 && a.out_channels % a.groups == 0,
                    fmt::format("groups {} must divide the input channels {} and the output "
                                "channels {}",
                                a.groups, in.channels(), a.out_channels));
    CheckWindow(c.check, a.window);
    layer.output_shape = WindowShape(c.check, in, a.out_channels, a.window);
    const Shape kernel(
        {a.out_channels, in.channels() / a.groups, a.window.kernel_h, a.window.kernel_w});
    c.check.Require(ProductInRange(kernel.dims), "kernel has more than 2^40 elements");
    layer.params.push_back({"kernel", kernel, true});
    if (a.bias) layer.params.push_back({"bias", Shape::Vector(a.out_channels), true});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Multiply-adds per sample: every output element takes one dot product of
    // the fan-in C/groups*kh*kw.
    const double weights = ParamElements(c.layer, "kernel");
    const double bias = ParamElements(c.layer, "bias");
    const double fan_in = weights / static_cast<double>(c.layer.conv.out_channels);
    const double macs = c.out * fan_in;
    const double bias_adds = bias > 0 ? c.out : 0;
    AddSample(cost.forward, 2 * macs + bias_adds, c.in, c.out);
    AddStep(cost.forward, weights + bias, 0);
    if (c.input_grad) {
      AddSample(cost.backward_data, 2 * macs, c.out, c.in);  // dx = W^T dy: the same multiply-adds
      AddStep(cost.backward_data, weights, 0);
    }
    AddSample(cost.backward_weights, 2 * macs + bias_adds, c.in + c.out, 0);  // dW = dy x^T
    AddStep(cost.backward_weights, 0, weights + bias);
  };
  // PyTorch saves a convolution's input for dW = dy x^T.
  r.saved = [](SaveContext& s) { s.KeepInput(); };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.conv.out_channels = j.RequiredInteger("filters", 1, kMaxElements);
    layer.conv.window = ReadWindow(j, false);
    layer.conv.groups = j.Integer("groups", 1, 1, kMaxElements);
    layer.conv.bias = j.Bool("bias", true);
  };
  r.write_json = [](const Layer& layer, json& out) {
    out["filters"] = layer.conv.out_channels;
    WindowJson(layer.conv.window, out);
    out["groups"] = layer.conv.groups;
    out["bias"] = layer.conv.bias;
  };
  return r;
}

KindRules AvgPoolRules() {
  KindRules r{LayerKind::kAvgPool, "avg_pool"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = PoolShape;
  r.cost = [](const CostContext& c, LayerCost& cost) {
    const double window = WindowElements(c.layer);
    AddSample(cost.forward, c.out * (window + 1), c.in, c.out);  // window adds, one scale
    if (c.input_grad) AddSample(cost.backward_data, c.out * (window + 1), c.out, c.in);  // spread
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.pool.window = ReadWindow(j, true);
    layer.pool.count_include_pad = j.Bool("count_include_pad", false);
  };
  r.write_json = [](const Layer& layer, json& out) {
    WindowJson(layer.pool.window, out);
    out["count_include_pad"] = layer.pool.count_include_pad;
  };
  return r;
}

KindRules MaxPoolRules() {
  KindRules r{LayerKind::kMaxPool, "max_pool"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = PoolShape;
  r.cost = [](const CostContext& c, LayerCost& cost) {
    AddSample(cost.forward, c.out * WindowElements(c.layer), c.in, c.out);  // window compares
    // dy goes to the window's maximum, found again from x and y.
    if (c.input_grad) AddSample(cost.backward_data, c.out, c.in + 2 * c.out, c.in);
  };
  // x and y: the maximum found again from both, as cuDNN and TF do (PyTorch
  // keeps x and int64 indices of y's size instead).
  r.saved = [](SaveContext& s) {
    s.KeepInput();
    s.KeepOutput();
  };
  r.read_json = [](ObjectReader& j, Layer& layer) { layer.pool.window = ReadWindow(j, true); };
  r.write_json = [](const Layer& layer, json& out) { WindowJson(layer.pool.window, out); };
  return r;
}

KindRules GlobalAvgPoolRules() {
  KindRules r{LayerKind::kGlobalAvgPool, "global_avg_pool"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {3}, "an image {C, H, W}");
    layer.output_shape = Shape::Vector(c.in().channels());
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    AddSample(cost.forward, c.in + c.out, c.in, c.out);  // sum, then one scale per channel
    if (c.input_grad) AddSample(cost.backward_data, c.in, c.out, c.in);  // dy/(H*W) broadcast
  };
  return r;
}

KindRules LrnRules() {
  KindRules r{LayerKind::kLrn, "lrn"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {3}, "an image {C, H, W}");
    const LrnAttrs& a = layer.lrn;
    c.check.Require(a.size >= 1 && a.size % 2 == 1 && a.size <= kMaxWindow,
                    fmt::format("size {} must be odd, from 1 to {}", a.size, kMaxWindow));
    c.check.RequirePositive(a.alpha, "alpha");
    c.check.RequirePositive(a.beta, "beta");
    c.check.RequirePositive(a.k, "k");
    layer.output_shape = c.in();
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Per element (Krizhevsky et al. 2012, sec. 3.3): square (1), window sum
    // (size - 1), scale by alpha/size and add k (2), power (1), divide (1):
    // size + 4. Backward (Caffe's LRNLayer::CrossChannelBackward): the
    // denominator recomputed with its power (size + 3), dy*y/denominator
    // (2), its window sum (size - 1), dx = dy*d^-beta - 2*alpha*beta/size *
    // x*sum (4): 2*size + 8; reads x, y and dy.
    const double size = static_cast<double>(c.layer.lrn.size);
    AddSample(cost.forward, (size + 4) * c.in, c.in, c.out);
    if (c.input_grad) {
      AddSample(cost.backward_data, (2 * size + 8) * c.in, c.in + 2 * c.out, c.in);
    }
  };
  // Caffe's and cuDNN's backward read x and y.
  r.saved = [](SaveContext& s) {
    s.KeepInput();
    s.KeepOutput();
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.lrn.size = j.Integer("size", layer.lrn.size, 1, kMaxInt);
    layer.lrn.alpha = j.Number("alpha", layer.lrn.alpha);
    layer.lrn.beta = j.Number("beta", layer.lrn.beta);
    layer.lrn.k = j.Number("k", layer.lrn.k);
  };
  r.write_json = [](const Layer& layer, json& out) {
    out["size"] = layer.lrn.size;
    out["alpha"] = layer.lrn.alpha;
    out["beta"] = layer.lrn.beta;
    out["k"] = layer.lrn.k;
  };
  return r;
}

KindRules ImageToSequenceRules() {
  KindRules r{LayerKind::kImageToSequence, "image_to_sequence"};
  r.host_ranks = {3};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    c.check.RequireRank(c.in(), {3}, "an image {C, H, W}");
    layer.output_shape = Shape({c.in().height() * c.in().width(), c.in().channels()});
  };
  // A transpose: every element read and written once, both ways.
  r.cost = [](const CostContext& c, LayerCost& cost) {
    AddSample(cost.forward, 0, c.in, c.out);
    if (c.input_grad) AddSample(cost.backward_data, 0, c.out, c.in);
  };
  return r;
}

}  // namespace

std::vector<KindRules> ImageKinds() {
  return {
      Conv2dRules(),        AvgPoolRules(), MaxPoolRules(),
      GlobalAvgPoolRules(), LrnRules(),     ImageToSequenceRules(),
  };
}

}  // namespace fitspeed::kinds
