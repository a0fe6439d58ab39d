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
#include <utility>

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
      // NVIDIA Tesla K40 datasheet: 4.29 TFLOPS FP32 peak, 288 GB/s, 12 GB.
      {"k40m", 4.29e12, 0, 0, 288e9, 12, 1},
      // NVIDIA Tesla P100 PCIe datasheet: 9.3 TFLOPS FP32, 18.7 TFLOPS FP16, 732 GB/s, 16 GB.
      {"p100", 9.3e12, 0, 18.7e12, 732e9, 16, 1},
      // NVIDIA Tesla V100 datasheet: SXM2 15.7 TFLOPS FP32, 125 tensor; PCIe 14 and 112;
      // 900 GB/s, 16 GB.
      {"v100-sxm2", 15.7e12, 0, 125e12, 900e9, 16, 1},
      {"v100-pcie", 14e12, 0, 112e12, 900e9, 16, 1},
      // NVIDIA DGX-2 datasheet: 16 V100 (SXM3), 2 petaFLOPS tensor (125 each), 512 GB
      // (32 each); FP32 and bandwidth as the V100 datasheet's SXM2 part.
      {"v100-sxm3-32gb", 15.7e12, 0, 125e12, 900e9, 32, 1},
      // NVIDIA T4 datasheet: 8.1 TFLOPS FP32, 65 TFLOPS FP16 mixed, 320 GB/s, 16 GB.
      {"t4", 8.1e12, 0, 65e12, 320e9, 16, 1},
      // NVIDIA A100 datasheet (SXM4 40 GB): 19.5 FP32, 156 TF32, 312 FP16/BF16 dense,
      // 1,555 GB/s, 40 GB.
      {"a100", 19.5e12, 156e12, 312e12, 1555e9, 40, 1},
      // The same datasheet, A100 80GB SXM: 2,039 GB/s, 80 GB HBM2e.
      {"a100-80gb", 19.5e12, 156e12, 312e12, 2039e9, 80, 1},
      // NVIDIA H100 SXM datasheet: 67 FP32, 989 TF32 and 1,979 FP16 with sparsity
      // (dense: half), 3.35 TB/s, 80 GB.
      {"h100", 67e12, 494.5e12, 989.5e12, 3.35e12, 80, 1},
      // Cloud TPU v2-8: 180 TFLOPS bf16 (4 chips of 45), 16 GiB and 700 GB/s per chip
      // (Jouppi et al. CACM 2020), 8 cores.
      {"tpu-v2-8", 12e12, 0, 180e12, 2800e9, 64, 8},
      // Cloud TPU v3 docs: 123 TFLOPS bf16, 32 GiB, 900 GBps per chip; 4 chips, 8 cores.
      {"tpu-v3-8", 16e12, 0, 492e12, 3600e9, 128, 8},
      // Two Xeon Gold 6148: 2 sockets x 20 cores x 64 FP32 FLOPs per cycle (2 AVX-512
      // FMA units x 16 lanes x 2) x 1.6 GHz AVX-512 base = 4.096 TFLOPS; 6 DDR4-2666
      // channels per socket: 2 x 6 x 2666e6 x 8 B = 256 GB/s; 192 GiB assumed.
      {"xeon-6148x2", 4.096e12, 0, 0, 2 * 6 * 2666e6 * 8, 192, 1},
  };
  std::vector<std::string> names = CatalogDeviceNames();
  // The thirteen files, issue 30's fifteen and issue 32's eight (tests/device/catalog_test.cc)
  // and host.
  EXPECT_EQ(names.size(), std::size(sheets) + 15 + 8 + 1);
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

// `text` with the efficiency of the first point of the curve `curve` (the
// JSON key under "efficiency") set to `efficiency`.
std::string WithFirstEfficiency(const std::string& text, const std::string& curve,
                                const std::string& efficiency) {
  const size_t key = text.find("\"" + curve + "\": {");
  EXPECT_NE(key, std::string::npos) << curve;
  const size_t comma = text.find(", ", text.find("[[", key));
  const size_t close = text.find(']', comma);
  return text.substr(0, comma + 2) + efficiency + text.substr(close);
}

