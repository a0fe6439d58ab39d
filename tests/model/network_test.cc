#include "fitspeed/model/network.h"

#include <gtest/gtest.h>

#include <string>

#include "fitspeed/core/error.h"
#include "model/attrs_util.h"

namespace fitspeed {
namespace {

using test::Conv;
using test::Pool;
using test::Units;

// The DataError message of net.Finalize(), or "" when it does not throw.
std::string FinalizeError(Network& net) {
  try {
    net.Finalize();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

// A classifier head so that a test network is complete.
void Head(Network& net, const std::string& x, int64_t classes = 10) {
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(x), Units(classes)), "loss");
}

TEST(Shape, ElementsAndText) {
  EXPECT_EQ(Shape::Chw(3, 32, 32).elements(), 3072);  // 3*32*32
  EXPECT_EQ(Shape::Chw(3, 32, 32).ToString(), "3x32x32");
  EXPECT_EQ(Shape::Scalar().elements(), 1);
  EXPECT_EQ(Shape::Scalar().ToString(), "scalar");
  EXPECT_EQ(Shape::Vector(10).rank(), 1);
}

TEST(LayerKind, NamesRoundTrip) {
  for (const char* name : {"input", "conv2d", "dense", "batch_norm", "relu", "avg_pool", "max_pool",
                           "global_avg_pool", "add", "flatten", "softmax_cross_entropy"}) {
    const auto kind = LayerKindFromName(name);
    ASSERT_TRUE(kind.has_value()) << name;
    EXPECT_STREQ(LayerKindName(*kind), name);
  }
  EXPECT_FALSE(LayerKindFromName("conv3d").has_value());
}

TEST(Network, ConvOutputShapeFromStrideAndPadding) {
  Network net("t", Shape::Chw(3, 32, 32));
  // floor((32 + 3 + 3 - 7) / 2) + 1 = floor(31/2) + 1 = 16
  const std::string a = net.Conv2d("input", Conv(8, MakeWindow(7, 2, 3)), "a");
  // valid 5x5: 16 - 5 + 1 = 12
  const std::string b = net.Conv2d(a, Conv(8, MakeWindow(5)), "b");
  // resnet max pool 3x3/2 pad 1: floor((12 + 2 - 3)/2) + 1 = 5 + 1 = 6
  const std::string c = net.MaxPool(b, Pool(MakeWindow(3, 2, 1)), "c");
  Head(net, c);
  net.Finalize();
  EXPECT_EQ(net.layer(net.LayerId("a")).output_shape, Shape::Chw(8, 16, 16));
  EXPECT_EQ(net.layer(net.LayerId("b")).output_shape, Shape::Chw(8, 12, 12));
  EXPECT_EQ(net.layer(net.LayerId("c")).output_shape, Shape::Chw(8, 6, 6));
}

TEST(Network, SamePaddingFollowsTensorFlowRule) {
  // TensorFlow "same": out = ceil(in/stride), total = max((out-1)*stride + k - in, 0),
  // top = total/2, bottom the rest.
  Network net("t", Shape::Chw(4, 8, 7));
  // H: out ceil(8/2) = 4, total (4-1)*2 + 3 - 8 = 1 -> top 0, bottom 1.
  // W: out ceil(7/2) = 4, total (4-1)*2 + 3 - 7 = 2 -> left 1, right 1.
  const std::string a = net.Conv2d("input", Conv(4, SameWindow(3, 2)), "a");
  // stride 1, kernel 7 on 4x4: total 6 -> 3 and 3, output 4x4.
  const std::string b = net.Conv2d(a, Conv(4, SameWindow(7)), "b");
  Head(net, b);
  net.Finalize();
  const Layer& la = net.layer(net.LayerId("a"));
  EXPECT_EQ(la.output_shape, Shape::Chw(4, 4, 4));
  EXPECT_EQ(la.conv.window.padding, Padding::kExplicit);
  EXPECT_EQ(la.conv.window.pad_top, 0);
  EXPECT_EQ(la.conv.window.pad_bottom, 1);
  EXPECT_EQ(la.conv.window.pad_left, 1);
  EXPECT_EQ(la.conv.window.pad_right, 1);
  const Layer& lb = net.layer(net.LayerId("b"));
  EXPECT_EQ(lb.output_shape, Shape::Chw(4, 4, 4));
  EXPECT_EQ(lb.conv.window.pad_top, 3);
  EXPECT_EQ(lb.conv.window.pad_bottom, 3);
}

TEST(Network, ParameterTensorsAndCounts) {
  Network net("t", Shape::Chw(16, 8, 8));
  // depthwise 3x3: kernel {16, 1, 3, 3} = 144, no bias
  const std::string dw = net.Conv2d("input", Conv(16, MakeWindow(3, 1, 1), false, 16), "dw");
  // batch-norm on 16 channels: gamma, beta trainable, moving mean/variance not: 4*16 = 64
  const std::string bn = net.BatchNorm(dw, {}, "bn");
  // pointwise 16->32 with bias: 16*32 + 32 = 544
  const std::string pw = net.Conv2d(net.Relu(bn), Conv(32, MakeWindow(1)), "pw");
  // dense 32->10: 320 + 10 = 330
  Head(net, pw);
  net.Finalize();
  const Layer& ldw = net.layer(net.LayerId("dw"));
  ASSERT_EQ(ldw.params.size(), 1u);
  EXPECT_EQ(ldw.params[0].shape, Shape({16, 1, 3, 3}));
  const Layer& lbn = net.layer(net.LayerId("bn"));
  ASSERT_EQ(lbn.params.size(), 4u);
  EXPECT_EQ(lbn.ParamCount(), 64);
  EXPECT_EQ(lbn.TrainableParamCount(), 32);
  EXPECT_EQ(net.layer(net.LayerId("pw")).params[0].shape, Shape({32, 16, 1, 1}));
  // 144 + 64 + 544 + 330 = 1082 in all; 1082 - 32 moving statistics = 1050 trainable
  EXPECT_EQ(net.ParamCount(), 1082);
  EXPECT_EQ(net.TrainableParamCount(), 1050);
  EXPECT_EQ(net.num_classes(), 10);
  EXPECT_EQ(net.input_shape(), Shape::Chw(16, 8, 8));
}

TEST(Network, ConsumersAndDefaultNames) {
  Network net("t", Shape::Chw(4, 4, 4));
  const std::string a = net.Relu("input");
  const std::string b = net.Add({"input", a});
  Head(net, b);
  net.Finalize();
  EXPECT_EQ(a, "relu_1");  // "<kind>_<index>", the input is layer 0
  EXPECT_EQ(b, "add_2");
  EXPECT_EQ(net.layer(0).consumer_ids, (std::vector<int>{1, 2}));
  EXPECT_EQ(net.layer(2).input_ids, (std::vector<int>{0, 1}));
}

TEST(Network, DenseOnRowsAndFlatten) {
  Network net("t", Shape({6, 8}));  // 6 tokens of 8 features
  const std::string d = net.Dense("input", Units(5), "d");
  net.SoftmaxCrossEntropy(d, "loss");
  net.Finalize();
  EXPECT_EQ(net.layer(net.LayerId("d")).output_shape, Shape({6, 5}));
  EXPECT_EQ(net.layer(net.LayerId("d")).params[0].shape, Shape({5, 8}));
  EXPECT_EQ(net.layer(net.LayerId("loss")).output_shape, Shape::Scalar());

  Network flat("f", Shape::Chw(16, 5, 5));
  const std::string f = flat.Flatten("input", "f");
  flat.SoftmaxCrossEntropy(flat.Dense(f, Units(3)), "loss");
  flat.Finalize();
  EXPECT_EQ(flat.layer(1).output_shape, Shape::Vector(400));  // 16*5*5
}

TEST(NetworkErrors, AddShapeMismatchNamesTheLayer) {
  Network net("t", Shape::Chw(4, 8, 8));
  const std::string a = net.Conv2d("input", Conv(8, MakeWindow(3, 1, 1)), "a");
  const std::string sum = net.Add({"input", a}, "sum");
  Head(net, sum);
  const std::string message = FinalizeError(net);
  EXPECT_NE(message.find("layers[2] \"sum\""), std::string::npos) << message;
  EXPECT_NE(message.find("shape mismatch"), std::string::npos) << message;
  EXPECT_NE(message.find("4x8x8"), std::string::npos) << message;
  EXPECT_NE(message.find("8x8x8"), std::string::npos) << message;
}

TEST(NetworkErrors, UnknownAndLaterInputs) {
  Network net("t", Shape::Chw(4, 8, 8));
  net.Relu("nope", {}, "r");
  Head(net, "r");
  std::string message = FinalizeError(net);
  EXPECT_NE(message.find("layers[1] \"r\""), std::string::npos) << message;
  EXPECT_NE(message.find("unknown input 'nope'"), std::string::npos) << message;

  Network later("t", Shape::Chw(4, 8, 8));
  later.Relu("b", {}, "a");
  later.Relu("a", {}, "b");
  Head(later, "b");
  message = FinalizeError(later);
  EXPECT_NE(message.find("input 'b' is defined after this layer"), std::string::npos) << message;
}

TEST(NetworkErrors, BadAttributesAndStructure) {
  {
    Network net("t", Shape::Chw(6, 8, 8));
    Head(net, net.Conv2d("input", Conv(8, MakeWindow(3), true, 4), "g"));
    EXPECT_NE(FinalizeError(net).find("groups 4 must divide"), std::string::npos);
  }
  {
    Network net("t", Shape::Chw(3, 4, 4));
    Head(net, net.Conv2d("input", Conv(8, MakeWindow(5)), "big"));  // 4 - 5 + 1 = 0
    EXPECT_NE(FinalizeError(net).find("does not fit the 3x4x4 input"), std::string::npos);
  }
  {
    Network net("t", Shape::Chw(3, 4, 4));
    net.SoftmaxCrossEntropy(net.Dense("input", Units(3), "d"), "loss");
    const std::string message = FinalizeError(net);
    EXPECT_NE(message.find("layers[1] \"d\""), std::string::npos) << message;
    EXPECT_NE(message.find("flatten first"), std::string::npos) << message;
  }
  {
    Network net("t", Shape::Vector(8));
    net.Dense("input", Units(3), "d");
    EXPECT_NE(FinalizeError(net).find("the last layer must be the loss"), std::string::npos);
  }
  {
    Network net("t", Shape::Vector(8));
    net.Relu("input", {}, "dead");
    net.SoftmaxCrossEntropy(net.Dense("input", Units(3)), "loss");
    const std::string message = FinalizeError(net);
    EXPECT_NE(message.find("\"dead\""), std::string::npos) << message;
    EXPECT_NE(message.find("no layer reads"), std::string::npos) << message;
  }
  {
    Network net("t", Shape::Vector(8));
    net.Relu("input", {}, "x");
    net.SoftmaxCrossEntropy(net.Dense("x", Units(3), "x"), "loss");
    EXPECT_NE(FinalizeError(net).find("duplicate name"), std::string::npos);
  }
  {
    Network net("t", Shape::Vector(8));
    BatchNormAttrs bn;
    bn.epsilon = 0;
    net.SoftmaxCrossEntropy(net.Dense(net.BatchNorm("input", bn), Units(3)), "loss");
    EXPECT_NE(FinalizeError(net).find("epsilon 0 must be > 0"), std::string::npos);
  }
  {
    Network net("t", Shape::Vector(8));
    net.SoftmaxCrossEntropy(net.Dense("input", Units(1)), "loss");
    EXPECT_NE(FinalizeError(net).find("at least 2 classes"), std::string::npos);
  }
  {
    Network net("t", Shape({0, 3}));
    net.SoftmaxCrossEntropy("input", "loss");
    EXPECT_NE(FinalizeError(net).find("input shape 0x3"), std::string::npos);
  }
  {
    Network net("t", Shape({int64_t{1} << 30, int64_t{1} << 30, 4}));  // 2^62 elements
    net.SoftmaxCrossEntropy(net.Dense(net.Flatten("input"), Units(3)), "loss");
    EXPECT_NE(FinalizeError(net).find("2^40"), std::string::npos);
  }
}

TEST(NetworkErrors, OriginAndLineNameTheSource) {
  Network net("t", Shape::Vector(8));
  net.origin = "nets/my.json";
  Layer layer;
  layer.name = "r";
  layer.kind = LayerKind::kRelu;
  layer.inputs = {"missing"};
  layer.origin_line = 12;
  net.Append(layer);
  net.SoftmaxCrossEntropy(net.Dense("r", Units(3)), "loss");
  const std::string message = FinalizeError(net);
  EXPECT_EQ(message.rfind("nets/my.json:12: field 'layers[1] \"r\"'", 0), 0u) << message;
}

}  // namespace
}  // namespace fitspeed
