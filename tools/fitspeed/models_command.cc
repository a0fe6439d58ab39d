// `fitspeed models [NAME] [--llm] [--output table|csv|json]`: the model zoo
// with parameter counts and FLOPs per sample and the built-in transformer
// configurations (docs/llm.md), or one network layer by layer, or one
// transformer's shape, parameters and FLOPs per token.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command.h"
#include "core/input_file.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/llm/transformer.h"
#include "fitspeed/model/report.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed::cli {

namespace {

struct ModelsOptions {
  std::string name;  // a zoo name or a network JSON file; empty lists the zoo
  std::string output = "table";
  std::string optimizer = "sgd-momentum";
  int64_t seq_len = 0;  // 0: each model's default
  bool llm = false;     // the transformer configurations only, or NAME as one
};

using nlohmann::ordered_json;

const char* PositionsNameLlm(PositionEncoding positions) {
  switch (positions) {
    case PositionEncoding::kLearned:
      return "learned";
    case PositionEncoding::kRope:
      return "rope";
    case PositionEncoding::kAlibi:
      return "alibi";
  }
  return "?";
}

// One transformer's shape and parameter counts (the "llm_models" entries of
// fitspeed.models/1 and the "model" of fitspeed.llm_model/1).
ordered_json TransformerJsonLlm(const TransformerConfig& m) {
  const TransformerParameters p = CountParameters(m);
  ordered_json j;
  j["name"] = m.name;
  j["architecture"] = m.architecture;
  j["source"] = m.source;
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["ffn_hidden"] = m.ffn_hidden;
  j["feed_forward"] = m.feed_forward == FeedForwardKind::kGated ? "gated" : "plain";
  j["vocab"] = m.vocab;
  j["experts"] = m.experts;
  j["top_k"] = m.top_k;
  j["positions"] = PositionsNameLlm(m.positions);
  j["max_positions"] = m.max_positions;
  j["norm"] = m.norm == NormKind::kRmsNorm ? "rms" : "layer";
  j["tied_embeddings"] = m.tied_embeddings;
  j["causal"] = m.causal;
  j["dropout"] = m.dropout;
  // The layer kinds and the 2025 variants (docs/llm.md, "Models").
  int64_t moe_layers = 0, sliding_layers = 0;
  for (int64_t i = 0; i < m.layers; ++i) {
    const TransformerLayerKind kind = LayerKindAt(m, i);
    moe_layers += kind.moe ? 1 : 0;
    sliding_layers += kind.sliding ? 1 : 0;
  }
  j["moe_layers"] = moe_layers;
  j["dense_ffn_hidden"] = m.dense_ffn_hidden;
  j["shared_experts"] = m.shared_experts;
  j["sliding_layers"] = sliding_layers;
  j["sliding_window"] = m.sliding_window;
  j["qk_norm"] = m.qk_norm;
  j["attention_sinks"] = m.attention_sinks;
  j["sandwich_norms"] = m.sandwich_norms;
  j["attention_softcap"] = m.attention_softcap;
  j["final_softcap"] = m.final_softcap;
  if (m.latent.kv_rank > 0) {
    j["latent"] = {{"q_rank", m.latent.q_rank},
                   {"kv_rank", m.latent.kv_rank},
                   {"rope_dim", m.latent.rope_dim},
                   {"nope_dim", m.latent.nope_dim},
                   {"v_dim", m.latent.v_dim}};
  }
  j["mtp_layers"] = m.mtp_layers;
  j["params"] = p.total;
  j["active_params"] = p.active_per_token;
  j["parameters"] = {{"embedding", p.embedding},
                     {"per_layer", p.per_layer},
                     {"attention_per_layer", p.attention_per_layer},
                     {"feed_forward_per_layer", p.feed_forward_per_layer},
                     {"norms_per_layer", p.norms_per_layer},
                     {"layers", p.layers},
                     {"final_norm", p.final_norm},
                     {"output", p.output},
                     {"mtp", p.mtp}};
  return j;
}

std::vector<TransformerConfig> BuiltinTransformersLlm() {
  std::vector<TransformerConfig> models;
  for (const std::string& name : BuiltinTransformerNames()) models.push_back(LoadTransformer(name));
  return models;
}

TextTable TransformerTableLlm(const std::vector<TransformerConfig>& models) {
  TextTable table({"llm_model", "architecture", "layers", "hidden", "heads/kv", "ffn", "vocab",
                   "experts/top_k", "positions", "params", "active_params", "moe/sliding layers",
                   "window", "latent q/kv", "mtp"});
  for (const TransformerConfig& m : models) {
    const TransformerParameters p = CountParameters(m);
    int64_t moe_layers = 0, sliding_layers = 0;
    for (int64_t i = 0; i < m.layers; ++i) {
      moe_layers += LayerKindAt(m, i).moe ? 1 : 0;
      sliding_layers += LayerKindAt(m, i).sliding ? 1 : 0;
    }
    table.AddRow(
        {m.name, m.architecture, std::to_string(m.layers), std::to_string(m.hidden),
         fmt::format("{}/{}", m.heads, m.kv_heads),
         fmt::format("{}{}", m.ffn_hidden,
                     m.feed_forward == FeedForwardKind::kGated ? " gated" : ""),
         std::to_string(m.vocab), m.experts > 0 ? fmt::format("{}/{}", m.experts, m.top_k) : "-",
         fmt::format("{} {}", PositionsNameLlm(m.positions), m.max_positions),
         std::to_string(p.total), std::to_string(p.active_per_token),
         fmt::format("{}/{}", moe_layers, sliding_layers),
         m.sliding_window > 0 ? std::to_string(m.sliding_window) : "-",
         m.latent.kv_rank > 0 ? fmt::format("{}/{}", m.latent.q_rank, m.latent.kv_rank) : "-",
         m.mtp_layers > 0 ? std::to_string(m.mtp_layers) : "-"});
  }
  return table;
}

// Whether NAME is a transformer (and not a zoo network): --llm, a short form,
// a built-in transformer the zoo lacks, or a file whose JSON has a
// "model_type" (a Hugging Face config.json, or a folder holding one).
bool IsTransformerLlm(const std::string& name, bool llm) {
  if (llm || name.rfind("transformer:", 0) == 0) return true;
  for (const ZooEntry& entry : ZooEntries()) {
    if (entry.name == name) return false;
  }
  const std::vector<std::string> builtins = BuiltinTransformerNames();
  if (std::find(builtins.begin(), builtins.end(), name) != builtins.end()) return true;
  std::error_code error;
  std::string path = name;
  if (std::filesystem::is_directory(path, error)) return true;
  if (!std::filesystem::is_regular_file(path, error)) return false;
  const nlohmann::json doc =
      nlohmann::json::parse(ReadInputFile(path, "the model file"), nullptr, false);
  return doc.is_object() && doc.contains("model_type");
}

void WriteTransformerLlm(std::ostream& out, const TransformerConfig& m, int64_t seq_len,
                         OutputFormat format) {
  if (seq_len == 0) seq_len = m.max_positions > 0 ? m.max_positions : 2048;
  const double forward = ForwardFlopsPerToken(m, seq_len);
  ordered_json doc;
  doc["schema"] = "fitspeed.llm_model/1";
  doc["model"] = TransformerJsonLlm(m);
  doc["seq_len"] = seq_len;
  doc["forward_flops_per_token"] = forward;
  doc["train_flops_per_token"] = 3 * forward;
  if (format == OutputFormat::kJson) {
    out << doc.dump(2) << "\n";
    return;
  }
  TextTable table({"quantity", "value"});
  for (const char* key : {"name",
                          "architecture",
                          "source",
                          "layers",
                          "hidden",
                          "heads",
                          "kv_heads",
                          "head_dim",
                          "ffn_hidden",
                          "feed_forward",
                          "vocab",
                          "experts",
                          "top_k",
                          "positions",
                          "max_positions",
                          "norm",
                          "tied_embeddings",
                          "causal",
                          "dropout",
                          "moe_layers",
                          "dense_ffn_hidden",
                          "shared_experts",
                          "sliding_layers",
                          "sliding_window",
                          "qk_norm",
                          "attention_sinks",
                          "sandwich_norms",
                          "attention_softcap",
                          "final_softcap",
                          "mtp_layers"}) {
    const ordered_json& v = doc["model"][key];
    table.AddRow({key, v.is_string() ? v.get<std::string>() : v.dump()});
  }
  if (doc["model"].contains("latent")) {
    for (const auto& item : doc["model"]["latent"].items()) {
      table.AddRow({"latent." + item.key(), item.value().dump()});
    }
  }
  for (const auto& item : doc["model"]["parameters"].items()) {
    table.AddRow({"params." + item.key(), item.value().dump()});
  }
  table.AddRow({"params", doc["model"]["params"].dump()});
  table.AddRow({"active_params", doc["model"]["active_params"].dump()});
  table.AddRow({"seq_len", std::to_string(seq_len)});
  table.AddRow({"forward_GFLOP/token", FormatSig(forward / 1e9, 6)});
  table.AddRow({"train_GFLOP/token", FormatSig(3 * forward / 1e9, 6)});
  out << (format == OutputFormat::kCsv ? table.RenderCsv() : table.Render());
}

int RunModels(const ModelsOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  const Optimizer optimizer = ParseOptimizer(options.optimizer);
  ZooOptions zoo;
  zoo.seq_len = options.seq_len;
  if (!options.name.empty()) {
    if (IsTransformerLlm(options.name, options.llm)) {
      WriteTransformerLlm(std::cout, LoadTransformer(options.name), options.seq_len, format);
    } else {
      WriteModelLayers(std::cout, LoadNetwork(options.name, zoo), format, optimizer);
    }
    return 0;
  }
  if (options.seq_len != 0) throw UsageError("--seq-len needs a model NAME");
  const std::vector<TransformerConfig> transformers = BuiltinTransformersLlm();
  if (options.llm) {
    if (format == OutputFormat::kJson) {
      ordered_json doc;
      doc["schema"] = "fitspeed.models/1";
      doc["llm_models"] = ordered_json::array();
      for (const TransformerConfig& m : transformers) {
        doc["llm_models"].push_back(TransformerJsonLlm(m));
      }
      std::cout << doc.dump(2) << "\n";
    } else {
      const TextTable table = TransformerTableLlm(transformers);
      std::cout << (format == OutputFormat::kCsv ? table.RenderCsv() : table.Render());
    }
    return 0;
  }
  std::vector<ModelSummary> models;
  for (const ZooEntry& entry : ZooEntries()) {
    models.push_back(Summarize(ZooNetwork(entry.name), optimizer));
  }
  if (format == OutputFormat::kJson) {
    // The zoo's document with the transformer configurations added.
    std::ostringstream zoo_json;
    WriteModels(zoo_json, models, format);
    ordered_json doc = ordered_json::parse(zoo_json.str());
    doc["llm_models"] = ordered_json::array();
    for (const TransformerConfig& m : transformers) {
      doc["llm_models"].push_back(TransformerJsonLlm(m));
    }
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  WriteModels(std::cout, models, format);
  // CSV stays one table (the zoo's, as before); --llm gives the transformers'.
  if (format == OutputFormat::kTable) {
    std::cout << "\nTransformer configurations (docs/llm.md; fitspeed models NAME [--llm]):\n"
              << TransformerTableLlm(transformers).Render();
  }
  return 0;
}

}  // namespace

void SetupModelsCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ModelsOptions>();
  CLI::App* command = app.add_subcommand(
      "models",
      "List the model zoo with parameters (total and trainable, Keras convention), FLOPs per "
      "sample forward and per training step (and per token for sequence models: a sample is "
      "one sequence), the optimizer's FLOPs per step and the activations the backward pass "
      "keeps per sample (FP32), then the built-in transformer configurations (layers, "
      "widths, experts, positions, parameters total and active per token; docs/llm.md); with "
      "NAME, that network layer by layer, or that transformer's shape, parameter breakdown "
      "and FLOPs per token forward and training (3x forward) at --seq-len");
  command->add_option("name", options->name,
                      "A zoo model or network JSON file (docs/models.md); or a transformer: a "
                      "built-in (the second list), a transformer:key=value,... short form or a "
                      "Hugging Face config.json (docs/llm.md)");
  command->add_flag("--llm", options->llm,
                    "List only the transformer configurations (the one CSV of them), or read "
                    "NAME as a transformer where a zoo model has its name (gpt2, gpt2-medium)");
  AddOutputOption(*command, options->output);
  command
      ->add_option("--optimizer", options->optimizer,
                   "Optimizer of the update pass: sgd, sgd-momentum, adam or rmsprop")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "sgd-momentum", "adam", "rmsprop"}));
  command->add_option("--seq-len", options->seq_len,
                      "Tokens per sequence of a sequence model (bert-*, gpt2*, tinyllama-*), "
                      "or of a transformer's FLOPs per token; default: the model's own (the zoo "
                      "list shows it; a transformer's max_positions)");
  command->callback([options, &exit_code] { exit_code = RunModels(*options); });
}

}  // namespace fitspeed::cli
