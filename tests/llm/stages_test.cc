// Pipeline stages (layouts, uneven stages, memory per stage), expert
// parallelism as Megatron-Core folds it, sliding-window and latent attention
// in the split model (fitspeed/llm/split.h; docs/llm.md, "The split model").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"
#include "llm/layer_kernels.h"

namespace fitspeed {
namespace {

TEST(PipelineLayout, DeepSeekV3LayoutOfMegatronsDocsPutsMtpAndLossOnTheLastTwoRanks) {
  // Megatron-Core's pipeline_parallel_layout docs: DeepSeek-V3 (61 layers + 1
  // MTP module) on pp 16 x vp 2 as "Et*3|(tt|)*29m|L": 32 stages, stage s on
  // rank s % 16. Rank 0: the embedding + 3 layers, then 2; ranks 1-13: 2 and
  // 2; rank 14: 2 and the MTP module; rank 15: 2 and the loss.
  const TransformerConfig m = LoadTransformer("deepseek-v3");
  LlmSplit s;
  s.pp = 16;
  s.vp = 2;
  s.layout = "Et*3|(tt|)*29m|L";
  const std::vector<PipelineChunk> chunks = ParsePipelineLayout(m, 16, 2, s.layout);
  ASSERT_EQ(chunks.size(), 32u);
  EXPECT_TRUE(chunks[0].embedding);
  EXPECT_EQ(chunks[0].layers, 3);
  EXPECT_EQ(chunks[1].first_layer, 3);
  EXPECT_EQ(chunks[29].layers, 2);
  EXPECT_EQ(chunks[30].layers, 0);
  EXPECT_EQ(chunks[30].mtp, 1);
  EXPECT_TRUE(chunks[31].loss);
  const std::vector<PipelineStage> stages = PipelineStagesOf(m, s, 1, /*distinct=*/false);
  ASSERT_EQ(stages.size(), 16u);
  EXPECT_EQ(stages[0].LayerCount(), 5);
  EXPECT_TRUE(stages[0].embedding);
  EXPECT_EQ(stages[7].LayerCount(), 4);
  EXPECT_EQ(stages[14].LayerCount(), 2);
  EXPECT_EQ(stages[14].mtp, 1);
  EXPECT_EQ(stages[15].LayerCount(), 2);
  EXPECT_TRUE(stages[15].loss);
  // DeepSeek-V3's first 3 layers are dense (first_k_dense_replace 3), all on
  // rank 0's first chunk: kind index 0 dense, 2 MoE.
  EXPECT_EQ(stages[0].layers[0], 3);
  EXPECT_EQ(stages[0].layers[2], 2);
  // Ranks 1..13 hold the same: the distinct stages are 0, 1-13, 14, 15.
  const std::vector<PipelineStage> distinct = PipelineStagesOf(m, s, 1, true);
  ASSERT_EQ(distinct.size(), 4u);
  EXPECT_EQ(distinct[1].index, 1);
  EXPECT_EQ(distinct[1].count, 13);
}

TEST(PipelineLayout, MalformedLayoutsAreRefusedNamingWhere) {
  const TransformerConfig m = LoadTransformer("transformer:layers=8,hidden=64,heads=4,vocab=100");
  const auto refuses = [&](const std::string& layout, const std::string& says) {
    try {
      ParsePipelineLayout(m, 2, 1, layout);
      ADD_FAILURE() << layout << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << layout << ": " << e.what();
    }
  };
  refuses("Ett|ttL", "4 transformer layers ('t') for the model's 8");
  refuses("Et*4|t*3L|t", "3 stages for pp x vp = 2 x 1 = 2");
  refuses("t*4|Et*4L", "the embedding ('E') must appear once, in the first stage");
  refuses("Et*4|t*4", "the loss ('L') must appear once");
  refuses("Et*4|tx*3L", "at character 7: 'x' is not");
  refuses("E(t*4|t*4L", "'(' without its ')'");
  refuses("Et*4)|t*4L", "')' without its '('");
  refuses("Et*|t*8L", "'*' without a count");
  refuses("Et*4|t*4Lt", "a transformer layer after");
  refuses("(((((((((((((((((((t)))))))))))))))))))", "nested deeper than 16");
  refuses("(t*999999)*999999", "expands past 10,000,000 items");
}

TEST(PipelineLayout, CompactFormParsesToTheSameStages) {
  EXPECT_EQ(CompactPipelineLayout("E|t|t|t|t|L"), "E|(t|)*4L");
  EXPECT_EQ(CompactPipelineLayout("Etttt|tt, tt|ttL"), "Et*4|t*4|ttL");  // commas dropped
  EXPECT_EQ(CompactPipelineLayout("Et*3|(tt|)*29m|L"), "Et*3|(tt|)*29m|L");
  // Parsed, the short form gives the same stages.
  const TransformerConfig m = LoadTransformer("llama-3.1-405b");
  const std::string layout = PipelineLayoutOf(m, 16, 8, 0, 0, true, true);
  const auto whole = ParsePipelineLayout(m, 16, 8, layout);
  const auto short_form = ParsePipelineLayout(m, 16, 8, CompactPipelineLayout(layout));
  ASSERT_EQ(whole.size(), short_form.size());
  for (size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(whole[i].layers, short_form[i].layers);
}

TEST(PipelineLayout, MegatronsUnevenOptionsGiveTheLlama3Layout) {
  // Llama 3.1 405B's 126 layers with the embedding and the loss counted as
  // layers: 128 slots over pp 16 x vp 8 = 1 a chunk; the first chunk gives
  // its layer up to the embedding, the last to the loss (the Llama 3 paper's
  // "one Transformer layer less in the first and the last stages").
  const TransformerConfig m = LoadTransformer("llama-3.1-405b");
  const std::string layout = PipelineLayoutOf(m, 16, 8, 0, 0, true, true);
  EXPECT_EQ(CompactPipelineLayout(layout), "E|(t|)*126L");
  const std::vector<PipelineChunk> chunks = ParsePipelineLayout(m, 16, 8, layout);
  EXPECT_EQ(chunks.front().layers, 0);
  EXPECT_EQ(chunks.back().layers, 0);
  // First and last stages of 7 layers on pp 16: the other 112 over 14 stages, 8 each.
  LlmSplit s;
  s.pp = 16;
  s.layout = PipelineLayoutOf(m, 16, 1, 7, 7, false, false);
  const std::vector<PipelineStage> stages = PipelineStagesOf(m, s, 0, false);
  EXPECT_EQ(stages.front().LayerCount(), 7);
  EXPECT_EQ(stages[1].LayerCount(), 8);
  EXPECT_EQ(stages.back().LayerCount(), 7);
  // Megatron refuses what does not divide: 7 layers over vp 2 chunks; 126 -
  // 10 - 10 = 106 over 14 stages.
  EXPECT_THROW(PipelineLayoutOf(m, 16, 2, 7, 7, false, false), UsageError);
  EXPECT_THROW(PipelineLayoutOf(m, 16, 1, 10, 10, false, false), UsageError);
  EXPECT_THROW(PipelineLayoutOf(m, 16, 1, 7, 7, true, false), UsageError);  // exclusive
}

// A 4-layer GPT on 2 H100s, pp 2; a vocabulary of 50304 (GPT-2's padded)
// or of 128 (an output head far lighter than a layer).
TransformerConfig SmallGpt(int vocab = 50304) {
  return LoadTransformer("transformer:layers=4,hidden=1024,heads=16,vocab=" +
                         std::to_string(vocab) + ",positions=learned,max_positions=2048");
}

TEST(PipelineStages, UnevenStageHoldsItsLayersActivationsAndSetsThePace) {
  // "Ettt|tL" against the even "Ett|ttL", global batch 8, micro-batch 1 (8
  // micro-batches, both stages full): stage 0 holds pp = 2 micro-batches in
  // flight of its layers, so one more layer adds 2 x one layer's activations
  // (LayerActivationBytes) to its activations, with the weights of that layer
  // too. The mean stage is the same (the same layers in all), so the bubble
  // is; the slowest stage is longer by one layer's passes. A 128-token
  // vocabulary keeps the first stage the most loaded and the slowest in both.
  const TransformerConfig m = SmallGpt(128);
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 2);
  LlmTraining tr;
  tr.seq_len = 2048;
  LlmSplit s;
  s.pp = 2;
  s.micro_batch = 1;
  s.global_batch = 8;
  const LlmStep even = ModelLlmStep(m, c, tr, s);
  s.layout = "Ettt|tL";
  const LlmStep uneven = ModelLlmStep(m, c, tr, s);
  const double layer = LayerActivationBytes(m, 2048, 1, 1, false, Recompute::kNone, true);
  ASSERT_EQ(uneven.memory.stage_totals.size(), 2u);
  EXPECT_EQ(uneven.memory.stage, 0);
  EXPECT_EQ(even.memory.stage, 0);
  // Stage 0's activations: 3 layers x 2 in flight + its input per micro-batch
  // in flight, against 2 layers x 2: the difference is 2 layers' worth.
  EXPECT_NEAR(uneven.memory.activations - even.memory.activations, 2.0 * layer, 1e-6 * layer);
  EXPECT_NEAR(uneven.parts.bubble_s, even.parts.bubble_s, 1e-12);
  EXPECT_GT(uneven.step_s, even.step_s);
}

TEST(PipelineStages, LastStageHoldsTheLogits) {
  // With pp 2 the last stage holds the FP32 logits of one micro-batch, 4 x
  // tokens x padded vocabulary (50304 is a multiple of 128) = 4 x 2048 x
  // 50304 bytes; the first holds none.
  const TransformerConfig m = SmallGpt();
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 2);
  LlmTraining tr;
  tr.seq_len = 2048;
  LlmSplit s;
  s.pp = 2;
  s.micro_batch = 1;
  s.global_batch = 8;
  s.layout = "Et|t*3L";  // the last stage is the most loaded
  const LlmStep step = ModelLlmStep(m, c, tr, s);
  EXPECT_EQ(step.memory.stage, 1);
  EXPECT_DOUBLE_EQ(step.memory.logits, 4.0 * 2048 * 50304);
}

// Mixtral-8x7B on 64 H100s at 4,096 tokens: dp 64, ep 8 (etp 1: tp 1),
// micro-batch 1, global batch 64, ZeRO-1.
struct MixtralEp8 {
  TransformerConfig m = LoadTransformer("mixtral-8x7b");
  LlmCluster c = MakeCluster(LoadDevice("h100"), 64);
  LlmTraining tr;
  LlmSplit s;
  MixtralEp8() {
    tr.seq_len = 4096;
    s.dp = 64;
    s.ep = 8;
    s.micro_batch = 1;
    s.global_batch = 64;
    s.zero = 1;
  }
};

TEST(ExpertParallel, AllToAllStaysInTheNodeWhenEtpTimesEpFitsIt) {
  // Mixtral-8x7B on 64 H100s, dp 64, ep 8, etp 1 (tp 1): Megatron-Core's
  // expert ranks are ordered etp-ep-edp, so the 8 ranks of an expert group
  // are neighbours, one NVLink node. Per layer and micro-batch, 4
  // all-to-alls (dispatch and combine, forward and backward) of the routed
  // hidden states, top_k 2 x 4096 tokens x 4096 x 2 bytes = 67,108,864 bytes
  // each, of which each rank keeps 1/8: (7/8) x bytes / B + 7 a on NVLink
  // (B, a the node's link). 32 layers, 1 micro-batch (global batch 64).
  const MixtralEp8 x;
  const LlmCluster& c = x.c;
  const LlmStep step = ModelLlmStep(x.m, c, x.tr, x.s);
  const double bytes = 2.0 * 4096 * 4096 * 2;
  const double one = 7.0 / 8 * bytes / c.intra.bandwidth_bytes_per_s + 7 * c.intra.latency_s;
  EXPECT_NEAR(step.parts.expert_comm_s, 32 * 4 * one, 1e-9);
  // Before the fix the group sat dp x cp / ep = 8 nodes apart, on the network.
  EXPECT_LT(step.parts.expert_comm_s, 32 * 4 * (7.0 / 8 * bytes / c.inter.bandwidth_bytes_per_s));
}

TEST(ExpertParallel, ExpertOptimizerStateIsShardedOverTheExpertsDataParallelRanks) {
  // The same split: the routed experts, 32 layers x 8 x 3 x 4096 x 14336 =
  // 45,097,156,608 parameters, are split over ep 8 and their ZeRO-1
  // optimizer state over the 64 / 8 = 8 expert data-parallel ranks:
  // 12 bytes x 45,097,156,608 / 64 = 8,455,716,864; the rest of the model,
  // 46,702,792,704 - 45,097,156,608 = 1,605,636,096 parameters, over dp 64:
  // 12 x 1,605,636,096 / 64 = 301,056,768. Sum 8,756,773,632 bytes (issue 46's
  // 8.76 GB by hand; 1.36 GB modeled before, the experts divided by 64).
  const MixtralEp8 x;
  EXPECT_NEAR(LlmMemoryPerGpu(x.m, x.c, x.tr, x.s).optimizer, 8756773632.0, 1.0);
}

TEST(ExpertParallel, ExpertTensorParallelismIsRefusedWhereItDoesNotFold) {
  const TransformerConfig m = LoadTransformer("mixtral-8x7b");
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 16);
  LlmTraining tr;
  tr.seq_len = 4096;
  LlmSplit s;
  s.tp = 2;
  s.dp = 8;
  s.ep = 8;
  s.etp = 4;  // etp x ep = 32 does not divide tp x cp x dp = 16
  s.global_batch = 8;
  EXPECT_THROW(ValidateSplit(m, c, tr, s), UsageError);
  s.etp = 1;  // 8 divides 16: the 16 ranks fold as etp 1 x ep 8 x edp 2
  EXPECT_NO_THROW(ValidateSplit(m, c, tr, s));
  EXPECT_EQ(s.ExpertDp(), 2);
  const TransformerConfig dense = LoadTransformer("llama-3-8b");
  LlmSplit d;
  d.dp = 16;
  d.etp = 1;
  EXPECT_THROW(ValidateSplit(dense, c, tr, d), UsageError);
}