TEST(DeviceJson, EfficiencyOutsideZeroOneAndMissingSourceAreRejected) {
  const std::string valid = CatalogDeviceJson("t4");
  EXPECT_THAT(LoadBroken(WithFirstEfficiency(valid, "compute", "1.5"),
                         ::testing::TempDir() + "/fitspeed_eff.json"),
              HasSubstr("efficiency.compute.points[0]"));
  EXPECT_THAT(LoadBroken(WithFirstEfficiency(valid, "memory_normalization", "0"),
                         ::testing::TempDir() + "/fitspeed_norm.json"),
              HasSubstr("efficiency.memory_normalization.points[0]"));
  EXPECT_THAT(LoadBroken(Replace(valid, "\"source\": \"NVIDIA T4 datasheet: 8.1",
                                 "\"origin\": \"NVIDIA T4 datasheet: 8.1"),
                         ::testing::TempDir() + "/fitspeed_source.json"),
              HasSubstr("peak_flops_per_s.fp32.origin"));
}

TEST(EfficiencyCurve, ShapeFactorByHand) {
  EfficiencyCurve curve;
  curve.points = {{1e9, 0.5}};
  // No half_dim: no shape term.
  EXPECT_EQ(curve.ShapeFactor(16, 16, 16), 1.0);
  curve.half_dim = 16;
  // 64/80 x 256/272 x 16/32 = 0.8 x 0.941176... x 0.5 = 0.376470588...
  EXPECT_NEAR(curve.ShapeFactor(64, 256, 16), 0.8 * (256.0 / 272) * 0.5, 1e-15);
  // Symmetric in the three dimensions.
  EXPECT_DOUBLE_EQ(curve.ShapeFactor(16, 64, 256), curve.ShapeFactor(64, 256, 16));
}

TEST(DeviceJson, ShapeTermLoadsAndRoundTripsAndABadOneNamesTheField) {
  const std::string t4 = CatalogDeviceJson("t4");
  const std::string with = Replace(t4, "\"compute\": {\n      \"points\"",
                                   "\"compute\": {\n      \"half_dim\": 12.5,\n      \"points\"");
  const std::string path = ::testing::TempDir() + "/fitspeed_half_dim.json";
  std::ofstream(path) << with;
  const Device d = LoadDevice(path);
  std::remove(path.c_str());
  EXPECT_EQ(d.compute_efficiency.half_dim, 12.5);
  EXPECT_EQ(d.tensor_efficiency.half_dim, 0);  // absent: no shape term
  EXPECT_EQ(ParseDeviceJson(DeviceToJson(d), "again.json").compute_efficiency.half_dim, 12.5);
  EXPECT_THAT(LoadBroken(Replace(with, "12.5", "-3"), ::testing::TempDir() + "/fitspeed_hd.json"),
              HasSubstr("efficiency.compute.half_dim"));
  EXPECT_THAT(
      LoadBroken(Replace(with, "12.5", "\"x\""), ::testing::TempDir() + "/fitspeed_hd2.json"),
      HasSubstr("efficiency.compute.half_dim"));
}

