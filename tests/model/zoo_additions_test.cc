// The zoo additions (efficientnet-b0, alexnet, googlenet) and the layer kinds
// they brought (sigmoid, swish, mul, concat, lrn): parameter counts against
// published figures, multiply-adds against the papers, per-pass FLOPs and
// validation errors against hand calculations.
#include <gtest/gtest.h>

#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/model/network_json.h"
#include "fitspeed/model/zoo.h"
#include "model/attrs_util.h"
#include "model/matmul_macs.h"

namespace fitspeed {
namespace {

using test::Conv;
using test::Pool;
using test::Units;

const LayerCost& CostOf(const NetworkCost& cost, const Network& net, const std::string& name) {
  return cost.layers.at(static_cast<size_t>(net.LayerId(name)));
}

std::string FinalizeErrorZooAdditions(Network& net) {
  try {
    net.Finalize();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(ZooAdditions, NewKindNamesRoundTrip) {
  for (const char* name : {"sigmoid", "swish", "mul", "concat", "lrn"}) {
    const auto kind = LayerKindFromName(name);
    ASSERT_TRUE(kind.has_value()) << name;
    EXPECT_STREQ(LayerKindName(*kind), name);
  }
  // The kinds that existed before keep their values (the enum only grew).
  EXPECT_EQ(static_cast<int>(LayerKind::kSoftmaxCrossEntropy), 10);
  EXPECT_EQ(static_cast<int>(LayerKind::kSigmoid), 11);
  EXPECT_EQ(static_cast<int>(LayerKind::kLrn), 15);
}

TEST(ZooAdditions, EfficientNetB0MatchesKerasParameterCount) {
  // keras.applications.EfficientNetB0 model.summary(): 5,330,571 total,
  // 5,288,548 trainable, 42,023 non-trainable. 7 of the non-trainable are its
  // input Normalization layer (mean 3, variance 3, count 1), which fitspeed
  // leaves out; the other 42,016 are the moving mean and variance of 21,008
  // batch-norm channels:
  //   stem 32; block1a 32 (dw) + 16 (project);
  //   per expanded block (filters f = 6*f_in): f (expand) + f (dw) + f_out:
  //   2a 96+96+24, 2b 144+144+24, 3a 144+144+40, 3b 240+240+40,
  //   4a 240+240+80, 4b,4c 2*(480+480+80), 5a 480+480+112, 5b,5c 2*(672+672+112),
  //   6a 672+672+192, 6b..6d 3*(1152+1152+192), 7a 1152+1152+320; top 1280
  //   = 80 + 216 + 312 + 328 + 520 + 560 + 2,080 + 1,072 + 2,912 + 1,536 + 7,488
  //     + 2,624 + 1,280 = 21,008.
  const Network net = ZooNetwork("efficientnet-b0");
  EXPECT_EQ(net.TrainableParamCount(), 5288548);
  EXPECT_EQ(net.ParamCount(), 5330571 - 7);
  EXPECT_EQ(net.ParamCount() - net.TrainableParamCount(), 2 * 21008);
  // 224 -> 112 (stem) -> 112 (1a) -> 56 (2a) -> 28 (3a) -> 14 (4a, 5a) -> 7 (6a, 7a).
  EXPECT_EQ(net.layer(net.LayerId("block1a_se_excite")).output_shape, Shape::Chw(32, 112, 112));
  EXPECT_EQ(net.layer(net.LayerId("block5c_add")).output_shape, Shape::Chw(112, 14, 14));
  EXPECT_EQ(net.layer(net.LayerId("block7a_project_bn")).output_shape, Shape::Chw(320, 7, 7));
  EXPECT_EQ(net.layer(net.LayerId("top_activation")).output_shape, Shape::Chw(1280, 7, 7));
  // Squeeze-excite of block 6b: 1152 channels squeezed to 192/4 = 48.
  EXPECT_EQ(net.layer(net.LayerId("block6b_se_reduce")).output_shape, Shape::Vector(48));
  EXPECT_EQ(net.num_classes(), 1000);
}

TEST(ZooAdditions, EfficientNetB0MatchesThePaperMultiplyAdds) {
  // Tan & Le 2019, table 2: EfficientNet-B0 0.39B FLOPs (multiply-adds).
  const Network net = ZooNetwork("efficientnet-b0");
  EXPECT_NEAR(test::MatmulMacs(net) / 1e9, 0.39, 0.02 * 0.39);
  // The stem by hand: 3x3x3 -> 32 on a 112x112 output: 27*32*12,544 = 10,838,016 MACs.
  const NetworkCost cost = CountCost(net);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "stem_conv").forward.flops.per_sample, 2.0 * 10838016);
  // Swish after the stem, 32*112*112 = 401,408 elements: 4 FLOPs each forward.
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "stem_activation").forward.flops.per_sample, 4.0 * 401408);
  // The SE multiply of block 1a: one multiply per element of 32x112x112.
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "block1a_se_excite").forward.flops.per_sample, 401408.0);
}

