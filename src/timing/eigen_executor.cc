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
#include <type_traits>

#include "fitspeed/core/error.h"
#include "timing/bf16.h"
#include "timing/executor.h"
#include "timing/optimizer.h"

namespace fitspeed::timing {

namespace {

constexpr double kPi = 3.14159265358979323846;

template <typename S>
class EigenExecutor final : public StepExecutor {
 public:
  EigenExecutor(const Network& network, const StepConfig& config);

  void SetInput(const std::vector<double>& values, const std::vector<int32_t>& labels) override;
  void SetParam(size_t i, const std::vector<double>& values) override;
  std::vector<double> Param(size_t i) const override;
  std::vector<double> Grad(size_t i) const override;
  GradientStorage MutableGrad(size_t i) override;
  std::vector<double> Output(int layer) const override;

 private:
  using Vec = std::vector<S>;
  using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using MapMat = Eigen::Map<Mat>;
  using ConstMapMat = Eigen::Map<const Mat>;

  double loss() const override {
    double sum = 0;
    for (double part : loss_parts_) sum += part;
    return sum;
  }
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
  void BuildEmbedding(int l);
  // Position and segment embeddings: a table row added to each token.
  void BuildAddedEmbedding(int l);
  // Layer norm and RMS norm over the last dimension.
  void BuildLastDimNorm(int l);
  void BuildGelu(int l);
  void BuildTanh(int l);
  void BuildDropout(int l);
  // Split heads, merge heads and image to sequence: per sample {A, B, C} -> {B, A, C}.
  void BuildTranspose(int l);
  void BuildBatchedMatmul(int l);
  void BuildSoftmax(int l);
  void BuildRotary(int l);
  // Select token and gather tokens: rows of a {T, F} sequence.
  void BuildTakeRows(int l);
  void BuildClassToken(int l);
  void BuildRouter(int l);
  void BuildUpdates();
  // The builder of each kind: adds its forward ops and sets backward_[l].
  using Builder = void (EigenExecutor::*)(int);
  static const KindTable<Builder>& Builders();
  // Batch-norm statistics of the last forward pass, per batch-norm layer (per
  // channel); layer and RMS norm: per row.
  std::vector<Vec> mean_, inv_std_;
  // Dropout: per element 0 or 1/(1 - rate), the mask of the last forward pass.
  std::vector<Vec> mask_;
  // Max pooling: index of each output's winning input element.
  std::vector<std::vector<int64_t>> argmax_;
  // LRN: the denominator base k + alpha/size * sum x^2 of each element.
  std::vector<Vec> lrn_scale_;
  std::vector<Vec> logp_;           // per loss layer: the log-softmax of its input
  std::vector<Vec> logit_grad_;     // per router: the gradient of its logits
  std::vector<double> loss_parts_;  // per loss (LabelLayout order): its mean over its rows

