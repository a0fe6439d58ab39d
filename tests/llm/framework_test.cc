// The frameworks' profiles (fitspeed/llm/framework.h) against hand counts of
// what each framework's code does: eager PyTorch's element-wise kernels and
// what they keep, FSDP's sharded FP32 master weights and per-micro-batch
// gathers, the splits each framework runs, XLA's step without host launches,
// and the interval of a framework the model was not developed on.
#include "fitspeed/llm/framework.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/comm.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"
#include "llm/layer_kernels.h"

namespace fitspeed {
namespace {

TEST(LlmFrameworks, EveryProfileNamesItsSourcesAndMegatronComesFirst) {
  const std::vector<LlmFramework>& all = LlmFrameworks();
  ASSERT_GE(all.size(), 6u);
  EXPECT_EQ(all.front().name, "megatron");
  for (const LlmFramework& f : all) {
    EXPECT_FALSE(f.title.empty()) << f.name;
    ASSERT_FALSE(f.behaviours.empty()) << f.name;
    for (const LlmFramework::Behaviour& b : f.behaviours) {
      EXPECT_FALSE(b.what.empty()) << f.name;
      EXPECT_FALSE(b.source.empty()) << f.name;
    }
    EXPECT_TRUE(f.RunsZero(f.zero_default, false)) << f.name;
  }
  try {
    FindLlmFramework("jax");
    FAIL() << "an unknown framework was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("megatron, nemo"), std::string::npos) << e.what();
  }
}

TEST(LlmFrameworks, ParserRefusesWhatItCannotUse) {
  const auto profile = [](const std::string& patch) {
    return "{\"schema\": \"fitspeed.llm-frameworks/1\", \"frameworks\": [{\"name\": \"x\", "
           "\"title\": \"t\", \"development_family\": \"f\", \"kernels\": \"eager\", "
           "\"separate_projections\": true, \"tp_comm_overlap\": false, \"host\": \"eager\", "
           "\"sharding\": \"fsdp\", "
           "\"gradient_bytes\": \"model-dtype\", \"zero\": [0, 3], \"zero_with_pipeline\": [], " +
           patch +
           "\"parallel\": [\"tp\"], \"behaviours\": [{\"what\": \"w\", \"source\": \"s\"}]}]}";
  };
  const std::vector<LlmFramework> ok = ParseLlmFrameworks(profile("\"zero_default\": 3, "), "t");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].kernels, LlmKernels::kEager);
  EXPECT_EQ(ok[0].sharding, LlmSharding::kFsdp);
  EXPECT_TRUE(ok[0].tp);
  EXPECT_FALSE(ok[0].pp);
  EXPECT_FALSE(ok[0].RunsZero(1, false));
  EXPECT_FALSE(ok[0].RunsZero(0, true));
  // A default level the framework does not run.
  EXPECT_THROW(ParseLlmFrameworks(profile("\"zero_default\": 1, "), "t"), DataError);
  // Levels without plain data parallelism (0).
  std::string no_ddp = profile("\"zero_default\": 3, ");
  no_ddp.replace(no_ddp.find("[0, 3]"), 6, "[2, 3]");
  EXPECT_THROW(ParseLlmFrameworks(no_ddp, "t"), DataError);
  EXPECT_THROW(ParseLlmFrameworks("{\"schema\": \"fitspeed.llm-frameworks/1\"}", "t"), DataError);
  EXPECT_THROW(ParseLlmFrameworks("[1", "t"), DataError);
}

TEST(LlmFrameworks, GradientBytesAreEachFrameworksReduceType) {
  // Megatron: FP32 main_grad under bf16, 16 bits under fp16 (arguments.py);
  // FSDP's reduce_dtype defaults to the 16-bit param_dtype; torchtitan
  // reduces in FP32 (mixed_precision_reduce); a given value is kept.
  EXPECT_EQ(MakeLlmTraining(2048, "bf16", 0, true, 0).gradient_bytes, 4);
  EXPECT_EQ(MakeLlmTraining(2048, "fp16", 0, true, 0).gradient_bytes, 2);
  EXPECT_EQ(MakeLlmTraining(2048, "bf16", 0, true, 0, "fsdp").gradient_bytes, 2);
  EXPECT_EQ(MakeLlmTraining(2048, "bf16", 0, true, 0, "fsdp2").gradient_bytes, 4);
  EXPECT_EQ(MakeLlmTraining(2048, "bf16", 0, true, 4, "fsdp").gradient_bytes, 4);
  EXPECT_THROW(MakeLlmTraining(2048, "bf16", 0, true, 0, "pytorch"), UsageError);
}