TEST(ZooAdditions, AlexNetMatchesPaddleConfigByHand) {
  // Paddle's benchmark alexnet.py, one tower, 227x227 (no published total of
  // its own; this is the usual ungrouped AlexNet figure, 62,378,344):
  //   conv1 11*11*3*96 + 96        =     34,944   (227 + 2 - 11)/4 + 1 = 55
  //   conv2 5*5*96*256 + 256       =    614,656   pools: 55 -> 27 -> 13 -> 6
  //   conv3 3*3*256*384 + 384      =    885,120
  //   conv4 3*3*384*384 + 384      =  1,327,488
  //   conv5 3*3*384*256 + 256      =    884,992
  //   fc6 256*6*6*4096 + 4096      = 37,752,832
  //   fc7 4096*4096 + 4096         = 16,781,312
  //   fc8 4096*1000 + 1000         =  4,097,000
  //   total                        = 62,378,344 (LRN has no parameters)
  const Network net = ZooNetwork("alexnet");
  EXPECT_EQ(net.ParamCount(), 62378344);
  EXPECT_EQ(net.TrainableParamCount(), 62378344);
  EXPECT_EQ(net.layer(net.LayerId("conv1")).output_shape, Shape::Chw(96, 55, 55));
  // Paddle's pools round up: (55 - 3)/2 + 1 = 27, (27 - 3)/2 + 1 = 13, (13 - 3)/2 + 1 = 6.
  EXPECT_EQ(net.layer(net.LayerId("pool1")).output_shape, Shape::Chw(96, 27, 27));
  EXPECT_EQ(net.layer(net.LayerId("pool2")).output_shape, Shape::Chw(256, 13, 13));
  EXPECT_EQ(net.layer(net.LayerId("flatten")).output_shape, Shape::Vector(9216));
  // Multiply-adds by hand (output pixels * fan-in * filters):
  //   conv1 3,025*363*96 = 105,415,200; conv2 729*2,400*256 = 447,897,600;
  //   conv3 169*2,304*384 = 149,520,384; conv4 169*3,456*384 = 224,280,576;
  //   conv5 169*3,456*256 = 149,520,384; fc 37,748,736 + 16,777,216 + 4,096,000
  //   = 1,135,256,096.
  EXPECT_DOUBLE_EQ(test::MatmulMacs(net), 1135256096.0);
  // LRN norm1 on 96x55x55 = 290,400 elements, size 5: (5 + 4) FLOPs each forward.
  const NetworkCost cost = CountCost(net);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "norm1").forward.flops.per_sample, 9.0 * 290400);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "norm1").backward_data.flops.per_sample, 18.0 * 290400);
}