TEST(SlidingWindow, AttentionPairsOfAWindow) {
  // Causal over 4096 tokens in a window of 128: query i meets min(i + 1,
  // 128) keys, counted as s w - w^2 / 2 = 4096 x 128 - 8192 = 516,096 pairs;
  // the whole sequence s^2 / 2 = 8,388,608.
  EXPECT_DOUBLE_EQ(AttentionPairs(4096, 4096, true, 128), 516096);
  EXPECT_DOUBLE_EQ(AttentionPairs(4096, 4096, true, 0), 8388608);
  EXPECT_DOUBLE_EQ(AttentionPairs(4096, 4096, false, 0), 4096.0 * 4096);
  // A window longer than the sequence is the whole sequence.
  EXPECT_DOUBLE_EQ(AttentionPairs(100, 100, true, 1000), 5000);
}

TEST(SlidingWindow, GptOssSlidingLayersAttendToTheirWindowOnly) {
  // gpt-oss-120b alternates sliding (128 keys) and full layers: at 8192
  // tokens a sliding layer's attention kernel has 128 x 8192 - 8192 = 1,040,384
  // pairs a head against the full layer's 33,554,432, so its time is far
  // shorter; the layer kinds differ only there.
  const TransformerConfig m = LoadTransformer("gpt-oss-120b");
  const Device h100 = LoadDevice("h100");  // the timer points into its curves
  const KernelTimer t = MakeKernelTimer(h100, MatrixFormat::k16, LlmCalibration{});
  TransformerLayerKind sliding, full;
  sliding.sliding = true;
  sliding.moe = full.moe = true;
  LlmTraining tr;
  tr.seq_len = 8192;
  const LayerShape ss = MakeLayerShape(m, 8192, 1, 1, 1, 1, 1, sliding);
  const LayerShape fs = MakeLayerShape(m, 8192, 1, 1, 1, 1, 1, full);
  EXPECT_EQ(ss.window, 128);
  EXPECT_EQ(fs.window, 0);
  const LayerTimes a = TimeLayer(ss, t, tr, false);
  const LayerTimes b = TimeLayer(fs, t, tr, false);
  EXPECT_LT(a.attention_fwd_gpu_s, b.attention_fwd_gpu_s / 10);
  EXPECT_NEAR(b.forward_gpu_s - a.forward_gpu_s, b.attention_fwd_gpu_s - a.attention_fwd_gpu_s,
              1e-12);
}

