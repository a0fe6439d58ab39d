// Kinds with a weight matrix or table: input, dense, embedding,
// position_embedding, segment_embedding, class_token and router.
#include <fmt/format.h>

#include "kind.h"

namespace fitspeed::kinds {

namespace {

// Elements of a dense layer's kernel, its own or the tied embedding's table.
double DenseKernelElements(const CostContext& c) {
  return static_cast<double>(c.layer.dense.units) * static_cast<double>(c.InShape().dims.back());
}

// Shape rule of the embeddings added to a {T, F} sequence.
void AddedEmbeddingShape(const ShapeContext& c, Layer& layer, const char* rows_name) {
  const Shape& in = c.in();
  c.check.RequireRank(in, {2}, "a sequence {T, F}");
  const int64_t rows = layer.added.rows;
  c.check.Require(
      rows >= 1 && ProductInRange({rows, in.dims.back()}),
      fmt::format("{} {} must be >= 1 (and the table at most 2^40 elements)", rows_name, rows));
  layer.output_shape = in;
  layer.params.push_back({"table", Shape({rows, in.dims.back()}), true});
}

// Cost of an embedding added to the input: y = x + table[row(t)]. The rows
// used are read once per step; the gradient sums dy over the batch into them.
void AddedEmbeddingCost(const CostContext& c, LayerCost& cost) {
  const double table = ParamElements(c.layer, "table");
  AddSample(cost.forward, c.out, c.in, c.out);
  AddStep(cost.forward, std::min(table, c.out), 0);
  // dx = dy is shared, no work; dtable[row(t)] += dy[t]: an add per element.
  AddSample(cost.backward_weights, c.out, c.out, 0);
  AddStep(cost.backward_weights, 0, table);
}

KindRules InputRules() {
  KindRules r{LayerKind::kInput, "input"};
  r.host_ranks = {1, 2, 3};
  r.device = kNoDeviceTraits;
  r.min_inputs = r.max_inputs = 0;
  return r;
}

KindRules DenseRules() {
  KindRules r{LayerKind::kDense, "dense"};
  r.host_ranks = {1, 2};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& in = c.in();
    c.check.RequireRank(in, {1, 2}, "features {F} or rows of features {T, F} (flatten first)");
    const DenseAttrs& a = layer.dense;
    c.check.Require(a.units >= 1 && a.units <= kMaxElements,
                    fmt::format("units {} must be >= 1", a.units));
    c.check.Require(ProductInRange({a.units, in.dims.back()}),
                    "kernel has more than 2^40 elements");
    layer.output_shape = in;
    layer.output_shape.dims.back() = a.units;
    if (a.tied_to.empty()) {
      layer.params.push_back({"kernel", Shape({a.units, in.dims.back()}), true});
    } else {
      const int tied = c.net.LayerId(a.tied_to);
      c.check.Require(tied >= 0 && tied < c.id,
                      fmt::format("tied_to '{}' is not an earlier layer", a.tied_to));
      const Layer& table = c.net.layer(tied);
      c.check.Require(table.kind == LayerKind::kEmbedding,
                      fmt::format("tied_to '{}' is a {}, not an embedding", a.tied_to,
                                  RulesOf(table.kind).name));
      c.check.Require(table.embedding.vocab == a.units && table.embedding.dim == in.dims.back(),
                      fmt::format("tied_to '{}': its table is {}x{}, the kernel must be {}x{} "
                                  "(units x input features)",
                                  a.tied_to, table.embedding.vocab, table.embedding.dim, a.units,
                                  in.dims.back()));
    }
    if (a.bias) layer.params.push_back({"bias", Shape::Vector(a.units), true});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Every output element takes one dot product of the F input features. A
    // tied kernel is the embedding's table: read, and its gradient written,
    // all the same.
    const double weights = DenseKernelElements(c);
    const double bias = ParamElements(c.layer, "bias");
    const double macs = c.out * static_cast<double>(c.InShape().dims.back());
    const double bias_adds = bias > 0 ? c.out : 0;
    AddSample(cost.forward, 2 * macs + bias_adds, c.in, c.out);
    AddStep(cost.forward, weights + bias, 0);
    if (c.input_grad) {
      AddSample(cost.backward_data, 2 * macs, c.out, c.in);  // dx = W^T dy
      AddStep(cost.backward_data, weights, 0);
    }
    AddSample(cost.backward_weights, 2 * macs + bias_adds, c.in + c.out, 0);  // dW = dy x^T
    AddStep(cost.backward_weights, 0, weights + bias);
  };
  // PyTorch saves a linear layer's input for dW = dy x^T.
  r.saved = [](SaveContext& s) { s.KeepInput(); };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.dense.units = j.RequiredInteger("units", 1, kMaxElements);
    layer.dense.bias = j.Bool("bias", true);
    layer.dense.tied_to = j.String("tied_to", "");
  };
  r.write_json = [](const Layer& layer, json& out) {
    out["units"] = layer.dense.units;
    out["bias"] = layer.dense.bias;
    if (!layer.dense.tied_to.empty()) out["tied_to"] = layer.dense.tied_to;
  };
  return r;
}

