// Golden tests of `fitspeed devices` and `fitspeed sweep --device`.
#include <fmt/format.h>
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
using ::testing::Not;

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
  // The thirteen files of the catalog before issue 30 (k40m ... tpu-v3-8, xeon-6148x2), its
  // fifteen (h200 ... tpu-v6e) and issue 32's eight (a100-pcie-80gb ... rx-7900-xtx); host on
  // request.
  ASSERT_EQ(json["devices"].size(), 36u);
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
    EXPECT_TRUE(d["fp8_flops_per_s"].is_null());   // nor FP8
    EXPECT_EQ(d["scale_up_domain"], 8);            // DGX-1: 8 GPUs
  }
  EXPECT_TRUE(found);
  for (const auto& d : json["devices"]) {
    if (d["name"] == "h100") {
      // NVIDIA H100 datasheet (SXM): 3,958 TFLOPS FP8 with sparsity, 1,979 dense.
      EXPECT_DOUBLE_EQ(d["fp8_flops_per_s"].get<double>(), 1979e12);
      EXPECT_TRUE(d["fp4_flops_per_s"].is_null());
    } else if (d["name"] == "gb200") {
      // NVIDIA GB200 NVL72 datasheet: FP4 1,440 PFLOPS with sparsity over 72 GPUs: 10 dense.
      EXPECT_DOUBLE_EQ(d["fp4_flops_per_s"].get<double>(), 10e15);
      EXPECT_EQ(d["scale_up_domain"], 72);
    } else if (d["name"] == "tpu-v6e") {
      // Cloud TPU v6e docs: 1,836 TOPS Int8 per chip.
      EXPECT_DOUBLE_EQ(d["int8_flops_per_s"].get<double>(), 1836e12);
    }
  }
}

TEST(DeviceCli, DevicesCsvHasTheTablesColumnsAndARowPerDevice) {
  const CliRun csv = RunCli("devices --output csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const CliRun json = RunCli("devices --output json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::istringstream lines(csv.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("device,kind,cores,fp32_TFLOPS,tf32_TFLOPS,16bit_TFLOPS,fp8_TFLOPS", 0),
            0u)
      << header;
  int rows = 0;
  for (std::string line; std::getline(lines, line);) rows += line.empty() ? 0 : 1;
  EXPECT_EQ(rows, static_cast<int>(nlohmann::json::parse(json.out)["devices"].size()));
  EXPECT_THAT(csv.out, HasSubstr("\nh100,gpu,1,67,494.5,"));
}

TEST(DeviceCli, DevicesTableHasLowPrecisionAndScaleUpColumns) {
  const CliRun run = RunCli("devices");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = Lines(run.out);
  ASSERT_FALSE(lines.empty());
  for (const char* column : {"fp8_TFLOPS", "int8_TOPS", "fp4_TFLOPS", "scale_up"}) {
    EXPECT_THAT(lines[0], HasSubstr(column));
  }
  // GB300 NVL72: 72 GPUs in its NVLink domain.
  const auto row = std::find_if(lines.begin(), lines.end(),
                                [](const std::string& l) { return l.rfind("gb300 ", 0) == 0; });
  ASSERT_NE(row, lines.end());
  EXPECT_THAT(*row, HasSubstr("72"));
  // The older devices alone have none of them: no such columns.
  const CliRun old = RunCli("devices v100-pcie");
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_THAT(old.out, Not(HasSubstr("fp8_TFLOPS")));
  EXPECT_THAT(old.out, Not(HasSubstr("scale_up")));
  // One device in full names each low-precision peak's source and the domain's.
  const CliRun detail = RunCli("devices tpu-v5e");
  ASSERT_EQ(detail.exit_code, 0) << detail.err;
  EXPECT_THAT(detail.out, HasSubstr("INT8 peak: 393 TOPS (Cloud TPU docs"));
  EXPECT_THAT(detail.out, HasSubstr("scale-up domain: 256 devices"));
}

TEST(DeviceCli, MixedPrecisionSweepRunsOnEveryIssue30Device) {
  for (const char* device : {"h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x",
                             "gaudi2", "gaudi3", "tpu-v5e", "tpu-v5p", "tpu-v6e", "l40s", "l4"}) {
    SCOPED_TRACE(device);
    const CliRun run = RunCli(fmt::format(
        "sweep gpt2 --device {} --precision mixed --seq-len 256 --batches 8,16,32 --output json",
        device));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto json = nlohmann::json::parse(run.out);
    ASSERT_EQ(json["steps"].size(), 3u);
    for (const auto& step : json["steps"]) {
      EXPECT_GT(step["throughput_sps"].get<double>(), 0);
    }
    // A GPU that ran MLPerf development cases (h200, b200, gb200, mi300x, l40s,
    // l4) takes its class's interval; one without published cases its class's
    // widened, and says so; a TPU has none (one published TPU source).
    const auto& interval = json["model_interval"];
    const std::string name = device;
    if (name.rfind("tpu", 0) == 0) {
      EXPECT_FALSE(interval["available"].get<bool>());
    } else if (name == "h200" || name == "b200" || name == "gb200" || name == "mi300x" ||
               name == "l40s" || name == "l4") {
      ASSERT_TRUE(interval["available"].get<bool>());
      EXPECT_EQ(interval["basis"].get<std::string>(), "gpu/tensor");
    } else {
      ASSERT_TRUE(interval["available"].get<bool>());
      EXPECT_THAT(interval["basis"].get<std::string>(), HasSubstr("uncalibrated"));
    }
  }
}

// Unpadded sequences all of one length are the padded network of that
// length: --mean-tokens 254 (mean square 254^2 by default) with the head on 38
// positions models the same step as --seq-len 254 --head-positions 38.
TEST(DeviceCli, SweepUnpaddedBertOfOneLengthIsThePaddedOne) {
  const std::string common =
      "sweep bert-large --device h100 --precision mixed --attention fused "
      "--head-positions 38 --batches 8,16,32 --output json ";
  const CliRun unpadded = RunCli(common + "--seq-len 512 --mean-tokens 254");
  const CliRun padded = RunCli(common + "--seq-len 254");
  ASSERT_EQ(unpadded.exit_code, 0) << unpadded.err;
  ASSERT_EQ(padded.exit_code, 0) << padded.err;
  const auto a = nlohmann::json::parse(unpadded.out)["steps"];
  const auto b = nlohmann::json::parse(padded.out)["steps"];
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(a[i]["throughput_sps"].get<double>(), b[i]["throughput_sps"].get<double>());
  }
  // A wider spread of lengths (mean square above 254^2) is more attention work: slower.
  const CliRun spread =
      RunCli(common + "--seq-len 512 --mean-tokens 254 --mean-square-tokens 100000");
  ASSERT_EQ(spread.exit_code, 0) << spread.err;
  const auto c = nlohmann::json::parse(spread.out)["steps"];
  EXPECT_LT(c[0]["throughput_sps"].get<double>(), a[0]["throughput_sps"].get<double>());
}

