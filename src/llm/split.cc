// The split model (fitspeed/llm/split.h; docs/llm.md, "The split model").
#include "fitspeed/llm/split.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/llm/framework.h"
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

namespace {
// Megatron-Core's names of the modules (--recompute-modules), in bit order.
constexpr const char* kRecomputeModuleNamesSplit[] = {
    "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"};
}  // namespace

unsigned ParseRecomputeModules(const std::string& names) {
  if (names.empty()) return kRecomputeCoreAttn;
  unsigned out = 0;
  size_t start = 0;
  while (start <= names.size()) {
    const size_t comma = std::min(names.find(',', start), names.size());
    const std::string name = names.substr(start, comma - start);
    start = comma + 1;
    bool known = false;
    for (unsigned i = 0; i < std::size(kRecomputeModuleNamesSplit); ++i) {
      if (name == kRecomputeModuleNamesSplit[i]) {
        out |= 1u << i;
        known = true;
      }
    }
    if (!known)
      throw UsageError(fmt::format(
          "recompute module '{}': expected a comma-separated list of core_attn, moe_act, "
          "layernorm, mla_up_proj, mlp, moe, shared_experts (Megatron's --recompute-modules)",
          name));
  }
  return out;
}

std::string RecomputeModulesName(unsigned modules) {
  std::string out;
  for (unsigned i = 0; i < std::size(kRecomputeModuleNamesSplit); ++i) {
    if ((modules & (1u << i)) == 0) continue;
    if (!out.empty()) out += ",";
    out += kRecomputeModuleNamesSplit[i];
  }
  return out;
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
    case MatrixFormat::kFp8Block:
      return "fp8-block";
    case MatrixFormat::kMxfp8:
      return "mxfp8";
    case MatrixFormat::kNvfp4:
      return "nvfp4";
  }
  return "16-bit";
}

MatrixFormat ParseMatrixFormat(const std::string& name) {
  if (name == "mixed" || name == "bf16" || name == "fp16" || name == "16-bit")
    return MatrixFormat::k16;
  if (name == "fp8") return MatrixFormat::kFp8;
  if (name == "int8") return MatrixFormat::kInt8;
  if (name == "fp4") return MatrixFormat::kFp4;
  if (name == "fp8-block") return MatrixFormat::kFp8Block;
  if (name == "mxfp8") return MatrixFormat::kMxfp8;
  if (name == "nvfp4") return MatrixFormat::kNvfp4;
  throw UsageError("precision '" + name +
                   "': expected mixed, bf16, fp16, fp8, fp8-block, mxfp8, int8, fp4 or nvfp4");
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

// The step's note on its framework: built once per step context (the
// planner's every split carries it).
std::string FrameworkNoteSplit(const LlmTraining& tr) {
  const LlmFramework& fw = FindLlmFramework(tr.framework);
  return fmt::format(
      "framework {} ({}{}): {}; {}; gradients reduced in {:g} bytes{}", fw.name, fw.title,
      tr.framework == "megatron" ? ", the default: --framework names the others" : "",
      tr.kernels == LlmKernels::kEager
          ? "element-wise work as eager PyTorch's ops, each a kernel (RMSNorm, rotary "
            "embedding, SiLU x up, the FP32 cross-entropy)"
          : "norms, rotary embedding, activation and loss fused, one kernel each",
      tr.separate_projections
          ? "q, k, v and gate, up as separate products in rotary models (the Llama lineage)"
          : "QKV and the feed-forward's first products fused",
      tr.gradient_bytes,
      tr.compiled_step ? "; the step one compiled program, no kernel launched by the host"
      : tr.sharding == LlmSharding::kFsdp
          ? "; sharded as FSDP shards (zero 3: the FP32 master weights are the shards, Adam's 8 "
            "bytes beside; zero 2: the weights gathered every micro-batch)"
          : "");
}

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
  if (s.layout.empty() && !Divides(int64_t{s.pp} * s.vp, model.layers))
    fail("pp x vp = " + Str(int64_t{s.pp} * s.vp) + " does not divide the " + Str(model.layers) +
         " layers (give uneven stages: --first-stage-layers/--last-stage-layers, "
         "--embedding-as-layer/--loss-as-layer or --pipeline-layout)");
  if (!s.layout.empty()) ParsePipelineLayout(model, s.pp, s.vp, s.layout);
  if (s.cp > 1 && training.seq_len % (2 * s.cp) != 0)
    fail("cp " + Str(s.cp) + ": the sequence (" + Str(training.seq_len) +
         ") must split into 2 x cp chunks (the load-balanced causal ring)");
  if (s.cp > 1 && !training.flash_attention)
    fail("context parallelism needs flash attention (ring attention is built on it)");
  if (s.ep > 1 && model.experts < 2)
    fail("ep " + Str(s.ep) + " on a dense model: expert parallelism needs experts");
  if (s.etp < 0) fail("etp " + Str(s.etp) + ": must be >= 1 (0: tp)");
  if (s.etp > 0 && model.experts < 2)
    fail("etp " + Str(s.etp) + " on a dense model: expert tensor parallelism needs experts");
  const int64_t stage_ranks = int64_t{s.tp} * s.cp * s.dp;
  if (s.ep > 1 && !Divides(s.ep, model.experts))
    fail("ep " + Str(s.ep) + " must divide the " + Str(model.experts) + " experts");
  if (model.experts > 1 && !Divides(int64_t{s.ExpertTp()} * s.ep, stage_ranks))
    fail("etp x ep = " + Str(int64_t{s.ExpertTp()} * s.ep) + " must divide tp x cp x dp = " +
         Str(stage_ranks) + " (the ranks of a stage the experts fold over)");
  if (model.experts > 1 && !Divides(s.ExpertTp(), model.ffn_hidden))
    fail("etp " + Str(s.ExpertTp()) + " does not divide the experts' inner size " +
         Str(model.ffn_hidden));
  if (s.global_batch < 1 || s.global_batch % (s.micro_batch * s.dp) != 0)
    fail("global batch " + Str(s.global_batch) +
         " is not a multiple of micro-batch x dp = " + Str(s.micro_batch * s.dp));
  if (s.zero < 0 || s.zero > 3) fail("zero " + Str(s.zero) + ": expected 0, 1, 2 or 3");
  if (s.tp_comm_overlap && (!s.sequence_parallel || s.tp < 2))
    fail(
        "the tensor-parallel communication overlap (tp_comm_overlap) needs sequence "
        "parallelism and tp > 1, as Transformer Engine's userbuffers do");
  if (s.shard_group < 0) fail("shard group " + Str(s.shard_group) + ": must be >= 0 (0: dp x cp)");
  if (s.shard_group > 0) {
    if (s.zero < 1)
      fail("a shard group (hybrid sharding) needs ZeRO >= 1: nothing is sharded at 0");
    if (!Divides(s.shard_group, int64_t{s.dp} * s.cp))
      fail("shard group " + Str(s.shard_group) +
           " does not divide dp x cp = " + Str(int64_t{s.dp} * s.cp));
    if (model.experts > 1)
      fail("a shard group on a mixture of experts: the experts' sharding over it is not modeled");
  }
  FindLlmFramework(training.framework).CheckSplit(s);
  if (!s.ScheduleRuns())
    fail("interleaved pipeline (vp " + Str(s.vp) + ") with " + Str(s.Accumulation()) +
         " micro-batches: Megatron-Core's interleaved schedule needs a multiple of pp = " +
         Str(s.pp) +
         " (its default microbatch_group_size_per_vp_stage); use vp 1, or a global "
         "batch or micro-batch that gives a multiple");
}

