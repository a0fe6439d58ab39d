// `fitspeed models [NAME] [--output table|csv|json]`: the model zoo with
// parameter counts and FLOPs per sample, or one network layer by layer.
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/model/report.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed::cli {

namespace {

struct ModelsOptions {
  std::string name;  // a zoo name or a network JSON file; empty lists the zoo
  std::string output = "table";
  std::string optimizer = "sgd-momentum";
};

int RunModels(const ModelsOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  const Optimizer optimizer = ParseOptimizer(options.optimizer);
  if (!options.name.empty()) {
    WriteModelLayers(std::cout, LoadNetwork(options.name), format, optimizer);
    return 0;
  }
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
      "List the model zoo with parameters (total and trainable, Keras convention) and FLOPs "
      "per sample forward and per training step; with NAME, that network layer by layer");
  command->add_option("name", options->name,
                      "A zoo model (see the list) or a network JSON file (docs/models.md)");
  AddOutputOption(*command, options->output);
  command
      ->add_option("--optimizer", options->optimizer,
                   "Optimizer of the update pass: sgd, sgd-momentum, adam or rmsprop")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "sgd-momentum", "adam"}));
  command->callback([options, &exit_code] { exit_code = RunModels(*options); });
}

}  // namespace fitspeed::cli
