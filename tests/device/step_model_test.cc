// The roofline step model against hand calculations, padding, memory capacity,
// multi-device all-reduce, and the modeled samples fitted by the law.
#include "fitspeed/device/step_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

// A device with flat efficiencies so that times are easy to compute by hand:
// 10 TFLOPS FP32, 80 TFLOPS FP16, 1 TB/s, compute efficiency 0.5, memory
// efficiency 0.8, 10 us per kernel, 1 ms per step, 8 GiB.
Device TestDevice() {
  return ParseDeviceJson(R"({
  "schema": "fitspeed.device/1", "name": "test-gpu", "kind": "gpu",
  "cores": {"value": 1, "source": "test"},
  "peak_flops_per_s": {"fp32": {"value": 10e12, "source": "test"},
                       "tensor16": {"value": 80e12, "type": "fp16", "source": "test"}},
  "memory": {"bandwidth_bytes_per_s": {"value": 1e12, "source": "test"},
             "capacity_bytes": {"value": 8589934592, "source": "test"}},
  "efficiency": {"compute": {"points": [[1e6, 0.5]], "source": "test"},
                 "memory": {"points": [[1e6, 0.8]], "source": "test"}},
  "overheads": {"kernel_launch_s": {"value": 1e-5, "source": "test"},
                "step_host_s": {"value": 1e-3, "source": "test"}},
  "tiles": {"batch_multiple": {"value": 1, "source": "test"},
            "feature_multiple_fp32": {"value": 1, "source": "test"},
            "feature_multiple_tensor": {"value": 8, "source": "test"}},
  "links": [{"name": "nvlink", "connects": "devices",
             "bandwidth_bytes_per_s": {"value": 100e9, "source": "test"},
             "latency_s": {"value": 5e-6, "source": "test"}}]})",
                         "test-gpu.json");
}

// input {1024} -> dense 1024 (no bias) -> relu -> dense 10 -> loss.
Network DenseNet(int64_t features = 1024, int64_t units = 1024) {
  Network net("dense-relu", Shape::Vector(features));
  DenseAttrs big;
  big.units = units;
  big.bias = false;
  DenseAttrs head;
  head.units = 10;
  net.SoftmaxCrossEntropy(net.Dense(net.Relu(net.Dense("input", big, "big")), head, "head"));
  net.Finalize();
  return net;
}

const LayerTime& Layer(const ModeledStep& step, const std::string& name) {
  for (const LayerTime& t : step.layers) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no layer " << name;
  return step.layers.front();
}

const PassTime& Forward(const LayerTime& t) {
  return t.passes[static_cast<size_t>(Pass::kForward)];
}

// ModelSweep doubled from 1 to max_batch: at 2^62 the batch overflowed int64
// and the list grew until memory ran out.
TEST(StepModel, BatchesAboveTheMaximumAreRefusedNamingTheField) {
  DeviceModelOptions options;
  options.max_batch = int64_t{1} << 62;
  try {
    ValidateDeviceModelOptions(options);
    FAIL() << "max_batch = 2^62 accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("DeviceModelOptions.max_batch = "
                                               "4611686018427387904: must be in [1, 1073741824]"));
  }
  options.max_batch = kMaxSweepBatch;
  EXPECT_NO_THROW(ValidateDeviceModelOptions(options));
  options.batches = {kMaxSweepBatch + 1};
  EXPECT_THROW(ValidateDeviceModelOptions(options), UsageError);
}

TEST(StepModel, ComputeBoundDenseLayerMatchesHandCalculation) {
  const ModeledStep step = ModelStep(DenseNet(), TestDevice(), 256);
  const PassTime& p = Forward(Layer(step, "big"));
  // FLOPs = 2*b*in*out = 2*256*1024*1024 = 536,870,912.
  EXPECT_DOUBLE_EQ(p.flops, 536870912.0);
  // compute = 5.36870912e8 / (10e12 * 0.5) = 1.073741824e-4 s.
  EXPECT_NEAR(p.compute_s, 1.073741824e-4, 1e-15);
  // bytes = 4*(256*1024 in + 1024*1024 weights + 256*1024 out) = 6,291,456;
  // memory = 6291456 / (1e12 * 0.8) = 7.86432e-6 s: compute-bound.
  EXPECT_DOUBLE_EQ(p.bytes, 6291456.0);
  EXPECT_NEAR(p.memory_s, 7.86432e-6, 1e-17);
  EXPECT_FALSE(p.memory_bound());
  // time = max(...) + 10 us launch = 1.173741824e-4 s.
  EXPECT_NEAR(p.time_s, 1.173741824e-4, 1e-15);
  EXPECT_FALSE(Layer(step, "big").memory_bound());
}

TEST(StepModel, ShapeTermSlowsSmallMatrixDimensionsByHand) {
  // The dense layer above with the compute curve's half_dim 64: its matrix
  // product is {256 rows, 1024 out, 1024 in}, shape term 256/320 x
  // (1024/1088)^2 = 0.8 x 0.885813... = 0.708650...; compute = 1.073741824e-4 /
  // 0.708650... = 1.515193...e-4 s, in every pass (the term is symmetric).
  Device d = TestDevice();
  d.compute_efficiency.half_dim = 64;
  const ModeledStep step = ModelStep(DenseNet(), d, 256);
  const LayerTime& big = Layer(step, "big");
  const double shape = 0.8 * (1024.0 / 1088) * (1024.0 / 1088);
  EXPECT_NEAR(Forward(big).compute_s, 1.073741824e-4 / shape, 1e-15);
  EXPECT_NEAR(big.passes[static_cast<size_t>(Pass::kBackwardWeights)].compute_s,
              1.073741824e-4 / shape, 1e-15);
  // The head's {256, 10, 1024}: 0.8 x 10/74 x 1024/1088 of the curve; its
  // FLOPs 2*256*1024*10 + 256*10 for the bias = 5,245,440.
  const PassTime& head = Forward(Layer(step, "head"));
  EXPECT_DOUBLE_EQ(head.flops, 5245440.0);
  EXPECT_NEAR(head.compute_s, 5245440.0 / (10e12 * 0.5 * 0.8 * (10.0 / 74) * (1024.0 / 1088)),
              1e-18);
  // Element-wise work has no shape term.
  EXPECT_EQ(Forward(Layer(ModelStep(DenseNet(), TestDevice(), 256), "relu_2")).compute_s,
            Forward(Layer(step, "relu_2")).compute_s);
}

TEST(StepModel, MemoryBoundReluMatchesHandCalculation) {
  const ModeledStep step = ModelStep(DenseNet(), TestDevice(), 256);
  const PassTime& p = Forward(Layer(step, "relu_2"));
  // One max per element: 256*1024 = 262,144 FLOPs; compute = 262144/(10e12*0.5)
  // = 5.24288e-8 s. Bytes: read and write 262,144 floats = 2,097,152 B;
  // memory = 2097152/(1e12*0.8) = 2.62144e-6 s: memory-bound.
  EXPECT_DOUBLE_EQ(p.flops, 262144.0);
  EXPECT_NEAR(p.compute_s, 5.24288e-8, 1e-19);
  EXPECT_NEAR(p.memory_s, 2.62144e-6, 1e-17);
  EXPECT_TRUE(p.memory_bound());
  EXPECT_NEAR(p.time_s, 2.62144e-6 + 1e-5, 1e-17);
  EXPECT_TRUE(Layer(step, "relu_2").memory_bound());
}

TEST(StepModel, MixedPrecisionUsesTensorPeakAndHalfTheBytes) {
  DeviceModelOptions options;
  options.precision = Precision::kMixed;
  const ModeledStep step = ModelStep(DenseNet(), TestDevice(), 256, options);
  const PassTime& p = Forward(Layer(step, "big"));
  // compute = 5.36870912e8 / (80e12 * 0.5) = 1.34217728e-5 s; bytes with
  // 2-byte activations and weight copies: 3,145,728 B.
  EXPECT_NEAR(p.compute_s, 1.34217728e-5, 1e-16);
  EXPECT_DOUBLE_EQ(p.bytes, 3145728.0);
  // The optimizer updates FP32 master weights (SGD momentum: read w g m, write
  // w m = 5 floats = 20 B per parameter) and writes the FP16 copy (read 4,
  // write 2): 26 B per parameter, 1024*1024 parameters.
  const PassTime& update = Layer(step, "big").passes[static_cast<size_t>(Pass::kUpdate)];
  EXPECT_DOUBLE_EQ(update.bytes, 26.0 * 1024 * 1024);
  EXPECT_TRUE(update.memory_bound());
}

