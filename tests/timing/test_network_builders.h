// Small networks for the timing tests and bench/bf16_gradients.cc (no GoogleTest here): together
// they use every layer kind and option the host backends run (grouped and strided convolutions,
// asymmetric "same" padding, batch-norm of images and of vectors with and without gamma/beta, ReLU
// and clipped ReLU, max and average pooling with and without padding, residual adds of two and
// three operands, flatten, global pooling, dense layers on {F} and {T, F}; the transformer kinds
// in the tiny transformers below), at shapes small enough for finite differences.
#ifndef FITSPEED_TESTS_TIMING_TEST_NETWORK_BUILDERS_H_
#define FITSPEED_TESTS_TIMING_TEST_NETWORK_BUILDERS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/model/network.h"
#include "timing/executor.h"

namespace fitspeed::testing {

inline Conv2dAttrs ConvAttrs(int64_t filters, Window2d window, int64_t groups = 1,
                             bool bias = true) {
  Conv2dAttrs a;
  a.out_channels = filters;
  a.window = window;
  a.groups = groups;
  a.bias = bias;
  return a;
}

inline DenseAttrs DenseUnits(int64_t units, bool bias = true) {
  DenseAttrs a;
  a.units = units;
  a.bias = bias;
  return a;
}

inline PoolAttrs PoolWindow(Window2d window, bool count_include_pad = false) {
  PoolAttrs a;
  a.window = window;
  a.count_include_pad = count_include_pad;
  return a;
}

// 3x6x6 -> conv 8 (same) -> bn -> relu -> grouped conv -> bn (no gamma) -> add
// (residual) -> relu clipped at 1.5 -> max pool 3/2 pad 1 -> avg pool 2/1 ->
// flatten -> dense 5 -> bn (vector, no beta) -> relu -> dense 3 -> loss.
inline Network ResidualNet() {
  Network net("test-residual", Shape::Chw(3, 6, 6));
  const std::string c1 = net.Conv2d("input", ConvAttrs(8, SameWindow(3)), "c1");
  const std::string r1 = net.Relu(net.BatchNorm(c1, {}, "b1"), {}, "r1");
  BatchNormAttrs no_gamma;
  no_gamma.scale = false;
  const std::string c2 = net.Conv2d(r1, ConvAttrs(8, MakeWindow(3, 1, 1), 2, false), "c2");
  const std::string sum = net.Add({r1, net.BatchNorm(c2, no_gamma, "b2")}, "add");
  ReluAttrs clip;
  clip.max_value = 1.5;
  std::string x = net.Relu(sum, clip, "r2");
  x = net.MaxPool(x, PoolWindow(MakeWindow(3, 2, 1)), "max");
  x = net.AvgPool(x, PoolWindow(MakeWindow(2, 1, 0)), "avg");
  x = net.Flatten(x, "flat");
  BatchNormAttrs no_beta;
  no_beta.center = false;
  x = net.Relu(net.BatchNorm(net.Dense(x, DenseUnits(5), "d1"), no_beta, "b3"), {}, "r3");
  net.SoftmaxCrossEntropy(net.Dense(x, DenseUnits(3), "d2"), "loss");
  net.Finalize();
  return net;
}

// 2x8x8 -> conv 3x3 stride 2 "same" (pads 0 top/left, 1 bottom/right) -> relu
// -> avg pool 3/1 pad 1 counting padding -> 1x1 conv -> add of three ->
// global average pool -> dense 3 (no bias) -> loss.
inline Network PoolingNet() {
  Network net("test-pooling", Shape::Chw(2, 8, 8));
  const std::string r =
      net.Relu(net.Conv2d("input", ConvAttrs(4, SameWindow(3, 2)), "c1"), {}, "r1");
  const std::string p = net.AvgPool(r, PoolWindow(MakeWindow(3, 1, 1), true), "avg");
  const std::string c2 = net.Conv2d(p, ConvAttrs(4, MakeWindow(1)), "c2");
  const std::string g = net.GlobalAvgPool(net.Add({r, p, c2}, "add3"), "gap");
  net.SoftmaxCrossEntropy(net.Dense(g, DenseUnits(3, false), "d"), "loss");
  net.Finalize();
  return net;
}

// {3, 4} token rows -> dense 5 -> relu -> dense 3 -> loss per row.
inline Network SequenceNet() {
  Network net("test-sequence", Shape({3, 4}));
  const std::string x = net.Relu(net.Dense("input", DenseUnits(5), "d1"), {}, "r1");
  net.SoftmaxCrossEntropy(net.Dense(x, DenseUnits(3), "d2"), "loss");
  net.Finalize();
  return net;
}

inline std::vector<Network> AllTestNetworks() {
  return {ResidualNet(), PoolingNet(), SequenceNet()};
}

// The kinds EfficientNet and AlexNet brought: 4x5x5 -> conv 8 (same) -> bn ->
// swish s1 -> squeeze-excite [gap -> dense 2 -> swish -> dense 8 -> sigmoid]
// -> mul m (broadcast) -> 1x1 conv -> sigmoid gate -> mul m2 = m*gate (same
// shape) -> lrn (size 3, alpha 0.5, beta 0.75, k 2) -> gap -> dense 3 -> loss.
inline Network SqueezeExciteNet() {
  Network net("test-squeeze-excite", Shape::Chw(4, 5, 5));
  const std::string s1 = net.Swish(
      net.BatchNorm(net.Conv2d("input", ConvAttrs(8, SameWindow(3)), "c1"), {}, "b1"), "s1");
  std::string se = net.GlobalAvgPool(s1, "squeeze");
  se = net.Swish(net.Dense(se, DenseUnits(2), "reduce"), "reduce_swish");
  se = net.Sigmoid(net.Dense(se, DenseUnits(8), "expand"), "expand_sigmoid");
  const std::string m = net.Mul(s1, se, "excite");
  const std::string gate = net.Sigmoid(net.Conv2d(m, ConvAttrs(8, MakeWindow(1)), "c2"), "gate");
  const std::string m2 = net.Mul(m, gate, "gated");
  LrnAttrs lrn;
  lrn.size = 3;
  lrn.alpha = 0.5;
  lrn.k = 2;
  const std::string n = net.Lrn(m2, lrn, "lrn");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(n, "gap"), DenseUnits(3), "d"), "loss");
  net.Finalize();
  return net;
}

