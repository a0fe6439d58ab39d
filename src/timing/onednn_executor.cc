// The training step on oneDNN primitives (oneDNN 2.x C++ API, "op descriptor"
// style: https://oneapi-src.github.io/oneDNN/v2.6/).
//
// Layouts: every primitive is created with format `any` where it may choose
// (convolutions, inner products, pooling destinations), and tensors keep the
// layout their producer chose; a consumer that wants another layout gets a
// reorder, timed with the consumer. Gradients of a layer's output take its
// activation's layout; k > 1 incoming gradients are summed (one `sum`
// primitive, timed as the layer's backward-data, as fitspeed/model/network_cost.h
// counts it). Weights and their gradients share one layout, so the optimizer
// is elementwise over the whole buffer (padding included, which stays zero).
// All primitives share one user-managed scratchpad.
//
// Memory: parameters, their gradients and optimizer state, the input and the
// scratchpad have buffers of their own; every other buffer (activations,
// gradients of activations, reorder targets, workspaces) lives only from the
// first to the last operation of the step that touches it, and buffers whose
// lifetimes do not overlap share memory (one arena, placed greedily, largest
// first), as framework allocators reuse freed activations. Buffers whose layout
// has padding keep their own memory: primitives rely on zero padding.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "fitspeed/core/error.h"
#include "timing/executor.h"
#include "timing/optimizer.h"

namespace fitspeed::timing {

namespace {

using dnnl::memory;
using Dt = memory::data_type;
using Tag = memory::format_tag;

memory::dims TensorDims(const Shape& shape, int64_t batch) {
  switch (shape.rank()) {
    case 3:
      return {batch, shape.dims[0], shape.dims[1], shape.dims[2]};
    case 2:
      return {batch * shape.dims[0], shape.dims[1]};
    case 1:
      return {batch, shape.dims[0]};
    default:
      return {batch};
  }
}

Tag PlainTag(size_t ndims) {
  switch (ndims) {
    case 1:
      return Tag::a;
    case 2:
      return Tag::ab;
    case 3:
      return Tag::abc;
    case 4:
      return Tag::abcd;
    default:
      return Tag::abcde;
  }
}

memory::desc Plain(const memory::dims& dims, Dt dt) {
  return memory::desc(dims, dt, PlainTag(dims.size()));
}
memory::desc Any(const memory::dims& dims, Dt dt) { return memory::desc(dims, dt, Tag::any); }

float* F32(const memory& m) { return static_cast<float*>(m.get_data_handle()); }

// Flags of a batch or layer normalization that learns gamma (scale) and beta (shift).
dnnl::normalization_flags NormFlags(bool scale, bool shift) {
  auto flags = dnnl::normalization_flags::none;
  if (scale) flags |= dnnl::normalization_flags::use_scale;
  if (shift) flags |= dnnl::normalization_flags::use_shift;
  return flags;
}

// Elements above which a fitspeed loop runs on every thread.
constexpr int64_t kParallelElements = 65536;

class OnednnExecutor final : public StepExecutor {
 public:
  OnednnExecutor(const Network& network, const StepConfig& config);

  void SetInput(const std::vector<double>& values, const std::vector<int32_t>& labels) override;
  void SetParam(size_t i, const std::vector<double>& values) override;
  std::vector<double> Param(size_t i) const override;
  std::vector<double> Grad(size_t i) const override;
  GradientStorage MutableGrad(size_t i) override;
  std::vector<double> Output(int layer) const override;

 private:
  // A primitive and its arguments, run by an op's closure.
  struct PrimOp {
    dnnl::primitive primitive;
    std::unordered_map<int, memory> args;
    bool scratchpad = false;
  };
  // Storage of one parameter tensor: master weights, gradient, optimizer state
  // (all in `master`'s layout) and the canonical plain layout for readback.
  struct ParamStore {
    memory master, grad, state1, state2;
    memory::desc canonical;
  };
  // A buffer and the memory objects over it (views included). Step buffers
  // are live from the first to the last op touching them (op indices of the
  // forward-then-backward sequence).
  struct Buffer {
    size_t bytes = 0;
    bool own = false;  // its own allocation, not in the shared arena
    std::vector<memory> views;
    int64_t first = -1, last = -1;
    size_t offset = 0;
  };
  // A reorder already scheduled: `from` converted to `to`'s layout.
  struct Conversion {
    dnnl_memory_t from;
    memory::desc want;
    memory to;
  };
  using BackwardBuilder = std::function<void(const memory& diff_dst)>;
  // What the backward pass of a layer with a weights tensor (convolution,
  // inner product) needs from its forward pass.
  struct Weighted {
    memory src, weights;      // as the forward primitive read them
    size_t kernel = 0;        // ParamRef index of the kernel (a tied dense layer: the table)
    int bias = -1;            // ParamRef index of the bias, or -1
    bool accumulate = false;  // add dW to the kernel's gradient instead of writing it
  };

  double loss() const override {
    double sum = 0;
    for (double part : loss_parts_) sum += part;
    return sum;
  }

  // A buffer for `desc`; `own`: kept for the executor's life (parameters,
  // input, scratchpad), else a step buffer that may share the arena.
  memory NewMemory(const memory::desc& desc, bool own = false);
  memory View(const memory::desc& desc, const memory& base);
  // Records that the next op touches `m` (no-op for memory of no buffer).
  void Touch(const memory& m);
  // AddOp for a custom op that reads or writes `touched`.
  void AddCustom(Phase phase, int layer, Pass pass, std::function<void()> run,
                 const std::vector<memory>& touched);
  // Places the step buffers, allocates, points every memory object at its bytes.
  void AllocateBuffers();
  void AddPrimitive(Phase phase, int layer, Pass pass, const dnnl::primitive_desc_base& pd,
                    std::unordered_map<int, memory> args);
  memory Converted(Phase phase, int layer, Pass pass, const memory& from, const memory::desc& want);
  void ReorderNow(const memory& from, const memory& to) const;
  size_t ParamIndex(int layer, const std::string& name) const;
  void DefineParam(size_t index, const memory::desc& master, const memory::desc& canonical);
  void AddEdge(int producer, const memory& diff) {
    edges_[static_cast<size_t>(producer)].push_back(diff);
  }
  memory ResolveDiff(int layer);

  // Shared wiring of the builders.
  // The forward primitive `fwd` of layer l, writing a new output act_[l].
  memory AddForward(int l, const dnnl::primitive_desc_base& fwd,
                    std::unordered_map<int, memory> args);
  // A backward-data primitive of layer l: diff_dst converted to its layout,
  // a new diff_src returned (the caller passes it to the input's gradient).
  memory AddBackwardData(int l, const dnnl::primitive_desc_base& bwd, const memory& diff_dst,
                         std::unordered_map<int, memory> args = {});
  // The workspace of `fwd` added to `args` (and returned), or no memory.
  memory AddWorkspace(const dnnl::primitive_desc_base& fwd, std::unordered_map<int, memory>& args);
  // Convolution and inner product: kernel (defined here unless `tied`) and
  // bias, the master weights and the input in the forward primitive's
  // layouts, the forward primitive; then the backward-data and
  // backward-weights primitives with their conversions.
  Weighted AddWeightedForward(int l, const dnnl::primitive_desc_base& fwd,
                              const dnnl::primitive_desc_base& bwd_w, size_t kernel, bool tied,
                              const memory::desc& canonical, const memory::desc& bias_md);
  void AddWeightedBackwardData(int l, const dnnl::primitive_desc_base& bwd_d,
                               const memory& diff_dst, const Weighted& w);
  void AddWeightedBackwardWeights(int l, const dnnl::primitive_desc_base& bwd_w,
                                  const memory& diff_dst, const Weighted& w);
  // A fitspeed loop (AddCustom, implementation "fitspeed").
  void AddLoop(Phase phase, int l, Pass pass, std::function<void()> run,
               const std::vector<memory>& touched);
  // `m` as a plain tensor of data type `dt`, converted (and timed with
  // (l, pass)) where it is not one already.
  memory AsPlain(Phase phase, int l, Pass pass, const memory& m, Dt dt);
  // Fitspeed loops on plain FP32 tensors (their conversions timed with the
  // layer; no-ops in FP32): the output of layer `input`, the gradient of
  // layer l's output, as FP32 inputs of a loop;
  memory F32Input(int l, int input) {
    return AsPlain(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(input)], Dt::f32);
  }
  memory F32Diff(int l, Pass pass, const memory& diff_dst) {
    return AsPlain(Phase::kBackward, l, pass, diff_dst, Dt::f32);
  }
  // a forward loop `run(y)` writing layer l's output y (a new FP32 tensor of
  // `md`, stored in the activations' data type) from `reads`;
  void AddF32Output(int l, const memory::desc& md, std::function<void(float*)> run,
                    std::vector<memory> reads);
  // a backward-data loop `run(dx)` writing the gradient of layer `input`'s
  // output (a new FP32 tensor of `md`, passed on in the activations' data type).
  void AddF32Gradient(int l, int input, const memory::desc& md, std::function<void(float*)> run,
                      std::vector<memory> reads);
  // Copies `from` into a new plain tensor of from_view's dims through one
  // reorder that reads `from`'s bytes as `from_view` (permuted strides).
  memory Transposed(Phase phase, int l, Pass pass, const memory& from,
                    const memory::desc& from_view);
  // A batched matmul primitive dst = scale * src x weights for (l, pass), each
  // operand a view of its buffer.
  void AddMatmul(Phase phase, int l, Pass pass, const memory& src, const memory::desc& src_md,
                 const memory& weights, const memory::desc& weights_md, const memory& dst,
                 double scale);