// input {256} -> dense 256 (no bias) -> layer_norm -> dense 10 -> loss: the
// layer norm has a backward-data pass (the dense before it needs dx).
Network LayerNormNet() {
  Network net("dense-layernorm", Shape::Vector(256));
  DenseAttrs hidden;
  hidden.units = 256;
  hidden.bias = false;
  DenseAttrs head;
  head.units = 10;
  net.SoftmaxCrossEntropy(
      net.Dense(net.LayerNorm(net.Dense("input", hidden, "hidden"), {}, "ln"), head, "head"));
  net.Finalize();
  return net;
}

TEST(StepModel, AmpKeepsLayerNormInFp32WithCastsAroundItByHand) {
  DeviceModelOptions options;
  options.precision = Precision::kMixed;
  const ModeledStep step = ModelStep(LayerNormNet(), TestDevice(), 1024, options);
  const LayerTime& ln = Layer(step, "ln");
  const PassTime& fw = Forward(ln);
  // At batch 1024 the forward reads x (256 per sample) and writes y (256) in
  // FP32, and reads gamma and beta (512) in FP32:
  //   4 * (256 + 256) * 1024 + 4 * 512 = 2,097,152 + 2,048 = 2,099,200 bytes
  // (in FP16 it would be 1,049,600).
  EXPECT_DOUBLE_EQ(fw.bytes, 2099200.0);
  // Two casts, x up (read 2, write 4) and y down (read 4, write 2): 6 bytes
  // per element each, 6 * 256 * 1024 = 1,572,864 bytes, 1.96608e-6 s at
  // 1 TB/s * 0.8, plus 10 us of launch each.
  EXPECT_DOUBLE_EQ(fw.cast_bytes, 2 * 1572864.0);
  EXPECT_EQ(fw.cast_kernels, 2);
  EXPECT_NEAR(fw.cast_memory_s, 3.93216e-6, 1e-17);
  EXPECT_NEAR(fw.cast_s, 2.393216e-5, 1e-16);
  EXPECT_NEAR(fw.time_s, std::max(fw.compute_s, fw.memory_s) + fw.launch_s + fw.cast_s, 1e-16);
  // Backward-data casts dy up and dx down: the same bytes; backward-weights
  // (dgamma, dbeta) reads what is already FP32: no casts.
  const PassTime& bwd = ln.passes[static_cast<size_t>(Pass::kBackwardData)];
  EXPECT_DOUBLE_EQ(bwd.cast_bytes, 2 * 1572864.0);
  EXPECT_EQ(ln.passes[static_cast<size_t>(Pass::kBackwardWeights)].cast_kernels, 0);
  // The dense layers run in FP16 without casts of their own.
  for (const PassTime& p : Layer(step, "hidden").passes) EXPECT_EQ(p.cast_kernels, 0);
  // The step's cast time is the sum over the layers (the loss is one too).
  double casts = 0;
  for (const LayerTime& t : step.layers) {
    for (const PassTime& p : t.passes) casts += p.cast_s;
  }
  EXPECT_NEAR(step.cast_s, casts, 1e-15);
  EXPECT_GT(Forward(Layer(step, "softmax_cross_entropy_4")).cast_kernels, 0);

  // FP32 and TF32 steps have nothing to cast.
  options.precision = Precision::kFp32;
  const ModeledStep fp32 = ModelStep(LayerNormNet(), TestDevice(), 1024, options);
  EXPECT_DOUBLE_EQ(fp32.cast_s, 0);
  EXPECT_DOUBLE_EQ(Forward(Layer(fp32, "ln")).bytes, 2099200.0);
}

TEST(StepModel, RowNormalizingLayersRunAtTheNormalizationMemoryCurveByHand) {
  // TestDevice() with a normalization curve of its own, flat at 0.4 (the
  // element-wise curve is flat at 0.8).
  Device device = TestDevice();
  device.normalization_memory_efficiency.points = {{1e6, 0.4}};
  const ModeledStep step = ModelStep(LayerNormNet(), device, 1024);
  const LayerTime& ln = Layer(step, "ln");
  // Forward: 2,099,200 bytes (AmpKeepsLayerNormInFp32WithCastsAroundItByHand)
  // at 1 TB/s * 0.4 = 5.248e-6 s, twice what the element-wise curve gives.
  EXPECT_DOUBLE_EQ(Forward(ln).bytes, 2099200.0);
  EXPECT_NEAR(Forward(ln).memory_s, 5.248e-6, 1e-18);
  // Backward-data at the same curve: its bytes / (1e12 * 0.4).
  const PassTime& bwd = ln.passes[static_cast<size_t>(Pass::kBackwardData)];
  EXPECT_NEAR(bwd.memory_s, bwd.bytes / 0.4e12, 1e-18);
  // The optimizer's update of gamma and beta is element-wise (0.8).
  const PassTime& update = ln.passes[static_cast<size_t>(Pass::kUpdate)];
  ASSERT_GT(update.bytes, 0);
  EXPECT_NEAR(update.memory_s, update.bytes / 0.8e12, 1e-18);
  // The loss (softmax cross-entropy) is row-normalizing too; the dense
  // layers' memory terms stay element-wise.
  const PassTime& loss = Forward(Layer(step, "softmax_cross_entropy_4"));
  EXPECT_NEAR(loss.memory_s, loss.bytes / 0.4e12, 1e-18);
  const PassTime& dense = Forward(Layer(step, "hidden"));
  EXPECT_NEAR(dense.memory_s, dense.bytes / 0.8e12, 1e-18);
  // Without a normalization curve every memory term is element-wise.
  const ModeledStep plain = ModelStep(LayerNormNet(), TestDevice(), 1024);
  EXPECT_NEAR(Forward(Layer(plain, "ln")).memory_s, 2.624e-6, 1e-18);
  EXPECT_TRUE(NormalizesRows(LayerKind::kLayerNorm));
  EXPECT_TRUE(NormalizesRows(LayerKind::kRmsNorm));
  EXPECT_TRUE(NormalizesRows(LayerKind::kSoftmax));
  EXPECT_TRUE(NormalizesRows(LayerKind::kSoftmaxCrossEntropy));
  EXPECT_FALSE(NormalizesRows(LayerKind::kBatchNorm));
  EXPECT_FALSE(NormalizesRows(LayerKind::kRelu));
}

DenseAttrs TenWayHead() {
  DenseAttrs head;
  head.units = 10;
  return head;
}

// input {16, 8, 8} -> conv 1x1 -> bn1 -> relu1 -> conv 1x1 -> bn2 -> add(bn2,
// relu1) -> relu -> global pool -> dense 10 -> loss: a residual block.
Network ResidualNet() {
  Network net("residual", Shape::Chw(16, 8, 8));
  Conv2dAttrs conv;
  conv.out_channels = 16;
  conv.bias = false;
  const std::string relu1 =
      net.Relu(net.BatchNorm(net.Conv2d("input", conv, "c1"), {}, "bn1"), {}, "relu1");
  const std::string bn2 = net.BatchNorm(net.Conv2d(relu1, conv, "c2"), {}, "bn2");
  const std::string out = net.Relu(net.Add({bn2, relu1}, "add"), {}, "out");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(out), TenWayHead(), "head"));
  net.Finalize();
  return net;
}

