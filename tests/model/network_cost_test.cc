#include "fitspeed/model/network_cost.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"
#include "model/attrs_util.h"
#include "model/matmul_macs.h"

namespace fitspeed {
namespace {

using test::Conv;
using test::Pool;
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
  // RMSprop with momentum: v 4 FLOPs (a*v, g*g, (1-a)*., +), m 5 (sqrt, +eps, /,
  // mu*m, +), w 2 (lr*m, -): 11 per parameter, 7,366,766 per step; it reads and
  // writes what Adam does (w g m v; w m v).
  const NetworkCost rmsprop = CountCost(net, Optimizer::kRmsprop);
  EXPECT_DOUBLE_EQ(rmsprop.UpdateFlopsPerStep(), 11 * 669706.0);
  EXPECT_DOUBLE_EQ(
      rmsprop.layers[static_cast<size_t>(net.LayerId("dense_2"))].update.elements_written.per_step,
      3 * 262656.0);
  EXPECT_DOUBLE_EQ(cost.StepFlops(100),
                   100 * cost.TrainFlopsPerSample() + cost.UpdateFlopsPerStep());
}

TEST(NetworkCost, ResNet50ForwardMatchesPublishedMacs) {
  // torchvision's ResNet50_Weights table: 4.09 GFLOPS (counted as multiply-adds)
  // for its v1.5 (stride on the 3x3 conv) at 224x224; ~4.1 GMAC as usually quoted.
  const Network net = ZooNetwork("resnet50");
  EXPECT_NEAR(test::MatmulMacs(net) / 1e9, 4.09, 0.01 * 4.09);
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
  EXPECT_NEAR(test::MatmulMacs(ZooNetwork("mobilenet-v1")) / 1e6, 569, 0.01 * 569);
  // VGG-16: 15.47 GMACs (torchvision's VGG16_Weights table: 15.47 GFLOPS, as MACs).
  EXPECT_NEAR(test::MatmulMacs(ZooNetwork("vgg16")) / 1e9, 15.47, 0.01 * 15.47);
  // VGG-19: 19.63 GMACs (torchvision's VGG19_Weights table: 19.63 GFLOPS, as MACs).
  EXPECT_NEAR(test::MatmulMacs(ZooNetwork("vgg19")) / 1e9, 19.63, 0.01 * 19.63);
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
  EXPECT_NEAR(test::MatmulMacs(net) / 1e9, 0.56, 0.02 * 0.56);
}

TEST(MemoryEstimate, MlpByHand) {
  const Network net = ZooNetwork("mlp-mnist");
  const MemoryEstimate m = EstimateTrainingMemory(net, 100, Optimizer::kSgdMomentum, 4, 4);
  // 669,706 parameters of 4 bytes; as many gradients and momentum buffers.
  EXPECT_DOUBLE_EQ(m.parameter_bytes, 669706.0 * 4);
  EXPECT_DOUBLE_EQ(m.gradient_bytes, 669706.0 * 4);
  EXPECT_DOUBLE_EQ(m.optimizer_state_bytes, 669706.0 * 4);
  // Saved per sample: the input 784 (dense_1's dW), relu_1 512 (its output,
  // also dense_2's input), relu_2 512, the loss's 10 probabilities = 1,818.
  // Not saved: the dense outputs (a ReLU or the loss reads only its output)
  // and the loss. 100 samples of 4 bytes.
  EXPECT_DOUBLE_EQ(m.activation_bytes, 1818.0 * 100 * 4);
  // Gradients alive at once: at most 512 + 512 (relu's dy and dx), below two
  // of the largest output (the 784-element input): 1,568.
  EXPECT_DOUBLE_EQ(m.activation_gradient_bytes, 2 * 784.0 * 100 * 4);
  EXPECT_DOUBLE_EQ(m.total_bytes(), 3 * 669706.0 * 4 + 1818.0 * 400 + 2 * 784.0 * 400);
  // Adam keeps two state tensors, plain SGD none.
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(net, 1, Optimizer::kAdam).optimizer_state_bytes,
                   2 * 669706.0 * 4);
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(net, 1, Optimizer::kSgd).optimizer_state_bytes, 0.0);
  // RMSprop with momentum: the square average and the momentum buffer.
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(net, 1, Optimizer::kRmsprop).optimizer_state_bytes,
                   2 * 669706.0 * 4);
}

