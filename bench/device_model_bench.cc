// The device step model (ModelStep, fitspeed/device/step_model.h): one modeled
// training step of a zoo network on a catalog GPU, what `sweep --device` runs
// per batch and `calibrate` and `validate` run per case and per solver
// iteration. ResNet-50 in mixed precision with and without the batch-norm
// fusion (ElementwiseFusion), and BERT-large at 512 tokens, whose layer norms
// and softmaxes take the normalization memory curve. Arguments: batch size.
// See bench/README.md.
#include <benchmark/benchmark.h>

#include <string>

#include "fitspeed/device/device.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace {

void Modeled(benchmark::State& state, const std::string& model, int64_t seq_len,
             fitspeed::ElementwiseFusion fusion) {
  const fitspeed::Network net = fitspeed::LoadNetwork(model, fitspeed::ZooOptions{seq_len});
  const fitspeed::Device device = fitspeed::LoadDevice("v100-sxm2");
  fitspeed::DeviceModelOptions options;
  options.precision = fitspeed::Precision::kMixed;
  options.layout = fitspeed::ActivationLayout::kNhwc;
  options.fusion = fusion;
  for (auto _ : state) {
    const fitspeed::ModeledStep step = fitspeed::ModelStep(net, device, state.range(0), options);
    benchmark::DoNotOptimize(step);
  }
  const double step_s = fitspeed::ModelStep(net, device, state.range(0), options).step_time_s;
  state.counters["layers"] = static_cast<double>(net.size());
  state.counters["modeled_step_ms"] = 1e3 * step_s;
}

void BM_Resnet50Mixed(benchmark::State& s) {
  Modeled(s, "resnet50", 0, fitspeed::ElementwiseFusion::kNone);
}
void BM_Resnet50MixedFused(benchmark::State& s) {
  Modeled(s, "resnet50", 0, fitspeed::ElementwiseFusion::kBatchNormReluAdd);
}
void BM_BertLargeS512Mixed(benchmark::State& s) {
  Modeled(s, "bert-large", 512, fitspeed::ElementwiseFusion::kNone);
}

BENCHMARK(BM_Resnet50Mixed)->Arg(256);
BENCHMARK(BM_Resnet50MixedFused)->Arg(256);
BENCHMARK(BM_BertLargeS512Mixed)->Arg(8);

}  // namespace

BENCHMARK_MAIN();
