#include "fitspeed/model/network_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fitspeed/core/error.h"
#include "kinds/kind.h"

namespace fitspeed {

namespace {

// Per trainable parameter: FLOPs, elements read and written by the optimizer
// (the formulas at Optimizer in cost.h).
struct UpdateCounts {
  double flops;
  double reads;
  double writes;
};
UpdateCounts UpdateCountsOf(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return {2, 2, 1};
    case Optimizer::kSgdMomentum:
      return {4, 3, 2};
    case Optimizer::kAdam:
      // m: 2 mul + 1 add; v: 3 mul + 1 add; w: sqrt, add eps, divide, mul lr, subtract.
      return {12, 4, 3};
    case Optimizer::kRmsprop:
      // v: 3 mul + 1 add; m: sqrt, add eps, divide, mul mu, add; w: mul lr, subtract.
      return {11, 4, 3};
  }
  return {0, 0, 0};
}

using kinds::AddStep;
using kinds::Elements;

// A layer id as an index into per-layer vectors.
size_t Index(int id) { return static_cast<size_t>(id); }

// The counts of one layer. `grads[i]` says whether a gradient reaches layer i's
// output (it or a layer before it has trainable parameters); the layer's
// backward-data pass runs when some input carries a gradient.
LayerCost CountLayer(const Network& net, int id, const std::vector<bool>& grads) {
  const Layer& layer = net.layer(id);
  const kinds::KindRules& rules = kinds::RulesOf(layer.kind);
  LayerCost c;
  c.params = layer.ParamCount();
  c.trainable_params = layer.TrainableParamCount();
  c.activation_elements = rules.view ? 0 : layer.output_shape.elements();
  if (layer.kind == LayerKind::kInput) return c;

  kinds::CostContext context{net, layer, grads};
  context.in = Elements(net.layer(layer.input_ids.front()).output_shape);
  context.out = Elements(layer.output_shape);
  for (size_t k = 0; k < layer.input_ids.size(); ++k) {
    context.input_grad = context.input_grad || context.GradTo(k);
  }
  if (rules.cost != nullptr) rules.cost(context, c);

  // Gradients arriving from k > 1 consumers are summed.
  const double consumers = static_cast<double>(layer.consumer_ids.size());
  if (grads[Index(id)] && consumers > 1) {
    kinds::AddSample(c.backward_data, (consumers - 1) * context.out, consumers * context.out,
                     context.out);
  }
  return c;
}

// Per layer id, how many times its output's elements a sequence holds on
// unpadded sequences of different lengths (Network::mean_square_tokens): the
// mean square of the lengths over T^2 for the {H, T, T} outputs of every
// attention core (scores, softmax, dropout), 1 elsewhere.
std::vector<double> SquareScale(const Network& net) {
  std::vector<double> scale(Index(net.size()), 1.0);
  if (net.mean_square_tokens <= 0) return scale;
  for (const AttentionCore& core : FindAttentionCores(net)) {
    const Shape& scores = net.layer(core.scores).output_shape;
    const double r = net.mean_square_tokens / static_cast<double>(scores.dims[1] * scores.dims[2]);
    for (int id : {core.scores, core.softmax, core.dropout}) {
      if (id >= 0) scale[Index(id)] = r;
    }
  }
  return scale;
}

// The counts of each attention core on unpadded sequences of different
// lengths (Network::mean_square_tokens) from those at T tokens: every FLOP of
// the core's layers is per {H, T, T} element (T^2 multiply-adds per head and
// head dimension, per score element), and so is all the softmax's and
// dropout's traffic; of the scores' traffic, its output (written forward,
// read backward by each operand's gradient), of the context's, its
// probabilities operand (read forward and by dV, written by dP). Q, K, V and
// O are per token. Counted before FuseAttention, which keeps the FLOPs.
void SpreadAttention(const Network& net, const std::vector<bool>& grads,
                     std::vector<LayerCost>& layers) {
  if (net.mean_square_tokens <= 0) return;
  const std::vector<double> scale = SquareScale(net);
  for (const AttentionCore& core : FindAttentionCores(net)) {
    const double r = scale[Index(core.scores)];
    for (int id : {core.scores, core.softmax, core.dropout, core.context}) {
      if (id < 0) continue;
      LayerCost& c = layers[Index(id)];
      for (Pass p : {Pass::kForward, Pass::kBackwardData}) {
        PassCost& pass = c.pass(p);
        pass.flops.per_sample *= r;
        if (id == core.softmax || id == core.dropout) {
          pass.elements_read.per_sample *= r;
          pass.elements_written.per_sample *= r;
        }
      }
      if (id != core.context) {
        c.activation_elements = std::llround(static_cast<double>(c.activation_elements) * r);
      }
    }
    const Layer& scores = net.layer(core.scores);
    const double extra = (r - 1) * Elements(scores.output_shape);
    layers[Index(core.scores)].forward.elements_written.per_sample += extra;
    for (int input : scores.input_ids) {
      if (grads[Index(input)])
        layers[Index(core.scores)].backward_data.elements_read.per_sample += extra;
    }
    const Layer& context = net.layer(core.context);
    LayerCost& c = layers[Index(core.context)];
    c.forward.elements_read.per_sample += extra;
    if (grads[Index(context.input_ids[0])]) c.backward_data.elements_written.per_sample += extra;
    if (grads[Index(context.input_ids[1])]) c.backward_data.elements_read.per_sample += extra;
  }
}

// Activation elements per sample that the forward pass leaves for the backward
// pass: the tensors each layer's backward reads ("saved tensors", the `saved`
// rule of each kind in src/model/kinds/). A tensor is counted once, however
// many layers need it; a view's output (flatten) is its input's tensor.
// Only the layers first..last save (the whole network by default), and only
// tensors of layers at or after `counted_from` count (for a checkpoint
// segment, its first layer: the tensor it starts from is its boundary,
// counted apart).
double SavedElements(const Network& net, const std::vector<bool>& grads,
                     const std::vector<AttentionCore>& fused, int first = 1, int last = -1,
                     int counted_from = 0) {
  if (last < 0) last = net.size() - 1;
  // The tensor a layer's output is: its own, or its input's for a view.
  std::vector<int> tensor(Index(net.size()));
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    tensor[Index(id)] =
        kinds::RulesOf(layer.kind).view ? tensor[Index(layer.input_ids.front())] : id;
  }
  // A fused attention core keeps Q and K (the scores' saved inputs), V, O and
  // the log-sum-exp of each score row, nothing of {H, T, T}.
  std::vector<bool> in_core(Index(net.size()), false);
  const std::vector<double> scale = SquareScale(net);
  std::vector<int> keep;
  double elements = 0;
  for (const AttentionCore& core : fused) {
    for (int id : {core.softmax, core.dropout, core.context}) {
      if (id >= 0) in_core[Index(id)] = true;
    }
    if (!grads[Index(core.context)] || core.context < first || core.context > last) continue;
    keep.push_back(net.layer(core.context).input_ids[1]);  // V
    keep.push_back(core.context);                          // O
    const Shape& scores = net.layer(core.scores).output_shape;
    elements += static_cast<double>(scores.dims[0] * scores.dims[1]);  // H*T log-sum-exps
  }
  for (int id = std::max(first, 1); id <= last; ++id) {
    if (!grads[Index(id)] || in_core[Index(id)]) continue;  // no backward pass, or fused
    const Layer& layer = net.layer(id);
    const kinds::KindRules& rules = kinds::RulesOf(layer.kind);
    if (rules.saved == nullptr) continue;
    kinds::SaveContext context{net, layer, id, grads, keep};
    rules.saved(context);
    elements += context.extra * scale[Index(id)];
  }
  std::vector<bool> kept(Index(net.size()), false);
  for (int id : keep) kept[Index(tensor[Index(id)])] = true;
  for (int id = counted_from; id < net.size(); ++id) {
    if (kept[Index(id)]) elements += Elements(net.layer(id).output_shape) * scale[Index(id)];
  }
  return elements;
}

