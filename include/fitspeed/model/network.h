// A neural network as a directed acyclic graph of layers with per-sample
// shapes: what a training step computes, in enough detail to count its work
// (fitspeed/model/network_cost.h) and to execute it (the timing layer).
//
// Conventions:
//  - Shapes are per sample, outermost dimension first, without the batch:
//    NCHW without N. An image is {C, H, W}, a feature vector {F}, a sequence of
//    token vectors {T, F} (for attention), a per-sample scalar {} (rank 0).
//  - Layers are stored in topological order: a layer's inputs are layers added
//    before it. Layer 0 is the network input (kind kInput). The last layer is
//    a loss; every layer but a loss feeds at least one later layer. A network
//    may have several losses (BERT's masked-LM and next-sentence heads): the
//    training loss is their sum.
//  - Build a network with the builder methods (or Append), then call Finalize(),
//    which validates every layer and infers shapes, consumers and parameters.
//    Accessors marked "after Finalize" may only be used on a finalized network.
//
// The layer set follows Keras/PyTorch semantics, each noted at its kind.
// Everything the model layer knows of a kind (operands, shape rule, parameters,
// FLOPs and bytes, saved tensors, JSON attributes, device traits) lives in one
// file of src/model/kinds/; docs/models.md has the checklist for adding a kind.
#ifndef FITSPEED_MODEL_NETWORK_H_
#define FITSPEED_MODEL_NETWORK_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fitspeed {

// A per-sample tensor shape (no batch dimension), outermost first.
struct Shape {
  std::vector<int64_t> dims;  // {C, H, W} images, {F} vectors, {T, F} sequences, {} scalars

  Shape() = default;
  explicit Shape(std::vector<int64_t> d) : dims(std::move(d)) {}
  static Shape Chw(int64_t c, int64_t h, int64_t w) { return Shape({c, h, w}); }
  static Shape Vector(int64_t features) { return Shape({features}); }
  static Shape Scalar() { return Shape(); }

  int rank() const { return static_cast<int>(dims.size()); }
  // Product of the dimensions (1 for a scalar): elements per sample.
  int64_t elements() const;
  // Image accessors; only for rank 3.
  int64_t channels() const { return dims.at(0); }
  int64_t height() const { return dims.at(1); }
  int64_t width() const { return dims.at(2); }
  // "3x32x32", "10", "scalar".
  std::string ToString() const;

  bool operator==(const Shape& other) const { return dims == other.dims; }
  bool operator!=(const Shape& other) const { return dims != other.dims; }
};

