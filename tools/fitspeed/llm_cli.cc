// Shared by the transformer paths of `fitspeed sweep` and `fitspeed plan` (llm_cli.h).
#include "llm_cli.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "fitspeed/core/error.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed::cli {

namespace {

bool InZooLlmCli(const std::string& name) {
  for (const ZooEntry& entry : ZooEntries()) {
    if (entry.name == name) return true;
  }
  return false;
}

}  // namespace

bool IsTransformerSpecLlmCli(const std::string& model) {
  if (model.rfind("transformer:", 0) == 0) return true;
  if (InZooLlmCli(model)) return false;
  const std::vector<std::string> builtins = BuiltinTransformerNames();
  if (std::find(builtins.begin(), builtins.end(), model) != builtins.end()) return true;
  std::error_code error;
  if (std::filesystem::is_directory(model, error)) {
    // Any config.json, so that LoadTransformer names the one it refuses.
    return std::filesystem::exists(std::filesystem::path(model) / "config.json", error);
  }
  if (!std::filesystem::is_regular_file(model, error)) return false;
  const nlohmann::json doc =
      nlohmann::json::parse(ReadInputFile(model, "the model file"), nullptr, false);
  return doc.is_object() && doc.contains("model_type");
}

TransformerConfig LoadTransformerLlmCli(const std::string& model, const std::string& why) {
  const std::vector<std::string> builtins = BuiltinTransformerNames();
  const bool builtin = std::find(builtins.begin(), builtins.end(), model) != builtins.end();
  if (InZooLlmCli(model) && !builtin) {
    throw UsageError(fmt::format(
        "{} models a transformer, but '{}' is a zoo network, not a transformer: give a built-in "
        "transformer ({}), transformer:layers=..,hidden=..,heads=..,vocab=.. or a config.json",
        why, model, fmt::join(builtins, ", ")));
  }
  return LoadTransformer(model);
}

LlmCluster MakeClusterLlmCli(const LlmCliOptions& o) {
  if (o.device.empty())
    throw UsageError("a transformer is modeled on a catalogued device: give --device");
  Device device = LoadDevice(o.device);
  if (!o.links.empty()) {
    const LinksFile links = ReadLinksJsonFile(o.links);
    ApplyLinks(device, links);
    for (const DeviceLink& l : links.links) {
      std::cerr << fmt::format(
          "fitspeed: the {} link of {} comes from {}: '{}', {:.4g} B/s, {:.4g} s\n", l.connects,
          device.name, o.links, l.name, l.bandwidth_bytes_per_s, l.latency_s);
    }
  }
  return MakeCluster(device, o.devices, o.devices_per_node);
}

void ApplyDropoutLlmCli(TransformerConfig& model, const std::string& dropout) {
  if (dropout.empty()) return;
  if (dropout != "on" && dropout != "off")
    throw UsageError(fmt::format("--dropout {}: expected on or off", dropout));
  model.dropout = dropout == "on";
}

LlmTraining MakeTrainingLlmCli(const LlmCliOptions& o) {
  LlmTraining t =
      MakeLlmTraining(o.seq_len, o.precision, o.lora_rank, o.flash_attention, o.gradient_bytes);
  t.fp8_weights = o.fp8_weights;
  t.lora_dropout = o.lora_dropout;
  t.activation_fp8_store = o.activation_fp8_store;
  return t;
}

}  // namespace fitspeed::cli
