// The split model's memory and schedule against hand calculations.
#include "fitspeed/llm/split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/progress.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/llm/transformer.h"
#include "llm/layer_kernels.h"

namespace fitspeed {
namespace {

// A GPT layer in Korthikanti et al.'s terms: kv heads = heads, plain 4h
// feed-forward, LayerNorm (so dropout, as their Table 2 assumes).
TransformerConfig GptShape(int64_t layers, int64_t hidden, int64_t heads) {
  return LoadTransformer(
      "transformer:layers=" + std::to_string(layers) + ",hidden=" + std::to_string(hidden) +
      ",heads=" + std::to_string(heads) + ",ffn=" + std::to_string(4 * hidden) +
      ",vocab=50257,positions=learned,max_positions=2048,norm=layer,gated=0,bias=1");
}

// Llama-2-70B with LoRA adapters of rank 16 (MLPerf's llama2_70b_lora) on
// `devices` of `device` at `seq_len` tokens, 16-bit, one micro-batch of one
// sequence per step and no parallelism until a test sets its split.
struct LoraSetup {
  TransformerConfig model;
  LlmCluster cluster;
  LlmTraining training;
  LlmSplit split;
};
LoraSetup Llama70bLora(const std::string& device, int devices, int64_t seq_len) {
  LoraSetup l{LoadTransformer("llama-2-70b"), MakeCluster(LoadDevice(device), devices), {}, {}};
  l.training.seq_len = seq_len;
  l.training.lora_rank = 16;
  l.split.micro_batch = 1;
  l.split.global_batch = 1;
  return l;
}

TEST(SplitMemory, LayerActivationsMatchKorthikantiTable2) {
  // GPT-3 175B's layer: h = 12288, a = 96, s = 2048, b = 1.
  const TransformerConfig m = GptShape(96, 12288, 96);
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  // No parallelism, no recomputation: s*b*h*(34 + 5*a*s/h).
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 1, false, Recompute::kNone, false),
              s * b * h * (34 + 5 * a * s / h), 1.0);
  // Tensor parallel t = 8: s*b*h*(10 + 24/t + 5*a*s/(h*t)).
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 8, false, Recompute::kNone, false),
              s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
  // With sequence parallelism: s*b*h/t*(34 + 5*a*s/h).
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 8, true, Recompute::kNone, false),
              s * b * h / t * (34 + 5 * a * s / h), 1.0);
  // Selective recomputation with sequence parallelism: 34*s*b*h/t.
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 8, true, Recompute::kSelective, false),
              34 * s * b * h / t, 1.0);
  // Full recomputation: the layer's input, 2*s*b*h (divided by t with sequence parallelism).
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 8, false, Recompute::kFull, false), 2 * s * b * h,
              1.0);
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 8, true, Recompute::kFull, false), 2 * s * b * h / t,
              1.0);
}

TEST(SplitMemory, DropoutOffDropsItsMasksAndOutput) {
  // The same GPT-3 layer without dropout (MLPerf's GPT-3 runs set both
  // dropouts to 0): Korthikanti's 34 s b h loses the two 1-byte hidden masks
  // (32), and the 5 a s^2 b of the scores keep only the 16-bit softmax output
  // (2): no attention mask (1), no dropout output (2).
  TransformerConfig m = GptShape(96, 12288, 96);
  ASSERT_TRUE(m.dropout);  // the short form's default for norm=layer, gated=0
  m.dropout = false;
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 1, false, Recompute::kNone, false),
              s * b * h * (32 + 2 * a * s / h), 1.0);
  // Sequence parallel, selective: 32 s b h / t.
  EXPECT_NEAR(LayerActivationBytes(m, 2048, 1, 8, true, Recompute::kSelective, false),
              32 * s * b * h / t, 1.0);
}