TEST(DeviceCli, SweepFp8SaysWhatRunsInFp8AndRefusesDevicesWithoutIt) {
  const std::string common =
      "sweep bert-large --device h100 --attention fused --seq-len 128 --batches 16,32,64 ";
  const CliRun fp8 = RunCli(common + "--precision fp8 --amp-ops none");
  ASSERT_EQ(fp8.exit_code, 0) << fp8.err;
  EXPECT_THAT(fp8.out, HasSubstr("fp8: the dense layers' products and the fused attention's in "
                                 "FP8 at 1979 TFLOPS"));
  EXPECT_THAT(fp8.out, HasSubstr("amp: none: the model cast to 16 bits whole"));
  EXPECT_THAT(fp8.out, HasSubstr("over 1 x 1979 TFLOPS, the fp8 dense matrix peak"));
  const CliRun json = RunCli(common + "--precision fp8 --output json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["model"]["precision"], "fp8");
  // The list the run used (PyTorch's by default), or "none" for a model cast whole.
  EXPECT_EQ(nlohmann::json::parse(json.out)["model"]["amp_ops"], "pytorch");
  const CliRun whole = RunCli(common + "--precision fp8 --amp-ops none --output json");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(nlohmann::json::parse(whole.out)["model"]["amp_ops"], "none");
  for (const char* args : {"sweep bert-large --device a100 --precision fp8 --batches 8",
                           "sweep bert-large --device v100-sxm2 --precision fp8 --batches 8"}) {
    SCOPED_TRACE(args);
    const CliRun run = RunCli(args);
    EXPECT_EQ(run.exit_code, 64);
    EXPECT_THAT(run.err, HasSubstr("has no FP8 tensor units"));
  }
  const CliRun host = RunCli("sweep bert-base --precision fp8 --batches 1");
  EXPECT_EQ(host.exit_code, 64);
  EXPECT_THAT(host.err, HasSubstr("--precision fp8 needs --device"));
}

TEST(DeviceCli, SweepUnpaddedOptionsOutOfPlaceAreUsageErrors) {
  struct Bad {
    const char* args;
    const char* says;
  };
  for (const Bad& bad : {
           Bad{"sweep bert-large --device h100 --seq-len 512 --mean-tokens 600", "not in 1..512"},
           Bad{"sweep bert-large --device h100 --mean-tokens 254 --mean-square-tokens 1000",
               "mean squared tokens"},
           Bad{"sweep bert-large --device h100 --mean-square-tokens 90000", "needs --mean-tokens"},
           Bad{"sweep gpt2 --device h100 --head-positions 10", "no masked-LM head"},
           Bad{"sweep bert-base --head-positions 300 --device h100", "not in 1..128"},
           Bad{"sweep bert-base --mean-tokens 100 --batches 1,2", "is for `sweep device`"},
           Bad{"sweep host bert-base --mean-tokens 100", "--mean-tokens"},
           Bad{"sweep resnet50 --device h100 --mean-tokens 100", "takes no sequence length"},
       }) {
    SCOPED_TRACE(bad.args);
    const CliRun run = RunCli(bad.args);
    EXPECT_EQ(run.exit_code, 64);
    EXPECT_THAT(run.err, HasSubstr(bad.says));
  }
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
  // NCHW also runs batch norm in cuDNN's slower NCHW kernels: the steps differ
  // by more than the transposes.
  EXPECT_TRUE(nchw["model"]["nchw_batch_norm"].get<bool>());
  EXPECT_FALSE(nhwc["model"]["nchw_batch_norm"].get<bool>());
  EXPECT_GT(
      nchw["steps"][0]["step_time_s"].get<double>() - nhwc["steps"][0]["step_time_s"].get<double>(),
      layout_s);
  // The table says what it assumed.
  const CliRun table = RunCli("sweep resnet50 --device a100 --precision tf32 --batches 64,128,256");
  EXPECT_THAT(table.out, HasSubstr("layout: nchw activations"));
  EXPECT_THAT(table.out, HasSubstr("batch norm: cuDNN's NCHW kernels"));
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
