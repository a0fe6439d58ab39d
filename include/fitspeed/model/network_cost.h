// The work of a training step, counted per layer and per pass: FLOPs, tensor
// elements read and written (bytes for any element size), parameters and
// activation memory. The device layer turns these into roofline times; the
// timing layer reports measured GFLOPS against them.
//
// Counting conventions (all documented in docs/models.md):
//  - A multiply-add counts as 2 FLOPs; an add, multiply, max, compare, exp or
//    sqrt as 1. Published "MACs"/"GMACs" figures are half the FLOPs here.
//  - Every count is affine in the batch b: per_sample*b + per_step. Activation
//    traffic and compute are per sample; parameter, gradient and optimizer
//    state traffic and the optimizer's compute are per step.
//  - Traffic is the minimal one of an ideal implementation: each tensor an
//    operation needs is read once and each result written once (batch-norm's
//    forward reads its input twice: statistics, then normalization), so bytes
//    are a lower bound on real memory traffic.
//  - backward-data is the gradient with respect to a layer's inputs; it is not
//    computed (zero) when no layer at or before those inputs has trainable
//    parameters (e.g. the first convolution: frameworks skip the input's
//    gradient). backward-weights is the gradient of the layer's trainable
//    parameters. A layer whose output feeds k > 1 layers sums k incoming
//    gradients: (k-1) FLOPs per output element in its backward-data.
//  - update is the optimizer step over the layer's trainable parameters.
#ifndef FITSPEED_MODEL_NETWORK_COST_H_
#define FITSPEED_MODEL_NETWORK_COST_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/model/network.h"

namespace fitspeed {

// The four passes of a training step, in execution order.
enum class Pass {
  kForward,          // outputs from inputs (training mode)
  kBackwardData,     // gradient with respect to the layer's inputs
  kBackwardWeights,  // gradient with respect to the layer's trainable parameters
  kUpdate,           // the optimizer step on the trainable parameters
};
constexpr std::array<Pass, 4> kAllPasses = {Pass::kForward, Pass::kBackwardData,
                                            Pass::kBackwardWeights, Pass::kUpdate};
// "forward", "backward-data", "backward-weights", "update".
const char* PassName(Pass pass);

// The optimizer of the update pass. Per trainable parameter (w weight, g its
// gradient; bias corrections and learning-rate scalars are per step, not counted):
//   kSgd:         w -= lr*g                                  2 FLOPs, reads w g,     writes w
//   kSgdMomentum: m = mu*m + g; w -= lr*m   (torch.optim.SGD) 4 FLOPs, reads w g m,   writes w m
//   kAdam:        m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
//                 w -= lr_t*m/(sqrt(v) + eps)  (torch.optim.Adam, Kingma & Ba 2015)
//                                                           12 FLOPs, reads w g m v, writes w m v
//   kRmsprop:     v = a*v + (1-a)*g*g; m = mu*m + g/(sqrt(v) + eps); w -= lr*m
//                 (torch.optim.RMSprop with momentum, not centered; Tieleman & Hinton 2012)
//                                                           11 FLOPs, reads w g m v, writes w m v
enum class Optimizer { kSgd, kSgdMomentum, kAdam, kRmsprop };
const char* OptimizerName(Optimizer optimizer);  // "sgd", "sgd-momentum", "adam", "rmsprop"
// Throws UsageError for names other than "sgd", "sgd-momentum" (alias "momentum"),
// "adam" and "rmsprop".
Optimizer ParseOptimizer(const std::string& name);
// Optimizer state tensors per trainable parameter: 0 (sgd), 1 (momentum), 2 (adam, rmsprop).
int OptimizerStatePerParam(Optimizer optimizer);

// A count affine in the batch b: per_sample*b + per_step.
struct Count {
  double per_sample = 0;  // grows with the batch (activations, their compute)
  double per_step = 0;    // once per step (parameters, optimizer)
  double At(double batch) const { return per_sample * batch + per_step; }
  Count& operator+=(const Count& other);
};

// The work of one pass of one layer (or of a sum of them).
struct PassCost {
  Count flops;             // floating-point operations (multiply-add = 2)
  Count elements_read;     // tensor elements read from memory
  Count elements_written;  // tensor elements written to memory