TEST(SplitStep, DropoutOffRemovesItsKernelsAndNote) {
  // Dropout's kernels are memory-bound passes: turning it off makes the step
  // faster and removes the note that says it was assumed.
  TransformerConfig m = GptShape(4, 1024, 16);
  const LlmCluster c = MakeCluster(LoadDevice("a100"), 1);
  LlmTraining tr;
  tr.seq_len = 1024;
  LlmSplit s;
  s.micro_batch = 4;
  s.global_batch = 4;
  const LlmStep on = ModelLlmStep(m, c, tr, s, LlmCalibration{});
  m.dropout = false;
  const LlmStep off = ModelLlmStep(m, c, tr, s, LlmCalibration{});
  EXPECT_LT(off.step_s, on.step_s);
  EXPECT_LT(off.memory.activations, on.memory.activations);
  auto has_dropout_note = [](const LlmStep& step) {
    for (const std::string& n : step.notes)
      if (n.find("dropout on") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has_dropout_note(on));
  EXPECT_FALSE(has_dropout_note(off));
}

TEST(SplitMemory, WeightsGradientsAndOptimizerFollowZeroStages) {
  // One stage, tp = 1, dp = 8: the GPU holds every parameter P of the
  // padded model. 16-bit weights 2P, FP32 gradients 4P (Megatron's
  // main_grad, LlmTraining's default), Adam's FP32
  // master, m and v 12P (Rajbhandari et al. 2020); ZeRO-1 divides the 12P by
  // dp, ZeRO-2 the gradients too, ZeRO-3 the weights too (plus one layer gathered).
  const TransformerConfig m = GptShape(4, 1024, 16);
  const LlmCluster c = MakeCluster(LoadDevice("a100"), 8);
  LlmTraining tr;
  tr.seq_len = 1024;
  LlmSplit s;
  s.dp = 8;
  s.micro_batch = 1;
  s.global_batch = 8;
  const TransformerParameters p = CountParameters(m);
  // P = 4 layers + the padded vocabulary's embedding (50,257 -> 50,304, a
  // multiple of 128) + the learned position table (2,048 x 1,024) + the final
  // LayerNorm (2 x 1,024).
  const double params = 4.0 * p.per_layer + 50304.0 * 1024 + 2048.0 * 1024 + 2.0 * 1024;
  LlmMemory z0 = LlmMemoryPerGpu(m, c, tr, s);
  EXPECT_NEAR(z0.weights, 2 * params, 1e-6);
  EXPECT_NEAR(z0.gradients, 4 * params, 1e-6);
  EXPECT_NEAR(z0.optimizer, 12 * params, 1e-6);
  s.zero = 1;
  EXPECT_NEAR(LlmMemoryPerGpu(m, c, tr, s).optimizer, z0.optimizer / 8, 1.0);
  s.zero = 2;
  EXPECT_NEAR(LlmMemoryPerGpu(m, c, tr, s).gradients, z0.gradients / 8, 1.0);
  s.zero = 3;
  EXPECT_LT(LlmMemoryPerGpu(m, c, tr, s).weights, z0.weights / 8 + 2.0 * p.per_layer + 1.0);
  // The total is the sum of its parts, plus the stated fragmentation share.
  const LlmMemory& mm = z0;
  const double sub =
      mm.weights + mm.gradients + mm.optimizer + mm.activations + mm.logits + mm.workspace;
  EXPECT_NEAR(mm.total, sub * (1 + tr.fragmentation), 1e-6 * mm.total);
}

TEST(SplitStep, PartsSumToTheStepAndPipelineBubbleIsPMinusOneOverV) {
  const TransformerConfig m = GptShape(24, 2048, 16);
  const LlmCluster c = MakeCluster(LoadDevice("a100"), 8);
  LlmTraining tr;
  tr.seq_len = 1024;
  LlmSplit s;
  s.tp = 2;
  s.pp = 4;
  s.dp = 1;
  s.micro_batch = 2;
  s.global_batch = 16;
  LlmCalibration cal;
  cal.step_overhead_s = 0.003;
  const LlmStep one = ModelLlmStep(m, c, tr, s, cal);
  const LlmStepParts& p = one.parts;
  EXPECT_NEAR(one.step_s,
              p.compute_s + p.recompute_s + p.tensor_comm_s + p.context_comm_s + p.expert_comm_s +
                  p.pipeline_comm_s + p.bubble_s + p.data_comm_s + p.optimizer_s + p.overhead_s,
              1e-12 * one.step_s);
  EXPECT_EQ(one.accumulation, 8);  // 16 / (2 x 1)
  // Interleaving with v = 2 halves the bubble: (p-1)/v of a stage's
  // micro-batch time, v = 1 -> 3, v = 2 -> 1.5 (the stages' work is the same).
  LlmSplit two = s;
  two.vp = 2;
  const LlmStep inter = ModelLlmStep(m, c, tr, two, cal);
  EXPECT_NEAR(inter.parts.bubble_s, one.parts.bubble_s / 2, 1e-9);
  EXPECT_NEAR(one.tokens_per_s, 16 * 1024 / one.step_s, 1e-9 * one.tokens_per_s);
}

TEST(SplitStep, RefusesSplitsThatDoNotDivide) {
  const TransformerConfig m = GptShape(24, 2048, 16);
  const LlmCluster c = MakeCluster(LoadDevice("a100"), 8);
  LlmTraining tr;
  tr.seq_len = 1024;
  LlmSplit s;
  s.tp = 2;
  s.pp = 2;
  s.dp = 1;  // 4 devices of 8
  s.global_batch = 8;
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
  s.dp = 2;
  s.global_batch = 7;  // not a multiple of micro-batch x dp
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
  s.global_batch = 8;
  s.tp = 3;  // does not divide 16 heads (nor 8 devices)
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
  s.tp = 2;
  s.ep = 2;  // a dense model
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
  s.ep = 1;
  tr.format = MatrixFormat::kFp8;  // the A100 has no FP8 units
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
}

TEST(Planner, RanksFittingSplitsFastestFirstAndReportsShortfalls) {
  const TransformerConfig m = LoadTransformer("llama-3-8b");
  const LlmCluster c = MakeCluster(LoadDevice("a100"), 16);
  LlmPlanOptions o;
  o.global_batch = 64;
  o.training.seq_len = 4096;
  o.top = 5;
  const LlmPlan plan = PlanLlm(m, c, o);
  ASSERT_FALSE(plan.ranked.empty());
  EXPECT_GT(plan.evaluated, plan.fitting);
  for (size_t i = 0; i + 1 < plan.ranked.size(); ++i)
    EXPECT_LE(plan.ranked[i].step_s, plan.ranked[i + 1].step_s);
  for (const LlmStep& s : plan.ranked) EXPECT_TRUE(s.memory.fits);
  ASSERT_FALSE(plan.not_fitting.empty());
  for (const LlmStep& s : plan.not_fitting) EXPECT_GT(s.memory.shortfall, 0);
  // A fixed size is the only one tried.
  LlmPlanOptions fixed = o;
  fixed.tp = 4;
  for (const LlmStep& s : PlanLlm(m, c, fixed).ranked) EXPECT_EQ(s.split.tp, 4);
}

TEST(Planner, ReportsProgressPerGroupFromZeroToTheTotal) {
  const TransformerConfig m = LoadTransformer("llama-3-8b");
  const LlmCluster c = MakeCluster(LoadDevice("a100"), 16);
  LlmPlanOptions o;
  o.global_batch = 64;
  o.training.seq_len = 4096;
  std::vector<Progress> seen;
  LlmPlanOptions told = o;
  told.progress = [&](const Progress& p) { seen.push_back(p); };
  const LlmPlan plan = PlanLlm(m, c, told);
  // The (tp, cp, pp) groups, by hand: 16 devices, every size a power of two
  // with tp x cp x pp dividing 16 (2^a 2^b 2^c with a + b + c <= 4: 35), tp
  // within the A100's 8-GPU NVLink domain (a <= 3: 34); 32 heads (8 KV), 32
  // layers, 4,096 tokens and a global batch of 64 rule none of them out.
  ASSERT_EQ(seen.size(), 35u);  // each group as it starts, and the end
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].stage, "planner");
    EXPECT_EQ(seen[i].done, static_cast<int64_t>(i));
    EXPECT_EQ(seen[i].total, 34);
  }
  EXPECT_EQ(seen.back().what, std::to_string(plan.evaluated) + " splits modeled");
  // Being told changes nothing of the search.
  const LlmPlan quiet = PlanLlm(m, c, o);
  EXPECT_EQ(quiet.evaluated, plan.evaluated);
  EXPECT_EQ(quiet.fitting, plan.fitting);
  ASSERT_EQ(quiet.ranked.size(), plan.ranked.size());
  for (size_t i = 0; i < plan.ranked.size(); ++i)
    EXPECT_EQ(quiet.ranked[i].step_s, plan.ranked[i].step_s);
}