TEST(ZooAdditions, TorchvisionAlexNetBuiltFromTheSameKindsMatchesItsCount) {
  // torchvision/models/alexnet.py (one weird trick variant, 224x224): conv
  // 64 11/4 p2, pool 3/2, conv 192 5 p2, pool, conv 384, 256, 256 3 p1, pool,
  // (the adaptive 6x6 average pool is the identity on 6x6), fc 4096, 4096,
  // 1000: 61,100,840 parameters (torchvision's AlexNet_Weights table).
  Network net("torchvision-alexnet", Shape::Chw(3, 224, 224));
  std::string x = net.Relu(net.Conv2d("input", Conv(64, MakeWindow(11, 4, 2))));
  x = net.MaxPool(x, Pool(MakeWindow(3, 2)));
  x = net.Relu(net.Conv2d(x, Conv(192, MakeWindow(5, 1, 2))));
  x = net.MaxPool(x, Pool(MakeWindow(3, 2)));
  x = net.Relu(net.Conv2d(x, Conv(384, MakeWindow(3, 1, 1))));
  x = net.Relu(net.Conv2d(x, Conv(256, MakeWindow(3, 1, 1))));
  x = net.Relu(net.Conv2d(x, Conv(256, MakeWindow(3, 1, 1))));
  x = net.Flatten(net.MaxPool(x, Pool(MakeWindow(3, 2))), "flatten");
  x = net.Relu(net.Dense(net.Relu(net.Dense(x, Units(4096))), Units(4096)));
  net.SoftmaxCrossEntropy(net.Dense(x, Units(1000)));
  net.Finalize();
  EXPECT_EQ(net.ParamCount(), 61100840);
  EXPECT_EQ(net.layer(net.LayerId("flatten")).output_shape, Shape::Vector(9216));
}

TEST(ZooAdditions, GoogLeNetMatchesPaddleConfigByHand) {
  // Paddle's benchmark googlenet.py (the paper's 5x5 convs, biases, no
  // batch-norm, no LRN, no auxiliary classifiers); Szegedy et al. 2015 quote
  // ~6.8M. By hand (k*k*in*out + out per conv):
  //   conv1 9,472 + conv2_1 4,160 + conv2_2 110,784       =   124,416
  //   3a 163,696; 3b 388,736                              =   552,432
  //   4a 376,176; 4b 449,160; 4c 510,104; 4d 605,376;
  //   4e 868,352                                          = 2,809,168
  //   5a 1,043,456; 5b 1,444,080                          = 2,487,536
  //   fc 1024*1000 + 1000                                 = 1,025,000
  //   total                                               = 6,998,552
  // e.g. 3a: 1x1 192*64+64 = 12,352; 3x3 reduce 192*96+96 = 18,528; 3x3
  // 9*96*128+128 = 110,720; 5x5 reduce 192*16+16 = 3,088; 5x5 25*16*32+32 =
  // 12,832; projection 192*32+32 = 6,176: 163,696.
  const Network net = ZooNetwork("googlenet");
  EXPECT_EQ(net.ParamCount(), 6998552);
  EXPECT_EQ(net.TrainableParamCount(), 6998552);
  // Rounded-up pools: 112 -> 56 -> 28 -> 14 -> 7.
  EXPECT_EQ(net.layer(net.LayerId("pool1")).output_shape, Shape::Chw(64, 56, 56));
  EXPECT_EQ(net.layer(net.LayerId("ince3a")).output_shape, Shape::Chw(256, 28, 28));
  EXPECT_EQ(net.layer(net.LayerId("ince4e")).output_shape, Shape::Chw(832, 14, 14));
  EXPECT_EQ(net.layer(net.LayerId("ince5b")).output_shape, Shape::Chw(1024, 7, 7));
  // About 1.5 G multiply-adds (Szegedy et al. 2015: "1.5 billion multiply-adds").
  EXPECT_NEAR(test::MatmulMacs(net) / 1e9, 1.5, 0.1 * 1.5);
}

