// Issue 30's accelerators in the catalog: their datasheet peaks (low
// precisions included), scale-up domains and sources, the parser's rules for
// the new fields, and the wider interval of a device nothing was measured on.
// Issue 32's: the accelerators of MLPerf Training submitters the catalog
// lacked, and the DGX network links of h100, a100 and a100-80gb.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/intervals.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr double kGiBCatalog = 1024.0 * 1024 * 1024;

// The figures each new file must carry, per device and dense (not sparse), as
// the vendor documents give them (each row's comment); 0: the device has none.
struct LowPrecisionSheet {
  const char* name;
  double bf16, fp8, int8, fp4;  // FLOP/s (INT8: op/s)
  double bandwidth;             // B/s
  double capacity_gib;
  int domain;  // scale_up_domain
};

const LowPrecisionSheet kIssue30Sheets[] = {
    // H200 datasheet (SXM): 1,979 TFLOPS BF16 and 3,958 FP8/INT8 with sparsity; 4.8 TB/s, 141 GB.
    {"h200", 989.5e12, 1979e12, 1979e12, 0, 4.8e12, 141, 8},
    // HGX B200 (8 GPUs): BF16 36, FP8 72, INT8 72 P with sparsity, FP4 72 P dense; 64 TB/s.
    {"b200", 2.25e15, 4.5e15, 4.5e15, 9e15, 8e12, 180, 8},
    // HGX B300 (8 GPUs): BF16 36, FP8 72 P with sparsity, FP4 108 P dense; INT8 2 POPS sparse.
    {"b300", 2.25e15, 4.5e15, 125e12, 13.5e15, 8e12, 288, 8},
    // GB200 NVL72 (72 GPUs): BF16 360, FP8 720, INT8 720, FP4 1,440 P with sparsity; 576 TB/s.
    {"gb200", 2.5e15, 5e15, 5e15, 10e15, 8e12, 186, 72},
    // GB300 NVL72 (72 GPUs): BF16 360, FP8 720 P with sparsity, FP4 1,080 P dense; INT8 24 POPS.
    {"gb300", 2.5e15, 5e15, 166.7e12, 15e15, 8e12, 288, 72},
    // MI300X data sheet: BF16 1,307.4, FP8 and INT8 2,614.9 dense; 5.3 TB/s, 192 GB.
    {"mi300x", 1307.4e12, 2614.9e12, 2614.9e12, 0, 5.3e12, 192, 8},
    // MI325X: the MI300X's compute; 6 TB/s, 256 GB.
    {"mi325x", 1307.4e12, 2614.9e12, 2614.9e12, 0, 6e12, 256, 8},
    // MI355X: BF16 2.5, FP8 5, FP4 10 PFLOPS dense; 8 TB/s, 288 GB.
    {"mi355x", 2516.6e12, 5033.2e12, 5033.2e12, 10066.4e12, 8e12, 288, 8},
    // Gaudi 2: 432 TFLOPS BF16, FP8 twice that (assumed); 2.46 TB/s, 96 GB.
    {"gaudi2", 432e12, 865e12, 0, 0, 2.46e12, 96, 8},
    // Gaudi 3: 1,835 TFLOPS BF16 and FP8; 3.67 TB/s, 128 GB.
    {"gaudi3", 1835e12, 1835e12, 0, 0, 3.67e12, 128, 8},
    // Cloud TPU docs per chip: v5e 197 TFLOPS bf16, 393 TOPS int8, 819 GBps, 16 GB; pod 256.
    {"tpu-v5e", 197e12, 0, 393e12, 0, 819e9, 16, 256},
    // v5p: 459 bf16, 918 int8, 2,765 GBps, 95 GiB; largest slice 6,144 chips.
    {"tpu-v5p", 459e12, 0, 918e12, 0, 2765e9, 95, 6144},
    // v6e: 918 bf16, 1,836 int8, 1,638 GBps, 32 GB; pod 256.
    {"tpu-v6e", 918e12, 0, 1836e12, 0, 1638e9, 32, 256},
    // L40S datasheet: 733 BF16, 1,466 FP8 and INT8 with sparsity; 864 GB/s, 48 GB; PCIe only.
    {"l40s", 362e12, 733e12, 733e12, 0, 864e9, 48, 0},
    // L4 datasheet: 242 BF16, 485 FP8 and INT8 with sparsity; 300 GB/s, 24 GB; PCIe only.
    {"l4", 121e12, 242.5e12, 242.5e12, 0, 300e9, 24, 0},
};

