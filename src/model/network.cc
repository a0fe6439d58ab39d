#include "fitspeed/model/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

struct KindName {
  LayerKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {LayerKind::kInput, "input"},
    {LayerKind::kConv2d, "conv2d"},
    {LayerKind::kDense, "dense"},
    {LayerKind::kBatchNorm, "batch_norm"},
    {LayerKind::kRelu, "relu"},
    {LayerKind::kAvgPool, "avg_pool"},
    {LayerKind::kMaxPool, "max_pool"},
    {LayerKind::kGlobalAvgPool, "global_avg_pool"},
    {LayerKind::kAdd, "add"},
    {LayerKind::kFlatten, "flatten"},
    {LayerKind::kSoftmaxCrossEntropy, "softmax_cross_entropy"},
    {LayerKind::kSigmoid, "sigmoid"},
    {LayerKind::kSwish, "swish"},
    {LayerKind::kMul, "mul"},
    {LayerKind::kConcat, "concat"},
    {LayerKind::kLrn, "lrn"},
};

// Largest dimension or element count accepted: keeps every count exact in a
// double and every product of two dimensions inside int64_t.
constexpr int64_t kMaxElements = int64_t{1} << 40;

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

// How errors name a layer: layers[3] "conv1".
std::string LayerField(int id, const std::string& name) {
  return fmt::format("layers[{}] \"{}\"", id, name);
}

// Errors of one layer, formatted as DataError(origin, line, LayerField(), ...).
class LayerChecker {
 public:
  LayerChecker(const std::string& origin, int id, const Layer& layer)
      : origin_(origin), line_(layer.origin_line), field_(LayerField(id, layer.name)) {}

  [[noreturn]] void Fail(const std::string& problem) const {
    throw DataError(origin_, line_, field_, problem);
  }
  void Require(bool ok, const std::string& problem) const {
    if (!ok) Fail(problem);
  }

 private:
  std::string origin_;
  int line_;
  std::string field_;
};

// Largest kernel, stride or padding accepted (keeps window arithmetic inside int64_t).
constexpr int kMaxWindow = 1 << 16;

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

void RequireRank(const LayerChecker& check, const Shape& in, std::vector<int> ranks,
                 const char* what) {
  if (std::find(ranks.begin(), ranks.end(), in.rank()) == ranks.end()) {
    check.Fail(fmt::format("input shape {} is not {}", in.ToString(), what));
  }
}

// Every factor >= 1 and the product at most kMaxElements (checked without overflow).
bool ProductInRange(const std::vector<int64_t>& factors) {
  int64_t n = 1;
  for (int64_t d : factors) {
    if (d < 1 || d > kMaxElements / n) return false;
    n *= d;
  }
  return true;
}
bool ElementsInRange(const Shape& shape) { return ProductInRange(shape.dims); }

std::string DefaultName(LayerKind kind, size_t index) {
  return fmt::format("{}_{}", LayerKindName(kind), index);
}

}  // namespace

int64_t Shape::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Shape::ToString() const {
  if (dims.empty()) return "scalar";
  return fmt::format("{}", fmt::join(dims, "x"));
}

