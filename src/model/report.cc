#include "fitspeed/model/report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/table.h"

namespace fitspeed {

namespace {

// Insertion-ordered, so that "schema" comes first and fields read in a sensible order.
using ordered_json = nlohmann::ordered_json;

constexpr const char* kSchemaReport = "fitspeed.models/1";

ordered_json SummaryJson(const ModelSummary& m) {
  ordered_json j;
  j["name"] = m.name;
  j["params"] = m.params;
  j["trainable_params"] = m.trainable_params;
  j["forward_flops_per_sample"] = m.forward_flops_per_sample;
  j["train_flops_per_sample"] = m.train_flops_per_sample;
  j["update_flops_per_step"] = m.update_flops_per_step;
  j["optimizer"] = OptimizerName(m.optimizer);
  j["activation_elements_per_sample"] = m.activation_elements_per_sample;
  j["saved_activation_bytes_per_sample"] = m.saved_activation_bytes_per_sample;
  if (m.tokens_per_sample > 0) {
    const double tokens = static_cast<double>(m.tokens_per_sample);
    j["tokens_per_sample"] = m.tokens_per_sample;
    j["forward_flops_per_token"] = m.forward_flops_per_sample / tokens;
    j["train_flops_per_token"] = m.train_flops_per_sample / tokens;
  } else {
    j["tokens_per_sample"] = nullptr;
    j["forward_flops_per_token"] = nullptr;
    j["train_flops_per_token"] = nullptr;
  }
  j["input"] = m.input_shape.dims;
  j["classes"] = m.classes;
  j["layer_count"] = m.layers;
  j["description"] = m.description;
  j["reference"] = m.reference;
  return j;
}

std::string Giga(double value) { return FormatSig(value / 1e9, 4); }
std::string Mega(double value) { return FormatSig(value / 1e6, 4); }

}  // namespace

ModelSummary Summarize(const Network& network, Optimizer optimizer) {
  const NetworkCost cost = CountCost(network, optimizer);
  ModelSummary m;
  m.name = network.name;
  m.description = network.description;
  m.reference = network.reference;
  m.input_shape = network.input_shape();
  m.classes = network.num_classes();
  m.layers = network.size() - 1;
  m.params = network.ParamCount();
  m.trainable_params = network.TrainableParamCount();
  m.forward_flops_per_sample = cost.ForwardFlopsPerSample();
  m.train_flops_per_sample = cost.TrainFlopsPerSample();
  m.update_flops_per_step = cost.UpdateFlopsPerStep();
  m.activation_elements_per_sample = cost.total.activation_elements;
  m.saved_activation_bytes_per_sample =
      EstimateTrainingMemory(network, 1, optimizer, 4, 4).activation_bytes;
  m.tokens_per_sample = network.TokensPerSample();
  m.optimizer = optimizer;
  return m;
}

void WriteModels(std::ostream& out, const std::vector<ModelSummary>& models, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    ordered_json doc;
    doc["schema"] = kSchemaReport;
    doc["models"] = ordered_json::array();
    for (const ModelSummary& m : models) doc["models"].push_back(SummaryJson(m));
    out << doc.dump(2) << "\n";
    return;
  }
  TextTable table({"model", "input", "classes", "params", "trainable", "fwd_GFLOP/sample",
                   "train_GFLOP/sample", "tokens", "train_MFLOP/token", "update_MFLOP/step",
                   "saved_MiB/sample", "description"});
  for (const ModelSummary& m : models) {
    const bool tokens = m.tokens_per_sample > 0;
    table.AddRow(
        {m.name, m.input_shape.ToString(), std::to_string(m.classes), std::to_string(m.params),
         std::to_string(m.trainable_params), Giga(m.forward_flops_per_sample),
         Giga(m.train_flops_per_sample), tokens ? std::to_string(m.tokens_per_sample) : "-",
         tokens ? Mega(m.train_flops_per_sample / static_cast<double>(m.tokens_per_sample)) : "-",
         Mega(m.update_flops_per_step),
         FormatSig(m.saved_activation_bytes_per_sample / 1048576.0, 4), m.description});
  }
  out << (format == OutputFormat::kCsv ? table.RenderCsv() : table.Render());
}

void WriteModelLayers(std::ostream& out, const Network& network, OutputFormat format,
                      Optimizer optimizer) {
  const NetworkCost cost = CountCost(network, optimizer);
  const ModelSummary summary = Summarize(network, optimizer);
  if (format == OutputFormat::kJson) {
    ordered_json entry = SummaryJson(summary);
    ordered_json layers = ordered_json::array();
    for (int id = 1; id < network.size(); ++id) {
      const Layer& layer = network.layer(id);
      const LayerCost& c = cost.layers[static_cast<size_t>(id)];
      ordered_json l;
      l["name"] = layer.name;
      l["kind"] = LayerKindName(layer.kind);
      l["inputs"] = layer.inputs;
      l["output"] = layer.output_shape.dims;
      l["params"] = c.params;
      l["trainable_params"] = c.trainable_params;
      l["forward_flops_per_sample"] = c.forward.flops.per_sample;
      l["backward_data_flops_per_sample"] = c.backward_data.flops.per_sample;
      l["backward_weights_flops_per_sample"] = c.backward_weights.flops.per_sample;
      l["update_flops_per_step"] = c.update.flops.per_step;
      l["activation_elements_per_sample"] = c.activation_elements;
      layers.push_back(std::move(l));
    }
    entry["layers"] = std::move(layers);
    ordered_json doc;
    doc["schema"] = kSchemaReport;
    doc["models"] = ordered_json::array({std::move(entry)});
    out << doc.dump(2) << "\n";
    return;
  }
  TextTable table({"layer", "kind", "inputs", "output", "params", "trainable", "fwd_MFLOP/sample",
                   "bwd_data_MFLOP/sample", "bwd_weights_MFLOP/sample", "activations/sample"});
  for (int id = 1; id < network.size(); ++id) {
    const Layer& layer = network.layer(id);
    const LayerCost& c = cost.layers[static_cast<size_t>(id)];
    table.AddRow({layer.name, LayerKindName(layer.kind),
                  fmt::format("{}", fmt::join(layer.inputs, " ")), layer.output_shape.ToString(),
                  std::to_string(c.params), std::to_string(c.trainable_params),
                  Mega(c.forward.flops.per_sample), Mega(c.backward_data.flops.per_sample),
                  Mega(c.backward_weights.flops.per_sample),
                  std::to_string(c.activation_elements)});
  }
  const LayerCost& t = cost.total;
  table.AddRow({"total", "", "", "", std::to_string(t.params), std::to_string(t.trainable_params),
                Mega(t.forward.flops.per_sample), Mega(t.backward_data.flops.per_sample),
                Mega(t.backward_weights.flops.per_sample), std::to_string(t.activation_elements)});
  if (format == OutputFormat::kCsv) {
    out << table.RenderCsv();
    return;
  }
  out << fmt::format("{}: {}\n{}\n", network.name, network.description, network.reference)
      << table.Render()
      << fmt::format("update ({}): {} MFLOP per step\n", OptimizerName(optimizer),
                     Mega(t.update.flops.per_step));
}

}  // namespace fitspeed
