#include "timing/executor.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <random>

#include "fitspeed/core/error.h"

namespace fitspeed::timing {

namespace {

// A generator per purpose and tensor, so that adding a tensor does not change
// the others' values.
std::mt19937_64 Generator(uint64_t seed, uint64_t stream) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)};
  return std::mt19937_64(seq);
}

constexpr uint64_t kInputStream = 1;
constexpr uint64_t kLabelStream = 2;
constexpr uint64_t kParamStream = 1000;

// Largest number of elements of one batched tensor: keeps every index and byte
// count inside int64_t and far from oneDNN's limits.
constexpr double kMaxTensorElements = 1e13;

}  // namespace

ThreadScope::ThreadScope(int threads) {
  if (threads <= 0) return;
  previous_ = omp_get_max_threads();
  omp_set_num_threads(threads);
}

ThreadScope::~ThreadScope() {
  if (previous_ > 0) omp_set_num_threads(previous_);
}

StepConfig MakeStepConfig(const SweepOptions& options, int64_t batch, int threads) {
  StepConfig config;
  config.batch = batch;
  config.threads = threads;
  config.precision = options.precision;
  config.optimizer = options.optimizer;
  config.learning_rate = options.learning_rate;
  config.momentum = options.momentum;
  config.beta1 = options.beta1;
  config.beta2 = options.beta2;
  config.epsilon = options.epsilon;
  config.seed = options.seed;
  return config;
}

std::vector<ParamRef> ListParams(const Network& network) {
  std::vector<ParamRef> params;
  for (int l = 0; l < network.size(); ++l) {
    const Layer& layer = network.layer(l);
    for (size_t i = 0; i < layer.params.size(); ++i) {
      const ParamTensor& p = layer.params[i];
      params.push_back({l, static_cast<int>(i), layer.name + "/" + p.name, p.shape, p.trainable,
                        p.shape.elements()});
    }
  }
  return params;
}

int64_t Rows(const Shape& shape, int64_t batch) {
  return shape.rank() == 2 ? batch * shape.dims[0] : batch;
}

std::vector<double> InitialInput(const Network& network, int64_t batch, uint64_t seed) {
  std::mt19937_64 gen = Generator(seed, kInputStream);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(static_cast<size_t>(batch * network.input_shape().elements()));
  for (double& v : values) v = normal(gen);
  return values;
}

std::vector<int32_t> InitialLabels(const Network& network, int64_t batch, uint64_t seed) {
  const Layer& loss = network.layer(network.size() - 1);
  const Shape& logits = network.layer(loss.input_ids.at(0)).output_shape;
  std::mt19937_64 gen = Generator(seed, kLabelStream);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(network.num_classes() - 1));
  std::vector<int32_t> labels(static_cast<size_t>(Rows(logits, batch)));
  for (int32_t& v : labels) v = pick(gen);
  return labels;
}

std::vector<double> InitialParam(const Network& network, const ParamRef& param, uint64_t seed) {
  std::vector<double> values(static_cast<size_t>(param.elements), 0.0);
  const std::string& name = network.layer(param.layer).params.at(param.index).name;
  if (name == "kernel") {
    // He et al. 2015 ("Delving deep into rectifiers"): std = sqrt(2 / fan_in).
    const double fan_in = static_cast<double>(param.elements / param.shape.dims.at(0));
    std::mt19937_64 gen =
        Generator(seed, kParamStream + static_cast<uint64_t>(param.layer) * 8 + param.index);
    std::normal_distribution<double> normal(0.0, std::sqrt(2.0 / fan_in));
    for (double& v : values) v = normal(gen);
  } else if (name == "gamma" || name == "moving_variance") {
    for (double& v : values) v = 1.0;
  }
  return values;
}