// Peak activation-gradient elements per sample alive at once in the backward
// pass. The gradient of a layer's output is alive from the backward step of its
// last consumer (the first to produce a part of it) to its producer's step, so
// at a layer's step its output gradient, its inputs' gradients and those still
// waiting across a residual branch are alive. An upper bound: operands of an
// add are counted as separate gradients (PyTorch passes them the same tensor),
// the loss's scalar and outputs that receive no gradient are not counted. The
// result is at least two of the largest layer output (an incoming and an
// outgoing gradient), which also covers the forward pass's transient: an
// output that is not kept, alive until its consumer has run.
double PeakGradientElements(const Network& net, const std::vector<bool>& grads,
                            const std::vector<AttentionCore>& fused) {
  // Inside a fused attention core the gradients of scores and probabilities
  // stay on chip.
  std::vector<bool> on_chip(Index(net.size()), false);
  for (const AttentionCore& core : fused) {
    for (int id : {core.scores, core.softmax, core.dropout}) {
      if (id >= 0) on_chip[Index(id)] = true;
    }
  }
  // alive[j] - alive[j-1]: gradients that start or end being alive at step j.
  std::vector<double> change(Index(net.size()) + 1, 0);
  const std::vector<double> scale = SquareScale(net);
  double largest = 0;
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    if (on_chip[Index(id)]) continue;
    const double elements = Elements(layer.output_shape) * scale[Index(id)];
    largest = std::max(largest, elements);
    if (!grads[Index(id)] || layer.consumer_ids.empty()) continue;  // no gradient, or the loss
    change[Index(id)] += elements;
    change[Index(layer.consumer_ids.back()) + 1] -= elements;
  }
  double alive = 0;
  double peak = 2 * largest;
  for (double c : change) {
    alive += c;
    peak = std::max(peak, alive);
  }
  return peak;
}

