// The LLM planner (PlanLlm, fitspeed/llm/planner.h): the exhaustive search of
// every split of GPT-3 175B on 4,096 devices (global batch 1,536 sequences of
// 2,048 tokens, as MLPerf's gpt3 runs), and of Llama-3-70B on 1,024 at
// 1,024 x 8,192, on the catalog's H100 (A100 where it lacks it). Counters:
// configurations modeled per second of one core (`configs_per_s`), the
// configurations per search, and the fitting ones. See bench/README.md.
#include <benchmark/benchmark.h>

#include <string>

#include "fitspeed/device/device.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/llm/transformer.h"

namespace {

void Plan(benchmark::State& state, const std::string& model, int devices, int64_t global_batch,
          int64_t seq_len) {
  const fitspeed::TransformerConfig m = fitspeed::LoadTransformer(model);
  const fitspeed::LlmCluster c = fitspeed::MakeCluster(fitspeed::LoadDevice("h100"), devices);
  fitspeed::LlmPlanOptions o;
  o.global_batch = global_batch;
  o.training.seq_len = seq_len;
  int64_t evaluated = 0, fitting = 0;
  for (auto _ : state) {
    const fitspeed::LlmPlan plan = fitspeed::PlanLlm(m, c, o);
    evaluated += plan.evaluated;
    fitting = plan.fitting;
    benchmark::DoNotOptimize(plan);
  }
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
  state.counters["configs"] =
      static_cast<double>(evaluated) / static_cast<double>(state.iterations());
  state.counters["fitting"] = static_cast<double>(fitting);
}

void Gpt3On4096(benchmark::State& state) { Plan(state, "gpt3-175b", 4096, 1536, 2048); }
void Llama70bOn1024(benchmark::State& state) { Plan(state, "llama-3-70b", 1024, 1024, 8192); }

BENCHMARK(Gpt3On4096)->Unit(benchmark::kMillisecond);
BENCHMARK(Llama70bOn1024)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
