// Links files ("fitspeed.links/1"): measured links written once and given to
// any device; broken files fail naming file, line and field.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

// Two links, one per line group: the lines the errors below must name.
constexpr const char* kLinks = R"({
  "schema": "fitspeed.links/1",
  "links": [
    {
      "name": "mpi",
      "connects": "devices",
      "bandwidth_bytes_per_s": {"value": 1.2e10, "source": "fitspeed linkbench: 2 ranks"},
      "latency_s": {"value": 1e-6, "source": "fitspeed linkbench: alpha/2"}
    },
    {
      "name": "ethernet",
      "connects": "network",
      "bandwidth_bytes_per_s": {"value": 1.25e9, "source": "10 Gbit/s"},
      "latency_s": {"value": 5e-5, "source": "assumption"}
    }
  ]
}
)";

// 1-based line of the first occurrence of `what` in `text`.
int LineOfLinksFile(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

std::string ReplaceLinksFile(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// The DataError's message for `text` as the links file `name` ("" when it parsed).
std::string Broken(const std::string& text, const std::string& name = "links.json") {
  try {
    ParseLinksJson(text, name);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(LinksFile, ParsesLinksWithTheirSources) {
  const LinksFile f = ParseLinksJson(kLinks, "links.json");
  ASSERT_EQ(f.links.size(), 2u);
  EXPECT_EQ(f.links[0].name, "mpi");
  EXPECT_EQ(f.links[0].connects, "devices");
  EXPECT_DOUBLE_EQ(f.links[0].bandwidth_bytes_per_s, 1.2e10);
  EXPECT_DOUBLE_EQ(f.links[0].latency_s, 1e-6);
  EXPECT_EQ(f.links[1].connects, "network");
  EXPECT_DOUBLE_EQ(f.links[1].latency_s, 5e-5);
  EXPECT_EQ(f.sources.at("links[0].latency_s"), "fitspeed linkbench: alpha/2");
  EXPECT_EQ(f.sources.at("links[1].bandwidth_bytes_per_s"), "10 Gbit/s");
  EXPECT_EQ(f.sources.size(), 4u);
}

TEST(LinksFile, ANetworkLinkIsTheNodesUnlessPerDevice) {
  EXPECT_FALSE(ParseLinksJson(kLinks, "links.json").links[1].per_device);
  const std::string per_device = ReplaceLinksFile(kLinks, R"("connects": "network",)",
                                                  R"("connects": "network", "per": "device",)");
  const LinksFile f = ParseLinksJson(per_device, "links.json");
  EXPECT_TRUE(f.links[1].per_device);
  EXPECT_TRUE(ParseLinksJson(LinksToJson(f), "written").links[1].per_device);
  EXPECT_FALSE(ParseLinksJson(ReplaceLinksFile(kLinks, R"("connects": "network",)",
                                               R"("connects": "network", "per": "node",)"),
                              "links.json")
                   .links[1]
                   .per_device);
  EXPECT_THAT(Broken(ReplaceLinksFile(kLinks, R"("connects": "network",)",
                                      R"("connects": "network", "per": "rack",)")),
              HasSubstr("links[1].per"));
  EXPECT_THAT(Broken(ReplaceLinksFile(kLinks, R"("connects": "devices",)",
                                      R"("connects": "devices", "per": "device",)")),
              HasSubstr("only a link that connects network"));
}

TEST(LinksFile, FindsTheLinkOfWhatItConnects) {
  const LinksFile f = ParseLinksJson(kLinks, "links.json");
  ASSERT_NE(f.FindLink("devices"), nullptr);
  EXPECT_EQ(f.FindLink("devices")->name, "mpi");
  ASSERT_NE(f.FindLink("network"), nullptr);
  EXPECT_EQ(f.FindLink("network")->name, "ethernet");
  EXPECT_EQ(f.FindLink("host"), nullptr);
  EXPECT_EQ(LinksFile().FindLink("devices"), nullptr);
}

TEST(LinksFile, WritesWhatItReadsBack) {
  const LinksFile f = ParseLinksJson(kLinks, "links.json");
  const std::string text = LinksToJson(f);
  EXPECT_THAT(text, HasSubstr("\"schema\": \"fitspeed.links/1\""));
  const LinksFile g = ParseLinksJson(text, "written");
  ASSERT_EQ(g.links.size(), f.links.size());
  for (size_t i = 0; i < f.links.size(); ++i) {
    EXPECT_EQ(g.links[i].name, f.links[i].name);
    EXPECT_EQ(g.links[i].connects, f.links[i].connects);
    EXPECT_EQ(g.links[i].bandwidth_bytes_per_s, f.links[i].bandwidth_bytes_per_s);
    EXPECT_EQ(g.links[i].latency_s, f.links[i].latency_s);
  }
  EXPECT_EQ(g.sources, f.sources);
  EXPECT_EQ(LinksToJson(g), text);
}

TEST(LinksFile, AQuantityWithoutASourceIsWrittenAsNotRecorded) {
  LinksFile f;
  f.links.push_back({{3e9, 2e-6}, "mpi", "devices"});
  const LinksFile g = ParseLinksJson(LinksToJson(f), "written");
  ASSERT_EQ(g.links.size(), 1u);
  EXPECT_DOUBLE_EQ(g.links[0].bandwidth_bytes_per_s, 3e9);
  EXPECT_THAT(g.sources.at("links[0].latency_s"), HasSubstr("not recorded"));
}

TEST(LinksFile, RefusesToWriteOrApplyWhatItCouldNotReadBack) {
  LinksFile f;
  f.links.push_back({{std::numeric_limits<double>::infinity(), 1e-6}, "mpi", "devices"});
  EXPECT_THROW(LinksToJson(f), UsageError);
  Device v100 = LoadDevice("v100-sxm2");
  EXPECT_THROW(ApplyLinks(v100, f), UsageError);
  f.links[0] = {{1e10, -1e-6}, "mpi", "devices"};
  try {
    LinksToJson(f);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("links[0] ('mpi')"));
  }
}

TEST(LinksFile, ReadsAFileAndNamesAnUnreadableOne) {
  const std::string path = ::testing::TempDir() + "/fitspeed_links_file_test.json";
  std::ofstream(path) << kLinks;
  const LinksFile f = ReadLinksJsonFile(path);
  std::remove(path.c_str());
  EXPECT_EQ(f.links.size(), 2u);
  try {
    ReadLinksJsonFile(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
}

TEST(LinksFile, TakesTheLinksOfADeviceFile) {
  const LinksFile f = ParseLinksJson(CatalogDeviceJson("v100-sxm2"), "v100-sxm2.json");
  ASSERT_EQ(f.links.size(), 2u);
  EXPECT_EQ(f.links[0].name, "nvlink");
  EXPECT_DOUBLE_EQ(f.links[0].bandwidth_bytes_per_s, 1.5e11);  // V100 datasheet, per direction
  EXPECT_EQ(f.links[1].connects, "host");
  EXPECT_THAT(f.sources.at("links[0].bandwidth_bytes_per_s"), HasSubstr("datasheet"));
  EXPECT_EQ(f.sources.count("memory.bandwidth_bytes_per_s"), 0u);  // links only
}

TEST(LinksFile, MissingFieldNamesFileLineAndField) {
  const std::string broken = ReplaceLinksFile(
      kLinks,
      ",\n      \"latency_s\": {\"value\": 1e-6, \"source\": \"fitspeed linkbench: alpha/2\"}", "");
  const std::string message = Broken(broken);
  EXPECT_THAT(message, HasSubstr("field 'links[0].latency_s'"));
  EXPECT_THAT(message, HasSubstr("missing"));
  // The line of the link that lacks it.
  EXPECT_THAT(message, HasSubstr(fmt::format("links.json:{}:",
                                             LineOfLinksFile(broken, "{\n      \"name\""))));
}

TEST(LinksFile, NegativeBandwidthNamesFileLineAndField) {
  const std::string broken = ReplaceLinksFile(kLinks, "\"value\": 1.25e9", "\"value\": -1.25e9");
  const std::string message = Broken(broken);
  EXPECT_THAT(message, HasSubstr("field 'links[1].bandwidth_bytes_per_s.value'"));
  EXPECT_THAT(message, HasSubstr("must be > 0"));
  EXPECT_THAT(message,
              HasSubstr(fmt::format("links.json:{}:", LineOfLinksFile(broken, "-1.25e9"))));
}

TEST(LinksFile, WrongSchemaNamesFileLineAndField) {
  const std::string broken = ReplaceLinksFile(kLinks, "fitspeed.links/1", "fitspeed.links/2");
  const std::string message = Broken(broken);
  EXPECT_THAT(message, HasSubstr("links.json:2: field 'schema'"));
  EXPECT_THAT(message, HasSubstr("expected \"fitspeed.links/1\""));
  EXPECT_THAT(Broken(ReplaceLinksFile(kLinks, "  \"schema\": \"fitspeed.links/1\",\n", "")),
              HasSubstr("field 'schema': missing"));
}

TEST(LinksFile, OtherBrokenRulesNameTheirField) {
  EXPECT_THAT(
      Broken(ReplaceLinksFile(kLinks, "\"connects\": \"network\"", "\"connects\": \"devices\"")),
      HasSubstr(fmt::format("links.json:{}: field 'links[1].connects': links[0] already "
                            "connects devices",
                            LineOfLinksFile(kLinks, "\"connects\": \"network\""))));
  EXPECT_THAT(
      Broken(ReplaceLinksFile(kLinks, "\"connects\": \"network\"", "\"connects\": \"nodes\"")),
      HasSubstr("field 'links[1].connects': expected cores, devices, host or network"));
  EXPECT_THAT(Broken("{\"schema\": \"fitspeed.links/1\", \"links\": []}"),
              HasSubstr("links.json:1: field 'links': expected a non-empty list of links"));
  EXPECT_THAT(Broken(ReplaceLinksFile(kLinks, "\"links\": [", "\"linkz\": [")),
              HasSubstr(fmt::format("links.json:{}: field 'linkz': unknown key",
                                    LineOfLinksFile(kLinks, "\"links\": ["))));
  EXPECT_THAT(Broken(ReplaceLinksFile(kLinks, "\"value\": 5e-5", "\"value\": \"50us\"")),
              HasSubstr("field 'links[1].latency_s.value': expected a number"));
}

TEST(LinksFile, NotJsonNamesFileAndLine) {
  // The comma after the first link's name removed: the parser stops at "connects".
  const std::string broken = ReplaceLinksFile(kLinks, "\"name\": \"mpi\",", "\"name\": \"mpi\"");
  const std::string message = Broken(broken);
  EXPECT_THAT(message, HasSubstr("malformed JSON"));
  EXPECT_THAT(message,
              HasSubstr(fmt::format("links.json:{}:",
                                    LineOfLinksFile(broken, "\"connects\": \"devices\""))));
  EXPECT_THAT(Broken("links: mpi 12 GB/s\n"), HasSubstr("links.json:1: malformed JSON"));
  EXPECT_THAT(Broken("[1, 2]"), HasSubstr("links.json:1: expected an object, got [1,2]"));
}

TEST(LinksFile, BinaryJunkIsADataErrorNotACrash) {
  std::string junk;
  for (int i = 0; i < 512; ++i) junk += static_cast<char>((i * 151 + 7) % 256);
  EXPECT_THAT(Broken(junk), HasSubstr("malformed JSON"));
  EXPECT_THAT(Broken(std::string("{\"schema\": \"\xff\xfe\"}")), HasSubstr("links.json:1:"));
  EXPECT_THAT(Broken(""), HasSubstr("malformed JSON"));
}

TEST(ApplyLinks, ReplacesTheDevicesLinkOfV100AndKeepsItsOthers) {
  Device v100 = LoadDevice("v100-sxm2");
  const Device before = v100;
  LinksFile f = ParseLinksJson(kLinks, "links.json");
  f.links.pop_back();  // the "devices" link only
  ApplyLinks(v100, f);

  ASSERT_EQ(v100.links.size(), 2u);
  const DeviceLink* devices = v100.FindLink("devices");
  ASSERT_NE(devices, nullptr);
  EXPECT_EQ(devices->name, "mpi");
  EXPECT_DOUBLE_EQ(devices->bandwidth_bytes_per_s, 1.2e10);
  EXPECT_DOUBLE_EQ(devices->latency_s, 1e-6);
  EXPECT_EQ(v100.sources.at("links[0].bandwidth_bytes_per_s"), "fitspeed linkbench: 2 ranks");
  EXPECT_EQ(v100.sources.at("links[0].latency_s"), "fitspeed linkbench: alpha/2");
  // The catalog's basis of the replaced link is gone (the file gives sources only);
  // the kept link keeps its own.
  EXPECT_EQ(before.bases.at("links[0].bandwidth_bytes_per_s"), "datasheet");
  EXPECT_EQ(v100.bases.count("links[0].bandwidth_bytes_per_s"), 0u);
  EXPECT_EQ(v100.bases.at("links[1].bandwidth_bytes_per_s"), "datasheet");
  // The PCIe host link stays, with its datasheet source.
  const DeviceLink* host = v100.FindLink("host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->name, "pcie");
  EXPECT_DOUBLE_EQ(host->bandwidth_bytes_per_s, 1.575e10);  // PCIe 3.0 x16
  EXPECT_EQ(v100.sources.at("links[1].bandwidth_bytes_per_s"),
            before.sources.at("links[1].bandwidth_bytes_per_s"));
  // Nothing else changes.
  EXPECT_EQ(v100.name, before.name);
  EXPECT_EQ(v100.origin, before.origin);
  EXPECT_EQ(v100.description, before.description);
  EXPECT_EQ(v100.fp32_flops_per_s, before.fp32_flops_per_s);
  for (const auto& [field, text] : before.sources) {
    if (field.rfind("links[0].", 0) != 0) {
      EXPECT_EQ(v100.sources.at(field), text) << field;
    }
  }
  // Written and read back, the device keeps the file's sources.
  const Device reread = ParseDeviceJson(DeviceToJson(v100), "written");
  EXPECT_EQ(reread.sources.at("links[0].latency_s"), "fitspeed linkbench: alpha/2");
  EXPECT_EQ(reread.FindLink("devices")->name, "mpi");
}

TEST(ApplyLinks, AddsALinkTheDeviceLacks) {
  Device v100 = LoadDevice("v100-sxm2");
  ApplyLinks(v100, ParseLinksJson(kLinks, "links.json"));
  ASSERT_EQ(v100.links.size(), 3u);
  EXPECT_EQ(v100.links[2].name, "ethernet");
  EXPECT_EQ(v100.links[2].connects, "network");
  EXPECT_EQ(v100.sources.at("links[2].bandwidth_bytes_per_s"), "10 Gbit/s");
  EXPECT_EQ(v100.links[0].name, "mpi");
}

TEST(ApplyLinks, ALinkWithoutSourceLeavesNoStaleSource) {
  Device v100 = LoadDevice("v100-sxm2");
  LinksFile f;
  f.links.push_back({{2e10, 3e-6}, "measured", "devices"});
  ApplyLinks(v100, f);
  EXPECT_EQ(v100.sources.count("links[0].latency_s"), 0u);
  EXPECT_THAT(DeviceToJson(v100), HasSubstr("not recorded (written from catalog:v100-sxm2)"));
}

}  // namespace
}  // namespace fitspeed