// Re-counts the layers of each core as one fused kernel (AttentionKernel::kFused
// in cost.h) at the context layer; the other layers of the core count 0.
void FuseAttention(const Network& net, const std::vector<AttentionCore>& cores,
                   std::vector<LayerCost>& layers) {
  for (const AttentionCore& core : cores) {
    LayerCost fused;
    const Layer& scores = net.layer(core.scores);
    const Layer& context = net.layer(core.context);
    const double q = Elements(net.layer(scores.input_ids[0]).output_shape);
    const double k = Elements(net.layer(scores.input_ids[1]).output_shape);
    const double v = Elements(net.layer(context.input_ids[1]).output_shape);
    const double o = Elements(context.output_shape);
    const double lse =
        static_cast<double>(scores.output_shape.dims[0] * scores.output_shape.dims[1]);
    double recompute = 0;
    for (int id : {core.scores, core.softmax, core.dropout, core.context}) {
      if (id < 0) continue;
      LayerCost& c = layers[Index(id)];
      fused.forward.flops += c.forward.flops;
      fused.backward_data.flops += c.backward_data.flops;
      if (id != core.context) recompute += c.forward.flops.per_sample;
      fused.activation_elements += id == core.context ? c.activation_elements : 0;
      c = LayerCost();
    }
    // Forward: reads Q, K, V, writes O and the log-sum-exp.
    kinds::AddSample(fused.forward, 0, q + k + v, o + lse);
    // Backward: D = rowsum(dO*O) (2 per element of O), the scores, softmax
    // and mask recomputed, then dV, dP, dS, dQ, dK; reads Q, K, V, O, dO and
    // the log-sum-exp, writes dQ, dK, dV.
    if (fused.backward_data.flops.per_sample > 0) {
      kinds::AddSample(fused.backward_data, recompute + 2 * o, q + k + v + 2 * o + lse, q + k + v);
    }
    layers[Index(core.context)] = fused;
    // The head split in front of Q, K and V and the merge after O are views
    // for a fused kernel, which reads Q, K, V and writes O (and their
    // gradients) with the heads strided in the {T, H x D} rows (PyTorch's
    // scaled_dot_product_attention on q.view(b, t, h, d).transpose(1, 2),
    // FlashAttention, cuDNN's and Transformer Engine's fused attention on
    // packed QKV): no copy kernels. Their outputs stay counted as held.
    const auto view = [&](int id, LayerKind kind) {
      if (id < 0 || net.layer(id).kind != kind) return;
      LayerCost& c = layers[Index(id)];
      c.forward = PassCost();
      c.backward_data = PassCost();
      c.backward_weights = PassCost();
    };
    view(scores.input_ids[0], LayerKind::kSplitHeads);
    view(scores.input_ids[1], LayerKind::kSplitHeads);
    view(context.input_ids[1], LayerKind::kSplitHeads);
    if (context.consumer_ids.size() == 1)
      view(context.consumer_ids.front(), LayerKind::kMergeHeads);
  }
}

}  // namespace

const char* AttentionKernelName(AttentionKernel kernel) {
  return kernel == AttentionKernel::kFused ? "fused" : "unfused";
}

AttentionKernel ParseAttentionKernel(const std::string& name) {
  if (name == "unfused") return AttentionKernel::kUnfused;
  if (name == "fused" || name == "flash") return AttentionKernel::kFused;
  throw UsageError(fmt::format("unknown attention kernel '{}' (known: unfused, fused)", name));
}

