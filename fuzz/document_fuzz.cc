// libFuzzer target for the documents fitspeed reads besides training logs
// (FITSPEED_FUZZ_DOCUMENT): nccl-tests / osu_allreduce logs (linkbench
// --from), interval tables (sweep --intervals), links files (--links) and fit
// JSON with a model's errors (project --fit), and kernel and all-reduce tables
// (validate --kernels; read from a file, so the input is written to one) and framework
// profiles (data/frameworks.json), and Hugging Face config.json files
// (fitspeed models CONFIG.json; the parsed shape is then counted), and the
// publishers file (validate mlperf --publishers), a config.json read from a
// file as `fitspeed models PATH` reads it (configfile), and the text of
// `plan --fix` (planfix). Any input may be rejected with a
// fitspeed::Error; anything else (a crash, another exception, a sanitizer
// report) is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/frameworks.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/evidence/interval_table.h"
#include "fitspeed/evidence/kernels.h"
#include "fitspeed/evidence/mlperf.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/llm/transformer.h"
#include "fitspeed/project/config.h"
#include "fitspeed/project/link_logs.h"

#define FITSPEED_FUZZ_LINKLOG 1
#define FITSPEED_FUZZ_INTERVALS 2
#define FITSPEED_FUZZ_LINKS 3
#define FITSPEED_FUZZ_FITJSON 4
#define FITSPEED_FUZZ_KERNELTABLE 5
#define FITSPEED_FUZZ_FRAMEWORKS 6
#define FITSPEED_FUZZ_HFCONFIG 7
#define FITSPEED_FUZZ_PUBLISHERS 8
#define FITSPEED_FUZZ_CONFIGFILE 9
#define FITSPEED_FUZZ_PLANFIX 10

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
#if FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_LINKLOG
    (void)fitspeed::ParseLinkLog(text, "fuzz-input");
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_INTERVALS
    const fitspeed::IntervalTable table = fitspeed::ParseIntervalTable(text, "fuzz-input");
    (void)table.For("gpu/fp32", 0.8);
    (void)fitspeed::LeaveOneSourceOutCoverage(table, 0.8);
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_LINKS
    (void)fitspeed::ParseLinksJson(text, "fuzz-input");
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_FITJSON
    (void)fitspeed::ConfigurationsFromFitJson(text, "fuzz-input");
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_KERNELTABLE
    const std::string path = "/tmp/fitspeed-fuzz-kernels-" + std::to_string(getpid()) + ".csv";
    std::ofstream(path, std::ios::binary) << text;
    // The same bytes as an all-reduce table (its own columns; either reader
    // may refuse them).
    try {
      (void)fitspeed::CheckLinksOnAllReduce(fitspeed::ReadAllReduceTable(path));
    } catch (const fitspeed::Error&) {
    }
    const std::vector<fitspeed::KernelMeasurement> kernels = fitspeed::ReadKernelTable(path);
    fitspeed::KernelGpu gpu = fitspeed::KernelGpus().front();
    gpu.name = kernels.front().gpu;
    (void)fitspeed::FitKernelCurves(kernels, {gpu});
    (void)fitspeed::CheckCatalogOnKernels(kernels, "fuzz-input", 0);
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_FRAMEWORKS
    (void)fitspeed::ParseFrameworkProfiles(text, "fuzz-input");
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_HFCONFIG
    // A parsed shape passed ValidateTransformer: counting and FLOPs must not
    // throw (nor overflow, which UBSan reports).
    const fitspeed::TransformerConfig model = fitspeed::ParseHfConfig(text, "fuzz-input");
    (void)fitspeed::CountParameters(model);
    (void)fitspeed::ForwardFlopsPerToken(model, model.max_positions);
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_PUBLISHERS
    const fitspeed::PublisherTable table = fitspeed::ParsePublishers(text, "fuzz-input");
    (void)table.OfSubmitter("NVIDIA");
    (void)table.OfCaseFile("/a/b.csv");
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_CONFIGFILE
    // LoadTransformer's path: the file read (bounded, regular files only),
    // then parsed and validated; the shape is then counted.
    const std::string path = "/tmp/fitspeed-fuzz-config-" + std::to_string(getpid()) + ".json";
    std::ofstream(path, std::ios::binary) << text;
    const fitspeed::TransformerConfig model = fitspeed::LoadTransformer(path);
    (void)fitspeed::CountParameters(model);
#elif FITSPEED_FUZZ_DOCUMENT == FITSPEED_FUZZ_PLANFIX
    fitspeed::LlmPlanOptions options;
    try {
      fitspeed::ApplyLlmPlanFix(text, options);
    } catch (const fitspeed::Error&) {
    }
    // The same text as a pipeline layout (--pipeline-layout) of an 8-layer
    // model with one multi-token prediction module on 2 x 2 stages: a layout
    // that parses must parse to the same stages written short.
    fitspeed::TransformerConfig model =
        fitspeed::LoadTransformer("transformer:layers=8,hidden=64,heads=4,vocab=100");
    model.mtp_layers = 1;
    const auto chunks = fitspeed::ParsePipelineLayout(model, 2, 2, text);
    const auto again =
        fitspeed::ParsePipelineLayout(model, 2, 2, fitspeed::CompactPipelineLayout(text));
    if (again.size() != chunks.size()) __builtin_trap();
    for (size_t i = 0; i < chunks.size(); ++i) {
      if (again[i].layers != chunks[i].layers || again[i].mtp != chunks[i].mtp ||
          again[i].embedding != chunks[i].embedding || again[i].loss != chunks[i].loss)
        __builtin_trap();
    }
#else
#error "FITSPEED_FUZZ_DOCUMENT names no document"
#endif
  } catch (const fitspeed::Error&) {
  }
  return 0;
}