TEST(StepModel, BatchNormFusionByHand) {
  const Network net = ResidualNet();
  const auto id = [&net](const std::string& name) {
    for (int i = 0; i < net.size(); ++i) {
      if (net.layer(i).name == name) return static_cast<size_t>(i);
    }
    ADD_FAILURE() << name;
    return size_t{0};
  };
  const std::vector<FusedRole> roles = FusedRoles(net, ElementwiseFusion::kBatchNormReluAdd);
  // relu1 reads bn1, which nothing else reads; the add reads bn2 (read by it
  // alone) and is read by one ReLU; relu1's two readers do not matter.
  EXPECT_EQ(roles[id("relu1")], FusedRole::kReluIntoBn);
  EXPECT_EQ(roles[id("add")], FusedRole::kAddIntoBn);
  EXPECT_EQ(roles[id("out")], FusedRole::kReluIntoBnAdd);
  EXPECT_EQ(roles[id("bn1")], FusedRole::kNone);
  for (const FusedRole role : FusedRoles(net, ElementwiseFusion::kNone)) {
    EXPECT_EQ(role, FusedRole::kNone);
  }

  DeviceModelOptions options;
  options.fusion = ElementwiseFusion::kBatchNormReluAdd;
  const ModeledStep fused = ModelStep(net, TestDevice(), 4, options);
  const ModeledStep plain = ModelStep(net, TestDevice(), 4);
  // One tensor of the block at batch 4 in FP32: 16 * 8 * 8 * 4 * 4 = 16,384
  // bytes, 2.048e-8 s at 1 TB/s * 0.8.
  const auto pass = [](const ModeledStep& step, const std::string& name, Pass p) {
    return Layer(step, name).passes[static_cast<size_t>(p)];
  };
  // relu1: nothing in the forward pass; its output read once for the mask in
  // the backward pass (unfused: read dy and y, write dx, three tensors). It
  // has two readers (c2 and the add), whose gradients are summed by a kernel
  // of its own either way (read 2, write 1): 4 tensors fused, 6 unfused.
  EXPECT_DOUBLE_EQ(pass(fused, "relu1", Pass::kForward).bytes, 0);
  EXPECT_DOUBLE_EQ(pass(fused, "relu1", Pass::kForward).time_s, 0);
  EXPECT_EQ(pass(fused, "relu1", Pass::kForward).kernels, 0);
  EXPECT_DOUBLE_EQ(pass(fused, "relu1", Pass::kBackwardData).bytes, 4 * 16384.0);
  EXPECT_DOUBLE_EQ(pass(plain, "relu1", Pass::kBackwardData).bytes, 6 * 16384.0);
  EXPECT_EQ(pass(fused, "relu1", Pass::kBackwardData).kernels, 1);
  EXPECT_NEAR(pass(fused, "relu1", Pass::kBackwardData).time_s, 4 * 2.048e-8 + 1e-5, 1e-18);
  // The add reads its other input (unfused: two read, one written).
  EXPECT_DOUBLE_EQ(pass(fused, "add", Pass::kForward).bytes, 16384.0);
  EXPECT_NEAR(pass(fused, "add", Pass::kForward).time_s, 2.048e-8, 1e-20);
  EXPECT_DOUBLE_EQ(pass(plain, "add", Pass::kForward).bytes, 3 * 16384.0);
  // The ReLU after it (one reader): the mask read and the residual branch's
  // gradient written in the backward pass.
  EXPECT_DOUBLE_EQ(pass(fused, "out", Pass::kForward).bytes, 0);
  EXPECT_DOUBLE_EQ(pass(fused, "out", Pass::kBackwardData).bytes, 2 * 16384.0);
  EXPECT_NEAR(pass(fused, "out", Pass::kBackwardData).time_s, 4.096e-8, 1e-20);
  // They launch no kernel but relu1's gradient sum (10 us each unfused).
  for (const char* name : {"add", "out"}) {
    for (const PassTime& p : Layer(fused, name).passes) {
      EXPECT_EQ(p.kernels, 0) << name;
      EXPECT_DOUBLE_EQ(p.launch_s, 0) << name;
    }
  }
  for (const char* name : {"relu1", "add", "out"}) {
    EXPECT_EQ(Layer(fused, name).fused, roles[id(name)]);
  }
  EXPECT_EQ(pass(plain, "relu1", Pass::kForward).kernels, 1);
  // The step saves what the three layers' passes no longer take.
  double saved = 0;
  for (const char* name : {"relu1", "add", "out"}) {
    saved += Layer(plain, name).time_s() - Layer(fused, name).time_s();
  }
  EXPECT_NEAR(plain.compute_s - fused.compute_s, saved, 1e-15);
  EXPECT_GT(saved, 4 * 1e-5);  // at least the four launches

  // A batch norm read by two ReLUs fuses into neither; an add of two ReLUs is
  // not a batch norm's.
  Network fork("fork", Shape::Chw(16, 8, 8));
  const std::string bn = fork.BatchNorm("input", {}, "bn");
  const std::string r =
      fork.Relu(fork.Add({fork.Relu(bn, {}, "a"), fork.Relu(bn, {}, "b")}, "sum"), {}, "r");
  fork.SoftmaxCrossEntropy(fork.Dense(fork.GlobalAvgPool(r), TenWayHead(), "head"));
  fork.Finalize();
  for (const FusedRole role : FusedRoles(fork, ElementwiseFusion::kBatchNormReluAdd)) {
    EXPECT_EQ(role, FusedRole::kNone);
  }
  // A clipped ReLU (ReLU6) is not one cuDNN's batch norm applies.
  Network six("relu6", Shape::Chw(16, 8, 8));
  ReluAttrs clip;
  clip.max_value = 6;
  const std::string r6 = six.Relu(six.BatchNorm("input", {}, "bn"), clip, "r6");
  six.SoftmaxCrossEntropy(six.Dense(six.GlobalAvgPool(r6), TenWayHead(), "head"));
  six.Finalize();
  for (const FusedRole role : FusedRoles(six, ElementwiseFusion::kBatchNormReluAdd)) {
    EXPECT_EQ(role, FusedRole::kNone);
  }
  EXPECT_EQ(ParseElementwiseFusion("bn-relu-add"), ElementwiseFusion::kBatchNormReluAdd);
  EXPECT_STREQ(ElementwiseFusionName(ElementwiseFusion::kNone), "none");
  EXPECT_THROW(ParseElementwiseFusion("xla"), UsageError);
}

TEST(StepModel, AmpOpListsFollowPyTorchAndTensorFlow) {
  // torch.amp: layer_norm, softmax and cross_entropy autocast to FP32, GELU
  // does not. TensorFlow's AMP: Mean (layer norm) and Pow (BERT's GELU) are
  // on the deny list, Softmax follows its input.
  for (const AmpOpList list : {AmpOpList::kPyTorch, AmpOpList::kTensorFlow}) {
    EXPECT_TRUE(RunsInFp32UnderAmp(LayerKind::kLayerNorm, list));
    EXPECT_TRUE(RunsInFp32UnderAmp(LayerKind::kRmsNorm, list));
    EXPECT_TRUE(RunsInFp32UnderAmp(LayerKind::kSoftmaxCrossEntropy, list));
    EXPECT_FALSE(RunsInFp32UnderAmp(LayerKind::kDense, list));
    EXPECT_FALSE(RunsInFp32UnderAmp(LayerKind::kBatchNorm, list));
    EXPECT_FALSE(RunsInFp32UnderAmp(LayerKind::kDropout, list));
  }
  EXPECT_TRUE(RunsInFp32UnderAmp(LayerKind::kSoftmax, AmpOpList::kPyTorch));
  EXPECT_FALSE(RunsInFp32UnderAmp(LayerKind::kSoftmax, AmpOpList::kTensorFlow));
  EXPECT_FALSE(RunsInFp32UnderAmp(LayerKind::kGelu, AmpOpList::kPyTorch));
  EXPECT_TRUE(RunsInFp32UnderAmp(LayerKind::kGelu, AmpOpList::kTensorFlow));
  EXPECT_EQ(ParseAmpOpList("tensorflow"), AmpOpList::kTensorFlow);
  EXPECT_STREQ(AmpOpListName(AmpOpList::kPyTorch), "pytorch");
  EXPECT_THROW(ParseAmpOpList("jax"), UsageError);
  EXPECT_EQ(AmpFp32KindNames(AmpOpList::kTensorFlow),
            "layer_norm, rms_norm, gelu, softmax_cross_entropy");

  // BERT-base in mixed precision: TensorFlow's list (GELU on 4x the hidden
  // width) casts more than PyTorch's (softmax on {heads, T, T} at 128 tokens).
  const Network bert = LoadNetwork("bert-base", ZooOptions{128});
  DeviceModelOptions options;
  options.precision = Precision::kMixed;
  const double pytorch = ModelStep(bert, TestDevice(), 32, options).cast_s;
  options.amp_ops = AmpOpList::kTensorFlow;
  const double tensorflow = ModelStep(bert, TestDevice(), 32, options).cast_s;
  EXPECT_GT(pytorch, 0);
  EXPECT_GT(tensorflow, pytorch);
}

