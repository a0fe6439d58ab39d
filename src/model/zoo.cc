// The model zoo. Each network follows the definition cited in its entry;
// dropout layers of the originals are left out (no parameters, negligible
// work) and a final softmax becomes the softmax cross-entropy loss.
#include "fitspeed/model/zoo.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <system_error>

#include "core/input_file.h"
#include "fitspeed/core/error.h"
#include "fitspeed/model/network_json.h"
#include "zoo_transformers.h"

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

// Simonyan & Zisserman 2015: 3x3 convs in 5 blocks of `convs[block]` convs
// (widths 64, 128, 256, 512, 512) with 2x2 max pools, fc 4096-4096-1000.
Network Vgg(const std::string& name, const std::array<int, 5>& convs) {
  Network net(name, Shape::Chw(3, 224, 224));
  std::string x = "input";
  const int64_t widths[] = {64, 128, 256, 512, 512};
  for (int block = 0; block < 5; ++block) {
    for (int i = 0; i < convs[block]; ++i) {
      const std::string conv = fmt::format("block{}_conv{}", block + 1, i + 1);
      x = net.Relu(net.Conv2d(x, Conv(widths[block], MakeWindow(3, 1, 1), true), conv), {},
                   conv + "_relu");
    }
    x = net.MaxPool(x, Pool(MakeWindow(2, 2)), fmt::format("block{}_pool", block + 1));
  }
  x = net.Flatten(x, "flatten");
  x = net.Relu(net.Dense(x, Dense(4096), "fc1"), {}, "fc1_relu");
  x = net.Relu(net.Dense(x, Dense(4096), "fc2"), {}, "fc2_relu");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(1000), "predictions"), "loss");
  return net;
}

// Configuration D (keras.applications.VGG16, torchvision vgg16): 13 convs;
// 138,357,544 parameters.
Network Vgg16() { return Vgg("vgg16", {2, 2, 3, 3, 3}); }

// Configuration E (keras.applications.VGG19, torchvision vgg19): 16 convs;
// 143,667,240 parameters.
Network Vgg19() { return Vgg("vgg19", {2, 2, 4, 4, 4}); }

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
// fitspeed issue 3): 1x1 conv 3->112 (bias); three stages of 4 blocks
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

// Keras's EfficientNet MBConv block (keras/applications/efficientnet.py
// block()): [1x1 expansion conv -> bn -> swish when expand_ratio > 1] ->
// depthwise kxk conv (stride s, "same") -> bn -> swish -> squeeze-and-excite
// [global average pool -> 1x1 conv to max(1, filters_in/4) (bias, swish) ->
// 1x1 conv back (bias, sigmoid) -> channel-wise multiply] -> 1x1 projection
// conv -> bn [-> add the block input when stride 1 and filters_in ==
// filters_out]. The SE 1x1 convs act on a 1x1 map: written as dense layers
// (same parameters). Keras's "same" zero padding of the stride-2 depthwise
// convs (correct_pad) equals TensorFlow's "same" here: every map is even.
std::string MbConv(Network& net, const std::string& x, int64_t filters_in, int64_t filters_out,
                   int kernel, int stride, int64_t expand_ratio, const std::string& name) {
  const BatchNormAttrs bn;  // Keras defaults: eps 1e-3, momentum 0.99
  const int64_t filters = filters_in * expand_ratio;
  std::string y = x;
  if (expand_ratio != 1) {
    y = net.Conv2d(y, Conv(filters, SameWindow(1), false), name + "expand_conv");
    y = net.Swish(net.BatchNorm(y, bn, name + "expand_bn"), name + "expand_activation");
  }
  y = net.Conv2d(y, Conv(filters, SameWindow(kernel, stride), false, filters), name + "dwconv");
  y = net.Swish(net.BatchNorm(y, bn, name + "bn"), name + "activation");
  const int64_t filters_se = std::max<int64_t>(1, filters_in / 4);  // se_ratio 0.25
  std::string se = net.GlobalAvgPool(y, name + "se_squeeze");
  se = net.Swish(net.Dense(se, Dense(filters_se), name + "se_reduce"), name + "se_reduce_swish");
  se = net.Sigmoid(net.Dense(se, Dense(filters), name + "se_expand"), name + "se_expand_sigmoid");
  y = net.Mul(y, se, name + "se_excite");
  y = net.Conv2d(y, Conv(filters_out, SameWindow(1), false), name + "project_conv");
  y = net.BatchNorm(y, bn, name + "project_bn");
  if (stride == 1 && filters_in == filters_out) y = net.Add({y, x}, name + "add");
  return y;
}