void ValidateTraining(const TransformerConfig& model, const LlmCluster& cluster,
                      const LlmTraining& training) {
  auto fail = [](const std::string& m) { throw UsageError(m); };
  ValidateTransformer(model);
  CheckSequenceLength(model, training.seq_len);
  FindLlmFramework(training.framework);
  if (training.gradient_bytes != 2 && training.gradient_bytes != 4)
    fail(
        fmt::format("gradient bytes {:g}: expected 2 or 4 (0 is resolved to the framework's by "
                    "MakeLlmTraining and ApplyLlmFramework)",
                    training.gradient_bytes));
  const Device& d = cluster.device;
  const MatrixFormat f = training.format;
  const bool has =
      f == MatrixFormat::k16 ? d.tensor16_flops_per_s > 0 || d.fp32_flops_per_s > 0
      : f == MatrixFormat::kFp8 || f == MatrixFormat::kFp8Block || f == MatrixFormat::kMxfp8
          ? d.fp8_flops_per_s > 0
      : f == MatrixFormat::kInt8 ? d.int8_flops_per_s > 0
                                 : d.fp4_flops_per_s > 0;
  if (!has) fail(d.name + " has no " + MatrixFormatName(f) + " matrix units in its catalog entry");
  if (f == MatrixFormat::kMxfp8 || f == MatrixFormat::kNvfp4) {
    const std::string name = MatrixFormatName(f);
    const auto& native = d.block_scaled_formats;
    if (std::find(native.begin(), native.end(), name) == native.end())
      fail(d.name + " does not run " + name +
           " natively (its device file's \"block_scaled\" formats: " +
           (native.empty() ? std::string("none") : fmt::format("{}", fmt::join(native, ", "))) +
           "); --precision fp8 or fp8-block on Hopper");
  }
  if (training.lora_rank < 0) fail("LoRA rank must be >= 0");
  if (training.lora_dropout && training.lora_rank == 0)
    fail("LoRA dropout (--lora-dropout) needs LoRA adapters (--lora-rank > 0)");
  if (training.fp8_weights && training.format != MatrixFormat::kFp8 &&
      training.format != MatrixFormat::kFp8Block && training.format != MatrixFormat::kMxfp8)
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

// A layout with its groups and repeats expanded: E, L, t, m and '|' alone
// (commas and spaces dropped, as Megatron drops them). UsageError naming the
// position of what is malformed.
std::string ExpandPipelineLayoutSplit(const std::string& layout) {
  const auto fail = [&](size_t at, const std::string& problem) {
    throw UsageError(
        fmt::format("pipeline layout '{}': at character {}: {}", layout, at + 1, problem));
  };
  if (layout.size() > 100000) fail(0, "longer than 100,000 characters");
  // Items: a character or a parenthesized group, each optionally *n.
  struct Parser {
    const std::string& text;
    size_t at = 0;
    const decltype(fail)& f;
    std::string Sequence(int depth) {
      if (depth > 16) f(at, "groups nested deeper than 16");
      std::string out;
      while (at < text.size()) {
        const char ch = text[at];
        if (ch == ')') return out;
        std::string item;
        if (ch == '(') {
          const size_t open = at++;
          item = Sequence(depth + 1);
          if (at >= text.size() || text[at] != ')') f(open, "'(' without its ')'");
          ++at;
        } else if (ch == 'E' || ch == 'L' || ch == 't' || ch == 'm' || ch == '|') {
          item = std::string(1, ch);
          ++at;
        } else if (ch == ',' || ch == ' ') {
          ++at;  // cosmetic, as Megatron strips them
          continue;
        } else {
          f(at, fmt::format("'{}' is not E, L, t, m, '|', '(', ')' or '*'", ch));
        }
        if (at < text.size() && text[at] == '*') {
          const size_t star = at++;
          int64_t n = 0;
          size_t digits = 0;
          while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
            n = n * 10 + (text[at++] - '0');
            if (++digits > 6) f(star, "a repeat count over 999,999");
          }
          if (digits == 0) f(star, "'*' without a count");
          if (static_cast<double>(item.size()) * static_cast<double>(n) + out.size() > 1e7)
            f(star, "expands past 10,000,000 items");
          std::string repeated;
          repeated.reserve(item.size() * static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) repeated += item;
          item = std::move(repeated);
        }
        if (static_cast<double>(out.size()) + item.size() > 1e7)
          f(at, "expands past 10,000,000 items");
        out += item;
      }
      return out;
    }
  };
  Parser parser{layout, 0, fail};
  std::string flat = parser.Sequence(0);
  if (parser.at != layout.size()) fail(parser.at, "')' without its '('");
  return flat;
}

}  // namespace

std::vector<PipelineChunk> ParsePipelineLayout(const TransformerConfig& m, int pp, int vp,
                                               const std::string& layout) {
  const auto fail = [&](size_t at, const std::string& problem) {
    throw UsageError(
        fmt::format("pipeline layout '{}': at character {}: {}", layout, at + 1, problem));
  };
  const std::string flat = ExpandPipelineLayoutSplit(layout);
  std::vector<PipelineChunk> chunks(1);
  int64_t layer = 0, mtp = 0, embeddings = 0, losses = 0;
  for (const char ch : flat) {
    PipelineChunk& c = chunks.back();
    if (ch == '|') {
      chunks.emplace_back();
      chunks.back().first_layer = layer;
    } else if (ch == 't') {
      if (c.mtp > 0 || c.loss)
        fail(0, "a transformer layer after a multi-token prediction module or the loss");
      ++c.layers;
      ++layer;
    } else if (ch == 'm') {
      ++c.mtp;
      ++mtp;
    } else if (ch == 'E') {
      c.embedding = true;
      ++embeddings;
    } else if (ch == 'L') {
      c.loss = true;
      ++losses;
    }
  }
  const int64_t stages = int64_t{pp} * vp;
  if (static_cast<int64_t>(chunks.size()) != stages)
    fail(0, fmt::format("{} stages for pp x vp = {} x {} = {}", chunks.size(), pp, vp, stages));
  if (layer != m.layers)
    fail(0, fmt::format("{} transformer layers ('t') for the model's {}", layer, m.layers));
  if (embeddings != 1 || !chunks.front().embedding)
    fail(0, "the embedding ('E') must appear once, in the first stage");
  if (losses != 1 || !chunks.back().loss)
    fail(0, "the loss ('L') must appear once, in the last stage");
  if (mtp > 64) fail(0, fmt::format("{} multi-token prediction modules ('m'), over 64", mtp));
  return chunks;
}