enum class LayerKind {
  // The network input: layer 0 and only layer 0. No inputs; its output_shape
  // (set by the Network constructor, or by hand before Append) is the network's
  // per-sample input shape.
  kInput,
  // 2-D convolution (cross-correlation), input {C, H, W} -> {out_channels, Ho, Wo}
  // with Ho = floor((H + pad_top + pad_bottom - kernel_h) / stride_h) + 1 (same for W).
  // Grouped when groups > 1: each of `groups` groups maps C/groups input channels
  // to out_channels/groups outputs; depthwise when groups == C. Zero padding.
  // (PyTorch torch.nn.Conv2d; Keras Conv2D / DepthwiseConv2D.)
  kConv2d,
  // Fully connected: y = W x + b on the last dimension. Input {F} -> {units}, or
  // {T, F} -> {T, units} (applied to each of the T rows, as Keras Dense and
  // torch.nn.Linear do). Rank-3 inputs must be flattened or pooled first.
  kDense,
  // Batch normalization over the channel (first) dimension, training mode:
  // statistics of the current batch over N (and H, W for {C, H, W} inputs);
  // moving mean/variance updated with `momentum`. Input rank 1 or 3, output
  // the same shape. (Ioffe & Szegedy 2015; Keras BatchNormalization.)
  kBatchNorm,
  // y = min(max(x, 0), max_value) elementwise; max_value = +inf is plain ReLU,
  // 6 is ReLU6 (MobileNet). Any shape, output the same shape.
  kRelu,
  // Average pooling over windows of {C, H, W}; divides by the number of window
  // elements inside the unpadded input unless count_include_pad. Output
  // {C, Ho, Wo} with Ho as for kConv2d.
  kAvgPool,
  // Max pooling over windows of {C, H, W}; padded positions never win.
  kMaxPool,
  // Mean over H and W: {C, H, W} -> {C} (Keras GlobalAveragePooling2D).
  kGlobalAvgPool,
  // Elementwise sum of two or more inputs of equal shape (residual connection).
  kAdd,
  // Reshape to {elements} in C, H, W order (row-major). No data moves.
  kFlatten,
  // Softmax over the last dimension followed by the cross-entropy with an
  // integer class label per sample (per row for {T, classes}: the language-model
  // loss over the vocabulary), averaged over the batch: a training loss. Input
  // {classes} or {T, classes}, classes >= 2; output a per-sample scalar {}. No
  // layer reads it; the last layer is one.
  kSoftmaxCrossEntropy,
  // y = 1 / (1 + exp(-x)) elementwise (the logistic sigmoid; Keras activation
  // "sigmoid", torch.nn.Sigmoid). Any shape, output the same shape.
  kSigmoid,
  // y = x * sigmoid(x) elementwise: swish (Ramachandran et al. 2017) or SiLU
  // (Hendrycks & Gimpel 2016; Keras activation "swish", torch.nn.SiLU). Any
  // shape, output the same shape.
  kSwish,
  // Elementwise product of exactly two inputs: the second of the first's shape,
  // or {C} when the first is {C, H, W}, broadcast over H and W (the channel
  // scaling of squeeze-and-excitation, Hu et al. 2018; keras.layers.Multiply).
  // Output the first input's shape.
  kMul,
  // Concatenation of two or more inputs along the first (channel) dimension:
  // {C_i, H, W} -> {sum C_i, H, W} or {F_i} -> {sum F_i}, the other dimensions
  // equal (GoogLeNet's inception output, Szegedy et al. 2015; torch.cat(dim=1),
  // Caffe Concat, Paddle concat_layer).
  kConcat,
  // Local response normalization across channels (Krizhevsky et al. 2012, sec.
  // 3.3; torch.nn.LocalResponseNorm, Caffe LRN ACROSS_CHANNELS, Paddle
  // img_cmrnorm_layer): y_c = x_c / (k + alpha/size * sum_{c'} x_{c'}^2)^beta over
  // the `size` channels c' centred on c (zero beyond the edges). Input {C, H, W},
  // output the same shape.
  kLrn,

  // Sequence (transformer) kinds. A sequence is {T, F} per sample: T tokens of
  // F features; attention heads are {H, T, D}.