// torchvision's BasicConv2d: conv (no bias) -> batch-norm (eps 1e-3) -> ReLU.
std::string TorchConv(Network& net, const std::string& x, int64_t filters, int kernel, int stride,
                      int padding) {
  BatchNormAttrs bn;
  return net.Relu(
      net.BatchNorm(net.Conv2d(x, Conv(filters, MakeWindow(kernel, stride, padding), false)), bn));
}

std::string TorchInception(Network& net, const std::string& x, int64_t f1, int64_t f3r, int64_t f3,
                           int64_t f5r, int64_t f5, int64_t proj) {
  // torchvision uses a 3x3 conv in the "5x5" branch (its known deviation).
  const std::string b3 = TorchConv(net, TorchConv(net, x, f3r, 1, 1, 0), f3, 3, 1, 1);
  const std::string b5 = TorchConv(net, TorchConv(net, x, f5r, 1, 1, 0), f5, 3, 1, 1);
  const std::string pool = net.MaxPool(x, Pool(MakeWindow(3, 1, 1)));
  return net.Concat({TorchConv(net, x, f1, 1, 1, 0), b3, b5, TorchConv(net, pool, proj, 1, 1, 0)});
}

TEST(ZooAdditions, TorchvisionGoogLeNetBuiltFromTheSameKindsMatchesItsCount) {
  // torchvision googlenet(aux_logits=False): 6,624,904 parameters (its
  // GoogLeNet_Weights table), counted without batch-norm running statistics.
  Network net("torchvision-googlenet", Shape::Chw(3, 224, 224));
  PoolAttrs ceil = Pool(MakeWindow(3, 2));  // ceil_mode=True: one extra pixel bottom/right
  ceil.window.pad_bottom = ceil.window.pad_right = 1;
  std::string x = net.MaxPool(TorchConv(net, "input", 64, 7, 2, 3), ceil);
  x = TorchConv(net, TorchConv(net, x, 64, 1, 1, 0), 192, 3, 1, 1);
  x = net.MaxPool(x, ceil);
  x = TorchInception(net, x, 64, 96, 128, 16, 32, 32);
  x = TorchInception(net, x, 128, 128, 192, 32, 96, 64);
  x = net.MaxPool(x, ceil);
  x = TorchInception(net, x, 192, 96, 208, 16, 48, 64);
  x = TorchInception(net, x, 160, 112, 224, 24, 64, 64);
  x = TorchInception(net, x, 128, 128, 256, 24, 64, 64);
  x = TorchInception(net, x, 112, 144, 288, 32, 64, 64);
  x = TorchInception(net, x, 256, 160, 320, 32, 128, 128);
  x = net.MaxPool(x, Pool(MakeWindow(2, 2)));  // torchvision's maxpool4: 2x2/2, ceil: 14 -> 7
  x = TorchInception(net, x, 256, 160, 320, 32, 128, 128);
  x = TorchInception(net, x, 384, 192, 384, 48, 128, 128);
  x = net.GlobalAvgPool(x, "avgpool");
  net.SoftmaxCrossEntropy(net.Dense(x, Units(1000)));
  net.Finalize();
  EXPECT_EQ(net.TrainableParamCount(), 6624904);
  EXPECT_EQ(net.layer(net.LayerId("avgpool")).output_shape, Shape::Vector(1024));
}

// input 4x3x3 -> conv 1x1 c (bias) -> swish s -> gap g -> sigmoid sg ->
// mul m = s * sg -> lrn l (size 3) -> concat cat(l, c) -> gap -> dense -> loss.
Network NewKindsNet() {
  Network net("new-kinds", Shape::Chw(4, 3, 3));
  const std::string c = net.Conv2d("input", Conv(4, MakeWindow(1)), "c");
  const std::string s = net.Swish(c, "s");
  const std::string sg = net.Sigmoid(net.GlobalAvgPool(s, "g"), "sg");
  const std::string m = net.Mul(s, sg, "m");
  LrnAttrs lrn;
  lrn.size = 3;
  const std::string l = net.Lrn(m, lrn, "l");
  const std::string cat = net.Concat({l, c}, "cat");
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(cat), Units(2)), "loss");
  net.Finalize();
  return net;
}

