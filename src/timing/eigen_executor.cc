// The reference training step: every layer written out plainly in canonical
// layouts, convolutions as im2col + Eigen GEMM (Chellapilla et al. 2006, "High
// performance convolutional neural networks for document processing"), for
// float (timing) and double (gradient checks). It shares no kernel with the
// oneDNN backend except the optimizer (timing/optimizer.h), so the tests can
// check one against the other.
//
// With precision bf16 it emulates mixed-precision storage: it computes in S
// but rounds to bfloat16 (round to nearest even, from float) every value the
// oneDNN backend stores as bf16: the input, each layer's output, the gradient
// of each layer's output, and the convolution and dense kernels the forward
// and backward-data passes read (copies of the S master weights). Biases,
// batch-norm parameters and statistics, the loss, the weight gradients and
// the optimizer stay in S, as in the oneDNN backend and PyTorch's autocast.
#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "fitspeed/core/error.h"
#include "timing/bf16.h"
#include "timing/executor.h"
#include "timing/optimizer.h"

namespace fitspeed::timing {

namespace {

template <typename S>
class EigenExecutor final : public StepExecutor {
 public:
  EigenExecutor(const Network& network, const StepConfig& config);

  void SetInput(const std::vector<double>& values, const std::vector<int32_t>& labels) override;
  void SetParam(size_t i, const std::vector<double>& values) override;
  std::vector<double> Param(size_t i) const override;
  std::vector<double> Grad(size_t i) const override;
  std::vector<double> Output(int layer) const override;

 private:
  using Vec = std::vector<S>;
  using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using MapMat = Eigen::Map<Mat>;
  using ConstMapMat = Eigen::Map<const Mat>;

  double loss() const override { return loss_; }
  // AddOp, recording the implementation.
  void Add(Phase phase, int l, Pass pass, std::function<void()> run) {
    AddOp(phase, l, pass, std::move(run));
    SetImplementation(l, pass, "eigen");
  }

  // Allocates a zero-filled buffer (counts it only in a dry run).
  void Allocate(Vec& v, int64_t elements) {
    CountBytes(static_cast<double>(elements) * sizeof(S));
    if (!config().dry_run) v.assign(static_cast<size_t>(elements), S(0));
  }
  int64_t Elements(int layer) const {
    return network().layer(layer).output_shape.elements() * config().batch;
  }
  // Index of the layer's parameter `name` in params(), or -1.
  int ParamId(int layer, const std::string& name) const;
  Vec& act(int l) { return act_[static_cast<size_t>(l)]; }
  Vec& diff(int l) { return diff_[static_cast<size_t>(l)]; }
  // In bf16, rounds `v` in place where the oneDNN backend stores bf16.
  void RoundToStorage(Vec& v) const {
    if (!bf16_) return;
    for (S& x : v) x = static_cast<S>(RoundToBf16(static_cast<float>(x)));
  }
  // The kernel the forward and backward-data passes read: the master weights
  // in fp32, their bf16 copy (refreshed by the forward pass) in bf16.
  const S* Kernel(size_t param) const {
    return bf16_ ? kernel_copy_[param].data() : param_[param].data();
  }
  // In bf16, adds the forward op that refreshes the kernel's bf16 copy.
  void CopyKernelToStorage(int l, size_t param);
  bool GradNeeded(int l) const { return grad_needed_[static_cast<size_t>(l)]; }

  void BuildConv(int l);
  void BuildDense(int l);
  void BuildBatchNorm(int l);
  void BuildRelu(int l);
  void BuildPool(int l);
  void BuildGlobalAvgPool(int l);
  void BuildAdd(int l);
  void BuildFlatten(int l);
  void BuildLoss(int l);
  void BuildSigmoid(int l);
  void BuildSwish(int l);
  void BuildMul(int l);
  void BuildConcat(int l);
  void BuildLrn(int l);
  void BuildUpdates();
  // Batch-norm statistics of the last forward pass, per batch-norm layer.
  std::vector<Vec> mean_, inv_std_;
  // Max pooling: index of each output's winning input element.
  std::vector<std::vector<int64_t>> argmax_;
  // LRN: the denominator base k + alpha/size * sum x^2 of each element.
  std::vector<Vec> lrn_scale_;
  Vec logp_;  // log-softmax of the loss layer's input

