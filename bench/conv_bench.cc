// A ResNet-style FP32 convolution (N=32, 64->64 channels, 32x32, 3x3, stride 1,
// padding 1, no bias) forward, backward-data and backward-weights:
//  - Fitspeed*: as fitspeed's oneDNN executor runs it inside a training step
//    (the layer's time by pass, reorders it needs included);
//  - Bare*: the oneDNN primitive alone, created with `any` layouts and run on
//    filled buffers;
// each with its GFLOPS and its fraction of the measured FP32 FMA peak.
// Threads: OMP_NUM_THREADS (default: every CPU). See bench/TIMING.md.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "fitspeed/model/network.h"
#include "fitspeed/timing/host.h"
#include "timing/executor.h"

namespace {

constexpr int64_t kN = 32, kC = 64, kK = 64, kH = 32, kW = 32;
// 2 FLOPs per multiply-add: 2*N*K*C*R*S*P*Q = 2.416e9 per pass.
constexpr double kFlops = 2.0 * kN * kK * kC * 3 * 3 * kH * kW;

double PeakFlops() {
  static const double peak = fitspeed::MeasureFmaPeakGflops(omp_get_max_threads(), 0.2) * 1e9;
  return peak;
}

void SetCounters(benchmark::State& state) {
  state.counters["GFLOPS"] =
      benchmark::Counter(kFlops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_%"] =
      benchmark::Counter(kFlops / PeakFlops() * 100, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = omp_get_max_threads();
}

// input 64x32x32 -> 1x1 conv (so that the measured layer's input needs its
// gradient) -> the measured 3x3 conv -> global average pool -> dense 10 -> loss.
fitspeed::Network ConvNetwork() {
  fitspeed::Network net("conv-bench", fitspeed::Shape::Chw(kC, kH, kW));
  fitspeed::Conv2dAttrs pre;
  pre.out_channels = kC;
  pre.window = fitspeed::MakeWindow(1);
  pre.bias = false;
  fitspeed::Conv2dAttrs conv;
  conv.out_channels = kK;
  conv.window = fitspeed::MakeWindow(3, 1, 1);
  conv.bias = false;
  const std::string x = net.Conv2d(net.Conv2d("input", pre, "pre"), conv, "conv");
  fitspeed::DenseAttrs dense;
  dense.units = 10;
  net.SoftmaxCrossEntropy(net.Dense(net.GlobalAvgPool(x, "gap"), dense, "fc"), "loss");
  net.Finalize();
  return net;
}

void FitspeedConv(benchmark::State& state, fitspeed::Pass pass) {
  const fitspeed::Network net = ConvNetwork();
  fitspeed::timing::StepConfig config;
  config.batch = kN;
  auto step = fitspeed::timing::MakeOnednnExecutor(net, config);
  const size_t layer = static_cast<size_t>(net.LayerId("conv"));
  for (int i = 0; i < 2; ++i) step->Step();  // warm-up
  for (auto _ : state) {
    step->ResetTimes();
    step->Step();
    state.SetIterationTime(step->times()[layer][fitspeed::timing::PassIndex(pass)]);
  }
  state.SetLabel(step->implementations()[layer][fitspeed::timing::PassIndex(pass)]);
  SetCounters(state);
}

void BM_FitspeedConvForward(benchmark::State& s) { FitspeedConv(s, fitspeed::Pass::kForward); }
void BM_FitspeedConvBackwardData(benchmark::State& s) {
  FitspeedConv(s, fitspeed::Pass::kBackwardData);
}
void BM_FitspeedConvBackwardWeights(benchmark::State& s) {
  FitspeedConv(s, fitspeed::Pass::kBackwardWeights);
}

using dnnl::memory;

memory Filled(const memory::desc& desc, const dnnl::engine& engine, std::mt19937& gen) {
  memory m(desc, engine);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < desc.get_size() / sizeof(float); ++i) p[i] = normal(gen);
  return m;
}

// The bare primitives, as oneDNN's own examples create them
// (examples/primitives/convolution.cpp), every buffer filled before timing.
struct BareConv {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  memory::dims src{kN, kC, kH, kW}, wei{kK, kC, 3, 3}, dst{kN, kK, kH, kW};
  memory::dims strides{1, 1}, pad{1, 1};
  memory::desc any_src{src, memory::data_type::f32, memory::format_tag::any};
  memory::desc any_wei{wei, memory::data_type::f32, memory::format_tag::any};
  memory::desc any_dst{dst, memory::data_type::f32, memory::format_tag::any};
  dnnl::convolution_forward::primitive_desc fwd{
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      dnnl::algorithm::convolution_direct, any_src, any_wei,
                                      any_dst, strides, pad, pad),
      engine};
};

void Run(benchmark::State& state, dnnl::primitive p, std::unordered_map<int, memory> args,
         dnnl::stream& stream, const char* impl) {
  for (int i = 0; i < 2; ++i) p.execute(stream, args);
  stream.wait();
  for (auto _ : state) {
    p.execute(stream, args);
    stream.wait();
  }
  state.SetLabel(impl);
  SetCounters(state);
}

void BM_BareConvForward(benchmark::State& state) {
  BareConv c;
  std::mt19937 gen(1);
  Run(state, dnnl::convolution_forward(c.fwd),
      {{DNNL_ARG_SRC, Filled(c.fwd.src_desc(), c.engine, gen)},
       {DNNL_ARG_WEIGHTS, Filled(c.fwd.weights_desc(), c.engine, gen)},
       {DNNL_ARG_DST, Filled(c.fwd.dst_desc(), c.engine, gen)}},
      c.stream, c.fwd.impl_info_str());
}

void BM_BareConvBackwardData(benchmark::State& state) {
  BareConv c;
  dnnl::convolution_backward_data::primitive_desc pd(
      dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, c.any_src,
                                            c.any_wei, c.any_dst, c.strides, c.pad, c.pad),
      c.engine, c.fwd);
  std::mt19937 gen(2);
  Run(state, dnnl::convolution_backward_data(pd),
      {{DNNL_ARG_DIFF_DST, Filled(pd.diff_dst_desc(), c.engine, gen)},
       {DNNL_ARG_WEIGHTS, Filled(pd.weights_desc(), c.engine, gen)},
       {DNNL_ARG_DIFF_SRC, Filled(pd.diff_src_desc(), c.engine, gen)}},
      c.stream, pd.impl_info_str());
}

