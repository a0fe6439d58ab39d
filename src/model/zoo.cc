// The model zoo. Each network follows the definition cited in its entry;
// dropout layers of the originals are left out (no parameters, negligible
// work) and a final softmax becomes the softmax cross-entropy loss.
#include "fitspeed/model/zoo.h"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <system_error>

#include "fitspeed/core/error.h"
#include "fitspeed/model/network_json.h"

namespace fitspeed {

namespace {

// PyTorch's BatchNorm2d defaults (eps 1e-5, momentum 0.1 of the new value).
constexpr BatchNormAttrs kTorchBatchNorm{1e-5, 0.9, true, true};

Conv2dAttrs Conv(int64_t out_channels, Window2d window, bool bias, int64_t groups = 1) {
  Conv2dAttrs a;
  a.out_channels = out_channels;
  a.window = window;
  a.bias = bias;
  a.groups = groups;
  return a;
}

DenseAttrs Dense(int64_t units) {
  DenseAttrs a;
  a.units = units;
  return a;
}

PoolAttrs Pool(Window2d window) {
  PoolAttrs a;
  a.window = window;
  return a;
}

// conv (no bias) -> batch-norm [-> relu], PyTorch style symmetric padding.
std::string ConvBn(Network& net, const std::string& x, int64_t out_channels, int kernel, int stride,
                   int padding, bool relu, const std::string& name) {
  std::string y =
      net.Conv2d(x, Conv(out_channels, MakeWindow(kernel, stride, padding), false), name + ".conv");
  y = net.BatchNorm(y, kTorchBatchNorm, name + ".bn");
  return relu ? net.Relu(y, {}, name + ".relu") : y;
}

// keras-team/keras examples/mnist_mlp.py (Keras 2.x): 784-512-512-10, ReLU,
// dropout 0.2; model.summary() reports 669,706 parameters.
Network MlpMnist() {
  Network net("mlp-mnist", Shape::Vector(784));
  std::string x = "input";
  x = net.Relu(net.Dense(x, Dense(512), "dense_1"), {}, "relu_1");
  x = net.Relu(net.Dense(x, Dense(512), "dense_2"), {}, "relu_2");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(10), "dense_3"), "loss");
  return net;
}

// keras-team/keras examples/cifar10_cnn.py (Keras 2.x): conv32 same, conv32
// valid, maxpool, conv64 same, conv64 valid, maxpool, dense 512, dense 10;
// model.summary() reports 1,250,858 parameters.
Network CnnCifarSmall() {
  Network net("cnn-cifar-small", Shape::Chw(3, 32, 32));
  std::string x = "input";
  const Window2d valid3 = MakeWindow(3);
  x = net.Relu(net.Conv2d(x, Conv(32, SameWindow(3), true), "conv_1"), {}, "relu_1");
  x = net.Relu(net.Conv2d(x, Conv(32, valid3, true), "conv_2"), {}, "relu_2");
  x = net.MaxPool(x, Pool(MakeWindow(2, 2)), "pool_1");
  x = net.Relu(net.Conv2d(x, Conv(64, SameWindow(3), true), "conv_3"), {}, "relu_3");
  x = net.Relu(net.Conv2d(x, Conv(64, valid3, true), "conv_4"), {}, "relu_4");
  x = net.MaxPool(x, Pool(MakeWindow(2, 2)), "pool_2");
  x = net.Flatten(x, "flatten");
  x = net.Relu(net.Dense(x, Dense(512), "dense_1"), {}, "relu_5");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(10), "dense_2"), "loss");
  return net;
}