void CheckExecutable(const Network& network, const StepConfig& config) {
  if (!network.finalized()) {
    throw UsageError(fmt::format("network '{}' is not finalized", network.name));
  }
  if (config.batch < 1) {
    throw UsageError(fmt::format("batch {} must be >= 1", config.batch));
  }
  if (network.LossCount() > 1) {
    throw UsageError(fmt::format("network '{}' has {} losses; the host backends run one",
                                 network.name, network.LossCount()));
  }
  for (int l = 0; l < network.size(); ++l) {
    const Layer& layer = network.layer(l);
    const int rank = layer.input_ids.empty()
                         ? layer.output_shape.rank()
                         : network.layer(layer.input_ids[0]).output_shape.rank();
    bool ok = true;
    switch (layer.kind) {
      case LayerKind::kInput:
        ok = rank >= 1 && rank <= 3;
        break;
      case LayerKind::kConv2d:
      case LayerKind::kAvgPool:
      case LayerKind::kMaxPool:
      case LayerKind::kGlobalAvgPool:
        ok = rank == 3;
        break;
      case LayerKind::kBatchNorm:
        ok = rank == 1 || rank == 3;
        break;
      case LayerKind::kDense:
      case LayerKind::kSoftmaxCrossEntropy:
        ok = rank == 1 || rank == 2;
        break;
      case LayerKind::kRelu:
      case LayerKind::kAdd:
      case LayerKind::kFlatten:
      case LayerKind::kSigmoid:
      case LayerKind::kSwish:
      case LayerKind::kMul:
        ok = rank >= 1 && rank <= 3;
        break;
      case LayerKind::kConcat:
        ok = rank == 1 || rank == 3;
        break;
      case LayerKind::kLrn:
        ok = rank == 3;
        break;
      case LayerKind::kEmbedding:
      case LayerKind::kPositionEmbedding:
      case LayerKind::kSegmentEmbedding:
      case LayerKind::kLayerNorm:
      case LayerKind::kRmsNorm:
      case LayerKind::kGelu:
      case LayerKind::kTanh:
      case LayerKind::kDropout:
      case LayerKind::kSplitHeads:
      case LayerKind::kMergeHeads:
      case LayerKind::kBatchedMatmul:
      case LayerKind::kSoftmax:
      case LayerKind::kRotary:
      case LayerKind::kSelectToken:
      case LayerKind::kGatherTokens:
      case LayerKind::kClassToken:
      case LayerKind::kImageToSequence:
        throw UsageError(fmt::format(
            "layer '{}' ({}) of network '{}': the host backends do not run this kind yet; "
            "`fitspeed sweep {} --device NAME` models it on a catalogued device",
            layer.name, LayerKindName(layer.kind), network.name, network.name));
    }
    if (!ok) {
      throw UsageError(fmt::format(
          "layer '{}' ({}) of network '{}': the host backends do not run it on a rank-{} input",
          layer.name, LayerKindName(layer.kind), network.name, rank));
    }
    const double elements =
        static_cast<double>(layer.output_shape.elements()) * static_cast<double>(config.batch);
    if (elements > kMaxTensorElements) {
      throw UsageError(fmt::format("batch {}: layer '{}' would hold {:.3g} elements (limit {:.0e})",
                                   config.batch, layer.name, elements, kMaxTensorElements));
    }
  }
}

StepExecutor::StepExecutor(const Network& network, const StepConfig& config)
    : network_(network),
      config_(config),
      params_(ListParams(network)),
      times_(static_cast<size_t>(network.size())),
      implementations_(static_cast<size_t>(network.size())) {
  CheckExecutable(network_, config_);
  ResetTimes();
}

void StepExecutor::AddOp(Phase phase, int layer, Pass pass, std::function<void()> run) {
  ops_[static_cast<size_t>(phase)].push_back({layer, PassIndex(pass), std::move(run), {}});
}

void StepExecutor::AddSharedOp(Phase phase, Pass pass, std::vector<std::pair<int, double>> weights,
                               std::function<void()> run) {
  FITSPEED_CHECK(!weights.empty(), "a shared op needs layers to share its time");
  double total = 0;
  for (const auto& w : weights) total += w.second;
  for (auto& w : weights) w.second = total > 0 ? w.second / total : 1.0 / weights.size();
  ops_[static_cast<size_t>(phase)].push_back(
      {weights[0].first, PassIndex(pass), std::move(run), std::move(weights)});
}

void StepExecutor::SetImplementation(int layer, Pass pass, const std::string& name) {
  std::string& slot = implementations_.at(static_cast<size_t>(layer))[PassIndex(pass)];
  if (slot.empty()) {
    slot = name;
  } else if (slot.find(name) == std::string::npos) {
    slot += "+" + name;
  }
}

void StepExecutor::ResetTimes() {
  for (auto& t : times_) t.fill(0.0);
}

void StepExecutor::Run(const std::vector<Op>& ops) {
  FITSPEED_CHECK(!config_.dry_run, "a dry-run executor cannot run");
  const ThreadScope threads(config_.threads);
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  for (const Op& op : ops) {
    op.run();
    const Clock::time_point end = Clock::now();
    const double seconds = std::chrono::duration<double>(end - start).count();
    if (op.shares.empty()) {
      times_[static_cast<size_t>(op.layer)][op.pass] += seconds;
    } else {
      for (const auto& [layer, fraction] : op.shares) {
        times_[static_cast<size_t>(layer)][op.pass] += seconds * fraction;
      }
    }
    start = end;
  }
}

double StepExecutor::Forward() {
  Run(ops_[static_cast<size_t>(Phase::kForward)]);
  return loss();
}

void StepExecutor::Backward() { Run(ops_[static_cast<size_t>(Phase::kBackward)]); }

void StepExecutor::Update() {
  ++update_count_;
  Run(ops_[static_cast<size_t>(Phase::kUpdate)]);
}

double StepExecutor::Step() {
  const double l = Forward();
  Backward();
  Update();
  return l;
}

std::unique_ptr<StepExecutor> MakeExecutor(Backend backend, const Network& network,
                                           const StepConfig& config) {
  switch (backend) {
    case Backend::kOnednn:
      return MakeOnednnExecutor(network, config);
    case Backend::kEigen:
      if (config.precision != Precision::kFp32) {
        throw UsageError(fmt::format("the eigen backend runs fp32 only, not {}",
                                     PrecisionName(config.precision)));
      }
      return MakeEigenExecutor<float>(network, config);
  }
  throw UsageError("unknown backend");
}

}  // namespace fitspeed::timing