void BM_BareConvBackwardWeights(benchmark::State& state) {
  BareConv c;
  dnnl::convolution_backward_weights::primitive_desc pd(
      dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, c.any_src,
                                               c.any_wei, c.any_dst, c.strides, c.pad, c.pad),
      c.engine, c.fwd);
  std::mt19937 gen(3);
  Run(state, dnnl::convolution_backward_weights(pd),
      {{DNNL_ARG_SRC, Filled(pd.src_desc(), c.engine, gen)},
       {DNNL_ARG_DIFF_DST, Filled(pd.diff_dst_desc(), c.engine, gen)},
       {DNNL_ARG_DIFF_WEIGHTS, Filled(pd.diff_weights_desc(), c.engine, gen)}},
      c.stream, pd.impl_info_str());
}

void BM_FmaPeak(benchmark::State& state) {
  for (auto _ : state) {
    state.counters["GFLOPS"] = fitspeed::MeasureFmaPeakGflops(omp_get_max_threads(), 0.05);
  }
  state.counters["threads"] = omp_get_max_threads();
}

}  // namespace

BENCHMARK(BM_FmaPeak)->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FitspeedConvForward)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BareConvForward)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FitspeedConvBackwardData)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BareConvBackwardData)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FitspeedConvBackwardWeights)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BareConvBackwardWeights)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
