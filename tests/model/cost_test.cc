#include "fitspeed/model/cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"
#include "model/attrs_util.h"

namespace fitspeed {
namespace {

using test::Conv;
using test::Units;

// input 3x32x32 -> conv1 3->64 3x3 pad 1 (no bias) -> conv2 64->64 3x3 pad 1
// (bias) -> global pool -> dense 64->10 -> loss.
Network TwoConvNet() {
  Network net("two-conv", Shape::Chw(3, 32, 32));
  const std::string c1 = net.Conv2d("input", Conv(64, MakeWindow(3, 1, 1), false), "conv1");
  const std::string c2 = net.Conv2d(c1, Conv(64, MakeWindow(3, 1, 1), true), "conv2");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(c2, "pool"), Units(10), "fc"), "loss");
  net.Finalize();
  return net;
}

TEST(LayerCost, ConvolutionByHand) {
  const Network net = TwoConvNet();
  const NetworkCost cost = CountCost(net, Optimizer::kSgdMomentum);
  const LayerCost& c = cost.layers[static_cast<size_t>(net.LayerId("conv2"))];
  // Output 64x32x32 = 65,536 elements, each a dot product of 64*3*3 = 576:
  // 65,536 * 576 = 37,748,736 multiply-adds = 75,497,472 FLOPs, + 65,536 bias adds.
  EXPECT_DOUBLE_EQ(c.forward.flops.per_sample, 75497472.0 + 65536.0);
  EXPECT_DOUBLE_EQ(c.forward.flops.per_step, 0.0);
  EXPECT_DOUBLE_EQ(c.backward_data.flops.per_sample, 75497472.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.flops.per_sample, 75497472.0 + 65536.0);
  // Reads the 65,536-element input per sample, the 64*64*9 = 36,864 weights and
  // 64 biases per step; writes 65,536 elements per sample.
  EXPECT_DOUBLE_EQ(c.forward.elements_read.per_sample, 65536.0);
  EXPECT_DOUBLE_EQ(c.forward.elements_read.per_step, 36928.0);
  EXPECT_DOUBLE_EQ(c.forward.elements_written.per_sample, 65536.0);
  // At batch 32 in FP32: (32*65,536 + 36,928) * 4 bytes = 8,536,320.
  EXPECT_DOUBLE_EQ(c.forward.BytesRead(32, 4), 8536320.0);
  // BF16 activations, FP32 weights: 32*65,536*2 + 36,928*4 = 4,194,304 + 147,712.
  EXPECT_DOUBLE_EQ(c.forward.BytesRead(32, 2, 4), 4342016.0);
  // backward-weights writes the 36,928 gradients once per step.
  EXPECT_DOUBLE_EQ(c.backward_weights.elements_written.per_step, 36928.0);
  // SGD with momentum: 4 FLOPs, 3 reads and 2 writes per trainable parameter.
  EXPECT_DOUBLE_EQ(c.update.flops.per_step, 4 * 36928.0);
  EXPECT_DOUBLE_EQ(c.update.elements_read.per_step, 3 * 36928.0);
  EXPECT_DOUBLE_EQ(c.update.elements_written.per_step, 2 * 36928.0);
  EXPECT_EQ(c.params, 36928);
  EXPECT_EQ(c.activation_elements, 65536);
}

TEST(LayerCost, FirstLayerSkipsInputGradient) {
  const Network net = TwoConvNet();
  const NetworkCost cost = CountCost(net);
  const LayerCost& c = cost.layers[static_cast<size_t>(net.LayerId("conv1"))];
  // 64x32x32 outputs of 3*3*3 = 27 multiply-adds: 65,536 * 27 * 2 = 3,538,944.
  EXPECT_DOUBLE_EQ(c.forward.flops.per_sample, 3538944.0);
  EXPECT_DOUBLE_EQ(c.backward_data.flops.per_sample, 0.0);  // no gradient for the image
  EXPECT_DOUBLE_EQ(c.backward_data.elements_read.per_sample, 0.0);
  EXPECT_DOUBLE_EQ(c.backward_weights.flops.per_sample, 3538944.0);
}