TEST(StepModel, AmpNoneCastsNothingAndKeepsNormsIn16BitsByHand) {
  // The model cast to 16 bits whole (apex O2, model.half()): the layer norm of
  // AmpKeepsLayerNormInFp32WithCastsAroundItByHand reads and writes FP16,
  //   2 * (256 + 256) * 1024 + 2 * 512 = 1,049,600 bytes, and nothing is cast.
  DeviceModelOptions options;
  options.precision = Precision::kMixed;
  options.amp_ops = AmpOpList::kNone;
  const ModeledStep step = ModelStep(LayerNormNet(), TestDevice(), 1024, options);
  EXPECT_DOUBLE_EQ(Forward(Layer(step, "ln")).bytes, 1049600.0);
  EXPECT_DOUBLE_EQ(step.cast_s, 0);
  for (LayerKind kind : {LayerKind::kLayerNorm, LayerKind::kSoftmax, LayerKind::kGelu,
                         LayerKind::kSoftmaxCrossEntropy}) {
    EXPECT_FALSE(RunsInFp32UnderAmp(kind, AmpOpList::kNone));
  }
  EXPECT_EQ(ParseAmpOpList("none"), AmpOpList::kNone);
  EXPECT_STREQ(AmpOpListName(AmpOpList::kNone), "none");
  EXPECT_EQ(AmpFp32KindNames(AmpOpList::kNone), "");
  const DeviceSweepResult sweep = ModelSweep(LayerNormNet(), TestDevice(), [] {
    DeviceModelOptions o;
    o.precision = Precision::kMixed;
    o.amp_ops = AmpOpList::kNone;
    o.batches = {8};
    return o;
  }());
  EXPECT_FALSE(sweep.amp_casts);
}

TEST(StepModel, AModelCastTo16BitsWholeAllReducesHalfTheGradientBytesByHand) {
  // Two test GPUs over the 100 GB/s, 5 us link: the ring all-reduce of S
  // bytes takes 2 (n-1)/n S / bandwidth + 2 (n-1) latency (core/comm.h).
  // DenseNet's 1,048,576 + 10,250 trainable parameters: S = 4 bytes each
  // (FP32 gradients, autocast), 2 bytes with amp none.
  DeviceModelOptions options;
  options.precision = Precision::kMixed;
  options.devices = 2;
  const double params = 1048576 + 10250;
  const double fp32 = ModelStep(DenseNet(), TestDevice(), 256, options).comm_s;
  EXPECT_NEAR(fp32, 4 * params / 100e9 + 2 * 5e-6, 1e-12);
  options.amp_ops = AmpOpList::kNone;
  const double half = ModelStep(DenseNet(), TestDevice(), 256, options).comm_s;
  EXPECT_NEAR(half, 2 * params / 100e9 + 2 * 5e-6, 1e-12);
  EXPECT_DOUBLE_EQ(GradientBytesPerParameter(options), 2.0);
  options.precision = Precision::kFp32;  // FP32 weights: amp_ops does not apply
  EXPECT_DOUBLE_EQ(GradientBytesPerParameter(options), 4.0);
}

TEST(StepModel, Fp8RunsDenseProductsAtTheFp8PeakOnTheCarriedCurveWithCastsByHand) {
  // The test device with 160 TFLOPS of FP8 (twice its FP16) and a rising
  // tensor curve, so that reading it at F x 80/160 is not reading it at F.
  Device d = TestDevice();
  d.fp8_flops_per_s = 160e12;
  d.tensor_efficiency.points = {{1e6, 0.1}, {1e10, 0.5}};
  d = ParseDeviceJson(DeviceToJson(d), "fp8.json");
  DeviceModelOptions options;
  options.precision = Precision::kFp8;
  const ModeledStep step = ModelStep(DenseNet(), d, 256, options);
  const LayerTime& big = Layer(step, "big");
  const PassTime& fw = Forward(big);
  // 536,870,912 FLOPs at 160 TFLOPS and the curve read at half the FLOPs.
  const double flops = 536870912.0;
  const double eff = d.TensorEfficiency().At(flops * 0.5);
  ASSERT_LT(eff, d.TensorEfficiency().At(flops));
  EXPECT_NEAR(fw.compute_s, flops / (160e12 * eff), 1e-15);
  EXPECT_TRUE(fw.tensor_units);
  // Casts (read 2, write 1 + 1 bytes per element): the input, 256 x 1024
  // elements = 1,048,576 B, and the weight, 1024 x 1024 = 4,194,304 B;
  // 5,242,880 B at 1 TB/s x 0.8 = 6.5536e-6 s, plus 10 us per kernel.
  EXPECT_DOUBLE_EQ(fw.cast_bytes, 5242880.0);
  EXPECT_EQ(fw.cast_kernels, 2);
  EXPECT_NEAR(fw.cast_s, 6.5536e-6 + 2e-5, 1e-16);
  // Backward-data casts the output gradient (256 x 1024 x 4 B); the
  // weight-gradient product reads the transposes already made.
  const PassTime& bd = big.passes[static_cast<size_t>(Pass::kBackwardData)];
  EXPECT_DOUBLE_EQ(bd.cast_bytes, 1048576.0);
  EXPECT_EQ(bd.cast_kernels, 1);
  EXPECT_EQ(big.passes[static_cast<size_t>(Pass::kBackwardWeights)].cast_kernels, 0);
  // Element-wise layers run as in mixed precision: 2-byte tensors, no casts.
  DeviceModelOptions mixed = options;
  mixed.precision = Precision::kMixed;
  const ModeledStep m = ModelStep(DenseNet(), d, 256, mixed);
  EXPECT_DOUBLE_EQ(Forward(Layer(step, "relu_2")).time_s, Forward(Layer(m, "relu_2")).time_s);
  // Memory: mixed precision's plus the FP8 weights and their transposes of
  // the two dense layers, 2 x (1,048,576 + 10,250) bytes.
  EXPECT_DOUBLE_EQ(step.memory_bytes - m.memory_bytes, 2.0 * (1048576 + 10250));
  EXPECT_DOUBLE_EQ(MatrixPeakFlops(d, Precision::kFp8), 160e12);
  // A device without FP8 units refuses it, naming the device.
  try {
    ModelStep(DenseNet(), TestDevice(), 256, options);
    FAIL() << "fp8 modeled on a device without FP8 units";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("test-gpu has no FP8 tensor units"));
  }
}

TEST(StepModel, Fp8RunsOnTheDevicesOwnFp8CurveAtItsFlopsWhenItHasOne) {
  // The same device with an FP8 curve of its own (efficiency.fp8): the FP8
  // product is read on it at F itself; the 16-bit layers keep the tensor curve.
  Device d = TestDevice();
  d.fp8_flops_per_s = 160e12;
  d.tensor_efficiency.points = {{1e6, 0.1}, {1e10, 0.5}};
  d.fp8_efficiency.points = {{1e6, 0.05}, {1e10, 0.3}};
  d.sources["efficiency.fp8"] = "test";
  d = ParseDeviceJson(DeviceToJson(d), "fp8-curve.json");
  DeviceModelOptions options;
  options.precision = Precision::kFp8;
  const ModeledStep step = ModelStep(DenseNet(), d, 256, options);
  // 536,870,912 FLOPs: between (1e6, 0.05) and (1e10, 0.3), linear in log size:
  //   f = ln(536.870912) / ln(1e4) = 6.2857577 / 9.2103404 = 0.6824675
  //   eff = 0.05 + f x 0.25 = 0.2206169; t = 5.36870912e8 / (1.6e14 x 0.2206169) = 1.520937e-5 s
  EXPECT_NEAR(Forward(Layer(step, "big")).compute_s, 1.520937e-5, 1e-10);
  const Device::MatrixCurve fp8 = d.Fp8Matrix();
  EXPECT_EQ(fp8.curve, &d.fp8_efficiency);
  EXPECT_EQ(fp8.size_factor, 1.0);
  // Without its own curve: the tensor curve at F x 80/160.
  d.fp8_efficiency.points.clear();
  EXPECT_EQ(d.Fp8Matrix().curve, &d.tensor_efficiency);
  EXPECT_DOUBLE_EQ(d.Fp8Matrix().size_factor, 0.5);
}