TEST(DeviceJson, TensorCurveNeedsTensorUnits) {
  // The K80 has neither TF32 nor FP16 tensor peaks: a tensor-unit curve is an error.
  const std::string k80 = CatalogDeviceJson("k80");
  const std::string with_tensor =
      Replace(k80, "\"memory\": {\n      \"points\"",
              "\"tensor\": {\"points\": [[1e9, 0.3]], \"source\": \"test\"},\n    "
              "\"memory\": {\n      \"points\"");
  ASSERT_NE(with_tensor, k80);
  EXPECT_THAT(LoadBroken(with_tensor, ::testing::TempDir() + "/fitspeed_k80_tensor.json"),
              HasSubstr("efficiency.tensor"));
  // On the T4 (FP16 tensor cores) the same curve loads.
  const std::string t4 = Replace(CatalogDeviceJson("t4"), "\"memory\": {\n      \"points\"",
                                 "\"tensor\": {\"points\": [[1e9, 0.3]], \"source\": "
                                 "\"test\"},\n    \"memory\": {\n      \"points\"");
  EXPECT_EQ(LoadBroken(t4, ::testing::TempDir() + "/fitspeed_t4_tensor.json"), "");
}

TEST(DeviceJson, Fp8CurveNeedsFp8UnitsAndCurvesSayWhichGpusKernelsTheyCameFrom) {
  // h200: a fitted FP8 curve and "from" on its matrix curves (the H200
  // GEMM table for tensor and FP8, the V100's for FP32 compute); both round-trip.
  const Device h200 = LoadDevice("h200");
  ASSERT_FALSE(h200.fp8_efficiency.points.empty());
  EXPECT_EQ(h200.fp8_efficiency.from, "H200");
  EXPECT_EQ(h200.tensor_efficiency.from, "H200");
  EXPECT_EQ(h200.compute_efficiency.from, "V100");
  EXPECT_EQ(h200.memory_efficiency.from, "");  // plateaus are not kernel-curve fits
  const Device again = ParseDeviceJson(DeviceToJson(h200), "again.json");
  EXPECT_EQ(again.fp8_efficiency.points.size(), h200.fp8_efficiency.points.size());
  EXPECT_EQ(again.fp8_efficiency.from, "H200");
  EXPECT_EQ(again.bases.at("efficiency.fp8"), "fitted");
  // Its attention curves (the H200's cuDNN rows) round-trip too.
  ASSERT_FALSE(h200.attention_forward_efficiency.points.empty());
  EXPECT_EQ(again.attention_forward_efficiency.points.size(),
            h200.attention_forward_efficiency.points.size());
  EXPECT_EQ(again.attention_backward_efficiency.from, "H200");
  EXPECT_EQ(again.bases.at("efficiency.attention_backward"), "fitted");
  // The A100 has no FP8 units: an FP8 curve in its file is an error naming the field.
  const std::string a100 = CatalogDeviceJson("a100");
  const std::string with_fp8 =
      Replace(a100, "\"winograd\": {",
              "\"fp8\": {\"points\": [[1e9, 0.3]], \"source\": \"test\"},\n    \"winograd\": {");
  ASSERT_NE(with_fp8, a100);
  EXPECT_THAT(LoadBroken(with_fp8, ::testing::TempDir() + "/fitspeed_a100_fp8.json"),
              HasSubstr("efficiency.fp8"));
  // An attention curve needs 16-bit tensor units: the K80 has none.
  const std::string k80 = CatalogDeviceJson("k80");
  const std::string with_attention =
      Replace(k80, "\"memory\": {\n      \"points\"",
              "\"attention_forward\": {\"points\": [[1e9, 0.3]], \"source\": \"test\"},\n    "
              "\"memory\": {\n      \"points\"");
  ASSERT_NE(with_attention, k80);
  EXPECT_THAT(LoadBroken(with_attention, ::testing::TempDir() + "/fitspeed_k80_attention.json"),
              HasSubstr("efficiency.attention_forward"));
  // "from" must name a GPU.
  const std::string bad_from = Replace(a100, "\"from\": \"V100\"", "\"from\": 7");
  ASSERT_NE(bad_from, a100);
  EXPECT_THAT(LoadBroken(bad_from, ::testing::TempDir() + "/fitspeed_a100_from.json"),
              HasSubstr(".from"));
}

