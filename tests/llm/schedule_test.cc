// The split model against the frameworks' code, published measurements and
// hand calculations: which interleaved pipelines Megatron-Core runs, when
// sharded data parallelism reduces the gradients, what of tensor
// parallelism's backward collectives the step waits for, the devices'
// measured matmul ceilings, and the intervals of a left-out accelerator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/framework.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"
#include "llm/layer_kernels.h"

namespace fitspeed {
namespace {

// A model (LoadTransformer's text) on `devices` of one device kind at
// `seq_len` tokens a sequence, its training and split for a test to set.
struct StepSetup {
  TransformerConfig model;
  Device device;
  LlmCluster cluster;
  LlmTraining training;
  LlmSplit split;
  StepSetup(const std::string& model_text, const std::string& device_name, int devices,
            int64_t seq_len)
      : model(LoadTransformer(model_text)),
        device(LoadDevice(device_name)),
        cluster(MakeCluster(device, devices)) {
    training.seq_len = seq_len;
  }
  LlmStepParts Parts() const { return ModelLlmStep(model, cluster, training, split).parts; }
};

TEST(InterleavedSchedule, MicroBatchesMustBeAMultipleOfThePipelineStages) {
  // Megatron-Core's forward_backward_pipelining_with_interleaving takes the
  // micro-batches in groups of microbatch_group_size_per_vp_stage (pp by
  // default) and refuses fewer than a group or a last group shorter than pp.
  // Llama-3-70B (80 layers) on 64 H100s, tp 4, pp 2, vp 8, dp 8: global batch
  // 8 is one micro-batch per data-parallel rank, which it refuses; 16 is two,
  // which it runs; plain 1F1B (vp 1) runs one.
  StepSetup t("llama-3-70b", "h100", 64, 4096);
  const TransformerConfig& m = t.model;
  const LlmCluster& c = t.cluster;
  const LlmTraining& tr = t.training;
  LlmSplit& s = t.split;
  s.tp = 4;
  s.pp = 2;
  s.vp = 8;
  s.dp = 8;
  s.global_batch = 8;
  EXPECT_FALSE(s.ScheduleRuns());
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
  s.global_batch = 16;
  EXPECT_TRUE(s.ScheduleRuns());
  EXPECT_NO_THROW(ModelLlmStep(m, c, tr, s));
  s.global_batch = 24;  // 3 micro-batches on pp 2: a last group of one
  EXPECT_THROW(ModelLlmStep(m, c, tr, s), UsageError);
  s.global_batch = 8;
  s.vp = 1;
  EXPECT_NO_THROW(ModelLlmStep(m, c, tr, s));

  // The planner ranks none of the schedules Megatron refuses.
  LlmPlanOptions o;
  o.global_batch = 8;
  o.training = tr;
  o.top = 1000;
  const LlmPlan plan = PlanLlm(m, c, o);
  ASSERT_FALSE(plan.ranked.empty());
  int interleaved = 0;
  for (const auto* list : {&plan.ranked, &plan.not_fitting}) {
    for (const LlmStep& step : *list) {
      EXPECT_TRUE(step.split.ScheduleRuns())
          << "tp " << step.split.tp << " pp " << step.split.pp << " vp " << step.split.vp
          << " micro-batches " << step.accumulation;
      if (step.split.vp > 1) ++interleaved;
    }
  }
  EXPECT_GT(interleaved, 0);  // interleaving is still searched where it runs
}

// A 4-layer GPT (hidden 1024, 16 heads, 50,257 words, learned positions) on
// the 8 H100s of one NVLink domain, dp 8, 4 micro-batches of one sequence of
// 1,024 tokens each, FP8, FP32 gradients, nothing overlapped.
struct ShardedSetup : StepSetup {
  ShardedSetup()
      : StepSetup(
            "transformer:layers=4,hidden=1024,heads=16,ffn=4096,vocab=50257,positions=learned,"
            "max_positions=2048,norm=layer,gated=0,bias=1",
            "h100", 8, 1024) {
    training.format = MatrixFormat::kFp8;
    training.gradient_bytes = 4;
    split.dp = 8;
    split.micro_batch = 1;
    split.global_batch = 32;
    split.overlap_grad_reduce = false;
  }
  double DataComm(int zero) {
    split.zero = zero;
    return Parts().data_comm_s;
  }
};

TEST(ShardedDataParallel, ZeroTwoAndThreeReduceScatterEveryMicroBatch) {
  // P, the stage's parameters: 4 layers x 12,596,224 + the padded vocabulary
  // (50,304 rows) x 1024 + 2,048 positions x 1024 + the final norm's 2,048.
  // A ring over n = 8: 2 (n-1)/n x bytes / B + 2 (n-1) a (Patarasuk & Yuan);
  // a reduce-scatter or an all-gather half of it.
  ShardedSetup t;
  const double P = 4.0 * 12596224 + 50304.0 * 1024 + 2048.0 * 1024 + 2048;
  const double n = 8, B = t.cluster.intra.bandwidth_bytes_per_s, a = t.cluster.intra.latency_s;
  auto half_ring = [&](double bytes) { return (n - 1) / n * bytes / B + (n - 1) * a; };
  // ZeRO-1 (Megatron's distributed optimizer): the FP32 gradients
  // accumulated whole, reduce-scattered once; the 16-bit weights gathered once.
  EXPECT_NEAR(t.DataComm(1), half_ring(4 * P) + half_ring(2 * P), 1e-12);
  // ZeRO-2 holds only its gradient shard: a reduce-scatter after each of the
  // 4 micro-batches (DeepSpeed's stage 2 hooks), the weights gathered once.
  EXPECT_NEAR(t.DataComm(2), 4 * half_ring(4 * P) + half_ring(2 * P), 1e-12);
  // ZeRO-3: the same reduce-scatters, and the 16-bit weights gathered for
  // each micro-batch's forward and backward pass (8 gathers), none after.
  EXPECT_NEAR(t.DataComm(3), 4 * half_ring(4 * P) + 8 * half_ring(2 * P), 1e-12);
  // One micro-batch: ZeRO-2 reduces as often as ZeRO-1.
  t.split.global_batch = 8;
  EXPECT_NEAR(t.DataComm(2), t.DataComm(1), 1e-12);
}

TEST(ShardedDataParallel, OverlappedReductionsHideBehindEveryMicroBatch) {
  // With overlap, ZeRO-2's reduce-scatters run behind each micro-batch's
  // backward pass and the next one's forward: never more exposed than
  // without overlap, never less than one bucket.
  ShardedSetup t;
  const double exposed = t.DataComm(2);
  t.split.overlap_grad_reduce = true;
  const double overlapped = t.DataComm(2);
  EXPECT_LT(overlapped, exposed);
  EXPECT_GT(overlapped, 0.0);
}

// Two layers of hidden 8192 (64 heads of 128, SwiGLU 28,672: Llama-2-70B's
// shape without its grouped keys) on 8 H100s at tp 2, one micro-batch of
// 4,096 tokens, 16-bit.
struct TensorSetup : StepSetup {
  TensorSetup()
      : StepSetup(
            "transformer:layers=2,hidden=8192,heads=64,ffn=28672,vocab=32000,norm=rms,gated=1",
            "h100", 8, 4096) {
    split.tp = 2;
    split.dp = 4;
    split.global_batch = 4;
    split.micro_batch = 1;
  }
};

TEST(TensorParallelBackward, InputGradientReductionHidesBehindTheWeightGradient) {
  // Megatron's backward all-reduces the column-parallel projections' input
  // gradients while their weight gradients are computed. Here that product
  // (QKV: 2 x 4096 x 8192 x 12288 FLOPs = 0.82 TFLOP, about 1 ms on an
  // H100) is far longer than the all-reduce of 2 x 4096 x 8192 bytes over
  // 2 GPUs on NVLink (2 (n-1)/n x 67 MB / 450 GB/s = 0.15 ms), so the
  // backward waits for none of it: a layer's tensor-parallel time is its two
  // forward all-reduces.
  TensorSetup t;
  const double bytes = 2.0 * 4096 * 8192;
  const double B = t.cluster.intra.bandwidth_bytes_per_s, a = t.cluster.intra.latency_s;
  const double all_reduce = bytes / B + 2 * a;  // n = 2: 2 (n-1)/n = 1
  EXPECT_NEAR(t.Parts().tensor_comm_s, 2 * 2 * all_reduce, 1e-12);
  // Sequence parallel: forward, an all-gather before each input projection
  // and a reduce-scatter after each output one (4 x half the all-reduce);
  // backward, the output projections' gradients gathered (waited for, 2),
  // their inputs gathered again beside the input-gradient products and the
  // input gradients reduce-scattered beside the weight-gradient products
  // (both hidden here).
  t.split.sequence_parallel = true;
  EXPECT_NEAR(t.Parts().tensor_comm_s, 2 * (4 + 2) * (all_reduce / 2), 1e-12);
}

TEST(TensorParallelOverlap, UserbuffersAsTransformerEngineConfiguresThem) {
  // Transformer Engine's userbuffers defaults (initialize_ub's
  // get_default_config), tp = 2 on H100s (132 SMs):
  // - ring exchange (the column products' input all-gathers forward, the row
  //   products' output-gradient all-gathers backward): 2 chunks on the copy
  //   engines, c beside p leaves max(0, c - p) + min(c, p) / 2;
  // - pipeline (the row products' reduce-scatters forward): 16 SMs taken, the
  //   product p' = p x 132 / 116, 4 chunks: (p' - p) + max(0, c - p') +
  //   min(c, p') / 4;
  // - bulk (the column products' input re-gather beside the input gradient,
  //   the input gradient's reduce-scatter beside the weight gradient):
  //   max(0, c - p), as NCCL's overlap of the same collectives is counted.
  // The products are the layer's own (TimeLayer); every collective here is a
  // gather of 2 x 4096 x 8192 bytes over 2 GPUs, half the all-reduce above.
  TensorSetup t;
  t.split.sequence_parallel = true;
  const double bytes = 2.0 * 4096 * 8192;
  const double B = t.cluster.intra.bandwidth_bytes_per_s, a = t.cluster.intra.latency_s;
  const LayerShape shape = MakeLayerShape(t.model, 4096, 1, 2, 1);
  const LayerTimes lt =
      TimeLayer(shape, MakeKernelTimer(t.device, MatrixFormat::k16, LlmCalibration{}), t.training,
                /*sequence_parallel=*/true);
  const double m = 132.0 / 116.0;
  // A layer's exposed tensor-parallel time for gathers of c seconds.
  const auto layer = [&](double c) {
    double sum = 0;
    for (int side = 0; side < 2; ++side) {
      const LayerTimes::LinearTimes& col = lt.column[side];
      const LayerTimes::LinearTimes& row = lt.row[side];
      const auto ring = [&](double p) { return std::max(0.0, c - p) + std::min(c, p) / 2; };
      const auto pipeline = [&](double p) {
        return (m - 1) * p + std::max(0.0, c - m * p) + std::min(c, m * p) / 4;
      };
      const auto bulk = [&](double p) { return std::max(0.0, c - p); };
      sum += ring(col.forward_s) + pipeline(row.forward_s) + ring(row.dgrad_s) + bulk(col.wgrad_s) +
             bulk(col.dgrad_s);
    }
    return sum;
  };
  const double gather = (bytes / B + 2 * a) / 2;
  EXPECT_NEAR(t.Parts().tensor_comm_s, 2 * (4 + 2) * gather, 1e-12);  // not overlapped
  t.split.tp_comm_overlap = true;
  EXPECT_NEAR(t.Parts().tensor_comm_s, 2 * layer(gather), 1e-12);
  // Every product here (0.40 to 2.8 ms) is longer than a gather (0.080 ms):
  // the four ring exchanges leave half a gather each (0.16 ms), the two
  // pipelined reduce-scatters a quarter each plus what 16 SMs fewer cost the
  // output projection and the last feed-forward product (16/116 of 0.40 and
  // 1.41 ms: 0.056 and 0.194 ms), the bulk ones nothing: 0.449 ms a layer
  // against the 0.477 ms of six gathers waited for without the overlap.
  EXPECT_NEAR(layer(gather), 0.449e-3, 0.001e-3);
  EXPECT_NEAR(6 * gather, 0.477e-3, 0.001e-3);
  // A link 1,000 times slower: every collective longer than its product.
  t.cluster.intra.bandwidth_bytes_per_s = B / 1000;
  const double slow = (bytes / (B / 1000) + 2 * a) / 2;
  ASSERT_GT(slow, m * lt.column[0].wgrad_s);
  EXPECT_NEAR(t.Parts().tensor_comm_s, 2 * layer(slow), 1e-9 * slow);
  // Megatron refuses it without sequence parallelism; FSDP2 has none.
  t.split.sequence_parallel = false;
  EXPECT_THROW(t.Parts(), UsageError);
  t.split.sequence_parallel = true;
  t.training.framework = "fsdp2";
  ApplyLlmFramework(t.training, "bf16");
  EXPECT_THROW(t.Parts(), UsageError);
}

TEST(TensorParallelBackward, FrozenWeightsHaveNoWeightGradientToHideBehind) {
  // LoRA's frozen base (Megatron's LinearWithFrozenWeight) computes no weight
  // gradient: the column-parallel projections' backward has its input
  // gradient's product alone, so TensorCommSplit finds nothing to hide their
  // reduction behind and gathers no input again.
  TensorSetup t;
  t.training.lora_rank = 16;
  const LayerShape shape = MakeLayerShape(t.model, 4096, 1, 2, 1);
  const LayerTimes lt = TimeLayer(shape, MakeKernelTimer(t.device, MatrixFormat::k16, {}),
                                  t.training, /*sequence_parallel=*/false);
  EXPECT_EQ(lt.column[0].wgrad_s, 0.0);
  EXPECT_EQ(lt.column[1].wgrad_s, 0.0);
  EXPECT_GT(lt.column[0].dgrad_s, 0.0);
  // Trained weights: both backward products of both projections.
  t.training.lora_rank = 0;
  const LayerTimes trained =
      TimeLayer(shape, MakeKernelTimer(t.device, MatrixFormat::k16, {}), t.training, false);
  EXPECT_GT(trained.column[0].wgrad_s, 0.0);
  EXPECT_GT(trained.column[1].wgrad_s, 0.0);
}

// The rate KernelTimer gives one product of m x n x k in `format` on the
// device, FLOP/s, with no calibration.
double ModeledRate(const Device& d, MatrixFormat format, double m, double n, double k) {
  const KernelTimer t = MakeKernelTimer(d, format, LlmCalibration{});
  return 2.0 * m * n * k / t.Gemm(m, n, k);
}

TEST(AchievableMatmul, NoModeledProductIsFasterThanTheDevicesMeasuredBest) {
  // Every catalog device with a published maximum achievable matmul rate
  // (its file's "achievable_matmul": mamf-finder's best over shapes): the
  // LLM step times no product faster, at that shape or a larger one, in
  // 16 bits or FP8.
  int devices = 0;
  for (const std::string& name : CatalogDeviceNames()) {
    const Device d = LoadDevice(name);
    for (const auto& [format, a] : {std::pair{MatrixFormat::k16, d.achievable16},
                                    std::pair{MatrixFormat::kFp8, d.achievable_fp8}}) {
      if (a.flops_per_s <= 0) continue;
      ++devices;
      for (double scale : {1.0, 2.0, 4.0}) {
        EXPECT_LE(ModeledRate(d, format, a.m * scale, a.n * scale, a.k * scale),
                  a.flops_per_s * (1 + 1e-12))
            << name << " " << MatrixFormatName(format) << " at x" << scale;
      }
    }
  }
  EXPECT_GE(devices, 20);  // 13 devices' 16-bit rows, 7 FP8 rows
}

TEST(AchievableMatmul, MeasuredCeilingBindsWhereTheCarriedCurveIsAboveIt) {
  // The MI300X carries the V100's tensor curve at 69.4% of its 1,307.4
  // TFLOPS (907 TFLOPS) while mamf-finder measured at most 781.9 TFLOPS at
  // 4096 x 10240 x 4864: a product that large runs at the measured rate
  // (within 0.1%: the curve's own shape term is just under it there), and
  // one of 4x each dimension exactly at it. The A100's curve (81.7% of 312 =
  // 254.8 TFLOPS) stays below its 271.2 and is left alone.
  const Device mi300x = LoadDevice("mi300x");
  EXPECT_NEAR(ModeledRate(mi300x, MatrixFormat::k16, 4096, 10240, 4864), 781.9e12, 0.8e12);
  EXPECT_NEAR(ModeledRate(mi300x, MatrixFormat::k16, 16384, 40960, 19456), 781.9e12, 1e9);
  Device uncapped = mi300x;
  uncapped.achievable16 = {};
  EXPECT_GT(ModeledRate(uncapped, MatrixFormat::k16, 16384, 40960, 19456), 850e12);
  const Device a100 = LoadDevice("a100");
  EXPECT_LT(ModeledRate(a100, MatrixFormat::k16, 16384, 40960, 20480), 271.2e12);
}

TEST(AchievableMatmul, DeviceFileRefusesARateAboveThePeak) {
  std::string text = CatalogDeviceJson("mi300x");
  const std::string from = "\"flops_per_s\": 781900000000000.0";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"flops_per_s\": 2e15");
  try {
    ParseDeviceJson(text, "mi300x.json");
    ADD_FAILURE() << "accepted a rate above the 16-bit peak";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("achievable_matmul.bf16.flops_per_s"), std::string::npos)
        << e.what();
  }
}

