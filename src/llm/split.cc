// The split model (fitspeed/llm/split.h; docs/llm.md, "The split model").
#include "fitspeed/llm/split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "llm/layer_kernels.h"

namespace fitspeed {

std::string RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

Recompute ParseRecompute(const std::string& name) {
  if (name == "none") return Recompute::kNone;
  if (name == "selective") return Recompute::kSelective;
  if (name == "full") return Recompute::kFull;
  throw UsageError("recompute '" + name + "': expected none, selective or full");
}

std::string MatrixFormatName(MatrixFormat f) {
  switch (f) {
    case MatrixFormat::k16:
      return "16-bit";
    case MatrixFormat::kFp8:
      return "fp8";
    case MatrixFormat::kInt8:
      return "int8";
    case MatrixFormat::kFp4:
      return "fp4";
  }
  return "16-bit";
}

MatrixFormat ParseMatrixFormat(const std::string& name) {
  if (name == "mixed" || name == "bf16" || name == "fp16" || name == "16-bit")
    return MatrixFormat::k16;
  if (name == "fp8") return MatrixFormat::kFp8;
  if (name == "int8") return MatrixFormat::kInt8;
  if (name == "fp4") return MatrixFormat::kFp4;
  throw UsageError("precision '" + name + "': expected mixed, bf16, fp16, fp8, int8 or fp4");
}

int64_t LlmSplit::Accumulation() const {
  const int64_t per_step = micro_batch * dp;
  return per_step > 0 ? global_batch / per_step : 0;
}

LlmCluster MakeCluster(const Device& device, int devices, int domain) {
  if (devices < 1) throw UsageError("devices " + std::to_string(devices) + ": must be >= 1");
  if (domain < 0) throw UsageError("devices per node " + std::to_string(domain) + ": must be >= 1");
  LlmCluster c;
  c.device = device;
  c.devices = devices;
  c.domain = domain > 0 ? domain : (device.scale_up_domain > 0 ? device.scale_up_domain : 8);
  auto source_of = [&](int index, const char* what) {
    const std::string key = "links[" + std::to_string(index) + "]." + what;
    auto it = device.sources.find(key);
    return it == device.sources.end() ? std::string("the device's links") : it->second;
  };
  bool have_intra = false, have_inter = false;
  for (size_t i = 0; i < device.links.size(); ++i) {
    const DeviceLink& l = device.links[i];
    if (l.connects == "devices" && !have_intra) {
      c.intra = l;
      c.intra_source = l.name + ": " + source_of(static_cast<int>(i), "bandwidth_bytes_per_s");
      have_intra = true;
    } else if (l.connects == "network" && !have_inter) {
      c.inter = l;
      c.inter_source = l.name + ": " + source_of(static_cast<int>(i), "bandwidth_bytes_per_s");
      have_inter = true;
    }
  }
  if (!have_intra) {
    // A device without a scale-up link (a PCIe card): its host link, else PCIe Gen4.
    const DeviceLink* host = device.FindLink("host");
    c.intra = host ? Link{host->bandwidth_bytes_per_s, host->latency_s} : Link{32e9, 10e-6};
    c.intra_source = host ? "no device-to-device link: the host link (" + host->name + ")"
                          : "assumed: PCIe Gen4, 32 GB/s, 10 us (the device names no link)";
  }
  if (!have_inter) {
    c.inter = Link{50e9, 5e-6};
    c.inter_source =
        "assumed: 400 Gb/s InfiniBand per device (50 GB/s, 5 us), as in DGX H100 (the device "
        "names no network link)";
  }
  return c;
}

namespace {

bool Divides(int64_t d, int64_t n) { return d > 0 && n % d == 0; }

std::string Str(int64_t v) { return std::to_string(v); }

}  // namespace

void ValidateSplit(const TransformerConfig& model, const LlmCluster& cluster,
                   const LlmTraining& training, const LlmSplit& s) {
  auto fail = [](const std::string& m) { throw UsageError(m); };
  ValidateTraining(model, cluster, training);
  if (s.tp < 1 || s.pp < 1 || s.vp < 1 || s.cp < 1 || s.ep < 1 || s.dp < 1)
    fail("every parallel size (tp, pp, vp, cp, ep, dp) must be >= 1");
  if (s.micro_batch < 1) fail("micro-batch " + Str(s.micro_batch) + ": must be >= 1");
  if (static_cast<int64_t>(s.tp) * s.pp * s.cp * s.dp != cluster.devices)
    fail("tp x pp x cp x dp = " + Str(int64_t{s.tp} * s.pp * s.cp * s.dp) + " but there are " +
         Str(cluster.devices) + " devices");
  if (!Divides(s.tp, model.heads))
    fail("tp " + Str(s.tp) + " does not divide the " + Str(model.heads) + " attention heads");
  // Megatron replicates KV heads when tp exceeds them, so either direction divides.
  if (!Divides(s.tp, model.kv_heads) && !Divides(model.kv_heads, s.tp))
    fail("tp " + Str(s.tp) + " and the " + Str(model.kv_heads) +
         " key/value heads: one must divide the other");
  if (s.vp > 1 && s.pp < 2)
    fail("virtual stages (vp " + Str(s.vp) + ") need pipeline parallelism (pp > 1)");
  if (!Divides(int64_t{s.pp} * s.vp, model.layers))
    fail("pp x vp = " + Str(int64_t{s.pp} * s.vp) + " does not divide the " + Str(model.layers) +
         " layers");
  if (s.cp > 1 && training.seq_len % (2 * s.cp) != 0)
    fail("cp " + Str(s.cp) + ": the sequence (" + Str(training.seq_len) +
         ") must split into 2 x cp chunks (the load-balanced causal ring)");
  if (s.cp > 1 && !training.flash_attention)
    fail("context parallelism needs flash attention (ring attention is built on it)");
  if (s.ep > 1 && model.experts < 2)
    fail("ep " + Str(s.ep) + " on a dense model: expert parallelism needs experts");
  if (s.ep > 1 && (!Divides(s.ep, model.experts) || !Divides(s.ep, int64_t{s.dp} * s.cp)))
    fail("ep " + Str(s.ep) + " must divide the " + Str(model.experts) +
         " experts and dp x cp = " + Str(int64_t{s.dp} * s.cp));
  if (s.global_batch < 1 || s.global_batch % (s.micro_batch * s.dp) != 0)
    fail("global batch " + Str(s.global_batch) +
         " is not a multiple of micro-batch x dp = " + Str(s.micro_batch * s.dp));
  if (s.zero < 0 || s.zero > 3) fail("zero " + Str(s.zero) + ": expected 0, 1, 2 or 3");
}

void ValidateTraining(const TransformerConfig& model, const LlmCluster& cluster,
                      const LlmTraining& training) {
  auto fail = [](const std::string& m) { throw UsageError(m); };
  ValidateTransformer(model);
  CheckSequenceLength(model, training.seq_len);
  const Device& d = cluster.device;
  const bool has = training.format == MatrixFormat::k16
                       ? d.tensor16_flops_per_s > 0 || d.fp32_flops_per_s > 0
                   : training.format == MatrixFormat::kFp8  ? d.fp8_flops_per_s > 0
                   : training.format == MatrixFormat::kInt8 ? d.int8_flops_per_s > 0
                                                            : d.fp4_flops_per_s > 0;
  if (!has)
    fail(d.name + " has no " + MatrixFormatName(training.format) +
         " matrix units in its catalog entry");
  if (training.lora_rank < 0) fail("LoRA rank must be >= 0");
  if (training.lora_dropout && training.lora_rank == 0)
    fail("LoRA dropout (--lora-dropout) needs LoRA adapters (--lora-rank > 0)");
  if (training.fp8_weights && training.format != MatrixFormat::kFp8)
    fail("FP8 weights (--fp8-weights) need FP8 matrix products (--precision fp8)");
  if (training.activation_fp8_store && model.feed_forward != FeedForwardKind::kGated)
    fail("the FP8 activation store (--activation-fp8-store) keeps a SwiGLU's input: " + model.name +
         " has no gated feed-forward");
  if (!(training.capacity_factor >= 0) || !std::isfinite(training.capacity_factor))
    fail("capacity factor must be >= 0 (0: dropless)");
  if (!(training.moe_imbalance >= 1) || !std::isfinite(training.moe_imbalance))
    fail("MoE imbalance (the busiest expert rank's tokens over the mean) must be >= 1");
  if (training.mtp_layers < -1 || training.mtp_layers > 64)
    fail("multi-token prediction modules must be in 0..64 (-1: as the model gives them)");
  if (training.gradient_bytes != 2 && training.gradient_bytes != 4)
    fail("gradient bytes must be 2 or 4");
}

namespace {

// Bytes of each weight a ZeRO-3 / FSDP rank holds sharded and gathers: the
// FP8 copy alone with fp8_weights, else the 16-bit weight. (Under FP8
// without fp8_weights, Transformer Engine's FP8 copy of the gathered layer
// is not counted: an approximation.)
double GatheredWeightBytesSplit(const LlmTraining& tr) { return tr.fp8_weights ? 1.0 : 2.0; }

}  // namespace

namespace {

// Time of a collective on a group of `n` ranks whose members sit `stride`
// ranks apart (Megatron's order: tp fastest, then cp, dp, pp), on domains of
// `domain` devices.
struct GroupPlacementSplit {
  int n = 1;
  int per_domain = 1;  // members in one scale-up domain
};

GroupPlacementSplit PlaceGroupSplit(int n, int64_t stride, int domain) {
  GroupPlacementSplit g;
  g.n = n;
  if (n <= 1) return g;
  if (stride >= domain) {
    g.per_domain = 1;
  } else {
    g.per_domain = static_cast<int>(std::min<int64_t>(n, std::max<int64_t>(1, domain / stride)));
  }
  return g;
}

double AllReduceSplit(double bytes, const GroupPlacementSplit& g, const LlmCluster& c) {
  if (g.n <= 1 || bytes <= 0) return 0;
  if (g.per_domain >= g.n) return RingAllReduceTime(bytes, g.n, c.intra);
  if (g.per_domain <= 1) return RingAllReduceTime(bytes, g.n, c.inter);
  // Reduce-scatter inside each domain, then each member all-reduces its
  // 1/per_domain shard with its peers of the other domains over its own
  // network link (one per device, as in rail-optimized DGX pods: one rail per
  // member), then the in-domain all-gather.
  return HierarchicalAllReduceTime(bytes, g.per_domain, g.n / g.per_domain, c.intra, c.inter,
                                   g.per_domain);
}

// Reduce-scatter or all-gather: half a ring all-reduce's bandwidth and latency terms.
double GatherSplit(double bytes, const GroupPlacementSplit& g, const LlmCluster& c) {
  return 0.5 * AllReduceSplit(bytes, g, c);
}

// All-to-all of `bytes` per rank: each rank keeps 1/n and sends the rest, at
// the pace of the slowest link the group crosses.
double AllToAllSplit(double bytes, const GroupPlacementSplit& g, const LlmCluster& c) {
  if (g.n <= 1 || bytes <= 0) return 0;
  const Link& l = g.per_domain >= g.n ? c.intra : c.inter;
  const double n = g.n;
  return (n - 1) / n * bytes / l.bandwidth_bytes_per_s + (n - 1) * l.latency_s;
}

double PointToPointSplit(double bytes, const Link& l) {
  return bytes / l.bandwidth_bytes_per_s + l.latency_s;
}

// Parameters on one GPU of the first stage (the most loaded): its layers
// split over tp (the experts over tp x ep), the embedding's vocabulary shard
// and, with learned positions, the whole position table; with one stage also
// the final norm and an untied output projection.
struct StageParameters {
  double dense = 0, experts = 0;              // the stage's
  double layer_dense = 0, layer_experts = 0;  // one layer's
};

StageParameters FirstStageParameters(const TransformerConfig& m, const TransformerParameters& p,
                                     const LlmSplit& s, double vocab) {
  StageParameters out;
  const double layers_per_stage = static_cast<double>(m.layers) / s.pp;
  const double expert_block = m.experts > 1 ? static_cast<double>(p.feed_forward_per_layer) : 0.0;
  out.layer_dense = (static_cast<double>(p.per_layer) - expert_block) / s.tp;
  out.layer_experts = expert_block / (double{1} * s.tp * s.ep);
  out.dense = layers_per_stage * out.layer_dense + vocab * m.hidden / s.tp;
  if (m.positions == PositionEncoding::kLearned)
    out.dense += static_cast<double>(m.max_positions) * m.hidden;
  if (s.pp == 1) out.dense += static_cast<double>(p.final_norm);
  if (s.pp == 1 && !m.tied_embeddings) out.dense += vocab * m.hidden / s.tp;
  out.experts = layers_per_stage * out.layer_experts;
  return out;
}

}  // namespace

double PaddedVocab(const TransformerConfig& m, int tp) {
  // Megatron pads the vocabulary to a multiple of 128 x tp.
  const int64_t unit = 128 * int64_t{tp};
  return static_cast<double>((m.vocab + unit - 1) / unit * unit);
}

double LayerActivationBytes(const TransformerConfig& m, int64_t seq_len, int64_t micro_batch,
                            int tp, bool sp, Recompute recompute, bool flash, int cp) {
  const LayerShape shape = MakeLayerShape(m, seq_len, micro_batch, tp, cp);
  return LayerActivationBytesOf(shape, sp, recompute, flash);
}

LlmMemory LlmMemoryPerGpu(const TransformerConfig& m, const LlmCluster& c, const LlmTraining& tr,
                          const LlmSplit& s) {
  LayerShape shape = MakeLayerShape(m, tr.seq_len, s.micro_batch, s.tp, s.cp, s.ep);
  ApplyTrainingToShape(shape, tr);
  return MemoryPerGpuWith(m, CountParameters(m), c, tr, s, shape);
}

LlmMemory MemoryPerGpuWith(const TransformerConfig& m, const TransformerParameters& p,
                           const LlmCluster& c, const LlmTraining& tr, const LlmSplit& s,
                           const LayerShape& shape) {
  LlmMemory mem;
  const double vocab = PaddedVocab(m, s.tp);
  const StageParameters sp = FirstStageParameters(m, p, s, vocab);
  const double layers_per_stage = static_cast<double>(m.layers) / s.pp;
  const double layer_params = sp.layer_dense + sp.layer_experts;
  const double params = sp.dense + sp.experts;
  const bool lora = tr.lora_rank > 0;
  // LoRA adapters: A (d_in x r) and B (r x d_out) on the attention's matrices.
  double adapters = 0;
  if (lora) adapters = layers_per_stage * LoraParametersPerLayer(shape, tr.lora_rank);
  const double shard = s.dp * s.cp;  // ZeRO shards over every rank holding a replica
  const double trained = lora ? adapters : params;
  // 16-bit weights and Transformer Engine's FP8 copies of them, or the FP8
  // weights alone (fp8_weights); LoRA adapters in 16 bits.
  const double weight_bytes = tr.fp8_weights ? 1.0 : tr.format == MatrixFormat::kFp8 ? 3.0 : 2.0;
  mem.weights = weight_bytes * params + (lora ? 2.0 * adapters : 0.0);
  mem.gradients = tr.gradient_bytes * trained;
  mem.optimizer = 12.0 * trained;  // FP32 master weights, Adam's m and v
  if (s.zero >= 1) mem.optimizer /= shard;
  if (s.zero >= 2) mem.gradients /= shard;
  // ZeRO-3 / FSDP: every 16-bit weight sharded, a frozen LoRA base's too
  // (DeepSpeed partitions every parameter), one layer gathered at a time.
  if (s.zero >= 3) {
    const double held = GatheredWeightBytesSplit(tr);
    mem.weights = (held * params + 2.0 * adapters) / shard + held * layer_params;
  }
  // Activations: the first stage holds p micro-batches of its layers in 1F1B
  // (every layer's worth at once), times (1 + (p-1)/(p v)) when interleaved
  // (Korthikanti et al. 2022, sec. 4.2.3); no more micro-batches than the step has.
  const double in_flight =
      std::min<double>(s.pp, static_cast<double>(std::max<int64_t>(1, s.Accumulation())));
  const double interleave = s.vp > 1 ? 1.0 + (s.pp - 1.0) / (s.pp * s.vp) : 1.0;
  const double per_layer =
      LayerActivationBytesOf(shape, s.sequence_parallel, s.recompute, tr.flash_attention,
                             /*frozen_mlp=*/tr.lora_rank > 0);
  const double tokens = static_cast<double>(s.micro_batch) * tr.seq_len / s.cp;
  double lora_dropped = 0;
  if (tr.lora_rank > 0 && tr.lora_dropout && s.recompute != Recompute::kFull) {
    // Each adapter's dropped input (2 bytes) and mask (1 byte), kept for its
    // weight gradient: the QKV adapter's T x h (the gathered norm output),
    // the output projection adapter's T x q_width (this GPU's heads).
    lora_dropped = 3.0 * tokens * (m.hidden + shape.q_width);
  }
  mem.activations = (per_layer + lora_dropped) * layers_per_stage * in_flight * interleave;
  if (s.recompute == Recompute::kFull) {
    // During the backward pass one layer's forward is rebuilt in full.
    mem.activations +=
        LayerActivationBytesOf(shape, s.sequence_parallel, Recompute::kNone, tr.flash_attention);
  }
  // Embedding output of each in-flight micro-batch (2 bytes per element), and
  // on the last stage (the first when pp = 1) the logits in FP32 for the loss.
  mem.activations += 2.0 * tokens * m.hidden * in_flight / (s.sequence_parallel ? s.tp : 1);
  if (s.pp == 1) mem.logits = 4.0 * tokens * vocab / s.tp;
  mem.workspace = tr.workspace_bytes;
  const double subtotal =
      mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.logits + mem.workspace;
  mem.fragmentation = tr.fragmentation * subtotal;
  mem.total = subtotal + mem.fragmentation;
  mem.capacity = c.device.memory_capacity_bytes;
  mem.fits = mem.total <= mem.capacity;
  mem.shortfall = mem.fits ? 0.0 : mem.total - mem.capacity;
  return mem;
}

LlmStepContext MakeStepContext(const TransformerConfig& m, const LlmCluster& c,
                               const LlmTraining& tr, const LlmCalibration& cal) {
  LlmStepContext ctx;
  ctx.params = CountParameters(m);
  ctx.flops_per_token = (tr.lora_rank > 0 ? 2.0 : 3.0) * ForwardFlopsPerToken(m, tr.seq_len);
  ctx.timer = MakeKernelTimer(c.device, tr.format, cal);
  return ctx;
}

LlmStep ModelLlmStep(const TransformerConfig& m, const LlmCluster& c, const LlmTraining& tr,
                     const LlmSplit& s, const LlmCalibration& cal) {
  ValidateSplit(m, c, tr, s);
  const LlmStepContext ctx = MakeStepContext(m, c, tr, cal);
  LayerShape shape = MakeLayerShape(m, tr.seq_len, s.micro_batch, s.tp, s.cp, s.ep);
  ApplyTrainingToShape(shape, tr);
  const LayerTimes lt = TimeLayer(shape, ctx.timer, tr, s.sequence_parallel);
  const HeadTimes head =
      TimeHead(shape, PaddedVocab(m, s.tp), ctx.timer, s.sequence_parallel, tr.lora_rank > 0);
  return ModelLlmStepWith(m, c, tr, s, cal, ctx, shape, lt, head);
}

namespace {

// The gradient bucket of Megatron-core's DistributedDataParallel (its
// DistributedDataParallelConfig.bucket_size default, max(40,000,000,
// 1,000,000 x dp) parameters), taken here as 40 MB of gradients whatever dp
// since the split model's first version (commit b675319): what an
// overlapped reduction leaves exposed at least, and the sharded optimizer's
// first all-gather bucket.
constexpr double kGradientBucketBytesSplit = 40e6;

// Bytes Adam's update moves per parameter on top of reading the gradient
// (LlmTraining::gradient_bytes): the FP32 master weight, m and v read and
// written (24), the 16-bit weight written (2), the gradient's conversion to
// FP32 read and written once more (8). A hand count (commit b675319) of Adam
// over FP32 master weights beside their 16-bit copies, as mixed-precision
// training keeps them (Micikevicius et al. 2018); docs/llm.md, "Update".
constexpr double kAdamBytesPerParameterSplit = 34.0;

// One parallelism's communication for one micro-batch: the time each pass
// waits for it on one layer (on one chunk boundary for the pipeline), and the
// collectives the host issues for it in each pass.
struct PassCommSplit {
  double forward_s = 0, backward_s = 0;
  double forward_calls = 0, backward_calls = 0;
};

// Tensor parallel: two all-reduces forward and two backward per layer
// (sequence parallel: a reduce-scatter and an all-gather for each, the same
// volume) of `act_bytes`, one micro-batch's hidden states.
//
// LoRA under tensor parallelism, as NeMo's ParallelLinearAdapter does it:
// forward, the QKV adapter's rank-r output gathered (its A is
// column-parallel with gather_output) and the output adapter's all-reduced
// (its A is row-parallel); backward, both B's input gradients all-reduced.
// The adapters move hidden states of their own too. Sequence parallel: the
// QKV adapter gathers the norm output forward and reduce-scatters its
// gradient backward; the output adapter's T x h/tp result goes to the
// sequence-parallel layout by an all-to-all each way (MLPerf's LORA_A2A).
// Without it: the output adapter gathers its result forward and the QKV
// adapter all-reduces its input gradient backward.
PassCommSplit TensorCommSplit(const LlmCluster& c, const LlmTraining& tr, const LlmSplit& s,
                              const LayerShape& shape, double act_bytes) {
  const GroupPlacementSplit g = PlaceGroupSplit(s.tp, 1, c.domain);
  const double one =
      s.sequence_parallel ? 2.0 * GatherSplit(act_bytes, g, c) : AllReduceSplit(act_bytes, g, c);
  PassCommSplit out;
  out.forward_s = 2.0 * one;
  out.backward_s = 2.0 * one;
  out.forward_calls = s.tp > 1 ? (s.sequence_parallel ? 4.0 : 2.0) : 0.0;
  if (tr.lora_rank > 0 && s.tp > 1) {
    const double rank_bytes = 2.0 * shape.tokens * static_cast<double>(tr.lora_rank);
    const double small_fwd = GatherSplit(rank_bytes, g, c) + AllReduceSplit(rank_bytes, g, c);
    const double small_bwd = 2.0 * AllReduceSplit(rank_bytes, g, c);
    if (s.sequence_parallel) {
      const double a2a = AllToAllSplit(act_bytes / s.tp, g, c);
      out.forward_s += small_fwd + GatherSplit(act_bytes, g, c) + a2a;
      out.backward_s += small_bwd + GatherSplit(act_bytes, g, c) + a2a;
    } else {
      out.forward_s += small_fwd + GatherSplit(act_bytes, g, c);
      out.backward_s += small_bwd + AllReduceSplit(act_bytes, g, c);
    }
    out.forward_calls += s.sequence_parallel ? 4.0 : 3.0;  // a pass's collectives
  }
  out.backward_calls = out.forward_calls;
  return out;
}

// Ring attention: cp - 1 exchanges of the K and V chunks forward, twice
// that backward (K, V and their gradients), each hidden behind the
// attention of the chunk in hand when shorter.
PassCommSplit ContextCommSplit(const LlmCluster& c, const LlmSplit& s, const LayerShape& shape,
                               const LayerTimes& lt) {
  PassCommSplit out;
  if (s.cp <= 1) return out;
  const GroupPlacementSplit g = PlaceGroupSplit(s.cp, s.tp, c.domain);
  const double kv_bytes = 2.0 * 2.0 * shape.tokens * shape.kv_width;
  const double hop = PointToPointSplit(kv_bytes, g.per_domain >= g.n ? c.intra : c.inter);
  const double steps = s.cp - 1;
  out.forward_s = steps * std::max(0.0, hop - lt.attention_fwd_gpu_s / s.cp);
  out.backward_s = steps * std::max(0.0, 2.0 * hop - lt.attention_bwd_gpu_s / s.cp);
  out.forward_calls = 2.0 * (s.cp - 1);
  out.backward_calls = 2 * out.forward_calls;
  return out;
}

// Expert parallel: dispatch and combine all-to-alls forward and backward of
// the routed tokens' hidden states.
PassCommSplit ExpertCommSplit(const TransformerConfig& m, const LlmCluster& c,
                              const LlmTraining& tr, const LlmSplit& s, double act_bytes) {
  PassCommSplit out;
  if (m.experts <= 1) return out;
  const GroupPlacementSplit g =
      PlaceGroupSplit(s.ep, int64_t{s.tp} * (s.dp * s.cp / s.ep), c.domain);
  const double routed = act_bytes * m.top_k * tr.capacity_factor;
  const double a2a = AllToAllSplit(routed, g, c);
  out.forward_s = 2.0 * a2a;
  out.backward_s = 2.0 * a2a;
  out.forward_calls = 2.0;
  out.backward_calls = 2.0;
  return out;
}

// Pipeline: at each chunk boundary a stage sends its output forward and
// receives its gradient back for every micro-batch, point to point (one
// send each way; the per-layer host floor does not count them).
PassCommSplit PipelineCommSplit(const LlmCluster& c, const LlmSplit& s, double act_bytes) {
  PassCommSplit out;
  if (s.pp <= 1) return out;
  const int64_t stride = int64_t{s.tp} * s.cp * s.dp;
  const bool intra = stride * s.pp <= c.domain;
  const double bytes = act_bytes / (s.sequence_parallel ? s.tp : 1);
  out.forward_s = PointToPointSplit(bytes, intra ? c.intra : c.inter);
  out.backward_s = out.forward_s;
  out.forward_calls = 1;
  out.backward_calls = 1;
  return out;
}

// One layer's passes for one micro-batch on a middle stage. Each pass takes
// the longer of the device's time (kernels, then the collectives it waits
// for) and the host's (dispatch_s per kernel and per collective it issues);
// recomputation reruns the whole forward pass (full) or the attention core
// (selective, when it holds recomputable score tensors).
struct LayerPassesSplit {
  double comm_forward_s = 0, comm_backward_s = 0;  // the collectives each pass waits for
  double forward_s = 0, backward_s = 0, recompute_s = 0;
};

LayerPassesSplit TimeLayerPassesSplit(const LayerTimes& lt, const LlmCalibration& cal,
                                      Recompute recompute, const PassCommSplit& tp,
                                      const PassCommSplit& cp, const PassCommSplit& ep) {
  const double d = cal.dispatch_s;
  LayerPassesSplit out;
  out.comm_forward_s = tp.forward_s + cp.forward_s + ep.forward_s;
  out.comm_backward_s = tp.backward_s + cp.backward_s + ep.backward_s;
  out.forward_s =
      std::max(lt.forward_gpu_s + out.comm_forward_s,
               (lt.forward_kernels + tp.forward_calls + ep.forward_calls + cp.forward_calls) * d);
  out.backward_s = std::max(
      lt.backward_gpu_s + out.comm_backward_s,
      (lt.backward_kernels + tp.backward_calls + ep.backward_calls + cp.backward_calls) * d);
  if (recompute == Recompute::kFull) out.recompute_s = out.forward_s;
  if (recompute == Recompute::kSelective && lt.selective_recompute)
    out.recompute_s = std::max(lt.attention_fwd_gpu_s, lt.attention_fwd_kernels * d);
  return out;
}

// One micro-batch's time on the slowest stage and the stages' mean, from a
// middle stage's `mid`: the first stage adds the embedding, the last the
// output projection and the loss.
struct StageTimesSplit {
  double max_s = 0, mean_s = 0;
};

StageTimesSplit TimeStagesSplit(const LlmSplit& s, const HeadTimes& head, double mid) {
  StageTimesSplit out;
  if (s.pp == 1) {
    out.max_s = out.mean_s = mid + head.embedding_s + head.output_s;
    return out;
  }
  const double first = mid + head.embedding_s;
  const double last = mid + head.output_s;
  out.max_s = std::max(first, last);
  out.mean_s = (first + last + (s.pp - 2) * mid) / s.pp;
  return out;
}

// The parameters one GPU of the first stage reduces the gradients of and
// updates: its stage's (StageParameters), or with LoRA its adapters alone.
struct TrainedParametersSplit {
  double dense = 0, experts = 0;
};

TrainedParametersSplit TrainedStageParametersSplit(const StageParameters& stage,
                                                   const LlmTraining& tr, const LayerShape& shape,
                                                   double layers_per_stage) {
  if (tr.lora_rank > 0) return {layers_per_stage * LoraParametersPerLayer(shape, tr.lora_rank), 0};
  return {stage.dense, stage.experts};
}

// Data-parallel communication of one step over the data (and context)
// parallel ranks, the experts' over dp x cp / ep (Rajbhandari et al. 2020,
// sec. 7): without sharding an all-reduce of the gradients; sharded
// (ZeRO-1/2, Megatron's distributed optimizer) a reduce-scatter of the
// gradients, each rank then updating its shard, and an all-gather of the
// updated weights (16-bit, the FP8 weights alone with fp8_weights, LoRA's
// 16-bit adapters); ZeRO-3 the reduce-scatter and the weights gathered for
// every micro-batch's passes. Each collective half an all-reduce of its bytes
// (GatherSplit).
struct DataCommSplit {
  double gradients_s = 0;  // the gradients' all-reduce or reduce-scatter
  double weights_s = 0;    // ZeRO-1/2: the updated weights' all-gather
  double gathers_s = 0;    // ZeRO-3: every micro-batch's weight gathers
  double exposed_s = 0;    // what of them the step waits for
};

DataCommSplit DataParallelCommSplit(const LlmCluster& c, const LlmTraining& tr, const LlmSplit& s,
                                    const StageParameters& stage,
                                    const TrainedParametersSplit& trained, double mb,
                                    double layers_per_stage, const LayerPassesSplit& layer) {
  const GroupPlacementSplit dp_group = PlaceGroupSplit(s.dp * s.cp, s.tp, c.domain);
  const GroupPlacementSplit expert_dp =
      PlaceGroupSplit(s.dp * s.cp / s.ep, int64_t{s.tp} * s.ep, c.domain);
  const auto reduce = [&](double bytes, const GroupPlacementSplit& g) {
    return s.zero >= 1 ? GatherSplit(bytes, g, c) : AllReduceSplit(bytes, g, c);
  };
  const double grad_bytes = tr.gradient_bytes * trained.dense;
  const double expert_grad_bytes = tr.gradient_bytes * trained.experts;
  const double weight_bytes = tr.lora_rank > 0 ? 2.0 : GatheredWeightBytesSplit(tr);
  DataCommSplit out;
  out.gradients_s = reduce(grad_bytes, dp_group) + reduce(expert_grad_bytes, expert_dp);
  if (s.zero == 1 || s.zero == 2) {
    out.weights_s = GatherSplit(weight_bytes * trained.dense, dp_group, c) +
                    GatherSplit(weight_bytes * trained.experts, expert_dp, c);
  }
  if (s.zero >= 3) {
    // FSDP / ZeRO-3 gathers the 16-bit weights forward and backward of every
    // micro-batch: all of them, a frozen LoRA base's too (only the adapters'
    // gradients are reduced).
    const double held = GatheredWeightBytesSplit(tr);
    out.gathers_s = mb * 2.0 * GatherSplit(held * (stage.dense + stage.experts), dp_group, c);
  }
  out.exposed_s = out.gradients_s + out.weights_s + out.gathers_s;
  if (!s.overlap_grad_reduce || !(out.exposed_s > 0)) return out;
  // Buckets reduced as the last micro-batch's backward frees them: at least
  // the last bucket is exposed.
  const double bucket = reduce(std::min(grad_bytes, kGradientBucketBytesSplit), dp_group);
  if (s.zero >= 3) {
    // ZeRO-3's gathers and the gradient buckets hide behind every
    // micro-batch's layers.
    out.exposed_s =
        std::max(bucket, out.gradients_s + out.gathers_s -
                             mb * layers_per_stage * (layer.forward_s + layer.backward_s));
    return out;
  }
  // The gradient buckets behind the last micro-batch's backward pass; the
  // sharded optimizer's weight all-gather, bucket by bucket, behind the next
  // step's first forward pass (Megatron's --overlap-param-gather, NeMo's
  // overlap_param_sync), its first bucket exposed.
  out.exposed_s = std::max(bucket, out.gradients_s - layers_per_stage * layer.backward_s);
  if (out.weights_s > 0) {
    const double first =
        GatherSplit(std::min(weight_bytes * trained.dense, kGradientBucketBytesSplit), dp_group, c);
    out.exposed_s += std::max(first, out.weights_s - layers_per_stage * layer.forward_s);
  }
  return out;
}

// The notes of a step: choices of the model its numbers depend on.
std::vector<std::string> StepNotesSplit(const TransformerConfig& m, const LlmTraining& tr,
                                        double vocab) {
  std::vector<std::string> notes;
  if (m.dropout)
    notes.push_back(
        "dropout on (as the model's configuration gives it): masks held, dropout kernels timed");
  if (vocab != static_cast<double>(m.vocab))
    notes.push_back("vocabulary padded to " + Str(static_cast<int64_t>(vocab)) +
                    " (a multiple of 128 x tp, as Megatron pads)");
  if (!tr.flash_attention)
    notes.push_back("attention without flash: full score matrices computed and held");
  return notes;
}

}  // namespace

LlmStep ModelLlmStepWith(const TransformerConfig& m, const LlmCluster& c, const LlmTraining& tr,
                         const LlmSplit& s, const LlmCalibration& cal, const LlmStepContext& ctx,
                         const LayerShape& shape, const LayerTimes& lt, const HeadTimes& head) {
  LlmStep step;
  step.split = s;
  step.accumulation = s.Accumulation();
  const double mb = static_cast<double>(step.accumulation);
  const KernelTimer& timer = ctx.timer;
  const double vocab = PaddedVocab(m, s.tp);
  const double layers_per_stage = static_cast<double>(m.layers) / s.pp;
  const bool full = s.recompute == Recompute::kFull;
  // One micro-batch's hidden states, 16-bit.
  const double act_bytes = 2.0 * shape.tokens * m.hidden;
  const PassCommSplit tp = TensorCommSplit(c, tr, s, shape, act_bytes);
  const PassCommSplit cp = ContextCommSplit(c, s, shape, lt);
  const PassCommSplit ep = ExpertCommSplit(m, c, tr, s, act_bytes);
  const PassCommSplit pipe = PipelineCommSplit(c, s, act_bytes);
  const LayerPassesSplit layer = TimeLayerPassesSplit(lt, cal, s.recompute, tp, cp, ep);
  // A layer's collectives of one parallelism, its forward pass's twice under
  // full recomputation.
  const auto per_layer = [full](const PassCommSplit& x) {
    return x.forward_s + x.backward_s + (full ? x.forward_s : 0.0);
  };
  const double comm_layer_tp = per_layer(tp);
  const double comm_layer_cp = per_layer(cp);
  const double comm_layer_ep = per_layer(ep);

  // The schedule (1F1B, interleaved over v chunks): m x the slowest stage plus
  // a bubble of (p - 1) / v x the mean stage, and the pipeline's sends.
  const StageTimesSplit stages = TimeStagesSplit(
      s, head, layers_per_stage * (layer.forward_s + layer.backward_s + layer.recompute_s));
  const double p2p_total =
      s.pp > 1 ? (pipe.forward_s + pipe.backward_s) * (s.vp * mb + (s.pp - 1)) : 0.0;
  const double bubble = (s.pp - 1.0) / s.vp * stages.mean_s;

  const StageParameters stage = FirstStageParameters(m, ctx.params, s, vocab);
  const TrainedParametersSplit trained =
      TrainedStageParametersSplit(stage, tr, shape, layers_per_stage);
  const DataCommSplit data =
      DataParallelCommSplit(c, tr, s, stage, trained, mb, layers_per_stage, layer);

  // The update: Adam over the FP32 master weights this GPU owns.
  double owned = trained.dense + trained.experts;
  if (s.zero >= 1) owned /= (s.dp * s.cp);
  const double optimizer =
      timer.MemoryTime(owned * (kAdamBytesPerParameterSplit + tr.gradient_bytes));

  LlmStepParts& parts = step.parts;
  // The parts: communication as the device waits for it, recomputation as
  // its pass takes, compute the rest of the slowest stage's passes.
  const double comm_f = layer.comm_forward_s;
  const double per_mb_compute_max =
      stages.max_s - layers_per_stage * (layer.recompute_s + comm_layer_tp + comm_layer_cp +
                                         comm_layer_ep - (full ? comm_f : 0.0));
  parts.compute_s = mb * per_mb_compute_max;
  parts.recompute_s = mb * layers_per_stage * (layer.recompute_s - (full ? comm_f : 0.0));
  parts.tensor_comm_s = mb * layers_per_stage * comm_layer_tp;
  parts.context_comm_s = mb * layers_per_stage * comm_layer_cp;
  parts.expert_comm_s = mb * layers_per_stage * comm_layer_ep;
  parts.pipeline_comm_s = p2p_total;
  parts.bubble_s = bubble;
  parts.data_comm_s = data.exposed_s;
  parts.optimizer_s = optimizer;
  parts.overhead_s = cal.step_overhead_s;
  step.step_s = parts.compute_s + parts.recompute_s + parts.tensor_comm_s + parts.context_comm_s +
                parts.expert_comm_s + parts.pipeline_comm_s + parts.bubble_s + parts.data_comm_s +
                parts.optimizer_s + parts.overhead_s;
  step.sequences_per_s = static_cast<double>(s.global_batch) / step.step_s;
  step.tokens_per_s = step.sequences_per_s * static_cast<double>(tr.seq_len);
  step.mfu = step.tokens_per_s * ctx.flops_per_token / (c.devices * timer.peak);
  step.memory = MemoryPerGpuWith(m, ctx.params, c, tr, s, shape);
  step.notes = StepNotesSplit(m, tr, vocab);
  return step;
}

LlmTraining MakeLlmTraining(int64_t seq_len, const std::string& precision, int64_t lora_rank,
                            bool flash_attention, double gradient_bytes) {
  if (seq_len < 1) {
    throw UsageError(fmt::format(
        "sequence length (--seq-len, seq_len) {}: give the tokens per sequence (>= 1)", seq_len));
  }
  if (gradient_bytes != 2 && gradient_bytes != 4) {
    throw UsageError(fmt::format(
        "gradient bytes (--gradient-bytes) {}: expected 2 or 4 bytes per gradient element",
        gradient_bytes));
  }
  if (lora_rank < 0) {
    throw UsageError(fmt::format("LoRA rank (--lora-rank) {}: must be >= 0", lora_rank));
  }
  LlmTraining t;
  t.seq_len = seq_len;
  t.format = ParseMatrixFormat(precision);
  t.lora_rank = lora_rank;
  t.flash_attention = flash_attention;
  t.gradient_bytes = gradient_bytes;
  return t;
}

}  // namespace fitspeed