// keras.applications.EfficientNetB0 (Tan & Le 2019, "EfficientNet: Rethinking
// Model Scaling for CNNs", table 1; width and depth coefficients 1.0, 224x224,
// 1000 classes): 3x3/2 stem conv 32 -> 16 MBConv blocks in 7 stages -> 1x1
// conv 1280 -> global average pool -> dense 1000. Swish activations, Keras
// batch-norm. Left out: the input Rescaling and Normalization layers (the
// latter holds 7 non-trainable numbers: mean, variance and count) and the
// dropout layers (rate 0.2, drop-connect 0.2 on the residual branches).
// model.summary(): 5,330,571 parameters, 5,288,548 trainable; 0.39 G
// multiply-adds per image (the paper).
Network EfficientNetB0() {
  Network net("efficientnet-b0", Shape::Chw(3, 224, 224));
  const BatchNormAttrs bn;
  std::string x = net.Conv2d("input", Conv(32, SameWindow(3, 2), false), "stem_conv");
  x = net.Swish(net.BatchNorm(x, bn, "stem_bn"), "stem_activation");
  struct Stage {
    int kernel;
    int repeats;
    int64_t filters_in;
    int64_t filters_out;
    int64_t expand_ratio;
    int stride;
  };
  // keras/applications/efficientnet.py DEFAULT_BLOCKS_ARGS.
  const Stage stages[] = {{3, 1, 32, 16, 1, 1},  {3, 2, 16, 24, 6, 2},  {5, 2, 24, 40, 6, 2},
                          {3, 3, 40, 80, 6, 2},  {5, 3, 80, 112, 6, 1}, {5, 4, 112, 192, 6, 2},
                          {3, 1, 192, 320, 6, 1}};
  for (int s = 0; s < 7; ++s) {
    const Stage& st = stages[s];
    for (int r = 0; r < st.repeats; ++r) {
      x = MbConv(net, x, r == 0 ? st.filters_in : st.filters_out, st.filters_out, st.kernel,
                 r == 0 ? st.stride : 1, st.expand_ratio,
                 fmt::format("block{}{}_", s + 1, static_cast<char>('a' + r)));
    }
  }
  x = net.Conv2d(x, Conv(1280, SameWindow(1), false), "top_conv");
  x = net.Swish(net.BatchNorm(x, bn, "top_bn"), "top_activation");
  x = net.GlobalAvgPool(x, "avg_pool");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(1000), "predictions"), "loss");
  return net;
}

// Paddle v1's img_pool_layer rounds the output size up (ceil_mode=True, as
// Caffe does): a window of kernel k, stride s over n pixels gives
// 1 + ceil((n - k)/s) outputs. Written as floor division with extra padding
// on the bottom/right where the division is inexact (max pooling never picks
// a padded position).
PoolAttrs CeilMaxPool(int64_t in, int kernel, int stride) {
  const int extra = (in - kernel) % stride == 0 ? 0 : stride - 1;
  Window2d w = MakeWindow(kernel, stride, 0);
  w.pad_bottom = w.pad_right = extra;
  return Pool(w);
}

// conv (bias) -> ReLU: Paddle v1's img_conv_layer with its default activation.
std::string ConvRelu(Network& net, const std::string& x, int64_t filters, int kernel, int stride,
                     int padding, const std::string& name) {
  return net.Relu(net.Conv2d(x, Conv(filters, MakeWindow(kernel, stride, padding), true), name), {},
                  name + "_relu");
}