TEST(StepModel, Fp8CoversAFusedAttentionCoreButNotAnUnfusedOneNorConvolutions) {
  Network net("conv", Shape::Chw(3, 8, 8));
  Conv2dAttrs conv;
  conv.out_channels = 8;
  conv.window.kernel_h = conv.window.kernel_w = 3;
  DenseAttrs fc;
  fc.units = 10;
  net.SoftmaxCrossEntropy(net.Dense(net.Flatten(net.Conv2d("input", conv, "c")), fc, "fc"));
  net.Finalize();
  for (const auto& layer : net.layers()) {
    EXPECT_EQ(RunsInFp8(layer, Precision::kFp8, AttentionKernel::kUnfused),
              layer.kind == LayerKind::kDense)
        << layer.name;
    EXPECT_FALSE(RunsInFp8(layer, Precision::kMixed, AttentionKernel::kFused));
  }
  struct Layer bmm;
  bmm.kind = LayerKind::kBatchedMatmul;
  EXPECT_TRUE(RunsInFp8(bmm, Precision::kFp8, AttentionKernel::kFused));
  EXPECT_FALSE(RunsInFp8(bmm, Precision::kFp8, AttentionKernel::kUnfused));
}

TEST(StepModel, TensorUnitWorkUsesTheTensorCurveInTf32AndMixed) {
  // The test device with a TF32 peak of 40 TFLOPS and a tensor-unit curve of
  // 0.25 (the compute curve stays 0.5).
  std::string text = DeviceToJson(TestDevice());
  Device d = ParseDeviceJson(text, "t.json");
  d.tf32_flops_per_s = 40e12;
  d.tensor_efficiency.points = {{1e6, 0.25}};
  d = ParseDeviceJson(DeviceToJson(d), "with-tensor.json");  // through the JSON field
  ASSERT_EQ(d.tensor_efficiency.points.size(), 1u);
  DeviceModelOptions options;
  options.precision = Precision::kTf32;
  const PassTime tf32 = Forward(Layer(ModelStep(DenseNet(), d, 256, options), "big"));
  // 5.36870912e8 FLOPs / (40e12 * 0.25) = 5.36870912e-5 s, on tensor units.
  EXPECT_NEAR(tf32.compute_s, 5.36870912e-5, 1e-16);
  EXPECT_TRUE(tf32.tensor_units);
  options.precision = Precision::kMixed;
  const PassTime mixed = Forward(Layer(ModelStep(DenseNet(), d, 256, options), "big"));
  EXPECT_NEAR(mixed.compute_s, 5.36870912e8 / (80e12 * 0.25), 1e-16);
  // FP32 stays on the CUDA cores with the compute curve: 1.073741824e-4 s.
  options.precision = Precision::kFp32;
  const ModeledStep fp32_step = ModelStep(DenseNet(), d, 256, options);
  const PassTime fp32 = Forward(Layer(fp32_step, "big"));
  EXPECT_NEAR(fp32.compute_s, 1.073741824e-4, 1e-15);
  EXPECT_FALSE(fp32.tensor_units);
  // The ReLU is vector work, never on tensor units.
  options.precision = Precision::kMixed;
  for (const LayerTime& layer : ModelStep(DenseNet(), d, 256, options).layers) {
    if (layer.kind == "relu") {
      EXPECT_FALSE(Forward(layer).tensor_units);
    }
  }
}

TEST(StepModel, StepTimeAddsUpdateHostAndAllReduce) {
  DeviceModelOptions options;
  options.devices = 4;
  options.steps_per_execution = 4;
  const Device device = TestDevice();
  const Network net = DenseNet();
  const ModeledStep step = ModelStep(net, device, 256, options);
  EXPECT_EQ(step.per_device_batch, 64);
  // Host: 1 ms per call / 4 steps per call = 0.25 ms.
  EXPECT_NEAR(step.host_s, 2.5e-4, 1e-15);
  // Ring all-reduce of the FP32 gradients: 1024*1024 + 10*1024 + 10 parameters,
  // S = 4,235,304 B; 2(n-1)/n * S/B + 2(n-1)*a = 1.5*4235304/100e9 + 6*5e-6
  // = 6.352956e-5 + 3e-5 = 9.352956e-5 s.
  EXPECT_NEAR(step.comm_s, 9.352956e-5, 1e-15);
  EXPECT_NEAR(step.step_time_s, step.compute_s + step.update_s + step.comm_s + step.host_s, 1e-15);
  EXPECT_NEAR(step.throughput_sps, 256 / step.step_time_s, 1e-9);
  EXPECT_DOUBLE_EQ(step.device_step_s, step.step_time_s);  // no input rate: unlimited
  EXPECT_FALSE(step.input_bound);
}

TEST(StepModel, GradientAccumulationRepeatsThePassesNotTheUpdateOrTheAllReduce) {
  DeviceModelOptions once;
  once.devices = 4;
  DeviceModelOptions accumulated = once;
  accumulated.accumulation = 8;
  const Device device = TestDevice();
  const Network net = DenseNet();
  const ModeledStep a = ModelStep(net, device, 256, once);
  const ModeledStep b = ModelStep(net, device, 256, accumulated);
  EXPECT_EQ(b.accumulation, 8);
  // 8 micro-batches of 256: each runs forward and backward and calls the host
  // (1 ms a call); the gradients are all-reduced and applied once.
  EXPECT_NEAR(b.compute_s, 8 * a.compute_s, 1e-12 * b.compute_s);
  EXPECT_NEAR(b.host_s, 8e-3, 1e-15);
  EXPECT_DOUBLE_EQ(b.update_s, a.update_s);
  EXPECT_DOUBLE_EQ(b.comm_s, a.comm_s);
  const double step_s = 8 * a.compute_s + a.update_s + a.comm_s + 8e-3;
  EXPECT_NEAR(b.step_time_s, step_s, 1e-12 * step_s);
  EXPECT_NEAR(b.throughput_sps, 8 * 256 / step_s, 1e-9 * b.throughput_sps);
  // Memory holds one micro-batch's activations.
  EXPECT_DOUBLE_EQ(b.memory_bytes, a.memory_bytes);
  // The law's batch of a step is all its micro-batches.
  DeviceModelOptions sweep = accumulated;
  sweep.batches = {256, 512};
  const std::vector<Sample> samples = ModelSweep(net, device, sweep).Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_DOUBLE_EQ(samples[0].batch, 8 * 256);
  accumulated.accumulation = 0;
  EXPECT_THROW(ModelStep(net, device, 256, accumulated), UsageError);
}

TEST(StepModel, RecomputationRunsEveryForwardButTheLastSegmentsTwice) {
  // DenseNet is a chain: a cut after every layer, so the segments are big,
  // relu, head and the loss. With recomputation the forward passes of big,
  // relu and head run again (the loss's, the last segment, does not); update,
  // all-reduce and host are unchanged.
  const Device device = TestDevice();
  const Network net = DenseNet();
  DeviceModelOptions once;
  DeviceModelOptions again = once;
  again.recompute = true;
  const ModeledStep a = ModelStep(net, device, 256, once);
  const ModeledStep b = ModelStep(net, device, 256, again);
  // Layers 1-3: big, its relu, head.
  const double rerun =
      Forward(a.layers[1]).time_s + Forward(a.layers[2]).time_s + Forward(a.layers[3]).time_s;
  ASSERT_EQ(a.layers[2].kind, "relu");
  EXPECT_NEAR(b.recompute_s, rerun, 1e-15);
  EXPECT_NEAR(b.compute_s, a.compute_s + rerun, 1e-15);
  EXPECT_DOUBLE_EQ(b.update_s, a.update_s);
  EXPECT_DOUBLE_EQ(b.host_s, a.host_s);
  EXPECT_DOUBLE_EQ(a.recompute_s, 0);
  // Memory per sample: without, what the layers save: the input (big's),
  // relu's output (relu's and head's) and the 10 probabilities: 2058. With,
  // the segments' boundaries, the input and the outputs of big, relu and head
  // (1024 + 1024 + 1024 + 10), plus the largest segment's own saved tensors:
  // relu's output, 1024 (a duplicate of the next boundary, as
  // torch.utils.checkpoint would hold it): 4106. On a plain chain, cut after
  // every layer, recomputation costs memory; on transformers and ResNets the
  // cuts fall between blocks (tests/model/transformer_zoo_test.cc).
  EXPECT_NEAR(b.memory_bytes - a.memory_bytes, 256.0 * 4 * (4106 - 2058), 1e-6);
  // The modeled work per sample counts the forward run again.
  DeviceModelOptions sweep = again;
  sweep.batches = {256};
  const DeviceSweepResult r = ModelSweep(net, device, sweep);
  const NetworkCost cost = CountCost(net);
  double forward = 0;
  for (int id = 1; id <= 3; ++id) {
    forward += cost.layers[static_cast<size_t>(id)].pass(Pass::kForward).flops.per_sample;
  }
  EXPECT_NEAR(r.train_flops_per_sample, cost.TrainFlopsPerSample() + forward, 1e-6);
  EXPECT_TRUE(r.recompute);
  EXPECT_EQ(r.checkpoint_segments, 4);
}