const char* LayerKindName(LayerKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

std::optional<LayerKind> LayerKindFromName(const std::string& name) {
  for (const KindName& k : kKindNames) {
    if (name == k.name) return k.kind;
  }
  return std::nullopt;
}

Window2d MakeWindow(int kernel, int stride, int padding) {
  Window2d w;
  w.kernel_h = w.kernel_w = kernel;
  w.stride_h = w.stride_w = stride;
  w.padding = Padding::kExplicit;
  w.pad_top = w.pad_bottom = w.pad_left = w.pad_right = padding;
  return w;
}

Window2d SameWindow(int kernel, int stride) {
  Window2d w = MakeWindow(kernel, stride, 0);
  w.padding = Padding::kSame;
  return w;
}

int64_t Layer::ParamCount() const {
  int64_t n = 0;
  for (const ParamTensor& p : params) n += p.shape.elements();
  return n;
}

int64_t Layer::TrainableParamCount() const {
  int64_t n = 0;
  for (const ParamTensor& p : params) {
    if (p.trainable) n += p.shape.elements();
  }
  return n;
}

Network::Network(std::string network_name, Shape input_shape) : name(std::move(network_name)) {
  Layer input;
  input.name = "input";
  input.kind = LayerKind::kInput;
  input.output_shape = std::move(input_shape);
  layers_.push_back(std::move(input));
}

const std::string& Network::Append(Layer layer) {
  if (layer.name.empty()) layer.name = DefaultName(layer.kind, layers_.size());
  layers_.push_back(std::move(layer));
  finalized_ = false;
  return layers_.back().name;
}

namespace {
Layer Unary(LayerKind kind, const std::string& input, const std::string& name) {
  Layer layer;
  layer.kind = kind;
  layer.name = name;
  layer.inputs = {input};
  return layer;
}
}  // namespace

std::string Network::Conv2d(const std::string& input, const Conv2dAttrs& attrs,
                            const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kConv2d, input, layer_name);
  layer.conv = attrs;
  return Append(std::move(layer));
}

std::string Network::Dense(const std::string& input, const DenseAttrs& attrs,
                           const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kDense, input, layer_name);
  layer.dense = attrs;
  return Append(std::move(layer));
}

std::string Network::BatchNorm(const std::string& input, const BatchNormAttrs& attrs,
                               const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kBatchNorm, input, layer_name);
  layer.batch_norm = attrs;
  return Append(std::move(layer));
}

std::string Network::Relu(const std::string& input, const ReluAttrs& attrs,
                          const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kRelu, input, layer_name);
  layer.relu = attrs;
  return Append(std::move(layer));
}

std::string Network::AvgPool(const std::string& input, const PoolAttrs& attrs,
                             const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kAvgPool, input, layer_name);
  layer.pool = attrs;
  return Append(std::move(layer));
}

std::string Network::MaxPool(const std::string& input, const PoolAttrs& attrs,
                             const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kMaxPool, input, layer_name);
  layer.pool = attrs;
  return Append(std::move(layer));
}

std::string Network::GlobalAvgPool(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kGlobalAvgPool, input, layer_name));
}

std::string Network::Add(const std::vector<std::string>& inputs, const std::string& layer_name) {
  Layer layer;
  layer.kind = LayerKind::kAdd;
  layer.name = layer_name;
  layer.inputs = inputs;
  return Append(std::move(layer));
}

std::string Network::Flatten(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kFlatten, input, layer_name));
}

std::string Network::SoftmaxCrossEntropy(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kSoftmaxCrossEntropy, input, layer_name));
}

std::string Network::Sigmoid(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kSigmoid, input, layer_name));
}

std::string Network::Swish(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kSwish, input, layer_name));
}

std::string Network::Mul(const std::string& input, const std::string& scale,
                         const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kMul, input, layer_name);
  layer.inputs.push_back(scale);
  return Append(std::move(layer));
}

std::string Network::Concat(const std::vector<std::string>& inputs, const std::string& layer_name) {
  Layer layer;
  layer.kind = LayerKind::kConcat;
  layer.name = layer_name;
  layer.inputs = inputs;
  return Append(std::move(layer));
}

std::string Network::Lrn(const std::string& input, const LrnAttrs& attrs,
                         const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kLrn, input, layer_name);
  layer.lrn = attrs;
  return Append(std::move(layer));
}

int Network::LayerId(const std::string& layer_name) const {
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i].name == layer_name) return static_cast<int>(i);
  }
  return -1;
}

void Network::RequireFinalized() const {
  FITSPEED_CHECK(finalized_, "network '" + name + "' used before Finalize()");
}