// PaddlePaddle/Paddle benchmark/paddle/image/alexnet.py, the network of the
// K40m benchmark (benchmark/README.md): AlexNet (Krizhevsky et al. 2012) on
// 3x227x227 in one tower (no channel groups): conv 11x11/4 pad 1 96 -> LRN 5 ->
// max pool 3/2 -> conv 5x5 pad 2 256 -> LRN 5 -> max pool 3/2 -> conv 3x3 384,
// 384, 256 -> max pool 3/2 -> fc 4096, 4096, 1000; ReLU after every conv and
// hidden fc; LRN alpha 1e-4 (Paddle's scale, divided by the size as here),
// beta 0.75, k 1; dropout 0.5 of the fc layers left out. 62,378,344 parameters.
Network AlexNet() {
  Network net("alexnet", Shape::Chw(3, 227, 227));
  LrnAttrs lrn;  // size 5, alpha 1e-4, beta 0.75, k 1
  std::string x = ConvRelu(net, "input", 96, 11, 4, 1, "conv1");              // 55x55
  x = net.MaxPool(net.Lrn(x, lrn, "norm1"), CeilMaxPool(55, 3, 2), "pool1");  // 27x27
  x = ConvRelu(net, x, 256, 5, 1, 2, "conv2");
  x = net.MaxPool(net.Lrn(x, lrn, "norm2"), CeilMaxPool(27, 3, 2), "pool2");  // 13x13
  x = ConvRelu(net, x, 384, 3, 1, 1, "conv3");
  x = ConvRelu(net, x, 384, 3, 1, 1, "conv4");
  x = ConvRelu(net, x, 256, 3, 1, 1, "conv5");
  x = net.Flatten(net.MaxPool(x, CeilMaxPool(13, 3, 2), "pool5"), "flatten");  // 256x6x6
  x = net.Relu(net.Dense(x, Dense(4096), "fc6"), {}, "fc6_relu");
  x = net.Relu(net.Dense(x, Dense(4096), "fc7"), {}, "fc7_relu");
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(1000), "fc8"), "loss");
  return net;
}

// An inception module (Szegedy et al. 2015, figure 2b) as Paddle's
// benchmark googlenet.py writes it: 1x1; 1x1 -> 3x3; 1x1 -> 5x5; 3x3/1 max
// pool -> 1x1 projection; each conv with bias and ReLU (Paddle puts the bias
// and ReLU of the 1x1, 3x3, 5x5 and projection convs on the concatenation:
// the same parameters and values); concatenated on channels.
std::string Inception(Network& net, const std::string& x, int64_t f1, int64_t f3r, int64_t f3,
                      int64_t f5r, int64_t f5, int64_t proj, const std::string& name) {
  const std::string b1 = ConvRelu(net, x, f1, 1, 1, 0, name + "_1");
  const std::string b3 =
      ConvRelu(net, ConvRelu(net, x, f3r, 1, 1, 0, name + "_3r"), f3, 3, 1, 1, name + "_3");
  const std::string b5 =
      ConvRelu(net, ConvRelu(net, x, f5r, 1, 1, 0, name + "_5r"), f5, 5, 1, 2, name + "_5");
  const std::string pool = net.MaxPool(x, Pool(MakeWindow(3, 1, 1)), name + "_max");
  const std::string bp = ConvRelu(net, pool, proj, 1, 1, 0, name + "_proj");
  return net.Concat({b1, b3, b5, bp}, name);
}