// GoogLeNet's concatenation: 3x6x6 -> conv 4 (pad 1) -> relu r -> concat
// cat0(input, r) (the input needs no gradient) -> inception [1x1 conv 2 ->
// sigmoid (smooth, for finite differences in FP32); 3x3 conv 3; 3x3/1 max pool
// -> 1x1 conv 2] -> concat cat1 {7, 6, 6} ->
// gap -> concat of vectors cat2 (gap of cat1 {7}, gap of the 1x1 branch {2})
// -> dense 3 -> loss.
inline Network InceptionNet() {
  Network net("test-inception", Shape::Chw(3, 6, 6));
  const std::string r =
      net.Relu(net.Conv2d("input", ConvAttrs(4, MakeWindow(3, 1, 1)), "c0"), {}, "r");
  const std::string cat0 = net.Concat({"input", r}, "cat0");
  const std::string b1 = net.Sigmoid(net.Conv2d(cat0, ConvAttrs(2, MakeWindow(1)), "b1"), "b1s");
  const std::string b3 = net.Conv2d(cat0, ConvAttrs(3, MakeWindow(3, 1, 1)), "b3");
  const std::string bp = net.Conv2d(net.MaxPool(cat0, PoolWindow(MakeWindow(3, 1, 1)), "pool"),
                                    ConvAttrs(2, MakeWindow(1)), "bp");
  const std::string cat1 = net.Concat({b1, b3, bp}, "cat1");
  const std::string cat2 =
      net.Concat({net.GlobalAvgPool(cat1, "gap1"), net.GlobalAvgPool(b1, "gap2")}, "cat2");
  net.SoftmaxCrossEntropy(net.Dense(cat2, DenseUnits(3), "d"), "loss");
  net.Finalize();
  return net;
}

inline std::vector<Network> NewKindTestNetworks() { return {SqueezeExciteNet(), InceptionNet()}; }

// Tiny transformers (d_model 8-16, 2-4 heads, 4-6 tokens, vocabulary 11) that
// together use every sequence kind: token, position and segment embeddings,
// layer and RMS norm, GELU (erf and tanh), tanh, dropout, head split and
// merge, batched matmuls (transposed, scaled, grouped-query), softmax (plain
// and causal), rotary, select and gather tokens, class token, image to
// sequence, the router, a dense layer tied to an embedding and two summed
// losses.