  // Bytes at `batch` with every element of `bytes_per_element` bytes.
  double BytesRead(double batch, double bytes_per_element) const;
  double BytesWritten(double batch, double bytes_per_element) const;
  // Mixed precision: per-sample (activation) elements of `sample_bytes`,
  // per-step (parameter, gradient, optimizer state) elements of `step_bytes`.
  double BytesRead(double batch, double sample_bytes, double step_bytes) const;
  double BytesWritten(double batch, double sample_bytes, double step_bytes) const;
  PassCost& operator+=(const PassCost& other);
};

// The work and memory of one layer (or the sum over a network).
struct LayerCost {
  PassCost forward;
  PassCost backward_data;
  PassCost backward_weights;
  PassCost update;
  int64_t params = 0;            // parameter elements, incl. batch-norm moving statistics
  int64_t trainable_params = 0;  // parameter elements the optimizer updates
  // Elements per sample of the layer's output (0 for flatten, a view of its
  // input; the network input counts as layer 0's output). Their sum is what an
  // executor keeping every output would hold; EstimateTrainingMemory counts
  // only the saved tensors.
  int64_t activation_elements = 0;

  const PassCost& pass(Pass p) const;
  PassCost& pass(Pass p);
  // All four passes together.
  PassCost Step() const;
  LayerCost& operator+=(const LayerCost& other);
};

// Counts of every layer of a finalized network.
struct NetworkCost {
  Optimizer optimizer = Optimizer::kSgdMomentum;
  std::vector<LayerCost> layers;  // one per Network::layers(), same order
  LayerCost total;                // sum over layers

