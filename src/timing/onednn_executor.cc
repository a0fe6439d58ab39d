// The training step on oneDNN primitives (oneDNN 2.x C++ API, "op descriptor"
// style: https://oneapi-src.github.io/oneDNN/v2.6/).
//
// Layouts: every primitive is created with format `any` where it may choose
// (convolutions, inner products, pooling destinations), and tensors keep the
// layout their producer chose; a consumer that wants another layout gets a
// reorder, timed with the consumer. Gradients of a layer's output take its
// activation's layout; k > 1 incoming gradients are summed (one `sum`
// primitive, timed as the layer's backward-data, as fitspeed/model/cost.h
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

class OnednnExecutor final : public StepExecutor {
 public:
  OnednnExecutor(const Network& network, const StepConfig& config);

  void SetInput(const std::vector<double>& values, const std::vector<int32_t>& labels) override;
  void SetParam(size_t i, const std::vector<double>& values) override;
  std::vector<double> Param(size_t i) const override;
  std::vector<double> Grad(size_t i) const override;
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

  double loss() const override { return loss_; }

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
  // Sigmoid (eltwise_logistic) and swish (eltwise_swish, alpha 1).
  BackwardBuilder BuildEltwise(int l, dnnl::algorithm alg, float alpha);
  BackwardBuilder BuildMul(int l);
  BackwardBuilder BuildConcat(int l);
  BackwardBuilder BuildLrn(int l);
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
  std::vector<int32_t> labels_;
  double loss_ = 0;
};