// Multi-head self-attention of x {T, d} with `heads` query heads over
// `kv_heads` key/value heads, through the output projection.
inline std::string TinyAttention(Network& net, const std::string& x, int64_t d, int64_t heads,
                                 int64_t kv_heads, bool causal, bool rotary, bool bias,
                                 double dropout, const std::string& p) {
  const int64_t head_dim = d / heads;
  std::string q = net.SplitHeads(net.Dense(x, DenseUnits(d, bias), p + ".q"), heads, p + ".qh");
  std::string k = net.SplitHeads(net.Dense(x, DenseUnits(head_dim * kv_heads, bias), p + ".k"),
                                 kv_heads, p + ".kh");
  const std::string v = net.SplitHeads(
      net.Dense(x, DenseUnits(head_dim * kv_heads, bias), p + ".v"), kv_heads, p + ".vh");
  if (rotary) {
    q = net.Rotary(q, {}, p + ".q_rotary");
    k = net.Rotary(k, {}, p + ".k_rotary");
  }
  MatmulAttrs scores;
  scores.transpose_b = true;
  scores.scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  SoftmaxAttrs softmax;
  softmax.causal = causal;
  std::string probs =
      net.Softmax(net.BatchedMatmul(q, k, scores, p + ".scores"), softmax, p + ".softmax");
  if (dropout > 0) {
    DropoutAttrs drop;
    drop.rate = dropout;
    probs = net.Dropout(probs, drop, p + ".attn_dropout");
  }
  const std::string context = net.BatchedMatmul(probs, v, {}, p + ".context");
  return net.Dense(net.MergeHeads(context, p + ".merge"), DenseUnits(d, bias), p + ".out");
}

inline GeluAttrs GeluForm(bool tanh_approximation) {
  GeluAttrs a;
  a.tanh_approximation = tanh_approximation;
  return a;
}

inline DropoutAttrs DropoutRate(double rate) {
  DropoutAttrs a;
  a.rate = rate;
  return a;
}

// BERT-like (post-norm): ids {5} -> word (vocab 11, d 8) + position + segment
// embeddings -> layer norm -> dropout -> attention (2 heads) -> add -> layer
// norm -> MLP (16, GELU erf) -> add -> layer norm; masked-LM head [gather 2
// tokens -> dense -> GELU -> layer norm -> decoder tied to the word
// embeddings, with a bias -> loss] and next-sentence head [first token ->
// dense -> tanh -> dense 2 -> loss].
inline Network TinyBertNet() {
  Network net("test-bert", Shape::Vector(5));
  EmbeddingAttrs words;
  words.vocab = 11;
  words.dim = 8;
  std::string x = net.Embedding("input", words, "word");
  x = net.SegmentEmbedding(net.PositionEmbedding(x, 6, "position"), 2, "segment");
  x = net.Dropout(net.LayerNorm(x, {}, "emb_norm"), DropoutRate(0.1), "emb_dropout");
  const std::string a = TinyAttention(net, x, 8, 2, 2, false, false, true, 0.1, "attn");
  const std::string h = net.LayerNorm(net.Add({x, a}, "add1"), {}, "norm1");
  const std::string m = net.Dense(
      net.Gelu(net.Dense(h, DenseUnits(16), "fc1"), GeluForm(false), "gelu"), DenseUnits(8), "fc2");
  x = net.LayerNorm(net.Add({h, m}, "add2"), {}, "norm2");
  std::string mlm = net.GatherTokens(x, 2, "mlm.gather");
  mlm = net.Gelu(net.Dense(mlm, DenseUnits(8), "mlm.transform"), GeluForm(false), "mlm.gelu");
  DenseAttrs decoder = DenseUnits(11);
  decoder.tied_to = "word";
  net.SoftmaxCrossEntropy(net.Dense(net.LayerNorm(mlm, {}, "mlm.norm"), decoder, "mlm.decoder"),
                          "mlm.loss");
  const std::string pooled =
      net.Tanh(net.Dense(net.SelectToken(x, 0, "pooler.first"), DenseUnits(8), "pooler.dense"),
               "pooler.tanh");
  net.SoftmaxCrossEntropy(net.Dense(pooled, DenseUnits(2), "nsp.classifier"), "nsp.loss");
  net.Finalize();
  return net;
}