// PaddlePaddle/Paddle benchmark/paddle/image/googlenet.py, the network of the
// K40m benchmark: GoogLeNet (Szegedy et al. 2015, table 1) on 3x224x224
// without the two auxiliary classifiers (removed there "for all systems") and
// without the LRN layers of the paper (Paddle's config has none): conv 7x7/2
// 64 -> max pool 3/2 -> conv 1x1 64 -> conv 3x3 192 -> max pool 3/2 ->
// inception 3a, 3b -> max pool 3/2 -> 4a..4e -> max pool 3/2 -> 5a, 5b -> 7x7
// average pool -> fc 1000 (dropout 0.4 left out). Max pools round up (Paddle,
// Caffe). 6,998,552 parameters (the paper's 5x5 convs, biases, no
// batch-norm).
Network GoogLeNet() {
  Network net("googlenet", Shape::Chw(3, 224, 224));
  std::string x = ConvRelu(net, "input", 64, 7, 2, 3, "conv1");  // 112x112
  x = net.MaxPool(x, CeilMaxPool(112, 3, 2), "pool1");           // 56x56
  x = ConvRelu(net, x, 64, 1, 1, 0, "conv2_1");
  x = ConvRelu(net, x, 192, 3, 1, 1, "conv2_2");
  x = net.MaxPool(x, CeilMaxPool(56, 3, 2), "pool2");  // 28x28
  x = Inception(net, x, 64, 96, 128, 16, 32, 32, "ince3a");
  x = Inception(net, x, 128, 128, 192, 32, 96, 64, "ince3b");
  x = net.MaxPool(x, CeilMaxPool(28, 3, 2), "pool3");  // 14x14
  x = Inception(net, x, 192, 96, 208, 16, 48, 64, "ince4a");
  x = Inception(net, x, 160, 112, 224, 24, 64, 64, "ince4b");
  x = Inception(net, x, 128, 128, 256, 24, 64, 64, "ince4c");
  x = Inception(net, x, 112, 144, 288, 32, 64, 64, "ince4d");
  x = Inception(net, x, 256, 160, 320, 32, 128, 128, "ince4e");
  x = net.MaxPool(x, CeilMaxPool(14, 3, 2), "pool4");  // 7x7
  x = Inception(net, x, 256, 160, 320, 32, 128, 128, "ince5a");
  x = Inception(net, x, 384, 192, 384, 48, 128, 128, "ince5b");
  x = net.Flatten(net.AvgPool(x, Pool(MakeWindow(7, 7)), "pool5"), "flatten");  // 1024
  net.SoftmaxCrossEntropy(net.Dense(x, Dense(1000), "output3"), "loss");
  return net;
}

struct ZooNet {
  ZooEntry entry;
  // The network at `tokens` per sequence with the masked-LM head on
  // `head_positions` (0: the builder's default; only BERT has such a head).
  std::function<Network(int64_t tokens, int64_t head_positions)> make;
  bool masked_lm_head = false;  // takes ZooOptions::head_positions
};

// A builder without a sequence length.
template <Network (*kMake)()>
Network Fixed(int64_t /*tokens*/, int64_t /*head_positions*/) {
  return kMake();
}

// A sequence model without a masked-LM head.
template <Network (*kMake)(int64_t)>
Network Tokens(int64_t tokens, int64_t /*head_positions*/) {
  return kMake(tokens);
}