  // Forward FLOPs per sample (inference cost; published MACs are half of it).
  double ForwardFlopsPerSample() const;
  // Forward + backward-data + backward-weights FLOPs per sample: the part of a
  // training step proportional to the batch (the optimizer update is per step).
  double TrainFlopsPerSample() const;
  // Optimizer update FLOPs per step.
  double UpdateFlopsPerStep() const;
  // FLOPs of one whole training step (all four passes) at `batch`.
  double StepFlops(double batch) const;
};

// How a network's attention cores run. A core is scores = batched_matmul(Q, K,
// transpose_b) -> softmax -> [dropout] -> context = batched_matmul(probs, V),
// each feeding only the next (FindAttentionCores).
enum class AttentionKernel {
  // A kernel per layer: the {H, T, T} scores, probabilities and dropout mask go
  // through memory and are kept for the backward pass (counted per kind).
  kUnfused,
  // One fused kernel per pass (FlashAttention, Dao et al. 2022; PyTorch's
  // scaled_dot_product_attention): the {H, T, T} tensors stay on chip. Its
  // forward reads Q, K, V and writes O and the row log-sum-exp; its backward
  // reads Q, K, V, O, dO and the log-sum-exp, recomputes the scores, softmax
  // (and dropout mask, from the generator's state) and writes dQ, dK, dV. It
  // keeps O and the log-sum-exp instead of the {H, T, T} tensors. The core's
  // work is counted at its context layer; the other layers of the core count 0,
  // and so do the split_heads layers feeding Q, K, V directly and the
  // merge_heads layer reading O alone: the kernel reads and writes the heads
  // strided in the {T, H x D} rows, so they are views, not copies.
  kFused,
};
const char* AttentionKernelName(AttentionKernel kernel);        // "unfused", "fused"
AttentionKernel ParseAttentionKernel(const std::string& name);  // throws UsageError

// The layers of one attention core (ids in Network::layers()).
struct AttentionCore {
  int scores = -1;   // batched_matmul Q K^T
  int softmax = -1;  // softmax of the scores
  int dropout = -1;  // dropout of the probabilities, -1 when none
  int context = -1;  // batched_matmul probs V
};
// Every attention core of a finalized network, in layer order.
std::vector<AttentionCore> FindAttentionCores(const Network& network);

// Whether a gradient reaches each layer's output (indexed by layer id): it or a
// layer it depends on has trainable parameters. A layer's backward pass runs
// exactly when its output receives a gradient (frameworks skip the rest).
std::vector<bool> GradientReaches(const Network& network);

// Counts every layer of `network` (finalized; else FITSPEED_CHECK aborts).
// With AttentionKernel::kFused each attention core is counted as one fused
// kernel at its context layer (including the backward's recomputation).
NetworkCost CountCost(const Network& network, Optimizer optimizer = Optimizer::kSgdMomentum,
                      AttentionKernel attention = AttentionKernel::kUnfused);

// Memory a training step holds at `batch`, estimated for an executor that
// keeps for the backward pass only the tensors each layer's backward reads
// ("saved tensors", as PyTorch autograd, TensorFlow and cuDNN do), runs ReLU in
// place and recomputes nothing. Workspaces, the allocator's fragmentation and
// the framework's context are not counted.
//
// Saved tensors, per layer output (a tensor is counted once however many
// layers need it; flatten's output is its input's tensor):
//   conv2d, dense          its input   (PyTorch saves a convolution's and a
//                                       linear layer's input for dW = dy x^T)
//   batch_norm             its input   (PyTorch saves x with the batch mean and
//                                       inverse std; those 2*C per step are not counted)
//   relu                   its output  (ReLU(inplace=True) saves its result)
//   sigmoid                its output;  swish: its input
//   max_pool, lrn          input and output (cuDNN's and TF's backward read x and y)
//   mul (a*b)              a if b needs a gradient, b if a needs one
//   softmax_cross_entropy  the probabilities, of its input's size
//   avg_pool, global_avg_pool, add, concat, flatten, input: nothing (shapes only)
// The network input is kept when its consumer needs it (a first convolution
// does). Only layers whose backward pass runs (a trainable layer at or before
// them) save anything. The full table is at SavedElements in network_cost.cc and in
// docs/models.md.
struct MemoryEstimate {
  double parameter_bytes = 0;        // all parameters (incl. moving statistics)
  double gradient_bytes = 0;         // one gradient per trainable parameter
  double optimizer_state_bytes = 0;  // OptimizerStatePerParam() tensors per trainable parameter
  double activation_bytes = 0;       // batch * saved-tensor elements per sample (above)
  // Gradients of activations alive at once in the backward pass, times the
  // batch: the largest sum over a layer's step of its output gradient, its
  // inputs' gradients and those waiting across a residual branch, and at least
  // two of the largest layer output (which also bounds the forward pass's
  // transient outputs that are not kept).
  double activation_gradient_bytes = 0;
  // Saved activations and the gradient peak are added although the saved
  // tensors are freed as the backward pass proceeds: an upper bound on the
  // tensors counted here (workspaces and context come on top).
  double total_bytes() const {
    return parameter_bytes + gradient_bytes + optimizer_state_bytes + activation_bytes +
           activation_gradient_bytes;
  }
};
// Activation recomputation (checkpointing: Chen et al. 2016, "Training Deep
// Nets with Sublinear Memory Cost"; torch.utils.checkpoint; the "full
// recomputation" of Korthikanti et al. 2022). The network is cut where a
// single tensor is live: after a layer whose output is the only tensor
// produced so far that a later layer still reads (the residual stream
// between a transformer's attention and MLP sub-blocks, the output of a
// residual block). The forward
// pass keeps only the tensors at the cuts; the backward pass reruns each
// segment's forward just before the segment's backward, so one segment's
// saved tensors are alive at a time, and every segment but the last runs its
// forward twice.
struct CheckpointSegment {
  int first = 0;  // layer ids, inclusive
  int last = 0;
};
// The segments of a finalized network in order, covering layers 1..size-1
// (the input, layer 0, is in none): each ends at a cut or at the last layer.
std::vector<CheckpointSegment> CheckpointSegments(const Network& network);

// Parameters, gradients and optimizer state are of `parameter_bytes` bytes per
// element, activations and their gradients of `activation_bytes`.
// With AttentionKernel::kFused the attention cores keep O and the row
// log-sum-exp instead of the {H, T, T} tensors, whose gradients never exist.
// With `recompute`, activation_bytes is the tensors at the cuts (and the
// network input) plus the largest segment's saved tensors (CheckpointSegment);
// the gradient peak is unchanged.
MemoryEstimate EstimateTrainingMemory(const Network& network, double batch,
                                      Optimizer optimizer = Optimizer::kSgdMomentum,
                                      double activation_bytes = 4, double parameter_bytes = 4,
                                      AttentionKernel attention = AttentionKernel::kUnfused,
                                      bool recompute = false);

}  // namespace fitspeed

#endif  // FITSPEED_MODEL_NETWORK_COST_H_