// GPT-2-like (pre-norm, causal): ids {6} -> token (vocab 11, d 8) + position
// embeddings -> dropout -> [layer norm -> causal attention (2 heads) -> add]
// -> [layer norm -> MLP (32, GELU tanh) -> dropout -> add] -> layer norm ->
// head tied to the token embeddings, no bias -> loss on every token.
// `dropout` 0 leaves the dropout layers out.
inline Network TinyGpt2Net(double dropout = 0.1) {
  Network net(dropout > 0 ? "test-gpt2" : "test-gpt2-no-dropout", Shape::Vector(6));
  auto drop = [&](const std::string& x, const std::string& name) {
    return dropout > 0 ? net.Dropout(x, DropoutRate(dropout), name) : x;
  };
  EmbeddingAttrs tokens;
  tokens.vocab = 11;
  tokens.dim = 8;
  std::string x = net.Embedding("input", tokens, "wte");
  x = drop(net.PositionEmbedding(x, 8, "wpe"), "emb_dropout");
  const std::string a =
      TinyAttention(net, net.LayerNorm(x, {}, "ln1"), 8, 2, 2, true, false, true, 0.0, "attn");
  x = net.Add({x, a}, "add1");
  std::string m = net.Gelu(net.Dense(net.LayerNorm(x, {}, "ln2"), DenseUnits(32), "fc1"),
                           GeluForm(true), "gelu");
  m = drop(net.Dense(m, DenseUnits(8), "fc2"), "mlp_dropout");
  x = net.LayerNorm(net.Add({x, m}, "add2"), {}, "ln_f");
  DenseAttrs head = DenseUnits(11, false);
  head.tied_to = "wte";
  net.SoftmaxCrossEntropy(net.Dense(x, head, "lm_head"), "loss");
  net.Finalize();
  return net;
}

// Llama-like: ids {5} -> embedding (vocab 11, d 16) -> [RMS norm -> causal
// grouped-query attention, 4 query heads over 2 key/value heads of 4, rotary
// on q and k, no biases -> add] -> [RMS norm -> SwiGLU (12) -> add] -> RMS
// norm -> untied head -> loss.
inline Network TinyLlamaNet() {
  Network net("test-llama", Shape::Vector(5));
  EmbeddingAttrs tokens;
  tokens.vocab = 11;
  tokens.dim = 16;
  std::string x = net.Embedding("input", tokens, "embed");
  const std::string a =
      TinyAttention(net, net.RmsNorm(x, {}, "norm1"), 16, 4, 2, true, true, false, 0.0, "attn");
  x = net.Add({x, a}, "add1");
  const std::string h = net.RmsNorm(x, {}, "norm2");
  const std::string gate = net.Swish(net.Dense(h, DenseUnits(12, false), "gate"), "silu");
  const std::string glu = net.Mul(gate, net.Dense(h, DenseUnits(12, false), "up"), "glu");
  x = net.Add({x, net.Dense(glu, DenseUnits(16, false), "down")}, "add2");
  net.SoftmaxCrossEntropy(net.Dense(net.RmsNorm(x, {}, "norm"), DenseUnits(11, false), "lm_head"),
                          "loss");
  net.Finalize();
  return net;
}

// ViT-like: 3x4x4 image -> 2x2/2 conv patches (8) -> image to sequence {4, 8}
// -> class token -> positions -> [layer norm -> attention (2 heads) -> add]
// -> [layer norm -> MLP (16, GELU erf) -> add] -> layer norm -> class token
// row -> dense 3 -> loss.
inline Network TinyVitNet() {
  Network net("test-vit", Shape::Chw(3, 4, 4));
  std::string x = net.ImageToSequence(
      net.Conv2d("input", ConvAttrs(8, MakeWindow(2, 2, 0)), "patch_embed"), "patches");
  x = net.PositionEmbedding(net.ClassToken(x, "cls_token"), 5, "pos_embed");
  const std::string a =
      TinyAttention(net, net.LayerNorm(x, {}, "norm1"), 8, 2, 2, false, false, true, 0.0, "attn");
  x = net.Add({x, a}, "add1");
  const std::string m =
      net.Dense(net.Gelu(net.Dense(net.LayerNorm(x, {}, "norm2"), DenseUnits(16), "fc1"),
                         GeluForm(false), "gelu"),
                DenseUnits(8), "fc2");
  x = net.LayerNorm(net.Add({x, m}, "add2"), {}, "norm");
  net.SoftmaxCrossEntropy(net.Dense(net.SelectToken(x, 0, "cls"), DenseUnits(3), "head"), "loss");
  net.Finalize();
  return net;
}