TEST(LayerCost, DenseByHand) {
  const Network net = ZooNetwork("mlp-mnist");
  const NetworkCost cost = CountCost(net, Optimizer::kAdam);
  const LayerCost& d1 = cost.layers[static_cast<size_t>(net.LayerId("dense_1"))];
  const LayerCost& d2 = cost.layers[static_cast<size_t>(net.LayerId("dense_2"))];
  // dense_1 784->512: 2*784*512 = 802,816 + 512 bias adds; its input is the
  // image, so no backward-data.
  EXPECT_DOUBLE_EQ(d1.forward.flops.per_sample, 803328.0);
  EXPECT_DOUBLE_EQ(d1.backward_data.flops.per_sample, 0.0);
  // dense_2 512->512: 2*512*512 = 524,288 (+ 512 bias adds forward and in db).
  EXPECT_DOUBLE_EQ(d2.forward.flops.per_sample, 524800.0);
  EXPECT_DOUBLE_EQ(d2.backward_data.flops.per_sample, 524288.0);
  EXPECT_DOUBLE_EQ(d2.backward_weights.flops.per_sample, 524800.0);
  // Adam: 12 FLOPs per trainable parameter; 512*512 + 512 = 262,656 parameters.
  EXPECT_DOUBLE_EQ(d2.update.flops.per_step, 12 * 262656.0);
  EXPECT_DOUBLE_EQ(d2.update.elements_read.per_step, 4 * 262656.0);
  // Whole network forward: dense 803,328 + 524,800 + (2*512*10 + 10 = 10,250),
  // ReLU 512 + 512, loss 4*10 = 40: 1,339,442 FLOPs.
  EXPECT_DOUBLE_EQ(cost.ForwardFlopsPerSample(), 1339442.0);
  // Adam over all 669,706 parameters: 8,036,472 FLOPs per step.
  EXPECT_DOUBLE_EQ(cost.UpdateFlopsPerStep(), 8036472.0);
  EXPECT_DOUBLE_EQ(cost.StepFlops(100),
                   100 * cost.TrainFlopsPerSample() + cost.UpdateFlopsPerStep());
}

// Forward multiply-adds of the convolutions and dense layers only (without
// bias adds): what published MAC counts measure.
double MatmulMacs(const Network& net) {
  const NetworkCost cost = CountCost(net);
  double macs = 0;
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    if (layer.kind != LayerKind::kConv2d && layer.kind != LayerKind::kDense) continue;
    const bool bias = layer.kind == LayerKind::kConv2d ? layer.conv.bias : layer.dense.bias;
    const double bias_adds = bias ? static_cast<double>(layer.output_shape.elements()) : 0;
    macs += (cost.layers[static_cast<size_t>(id)].forward.flops.per_sample - bias_adds) / 2;
  }
  return macs;
}

TEST(NetworkCost, ResNet50ForwardMatchesPublishedMacs) {
  // torchvision's ResNet50_Weights table: 4.09 GFLOPS (counted as multiply-adds)
  // for its v1.5 (stride on the 3x3 conv) at 224x224; ~4.1 GMAC as usually quoted.
  const Network net = ZooNetwork("resnet50");
  EXPECT_NEAR(MatmulMacs(net) / 1e9, 4.09, 0.01 * 4.09);
  // With bias, batch-norm, ReLU, pooling and loss work still within 3% of 4.1.
  const NetworkCost cost = CountCost(net);
  EXPECT_NEAR(cost.ForwardFlopsPerSample() / 2 / 1e9, 4.1, 0.03 * 4.1);
  // A training sample is about three forward passes (backward-data and
  // backward-weights each cost about a forward), a little less because the
  // first convolution computes no input gradient.
  const double ratio = cost.TrainFlopsPerSample() / cost.ForwardFlopsPerSample();
  EXPECT_GT(ratio, 2.8);
  EXPECT_LT(ratio, 3.0);
}

TEST(NetworkCost, MobileNetAndVggForwardMatchPublishedMacs) {
  // Howard et al. 2017, table 8: 1.0 MobileNet-224 has 569 million mult-adds.
  EXPECT_NEAR(MatmulMacs(ZooNetwork("mobilenet-v1")) / 1e6, 569, 0.01 * 569);
  // VGG-16: 15.47 GMACs (torchvision's VGG16_Weights table: 15.47 GFLOPS, as MACs).
  EXPECT_NEAR(MatmulMacs(ZooNetwork("vgg16")) / 1e9, 15.47, 0.01 * 15.47);
}