std::vector<AttentionCore> FindAttentionCores(const Network& net) {
  FITSPEED_CHECK(net.finalized(), "FindAttentionCores needs a finalized network");
  // The only consumer of `id`, or -1.
  const auto only = [&](int id) {
    const Layer& layer = net.layer(id);
    return layer.consumer_ids.size() == 1 ? layer.consumer_ids.front() : -1;
  };
  std::vector<AttentionCore> cores;
  for (int id = 0; id < net.size(); ++id) {
    const Layer& softmax = net.layer(id);
    if (softmax.kind != LayerKind::kSoftmax) continue;
    AttentionCore core;
    core.softmax = id;
    core.scores = softmax.input_ids.front();
    const Layer& scores = net.layer(core.scores);
    if (scores.kind != LayerKind::kBatchedMatmul || !scores.matmul.transpose_b ||
        only(core.scores) != id) {
      continue;
    }
    int probs = id;
    const int next = only(id);
    if (next >= 0 && net.layer(next).kind == LayerKind::kDropout) {
      core.dropout = next;
      probs = next;
    }
    const int context = only(probs);
    if (context < 0 || net.layer(context).kind != LayerKind::kBatchedMatmul ||
        net.layer(context).matmul.transpose_b || net.layer(context).input_ids[0] != probs) {
      continue;
    }
    core.context = context;
    cores.push_back(core);
  }
  return cores;
}

std::vector<CheckpointSegment> CheckpointSegments(const Network& net) {
  FITSPEED_CHECK(net.finalized(), "CheckpointSegments needs a finalized network");
  // The last layer reading each layer's output (its own id when none does).
  std::vector<int> last_read(Index(net.size()));
  for (int id = 0; id < net.size(); ++id) {
    last_read[Index(id)] = id;
    for (int input : net.layer(id).input_ids) {
      last_read[Index(input)] = std::max(last_read[Index(input)], id);
    }
  }
  std::vector<CheckpointSegment> segments;
  int first = 1;
  for (int id = 1; id < net.size(); ++id) {
    // A cut after `id`: no earlier output is read after it, and a later layer reads its own.
    bool cut = id + 1 < net.size() && last_read[Index(id)] > id;
    for (int earlier = 0; cut && earlier < id; ++earlier) cut = last_read[Index(earlier)] <= id;
    if (cut || id + 1 == net.size()) {
      segments.push_back({first, id});
      first = id + 1;
    }
  }
  return segments;
}

std::vector<bool> GradientReaches(const Network& net) {
  std::vector<bool> grads(static_cast<size_t>(net.size()), false);
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    bool reaches = layer.has_trainable_params();
    for (int input : layer.input_ids) reaches = reaches || grads[static_cast<size_t>(input)];
    grads[static_cast<size_t>(id)] = reaches;
  }
  return grads;
}

const char* PassName(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "forward";
    case Pass::kBackwardData:
      return "backward-data";
    case Pass::kBackwardWeights:
      return "backward-weights";
    case Pass::kUpdate:
      return "update";
  }
  return "unknown";
}

const char* OptimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kSgdMomentum:
      return "sgd-momentum";
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kRmsprop:
      return "rmsprop";
  }
  return "unknown";
}

Optimizer ParseOptimizer(const std::string& name) {
  if (name == "sgd") return Optimizer::kSgd;
  if (name == "sgd-momentum" || name == "momentum") return Optimizer::kSgdMomentum;
  if (name == "adam") return Optimizer::kAdam;
  if (name == "rmsprop") return Optimizer::kRmsprop;
  throw UsageError(
      fmt::format("unknown optimizer '{}' (known: sgd, sgd-momentum, adam, rmsprop)", name));
}

int OptimizerStatePerParam(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return 0;
    case Optimizer::kSgdMomentum:
      return 1;
    case Optimizer::kAdam:
    case Optimizer::kRmsprop:
      return 2;
  }
  return 0;
}

Count& Count::operator+=(const Count& other) {
  per_sample += other.per_sample;
  per_step += other.per_step;
  return *this;
}

double PassCost::BytesRead(double batch, double bytes_per_element) const {
  return elements_read.At(batch) * bytes_per_element;
}

double PassCost::BytesWritten(double batch, double bytes_per_element) const {
  return elements_written.At(batch) * bytes_per_element;
}

double PassCost::BytesRead(double batch, double sample_bytes, double step_bytes) const {
  return elements_read.per_sample * batch * sample_bytes + elements_read.per_step * step_bytes;
}

double PassCost::BytesWritten(double batch, double sample_bytes, double step_bytes) const {
  return elements_written.per_sample * batch * sample_bytes +
         elements_written.per_step * step_bytes;
}