TEST(SplitMoe, ExpertParallelismShardsTheExpertsAndAddsAllToAlls) {
  // Mixtral-8x7B on 16 H100s, dp 16: with ep 8 each GPU holds 1 of the 8
  // experts of each layer. The routed experts (8 of 3 x 4096 x 14336 per
  // layer) are divided by ep; the 4096 x 8 router stays whole on every rank
  // (Megatron-Core's TopKRouter weight is not expert-parallel), so the 16-bit
  // weights shrink by 2 x 32 layers x the experts x (1 - 1/8).
  const TransformerConfig m = LoadTransformer("mixtral-8x7b");
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 16);
  LlmTraining tr;
  tr.seq_len = 4096;
  LlmSplit s;
  s.dp = 16;
  s.micro_batch = 1;
  s.global_batch = 16;
  s.zero = 1;
  const double block = 8.0 * 3 * 4096 * 14336;
  const LlmStep dense_ep = ModelLlmStep(m, c, tr, s);
  LlmSplit e = s;
  e.ep = 8;
  const LlmStep sharded = ModelLlmStep(m, c, tr, e);
  EXPECT_NEAR(dense_ep.memory.weights - sharded.memory.weights, 2.0 * 32 * block * (1 - 1.0 / 8),
              1.0);
  EXPECT_EQ(dense_ep.parts.expert_comm_s, 0.0);  // ep 1: no all-to-all
  EXPECT_GT(sharded.parts.expert_comm_s, 0.0);
  e.ep = 3;  // does not divide the 8 experts
  EXPECT_THROW(ModelLlmStep(m, c, tr, e), UsageError);
}

TEST(SplitDataParallel, ShardedOptimizerReduceScattersGradientsAndGathersWeights) {
  // A 4-layer GPT (hidden 1024) on 8 H100s of one NVLink domain, dp 8,
  // nothing overlapped. Rajbhandari et al. 2020 (sec. 7): DDP all-reduces
  // the gradients, 2(n-1)/n x bytes / B + 2(n-1) a on a ring (Patarasuk &
  // Yuan); ZeRO-1 reduce-scatters them and all-gathers the updated 16-bit
  // weights, each half a ring all-reduce of its bytes: with 2-byte
  // gradients the same time as DDP, with 4-byte gradients 4P / 2 + 2P / 2.
  const TransformerConfig m = GptShape(4, 1024, 16);
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 8);
  LlmTraining tr;
  tr.seq_len = 1024;
  tr.format = MatrixFormat::kFp8;
  LlmSplit s;
  s.dp = 8;
  s.micro_batch = 1;
  s.global_batch = 8;
  s.overlap_grad_reduce = false;
  // P: the stage's parameters: 4 layers x 12,596,224 + the 50,304-row
  // padded vocabulary (128 x tp) x 1024 + 2,048 learned positions x 1024 +
  // the final LayerNorm's 2,048.
  const double P = 4.0 * 12596224 + 50304.0 * 1024 + 2048.0 * 1024 + 2048;
  const double n = 8, B = c.intra.bandwidth_bytes_per_s, a = c.intra.latency_s;
  auto ring = [&](double bytes) { return 2 * (n - 1) / n * bytes / B + 2 * (n - 1) * a; };
  tr.gradient_bytes = 2;
  EXPECT_NEAR(ModelLlmStep(m, c, tr, s).parts.data_comm_s, ring(2 * P), 1e-12);
  s.zero = 1;
  EXPECT_NEAR(ModelLlmStep(m, c, tr, s).parts.data_comm_s, ring(2 * P), 1e-12);
  tr.gradient_bytes = 4;
  EXPECT_NEAR(ModelLlmStep(m, c, tr, s).parts.data_comm_s, ring(4 * P) / 2 + ring(2 * P) / 2,
              1e-12);
  // The weights held in FP8 alone are gathered at 1 byte each.
  tr.fp8_weights = true;
  EXPECT_NEAR(ModelLlmStep(m, c, tr, s).parts.data_comm_s, ring(4 * P) / 2 + ring(1 * P) / 2,
              1e-12);
  // Overlapped: the gradients behind the last backward pass, the weights'
  // gather behind the next step's first forward pass; never more exposed.
  const double exposed = ModelLlmStep(m, c, tr, s).parts.data_comm_s;
  s.overlap_grad_reduce = true;
  EXPECT_LT(ModelLlmStep(m, c, tr, s).parts.data_comm_s, exposed);
}