// A device whose every curve is flat at efficiency 1: a kernel of b bytes
// takes b / bandwidth and a product of F FLOPs F / peak (compute-bound for
// the shapes below), so a layer's time adds up by hand.
struct FlatTimer {
  EfficiencyCurve flat;
  KernelTimer timer;
  FlatTimer() {
    flat.points = {{1.0, 1.0}};
    for (const EfficiencyCurve** c :
         {&timer.matrix, &timer.matrix16, &timer.memory, &timer.normalization,
          &timer.attention_forward, &timer.attention_backward})
      *c = &flat;
    timer.peak = timer.peak16 = 1e12;  // FLOP/s
    timer.bandwidth = 1e12;            // bytes/s
  }
};

TEST(EagerKernels, ElementWiseBytesAndKernelsOfALlamaLayerByHand) {
  // One Llama layer (h 4096, 32 heads, 8 KV heads of 128, SwiGLU f 14336)
  // over T = 1024 tokens on one GPU, eager (fsdp) against fused (megatron).
  const TransformerConfig m = LoadTransformer("llama-3-8b");
  FlatTimer flat;
  const auto time = [&](const std::string& framework) {
    const LlmTraining tr = MakeLlmTraining(1024, "bf16", 0, true, 0, framework);
    LayerShape s = MakeLayerShape(m, 1024, 1, 1, 1);
    ApplyTrainingToShape(s, tr);
    return TimeLayer(s, flat.timer, tr, false);
  };
  const LayerTimes fused = time("megatron");
  const LayerTimes eager = time("fsdp");
  const double T = 1024, h = 4096, f = 14336, q = 4096, kv = 1024;
  const double n = T * h;
  // Forward, bytes more than fused: each of the two RMSNorms 36 n + 2 x 8 T
  // (two kernels of a value a row) against 4 n; rotary embedding 20 against
  // 4 bytes an element of Q (T q) and K (T kv); SiLU x up 10 against 6 T f.
  // The separate products move the same FLOPs (no time on this device).
  const double forward_bytes =
      2 * (32 * n + 16 * T) + 16 * T * (q + kv) + 4 * T * f;  // 2.22e9 bytes
  EXPECT_NEAR((eager.forward_gpu_s - fused.forward_gpu_s) * 1e12, forward_bytes,
              1e-9 * forward_bytes);
  // Backward: each norm 84 n + 16 T against 6 n; rotary 30 against 4; SiLU x
  // up 18 against 9 T f; the input gradients of q, k, v summed twice and of
  // gate, up once (6 T h each).
  const double backward_bytes = 2 * (78 * n + 16 * T) + 26 * T * (q + kv) + 9 * T * f + 3 * 6 * n;
  EXPECT_NEAR((eager.backward_gpu_s - fused.backward_gpu_s) * 1e12, backward_bytes,
              1e-9 * backward_bytes);
  // Kernels the host launches, more than fused. Forward: norms 8 against 1,
  // twice; rotary 5 a tensor (Q, K) against one for both; SiLU x up 2
  // against 1; q, k, v 3 products against 1, gate and up 2 against 1.
  EXPECT_DOUBLE_EQ(eager.forward_kernels - fused.forward_kernels, 2 * 7 + 9 + 1 + 3);
  // Backward: norms 14 against 1, twice; rotary 9 a tensor against 1; SiLU x
  // up 3 against 1; two products (input and weight gradient) per extra
  // product, 3 of them; the three sums.
  EXPECT_DOUBLE_EQ(eager.backward_kernels - fused.backward_kernels, 2 * 13 + 17 + 2 + 6 + 3);
}