TEST(LatentAttention, DeepSeekV3LayerShape) {
  // MLA as Megatron-Core trains it: 128 heads of query/key 128 + 64 = 192 and
  // value 128, the latents (q 1536, kv 512 + rope 64) whole on every rank.
  const TransformerConfig m = LoadTransformer("deepseek-v3");
  TransformerLayerKind moe;
  moe.moe = true;
  const LayerShape s = MakeLayerShape(m, 4096, 1, 8, 1, 8, 1, moe);
  EXPECT_EQ(s.head_dim, 192);
  EXPECT_EQ(s.v_dim, 128);
  EXPECT_EQ(s.heads, 16);  // 128 / tp 8
  EXPECT_EQ(s.q_rank, 1536);
  EXPECT_EQ(s.kv_rank, 512);
  EXPECT_EQ(s.rope_dim, 64);
  EXPECT_EQ(s.expert_ffn, 2048);  // etp 1: each expert whole
  EXPECT_EQ(s.shared_ffn, 2048.0 / 8);
  // etp 1 with tp 8: a rank takes etp / tp = 1/8 of its group's routed
  // token-expert pairs (the experts fold over the tp ranks).
  EXPECT_DOUBLE_EQ(s.RoutedShare(), 1.0 / 8);
  TransformerLayerKind dense;
  const LayerShape d = MakeLayerShape(m, 4096, 1, 8, 1, 8, 1, dense);
  EXPECT_EQ(d.experts, 0);
  EXPECT_EQ(d.ffn, 18432.0 / 8);
}

