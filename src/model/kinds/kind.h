// Everything the library knows of one layer kind but how a backend runs it, in
// one place: how many operands it takes, its shape rule and parameters
// (Network::Finalize), its FLOPs and memory traffic per pass (CountCost), the
// tensors its backward pass keeps (EstimateTrainingMemory), its JSON
// attributes (network_json.cc), the operand ranks the host backends run
// (timing/executor.cc) and its device traits (device/step_model.cc). Each
// kind's rules are written in one file of this folder, which lists its kinds;
// kinds.cc gathers them. The host backends register one builder per kind in
// their own files. docs/models.md, "Adding a layer kind", is the checklist.
#ifndef FITSPEED_SRC_MODEL_KINDS_KIND_H_
#define FITSPEED_SRC_MODEL_KINDS_KIND_H_

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"
#include "json_object.h"

namespace fitspeed::kinds {

// Largest dimension or element count accepted: keeps every count exact in a
// double and every product of two dimensions inside int64_t.
constexpr int64_t kMaxElements = int64_t{1} << 40;
// Largest kernel, stride or padding accepted (keeps window arithmetic inside int64_t).
constexpr int kMaxWindow = 1 << 16;
// Largest integer attribute read from JSON where an int is stored.
constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
// No upper limit on the number of operands.
constexpr int kAnyCount = std::numeric_limits<int>::max();

// How errors name a layer: layers[3] "conv1".
std::string LayerField(int id, const std::string& name);

// Errors of one layer, formatted as DataError(origin, line, LayerField(), ...).
class LayerChecker {
 public:
  LayerChecker(const std::string& origin, int id, const Layer& layer);

  [[noreturn]] void Fail(const std::string& problem) const;
  void Require(bool ok, const std::string& problem) const {
    if (!ok) Fail(problem);
  }
  // Fails unless `in` has one of `ranks`, naming what was expected.
  void RequireRank(const Shape& in, const std::vector<int>& ranks, const char* what) const;
  // Fails unless `value` is finite and > 0, naming `attribute`.
  void RequirePositive(double value, const char* attribute) const;

 private:
  std::string origin_;
  int line_;
  std::string field_;
};

// Every factor >= 1 and the product at most kMaxElements (checked without overflow).
bool ProductInRange(const std::vector<int64_t>& factors);

// What a shape rule sees: the layer's checker, the network (layers before this
// one already finalized) and the shapes of its operands.
struct ShapeContext {
  const LayerChecker& check;
  const Network& net;
  std::vector<const Shape*> inputs;  // operand order
  int id = 0;                        // the layer's index
  bool last = false;                 // the network's last layer

  const Shape& in(size_t operand = 0) const { return *inputs.at(operand); }
};

// What a cost rule sees. Counting conventions: fitspeed/model/network_cost.h.
struct CostContext {
  const Network& net;
  const Layer& layer;
  const std::vector<bool>& grads;  // per layer id: a gradient reaches its output
  double in = 0;                   // elements per sample of the first operand
  double out = 0;                  // elements per sample of the output
  bool input_grad = false;         // some operand needs a gradient

  // Whether operand `k` needs a gradient, and its elements per sample.
  bool GradTo(size_t k) const;
  double InElements(size_t k) const;
  const Shape& InShape(size_t k = 0) const;
};

// Adds per-sample (activation) work to a pass.
inline void AddSample(PassCost& pass, double flops, double read, double written) {
  pass.flops.per_sample += flops;
  pass.elements_read.per_sample += read;
  pass.elements_written.per_sample += written;
}
// Adds per-step (parameter) traffic to a pass.
inline void AddStep(PassCost& pass, double read, double written) {
  pass.elements_read.per_step += read;
  pass.elements_written.per_step += written;
}
inline double Elements(const Shape& shape) { return static_cast<double>(shape.elements()); }
// Elements of the layer's parameters named `name`.
double ParamElements(const Layer& layer, const std::string& name);

// What a saved-tensors rule marks: the tensors (by layer id) the backward pass
// of the layer reads, and extra per-sample elements it keeps of its own.
struct SaveContext {
  const Network& net;
  const Layer& layer;
  int id = 0;
  const std::vector<bool>& grads;
  std::vector<int>& keep;  // layer ids whose outputs are kept
  double extra = 0;        // elements per sample kept besides layer outputs

  int input(size_t k = 0) const { return layer.input_ids.at(k); }
  void KeepInput(size_t k = 0) { keep.push_back(input(k)); }
  void KeepOutput() { keep.push_back(id); }
};

// How a device runs a kind, beyond its FLOPs and bytes: what the device step
// model (src/device/step_model.cc) reads.
struct DeviceTraits {
  // Its memory-bound passes reduce each row of the last dimension before
  // writing it (layer and RMS norm, softmax, the loss), so they run at the
  // device's normalization memory curve instead of the element-wise one
  // (fitspeed/device/step_model.h, NormalizesRows).
  bool normalizes_rows = false;
  // Kept in FP32 under automatic mixed precision, per framework op list
  // (fitspeed/device/step_model.h, AmpOpList): PyTorch autocast's float32
  // list, TensorFlow's AMP deny list.
  bool fp32_under_pytorch_amp = false;
  bool fp32_under_tensorflow_amp = false;
};
// None of the traits: the element-wise memory curve, and AMP runs it in the
// low precision of its neighbours.
inline constexpr DeviceTraits kNoDeviceTraits{};

// The rules of one kind. A rule left null does nothing: no cost, nothing saved,
// no JSON attributes. host_ranks and device have no usable default: every kind
// states them, and AllRules() aborts on a kind that leaves either empty.
struct KindRules {
  LayerKind kind = LayerKind::kInput;
  const char* name = "";
  int min_inputs = 1;
  int max_inputs = 1;
  // The output is a view of the first operand (flatten): no data moves, the
  // tensor is the operand's.
  bool view = false;
  // Validates the attributes against the operands' shapes; sets output_shape
  // and params (in the order listed at ParamTensor).
  void (*shape)(const ShapeContext&, Layer&) = nullptr;
  // Adds the work of the forward, backward-data and backward-weights passes
  // (the update pass is counted from the trainable parameters).
  void (*cost)(const CostContext&, LayerCost&) = nullptr;
  // Marks the tensors its backward pass reads (called only when it runs).
  void (*saved)(SaveContext&) = nullptr;
  // Reads and writes the kind's JSON attributes (besides name, kind, inputs).
  void (*read_json)(ObjectReader&, Layer&) = nullptr;
  void (*write_json)(const Layer&, nlohmann::json&) = nullptr;
  // The ranks of the first operand (of its own output, for the input) that
  // both host backends run; CheckExecutable refuses the others.
  std::vector<int> host_ranks = {};
  // How a device runs it.
  std::optional<DeviceTraits> device = std::nullopt;
};

// The rules of `kind`, and of every kind in LayerKind order.
const KindRules& RulesOf(LayerKind kind);
const std::vector<KindRules>& AllRules();

// The kinds of each file of this folder, in any order; AllRules() puts them in
// LayerKind order and checks that every kind has rules exactly once.
std::vector<KindRules> AttentionKinds();    // attention.cc
std::vector<KindRules> DenseKinds();        // dense.cc
std::vector<KindRules> ElementwiseKinds();  // elementwise.cc
std::vector<KindRules> ImageKinds();        // image.cc
std::vector<KindRules> LossKinds();         // loss.cc
std::vector<KindRules> NormKinds();         // norm.cc

}  // namespace fitspeed::kinds

#endif  // FITSPEED_SRC_MODEL_KINDS_KIND_H_