// ResNet BasicBlock (He et al. 2016) as in kuangliu/pytorch-cifar models/resnet.py:
// two 3x3 conv-bn, a 1x1 conv-bn shortcut when the shape changes.
std::string BasicBlock(Network& net, const std::string& x, int64_t in_planes, int64_t planes,
                       int stride, const std::string& name) {
  std::string y = ConvBn(net, x, planes, 3, stride, 1, true, name + ".1");
  y = ConvBn(net, y, planes, 3, 1, 1, false, name + ".2");
  std::string shortcut = x;
  if (stride != 1 || in_planes != planes) {
    shortcut = ConvBn(net, x, planes, 1, stride, 0, false, name + ".shortcut");
  }
  return net.Relu(net.Add({y, shortcut}, name + ".add"), {}, name + ".relu");
}

// kuangliu/pytorch-cifar models/resnet.py ResNet18(): 3x3 stem, [2, 2, 2, 2]
// BasicBlocks of 64..512 planes, 4x4 average pool, linear 512->10; 11,173,962
// parameters as PyTorch counts them (without batch-norm running statistics).
Network Resnet18Cifar() {
  Network net("resnet18-cifar", Shape::Chw(3, 32, 32));
  std::string x = ConvBn(net, "input", 64, 3, 1, 1, true, "stem");
  int64_t in_planes = 64;
  const int64_t planes[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < 2; ++block) {
      const int stride = stage > 0 && block == 0 ? 2 : 1;
      x = BasicBlock(net, x, in_planes, planes[stage], stride,
                     fmt::format("layer{}.{}", stage + 1, block));
      in_planes = planes[stage];
    }
  }
  x = net.GlobalAvgPool(x, "avgpool");  // avg_pool2d(out, 4) on a 4x4 map
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(10), "linear"), "loss");
  return net;
}

// Bottleneck of torchvision's ResNet-50 (v1.5: the stride on the 3x3 conv).
std::string Bottleneck(Network& net, const std::string& x, int64_t in_channels, int64_t width,
                       int stride, const std::string& name) {
  const int64_t out_channels = 4 * width;
  std::string y = ConvBn(net, x, width, 1, 1, 0, true, name + ".1");
  y = ConvBn(net, y, width, 3, stride, 1, true, name + ".2");
  y = ConvBn(net, y, out_channels, 1, 1, 0, false, name + ".3");
  std::string shortcut = x;
  if (stride != 1 || in_channels != out_channels) {
    shortcut = ConvBn(net, x, out_channels, 1, stride, 0, false, name + ".downsample");
  }
  return net.Relu(net.Add({y, shortcut}, name + ".add"), {}, name + ".relu");
}

// torchvision/models/resnet.py resnet50() (He et al. 2016, "Deep Residual
// Learning"): 7x7/2 stem, 3x3/2 max pool, [3, 4, 6, 3] bottlenecks, fc 2048->1000;
// 25,557,032 parameters (torchvision), 4.1 GMAC forward at 224x224.
Network Resnet50() {
  Network net("resnet50", Shape::Chw(3, 224, 224));
  std::string x = ConvBn(net, "input", 64, 7, 2, 3, true, "stem");
  x = net.MaxPool(x, Pool(MakeWindow(3, 2, 1)), "maxpool");
  int64_t in_channels = 64;
  const int64_t widths[] = {64, 128, 256, 512};
  const int blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < blocks[stage]; ++block) {
      const int stride = stage > 0 && block == 0 ? 2 : 1;
      x = Bottleneck(net, x, in_channels, widths[stage], stride,
                     fmt::format("layer{}.{}", stage + 1, block));
      in_channels = 4 * widths[stage];
    }
  }
  x = net.GlobalAvgPool(x, "avgpool");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(1000), "fc"), "loss");
  return net;
}

