// The device catalog and the "fitspeed.device/1" loader: every catalog file
// loads with its datasheet peaks, broken files fail naming file, line and field.
#include "fitspeed/device/device.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

TEST(EfficiencyCurve, InterpolatesInLogSizeAndClampsAtTheEnds) {
  EfficiencyCurve curve;
  curve.points = {{1e6, 0.2}, {1e8, 0.6}};
  // 1e7 is halfway between 1e6 and 1e8 in log size: (0.2 + 0.6)/2 = 0.4.
  EXPECT_NEAR(curve.At(1e7), 0.4, 1e-12);
  // log10(1e6*10^0.5) is a quarter of the way: 0.2 + 0.25*0.4 = 0.3.
  EXPECT_NEAR(curve.At(1e6 * std::pow(10.0, 0.5)), 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(curve.At(10), 0.2);
  EXPECT_DOUBLE_EQ(curve.At(1e12), 0.6);
}

// The datasheet figures each catalog file must carry (the sources quoted in
// the files): peaks in FLOP/s, bandwidth in B/s, capacity in GiB.
struct Datasheet {
  const char* name;
  double fp32;
  double tf32;
  double tensor16;
  double bandwidth;
  double capacity_gib;
  int cores;
};

TEST(Catalog, EveryFileLoadsWithItsDatasheetPeaks) {
  const Datasheet sheets[] = {
      // NVIDIA Tesla K80 datasheet: 8.73 TFLOPS FP32 (boost), 480 GB/s, 24 GB per
      // board of two GK210 GPUs; one GPU: 4.365 TFLOPS, 240 GB/s, 12 GiB.
      {"k80", 4.365e12, 0, 0, 240e9, 12, 1},
      // NVIDIA Tesla P100 PCIe datasheet: 9.3 TFLOPS FP32, 18.7 TFLOPS FP16, 732 GB/s, 16 GB.
      {"p100", 9.3e12, 0, 18.7e12, 732e9, 16, 1},
      // NVIDIA Tesla V100 datasheet: SXM2 15.7 TFLOPS FP32, 125 tensor; PCIe 14 and 112;
      // 900 GB/s, 16 GB.
      {"v100-sxm2", 15.7e12, 0, 125e12, 900e9, 16, 1},
      {"v100-pcie", 14e12, 0, 112e12, 900e9, 16, 1},
      // NVIDIA T4 datasheet: 8.1 TFLOPS FP32, 65 TFLOPS FP16 mixed, 320 GB/s, 16 GB.
      {"t4", 8.1e12, 0, 65e12, 320e9, 16, 1},
      // NVIDIA A100 datasheet (SXM4 40 GB): 19.5 FP32, 156 TF32, 312 FP16/BF16 dense,
      // 1,555 GB/s, 40 GB.
      {"a100", 19.5e12, 156e12, 312e12, 1555e9, 40, 1},
      // NVIDIA H100 SXM datasheet: 67 FP32, 989 TF32 and 1,979 FP16 with sparsity
      // (dense: half), 3.35 TB/s, 80 GB.
      {"h100", 67e12, 494.5e12, 989.5e12, 3.35e12, 80, 1},
      // Cloud TPU v2-8: 180 TFLOPS bf16 (4 chips of 45), 16 GiB and 700 GB/s per chip
      // (Jouppi et al. CACM 2020), 8 cores.
      {"tpu-v2-8", 12e12, 0, 180e12, 2800e9, 64, 8},
      // Cloud TPU v3 docs: 123 TFLOPS bf16, 32 GiB, 900 GBps per chip; 4 chips, 8 cores.
      {"tpu-v3-8", 16e12, 0, 492e12, 3600e9, 128, 8},
  };
  std::vector<std::string> names = CatalogDeviceNames();
  EXPECT_EQ(names.size(), std::size(sheets) + 1);  // the nine files and host
  EXPECT_EQ(names.back(), "host");
  for (const Datasheet& s : sheets) {
    SCOPED_TRACE(s.name);
    const Device d = LoadDevice(s.name);
    EXPECT_EQ(d.name, s.name);
    EXPECT_EQ(d.origin, std::string("catalog:") + s.name);
    EXPECT_DOUBLE_EQ(d.fp32_flops_per_s, s.fp32);
    EXPECT_DOUBLE_EQ(d.tf32_flops_per_s, s.tf32);
    EXPECT_DOUBLE_EQ(d.tensor16_flops_per_s, s.tensor16);
    EXPECT_DOUBLE_EQ(d.memory_bandwidth_bytes_per_s, s.bandwidth);
    EXPECT_DOUBLE_EQ(d.memory_capacity_bytes, s.capacity_gib * (1u << 30));
    EXPECT_EQ(d.cores, s.cores);
    EXPECT_FALSE(d.compute_efficiency.points.empty());
  }
}

TEST(Catalog, TpuTilesAndGpuTensorTiles) {
  // Cloud TPU performance guide: per-core batch multiple of 8, features of 128.
  const Device tpu = LoadDevice("tpu-v3-8");
  EXPECT_EQ(tpu.batch_multiple, 8);
  EXPECT_EQ(tpu.feature_multiple_tensor, 128);
  EXPECT_TRUE(tpu.fp32_matrix_on_tensor16);
  ASSERT_NE(tpu.FindLink("cores"), nullptr);
  // NVIDIA Deep Learning Performance Guide: tensor cores want multiples of 8.
  const Device v100 = LoadDevice("v100-sxm2");
  EXPECT_EQ(v100.batch_multiple, 1);
  EXPECT_EQ(v100.feature_multiple_tensor, 8);
  ASSERT_NE(v100.FindLink("devices"), nullptr);
  EXPECT_EQ(v100.FindLink("devices")->name, "nvlink");
}

TEST(Catalog, UnknownNameIsAUsageErrorListingTheDevices) {
  try {
    LoadDevice("v200");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("v200"));
    EXPECT_THAT(e.what(), HasSubstr("v100-sxm2"));
  }
}