OnednnExecutor::OnednnExecutor(const Network& network, const StepConfig& config)
    : StepExecutor(network, config) {
  const ThreadScope threads(config.threads);
  RequirePrecisionSupported(config.precision);
  act_dt_ = config.precision == Precision::kBf16 ? Dt::bf16 : Dt::f32;
  attr_.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  grad_needed_ = GradientReaches(network);
  const size_t n = static_cast<size_t>(network.size());
  act_.resize(n);
  edges_.resize(n);
  stores_.resize(params().size());
  std::vector<BackwardBuilder> backward(n);
  int current = 0;
  try {
    for (int l = 0; l < network.size(); ++l) {
      current = l;
      switch (network.layer(l).kind) {
        case LayerKind::kInput:
          backward[l] = BuildInput(l);
          break;
        case LayerKind::kConv2d:
          backward[l] = BuildConv(l);
          break;
        case LayerKind::kDense:
          backward[l] = BuildDense(l);
          break;
        case LayerKind::kBatchNorm:
          backward[l] = BuildBatchNorm(l);
          break;
        case LayerKind::kRelu:
          backward[l] = BuildRelu(l);
          break;
        case LayerKind::kAvgPool:
        case LayerKind::kMaxPool:
          backward[l] = BuildPool(l);
          break;
        case LayerKind::kGlobalAvgPool:
          backward[l] = BuildGlobalAvgPool(l);
          break;
        case LayerKind::kAdd:
          backward[l] = BuildAdd(l);
          break;
        case LayerKind::kFlatten:
          backward[l] = BuildFlatten(l);
          break;
        case LayerKind::kSoftmaxCrossEntropy:
          backward[l] = BuildLoss(l);
          break;
        case LayerKind::kSigmoid:
          backward[l] = BuildEltwise(l, dnnl::algorithm::eltwise_logistic, 0.0f);
          break;
        case LayerKind::kSwish:
          backward[l] = BuildEltwise(l, dnnl::algorithm::eltwise_swish, 1.0f);
          break;
        case LayerKind::kMul:
          backward[l] = BuildMul(l);
          break;
        case LayerKind::kConcat:
          backward[l] = BuildConcat(l);
          break;
        case LayerKind::kLrn:
          backward[l] = BuildLrn(l);
          break;
        default:  // the sequence kinds, which CheckExecutable refuses
          FITSPEED_CHECK(false, "layer kind without a host builder");
      }
    }
    // Backward in reverse topological order: a layer's gradient is complete
    // once every consumer (all later layers) has contributed its part.
    for (int l = network.size() - 1; l >= 1; --l) {
      current = l;
      if (!GradNeeded(l) || !backward[l]) continue;
      const bool is_loss = l == network.size() - 1;
      backward[l](is_loss ? memory() : ResolveDiff(l));
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

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildInput(int l) {
  act_[static_cast<size_t>(l)] = NewMemory(Plain(Dims(l), act_dt_), true);
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
  const Dt grad_dt = Dt::f32;  // FP32 weight gradients at both precisions

  dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      dnnl::algorithm::convolution_direct, Any(src_dims, act_dt_),
                                      Any(wei_dims, act_dt_), bias_md, Any(dst_dims, act_dt_),
                                      strides, pad_l, pad_r),
      attr_, engine_);
  dnnl::convolution_backward_weights::primitive_desc bwd_w(
      dnnl::convolution_backward_weights::desc(
          dnnl::algorithm::convolution_direct, Any(src_dims, act_dt_), Any(wei_dims, grad_dt),
          bias_md, Any(dst_dims, act_dt_), strides, pad_l, pad_r),
      attr_, engine_, fwd);

  const size_t kernel = ParamIndex(l, "kernel");
  const bool fp32 = act_dt_ == Dt::f32;
  DefineParam(kernel, fp32 ? fwd.weights_desc() : bwd_w.diff_weights_desc(),
              memory::desc(wei_dims, Dt::f32, groups == 1 ? Tag::oihw : Tag::goihw));
  const memory master = stores_[kernel].master;
  // BF16: the FP32 master weights are converted every step (as autocast does).
  const memory weights = Converted(Phase::kForward, l, Pass::kForward, master, fwd.weights_desc());
  memory bias;
  size_t bias_index = 0;
  if (a.bias) {
    bias_index = ParamIndex(l, "bias");
    DefineParam(bias_index, bias_md, bias_md);
    bias = stores_[bias_index].master;
  }
  const memory src =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], fwd.src_desc());
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (a.bias) args[DNNL_ARG_BIAS] = bias;
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, std::move(args));

  return [=](const memory& diff_dst) {
    if (GradNeeded(in)) {
      dnnl::convolution_backward_data::primitive_desc bwd_d(
          dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct,
                                                Any(src_dims, act_dt_), Any(wei_dims, act_dt_),
                                                Any(dst_dims, act_dt_), strides, pad_l, pad_r),
          attr_, engine_, fwd);
      const memory dd =
          Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd_d.diff_dst_desc());
      const memory wd =
          Converted(Phase::kBackward, l, Pass::kBackwardData, weights, bwd_d.weights_desc());
      const memory diff_src = NewMemory(bwd_d.diff_src_desc());
      AddPrimitive(
          Phase::kBackward, l, Pass::kBackwardData, bwd_d,
          {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, wd}, {DNNL_ARG_DIFF_SRC, diff_src}});
      AddEdge(in, diff_src);
    }
    const memory dd =
        Converted(Phase::kBackward, l, Pass::kBackwardWeights, diff_dst, bwd_w.diff_dst_desc());
    const memory s = Converted(Phase::kBackward, l, Pass::kBackwardWeights, src, bwd_w.src_desc());
    const memory grad = stores_[kernel].grad;
    const bool direct = bwd_w.diff_weights_desc() == grad.get_desc();
    const memory dw = direct ? grad : NewMemory(bwd_w.diff_weights_desc());
    std::unordered_map<int, memory> bargs{
        {DNNL_ARG_SRC, s}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}};
    if (a.bias) bargs[DNNL_ARG_DIFF_BIAS] = stores_[bias_index].grad;
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardWeights, bwd_w, std::move(bargs));
    if (!direct) {
      dnnl::reorder::primitive_desc pd(engine_, dw.get_desc(), engine_, grad.get_desc(), attr_);
      AddPrimitive(Phase::kBackward, l, Pass::kBackwardWeights, pd,
                   {{DNNL_ARG_FROM, dw}, {DNNL_ARG_TO, grad}});
    }
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

  dnnl::inner_product_forward::primitive_desc fwd(
      dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, src_md,
                                        Any(wei_dims, act_dt_), bias_md, dst_md),
      attr_, engine_);
  dnnl::inner_product_backward_weights::primitive_desc bwd_w(
      dnnl::inner_product_backward_weights::desc(src_md, Any(wei_dims, Dt::f32), bias_md, dst_md),
      attr_, engine_, fwd);

  const size_t kernel = ParamIndex(l, "kernel");
  const bool fp32 = act_dt_ == Dt::f32;
  DefineParam(kernel, fp32 ? fwd.weights_desc() : bwd_w.diff_weights_desc(),
              Plain(wei_dims, Dt::f32));
  const memory weights =
      Converted(Phase::kForward, l, Pass::kForward, stores_[kernel].master, fwd.weights_desc());
  size_t bias_index = 0;
  const memory src =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], fwd.src_desc());
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
  if (layer.dense.bias) {
    bias_index = ParamIndex(l, "bias");
    DefineParam(bias_index, bias_md, bias_md);
    args[DNNL_ARG_BIAS] = stores_[bias_index].master;
  }
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, std::move(args));

  const bool bias = layer.dense.bias;
  return [=](const memory& diff_dst) {
    if (GradNeeded(in)) {
      dnnl::inner_product_backward_data::primitive_desc bwd_d(
          dnnl::inner_product_backward_data::desc(src_md, Any(wei_dims, act_dt_), dst_md), attr_,
          engine_, fwd);
      const memory dd =
          Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd_d.diff_dst_desc());
      const memory wd =
          Converted(Phase::kBackward, l, Pass::kBackwardData, weights, bwd_d.weights_desc());
      const memory diff_src = NewMemory(bwd_d.diff_src_desc());
      AddPrimitive(
          Phase::kBackward, l, Pass::kBackwardData, bwd_d,
          {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, wd}, {DNNL_ARG_DIFF_SRC, diff_src}});
      AddEdge(in, diff_src);
    }
    const memory dd =
        Converted(Phase::kBackward, l, Pass::kBackwardWeights, diff_dst, bwd_w.diff_dst_desc());
    const memory s = Converted(Phase::kBackward, l, Pass::kBackwardWeights, src, bwd_w.src_desc());
    const memory grad = stores_[kernel].grad;
    const bool direct = bwd_w.diff_weights_desc() == grad.get_desc();
    const memory dw = direct ? grad : NewMemory(bwd_w.diff_weights_desc());
    std::unordered_map<int, memory> bargs{
        {DNNL_ARG_SRC, s}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}};
    if (bias) bargs[DNNL_ARG_DIFF_BIAS] = stores_[bias_index].grad;
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardWeights, bwd_w, std::move(bargs));
    if (!direct) {
      dnnl::reorder::primitive_desc pd(engine_, dw.get_desc(), engine_, grad.get_desc(), attr_);
      AddPrimitive(Phase::kBackward, l, Pass::kBackwardWeights, pd,
                   {{DNNL_ARG_FROM, dw}, {DNNL_ARG_TO, grad}});
    }
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
  auto flags = dnnl::normalization_flags::none;
  if (a.scale) flags |= dnnl::normalization_flags::use_scale;
  if (a.center) flags |= dnnl::normalization_flags::use_shift;
  const float eps = static_cast<float>(a.epsilon);

  dnnl::batch_normalization_forward::primitive_desc fwd(
      dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_training, data_md, eps,
                                              flags),
      attr_, engine_);
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc());
  const memory mean = NewMemory(fwd.mean_desc()), var = NewMemory(fwd.variance_desc());
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_MEAN, mean}, {DNNL_ARG_VARIANCE, var}};
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
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, std::move(args));
  // Moving statistics (Keras): moving = momentum*moving + (1-momentum)*batch.
  const memory moving_mean = stores_[ParamIndex(l, "moving_mean")].master;
  const memory moving_var = stores_[ParamIndex(l, "moving_variance")].master;
  const double momentum = a.momentum;
  AddCustom(Phase::kForward, l, Pass::kForward,
            [=] {
              MovingAverage(static_cast<float*>(moving_mean.get_data_handle()),
                            static_cast<const float*>(mean.get_data_handle()), channels, momentum);
              MovingAverage(static_cast<float*>(moving_var.get_data_handle()),
                            static_cast<const float*>(var.get_data_handle()), channels, momentum);
            },
            {mean, var});

  const bool trainable = layer.has_trainable_params();
  return [=](const memory& diff_dst) {
    dnnl::batch_normalization_backward::primitive_desc bwd(
        dnnl::batch_normalization_backward::desc(
            trainable ? dnnl::prop_kind::backward : dnnl::prop_kind::backward_data, data_md,
            data_md, eps, flags),
        attr_, engine_, fwd);
    const memory dd =
        Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd.diff_dst_desc());
    const memory diff_src = NewMemory(bwd.diff_src_desc());
    std::unordered_map<int, memory> bargs{{DNNL_ARG_SRC, src},
                                          {DNNL_ARG_MEAN, mean},
                                          {DNNL_ARG_VARIANCE, var},
                                          {DNNL_ARG_DIFF_DST, dd},
                                          {DNNL_ARG_DIFF_SRC, diff_src}};
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
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, bwd, std::move(bargs));
    if (GradNeeded(in)) AddEdge(in, diff_src);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildRelu(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc data_md = src.get_desc();
  const double max_value = layer.relu.max_value;
  const bool clipped = std::isfinite(max_value);
  const auto alg = clipped ? dnnl::algorithm::eltwise_clip_v2 : dnnl::algorithm::eltwise_relu;
  const float alpha = 0.0f, beta = clipped ? static_cast<float>(max_value) : 0.0f;
  dnnl::eltwise_forward::primitive_desc fwd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, alg, data_md, alpha, beta),
      attr_, engine_);
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc());
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return [=](const memory& diff_dst) {
    dnnl::eltwise_backward::primitive_desc bwd(
        dnnl::eltwise_backward::desc(alg, data_md, data_md, alpha, beta), attr_, engine_, fwd);
    const memory dd =
        Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd.diff_dst_desc());
    const memory diff_src = NewMemory(bwd.diff_src_desc());
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, bwd,
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_SRC, diff_src}});
    AddEdge(in, diff_src);
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildPool(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Window2d& w = layer.pool.window;
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc src_md = src.get_desc();
  const memory::dims dst_dims = Dims(l);
  const memory::dims strides{w.stride_h, w.stride_w}, kernel{w.kernel_h, w.kernel_w},
      pad_l{w.pad_top, w.pad_left}, pad_r{w.pad_bottom, w.pad_right};
  const auto alg = layer.kind == LayerKind::kMaxPool ? dnnl::algorithm::pooling_max
                   : layer.pool.count_include_pad    ? dnnl::algorithm::pooling_avg_include_padding
                                                     : dnnl::algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_forward::primitive_desc fwd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, alg, src_md,
                                  Any(dst_dims, act_dt_), strides, kernel, pad_l, pad_r),
      attr_, engine_);
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc());
  const bool has_ws = fwd.workspace_desc().get_size() > 0;
  const memory ws = has_ws ? NewMemory(fwd.workspace_desc()) : memory();
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (has_ws) args[DNNL_ARG_WORKSPACE] = ws;
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, std::move(args));
  return [=](const memory& diff_dst) {
    dnnl::pooling_backward::primitive_desc bwd(
        dnnl::pooling_backward::desc(alg, src_md, Any(dst_dims, act_dt_), strides, kernel, pad_l,
                                     pad_r),
        attr_, engine_, fwd);
    const memory dd =
        Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd.diff_dst_desc());
    const memory diff_src = NewMemory(bwd.diff_src_desc());
    std::unordered_map<int, memory> bargs{{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_SRC, diff_src}};
    if (has_ws) bargs[DNNL_ARG_WORKSPACE] = ws;
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, bwd, std::move(bargs));
    AddEdge(in, diff_src);
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
  const memory pooled = NewMemory(fwd.dst_desc());
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd,
               {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, pooled}});
  // {N, C, 1, 1} in plain layout is the {N, C} output.
  const memory::desc plain4 = Plain(pooled_dims, act_dt_);
  const memory flat4 = Converted(Phase::kForward, l, Pass::kForward, pooled, plain4);
  act_[static_cast<size_t>(l)] = View(Plain(Dims(l), act_dt_), flat4);
  return [=](const memory& diff_dst) {
    dnnl::pooling_backward::primitive_desc bwd(
        dnnl::pooling_backward::desc(alg, src_md, Any(pooled_dims, act_dt_), ones, kernel, zeros,
                                     zeros),
        attr_, engine_, fwd);
    const memory dd = Converted(Phase::kBackward, l, Pass::kBackwardData, View(plain4, diff_dst),
                                bwd.diff_dst_desc());
    const memory diff_src = NewMemory(bwd.diff_src_desc());
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, bwd,
                 {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_SRC, diff_src}});
    AddEdge(in, diff_src);
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
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(pd.dst_desc());
  args[DNNL_ARG_DST] = dst;
  AddPrimitive(Phase::kForward, l, Pass::kForward, pd, std::move(args));
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
  const memory::desc f32 = Plain(dims, Dt::f32);
  const memory logits =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(in)], f32);
  dnnl::logsoftmax_forward::primitive_desc fwd(
      dnnl::logsoftmax_forward::desc(dnnl::prop_kind::forward_training, f32, 1), attr_, engine_);
  const memory logp = NewMemory(fwd.dst_desc());
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd,
               {{DNNL_ARG_SRC, logits}, {DNNL_ARG_DST, logp}});
  labels_.assign(static_cast<size_t>(rows), 0);
  // Cross-entropy: loss = -mean_r log p[r, label_r].
  AddCustom(Phase::kForward, l, Pass::kForward,
            [this, logp, rows, classes] {
              const float* lp = static_cast<const float*>(logp.get_data_handle());
              double sum = 0;
              for (int64_t r = 0; r < rows; ++r) {
                sum -= lp[r * classes + labels_[static_cast<size_t>(r)]];
              }
              loss_ = sum / static_cast<double>(rows);
            },
            {logp});
  SetImplementation(l, Pass::kForward, "fitspeed");
  return [=](const memory&) {
    // d loss / d logits = (softmax - onehot) / rows.
    const memory grad = NewMemory(f32);
    AddCustom(Phase::kBackward, l, Pass::kBackwardData,
              [this, logp, grad, rows, classes] {
                const float* lp = static_cast<const float*>(logp.get_data_handle());
                float* g = static_cast<float*>(grad.get_data_handle());
                const float scale = 1.0f / static_cast<float>(rows);
#pragma omp parallel for schedule(static) if (rows * classes > 65536)
                for (int64_t r = 0; r < rows; ++r) {
                  for (int64_t k = 0; k < classes; ++k) {
                    g[r * classes + k] = std::exp(lp[r * classes + k]) * scale;
                  }
                  g[r * classes + labels_[static_cast<size_t>(r)]] -= scale;
                }
              },
              {logp, grad});
    SetImplementation(l, Pass::kBackwardData, "fitspeed");
    AddEdge(in, Converted(Phase::kBackward, l, Pass::kBackwardData, grad,
                          act_[static_cast<size_t>(in)].get_desc()));
  };
}