TEST(SplitLora, AdapterDropoutHoldsTheDroppedInputsAndTimesTheirPasses) {
  // Llama-2-70B, LoRA rank 16, tp 4 with sequence parallelism, one stage of
  // 80 layers, one micro-batch of 4,096 tokens, no recomputation. Dropout on
  // each adapter's input keeps the dropped input (2 bytes) and its mask (1
  // byte): the QKV adapter's 4096 x 8192 (the gathered norm output) and the
  // output projection adapter's 4096 x 2048 (64 heads / 4 of 128), so
  // 80 x 3 x 4096 x (8192 + 2048) = 10,066,329,600 bytes more activations.
  LoraSetup l = Llama70bLora("h100", 4, 4096);
  const TransformerConfig& m = l.model;
  const LlmCluster& c = l.cluster;
  LlmTraining& tr = l.training;
  LlmSplit& s = l.split;
  s.tp = 4;
  s.sequence_parallel = true;
  const LlmStep plain = ModelLlmStep(m, c, tr, s);
  tr.lora_dropout = true;
  const LlmStep dropped = ModelLlmStep(m, c, tr, s);
  EXPECT_NEAR(dropped.memory.activations - plain.memory.activations, 10066329600.0, 1.0);
  // Two more memory-bound passes per adapter: slower, never faster.
  EXPECT_GT(dropped.step_s, plain.step_s);
  // Full recomputation rebuilds them from the layer's input: nothing held.
  s.recompute = Recompute::kFull;
  EXPECT_NEAR(
      ModelLlmStep(m, c, tr, s).memory.activations,
      [&] {
        LlmTraining t = tr;
        t.lora_dropout = false;
        return ModelLlmStep(m, c, t, s).memory.activations;
      }(),
      1.0);
  // Without adapters it is refused.
  tr.lora_rank = 0;
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
}

TEST(SplitLora, AdaptersRunInSixteenBitsWhateverTheFormat) {
  // NeMo builds its adapters from Megatron's tensor-parallel linears, not
  // Transformer Engine's, so an FP8 run's adapters stay 16-bit: the time a
  // layer gains from rank 16 to rank 64 (the adapters' products and nothing
  // else; the frozen base is the same) is the same in FP8 and BF16, forward
  // and backward. Llama-2-70B, tp 4 with sequence parallelism, 8,192 tokens.
  const TransformerConfig m = LoadTransformer("llama-2-70b");
  const Device h100 = LoadDevice("h100");
  const LlmCalibration unit;
  LayerShape shape = MakeLayerShape(m, 8192, 1, 4, 1, 1);
  auto gain = [&](MatrixFormat format, bool backward) {
    const KernelTimer t = MakeKernelTimer(h100, format, unit);
    LlmTraining tr;
    tr.seq_len = 8192;
    tr.format = format;
    tr.lora_rank = 16;
    const LayerTimes r16 = TimeLayer(shape, t, tr, true);
    tr.lora_rank = 64;
    const LayerTimes r64 = TimeLayer(shape, t, tr, true);
    return backward ? r64.backward_gpu_s - r16.backward_gpu_s
                    : r64.forward_gpu_s - r16.forward_gpu_s;
  };
  for (bool backward : {false, true}) {
    const double fp8 = gain(MatrixFormat::kFp8, backward);
    EXPECT_GE(fp8, 0.0);
    EXPECT_NEAR(fp8, gain(MatrixFormat::k16, backward), 1e-15);
  }
}

TEST(SplitLora, TensorParallelAdaptersMoveTheirOwnActivations) {
  // Llama-2-70B, LoRA rank 16, tp 4 on one h100 node (NVLink: 450 GB/s a
  // direction, 5 us), one micro-batch of 4,096 tokens, 80 layers, no
  // recomputation. NeMo's adapters under tensor parallelism add, per layer:
  // forward, a gather and an all-reduce of the rank-16 activations (2 x 4096
  // x 16 = 131,072 bytes), backward two all-reduces of them; with sequence
  // parallelism also, each pass, a gather (forward; reduce-scatter backward)
  // of the 2 x 4096 x 8192 = 67,108,864-byte hidden states and an
  // all-to-all of their quarter (16,777,216 bytes). Ring over n = 4
  // (Patarasuk & Yuan): all-reduce 2(n-1)/n S/B + 2(n-1) a; gather half of
  // it; all-to-all (n-1)/n S/B + (n-1) a:
  //   all-reduce(131,072) = 1.5 x 131072 / 4.5e11 + 30e-6 = 3.043691e-5 s
  //   gather(131,072) = 0.75 x 131072 / 4.5e11 + 15e-6 = 1.521845e-5 s
  //   gather(67,108,864) = 0.75 x 67108864 / 4.5e11 + 15e-6 = 1.268481e-4 s
  //   all-to-all(16,777,216) = 0.75 x 16777216 / 4.5e11 + 15e-6 = 4.296203e-5 s
  // forward 2.154655e-4 s, backward 2.306840e-4 s a layer; x 80 layers =
  // 3.569196e-2 s. The frozen base's own collectives wait in full (no
  // weight-gradient product to hide its backward reduce-scatters behind,
  // no input gathered again): 4 gathers forward, 2 gathers and 2
  // reduce-scatters backward, 8 x 1.268481e-4 = 1.014785e-3 s a layer,
  // 8.118278e-2 s for 80; 0.1168747 s in all.
  LoraSetup l = Llama70bLora("h100", 4, 4096);
  const TransformerConfig& m = l.model;
  const LlmCluster& c = l.cluster;
  LlmTraining& tr = l.training;
  LlmSplit& s = l.split;
  ASSERT_EQ(c.intra.bandwidth_bytes_per_s, 4.5e11);
  ASSERT_EQ(c.intra.latency_s, 5e-6);
  s.tp = 4;
  s.sequence_parallel = true;
  EXPECT_NEAR(ModelLlmStep(m, c, tr, s).parts.tensor_comm_s, 3.569196e-2 + 8.118278e-2, 2e-7);
  // Without sequence parallelism the output adapter gathers its result
  // forward and the QKV adapter all-reduces its input gradient backward:
  // forward 1.521845e-5 + 3.043691e-5 + 1.268481e-4 = 1.725035e-4, backward
  // 2 x 3.043691e-5 + (1.5 x 67108864 / 4.5e11 + 30e-6 = 2.536962e-4) =
  // 3.145700e-4: 4.870735e-4 s a layer, 3.896588e-2 s for 80. The base's two
  // all-reduces each way, 4 x 2.536962e-4 a layer, add 8.118278e-2 s.
  s.sequence_parallel = false;
  EXPECT_NEAR(ModelLlmStep(m, c, tr, s).parts.tensor_comm_s, 3.896588e-2 + 8.118278e-2, 2e-7);
  // One GPU a layer (four data-parallel replicas): nothing to exchange.
  s.tp = 1;
  s.dp = 4;
  s.global_batch = 4;
  tr.lora_rank = 16;
  EXPECT_EQ(ModelLlmStep(m, c, tr, s).parts.tensor_comm_s, 0.0);
}