TEST(Issue30Catalog, EveryDeviceLoadsWithItsDenseLowPrecisionPeaks) {
  const std::vector<std::string> names = CatalogDeviceNames();
  for (const LowPrecisionSheet& s : kIssue30Sheets) {
    SCOPED_TRACE(s.name);
    EXPECT_NE(std::find(names.begin(), names.end(), s.name), names.end());
    const Device d = LoadDevice(s.name);
    EXPECT_NEAR(d.tensor16_flops_per_s, s.bf16, 1e-3 * s.bf16);
    EXPECT_EQ(d.tensor16_type, "bf16");
    EXPECT_NEAR(d.fp8_flops_per_s, s.fp8, 1e-3 * s.fp8);
    EXPECT_NEAR(d.int8_flops_per_s, s.int8, 1e-3 * s.int8);
    EXPECT_NEAR(d.fp4_flops_per_s, s.fp4, 1e-3 * s.fp4);
    EXPECT_DOUBLE_EQ(d.memory_bandwidth_bytes_per_s, s.bandwidth);
    EXPECT_DOUBLE_EQ(d.memory_capacity_bytes, s.capacity_gib * kGiBCatalog);
    EXPECT_EQ(d.scale_up_domain, s.domain);
    ASSERT_NE(d.FindLink("devices"), nullptr);
    EXPECT_NE(d.FindLink("network"), nullptr);
  }
}

TEST(Issue30Catalog, TheOlderDevicesGainTheirLowPrecisionPeaksAndDomains) {
  // H100 datasheet (SXM): 3,958 TFLOPS FP8 and TOPS INT8 with sparsity: 1,979 dense.
  const Device h100 = LoadDevice("h100");
  EXPECT_DOUBLE_EQ(h100.fp8_flops_per_s, 1979e12);
  EXPECT_DOUBLE_EQ(h100.int8_flops_per_s, 1979e12);
  EXPECT_EQ(h100.fp4_flops_per_s, 0);
  EXPECT_EQ(h100.scale_up_domain, 8);
  // A100 datasheet: 624 TOPS INT8 dense; no FP8 units.
  for (const char* a100 : {"a100", "a100-80gb"}) {
    const Device d = LoadDevice(a100);
    EXPECT_DOUBLE_EQ(d.int8_flops_per_s, 624e12) << a100;
    EXPECT_EQ(d.fp8_flops_per_s, 0) << a100;
    EXPECT_EQ(d.scale_up_domain, 8) << a100;
  }
  EXPECT_EQ(LoadDevice("v100-sxm3-32gb").scale_up_domain, 16);  // DGX-2: 16 on NVSwitch
  EXPECT_EQ(LoadDevice("t4").scale_up_domain, 0);               // PCIe cards: not stated
}

// The paths of the quantities that are counts or rules, not measurements, and
// carry a source without a basis.
bool RuleFieldCatalog(const std::string& field) {
  return field.rfind("tiles.", 0) == 0 || field == "cores" || field == "tensor_layout" ||
         field == "fp32_matrix_on_tensor16";
}