TEST(StepModel, InputPipelineSetsThePaceWhenSlowerThanTheDevice) {
  DeviceModelOptions options;
  options.devices = 4;
  const ModeledStep free = ModelStep(DenseNet(), TestDevice(), 256, options);
  // 64 samples per device at 1000 samples/s per device: 64 ms, far above the
  // device's step (well under a millisecond): the step takes 64 ms.
  options.input_samples_per_s = 1000;
  const ModeledStep slow = ModelStep(DenseNet(), TestDevice(), 256, options);
  EXPECT_DOUBLE_EQ(slow.input_s, 0.064);
  EXPECT_TRUE(slow.input_bound);
  EXPECT_DOUBLE_EQ(slow.step_time_s, 0.064);
  EXPECT_DOUBLE_EQ(slow.throughput_sps, 4 * 1000.0);  // 4 devices x 1000 samples/s
  EXPECT_DOUBLE_EQ(slow.device_step_s, free.step_time_s);
  // A pipeline faster than the device changes nothing: 64 / 1e9 s.
  options.input_samples_per_s = 1e9;
  const ModeledStep fast = ModelStep(DenseNet(), TestDevice(), 256, options);
  EXPECT_FALSE(fast.input_bound);
  EXPECT_DOUBLE_EQ(fast.step_time_s, free.step_time_s);
  options.input_samples_per_s = -1;
  EXPECT_THROW(ModelStep(DenseNet(), TestDevice(), 256, options), UsageError);
}

TEST(StepModel, TpuPadsDenseUnitsTo128AndPerCoreBatchTo8) {
  // A ResNet-like classifier: 2048 features -> 1000 units.
  const Network net = DenseNet(2048, 1000);
  const Device tpu = LoadDevice("tpu-v2-8");
  // Global batch 96 on 8 cores: 12 per core, padded to 16.
  const ModeledStep step = ModelStep(net, tpu, 96);
  EXPECT_EQ(step.per_core_batch, 16);
  const LayerTime& big = Layer(step, "big");
  // 2048 is a multiple of 128; 1000 units are padded to 1024: 1024/1000.
  EXPECT_TRUE(big.matrix);
  EXPECT_DOUBLE_EQ(big.padding, 1.024);
  // FLOPs at the padded batch and units: 2*16*2048*1024 = 67,108,864.
  EXPECT_DOUBLE_EQ(Forward(big).flops, 67108864.0);
  // The TPU's FP32 matmuls run on the MXU: per core 180e12/8 = 22.5e12 FLOP/s.
  // The 8 cores all-reduce FP32 gradients over ICI (62 GB/s, 5 us): parameters
  // 2048*1000 + 1000*10 + 10 = 2,058,010, S = 8,232,040 B; ring over 8:
  // 1.75 * 8232040/62e9 + 14*5e-6 = 2.323559677e-4 + 7e-5 = 3.023559677e-4 s.
  EXPECT_NEAR(step.comm_s, 3.023559677e-4, 1e-12);
  const double eff = tpu.compute_efficiency.At(67108864.0);
  EXPECT_NEAR(Forward(big).compute_s, 67108864.0 / (22.5e12 * eff), 1e-15);
}

TEST(StepModel, GpuTensorCoresPadToMultiplesOf8OnlyOffFp32) {
  const Network net = DenseNet(2048, 1001);
  const Device v100 = LoadDevice("v100-sxm2");
  // FP32 on CUDA cores: no padding.
  EXPECT_DOUBLE_EQ(Layer(ModelStep(net, v100, 12), "big").padding, 1.0);
  DeviceModelOptions mixed;
  mixed.precision = Precision::kMixed;
  const ModeledStep step = ModelStep(net, v100, 12, mixed);
  // 1001 units -> 1008 on tensor cores; the batch is not padded on a GPU.
  EXPECT_DOUBLE_EQ(Layer(step, "big").padding, 1008.0 / 1001.0);
  EXPECT_EQ(step.per_core_batch, 12);
}

// TestDevice() whose tensor-unit convolutions work in NHWC.
Device NhwcTestDevice() {
  std::string text = DeviceToJson(TestDevice());
  const std::string at = "\"memory\": {";
  text.insert(text.find(at), "\"tensor_layout\": {\"value\": \"nhwc\", \"source\": \"test\"},\n");
  return ParseDeviceJson(text, "test-gpu-nhwc.json");
}

// input 16x32x32 -> conv c1 (32 out, 3x3, pad 1) -> conv c2 (32 out, 3x3,
// pad 1) -> global average pool -> dense 10 -> loss.
Network ConvNet() {
  Network net("two-convs", Shape::Chw(16, 32, 32));
  Conv2dAttrs conv;
  conv.out_channels = 32;
  conv.window.kernel_h = conv.window.kernel_w = 3;
  conv.window.pad_top = conv.window.pad_bottom = conv.window.pad_left = conv.window.pad_right = 1;
  conv.bias = false;
  DenseAttrs head;
  head.units = 10;
  const std::string c2 = net.Conv2d(net.Conv2d("input", conv, "c1"), conv, "c2");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(c2), head, "head"));
  net.Finalize();
  return net;
}

TEST(StepModel, NchwConvolutionsOnNhwcTensorUnitsPayTransposesByHand) {
  DeviceModelOptions options;
  options.precision = Precision::kMixed;  // layout kNchw by default
  const ModeledStep step = ModelStep(ConvNet(), NhwcTestDevice(), 64, options);
  const PassTime& p = Forward(Layer(step, "c2"));
  ASSERT_TRUE(p.tensor_units);
  // c2 at batch 64, 2-byte activations and weight copies:
  //   x = y = 32*32*32 = 32,768 elements per sample -> 64*32768 = 2,097,152 elements,
  //   4,194,304 bytes; W = 32*32*3*3 = 9,216 elements -> 18,432 bytes (a 3x3
  //   window: the kernel is transposed too).
  // Each is read and written once: 2*(4194304 + 4194304 + 18432) = 16,814,080 bytes,
  // in 3 kernels. Timed as 4-byte elements (cuDNN's transposes move FP16 at the
  // FP32 element rate): 2*4*2097152 = 16,777,216 bytes per activation, 73,728 for W;
  // at 1 TB/s * 0.8: 2*16777216/8e11 + 73728/8e11 = 4.194304e-5 + 9.216e-8
  //   = 4.203520e-5 s, plus 3 * 10 us of launches.
  EXPECT_DOUBLE_EQ(p.layout_bytes, 16814080.0);
  EXPECT_EQ(p.layout_kernels, 3);
  EXPECT_NEAR(p.layout_memory_s, 4.20352e-5, 1e-15);
  EXPECT_NEAR(p.layout_s, 7.20352e-5, 1e-15);
  EXPECT_NEAR(p.time_s, std::max(p.compute_s, p.memory_s) + p.launch_s + p.layout_s, 1e-15);
  // Backward-data and backward-weights transpose the same three tensors (dy, W, dx / x, dy, dW).
  const LayerTime& c2 = Layer(step, "c2");
  EXPECT_DOUBLE_EQ(c2.passes[static_cast<size_t>(Pass::kBackwardData)].layout_bytes, 16814080.0);
  EXPECT_DOUBLE_EQ(c2.passes[static_cast<size_t>(Pass::kBackwardWeights)].layout_bytes, 16814080.0);
  EXPECT_EQ(c2.passes[static_cast<size_t>(Pass::kUpdate)].layout_kernels, 0);
  // c1's gradient does not reach the input: no backward-data pass, nothing to transpose.
  EXPECT_EQ(Layer(step, "c1").passes[static_cast<size_t>(Pass::kBackwardData)].layout_kernels, 0);
  // The dense head is not a convolution: no transposes.
  for (const PassTime& q : Layer(step, "head").passes) EXPECT_EQ(q.layout_kernels, 0);

  // The same step with NHWC activations differs by exactly the transposes.
  options.layout = ActivationLayout::kNhwc;
  const ModeledStep nhwc = ModelStep(ConvNet(), NhwcTestDevice(), 64, options);
  EXPECT_DOUBLE_EQ(nhwc.layout_s, 0);
  EXPECT_GT(step.layout_s, 0);
  EXPECT_NEAR(step.step_time_s - nhwc.step_time_s, step.layout_s, 1e-12);
}