TEST(SplitLora, AdaptersAloneCarryGradientsAndOptimizerState) {
  // Llama-2-70B, LoRA rank 16 on the fused QKV (8192 -> 8192 + 2 x 1024)
  // and the output projection (8192 -> 8192), tp 1: per layer
  // 16 x (8192 + 10240) + 16 x (8192 + 8192) = 557,056 adapter parameters,
  // 80 layers: 44,564,480. Gradients 4 bytes (FP32, Megatron's main_grad,
  // the default) and Adam 12 bytes each; the frozen base keeps only its
  // 16-bit weights.
  LoraSetup l = Llama70bLora("h200", 8, 4096);
  const TransformerConfig& m = l.model;
  const LlmCluster& c = l.cluster;
  LlmTraining& tr = l.training;
  LlmSplit& s = l.split;
  s.pp = 8;  // tp 1, pp 8: 10 layers per stage
  s.global_batch = 8;
  const double adapters = 10 * 557056.0;
  const LlmStep lora = ModelLlmStep(m, c, tr, s);
  EXPECT_NEAR(lora.memory.gradients, 4 * adapters, 1e-6);
  EXPECT_NEAR(lora.memory.optimizer, 12 * adapters, 1e-6);
  // Without LoRA the same split trains every weight: its compute is larger
  // (the weight-gradient products come back).
  LlmTraining full = tr;
  full.lora_rank = 0;
  EXPECT_GT(ModelLlmStep(m, c, full, s).parts.compute_s, lora.parts.compute_s);
}

TEST(SplitLora, FrozenFeedForwardKeepsNeitherItsInputNorItsActivationOutput) {
  // A GPT shape of 4 layers, h = 1024, f = 4h, at s = 1024, b = 1, one stage,
  // no parallelism or recomputation. LoRA on the attention leaves the
  // feed-forward block frozen: its two products need no weight gradient, so
  // its input (2 s b h bytes) and the activation's output (2 s b 4h) are not
  // kept: 4 x (2 x 1024 x 1024 + 2 x 1024 x 4096) = 41,943,040 bytes less.
  const TransformerConfig m = GptShape(4, 1024, 16);
  const LlmCluster c = MakeCluster(LoadDevice("a100"), 1);
  LlmTraining tr;
  tr.seq_len = 1024;
  LlmSplit s;
  s.micro_batch = 1;
  s.global_batch = 1;
  const double full = LlmMemoryPerGpu(m, c, tr, s).activations;
  tr.lora_rank = 16;
  const double lora = LlmMemoryPerGpu(m, c, tr, s).activations;
  EXPECT_NEAR(full - lora, 41943040.0, 1.0);
  // Full recomputation keeps each layer's input either way.
  s.recompute = Recompute::kFull;
  const double lora_full = LlmMemoryPerGpu(m, c, tr, s).activations;
  tr.lora_rank = 0;
  EXPECT_DOUBLE_EQ(lora_full, LlmMemoryPerGpu(m, c, tr, s).activations);
}

TEST(SplitMemory, Fp8WeightsHoldOneBytePerWeightInsteadOfThree) {
  // Llama-2-70B LoRA at tp 4 (the NeMo MLPerf split): with FP8 products the
  // GPU holds 16-bit weights and Transformer Engine's FP8 copies, 3 bytes per
  // base weight; NeMo's fp8_params keeps the FP8 weight alone, 1 byte. The
  // adapters stay 16-bit (2 bytes) in both.
  LoraSetup l = Llama70bLora("h100", 8, 8192);
  const TransformerConfig& m = l.model;
  const LlmCluster& c = l.cluster;
  LlmTraining& tr = l.training;
  LlmSplit& s = l.split;
  tr.format = MatrixFormat::kFp8;
  s.tp = 4;
  s.dp = 2;
  s.global_batch = 8;
  const double copies = LlmMemoryPerGpu(m, c, tr, s).weights;
  tr.fp8_weights = true;
  const double alone = LlmMemoryPerGpu(m, c, tr, s).weights;
  // copies = 3 P + 2 A, alone = P + 2 A: their difference is 2 P, a third of
  // (copies - 2 A); the adapters (80 layers of 16 x (8192 + 2560) + 16 x
  // (2048 + 8192) at tp 4) are 2 A bytes.
  const double adapters = 80.0 * (16 * (8192 + 2560) + 16 * (2048 + 8192));
  const double base = (copies - 2 * adapters) / 3;
  EXPECT_NEAR(alone, base + 2 * adapters, 1e-6 * alone);
  // Without FP8 products the option is refused.
  tr.format = MatrixFormat::k16;
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
}