  // Token embedding (torch.nn.Embedding): input {T} token ids (the network
  // input only; ids carry no gradient) -> {T, dim}, a row of the {vocab, dim}
  // table per token. The table gets a dense gradient (PyTorch's default).
  kEmbedding,
  // Learned absolute position embedding added to the input (BERT, GPT-2, ViT):
  // {T, F} -> {T, F}, y[t] = x[t] + table[t], table {max_positions, F}, T <= max_positions.
  kPositionEmbedding,
  // Learned segment (token type) embedding added to the input (BERT's
  // token_type_embeddings): {T, F} -> {T, F}, y[t] = x[t] + table[segment[t]],
  // table {segments, F}.
  kSegmentEmbedding,
  // Layer normalization over the last dimension (Ba et al. 2016;
  // torch.nn.LayerNorm): y = (x - mean)/sqrt(var + eps)*gamma + beta. Any rank.
  kLayerNorm,
  // RMS normalization over the last dimension (Zhang & Sennrich 2019; Llama's
  // RMSNorm): y = x/sqrt(mean(x^2) + eps)*gamma. Any rank.
  kRmsNorm,
  // GELU (Hendrycks & Gimpel 2016): x*Phi(x) with the erf, or its tanh
  // approximation (BERT, GPT-2). Any shape, output the same shape.
  kGelu,
  // y = tanh(x) elementwise (BERT's pooler). Any shape, output the same shape.
  kTanh,
  // Inverted dropout in training (torch.nn.Dropout): y = x*mask/(1 - rate),
  // a Bernoulli mask kept for the backward pass. Any shape, output the same.
  kDropout,
  // {T, heads*D} -> {heads, T, D}: the head split of multi-head attention (a transpose).
  kSplitHeads,
  // {H, T, D} -> {T, H*D}: the head merge after attention (a transpose).
  kMergeHeads,
  // Batched matrix product per head: a {H, M, K} times b {Hb, K, N}, or
  // b {Hb, N, K} with transpose_b (Q K^T), -> {H, M, N}, times `scale`. Hb
  // divides H: head h of a uses head h/(H/Hb) of b (grouped-query attention,
  // Ainslie et al. 2023; Hb == H is multi-head attention). Two inputs.
  kBatchedMatmul,
  // Softmax over the last dimension, optionally with a causal mask (rank >= 2,
  // the last two dimensions equal: position i attends to j <= i). Output the same shape.
  kSoftmax,
  // Rotary position embedding (Su et al. 2021; Llama's rotate-half form) on
  // {H, T, D}, D even: y = x*cos(t*theta) + rotate_half(x)*sin(t*theta). No parameters.
  kRotary,
  // {T, F} -> {F}: the row at `index` (BERT's pooler and ViT's head read the
  // first token).
  kSelectToken,
  // {T, F} -> {count, F}: `count` rows chosen per sample (the masked positions
  // of BERT's masked-LM head; which rows does not change the work).
  kGatherTokens,
  // {T, F} -> {T + 1, F}: a learned {F} vector prepended as row 0 (ViT's class token).
  kClassToken,
  // {C, H, W} -> {H*W, C}: an image's pixels as a sequence of tokens (ViT's
  // patch embedding: a strided conv2d, then this).
  kImageToSequence,
  // The router (gate) of a mixture-of-experts layer (Shazeer et al. 2017;
  // Switch Transformer, Fedus et al. 2021; Mixtral's `gate`): {T, F} -> {T, experts}
  // (or {F} -> {experts}), p = softmax(x W^T) over the experts, W {experts, F},
  // no bias. The top-k choice and the dispatch to the experts are its consumers'.
  kRouter,
};
// The number of kinds: LayerKind values are 0 .. kLayerKindCount - 1. Keep it
// at the last kind; every table of kinds (src/model/kinds/kinds.cc, the host
// backends' builders) is checked against it.
inline constexpr int kLayerKindCount = static_cast<int>(LayerKind::kRouter) + 1;

// Kind names as used in the JSON format and reports: "input", "conv2d",
// "dense", "batch_norm", "relu", "avg_pool", "max_pool", "global_avg_pool",
// "add", "flatten", "softmax_cross_entropy", "sigmoid", "swish", "mul",
// "concat", "lrn".
const char* LayerKindName(LayerKind kind);
// The kind named `name` (one of the above), or nullopt.
std::optional<LayerKind> LayerKindFromName(const std::string& name);

// How a window's padding is chosen.
enum class Padding {
  kExplicit,  // pad_top/bottom/left/right as given
  // TensorFlow/Keras "same": Ho = ceil(H / stride); total padding
  // max((Ho - 1) * stride + kernel - H, 0), top = total / 2, bottom gets the
  // rest (TensorFlow's conv2d padding rule). Resolved by Finalize().
  kSame,
  kValid,  // no padding (resolved to zeros by Finalize())
};

// The sliding window of a convolution or pooling layer.
struct Window2d {
  int kernel_h = 1;  // window height, >= 1
  int kernel_w = 1;  // window width, >= 1
  int stride_h = 1;  // vertical step, >= 1
  int stride_w = 1;  // horizontal step, >= 1
  Padding padding = Padding::kExplicit;
  // Zero padding in pixels on each side, >= 0. With kSame or kValid, Finalize()
  // overwrites them with the resolved values, so after Finalize they are
  // always the padding actually applied.
  int pad_top = 0;
  int pad_bottom = 0;
  int pad_left = 0;
  int pad_right = 0;
};
// A square window with symmetric explicit padding (PyTorch style).
Window2d MakeWindow(int kernel, int stride = 1, int padding = 0);
// A square window with Keras/TensorFlow "same" padding.
Window2d SameWindow(int kernel, int stride = 1);

// Attributes of kConv2d.
struct Conv2dAttrs {
  int64_t out_channels = 0;  // output channels, >= 1, a multiple of groups
  Window2d window;           // kernel, stride, padding
  int64_t groups = 1;        // >= 1, divides input and output channels
  bool bias = true;          // adds a bias per output channel
};