OnednnExecutor::BackwardBuilder OnednnExecutor::BuildEltwise(int l, dnnl::algorithm alg,
                                                             float alpha) {
  const int in = network().layer(l).input_ids[0];
  const memory src = act_[static_cast<size_t>(in)];
  const memory::desc data_md = src.get_desc();
  dnnl::eltwise_forward::primitive_desc fwd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, alg, data_md, alpha, 0.0f),
      attr_, engine_);
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc());
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return [=](const memory& diff_dst) {
    dnnl::eltwise_backward::primitive_desc bwd(
        dnnl::eltwise_backward::desc(alg, data_md, data_md, alpha, 0.0f), attr_, engine_, fwd);
    const memory dd =
        Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd.diff_dst_desc());
    const memory diff_src = NewMemory(bwd.diff_src_desc());
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, bwd,
                 {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_SRC, diff_src}});
    AddEdge(in, diff_src);
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
  const memory::desc a_f32 = Plain(Dims(a), Dt::f32), b_f32 = Plain(Dims(b), Dt::f32);
  const memory x =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(a)], a_f32);
  const memory s =
      Converted(Phase::kForward, l, Pass::kForward, act_[static_cast<size_t>(b)], b_f32);
  const memory y = NewMemory(a_f32);
  // x is {scales, inner}: inner = H*W when s is {N, C} broadcast over {N, C, H, W}, else 1.
  const int64_t scales = static_cast<int64_t>(b_f32.get_size() / sizeof(float));
  const int64_t inner = static_cast<int64_t>(a_f32.get_size() / sizeof(float)) / scales;
  const bool parallel = scales * inner > 65536;
  auto f = [](const memory& m) { return static_cast<float*>(m.get_data_handle()); };
  AddCustom(Phase::kForward, l, Pass::kForward,
            [=] {
              const float* xp = f(x);
              const float* sp = f(s);
              float* yp = f(y);
#pragma omp parallel for schedule(static) if (parallel)
              for (int64_t j = 0; j < scales; ++j) {
                for (int64_t i = 0; i < inner; ++i) yp[j * inner + i] = xp[j * inner + i] * sp[j];
              }
            },
            {x, s, y});
  SetImplementation(l, Pass::kForward, "fitspeed");
  act_[static_cast<size_t>(l)] =
      Converted(Phase::kForward, l, Pass::kForward, y, Plain(Dims(a), act_dt_));
  return [=](const memory& diff_dst) {
    const memory dy = Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, a_f32);
    SetImplementation(l, Pass::kBackwardData, "fitspeed");
    if (GradNeeded(a)) {  // dx = dy * s
      const memory dx = NewMemory(a_f32);
      AddCustom(Phase::kBackward, l, Pass::kBackwardData,
                [=] {
                  const float* dyp = f(dy);
                  const float* sp = f(s);
                  float* dxp = f(dx);
#pragma omp parallel for schedule(static) if (parallel)
                  for (int64_t j = 0; j < scales; ++j) {
                    for (int64_t i = 0; i < inner; ++i) {
                      dxp[j * inner + i] = dyp[j * inner + i] * sp[j];
                    }
                  }
                },
                {dy, s, dx});
      // In the activations' data type, as every other gradient (BF16: one more reorder).
      AddEdge(a, Converted(Phase::kBackward, l, Pass::kBackwardData, dx, Plain(Dims(a), act_dt_)));
    }
    if (GradNeeded(b)) {  // ds = dy * x, summed over H*W when broadcast
      const memory ds = NewMemory(b_f32);
      AddCustom(Phase::kBackward, l, Pass::kBackwardData,
                [=] {
                  const float* dyp = f(dy);
                  const float* xp = f(x);
                  float* dsp = f(ds);
#pragma omp parallel for schedule(static) if (parallel)
                  for (int64_t j = 0; j < scales; ++j) {
                    float sum = 0;
                    for (int64_t i = 0; i < inner; ++i) {
                      sum += dyp[j * inner + i] * xp[j * inner + i];
                    }
                    dsp[j] = sum;
                  }
                },
                {dy, x, ds});
      AddEdge(b, Converted(Phase::kBackward, l, Pass::kBackwardData, ds, Plain(Dims(b), act_dt_)));
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
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(pd.dst_desc());
  args[DNNL_ARG_DST] = dst;
  AddPrimitive(Phase::kForward, l, Pass::kForward, pd, std::move(args));
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
  const memory dst = act_[static_cast<size_t>(l)] = NewMemory(fwd.dst_desc());
  const bool has_ws = fwd.workspace_desc().get_size() > 0;
  const memory ws = has_ws ? NewMemory(fwd.workspace_desc()) : memory();
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (has_ws) args[DNNL_ARG_WORKSPACE] = ws;
  AddPrimitive(Phase::kForward, l, Pass::kForward, fwd, std::move(args));
  const int64_t size = a.size;
  return [=](const memory& diff_dst) {
    dnnl::lrn_backward::primitive_desc bwd(
        dnnl::lrn_backward::desc(alg, data_md, data_md, size, alpha, beta, k), attr_, engine_, fwd);
    const memory dd =
        Converted(Phase::kBackward, l, Pass::kBackwardData, diff_dst, bwd.diff_dst_desc());
    const memory diff_src = NewMemory(bwd.diff_src_desc());
    std::unordered_map<int, memory> bargs{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_SRC, diff_src}};
    if (has_ws) bargs[DNNL_ARG_WORKSPACE] = ws;
    AddPrimitive(Phase::kBackward, l, Pass::kBackwardData, bwd, std::move(bargs));
    AddEdge(in, diff_src);
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
  const memory& input = act_[0];
  const memory::dims dims = Dims(0);
  std::vector<float> f(values.begin(), values.end());
  FITSPEED_CHECK(f.size() * sizeof(float) == Plain(dims, Dt::f32).get_size(),
                 "input size does not match the network");
  FITSPEED_CHECK(labels.size() == labels_.size(), "label count does not match the loss rows");
  for (int32_t label : labels) {
    FITSPEED_CHECK(label >= 0 && label < network().num_classes(), "label out of range");
  }
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

std::vector<double> OnednnExecutor::Output(int layer) const {
  FITSPEED_CHECK(layer >= 0 && layer < network().size() - 1, "no output to read for this layer");
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
  if (precision == Precision::kFp32) return;
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
