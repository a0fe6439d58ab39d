// `fitspeed calibrate`: the published T4 cases, the written device file,
// skipped cases of other devices, JSON output and the exit codes of bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "fitspeed/device/device.h"

namespace fitspeed::test {
namespace {

using ::testing::HasSubstr;

// tests/data/cases/pollux_t4.csv: 8 ResNet-50 (imagenet) and 11 ResNet-18
// (cifar10) single-GPU T4 rows of the Pollux traces.
const std::string kPollux = Data("cases/pollux_t4.csv");

std::string Scratch(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/fitspeed_calibrate_cli_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CalibrateCli, PolluxT4WritesACalibratedDevice) {
  const std::string out = ::testing::TempDir() + "/fitspeed_calibrate_cli_t4.json";
  const CliRun run =
      RunCli("calibrate --device t4 " + kPollux + " --params compute,host --write " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("compute_scale"));
  EXPECT_THAT(run.out, HasSubstr("step_host_s"));
  EXPECT_THAT(run.out, HasSubstr("kept at the device's values: memory_scale, kernel_launch_s"));
  EXPECT_THAT(run.out, HasSubstr("error before:"));
  EXPECT_THAT(run.out, HasSubstr("out-of-sample (leave one network out)"));
  EXPECT_THAT(run.out, HasSubstr("resnet50/t4/fp32/x1/b200"));
  EXPECT_THAT(run.err, HasSubstr("wrote the calibrated device"));
  const Device d = LoadDevice(out);
  std::remove(out.c_str());
  EXPECT_EQ(d.name, "t4");
  // One key per row of the file, in its order.
  ASSERT_EQ(d.calibrated_on.size(), 19u);
  EXPECT_EQ(d.calibrated_on.front(), "resnet50/t4/fp32/x1/b20");
  EXPECT_EQ(d.calibrated_on.back(), "resnet18-cifar/t4/fp32/x1/b1024");
  // The datasheet peak is never calibrated: 8.1 TFLOPS as in the catalog.
  EXPECT_EQ(d.fp32_flops_per_s, 8.1e12);
  EXPECT_TRUE(d.calibration.error_loo.has_value());
}

TEST(CalibrateCli, CasesOfOtherDevicesAreSkippedAndJsonIsComplete) {
  const std::string extra = Scratch("k80.csv",
                                    "network,device,precision,devices,batch,throughput_sps\n"
                                    "resnet50,k80,fp32,1,64,50\n");
  const CliRun run = RunCli("calibrate --device t4 " + kPollux + " " + extra +
                            " --params compute,host --output json");
  std::remove(extra.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("skipped 1 case(s) of other devices: k80 (1)"));
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema"], "fitspeed.calibration/1");
  ASSERT_EQ(j["parameters"].size(), 2u);
  EXPECT_EQ(j["parameters"][0]["name"], "compute_scale");
  EXPECT_EQ(j["parameters"][1]["name"], "step_host_s");
  EXPECT_EQ(j["cases"].size(), 19u);
  EXPECT_EQ(j["held_out"].size(), 2u);
  EXPECT_EQ(j["error_loo"]["cases"], 19);
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["key"], "resnet50/k80/fp32/x1/b64");
  EXPECT_EQ(j["skipped"][0]["line"], 2);
}

TEST(CalibrateCli, BadInputsMapToTheirExitCodes) {
  // Bad data: file and line named (65).
  const std::string bad = Scratch("bad.csv",
                                  "network,device,precision,devices,batch,throughput_sps\n"
                                  "resnet50,t4,fp32,1,64,-5\n");
  CliRun run = RunCli("calibrate --device t4 " + bad);
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr(bad + ":2: field 'throughput_sps'"));
  // Cases of a single network cannot be cross-validated (65).
  const std::string one = Scratch("one.csv",
                                  "network,device,precision,devices,batch,throughput_sps\n"
                                  "resnet50,t4,fp32,1,64,200\nresnet50,t4,fp32,1,128,210\n");
  run = RunCli("calibrate --device t4 " + one + " --params host");
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr("at least 2 networks"));
  // No case of this device (65).
  run = RunCli("calibrate --device k80 " + one);
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr("no case of device 'k80'"));
  std::remove(bad.c_str());
  std::remove(one.c_str());
  // Missing input (66), unknown parameter (64).
  EXPECT_EQ(RunCli("calibrate --device t4 /nonexistent/cases.csv").exit_code, 66);
  run = RunCli("calibrate --device t4 " + kPollux + " --params compute,peak");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("unknown calibration parameter 'peak'"));
}