// input 3x8x8 -> c1 conv 4 3x3 pad 1 -> bn1 -> r1 relu -> c2 conv 4 3x3 pad 1
// -> bn2 -> add(bn2, r1) -> r2 relu -> 2x2/2 max pool -> global pool -> dense
// 10 -> loss: a residual block with every kind of a ResNet.
TEST(MemoryEstimate, ResidualBlockByHand) {
  Network net("block", Shape::Chw(3, 8, 8));
  const std::string r1 = net.Relu(
      net.BatchNorm(net.Conv2d("input", Conv(4, MakeWindow(3, 1, 1), false), "c1"), {}, "bn1"), {},
      "r1");
  const std::string bn2 =
      net.BatchNorm(net.Conv2d(r1, Conv(4, MakeWindow(3, 1, 1), false), "c2"), {}, "bn2");
  const std::string r2 = net.Relu(net.Add({bn2, r1}, "add"), {}, "r2");
  const std::string pool = net.MaxPool(r2, Pool(MakeWindow(2, 2)), "pool");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(pool, "gap"), Units(10), "fc"), "loss");
  net.Finalize();
  const MemoryEstimate m = EstimateTrainingMemory(net, 2, Optimizer::kSgd, 4, 4);
  // Saved per sample: input 192 (c1's input), c1 256 (bn1's input), r1 256
  // (its output; c2's input), c2 256 (bn2's input), r2 256 (its output; the
  // pool's input), pool 64 (its output, 4x4x4), gap 4 (fc's input), 10
  // probabilities = 1,294. Not saved: bn1, bn2, add (read by nobody's
  // backward), fc (the loss keeps its probabilities), the loss.
  EXPECT_DOUBLE_EQ(m.activation_bytes, 1294.0 * 2 * 4);
  // Gradients alive, [producer, last consumer] in layer order c1=1 .. fc=10:
  // r1 [3, 6], c2 [4, 5], bn2 [5, 6], add [6, 7], all 256 elements: at bn2's
  // and add's steps r1's (waiting across the branch), bn2's and one more:
  // 3 * 256 = 768, above two of the largest output (512).
  EXPECT_DOUBLE_EQ(m.activation_gradient_bytes, 768.0 * 2 * 4);
  // Saved activations are linear in the batch.
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(net, 6, Optimizer::kSgd, 4, 4).activation_bytes,
                   3 * m.activation_bytes);
}

// Before any trainable layer no backward pass runs, so nothing is saved there.
TEST(MemoryEstimate, NothingSavedBeforeTheFirstTrainableLayer) {
  Network net("pool-first", Shape::Chw(3, 8, 8));
  const std::string pool = net.MaxPool("input", Pool(MakeWindow(2, 2)), "pool");
  net.SoftmaxCrossEntropy(net.Dense(net.Flatten(pool, "flat"), Units(10), "fc"), "loss");
  net.Finalize();
  // Saved: the pool's 48 outputs, once, as fc's input through the flatten
  // view; 10 probabilities. The input (the pool's backward never runs) is not.
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(net, 1, Optimizer::kSgd, 1, 1).activation_bytes, 58.0);
}

// torchvision ResNet-50 (v1.5) per sample, counted by hand from its structure.
// Stem: input 3x224x224 = 150,528 (conv1's input), conv1 64x112x112 = 802,816
// (bn's input), relu 802,816 (its output; maxpool's input), maxpool 64x56x56 =
// 200,704 (its output; layer1's input) = 1,956,864.
// A bottleneck (width w, input HxW, output H'xW' = HxW / stride^2) saves conv1
// and relu1 (w*H*W each), conv2 and relu2 (w*H'*W' each), conv3 and the block's
// relu (4w*H'*W' each), and the downsample conv (4w*H'*W', first block only);
// bn outputs and the add feed only a ReLU or the add: not saved.
//   layer1 (w 64, 56x56): first 2*200,704 + 2*200,704 + 3*802,816 = 3,211,264;
//     others 2,408,448 each:                       3,211,264 + 2*2,408,448 = 8,028,160
//   layer2 (w 128, 56 -> 28): first 2*401,408 + 2*100,352 + 3*401,408 = 2,207,744;
//     others 2*100,352 + 2*100,352 + 2*401,408 = 1,204,224: 2,207,744 + 3*1,204,224 = 5,820,416
//   layer3 (w 256, 28 -> 14): first 2*200,704 + 2*50,176 + 3*200,704 = 1,103,872;
//     others 602,112:                             1,103,872 + 5*602,112 = 4,114,432
//   layer4 (w 512, 14 -> 7): first 2*100,352 + 2*25,088 + 3*100,352 = 551,936;
//     others 301,056:                               551,936 + 2*301,056 = 1,154,048
// Head: avgpool 2048 (fc's input), 1000 probabilities = 3,048.
// Total 1,956,864 + 19,117,056 + 3,048 = 21,076,968 elements: 84.3 MB in FP32,
// below the ~130 MB that lets FP32 batch 112 fit a 16 GB V100 (NVIDIA
// DeepLearningExamples: (16e9 - ~1e9 - 3*4*25.6e6) / 112).
TEST(MemoryEstimate, Resnet50ByHand) {
  const Network net = ZooNetwork("resnet50");
  const MemoryEstimate m = EstimateTrainingMemory(net, 1, Optimizer::kSgdMomentum, 4, 4);
  EXPECT_DOUBLE_EQ(m.activation_bytes, 21076968.0 * 4);
  EXPECT_LT(m.activation_bytes, 130e6);
  // Gradient peak: at a layer1 add, its output's gradient and its two
  // operands', 256x56x56 = 802,816 each: 3 * 802,816 = 2,408,448.
  EXPECT_DOUBLE_EQ(m.activation_gradient_bytes, 3 * 802816.0 * 4);
}

TEST(Optimizer, NamesParse) {
  EXPECT_EQ(ParseOptimizer("adam"), Optimizer::kAdam);
  EXPECT_EQ(ParseOptimizer("rmsprop"), Optimizer::kRmsprop);
  EXPECT_STREQ(OptimizerName(Optimizer::kRmsprop), "rmsprop");
  EXPECT_EQ(ParseOptimizer("momentum"), Optimizer::kSgdMomentum);
  EXPECT_STREQ(OptimizerName(ParseOptimizer("sgd")), "sgd");
  EXPECT_THROW(ParseOptimizer("lamb"), UsageError);
  EXPECT_STREQ(PassName(Pass::kBackwardWeights), "backward-weights");
}

}  // namespace
}  // namespace fitspeed