std::string CompactPipelineLayout(const std::string& text) {
  // Expanded, then split on '|' with runs of equal stages counted.
  const std::string layout = ExpandPipelineLayoutSplit(text);
  std::vector<std::string> stages;
  size_t start = 0;
  while (true) {
    const size_t bar = layout.find('|', start);
    stages.push_back(
        layout.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  // Runs of 3 or more layers in a stage as "t*n".
  for (std::string& stage : stages) {
    std::string shorter;
    for (size_t i = 0; i < stage.size();) {
      size_t j = i;
      while (j < stage.size() && stage[j] == stage[i]) ++j;
      shorter +=
          stage[i] == 't' && j - i >= 3 ? fmt::format("t*{}", j - i) : stage.substr(i, j - i);
      i = j;
    }
    stage = std::move(shorter);
  }
  std::string out;
  for (size_t i = 0; i < stages.size();) {
    size_t j = i + 1;
    while (j < stages.size() && stages[j] == stages[i]) ++j;
    const size_t run = j - i;
    const bool last = j == stages.size();
    if (run >= 3 && !last) {
      out += fmt::format("({}|)*{}", stages[i], run);
    } else {
      for (size_t k = i; k < j; ++k) out += stages[k] + (k + 1 < stages.size() ? "|" : "");
    }
    i = j;
  }
  return out;
}

std::string PipelineLayoutOf(const TransformerConfig& m, int pp, int vp, int64_t first,
                             int64_t last, bool embedding_as_layer, bool loss_as_layer) {
  if (pp < 1 || vp < 1) throw UsageError("pp and vp must be >= 1");
  const bool uneven = first > 0 || last > 0;
  if (uneven && (embedding_as_layer || loss_as_layer))
    throw UsageError(
        "--first-stage-layers/--last-stage-layers and --embedding-as-layer/--loss-as-layer are "
        "exclusive (as Megatron's options are)");
  if (first < 0 || last < 0) throw UsageError("first and last stage layers must be >= 1");
  if (uneven && pp < 2) throw UsageError("uneven first and last stages need pp > 1");
  std::vector<int64_t> per_chunk(static_cast<size_t>(pp) * vp);  // index: c x pp + r
  const auto chunk = [&](int r, int c) -> int64_t& {
    return per_chunk[static_cast<size_t>(c) * pp + r];
  };
  if (uneven) {
    int64_t rest = m.layers;
    int left = pp;
    if (first > 0) rest -= first, --left;
    if (last > 0) rest -= last, --left;
    if (rest < 0 || (left == 0 && rest != 0) || (left > 0 && rest % left != 0))
      throw UsageError(fmt::format(
          "--first-stage-layers {} and --last-stage-layers {}: the other {} layers do not divide "
          "evenly over the other {} stages",
          first, last, rest, left));
    const int64_t middle = left > 0 ? rest / left : 0;
    for (int r = 0; r < pp; ++r) {
      const int64_t n = r == 0 && first > 0 ? first : r == pp - 1 && last > 0 ? last : middle;
      if (n % vp != 0)
        throw UsageError(fmt::format(
            "stage {}'s {} layers do not divide over vp {} chunks (Megatron requires it)", r, n,
            vp));
      for (int c = 0; c < vp; ++c) chunk(r, c) = n / vp;
    }
  } else {
    const int64_t slots = m.layers + (embedding_as_layer ? 1 : 0) + (loss_as_layer ? 1 : 0);
    if (slots % (int64_t{pp} * vp) != 0)
      throw UsageError(fmt::format("{} layers{}{} do not divide over pp x vp = {} chunks", m.layers,
                                   embedding_as_layer ? " + the embedding" : "",
                                   loss_as_layer ? " + the loss" : "", int64_t{pp} * vp));
    for (int64_t& n : per_chunk) n = slots / (int64_t{pp} * vp);
    if (embedding_as_layer) --per_chunk.front();
    if (loss_as_layer) --per_chunk.back();
    if (per_chunk.front() < 0 || per_chunk.back() < 0)
      throw UsageError("not enough layers for the first or last chunk to give one up");
  }
  std::string out = "E";
  for (size_t i = 0; i < per_chunk.size(); ++i) {
    if (i > 0) out += "|";
    if (per_chunk[i] > 0) out += per_chunk[i] == 1 ? "t" : fmt::format("t*{}", per_chunk[i]);
  }
  return out + "L";
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

}  // namespace

std::vector<PipelineStage> PipelineStagesOf(const TransformerConfig& m, const LlmSplit& s,
                                            int64_t mtp, bool distinct) {
  std::vector<PipelineChunk> chunks;
  if (s.layout.empty()) {
    const int64_t n = int64_t{s.pp} * s.vp;
    const int64_t per = m.layers / n;
    chunks.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      chunks[static_cast<size_t>(i)].first_layer = i * per;
      chunks[static_cast<size_t>(i)].layers = per;
    }
    chunks.front().embedding = true;
    chunks.back().loss = true;
  } else {
    chunks = ParsePipelineLayout(m, s.pp, s.vp, s.layout);
  }
  int64_t placed = 0;
  for (const PipelineChunk& c : chunks) placed += c.mtp;
  if (placed == 0) {
    chunks.back().mtp = mtp;
  } else if (placed != mtp) {
    throw UsageError(fmt::format(
        "pipeline layout '{}' places {} multi-token prediction modules ('m'); {} are trained",
        s.layout, placed, mtp));
  }
  std::vector<PipelineStage> stages(static_cast<size_t>(s.pp));
  for (size_t i = 0; i < stages.size(); ++i) stages[i].index = static_cast<int>(i);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const PipelineChunk& c = chunks[i];
    PipelineStage& st = stages[i % static_cast<size_t>(s.pp)];
    for (int64_t l = c.first_layer; l < c.first_layer + c.layers; ++l)
      st.layers[static_cast<size_t>(KindIndex(LayerKindAt(m, l)))] += 1;
    st.embedding = st.embedding || c.embedding;
    st.loss = st.loss || c.loss;
    st.mtp += static_cast<double>(c.mtp);
  }
  if (!distinct) return stages;
  std::vector<PipelineStage> out;
  for (const PipelineStage& st : stages) {
    auto same = std::find_if(out.begin(), out.end(), [&](const PipelineStage& o) {
      return o.layers == st.layers && o.embedding == st.embedding && o.loss == st.loss &&
             o.mtp == st.mtp;
    });
    if (same == out.end()) {
      out.push_back(st);
    } else {
      ++same->count;
    }
  }
  return out;
}