TEST(Issue30Catalog, EveryNumberHasASourceAndABasis) {
  for (const std::string& name : CatalogDeviceNames()) {
    if (name == "host") continue;
    SCOPED_TRACE(name);
    const Device d = LoadDevice(name);
    for (const char* peak : {"fp32", "tf32", "tensor16", "fp8", "int8", "fp4"}) {
      const std::string field = std::string("peak_flops_per_s.") + peak;
      const double value = std::string(peak) == "fp32"       ? d.fp32_flops_per_s
                           : std::string(peak) == "tf32"     ? d.tf32_flops_per_s
                           : std::string(peak) == "tensor16" ? d.tensor16_flops_per_s
                           : std::string(peak) == "fp8"      ? d.fp8_flops_per_s
                           : std::string(peak) == "int8"     ? d.int8_flops_per_s
                                                             : d.fp4_flops_per_s;
      EXPECT_EQ(d.sources.count(field), value > 0 ? 1u : 0u) << field;
    }
    for (const auto& [field, source] : d.sources) EXPECT_FALSE(source.empty()) << field;
  }
  for (const LowPrecisionSheet& s : kIssue30Sheets) {
    SCOPED_TRACE(s.name);
    const Device d = LoadDevice(s.name);
    for (const auto& [field, source] : d.sources) {
      if (RuleFieldCatalog(field)) continue;
      ASSERT_EQ(d.bases.count(field), 1u) << field;
      const std::string& basis = d.bases.at(field);
      // An assumption says so in its source; a carried curve says from where.
      EXPECT_EQ(basis == "assumed", source.rfind("assumption", 0) == 0) << field << ": " << source;
      if (basis == "carried") {
        EXPECT_THAT(source, StartsWith("carried: ")) << field;
      }
      if (field.rfind("efficiency.", 0) == 0) {
        EXPECT_TRUE(basis == "carried" || basis == "fitted" || basis == "assumed") << field;
      } else if (field.rfind("peak_flops_per_s.", 0) == 0 || field.rfind("memory.", 0) == 0) {
        EXPECT_TRUE(basis == "datasheet" || basis == "assumed") << field;
      }
    }
  }
}

TEST(Issue30Catalog, NothingIsFittedExceptTheL4sSweepAndTheH200sOwnTables) {
  for (const LowPrecisionSheet& s : kIssue30Sheets) {
    const Device d = LoadDevice(s.name);
    for (const auto& [field, basis] : d.bases) {
      if (basis != "fitted") continue;
      if (std::string(s.name) == "h200") {
        // This project's H200 tables (data/llm-gpu): the matrix curves from
        // gemm.csv, the attention curves from attention.csv, the
        // normalization plateau from memory_ops.csv.
        EXPECT_TRUE(field == "efficiency.tensor" || field == "efficiency.fp8" ||
                    field == "efficiency.attention_forward" ||
                    field == "efficiency.attention_backward" ||
                    field == "efficiency.memory_normalization")
            << field;
        EXPECT_THAT(d.sources.at(field), HasSubstr("H200")) << field;
        EXPECT_THAT(d.sources.at(field), HasSubstr("data/llm-gpu/")) << field;
        continue;
      }
      // NeuSight's element-wise and LayerNorm/softmax sweeps ran on an L4.
      EXPECT_EQ(std::string(s.name), "l4") << field;
      EXPECT_THAT(d.sources.at(field), HasSubstr("NVIDIA L4")) << field;
    }
  }
}

