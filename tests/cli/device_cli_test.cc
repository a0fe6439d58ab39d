// Golden tests of `fitspeed devices` and `fitspeed sweep --device`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "fitspeed/device/device.h"

namespace {

using ::fitspeed::CatalogDeviceJson;
using ::fitspeed::test::CliRun;
using ::fitspeed::test::RunCli;
using ::testing::HasSubstr;

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator && separator == ',') parts.emplace_back();
  return parts;
}
std::vector<std::string> Lines(const std::string& text) { return Split(text, '\n'); }
// A CSV line without quoted fields (fitspeed's numeric rows).
std::vector<std::string> SplitCsv(const std::string& line) { return Split(line, ','); }

TEST(DeviceCli, DevicesJsonListsTheCatalogWithDatasheetPeaks) {
  const CliRun run = RunCli("devices --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.devices/1");
  ASSERT_EQ(json["devices"].size(), 13u);  // k40m ... tpu-v3-8, xeon-6148x2; host on request
  bool found = false;
  for (const auto& d : json["devices"]) {
    if (d["name"] != "v100-sxm2") continue;
    found = true;
    // NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32, 125 tensor, 900 GB/s.
    EXPECT_DOUBLE_EQ(d["fp32_flops_per_s"].get<double>(), 15.7e12);
    EXPECT_DOUBLE_EQ(d["tensor16_flops_per_s"].get<double>(), 125e12);
    EXPECT_DOUBLE_EQ(d["memory_bandwidth_bytes_per_s"].get<double>(), 900e9);
    EXPECT_TRUE(d["tf32_flops_per_s"].is_null());  // Volta has no TF32
    EXPECT_EQ(d["tensor_layout"], "nhwc");         // tensor-core convolutions work in NHWC
  }
  EXPECT_TRUE(found);
}

TEST(DeviceCli, DevicesTableNamesOneDevice) {
  const CliRun run = RunCli("devices tpu-v3-8");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("tpu-v3-8"));
  EXPECT_THAT(run.out, HasSubstr("ici"));
}

TEST(DeviceCli, UnknownDeviceIsAUsageError) {
  const CliRun run = RunCli("devices v200");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("v200"));
}

TEST(DeviceCli, BrokenDeviceFileExits65NamingTheFile) {
  const std::string path = ::testing::TempDir() + "/fitspeed_cli_broken_device.json";
  std::ofstream(path) << "{\"schema\": \"fitspeed.device/1\",\n \"name\": \"x\"\n";
  const CliRun run = RunCli("devices " + path);
  std::remove(path.c_str());
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr(path));
}

TEST(DeviceCli, SweepResnet50OnV100ModelsAndFits) {
  const CliRun run =
      RunCli("sweep resnet50 --device v100-sxm2 --batches 16,32,64 --output json --layers");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.fit/1");
  EXPECT_EQ(json["model"]["device"], "v100-sxm2");
  EXPECT_EQ(json["model"]["precision"], "fp32");
  ASSERT_EQ(json["steps"].size(), 3u);
  ASSERT_EQ(json["fits"].size(), 1u);
  EXPECT_TRUE(json["fits"][0]["converged"].get<bool>());
  // Below the roofline: 15.7 TFLOPS / ~24.6 GFLOP per sample forward+backward
  // (3x ResNet-50's 8.2 GFLOP forward) = ~640 samples/s at the very most.
  const double v = json["steps"][2]["throughput_sps"].get<double>();
  EXPECT_LT(v, 640);
  EXPECT_GT(v, 100);
  // The breakdown of the largest batch marks each layer's bound.
  const auto& layers = json["steps"][2]["layers"];
  ASSERT_FALSE(layers.empty());
  EXPECT_TRUE(layers[0]["bound"] == "compute" || layers[0]["bound"] == "memory");
}

TEST(DeviceCli, SweepLayoutNhwcDropsTheTransposesOfNchw) {
  auto step = [](const std::string& layout) {
    const CliRun run = RunCli(
        "sweep resnet50 --device a100 --precision tf32 --batches 64,128,256 "
        "--output json --layout " +
        layout);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(run.out);
  };
  const auto nchw = step("nchw");
  const auto nhwc = step("nhwc");
  EXPECT_EQ(nchw["model"]["layout"], "nchw");
  EXPECT_TRUE(nchw["model"]["transposes"].get<bool>());
  EXPECT_FALSE(nhwc["model"]["transposes"].get<bool>());
  const double layout_s = nchw["steps"][0]["layout_s"].get<double>();
  EXPECT_GT(layout_s, 0);
  EXPECT_DOUBLE_EQ(nhwc["steps"][0]["layout_s"].get<double>(), 0);
  EXPECT_NEAR(
      nchw["steps"][0]["step_time_s"].get<double>() - nhwc["steps"][0]["step_time_s"].get<double>(),
      layout_s, 1e-12);
  // The table says what it assumed.
  const CliRun table = RunCli("sweep resnet50 --device a100 --precision tf32 --batches 64,128,256");
  EXPECT_THAT(table.out, HasSubstr("layout: nchw activations"));
  // --layout is a device-model option.
  EXPECT_EQ(RunCli("sweep resnet50 --layout nhwc --batches 1").exit_code, 64);
  EXPECT_EQ(RunCli("sweep resnet50 --device a100 --layout chw").exit_code, 64);
}

