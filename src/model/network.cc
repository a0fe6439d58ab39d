#include "fitspeed/model/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "fitspeed/core/error.h"
#include "kinds/kind.h"

namespace fitspeed {

namespace {

using kinds::kMaxElements;
using kinds::LayerChecker;
using kinds::LayerField;

bool ElementsInRange(const Shape& shape) { return kinds::ProductInRange(shape.dims); }

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
  if (static_cast<size_t>(kind) >= kinds::AllRules().size()) return "unknown";
  return kinds::RulesOf(kind).name;
}

std::optional<LayerKind> LayerKindFromName(const std::string& name) {
  for (const kinds::KindRules& k : kinds::AllRules()) {
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

std::string Network::Embedding(const std::string& input, const EmbeddingAttrs& attrs,
                               const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kEmbedding, input, layer_name);
  layer.embedding = attrs;
  return Append(std::move(layer));
}

std::string Network::PositionEmbedding(const std::string& input, int64_t max_positions,
                                       const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kPositionEmbedding, input, layer_name);
  layer.added.rows = max_positions;
  return Append(std::move(layer));
}

std::string Network::SegmentEmbedding(const std::string& input, int64_t segments,
                                      const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kSegmentEmbedding, input, layer_name);
  layer.added.rows = segments;
  return Append(std::move(layer));
}

std::string Network::LayerNorm(const std::string& input, const NormAttrs& attrs,
                               const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kLayerNorm, input, layer_name);
  layer.norm = attrs;
  return Append(std::move(layer));
}

std::string Network::RmsNorm(const std::string& input, const NormAttrs& attrs,
                             const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kRmsNorm, input, layer_name);
  layer.norm = attrs;
  return Append(std::move(layer));
}

std::string Network::Gelu(const std::string& input, const GeluAttrs& attrs,
                          const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kGelu, input, layer_name);
  layer.gelu = attrs;
  return Append(std::move(layer));
}

std::string Network::Tanh(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kTanh, input, layer_name));
}

std::string Network::Dropout(const std::string& input, const DropoutAttrs& attrs,
                             const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kDropout, input, layer_name);
  layer.dropout = attrs;
  return Append(std::move(layer));
}

std::string Network::SplitHeads(const std::string& input, int64_t heads,
                                const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kSplitHeads, input, layer_name);
  layer.heads.heads = heads;
  return Append(std::move(layer));
}

std::string Network::MergeHeads(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kMergeHeads, input, layer_name));
}

std::string Network::BatchedMatmul(const std::string& a, const std::string& b,
                                   const MatmulAttrs& attrs, const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kBatchedMatmul, a, layer_name);
  layer.inputs.push_back(b);
  layer.matmul = attrs;
  return Append(std::move(layer));
}

std::string Network::Softmax(const std::string& input, const SoftmaxAttrs& attrs,
                             const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kSoftmax, input, layer_name);
  layer.softmax = attrs;
  return Append(std::move(layer));
}

std::string Network::Rotary(const std::string& input, const RotaryAttrs& attrs,
                            const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kRotary, input, layer_name);
  layer.rotary = attrs;
  return Append(std::move(layer));
}

std::string Network::SelectToken(const std::string& input, int64_t index,
                                 const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kSelectToken, input, layer_name);
  layer.tokens.index = index;
  return Append(std::move(layer));
}

std::string Network::GatherTokens(const std::string& input, int64_t count,
                                  const std::string& layer_name) {
  Layer layer = Unary(LayerKind::kGatherTokens, input, layer_name);
  layer.tokens.count = count;
  return Append(std::move(layer));
}

std::string Network::ClassToken(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kClassToken, input, layer_name));
}

std::string Network::ImageToSequence(const std::string& input, const std::string& layer_name) {
  return Append(Unary(LayerKind::kImageToSequence, input, layer_name));
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

int Network::LossCount() const {
  RequireFinalized();
  int n = 0;
  for (const Layer& layer : layers_) n += layer.kind == LayerKind::kSoftmaxCrossEntropy ? 1 : 0;
  return n;
}

int64_t Network::TokensPerSample() const {
  RequireFinalized();
  for (int consumer : layers_.front().consumer_ids) {
    if (layers_[static_cast<size_t>(consumer)].kind == LayerKind::kEmbedding) {
      return layers_.front().output_shape.dims.front();
    }
  }
  return 0;
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

    if (layer.kind == LayerKind::kInput) {
      check.Require(id == 0, "only the first layer may be an input");
      check.Require(layer.inputs.empty(), "an input layer reads no layer");
      check.Require(layer.output_shape.rank() >= 1 && ElementsInRange(layer.output_shape),
                    fmt::format("input shape {} needs dimensions >= 1 and at most 2^40 elements",
                                layer.output_shape.ToString()));
      layer.input_ids.clear();
      continue;
    }
    check.Require(static_cast<size_t>(layer.kind) < kinds::AllRules().size(), "unknown kind");
    const kinds::KindRules& rules = kinds::RulesOf(layer.kind);

    // Operands.
    const int operands = static_cast<int>(layer.inputs.size());
    if (operands < rules.min_inputs || operands > rules.max_inputs) {
      const std::string wanted =
          rules.max_inputs == kinds::kAnyCount
              ? fmt::format("{} or more", rules.min_inputs == 2 ? "two" : "one")
          : rules.min_inputs == 1 ? "exactly one"
                                  : "exactly two";
      check.Fail(fmt::format("{} needs {} input{}, has {}", rules.name, wanted,
                             rules.min_inputs == 1 && rules.max_inputs == 1 ? "" : "s", operands));
    }
    layer.input_ids.clear();
    kinds::ShapeContext context{check, *this, {}, id, i + 1 == layers_.size()};
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
      context.inputs.push_back(&producer.output_shape);
    }

    // Attributes, output shape and parameters.
    rules.shape(context, layer);
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
    if (layers_[i].consumer_ids.empty() && layers_[i].kind != LayerKind::kSoftmaxCrossEntropy) {
      throw DataError(source, layers_[i].origin_line,
                      LayerField(static_cast<int>(i), layers_[i].name),
                      "no layer reads this layer's output");
    }
  }
  finalized_ = true;
}

}  // namespace fitspeed
