// Whole training steps (forward, backward, SGD-momentum update) of zoo
// networks on fitspeed's oneDNN executor, FP32 and BF16: the BF16/FP32 step
// time ratio is this CPU's "tensor core" speed-up (AMX where present). BF16 is
// skipped, with the reason, on CPUs where oneDNN has no BF16 kernels.
// Arguments: batch size. Threads: OMP_NUM_THREADS. See bench/TIMING.md.
#include <benchmark/benchmark.h>

#include <string>

#include "fitspeed/model/network_cost.h"
#include "fitspeed/model/zoo.h"
#include "timing/executor.h"

namespace {

void Step(benchmark::State& state, const std::string& model, fitspeed::Precision precision) {
  if (precision == fitspeed::Precision::kMixed && !fitspeed::timing::OnednnBf16Supported()) {
    state.SkipWithError(
        ("no oneDNN BF16 kernels on this CPU (ISA " + fitspeed::timing::OnednnIsa() + ")").c_str());
    return;
  }
  const fitspeed::Network net = fitspeed::ZooNetwork(model);
  fitspeed::timing::StepConfig config;
  config.batch = state.range(0);
  config.precision = precision;
  auto step = fitspeed::timing::MakeOnednnExecutor(net, config);
  for (int i = 0; i < 2; ++i) step->Step();  // warm-up
  for (auto _ : state) step->Step();
  const double flops = fitspeed::CountCost(net).StepFlops(static_cast<double>(config.batch));
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(config.batch),
                                                   benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOPS"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Resnet18CifarFp32(benchmark::State& s) {
  Step(s, "resnet18-cifar", fitspeed::Precision::kFp32);
}
void BM_Resnet18CifarBf16(benchmark::State& s) {
  Step(s, "resnet18-cifar", fitspeed::Precision::kMixed);
}
void BM_CnnCifarSmallFp32(benchmark::State& s) {
  Step(s, "cnn-cifar-small", fitspeed::Precision::kFp32);
}
void BM_MlpMnistFp32(benchmark::State& s) { Step(s, "mlp-mnist", fitspeed::Precision::kFp32); }

}  // namespace

BENCHMARK(BM_Resnet18CifarFp32)->Arg(32)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Resnet18CifarBf16)->Arg(32)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CnnCifarSmallFp32)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MlpMnistFp32)->Arg(256)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
