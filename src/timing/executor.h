// A training step of one network at one batch size, built once and run many
// times: the forward pass, the backward pass (gradients of data and weights)
// and the optimizer update. Two backends implement it: oneDNN primitives
// (onednn_executor.cc) and the Eigen reference (eigen_executor.cc). Every
// operation is timed and attributed to a (layer, pass).
//
// Canonical layouts at this interface (both backends convert to them):
// activations batch-major, per sample as the layer's Shape (NCHW images);
// conv kernels OIHW (grouped: {O, I/groups, KH, KW}), dense kernels {units,
// in_features}, vectors plain.
#ifndef FITSPEED_TIMING_EXECUTOR_H_
#define FITSPEED_TIMING_EXECUTOR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/timing/sweep.h"

namespace fitspeed::timing {

inline constexpr int kPasses = 4;
inline int PassIndex(Pass pass) { return static_cast<int>(pass); }

struct StepConfig {
  int64_t batch = 1;
  Precision precision = Precision::kFp32;
  Optimizer optimizer = Optimizer::kSgdMomentum;
  double learning_rate = 1e-3;
  double momentum = 0.9;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double rmsprop_alpha = 0.99;  // RMSprop's smoothing constant (torch.optim.RMSprop's default)
  uint64_t seed = 1;
  // Plan only: create no buffer and no primitive that allocates (sizes are
  // counted in allocated_bytes()); the executor cannot run.
  bool dry_run = false;
  // Kernel threads while building and running (OpenMP, oneDNN's runtime
  // here); 0 leaves the calling thread's setting.
  int threads = 0;
  // oneDNN backend: let buffers whose lifetimes do not overlap share memory.
  // Off, every layer's output stays readable (Output()) after the step.
  bool reuse_memory = true;
};
// The step of `options` at `batch`, on `threads` threads.
StepConfig MakeStepConfig(const SweepOptions& options, int64_t batch, int threads = 0);

// Sets the calling thread's OpenMP thread count for a scope (0: leaves it).
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int previous_ = 0;
};

// A parameter tensor of the network, in network order.
struct ParamRef {
  int layer = 0;     // index in Network::layers()
  int index = 0;     // index in Layer::params
  std::string name;  // "<layer>/<param>"
  Shape shape;       // canonical shape
  bool trainable = true;
  int64_t elements = 0;
};
std::vector<ParamRef> ListParams(const Network& network);

// Rows of the 2-D view the kernels use for a non-image tensor: batch * T for
// {T, F}, batch for {F}. Images are {batch, C, H, W}.
int64_t Rows(const Shape& shape, int64_t batch);

// True for a loss layer (softmax_cross_entropy): it has no readable output.
inline bool IsLoss(const Layer& layer) { return layer.kind == LayerKind::kSoftmaxCrossEntropy; }

// Where each loss's labels lie in the label vector of SetInput: the losses in
// network order, loss `layer` reading labels [offset, offset + rows), one per
// row of its input (Rows()), each in [0, classes).
struct LossLabels {
  int layer = 0;
  int64_t offset = 0;
  int64_t rows = 0;
  int64_t classes = 0;
};
std::vector<LossLabels> LabelLayout(const Network& network, int64_t batch);
// Labels in all, the sum of LabelLayout's rows.
int64_t LabelCount(const Network& network, int64_t batch);

// The vocabulary of a network whose input is token ids (its input {T} feeds
// an embedding): the smallest vocab of the embeddings reading it; 0 when the
// input is not token ids.
int64_t InputVocab(const Network& network);

// The layers whose output gradient the backward pass computes: those at or
// after a trainable parameter (GradientReaches), and dense layers whose kernel
// is tied to an embedding's table (they add the table's gradient), with
// everything after them.
std::vector<bool> GradientsNeeded(const Network& network);
// The embedding layer whose table is dense layer `layer`'s kernel, or -1.
int TiedEmbedding(const Network& network, int layer);
// True when a dense layer's kernel is embedding layer `layer`'s table: its
// gradient is the sum of both uses.
bool IsTiedTable(const Network& network, int layer);

// What the network leaves to the executor, the same in both backends:
// - segment_embedding: token t of T belongs to segment t*segments/T (BERT's
//   sentence pair: the first half sentence A, the second sentence B).
// - gather_tokens: the k-th of `count` rows is row k*T/count of every sample
//   (spread evenly; which rows does not change the work).
int64_t SegmentOf(int64_t token, int64_t tokens, int64_t segments);
int64_t GatheredRow(int64_t k, int64_t count, int64_t tokens);
// The input rows a select_token or gather_tokens layer takes, in output order.
std::vector<int64_t> TakenRows(const Network& network, int layer);