// Attributes of kDense.
struct DenseAttrs {
  int64_t units = 0;  // output features, >= 1
  bool bias = true;   // adds a bias per output feature
  // Name of an earlier kEmbedding layer whose {vocab, dim} table is this
  // layer's kernel (weight tying, Press & Wolf 2017: GPT-2's and BERT's output
  // layer); units must equal vocab and the input features dim. Empty: own kernel.
  std::string tied_to;
};

// Attributes of kBatchNorm (Keras defaults).
struct BatchNormAttrs {
  double epsilon = 1e-3;   // added to the variance, > 0
  double momentum = 0.99;  // moving = momentum*moving + (1-momentum)*batch, in [0, 1]
  bool scale = true;       // learn gamma (else gamma = 1)
  bool center = true;      // learn beta (else beta = 0)
};

// Attributes of kRelu.
struct ReluAttrs {
  double max_value = std::numeric_limits<double>::infinity();  // upper clip, > 0
};

// Attributes of kEmbedding.
struct EmbeddingAttrs {
  int64_t vocab = 0;  // table rows (token ids 0..vocab-1), >= 1
  int64_t dim = 0;    // features per token, >= 1
};

// Attributes of kPositionEmbedding (rows = max_positions) and kSegmentEmbedding
// (rows = segments).
struct AddedEmbeddingAttrs {
  int64_t rows = 0;  // table rows, >= 1
};

// Attributes of kLayerNorm and kRmsNorm.
struct NormAttrs {
  double epsilon = 1e-5;  // added to the variance (mean square), > 0
  bool scale = true;      // learn gamma
  bool center = true;     // learn beta (kLayerNorm only; RMS norm has none)
};

// Attributes of kGelu.
struct GeluAttrs {
  bool tanh_approximation = false;  // 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), else erf
};

// Attributes of kDropout.
struct DropoutAttrs {
  double rate = 0.1;  // probability of zeroing an element, in [0, 1)
};

// Attributes of kSplitHeads.
struct HeadsAttrs {
  int64_t heads = 0;  // divides the input's features, >= 1
};

// Attributes of kBatchedMatmul.
struct MatmulAttrs {
  bool transpose_b = false;  // b is {Hb, N, K}: a times b^T
  double scale = 1.0;        // output multiplied by it (1/sqrt(D) in attention), finite
};

// Attributes of kSoftmax.
struct SoftmaxAttrs {
  bool causal = false;  // mask j > i in each {T, T} block
};

// Attributes of kRotary.
struct RotaryAttrs {
  double base = 10000.0;  // theta_i = base^(-2i/D), > 1
};

// Attributes of kSelectToken (index) and kGatherTokens (count).
struct TokensAttrs {
  int64_t index = 0;  // kSelectToken: the row taken, 0 <= index < T
  int64_t count = 1;  // kGatherTokens: rows taken per sample, 1 <= count <= T
};

// Attributes of kRouter.
struct RouterAttrs {
  int64_t experts = 0;  // experts to choose among, >= 2
};

// Attributes of kLrn. Defaults: AlexNet as Caffe's bvlc_alexnet and Paddle's
// benchmark configure it (the paper has k = 2).
struct LrnAttrs {
  int64_t size = 5;     // channels in the window, odd, >= 1
  double alpha = 1e-4;  // scale of the window's sum of squares (divided by size), > 0
  double beta = 0.75;   // exponent, > 0
  double k = 1.0;       // additive constant, > 0
};

// Attributes of kAvgPool and kMaxPool.
struct PoolAttrs {
  Window2d window;
  // kAvgPool only: divide by kernel_h*kernel_w even where the window covers
  // padding (PyTorch's default); false divides by the unpadded count (Keras).
  bool count_include_pad = false;
};

// A parameter tensor of a layer.
struct ParamTensor {
  // "kernel", "bias" (conv2d, dense); "gamma", "beta", "moving_mean",
  // "moving_variance" (batch_norm); "gamma", "beta" (layer_norm, rms_norm);
  // "table" (embeddings); "token" (class_token); "kernel" (router).
  std::string name;
  // kConv2d kernel: {out_channels, in_channels/groups, kernel_h, kernel_w} (OIHW,
  // as PyTorch and oneDNN). kDense kernel: {units, in_features} (OI, as
  // torch.nn.Linear); kRouter kernel {experts, in_features}. Biases and
  // batch-norm vectors: {channels}.
  Shape shape;
  // Updated by the optimizer. Batch-norm moving statistics are not (Keras
  // counts them as non-trainable parameters; PyTorch calls them buffers).
  bool trainable = true;
};