// Three accelerators of one publisher each, ten rows apiece, with
// ln(measured / predicted) of 0.00-0.09 (x), 0.10-0.19 (y) and 0.20-0.29 (z).
std::vector<LlmCalibrationTable::DevelopmentError> ThreeAcceleratorRows() {
  std::vector<LlmCalibrationTable::DevelopmentError> rows;
  const char* names[] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    for (int i = 0; i < 10; ++i) {
      rows.push_back({{std::string("P") + names[a], "row", 0.1 * a + 0.01 * i},
                      names[a],
                      a == 2 ? "jax" : "nemo"});
    }
  }
  return rows;
}

TEST(LlmLeaveOut, IntervalOfTheOtherAcceleratorsAndItsCoverageByHand) {
  // Leaving z out, the interval is built from x's and y's 20 rows (weights
  // equal): order statistics k_lo = floor(21 x 0.1) = 2 and k_hi = ceil(21 x
  // 0.9) = 19, so exp(0.01) to exp(0.18); none of z's rows is inside. Left
  // out, x meets [0.11, 0.28] and holds none; y meets [0.01, 0.28] and holds
  // all ten. Publishers weighted equally: (0 + 1 + 0) / 3.
  const auto rows = ThreeAcceleratorRows();
  const PredictionInterval z = LlmLeaveOutInterval(rows, LlmLeaveOut::kAccelerator, "z", 0.8);
  ASSERT_TRUE(z.available);
  EXPECT_EQ(z.cases, 20);
  EXPECT_NEAR(std::log(z.low_factor), 0.01, 1e-12);
  EXPECT_NEAR(std::log(z.high_factor), 0.18, 1e-12);
  EXPECT_NE(z.basis.find("accelerator z left out"), std::string::npos) << z.basis;
  const LlmLeaveOutCoverage c = LlmLeaveOutCoverageOf(rows, LlmLeaveOut::kAccelerator, 0.8);
  EXPECT_EQ(c.values, 3);
  EXPECT_EQ(c.rows, 30);
  EXPECT_NEAR(c.coverage, 1.0 / 3.0, 1e-12);
  // By framework: z is the only "jax" row set; leaving "nemo" out leaves one
  // publisher, too few for an interval, so only "jax" is checked (0 held).
  const LlmLeaveOutCoverage f = LlmLeaveOutCoverageOf(rows, LlmLeaveOut::kFramework, 0.8);
  EXPECT_EQ(f.values, 1);
  EXPECT_NEAR(f.coverage, 0.0, 1e-12);
  // The widening found holds the level, the step below it does not.
  const double w = LlmLeaveOutWidening(rows, LlmLeaveOut::kAccelerator, 0.8);
  EXPECT_GE(LlmLeaveOutCoverageOf(rows, LlmLeaveOut::kAccelerator, 0.8, w).coverage, 0.8 - 1e-12);
  if (w > 1.0) {
    EXPECT_LT(LlmLeaveOutCoverageOf(rows, LlmLeaveOut::kAccelerator, 0.8, w - 0.05).coverage, 0.8);
  }
}