TEST(EagerKernels, WhatTheEagerNormsAndActivationKeepByHand) {
  // Per layer, no recomputation or parallelism: eager RMSNorm keeps its FP32
  // input and 16-bit output (6 bytes an element) where the fused norm keeps
  // its 16-bit input (2): 4 T h more for each of two norms; SiLU x up keeps
  // SiLU's output, 2 T f more.
  const TransformerConfig m = LoadTransformer("llama-3-8b");
  LayerShape fused = MakeLayerShape(m, 2048, 2, 1, 1);
  LayerShape eager = fused;
  ApplyTrainingToShape(fused, MakeLlmTraining(2048, "bf16", 0, true, 0, "megatron"));
  ApplyTrainingToShape(eager, MakeLlmTraining(2048, "bf16", 0, true, 0, "fsdp"));
  const double T = 4096, h = 4096, f = 14336;
  EXPECT_DOUBLE_EQ(LayerActivationBytesOf(eager, false, Recompute::kNone, true) -
                       LayerActivationBytesOf(fused, false, Recompute::kNone, true),
                   8 * T * h + 2 * T * f);
  // Full recomputation keeps each layer's input alone, whatever the kernels.
  EXPECT_DOUBLE_EQ(LayerActivationBytesOf(eager, false, Recompute::kFull, true),
                   LayerActivationBytesOf(fused, false, Recompute::kFull, true));
}

// A split of tp x pp x dp devices at ZeRO level `zero` and `global_batch`
// sequences a step, one sequence a micro-batch.
LlmSplit SplitOf(int tp, int pp, int dp, int zero, int64_t global_batch) {
  LlmSplit s;
  s.tp = tp;
  s.pp = pp;
  s.dp = dp;
  s.zero = zero;
  s.global_batch = global_batch;
  return s;
}

// Llama-3-8B on 8 H100s, 4,096 tokens a sequence.
struct FrameworkSetup {
  TransformerConfig model = LoadTransformer("llama-3-8b");
  LlmCluster cluster = MakeCluster(LoadDevice("h100"), 8);
  LlmSplit split;
  FrameworkSetup() { split.dp = 8; }
  LlmStep Step(const std::string& framework, int zero, int64_t micro_batches = 1,
               double gradient_bytes = 0) {
    const LlmTraining tr = MakeLlmTraining(4096, "bf16", 0, true, gradient_bytes, framework);
    LlmSplit s = split;
    s.zero = zero;
    s.global_batch = 8 * micro_batches;
    return ModelLlmStep(model, cluster, tr, s);
  }
};

TEST(FsdpSharding, ZeroThreeKeepsTheFp32MasterAsTheShards) {
  // ZeRO-3 as DeepSpeed: 16-bit weights and the optimizer's 12 bytes (FP32
  // master, m, v) over dp; as FSDP: the 4-byte FP32 shards are the master,
  // Adam's 8 beside. The gathered layer and the gradients are alike.
  FrameworkSetup t;
  const LlmMemory zero = t.Step("megatron", 3, 1, 2).memory;
  const LlmMemory fsdp = t.Step("fsdp", 3, 1, 2).memory;
  const double p = static_cast<double>(CountParameters(t.model).total);
  EXPECT_NEAR(fsdp.weights - zero.weights, 2.0 * p / 8, 1e-9 * p);
  EXPECT_NEAR(fsdp.optimizer, 8.0 * p / 8, 1e-9 * p);
  EXPECT_NEAR(zero.optimizer, 12.0 * p / 8, 1e-9 * p);
  EXPECT_DOUBLE_EQ(fsdp.gradients, zero.gradients);
}