// Simonyan & Zisserman 2015, configuration D (keras.applications.VGG16,
// torchvision vgg16): 13 3x3 convs in 5 blocks with 2x2 max pools, fc
// 4096-4096-1000; 138,357,544 parameters.
Network Vgg16() {
  Network net("vgg16", Shape::Chw(3, 224, 224));
  std::string x = "input";
  const int64_t widths[] = {64, 128, 256, 512, 512};
  const int convs[] = {2, 2, 3, 3, 3};
  for (int block = 0; block < 5; ++block) {
    for (int i = 0; i < convs[block]; ++i) {
      const std::string name = fmt::format("block{}_conv{}", block + 1, i + 1);
      x = net.Relu(net.Conv2d(x, Conv(widths[block], MakeWindow(3, 1, 1), true), name), {},
                   name + "_relu");
    }
    x = net.MaxPool(x, Pool(MakeWindow(2, 2)), fmt::format("block{}_pool", block + 1));
  }
  x = net.Flatten(x, "flatten");
  x = net.Relu(net.Dense(x, Dense(4096), "fc1"), {}, "fc1_relu");
  x = net.Relu(net.Dense(x, Dense(4096), "fc2"), {}, "fc2_relu");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(1000), "predictions"), "loss");
  return net;
}

// keras.applications.MobileNet (Howard et al. 2017, alpha 1.0, 224x224, 1000
// classes): 3x3/2 conv, 13 depthwise-separable blocks, each conv without bias
// followed by batch-norm and ReLU6; global average pool; the 1x1 conv
// classifier (with bias) on the pooled 1x1 map written as the equivalent dense
// layer. model.summary(): 4,253,864 parameters, 4,231,976 trainable.
Network MobilenetV1() {
  Network net("mobilenet-v1", Shape::Chw(3, 224, 224));
  const BatchNormAttrs bn{1e-3, 0.99, true, true};  // Keras MobileNet's batch-norm
  ReluAttrs relu6;
  relu6.max_value = 6;
  std::string x = net.Conv2d("input", Conv(32, SameWindow(3, 2), false), "conv1");
  x = net.Relu(net.BatchNorm(x, bn, "conv1_bn"), relu6, "conv1_relu");
  struct Block {
    int64_t filters;
    int stride;
  };
  const Block blocks[] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
                          {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  int64_t channels = 32;
  int id = 1;
  for (const Block& b : blocks) {
    const std::string dw = fmt::format("conv_dw_{}", id);
    const std::string pw = fmt::format("conv_pw_{}", id);
    x = net.Conv2d(x, Conv(channels, SameWindow(3, b.stride), false, channels), dw);
    x = net.Relu(net.BatchNorm(x, bn, dw + "_bn"), relu6, dw + "_relu");
    x = net.Conv2d(x, Conv(b.filters, SameWindow(1), false), pw);
    x = net.Relu(net.BatchNorm(x, bn, pw + "_bn"), relu6, pw + "_relu");
    channels = b.filters;
    ++id;
  }
  x = net.GlobalAvgPool(x, "global_average_pooling");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(1000), "conv_preds"), "loss");
  return net;
}

// The WideResNet of the Colab TPU benchmark (k=7, N=4, 7x7 convs, CIFAR-100;
// DESIGN.md, issue 3): 1x1 conv 3->112 (bias); three stages of 4 blocks
// [7x7 conv (bias, same) -> bn -> relu -> 7x7 conv -> bn -> relu] + input at
// 112/224/448 channels, 2x2 average pool and 1x1 conv (bias) between stages;
// global average pool; dense 448->100. Keras counts 103,465,028 parameters,
// 103,452,484 trainable.
Network WrnK7n4() {
  Network net("wrn-k7n4-7x7", Shape::Chw(3, 32, 32));
  const BatchNormAttrs bn;  // Keras defaults
  std::string x = net.Conv2d("input", Conv(112, SameWindow(1), true), "conv_in");
  const int64_t widths[] = {112, 224, 448};
  for (int stage = 0; stage < 3; ++stage) {
    if (stage > 0) {
      x = net.AvgPool(x, Pool(MakeWindow(2, 2)), fmt::format("stage{}.pool", stage + 1));
      x = net.Conv2d(x, Conv(widths[stage], SameWindow(1), true),
                     fmt::format("stage{}.conv_in", stage + 1));
    }
    for (int block = 0; block < 4; ++block) {
      const std::string name = fmt::format("stage{}.block{}", stage + 1, block + 1);
      std::string y = x;
      for (int i = 1; i <= 2; ++i) {
        const std::string conv = fmt::format("{}.conv{}", name, i);
        y = net.Conv2d(y, Conv(widths[stage], SameWindow(7), true), conv);
        y = net.Relu(net.BatchNorm(y, bn, conv + "_bn"), {}, conv + "_relu");
      }
      x = net.Add({x, y}, name + ".add");
    }
  }
  x = net.GlobalAvgPool(x, "global_pool");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(100), "dense"), "loss");
  return net;
}