// SplitMix64's finalizer (Steele, Lea & Flood 2014): a 64-bit mix.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Dropout's mask, deterministic so that both backends and finite differences
// see the same one: element i (canonical layout, batch-major) of the output of
// layer `layer` in the step that follows `updates` optimizer updates is kept
// when the top 53 bits of Mix64(key + i*golden), as a uniform number in [0, 1),
// are >= rate; key mixes config.seed, the layer and `updates`. So the mask
// changes every step (as a framework's does) but not between forward passes
// of one step (a finite-difference check sees one function of the weights).
struct DropoutMask {
  uint64_t key = 0;
  uint64_t threshold = 0;  // rate * 2^53, rounded up
  bool Keep(uint64_t i) const {
    return (Mix64(key + i * 0x9e3779b97f4a7c15ULL) >> 11) >= threshold;
  }
};
DropoutMask MakeDropoutMask(uint64_t seed, int layer, int64_t updates, double rate);

// Rotary embedding's angles (Su et al. 2021): cos and sin of t*theta_i with
// theta_i = base^(-2i/D), {tokens, D/2} row-major; a rotary layer rotates the
// pairs (x[i], x[i + D/2]) of row t by that angle (Llama's rotate_half).
struct RotaryTables {
  std::vector<double> cos, sin;
};
RotaryTables MakeRotaryTables(int64_t tokens, int64_t head_dim, double base);

// Deterministic synthetic data from `seed`: inputs N(0, 1), or token ids
// uniform in [0, InputVocab) stored as doubles where the input is token ids;
// labels uniform over each loss's classes (LabelLayout); kernels He-normal
// (std sqrt(2/fan_in)), embedding tables and the class token N(0, 0.02^2)
// (BERT's and GPT-2's initializer_range), biases and beta 0, gamma 1, moving
// mean 0, moving variance 1 (Keras's initial values).
std::vector<double> InitialInput(const Network& network, int64_t batch, uint64_t seed);
std::vector<int32_t> InitialLabels(const Network& network, int64_t batch, uint64_t seed);
std::vector<double> InitialParam(const Network& network, const ParamRef& param, uint64_t seed);
// Throws nothing; FITSPEED_CHECKs that `values` and `labels` fit the layouts
// above (ids integer and in range, labels in range).
void CheckInput(const Network& network, int64_t batch, const std::vector<double>& values,
                const std::vector<int32_t>& labels);

// Throws UsageError when a layer has a shape the host backends do not run
// (its kind's host_ranks, src/model/kinds/: e.g. batch-norm of a {T, F}
// tensor), or when config.batch < 1.
void CheckExecutable(const Network& network, const StepConfig& config);

// A backend's builders: one per LayerKind, in LayerKind order, each entry
// naming its kind. Each backend static_asserts InKindOrder on its table, so a
// kind without a builder (a missing entry is {kInput, ...}) or an entry out of
// order does not compile.
template <typename Builder>
using KindTable = std::array<std::pair<LayerKind, Builder>, kLayerKindCount>;
template <typename Builder>
constexpr bool InKindOrder(const KindTable<Builder>& table) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (static_cast<size_t>(table[i].first) != i) return false;
  }
  return true;
}

