#include "timing/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "fitspeed/core/error.h"
#include "model/kinds/kind.h"

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

std::vector<LossLabels> LabelLayout(const Network& network, int64_t batch) {
  std::vector<LossLabels> layout;
  int64_t offset = 0;
  for (int l = 0; l < network.size(); ++l) {
    if (!IsLoss(network.layer(l))) continue;
    const Shape& logits = network.layer(network.layer(l).input_ids.at(0)).output_shape;
    const int64_t rows = Rows(logits, batch);
    layout.push_back({l, offset, rows, logits.dims.back()});
    offset += rows;
  }
  return layout;
}

int64_t LabelCount(const Network& network, int64_t batch) {
  int64_t count = 0;
  for (const LossLabels& loss : LabelLayout(network, batch)) count += loss.rows;
  return count;
}

int64_t InputVocab(const Network& network) {
  int64_t vocab = 0;
  for (int consumer : network.layer(0).consumer_ids) {
    const Layer& layer = network.layer(consumer);
    if (layer.kind != LayerKind::kEmbedding) continue;
    vocab = vocab == 0 ? layer.embedding.vocab : std::min(vocab, layer.embedding.vocab);
  }
  return vocab;
}

int TiedEmbedding(const Network& network, int layer) {
  const Layer& dense = network.layer(layer);
  if (dense.kind != LayerKind::kDense || dense.dense.tied_to.empty()) return -1;
  return network.LayerId(dense.dense.tied_to);
}

bool IsTiedTable(const Network& network, int layer) {
  for (int l = layer + 1; l < network.size(); ++l) {
    if (TiedEmbedding(network, l) == layer) return true;
  }
  return false;
}

std::vector<bool> GradientsNeeded(const Network& network) {
  std::vector<bool> needed = GradientReaches(network);
  for (int l = 0; l < network.size(); ++l) {
    bool reaches = needed[static_cast<size_t>(l)] || TiedEmbedding(network, l) >= 0;
    for (int input : network.layer(l).input_ids)
      reaches = reaches || needed[static_cast<size_t>(input)];
    needed[static_cast<size_t>(l)] = reaches;
  }
  return needed;
}

int64_t SegmentOf(int64_t token, int64_t tokens, int64_t segments) {
  return token * segments / tokens;
}

int64_t GatheredRow(int64_t k, int64_t count, int64_t tokens) { return k * tokens / count; }

std::vector<int64_t> TakenRows(const Network& network, int layer) {
  const Layer& l = network.layer(layer);
  if (l.kind == LayerKind::kSelectToken) return {l.tokens.index};
  const int64_t tokens = network.layer(l.input_ids[0]).output_shape.dims[0];
  std::vector<int64_t> taken;
  for (int64_t k = 0; k < l.tokens.count; ++k) {
    taken.push_back(GatheredRow(k, l.tokens.count, tokens));
  }
  return taken;
}

DropoutMask MakeDropoutMask(uint64_t seed, int layer, int64_t updates, double rate) {
  DropoutMask mask;
  mask.key = Mix64(seed ^ Mix64(static_cast<uint64_t>(layer) ^
                                Mix64(static_cast<uint64_t>(updates) + 0x9e3779b97f4a7c15ULL)));
  mask.threshold = static_cast<uint64_t>(std::ceil(rate * 9007199254740992.0));  // 2^53
  return mask;
}

RotaryTables MakeRotaryTables(int64_t tokens, int64_t head_dim, double base) {
  const int64_t half = head_dim / 2;
  RotaryTables r;
  r.cos.resize(static_cast<size_t>(tokens * half));
  r.sin.resize(r.cos.size());
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t i = 0; i < half; ++i) {
      const double theta =
          std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
      const double angle = static_cast<double>(t) * theta;
      r.cos[static_cast<size_t>(t * half + i)] = std::cos(angle);
      r.sin[static_cast<size_t>(t * half + i)] = std::sin(angle);
    }
  }
  return r;
}

std::vector<double> InitialInput(const Network& network, int64_t batch, uint64_t seed) {
  std::mt19937_64 gen = Generator(seed, kInputStream);
  std::vector<double> values(static_cast<size_t>(batch * network.input_shape().elements()));
  if (const int64_t vocab = InputVocab(network); vocab > 0) {
    std::uniform_int_distribution<int64_t> pick(0, vocab - 1);
    for (double& v : values) v = static_cast<double>(pick(gen));
    return values;
  }
  std::normal_distribution<double> normal(0.0, 1.0);
  for (double& v : values) v = normal(gen);
  return values;
}

std::vector<int32_t> InitialLabels(const Network& network, int64_t batch, uint64_t seed) {
  std::mt19937_64 gen = Generator(seed, kLabelStream);
  std::vector<int32_t> labels;
  for (const LossLabels& loss : LabelLayout(network, batch)) {
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(loss.classes - 1));
    for (int64_t r = 0; r < loss.rows; ++r) labels.push_back(pick(gen));
  }
  return labels;
}