const Shape& Network::input_shape() const {
  RequireFinalized();
  return layers_.front().output_shape;
}

int64_t Network::num_classes() const {
  RequireFinalized();
  const Layer& loss = layers_.back();
  return layers_[static_cast<size_t>(loss.input_ids.front())].output_shape.dims.back();
}

int64_t Network::ParamCount() const {
  RequireFinalized();
  int64_t n = 0;
  for (const Layer& layer : layers_) n += layer.ParamCount();
  return n;
}

int64_t Network::TrainableParamCount() const {
  RequireFinalized();
  int64_t n = 0;
  for (const Layer& layer : layers_) n += layer.TrainableParamCount();
  return n;
}

void Network::Finalize() {
  const std::string source = origin.empty() ? fmt::format("network '{}'", name) : origin;
  if (layers_.empty() || layers_.front().kind != LayerKind::kInput) {
    throw DataError(source, 0, "layers[0]", "the first layer must be the input");
  }
  std::map<std::string, int> ids;
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = layers_[i];
    const int id = static_cast<int>(i);
    const LayerChecker check(source, id, layer);
    check.Require(!layer.name.empty(), "empty name");
    const auto [named, is_new] = ids.emplace(layer.name, id);
    check.Require(is_new,
                  fmt::format("duplicate name: layers[{}] has the same name", named->second));
    layer.consumer_ids.clear();
    layer.params.clear();

    // Operands.
    if (layer.kind == LayerKind::kInput) {
      check.Require(id == 0, "only the first layer may be an input");
      check.Require(layer.inputs.empty(), "an input layer reads no layer");
      check.Require(layer.output_shape.rank() >= 1 && ElementsInRange(layer.output_shape),
                    fmt::format("input shape {} needs dimensions >= 1 and at most 2^40 elements",
                                layer.output_shape.ToString()));
      layer.input_ids.clear();
      continue;
    }
    if (layer.kind == LayerKind::kAdd || layer.kind == LayerKind::kConcat) {
      check.Require(layer.inputs.size() >= 2,
                    fmt::format("{} needs two or more inputs, has {}", LayerKindName(layer.kind),
                                layer.inputs.size()));
    } else if (layer.kind == LayerKind::kMul) {
      check.Require(layer.inputs.size() == 2,
                    fmt::format("mul needs exactly two inputs, has {}", layer.inputs.size()));
    } else {
      check.Require(layer.inputs.size() == 1,
                    fmt::format("{} needs exactly one input, has {}", LayerKindName(layer.kind),
                                layer.inputs.size()));
    }
    layer.input_ids.clear();
    for (const std::string& input : layer.inputs) {
      const auto found = ids.find(input);
      check.Require(input != layer.name, "a layer cannot read its own output");
      if (found == ids.end()) {
        const bool later = LayerId(input) > id;
        check.Fail(later ? fmt::format("input '{}' is defined after this layer", input)
                         : fmt::format("unknown input '{}'", input));
      }
      const Layer& producer = layers_[static_cast<size_t>(found->second)];
      check.Require(producer.kind != LayerKind::kSoftmaxCrossEntropy,
                    fmt::format("input '{}' is a loss; nothing may read a loss", input));
      layer.input_ids.push_back(found->second);
    }
    const Shape& in = layers_[static_cast<size_t>(layer.input_ids.front())].output_shape;

    // Attributes, output shape and parameters.
    switch (layer.kind) {
      case LayerKind::kInput:
        break;
      case LayerKind::kConv2d: {
        RequireRank(check, in, {3}, "an image {C, H, W}");
        Conv2dAttrs& a = layer.conv;
        check.Require(a.out_channels >= 1 && a.out_channels <= kMaxElements,
                      fmt::format("out_channels {} must be >= 1", a.out_channels));
        check.Require(a.groups >= 1, fmt::format("groups {} must be >= 1", a.groups));
        check.Require(in.channels() % a.groups == 0 && a.out_channels % a.groups == 0,
                      fmt::format("groups {} must divide the input channels {} and the output "
                                  "channels {}",
                                  a.groups, in.channels(), a.out_channels));
        CheckWindow(check, a.window);
        layer.output_shape = WindowShape(check, in, a.out_channels, a.window);
        check.Require(ProductInRange({a.out_channels, in.channels() / a.groups, a.window.kernel_h,
                                      a.window.kernel_w}),
                      "kernel has more than 2^40 elements");
        layer.params.push_back({"kernel",
                                Shape({a.out_channels, in.channels() / a.groups, a.window.kernel_h,
                                       a.window.kernel_w}),
                                true});
        if (a.bias) layer.params.push_back({"bias", Shape::Vector(a.out_channels), true});
        break;
      }
      case LayerKind::kDense: {
        RequireRank(check, in, {1, 2}, "features {F} or rows of features {T, F} (flatten first)");
        const DenseAttrs& a = layer.dense;
        check.Require(a.units >= 1 && a.units <= kMaxElements,
                      fmt::format("units {} must be >= 1", a.units));
        check.Require(ProductInRange({a.units, in.dims.back()}),
                      "kernel has more than 2^40 elements");
        layer.output_shape = in;
        layer.output_shape.dims.back() = a.units;
        layer.params.push_back({"kernel", Shape({a.units, in.dims.back()}), true});
        if (a.bias) layer.params.push_back({"bias", Shape::Vector(a.units), true});
        break;
      }
      case LayerKind::kBatchNorm: {
        RequireRank(check, in, {1, 3}, "features {F} or an image {C, H, W}");
        const BatchNormAttrs& a = layer.batch_norm;
        check.Require(a.epsilon > 0 && std::isfinite(a.epsilon),
                      fmt::format("epsilon {} must be > 0", a.epsilon));
        check.Require(a.momentum >= 0 && a.momentum <= 1,
                      fmt::format("momentum {} must be in [0, 1]", a.momentum));
        layer.output_shape = in;
        const Shape channels = Shape::Vector(in.dims.front());
        if (a.scale) layer.params.push_back({"gamma", channels, true});
        if (a.center) layer.params.push_back({"beta", channels, true});
        layer.params.push_back({"moving_mean", channels, false});
        layer.params.push_back({"moving_variance", channels, false});
        break;
      }
      case LayerKind::kRelu:
        check.Require(layer.relu.max_value > 0,
                      fmt::format("max_value {} must be > 0", layer.relu.max_value));
        layer.output_shape = in;
        break;
      case LayerKind::kAvgPool:
      case LayerKind::kMaxPool: {
        RequireRank(check, in, {3}, "an image {C, H, W}");
        Window2d& w = layer.pool.window;
        CheckWindow(check, w);
        layer.output_shape = WindowShape(check, in, in.channels(), w);
        // A window entirely in the padding would average or maximise nothing.
        check.Require(w.pad_top < w.kernel_h && w.pad_bottom < w.kernel_h &&
                          w.pad_left < w.kernel_w && w.pad_right < w.kernel_w,
                      "padding must be smaller than the window");
        break;
      }
      case LayerKind::kGlobalAvgPool:
        RequireRank(check, in, {3}, "an image {C, H, W}");
        layer.output_shape = Shape::Vector(in.channels());
        break;
      case LayerKind::kAdd:
        for (size_t k = 1; k < layer.input_ids.size(); ++k) {
          const Shape& other = layers_[static_cast<size_t>(layer.input_ids[k])].output_shape;
          check.Require(other == in, fmt::format("shape mismatch: input '{}' is {} but input "
                                                 "'{}' is {}",
                                                 layer.inputs.front(), in.ToString(),
                                                 layer.inputs[k], other.ToString()));
        }
        layer.output_shape = in;
        break;
      case LayerKind::kFlatten:
        layer.output_shape = Shape::Vector(in.elements());
        break;
      case LayerKind::kSoftmaxCrossEntropy:
        RequireRank(check, in, {1, 2}, "class scores {classes} or {T, classes}");
        check.Require(in.dims.back() >= 2,
                      fmt::format("needs at least 2 classes, input has {}", in.dims.back()));
        check.Require(i + 1 == layers_.size(), "the loss must be the last layer");
        layer.output_shape = Shape::Scalar();
        break;
      case LayerKind::kSigmoid:
      case LayerKind::kSwish:
        layer.output_shape = in;
        break;
      case LayerKind::kMul: {
        const Shape& scale = layers_[static_cast<size_t>(layer.input_ids[1])].output_shape;
        const bool broadcast = in.rank() == 3 && scale == Shape::Vector(in.channels());
        check.Require(scale == in || broadcast,
                      fmt::format("shape mismatch: input '{}' is {}, so input '{}' must be {} "
                                  "or {} channel scales, but is {}",
                                  layer.inputs[0], in.ToString(), layer.inputs[1], in.ToString(),
                                  in.dims.front(), scale.ToString()));
        layer.output_shape = in;
        break;
      }
      case LayerKind::kConcat: {
        RequireRank(check, in, {1, 3}, "features {F} or an image {C, H, W}");
        layer.output_shape = in;
        for (size_t k = 1; k < layer.input_ids.size(); ++k) {
          const Shape& other = layers_[static_cast<size_t>(layer.input_ids[k])].output_shape;
          bool same_rest = other.rank() == in.rank();
          for (int d = 1; same_rest && d < in.rank(); ++d) {
            same_rest = other.dims[static_cast<size_t>(d)] == in.dims[static_cast<size_t>(d)];
          }
          check.Require(
              same_rest,
              fmt::format("shape mismatch: input '{}' is {} but input '{}' is {}; "
                          "only the first (channel) dimension may differ",
                          layer.inputs.front(), in.ToString(), layer.inputs[k], other.ToString()));
          layer.output_shape.dims.front() += other.dims.front();
          check.Require(layer.output_shape.dims.front() <= kMaxElements,
                        "concatenation has more than 2^40 channels");
        }
        break;
      }
      case LayerKind::kLrn: {
        RequireRank(check, in, {3}, "an image {C, H, W}");
        const LrnAttrs& a = layer.lrn;
        check.Require(a.size >= 1 && a.size % 2 == 1 && a.size <= kMaxWindow,
                      fmt::format("size {} must be odd, from 1 to {}", a.size, kMaxWindow));
        check.Require(a.alpha > 0 && std::isfinite(a.alpha),
                      fmt::format("alpha {} must be > 0", a.alpha));
        check.Require(a.beta > 0 && std::isfinite(a.beta),
                      fmt::format("beta {} must be > 0", a.beta));
        check.Require(a.k > 0 && std::isfinite(a.k), fmt::format("k {} must be > 0", a.k));
        layer.output_shape = in;
        break;
      }
    }
    check.Require(
        ElementsInRange(layer.output_shape),
        fmt::format("output shape {} has more than 2^40 elements", layer.output_shape.ToString()));
    for (int input_id : layer.input_ids) {
      layers_[static_cast<size_t>(input_id)].consumer_ids.push_back(id);
    }
  }
  const Layer& last = layers_.back();
  if (last.kind != LayerKind::kSoftmaxCrossEntropy) {
    throw DataError(source, last.origin_line, LayerField(size() - 1, last.name),
                    "the last layer must be the loss (softmax_cross_entropy)");
  }
  for (size_t i = 0; i + 1 < layers_.size(); ++i) {
    if (layers_[i].consumer_ids.empty()) {
      throw DataError(source, layers_[i].origin_line,
                      LayerField(static_cast<int>(i), layers_[i].name),
                      "no layer reads this layer's output");
    }
  }
  finalized_ = true;
}

}  // namespace fitspeed