  std::vector<bool> grad_needed_;
  // Per layer, in forward order: adds the layer's backward ops (run in reverse).
  std::vector<std::function<void()>> backward_;
  std::vector<Vec> act_, diff_;
  std::vector<Vec> param_, grad_, state1_, state2_;
  std::vector<Vec> kernel_copy_;  // bf16: per parameter, the rounded kernel (else empty)
  std::vector<int32_t> labels_;   // every loss's labels (LabelLayout)
  bool bf16_ = false;
  bool token_input_ = false;  // the input is token ids: never rounded
};

template <typename S>
EigenExecutor<S>::EigenExecutor(const Network& network, const StepConfig& config)
    : StepExecutor(network, config) {
  bf16_ = config.precision == Precision::kMixed;
  token_input_ = InputVocab(network) > 0;
  grad_needed_ = GradientsNeeded(network);
  const size_t n = static_cast<size_t>(network.size());
  act_.resize(n);
  diff_.resize(n);
  backward_.resize(n);
  kernel_copy_.resize(params().size());
  mean_.resize(n);
  inv_std_.resize(n);
  argmax_.resize(n);
  lrn_scale_.resize(n);
  mask_.resize(n);
  logp_.resize(n);
  logit_grad_.resize(n);
  labels_.assign(static_cast<size_t>(LabelCount(network, config.batch)), 0);
  loss_parts_.assign(LabelLayout(network, config.batch).size(), 0.0);
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
  // Gradients of layer outputs are accumulated by their consumers: zero them
  // first; so is the gradient of a table that an embedding and a tied dense
  // layer share.
  for (int l = 0; l < network.size(); ++l) {
    if (IsTiedTable(network, l)) {
      const size_t table = static_cast<size_t>(ParamId(l, "table"));
      Add(Phase::kBackward, l, Pass::kBackwardWeights,
          [this, table] { std::fill(grad_[table].begin(), grad_[table].end(), S(0)); });
    }
    if (IsLoss(network.layer(l))) continue;
    Allocate(act(l), Elements(l));
    if (!GradNeeded(l)) continue;
    Allocate(diff(l), Elements(l));
    Add(Phase::kBackward, l, Pass::kBackwardData,
        [this, l] { std::fill(diff(l).begin(), diff(l).end(), S(0)); });
  }
  for (int l = 1; l < network.size(); ++l) {
    const auto build = Builders()[static_cast<size_t>(network.layer(l).kind)].second;
    (this->*build)(l);
    if (bf16_ && !IsLoss(network.layer(l))) {
      Add(Phase::kForward, l, Pass::kForward, [this, l] { RoundToStorage(act(l)); });
    }
  }
  for (int l = network.size() - 1; l >= 1; --l) {
    if (!GradNeeded(l) || !backward_[static_cast<size_t>(l)]) continue;
    // Every consumer has added its part of diff(l) by now: round the sum once.
    if (bf16_ && !IsLoss(network.layer(l))) {
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
const KindTable<typename EigenExecutor<S>::Builder>& EigenExecutor<S>::Builders() {
  using E = EigenExecutor;
  static constexpr KindTable<Builder> kBuilders = {{
      {LayerKind::kInput, nullptr},  // layer 0: SetInput fills its output
      {LayerKind::kConv2d, &E::BuildConv},
      {LayerKind::kDense, &E::BuildDense},
      {LayerKind::kBatchNorm, &E::BuildBatchNorm},
      {LayerKind::kRelu, &E::BuildRelu},
      {LayerKind::kAvgPool, &E::BuildPool},
      {LayerKind::kMaxPool, &E::BuildPool},
      {LayerKind::kGlobalAvgPool, &E::BuildGlobalAvgPool},
      {LayerKind::kAdd, &E::BuildAdd},
      {LayerKind::kFlatten, &E::BuildFlatten},
      {LayerKind::kSoftmaxCrossEntropy, &E::BuildLoss},
      {LayerKind::kSigmoid, &E::BuildSigmoid},
      {LayerKind::kSwish, &E::BuildSwish},
      {LayerKind::kMul, &E::BuildMul},
      {LayerKind::kConcat, &E::BuildConcat},
      {LayerKind::kLrn, &E::BuildLrn},
      {LayerKind::kEmbedding, &E::BuildEmbedding},
      {LayerKind::kPositionEmbedding, &E::BuildAddedEmbedding},
      {LayerKind::kSegmentEmbedding, &E::BuildAddedEmbedding},
      {LayerKind::kLayerNorm, &E::BuildLastDimNorm},
      {LayerKind::kRmsNorm, &E::BuildLastDimNorm},
      {LayerKind::kGelu, &E::BuildGelu},
      {LayerKind::kTanh, &E::BuildTanh},
      {LayerKind::kDropout, &E::BuildDropout},
      {LayerKind::kSplitHeads, &E::BuildTranspose},
      {LayerKind::kMergeHeads, &E::BuildTranspose},
      {LayerKind::kBatchedMatmul, &E::BuildBatchedMatmul},
      {LayerKind::kSoftmax, &E::BuildSoftmax},
      {LayerKind::kRotary, &E::BuildRotary},
      {LayerKind::kSelectToken, &E::BuildTakeRows},
      {LayerKind::kGatherTokens, &E::BuildTakeRows},
      {LayerKind::kClassToken, &E::BuildClassToken},
      {LayerKind::kImageToSequence, &E::BuildTranspose},
      {LayerKind::kRouter, &E::BuildRouter},
  }};
  static_assert(InKindOrder(kBuilders), "every LayerKind needs an Eigen builder, in order");
  return kBuilders;
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
  // A tied kernel is the embedding's {vocab, dim} table (Press & Wolf 2017).
  const int tied = TiedEmbedding(network(), l);
  const size_t kernel =
      static_cast<size_t>(tied >= 0 ? ParamId(tied, "table") : ParamId(l, "kernel"));
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
      MapMat gw(grad_[kernel].data(), units, features);
      if (tied >= 0) {  // the table's gradient: this layer's part plus the embedding's
        gw.noalias() += dy.transpose() * ConstMapMat(act(in).data(), rows, features);
      } else {
        gw.noalias() = dy.transpose() * ConstMapMat(act(in).data(), rows, features);
      }
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
  const std::vector<LossLabels> layout = LabelLayout(network(), config().batch);
  size_t part = 0;
  while (layout[part].layer != l) ++part;
  const int64_t offset = layout[part].offset;
  Vec& logp = logp_[static_cast<size_t>(l)];
  Allocate(logp, rows * classes);
  auto label = [this, offset](int64_t r) { return labels_[static_cast<size_t>(offset + r)]; };
  // log p = x - log(sum(exp(x))), shifted by the row maximum for stability.
  Add(Phase::kForward, l, Pass::kForward, [=, &logp] {
    const S* x = act(in).data();
    double sum_loss = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const S* row = x + r * classes;
      const S top = *std::max_element(row, row + classes);
      double z = 0;
      for (int64_t k = 0; k < classes; ++k) z += std::exp(static_cast<double>(row[k] - top));
      const double lse = static_cast<double>(top) + std::log(z);
      for (int64_t k = 0; k < classes; ++k) {
        logp[static_cast<size_t>(r * classes + k)] = static_cast<S>(row[k] - lse);
      }
      sum_loss -= logp[static_cast<size_t>(r * classes + label(r))];
    }
    loss_parts_[part] = sum_loss / static_cast<double>(rows);
  });
  backward_[static_cast<size_t>(l)] = [=, &logp] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=, &logp] {
      S* dx = diff(in).data();
      const S scale = S(1) / static_cast<S>(rows);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < classes; ++k) {
          dx[r * classes + k] += std::exp(logp[static_cast<size_t>(r * classes + k)]) * scale;
        }
        dx[r * classes + label(r)] -= scale;
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
void EigenExecutor<S>::BuildEmbedding(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const int64_t rows = Rows(layer.output_shape, config().batch), dim = layer.embedding.dim;
  const size_t table = static_cast<size_t>(ParamId(l, "table"));
  const bool tied = IsTiedTable(network(), l);
  // torch.nn.Embedding: y[r] = table[id[r]]; the ids take no gradient.
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* ids = act(in).data();
    const S* t = param_[table].data();
    S* y = act(l).data();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t id = static_cast<int64_t>(ids[r]);
      std::copy(t + id * dim, t + (id + 1) * dim, y + r * dim);
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    // A dense gradient (sparse=False): dy added into the rows of the tokens.
    // A tied table's gradient was zeroed first and holds the dense layer's part.
    Add(Phase::kBackward, l, Pass::kBackwardWeights, [=] {
      const S* ids = act(in).data();
      const S* dy = diff(l).data();
      Vec& g = grad_[table];
      if (!tied) std::fill(g.begin(), g.end(), S(0));
      for (int64_t r = 0; r < rows; ++r) {
        S* row = g.data() + static_cast<int64_t>(ids[r]) * dim;
        for (int64_t k = 0; k < dim; ++k) row[k] += dy[r * dim + k];
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildAddedEmbedding(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const int64_t n = config().batch, tokens = layer.output_shape.dims[0],
                f = layer.output_shape.dims[1], table_rows = layer.added.rows;
  const bool segment = layer.kind == LayerKind::kSegmentEmbedding;
  const size_t table = static_cast<size_t>(ParamId(l, "table"));
  // The table row of token t: its position, or its segment (SegmentOf).
  auto row_of = [=](int64_t t) { return segment ? SegmentOf(t, tokens, table_rows) : t; };
  // y[s, t] = x[s, t] + table[row(t)] (BERT's and GPT-2's learned embeddings).
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    const S* w = param_[table].data();
    S* y = act(l).data();
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t t = 0; t < tokens; ++t) {
        const int64_t e = (s * tokens + t) * f;
        for (int64_t k = 0; k < f; ++k) y[e + k] = x[e + k] + w[row_of(t) * f + k];
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    if (GradNeeded(in)) {
      Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
        std::transform(diff(l).begin(), diff(l).end(), diff(in).begin(), diff(in).begin(),
                       std::plus<S>());
      });
    }
    Add(Phase::kBackward, l, Pass::kBackwardWeights, [=] {
      const S* dy = diff(l).data();
      Vec& g = grad_[table];
      std::fill(g.begin(), g.end(), S(0));
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t t = 0; t < tokens; ++t) {
          for (int64_t k = 0; k < f; ++k) g[row_of(t) * f + k] += dy[(s * tokens + t) * f + k];
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildLastDimNorm(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const bool rms = layer.kind == LayerKind::kRmsNorm;
  const int64_t f = layer.output_shape.dims.back(), rows = Elements(l) / f;
  const double eps = layer.norm.epsilon;
  const int gamma = ParamId(l, "gamma"), beta = ParamId(l, "beta");
  Allocate(mean_[static_cast<size_t>(l)], rows);
  Allocate(inv_std_[static_cast<size_t>(l)], rows);
  // Layer norm (Ba et al. 2016): xhat = (x - mean)/sqrt(var + eps); RMS norm
  // (Zhang & Sennrich 2019): the same with the mean fixed at 0, so var is the
  // mean square. y = xhat*gamma + beta.
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t r = 0; r < rows; ++r) {
      const S* xr = x + r * f;
      double mu = 0, var = 0;
      if (!rms) mu = std::accumulate(xr, xr + f, 0.0) / static_cast<double>(f);
      for (int64_t k = 0; k < f; ++k) var += (xr[k] - mu) * (xr[k] - mu);
      const double rstd = 1 / std::sqrt(var / static_cast<double>(f) + eps);
      mean_[static_cast<size_t>(l)][static_cast<size_t>(r)] = static_cast<S>(mu);
      inv_std_[static_cast<size_t>(l)][static_cast<size_t>(r)] = static_cast<S>(rstd);
      for (int64_t k = 0; k < f; ++k) {
        const double g =
            gamma >= 0 ? param_[static_cast<size_t>(gamma)][static_cast<size_t>(k)] : 1;
        const double b = beta >= 0 ? param_[static_cast<size_t>(beta)][static_cast<size_t>(k)] : 0;
        y[r * f + k] = static_cast<S>((xr[k] - mu) * rstd * g + b);
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    // Ba et al. 2016: with g = dy*gamma, dx = rstd*(g - mean(g) - xhat*mean(g*xhat));
    // RMS norm has no mean term: dx = rstd*(g - xhat*mean(g*xhat)).
    // dgamma = sum dy*xhat, dbeta = sum dy over the rows.
    if (GradNeeded(in)) {
      Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
        const S* x = act(in).data();
        const S* dy = diff(l).data();
        S* dx = diff(in).data();
        std::vector<double> g(static_cast<size_t>(f)), xhat(static_cast<size_t>(f));
        for (int64_t r = 0; r < rows; ++r) {
          const double mu = mean_[static_cast<size_t>(l)][static_cast<size_t>(r)];
          const double rstd = inv_std_[static_cast<size_t>(l)][static_cast<size_t>(r)];
          double mean_g = 0, mean_gx = 0;
          for (int64_t k = 0; k < f; ++k) {
            const size_t kk = static_cast<size_t>(k);
            xhat[kk] = (x[r * f + k] - mu) * rstd;
            g[kk] = dy[r * f + k] * (gamma >= 0 ? param_[static_cast<size_t>(gamma)][kk] : S(1));
            mean_g += g[kk];
            mean_gx += g[kk] * xhat[kk];
          }
          mean_g = rms ? 0 : mean_g / static_cast<double>(f);
          mean_gx /= static_cast<double>(f);
          for (int64_t k = 0; k < f; ++k) {
            const size_t kk = static_cast<size_t>(k);
            dx[r * f + k] += static_cast<S>(rstd * (g[kk] - mean_g - xhat[kk] * mean_gx));
          }
        }
      });
    }
    if (gamma < 0 && beta < 0) return;
    Add(Phase::kBackward, l, Pass::kBackwardWeights, [=] {
      const S* x = act(in).data();
      const S* dy = diff(l).data();
      std::vector<double> dgamma(static_cast<size_t>(f)), dbeta(static_cast<size_t>(f));
      for (int64_t r = 0; r < rows; ++r) {
        const double mu = mean_[static_cast<size_t>(l)][static_cast<size_t>(r)];
        const double rstd = inv_std_[static_cast<size_t>(l)][static_cast<size_t>(r)];
        for (int64_t k = 0; k < f; ++k) {
          dgamma[static_cast<size_t>(k)] += dy[r * f + k] * (x[r * f + k] - mu) * rstd;
          dbeta[static_cast<size_t>(k)] += dy[r * f + k];
        }
      }
      if (gamma >= 0)
        std::copy(dgamma.begin(), dgamma.end(), grad_[static_cast<size_t>(gamma)].begin());
      if (beta >= 0)
        std::copy(dbeta.begin(), dbeta.end(), grad_[static_cast<size_t>(beta)].begin());
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildGelu(int l) {
  const int in = network().layer(l).input_ids[0];
  const bool tanh_form = network().layer(l).gelu.tanh_approximation;
  const int64_t count = Elements(l);
  // Hendrycks & Gimpel 2016: x*Phi(x) = 0.5x(1 + erf(x/sqrt2)), or
  // 0.5x(1 + tanh(u)) with u = sqrt(2/pi)(x + 0.044715x^3).
  const double k = std::sqrt(2 / kPi), c = 0.044715;
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t i = 0; i < count; ++i) {
      const double v = x[i];
      y[i] = static_cast<S>(tanh_form ? 0.5 * v * (1 + std::tanh(k * (v + c * v * v * v)))
                                      : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    // d/dx: Phi(x) + x*phi(x) (erf); 0.5(1 + t) + 0.5x(1 - t^2)*k(1 + 3c x^2) (tanh).
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* x = act(in).data();
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t i = 0; i < count; ++i) {
        const double v = x[i];
        double d = 0;
        if (tanh_form) {
          const double t = std::tanh(k * (v + c * v * v * v));
          d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * c * v * v);
        } else {
          d = 0.5 * (1 + std::erf(v / std::sqrt(2.0))) +
              v * std::exp(-0.5 * v * v) / std::sqrt(2 * kPi);
        }
        dx[i] += static_cast<S>(dy[i] * d);
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildTanh(int l) {
  const int in = network().layer(l).input_ids[0];
  const int64_t count = Elements(l);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t i = 0; i < count; ++i) y[i] = std::tanh(x[i]);
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      // d tanh / dx = 1 - y^2, from the output.
      const S* y = act(l).data();
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t i = 0; i < count; ++i) dx[i] += dy[i] * (S(1) - y[i] * y[i]);
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildDropout(int l) {
  const int in = network().layer(l).input_ids[0];
  const double rate = network().layer(l).dropout.rate;
  const int64_t count = Elements(l);
  Vec& mask = mask_[static_cast<size_t>(l)];
  Allocate(mask, count);
  // Inverted dropout: y = x*keep/(1 - rate), the mask of MakeDropoutMask.
  Add(Phase::kForward, l, Pass::kForward, [=, &mask] {
    const DropoutMask keep = MakeDropoutMask(config().seed, l, update_count(), rate);
    const S scale = static_cast<S>(1 / (1 - rate));
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t i = 0; i < count; ++i) {
      mask[static_cast<size_t>(i)] = keep.Keep(static_cast<uint64_t>(i)) ? scale : S(0);
      y[i] = x[i] * mask[static_cast<size_t>(i)];
    }
  });
  backward_[static_cast<size_t>(l)] = [=, &mask] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=, &mask] {
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t i = 0; i < count; ++i) dx[i] += dy[i] * mask[static_cast<size_t>(i)];
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildTranspose(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  // Per sample {A, B, C} -> {B, A, C}.
  int64_t a = 0, b = 0, c = 1;
  if (layer.kind == LayerKind::kSplitHeads) {  // {T, H*D} as {T, H, D} -> {H, T, D}
    a = is.dims[0];
    b = layer.heads.heads;
    c = is.dims[1] / b;
  } else if (layer.kind == LayerKind::kMergeHeads) {  // {H, T, D} -> {T, H, D} = {T, H*D}
    a = is.dims[0];
    b = is.dims[1];
    c = is.dims[2];
  } else {  // image to sequence: {C, H*W} -> {H*W, C}
    a = is.channels();
    b = is.height() * is.width();
  }
  const int64_t n = config().batch;
  // dst[s, j, i, k] (+)= src[s, i, j, k] for a source {rows, cols, c}.
  auto transpose = [=](const S* src, S* dst, int64_t rows, int64_t cols, bool accumulate) {
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const S* from = src + ((s * rows + i) * cols + j) * c;
          S* to = dst + ((s * cols + j) * rows + i) * c;
          for (int64_t k = 0; k < c; ++k) to[k] = accumulate ? to[k] + from[k] : from[k];
        }
      }
    }
  };
  Add(Phase::kForward, l, Pass::kForward,
      [=] { transpose(act(in).data(), act(l).data(), a, b, false); });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData,
        [=] { transpose(diff(l).data(), diff(in).data(), b, a, true); });
  };
}

template <typename S>
void EigenExecutor<S>::BuildBatchedMatmul(int l) {
  const Layer& layer = network().layer(l);
  const int ia = layer.input_ids[0], ib = layer.input_ids[1];
  const Shape& as = network().layer(ia).output_shape;
  const Shape& bs = network().layer(ib).output_shape;
  const bool tb = layer.matmul.transpose_b;
  const S scale = static_cast<S>(layer.matmul.scale);
  const int64_t n = config().batch, heads = as.dims[0], kv = bs.dims[0], group = heads / kv;
  const int64_t m = as.dims[1], k = as.dims[2], cols = layer.output_shape.dims[2];
  // The `group` heads of a that share head hb of b are one (group*m) x k
  // matrix, their rows stacked (Ainslie et al. 2023): one product per (s, hb).
  const int64_t rows = group * m;
  auto a_at = [=](int64_t s, int64_t hb) { return (s * heads + hb * group) * m * k; };
  auto b_at = [=](int64_t s, int64_t hb) { return (s * kv + hb) * k * cols; };
  auto y_at = [=](int64_t s, int64_t hb) { return (s * heads + hb * group) * m * cols; };
  Add(Phase::kForward, l, Pass::kForward, [=] {
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t hb = 0; hb < kv; ++hb) {
        const ConstMapMat a(act(ia).data() + a_at(s, hb), rows, k);
        MapMat y(act(l).data() + y_at(s, hb), rows, cols);
        if (tb) {
          y.noalias() = scale * a * ConstMapMat(act(ib).data() + b_at(s, hb), cols, k).transpose();
        } else {
          y.noalias() = scale * a * ConstMapMat(act(ib).data() + b_at(s, hb), k, cols);
        }
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    // da = scale dy B^T; dB = scale a^T dy (with transpose_b, db = dB^T = scale dy^T a).
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t hb = 0; hb < kv; ++hb) {
          const ConstMapMat dy(diff(l).data() + y_at(s, hb), rows, cols);
          if (GradNeeded(ia)) {
            MapMat da(diff(ia).data() + a_at(s, hb), rows, k);
            if (tb) {
              da.noalias() += scale * dy * ConstMapMat(act(ib).data() + b_at(s, hb), cols, k);
            } else {
              da.noalias() +=
                  scale * dy * ConstMapMat(act(ib).data() + b_at(s, hb), k, cols).transpose();
            }
          }
          if (GradNeeded(ib)) {
            const ConstMapMat a(act(ia).data() + a_at(s, hb), rows, k);
            if (tb) {
              MapMat(diff(ib).data() + b_at(s, hb), cols, k).noalias() +=
                  scale * dy.transpose() * a;
            } else {
              MapMat(diff(ib).data() + b_at(s, hb), k, cols).noalias() +=
                  scale * a.transpose() * dy;
            }
          }
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildSoftmax(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& os = layer.output_shape;
  const int64_t last = os.dims.back(), rows = Elements(l) / last;
  // Causal: row i of each {T, T} block attends to columns j <= i.
  const int64_t tokens = layer.softmax.causal ? os.dims[static_cast<size_t>(os.rank() - 2)] : 0;
  auto width = [=](int64_t r) { return tokens > 0 ? r % tokens + 1 : last; };
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t r = 0; r < rows; ++r) {
      const S* xr = x + r * last;
      S* yr = y + r * last;
      const int64_t w = width(r);
      const S top = *std::max_element(xr, xr + w);
      double z = 0;
      for (int64_t j = 0; j < w; ++j) z += std::exp(static_cast<double>(xr[j] - top));
      for (int64_t j = 0; j < last; ++j) {
        yr[j] = j < w ? static_cast<S>(std::exp(static_cast<double>(xr[j] - top)) / z) : S(0);
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    // dx = y*(dy - sum(dy*y)), from the output (masked entries have y = 0).
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* y = act(l).data();
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t r = 0; r < rows; ++r) {
        double dot = 0;
        for (int64_t j = 0; j < last; ++j) dot += dy[r * last + j] * y[r * last + j];
        for (int64_t j = 0; j < last; ++j) {
          dx[r * last + j] += static_cast<S>(y[r * last + j] * (dy[r * last + j] - dot));
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildRotary(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& os = layer.output_shape;
  const int64_t tokens = os.dims[1], d = os.dims[2], half = d / 2;
  const int64_t rows = Elements(l) / d;  // batch * heads * tokens
  const RotaryTables tables = MakeRotaryTables(tokens, d, layer.rotary.base);
  // Su et al. 2021, rotate-half form: (x_i, x_{i+D/2}) of row t rotated by t*theta_i.
  auto rotate = [=](const S* x, S* y, double sign, bool accumulate) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = r % tokens;
      for (int64_t i = 0; i < half; ++i) {
        const double c = tables.cos[static_cast<size_t>(t * half + i)];
        const double s = sign * tables.sin[static_cast<size_t>(t * half + i)];
        const double lo = x[r * d + i], hi = x[r * d + i + half];
        const S y_lo = static_cast<S>(lo * c - hi * s), y_hi = static_cast<S>(hi * c + lo * s);
        y[r * d + i] = accumulate ? y[r * d + i] + y_lo : y_lo;
        y[r * d + i + half] = accumulate ? y[r * d + i + half] + y_hi : y_hi;
      }
    }
  };
  Add(Phase::kForward, l, Pass::kForward,
      [=] { rotate(act(in).data(), act(l).data(), 1.0, false); });
  backward_[static_cast<size_t>(l)] = [=] {
    // The transpose of a rotation is the rotation by the opposite angle.
    Add(Phase::kBackward, l, Pass::kBackwardData,
        [=] { rotate(diff(l).data(), diff(in).data(), -1.0, true); });
  };
}

template <typename S>
void EigenExecutor<S>::BuildTakeRows(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t n = config().batch, tokens = is.dims[0], f = is.dims[1];
  const std::vector<int64_t> taken = TakenRows(network(), l);  // in output order
  const int64_t count = static_cast<int64_t>(taken.size());
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t k = 0; k < count; ++k) {
        const S* from = x + (s * tokens + taken[static_cast<size_t>(k)]) * f;
        std::copy(from, from + f, y + (s * count + k) * f);
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      const S* dy = diff(l).data();
      S* dx = diff(in).data();
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t k = 0; k < count; ++k) {
          S* to = dx + (s * tokens + taken[static_cast<size_t>(k)]) * f;
          for (int64_t j = 0; j < f; ++j) to[j] += dy[(s * count + k) * f + j];
        }
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildClassToken(int l) {
  const int in = network().layer(l).input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t n = config().batch, tokens = is.dims[0], f = is.dims[1];
  const size_t token = static_cast<size_t>(ParamId(l, "token"));
  // ViT (Dosovitskiy et al. 2021): row 0 is the learned token, rows 1..T the input.
  Add(Phase::kForward, l, Pass::kForward, [=] {
    const S* x = act(in).data();
    S* y = act(l).data();
    for (int64_t s = 0; s < n; ++s) {
      std::copy(param_[token].begin(), param_[token].end(), y + s * (tokens + 1) * f);
      std::copy(x + s * tokens * f, x + (s + 1) * tokens * f, y + (s * (tokens + 1) + 1) * f);
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    if (GradNeeded(in)) {
      Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
        const S* dy = diff(l).data();
        S* dx = diff(in).data();
        for (int64_t s = 0; s < n; ++s) {
          for (int64_t i = 0; i < tokens * f; ++i)
            dx[s * tokens * f + i] += dy[(s * (tokens + 1) + 1) * f + i];
        }
      });
    }
    Add(Phase::kBackward, l, Pass::kBackwardWeights, [=] {
      const S* dy = diff(l).data();
      Vec& g = grad_[token];
      std::fill(g.begin(), g.end(), S(0));
      for (int64_t s = 0; s < n; ++s) {
        for (int64_t j = 0; j < f; ++j) g[static_cast<size_t>(j)] += dy[s * (tokens + 1) * f + j];
      }
    });
  };
}

template <typename S>
void EigenExecutor<S>::BuildRouter(int l) {
  const Layer& layer = network().layer(l);
  const int in = layer.input_ids[0];
  const Shape& is = network().layer(in).output_shape;
  const int64_t rows = Rows(is, config().batch), features = is.dims.back(),
                experts = layer.router.experts;
  const size_t kernel = static_cast<size_t>(ParamId(l, "kernel"));
  Allocate(logit_grad_[static_cast<size_t>(l)], rows * experts);
  // P (rows x experts) = softmax(X W^T) per row; in bf16 the logits are
  // rounded first (the oneDNN backend stores them).
  CopyKernelToStorage(l, kernel);
  Add(Phase::kForward, l, Pass::kForward, [=] {
    MapMat p(act(l).data(), rows, experts);
    p.noalias() = ConstMapMat(act(in).data(), rows, features) *
                  ConstMapMat(Kernel(kernel), experts, features).transpose();
    RoundToStorage(act(l));
    for (int64_t r = 0; r < rows; ++r) {
      const S top = p.row(r).maxCoeff();
      double z = 0;
      for (int64_t e = 0; e < experts; ++e) z += std::exp(static_cast<double>(p(r, e) - top));
      for (int64_t e = 0; e < experts; ++e) {
        p(r, e) = static_cast<S>(std::exp(static_cast<double>(p(r, e) - top)) / z);
      }
    }
  });
  backward_[static_cast<size_t>(l)] = [=] {
    // g = p*(dy - sum(dy*p)) (stored in bf16, as the oneDNN backend does),
    // then dW = g^T X and dx += g W.
    Add(Phase::kBackward, l, Pass::kBackwardWeights, [=] {
      const ConstMapMat p(act(l).data(), rows, experts), dy(diff(l).data(), rows, experts);
      Vec& gv = logit_grad_[static_cast<size_t>(l)];
      MapMat g(gv.data(), rows, experts);
      for (int64_t r = 0; r < rows; ++r) {
        double dot = 0;
        for (int64_t e = 0; e < experts; ++e) dot += dy(r, e) * p(r, e);
        for (int64_t e = 0; e < experts; ++e) g(r, e) = static_cast<S>(p(r, e) * (dy(r, e) - dot));
      }
      RoundToStorage(gv);
      MapMat(grad_[kernel].data(), experts, features).noalias() =
          g.transpose() * ConstMapMat(act(in).data(), rows, features);
    });
    if (!GradNeeded(in)) return;
    Add(Phase::kBackward, l, Pass::kBackwardData, [=] {
      MapMat(diff(in).data(), rows, features).noalias() +=
          ConstMapMat(logit_grad_[static_cast<size_t>(l)].data(), rows, experts) *
          ConstMapMat(Kernel(kernel), experts, features);
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
  CheckInput(network(), config().batch, values, labels);
  std::copy(values.begin(), values.end(), act_[0].begin());
  if (!token_input_) RoundToStorage(act_[0]);
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
StepExecutor::GradientStorage EigenExecutor<S>::MutableGrad(size_t i) {
  FITSPEED_CHECK(params().at(i).trainable, "only trainable parameters have gradients");
  GradientStorage g;
  if constexpr (std::is_same_v<S, double>) {
    g.f64 = grad_[i].data();
  } else {
    g.f32 = grad_[i].data();
  }
  g.elements = static_cast<int64_t>(grad_[i].size());
  return g;
}

template <typename S>
std::vector<double> EigenExecutor<S>::Output(int layer) const {
  FITSPEED_CHECK(layer >= 0 && layer < network().size() && !IsLoss(network().layer(layer)),
                 "no output to read for this layer");
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