TEST(DeviceJson, TensorLayoutIsNhwcOrNchwOnADeviceWithTensorUnits) {
  const std::string t4 = CatalogDeviceJson("t4");
  ASSERT_NE(t4.find("\"value\": \"nhwc\""), std::string::npos);
  EXPECT_THAT(LoadBroken(Replace(t4, "\"value\": \"nhwc\"", "\"value\": \"nwhc\""),
                         ::testing::TempDir() + "/fitspeed_t4_layout.json"),
              HasSubstr("tensor_layout.value"));
  // The K80 has no tensor units: a tensor layout is an error.
  const std::string k80 = CatalogDeviceJson("k80");
  const std::string with_layout = Replace(k80, "\"memory\": {",
                                          "\"tensor_layout\": {\"value\": \"nhwc\", \"source\": "
                                          "\"test\"},\n  \"memory\": {");
  ASSERT_NE(with_layout, k80);
  EXPECT_THAT(LoadBroken(with_layout, ::testing::TempDir() + "/fitspeed_k80_layout.json"),
              HasSubstr("tensor_layout"));
  // Written back with its source and read again unchanged.
  const Device d = LoadDevice("a100");
  const Device again = ParseDeviceJson(DeviceToJson(d), "again.json");
  EXPECT_EQ(again.tensor_layout, "nhwc");
  EXPECT_EQ(again.sources.at("tensor_layout"), d.sources.at("tensor_layout"));
}