// input 16x8x8 -> p1 (1x1, 32 out) -> p2 (1x1, 32 out, stride 2) -> q (3x3,
// 32 out, pad 1) -> global average pool -> dense 10 -> loss; and the same
// from an input of 16x7x7 without p2.
Network PointwiseNet(int64_t side, bool strided) {
  Network net("pointwise", Shape::Chw(16, side, side));
  Conv2dAttrs pointwise;
  pointwise.out_channels = 32;
  pointwise.bias = false;
  Conv2dAttrs strided_pointwise = pointwise;
  strided_pointwise.window.stride_h = strided_pointwise.window.stride_w = 2;
  Conv2dAttrs window = pointwise;
  window.window = MakeWindow(3, 1, 1);
  DenseAttrs head;
  head.units = 10;
  std::string x = net.Conv2d("input", pointwise, "p1");
  if (strided) x = net.Conv2d(x, strided_pointwise, "p2");
  x = net.Conv2d(x, window, "q");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(x), head, "head"));
  net.Finalize();
  return net;
}

TEST(StepModel, AlignedPointwiseConvolutionsRunAsNchwGemmsWithoutTransposes) {
  DeviceModelOptions options;
  options.precision = Precision::kMixed;  // nchw
  const Network net = PointwiseNet(8, true);
  const ModeledStep step = ModelStep(net, NhwcTestDevice(), 64, options);
  // p1: 1x1, stride 1, 8x8 = 64 pixels, a multiple of 8: a GEMM per image on the
  // NCHW tensors, no transposes in any pass.
  EXPECT_TRUE(RunsAsNchwGemm(net.layer(net.LayerId("p1"))));
  for (const PassTime& q : Layer(step, "p1").passes) EXPECT_EQ(q.layout_kernels, 0);
  // p2: 1x1 but stride 2 (4x4 output): its activations are transposed, its
  // 1x1 kernel is not (KCRS and KRSC are the same bytes). At batch 64, 2 bytes:
  //   x = 32*8*8*64 = 131,072 elements, y = 32*4*4*64 = 32,768 elements;
  //   layout_bytes = 2*2*(131072 + 32768) = 655,360 in 2 kernels;
  //   time as 4-byte elements: 2*4*(131072 + 32768)/(1e12*0.8) = 1.6384e-6 s.
  EXPECT_FALSE(RunsAsNchwGemm(net.layer(net.LayerId("p2"))));
  for (const Pass pass : {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeights}) {
    const PassTime& p = Layer(step, "p2").passes[static_cast<size_t>(pass)];
    EXPECT_DOUBLE_EQ(p.layout_bytes, 655360.0);
    EXPECT_EQ(p.layout_kernels, 2);
    EXPECT_NEAR(p.layout_memory_s, 1.6384e-6, 1e-18);
  }
  // q (3x3) transposes its kernel too: 3 kernels.
  EXPECT_EQ(Forward(Layer(step, "q")).layout_kernels, 3);
  // 7x7 = 49 pixels is not a multiple of 8: p1 is transposed (x and y, no kernel).
  const Network odd = PointwiseNet(7, false);
  EXPECT_FALSE(RunsAsNchwGemm(odd.layer(odd.LayerId("p1"))));
  EXPECT_EQ(Forward(Layer(ModelStep(odd, NhwcTestDevice(), 64, options), "p1")).layout_kernels, 2);
  // Not a convolution: never a GEMM of this kind.
  EXPECT_FALSE(RunsAsNchwGemm(net.layer(net.LayerId("head"))));
}

// input 16x32x32 -> conv c1 (32 out, 3x3, pad 1) -> batch norm bn -> global
// average pool -> dense 10 -> loss.
Network ConvBnNet() {
  Network net("conv-bn", Shape::Chw(16, 32, 32));
  Conv2dAttrs conv;
  conv.out_channels = 32;
  conv.window = MakeWindow(3, 1, 1);
  conv.bias = false;
  DenseAttrs head;
  head.units = 10;
  const std::string bn = net.BatchNorm(net.Conv2d("input", conv, "c1"), BatchNormAttrs{}, "bn");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(bn), head, "head"));
  net.Finalize();
  return net;
}

TEST(StepModel, NchwBatchNormOnATensorCoreGpuByHand) {
  DeviceModelOptions options;  // fp32, nchw
  const ModeledStep step = ModelStep(ConvBnNet(), NhwcTestDevice(), 64, options);
  // bn at batch 64: 32*32*32*64 = 2,097,152 elements; 32 channels, 4 parameter
  // vectors (gamma, beta, moving mean and variance): 128 values.
  // Forward: x read twice, y written (3 tensors), 128 parameters read and 64
  // moving statistics written: 3*4*2097152 + 4*(128 + 64) = 25,166,592 bytes.
  // cuDNN's NCHW kernels: 1.905 x 25166592 / (1e12 * 0.8) = 5.99279472e-5 s.
  const LayerTime& bn = Layer(step, "bn");
  EXPECT_NEAR(Forward(bn).memory_s, 5.99279472e-5, 1e-15);
  // Backward-data: x and dy read, dx written, 128 parameters read:
  //   3*4*2097152 + 4*128 = 25,166,336 bytes -> 1.905 x / 8e11 = 5.99273376e-5 s.
  EXPECT_NEAR(bn.passes[static_cast<size_t>(Pass::kBackwardData)].memory_s, 5.99273376e-5, 1e-15);
  // Backward-weights: x and dy read, 64 gradients written:
  //   2*4*2097152 + 4*64 = 16,777,472 bytes -> 1.905 x / 8e11 = 3.99513552e-5 s.
  EXPECT_NEAR(bn.passes[static_cast<size_t>(Pass::kBackwardWeights)].memory_s, 3.99513552e-5,
              1e-15);

  // In NHWC the element-wise rate: 25166592 / 8e11 = 3.145824e-5 s.
  options.layout = ActivationLayout::kNhwc;
  const ModeledStep nhwc = ModelStep(ConvBnNet(), NhwcTestDevice(), 64, options);
  EXPECT_NEAR(Forward(Layer(nhwc, "bn")).memory_s, 3.145824e-5, 1e-15);

  // Mixed precision, NCHW: half the bytes move, in the same time (the kernels'
  // rate does not scale with the element size).
  options.layout = ActivationLayout::kNchw;
  options.precision = Precision::kMixed;
  const ModeledStep mixed = ModelStep(ConvBnNet(), NhwcTestDevice(), 64, options);
  EXPECT_NEAR(Forward(Layer(mixed, "bn")).memory_s, 5.99279472e-5, 1e-15);
  options.layout = ActivationLayout::kNhwc;
  const ModeledStep mixed_nhwc = ModelStep(ConvBnNet(), NhwcTestDevice(), 64, options);
  EXPECT_DOUBLE_EQ(Forward(Layer(mixed, "bn")).bytes, Forward(Layer(mixed_nhwc, "bn")).bytes);
  EXPECT_NEAR(Forward(Layer(mixed, "bn")).memory_s,
              2 * kNchwBatchNormTimeRatio * Forward(Layer(mixed_nhwc, "bn")).memory_s, 1e-9);

  // Only on a GPU whose tensor units work in NHWC (cuDNN's layouts): not on the
  // test device without a tensor_layout, the P100 or a TPU.
  options.layout = ActivationLayout::kNchw;
  EXPECT_TRUE(ModelsNchwBatchNorm(NhwcTestDevice(), options));
  EXPECT_FALSE(ModelsNchwBatchNorm(TestDevice(), options));
  EXPECT_FALSE(ModelsNchwBatchNorm(LoadDevice("p100"), options));
  EXPECT_FALSE(ModelsNchwBatchNorm(LoadDevice("tpu-v2-8"), options));
  options.precision = Precision::kFp32;
  EXPECT_NEAR(Forward(Layer(ModelStep(ConvBnNet(), TestDevice(), 64, options), "bn")).memory_s,
              3.145824e-5, 1e-15);
}