KindRules EmbeddingRules() {
  KindRules r{LayerKind::kEmbedding, "embedding"};
  r.host_ranks = {1};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Layer& input = c.net.layer(layer.input_ids.front());
    c.check.Require(input.kind == LayerKind::kInput && c.in().rank() == 1,
                    fmt::format("reads token ids: its input must be the network input {{T}}, "
                                "not '{}' {}",
                                input.name, c.in().ToString()));
    const EmbeddingAttrs& a = layer.embedding;
    c.check.Require(ProductInRange({a.vocab, a.dim}),
                    fmt::format("vocab {} and dim {} must be >= 1 (and the table at most 2^40 "
                                "elements)",
                                a.vocab, a.dim));
    layer.output_shape = Shape({c.in().dims.front(), a.dim});
    layer.params.push_back({"table", Shape({a.vocab, a.dim}), true});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // A gather: reads a table row per token (and the id), writes it. The ids
    // take no gradient; the table's dense gradient is zeroed once per step and
    // dy added into the rows of the tokens (torch.nn.Embedding, sparse=False).
    AddSample(cost.forward, 0, c.in + c.out, c.out);
    AddSample(cost.backward_weights, c.out, c.in + 2 * c.out, c.out);
    AddStep(cost.backward_weights, 0, ParamElements(c.layer, "table"));
  };
  r.saved = [](SaveContext& s) { s.KeepInput(); };  // the ids, for the gradient's rows
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.embedding.vocab = j.RequiredInteger("vocab", 1, kMaxElements);
    layer.embedding.dim = j.RequiredInteger("dim", 1, kMaxElements);
  };
  r.write_json = [](const Layer& layer, json& out) {
    out["vocab"] = layer.embedding.vocab;
    out["dim"] = layer.embedding.dim;
  };
  return r;
}

KindRules PositionEmbeddingRules() {
  KindRules r{LayerKind::kPositionEmbedding, "position_embedding"};
  r.host_ranks = {2};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    AddedEmbeddingShape(c, layer, "max_positions");
    c.check.Require(c.in().dims.front() <= layer.added.rows,
                    fmt::format("the sequence has {} tokens, more than max_positions {}",
                                c.in().dims.front(), layer.added.rows));
  };
  r.cost = AddedEmbeddingCost;
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.added.rows = j.RequiredInteger("max_positions", 1, kMaxElements);
  };
  r.write_json = [](const Layer& layer, json& out) { out["max_positions"] = layer.added.rows; };
  return r;
}

KindRules SegmentEmbeddingRules() {
  KindRules r{LayerKind::kSegmentEmbedding, "segment_embedding"};
  r.host_ranks = {2};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) { AddedEmbeddingShape(c, layer, "segments"); };
  r.cost = AddedEmbeddingCost;
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.added.rows = j.RequiredInteger("segments", 1, kMaxElements);
  };
  r.write_json = [](const Layer& layer, json& out) { out["segments"] = layer.added.rows; };
  return r;
}