TEST(SplitMemory, Fp8ActivationStoreHoldsTheSwigluInputInOneByte) {
  // Llama-2-70B LoRA on one H200 group of the MLPerf v4.1 split (tp 1, cp 2,
  // dp 4, micro-batch 1 of 8,192 tokens: 4,096 on each GPU). The SwiGLU's
  // input is 2 x 28,672 wide; Megatron's activation_func_fp8_input_store keeps
  // it in FP8, 1 byte an element instead of 2, so a micro-batch's layers hold
  //   80 x 4,096 x 2 x 28,672 x 1 = 18,790,481,920 bytes less
  // (one micro-batch in flight without pipelining).
  LoraSetup l = Llama70bLora("h200", 8, 8192);
  const TransformerConfig& m = l.model;
  const LlmCluster& c = l.cluster;
  LlmTraining& tr = l.training;
  LlmSplit& s = l.split;
  tr.format = MatrixFormat::kFp8;
  s.cp = 2;
  s.dp = 4;
  s.global_batch = 8;
  s.zero = 1;
  const double bf16 = LlmMemoryPerGpu(m, c, tr, s).activations;
  tr.activation_fp8_store = true;
  const double fp8 = LlmMemoryPerGpu(m, c, tr, s).activations;
  EXPECT_DOUBLE_EQ(bf16 - fp8, 18790481920.0);
  // Time: a cast of the 2 x 28,672 x 4,096 elements forward (read 2, write 1
  // byte) and back before the gradient (read 1, write 2), per layer.
  LayerShape shape = MakeLayerShape(m, tr.seq_len, 1, 1, 2);
  const KernelTimer t = MakeKernelTimer(c.device, tr.format, LlmCalibration{});
  tr.activation_fp8_store = false;
  ApplyTrainingToShape(shape, tr);
  const LayerTimes off = TimeLayer(shape, t, tr, false);
  tr.activation_fp8_store = true;
  ApplyTrainingToShape(shape, tr);
  const LayerTimes on = TimeLayer(shape, t, tr, false);
  const double cast = t.MemoryTime(3.0 * 2.0 * 28672 * 4096);
  EXPECT_NEAR(on.forward_gpu_s - off.forward_gpu_s, cast, 1e-12);
  EXPECT_NEAR(on.backward_gpu_s - off.backward_gpu_s, cast, 1e-12);
  EXPECT_EQ(on.forward_kernels, off.forward_kernels + 1);
  // A plain (GELU) feed-forward has no SwiGLU input: refused, naming the option.
  tr.lora_rank = 0;
  tr.format = MatrixFormat::k16;
  tr.seq_len = 1024;
  const TransformerConfig gpt = GptShape(2, 1024, 16);
  try {
    ModelLlmStep(gpt, MakeCluster(LoadDevice("h200"), 1), tr, LlmSplit{});
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--activation-fp8-store"), std::string::npos) << e.what();
  }
}

TEST(SplitLora, ZeroThreeShardsTheFrozenBaseAndGathersItEveryPass) {
  // DeepSpeed ZeRO-3 with LoRA (the Habana and Juniper MLPerf runs):
  // every parameter is partitioned, the frozen base's too. Llama-2-70B, tp 1,
  // pp 1, dp 8: the GPU holds 2 x (P + adapters) / 8 bytes of weights plus
  // one gathered layer's 2 x per_layer, where ZeRO-1 holds 2 x (P + adapters).
  LoraSetup l = Llama70bLora("h100", 8, 4096);
  const TransformerConfig& m = l.model;
  const LlmCluster& c = l.cluster;
  LlmTraining& tr = l.training;
  LlmSplit& s = l.split;
  s.dp = 8;
  s.global_batch = 8;
  s.recompute = Recompute::kFull;
  s.zero = 1;
  const LlmMemory z1 = LlmMemoryPerGpu(m, c, tr, s);
  s.zero = 3;
  const LlmMemory z3 = LlmMemoryPerGpu(m, c, tr, s);
  const TransformerParameters p = CountParameters(m);
  // z1.weights = 2 (P + A); z3.weights = 2 (P + A) / 8 + 2 x per_layer.
  EXPECT_NEAR(z3.weights, z1.weights / 8 + 2.0 * p.per_layer, 1e-6 * z3.weights);
  // Only the adapters are trained: gradients and Adam as under ZeRO-1/2.
  EXPECT_NEAR(z3.optimizer, z1.optimizer, 1e-6);
  // The 70B base no longer fits replicated in 80 GB; sharded it does.
  EXPECT_FALSE(ModelLlmStep(m, c, tr,
                            [&] {
                              LlmSplit z = s;
                              z.zero = 1;
                              return z;
                            }())
                   .memory.fits);
  const LlmStep step = ModelLlmStep(m, c, tr, s);
  EXPECT_TRUE(step.memory.fits);
  // The gathers (2 x 2P bytes per micro-batch) are data-parallel traffic:
  // without overlap all of it is exposed, far more than the adapters'
  // gradients (2 x 44.6 M parameters x 2 bytes).
  s.overlap_grad_reduce = false;
  const double gathered = ModelLlmStep(m, c, tr, s).parts.data_comm_s;
  s.zero = 1;
  EXPECT_GT(gathered, 10 * ModelLlmStep(m, c, tr, s).parts.data_comm_s);
}