// One layer. Set name, kind, inputs and the attribute struct of its kind; the
// other attribute structs are ignored. Finalize() fills the derived fields.
struct Layer {
  // Unique in the network; [A-Za-z0-9_.-/]+ recommended. Builders give an
  // empty name "<kind>_<index>" (e.g. "conv2d_3").
  std::string name;
  LayerKind kind = LayerKind::kInput;
  // Names of the layers whose outputs this layer reads, in operand order.
  // Exactly one, except kAdd and kConcat (two or more), kMul and
  // kBatchedMatmul (two) and kInput (none).
  std::vector<std::string> inputs;

  Conv2dAttrs conv;           // kConv2d
  DenseAttrs dense;           // kDense
  BatchNormAttrs batch_norm;  // kBatchNorm
  ReluAttrs relu;             // kRelu
  PoolAttrs pool;             // kAvgPool, kMaxPool
  LrnAttrs lrn;               // kLrn
  EmbeddingAttrs embedding;   // kEmbedding
  AddedEmbeddingAttrs added;  // kPositionEmbedding, kSegmentEmbedding
  NormAttrs norm;             // kLayerNorm, kRmsNorm
  GeluAttrs gelu;             // kGelu
  DropoutAttrs dropout;       // kDropout
  HeadsAttrs heads;           // kSplitHeads
  MatmulAttrs matmul;         // kBatchedMatmul
  SoftmaxAttrs softmax;       // kSoftmax
  RotaryAttrs rotary;         // kRotary
  TokensAttrs tokens;         // kSelectToken, kGatherTokens
  RouterAttrs router;         // kRouter

  // 1-based line of Network::origin where the layer is defined (JSON), 0 when
  // unknown; DataError messages of Finalize() name it.
  int origin_line = 0;

  // Derived by Finalize():
  std::vector<int> input_ids;       // indices of `inputs` in Network::layers()
  std::vector<int> consumer_ids;    // indices of the layers that read this output, ascending
  Shape output_shape;               // per-sample output shape
  std::vector<ParamTensor> params;  // parameter tensors in the order listed at ParamTensor

  // Parameter elements of this layer (after Finalize): all, and trainable only.
  int64_t ParamCount() const;
  int64_t TrainableParamCount() const;
  bool has_trainable_params() const { return TrainableParamCount() > 0; }
};

class Network {
 public:
  // An empty network; Append() must add a kInput layer first.
  Network() = default;
  // A network whose layer 0 is the input "input" with the given per-sample shape.
  Network(std::string name, Shape input_shape);

  // Metadata: the zoo/JSON name, a one-line description, and where the
  // architecture is defined (paper, repository file) for its numbers.
  std::string name;
  std::string description;
  std::string reference;
  // Where the network came from, used as the source of DataError messages
  // (a JSON file's path; empty: "network '<name>'").
  std::string origin;
  // A sequence model run on unpadded sequences of different lengths (NVIDIA's
  // BERT with unpad; ZooOptions::mean_tokens): the mean of their squared
  // tokens. The input's T is their mean; each attention core's {H, T, T}
  // tensors and work (scores, softmax, dropout, the probabilities times V)
  // count mean_square_tokens / T^2 times those of T-token sequences, since a
  // sequence of L tokens has L^2 of them (CountCost, EstimateTrainingMemory).
  // 0: every sequence has T tokens.
  double mean_square_tokens = 0;

  // Appends `layer` (an empty name becomes "<kind>_<index>") and returns its
  // name. Nothing is checked until Finalize(); adding un-finalizes the network.
  const std::string& Append(Layer layer);