TEST(ZooAdditions, NewKindsCountFlopsAndTrafficByHand) {
  const Network net = NewKindsNet();
  EXPECT_EQ(net.layer(net.LayerId("cat")).output_shape, Shape::Chw(8, 3, 3));
  EXPECT_EQ(net.layer(net.LayerId("m")).output_shape, Shape::Chw(4, 3, 3));
  const NetworkCost cost = CountCost(net);
  // 36 elements per 4x3x3 tensor.
  // swish: forward 4*36 = 144; backward 8*36 = 288 plus the sum of its two
  // consumers' gradients (g and m): 36.
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "s").forward.flops.per_sample, 144);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "s").backward_data.flops.per_sample, 288 + 36);
  // sigmoid on {4}: 3*4 forward and backward; backward reads s and dy (8), writes 4.
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "sg").forward.flops.per_sample, 12);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "sg").backward_data.flops.per_sample, 12);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "sg").backward_data.elements_read.per_sample, 8);
  // mul: forward 36 multiplies, reads 36 + 4, writes 36; backward 36 (da =
  // dy*b) + 2*36 (db = sum over 3x3 of dy*a) = 108, writes 36 + 4.
  const LayerCost& m = CostOf(cost, net, "m");
  EXPECT_DOUBLE_EQ(m.forward.flops.per_sample, 36);
  EXPECT_DOUBLE_EQ(m.forward.elements_read.per_sample, 40);
  EXPECT_DOUBLE_EQ(m.backward_data.flops.per_sample, 108);
  EXPECT_DOUBLE_EQ(m.backward_data.elements_written.per_sample, 40);
  // lrn size 3: (3 + 4)*36 = 252 forward, (2*3 + 8)*36 = 504 backward.
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "l").forward.flops.per_sample, 252);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "l").backward_data.flops.per_sample, 504);
  // concat: no FLOPs; 72 elements copied each way.
  const LayerCost& cat = CostOf(cost, net, "cat");
  EXPECT_DOUBLE_EQ(cat.forward.flops.per_sample, 0);
  EXPECT_DOUBLE_EQ(cat.forward.elements_written.per_sample, 72);
  EXPECT_DOUBLE_EQ(cat.backward_data.elements_read.per_sample, 72);
  EXPECT_EQ(cat.activation_elements, 72);
  for (const char* name : {"s", "sg", "m", "l", "cat"}) {
    EXPECT_EQ(CostOf(cost, net, name).params, 0) << name;
  }
}

TEST(ZooAdditions, MulCountsOnlyTheOperandGradientsNeeded) {
  // The scale comes from the input alone (no trainable parameter before it),
  // so only da = dy*b is computed: 8 multiplies on 2x2x2.
  Network net("mul-grad", Shape::Chw(2, 2, 2));
  const std::string a = net.Conv2d("input", Conv(2, MakeWindow(1)), "a");
  const std::string b = net.Sigmoid(net.GlobalAvgPool("input", "g"), "b");
  const std::string m = net.Mul(a, b, "m");
  net.SoftmaxCrossEntropy(net.Dense(net.Flatten(m), Units(2)), "loss");
  net.Finalize();
  const NetworkCost cost = CountCost(net);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "m").backward_data.flops.per_sample, 8);
  EXPECT_DOUBLE_EQ(CostOf(cost, net, "b").backward_data.flops.per_sample, 0);
}

