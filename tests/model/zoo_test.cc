#include "fitspeed/model/zoo.h"

#include <gtest/gtest.h>

#include <string>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

// Parameter counts in the Keras convention: total includes the batch-norm
// moving mean and variance (non-trainable), trainable excludes them. PyTorch's
// published counts are the trainable ones (running statistics are buffers).

TEST(Zoo, MlpMnistParams) {
  // Keras examples/mnist_mlp.py model.summary(): 669,706.
  // By hand: 784*512 + 512 + 512*512 + 512 + 512*10 + 10 = 401,920 + 262,656 + 5,130.
  const Network net = ZooNetwork("mlp-mnist");
  EXPECT_EQ(net.ParamCount(), 669706);
  EXPECT_EQ(net.TrainableParamCount(), 669706);
}

TEST(Zoo, CnnCifarSmallParams) {
  // Keras examples/cifar10_cnn.py model.summary(): 1,250,858. By hand: convs
  // 896 + 9,248 + 18,496 + 36,928; 32 -> 32 (same) -> 30 -> 15 -> 15 (same) ->
  // 13 -> 6, so dense 6*6*64 = 2,304 -> 512: 1,180,160; dense 512 -> 10: 5,130.
  const Network net = ZooNetwork("cnn-cifar-small");
  EXPECT_EQ(net.ParamCount(), 1250858);
  EXPECT_EQ(net.TrainableParamCount(), 1250858);
  EXPECT_EQ(net.layer(net.LayerId("flatten")).output_shape, Shape::Vector(2304));
}

TEST(Zoo, Resnet18CifarParams) {
  // kuangliu/pytorch-cifar ResNet18: 11,173,962 parameters (PyTorch count).
  // Batch-norm channels: stem 64; layer1 4*64 = 256; layer2 5*128 = 640 (with
  // the shortcut's); layer3 5*256 = 1,280; layer4 5*512 = 2,560; 4,800 in all,
  // each with a moving mean and variance: 9,600 non-trainable.
  const Network net = ZooNetwork("resnet18-cifar");
  EXPECT_EQ(net.TrainableParamCount(), 11173962);
  EXPECT_EQ(net.ParamCount(), 11173962 + 9600);
  EXPECT_EQ(net.num_classes(), 10);
}

TEST(Zoo, Resnet50Params) {
  // torchvision resnet50: 25,557,032 parameters. keras.applications.ResNet50
  // (same layers plus a bias on every conv) reports 53,120 non-trainable: the
  // moving statistics of 26,560 batch-norm channels (stem 64; stages
  // 3*(64+64+256)+256, 4*(128+128+512)+512, 6*(256+256+1024)+1024,
  // 3*(512+512+2048)+2048 = 1,408 + 3,584 + 10,240 + 11,264).
  const Network net = ZooNetwork("resnet50");
  EXPECT_EQ(net.TrainableParamCount(), 25557032);
  EXPECT_EQ(net.ParamCount(), 25557032 + 53120);
  // Shapes after the stride-2 stem and max pool: 224 -> 112 -> 56; final 7x7.
  EXPECT_EQ(net.layer(net.LayerId("maxpool")).output_shape, Shape::Chw(64, 56, 56));
  EXPECT_EQ(net.layer(net.LayerId("layer4.2.relu")).output_shape, Shape::Chw(2048, 7, 7));
}

TEST(Zoo, Vgg16Params) {
  // keras.applications.VGG16 / torchvision vgg16: 138,357,544 parameters.
  const Network net = ZooNetwork("vgg16");
  EXPECT_EQ(net.ParamCount(), 138357544);
  EXPECT_EQ(net.TrainableParamCount(), 138357544);
  EXPECT_EQ(net.layer(net.LayerId("flatten")).output_shape, Shape::Vector(25088));  // 512*7*7
}