// 1-based line of the first occurrence of `needle` in `text`.
int LineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// Writes `text` to a scratch file and loads it as a user's device file; returns
// the DataError's message ("" when it loaded).
std::string LoadBroken(const std::string& text, const std::string& path) {
  std::ofstream(path) << text;
  try {
    LoadDevice(path);
  } catch (const DataError& e) {
    std::remove(path.c_str());
    return e.what();
  }
  std::remove(path.c_str());
  return "";
}

TEST(DeviceJson, AUsersFileLoadsByPath) {
  const std::string path = ::testing::TempDir() + "/fitspeed_my_v100.json";
  std::ofstream(path) << Replace(CatalogDeviceJson("v100-sxm2"), "\"name\": \"v100-sxm2\"",
                                 "\"name\": \"my-v100\"");
  const Device d = LoadDevice(path);
  std::remove(path.c_str());
  EXPECT_EQ(d.name, "my-v100");
  EXPECT_EQ(d.origin, path);
  EXPECT_DOUBLE_EQ(d.fp32_flops_per_s, 15.7e12);  // the V100 SXM2 datasheet's FP32 peak
}

TEST(DeviceJson, MissingFieldNamesFileLineAndField) {
  const std::string valid = CatalogDeviceJson("v100-sxm2");
  // Drop the whole capacity_bytes entry (from its key to the end of its object).
  const size_t begin = valid.find(",\n    \"capacity_bytes\"");
  const size_t end = valid.find('}', begin) + 1;
  ASSERT_NE(begin, std::string::npos);
  const std::string broken = valid.substr(0, begin) + valid.substr(end);
  const std::string path = ::testing::TempDir() + "/fitspeed_missing_field.json";
  const std::string message = LoadBroken(broken, path);
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("memory.capacity_bytes"));
  EXPECT_THAT(message, HasSubstr("missing"));
  // The line of the object that lacks it.
  EXPECT_THAT(message, HasSubstr(fmt::format("{}:{}:", path, LineOf(broken, "\"memory\""))));
}