TEST(PlannerStages, Llama3Of405BOn8192GpusIsPlannedWithUnevenStages) {
  // Meta's split (tp 8, pp 16): 126 layers do not divide over 16 stages, so
  // before layouts the planner found no split. Now it ranks pp 16 with
  // layouts (the embedding and loss as layers for vp 8 and 1 slot a chunk).
  const TransformerConfig m = LoadTransformer("llama-3.1-405b");
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 8192);
  LlmPlanOptions o;
  o.global_batch = 2048;
  o.training.seq_len = 8192;
  o.tp = 8;
  o.pp = 16;
  o.micro_batch = 1;
  o.top = 3;
  const LlmPlan plan = PlanLlm(m, c, o);
  ASSERT_FALSE(plan.ranked.empty() && plan.not_fitting.empty());
  const LlmStep& best = plan.ranked.empty() ? plan.not_fitting.front() : plan.ranked.front();
  EXPECT_EQ(best.split.pp, 16);
  EXPECT_FALSE(best.split.layout.empty());
  EXPECT_EQ(best.memory.stage_totals.size(), 16u);
}

TEST(RecomputeModules, EachModuleDropsWhatOnlyItKeeps) {
  // Qwen3-30B-A3B's MoE layer at 4,096 tokens, micro-batch 1, tp 1, ep 1:
  // T = 4096, h = 2048, 128 experts of 768, top-8, balanced. By hand
  // (LayerActivationBytesOf's accounting, 2 bytes an element):
  //   layernorm: the two norm outputs (QKV and MLP inputs), 2 x 2 T h
  //     = 2 x 2 x 4096 x 2048 = 33,554,432 bytes;
  //   moe_act: the experts' activation output, 2 x routed x 768 with
  //     routed = 8 x 4096 = 32,768 pairs: 50,331,648 bytes;
  //   moe: the whole block, gate-and-up output 2 x 2 x routed x 768 (the
  //     SwiGLU input) + its output 50,331,648 + the permuted inputs 2 x
  //     routed x h = 134,217,728: 285,212,672 bytes.
  const TransformerConfig m = LoadTransformer("qwen3-30b-a3b");
  TransformerLayerKind moe;
  moe.moe = true;
  const LayerShape s = MakeLayerShape(m, 4096, 1, 1, 1, 1, 1, moe);
  const auto bytes = [&](Recompute r, unsigned modules) {
    return LayerActivationBytesOf(s, false, r, true, false, modules);
  };
  const double none = bytes(Recompute::kNone, 0);
  EXPECT_DOUBLE_EQ(none - bytes(Recompute::kSelective, kRecomputeLayernorm), 33554432.0);
  EXPECT_DOUBLE_EQ(none - bytes(Recompute::kSelective, kRecomputeMoeAct), 50331648.0);
  EXPECT_DOUBLE_EQ(none - bytes(Recompute::kSelective, kRecomputeMoe), 285212672.0);
  // core_attn drops nothing under flash attention (no score tensors).
  EXPECT_DOUBLE_EQ(bytes(Recompute::kSelective, kRecomputeCoreAttn), none);
  // The modules' names, as Megatron-Core spells them.
  EXPECT_EQ(ParseRecomputeModules("moe_act,layernorm"), kRecomputeMoeAct | kRecomputeLayernorm);
  EXPECT_EQ(ParseRecomputeModules(""), kRecomputeCoreAttn);
  EXPECT_EQ(RecomputeModulesName(kRecomputeMlaUpProj | kRecomputeMoe), "mla_up_proj,moe");
  EXPECT_THROW(ParseRecomputeModules("core_attn,attention"), UsageError);
}