TEST(Zoo, Vgg19Params) {
  // keras.applications.VGG19 / torchvision vgg19: 143,667,240 parameters, VGG-16
  // plus one 3x3 conv in each of blocks 3-5: 256->256 (3*3*256*256 + 256 = 590,080)
  // and twice 512->512 (2,359,808): 138,357,544 + 590,080 + 2 * 2,359,808.
  const Network net = ZooNetwork("vgg19");
  EXPECT_EQ(net.ParamCount(), 143667240);
  EXPECT_EQ(net.layer(net.LayerId("block5_conv4")).output_shape, Shape::Chw(512, 14, 14));
  EXPECT_EQ(net.layer(net.LayerId("flatten")).output_shape, Shape::Vector(25088));
}

TEST(Zoo, MobilenetV1Params) {
  // keras.applications.MobileNet (alpha 1, 1000 classes) model.summary():
  // 4,253,864 total, 4,231,976 trainable, 21,888 non-trainable.
  const Network net = ZooNetwork("mobilenet-v1");
  EXPECT_EQ(net.ParamCount(), 4253864);
  EXPECT_EQ(net.TrainableParamCount(), 4231976);
  EXPECT_EQ(net.layer(net.LayerId("conv_pw_13_relu")).output_shape, Shape::Chw(1024, 7, 7));
}

TEST(Zoo, WideResnetParams) {
  // The Colab TPU benchmark's WideResNet (issue 3): 103,465,028 / 103,452,484.
  // By hand (conv k*k*in*out + out bias; batch-norm 4*C, 2*C trainable):
  //   conv_in 1x1 3->112:                    3*112 + 112                 =        448
  //   stage 1, 4 blocks of 2x [7x7 112->112 (614,656 + 112) + bn 448]:
  //                                          8 * (614,768 + 448)         =  4,921,728
  //   transition 1x1 112->224:               112*224 + 224               =     25,312
  //   stage 2: 8 * (49*224*224 + 224 + 896)  8 * (2,458,848 + 896)       = 19,677,952
  //   transition 1x1 224->448:               224*448 + 448               =    100,800
  //   stage 3: 8 * (49*448*448 + 448 + 1792) 8 * (9,834,944 + 1,792)     = 78,693,888
  //   dense 448->100:                        44,800 + 100                =     44,900
  //   total                                                              = 103,465,028
  // Non-trainable: moving mean and variance of 8*(112 + 224 + 448) = 6,272
  // channels = 12,544, so 103,452,484 trainable.
  const Network net = ZooNetwork("wrn-k7n4-7x7");
  EXPECT_EQ(net.ParamCount(), 103465028);
  EXPECT_EQ(net.TrainableParamCount(), 103452484);
  EXPECT_EQ(net.num_classes(), 100);
  EXPECT_EQ(net.layer(net.LayerId("stage3.block4.add")).output_shape, Shape::Chw(448, 8, 8));
}

TEST(Zoo, EveryEntryBuildsWithItsSource) {
  // 7 + efficientnet-b0, alexnet, googlenet, vgg19 + 6 transformers.
  ASSERT_EQ(ZooEntries().size(), 17u);
  for (const ZooEntry& entry : ZooEntries()) {
    const Network net = ZooNetwork(entry.name);
    EXPECT_EQ(net.name, entry.name);
    EXPECT_FALSE(entry.reference.empty()) << entry.name;
    EXPECT_TRUE(net.finalized());
  }
}

TEST(Zoo, UnknownNameListsTheZoo) {
  try {
    ZooNetwork("resnet-1000");
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet-1000"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("wrn-k7n4-7x7"), std::string::npos);
  }
  EXPECT_THROW(LoadNetwork("resnet-1000"), UsageError);
}

// A path is read as a file: missing, it is an InputError (66), as in sweep.
TEST(Zoo, MissingNetworkFileIsAnInputError) {
  EXPECT_THROW(LoadNetwork("/no/such/file.json"), InputError);
  EXPECT_THROW(LoadNetwork("no-such-file.json"), InputError);
}

TEST(Zoo, LoadNetworkReadsZooNamesAndFiles) {
  EXPECT_EQ(LoadNetwork("vgg16").ParamCount(), 138357544);
  const Network net =
      LoadNetwork(std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/models/tiny-resnet.json");
  EXPECT_EQ(net.name, "tiny-resnet");
}

}  // namespace
}  // namespace fitspeed
