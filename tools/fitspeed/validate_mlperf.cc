// `fitspeed validate mlperf`: the MLPerf Training ResNet-50 and BERT-large
// results of every submitter (rounds 3.0-5.0) predicted by the catalog and
// counted by publisher (fitspeed/evidence/mlperf.h; docs/validation.md,
// "MLPerf Training ResNet-50 and BERT, every submitter"). The development
// split by default; the test split's figures only with --split test. It runs
// in a fraction of a second, so it draws no progress line.
#include <iostream>
#include <memory>
#include <string>

#include "command.h"
#include "fitspeed/evidence/mlperf.h"
#include "validate.h"

namespace fitspeed::cli {

namespace {

struct ValidateMlperfOptions {
  std::string data_dir = kMeasuredDir;
  std::string publishers = std::string(FITSPEED_SOURCE_DATA_DIR) + "/publishers.json";
  std::string split = "development";
  double interval_level = 0.8;
  std::string output = "table";
};

int RunValidateMlperf(const ValidateMlperfOptions& options) {
  const OutputFormat format = ParseOutputFormat(options.output);
  RequireDataDirectory(options.data_dir);
  const PublisherTable publishers = ReadPublishers(options.publishers);
  const MlperfTable table =
      ReadMlperfCases(options.data_dir + "/" + kMlperfResnetBertTable, publishers);
  MlperfValidationOptions validation;
  validation.split = options.split;
  validation.interval_level = options.interval_level;
  const MlperfValidation v = ValidateMlperf(table, validation);
  WriteMlperfValidation(std::cout, v, format);
  return 0;
}

}  // namespace

void SetupValidateMlperfCommand(CLI::App& validate, int& exit_code) {
  auto options = std::make_shared<ValidateMlperfOptions>();
  CLI::App* command = validate.add_subcommand(
      "mlperf",
      "Check the catalog against MLPerf Training ResNet-50 and BERT-large results of every "
      "submitter, rounds 3.0-5.0 (mlperf_training_resnet_bert_throughput_v3.0-v5.0.csv), per "
      "case and per publisher, publishers weighted equally");
  AddDataOption(*command, options->data_dir, "the measurement tables (data/measured/README.md)");
  command->add_option("--publishers", options->publishers,
                      "The publishers and their frozen split (default: the source tree's "
                      "data/publishers.json)");
  command
      ->add_option("--split", options->split,
                   "development (default) or test: the publishers whose cases are reported; the "
                   "two are never pooled, and the test split is reported once per release of "
                   "the model")
      ->check(CLI::IsMember({"development", "test"}));
  command
      ->add_option("--interval-level", options->interval_level,
                   "Level of the catalog's prediction interval each case is checked against "
                   "(default 0.8)")
      ->check(FiniteRange(0.0, 1.0));
  AddOutputOption(*command, options->output);
  command->callback([command, options, &exit_code] {
    RejectValidateOptions(*command);
    exit_code = RunValidateMlperf(*options);
  });
}

}  // namespace fitspeed::cli