TEST(DeviceJson, OptionalPricePerHourIsPositiveAndWrittenBack) {
  const std::string t4 = CatalogDeviceJson("t4");
  EXPECT_FALSE(LoadDevice("t4").price_per_hour.has_value());  // the catalog ships no prices
  const std::string priced = Replace(
      t4, "\"memory\": {",
      "\"price_per_hour\": {\"value\": 0.526, \"source\": \"my contract\"},\n  \"memory\": {");
  ASSERT_NE(priced, t4);
  const Device d = ParseDeviceJson(priced, "priced.json");
  ASSERT_TRUE(d.price_per_hour.has_value());
  EXPECT_DOUBLE_EQ(*d.price_per_hour, 0.526);
  const Device again = ParseDeviceJson(DeviceToJson(d), "again.json");
  EXPECT_EQ(again.price_per_hour, d.price_per_hour);
  EXPECT_EQ(again.sources.at("price_per_hour"), "my contract");
  EXPECT_THAT(LoadBroken(Replace(priced, "\"value\": 0.526", "\"value\": -1"),
                         ::testing::TempDir() + "/fitspeed_t4_price.json"),
              HasSubstr("price_per_hour"));
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

// Every field of two devices, with the name of the device in failures.
void ExpectSameDevice(const Device& a, const Device& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.cores, b.cores);
  EXPECT_EQ(a.fp32_flops_per_s, b.fp32_flops_per_s);
  EXPECT_EQ(a.tf32_flops_per_s, b.tf32_flops_per_s);
  EXPECT_EQ(a.tensor16_flops_per_s, b.tensor16_flops_per_s);
  EXPECT_EQ(a.tensor16_type, b.tensor16_type);
  EXPECT_EQ(a.fp8_flops_per_s, b.fp8_flops_per_s);
  EXPECT_EQ(a.int8_flops_per_s, b.int8_flops_per_s);
  EXPECT_EQ(a.fp4_flops_per_s, b.fp4_flops_per_s);
  EXPECT_EQ(a.scale_up_domain, b.scale_up_domain);
  EXPECT_EQ(a.fp32_matrix_on_tensor16, b.fp32_matrix_on_tensor16);
  EXPECT_EQ(a.memory_bandwidth_bytes_per_s, b.memory_bandwidth_bytes_per_s);
  EXPECT_EQ(a.memory_capacity_bytes, b.memory_capacity_bytes);
  for (const auto& [ca, cb] : {std::pair{&a.compute_efficiency, &b.compute_efficiency},
                               std::pair{&a.memory_efficiency, &b.memory_efficiency}}) {
    ASSERT_EQ(ca->points.size(), cb->points.size());
    for (size_t i = 0; i < ca->points.size(); ++i) {
      EXPECT_EQ(ca->points[i].size, cb->points[i].size);
      EXPECT_EQ(ca->points[i].efficiency, cb->points[i].efficiency);
    }
  }
  EXPECT_EQ(a.kernel_launch_s, b.kernel_launch_s);
  EXPECT_EQ(a.step_host_s, b.step_host_s);
  EXPECT_EQ(a.batch_multiple, b.batch_multiple);
  EXPECT_EQ(a.feature_multiple_fp32, b.feature_multiple_fp32);
  EXPECT_EQ(a.feature_multiple_tensor, b.feature_multiple_tensor);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) {
    EXPECT_EQ(a.links[i].name, b.links[i].name);
    EXPECT_EQ(a.links[i].connects, b.links[i].connects);
    EXPECT_EQ(a.links[i].bandwidth_bytes_per_s, b.links[i].bandwidth_bytes_per_s);
    EXPECT_EQ(a.links[i].latency_s, b.links[i].latency_s);
  }
  EXPECT_EQ(a.sources, b.sources);
  EXPECT_EQ(a.bases, b.bases);  // links' included
  for (const auto& [ca, cb] : {std::pair{&a.winograd_efficiency, &b.winograd_efficiency},
                               std::pair{&a.depthwise_efficiency, &b.depthwise_efficiency},
                               std::pair{&a.tensor_efficiency, &b.tensor_efficiency}}) {
    ASSERT_EQ(ca->points.size(), cb->points.size());
    for (size_t i = 0; i < ca->points.size(); ++i) {
      EXPECT_EQ(ca->points[i].efficiency, cb->points[i].efficiency);
    }
  }
  EXPECT_EQ(a.calibrated_on, b.calibrated_on);
  const DeviceCalibration& x = a.calibration;
  const DeviceCalibration& y = b.calibration;
  EXPECT_EQ(x.method, y.method);
  EXPECT_EQ(x.confidence, y.confidence);
  ASSERT_EQ(x.parameters.size(), y.parameters.size());
  // NaN (not estimated) must come back as NaN.
  auto same = [](double u, double v) { return (std::isnan(u) && std::isnan(v)) || u == v; };
  for (size_t i = 0; i < x.parameters.size(); ++i) {
    EXPECT_EQ(x.parameters[i].name, y.parameters[i].name);
    EXPECT_EQ(x.parameters[i].value, y.parameters[i].value);
    EXPECT_TRUE(same(x.parameters[i].std_error, y.parameters[i].std_error));
    EXPECT_TRUE(same(x.parameters[i].ci_low, y.parameters[i].ci_low));
    EXPECT_TRUE(same(x.parameters[i].ci_high, y.parameters[i].ci_high));
  }
  auto same_error = [](const DeviceCalibration::Error& u, const DeviceCalibration::Error& v) {
    return u.cases == v.cases && u.rms == v.rms && u.median_abs == v.median_abs &&
           u.max_abs == v.max_abs;
  };
  EXPECT_TRUE(same_error(x.error_before, y.error_before));
  EXPECT_TRUE(same_error(x.error_after, y.error_after));
  ASSERT_EQ(x.error_loo.has_value(), y.error_loo.has_value());
  if (x.error_loo) {
    EXPECT_TRUE(same_error(*x.error_loo, *y.error_loo));
  }
}

TEST(DeviceToJson, EveryCatalogDeviceRoundTrips) {
  for (const std::string& name : CatalogDeviceNames()) {
    if (name == "host") continue;
    const Device d = ParseDeviceJson(CatalogDeviceJson(name), name + ".json");
    // Every sourced field of the file was recorded: the T4 FP32 peak's source is
    // the datasheet line of data/devices/t4.json.
    if (name == "t4") {
      EXPECT_EQ(d.sources.at("peak_flops_per_s.fp32"),
                "NVIDIA T4 datasheet: 8.1 TFLOPS single precision (FP32)");
      EXPECT_EQ(d.sources.count("links[1].bandwidth_bytes_per_s"), 1u);
    }
    const Device back = ParseDeviceJson(DeviceToJson(d), name + ".json");
    ExpectSameDevice(d, back);
    EXPECT_TRUE(back.calibrated_on.empty());
  }
}