TEST(LlmLeaveOut, CalibrationTableCarriesTheRowsThroughItsJson) {
  LlmCalibrationTable t;
  t.device = "a100";
  t.calibration.source = "test";
  t.held_out = {{"vtrain/2-gpu fold", "a:1", 0.1}, {"vtrain/4-gpu fold", "a:2", -0.1}};
  t.development = ThreeAcceleratorRows();
  t.accelerator_widening = 1.35;
  const LlmCalibrationTable back = ParseLlmCalibrationJson(LlmCalibrationToJson(t), "t.json");
  ASSERT_EQ(back.development.size(), 30u);
  EXPECT_EQ(back.development[25].device, "z");
  EXPECT_EQ(back.development[25].framework, "jax");
  EXPECT_EQ(back.development[25].error.source, "Pz");
  EXPECT_NEAR(back.development[25].error.log_ratio, 0.25, 1e-15);
  EXPECT_EQ(back.accelerator_widening, 1.35);
  std::string bad = LlmCalibrationToJson(t);
  bad.replace(bad.find("\"accelerator_widening\": 1.35"), 29, "\"accelerator_widening\": 0.5");
  EXPECT_THROW(ParseLlmCalibrationJson(bad, "t.json"), DataError);
}

TEST(LlmLeaveOut, ADeviceOtherThanTheCalibrationsGetsTheOtherAcceleratorsInterval) {
  // The compiled-in table: the h200's interval leaves the h200's own rows out
  // and says so; the a100's is vTrain's folds.
  const LlmCalibrationTable& t = BuiltinLlmCalibration();
  ASSERT_FALSE(t.development.empty());
  const PredictionInterval h200 = LlmInterval(LoadDevice("h200"), 0.8);
  ASSERT_TRUE(h200.available);
  EXPECT_NE(h200.basis.find("accelerator h200 left out"), std::string::npos) << h200.basis;
  EXPECT_LT(h200.low_factor, 1.0);
  EXPECT_GT(h200.high_factor, 1.0);
  const PredictionInterval a100 = LlmInterval(LoadDevice("a100"), 0.8);
  EXPECT_NE(a100.basis.find("vTrain"), std::string::npos) << a100.basis;
}