  BackwardBuilder BuildInput(int l);
  BackwardBuilder BuildConv(int l);
  BackwardBuilder BuildDense(int l);
  BackwardBuilder BuildBatchNorm(int l);
  BackwardBuilder BuildRelu(int l);
  BackwardBuilder BuildPool(int l);
  BackwardBuilder BuildGlobalAvgPool(int l);
  BackwardBuilder BuildAdd(int l);
  BackwardBuilder BuildFlatten(int l);
  BackwardBuilder BuildLoss(int l);
  // ReLU, sigmoid (eltwise_logistic), swish (eltwise_swish, alpha 1), GELU
  // (eltwise_gelu_erf, eltwise_gelu_tanh) and tanh (eltwise_tanh).
  BackwardBuilder BuildEltwise(int l, dnnl::algorithm alg, float alpha, float beta = 0.0f);
  BackwardBuilder BuildSigmoid(int l) {
    return BuildEltwise(l, dnnl::algorithm::eltwise_logistic, 0.0f);
  }
  BackwardBuilder BuildSwish(int l) {
    return BuildEltwise(l, dnnl::algorithm::eltwise_swish, 1.0f);
  }
  BackwardBuilder BuildGelu(int l) {
    return BuildEltwise(l,
                        network().layer(l).gelu.tanh_approximation
                            ? dnnl::algorithm::eltwise_gelu_tanh
                            : dnnl::algorithm::eltwise_gelu_erf,
                        0.0f);
  }
  BackwardBuilder BuildTanh(int l) { return BuildEltwise(l, dnnl::algorithm::eltwise_tanh, 0.0f); }
  BackwardBuilder BuildMul(int l);
  BackwardBuilder BuildConcat(int l);
  BackwardBuilder BuildLrn(int l);
  BackwardBuilder BuildEmbedding(int l);
  // Position and segment embeddings: a table row added to each token.
  BackwardBuilder BuildAddedEmbedding(int l);
  BackwardBuilder BuildLayerNorm(int l);
  BackwardBuilder BuildRmsNorm(int l);
  BackwardBuilder BuildDropout(int l);
  // Split and merge heads: per sample {A, B, C} -> {B, A, C}.
  BackwardBuilder BuildHeads(int l);
  BackwardBuilder BuildBatchedMatmul(int l);
  BackwardBuilder BuildSoftmax(int l);
  BackwardBuilder BuildRotary(int l);
  // Select token and gather tokens: rows of a {T, F} sequence.
  BackwardBuilder BuildTakeRows(int l);
  BackwardBuilder BuildClassToken(int l);
  BackwardBuilder BuildImageToSequence(int l);
  BackwardBuilder BuildRouter(int l);
  // The builder of each kind: adds its forward ops and returns what adds its
  // backward ones.
  using Builder = BackwardBuilder (OnednnExecutor::*)(int);
  static const KindTable<Builder>& Builders();
  void BuildUpdates();
  void AllocateScratchpad();
  // Fills slots_ from the allocated parameter buffers.
  void PointUpdateSlots();

  memory::dims Dims(int layer) const {
    return TensorDims(network().layer(layer).output_shape, config().batch);
  }
  bool GradNeeded(int layer) const { return grad_needed_[static_cast<size_t>(layer)]; }

  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  mutable dnnl::stream stream_{engine_};
  Dt act_dt_ = Dt::f32;
  dnnl::primitive_attr attr_;
  std::vector<bool> grad_needed_;
  std::vector<memory> act_;                 // per layer: its output
  std::vector<std::vector<memory>> edges_;  // per layer: gradients of its output, one per consumer
  std::vector<ParamStore> stores_;          // per ParamRef
  std::vector<std::unique_ptr<PrimOp>> prim_ops_;
  std::vector<Conversion> conversions_;
  std::vector<Buffer> buffers_;
  std::unordered_map<dnnl_memory_t, size_t> buffer_of_;
  int64_t op_index_ = 0;  // forward and backward ops added so far
  std::vector<std::unique_ptr<char, void (*)(void*)>> allocations_;
  size_t scratchpad_bytes_ = 0;
  memory scratchpad_;
  std::vector<UpdateSlot<float>> slots_;  // trainable tensors, for the fused update
  std::vector<int32_t> labels_;           // every loss's labels (LabelLayout)
  std::vector<double> loss_parts_;        // per loss (LabelLayout order): its mean over its rows
};

OnednnExecutor::OnednnExecutor(const Network& network, const StepConfig& config)
    : StepExecutor(network, config) {
  const ThreadScope threads(config.threads);
  RequirePrecisionSupported(config.precision);
  act_dt_ = config.precision == Precision::kMixed ? Dt::bf16 : Dt::f32;
  attr_.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  grad_needed_ = GradientsNeeded(network);
  labels_.assign(static_cast<size_t>(LabelCount(network, config.batch)), 0);
  loss_parts_.assign(LabelLayout(network, config.batch).size(), 0.0);
  const size_t n = static_cast<size_t>(network.size());
  act_.resize(n);
  edges_.resize(n);
  stores_.resize(params().size());
  std::vector<BackwardBuilder> backward(n);
  int current = 0;
  try {
    for (int l = 0; l < network.size(); ++l) {
      current = l;
      const auto build = Builders()[static_cast<size_t>(network.layer(l).kind)].second;
      backward[l] = (this->*build)(l);
    }
    // Backward in reverse topological order: a layer's gradient is complete
    // once every consumer (all later layers) has contributed its part.
    for (int l = network.size() - 1; l >= 1; --l) {
      current = l;
      if (!GradNeeded(l) || !backward[l]) continue;
      backward[l](IsLoss(network.layer(l)) ? memory() : ResolveDiff(l));
    }
    BuildUpdates();
    AllocateScratchpad();
    AllocateBuffers();
    if (!config.dry_run) PointUpdateSlots();
  } catch (const dnnl::error& e) {
    const Layer& layer = network.layer(current);
    throw UsageError(
        fmt::format("oneDNN cannot run layer '{}' ({}) of network '{}' at batch {}: {}", layer.name,
                    LayerKindName(layer.kind), network.name, config.batch, e.what()));
  }
  if (!config.dry_run) {
    for (size_t i = 0; i < params().size(); ++i) {
      SetParam(i, InitialParam(network, params()[i], config.seed));
    }
    SetInput(InitialInput(network, config.batch, config.seed),
             InitialLabels(network, config.batch, config.seed));
  }
}

const KindTable<OnednnExecutor::Builder>& OnednnExecutor::Builders() {
  using E = OnednnExecutor;
  static constexpr KindTable<Builder> kBuilders = {{
      {LayerKind::kInput, &E::BuildInput},
      {LayerKind::kConv2d, &E::BuildConv},
      {LayerKind::kDense, &E::BuildDense},
      {LayerKind::kBatchNorm, &E::BuildBatchNorm},
      {LayerKind::kRelu, &E::BuildRelu},
      {LayerKind::kAvgPool, &E::BuildPool},
      {LayerKind::kMaxPool, &E::BuildPool},
      {LayerKind::kGlobalAvgPool, &E::BuildGlobalAvgPool},
      {LayerKind::kAdd, &E::BuildAdd},
      {LayerKind::kFlatten, &E::BuildFlatten},
      {LayerKind::kSoftmaxCrossEntropy, &E::BuildLoss},
      {LayerKind::kSigmoid, &E::BuildSigmoid},
      {LayerKind::kSwish, &E::BuildSwish},
      {LayerKind::kMul, &E::BuildMul},
      {LayerKind::kConcat, &E::BuildConcat},
      {LayerKind::kLrn, &E::BuildLrn},
      {LayerKind::kEmbedding, &E::BuildEmbedding},
      {LayerKind::kPositionEmbedding, &E::BuildAddedEmbedding},
      {LayerKind::kSegmentEmbedding, &E::BuildAddedEmbedding},
      {LayerKind::kLayerNorm, &E::BuildLayerNorm},
      {LayerKind::kRmsNorm, &E::BuildRmsNorm},
      {LayerKind::kGelu, &E::BuildGelu},
      {LayerKind::kTanh, &E::BuildTanh},
      {LayerKind::kDropout, &E::BuildDropout},
      {LayerKind::kSplitHeads, &E::BuildHeads},
      {LayerKind::kMergeHeads, &E::BuildHeads},
      {LayerKind::kBatchedMatmul, &E::BuildBatchedMatmul},
      {LayerKind::kSoftmax, &E::BuildSoftmax},
      {LayerKind::kRotary, &E::BuildRotary},
      {LayerKind::kSelectToken, &E::BuildTakeRows},
      {LayerKind::kGatherTokens, &E::BuildTakeRows},
      {LayerKind::kClassToken, &E::BuildClassToken},
      {LayerKind::kImageToSequence, &E::BuildImageToSequence},
      {LayerKind::kRouter, &E::BuildRouter},
  }};
  static_assert(InKindOrder(kBuilders), "every LayerKind needs a oneDNN builder, in order");
  return kBuilders;
}

memory OnednnExecutor::NewMemory(const memory::desc& desc, bool own) {
  memory m(desc, engine_, DNNL_MEMORY_NONE);
  Buffer b;
  b.bytes = desc.get_size();
  // Padded layouts keep their own zero-filled bytes (see the file comment).
  size_t elements = 1;
  for (memory::dim d : desc.dims()) elements *= static_cast<size_t>(d);
  const size_t unpadded = elements * memory::data_type_size(desc.data_type());
  b.own = own || b.bytes != unpadded || !config().reuse_memory;
  b.views.push_back(m);
  buffer_of_[m.get()] = buffers_.size();
  buffers_.push_back(std::move(b));
  return m;
}

memory OnednnExecutor::View(const memory::desc& desc, const memory& base) {
  memory v(desc, engine_, DNNL_MEMORY_NONE);
  const size_t id = buffer_of_.at(base.get());
  buffers_[id].views.push_back(v);
  buffer_of_[v.get()] = id;
  return v;
}

void OnednnExecutor::Touch(const memory& m) {
  const auto it = buffer_of_.find(m.get());
  if (it == buffer_of_.end()) return;
  Buffer& b = buffers_[it->second];
  if (b.first < 0) b.first = op_index_;
  b.last = op_index_;
}

void OnednnExecutor::AddCustom(Phase phase, int layer, Pass pass, std::function<void()> run,
                               const std::vector<memory>& touched) {
  for (const memory& m : touched) Touch(m);
  if (phase != Phase::kUpdate) ++op_index_;
  AddOp(phase, layer, pass, std::move(run));
}

void OnednnExecutor::AllocateBuffers() {
  // Greedy placement of the step buffers, largest first: each goes to the
  // lowest offset where it overlaps no placed buffer live at the same time.
  constexpr size_t kAlign = 64;
  auto round_up = [](size_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
  std::vector<size_t> order;
  double own_bytes = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (buffers_[i].own) {
      own_bytes += static_cast<double>(buffers_[i].bytes);
    } else {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers_[a].bytes > buffers_[b].bytes; });
  std::vector<size_t> placed;
  size_t arena = 0;
  for (size_t i : order) {
    Buffer& b = buffers_[i];
    std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of live placed buffers
    for (size_t j : placed) {
      const Buffer& o = buffers_[j];
      if (o.first <= b.last && b.first <= o.last) busy.emplace_back(o.offset, o.offset + o.bytes);
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [start, end] : busy) {
      if (offset + b.bytes <= start) break;
      offset = std::max(offset, round_up(end));
    }
    b.offset = offset;
    arena = std::max(arena, offset + b.bytes);
    placed.push_back(i);
  }
  CountBytes(own_bytes + static_cast<double>(arena));
  if (config().dry_run) return;

  auto allocate = [&](size_t bytes) {
    void* p = std::aligned_alloc(kAlign, round_up(std::max<size_t>(bytes, 1)));
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    allocations_.emplace_back(static_cast<char*>(p), std::free);
    return static_cast<char*>(p);
  };
  char* shared = arena > 0 ? allocate(arena) : nullptr;
  for (Buffer& b : buffers_) {
    char* data = b.own ? allocate(b.bytes) : shared + b.offset;
    for (memory& v : b.views) v.set_data_handle(data);
  }
}

void OnednnExecutor::AddPrimitive(Phase phase, int layer, Pass pass,
                                  const dnnl::primitive_desc_base& pd,
                                  std::unordered_map<int, memory> args) {
  const size_t scratch = pd.scratchpad_desc().get_size();
  scratchpad_bytes_ = std::max(scratchpad_bytes_, scratch);
  const char* impl = pd.impl_info_str();
  SetImplementation(layer, pass,
                    pd.get_kind() == dnnl::primitive::kind::reorder
                        ? fmt::format("reorder({})", impl)
                        : std::string(impl));
  for (const auto& arg : args) Touch(arg.second);
  if (phase != Phase::kUpdate) ++op_index_;
  if (config().dry_run) return;
  auto op = std::make_unique<PrimOp>();
  op->primitive = dnnl::primitive(pd.get());
  op->args = std::move(args);
  op->scratchpad = scratch > 0;
  PrimOp* raw = op.get();
  prim_ops_.push_back(std::move(op));
  AddOp(phase, layer, pass, [this, raw] { raw->primitive.execute(stream_, raw->args); });
}

memory OnednnExecutor::Converted(Phase phase, int layer, Pass pass, const memory& from,
                                 const memory::desc& want) {
  if (from.get_desc() == want) return from;
  for (const Conversion& c : conversions_) {
    if (c.from == from.get() && c.want == want) return c.to;
  }
  memory to = NewMemory(want);
  dnnl::reorder::primitive_desc pd(engine_, from.get_desc(), engine_, want, attr_);
  AddPrimitive(phase, layer, pass, pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  conversions_.push_back({from.get(), want, to});
  return to;
}

void OnednnExecutor::ReorderNow(const memory& from, const memory& to) const {
  dnnl::reorder(from, to).execute(stream_, const_cast<memory&>(from), const_cast<memory&>(to));
  stream_.wait();
}

size_t OnednnExecutor::ParamIndex(int layer, const std::string& name) const {
  for (size_t i = 0; i < params().size(); ++i) {
    const ParamRef& p = params()[i];
    if (p.layer == layer && network().layer(layer).params[p.index].name == name) return i;
  }
  CheckFailed("parameter exists", __FILE__, __LINE__,
              fmt::format("layer {} has no parameter '{}'", layer, name));
}

void OnednnExecutor::DefineParam(size_t index, const memory::desc& master,
                                 const memory::desc& canonical) {
  ParamStore& s = stores_.at(index);
  s.canonical = canonical;
  s.master = NewMemory(master, true);
  if (!params()[index].trainable) return;
  s.grad = NewMemory(master, true);
  const int states = OptimizerStatePerParam(config().optimizer);
  if (states >= 1) s.state1 = NewMemory(master, true);
  if (states >= 2) s.state2 = NewMemory(master, true);
}

memory OnednnExecutor::ResolveDiff(int l) {
  const std::vector<memory>& edges = edges_[static_cast<size_t>(l)];
  FITSPEED_CHECK(!edges.empty(), fmt::format("layer {} needs a gradient nobody computes", l));
  const memory::desc want = act_[static_cast<size_t>(l)].get_desc();
  if (edges.size() == 1) {
    return Converted(Phase::kBackward, l, Pass::kBackwardData, edges[0], want);
  }
  std::vector<memory::desc> srcs;
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i < edges.size(); ++i) {
    srcs.push_back(edges[i].get_desc());
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = edges[i];
  }
  dnnl::sum::primitive_desc pd(want, std::vector<float>(edges.size(), 1.0f), srcs, engine_, attr_);
  memory sum = NewMemory(pd.dst_desc());
  args[DNNL_ARG_DST] = sum;
  AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, pd, std::move(args));
  return sum;
}

