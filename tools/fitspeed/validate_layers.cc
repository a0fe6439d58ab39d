// `fitspeed validate layers`: the step model per layer, a BERT-large encoder
// layer against NeuSight's per-node GPU times (fitspeed/evidence/layer_check.h;
// docs/validation.md, "Per-layer check").
#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/evidence/layer_check.h"
#include "fitspeed/evidence/output.h"
#include "validate.h"

namespace fitspeed::cli {

int RunValidateLayers(const ValidateLayersOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  LayerCheckOptions check;
  check.devices = ReadDeviceFiles(options.device_files);
  WriteLayerCheck(std::cout,
                  CheckBertLayers(options.data_dir + "/" + kNeusightBertLayersFile, check), format);
  return 0;
}

void SetupValidateLayersCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateLayersOptions>();
  CLI::App* command = validate.add_subcommand(
      "layers",
      "Check the step model per layer: a BERT-large encoder layer against NeuSight's per-node "
      "GPU times (neusight_bert_large_train_layers.csv)");
  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  AddDeviceFileOption(*command, options->device_files);
  AddOutputOption(*command, options->output);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateLayers(*options);
  });
}

}  // namespace fitspeed::cli