TEST(CudaGraphs, ALayersPassIsOneLaunchNotOneDispatchPerKernel) {
  // A 4-layer GPT of hidden 512 on one H100 at 256 tokens: its kernels are
  // short, so each pass is held to the host's dispatch (kernels x d). With
  // each layer captured as a CUDA graph the host launches one graph a pass:
  // the pass takes max(device time, d). The difference in compute is, over
  // the 4 layers, [max(f, n_f d) - max(f, d)] + [max(b, n_b d) - max(b, d)].
  StepSetup t("transformer:layers=4,hidden=512,heads=8,ffn=2048,vocab=1000,norm=rms,gated=0",
              "h100", 1, 256);
  const TransformerConfig& m = t.model;
  const Device& h100 = t.device;
  const LlmCluster& c = t.cluster;
  LlmTraining& tr = t.training;
  const LlmSplit& s = t.split;
  const LlmCalibration cal = LlmCalibrationFor(h100);
  const double eager = ModelLlmStep(m, c, tr, s, cal).parts.compute_s;
  tr.cuda_graphs = true;
  const double graphed = ModelLlmStep(m, c, tr, s, cal).parts.compute_s;
  const LayerTimes lt = TimeLayer(MakeLayerShape(m, 256, 1, 1, 1),
                                  MakeKernelTimer(h100, MatrixFormat::k16, cal), tr, false);
  const double d = cal.dispatch_s;
  ASSERT_GT(lt.forward_kernels * d, lt.forward_gpu_s);  // host-bound without graphs
  const double by_hand =
      4 * (std::max(lt.forward_gpu_s, lt.forward_kernels * d) - std::max(lt.forward_gpu_s, d) +
           std::max(lt.backward_gpu_s, lt.backward_kernels * d) - std::max(lt.backward_gpu_s, d));
  EXPECT_NEAR(eager - graphed, by_hand, 1e-12);
  EXPECT_GT(by_hand, 0.0);
}

}  // namespace
}  // namespace fitspeed