TEST(LayerKernels, FusedAttentionRunsIn16BitsOnTheDevicesAttentionCurves) {
  // Llama-2-70B's attention on one GPU of tp 4 (64 / 4 = 16 heads of 128),
  // sequence 8,192, causal, micro-batch 1, on the h100 (its attention curves
  // carried from the H200's cuDNN rows at the same 989.5 TFLOPS peak).
  // Forward: F = 2 x 2 x 4,096 x 8,192 x 128 x 16 = 274,877,906,944, between
  // the curve's points (1.778e11, 0.5333) and (3.162e11, 0.5516):
  //   f = ln(2.748779e11 / 1.778e11) / ln(3.162e11 / 1.778e11) = 0.7567412
  //   eff = 0.5333 + f x 0.0183 = 0.5471484; t = F / (9.895e14 x eff) = 5.077138e-4 s
  // Backward: 2.5 F = 687,194,767,360, between (5.623e11, 0.4794) and (1e12, 0.4975):
  //   f = 0.3484026; eff = 0.4794 + f x 0.0181 = 0.4857061; t = 1.429850e-3 s
  const Device h100 = LoadDevice("h100");
  const LlmCalibration unit;  // sizes as they are
  for (MatrixFormat format : {MatrixFormat::k16, MatrixFormat::kFp8}) {
    // FP8 (Transformer Engine's recipe) leaves attention in 16 bits: the same times.
    const KernelTimer t = MakeKernelTimer(h100, format, unit);
    const FlashAttentionTimes fa = TimeFlashAttention(t, 16, 8192, 8192, 128, true);
    EXPECT_NEAR(fa.forward_s, 5.077138e-4, 1e-9);
    EXPECT_NEAR(fa.backward_s, 1.429850e-3, 1e-8);
  }
  // A device without attention curves (the a100) times the kernel on its
  // tensor curve with the curve's shape term, as one batched 16-bit product of
  // the unmasked rows: F / (peak x eff(F) x shape), with no roofline (flash
  // attention never writes the score matrix a product's result would be).
  const Device a100 = LoadDevice("a100");
  ASSERT_TRUE(a100.attention_forward_efficiency.points.empty());
  const KernelTimer t = MakeKernelTimer(a100, MatrixFormat::k16, unit);
  const FlashAttentionTimes fa = TimeFlashAttention(t, 16, 8192, 8192, 128, true);
  const EfficiencyCurve& tensor = a100.TensorEfficiency();
  auto on_tensor_curve = [&](double flops) {
    double eff = tensor.At(flops);
    if (tensor.half_dim > 0) eff *= tensor.ShapeFactor(4096, 8192, 128);
    return flops / (a100.tensor16_flops_per_s * std::min(1.0, eff));
  };
  EXPECT_DOUBLE_EQ(fa.forward_s, on_tensor_curve(2.0 * 4096 * 8192 * 128 * 2 * 16));
  EXPECT_DOUBLE_EQ(fa.backward_s, on_tensor_curve(2.0 * 4096 * 8192 * 128 * 5 * 16));
}

TEST(LayerKernels, RingAttentionRunsOneKernelPerChunkAtItsOwnSize) {
  // Llama-2-70B's attention on one GPU of tp 4 (16 heads of 128) with
  // context parallelism 2: 4,096 local query rows against the 8,192-token
  // sequence, causal, on the h100. Forward F = 2 x 2 x 2,048 x 8,192 x 128 x
  // 16 = 137,438,953,472 FLOPs in two kernels of F / 2 = 68,719,476,736,
  // between the forward curve's points (5.623e10, 0.4711) and (1e11, 0.5071):
  //   f = ln(6.871948e10 / 5.623e10) / ln(1e11 / 5.623e10) = 0.3484026
  //   eff = 0.4711 + f x 0.036 = 0.4836425; two kernels 2 x F/2 / (9.895e14 x
  //   eff) = 2.871902e-4 s
  // Backward: two kernels of 2.5 F / 2 = 171,798,691,840, between (1e11,
  // 0.35) and (1.778e11, 0.408): f = 0.9403361, eff = 0.4045395, 8.583672e-4 s.
  const Device h100 = LoadDevice("h100");
  const LlmCalibration unit;
  const KernelTimer t = MakeKernelTimer(h100, MatrixFormat::k16, unit);
  const FlashAttentionTimes ring = TimeFlashAttention(t, 16, 4096, 8192, 128, true, 2);
  EXPECT_NEAR(ring.forward_s, 2.871902e-4, 1e-9);
  EXPECT_NEAR(ring.backward_s, 8.583672e-4, 1e-9);
  // One kernel of the whole work would run higher on the curve: faster.
  EXPECT_LT(TimeFlashAttention(t, 16, 4096, 8192, 128, true).forward_s, ring.forward_s);
}