namespace {

// Parameters on one GPU of a stage: its layers split over tp (the routed
// experts over etp x ep), with the embedding the vocabulary's shard and,
// with learned positions, the whole position table; with the loss the final
// norm and the output projection's shard (an untied one, or on a stage apart
// from the embedding Megatron's copy of the tied embedding); the
// multi-token prediction modules' norms, projection and layer.
struct StageParameters {
  double dense = 0, experts = 0;
  double largest_layer = 0;  // one layer's, the largest on the stage (ZeRO-3 gathers one at a time)
};

double LayerDenseSplit(const LayerParameters& p, const LlmSplit& s) {
  return static_cast<double>(p.attention + p.feed_forward + p.norms) / s.tp;
}
double LayerExpertsSplit(const LayerParameters& p, const LlmSplit& s) {
  return static_cast<double>(p.experts) / (double{1} * s.ExpertTp() * s.ep);
}

StageParameters StageParametersOf(const TransformerConfig& m, const LlmStepContext& ctx,
                                  const LlmSplit& s, double vocab, const PipelineStage& st) {
  StageParameters out;
  const double h = static_cast<double>(m.hidden);
  for (int k = 0; k < kTransformerKinds; ++k) {
    const double n = st.layers[static_cast<size_t>(k)];
    if (n == 0) continue;
    const LayerParameters& p = ctx.kind_params[static_cast<size_t>(k)];
    out.dense += n * LayerDenseSplit(p, s);
    out.experts += n * LayerExpertsSplit(p, s);
    out.largest_layer =
        std::max(out.largest_layer, LayerDenseSplit(p, s) + LayerExpertsSplit(p, s));
  }
  if (st.embedding) {
    out.dense += vocab * h / s.tp;
    if (m.positions == PositionEncoding::kLearned)
      out.dense += static_cast<double>(m.max_positions) * h;
  }
  if (st.loss) {
    out.dense += static_cast<double>(ctx.params.final_norm);
    if (!m.tied_embeddings || !st.embedding) out.dense += vocab * h / s.tp;
  }
  if (st.mtp > 0) {
    const LayerParameters& p =
        ctx.kind_params[static_cast<size_t>(KindIndex(LayerKindAt(m, m.layers)))];
    const double norm = m.norm == NormKind::kLayerNorm ? 2.0 * h : h;
    out.dense += st.mtp * (3.0 * norm + 2.0 * h * h / s.tp + LayerDenseSplit(p, s));
    out.experts += st.mtp * LayerExpertsSplit(p, s);
    // Its head: the output projection shared with the main model's on the same stage.
    if (!st.loss) out.dense += vocab * h / s.tp;
  }
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
  const LlmStepContext ctx = MakeStepContext(m, c, tr, LlmCalibration{});
  return MemoryPerGpuWith(m, ctx, c, tr, s, TimeModelLayers(m, ctx, tr, s),
                          PipelineStagesOf(m, s, ctx.mtp_layers, false));
}

namespace {

// One stage's memory per GPU (LlmMemory's parts, total and fit left to the caller).
LlmMemory StageMemorySplit(const TransformerConfig& m, const LlmStepContext& ctx,
                           const LlmTraining& tr, const LlmSplit& s, const ModelLayerTimes& lt,
                           const PipelineStage& st, int stage) {
  LlmMemory mem;
  const double vocab = PaddedVocab(m, s.tp);
  const StageParameters sp = StageParametersOf(m, ctx, s, vocab, st);
  const double params = sp.dense + sp.experts;
  const bool lora = tr.lora_rank > 0;
  const int first_kind = [&] {
    for (int k = 0; k < kTransformerKinds; ++k)
      if (ctx.kinds_present[static_cast<size_t>(k)]) return k;
    return 0;
  }();
  const LayerShape& any_shape = lt.shapes[static_cast<size_t>(first_kind)];
  // LoRA adapters: A (d_in x r) and B (r x d_out) on the attention's matrices.
  double adapters = 0;
  if (lora) adapters = st.LayerCount() * LoraParametersPerLayer(any_shape, tr.lora_rank);
  // ZeRO shards the dense parameters over every rank holding a replica (dp x
  // cp), the routed experts' over the experts' data-parallel ranks.
  const double shard = s.ShardRanks();
  const double expert_shard = s.ExpertDp();
  const double trained_dense = lora ? adapters : sp.dense;
  const double trained_experts = lora ? 0.0 : sp.experts;
  // 16-bit weights and Transformer Engine's FP8 copies of them, or the FP8
  // weights alone (fp8_weights); LoRA adapters in 16 bits.
  // (Block-scaled recipes: the FP8 copy of the 128x128-block recipe, both
  // MXFP8 copies, NVFP4's two half-byte copies.)
  const double weight_bytes = tr.fp8_weights ? 1.0
                              : tr.format == MatrixFormat::kFp8 ||
                                      tr.format == MatrixFormat::kFp8Block ||
                                      tr.format == MatrixFormat::kNvfp4
                                  ? 3.0
                              : tr.format == MatrixFormat::kMxfp8 ? 4.0
                                                                  : 2.0;
  mem.weights = weight_bytes * params + (lora ? 2.0 * adapters : 0.0);
  const double g = tr.gradient_bytes;
  mem.gradients = g * (s.zero >= 2 ? trained_dense / shard + trained_experts / expert_shard
                                   : trained_dense + trained_experts);
  // FP32 master weights, Adam's m and v.
  mem.optimizer = 12.0 * (s.zero >= 1 ? trained_dense / shard + trained_experts / expert_shard
                                      : trained_dense + trained_experts);
  // ZeRO-3 / FSDP: every 16-bit weight sharded, a frozen LoRA base's too
  // (DeepSpeed partitions every parameter), one layer gathered at a time.
  if (s.zero >= 3) {
    const double held = GatheredWeightBytesSplit(tr);
    mem.weights = (held * sp.dense + 2.0 * adapters) / shard + held * sp.experts / expert_shard +
                  held * sp.largest_layer;
    if (tr.sharding == LlmSharding::kFsdp) {
      // FSDP's sharded parameters are the FP32 master weights themselves
      // (_flat_param.py: the 16-bit copy exists only while gathered): 4
      // bytes a trained parameter sharded, a frozen base's in 16 bits, and
      // the optimizer's Adam m and v, 8.
      const double frozen_dense = lora ? sp.dense : 0.0;
      const double frozen_experts = lora ? sp.experts : 0.0;
      mem.weights = (held * frozen_dense + 4.0 * trained_dense) / shard +
                    (held * frozen_experts + 4.0 * trained_experts) / expert_shard +
                    held * sp.largest_layer;
      mem.optimizer = 8.0 * (trained_dense / shard + trained_experts / expert_shard);
    }
  }
  // Activations: stage i holds p - i micro-batches of its layers in 1F1B
  // (the first stage p, every layer's worth at once), times (1 + (p-1)/(p v))
  // when interleaved (Korthikanti et al. 2022, sec. 4.2.3); no more
  // micro-batches than the step has.
  const double in_flight =
      std::min<double>(s.pp - stage, static_cast<double>(std::max<int64_t>(1, s.Accumulation())));
  const double interleave = s.vp > 1 ? 1.0 + (s.pp - 1.0) / (s.pp * s.vp) : 1.0;
  const double tokens = static_cast<double>(s.micro_batch) * tr.seq_len / s.cp;
  double lora_dropped = 0;
  if (tr.lora_rank > 0 && tr.lora_dropout && s.recompute != Recompute::kFull) {
    // Each adapter's dropped input (2 bytes) and mask (1 byte), kept for its
    // weight gradient: the QKV adapter's T x h (the gathered norm output),
    // the output projection adapter's T x q_width (this GPU's heads).
    lora_dropped = 3.0 * tokens * (m.hidden + any_shape.q_width);
  }
  const TransformerLayerKind mtp_kind = LayerKindAt(m, m.layers);
  double per_micro_batch = 0, largest_full = 0;
  for (int k = 0; k < kTransformerKinds; ++k) {
    const double n = st.layers[static_cast<size_t>(k)] + (k == KindIndex(mtp_kind) ? st.mtp : 0.0);
    if (n == 0) continue;
    const LayerShape& shape = lt.shapes[static_cast<size_t>(k)];
    per_micro_batch +=
        n * (LayerActivationBytesOf(shape, s.sequence_parallel, s.recompute, tr.flash_attention,
                                    /*frozen_mlp=*/lora, s.recompute_modules) +
             lora_dropped);
    largest_full = std::max(
        largest_full,
        LayerActivationBytesOf(shape, s.sequence_parallel, Recompute::kNone, tr.flash_attention));
  }
  // A multi-token prediction module's own tensors beside its layer: the two
  // normed inputs and their concatenation (2 T h each... 2 bytes), and its
  // embedding output.
  per_micro_batch += st.mtp * 2.0 * 4.0 * tokens * m.hidden;
  mem.activations = per_micro_batch * in_flight * interleave;
  // During the backward pass one layer's forward is rebuilt in full.
  if (s.recompute == Recompute::kFull) mem.activations += largest_full;
  // The stage's input (the embedding's output on the first) of each
  // in-flight micro-batch (2 bytes per element), and on the last stage the
  // logits in FP32 for the loss, one micro-batch's at a time (its backward
  // follows its forward), one set per prediction head.
  mem.activations += 2.0 * tokens * m.hidden * in_flight / (s.sequence_parallel ? s.tp : 1);
  if (st.loss) mem.logits = (1.0 + st.mtp) * 4.0 * tokens * vocab / s.tp;
  mem.workspace = tr.workspace_bytes;
  const double subtotal =
      mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.logits + mem.workspace;
  mem.fragmentation = tr.fragmentation * subtotal;
  mem.total = subtotal + mem.fragmentation;
  return mem;
}

}  // namespace

LlmMemory MemoryPerGpuWith(const TransformerConfig& m, const LlmStepContext& ctx,
                           const LlmCluster& c, const LlmTraining& tr, const LlmSplit& s,
                           const ModelLayerTimes& lt, const std::vector<PipelineStage>& stages) {
  LlmMemory worst;
  std::vector<double> totals;
  for (size_t i = 0; i < stages.size(); ++i) {
    LlmMemory mem = StageMemorySplit(m, ctx, tr, s, lt, stages[i], stages[i].index);
    totals.push_back(mem.total);
    if (i == 0 || mem.total > worst.total) {
      worst = mem;
      worst.stage = stages[i].index;
    }
  }
  // Every stage's when every stage was given.
  if (totals.size() == static_cast<size_t>(s.pp)) worst.stage_totals = std::move(totals);
  worst.capacity = c.device.memory_capacity_bytes;
  worst.fits = worst.total <= worst.capacity;
  worst.shortfall = worst.fits ? 0.0 : worst.total - worst.capacity;
  return worst;
}

LlmStepContext MakeStepContext(const TransformerConfig& m, const LlmCluster& c,
                               const LlmTraining& tr, const LlmCalibration& cal) {
  LlmStepContext ctx;
  ctx.params = CountParameters(m);
  for (int k = 0; k < kTransformerKinds; ++k)
    ctx.kind_params[static_cast<size_t>(k)] = CountLayerParameters(m, KindAtIndex(k));
  ctx.mtp_layers = tr.mtp_layers >= 0 ? tr.mtp_layers : m.mtp_layers;
  for (int64_t l = 0; l < m.layers; ++l)
    ctx.kinds_present[static_cast<size_t>(KindIndex(LayerKindAt(m, l)))] = true;
  if (ctx.mtp_layers > 0)
    ctx.kinds_present[static_cast<size_t>(KindIndex(LayerKindAt(m, m.layers)))] = true;
  ctx.flops_per_token = (tr.lora_rank > 0 ? 2.0 : 3.0) * ForwardFlopsPerToken(m, tr.seq_len);
  ctx.timer = MakeKernelTimer(c.device, tr.format, cal);
  // A step compiled whole (XLA) is launched once: no kernel waits on the host.
  if (tr.compiled_step) ctx.timer.dispatch_s = 0;
  ctx.framework_note = FrameworkNoteSplit(tr);
  return ctx;
}

ModelLayerTimes TimeModelLayers(const TransformerConfig& m, const LlmStepContext& ctx,
                                const LlmTraining& tr, const LlmSplit& s) {
  ModelLayerTimes out;
  for (int k = 0; k < kTransformerKinds; ++k) {
    if (!ctx.kinds_present[static_cast<size_t>(k)]) continue;
    LayerShape shape = MakeLayerShape(m, tr.seq_len, s.micro_batch, s.tp, s.cp, s.ep, s.ExpertTp(),
                                      KindAtIndex(k));
    ApplyTrainingToShape(shape, tr);
    out.shapes[static_cast<size_t>(k)] = shape;
    out.times[static_cast<size_t>(k)] = TimeLayer(shape, ctx.timer, tr, s.sequence_parallel);
  }
  for (int k = 0; k < kTransformerKinds; ++k) {
    if (!ctx.kinds_present[static_cast<size_t>(k)]) continue;
    out.head = TimeHead(out.shapes[static_cast<size_t>(k)], PaddedVocab(m, s.tp), ctx.timer,
                        s.sequence_parallel, tr.lora_rank > 0);
    break;
  }
  return out;
}

LlmStep ModelLlmStep(const TransformerConfig& m, const LlmCluster& c, const LlmTraining& tr,
                     const LlmSplit& s, const LlmCalibration& cal) {
  ValidateSplit(m, c, tr, s);
  const LlmStepContext ctx = MakeStepContext(m, c, tr, cal);
  return ModelLlmStepWith(m, c, tr, s, cal, ctx, TimeModelLayers(m, ctx, tr, s),
                          PipelineStagesOf(m, s, ctx.mtp_layers, true));
}

namespace {

// The gradient bucket of Megatron-core's DistributedDataParallel (its
// DistributedDataParallelConfig.bucket_size default, max(40,000,000,
// 1,000,000 x dp) parameters), taken here as 40 MB of gradients whatever dp
// since the split model's first version (commit b675319): what an
// overlapped reduction leaves exposed at least, and the sharded optimizer's
// first all-gather bucket.
// Transformer Engine's userbuffers defaults (module/base.py,
// get_default_config): the SMs a "pipeline" or "bulk" overlap's collective
// takes from the product beside it (num_sm 16, set_sm_margin), and the chunks
// a "pipeline" overlap splits the product into (num_splits 4).
constexpr int kUserbufferSmsSplit = 16;
constexpr double kUserbufferPipelineChunksSplit = 4;

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

// Tensor parallel, per layer and micro-batch, on hidden states of
// `act_bytes` (Shoeybi et al. 2019, Korthikanti et al. 2022), as Megatron's
// LinearWithGradAccumulationAndAsyncCommunication and Transformer Engine's
// Linear and LayerNormLinear run it:
// - forward, two all-reduces after the row-parallel products (output
//   projection, second feed-forward product); with sequence parallelism an
//   all-gather before each column-parallel input projection and a
//   reduce-scatter after each row-parallel one;
// - backward, the column-parallel projections' input gradients all-reduced
//   (sequence parallel: reduce-scattered) while their weight-gradient
//   products run (Megatron's default; --no-async-tensor-model-parallel-
//   allreduce turns it off), so only what that product does not cover waits;
//   with sequence parallelism also the row-parallel products' output
//   gradients all-gathered (waited for) and the column-parallel projections'
//   inputs gathered again for their weight gradients (only the local shard is
//   kept) while their input-gradient products run. A collective beside a
//   product costs the longer of the two (the SMs NCCL takes are not modeled).
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
                              const LayerShape& shape, const LayerTimes& lt, double act_bytes) {
  const GroupPlacementSplit g = PlaceGroupSplit(s.tp, 1, c.domain);
  const double gather = GatherSplit(act_bytes, g, c);  // an all-gather or a reduce-scatter
  const double all_reduce = AllReduceSplit(act_bytes, g, c);
  const auto beside = [](double comm, double product) { return std::max(0.0, comm - product); };
  // Transformer Engine's userbuffers overlap (tp_comm_overlap, with sequence
  // parallelism), as its initialize_ub configures it by default
  // (transformer_engine/pytorch/module/base.py, get_default_config):
  // - "ring_exchange" (the input all-gathers of the column-parallel forward
  //   products, the output-gradient all-gathers of the row-parallel input
  //   gradients): tp chunks moved by the copy engines while the previous
  //   chunk's product runs, so a collective of c beside a product of p leaves
  //   max(0, c - p) plus the one chunk that cannot overlap, min(c, p) / tp;
  // - "pipeline" (the row-parallel forward products' reduce-scatters): 4
  //   chunks, the collective on 16 SMs the product gives up (set_sm_margin),
  //   so the product takes p' = p x SMs / (SMs - 16), and leaves
  //   (p' - p) + max(0, c - p') + min(c, p') / 4;
  // - "bulk" (the column-parallel backward's input re-gather beside its
  //   input-gradient product, its input gradient's reduce-scatter beside its
  //   weight-gradient product): the whole collective beside the whole
  //   product, max(0, c - p). These replace the same collectives NCCL runs
  //   beside the same products without userbuffers, whose SMs the model does
  //   not count either: both are counted alike (16 SMs taken would cost the
  //   overlap about 12% of a product that NCCL's own channels cost it too).
  // Without the device's SM count (Device::streaming_multiprocessors) the
  // pipelined products keep every SM (the step's notes say so).
  const bool ub = s.tp_comm_overlap && s.sequence_parallel && s.tp > 1;
  const int sms = c.device.streaming_multiprocessors;
  const double margin =
      sms > kUserbufferSmsSplit ? static_cast<double>(sms) / (sms - kUserbufferSmsSplit) : 1.0;
  const auto chunked = [](double comm, double product, double chunks) {
    return std::max(0.0, comm - product) + std::min(comm, product) / chunks;
  };
  const auto ring = [&](double comm, double product) { return chunked(comm, product, s.tp); };
  const auto pipeline = [&](double comm, double product) {
    return (margin - 1.0) * product +
           chunked(comm, margin * product, kUserbufferPipelineChunksSplit);
  };
  const auto bulk = [&](double comm, double product) { return beside(comm, product); };
  PassCommSplit out;
  out.forward_s = 2.0 * (s.sequence_parallel ? 2.0 * gather : all_reduce);
  if (ub) {
    out.forward_s = 0;
    for (size_t side = 0; side < lt.column.size(); ++side)
      out.forward_s +=
          ring(gather, lt.column[side].forward_s) + pipeline(gather, lt.row[side].forward_s);
  }
  for (size_t side = 0; side < lt.column.size(); ++side) {
    const LayerTimes::LinearTimes& col = lt.column[side];
    // A frozen weight (LoRA's base: Megatron's LinearWithFrozenWeight) has no
    // weight gradient, so nothing gathers its input again.
    const bool regather = s.sequence_parallel && col.wgrad_s > 0;
    if (ub) {
      // The row-parallel product's output gradient gathered beside its input
      // gradient; the column's input re-gathered beside its input gradient
      // and that gradient reduce-scattered beside its weight gradient.
      out.backward_s += ring(gather, lt.row[side].dgrad_s) + bulk(gather, col.wgrad_s);
      if (regather) out.backward_s += bulk(gather, col.dgrad_s);
    } else {
      // The row's output gradient gathered before its input gradient (waited
      // for), the column's input gradient reduce-scattered (all-reduced
      // without sequence parallelism) beside its weight gradient, its input
      // gathered again beside its input gradient.
      out.backward_s += s.sequence_parallel ? gather + beside(gather, col.wgrad_s)
                                            : beside(all_reduce, col.wgrad_s);
      if (regather) out.backward_s += beside(gather, col.dgrad_s);
    }
    if (s.tp > 1) out.backward_calls += s.sequence_parallel ? (regather ? 3.0 : 2.0) : 1.0;
  }
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
    out.backward_calls += s.sequence_parallel ? 4.0 : 3.0;
  }
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
// the routed tokens' hidden states (the busiest rank's share, RoutedShare),
// among ep ranks etp apart (Megatron-Core's expert rank order etp-ep-edp:
// with etp x ep <= the scale-up domain the group stays inside it).
PassCommSplit ExpertCommSplit(const LlmCluster& c, const LlmSplit& s, const LayerShape& shape,
                              double act_bytes) {
  PassCommSplit out;
  if (shape.experts <= 1 || s.ep <= 1) return out;
  const GroupPlacementSplit g = PlaceGroupSplit(s.ep, s.ExpertTp(), c.domain);
  const double routed = act_bytes * shape.top_k * shape.RoutedShare();
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
// for) and the host's (dispatch_s per kernel and per collective it issues;
// with CUDA graphs of each layer, one graph launch a pass);
// recomputation reruns the whole forward pass (full) or the attention core
// (selective, when it holds recomputable score tensors).
struct LayerPassesSplit {
  double comm_forward_s = 0, comm_backward_s = 0;  // the collectives each pass waits for
  double forward_s = 0, backward_s = 0, recompute_s = 0;
};

LayerPassesSplit TimeLayerPassesSplit(const LayerTimes& lt, double dispatch_s, bool cuda_graphs,
                                      Recompute recompute, unsigned modules,
                                      const PassCommSplit& tp, const PassCommSplit& cp,
                                      const PassCommSplit& ep) {
  const double d = dispatch_s;
  // What the host issues for a pass: each kernel and collective, or one graph.
  const auto issued = [cuda_graphs](double n) { return cuda_graphs ? 1.0 : n; };
  LayerPassesSplit out;
  out.comm_forward_s = tp.forward_s + cp.forward_s + ep.forward_s;
  out.comm_backward_s = tp.backward_s + cp.backward_s + ep.backward_s;
  out.forward_s = std::max(
      lt.forward_gpu_s + out.comm_forward_s,
      issued(lt.forward_kernels + tp.forward_calls + ep.forward_calls + cp.forward_calls) * d);
  out.backward_s = std::max(
      lt.backward_gpu_s + out.comm_backward_s,
      issued(lt.backward_kernels + tp.backward_calls + ep.backward_calls + cp.backward_calls) * d);
  if (recompute == Recompute::kFull) out.recompute_s = out.forward_s;
  if (recompute == Recompute::kSelective) {
    const LayerTimes::Part rerun = lt.Rerun(modules);
    // A whole MoE block rerun dispatches and combines again.
    const double a2a = (modules & kRecomputeMoe) != 0 ? ep.forward_s : 0.0;
    out.recompute_s =
        std::max(rerun.gpu_s + a2a, issued(rerun.kernels + (a2a > 0 ? ep.forward_calls : 0)) * d);
  }
  return out;
}

// The parameters one GPU of a stage reduces the gradients of and updates:
// its stage's (StageParameters), or with LoRA its adapters alone.
struct TrainedParametersSplit {
  double dense = 0, experts = 0;
};

TrainedParametersSplit TrainedStageParametersSplit(const StageParameters& stage,
                                                   const LlmTraining& tr, const LayerShape& shape,
                                                   double layers) {
  if (tr.lora_rank > 0) return {layers * LoraParametersPerLayer(shape, tr.lora_rank), 0};
  return {stage.dense, stage.experts};
}

// Data-parallel communication of one step over the data (and context)
// parallel ranks, the experts' over dp x cp / ep (Rajbhandari et al. 2020,
// sec. 7): without sharding an all-reduce of the gradients; sharded
// (ZeRO-1, Megatron's distributed optimizer) a reduce-scatter of the
// gradients, each rank then updating its shard, and an all-gather of the
// updated weights (16-bit, the FP8 weights alone with fp8_weights, LoRA's
// 16-bit adapters). Each collective half an all-reduce of its bytes
// (GatherSplit).
//
// DDP and ZeRO-1 accumulate every micro-batch's gradients whole and reduce
// them once, after the last (Megatron's main_grad buffers, DeepSpeed's
// stage 1 at the accumulation boundary). ZeRO-2 and ZeRO-3 hold only their
// shard of the gradients (LlmMemory's gradients), so they reduce-scatter
// after every micro-batch's backward pass: DeepSpeed's stage 2
// (stage_1_and_2.py, partition_gradients: the backward hooks reduce each
// bucket as it fills) and stage 3 (stage3.py), PyTorch FSDP outside no_sync()
// (its post-backward hook) and FSDP2. ZeRO-3 also gathers the 16-bit
// weights forward and backward of every micro-batch.
struct DataCommSplit {
  double gradients_s = 0;  // the gradients' all-reduce or reduce-scatters, every micro-batch's
  double weights_s = 0;    // ZeRO-1/2: the updated weights' all-gather
  double gathers_s = 0;    // ZeRO-3: every micro-batch's weight gathers
  double exposed_s = 0;    // what of them the step waits for
};

DataCommSplit DataParallelCommSplit(const LlmCluster& c, const LlmTraining& tr, const LlmSplit& s,
                                    const StageParameters& stage,
                                    const TrainedParametersSplit& trained, double mb,
                                    double stage_forward_s, double stage_backward_s) {
  // ZeRO's reduce-scatters and gathers run over the shard group (ranks tp
  // apart); with a smaller shard group the groups' gradient shards are then
  // all-reduced across the replicas (ranks tp x shard_group apart).
  const GroupPlacementSplit dp_group = PlaceGroupSplit(s.ShardRanks(), s.tp, c.domain);
  const int replicas = s.dp * s.cp / s.ShardRanks();
  const GroupPlacementSplit replica_group =
      PlaceGroupSplit(replicas, int64_t{s.tp} * s.ShardRanks(), c.domain);
  const GroupPlacementSplit expert_dp =
      PlaceGroupSplit(s.ExpertDp(), int64_t{s.ExpertTp()} * s.ep, c.domain);
  const auto reduce = [&](double bytes, const GroupPlacementSplit& g) {
    return s.zero >= 1 ? GatherSplit(bytes, g, c) : AllReduceSplit(bytes, g, c);
  };
  const double grad_bytes = tr.gradient_bytes * trained.dense;
  const double expert_grad_bytes = tr.gradient_bytes * trained.experts;
  const double weight_bytes = tr.lora_rank > 0 ? 2.0 : GatheredWeightBytesSplit(tr);
  // The reductions a step runs: one, or one per micro-batch with the
  // gradients sharded.
  const double reductions = s.zero >= 2 ? mb : 1.0;
  DataCommSplit out;
  out.gradients_s =
      reductions * (reduce(grad_bytes, dp_group) + reduce(expert_grad_bytes, expert_dp) +
                    AllReduceSplit(grad_bytes / s.ShardRanks(), replica_group, c));
  const bool fsdp = tr.sharding == LlmSharding::kFsdp;
  if ((s.zero == 1 || s.zero == 2) && !fsdp) {
    out.weights_s = GatherSplit(weight_bytes * trained.dense, dp_group, c) +
                    GatherSplit(weight_bytes * trained.experts, expert_dp, c);
  }
  if (s.zero == 2 && fsdp) {
    // FSDP's SHARD_GRAD_OP (FSDP2's reshard_after_forward=False): each
    // micro-batch's forward gathers the weights, kept to its backward.
    const double held = GatheredWeightBytesSplit(tr);
    out.gathers_s = mb * GatherSplit(held * (stage.dense + stage.experts), dp_group, c);
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
  if (s.zero >= 2) {
    // Every micro-batch's reduce-scatter behind its backward pass and the
    // next micro-batch's forward; ZeRO-3's gathers behind every micro-batch's
    // passes.
    const double window =
        mb * stage_backward_s + (s.zero >= 3 || fsdp ? mb : mb - 1.0) * stage_forward_s;
    out.exposed_s = std::max(bucket, out.gradients_s + out.gathers_s - window);
    if (out.weights_s > 0) {
      const double first = GatherSplit(
          std::min(weight_bytes * trained.dense, kGradientBucketBytesSplit), dp_group, c);
      out.exposed_s += std::max(first, out.weights_s - stage_forward_s);
    }
    return out;
  }
  // The gradient buckets behind the last micro-batch's backward pass; the
  // sharded optimizer's weight all-gather, bucket by bucket, behind the next
  // step's first forward pass (Megatron's --overlap-param-gather, NeMo's
  // overlap_param_sync), its first bucket exposed.
  out.exposed_s = std::max(bucket, out.gradients_s - stage_backward_s);
  if (out.weights_s > 0) {
    const double first =
        GatherSplit(std::min(weight_bytes * trained.dense, kGradientBucketBytesSplit), dp_group, c);
    out.exposed_s += std::max(first, out.weights_s - stage_forward_s);
  }
  return out;
}

// The notes of a step: choices of the model its numbers depend on.
std::vector<std::string> StepNotesSplit(const TransformerConfig& m, const LlmTraining& tr,
                                        double vocab, const std::string& framework_note) {
  std::vector<std::string> notes;
  notes.push_back(framework_note);
  if (m.dropout)
    notes.push_back(
        "dropout on (as the model's configuration gives it): masks held, dropout kernels timed");
  if (vocab != static_cast<double>(m.vocab))
    notes.push_back("vocabulary padded to " + Str(static_cast<int64_t>(vocab)) +
                    " (a multiple of 128 x tp, as Megatron pads)");
  if (!tr.flash_attention)
    notes.push_back("attention without flash: full score matrices computed and held");
  if (tr.cuda_graphs)
    notes.push_back(
        "CUDA graphs: each layer's forward and backward pass one graph launch (the embedding, "
        "output and loss dispatched kernel by kernel)");
  if (tr.format != MatrixFormat::k16)
    notes.push_back(fmt::format(
        "{}: the linear layers' three products (forward, input and weight gradient) in {}{}; the "
        "attention core, norms, embedding, router and LoRA adapters in 16 bits; the output head "
        "timed in {} too (Megatron keeps it in BF16)",
        MatrixFormatName(tr.format), MatrixFormatName(tr.format),
        tr.format == MatrixFormat::kFp8Block || tr.format == MatrixFormat::kMxfp8 ||
                tr.format == MatrixFormat::kNvfp4
            ? ", each input quantized by rows and by columns"
            : "",
        MatrixFormatName(tr.format)));
  if (tr.format == MatrixFormat::kNvfp4)
    notes.push_back(
        "nvfp4: every layer's products in FP4; NVIDIA's NVFP4 recipe (arXiv 2509.25149) keeps "
        "about 16% of the linear layers in BF16 (the first 2 and last 8 blocks of its 62-block "
        "model), which is not modeled: the step is that much faster than the recipe's");
  return notes;
}

}  // namespace

namespace {

// One kind of layer's passes with their communication, per micro-batch.
struct KindPassesSplit {
  LayerPassesSplit layer;
  double tp_s = 0, cp_s = 0, ep_s = 0;  // a layer's collectives the passes wait for
};

// One stage's time per micro-batch and its parts.
struct StageTimeSplit {
  double total_s = 0;
  double recompute_s = 0, tp_s = 0, cp_s = 0, ep_s = 0;  // what of total_s they are
  double forward_s = 0,
         backward_s = 0;  // its layers' passes (what hides the data-parallel traffic)
};

}  // namespace

LlmStep ModelLlmStepWith(const TransformerConfig& m, const LlmCluster& c, const LlmTraining& tr,
                         const LlmSplit& s, const LlmCalibration& cal, const LlmStepContext& ctx,
                         const ModelLayerTimes& lt, const std::vector<PipelineStage>& stages,
                         bool every_stage) {
  LlmStep step;
  step.split = s;
  step.accumulation = s.Accumulation();
  const double mb = static_cast<double>(step.accumulation);
  const KernelTimer& timer = ctx.timer;
  const double vocab = PaddedVocab(m, s.tp);
  const bool full = s.recompute == Recompute::kFull;
  int any_kind = 0;
  while (any_kind + 1 < kTransformerKinds && !ctx.kinds_present[static_cast<size_t>(any_kind)])
    ++any_kind;
  const LayerShape& any_shape = lt.shapes[static_cast<size_t>(any_kind)];
  // One micro-batch's hidden states, 16-bit.
  const double act_bytes = 2.0 * any_shape.tokens * m.hidden;
  // A layer's collectives of one parallelism, its forward pass's twice under
  // full recomputation.
  const auto per_layer = [full](const PassCommSplit& x) {
    return x.forward_s + x.backward_s + (full ? x.forward_s : 0.0);
  };
  std::array<KindPassesSplit, kTransformerKinds> kinds;
  for (int k = 0; k < kTransformerKinds; ++k) {
    if (!ctx.kinds_present[static_cast<size_t>(k)]) continue;
    const LayerShape& shape = lt.shapes[static_cast<size_t>(k)];
    const LayerTimes& times = lt.times[static_cast<size_t>(k)];
    const PassCommSplit tp = TensorCommSplit(c, tr, s, shape, times, act_bytes);
    const PassCommSplit cp = ContextCommSplit(c, s, shape, times);
    PassCommSplit ep = ExpertCommSplit(c, s, shape, act_bytes);
    if (s.overlap_moe_comm && ep.forward_s + ep.backward_s > 0) {
      // Hidden behind the other micro-batch's kernels of this layer: what is
      // left waits, in proportion in each pass.
      const double comm = ep.forward_s + ep.backward_s;
      const double left = std::max(0.0, comm - (times.forward_gpu_s + times.backward_gpu_s)) / comm;
      ep.forward_s *= left;
      ep.backward_s *= left;
    }
    KindPassesSplit& kp = kinds[static_cast<size_t>(k)];
    // The host's time per launch: the calibration's (MakeStepContext puts it
    // in the timer), none for a step compiled whole.
    kp.layer = TimeLayerPassesSplit(times, timer.dispatch_s, tr.cuda_graphs, s.recompute,
                                    s.recompute_modules, tp, cp, ep);
    kp.tp_s = per_layer(tp);
    kp.cp_s = per_layer(cp);
    kp.ep_s = per_layer(ep);
  }
  const PassCommSplit pipe = PipelineCommSplit(c, s, act_bytes);

  // Each stage's micro-batch: its layers of each kind, the embedding, the
  // output and loss, the multi-token prediction modules.
  const int mtp_kind = KindIndex(LayerKindAt(m, m.layers));
  std::vector<StageTimeSplit> times(stages.size());
  size_t slowest = 0;
  double sum = 0;
  for (size_t r = 0; r < stages.size(); ++r) {
    const PipelineStage& st = stages[r];
    StageTimeSplit& t = times[r];
    for (int k = 0; k < kTransformerKinds; ++k) {
      const double n = st.layers[static_cast<size_t>(k)] + (k == mtp_kind ? st.mtp : 0.0);
      if (n == 0) continue;
      const KindPassesSplit& kp = kinds[static_cast<size_t>(k)];
      t.total_s += n * (kp.layer.forward_s + kp.layer.backward_s + kp.layer.recompute_s);
      t.recompute_s += n * (kp.layer.recompute_s - (full ? kp.layer.comm_forward_s : 0.0));
      t.tp_s += n * kp.tp_s;
      t.cp_s += n * kp.cp_s;
      t.ep_s += n * kp.ep_s;
      t.forward_s += n * kp.layer.forward_s;
      t.backward_s += n * kp.layer.backward_s;
    }
    if (st.embedding) t.total_s += lt.head.embedding_s;
    if (st.loss) t.total_s += lt.head.output_s;
    t.total_s += st.mtp * lt.head.mtp_s;
    sum += st.count * t.total_s;
    if (t.total_s > times[slowest].total_s) slowest = r;
  }
  const StageTimeSplit& worst = times[slowest];
  const double mean_s = sum / s.pp;

  // The schedule (1F1B, interleaved over v chunks): m x the slowest stage plus
  // a bubble of (p - 1) / v x the mean stage, and the pipeline's sends.
  const double p2p_total =
      s.pp > 1 ? (pipe.forward_s + pipe.backward_s) * (s.vp * mb + (s.pp - 1)) : 0.0;
  const double bubble = (s.pp - 1.0) / s.vp * mean_s;

  // The data-parallel traffic and the update after the last micro-batch, on
  // the stage that waits longest for them: Adam over the FP32 master weights
  // each GPU owns (the routed experts' sharded over their own data-parallel ranks).
  double data_exposed = 0, optimizer = 0, after = -1;
  for (size_t r = 0; r < stages.size(); ++r) {
    const StageParameters stage = StageParametersOf(m, ctx, s, vocab, stages[r]);
    const TrainedParametersSplit trained =
        TrainedStageParametersSplit(stage, tr, any_shape, stages[r].LayerCount());
    const DataCommSplit data = DataParallelCommSplit(c, tr, s, stage, trained, mb,
                                                     times[r].forward_s, times[r].backward_s);
    const double owned = s.zero >= 1
                             ? trained.dense / s.ShardRanks() + trained.experts / s.ExpertDp()
                             : trained.dense + trained.experts;
    const double update =
        timer.MemoryTime(owned * (kAdamBytesPerParameterSplit + tr.gradient_bytes));
    if (data.exposed_s + update > after) {
      after = data.exposed_s + update;
      data_exposed = data.exposed_s;
      optimizer = update;
    }
  }

  LlmStepParts& parts = step.parts;
  // The parts: communication as the device waits for it, recomputation as
  // its pass takes, compute the rest of the slowest stage's passes.
  parts.compute_s = mb * (worst.total_s - worst.recompute_s - worst.tp_s - worst.cp_s - worst.ep_s);
  parts.recompute_s = mb * worst.recompute_s;
  parts.tensor_comm_s = mb * worst.tp_s;
  parts.context_comm_s = mb * worst.cp_s;
  parts.expert_comm_s = mb * worst.ep_s;
  parts.pipeline_comm_s = p2p_total;
  parts.bubble_s = bubble;
  parts.data_comm_s = data_exposed;
  parts.optimizer_s = optimizer;
  parts.overhead_s = cal.step_overhead_s;
  step.step_s = parts.compute_s + parts.recompute_s + parts.tensor_comm_s + parts.context_comm_s +
                parts.expert_comm_s + parts.pipeline_comm_s + parts.bubble_s + parts.data_comm_s +
                parts.optimizer_s + parts.overhead_s;
  step.sequences_per_s = static_cast<double>(s.global_batch) / step.step_s;
  step.tokens_per_s = step.sequences_per_s * static_cast<double>(tr.seq_len);
  step.mfu = step.tokens_per_s * ctx.flops_per_token / (c.devices * timer.peak);
  step.memory = MemoryPerGpuWith(
      m, ctx, c, tr, s, lt,
      every_stage && s.pp > 1 ? PipelineStagesOf(m, s, ctx.mtp_layers, false) : stages);
  step.notes = StepNotesSplit(m, tr, vocab, ctx.framework_note);
  if (!s.layout.empty())
    step.notes.push_back("pipeline layout " + CompactPipelineLayout(s.layout) +
                         " (Megatron's --pipeline-model-parallel-layout grammar)");
  if (s.pp > 1 && !s.layout.empty())
    step.notes.push_back(
        fmt::format("slowest pipeline stage: {} of {}", stages[slowest].index, s.pp));
  if (ctx.mtp_layers > 0)
    step.notes.push_back(fmt::format(
        "{} multi-token prediction module(s) trained, on the last stage unless the layout puts "
        "them elsewhere (their FLOPs are not counted in the MFU)",
        ctx.mtp_layers));
  if (s.shard_group > 0)
    step.notes.push_back(fmt::format(
        "hybrid sharding: ZeRO's state sharded over groups of {} data-parallel ranks, "
        "replicated {} times; each group's gradient shards all-reduced across the replicas",
        s.shard_group, s.dp * s.cp / s.shard_group));
  if (s.tp_comm_overlap) {
    const int sms = c.device.streaming_multiprocessors;
    step.notes.push_back(
        sms > 0 ? fmt::format("tensor-parallel collectives overlapped as Transformer Engine's "
                              "userbuffers do by default: ring exchanges on the copy engines, the "
                              "forward reduce-scatters pipelined on {} of the {} SMs the products "
                              "beside them give up",
                              kUserbufferSmsSplit, sms)
                : "tensor-parallel collectives overlapped as Transformer Engine's userbuffers do; "
                  "the device file gives no SM count, so the products beside them keep every SM "
                  "(faster than the overlap runs)");
  }
  return step;
}

LlmTraining MakeLlmTraining(int64_t seq_len, const std::string& precision, int64_t lora_rank,
                            bool flash_attention, double gradient_bytes,
                            const std::string& framework) {
  if (seq_len < 1) {
    throw UsageError(fmt::format(
        "sequence length (--seq-len, seq_len) {}: give the tokens per sequence (>= 1)", seq_len));
  }
  if (gradient_bytes != 0 && gradient_bytes != 2 && gradient_bytes != 4) {
    throw UsageError(fmt::format(
        "gradient bytes (--gradient-bytes) {}: expected 2 or 4 bytes per gradient element (0: "
        "the framework's for the precision)",
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
  t.framework = framework;
  ApplyLlmFramework(t, precision);
  return t;
}

}  // namespace fitspeed