TEST(RecomputeModules, RerunTimeIsTheModulesForwardKernels) {
  // The step with moe_act recomputed is longer than without by the
  // activation's forward kernel on every MoE layer of every micro-batch.
  const TransformerConfig m = LoadTransformer("qwen3-30b-a3b");
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 8);
  LlmTraining tr;
  tr.seq_len = 4096;
  LlmSplit s;
  s.dp = 8;
  s.ep = 8;
  s.global_batch = 8;
  const LlmStep plain = ModelLlmStep(m, c, tr, s);
  s.recompute = Recompute::kSelective;
  s.recompute_modules = kRecomputeMoeAct;
  const LlmStep rerun = ModelLlmStep(m, c, tr, s);
  TransformerLayerKind moe;
  moe.moe = true;
  LayerShape shape = MakeLayerShape(m, 4096, 1, 1, 1, 8, 1, moe);
  ApplyTrainingToShape(shape, tr);
  const KernelTimer t = MakeKernelTimer(c.device, MatrixFormat::k16, LlmCalibrationFor(c.device));
  const LayerTimes lt = TimeLayer(shape, t, tr, false);
  EXPECT_GT(lt.moe_act.gpu_s, 0.0);
  EXPECT_NEAR(rerun.parts.recompute_s - plain.parts.recompute_s, 48 * lt.moe_act.gpu_s,
              1e-9 * rerun.step_s);
  EXPECT_LT(rerun.memory.activations, plain.memory.activations);
}