// 1-based line of the first occurrence of `needle` in `text`.
int LineOfCatalog(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

std::string ReplaceCatalog(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// The DataError message of parsing `text` as `path` ("" when it parses).
std::string ParseErrorCatalog(const std::string& text, const std::string& path) {
  try {
    ParseDeviceJson(text, path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(Issue30DeviceJson, BadLowPrecisionPeaksNameFileLineAndField) {
  const std::string h100 = CatalogDeviceJson("h100");
  const std::string fp8 = "\"fp8\": {\n      \"value\": 1.979e15";
  const std::string negative = ReplaceCatalog(h100, fp8, "\"fp8\": {\n      \"value\": -1.979e15");
  std::string message = ParseErrorCatalog(negative, "my-h100.json");
  EXPECT_THAT(message,
              HasSubstr(fmt::format("my-h100.json:{}:", LineOfCatalog(negative, "-1.979e15"))));
  EXPECT_THAT(message, HasSubstr("peak_flops_per_s.fp8.value"));
  EXPECT_THAT(message, HasSubstr("> 0"));

  const std::string int8 = "\"int8\": {\n      \"value\": 1.979e15";
  const std::string text = ReplaceCatalog(h100, int8, "\"int8\": {\n      \"value\": \"fast\"");
  message = ParseErrorCatalog(text, "my-h100.json");
  EXPECT_THAT(message, HasSubstr(fmt::format("my-h100.json:{}:", LineOfCatalog(text, "\"fast\""))));
  EXPECT_THAT(message, HasSubstr("peak_flops_per_s.int8.value"));
  EXPECT_THAT(message, HasSubstr("expected a number"));

  const std::string gb200 = CatalogDeviceJson("gb200");
  const size_t fp4 = gb200.find("\"fp4\": {");
  ASSERT_NE(fp4, std::string::npos);
  const size_t source = gb200.find("\"source\": ", fp4);
  const std::string no_source =
      gb200.substr(0, source) + gb200.substr(gb200.find('\n', source) + 1);
  message = ParseErrorCatalog(no_source, "my-gb200.json");
  EXPECT_THAT(message,
              HasSubstr(fmt::format("my-gb200.json:{}:", LineOfCatalog(no_source, "\"fp4\""))));
  EXPECT_THAT(message, HasSubstr("peak_flops_per_s.fp4.source"));
  EXPECT_THAT(message, HasSubstr("missing"));

  // A precision the schema does not know is a typo, not a new field.
  // (The peak's "fp8", not achievable_matmul's, which comes first.)
  const std::string fp6 =
      ReplaceCatalog(h100, "\"fp8\": {\n      \"value\"", "\"fp6\": {\n      \"value\"");
  message = ParseErrorCatalog(fp6, "my-h100.json");
  EXPECT_THAT(message, HasSubstr("peak_flops_per_s.fp6"));
  EXPECT_THAT(message, HasSubstr("unknown key"));
}

TEST(Issue30DeviceJson, ScaleUpDomainMustBeACount) {
  const std::string b200 = CatalogDeviceJson("b200");
  const std::string domain = "\"scale_up_domain\": {\n    \"value\": 8";
  for (const char* bad : {"0", "2.5", "-8", "\"eight\""}) {
    SCOPED_TRACE(bad);
    const std::string text =
        ReplaceCatalog(b200, domain, std::string("\"scale_up_domain\": {\n    \"value\": ") + bad);
    const std::string message = ParseErrorCatalog(text, "my-b200.json");
    EXPECT_THAT(message, HasSubstr("scale_up_domain.value"));
    EXPECT_THAT(message, HasSubstr(fmt::format("my-b200.json:{}:",
                                               LineOfCatalog(text, domain.substr(0, 20)) + 1)));
  }
}

TEST(Issue30DeviceJson, NewFieldsRoundTripThroughDeviceToJson) {
  for (const char* name : {"gb300", "tpu-v6e", "h100", "mi355x"}) {
    SCOPED_TRACE(name);
    const Device d = LoadDevice(name);
    const Device back = ParseDeviceJson(DeviceToJson(d), std::string(name) + ".json");
    EXPECT_EQ(back.fp8_flops_per_s, d.fp8_flops_per_s);
    EXPECT_EQ(back.int8_flops_per_s, d.int8_flops_per_s);
    EXPECT_EQ(back.fp4_flops_per_s, d.fp4_flops_per_s);
    EXPECT_EQ(back.scale_up_domain, d.scale_up_domain);
    EXPECT_EQ(back.sources, d.sources);
    EXPECT_EQ(back.bases, d.bases);
  }
  // A device without them writes none of them.
  const std::string t4 = DeviceToJson(LoadDevice("t4"));
  EXPECT_EQ(t4.find("\"fp8\""), std::string::npos);
  EXPECT_EQ(t4.find("scale_up_domain"), std::string::npos);
}

TEST(Issue30DevicesOutput, CsvAndJsonCarryTheNewFields) {
  std::ostringstream csv;
  WriteDevices(csv, {LoadDevice("t4"), LoadDevice("b200")}, OutputFormat::kCsv);
  const std::string header = csv.str().substr(0, csv.str().find('\n'));
  for (const char* column : {"fp8_TFLOPS", "int8_TOPS", "fp4_TFLOPS", "scale_up"}) {
    EXPECT_THAT(header, HasSubstr(column));
  }
  std::ostringstream json;
  WriteDevices(json, {LoadDevice("b200")}, OutputFormat::kJson);
  EXPECT_THAT(json.str(), HasSubstr("\"fp4_flops_per_s\": 9e+15"));
  EXPECT_THAT(json.str(), HasSubstr("\"scale_up_domain\": 8"));
}

TEST(Issue30Intervals, ADeviceWithoutPublishedCasesGetsAWiderIntervalThatSaysSo) {
  const IntervalTable& table = BuiltinIntervalTable();
  const PredictionInterval calibrated = table.For("gpu/tensor", 0.8);
  ASSERT_TRUE(calibrated.available);
  // Devices no published case of the table ran on (h200, b200, mi300x and l4
  // have MLPerf development cases since 2026-11-28: below).
  for (const char* name : {"b300", "gb300", "mi325x", "mi355x", "gaudi3"}) {
    SCOPED_TRACE(name);
    const Device d = LoadDevice(name);
    EXPECT_FALSE(HasPublishedCases(table, d));
    const PredictionInterval i = table.For(d, Precision::kMixed, 0.8);
    ASSERT_TRUE(i.available) << i.reason;
    EXPECT_THAT(i.basis, HasSubstr("uncalibrated"));
    EXPECT_THAT(i.basis, HasSubstr(name));
    EXPECT_GT(std::log(i.high_factor / i.low_factor),
              std::log(calibrated.high_factor / calibrated.low_factor));
    EXPECT_EQ(i.sources, calibrated.sources);  // the same published sources, shifted
  }
  // The catalog's devices keep their class's interval: those with published cases
  // and the four the table was reported for without any.
  for (const char* name : {"v100-sxm2", "a100", "t4", "h100", "v100-pcie"}) {
    SCOPED_TRACE(name);
    const PredictionInterval i = table.For(LoadDevice(name), Precision::kMixed, 0.8);
    EXPECT_EQ(i.basis, calibrated.basis);
    EXPECT_EQ(i.low_factor, calibrated.low_factor);
    EXPECT_EQ(i.high_factor, calibrated.high_factor);
  }
  // A TPU class has too few sources for any interval, widened or not.
  EXPECT_FALSE(table.For(LoadDevice("tpu-v6e"), Precision::kMixed, 0.8).available);
}

// ---- Issue 32 ------------------------------------------------------------------------

// The figures each new file must carry, dense (not sparse); 0: the device has
// none. `devices_link`: the link `--devices N` all-reduces over, per direction.
struct DatasheetIssue32 {
  const char* name;
  double fp32, tf32, tensor16;  // FLOP/s
  const char* tensor16_type;
  double bandwidth;  // B/s
  double capacity_gib;
  const char* devices_link;
  double devices_link_bandwidth;  // B/s
  int domain;
};

const DatasheetIssue32 kIssue32Sheets[] = {
    // A100 datasheet (80GB PCIe): 19.5 FP32, 156 TF32, 312 BF16 TFLOPS dense; 1,935 GB/s, 80 GB;
    // PCIe Gen4 64 GB/s both ways.
    {"a100-pcie-80gb", 19.5e12, 156e12, 312e12, "bf16", 1935e9, 80, "pcie", 32e9, 0},
    // A30 datasheet: 10.3 FP32, 82 TF32, 165 BF16 TFLOPS dense; 933 GB/s, 24 GB; PCIe Gen4.
    {"a30", 10.3e12, 82e12, 165e12, "bf16", 933e9, 24, "pcie", 32e9, 0},
    // A10 datasheet (no A10G datasheet; assumed equal): 31.2 FP32, 62.5 TF32, 125 BF16; 600 GB/s.
    {"a10g", 31.2e12, 62.5e12, 125e12, "bf16", 600e9, 24, "pcie", 32e9, 0},
    // L40 datasheet: 90.5 FP32, 90.5 TF32, 181.05 BF16 TFLOPS dense; 864 GB/s, 48 GB; PCIe Gen4.
    {"l40", 90.5e12, 90.5e12, 181.05e12, "bf16", 864e9, 48, "pcie", 32e9, 0},
    // H100 datasheet (PCIe): 51 FP32; 756 TF32 and 1,513 BF16 with sparsity; 2 TB/s, 80 GB;
    // PCIe Gen5 128 GB/s both ways.
    {"h100-pcie", 51e12, 378e12, 756.5e12, "bf16", 2e12, 80, "pcie", 64e9, 0},
    // RTX A5000 datasheet: 27.8 FP32, 222.2 tensor TFLOPS with sparsity; 768 GB/s, 24 GB;
    // NVLink bridge 112.5 GB/s both ways, two GPUs. TF32 assumed at a quarter of FP16.
    {"rtx-a5000", 27.8e12, 27.8e12, 111.1e12, "fp16", 768e9, 24, "nvlink", 56.25e9, 2},
    // Ada whitepaper (RTX 4090): 82.6 FP32; 165.2 FP16 tensor with FP32 accumulate (assumed);
    // 1,008 GB/s, 24 GB; PCIe 4.0 x16.
    {"rtx-4090", 82.6e12, 82.6e12, 165.2e12, "fp16", 1008e9, 24, "pcie", 32e9, 0},
    // AMD RX 7900 XTX: 61.4 FP32, 122.8 FP16 (assumed) TFLOPS; 960 GB/s, 24 GB; no TF32.
    {"rx-7900-xtx", 61.4e12, 0, 122.8e12, "fp16", 960e9, 24, "pcie", 32e9, 0},
};

TEST(Issue32Catalog, EveryDeviceLoadsWithItsDatasheetFigures) {
  const std::vector<std::string> names = CatalogDeviceNames();
  for (const DatasheetIssue32& s : kIssue32Sheets) {
    SCOPED_TRACE(s.name);
    EXPECT_NE(std::find(names.begin(), names.end(), s.name), names.end());
    const Device d = LoadDevice(s.name);
    EXPECT_NEAR(d.fp32_flops_per_s, s.fp32, 1e-3 * s.fp32);
    EXPECT_NEAR(d.tf32_flops_per_s, s.tf32, 1e-3 * s.tf32);
    EXPECT_NEAR(d.tensor16_flops_per_s, s.tensor16, 1e-3 * s.tensor16);
    EXPECT_EQ(d.tensor16_type, s.tensor16_type);
    EXPECT_DOUBLE_EQ(d.memory_bandwidth_bytes_per_s, s.bandwidth);
    EXPECT_DOUBLE_EQ(d.memory_capacity_bytes, s.capacity_gib * kGiBCatalog);
    const DeviceLink* devices = d.FindLink("devices");
    ASSERT_NE(devices, nullptr);
    EXPECT_EQ(devices->name, s.devices_link);
    EXPECT_DOUBLE_EQ(devices->bandwidth_bytes_per_s, s.devices_link_bandwidth);
    EXPECT_EQ(d.scale_up_domain, s.domain);
    // Single-node cards: the catalog gives them no network link (none was sourced).
    EXPECT_EQ(d.FindLink("network"), nullptr);
  }
}

TEST(Issue32Catalog, UnconfirmedFiguresAreAssumedAndTheCurvesCarried) {
  for (const DatasheetIssue32& s : kIssue32Sheets) {
    SCOPED_TRACE(s.name);
    const Device d = LoadDevice(s.name);
    for (const auto& [field, source] : d.sources) {
      if (RuleFieldCatalog(field)) continue;
      ASSERT_EQ(d.bases.count(field), 1u) << field;
      const std::string& basis = d.bases.at(field);
      EXPECT_EQ(basis == "assumed", source.rfind("assumption", 0) == 0) << field << ": " << source;
      if (field.rfind("efficiency.", 0) == 0) {
        // Nothing was measured on them: every curve is carried from another GPU.
        EXPECT_EQ(basis, "carried") << field;
        EXPECT_THAT(source, StartsWith("carried: ")) << field;
      } else if (field.rfind("peak_flops_per_s.", 0) == 0 || field.rfind("memory.", 0) == 0) {
        EXPECT_TRUE(basis == "datasheet" || basis == "assumed") << field;
      }
    }
  }
  // The figures not confirmed against a vendor document (their sources say why).
  EXPECT_EQ(LoadDevice("a10g").bases.at("peak_flops_per_s.tensor16"), "assumed");
  EXPECT_EQ(LoadDevice("a10g").bases.at("memory.bandwidth_bytes_per_s"), "assumed");
  EXPECT_EQ(LoadDevice("rtx-a5000").bases.at("peak_flops_per_s.tf32"), "assumed");
  EXPECT_EQ(LoadDevice("rtx-4090").bases.at("peak_flops_per_s.tensor16"), "assumed");
  EXPECT_EQ(LoadDevice("rx-7900-xtx").bases.at("peak_flops_per_s.tensor16"), "assumed");
  EXPECT_EQ(LoadDevice("l40").bases.at("peak_flops_per_s.tensor16"), "datasheet");
}

// The source and basis of the bandwidth of `device`'s link that connects `what`.
std::pair<std::string, std::string> LinkBandwidthSourceCatalog(const Device& device,
                                                               const std::string& what) {
  for (size_t i = 0; i < device.links.size(); ++i) {
    if (device.links[i].connects != what) continue;
    const std::string field = fmt::format("links[{}].bandwidth_bytes_per_s", i);
    return {device.sources.at(field), device.bases.at(field)};
  }
  ADD_FAILURE() << device.name << " has no " << what << " link";
  return {};
}

TEST(Issue32Catalog, DgxDevicesHaveOneNetworkLinkPerGpu) {
  // DGX H100: eight 400 Gb/s ConnectX-7, one per GPU: 400e9 / 8 = 50e9 B/s per
  // direction. DGX A100: eight 200 Gb/s HDR ConnectX-6: 25e9 B/s.
  const std::tuple<const char*, double, const char*> expected[] = {
      {"h100", 50e9, "ConnectX-7"},
      {"a100", 25e9, "ConnectX-6"},
      {"a100-80gb", 25e9, "ConnectX-6"}};
  for (const auto& [name, bandwidth, nic] : expected) {
    SCOPED_TRACE(name);
    const Device d = LoadDevice(name);
    const DeviceLink* network = d.FindLink("network");
    ASSERT_NE(network, nullptr);
    EXPECT_DOUBLE_EQ(network->bandwidth_bytes_per_s, bandwidth);
    const auto [source, basis] = LinkBandwidthSourceCatalog(d, "network");
    EXPECT_THAT(source, HasSubstr(nic));
    EXPECT_EQ(basis, "datasheet");
  }
}

TEST(Issue32Intervals, CardsWithoutAModeledCaseGetTheWiderIntervalOfAnUncalibratedDevice) {
  const IntervalTable& table = BuiltinIntervalTable();
  const PredictionInterval calibrated = table.For("gpu/tensor", 0.8);
  ASSERT_TRUE(calibrated.available);
  // The consumer cards ran only tinygrad's MLPerf code, which is not modeled:
  // no published case, so the widened interval.
  for (const char* name : {"rtx-4090", "rx-7900-xtx"}) {
    SCOPED_TRACE(name);
    const Device d = LoadDevice(name);
    EXPECT_FALSE(HasPublishedCases(table, d));
    const PredictionInterval i = table.For(d, Precision::kMixed, 0.8);
    ASSERT_TRUE(i.available) << i.reason;
    EXPECT_THAT(i.basis, HasSubstr("uncalibrated"));
    EXPECT_GT(std::log(i.high_factor / i.low_factor),
              std::log(calibrated.high_factor / calibrated.low_factor));
  }
}

TEST(Issue32Intervals, DevicesWithMlperfDevelopmentCasesKeepTheirClasssInterval) {
  // The MLPerf development split's errors are in the table (AddMlperfErrors):
  // the devices they ran on have published cases and take gpu/tensor's interval.
  const IntervalTable& table = BuiltinIntervalTable();
  const PredictionInterval calibrated = table.For("gpu/tensor", 0.8);
  ASSERT_TRUE(calibrated.available);
  for (const char* name :
       {"h100", "h200", "b200", "l4", "l40s", "a30", "a100-pcie-80gb", "h100-pcie", "l40"}) {
    SCOPED_TRACE(name);
    const Device d = LoadDevice(name);
    EXPECT_TRUE(HasPublishedCases(table, d));
    const PredictionInterval i = table.For(d, Precision::kMixed, 0.8);
    EXPECT_EQ(i.basis, calibrated.basis);
    EXPECT_EQ(i.low_factor, calibrated.low_factor);
    EXPECT_EQ(i.high_factor, calibrated.high_factor);
  }
}

// Issue 45: what the validation knows of a device is in its file. The lookups
// give what the C++ lists they replaced gave.
TEST(Issue45Catalog, AliasesNameTheDevicesTheTablesListsNamed) {
  // llm_cases.cc's list had {"NVIDIA H100-SXM5-80GB", "h100"}; mlperf_cases.cc's
  // {"A100-SXM-40GB", "a100"}; kernels.cc's CatalogDeviceOf {"H100", "h100"}.
  EXPECT_EQ(FindCatalogAlias("NVIDIA H100-SXM5-80GB")->device, "h100");
  EXPECT_EQ(FindCatalogAlias("A100-SXM-40GB")->device, "a100");
  EXPECT_EQ(FindCatalogAlias("H100")->device, "h100");
  // layer_check.cc's kGpuMatches had {"NVIDIA_A100_80GB_PCIe", "a100-80gb", "catalog
  // a100-80gb is the SXM4 part ..."}: the layer check reads '_' as ' '.
  const std::optional<CatalogAlias> a100 = FindCatalogAlias("NVIDIA A100 80GB PCIe");
  ASSERT_TRUE(a100.has_value());
  EXPECT_EQ(a100->device, "a100-80gb");
  EXPECT_THAT(a100->note, StartsWith("catalog a100-80gb is the SXM4 part (2039 GB/s, 400 W)"));
  // Left out of mlperf_cases.cc's list (tinygrad's runs), and NeuSight's L4
  // left out of kGpuMatches: no device claims them.
  EXPECT_FALSE(FindCatalogAlias("GeForce RTX 4090-24GB").has_value());
  EXPECT_FALSE(FindCatalogAlias("NVIDIA L4").has_value());
  // Every alias of every catalog device finds that device: none is claimed twice.
  for (const std::string& name : CatalogDeviceNames()) {
    if (name == "host") continue;
    for (const DeviceAlias& alias : LoadDevice(name).aliases) {
      EXPECT_EQ(FindCatalogAlias(alias.name)->device, name) << alias.name;
    }
  }
}

TEST(Issue45Catalog, CurvesFromAndClassIntervalAreWhatTheListsSaid) {
  // KernelGpus() listed h100 among the V100's carried devices and the H200's
  // ("the same GH100 chip on other boards"), fitted on none; MemorySweepGpus()
  // among the A100 80 GB PCIe's carried and the H200's.
  const Device h100 = LoadDevice("h100");
  EXPECT_TRUE(h100.kernel_curves_from.fitted.empty());
  EXPECT_EQ(h100.kernel_curves_from.carried, (std::vector<std::string>{"V100", "H200"}));
  EXPECT_EQ(h100.memory_curves_from.carried,
            (std::vector<std::string>{"NVIDIA A100 80GB PCIe", "H200"}));
  // t4: fitted on the DeepBench T4 and on NeuSight's Tesla T4, carried from none.
  const Device t4 = LoadDevice("t4");
  EXPECT_EQ(t4.kernel_curves_from.fitted, std::vector<std::string>{"T4"});
  EXPECT_TRUE(t4.kernel_curves_from.carried.empty());
  EXPECT_EQ(t4.memory_curves_from.fitted, std::vector<std::string>{"Tesla T4"});
  // intervals.cc's ClassIntervalDevicesIntervals() was {h100, p100, v100-pcie,
  // tpu-v3-8}: h100 keeps its class's interval, h200 (issue 30's) does not.
  EXPECT_TRUE(h100.class_interval);
  EXPECT_FALSE(LoadDevice("h200").class_interval);
  int keep = 0;
  for (const std::string& name : CatalogDeviceNames()) {
    if (name != "host") keep += LoadDevice(name).class_interval;
  }
  EXPECT_EQ(keep, 4);
}

}  // namespace
}  // namespace fitspeed