TEST(LayerKernels, RingAttentionTimesTransformerEnginesBookkeeping) {
  // Llama-2-70B at tp 1, cp 2, one sequence of 8,192: T = 4,096 local
  // tokens, Q width 8,192 (67,108,864 bytes in 16 bits), K/V width 1,024
  // (8,388,608 bytes each). Beyond its two attention kernels the ring
  // (Transformer Engine's P2P ring, one later chunk) moves, forward:
  //   K and V into the send buffer (read, write)   33,554,432
  //   the output accumulator zeroed                 67,108,864
  //   the first chunk's output written into it     134,217,728
  //   the later chunk's merged (read two, write)   201,326,592
  // backward: the K/V buffer 33,554,432; the first chunk's dQ 134,217,728
  // and dK/dV 33,554,432 copied; the later chunk's added, 201,326,592 and
  // 50,331,648 bytes. Each a memory-bound kernel on the memory curve.
  const TransformerConfig m = LoadTransformer("llama-2-70b");
  const Device h200 = LoadDevice("h200");
  const LlmCalibration unit;
  const KernelTimer t = MakeKernelTimer(h200, MatrixFormat::k16, unit);
  LlmTraining tr;
  tr.seq_len = 8192;
  const LayerShape shape = MakeLayerShape(m, 8192, 1, 1, 2, 1);
  const LayerTimes layer = TimeLayer(shape, t, tr, false);
  const FlashAttentionTimes kernels = TimeFlashAttention(t, 64, 4096, 8192, 128, true, 2);
  const double fwd = t.MemoryTime(33554432.0) + t.MemoryTime(67108864.0) +
                     t.MemoryTime(134217728.0) + t.MemoryTime(201326592.0);
  const double bwd = t.MemoryTime(33554432.0) + t.MemoryTime(134217728.0) +
                     t.MemoryTime(33554432.0) + t.MemoryTime(201326592.0) +
                     t.MemoryTime(50331648.0);
  EXPECT_NEAR(layer.attention_fwd_gpu_s, kernels.forward_s + fwd, 1e-12);
  EXPECT_NEAR(layer.attention_bwd_gpu_s, kernels.backward_s + bwd, 1e-12);
  // Two attention kernels and four copies forward; two kernels and five
  // copies backward, where the layer without the ring issues one a pass.
  EXPECT_EQ(layer.attention_fwd_kernels, 6.0);
  // Without context parallelism: one kernel a pass, nothing else.
  const LayerTimes whole = TimeLayer(MakeLayerShape(m, 8192, 1, 1, 1, 1), t, tr, false);
  EXPECT_EQ(whole.attention_fwd_kernels, 1.0);
  EXPECT_EQ(layer.forward_kernels - whole.forward_kernels, 5.0);
  EXPECT_EQ(layer.backward_kernels - whole.backward_kernels, 6.0);
  EXPECT_DOUBLE_EQ(whole.attention_fwd_gpu_s,
                   TimeFlashAttention(t, 64, 8192, 8192, 128, true).forward_s);
}

TEST(LayerKernels, RotaryPositionsReadAndWriteQueriesAndKeysEachPass) {
  // Llama-2-70B at tp 1, one sequence of 4,096: Q is 4,096 x 8,192 and K
  // 4,096 x 1,024, so the fused rotary kernel reads and writes 2 x 2 x 4096
  // x 9216 = 150,994,944 bytes forward, and as much for the gradients
  // backward. The same layer with learned positions does neither.
  TransformerConfig m = LoadTransformer("llama-2-70b");
  const Device h100 = LoadDevice("h100");
  const LlmCalibration unit;
  const KernelTimer t = MakeKernelTimer(h100, MatrixFormat::k16, unit);
  LlmTraining tr;
  tr.seq_len = 4096;
  const LayerTimes rope = TimeLayer(MakeLayerShape(m, 4096, 1, 1, 1, 1), t, tr, false);
  m.positions = PositionEncoding::kLearned;
  const LayerTimes learned = TimeLayer(MakeLayerShape(m, 4096, 1, 1, 1, 1), t, tr, false);
  EXPECT_NEAR(rope.forward_gpu_s - learned.forward_gpu_s, t.MemoryTime(150994944.0), 1e-12);
  EXPECT_NEAR(rope.backward_gpu_s - learned.backward_gpu_s, t.MemoryTime(150994944.0), 1e-12);
  EXPECT_EQ(rope.forward_kernels - learned.forward_kernels, 1.0);
}

TEST(LayerKernels, SkinnyProductsTakeTheirOperandsTrafficAtLeast) {
  // A LoRA adapter's first product on the h100: 8,192 tokens x hidden 8,192
  // -> rank 16. 2 x 8192 x 16 x 8192 = 2.1 GFLOP, a few microseconds at the
  // 16-bit peak, but its 16-bit operands and result are
  // 2 x (8192 x 8192 + 8192 x 16 + 8192 x 16) = 134,742,016 bytes: the
  // memory curve's time for them bounds it (the roofline).
  const Device h100 = LoadDevice("h100");
  const LlmCalibration unit;
  const KernelTimer t16 = MakeKernelTimer(h100, MatrixFormat::k16, unit);
  const double flops = 2.0 * 8192 * 16 * 8192;
  ASSERT_LT(flops / h100.tensor16_flops_per_s, t16.MemoryTime(134742016.0));
  EXPECT_DOUBLE_EQ(t16.Gemm16(8192, 16, 8192), t16.MemoryTime(134742016.0));
  EXPECT_DOUBLE_EQ(t16.Gemm(8192, 16, 8192), t16.MemoryTime(134742016.0));
  // FP8: 1-byte operands, a 16-bit result, then the input's cast (read 2,
  // write 1 byte an element): 8192 x 8192 + 8192 x 16 + 2 x 8192 x 16 =
  // 67,502,080 bytes, plus the cast's 3 x 8192 x 8192 = 201,326,592.
  const KernelTimer t8 = MakeKernelTimer(h100, MatrixFormat::kFp8, unit);
  EXPECT_DOUBLE_EQ(t8.Gemm(8192, 16, 8192), t8.MemoryTime(67502080.0) + t8.MemoryTime(201326592.0));
  // A large product stays on its FLOP curve: 8192 x 8192 x 8192 in 16 bits
  // moves 402,653,184 bytes, far less time than its 1.1 TFLOP.
  EXPECT_GT(t16.Gemm16(8192, 8192, 8192), 2.0 * t16.MemoryTime(402653184.0));
}

}  // namespace
}  // namespace fitspeed