TEST(BlockScaledRecipes, CastsWriteRowAndColumnCopiesOnTheFp8Curve) {
  // One product of 8192 x 8192 x 8192 on a B200: tensorwise FP8 casts its
  // input reading 2 bytes and writing 1 an element; MXFP8 and the 128-block
  // recipe write a row-wise and a column-wise copy (1 + 1), so each product
  // takes MemoryTime(4 m k) - MemoryTime(3 m k) longer on the same FP8 curve
  // and peak. NVFP4 runs at the FP4 peak with half-byte operands and casts of
  // 3 + 2.5 / 3 bytes an element (the Hadamard pass on one input in three).
  const Device b200 = LoadDevice("b200");
  const KernelTimer fp8 = MakeKernelTimer(b200, MatrixFormat::kFp8, LlmCalibration{});
  const KernelTimer mx = MakeKernelTimer(b200, MatrixFormat::kMxfp8, LlmCalibration{});
  const KernelTimer block = MakeKernelTimer(b200, MatrixFormat::kFp8Block, LlmCalibration{});
  const KernelTimer nv = MakeKernelTimer(b200, MatrixFormat::kNvfp4, LlmCalibration{});
  const double m = 8192, n = 8192, k = 8192;
  const double extra = fp8.MemoryTime(4.0 * m * k) - fp8.MemoryTime(3.0 * m * k);
  EXPECT_NEAR(mx.Gemm(m, n, k) - fp8.Gemm(m, n, k), extra, 1e-12);
  EXPECT_NEAR(block.Gemm(m, n, k) - fp8.Gemm(m, n, k), extra, 1e-12);
  EXPECT_EQ(nv.peak, b200.fp4_flops_per_s);
  EXPECT_DOUBLE_EQ(nv.cast_bytes, 3.0 + 2.5 / 3.0);
  EXPECT_DOUBLE_EQ(nv.operand_bytes, 0.5);
}

