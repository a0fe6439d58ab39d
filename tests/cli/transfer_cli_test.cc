// `fitspeed sweep MODEL --device B --from RUN --from-device A` end to end on a
// real log (Pollux's ResNet-18 steps on a T4, tests/data/transfer), a cases
// file, the errors for what the measurement does not state or contradicts,
// and the Transfer section of `fitspeed validate`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "fitspeed/calibrate/calibrate.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Pollux's log names the task ("cifar10"); network= states the network.
std::string LogTransfer(const std::string& attributes) {
  return Data("transfer/pollux_t4_resnet18_cifar10_p1.csv") + "@" + attributes;
}

TEST(TransferCli, LogOnT4PredictsV100WithTheFittedParameters) {
  const CliRun run = RunCli(
      "sweep resnet18-cifar --device v100-sxm2 --batches 32,64,128,256 --no-loo "
      "--from " +
      LogTransfer("precision=fp32,network=resnet18-cifar") + " --from-device t4 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const auto& t = j.at("transfer");
  EXPECT_EQ(t.at("source_device"), "t4");
  EXPECT_EQ(t.at("target_device"), "v100-sxm2");
  EXPECT_EQ(t.at("precision"), "fp32");
  EXPECT_EQ(t.at("cases"), 11);  // the log's 11 batch sizes
  EXPECT_EQ(t.at("points"), 11);
  ASSERT_EQ(t.at("fitted").size(), 2u);  // FP32 on CUDA cores: compute scale and host overhead
  EXPECT_EQ(t.at("fitted")[0].at("name"), "compute_scale");
  EXPECT_EQ(t.at("fitted")[1].at("name"), "step_host_s");
  EXPECT_EQ(t.at("applied"), t.at("fitted"));  // both carried to B
  EXPECT_EQ(j.at("model").at("device"), "v100-sxm2");
  // B's steps are the V100 with the fitted parameters.
  std::vector<CalibratedParameter> applied;
  for (const auto& p : t.at("applied")) {
    CalibratedParameter c;
    c.name = p.at("name").get<std::string>();
    c.value = p.at("value").get<double>();
    applied.push_back(c);
  }
  const Device b = ApplyCalibration(LoadDevice("v100-sxm2"), applied);
  const Network net = LoadNetwork("resnet18-cifar");
  ASSERT_EQ(j.at("steps").size(), 4u);
  for (const auto& step : j.at("steps")) {
    const int64_t batch = step.at("batch").get<int64_t>();
    EXPECT_NEAR(step.at("throughput_sps").get<double>(), ModelStep(net, b, batch).throughput_sps,
                1e-6 * ModelStep(net, b, batch).throughput_sps);
  }
}

TEST(TransferCli, TableAndCsvCarryTheHeader) {
  const std::string args =
      "sweep resnet18-cifar --device v100-sxm2 --batches 32,64,128,256 --no-loo "
      "--precision fp32 --from " +
      LogTransfer("network=resnet18-cifar") + " --from-device t4";
  const CliRun table = RunCli(args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, StartsWith("transferred from t4: resnet18-cifar"));
  EXPECT_THAT(table.out, HasSubstr("fitted on t4 to 11 measured points: compute_scale = "));
  EXPECT_THAT(table.out, HasSubstr("applied to v100-sxm2: compute_scale = "));
  EXPECT_THAT(table.out, HasSubstr("step_host_s = "));
  EXPECT_THAT(table.out, HasSubstr("kept at v100-sxm2's catalog value: memory"));
  EXPECT_THAT(table.out, HasSubstr("t4 fit error (in-sample, throughput): median |e| "));
  const CliRun csv = RunCli(args + " --output csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, StartsWith("# transferred from t4"));
  EXPECT_THAT(csv.out, HasSubstr("\ndevice,model,precision"));
}

TEST(TransferCli, CasesFileOfTheNetworkOnA) {
  // tests/data/cases/pollux_t4.csv: 8 ResNet-50 and 11 ResNet-18 rows on a T4;
  // the ResNet-50 rows are used.
  const CliRun run =
      RunCli("sweep resnet50 --device a100 --batches 32,64,128,256 --no-loo --from " +
             Data("cases/pollux_t4.csv") + " --from-device t4 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto t = nlohmann::json::parse(run.out).at("transfer");
  EXPECT_EQ(t.at("from_kind"), "cases");
  EXPECT_EQ(t.at("cases"), 8);
  EXPECT_EQ(t.at("network"), "resnet50");
}

TEST(TransferCli, MissingOrContradictingAttributesAreUsageErrors) {
  const std::string sweep = "sweep resnet18-cifar --device v100-sxm2 --batches 64 --from ";
  // No precision stated: neither @precision nor --precision.
  CliRun run = RunCli(sweep + LogTransfer("network=resnet18-cifar") + " --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("precision is not stated"));
  // Measured mixed, modeled fp32.
  run = RunCli(sweep + LogTransfer("precision=mixed,layout=nchw,network=resnet18-cifar") +
               " --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("a transfer needs them equal"));
  // Mixed precision runs on tensor cores, where the layout matters: it must be stated.
  run = RunCli("sweep resnet18-cifar --device v100-sxm2 --batches 64 --precision mixed --from " +
               LogTransfer("precision=mixed,network=resnet18-cifar") + " --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("layout is not stated"));
  // --from and --from-device go together, and with --device.
  run = RunCli(sweep + LogTransfer("precision=fp32,network=resnet18-cifar"));
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("--from-device"));
  run = RunCli("sweep resnet18-cifar --device v100-sxm2 --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  run =
      RunCli("sweep resnet18-cifar --from " + LogTransfer("precision=fp32") + " --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  // A cases file states its own attributes.
  run = RunCli(sweep + Data("cases/pollux_t4.csv") + "@precision=fp32 --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  // Devices of different kinds.
  run = RunCli("sweep resnet18-cifar --device tpu-v3-8 --batches 64 --from " +
               LogTransfer("precision=fp32,network=resnet18-cifar") + " --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("one kind"));
}

TEST(TransferCli, AnotherNetworksMeasurementIsBadData) {
  // The log's model column says cifar10: not resnet50, and not resnet18-cifar
  // either unless network= says so.
  CliRun run = RunCli(
      "sweep resnet18-cifar --device v100-sxm2 --batches 64 --precision fp32 "
      "--from " +
      Data("transfer/pollux_t4_resnet18_cifar10_p1.csv") + " --from-device t4");
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr("pollux_t4_resnet18_cifar10_p1.csv:5"));
  EXPECT_THAT(run.err, HasSubstr("is of 'cifar10'"));
  run = RunCli("sweep resnet50 --device v100-sxm2 --batches 64 --precision fp32 --from " +
               LogTransfer("network=resnet18-cifar") + " --from-device t4");
  EXPECT_EQ(run.exit_code, 64);
  // A cases file without the network on A.
  run = RunCli("sweep vgg16 --device v100-sxm2 --batches 64 --from " + Data("cases/pollux_t4.csv") +
               " --from-device t4");
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr("no case of vgg16 on t4"));
  // A missing file.
  run = RunCli(
      "sweep resnet50 --device v100-sxm2 --batches 64 --precision fp32 --from "
      "/no/such/run.log --from-device t4");
  EXPECT_EQ(run.exit_code, 66);
}

TEST(TransferCli, ValidateHasATransferSection) {
  const CliRun run = RunCli("validate --no-cross-validation --no-cross-device --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const auto& t = j.at("transfer");
  ASSERT_FALSE(t.at("cases").empty());
  EXPECT_EQ(t.at("overall").at("cases").get<size_t>(), t.at("cases").size());
  for (const auto& c : t.at("cases")) {
    EXPECT_NE(c.at("source_device"), c.at("target_device"));
    EXPECT_TRUE(c.at("log_ratio").is_number());
    EXPECT_FALSE(c.at("source").get<std::string>().empty());
  }
  const CliRun off =
      RunCli("validate --no-cross-validation --no-cross-device --no-transfer --output json");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_TRUE(nlohmann::json::parse(off.out).at("transfer").is_null());
  const CliRun table = RunCli("validate --no-cross-validation --no-cross-device");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("\nTransfer: each case on device B"));
}

}  // namespace
}  // namespace fitspeed::test
