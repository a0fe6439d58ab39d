#include "fitspeed/model/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "fitspeed/core/error.h"

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

// Adds per-sample (activation) work.
void AddSample(PassCost& pass, double flops, double read, double written) {
  pass.flops.per_sample += flops;
  pass.elements_read.per_sample += read;
  pass.elements_written.per_sample += written;
}

// Adds per-step (parameter) traffic.
void AddStep(PassCost& pass, double read, double written) {
  pass.elements_read.per_step += read;
  pass.elements_written.per_step += written;
}

double Elements(const Shape& shape) { return static_cast<double>(shape.elements()); }

// A layer id as an index into per-layer vectors.
size_t Index(int id) { return static_cast<size_t>(id); }

double BiasElements(const Layer& layer) {
  double n = 0;
  for (const ParamTensor& p : layer.params) {
    if (p.name == "bias") n += Elements(p.shape);
  }
  return n;
}

// The counts of one layer. `grads[i]` says whether a gradient reaches layer i's
// output (it or a layer before it has trainable parameters); the layer's
// backward-data pass runs when some input carries a gradient.
LayerCost CountLayer(const Network& net, int id, const std::vector<bool>& grads) {
  const Layer& layer = net.layer(id);
  bool input_grad = false;
  for (int input : layer.input_ids) input_grad = input_grad || grads[static_cast<size_t>(input)];
  const bool output_grad = grads[static_cast<size_t>(id)];
  LayerCost c;
  c.params = layer.ParamCount();
  c.trainable_params = layer.TrainableParamCount();
  const double out = Elements(layer.output_shape);
  c.activation_elements = layer.kind == LayerKind::kFlatten ? 0 : layer.output_shape.elements();
  if (layer.kind == LayerKind::kInput) return c;

  const Shape& in_shape = net.layer(layer.input_ids.front()).output_shape;
  const double in = Elements(in_shape);
  const double weights = static_cast<double>(c.params) - BiasElements(layer);
  const double bias = BiasElements(layer);
  PassCost& fwd = c.forward;
  PassCost& bwd_data = c.backward_data;
  PassCost& bwd_weights = c.backward_weights;

  switch (layer.kind) {
    case LayerKind::kInput:
      break;
    case LayerKind::kConv2d:
    case LayerKind::kDense: {
      // Multiply-adds per sample: every output element takes one dot product of
      // the fan-in (C/groups*kh*kw for a convolution, F for dense).
      const double fan_in =
          layer.kind == LayerKind::kConv2d
              ? Elements(layer.params.front().shape) / static_cast<double>(layer.conv.out_channels)
              : static_cast<double>(in_shape.dims.back());
      const double macs = out * fan_in;
      const double bias_adds = bias > 0 ? out : 0;
      AddSample(fwd, 2 * macs + bias_adds, in, out);
      AddStep(fwd, weights + bias, 0);
      if (input_grad) {
        AddSample(bwd_data, 2 * macs, out, in);  // dx = W^T dy: the same multiply-adds
        AddStep(bwd_data, weights, 0);
      }
      AddSample(bwd_weights, 2 * macs + bias_adds, in + out, 0);  // dW = dy x^T, db = sum dy
      AddStep(bwd_weights, 0, weights + bias);
      break;
    }
    case LayerKind::kBatchNorm: {
      const double channels = static_cast<double>(in_shape.dims.front());
      // Forward (training): sum x (1) and sum x*x (2) per element, then
      // y = a*x + c with per-channel a = gamma/sqrt(var + eps), c = beta - a*mean (2).
      AddSample(fwd, 5 * in, 2 * in, out);
      AddStep(fwd, static_cast<double>(c.params), 2 * channels);  // moving statistics updated
      // Backward (Ioffe & Szegedy 2015, sec. 3): the sums sum(dy) (1) and
      // sum(dy*xhat) with xhat recomputed (4) give dbeta and dgamma; then
      // dx = a*(dy - sum(dy)/m - xhat*sum(dy*xhat)/m) with xhat recomputed: 6 per element.
      PassCost& sums = c.trainable_params > 0 ? bwd_weights : bwd_data;
      if (c.trainable_params > 0 || input_grad) {
        AddSample(sums, 5 * in, 2 * in, 0);
        if (c.trainable_params > 0) {
          AddStep(bwd_weights, 0, static_cast<double>(c.trainable_params));
        }
      }
      if (input_grad) {
        AddSample(bwd_data, 6 * in, 2 * in, in);
        AddStep(bwd_data, static_cast<double>(c.params), 0);
      }
      break;
    }
    case LayerKind::kRelu:
      AddSample(fwd, in, in, out);  // one max (and one min when capped, not counted)
      if (input_grad) AddSample(bwd_data, in, 2 * out, in);  // dx = dy where 0 < y < max
      break;
    case LayerKind::kAvgPool:
    case LayerKind::kMaxPool: {
      const Window2d& w = layer.pool.window;
      const double window = static_cast<double>(w.kernel_h) * w.kernel_w;
      if (layer.kind == LayerKind::kAvgPool) {
        AddSample(fwd, out * (window + 1), in, out);                       // window adds, one scale
        if (input_grad) AddSample(bwd_data, out * (window + 1), out, in);  // scale, spread
      } else {
        AddSample(fwd, out * window, in, out);  // window compares
        // dy goes to the window's maximum, found again from x and y.
        if (input_grad) AddSample(bwd_data, out, in + 2 * out, in);
      }
      break;
    }
    case LayerKind::kGlobalAvgPool:
      AddSample(fwd, in + out, in, out);                 // sum, then one scale per channel
      if (input_grad) AddSample(bwd_data, in, out, in);  // dx = dy/(H*W) broadcast
      break;
    case LayerKind::kAdd: {
      const double n = static_cast<double>(layer.input_ids.size());
      AddSample(fwd, (n - 1) * out, n * out, out);
      // Backward: each input's gradient is dy itself (shared, no work).
      break;
    }
    case LayerKind::kFlatten:
      break;  // a view: no data moves in either direction
    case LayerKind::kSoftmaxCrossEntropy:
      // Forward per logit: max, subtract, exp, sum (4); the log and the label's
      // term per row are not counted. Backward: (softmax - onehot)/batch: 2.
      AddSample(fwd, 4 * in, in, out);
      if (input_grad) AddSample(bwd_data, 2 * in, in, in);
      break;
    case LayerKind::kSigmoid:
      // s = 1/(1 + exp(-x)): exp, add, divide (3). Backward from the output:
      // dx = dy*s*(1 - s): subtract, two multiplies (3), reads s and dy.
      AddSample(fwd, 3 * in, in, out);
      if (input_grad) AddSample(bwd_data, 3 * in, 2 * out, in);
      break;
    case LayerKind::kSwish:
      // y = x*s(x): s (3) and a multiply (4). Backward from the input, s
      // recomputed (3): dx = dy*s*(1 + x*(1 - s)): subtract, multiply, add,
      // multiply, multiply (5): 8; reads x and dy.
      AddSample(fwd, 4 * in, in, out);
      if (input_grad) AddSample(bwd_data, 8 * in, 2 * out, in);
      break;
    case LayerKind::kMul: {
      // y = a*b (b broadcast): one multiply per output element.
      const int b_id = layer.input_ids[1];
      const double b = Elements(net.layer(b_id).output_shape);
      AddSample(fwd, out, in + b, out);
      // da = dy*b: a multiply per element, reads dy and b.
      if (grads[static_cast<size_t>(layer.input_ids[0])]) AddSample(bwd_data, out, out + b, in);
      // db = dy*a, summed over H*W when broadcast: a multiply-add per element.
      if (grads[static_cast<size_t>(b_id)]) {
        AddSample(bwd_data, b == out ? out : 2 * out, 2 * out, b);
      }
      break;
    }
    case LayerKind::kConcat:
      // Copies: every input read once, the output written once; backward
      // splits dy into the parts of the inputs that need a gradient.
      AddSample(fwd, 0, out, out);
      for (int input : layer.input_ids) {
        if (!grads[static_cast<size_t>(input)]) continue;
        const double part = Elements(net.layer(input).output_shape);
        AddSample(bwd_data, 0, part, part);
      }
      break;
    case LayerKind::kLrn: {
      // Per element (Krizhevsky et al. 2012, sec. 3.3): square (1), window sum
      // (size - 1), scale by alpha/size and add k (2), power (1), divide (1):
      // size + 4. Backward (Caffe's LRNLayer::CrossChannelBackward): the
      // denominator recomputed with its power (size + 3), dy*y/denominator
      // (2), its window sum (size - 1), dx = dy*d^-beta - 2*alpha*beta/size *
      // x*sum (4): 2*size + 8; reads x, y and dy.
      const double size = static_cast<double>(layer.lrn.size);
      AddSample(fwd, (size + 4) * in, in, out);
      if (input_grad) AddSample(bwd_data, (2 * size + 8) * in, in + 2 * out, in);
      break;
    }
  }

  // Gradients arriving from k > 1 consumers are summed.
  const double consumers = static_cast<double>(layer.consumer_ids.size());
  if (output_grad && consumers > 1) {
    AddSample(bwd_data, (consumers - 1) * out, consumers * out, out);
  }
  return c;
}

