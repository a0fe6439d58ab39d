// `fitspeed models [NAME] [--output table|csv|json]`: the model zoo with
// parameter counts and FLOPs per sample, or one network layer by layer.
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/model/report.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed::cli {

namespace {

struct ModelsOptions {
  std::string name;  // a zoo name or a network JSON file; empty lists the zoo
  std::string output = "table";
  std::string optimizer = "sgd-momentum";
  int64_t seq_len = 0;  // 0: each model's default
};

int RunModels(const ModelsOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  const Optimizer optimizer = ParseOptimizer(options.optimizer);
  ZooOptions zoo;
  zoo.seq_len = options.seq_len;
  if (!options.name.empty()) {
    WriteModelLayers(std::cout, LoadNetwork(options.name, zoo), format, optimizer);
    return 0;
  }
  if (options.seq_len != 0) throw UsageError("--seq-len needs a model NAME");
  std::vector<ModelSummary> models;
  for (const ZooEntry& entry : ZooEntries()) {
    models.push_back(Summarize(ZooNetwork(entry.name), optimizer));
  }
  WriteModels(std::cout, models, format);
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
      "keeps per sample (FP32); with NAME, that network layer by layer");
  command->add_option("name", options->name,
                      "A zoo model (see the list) or a network JSON file (docs/models.md)");
  AddOutputOption(*command, options->output);
  command
      ->add_option("--optimizer", options->optimizer,
                   "Optimizer of the update pass: sgd, sgd-momentum, adam or rmsprop")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "sgd-momentum", "adam", "rmsprop"}));
  command->add_option("--seq-len", options->seq_len,
                      "Tokens per sequence of a sequence model (bert-*, gpt2*, tinyllama-*); "
                      "default: the model's own (the zoo list shows it)");
  command->callback([options, &exit_code] { exit_code = RunModels(*options); });
}

}  // namespace fitspeed::cli