TEST(BlockScaledRecipes, NativeFormatsComeFromTheDeviceFile) {
  // b200.json lists mxfp8 and nvfp4 under "block_scaled"; h100.json lists
  // none, so MXFP8 and NVFP4 are refused there naming what it runs.
  EXPECT_EQ(LoadDevice("b200").block_scaled_formats,
            (std::vector<std::string>{"mxfp8", "nvfp4", "mxfp4"}));
  const TransformerConfig m = LoadTransformer("llama-3-8b");
  LlmTraining tr;
  tr.seq_len = 4096;
  tr.format = MatrixFormat::kMxfp8;
  EXPECT_NO_THROW(ValidateTraining(m, MakeCluster(LoadDevice("b200"), 8), tr));
  try {
    ValidateTraining(m, MakeCluster(LoadDevice("h100"), 8), tr);
    ADD_FAILURE() << "mxfp8 accepted on h100";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("h100 does not run mxfp8 natively"), std::string::npos)
        << e.what();
  }
  tr.format = MatrixFormat::kFp8Block;  // Hopper runs the 128-block recipe in software scales
  EXPECT_NO_THROW(ValidateTraining(m, MakeCluster(LoadDevice("h100"), 8), tr));
  tr.format = MatrixFormat::kNvfp4;
  EXPECT_THROW(ValidateTraining(m, MakeCluster(LoadDevice("mi355x"), 8), tr), UsageError);
  EXPECT_EQ(ParseMatrixFormat("fp8-block"), MatrixFormat::kFp8Block);
  EXPECT_EQ(MatrixFormatName(MatrixFormat::kNvfp4), "nvfp4");
  EXPECT_THROW(ParseMatrixFormat("mxfp6"), UsageError);
}

TEST(BlockScaledRecipes, ABadBlockScaledEntryIsRefusedNamingTheField) {
  const std::string text = R"({"schema": "fitspeed.device/1", "name": "x", "kind": "gpu",
    "block_scaled": {"formats": ["mxfp9"], "source": "none"}})";
  try {
    ParseDeviceJson(text, "x.json");
    ADD_FAILURE() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("block_scaled.formats[0]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fitspeed