memory OnednnExecutor::AddForward(int l, const dnnl::primitive_desc_base& fwd,
                                  std::unordered_map<int, memory> args) {
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc(0));
  args[DNNL_ARG_DST] = dst;
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, std::move(args));
  return dst;
}

memory OnednnExecutor::AddBackwardData(int l, const dnnl::primitive_desc_base& bwd,
                                       const memory& diff_dst,
                                       std::unordered_map<int, memory> args) {
  args[DNNL_ARG_DIFF_DST] =
      Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd.diff_dst_desc(0));
  const memory diff_src = NewMemory(bwd.diff_src_desc(0));
  args[DNNL_ARG_DIFF_SRC] = diff_src;
  AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, bwd, std::move(args));
  return diff_src;
}

memory OnednnExecutor::AddWorkspace(const dnnl::primitive_desc_base& fwd,
                                    std::unordered_map<int, memory>& args) {
  if (fwd.workspace_desc().get_size() == 0) return memory();
  const memory ws = NewMemory(fwd.workspace_desc());
  args[DNNL_ARG_WORKSPACE] = ws;
  return ws;
}

OnednnExecutor::Weighted OnednnExecutor::AddWeightedForward(
    int l, const dnnl::primitive_desc_base& fwd, const dnnl::primitive_desc_base& bwd_w,
    size_t kernel, bool tied, const memory::desc& canonical, const memory::desc& bias_md) {
  Weighted w;
  w.kernel = kernel;
  // FP32 master weights in the forward primitive's layout; in BF16 in the
  // gradient's layout, converted every step (as autocast does). A tied
  // kernel is the embedding's plain table, converted every step.
  if (!tied) {
    DefineParam(kernel, act_dt_ == Dt::f32 ? fwd.weights_desc(0) : bwd_w.diff_weights_desc(0),
                canonical);
  }
  w.weights =
      Converted(Phase::kForward, l, Pass::kForward, stores_[kernel].master, fwd.weights_desc(0));
  const int in = network().layer(l).input_ids[0];
  w.src =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], fwd.src_desc(0));
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, w.src}, {DNNL_ARG_WEIGHTS, w.weights}};
  if (!bias_md.is_zero()) {
    w.bias = static_cast<int>(ParamIndex(l, "bias"));
    DefineParam(static_cast<size_t>(w.bias), bias_md, bias_md);
    args[DNNL_ARG_BIAS] = stores_[static_cast<size_t>(w.bias)].master;
  }
  AddForward(l, fwd, std::move(args));
  return w;
}

void OnednnExecutor::AddWeightedBackwardData(int l, const dnnl::primitive_desc_base& bwd_d,
                                             const memory& diff_dst, const Weighted& w) {
  const memory weights =
      Converted(Phase::kBackward, l, Pass::kBackwardData, w.weights, bwd_d.weights_desc(0));
  AddEdge(network().layer(l).input_ids[0],
          AddBackwardData(l, bwd_d, diff_dst, {{DNNL_ARG_WEIGHTS, weights}}));
}

void OnednnExecutor::AddWeightedBackwardWeights(int l, const dnnl::primitive_desc_base& bwd_w,
                                                const memory& diff_dst, const Weighted& w) {
  const memory dd =
      Converted(Phase::kBackward, l, Pass::kBackwardWeights, diff_dst, bwd_w.diff_dst_desc(0));
  const memory s = Converted(Phase::kBackward, l, Pass::kBackwardWeights, w.src, bwd_w.src_desc(0));
  const memory grad = stores_[w.kernel].grad;
  const bool direct = !w.accumulate && bwd_w.diff_weights_desc(0) == grad.get_desc();
  const memory dw = direct ? grad : NewMemory(bwd_w.diff_weights_desc(0));
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, s}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}};
  if (w.bias >= 0) args[DNNL_ARG_DIFF_BIAS] = stores_[static_cast<size_t>(w.bias)].grad;
  AddPrimitive(Phase::kBackward, l, Pass::kBackwardWeights, bwd_w, std::move(args));
  if (direct) return;
  if (!w.accumulate) {
    dnnl::reorder::primitive_desc pd(engine_, dw.get_desc(), engine_, grad.get_desc(), attr_);
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardWeights, pd,
                 {{DNNL_ARG_FROM, dw}, {DNNL_ARG_TO, grad}});
    return;
  }
  // A table that another tied layer's gradient was written to first: add this part.
  const memory part = Converted(Phase::kBackward, l, Pass::kBackwardWeights, dw, grad.get_desc());
  const int64_t count = static_cast<int64_t>(grad.get_desc().get_size() / sizeof(float));
  AddLoop(Phase::kBackward, l, Pass::kBackwardWeights,
          [=] {
            const float* p = F32(part);
            float* g = F32(grad);
#pragma omp parallel for schedule(static) if (count > kParallelElements)
            for (int64_t i = 0; i < count; ++i) g[i] += p[i];
          },
          {part});
}

void OnednnExecutor::AddLoop(Phase phase, int l, Pass pass, std::function<void()> run,
                             const std::vector<memory>& touched) {
  AddCustom(phase, l, pass, std::move(run), touched);
  SetImplementation(l, pass, "fitspeed");
}

memory OnednnExecutor::AsPlain(Phase phase, int l, Pass pass, const memory& m, Dt dt) {
  return Converted(phase, l, pass, m, Plain(m.get_desc().dims(), dt));
}

void OnednnExecutor::AddF32Output(int l, const memory::desc& md, std::function<void(float*)> run,
                                  std::vector<memory> reads) {
  const memory y = NewMemory(md);
  reads.push_back(y);
  AddLoop(
      Phase::kForward, l, Pass::kForward, [run, y] { run(F32(y)); }, reads);
  act_[static_cast<size_t>(l)] = AsPlain(Phase::kForward, l, Pass::kForward, y, act_dt_);
}

void OnednnExecutor::AddF32Gradient(int l, int input, const memory::desc& md,
                                    std::function<void(float*)> run, std::vector<memory> reads) {
  const memory dx = NewMemory(md);
  reads.push_back(dx);
  AddLoop(
      Phase::kBackward, l, Pass::kBackwardData, [run, dx] { run(F32(dx)); }, reads);
  AddEdge(input, AsPlain(Phase::kBackward, l, Pass::kBackwardData, dx, act_dt_));
}

memory OnednnExecutor::Transposed(Phase phase, int l, Pass pass, const memory& from,
                                  const memory::desc& from_view) {
  const memory::desc to_md = Plain(from_view.dims(), from_view.data_type());
  const memory to = NewMemory(to_md);
  dnnl::reorder::primitive_desc pd(engine_, from_view, engine_, to_md, attr_);
  AddPrimitive(phase, l, pass, pd, {{DNNL_ARG_FROM, View(from_view, from)}, {DNNL_ARG_TO, to}});
  return to;
}