TEST(FsdpSharding, ShardGradOpGathersTheWeightsEveryMicroBatch) {
  // ZeRO-2 over 4 micro-batches, nothing overlapped, 2-byte gradients and
  // weights (so a reduce-scatter and an all-gather of the same bytes take
  // the same time X): DeepSpeed reduce-scatters every micro-batch and
  // gathers the updated weights once, 5 X; FSDP's SHARD_GRAD_OP gathers
  // before every micro-batch's forward, 8 X.
  FrameworkSetup t;
  t.split.overlap_grad_reduce = false;
  const double zero = t.Step("megatron", 2, 4, 2).parts.data_comm_s;
  const double fsdp = t.Step("fsdp", 2, 4, 2).parts.data_comm_s;
  ASSERT_GT(zero, 0);
  EXPECT_NEAR(fsdp / zero, 8.0 / 5.0, 1e-9);
}

TEST(HybridSharding, ShardsWithinTheNodeAndAllReducesTheShardsAcrossReplicas) {
  // Llama-3-8B on 16 H100s (two nodes of 8), dp 16, ZeRO-3, one micro-batch,
  // nothing overlapped, 2-byte gradients and weights. Sharded over all 16,
  // the gradients' reduce-scatter and the two weight gathers cross nodes;
  // sharded over groups of 8 (FSDP's HYBRID_SHARD), they stay on NVLink and
  // each rank all-reduces its 1/8 gradient shard with its one replica over
  // the network: RS + 2 AG over 8 on NVLink (each half a ring all-reduce) +
  // a ring all-reduce of P x 2 / 8 bytes over 2 on the network link.
  const TransformerConfig m = LoadTransformer("llama-3-8b");
  const LlmCluster c = MakeCluster(LoadDevice("h100"), 16);
  const LlmTraining tr = MakeLlmTraining(4096, "bf16", 0, true, 2, "fsdp");
  LlmSplit s = SplitOf(1, 1, 16, 3, 16);
  s.overlap_grad_reduce = false;
  const double p = static_cast<double>(CountParameters(m).total);
  const LlmStep all = ModelLlmStep(m, c, tr, s);
  s.shard_group = 8;
  const LlmStep hybrid = ModelLlmStep(m, c, tr, s);
  const double expected =
      3 * 0.5 * RingAllReduceTime(2 * p, 8, c.intra) + RingAllReduceTime(2 * p / 8, 2, c.inter);
  EXPECT_NEAR(hybrid.parts.data_comm_s, expected, 1e-9 * expected);
  EXPECT_LT(hybrid.parts.data_comm_s, all.parts.data_comm_s);
  // The state over 8 ranks instead of 16: FSDP's 4-byte shards and Adam's 8
  // twice as large.
  EXPECT_NEAR(hybrid.memory.optimizer, 8.0 * p / 8, 1e-9 * p);
  EXPECT_NEAR(all.memory.optimizer, 8.0 * p / 16, 1e-9 * p);
  // Refused: a group that does not divide dp, or nothing sharded.
  s.shard_group = 6;
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
  s.shard_group = 8;
  s.zero = 0;
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
}

TEST(Frameworks, RefuseSplitsTheyDoNotRun) {
  FrameworkSetup t;
  const LlmTraining fsdp = MakeLlmTraining(4096, "bf16", 0, true, 0, "fsdp");
  LlmSplit s = SplitOf(2, 1, 4, 3, 4);
  try {
    ModelLlmStep(t.model, t.cluster, fsdp, s);
    FAIL() << "FSDP over Hugging Face modules ran tensor parallelism";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor parallelism (tp 2)"), std::string::npos)
        << e.what();
  }
  // FSDP has no optimizer-only sharding.
  EXPECT_THROW(ModelLlmStep(t.model, t.cluster, fsdp, SplitOf(1, 1, 8, 1, 8)), UsageError);
  EXPECT_NO_THROW(ModelLlmStep(t.model, t.cluster, fsdp, SplitOf(1, 1, 8, 2, 8)));
  // DeepSpeed's pipeline engine with ZeRO-2 (Megatron-DeepSpeed's rule).
  EXPECT_THROW(ModelLlmStep(t.model, t.cluster,
                            MakeLlmTraining(4096, "bf16", 0, true, 0, "megatron-deepspeed"),
                            SplitOf(1, 2, 4, 2, 8)),
               UsageError);
}