const std::vector<ZooNet>& Zoo() {
  static const std::vector<ZooNet> zoo = {
      {{"mlp-mnist", "MLP 784-512-512-10, ReLU (MNIST)",
        "keras-team/keras examples/mnist_mlp.py (Keras 2.x)"},
       Fixed<MlpMnist>},
      {{"cnn-cifar-small", "4 conv + 2 dense CNN, 3x32x32, 10 classes (CIFAR-10)",
        "keras-team/keras examples/cifar10_cnn.py (Keras 2.x)"},
       Fixed<CnnCifarSmall>},
      {{"resnet18-cifar", "ResNet-18 for 3x32x32, 10 classes (CIFAR-10)",
        "kuangliu/pytorch-cifar models/resnet.py ResNet18(); He et al. 2016"},
       Fixed<Resnet18Cifar>},
      {{"resnet50", "ResNet-50 v1.5, 3x224x224, 1000 classes (ImageNet)",
        "torchvision/models/resnet.py resnet50(); He et al. 2016"},
       Fixed<Resnet50>},
      {{"vgg16", "VGG-16 (configuration D), 3x224x224, 1000 classes (ImageNet)",
        "keras.applications.VGG16; Simonyan & Zisserman 2015"},
       Fixed<Vgg16>},
      {{"mobilenet-v1", "MobileNet v1 alpha 1.0, ReLU6, 3x224x224, 1000 classes (ImageNet)",
        "keras.applications.MobileNet; Howard et al. 2017"},
       Fixed<MobilenetV1>},
      {{"wrn-k7n4-7x7", "WideResNet k=7 N=4 with 7x7 convs, 3x32x32, 100 classes (CIFAR-100)",
        "Colab TPU vs GPU WideResNet benchmark (fitspeed issue 3; docs/design.md, \"The law\")"},
       Fixed<WrnK7n4>},
      {{"efficientnet-b0",
        "EfficientNet-B0, swish, squeeze-excite, 3x224x224, 1000 classes (ImageNet)",
        "keras.applications.EfficientNetB0; Tan & Le 2019"},
       Fixed<EfficientNetB0>},
      {{"alexnet", "AlexNet one tower with LRN, 3x227x227, 1000 classes (ImageNet)",
        "PaddlePaddle/Paddle benchmark/paddle/image/alexnet.py; Krizhevsky et al. 2012"},
       Fixed<AlexNet>},
      {{"googlenet", "GoogLeNet without auxiliary classifiers, 3x224x224, 1000 classes (ImageNet)",
        "PaddlePaddle/Paddle benchmark/paddle/image/googlenet.py; Szegedy et al. 2015"},
       Fixed<GoogLeNet>},
      {{"vgg19", "VGG-19 (configuration E), 3x224x224, 1000 classes (ImageNet)",
        "keras.applications.VGG19; Simonyan & Zisserman 2015"},
       Fixed<Vgg19>},
      {{"bert-base",
        "BERT-base, 12 layers, d 768, 12 heads, vocab 30522, masked-LM and next-sentence heads",
        "HF transformers BertForPreTraining (bert-base-uncased); Devlin et al. 2019", 128, 512},
       BertBase,
       true},
      {{"bert-large",
        "BERT-large, 24 layers, d 1024, 16 heads, vocab 30522, masked-LM and next-sentence heads",
        "HF transformers BertForPreTraining (bert-large-uncased); Devlin et al. 2019", 128, 512},
       BertLarge,
       true},
      {{"gpt2", "GPT-2 small, 12 layers, d 768, 12 heads, vocab 50257, causal LM, tied head",
        "HF transformers GPT2LMHeadModel (gpt2); Radford et al. 2019", 1024, 1024},
       Tokens<Gpt2Small>},
      {{"gpt2-medium", "GPT-2 medium, 24 layers, d 1024, 16 heads, vocab 50257, causal LM",
        "HF transformers GPT2LMHeadModel (gpt2-medium); Radford et al. 2019", 1024, 1024},
       Tokens<Gpt2Medium>},
      {{"vit-b16", "ViT-B/16, 3x224x224 as 196 patches + class token, 12 layers, 1000 classes",
        "timm vit_base_patch16_224; Dosovitskiy et al. 2021"},
       Tokens<VitB16>},
      {{"tinyllama-1.1b",
        "Llama-style, 22 layers, d 2048, 32 heads (4 KV), SwiGLU 5632, RMS norm, RoPE, vocab 32000",
        "HF transformers LlamaForCausalLM, TinyLlama/TinyLlama-1.1B config; Zhang et al. 2024",
        2048, 2048},
       Tokens<TinyLlama11b>},
  };
  return zoo;
}