struct ZooNet {
  ZooEntry entry;
  std::function<Network()> make;
};

const std::vector<ZooNet>& Zoo() {
  static const std::vector<ZooNet> zoo = {
      {{"mlp-mnist", "MLP 784-512-512-10, ReLU (MNIST)",
        "keras-team/keras examples/mnist_mlp.py (Keras 2.x)"},
       MlpMnist},
      {{"cnn-cifar-small", "4 conv + 2 dense CNN, 3x32x32, 10 classes (CIFAR-10)",
        "keras-team/keras examples/cifar10_cnn.py (Keras 2.x)"},
       CnnCifarSmall},
      {{"resnet18-cifar", "ResNet-18 for 3x32x32, 10 classes (CIFAR-10)",
        "kuangliu/pytorch-cifar models/resnet.py ResNet18(); He et al. 2016"},
       Resnet18Cifar},
      {{"resnet50", "ResNet-50 v1.5, 3x224x224, 1000 classes (ImageNet)",
        "torchvision/models/resnet.py resnet50(); He et al. 2016"},
       Resnet50},
      {{"vgg16", "VGG-16 (configuration D), 3x224x224, 1000 classes (ImageNet)",
        "keras.applications.VGG16; Simonyan & Zisserman 2015"},
       Vgg16},
      {{"mobilenet-v1", "MobileNet v1 alpha 1.0, ReLU6, 3x224x224, 1000 classes (ImageNet)",
        "keras.applications.MobileNet; Howard et al. 2017"},
       MobilenetV1},
      {{"wrn-k7n4-7x7", "WideResNet k=7 N=4 with 7x7 convs, 3x32x32, 100 classes (CIFAR-100)",
        "Colab TPU vs GPU WideResNet benchmark (fitspeed issue 3, DESIGN.md)"},
       WrnK7n4},
  };
  return zoo;
}

}  // namespace

const std::vector<ZooEntry>& ZooEntries() {
  static const std::vector<ZooEntry> entries = [] {
    std::vector<ZooEntry> list;
    for (const ZooNet& z : Zoo()) list.push_back(z.entry);
    return list;
  }();
  return entries;
}

Network ZooNetwork(const std::string& name) {
  std::vector<std::string> names;
  for (const ZooNet& z : Zoo()) {
    if (z.entry.name == name) {
      Network net = z.make();
      net.description = z.entry.description;
      net.reference = z.entry.reference;
      net.Finalize();
      return net;
    }
    names.push_back(z.entry.name);
  }
  throw UsageError(fmt::format("unknown model '{}' (zoo: {})", name, fmt::join(names, ", ")));
}

Network LoadNetwork(const std::string& name_or_path) {
  for (const ZooEntry& entry : ZooEntries()) {
    if (entry.name == name_or_path) return ZooNetwork(name_or_path);
  }
  std::error_code error;
  if (std::filesystem::is_regular_file(name_or_path, error)) {
    return ReadNetworkJsonFile(name_or_path);
  }
  std::vector<std::string> names;
  for (const ZooEntry& entry : ZooEntries()) names.push_back(entry.name);
  throw UsageError(fmt::format("'{}' is neither a zoo model ({}) nor a network JSON file",
                               name_or_path, fmt::join(names, ", ")));
}

}  // namespace fitspeed