class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  StepExecutor(const StepExecutor&) = delete;
  StepExecutor& operator=(const StepExecutor&) = delete;

  const Network& network() const { return network_; }
  const StepConfig& config() const { return config_; }
  const std::vector<ParamRef>& params() const { return params_; }

  // Replaces the input batch (InitialInput's layout: token ids as whole
  // numbers where the input is ids) and the labels: every loss's labels, the
  // losses in network order, one label per row of the loss's input
  // (LabelLayout), each in [0, that loss's classes).
  virtual void SetInput(const std::vector<double>& values, const std::vector<int32_t>& labels) = 0;
  // A parameter / its gradient / a layer's output, in canonical layout.
  virtual void SetParam(size_t i, const std::vector<double>& values) = 0;
  virtual std::vector<double> Param(size_t i) const = 0;
  virtual std::vector<double> Grad(size_t i) const = 0;  // trainable parameters only
  // The gradient's own storage (trainable parameters only), in the backend's
  // layout: the same on every process that builds the same step, so a
  // data-parallel all-reduce sums it element by element in place. Exactly one
  // of f32/f64 is set (f64: MakeEigenExecutor<double>).
  struct GradientStorage {
    float* f32 = nullptr;
    double* f64 = nullptr;
    int64_t elements = 0;
  };
  virtual GradientStorage MutableGrad(size_t i) = 0;
  // Output of `layer` (not a loss) after Forward(); with reuse_memory, only
  // for layers whose output is still used later in the step.
  virtual std::vector<double> Output(int layer) const = 0;

  // Returns the training loss: the sum over the losses of each one's mean over
  // its rows.
  double Forward();
  void Backward();
  void Update();
  double Step();  // Forward, Backward, Update; returns the loss

  // Data parallelism (timing/data_parallel.cc): `hook(k)` runs after the k-th
  // operation of the backward pass (0-based, in running order), outside that
  // operation's timing; empty: none.
  void SetBackwardHook(std::function<void(int op)> hook) { backward_hook_ = std::move(hook); }
  int BackwardOpCount() const { return static_cast<int>(ops_[1].size()); }
  // Per parameter (params() order), the backward operation after which its
  // gradient is final: the last one of its layer, or of a dense layer whose
  // kernel is the parameter (a tied embedding table); -1 for a parameter that
  // is not trainable or that no backward operation touches.
  std::vector<int> GradientReadyOps() const;

  // Seconds each (layer, pass) took since the last ResetTimes().
  const std::vector<std::array<double, kPasses>>& times() const { return times_; }
  void ResetTimes();
  // Implementation that ran each (layer, pass), empty where none ran.
  const std::vector<std::array<std::string, kPasses>>& implementations() const {
    return implementations_;
  }
  // Bytes of every buffer the step holds (planned bytes in a dry run).
  double allocated_bytes() const { return allocated_bytes_; }

 protected:
  StepExecutor(const Network& network, const StepConfig& config);

  enum class Phase { kForward, kBackward, kUpdate };
  // Appends an operation of (layer, pass) to the phase's list.
  void AddOp(Phase phase, int layer, Pass pass, std::function<void()> run);
  // Appends an operation of several layers; its time is shared between them in
  // proportion to the weights (e.g. a fused optimizer update, by bytes).
  void AddSharedOp(Phase phase, Pass pass, std::vector<std::pair<int, double>> weights,
                   std::function<void()> run);
  void SetImplementation(int layer, Pass pass, const std::string& name);
  void CountBytes(double bytes) { allocated_bytes_ += bytes; }
  // The mean loss the last forward pass computed.
  virtual double loss() const = 0;
  // Number of Update() calls so far, including the running one (Adam's t).
  int64_t update_count() const { return update_count_; }

 private:
  struct Op {
    int layer;
    int pass;
    std::function<void()> run;
    std::vector<std::pair<int, double>> shares;  // (layer, fraction) when shared
  };
  void Run(const std::vector<Op>& ops, const std::function<void(int)>* hook = nullptr);

  Network network_;
  StepConfig config_;
  std::vector<ParamRef> params_;
  std::array<std::vector<Op>, 3> ops_;
  std::vector<std::array<double, kPasses>> times_;
  std::vector<std::array<std::string, kPasses>> implementations_;
  double allocated_bytes_ = 0;
  int64_t update_count_ = 0;
  std::function<void(int)> backward_hook_;
};

// Throws UsageError when oneDNN cannot run `precision` on this CPU.
void RequirePrecisionSupported(Precision precision);
// What oneDNN reports about itself and this CPU.
std::string OnednnIsa();      // effective ISA: "avx2", "avx512_core_amx", ...
bool OnednnBf16Supported();   // BF16 primitives can be created
std::string OnednnVersion();  // "2.6.3"
std::string OnednnRuntime();  // "OpenMP", "TBB", ...

std::unique_ptr<StepExecutor> MakeOnednnExecutor(const Network& network, const StepConfig& config);
// Scalar: float (timing) or double (gradient checks). With precision bf16 it
// computes in Scalar but rounds to bf16 wherever the oneDNN backend stores
// bf16 (eigen_executor.cc): a numerical reference for that backend's BF16
// step, not a timing one (MakeExecutor refuses eigen with bf16).
template <typename Scalar>
std::unique_ptr<StepExecutor> MakeEigenExecutor(const Network& network, const StepConfig& config);
std::unique_ptr<StepExecutor> MakeExecutor(Backend backend, const Network& network,
                                           const StepConfig& config);

}  // namespace fitspeed::timing

#endif  // FITSPEED_TIMING_EXECUTOR_H_