PassCost& PassCost::operator+=(const PassCost& other) {
  flops += other.flops;
  elements_read += other.elements_read;
  elements_written += other.elements_written;
  return *this;
}

const PassCost& LayerCost::pass(Pass p) const {
  switch (p) {
    case Pass::kForward:
      return forward;
    case Pass::kBackwardData:
      return backward_data;
    case Pass::kBackwardWeights:
      return backward_weights;
    case Pass::kUpdate:
      return update;
  }
  return forward;
}

PassCost& LayerCost::pass(Pass p) {
  return const_cast<PassCost&>(static_cast<const LayerCost&>(*this).pass(p));
}

PassCost LayerCost::Step() const {
  PassCost sum = forward;
  sum += backward_data;
  sum += backward_weights;
  sum += update;
  return sum;
}

LayerCost& LayerCost::operator+=(const LayerCost& other) {
  for (Pass p : kAllPasses) pass(p) += other.pass(p);
  params += other.params;
  trainable_params += other.trainable_params;
  activation_elements += other.activation_elements;
  return *this;
}

double NetworkCost::ForwardFlopsPerSample() const { return total.forward.flops.per_sample; }

double NetworkCost::TrainFlopsPerSample() const {
  return total.forward.flops.per_sample + total.backward_data.flops.per_sample +
         total.backward_weights.flops.per_sample;
}

double NetworkCost::UpdateFlopsPerStep() const { return total.update.flops.per_step; }

double NetworkCost::StepFlops(double batch) const { return total.Step().flops.At(batch); }

NetworkCost CountCost(const Network& network, Optimizer optimizer, AttentionKernel attention) {
  FITSPEED_CHECK(network.finalized(), "CountCost needs a finalized network");
  NetworkCost cost;
  cost.optimizer = optimizer;
  const UpdateCounts update = UpdateCountsOf(optimizer);
  const std::vector<bool> output_grad = GradientReaches(network);
  for (int id = 0; id < network.size(); ++id) {
    LayerCost c = CountLayer(network, id, output_grad);
    const double trainable = static_cast<double>(c.trainable_params);
    c.update.flops.per_step = update.flops * trainable;
    AddStep(c.update, update.reads * trainable, update.writes * trainable);
    cost.layers.push_back(c);
  }
  SpreadAttention(network, output_grad, cost.layers);
  if (attention == AttentionKernel::kFused) {
    FuseAttention(network, FindAttentionCores(network), cost.layers);
  }
  for (const LayerCost& c : cost.layers) cost.total += c;
  return cost;
}

MemoryEstimate EstimateTrainingMemory(const Network& network, double batch, Optimizer optimizer,
                                      double activation_bytes, double parameter_bytes,
                                      AttentionKernel attention, bool recompute) {
  FITSPEED_CHECK(network.finalized(), "EstimateTrainingMemory needs a finalized network");
  const std::vector<bool> grads = GradientReaches(network);
  MemoryEstimate m;
  const double params = static_cast<double>(network.ParamCount());
  const double trainable = static_cast<double>(network.TrainableParamCount());
  m.parameter_bytes = params * parameter_bytes;
  m.gradient_bytes = trainable * parameter_bytes;
  m.optimizer_state_bytes = trainable * OptimizerStatePerParam(optimizer) * parameter_bytes;
  const std::vector<AttentionCore> fused = attention == AttentionKernel::kFused
                                               ? FindAttentionCores(network)
                                               : std::vector<AttentionCore>();
  double saved = 0;
  if (!recompute) {
    saved = SavedElements(network, grads, fused);
  } else {
    // The network input and the tensor at each cut before a segment whose
    // backward runs, plus the largest segment's own saved tensors.
    const std::vector<CheckpointSegment> segments = CheckpointSegments(network);
    double largest = 0;
    for (size_t k = 0; k < segments.size(); ++k) {
      const CheckpointSegment& s = segments[k];
      bool backward = false;
      for (int id = s.first; id <= s.last; ++id) backward = backward || grads[Index(id)];
      if (!backward) continue;
      const int boundary = k == 0 ? 0 : segments[k - 1].last;
      saved += Elements(network.layer(boundary).output_shape);
      largest = std::max(largest, SavedElements(network, grads, fused, s.first, s.last, s.first));
    }
    saved += largest;
  }
  m.activation_bytes = batch * saved * activation_bytes;
  m.activation_gradient_bytes =
      batch * PeakGradientElements(network, grads, fused) * activation_bytes;
  return m;
}

}  // namespace fitspeed