TEST(Frameworks, PlannerSearchesOnlyTheSplitsTheFrameworkRuns) {
  FrameworkSetup t;
  LlmPlanOptions o;
  o.global_batch = 64;
  o.training = MakeLlmTraining(4096, "bf16", 0, true, 0, "fsdp");
  o.top = 50;
  const LlmPlan plan = PlanLlm(t.model, t.cluster, o);
  ASSERT_FALSE(plan.ranked.empty());
  for (const LlmStep& step : plan.ranked) {
    EXPECT_EQ(step.split.tp * step.split.pp * step.split.cp, 1);
    EXPECT_NE(step.split.zero, 1);
  }
  o.tp = 2;
  EXPECT_THROW(PlanLlm(t.model, t.cluster, o), UsageError);
}

TEST(Frameworks, AStepCompiledWholeWaitsOnNoHostLaunch) {
  // One micro-batch of 128 tokens a GPU: small kernels. With a dispatch of
  // 1 ms a kernel Megatron's eager launches bind every pass; MaxText's XLA
  // program launches none, so its compute is the device's alone, as with a
  // free host.
  FrameworkSetup t;
  const LlmTraining xla = MakeLlmTraining(128, "bf16", 0, true, 0, "maxtext");
  LlmSplit s = SplitOf(1, 1, 8, 3, 8);
  LlmCalibration slow_host, free_host;
  slow_host.dispatch_s = 1e-3;
  free_host.dispatch_s = 0;
  const double slow = ModelLlmStep(t.model, t.cluster, xla, s, slow_host).parts.compute_s;
  const double free = ModelLlmStep(t.model, t.cluster, xla, s, free_host).parts.compute_s;
  EXPECT_DOUBLE_EQ(slow, free);
  LlmTraining eager = xla;
  eager.framework = "megatron";
  ApplyLlmFramework(eager, "bf16");
  s.zero = 0;
  EXPECT_GT(ModelLlmStep(t.model, t.cluster, eager, s, slow_host).parts.compute_s, 2 * free);
}

TEST(Frameworks, MegatronIsTheDefault) {
  FrameworkSetup t;
  LlmTraining by_default;
  by_default.seq_len = 4096;
  const LlmTraining named = MakeLlmTraining(4096, "bf16", 0, true, 0, "megatron");
  const LlmSplit s = SplitOf(1, 1, 8, 0, 8);
  EXPECT_DOUBLE_EQ(ModelLlmStep(t.model, t.cluster, by_default, s).step_s,
                   ModelLlmStep(t.model, t.cluster, named, s).step_s);
}

TEST(Frameworks, AFrameworkWithoutDevelopmentRowsGetsTheOtherFrameworksInterval) {
  // On the calibration's own A100, Megatron's family has rows (the default
  // and megatron-deepspeed: vTrain's held-out folds); FSDP's has none, so it
  // gets every row's interval widened, and says so.
  const Device a100 = LoadDevice("a100");
  const PredictionInterval megatron = LlmInterval(a100, 0.8, "megatron-deepspeed");
  const PredictionInterval plain = LlmInterval(a100, 0.8);
  EXPECT_EQ(megatron.basis, plain.basis);
  EXPECT_DOUBLE_EQ(megatron.low_factor, plain.low_factor);
  const PredictionInterval fsdp = LlmInterval(a100, 0.8, "fsdp");
  ASSERT_TRUE(fsdp.available);
  EXPECT_NE(fsdp.basis.find("framework fsdp"), std::string::npos) << fsdp.basis;
  EXPECT_NE(fsdp.basis.find("no development rows"), std::string::npos) << fsdp.basis;
  EXPECT_GT(std::log(fsdp.high_factor / fsdp.low_factor),
            std::log(plain.high_factor / plain.low_factor));
  // On an H200 the device's class is folded in too.
  const PredictionInterval h200 = LlmInterval(LoadDevice("h200"), 0.8, "fsdp");
  EXPECT_NE(h200.basis.find("h200's class"), std::string::npos) << h200.basis;
}

}  // namespace
}  // namespace fitspeed