// A calibrated device with every part of the "calibration" object set by hand.
Device CalibratedV100() {
  Device d = LoadDevice("v100-sxm2");
  d.calibrated_on = {"resnet50/v100-sxm2/fp32/x1/b256", "vgg16/v100-sxm2/fp32/x1/b64"};
  DeviceCalibration& c = d.calibration;
  c.method = "by hand";
  c.confidence = 0.9;
  c.parameters = {{"compute_scale", 0.875, 0.0125, 0.85, 0.9},
                  {"step_host_s", 0.002, std::nan(""), std::nan(""), std::nan("")}};
  c.error_before = {2, 0.25, 0.2, 0.3};
  c.error_after = {2, 0.05, 0.04, 0.06};
  c.error_loo = DeviceCalibration::Error{2, 0.125, 0.1, 0.15};
  return d;
}

TEST(DeviceToJson, CalibrationRoundTrips) {
  const Device d = CalibratedV100();
  const std::string text = DeviceToJson(d);
  EXPECT_THAT(text, HasSubstr("\"calibration\""));
  EXPECT_THAT(text, HasSubstr("\"stderr\": null"));
  const Device back = ParseDeviceJson(text, "calibrated.json");
  ExpectSameDevice(d, back);
  ASSERT_EQ(back.calibration.parameters.size(), 2u);
  EXPECT_EQ(back.calibration.parameters[0].value, 0.875);
  EXPECT_TRUE(std::isnan(back.calibration.parameters[1].std_error));
  ASSERT_TRUE(back.calibration.error_loo.has_value());
  EXPECT_EQ(back.calibration.error_loo->rms, 0.125);
}

TEST(DeviceToJson, FieldsWithoutASourceSayWhereTheyCameFrom) {
  Device d = LoadDevice("t4");
  d.sources.clear();
  d.origin = "probe:test";
  const Device back = ParseDeviceJson(DeviceToJson(d), "t4.json");
  EXPECT_EQ(back.sources.at("memory.capacity_bytes"), "not recorded (written from probe:test)");
}

TEST(DeviceJson, BrokenCalibrationNamesTheField) {
  const std::string valid = DeviceToJson(CalibratedV100());
  const std::string path = ::testing::TempDir() + "/fitspeed_calibration.json";
  // The second case key made equal to the first.
  std::string message = LoadBroken(
      Replace(valid, "vgg16/v100-sxm2/fp32/x1/b64", "resnet50/v100-sxm2/fp32/x1/b256"), path);
  EXPECT_THAT(message, HasSubstr("calibration.cases[1]"));
  EXPECT_THAT(message, HasSubstr("listed twice"));
  message = LoadBroken(Replace(valid, "\"compute_scale\"", "\"peak_scale\""), path);
  EXPECT_THAT(message, HasSubstr("calibration.parameters.peak_scale"));
  EXPECT_THAT(message, HasSubstr("unknown key"));
  message = LoadBroken(Replace(valid, "\"value\": 0.875", "\"value\": -0.875"), path);
  EXPECT_THAT(message, HasSubstr("calibration.parameters.compute_scale.value"));
  EXPECT_THAT(message, HasSubstr("> 0"));
  message = LoadBroken(Replace(valid, "\"method\": \"by hand\",", ""), path);
  EXPECT_THAT(message, HasSubstr("calibration.method"));
  EXPECT_THAT(message, HasSubstr("missing"));
}

}  // namespace
}  // namespace fitspeed