std::vector<double> InitialParam(const Network& network, const ParamRef& param, uint64_t seed) {
  std::vector<double> values(static_cast<size_t>(param.elements), 0.0);
  const std::string& name = network.layer(param.layer).params.at(param.index).name;
  std::mt19937_64 gen =
      Generator(seed, kParamStream + static_cast<uint64_t>(param.layer) * 8 + param.index);
  if (name == "kernel") {
    // He et al. 2015 ("Delving deep into rectifiers"): std = sqrt(2 / fan_in).
    const double fan_in = static_cast<double>(param.elements / param.shape.dims.at(0));
    std::normal_distribution<double> normal(0.0, std::sqrt(2.0 / fan_in));
    for (double& v : values) v = normal(gen);
  } else if (name == "table" || name == "token") {
    // BERT's and GPT-2's initializer_range.
    std::normal_distribution<double> normal(0.0, 0.02);
    for (double& v : values) v = normal(gen);
  } else if (name == "gamma" || name == "moving_variance") {
    for (double& v : values) v = 1.0;
  }
  return values;
}

void CheckInput(const Network& network, int64_t batch, const std::vector<double>& values,
                const std::vector<int32_t>& labels) {
  FITSPEED_CHECK(static_cast<int64_t>(values.size()) == batch * network.input_shape().elements(),
                 "input size does not match the network");
  if (const int64_t vocab = InputVocab(network); vocab > 0) {
    for (double id : values) {
      FITSPEED_CHECK(id >= 0 && id < static_cast<double>(vocab) && id == std::floor(id),
                     "token id out of range");
    }
  }
  FITSPEED_CHECK(static_cast<int64_t>(labels.size()) == LabelCount(network, batch),
                 "label count does not match the loss rows");
  for (const LossLabels& loss : LabelLayout(network, batch)) {
    for (int64_t r = 0; r < loss.rows; ++r) {
      const int32_t label = labels[static_cast<size_t>(loss.offset + r)];
      FITSPEED_CHECK(label >= 0 && label < loss.classes, "label out of range");
    }
  }
}

void CheckExecutable(const Network& network, const StepConfig& config) {
  if (!network.finalized()) {
    throw UsageError(fmt::format("network '{}' is not finalized", network.name));
  }
  if (config.batch < 1) {
    throw UsageError(fmt::format("batch {} must be >= 1", config.batch));
  }
  for (int l = 0; l < network.size(); ++l) {
    const Layer& layer = network.layer(l);
    const int rank = layer.input_ids.empty()
                         ? layer.output_shape.rank()
                         : network.layer(layer.input_ids[0]).output_shape.rank();
    const std::vector<int>& ranks = kinds::RulesOf(layer.kind).host_ranks;
    const bool ok = std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
    if (ok && l > 0 && InputVocab(network) > 0) {
      for (int input : layer.input_ids) {
        if (input == 0 && layer.kind != LayerKind::kEmbedding) {
          throw UsageError(fmt::format(
              "layer '{}' ({}) of network '{}' reads the token ids of the input; the host "
              "backends run only embeddings on them",
              layer.name, LayerKindName(layer.kind), network.name));
        }
      }
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

void StepExecutor::Run(const std::vector<Op>& ops, const std::function<void(int)>* hook) {
  FITSPEED_CHECK(!config_.dry_run, "a dry-run executor cannot run");
  const ThreadScope threads(config_.threads);
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  for (size_t k = 0; k < ops.size(); ++k) {
    const Op& op = ops[k];
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
    if (hook != nullptr && *hook) {
      (*hook)(static_cast<int>(k));
      start = Clock::now();  // the hook's time is nobody's layer time
    }
  }
}

std::vector<int> StepExecutor::GradientReadyOps() const {
  // Layer -> its parameters, and dense layer -> the embedding table it uses.
  std::vector<std::vector<size_t>> of_layer(static_cast<size_t>(network_.size()));
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].trainable) of_layer[static_cast<size_t>(params_[i].layer)].push_back(i);
  }
  std::vector<int> ready(params_.size(), -1);
  const std::vector<Op>& backward = ops_[static_cast<size_t>(Phase::kBackward)];
  auto touch = [&](int layer, int k) {
    for (size_t i : of_layer[static_cast<size_t>(layer)]) ready[i] = k;
    const int table = TiedEmbedding(network_, layer);
    if (table >= 0) {
      for (size_t i : of_layer[static_cast<size_t>(table)]) ready[i] = std::max(ready[i], k);
    }
  };
  for (size_t k = 0; k < backward.size(); ++k) {
    const Op& op = backward[k];
    if (op.shares.empty()) {
      touch(op.layer, static_cast<int>(k));
    } else {
      for (const auto& share : op.shares) touch(share.first, static_cast<int>(k));
    }
  }
  return ready;
}

double StepExecutor::Forward() {
  Run(ops_[static_cast<size_t>(Phase::kForward)]);
  return loss();
}

void StepExecutor::Backward() { Run(ops_[static_cast<size_t>(Phase::kBackward)], &backward_hook_); }

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
                                     PrecisionName(config.precision, PrecisionContext::kHost)));
      }
      return MakeEigenExecutor<float>(network, config);
  }
  throw UsageError("unknown backend");
}

}  // namespace fitspeed::timing
