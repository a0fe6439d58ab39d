// The communication model of a links file, writing a links file, and the
// device catalog's writer (fitspeed/device/device.h), against numbers set by
// hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

DeviceLink Named(const std::string& name, const std::string& connects, double bandwidth,
                 double latency) {
  DeviceLink l;
  l.name = name;
  l.connects = connects;
  l.bandwidth_bytes_per_s = bandwidth;
  l.latency_s = latency;
  return l;
}

TEST(CommModelFromLinks, BothLinksGiveTheHierarchicalAllReduce) {
  LinksFile file;
  file.links = {Named("ib", "network", 1.25e9, 5e-5), Named("nvlink", "devices", 1.2e10, 1e-6)};
  const CommModel comm = CommModelFromLinks(file, "links.json", 4);
  EXPECT_EQ(comm.algorithm, AllReduceAlgorithm::kHierarchical);
  EXPECT_EQ(comm.devices_per_node, 4);
  EXPECT_EQ(comm.intra_node.bandwidth_bytes_per_s, 1.2e10);
  EXPECT_EQ(comm.intra_node.latency_s, 1e-6);
  EXPECT_EQ(comm.inter_node.bandwidth_bytes_per_s, 1.25e9);
  EXPECT_EQ(comm.inter_node.latency_s, 5e-5);
}

TEST(CommModelFromLinks, ANetworkLinkAloneIsARingAtItsPace) {
  LinksFile file;
  file.links = {Named("ib", "network", 1.25e9, 5e-5)};
  const CommModel comm = CommModelFromLinks(file, "links.json", 0);
  EXPECT_EQ(comm.algorithm, AllReduceAlgorithm::kRing);
  EXPECT_EQ(comm.intra_node.bandwidth_bytes_per_s, 1.25e9);
  EXPECT_EQ(comm.intra_node.latency_s, 5e-5);
}

TEST(CommModelFromLinks, NeedsADevicesOrNetworkLink) {
  LinksFile file;
  file.links = {Named("pcie", "host", 1.6e10, 1e-5)};
  try {
    CommModelFromLinks(file, "host_only.json", 0);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("host_only.json"));
    EXPECT_THAT(e.what(), HasSubstr("\"devices\" or \"network\""));
  }
}

TEST(WriteLinksJsonFile, WritesWhatReadLinksJsonFileReadsBack) {
  LinksFile file;
  file.links = {Named("mpi", "devices", 1.2e10, 1e-6)};
  file.sources["links[0].bandwidth_bytes_per_s"] = "hand";
  file.sources["links[0].latency_s"] = "hand too";
  const std::string path = ::testing::TempDir() + "/fitspeed_write_links_test.json";
  WriteLinksJsonFile(path, file);
  const LinksFile back = ReadLinksJsonFile(path);
  ASSERT_EQ(back.links.size(), 1u);
  EXPECT_EQ(back.links[0].bandwidth_bytes_per_s, 1.2e10);
  EXPECT_EQ(back.links[0].latency_s, 1e-6);
  EXPECT_EQ(back.sources.at("links[0].latency_s"), "hand too");
  EXPECT_THROW(WriteLinksJsonFile("/no/such/dir/links.json", file), InputError);
}

// A device with round numbers: 15.7 TFLOPS FP32, 125 TFLOPS FP16, 900 GB/s,
// 16 GiB, one NVLink of 150 GB/s.
Device RoundDevice() {
  Device d;
  d.name = "round";
  d.description = "a device of round numbers";
  d.kind = "gpu";
  d.origin = "test";
  d.cores = 1;
  d.fp32_flops_per_s = 15.7e12;
  d.tensor16_flops_per_s = 125e12;
  d.tensor16_type = "fp16";
  d.memory_bandwidth_bytes_per_s = 900e9;
  d.memory_capacity_bytes = 16.0 * (1u << 30);
  d.compute_efficiency.points = {{1e6, 0.5}, {1e9, 0.8}};
  d.memory_efficiency.points = {{1e4, 0.3}, {1e8, 0.9}};
  d.kernel_launch_s = 5e-6;
  d.step_host_s = 2e-3;
  d.links = {Named("nvlink", "devices", 1.5e11, 1e-6)};
  return d;
}

TEST(WriteDevices, CsvRowsInTeraflopsGigabytesAndGibibytes) {
  std::ostringstream out;
  WriteDevices(out, {RoundDevice()}, OutputFormat::kCsv);
  // 15.7e12/1e12 = 15.7 TFLOPS; no TF32: "-"; 900e9/1e9 = 900 GB/s; 16 GiB;
  // 1.5e11/1e9 = 150 GB/s.
  EXPECT_EQ(out.str(),
            "device,kind,cores,fp32_TFLOPS,tf32_TFLOPS,16bit_TFLOPS,memory_GB/s,memory_GiB,links\n"
            "round,gpu,1,15.7,-,125 fp16,900,16,nvlink(devices):150GB/s\n");
}

TEST(WriteDevices, TableInFullAddsTheDetail) {
  std::ostringstream brief, full;
  WriteDevices(brief, {RoundDevice()}, OutputFormat::kTable);
  WriteDevices(full, {RoundDevice()}, OutputFormat::kTable, /*detail=*/true);
  EXPECT_THAT(brief.str(), ::testing::Not(HasSubstr("kernel launch")));
  // 5e-6 s = 5 us; 2e-3 s = 2 ms.
  EXPECT_THAT(full.str(), HasSubstr("kernel launch: 5 us, host overhead per step: 2 ms\n"));
  EXPECT_THAT(full.str(), HasSubstr("compute efficiency (FLOPs, fraction): (1000000, 0.5) "
                                    "(1.00e+09, 0.8)\n"));
}

TEST(WriteDevices, JsonListsEveryDevice) {
  std::ostringstream out;
  WriteDevices(out, {RoundDevice(), RoundDevice()}, OutputFormat::kJson);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "fitspeed.devices/1");
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["fp32_flops_per_s"], 15.7e12);
  EXPECT_TRUE(j["devices"][0]["tf32_flops_per_s"].is_null());  // 0: none
  EXPECT_EQ(j["devices"][0]["compute_efficiency"][1][1], 0.8);
  EXPECT_EQ(j["devices"][0]["links"][0]["bandwidth_bytes_per_s"], 1.5e11);
}

}  // namespace
}  // namespace fitspeed