// Activation elements per sample that the forward pass leaves for the backward
// pass: the tensors each layer's backward reads ("saved tensors"). A tensor is
// counted once, however many layers need it; flatten's output is a view of its
// input (the same tensor). Per kind, for a layer whose backward runs (see
// MemoryEstimate in cost.h for the sources):
//
//   kind                   keeps its input          keeps its output
//   input                  -                        -  (kept only if a consumer needs it)
//   conv2d, dense          yes (dW = dy x^T)        -
//   batch_norm             yes (x; the 2*C batch    -
//                          statistics per step are
//                          not counted: negligible)
//   relu (incl. relu6)     -                        yes (in place: dx = dy where 0 < y < max)
//   avg_pool               -                        -  (shapes only)
//   max_pool               yes                      yes (the maximum found again from x and y,
//                                                        as cuDNN and TF do; PyTorch keeps x and
//                                                        int64 indices of y's size instead)
//   global_avg_pool        -                        -
//   add, concat, flatten   -                        -
//   softmax_cross_entropy  -                        its probabilities, of its input's size
//   sigmoid                -                        yes (dx = dy*s*(1 - s))
//   swish                  yes (s recomputed)       -
//   mul (a*b)              a if b needs a gradient, -
//                          b if a needs one
//   lrn                    yes                      yes (Caffe's and cuDNN's backward read x, y)
double SavedElements(const Network& net, const std::vector<bool>& grads) {
  // The tensor a layer's output is: its own, or its input's for flatten.
  std::vector<int> tensor(Index(net.size()));
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    tensor[Index(id)] =
        layer.kind == LayerKind::kFlatten ? tensor[Index(layer.input_ids.front())] : id;
  }
  std::vector<bool> kept(Index(net.size()), false);
  const auto keep = [&](int id) { kept[Index(tensor[Index(id)])] = true; };
  double probabilities = 0;
  for (int id = 1; id < net.size(); ++id) {
    if (!grads[Index(id)]) continue;  // no backward pass: nothing saved
    const Layer& layer = net.layer(id);
    const int x = layer.input_ids.front();
    switch (layer.kind) {
      case LayerKind::kConv2d:
      case LayerKind::kDense:
      case LayerKind::kBatchNorm:
      case LayerKind::kSwish:
        keep(x);
        break;
      case LayerKind::kRelu:
      case LayerKind::kSigmoid:
        keep(id);
        break;
      case LayerKind::kMaxPool:
      case LayerKind::kLrn:
        keep(x);
        keep(id);
        break;
      case LayerKind::kMul:
        if (grads[Index(layer.input_ids[1])]) keep(x);
        if (grads[Index(x)]) keep(layer.input_ids[1]);
        break;
      case LayerKind::kSoftmaxCrossEntropy:
        probabilities += Elements(net.layer(x).output_shape);
        break;
      case LayerKind::kInput:
      case LayerKind::kAvgPool:
      case LayerKind::kGlobalAvgPool:
      case LayerKind::kAdd:
      case LayerKind::kFlatten:
      case LayerKind::kConcat:
        break;
    }
  }
  double elements = probabilities;
  for (int id = 0; id < net.size(); ++id) {
    if (kept[Index(id)]) elements += Elements(net.layer(id).output_shape);
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
double PeakGradientElements(const Network& net, const std::vector<bool>& grads) {
  // alive[j] - alive[j-1]: gradients that start or end being alive at step j.
  std::vector<double> change(Index(net.size()) + 1, 0);
  double largest = 0;
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    const double elements = Elements(layer.output_shape);
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

}  // namespace

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

NetworkCost CountCost(const Network& network, Optimizer optimizer) {
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
    cost.total += c;
    cost.layers.push_back(c);
  }
  return cost;
}

MemoryEstimate EstimateTrainingMemory(const Network& network, double batch, Optimizer optimizer,
                                      double activation_bytes, double parameter_bytes) {
  FITSPEED_CHECK(network.finalized(), "EstimateTrainingMemory needs a finalized network");
  const std::vector<bool> grads = GradientReaches(network);
  MemoryEstimate m;
  const double params = static_cast<double>(network.ParamCount());
  const double trainable = static_cast<double>(network.TrainableParamCount());
  m.parameter_bytes = params * parameter_bytes;
  m.gradient_bytes = trainable * parameter_bytes;
  m.optimizer_state_bytes = trainable * OptimizerStatePerParam(optimizer) * parameter_bytes;
  m.activation_bytes = batch * SavedElements(network, grads) * activation_bytes;
  m.activation_gradient_bytes = batch * PeakGradientElements(network, grads) * activation_bytes;
  return m;
}

}  // namespace fitspeed