void OnednnExecutor::AddMatmul(Phase phase, int l, Pass pass, const memory& src,
                               const memory::desc& src_md, const memory& weights,
                               const memory::desc& weights_md, const memory& dst, double scale) {
  // A fresh attribute: a copy of attr_ would share (and change) its handle.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (scale != 1.0) attr.set_output_scales(0, {static_cast<float>(scale)});
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, weights_md, dst.get_desc()), attr,
                                  engine_);
  AddPrimitive(phase, l, pass, pd,
               {{DNNL_ARG_SRC, View(src_md, src)},
                {DNNL_ARG_WEIGHTS, View(weights_md, weights)},
                {DNNL_ARG_DST, dst}});
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildInput(int l) {
  // Token ids are whole numbers: s32 at both precisions (bf16 holds 8 bits).
  const Dt dt = InputVocab(network()) > 0 ? Dt::s32 : act_dt_;
  act_[static_cast<size_t>(l)] = NewMemory(Plain(Dims(l), dt), true);
  return nullptr;
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildConv(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const Conv2dAttrs& a = layer.conv;
  const Window2d& w = a.window;
  const int64_t groups = a.groups, out = a.out_channels, c = is.channels();
  const memory::dims src_dims = Dims(in), dst_dims = Dims(l);
  const memory::dims wei_dims =
      groups == 1 ? memory::dims{out, c, w.kernel_h, w.kernel_w}
                  : memory::dims{groups, out / groups, c / groups, w.kernel_h, w.kernel_w};
  const memory::dims strides{w.stride_h, w.stride_w}, pad_l{w.pad_top, w.pad_left},
      pad_r{w.pad_bottom, w.pad_right};
  const memory::desc bias_md = a.bias ? Plain({out}, Dt::f32) : memory::desc();
  const auto alg = dnnl::algorithm::convolution_direct;
  const memory::desc src_md = Any(src_dims, act_dt_), dst_md = Any(dst_dims, act_dt_),
                     wei_md = Any(wei_dims, act_dt_);

  dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, src_md, wei_md,
                                      bias_md, dst_md, strides, pad_l, pad_r),
      attr_, engine_);
  // FP32 weight gradients at both precisions.
  dnnl::convolution_backward_weights::primitive_desc bwd_w(
      dnnl::convolution_backward_weights::desc(alg, src_md, Any(wei_dims, Dt::f32), bias_md, dst_md,
                                               strides, pad_l, pad_r),
      attr_, engine_, fwd);
  const Weighted weighted = AddWeightedForward(
      l, fwd, bwd_w, ParamIndex(l, "kernel"), false,
      memory::desc(wei_dims, Dt::f32, groups == 1 ? Tag::oihw : Tag::goihw), bias_md);
  return [=](const memory& diff_dst) {
    if (GradNeeded(in)) {
      dnnl::convolution_backward_data::primitive_desc bwd_d(
          dnnl::convolution_backward_data::desc(alg, src_md, wei_md, dst_md, strides, pad_l, pad_r),
          attr_, engine_, fwd);
      AddWeightedBackwardData(l, bwd_d, diff_dst, weighted);
    }
    AddWeightedBackwardWeights(l, bwd_w, diff_dst, weighted);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildDense(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const memory::dims src_dims = Dims(in), dst_dims = Dims(l);
  const int64_t units = layer.dense.units, features = src_dims[1];
  const memory::dims wei_dims{units, features};
  const memory::desc src_md = Plain(src_dims, act_dt_), dst_md = Plain(dst_dims, act_dt_);
  const memory::desc bias_md = layer.dense.bias ? Plain({units}, Dt::f32) : memory::desc();
  // A tied kernel is the embedding's plain {vocab, dim} table (Press & Wolf
  // 2017): its gradient is written plain, directly into the table's.
  const int tied = TiedEmbedding(network(), l);
  const memory::desc grad_md = tied >= 0 ? Plain(wei_dims, Dt::f32) : Any(wei_dims, Dt::f32);

  dnnl::inner_product_forward::primitive_desc fwd(
      dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, src_md,
                                        Any(wei_dims, act_dt_), bias_md, dst_md),
      attr_, engine_);
  dnnl::inner_product_backward_weights::primitive_desc bwd_w(
      dnnl::inner_product_backward_weights::desc(src_md, grad_md, bias_md, dst_md), attr_, engine_,
      fwd);
  const size_t kernel = tied >= 0 ? ParamIndex(tied, "table") : ParamIndex(l, "kernel");
  Weighted weighted =
      AddWeightedForward(l, fwd, bwd_w, kernel, tied >= 0, Plain(wei_dims, Dt::f32), bias_md);
  // The backward pass runs the layers in reverse: the last layer tied to a
  // table writes its gradient, earlier ones (and the embedding) add to it.
  for (int later = l + 1; later < network().size() && tied >= 0; ++later) {
    weighted.accumulate = weighted.accumulate || TiedEmbedding(network(), later) == tied;
  }
  return [=](const memory& diff_dst) {
    if (GradNeeded(in)) {
      dnnl::inner_product_backward_data::primitive_desc bwd_d(
          dnnl::inner_product_backward_data::desc(src_md, Any(wei_dims, act_dt_), dst_md), attr_,
          engine_, fwd);
      AddWeightedBackwardData(l, bwd_d, diff_dst, weighted);
    }
    AddWeightedBackwardWeights(l, bwd_w, diff_dst, weighted);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildRouter(int l) {
  // The logits by an inner product (a dense layer without bias), then a
  // softmax primitive in place: the layer's output is the probabilities.
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const memory::dims src_dims = Dims(in), dst_dims = Dims(l);
  const int64_t experts = layer.router.experts, features = src_dims[1];
  const memory::dims wei_dims{experts, features};
  const memory::desc src_md = Plain(src_dims, act_dt_), dst_md = Plain(dst_dims, act_dt_);
  dnnl::inner_product_forward::primitive_desc fwd(
      dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, src_md,
                                        Any(wei_dims, act_dt_), memory::desc(), dst_md),
      attr_, engine_);
  dnnl::inner_product_backward_weights::primitive_desc bwd_w(
      dnnl::inner_product_backward_weights::desc(src_md, Any(wei_dims, Dt::f32), memory::desc(),
                                                 dst_md),
      attr_, engine_, fwd);
  const Weighted weighted = AddWeightedForward(l, fwd, bwd_w, ParamIndex(l, "kernel"), false,
                                               Plain(wei_dims, Dt::f32), memory::desc());
  const memory p = act_[static_cast<size_t>(l)];
  dnnl::softmax_forward::primitive_desc softmax(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, dst_md, 1), attr_, engine_);
  AddPrimitive(Phase::kForward, l, Pass::kForward, softmax, {{DNNL_ARG_SRC, p}, {DNNL_ARG_DST, p}});
  return [=](const memory& diff_dst) {
    // The logits' gradient g = p*(dy - sum(dy*p)) (timed with the kernel's
    // gradient, as CountCost counts it), then dx = g W and dW = g^T x.
    dnnl::softmax_backward::primitive_desc softmax_bwd(
        dnnl::softmax_backward::desc(dst_md, dst_md, 1), attr_, engine_, softmax);
    const memory dy = Converted(Phase::kBackward, l, Pass::kBackwardWeights, diff_dst,
                                softmax_bwd.diff_dst_desc());
    const memory g = NewMemory(softmax_bwd.diff_src_desc());
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardWeights, softmax_bwd,
                 {{DNNL_ARG_DST, p}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, g}});
    if (GradNeeded(in)) {
      dnnl::inner_product_backward_data::primitive_desc bwd_d(
          dnnl::inner_product_backward_data::desc(src_md, Any(wei_dims, act_dt_), dst_md), attr_,
          engine_, fwd);
      AddWeightedBackwardData(l, bwd_d, g, weighted);
    }
    AddWeightedBackwardWeights(l, bwd_w, g, weighted);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildBatchNorm(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const BatchNormAttrs& a = layer.batch_norm;
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc data_md = src.get_desc();
  const int64_t channels = Dims(in)[1];
  const memory::desc vec_md = Plain({channels}, Dt::f32);
  const dnnl::normalization_flags flags = NormFlags(a.scale, a.center);
  const float eps = static_cast<float>(a.epsilon);

  dnnl::batch_normalization_forward::primitive_desc fwd(
      dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, data_md, eps,
                                              flags),
      attr_, engine_);
  const memory mean = NewMemory(fwd.mean_desc()), var = NewMemory(fwd.variance_desc());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}};
  for (const std::string name : {"gamma", "beta", "moving_mean", "moving_variance"}) {
    const bool present = (name != "gamma" || a.scale) && (name != "beta" || a.center);
    if (present) DefineParam(ParamIndex(l, name), vec_md, vec_md);
  }
  size_t gamma = 0, beta = 0;
  if (a.scale) {
    gamma = ParamIndex(l, "gamma");
    args[DNNL_ARG_SCALE] = stores_[gamma].master;
  }
  if (a.center) {
    beta = ParamIndex(l, "beta");
    args[DNNL_ARG_SHIFT] = stores_[beta].master;
  }
  AddForward(l, fwd, std::move(args));
  // Moving statistics (Keras): moving = momentum*moving + (1-momentum)*batch.
  const memory moving_mean = stores_[ParamIndex(l, "moving_mean")].master;
  const memory moving_var = stores_[ParamIndex(l, "moving_variance")].master;
  const double momentum = a.momentum;
  AddCustom(Phase::kForward, l, Pass::kForward,
            [=] {
              MovingAverage(F32(moving_mean), F32(mean), channels, momentum);
              MovingAverage(F32(moving_var), F32(var), channels, momentum);
            },
            {mean, var});

  const bool trainable = layer.has_trainable_params();
  return [=](const memory& diff_dst) {
    dnnl::batch_normalization_backward::primitive_desc bwd(
        dnnl::batch_normalization_backward::desc(
            trainable ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data, data_md,
            data_md, eps, flags),
        attr_, engine_, fwd);
    std::unordered_map<int, memory> bargs{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}};
    if (a.scale) {
      bargs[DNNL_ARG_SCALE] = stores_[gamma].master;
      bargs[DNNL_ARG_DIFF_SCALE] = stores_[gamma].grad;
    }
    if (a.center) {
      bargs[DNNL_ARG_SHIFT] = stores_[beta].master;
      bargs[DNNL_ARG_DIFF_SHIFT] = stores_[beta].grad;
    }
    // One primitive computes the gradients of the data and of gamma/beta; it
    // is timed as backward-data.
    const memory diff_src = AddBackwardData(l, bwd, diff_dst, std::move(bargs));
    if (GradNeeded(in)) AddEdge(in, diff_src);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildRelu(int l) {
  const double max_value = network().layer(l).relu.max_value;
  const bool clipped = std::isfinite(max_value);
  return BuildEltwise(l, clipped ? dnnl::algorithm::eltwise_clip_v2 : dnnl::algorithm::eltwise_relu,
                      0.0f, clipped ? static_cast<float>(max_value) : 0.0f);
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildPool(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Window2d& w = layer.pool.window;
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc src_md = src.get_desc(), dst_md = Any(Dims(l), act_dt_);
  const memory::dims strides{w.stride_h, w.stride_w}, kernel{w.kernel_h, w.kernel_w},
      pad_l{w.pad_top, w.pad_left}, pad_r{w.pad_bottom, w.pad_right};
  const auto alg = layer.kind == LayerKind::kMaxPool ? dnnl::algorithm::pooling_max
                   : layer.pool.count_include_pad    ? dnnl::algorithm::pooling_avg_include_padding
                                                     : dnnl::algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_forward::primitive_desc fwd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, alg, src_md, dst_md, strides,
                                  kernel, pad_l, pad_r),
      attr_, engine_);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}};
  const memory ws = AddWorkspace(fwd, args);
  AddForward(l, fwd, std::move(args));
  return [=](const memory& diff_dst) {
    dnnl::pooling_backward::primitive_desc bwd(
        dnnl::pooling_backward::desc(alg, src_md, dst_md, strides, kernel, pad_l, pad_r), attr_,
        engine_, fwd);
    std::unordered_map<int, memory> bargs;
    if (ws) bargs[DNNL_ARG_WORKSPACE] = ws;
    AddEdge(in, AddBackwardData(l, bwd, diff_dst, std::move(bargs)));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildGlobalAvgPool(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc src_md = src.get_desc();
  const memory::dims sd = Dims(in);
  const memory::dims pooled_dims{sd[0], sd[1], 1, 1}, kernel{sd[2], sd[3]}, ones{1, 1}, zeros{0, 0};
  const auto alg = dnnl::algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_forward::primitive_desc fwd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, alg, src_md,
                                  Any(pooled_dims, act_dt_), ones, kernel, zeros, zeros),
      attr_, engine_);
  const memory pooled = AddForward(l, fwd, {{DNNL_ARG_SRC, src}});
  // {N, C, 1, 1} in plain layout is the {N, C} output.
  const memory::desc plain4 = Plain(pooled_dims, act_dt_);
  const memory flat4 = Converted(Phase::kForward, l, Pass::kForward, pooled, plain4);
  act_[static_cast<size_t>(l)] = View(Plain(Dims(l), act_dt_), flat4);
  return [=](const memory& diff_dst) {
    dnnl::pooling_backward::primitive_desc bwd(
        dnnl::pooling_backward::desc(alg, src_md, Any(pooled_dims, act_dt_), ones, kernel, zeros,
                                     zeros),
        attr_, engine_, fwd);
    AddEdge(in, AddBackwardData(l, bwd, View(plain4, diff_dst)));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildAdd(int l) {
  const Layer& layer = network().layer(l);
  std::vector<memory::desc> srcs;
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i < layer.input_ids.size(); ++i) {
    const memory& m = act_[static_cast<size_t>(layer.input_ids[i])];
    srcs.push_back(m.get_desc());
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = m;
  }
  dnnl::sum::primitive_desc pd(srcs[0], std::vector<float>(srcs.size(), 1.0f), srcs, engine_,
                               attr_);
  AddForward(l, pd, std::move(args));
  const std::vector<int> inputs = layer.input_ids;
  // The gradient of a sum flows unchanged to every operand.
  return [=](const memory& diff_dst) {
    for (int in : inputs) {
      if (GradNeeded(in)) AddEdge(in, diff_dst);
    }
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildFlatten(int l) {
  const int in = network().layer(l).input_ids[0];
  const memory::desc in_plain = Plain(Dims(in), act_dt_);
  const memory flat =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], in_plain);
  act_[static_cast<size_t>(l)] = View(Plain(Dims(l), act_dt_), flat);
  return [=](const memory& diff_dst) { AddEdge(in, View(in_plain, diff_dst)); };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildLoss(int l) {
  const int in = network().layer(l).input_ids[0];
  const memory::dims dims = Dims(in);
  const int64_t rows = dims[0], classes = dims[1];
  const std::vector<LossLabels> layout = LabelLayout(network(), config().batch);
  size_t part = 0;
  while (layout[part].layer != l) ++part;
  const size_t offset = static_cast<size_t>(layout[part].offset);
  const memory::desc f32 = Plain(dims, Dt::f32);
  const memory logits =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], f32);
  dnnl::logsoftmax_forward::primitive_desc fwd(
      dnnl::logsoftmax_forward::desc(dnnl::prop_kind::forward_training, f32, 1), attr_, engine_);
  const memory logp = NewMemory(fwd.dst_desc());
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd,
               {{DNNL_ARG_SRC, logits}, {DNNL_ARG_DST, logp}});
  // Cross-entropy: loss = -mean_r log p[r, label_r].
  AddLoop(Phase::kForward, l, Pass::kForward,
          [this, logp, rows, classes, offset, part] {
            const int32_t* labels = labels_.data() + offset;
            const float* lp = F32(logp);
            double sum = 0;
            for (int64_t r = 0; r < rows; ++r) sum -= lp[r * classes + labels[r]];
            loss_parts_[part] = sum / static_cast<double>(rows);
          },
          {logp});
  return [=](const memory&) {
    // d loss / d logits = (softmax - onehot) / rows.
    const memory grad = NewMemory(f32);
    AddLoop(Phase::kBackward, l, Pass::kBackwardData,
            [this, logp, grad, rows, classes, offset] {
              const int32_t* labels = labels_.data() + offset;
              const float* lp = F32(logp);
              float* g = F32(grad);
              const float scale = 1.0f / static_cast<float>(rows);
#pragma omp parallel for schedule(static) if (rows * classes > kParallelElements)
              for (int64_t r = 0; r < rows; ++r) {
                for (int64_t k = 0; k < classes; ++k) {
                  g[r * classes + k] = std::exp(lp[r * classes + k]) * scale;
                }
                g[r * classes + labels[r]] -= scale;
              }
            },
            {logp, grad});
    AddEdge(in, Converted(Phase::kBackward, l, Pass::kBackwardData, grad,
                          act_[static_cast<size_t>(in)].get_desc()));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildEltwise(int l, dnnl::algorithm alg,
                                                             float alpha, float beta) {
  const int in = network().layer(l).input_ids[0];
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc data_md = src.get_desc();
  dnnl::eltwise_forward::primitive_desc fwd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, alg, data_md, alpha, beta),
      attr_, engine_);
  AddForward(l, fwd, {{DNNL_ARG_SRC, src}});
  return [=](const memory& diff_dst) {
    dnnl::eltwise_backward::primitive_desc bwd(
        dnnl::eltwise_backward::desc(alg, data_md, data_md, alpha, beta), attr_, engine_, fwd);
    AddEdge(in, AddBackwardData(l, bwd, diff_dst, {{DNNL_ARG_SRC, src}}));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildMul(int l) {
  // oneDNN 2.6's binary primitive broadcasts {N, C, 1, 1} scales only with its
  // reference kernel (ref:any), which ran squeeze-and-excite ~50x slower than
  // memory speed. The product runs as a fitspeed loop on plain FP32 tensors
  // instead; the reorders to and from them are timed with this layer (and
  // convert BF16).
  const Layer& layer = network().layer(l);
  const int a = layer.input_ids[0], b = layer.input_ids[1];
  const memory x = F32Input(l, a), s = F32Input(l, b);
  // x is {scales, inner}: inner = H*W when s is {N, C} broadcast over {N, C, H, W}, else 1.
  const int64_t scales = static_cast<int64_t>(s.get_desc().get_size() / sizeof(float));
  const int64_t inner = static_cast<int64_t>(x.get_desc().get_size() / sizeof(float)) / scales;
  const bool parallel = scales * inner > kParallelElements;
  // y = x * s, and dx = dy * s: the same loop.
  auto scaled = [=](const memory& by, const memory& from, float* to) {
    const float* xp = F32(from);
    const float* sp = F32(by);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t j = 0; j < scales; ++j) {
      for (int64_t i = 0; i < inner; ++i) to[j * inner + i] = xp[j * inner + i] * sp[j];
    }
  };
  AddF32Output(l, x.get_desc(), [=](float* y) { scaled(s, x, y); }, {x, s});
  return [=](const memory& diff_dst) {
    const memory dy = F32Diff(l, Pass::kBackwardData, diff_dst);
    if (GradNeeded(a)) {
      AddF32Gradient(l, a, x.get_desc(), [=](float* dx) { scaled(s, dy, dx); }, {dy, s});
    }
    if (GradNeeded(b)) {  // ds = dy * x, summed over H*W when broadcast
      AddF32Gradient(l, b, s.get_desc(),
                     [=](float* ds) {
                       const float* dyp = F32(dy);
                       const float* xp = F32(x);
#pragma omp parallel for schedule(static) if (parallel)
                       for (int64_t j = 0; j < scales; ++j) {
                         float sum = 0;
                         for (int64_t i = 0; i < inner; ++i) {
                           sum += dyp[j * inner + i] * xp[j * inner + i];
                         }
                         ds[j] = sum;
                       }
                     },
                     {dy, x});
    }
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildConcat(int l) {
  const std::vector<int> inputs = network().layer(l).input_ids;
  std::vector<memory::desc> srcs;
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const memory& m = act_[static_cast<size_t>(inputs[i])];
    srcs.push_back(m.get_desc());
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = m;
  }
  dnnl::concat::primitive_desc pd(1, srcs, engine_, attr_);
  AddForward(l, pd, std::move(args));
  // Backward: each input's gradient is its channel range of dy, read through a
  // view of dy in plain layout (ResolveDiff reorders it to the input's layout).
  return [=](const memory& diff_dst) {
    const memory::desc plain = Plain(Dims(l), act_dt_);
    const memory dy = Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, plain);
    memory::dim offset = 0;
    for (int in : inputs) {
      const memory::dims dims = Dims(in);
      if (GradNeeded(in)) {
        memory::dims offsets(dims.size(), 0);
        offsets[1] = offset;
        AddEdge(in, View(plain.submemory_desc(dims, offsets), dy));
      }
      offset += dims[1];
    }
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildLrn(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const LrnAttrs& a = layer.lrn;
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc data_md = src.get_desc();
  const auto alg = dnnl::algorithm::lrn_across_channels;
  // oneDNN divides alpha by the window size, as fitspeed's kLrn does.
  const float alpha = static_cast<float>(a.alpha), beta = static_cast<float>(a.beta),
              k = static_cast<float>(a.k);
  dnnl::lrn_forward::primitive_desc fwd(
      dnnl::lrn_forward::desc(dnnl::prop_kind::forward_training, alg, data_md, a.size, alpha, beta,
                              k),
      attr_, engine_);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}};
  const memory ws = AddWorkspace(fwd, args);
  AddForward(l, fwd, std::move(args));
  const int64_t size = a.size;
  return [=](const memory& diff_dst) {
    dnnl::lrn_backward::primitive_desc bwd(
        dnnl::lrn_backward::desc(alg, data_md, data_md, size, alpha, beta, k), attr_, engine_, fwd);
    std::unordered_map<int, memory> bargs{{DNNL_ARG_SRC, src}};
    if (ws) bargs[DNNL_ARG_WORKSPACE] = ws;
    AddEdge(in, AddBackwardData(l, bwd, diff_dst, std::move(bargs)));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildEmbedding(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const int64_t rows = Rows(layer.output_shape, config().batch), dim = layer.embedding.dim;
  const size_t table = ParamIndex(l, "table");
  const memory::desc table_md = Plain({layer.embedding.vocab, dim}, Dt::f32);
  DefineParam(table, table_md, table_md);
  const memory ids = act_[static_cast<size_t>(in)], master = stores_[table].master;
  // torch.nn.Embedding: y[r] = table[id[r]], a gather of rows.
  AddF32Output(l, Plain(Dims(l), Dt::f32),
               [=](float* y) {
                 const int32_t* id = static_cast<const int32_t*>(ids.get_data_handle());
                 const float* t = F32(master);
#pragma omp parallel for schedule(static) if (rows * dim > kParallelElements)
                 for (int64_t r = 0; r < rows; ++r) {
                   std::memcpy(y + r * dim, t + id[r] * dim,
                               static_cast<size_t>(dim) * sizeof(float));
                 }
               },
               {ids});
  const bool tied = IsTiedTable(network(), l);
  const int64_t elements = layer.embedding.vocab * dim;
  return [=](const memory& diff_dst) {
    // A dense gradient (sparse=False): zeroed, then dy added into the rows of
    // the tokens, each thread owning a block of columns. A tied table's
    // gradient already holds the dense layer's part.
    const memory dy = F32Diff(l, Pass::kBackwardWeights, diff_dst);
    const memory grad = stores_[table].grad;
    AddLoop(Phase::kBackward, l, Pass::kBackwardWeights,
            [=] {
              const int32_t* id = static_cast<const int32_t*>(ids.get_data_handle());
              const float* dyp = F32(dy);
              float* g = F32(grad);
              if (!tied) {
#pragma omp parallel for schedule(static) if (elements > kParallelElements)
                for (int64_t i = 0; i < elements; ++i) g[i] = 0;
              }
              constexpr int64_t kBlock = 64;
#pragma omp parallel for schedule(static) if (rows * dim > kParallelElements)
              for (int64_t lo = 0; lo < dim; lo += kBlock) {
                const int64_t hi = std::min(dim, lo + kBlock);
                for (int64_t r = 0; r < rows; ++r) {
                  float* row = g + id[r] * dim;
                  for (int64_t k = lo; k < hi; ++k) row[k] += dyp[r * dim + k];
                }
              }
            },
            {ids, dy});
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildAddedEmbedding(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const int64_t n = config().batch, tokens = layer.output_shape.dims[0],
                f = layer.output_shape.dims[1], table_rows = layer.added.rows;
  const bool segment = layer.kind == LayerKind::kSegmentEmbedding;
  std::vector<int64_t> row_of(static_cast<size_t>(tokens));  // the table row of token t
  for (int64_t t = 0; t < tokens; ++t) {
    row_of[static_cast<size_t>(t)] = segment ? SegmentOf(t, tokens, table_rows) : t;
  }
  const size_t table = ParamIndex(l, "table");
  const memory::desc table_md = Plain({table_rows, f}, Dt::f32);
  DefineParam(table, table_md, table_md);
  const memory master = stores_[table].master, grad = stores_[table].grad;
  const memory x = F32Input(l, in);
  // y[s, t] = x[s, t] + table[row(t)] (BERT's and GPT-2's learned embeddings).
  AddF32Output(l, x.get_desc(),
               [=](float* y) {
                 const float* xp = F32(x);
                 const float* w = F32(master);
#pragma omp parallel for schedule(static) if (n * tokens * f > kParallelElements)
                 for (int64_t r = 0; r < n * tokens; ++r) {
                   const float* wr = w + row_of[static_cast<size_t>(r % tokens)] * f;
                   for (int64_t k = 0; k < f; ++k) y[r * f + k] = xp[r * f + k] + wr[k];
                 }
               },
               {x});
  return [=](const memory& diff_dst) {
    if (GradNeeded(in)) AddEdge(in, diff_dst);  // dx = dy, shared
    // dtable[row(t)] = sum over the batch of dy[s, t], each thread owning columns.
    const memory dy = F32Diff(l, Pass::kBackwardWeights, diff_dst);
    AddLoop(Phase::kBackward, l, Pass::kBackwardWeights,
            [=] {
              const float* dyp = F32(dy);
              float* g = F32(grad);
              std::fill(g, g + table_rows * f, 0.0f);
#pragma omp parallel for schedule(static) if (n * tokens * f > kParallelElements)
              for (int64_t k = 0; k < f; ++k) {
                for (int64_t r = 0; r < n * tokens; ++r) {
                  g[row_of[static_cast<size_t>(r % tokens)] * f + k] += dyp[r * f + k];
                }
              }
            },
            {dy});
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildLayerNorm(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const NormAttrs& a = layer.norm;
  const memory src =
      AsPlain(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], act_dt_);
  const memory::desc data_md = src.get_desc();
  const memory::desc vec_md = Plain({layer.output_shape.dims.back()}, Dt::f32);
  const dnnl::normalization_flags flags = NormFlags(a.scale, a.center);
  const float eps = static_cast<float>(a.epsilon);
  dnnl::layer_normalization_forward::primitive_desc fwd(
      dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_training, data_md, eps,
                                              flags),
      attr_, engine_);
  const memory mean = NewMemory(fwd.mean_desc()), var = NewMemory(fwd.variance_desc());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}};
  std::unordered_map<int, memory> params;  // for the backward primitive
  if (a.scale) {
    const size_t gamma = ParamIndex(l, "gamma");
    DefineParam(gamma, vec_md, vec_md);
    args[DNNL_ARG_SCALE] = params[DNNL_ARG_SCALE] = stores_[gamma].master;
    params[DNNL_ARG_DIFF_SCALE] = stores_[gamma].grad;
  }
  if (a.center) {
    const size_t beta = ParamIndex(l, "beta");
    DefineParam(beta, vec_md, vec_md);
    args[DNNL_ARG_SHIFT] = params[DNNL_ARG_SHIFT] = stores_[beta].master;
    params[DNNL_ARG_DIFF_SHIFT] = stores_[beta].grad;
  }
  AddForward(l, fwd, std::move(args));
  const bool trainable = layer.has_trainable_params();
  return [=](const memory& diff_dst) {
    // Ba et al. 2016; one primitive computes the gradients of the data and of
    // gamma/beta, timed as backward-data (as batch-norm's).
    dnnl::layer_normalization_backward::primitive_desc bwd(
        dnnl::layer_normalization_backward::desc(
            trainable ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data, data_md,
            data_md, eps, flags),
        attr_, engine_, fwd);
    std::unordered_map<int, memory> bargs = params;
    bargs[DNNL_ARG_SRC] = src;
    bargs[DNNL_ARG_MEAN] = mean;
    bargs[DNNL_ARG_VARIANCE] = var;
    const memory diff_src = AddBackwardData(l, bwd, diff_dst, std::move(bargs));
    if (GradNeeded(in)) AddEdge(in, diff_src);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildRmsNorm(int l) {
  // oneDNN 2.6's layer normalization always subtracts the mean: RMS norm runs
  // as fitspeed loops on plain FP32 tensors.
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const int64_t f = layer.output_shape.dims.back();
  const memory x = F32Input(l, in);
  const int64_t rows = static_cast<int64_t>(x.get_desc().get_size() / sizeof(float)) / f;
  const memory rstd = NewMemory(Plain({rows}, Dt::f32));
  const bool scale = layer.norm.scale;
  const size_t gamma = scale ? ParamIndex(l, "gamma") : 0;
  if (scale) DefineParam(gamma, Plain({f}, Dt::f32), Plain({f}, Dt::f32));
  // gamma[k], or 1 without scale.
  const memory g = scale ? stores_[gamma].master : memory();
  auto gain = [=](int64_t k) { return scale ? F32(g)[k] : 1.0f; };
  const float eps = static_cast<float>(layer.norm.epsilon);
  const bool parallel = rows * f > kParallelElements;
  // Zhang & Sennrich 2019: y = x*rstd*gamma, rstd = 1/sqrt(mean(x^2) + eps).
  AddF32Output(l, x.get_desc(),
               [=](float* y) {
                 const float* xp = F32(x);
                 float* rp = F32(rstd);
#pragma omp parallel for schedule(static) if (parallel)
                 for (int64_t r = 0; r < rows; ++r) {
                   float sq = 0;
                   for (int64_t k = 0; k < f; ++k) sq += xp[r * f + k] * xp[r * f + k];
                   rp[r] = 1.0f / std::sqrt(sq / static_cast<float>(f) + eps);
                   for (int64_t k = 0; k < f; ++k) y[r * f + k] = xp[r * f + k] * rp[r] * gain(k);
                 }
               },
               {x, rstd});
  return [=](const memory& diff_dst) {
    const memory dy = F32Diff(l, Pass::kBackwardData, diff_dst);
    if (GradNeeded(in)) {
      // dx = rstd*(gdy - xhat*mean(gdy*xhat)), gdy = dy*gamma, xhat = x*rstd.
      AddF32Gradient(l, in, x.get_desc(),
                     [=](float* dx) {
                       const float* xp = F32(x);
                       const float* dyp = F32(dy);
                       const float* rp = F32(rstd);
#pragma omp parallel for schedule(static) if (parallel)
                       for (int64_t r = 0; r < rows; ++r) {
                         float dot = 0;
                         for (int64_t k = 0; k < f; ++k)
                           dot += dyp[r * f + k] * gain(k) * xp[r * f + k];
                         const float c = dot * rp[r] * rp[r] / static_cast<float>(f);
                         for (int64_t k = 0; k < f; ++k) {
                           dx[r * f + k] = rp[r] * (dyp[r * f + k] * gain(k) - xp[r * f + k] * c);
                         }
                       }
                     },
                     {x, dy, rstd});
    }
    if (!scale) return;
    // dgamma = sum over the rows of dy*x*rstd, each thread owning columns.
    const memory dg = stores_[gamma].grad;
    AddLoop(Phase::kBackward, l, Pass::kBackwardWeights,
            [=] {
              const float* xp = F32(x);
              const float* dyp = F32(dy);
              const float* rp = F32(rstd);
              float* dgp = F32(dg);
#pragma omp parallel for schedule(static) if (parallel)
              for (int64_t k = 0; k < f; ++k) {
                float sum = 0;
                for (int64_t r = 0; r < rows; ++r) sum += dyp[r * f + k] * xp[r * f + k] * rp[r];
                dgp[k] = sum;
              }
            },
            {x, dy, rstd});
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildDropout(int l) {
  const int in = network().layer(l).input_ids[0];
  const double rate = network().layer(l).dropout.rate;
  const float scale = static_cast<float>(1 / (1 - rate));
  const memory x = F32Input(l, in);
  const memory mask = NewMemory(Plain(x.get_desc().dims(), Dt::u8));
  const int64_t count = static_cast<int64_t>(x.get_desc().get_size() / sizeof(float));
  auto keep = [mask](int64_t i) { return static_cast<const uint8_t*>(mask.get_data_handle())[i]; };
  // Inverted dropout with MakeDropoutMask's mask, kept as one byte per element.
  AddF32Output(l, x.get_desc(),
               [=](float* y) {
                 const DropoutMask draw = MakeDropoutMask(config().seed, l, update_count(), rate);
                 const float* xp = F32(x);
                 uint8_t* m = static_cast<uint8_t*>(mask.get_data_handle());
#pragma omp parallel for schedule(static) if (count > kParallelElements)
                 for (int64_t i = 0; i < count; ++i) {
                   m[i] = draw.Keep(static_cast<uint64_t>(i)) ? 1 : 0;
                   y[i] = m[i] != 0 ? xp[i] * scale : 0.0f;
                 }
               },
               {x, mask});
  return [=](const memory& diff_dst) {
    const memory dy = F32Diff(l, Pass::kBackwardData, diff_dst);
    AddF32Gradient(l, in, x.get_desc(),
                   [=](float* dx) {
                     const float* dyp = F32(dy);
#pragma omp parallel for schedule(static) if (count > kParallelElements)
                     for (int64_t i = 0; i < count; ++i)
                       dx[i] = keep(i) != 0 ? dyp[i] * scale : 0.0f;
                   },
                   {mask, dy});
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildHeads(int l) {
  // Per sample {A, B, C} -> {B, A, C}: split {T, H, D} -> {H, T, D}, merge
  // {H, T, D} -> {T, H, D}. One reorder reads the plain source through
  // permuted strides; the backward is the opposite transpose.
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const bool split = layer.kind == LayerKind::kSplitHeads;
  const Shape& heads = split ? layer.output_shape : network().layer(in).output_shape;
  const int64_t n = config().batch, h = heads.dims[0], t = heads.dims[1], d = heads.dims[2];
  const int64_t a = split ? t : h, b = split ? h : t;
  // A plain {n, p, q, d} tensor read as {n, q, p, d}.
  auto swapped = [=](int64_t p, int64_t q) {
    return memory::desc({n, q, p, d}, act_dt_, {p * q * d, d, q * d, 1});
  };
  const memory src =
      AsPlain(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], act_dt_);
  const memory out = Transposed(Phase::kForward, l, Pass::kForward, src, swapped(a, b));
  act_[static_cast<size_t>(l)] = View(Plain(Dims(l), act_dt_), out);
  return [=](const memory& diff_dst) {
    const memory dy = AsPlain(Phase::kBackward, l, Pass::kBackwardData, diff_dst, act_dt_);
    const memory dx = Transposed(Phase::kBackward, l, Pass::kBackwardData, dy, swapped(b, a));
    AddEdge(in, View(Plain(Dims(in), act_dt_), dx));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildBatchedMatmul(int l) {
  const Layer& layer = network().layer(l);
  const int ia = layer.input_ids[0], ib = layer.input_ids[1];
  const Shape& as = network().layer(ia).output_shape;
  const Shape& bs = network().layer(ib).output_shape;
  const bool tb = layer.matmul.transpose_b;
  const double scale = layer.matmul.scale;
  const int64_t n = config().batch, kv = bs.dims[0], group = as.dims[0] / kv;
  const int64_t rows = group * as.dims[1], k = as.dims[2], cols = layer.output_shape.dims[2];
  // The `group` heads of a sharing head hb of b (Ainslie et al. 2023) are one
  // {rows = group*M, K} matrix, their rows stacked: plain a {n, H, M, K} is
  // plain {n, Hb, rows, K}, and so is y. Every operand is a plain tensor or a
  // transposed view of one (strides of the last two dimensions swapped).
  auto plain = [=](int64_t p, int64_t q) { return Plain({n, kv, p, q}, act_dt_); };
  auto transposed = [=](int64_t p, int64_t q) {  // plain {n, kv, q, p} read as {.., p, q}
    return memory::desc({n, kv, p, q}, act_dt_, {kv * p * q, p * q, 1, p});
  };
  const memory a =
      AsPlain(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(ia)], act_dt_);
  const memory b =
      AsPlain(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(ib)], act_dt_);
  const memory::desc b_md = tb ? transposed(k, cols) : plain(k, cols);
  const memory y = NewMemory(plain(rows, cols));
  AddMatmul(Phase::kForward, l, Pass::kForward, a, plain(rows, k), b, b_md, y, scale);
  act_[static_cast<size_t>(l)] = View(Plain(Dims(l), act_dt_), y);
  return [=](const memory& diff_dst) {
    // da = scale dy B^T; dB = scale a^T dy, or with transpose_b db = scale dy^T a.
    const memory dy = AsPlain(Phase::kBackward, l, Pass::kBackwardData, diff_dst, act_dt_);
    if (GradNeeded(ia)) {
      const memory da = NewMemory(plain(rows, k));
      AddMatmul(Phase::kBackward, l, Pass::kBackwardData, dy, plain(rows, cols), b,
                tb ? plain(cols, k) : transposed(cols, k), da, scale);
      AddEdge(ia, View(Plain(Dims(ia), act_dt_), da));
    }
    if (GradNeeded(ib)) {
      const memory db = NewMemory(tb ? plain(cols, k) : plain(k, cols));
      if (tb) {
        AddMatmul(Phase::kBackward, l, Pass::kBackwardData, dy, transposed(cols, rows), a,
                  plain(rows, k), db, scale);
      } else {
        AddMatmul(Phase::kBackward, l, Pass::kBackwardData, a, transposed(k, rows), dy,
                  plain(rows, cols), db, scale);
      }
      AddEdge(ib, View(Plain(Dims(ib), act_dt_), db));
    }
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildSoftmax(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const memory src =
      AsPlain(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], act_dt_);
  const memory::desc md = src.get_desc();
  const int axis = static_cast<int>(md.dims().size()) - 1;
  dnnl::softmax_forward::primitive_desc fwd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_training, md, axis), attr_, engine_);
  memory dst;
  if (!layer.softmax.causal) {
    dst = AddForward(l, fwd, {{DNNL_ARG_SRC, src}});
  } else {
    // The causal mask as a loop before the primitive: a copy of the scores
    // with -inf where j > i in each {T, T} block, then softmax in place.
    const int64_t tokens = md.dims().back();
    const int64_t rows =
        static_cast<int64_t>(md.get_size() / memory::data_type_size(act_dt_)) / tokens;
    const size_t bytes = memory::data_type_size(act_dt_);
    const bool bf16 = act_dt_ == Dt::bf16;
    dst = act_[static_cast<size_t>(l)] = NewMemory(md);
    AddLoop(Phase::kForward, l, Pass::kForward,
            [=] {
              const char* x = static_cast<const char*>(src.get_data_handle());
              char* y = static_cast<char*>(dst.get_data_handle());
              const float minus_inf = -std::numeric_limits<float>::infinity();
              uint32_t inf_bits = 0;
              std::memcpy(&inf_bits, &minus_inf, sizeof inf_bits);
              const uint16_t inf_bf16 = static_cast<uint16_t>(inf_bits >> 16);
#pragma omp parallel for schedule(static) if (rows * tokens > kParallelElements)
              for (int64_t r = 0; r < rows; ++r) {
                const int64_t keep = r % tokens + 1;
                char* row = y + r * tokens * static_cast<int64_t>(bytes);
                std::memcpy(row, x + r * tokens * static_cast<int64_t>(bytes),
                            static_cast<size_t>(keep) * bytes);
                for (int64_t j = keep; j < tokens; ++j) {
                  if (bf16) {
                    std::memcpy(row + j * 2, &inf_bf16, 2);
                  } else {
                    std::memcpy(row + j * 4, &minus_inf, 4);
                  }
                }
              }
            },
            {src, dst});
    AddPrimitive(Phase::kForward, l, Pass::kForward, fwd,
                 {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}});
  }
  return [=](const memory& diff_dst) {
    // dx = y*(dy - sum(dy*y)) from the output; masked entries have y = 0.
    dnnl::softmax_backward::primitive_desc bwd(dnnl::softmax_backward::desc(md, md, axis), attr_,
                                               engine_, fwd);
    AddEdge(in, AddBackwardData(l, bwd, diff_dst, {{DNNL_ARG_DST, dst}}));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildRotary(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& os = layer.output_shape;
  const int64_t tokens = os.dims[1], d = os.dims[2], half = d / 2;
  const RotaryTables tables = MakeRotaryTables(tokens, d, layer.rotary.base);
  const std::vector<float> cos(tables.cos.begin(), tables.cos.end()),
      sin(tables.sin.begin(), tables.sin.end());
  const memory x = F32Input(l, in);
  const int64_t rows = static_cast<int64_t>(x.get_desc().get_size() / sizeof(float)) / d;
  // Su et al. 2021, rotate-half form: (x_i, x_{i+D/2}) of row t rotated by
  // t*theta_i; the backward rotates dy by the opposite angle.
  auto rotate = [=](const memory& from, float* yp, float sign) {
    const float* xp = F32(from);
#pragma omp parallel for schedule(static) if (rows * d > kParallelElements)
    for (int64_t r = 0; r < rows; ++r) {
      const float* c = cos.data() + (r % tokens) * half;
      const float* s = sin.data() + (r % tokens) * half;
      for (int64_t i = 0; i < half; ++i) {
        const float lo = xp[r * d + i], hi = xp[r * d + i + half];
        yp[r * d + i] = lo * c[i] - hi * sign * s[i];
        yp[r * d + i + half] = hi * c[i] + lo * sign * s[i];
      }
    }
  };
  AddF32Output(l, x.get_desc(), [=](float* y) { rotate(x, y, 1.0f); }, {x});
  return [=](const memory& diff_dst) {
    const memory dy = F32Diff(l, Pass::kBackwardData, diff_dst);
    AddF32Gradient(l, in, x.get_desc(), [=](float* dx) { rotate(dy, dx, -1.0f); }, {dy});
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildTakeRows(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t n = config().batch, tokens = is.dims[0];
  const std::vector<int64_t> taken = TakenRows(network(), l);  // in output order
  const int64_t count = static_cast<int64_t>(taken.size());
  // Rows are copied as bytes, in the activations' data type.
  const size_t row_bytes = static_cast<size_t>(is.dims[1]) * memory::data_type_size(act_dt_);
  const memory x =
      AsPlain(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], act_dt_);
  const memory y = act_[static_cast<size_t>(l)] = NewMemory(Plain(Dims(l), act_dt_));
  auto at = [](const memory& m, int64_t row, size_t bytes) {
    return static_cast<char*>(m.get_data_handle()) + static_cast<size_t>(row) * bytes;
  };
  AddLoop(Phase::kForward, l, Pass::kForward,
          [=] {
            for (int64_t s = 0; s < n; ++s) {
              for (int64_t k = 0; k < count; ++k) {
                std::memcpy(at(y, s * count + k, row_bytes),
                            at(x, s * tokens + taken[static_cast<size_t>(k)], row_bytes),
                            row_bytes);
              }
            }
          },
          {x, y});
  return [=](const memory& diff_dst) {
    // dx: dy in the taken rows (each taken once), zero elsewhere.
    const memory dy = AsPlain(Phase::kBackward, l, Pass::kBackwardData, diff_dst, act_dt_);
    const memory dx = NewMemory(x.get_desc());
    AddLoop(Phase::kBackward, l, Pass::kBackwardData,
            [=] {
              std::memset(dx.get_data_handle(), 0, dx.get_desc().get_size());
              for (int64_t s = 0; s < n; ++s) {
                for (int64_t k = 0; k < count; ++k) {
                  std::memcpy(at(dx, s * tokens + taken[static_cast<size_t>(k)], row_bytes),
                              at(dy, s * count + k, row_bytes), row_bytes);
                }
              }
            },
            {dy, dx});
    AddEdge(in, dx);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildClassToken(int l) {
  const int in = network().layer(l).input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t n = config().batch, tokens = is.dims[0], f = is.dims[1];
  const size_t token = ParamIndex(l, "token");
  DefineParam(token, Plain({f}, Dt::f32), Plain({f}, Dt::f32));
  const memory w = stores_[token].master, grad = stores_[token].grad;
  const memory x = F32Input(l, in);
  const size_t row = static_cast<size_t>(f) * sizeof(float);
  // ViT (Dosovitskiy et al. 2021): row 0 the learned token, rows 1..T the input.
  AddF32Output(l, Plain(Dims(l), Dt::f32),
               [=](float* y) {
                 for (int64_t s = 0; s < n; ++s) {
                   float* ys = y + s * (tokens + 1) * f;
                   std::memcpy(ys, F32(w), row);
                   std::memcpy(ys + f, F32(x) + s * tokens * f, row * static_cast<size_t>(tokens));
                 }
               },
               {x});
  return [=](const memory& diff_dst) {
    const memory dy = F32Diff(l, Pass::kBackwardData, diff_dst);
    if (GradNeeded(in)) {
      AddF32Gradient(l, in, x.get_desc(),
                     [=](float* dx) {
                       for (int64_t s = 0; s < n; ++s) {
                         std::memcpy(dx + s * tokens * f, F32(dy) + (s * (tokens + 1) + 1) * f,
                                     row * static_cast<size_t>(tokens));
                       }
                     },
                     {dy});
    }
    AddLoop(Phase::kBackward, l, Pass::kBackwardWeights,
            [=] {
              float* g = F32(grad);
              std::fill(g, g + f, 0.0f);
              for (int64_t s = 0; s < n; ++s) {
                for (int64_t k = 0; k < f; ++k) g[k] += F32(dy)[s * (tokens + 1) * f + k];
              }
            },
            {dy});
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildImageToSequence(int l) {
  // {C, H, W} -> {H*W, C}: the image in NHWC layout is the sequence, so one
  // reorder (from the convolution's blocked layout) is the whole forward
  // pass, and the backward a view (ResolveDiff reorders it back).
  const int in = network().layer(l).input_ids[0];
  const memory::desc nhwc(Dims(in), act_dt_, Tag::nhwc);
  const memory image =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], nhwc);
  act_[static_cast<size_t>(l)] = View(Plain(Dims(l), act_dt_), image);
  return [=](const memory& diff_dst) {
    const memory dy = AsPlain(Phase::kBackward, l, Pass::kBackwardData, diff_dst, act_dt_);
    AddEdge(in, View(nhwc, dy));
  };
}

void OnednnExecutor::BuildUpdates() {
  // One fused update over every trainable tensor (one parallel region per
  // step); its time is shared between the layers by bytes updated.
  std::vector<std::pair<int, double>> shares;
  for (size_t i = 0; i < params().size(); ++i) {
    const ParamRef& p = params()[i];
    if (!p.trainable) continue;
    shares.emplace_back(p.layer, static_cast<double>(stores_[i].master.get_desc().get_size()));
    SetImplementation(p.layer, Pass::kUpdate, "fitspeed");
  }
  if (shares.empty() || config().dry_run) return;
  AddSharedOp(Phase::kUpdate, Pass::kUpdate, std::move(shares), [this] {
    const StepConfig& c = config();
    UpdateSettings s;
    s.optimizer = c.optimizer;
    s.learning_rate = c.learning_rate;
    s.momentum = c.momentum;
    s.beta1 = c.beta1;
    s.beta2 = c.beta2;
    s.epsilon = c.epsilon;
    s.adam_step_size = AdamStepSize(c.learning_rate, c.beta1, c.beta2, update_count());
    s.rmsprop_alpha = c.rmsprop_alpha;
    UpdateAll(s, slots_);
  });
}

void OnednnExecutor::PointUpdateSlots() {
  auto f = [](const memory& m) {
    return m ? static_cast<float*>(m.get_data_handle()) : static_cast<float*>(nullptr);
  };
  for (size_t i = 0; i < params().size(); ++i) {
    if (!params()[i].trainable) continue;
    const ParamStore& s = stores_[i];
    UpdateSlot<float> slot;
    slot.w = f(s.master);
    slot.g = f(s.grad);
    slot.m = f(s.state1);
    slot.v = f(s.state2);
    slot.n = static_cast<int64_t>(s.master.get_desc().get_size() / sizeof(float));
    slots_.push_back(slot);
  }
}

void OnednnExecutor::AllocateScratchpad() {
  if (scratchpad_bytes_ == 0) return;
  scratchpad_ =
      NewMemory(memory::desc({static_cast<memory::dim>(scratchpad_bytes_)}, Dt::u8, Tag::a), true);
  for (auto& op : prim_ops_) {
    if (op->scratchpad) op->args[DNNL_ARG_SCRATCHPAD] = scratchpad_;
  }
}

void OnednnExecutor::SetInput(const std::vector<double>& values,
                              const std::vector<int32_t>& labels) {
  CheckInput(network(), config().batch, values, labels);
  const memory& input = act_[0];
  const memory::dims dims = Dims(0);
  std::vector<float> f(values.begin(), values.end());
  ReorderNow(memory(Plain(dims, Dt::f32), engine_, f.data()), input);
  labels_ = labels;
}

void OnednnExecutor::SetParam(size_t i, const std::vector<double>& values) {
  const ParamStore& s = stores_.at(i);
  std::vector<float> f(values.begin(), values.end());
  FITSPEED_CHECK(f.size() * sizeof(float) == s.canonical.get_size(), "parameter size mismatch");
  ReorderNow(memory(s.canonical, engine_, f.data()), s.master);
}

std::vector<double> OnednnExecutor::Param(size_t i) const {
  const ParamStore& s = stores_.at(i);
  std::vector<float> f(s.canonical.get_size() / sizeof(float));
  ReorderNow(s.master, memory(s.canonical, engine_, f.data()));
  return std::vector<double>(f.begin(), f.end());
}

std::vector<double> OnednnExecutor::Grad(size_t i) const {
  const ParamStore& s = stores_.at(i);
  FITSPEED_CHECK(params()[i].trainable, "only trainable parameters have gradients");
  std::vector<float> f(s.canonical.get_size() / sizeof(float));
  ReorderNow(s.grad, memory(s.canonical, engine_, f.data()));
  return std::vector<double>(f.begin(), f.end());
}

StepExecutor::GradientStorage OnednnExecutor::MutableGrad(size_t i) {
  FITSPEED_CHECK(params().at(i).trainable, "only trainable parameters have gradients");
  const memory& grad = stores_.at(i).grad;
  GradientStorage g;
  g.f32 = F32(grad);  // gradients of weights are FP32 in both precisions
  g.elements = static_cast<int64_t>(grad.get_desc().get_size() / sizeof(float));
  return g;
}

std::vector<double> OnednnExecutor::Output(int layer) const {
  FITSPEED_CHECK(layer >= 0 && layer < network().size() && !IsLoss(network().layer(layer)),
                 "no output to read for this layer");
  const memory::desc plain = Plain(Dims(layer), Dt::f32);
  std::vector<float> f(plain.get_size() / sizeof(float));
  ReorderNow(act_[static_cast<size_t>(layer)], memory(plain, engine_, f.data()));
  return std::vector<double>(f.begin(), f.end());
}

const char* IsaName(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    case dnnl::cpu_isa::all:
      return "all";
  }
  return "unknown";
}

}  // namespace

std::string OnednnIsa() { return IsaName(dnnl::get_effective_cpu_isa()); }

bool OnednnBf16Supported() {
  // oneDNN has no capability query for data types; a small BF16 convolution
  // either finds a kernel or fails to (oneDNN 2.6: AVX-512 and newer only).
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    const memory::desc src = Any({2, 16, 4, 4}, Dt::bf16), wei = Any({16, 16, 3, 3}, Dt::bf16);
    dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                        dnnl::algorithm::convolution_direct, src, wei,
                                        memory::desc(), src, {1, 1}, {1, 1}, {1, 1}),
        engine);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

std::string OnednnVersion() {
  const dnnl_version_t* v = dnnl::version();
  return fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
}

std::string OnednnRuntime() {
  switch (dnnl::version()->cpu_runtime) {
    case DNNL_RUNTIME_OMP:
      return "OpenMP";
    case DNNL_RUNTIME_TBB:
      return "TBB";
    case DNNL_RUNTIME_SEQ:
      return "sequential";
    case DNNL_RUNTIME_THREADPOOL:
      return "threadpool";
    default:
      return "other";
  }
}

void RequirePrecisionSupported(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return;
    case Precision::kTf32:
    case Precision::kFp8:
      throw UsageError(fmt::format("precision {}: the host cannot run it (it runs fp32, bf16)",
                                   PrecisionName(precision)));
    case Precision::kMixed:
      break;
  }
  if (OnednnBf16Supported()) return;
  throw UsageError(fmt::format(
      "precision bf16: oneDNN {} has no BF16 kernels for this CPU (effective ISA {}); they need "
      "AVX-512 (avx512_core) or newer, and use AMX where present",
      OnednnVersion(), OnednnIsa()));
}

std::unique_ptr<StepExecutor> MakeOnednnExecutor(const Network& network, const StepConfig& config) {
  return std::make_unique<OnednnExecutor>(network, config);
}

}  // namespace fitspeed::timing