  std::vector<bool> grad_needed_;
  // Per layer, in forward order: adds the layer's backward ops (run in reverse).
  std::vector<std::function<void()>> backward_;
  std::vector<Vec> act_, diff_;
  std::vector<Vec> param_, grad_, state1_, state2_;
  std::vector<Vec> kernel_copy_;  // bf16: per parameter, the rounded kernel (else empty)
  std::vector<int32_t> labels_;
  double loss_ = 0;
  bool bf16_ = false;
};

template <typename S>
EigenExecutor<S>::EigenExecutor(const Network& network, const StepConfig& config)
    : StepExecutor(network, config) {
  bf16_ = config.precision == Precision::kBf16;
  grad_needed_ = GradientReaches(network);
  const size_t n = static_cast<size_t>(network.size());
  act_.resize(n);
  diff_.resize(n);
  backward_.resize(n);
  kernel_copy_.resize(params().size());
  mean_.resize(n);
  inv_std_.resize(n);
  argmax_.resize(n);
  lrn_scale_.resize(n);
  param_.resize(params().size());
  grad_.resize(params().size());
  state1_.resize(params().size());
  state2_.resize(params().size());
  const int states = OptimizerStatePerParam(config.optimizer);
  for (size_t i = 0; i < params().size(); ++i) {
    Allocate(param_[i], params()[i].elements);
    if (!params()[i].trainable) continue;
    Allocate(grad_[i], params()[i].elements);
    if (states >= 1) Allocate(state1_[i], params()[i].elements);
    if (states >= 2) Allocate(state2_[i], params()[i].elements);
  }
  // Gradients of layer outputs are accumulated by their consumers: zero them first.
  for (int l = 0; l < network.size() - 1; ++l) {
    Allocate(act(l), Elements(l));
    if (!GradNeeded(l)) continue;
    Allocate(diff(l), Elements(l));
    Add(Phase::kBackward, l, Pass::kBackwardData,
        [this, l] { std::fill(diff(l).begin(), diff(l).end(), S(0)); });
  }
  for (int l = 1; l < network.size(); ++l) {
    switch (network.layer(l).kind) {
      case LayerKind::kInput:
        break;
      case LayerKind::kConv2d:
        BuildConv(l);
        break;
      case LayerKind::kDense:
        BuildDense(l);
        break;
      case LayerKind::kBatchNorm:
        BuildBatchNorm(l);
        break;
      case LayerKind::kRelu:
        BuildRelu(l);
        break;
      case LayerKind::kAvgPool:
      case LayerKind::kMaxPool:
        BuildPool(l);
        break;
      case LayerKind::kGlobalAvgPool:
        BuildGlobalAvgPool(l);
        break;
      case LayerKind::kAdd:
        BuildAdd(l);
        break;
      case LayerKind::kFlatten:
        BuildFlatten(l);
        break;
      case LayerKind::kSoftmaxCrossEntropy:
        BuildLoss(l);
        break;
      case LayerKind::kSigmoid:
        BuildSigmoid(l);
        break;
      case LayerKind::kSwish:
        BuildSwish(l);
        break;
      case LayerKind::kMul:
        BuildMul(l);
        break;
      case LayerKind::kConcat:
        BuildConcat(l);
        break;
      case LayerKind::kLrn:
        BuildLrn(l);
        break;
      default:  // the sequence kinds, which CheckExecutable refuses
        FITSPEED_CHECK(false, "layer kind without a host builder");
    }
    if (bf16_ && l < network.size() - 1) {
      Add(Phase::kForward, l, Pass::kForward, [this, l] { RoundToStorage(act(l)); });
    }
  }
  for (int l = network.size() - 1; l >= 1; --l) {
    if (!GradNeeded(l) || !backward_[static_cast<size_t>(l)]) continue;
    // Every consumer has added its part of diff(l) by now: round the sum once.
    if (bf16_ && l < network.size() - 1) {
      Add(Phase::kBackward, l, Pass::kBackwardData, [this, l] { RoundToStorage(diff(l)); });
    }
    backward_[static_cast<size_t>(l)]();
  }
  BuildUpdates();
  if (!config.dry_run) {
    for (size_t i = 0; i < params().size(); ++i) {
      SetParam(i, InitialParam(network, params()[i], config.seed));
    }
    SetInput(InitialInput(network, config.batch, config.seed),
             InitialLabels(network, config.batch, config.seed));
  }
}

template <typename S>
int EigenExecutor<S>::ParamId(int layer, const std::string& name) const {
  for (size_t i = 0; i < params().size(); ++i) {
    const ParamRef& p = params()[i];
    if (p.layer == layer && network().layer(layer).params[p.index].name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

template <typename S>
void EigenExecutor<S>::CopyKernelToStorage(int l, size_t param) {
  if (!bf16_) return;
  Allocate(kernel_copy_[param], params()[param].elements);
  Add(Phase::kForward, l, Pass::kForward, [this, param] {
    kernel_copy_[param] = param_[param];
    RoundToStorage(kernel_copy_[param]);
  });
}

template <typename S>
void EigenExecutor<S>::BuildConv(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const Shape& os = layer.output_shape;
  const Window2d w = layer.conv.window;
  const int64_t n = config().batch, c = is.channels(), h = is.height(), wd = is.width();
  const int64_t o = os.channels(), ho = os.height(), wo = os.width();
  const int64_t groups = layer.conv.groups, cg = c / groups, og = o / groups;
  const int64_t rows = cg * w.kernel_h * w.kernel_w, cols = ho * wo;
  const size_t kernel = static_cast<size_t>(ParamId(l, "kernel"));
  const int bias = ParamId(l, "bias");

  // The column matrix of one sample and group: rows (channel, kh, kw), columns (oh, ow).
  auto im2col = [=](const S* x, Mat& col) {
    col.resize(rows, cols);
    for (int64_t ci = 0; ci < cg; ++ci) {
      for (int kh = 0; kh < w.kernel_h; ++kh) {
        for (int kw = 0; kw < w.kernel_w; ++kw) {
          const int64_t r = (ci * w.kernel_h + kh) * w.kernel_w + kw;
          for (int64_t oh = 0; oh < ho; ++oh) {
            const int64_t ih = oh * w.stride_h - w.pad_top + kh;
            for (int64_t ow = 0; ow < wo; ++ow) {
              const int64_t iw = ow * w.stride_w - w.pad_left + kw;
              const bool inside = ih >= 0 && ih < h && iw >= 0 && iw < wd;
              col(r, oh * wo + ow) = inside ? x[(ci * h + ih) * wd + iw] : S(0);
            }
          }
        }
      }
    }
  };
  // Adds the columns back onto the image they came from.
  auto col2im = [=](const Mat& col, S* dx) {
    for (int64_t ci = 0; ci < cg; ++ci) {
      for (int kh = 0; kh < w.kernel_h; ++kh) {
        for (int kw = 0; kw < w.kernel_w; ++kw) {
          const int64_t r = (ci * w.kernel_h + kh) * w.kernel_w + kw;
          for (int64_t oh = 0; oh < ho; ++oh) {
            const int64_t ih = oh * w.stride_h - w.pad_top + kh;
            if (ih < 0 || ih >= h) continue;
            for (int64_t ow = 0; ow < wo; ++ow) {
              const int64_t iw = ow * w.stride_w - w.pad_left + kw;
              if (iw >= 0 && iw < wd) dx[(ci * h + ih) * wd + iw] += col(r, oh * wo + ow);
            }
          }
        }
      }
    }
  };

  CopyKernelToStorage(l, kernel);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    Mat col;
    const S* x = act(in).data();
    S* y = act(l).data();
    const S* wt = Kernel(kernel);
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t g = 0; g < groups; ++g) {
        im2col(x + (s * c + g * cg) * h * wd, col);
        MapMat out(y + (s * o + g * og) * cols, og, cols);
        out.noalias() = ConstMapMat(wt + g * og * rows, og, rows) * col;
        if (bias < 0) continue;
        const S* b = param_[static_cast<size_t>(bias)].data() + g * og;
        for (int64_t k = 0; k < og; ++k) out.row(k).array() += b[k];
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    if (GradNeeded(in)) {
      Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
        Mat col;
        const S* dy = diff(l).data();
        S* dx = diff(in).data();
        const S* wt = Kernel(kernel);
        for (int64_t s = 0; s < n; ++s) {
          for (int64_t g = 0; g < groups; ++g) {
            col.noalias() = ConstMapMat(wt + g * og * rows, og, rows).transpose() *
                            ConstMapMat(dy + (s * o + g * og) * cols, og, cols);
            col2im(col, dx + (s * c + g * cg) * h * wd);
          }
        }
      });
    }
    Add(Phase::kBackward, l, Pass::kBackwardWeights, [=] {
      Mat col;
      const S* x = act(in).data();
      const S* dy = diff(l).data();
      Vec& gw = grad_[kernel];
      std::fill(gw.begin(), gw.end(), S(0));
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t g = 0; g < groups; ++g) {
          im2col(x + (s * c + g * cg) * h * wd, col);
          MapMat(gw.data() + g * og * rows, og, rows).noalias() +=
              ConstMapMat(dy + (s * o + g * og) * cols, og, cols) * col.transpose();
        }
      }
      if (bias < 0) return;
      Vec& gb = grad_[static_cast<size_t>(bias)];
      std::fill(gb.begin(), gb.end(), S(0));
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t k = 0; k < o; ++k) {
          const S* row = dy + (s * o + k) * cols;
          gb[static_cast<size_t>(k)] += std::accumulate(row, row + cols, S(0));
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildDense(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t rows = Rows(is, config().batch), features = is.dims.back(),
                units = layer.dense.units;
  const size_t kernel = static_cast<size_t>(ParamId(l, "kernel"));
  const int bias = ParamId(l, "bias");
  // Y (rows x units) = X (rows x features) W^T + b.
  CopyKernelToStorage(l, kernel);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    MapMat y(act(l).data(), rows, units);
    y.noalias() = ConstMapMat(act(in).data(), rows, features) *
                  ConstMapMat(Kernel(kernel), units, features).transpose();
    if (bias < 0) return;
    const S* b = param_[static_cast<size_t>(bias)].data();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t u = 0; u < units; ++u) y(r, u) += b[u];
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    if (GradNeeded(in)) {
      Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
        MapMat(diff(in).data(), rows, features).noalias() +=
            ConstMapMat(diff(l).data(), rows, units) * ConstMapMat(Kernel(kernel), units, features);
      });
    }
    Add(Phase::kBackward, l, Pass::kBackwardWeights, [=] {
      const ConstMapMat dy(diff(l).data(), rows, units);
      MapMat(grad_[kernel].data(), units, features).noalias() =
          dy.transpose() * ConstMapMat(act(in).data(), rows, features);
      if (bias < 0) return;
      S* gb = grad_[static_cast<size_t>(bias)].data();
      for (int64_t u = 0; u < units; ++u) gb[u] = dy.col(u).sum();
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildBatchNorm(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t n = config().batch, c = is.dims[0];
  const int64_t inner = is.rank() == 3 ? is.height() * is.width() : 1;
  const double m = static_cast<double>(n * inner);
  const double eps = layer.batch_norm.epsilon, momentum = layer.batch_norm.momentum;
  const int gamma = ParamId(l, "gamma"), beta = ParamId(l, "beta");
  const size_t moving_mean = static_cast<size_t>(ParamId(l, "moving_mean"));
  const size_t moving_var = static_cast<size_t>(ParamId(l, "moving_variance"));
  Allocate(mean_[static_cast<size_t>(l)], c);
  Allocate(inv_std_[static_cast<size_t>(l)], c);
  // Element (sample s, channel k, position i).
  auto at = [=](int64_t s, int64_t k, int64_t i) { return (s * c + k) * inner + i; };
  // Ioffe & Szegedy 2015, Algorithm 1, with the biased batch variance.
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    Vec& mean = mean_[static_cast<size_t>(l)];
    Vec& inv_std = inv_std_[static_cast<size_t>(l)];
    std::vector<double> var(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) {
      double sum = 0, sq = 0;
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t i = 0; i < inner; ++i) sum += x[at(s, k, i)];
      }
      const double mu = sum / m;
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t i = 0; i < inner; ++i) sq += (x[at(s, k, i)] - mu) * (x[at(s, k, i)] - mu);
      }
      var[static_cast<size_t>(k)] = sq / m;
      mean[static_cast<size_t>(k)] = static_cast<S>(mu);
      inv_std[static_cast<size_t>(k)] = static_cast<S>(1 / std::sqrt(sq / m + eps));
      const S g = gamma >= 0 ? param_[static_cast<size_t>(gamma)][static_cast<size_t>(k)] : S(1);
      const S b = beta >= 0 ? param_[static_cast<size_t>(beta)][static_cast<size_t>(k)] : S(0);
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t i = 0; i < inner; ++i) {
          y[at(s, k, i)] = g * (x[at(s, k, i)] - mean[static_cast<size_t>(k)]) *
                               inv_std[static_cast<size_t>(k)] +
                           b;
        }
      }
    }
    MovingAverage(param_[moving_mean].data(), mean.data(), c, momentum);
    MovingAverage(param_[moving_var].data(), var.data(), c, momentum);
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* x = act(in).data();
      const S* dy = diff(l).data();
      const Vec& mean = mean_[static_cast<size_t>(l)];
      const Vec& inv_std = inv_std_[static_cast<size_t>(l)];
      for (int64_t k = 0; k < c; ++k) {
        const size_t kk = static_cast<size_t>(k);
        double dbeta = 0, dgamma = 0;
        for (int64_t s = 0; s < n; ++s) {
          for (int64_t i = 0; i < inner; ++i) {
            const double xhat = (x[at(s, k, i)] - mean[kk]) * inv_std[kk];
            dbeta += dy[at(s, k, i)];
            dgamma += dy[at(s, k, i)] * xhat;
          }
        }
        if (gamma >= 0) grad_[static_cast<size_t>(gamma)][kk] = static_cast<S>(dgamma);
        if (beta >= 0) grad_[static_cast<size_t>(beta)][kk] = static_cast<S>(dbeta);
        if (!GradNeeded(in)) continue;
        // dx = gamma/sigma * (dy - mean(dy) - xhat*mean(dy*xhat))
        const double g = gamma >= 0 ? param_[static_cast<size_t>(gamma)][kk] : 1.0;
        S* dx = diff(in).data();
        for (int64_t s = 0; s < n; ++s) {
          for (int64_t i = 0; i < inner; ++i) {
            const double xhat = (x[at(s, k, i)] - mean[kk]) * inv_std[kk];
            dx[at(s, k, i)] +=
                static_cast<S>(g * inv_std[kk] * (dy[at(s, k, i)] - dbeta / m - xhat * dgamma / m));
          }
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildRelu(int l) {
  const int in = network().layer(l).input_ids[0];
  const S max_value = static_cast<S>(
      std::min<double>(network().layer(l).relu.max_value, std::numeric_limits<S>::max()));
  const int64_t count = Elements(l);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t i = 0; i < count; ++i) y[i] = x[i] > 0 ? std::min(x[i], max_value) : S(0);
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* x = act(in).data();
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      // At the clip value itself the gradient is 0, as in oneDNN's clip_v2,
      // TensorFlow's relu6 and PyTorch's hardtanh: BF16 rounding lands values
      // exactly there.
      for (int64_t i = 0; i < count; ++i) {
        if (x[i] > 0 && x[i] < max_value) dx[i] += dy[i];
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildPool(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const Shape& os = layer.output_shape;
  const Window2d w = layer.pool.window;
  const bool max = layer.kind == LayerKind::kMaxPool;
  const bool include_pad = layer.pool.count_include_pad;
  const int64_t planes = config().batch * is.channels(), h = is.height(), wd = is.width(),
                ho = os.height(), wo = os.width();
  if (max) {
    CountBytes(static_cast<double>(Elements(l)) * sizeof(int64_t));
    if (!config().dry_run) argmax_[static_cast<size_t>(l)].resize(static_cast<size_t>(Elements(l)));
  }
  // Calls visit(input index) for the in-bounds elements of output (oh, ow)'s window.
  auto window = [=](int64_t oh, int64_t ow, auto&& visit) {
    for (int kh = 0; kh < w.kernel_h; ++kh) {
      const int64_t ih = oh * w.stride_h - w.pad_top + kh;
      if (ih < 0 || ih >= h) continue;
      for (int kw = 0; kw < w.kernel_w; ++kw) {
        const int64_t iw = ow * w.stride_w - w.pad_left + kw;
        if (iw >= 0 && iw < wd) visit(ih * wd + iw);
      }
    }
  };
  auto divisor = [=](int64_t oh, int64_t ow) {
    int64_t count = 0;
    window(oh, ow, [&](int64_t) { ++count; });
    return static_cast<S>(include_pad ? w.kernel_h * w.kernel_w : count);
  };
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oh = 0; oh < ho; ++oh) {
        for (int64_t ow = 0; ow < wo; ++ow) {
          const int64_t out = (p * ho + oh) * wo + ow;
          const S* plane = x + p * h * wd;
          if (max) {
            int64_t best = -1;
            window(oh, ow, [&](int64_t i) {
              if (best < 0 || plane[i] > plane[best]) best = i;
            });
            y[out] = plane[best];
            argmax_[static_cast<size_t>(l)][static_cast<size_t>(out)] = p * h * wd + best;
          } else {
            S sum = 0;
            window(oh, ow, [&](int64_t i) { sum += plane[i]; });
            y[out] = sum / divisor(oh, ow);
          }
        }
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t p = 0; p < planes; ++p) {
        for (int64_t oh = 0; oh < ho; ++oh) {
          for (int64_t ow = 0; ow < wo; ++ow) {
            const int64_t out = (p * ho + oh) * wo + ow;
            if (max) {
              dx[argmax_[static_cast<size_t>(l)][static_cast<size_t>(out)]] += dy[out];
            } else {
              const S share = dy[out] / divisor(oh, ow);
              window(oh, ow, [&](int64_t i) { dx[p * h * wd + i] += share; });
            }
          }
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildGlobalAvgPool(int l) {
  const int in = network().layer(l).input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t planes = config().batch * is.channels(), area = is.height() * is.width();
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t p = 0; p < planes; ++p) {
      y[p] = std::accumulate(x + p * area, x + (p + 1) * area, S(0)) / static_cast<S>(area);
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t p = 0; p < planes; ++p) {
        for (int64_t i = 0; i < area; ++i) dx[p * area + i] += dy[p] / static_cast<S>(area);
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildAdd(int l) {
  const std::vector<int> inputs = network().layer(l).input_ids;
  const int64_t count = Elements(l);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    S* y = act(l).data();
    std::copy(act(inputs[0]).begin(), act(inputs[0]).end(), y);
    for (size_t k = 1; k < inputs.size(); ++k) {
      const S* x = act(inputs[k]).data();
      for (int64_t i = 0; i < count; ++i) y[i] += x[i];
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* dy = diff(l).data();
      for (int in : inputs) {
        if (!GradNeeded(in)) continue;
        S* dx = diff(in).data();
        for (int64_t i = 0; i < count; ++i) dx[i] += dy[i];
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildFlatten(int l) {
  const int in = network().layer(l).input_ids[0];
  Add(Phase::kForward, l, Pass::kForward,
      [=] { std::copy(act(in).begin(), act(in).end(), act(l).begin()); });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      std::transform(diff(l).begin(), diff(l).end(), diff(in).begin(), diff(in).begin(),
                     std::plus<S>());
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildLoss(int l) {
  const int in = network().layer(l).input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t rows = Rows(is, config().batch), classes = is.dims.back();
  Allocate(logp_, rows * classes);
  labels_.assign(static_cast<size_t>(rows), 0);
  // log p = x - log(sum(exp(x))), shifted by the row maximum for stability.
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    double sum_loss = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const S* row = x + r * classes;
      const S top = *std::max_element(row, row + classes);
      double z = 0;
      for (int64_t k = 0; k < classes; ++k) z += std::exp(static_cast<double>(row[k] - top));
      const double lse = static_cast<double>(top) + std::log(z);
      for (int64_t k = 0; k < classes; ++k) {
        logp_[static_cast<size_t>(r * classes + k)] = static_cast<S>(row[k] - lse);
      }
      sum_loss -= logp_[static_cast<size_t>(r * classes + labels_[static_cast<size_t>(r)])];
    }
    loss_ = sum_loss / static_cast<double>(rows);
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      S* dx = diff(in).data();
      const S scale = S(1) / static_cast<S>(rows);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < classes; ++k) {
          dx[r * classes + k] += std::exp(logp_[static_cast<size_t>(r * classes + k)]) * scale;
        }
        dx[r * classes + labels_[static_cast<size_t>(r)]] -= scale;
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildSigmoid(int l) {
  const int in = network().layer(l).input_ids[0];
  const int64_t count = Elements(l);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t i = 0; i < count; ++i) y[i] = S(1) / (S(1) + std::exp(-x[i]));
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      // d sigmoid / dx = s*(1 - s), from the output.
      const S* y = act(l).data();
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t i = 0; i < count; ++i) dx[i] += dy[i] * y[i] * (S(1) - y[i]);
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildSwish(int l) {
  const int in = network().layer(l).input_ids[0];
  const int64_t count = Elements(l);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t i = 0; i < count; ++i) y[i] = x[i] / (S(1) + std::exp(-x[i]));
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      // d (x*s(x)) / dx = s + x*s*(1 - s), with s recomputed from x.
      const S* x = act(in).data();
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t i = 0; i < count; ++i) {
        const S sig = S(1) / (S(1) + std::exp(-x[i]));
        dx[i] += dy[i] * sig * (S(1) + x[i] * (S(1) - sig));
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildMul(int l) {
  const Layer& layer = network().layer(l);
  const int a = layer.input_ids[0], b = layer.input_ids[1];
  // a is {scales, inner} per sample: inner = H*W when b is {C} broadcast, else 1.
  const int64_t scales = Elements(b), inner = Elements(a) / scales;
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(a).data();
    const S* w = act(b).data();
    S* y = act(l).data();
    for (int64_t j = 0; j < scales; ++j) {
      for (int64_t i = 0; i < inner; ++i) y[j * inner + i] = x[j * inner + i] * w[j];
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* x = act(a).data();
      const S* w = act(b).data();
      const S* dy = diff(l).data();
      for (int64_t j = 0; j < scales; ++j) {
        if (GradNeeded(a)) {
          S* dx = diff(a).data();
          for (int64_t i = 0; i < inner; ++i) dx[j * inner + i] += dy[j * inner + i] * w[j];
        }
        if (GradNeeded(b)) {
          S sum = 0;
          for (int64_t i = 0; i < inner; ++i) sum += dy[j * inner + i] * x[j * inner + i];
          diff(b)[static_cast<size_t>(j)] += sum;
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildConcat(int l) {
  const std::vector<int> inputs = network().layer(l).input_ids;
  const int64_t n = config().batch, out = network().layer(l).output_shape.elements();
  // Per sample, input k's elements go to [offset_k, offset_k + size_k) of the output.
  std::vector<int64_t> offsets, sizes;
  int64_t offset = 0;
  for (int in : inputs) {
    offsets.push_back(offset);
    sizes.push_back(network().layer(in).output_shape.elements());
    offset += sizes.back();
  }
  Add(Phase::kForward, l, Pass::kForward, [=] {
    S* y = act(l).data();
    for (size_t k = 0; k < inputs.size(); ++k) {
      const S* x = act(inputs[k]).data();
      for (int64_t s = 0; s < n; ++s) {
        std::copy(x + s * sizes[k], x + (s + 1) * sizes[k], y + s * out + offsets[k]);
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* dy = diff(l).data();
      for (size_t k = 0; k < inputs.size(); ++k) {
        if (!GradNeeded(inputs[k])) continue;
        S* dx = diff(inputs[k]).data();
        for (int64_t s = 0; s < n; ++s) {
          for (int64_t i = 0; i < sizes[k]; ++i)
            dx[s * sizes[k] + i] += dy[s * out + offsets[k] + i];
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildLrn(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t n = config().batch, c = is.channels(), inner = is.height() * is.width();
  const int64_t half = layer.lrn.size / 2;
  const double alpha = layer.lrn.alpha / static_cast<double>(layer.lrn.size);
  const double beta = layer.lrn.beta, k = layer.lrn.k;
  Allocate(lrn_scale_[static_cast<size_t>(l)], Elements(l));
  auto at = [=](int64_t s, int64_t ch, int64_t i) { return (s * c + ch) * inner + i; };
  // Krizhevsky et al. 2012, sec. 3.3: y = x / (k + alpha/size * sum x^2)^beta.
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    S* scale = lrn_scale_[static_cast<size_t>(l)].data();
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const int64_t lo = std::max<int64_t>(0, ch - half), hi = std::min(c - 1, ch + half);
        for (int64_t i = 0; i < inner; ++i) {
          double sum = 0;
          for (int64_t o = lo; o <= hi; ++o) {
            sum += static_cast<double>(x[at(s, o, i)]) * x[at(s, o, i)];
          }
          const double base = k + alpha * sum;
          scale[at(s, ch, i)] = static_cast<S>(base);
          y[at(s, ch, i)] = static_cast<S>(x[at(s, ch, i)] * std::pow(base, -beta));
        }
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    // Caffe's LRNLayer::CrossChannelBackward: dx_c = dy_c*base_c^-beta -
    // 2*alpha*beta/size * x_c * sum_{c' near c} dy_c'*y_c'/base_c'.
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* x = act(in).data();
      const S* y = act(l).data();
      const S* dy = diff(l).data();
      const S* scale = lrn_scale_[static_cast<size_t>(l)].data();
      S* dx = diff(in).data();
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t lo = std::max<int64_t>(0, ch - half), hi = std::min(c - 1, ch + half);
          for (int64_t i = 0; i < inner; ++i) {
            double sum = 0;
            for (int64_t o = lo; o <= hi; ++o) {
              sum += static_cast<double>(dy[at(s, o, i)]) * y[at(s, o, i)] / scale[at(s, o, i)];
            }
            const size_t e = static_cast<size_t>(at(s, ch, i));
            dx[e] += static_cast<S>(dy[e] * std::pow(static_cast<double>(scale[e]), -beta) -
                                    2 * alpha * beta * x[e] * sum);
          }
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildUpdates() {
  const StepConfig& c = config();
  for (size_t i = 0; i < params().size(); ++i) {
    const ParamRef& p = params()[i];
    if (!p.trainable) continue;
    const int64_t n = p.elements;
    Add(Phase::kUpdate, p.layer, Pass::kUpdate, [this, i, n, c] {
      S* w = param_[i].data();
      const S* g = grad_[i].data();
      switch (c.optimizer) {
        case Optimizer::kSgd:
          SgdUpdate(w, g, n, c.learning_rate);
          break;
        case Optimizer::kSgdMomentum:
          MomentumUpdate(w, g, state1_[i].data(), n, c.learning_rate, c.momentum);
          break;
        case Optimizer::kAdam:
          AdamUpdate(w, g, state1_[i].data(), state2_[i].data(), n,
                     AdamStepSize(c.learning_rate, c.beta1, c.beta2, update_count()), c.beta1,
                     c.beta2, c.epsilon);
          break;
        case Optimizer::kRmsprop:
          RmspropUpdate(w, g, state1_[i].data(), state2_[i].data(), n, c.learning_rate,
                        c.rmsprop_alpha, c.momentum, c.epsilon);
          break;
      }
    });
  }
}

template <typename S>
void EigenExecutor<S>::SetInput(const std::vector<double>& values,
                                const std::vector<int32_t>& labels) {
  FITSPEED_CHECK(values.size() == act_[0].size(), "input size does not match the network");
  FITSPEED_CHECK(labels.size() == labels_.size(), "label count does not match the loss rows");
  for (int32_t label : labels) {
    FITSPEED_CHECK(label >= 0 && label < network().num_classes(), "label out of range");
  }
  std::copy(values.begin(), values.end(), act_[0].begin());
  RoundToStorage(act_[0]);
  labels_ = labels;
}

template <typename S>
void EigenExecutor<S>::SetParam(size_t i, const std::vector<double>& values) {
  FITSPEED_CHECK(values.size() == param_.at(i).size(), "parameter size mismatch");
  std::copy(values.begin(), values.end(), param_[i].begin());
}

template <typename S>
std::vector<double> EigenExecutor<S>::Param(size_t i) const {
  return std::vector<double>(param_.at(i).begin(), param_.at(i).end());
}

template <typename S>
std::vector<double> EigenExecutor<S>::Grad(size_t i) const {
  FITSPEED_CHECK(params().at(i).trainable, "only trainable parameters have gradients");
  return std::vector<double>(grad_[i].begin(), grad_[i].end());
}

template <typename S>
std::vector<double> EigenExecutor<S>::Output(int layer) const {
  FITSPEED_CHECK(layer >= 0 && layer < network().size() - 1, "no output to read for this layer");
  const Vec& a = act_[static_cast<size_t>(layer)];
  return std::vector<double>(a.begin(), a.end());
}

}  // namespace

template <typename Scalar>
std::unique_ptr<StepExecutor> MakeEigenExecutor(const Network& network, const StepConfig& config) {
  return std::make_unique<EigenExecutor<Scalar>>(network, config);
}
template std::unique_ptr<StepExecutor> MakeEigenExecutor<float>(const Network&, const StepConfig&);
template std::unique_ptr<StepExecutor> MakeEigenExecutor<double>(const Network&, const StepConfig&);

}  // namespace fitspeed::timing
