// Dumps, as one JSON document on stdout, everything an independent framework
// needs to redo one training step of each timing-test network
// (tests/timing/test_network_builders.h) and compare gradients: the network
// (schema fitspeed.network/1), every parameter, the input batch and labels, and
// the loss, the gradient of every trainable parameter and every layer's output
// from the double Eigen reference, the oneDNN executor in FP32 and, where
// oneDNN has BF16 kernels on this CPU, in BF16 (else null). Batch 4, seed 1
// (or the first argument: bf16_gradients [seed]), the step configuration of
// AgreementConfig(4) of tests/timing/test_network_builders.h.
// bench/bf16_reference.py reads it; see bench/README.md, "BF16 against PyTorch
// autocast".
//
//   {"schema": "fitspeed.bf16_gradients/1", "batch": 4, "seed": 1,
//    "onednn": {"version": "2.6.3", "isa": "...", "bf16": true},
//    "networks": [{"name": "test-residual", "network": {...}, "input_shape": [3, 6, 6],
//      "input": [...], "labels": [...],
//      "params": [{"name": "c1/kernel", "shape": [8, 3, 3, 3], "trainable": true,
//                  "values": [...]}, ...],
//      "results": {"eigen_double": {"loss": 1.1, "grads": {"c1/kernel": [...], ...},
//                                   "outputs": {"c1": [...], ...}, "grads_no_reuse": {...}},
//                  "onednn_fp32": {...}, "onednn_bf16": null}}]}
//
// "grads" come from an executor with the default memory reuse (as the tests
// run it); "outputs" and "grads_no_reuse" from a second one without reuse, so
// that every layer's output can be read. Layouts are the executors' canonical
// ones (src/timing/executor.h): batch-major NCHW activations, OIHW conv
// kernels, {units, in_features} dense kernels.
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fitspeed/model/network.h"
#include "fitspeed/model/network_json.h"
#include "timing/executor.h"
#include "timing/test_network_builders.h"

namespace {

using fitspeed::Network;
using fitspeed::Precision;
using fitspeed::timing::StepConfig;
using fitspeed::timing::StepExecutor;
using nlohmann::json;

constexpr int64_t kBatch = 4;

// The tests' step (AgreementConfig, SGD with momentum) at this seed and precision.
StepConfig Config(uint64_t seed, Precision precision, bool reuse_memory) {
  StepConfig c = fitspeed::testing::AgreementConfig(kBatch);
  c.seed = seed;
  c.precision = precision;
  c.reuse_memory = reuse_memory;
  return c;
}

using MakeExecutor = std::unique_ptr<StepExecutor> (*)(const Network&, const StepConfig&);

json Grads(const StepExecutor& step) {
  json grads = json::object();
  for (size_t i = 0; i < step.params().size(); ++i) {
    if (step.params()[i].trainable) grads[step.params()[i].name] = step.Grad(i);
  }
  return grads;
}

// One backend's forward and backward pass of `net`.
json Run(const Network& net, uint64_t seed, MakeExecutor make, Precision precision) {
  json result;
  const std::unique_ptr<StepExecutor> step = make(net, Config(seed, precision, true));
  result["loss"] = step->Forward();
  step->Backward();
  result["grads"] = Grads(*step);

  const std::unique_ptr<StepExecutor> kept = make(net, Config(seed, precision, false));
  kept->Forward();
  json outputs = json::object();
  for (int l = 0; l + 1 < net.size(); ++l) outputs[net.layer(l).name] = kept->Output(l);
  result["outputs"] = outputs;
  kept->Backward();
  result["grads_no_reuse"] = Grads(*kept);
  return result;
}

json Dump(const Network& net, uint64_t seed) {
  namespace timing = fitspeed::timing;
  json doc;
  doc["name"] = net.name;
  doc["network"] = json::parse(fitspeed::NetworkToJson(net));
  doc["input_shape"] = net.input_shape().dims;
  doc["input"] = timing::InitialInput(net, kBatch, seed);
  doc["labels"] = timing::InitialLabels(net, kBatch, seed);

  // Values as the double reference holds them (InitialParam, unrounded).
  const std::unique_ptr<StepExecutor> reference =
      timing::MakeEigenExecutor<double>(net, Config(seed, Precision::kFp32, true));
  json params = json::array();
  for (size_t i = 0; i < reference->params().size(); ++i) {
    const timing::ParamRef& p = reference->params()[i];
    params.push_back({{"name", p.name},
                      {"shape", p.shape.dims},
                      {"trainable", p.trainable},
                      {"values", reference->Param(i)}});
  }
  doc["params"] = params;

  json& results = doc["results"];
  results["eigen_double"] = Run(net, seed, &timing::MakeEigenExecutor<double>, Precision::kFp32);
  results["onednn_fp32"] = Run(net, seed, &timing::MakeOnednnExecutor, Precision::kFp32);
  results["onednn_bf16"] = timing::OnednnBf16Supported()
                               ? Run(net, seed, &timing::MakeOnednnExecutor, Precision::kMixed)
                               : json(nullptr);
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    namespace timing = fitspeed::timing;
    const uint64_t seed = argc > 1 ? std::stoull(argv[1]) : 1;
    json doc;
    doc["schema"] = "fitspeed.bf16_gradients/1";
    doc["batch"] = kBatch;
    doc["seed"] = seed;
    doc["onednn"] = {{"version", timing::OnednnVersion()},
                     {"isa", timing::OnednnIsa()},
                     {"bf16", timing::OnednnBf16Supported()}};
    json& networks = doc["networks"];
    networks = json::array();
    for (const Network& net : fitspeed::testing::AllTestNetworks()) {
      networks.push_back(Dump(net, seed));
    }
    std::cout << doc.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "bf16_gradients: " << e.what() << "\n";
    return 70;
  }
  return 0;
}