TEST(ZooAdditions, NewKindsRejectBadOperands) {
  {
    Network net("bad-mul", Shape::Chw(4, 3, 3));
    const std::string g = net.GlobalAvgPool("input", "g");
    const std::string d = net.Dense(g, Units(3), "d");  // 3 scales for 4 channels
    net.SoftmaxCrossEntropy(net.Dense(net.Flatten(net.Mul("input", d, "m")), Units(2)));
    const std::string error = FinalizeErrorZooAdditions(net);
    EXPECT_NE(error.find("\"m\""), std::string::npos) << error;
    EXPECT_NE(error.find("shape mismatch"), std::string::npos) << error;
  }
  {
    Network net("bad-concat", Shape::Chw(4, 4, 4));
    const std::string p = net.MaxPool("input", Pool(MakeWindow(2, 2)), "p");  // 4x2x2
    net.SoftmaxCrossEntropy(
        net.Dense(net.GlobalAvgPool(net.Concat({"input", p}, "cat")), Units(2)));
    const std::string error = FinalizeErrorZooAdditions(net);
    EXPECT_NE(error.find("\"cat\""), std::string::npos) << error;
    EXPECT_NE(error.find("only the first (channel) dimension may differ"), std::string::npos)
        << error;
  }
  {
    Network net("one-concat", Shape::Chw(4, 4, 4));
    net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(net.Concat({"input"}, "cat")), Units(2)));
    EXPECT_NE(FinalizeErrorZooAdditions(net).find("concat needs two or more inputs, has 1"),
              std::string::npos);
  }
  {
    Network net("even-lrn", Shape::Chw(4, 4, 4));
    LrnAttrs lrn;
    lrn.size = 4;
    net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(net.Lrn("input", lrn, "n")), Units(2)));
    EXPECT_NE(FinalizeErrorZooAdditions(net).find("size 4 must be odd"), std::string::npos);
  }
  {
    Network net("lrn-vector", Shape::Vector(4));
    net.SoftmaxCrossEntropy(net.Dense(net.Lrn("input", {}, "n"), Units(2)));
    EXPECT_NE(FinalizeErrorZooAdditions(net).find("is not an image"), std::string::npos);
  }
}

TEST(ZooAdditions, JsonReadsTheNewKinds) {
  const std::string text = R"({"input": [4, 3, 3], "layers": [
    {"name": "c", "kind": "conv2d", "filters": 4, "kernel": 1},
    {"name": "s", "kind": "swish"},
    {"name": "g", "kind": "global_avg_pool"},
    {"name": "sg", "kind": "sigmoid"},
    {"name": "m", "kind": "mul", "inputs": ["s", "sg"]},
    {"name": "l", "kind": "lrn", "size": 3, "alpha": 0.001, "beta": 0.5, "k": 2},
    {"name": "cat", "kind": "concat", "inputs": ["l", "c"]},
    {"kind": "global_avg_pool"}, {"kind": "dense", "units": 2},
    {"kind": "softmax_cross_entropy"}]})";
  const Network net = ParseNetworkJson(text, "new.json");
  const Layer& lrn = net.layer(net.LayerId("l"));
  EXPECT_EQ(lrn.kind, LayerKind::kLrn);
  EXPECT_EQ(lrn.lrn.size, 3);
  EXPECT_DOUBLE_EQ(lrn.lrn.alpha, 0.001);
  EXPECT_DOUBLE_EQ(lrn.lrn.beta, 0.5);
  EXPECT_DOUBLE_EQ(lrn.lrn.k, 2);
  EXPECT_EQ(net.layer(net.LayerId("cat")).output_shape, Shape::Chw(8, 3, 3));
  // Written back and read again: the same layers and attributes.
  const Network again = ParseNetworkJson(NetworkToJson(net), "again.json");
  EXPECT_EQ(NetworkToJson(again), NetworkToJson(net));
  // An unknown key of an lrn layer is named.
  try {
    ParseNetworkJson(R"({"input": [4, 3, 3], "layers": [{"kind": "lrn", "window": 3},
      {"kind": "global_avg_pool"}, {"kind": "dense", "units": 2},
      {"kind": "softmax_cross_entropy"}]})",
                     "bad.json");
    FAIL() << "no exception";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("window"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fitspeed