KindRules ClassTokenRules() {
  KindRules r{LayerKind::kClassToken, "class_token"};
  r.host_ranks = {2};
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& in = c.in();
    c.check.RequireRank(in, {2}, "a sequence {T, F}");
    layer.output_shape = Shape({in.dims.front() + 1, in.dims.back()});
    layer.params.push_back({"token", Shape::Vector(in.dims.back()), true});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    const double token = ParamElements(c.layer, "token");
    AddSample(cost.forward, 0, c.in, c.out);  // a copy with the token row written first
    AddStep(cost.forward, token, 0);
    if (c.input_grad) AddSample(cost.backward_data, 0, c.in, c.in);  // rows 1..T of dy
    AddSample(cost.backward_weights, token, token, 0);               // dtoken = sum dy[0]
    AddStep(cost.backward_weights, 0, token);
  };
  return r;
}

KindRules RouterRules() {
  KindRules r{LayerKind::kRouter, "router"};
  r.host_ranks = {1, 2};
  // Its matrix product runs in the low precision under both AMP lists (a
  // Linear; MatMul is on TensorFlow's allow list) and its traffic is the
  // product's, not a row normalization's: the softmax over a few experts per
  // token is small beside reading the token's features.
  r.device = kNoDeviceTraits;
  r.shape = [](const ShapeContext& c, Layer& layer) {
    const Shape& in = c.in();
    c.check.RequireRank(in, {1, 2}, "features {F} or tokens {T, F}");
    const int64_t experts = layer.router.experts;
    c.check.Require(
        experts >= 2 && ProductInRange({experts, in.dims.back()}),
        fmt::format("experts {} must be >= 2 (and the kernel at most 2^40 elements)", experts));
    layer.output_shape = in;
    layer.output_shape.dims.back() = experts;
    layer.params.push_back({"kernel", Shape({experts, in.dims.back()}), true});
  };
  r.cost = [](const CostContext& c, LayerCost& cost) {
    // Per token of F features and E experts: the logits x W^T (2*E*F), then
    // the softmax over E as kSoftmax counts it (5*E); reads x, writes p.
    const double kernel = ParamElements(c.layer, "kernel");
    const double macs = c.out * static_cast<double>(c.InShape().dims.back());
    AddSample(cost.forward, 2 * macs + 5 * c.out, c.in, c.out);
    AddStep(cost.forward, kernel, 0);
    // The logits' gradient g = p*(dy - sum(dy*p)) from the output (4*E, reads
    // dy and p; written for backward-data when it runs) and dW = g^T x (2*E*F).
    AddSample(cost.backward_weights, 4 * c.out + 2 * macs, c.in + 2 * c.out,
              c.input_grad ? c.out : 0);
    AddStep(cost.backward_weights, 0, kernel);
    if (c.input_grad) {
      AddSample(cost.backward_data, 2 * macs, c.out, c.in);  // dx = g W
      AddStep(cost.backward_data, kernel, 0);
    }
  };
  // x for dW, p for the softmax's gradient.
  r.saved = [](SaveContext& s) {
    s.KeepInput();
    s.KeepOutput();
  };
  r.read_json = [](ObjectReader& j, Layer& layer) {
    layer.router.experts = j.RequiredInteger("experts", 2, kMaxElements);
  };
  r.write_json = [](const Layer& layer, json& out) { out["experts"] = layer.router.experts; };
  return r;
}

}  // namespace

std::vector<KindRules> DenseKinds() {
  return {
      InputRules(),
      DenseRules(),
      EmbeddingRules(),
      PositionEmbeddingRules(),
      SegmentEmbeddingRules(),
      ClassTokenRules(),
      RouterRules(),
  };
}

}  // namespace fitspeed::kinds