// The tokens a zoo network is built at: `padded` (the sequence length), or
// with options.mean_tokens the rounded mean of unpadded sequences. UsageError
// for a mean or mean square out of range (ZooOptions).
int64_t UnpaddedTokens(const std::string& name, const ZooEntry& e, const ZooOptions& options,
                       int64_t padded) {
  const double mean = options.mean_tokens;
  const double square = options.mean_square_tokens;
  if (mean == 0 && square == 0) return padded;
  if (e.max_seq_len == 0) {
    throw UsageError(
        fmt::format("model '{}' takes no sequence length (--mean-tokens {})", name, mean));
  }
  if (mean == 0) {
    throw UsageError(
        fmt::format("model '{}': --mean-square-tokens {} needs --mean-tokens", name, square));
  }
  const int64_t longest = options.seq_len != 0 ? options.seq_len : e.max_seq_len;
  if (!(mean >= 1 && mean <= static_cast<double>(longest))) {
    throw UsageError(fmt::format("model '{}': mean tokens per sequence {} is not in 1..{}", name,
                                 mean, longest));
  }
  // Lengths L in 1..longest: E[L]^2 <= E[L^2] <= E[L]*longest (the bound is
  // reached by lengths of only 0 and longest).
  const double most = mean * static_cast<double>(longest);
  if (square != 0 && !(square >= mean * mean * (1 - 1e-12) && square <= most)) {
    throw UsageError(fmt::format(
        "model '{}': mean squared tokens per sequence {} is not in {}..{} (the square of the "
        "mean {} up to the mean times the longest sequence, {})",
        name, square, mean * mean, most, mean, longest));
  }
  return std::max<int64_t>(1, std::llround(mean));
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

Network ZooNetwork(const std::string& name, const ZooOptions& options) {
  std::vector<std::string> names;
  for (const ZooNet& z : Zoo()) {
    if (z.entry.name == name) {
      const ZooEntry& e = z.entry;
      if (options.seq_len != 0 && e.max_seq_len == 0) {
        throw UsageError(fmt::format("model '{}' takes no sequence length (--seq-len {})", name,
                                     options.seq_len));
      }
      if (options.seq_len < 0 || options.seq_len > e.max_seq_len) {
        throw UsageError(fmt::format("model '{}': sequence length {} is not in 1..{}", name,
                                     options.seq_len, e.max_seq_len));
      }
      const int64_t padded = options.seq_len != 0 ? options.seq_len : e.default_seq_len;
      const int64_t tokens = UnpaddedTokens(name, e, options, padded);
      if (options.head_positions != 0 && !z.masked_lm_head) {
        throw UsageError(fmt::format("model '{}' has no masked-LM head (--head-positions {})", name,
                                     options.head_positions));
      }
      if (options.head_positions < 0 || options.head_positions > tokens) {
        throw UsageError(
            fmt::format("model '{}': {} masked-LM head positions are not in 1..{} "
                        "(the tokens per sequence)",
                        name, options.head_positions, tokens));
      }
      Network net = z.make(tokens, options.head_positions);
      if (options.mean_tokens > 0) {
        net.mean_square_tokens = options.mean_square_tokens > 0
                                     ? options.mean_square_tokens
                                     : options.mean_tokens * options.mean_tokens;
      }
      net.description = e.description;
      net.reference = e.reference;
      net.Finalize();
      return net;
    }
    names.push_back(z.entry.name);
  }
  throw UsageError(fmt::format("unknown model '{}' (zoo: {})", name, fmt::join(names, ", ")));
}

Network LoadNetwork(const std::string& name_or_path, const ZooOptions& options) {
  for (const ZooEntry& entry : ZooEntries()) {
    if (entry.name == name_or_path) return ZooNetwork(name_or_path, options);
  }
  // A path (a '/', a ".json" name or a file that exists) is read as one, so
  // that a missing, unreadable or special file is an InputError.
  std::error_code error;
  if (LooksLikeFilePath(name_or_path) || std::filesystem::exists(name_or_path, error)) {
    if (options.seq_len != 0 || options.mean_tokens != 0 || options.mean_square_tokens != 0 ||
        options.head_positions != 0) {
      throw UsageError(
          fmt::format("'{}': a network file fixes its own input shape and heads; give the "
                      "sequence length there (and \"mean_square_tokens\" for unpadded "
                      "sequences), not with --seq-len, --mean-tokens, --mean-square-tokens or "
                      "--head-positions",
                      name_or_path));
    }
    return ReadNetworkJsonFile(name_or_path);
  }
  std::vector<std::string> names;
  for (const ZooEntry& entry : ZooEntries()) names.push_back(entry.name);
  throw UsageError(fmt::format("'{}' is neither a zoo model ({}) nor a network JSON file",
                               name_or_path, fmt::join(names, ", ")));
}

}  // namespace fitspeed