// Mixture-of-experts routing: ids {5} -> embedding (vocab 11, d 8) -> RMS
// norm -> router (4 experts) -> dense 8 (a direction per expert, mixed by the
// gates) -> add -> RMS norm -> head -> loss; and the first token {F} ->
// router (3 experts) -> a second loss on its probabilities.
inline Network TinyMoeNet() {
  Network net("test-moe", Shape::Vector(5));
  auto router = [&](const std::string& input, int64_t experts, const std::string& name) {
    Layer layer;
    layer.name = name;
    layer.kind = LayerKind::kRouter;
    layer.inputs = {input};
    layer.router.experts = experts;
    return net.Append(layer);
  };
  EmbeddingAttrs tokens;
  tokens.vocab = 11;
  tokens.dim = 8;
  const std::string x = net.Embedding("input", tokens, "embed");
  const std::string gates = router(net.RmsNorm(x, {}, "norm1"), 4, "router");
  const std::string h = net.Add({x, net.Dense(gates, DenseUnits(8, false), "experts")}, "add");
  net.SoftmaxCrossEntropy(net.Dense(net.RmsNorm(h, {}, "norm2"), DenseUnits(11, false), "lm_head"),
                          "loss");
  net.SoftmaxCrossEntropy(router(net.SelectToken(h, 0, "first"), 3, "first.router"), "first.loss");
  net.Finalize();
  return net;
}

inline std::vector<Network> TransformerTestNetworks() {
  return {TinyBertNet(), TinyGpt2Net(), TinyLlamaNet(), TinyVitNet(), TinyMoeNet()};
}

// Networks whose step on a batch split over ranks equals the step on the
// whole batch (no batch-norm, whose statistics are per rank, and no dropout,
// whose mask is per rank): the data-parallel tests.
// 3x6x6 -> conv 4 (same) -> relu -> max pool 2/2 -> conv 6 (valid 2x2) ->
// relu -> flatten -> dense 5 -> relu -> dense 3 -> loss.
inline Network DataParallelConvNet() {
  Network net("test-dp-conv", Shape::Chw(3, 6, 6));
  std::string x = net.Relu(net.Conv2d("input", ConvAttrs(4, SameWindow(3)), "c1"), {}, "r1");
  x = net.MaxPool(x, PoolWindow(MakeWindow(2, 2, 0)), "pool");
  x = net.Relu(net.Conv2d(x, ConvAttrs(6, MakeWindow(2, 1, 0)), "c2"), {}, "r2");
  x = net.Relu(net.Dense(net.Flatten(x, "flat"), DenseUnits(5), "d1"), {}, "r3");
  net.SoftmaxCrossEntropy(net.Dense(x, DenseUnits(3), "d2"), "loss");
  net.Finalize();
  return net;
}

// TinyGpt2Net without dropout: the head is tied to the token embeddings, so
// the table's gradient is final only after the embedding's backward pass.
inline Network DataParallelTiedNet() { return TinyGpt2Net(0.0); }

// The step the agreement and gradient tests run: lr 0.05 at `batch`.
inline timing::StepConfig AgreementConfig(int64_t batch,
                                          Optimizer optimizer = Optimizer::kSgdMomentum) {
  timing::StepConfig c;
  c.batch = batch;
  c.optimizer = optimizer;
  c.learning_rate = 0.05;
  // Adam divides by sqrt(v) + eps: a gradient that is zero up to rounding (a
  // bias before a batch-norm) would otherwise move by a whole learning rate.
  c.epsilon = 1e-3;
  if (optimizer == Optimizer::kRmsprop) {
    // RMSprop's first step is g/(sqrt((1-alpha) g^2) + eps) = 10 sign(g) learning
    // rates (v starts at 0, alpha 0.99): a tenth of the rate keeps it as far as
    // Adam's. It divides rounding-level gradients (a bias before a batch-norm,
    // ~1e-8 in FP32, ~1e-17 in double) by eps alone: eps = 1e-2 keeps them at
    // the noise level, while real gradients (0.01-0.2, sqrt(v) = 0.001-0.02)
    // still feel sqrt(v).
    c.learning_rate = 0.005;
    c.epsilon = 1e-2;
  }
  return c;
}

}  // namespace fitspeed::testing

#endif  // FITSPEED_TESTS_TIMING_TEST_NETWORK_BUILDERS_H_
