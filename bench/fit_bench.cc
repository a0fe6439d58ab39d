// What this measures: the wall time of one FitGroup() call on 10 throughput
// samples (batches 16..8192, the hyperbolic law with 1-3% fixed noise), with the
// default objective (relative-time) and squared loss: sample reduction, the
// closed-form start, the Ceres solve, the Gauss-Newton refinement, covariance,
// confidence intervals, the trend tests and the report's fields.
//   BM_FitGroup10/loo:0  the fit alone (FitOptions::leave_one_out = false);
//   BM_FitGroup10/loo:1  the fit plus leave-one-out (10 extra solves, the default).
// Run: fit_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <vector>

#include "fitspeed/fit/fit.h"

namespace {

std::vector<fitspeed::Sample> TenSamples() {
  // v0 = 1500 samples/s, t = 0.8 s, times (1 + noise).
  const double noise[] = {0.013,  -0.021, 0.008,  0.017, -0.012,
                          -0.004, 0.022,  -0.015, 0.006, -0.009};
  std::vector<fitspeed::Sample> samples;
  double batch = 16;
  for (double n : noise) {
    fitspeed::Sample s;
    s.source = "bench";
    s.batch = batch;
    s.throughput_sps = batch / (batch / 1500 + 0.8) * (1 + n);
    samples.push_back(s);
    batch *= 2;
  }
  return samples;
}

void BM_FitGroup10(benchmark::State& state) {
  const std::vector<fitspeed::Sample> samples = TenSamples();
  fitspeed::FitOptions options;
  options.leave_one_out = state.range(0) != 0;
  for (auto _ : state) {
    fitspeed::GroupFit fit = fitspeed::FitGroup(samples, options);
    benchmark::DoNotOptimize(fit);
    if (!fit.converged) state.SkipWithError("fit did not converge");
  }
}
BENCHMARK(BM_FitGroup10)->ArgName("loo")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