TEST(CalibrateCli, FromOtherDevicesWritesATargetWithTheirScales) {
  // NVIDIA DeepLearningExamples ResNet-50 v1.5, PyTorch, DGX-1 V100 16GB, one
  // GPU: 367 img/s FP32 at batch 112, 1200 img/s AMP at batch 256
  // (data/measured/nvidia_dle_training_perf_tables.csv lines 366-367); AMP runs
  // channels-last (ConvNets/configs.yml: memory_format nhwc).
  const std::string v100 = Scratch("v100.csv",
                                   "network,device,precision,devices,batch,throughput_sps,layout\n"
                                   "resnet50,v100-sxm2,fp32,1,112,367,nchw\n"
                                   "resnet50,v100-sxm2,mixed,1,256,1200,nhwc\n"
                                   "resnet50,t4,fp32,1,64,170\n");
  const std::string out = ::testing::TempDir() + "/fitspeed_calibrate_cli_t4_from_v100.json";
  const CliRun run =
      RunCli("calibrate --device t4 --from v100-sxm2 " + v100 + " --output json --write " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("skipped 1 case(s) of other devices: t4 (1)"));
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.calibration-transfer/1");
  EXPECT_EQ(json["cases"], 2);
  // One FP32 and one mixed case: the compute and the tensor scale, no overhead.
  ASSERT_EQ(json["parameters"].size(), 2u);
  EXPECT_EQ(json["parameters"][0]["name"], "compute_scale");
  EXPECT_EQ(json["parameters"][1]["name"], "tensor_scale");
  // Two parameters, two cases, but the FP32 case is NCHW: its batch norm runs
  // cuDNN's NCHW kernels (memory time, which no compute scale shortens), so
  // the compute scale stops at its bound (the FP32 curve's efficiency reaches
  // 1) and that case keeps a residual; the mixed case is fitted exactly.
  EXPECT_TRUE(json["parameters"][0]["at_bound"].get<bool>());
  EXPECT_FALSE(json["parameters"][1]["at_bound"].get<bool>());
  EXPECT_GT(json["error_after"]["max_abs"].get<double>(), 1e-6);
  EXPECT_LT(json["error_after"]["max_abs"].get<double>(), 0.01);
  // The written T4 carries the V100's compute scale on its own curve, its own
  // datasheet peak and overheads.
  const Device t4 = LoadDevice("t4");
  const Device d = LoadDevice(out);
  std::remove(out.c_str());
  std::remove(v100.c_str());
  const double scale = json["parameters"][0]["value"].get<double>();
  EXPECT_NEAR(d.compute_efficiency.points.back().efficiency,
              std::min(1.0, scale * t4.compute_efficiency.points.back().efficiency), 1e-9);
  EXPECT_EQ(d.fp32_flops_per_s, 8.1e12);
  EXPECT_EQ(d.step_host_s, t4.step_host_s);
  EXPECT_FALSE(d.tensor_efficiency.points.empty());
  EXPECT_THAT(d.sources.at("efficiency.compute"), HasSubstr("calibrated elsewhere"));
}

TEST(CalibrateCli, FromADeviceFileMatchesCasesNamingItsPath) {
  // The catalog V100 as a user's file; the cases name it by that path.
  const std::string file = Scratch("my-v100.json", ReadFile(std::string(FITSPEED_TEST_DATA_DIR) +
                                                            "/../../data/devices/v100-sxm2.json"));
  const std::string cases = Scratch("by-path.csv",
                                    "network,device,precision,devices,batch,throughput_sps\n"
                                    "resnet50," +
                                        file +
                                        ",fp32,1,112,367\n"
                                        "resnet50," +
                                        file + ",fp32,1,64,350\n");
  const CliRun run = RunCli("calibrate --device t4 --from " + file + " " + cases + " -o json");
  std::remove(file.c_str());
  std::remove(cases.c_str());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["cases"], 2);
  ASSERT_EQ(json["parameters"].size(), 1u);  // FP32 on CUDA cores: the compute scale
  EXPECT_EQ(json["parameters"][0]["name"], "compute_scale");
}

}  // namespace
}  // namespace fitspeed::test