TEST(StepModel, NoTransposesInFp32OrWithoutATensorLayout) {
  DeviceModelOptions options;  // fp32, nchw
  // FP32 runs on CUDA cores, whose kernels take NCHW as it is.
  EXPECT_FALSE(ModelsTransposes(NhwcTestDevice(), options));
  EXPECT_DOUBLE_EQ(ModelStep(ConvNet(), NhwcTestDevice(), 64, options).layout_s, 0);
  options.precision = Precision::kMixed;
  EXPECT_TRUE(ModelsTransposes(NhwcTestDevice(), options));
  // A device without a tensor_layout (the TPU: XLA lays tensors out) never transposes.
  EXPECT_FALSE(ModelsTransposes(TestDevice(), options));
  EXPECT_FALSE(ModelsTransposes(LoadDevice("tpu-v2-8"), options));
  EXPECT_DOUBLE_EQ(ModelStep(ConvNet(), TestDevice(), 64, options).layout_s, 0);
  // The catalog's tensor-core GPUs work in NHWC; the P100 (FP16 on CUDA cores) does not.
  for (const char* name : {"v100-sxm2", "v100-pcie", "t4", "a100", "a100-80gb", "h100"}) {
    EXPECT_EQ(LoadDevice(name).tensor_layout, "nhwc") << name;
  }
  EXPECT_EQ(LoadDevice("p100").tensor_layout, "");
  EXPECT_THROW(ParseActivationLayout("chw"), UsageError);
  EXPECT_EQ(ParseActivationLayout(ActivationLayoutName(ActivationLayout::kNhwc)),
            ActivationLayout::kNhwc);
}

TEST(StepModel, Resnet50AtBatch1024DoesNotFitA16GbV100) {
  // ResNet-50's tensors saved for the backward pass (tests/model/network_cost_test.cc,
  // MemoryEstimate.Resnet50ByHand, counted by stage): 21,076,968 floats = 84.3
  // MB per sample, plus 3 x 802,816 floats of gradients alive at once = 9.6 MB:
  // ~ 93.9 MB per sample, ~ 96.2 GB at batch 1024 against 16 GiB; parameters,
  // gradients and momentum add 3 x 25.6M x 4 B = 0.31 GB.
  const Network net = ZooNetwork("resnet50");
  const Device v100 = LoadDevice("v100-sxm2");
  const ModeledStep big = ModelStep(net, v100, 1024);
  EXPECT_FALSE(big.fits);
  EXPECT_GT(big.memory_bytes, 0.9 * 96.5e9);
  EXPECT_LT(big.memory_bytes, 1.1 * 96.5e9);
  EXPECT_DOUBLE_EQ(big.memory_capacity_bytes, 16.0 * (1u << 30));
  EXPECT_TRUE(ModelStep(net, v100, 32).fits);
  // Runs that really happened on a 16 GB V100 fit (NVIDIA DeepLearningExamples
  // ResNet-50 v1.5, PyTorch: batch 112 in FP32, 256 in mixed precision).
  EXPECT_TRUE(ModelStep(net, v100, 112).fits);
  DeviceModelOptions amp;
  amp.precision = Precision::kMixed;
  EXPECT_TRUE(ModelStep(net, v100, 256, amp).fits);

  DeviceModelOptions options;
  options.batches = {32, 1024};
  const DeviceSweepResult sweep = ModelSweep(net, v100, options);
  ASSERT_EQ(sweep.steps.size(), 1u);
  ASSERT_EQ(sweep.out_of_memory.size(), 1u);
  EXPECT_EQ(sweep.out_of_memory[0].batch, 1024);
}

TEST(StepModel, Resnet50OnV100Fp32IsWithin20PercentOfNvidiasTable) {
  // NVIDIA Deep Learning Examples, PyTorch/Classification/ConvNets/resnet50v1.5
  // README (commit 729963dd), training performance on DGX-1 16GB, 1 x V100 16GB,
  // FP32: 367 img/s (tests/data or ../shared/data/measured/
  // nvidia_dle_training_perf_tables.csv). The catalog's efficiencies are
  // uncalibrated assumptions; 20% is the issue's accuracy goal with margin.
  // The model keeps every layer output, so batch 256 is over 16 GiB for it
  // (real frameworks run ReLU in place); the time is modeled regardless.
  const ModeledStep step = ModelStep(ZooNetwork("resnet50"), LoadDevice("v100-sxm2"), 256);
  EXPECT_NEAR(step.throughput_sps / 367.0, 1.0, 0.2);
}

TEST(StepModel, Resnet50NchwOnH200AgainstFirstHandRows) {
  // This project's own H200 rows (data/resnet50-gpu/resnet50_steps.csv,
  // torchvision ResNet-50, batch 256, synthetic input, cudnn.benchmark on):
  // AMP NCHW 2,960 images/s, AMP channels_last 5,636: NCHW 1.907x slower
  // (86.6 / 45.4 ms median steps). Before the NCHW batch-norm and transpose
  // rules the model gave 4,116 images/s (+39%) and a ratio of 1.42 (62.2 /
  // 43.76 ms): both assertions below fail at 15% without them. The rules'
  // constants come from these runs' kernel table, not from these step times.
  // The second assertion is on the time NCHW adds (86.6 - 45.4 = 41.2 ms
  // measured), what the rules model: since the Hopper matrix curves are
  // fitted to this project's H200 GEMMs, the convolutions run as measured
  // (13.3 ms modeled, 13.8 ms in the kernel table) while the memory-bound
  // kernels' carried plateau is too fast on this GPU (batch norm, ReLU and
  // add 22.6 ms modeled, 26.9 ms measured; data/llm-gpu's element-wise rows
  // -22%), so the NHWC step itself is about 17% short and the ratio of the
  // two steps says more about that plateau than about the NCHW rules.
  const Network net = ZooNetwork("resnet50");
  const Device h200 = LoadDevice("h200");
  DeviceModelOptions options;
  options.precision = Precision::kMixed;  // nchw
  const ModeledStep nchw = ModelStep(net, h200, 256, options);
  options.layout = ActivationLayout::kNhwc;
  const ModeledStep nhwc = ModelStep(net, h200, 256, options);
  EXPECT_NEAR(nchw.throughput_sps / 2960.0, 1.0, 0.15);
  EXPECT_NEAR((nchw.step_time_s - nhwc.step_time_s) / (86.6e-3 - 45.4e-3), 1.0, 0.15);
}

TEST(StepModel, ModeledSamplesFitTheLaw) {
  DeviceModelOptions options;
  options.batches = {16, 32, 64, 128, 256};
  const DeviceSweepResult sweep = ModelSweep(DenseNet(), TestDevice(), options);
  const std::vector<Sample> samples = sweep.Samples();
  ASSERT_EQ(samples.size(), 5u);
  EXPECT_EQ(samples[0].source, "model:test-gpu:dense-relu");
  EXPECT_EQ(samples[0].precision, "fp32");
  EXPECT_EQ(samples[4].batch, 256);
  const FitResult fit = Fit(samples);
  ASSERT_EQ(fit.fits.size(), 1u);
  // The fixed part is at least the 1 ms host overhead per step.
  EXPECT_TRUE(fit.fits[0].usable);
  EXPECT_GT(fit.fits[0].Param("t").value, 1e-3);
}

TEST(StepModel, PrecisionTheDeviceLacksIsAUsageError) {
  DeviceModelOptions options;
  options.precision = Precision::kTf32;
  EXPECT_THROW(ModelStep(DenseNet(), LoadDevice("v100-sxm2"), 64, options), UsageError);
  options.precision = Precision::kMixed;
  EXPECT_THROW(ModelStep(DenseNet(), LoadDevice("k80"), 64, options), UsageError);
  options.precision = Precision::kFp32;
  options.devices = 0;
  EXPECT_THROW(ModelStep(DenseNet(), TestDevice(), 64, options), UsageError);
  options.devices = 1;
  options.precision = Precision::kFp8;
  EXPECT_THROW(ModelStep(DenseNet(), LoadDevice("a100"), 64, options), UsageError);
  EXPECT_THROW(ParsePrecision("fp4", PrecisionContext::kDevice), UsageError);
}

}  // namespace
}  // namespace fitspeed