  // Builders: each appends one layer reading `input` (a layer name) and returns
  // the new layer's name, to chain: x = net.Relu(net.BatchNorm(net.Conv2d(x, ...))).
  std::string Conv2d(const std::string& input, const Conv2dAttrs& attrs,
                     const std::string& name = "");
  std::string Dense(const std::string& input, const DenseAttrs& attrs,
                    const std::string& name = "");
  std::string BatchNorm(const std::string& input, const BatchNormAttrs& attrs = {},
                        const std::string& name = "");
  std::string Relu(const std::string& input, const ReluAttrs& attrs = {},
                   const std::string& name = "");
  std::string AvgPool(const std::string& input, const PoolAttrs& attrs,
                      const std::string& name = "");
  std::string MaxPool(const std::string& input, const PoolAttrs& attrs,
                      const std::string& name = "");
  std::string GlobalAvgPool(const std::string& input, const std::string& name = "");
  std::string Add(const std::vector<std::string>& inputs, const std::string& name = "");
  std::string Flatten(const std::string& input, const std::string& name = "");
  std::string SoftmaxCrossEntropy(const std::string& input, const std::string& name = "");
  std::string Sigmoid(const std::string& input, const std::string& name = "");
  std::string Swish(const std::string& input, const std::string& name = "");
  // `input` times `scale` ({C} scales broadcast over a {C, H, W} input).
  std::string Mul(const std::string& input, const std::string& scale, const std::string& name = "");
  std::string Concat(const std::vector<std::string>& inputs, const std::string& name = "");
  std::string Lrn(const std::string& input, const LrnAttrs& attrs = {},
                  const std::string& name = "");
  std::string Embedding(const std::string& input, const EmbeddingAttrs& attrs,
                        const std::string& name = "");
  std::string PositionEmbedding(const std::string& input, int64_t max_positions,
                                const std::string& name = "");
  std::string SegmentEmbedding(const std::string& input, int64_t segments,
                               const std::string& name = "");
  std::string LayerNorm(const std::string& input, const NormAttrs& attrs = {},
                        const std::string& name = "");
  std::string RmsNorm(const std::string& input, const NormAttrs& attrs = {},
                      const std::string& name = "");
  std::string Gelu(const std::string& input, const GeluAttrs& attrs = {},
                   const std::string& name = "");
  std::string Tanh(const std::string& input, const std::string& name = "");
  std::string Dropout(const std::string& input, const DropoutAttrs& attrs = {},
                      const std::string& name = "");
  std::string SplitHeads(const std::string& input, int64_t heads, const std::string& name = "");
  std::string MergeHeads(const std::string& input, const std::string& name = "");
  // a times b (or b^T), times attrs.scale; see kBatchedMatmul.
  std::string BatchedMatmul(const std::string& a, const std::string& b, const MatmulAttrs& attrs,
                            const std::string& name = "");
  std::string Softmax(const std::string& input, const SoftmaxAttrs& attrs = {},
                      const std::string& name = "");
  std::string Rotary(const std::string& input, const RotaryAttrs& attrs = {},
                     const std::string& name = "");
  std::string SelectToken(const std::string& input, int64_t index = 0,
                          const std::string& name = "");
  std::string GatherTokens(const std::string& input, int64_t count, const std::string& name = "");
  std::string ClassToken(const std::string& input, const std::string& name = "");
  std::string ImageToSequence(const std::string& input, const std::string& name = "");

  // Validates the network and derives shapes, padding, consumers and parameter
  // tensors. Throws DataError(origin, origin_line, "layers[i] \"name\"", problem) naming
  // the first offending layer: unknown or later input, duplicate name, wrong
  // operand count, bad attribute, shape mismatch, empty output, missing loss,
  // a layer whose output nobody reads. Idempotent.
  void Finalize();
  bool finalized() const { return finalized_; }

  // All layers in topological order (layer 0 is the input, the last the loss).
  const std::vector<Layer>& layers() const { return layers_; }
  const Layer& layer(int id) const { return layers_.at(static_cast<size_t>(id)); }
  int size() const { return static_cast<int>(layers_.size()); }
  // Index of the layer named `name`, or -1.
  int LayerId(const std::string& layer_name) const;

  // After Finalize: the per-sample input shape, the number of classes the last
  // loss expects (its input's last dimension), and parameter totals (Keras
  // convention: total includes batch-norm moving statistics, trainable does not).
  const Shape& input_shape() const;
  int64_t num_classes() const;
  // After Finalize: the number of loss layers (1, or more for summed losses).
  int LossCount() const;
  // After Finalize: tokens per sample of a network that reads token ids (its
  // input {T} feeds an embedding), else 0.
  int64_t TokensPerSample() const;
  int64_t ParamCount() const;
  int64_t TrainableParamCount() const;

 private:
  void RequireFinalized() const;

  std::vector<Layer> layers_;
  bool finalized_ = false;
};

}  // namespace fitspeed

#endif  // FITSPEED_MODEL_NETWORK_H_