TEST(DeviceCli, SweepFuseRunsReluAndAddInsideTheBatchNorms) {
  auto model = [](const std::string& flags) {
    const CliRun run = RunCli(
        "sweep resnet50 --device a100-80gb --precision mixed --layout nhwc --batches 256 "
        "--output json " +
        flags);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(run.out);
  };
  const auto plain = model("");
  const auto fused = model("--fuse bn-relu-add");
  const auto mxnet = model("--framework mxnet");
  EXPECT_EQ(plain["model"]["fusion"], "none");
  EXPECT_EQ(plain["model"]["fused_layers"], 0);
  EXPECT_EQ(fused["model"]["fusion"], "bn-relu-add");
  // ResNet-50: 33 ReLUs after a batch norm (the stem's and two per
  // bottleneck), 16 residual adds and the 16 ReLUs after them.
  EXPECT_EQ(fused["model"]["fused_layers"], 65);
  EXPECT_LT(fused["steps"][0]["step_time_s"].get<double>(),
            plain["steps"][0]["step_time_s"].get<double>());
  // NVIDIA's MXNet examples run FP16 fused: --framework mxnet implies it.
  EXPECT_EQ(mxnet["model"]["fusion"], "bn-relu-add");
  const CliRun table = RunCli(
      "sweep resnet50 --device a100-80gb --precision mixed --batches 64 --fuse bn-relu-add "
      "--layers");
  EXPECT_THAT(table.out, HasSubstr("fusion: bn-relu-add: 65 ReLU and residual-add layers"));
  EXPECT_THAT(table.out, HasSubstr("fused-into-bn"));
  EXPECT_EQ(RunCli("sweep resnet50 --fuse bn-relu-add --batches 1").exit_code, 64);
  EXPECT_EQ(RunCli("sweep resnet50 --device a100 --fuse xla").exit_code, 64);
}

TEST(DeviceCli, SweepInputRateCapsTheThroughputPerDevice) {
  const CliRun run = RunCli(
      "sweep resnet50 --device v100-sxm2 --batches 32,64,128 --devices 2 --input-rate 100 "
      "--output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_DOUBLE_EQ(json["model"]["input_samples_per_s"].get<double>(), 100);
  for (const auto& step : json["steps"]) {
    // 100 samples/s per device is below the V100's ~330: every batch is
    // input-bound, 2 devices x 100 samples/s.
    EXPECT_TRUE(step["input_bound"].get<bool>());
    EXPECT_NEAR(step["throughput_sps"].get<double>(), 200, 1e-9);
  }
  EXPECT_EQ(RunCli("sweep resnet50 --device v100-sxm2 --input-rate -5").exit_code, 64);
  EXPECT_EQ(RunCli("sweep resnet50 --input-rate 100 --batches 1").exit_code, 64);
}

TEST(DeviceCli, PricedDeviceFileAddsTheCostPerMillionSamples) {
  // The catalog T4 with a price of 0.526 per hour written into a user's file.
  std::string text = CatalogDeviceJson("t4");
  const std::string at = "\"memory\": {";
  text.insert(text.find(at), "\"price_per_hour\": {\"value\": 0.526, \"source\": \"test\"},\n  ");
  const std::string path = ::testing::TempDir() + "/fitspeed_cli_priced_t4.json";
  std::ofstream(path) << text;
  const CliRun shown = RunCli("devices " + path);
  EXPECT_THAT(shown.out, HasSubstr("price: 0.526 per device-hour (test)"));
  const CliRun run =
      RunCli("sweep resnet50 --device " + path + " --batches 32,64,128 --devices 2 --output csv");
  std::remove(path.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Header and first row: cost = 2 devices x 0.526/3600 per second x 1e6 / throughput.
  const std::vector<std::string> lines = Lines(run.out);
  ASSERT_GE(lines.size(), 2u);
  const std::vector<std::string> header = SplitCsv(lines[0]);
  const std::vector<std::string> row = SplitCsv(lines[1]);
  ASSERT_EQ(header.size(), row.size());
  // Columns are found by name: later columns may be appended.
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  const size_t cost = column("cost_per_million_samples");
  ASSERT_LT(cost, row.size());
  const double throughput = std::stod(row[column("throughput_sps")]);
  EXPECT_NEAR(std::stod(row[cost]), 2 * 0.526 / 3600 * 1e6 / throughput,
              1e-5 * std::stod(row[cost]));
  // The catalog itself carries no prices: the column stays empty.
  const CliRun catalog = RunCli("sweep resnet50 --device t4 --batches 32,64,128 --output csv");
  EXPECT_EQ(SplitCsv(Lines(catalog.out)[1])[cost], "");
}

TEST(DeviceCli, SweepDeviceRejectsHostPrecision) {
  EXPECT_EQ(RunCli("sweep resnet50 --device v100-sxm2 --precision bf16").exit_code, 64);
  EXPECT_EQ(RunCli("sweep resnet50 --precision mixed").exit_code, 64);
}

}  // namespace