TEST(NetworkCost, ResidualForkSumsGradients) {
  // input -> conv a -> relu r; add(r, conv b(r)): r feeds two layers, so its
  // backward-data sums two gradients: 1 FLOP per element of its 8x4x4 output.
  Network net("fork", Shape::Chw(8, 4, 4));
  const std::string a = net.Conv2d("input", Conv(8, MakeWindow(3, 1, 1), false), "a");
  const std::string r = net.Relu(a, {}, "r");
  const std::string b = net.Conv2d(r, Conv(8, MakeWindow(3, 1, 1), false), "b");
  const std::string sum = net.Add({r, b}, "sum");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(sum), Units(2)), "loss");
  net.Finalize();
  const NetworkCost cost = CountCost(net);
  const LayerCost& relu = cost.layers[static_cast<size_t>(net.LayerId("r"))];
  // ReLU backward: 128 selects + 128 sums of the two incoming gradients.
  EXPECT_DOUBLE_EQ(relu.backward_data.flops.per_sample, 128.0 + 128.0);
  const LayerCost& add = cost.layers[static_cast<size_t>(net.LayerId("sum"))];
  EXPECT_DOUBLE_EQ(add.forward.flops.per_sample, 128.0);      // one add per element
  EXPECT_DOUBLE_EQ(add.backward_data.flops.per_sample, 0.0);  // dy passes to both inputs
}

TEST(NetworkCost, TotalsAreSumsOfLayers) {
  const Network net = ZooNetwork("resnet18-cifar");
  const NetworkCost cost = CountCost(net);
  double forward = 0;
  int64_t params = 0;
  for (const LayerCost& c : cost.layers) {
    forward += c.forward.flops.per_sample;
    params += c.params;
  }
  EXPECT_DOUBLE_EQ(cost.total.forward.flops.per_sample, forward);
  EXPECT_EQ(params, net.ParamCount());
  ASSERT_EQ(cost.layers.size(), net.layers().size());
  // kuangliu's ResNet-18 for CIFAR is commonly quoted at 0.56 GMACs forward.
  EXPECT_NEAR(MatmulMacs(net) / 1e9, 0.56, 0.02 * 0.56);
}

TEST(MemoryEstimate, MlpByHand) {
  const Network net = ZooNetwork("mlp-mnist");
  const MemoryEstimate m = EstimateTrainingMemory(net, 100, Optimizer::kSgdMomentum, 4, 4);
  // 669,706 parameters of 4 bytes; as many gradients and momentum buffers.
  EXPECT_DOUBLE_EQ(m.parameter_bytes, 669706.0 * 4);
  EXPECT_DOUBLE_EQ(m.gradient_bytes, 669706.0 * 4);
  EXPECT_DOUBLE_EQ(m.optimizer_state_bytes, 669706.0 * 4);
  // Outputs per sample: input 784, dense 512, relu 512, dense 512, relu 512,
  // dense 10, loss 1 = 2,843 elements; 100 samples of 4 bytes.
  EXPECT_DOUBLE_EQ(m.activation_bytes, 2843.0 * 100 * 4);
  // Two gradients of the largest output (the 784-element input).
  EXPECT_DOUBLE_EQ(m.activation_gradient_bytes, 2 * 784.0 * 100 * 4);
  EXPECT_DOUBLE_EQ(m.total_bytes(), 3 * 669706.0 * 4 + 2843.0 * 400 + 2 * 784.0 * 400);
  // Adam keeps two state tensors, plain SGD none.
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(net, 1, Optimizer::kAdam).optimizer_state_bytes,
                   2 * 669706.0 * 4);
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(net, 1, Optimizer::kSgd).optimizer_state_bytes, 0.0);
}

TEST(Optimizer, NamesParse) {
  EXPECT_EQ(ParseOptimizer("adam"), Optimizer::kAdam);
  EXPECT_EQ(ParseOptimizer("momentum"), Optimizer::kSgdMomentum);
  EXPECT_STREQ(OptimizerName(ParseOptimizer("sgd")), "sgd");
  EXPECT_THROW(ParseOptimizer("lamb"), UsageError);
  EXPECT_STREQ(PassName(Pass::kBackwardWeights), "backward-weights");
}

}  // namespace
}  // namespace fitspeed