TEST(DeviceJson, NegativeBandwidthNamesFileLineAndField) {
  const std::string broken =
      Replace(CatalogDeviceJson("v100-sxm2"), "\"value\": 9e11", "\"value\": -9e11");
  const std::string path = ::testing::TempDir() + "/fitspeed_negative_bandwidth.json";
  const std::string message = LoadBroken(broken, path);
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("memory.bandwidth_bytes_per_s.value"));
  EXPECT_THAT(message, HasSubstr("> 0"));
  EXPECT_THAT(message, HasSubstr(fmt::format("{}:{}:", path, LineOf(broken, "-9e11"))));
}

TEST(DeviceJson, BadJsonNamesFileAndLine) {
  // A comma removed after the "kind" line: the parser stops at the next key.
  const std::string broken =
      Replace(CatalogDeviceJson("v100-sxm2"), "\"kind\": \"gpu\",", "\"kind\": \"gpu\"");
  const std::string path = ::testing::TempDir() + "/fitspeed_bad_json.json";
  const std::string message = LoadBroken(broken, path);
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("malformed JSON"));
  EXPECT_THAT(message, HasSubstr(fmt::format("{}:{}:", path, LineOf(broken, "\"cores\""))));
}

TEST(DeviceJson, EfficiencyOutsideZeroOneAndMissingSourceAreRejected) {
  const std::string valid = CatalogDeviceJson("t4");
  EXPECT_THAT(LoadBroken(Replace(valid, "[1e11, 0.8]", "[1e11, 1.5]"),
                         ::testing::TempDir() + "/fitspeed_eff.json"),
              HasSubstr("efficiency.compute.points[5]"));
  EXPECT_THAT(LoadBroken(Replace(valid, "\"source\": \"NVIDIA T4 datasheet: 8.1",
                                 "\"origin\": \"NVIDIA T4 datasheet: 8.1"),
                         ::testing::TempDir() + "/fitspeed_source.json"),
              HasSubstr("peak_flops_per_s.fp32.origin"));
}

TEST(HostDevice, TriadBandwidthIsSane) {
  // Any memory system of the last decades moves between 100 MB/s and 10 TB/s.
  const double bandwidth = MeasureTriadBandwidth(8.0 * (1 << 20), 1, 2);
  EXPECT_GT(bandwidth, 1e8);
  EXPECT_LT(bandwidth, 1e13);
  EXPECT_THROW(MeasureTriadBandwidth(0, 1), UsageError);
}

TEST(HostDevice, ProbeIsSaneAndCachedPerProcess) {
  const Device host = LoadDevice("host");
  EXPECT_EQ(host.kind, "cpu");
  EXPECT_EQ(host.origin, "probe:host");
  // One x86-64 core with SSE alone does > 1 GFLOPS; no CPU does 100 TFLOPS.
  EXPECT_GT(host.fp32_flops_per_s, 1e9);
  EXPECT_LT(host.fp32_flops_per_s, 1e14);
  EXPECT_GT(host.memory_bandwidth_bytes_per_s, 1e8);
  EXPECT_GT(host.memory_capacity_bytes, 0);
  ASSERT_FALSE(host.compute_efficiency.points.empty());
  for (const EfficiencyCurve::Point& p : host.compute_efficiency.points) {
    EXPECT_GT(p.efficiency, 0);
    EXPECT_LE(p.efficiency, 1);
  }
  // Measured once: a second load returns the same numbers.
  EXPECT_EQ(LoadDevice("host").fp32_flops_per_s, host.fp32_flops_per_s);
  EXPECT_EQ(LoadDevice("host").memory_bandwidth_bytes_per_s, host.memory_bandwidth_bytes_per_s);
}

TEST(DeviceJson, MissingFileIsAnInputError) {
  EXPECT_THROW(ReadDeviceJsonFile("/nonexistent/device.json"), InputError);
}

}  // namespace
}  // namespace fitspeed
