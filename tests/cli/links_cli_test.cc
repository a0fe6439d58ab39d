// `--links FILE` of `sweep --device`, `project` and `plan`: measured links
// (schema fitspeed.links/1) in place of the device's or the command line's.
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

namespace {

using ::fitspeed::test::CliRun;
using ::fitspeed::test::RunCli;
using ::testing::HasSubstr;

// A links file with the given links (JSON objects), in a scratch path that
// carries the test's name.
class LinksFile {
 public:
  explicit LinksFile(const std::vector<std::string>& links) {
    path_ = ::testing::TempDir() + "/fitspeed_links_cli_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
            std::to_string(counter_++) + ".json";
    std::ofstream file(path_);
    file << "{\"schema\": \"fitspeed.links/1\", \"links\": [\n";
    for (size_t i = 0; i < links.size(); ++i) file << (i ? ",\n" : "") << links[i];
    file << "\n]}\n";
  }
  ~LinksFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

std::string Link(const std::string& connects, double bandwidth, double latency,
                 const std::string& source) {
  std::ostringstream text;
  text << "{\"name\": \"measured-" << connects << "\", \"connects\": \"" << connects
       << "\", \"bandwidth_bytes_per_s\": {\"value\": " << bandwidth << ", \"source\": \"" << source
       << "\"}, \"latency_s\": {\"value\": " << latency << ", \"source\": \"" << source
       << " latency\"}}";
  return text.str();
}

// The comm_s column of `sweep --output csv`, one value per batch.
std::vector<double> CommSeconds(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::istringstream h(line);
  for (std::string cell; std::getline(h, cell, ',');) header.push_back(cell);
  const size_t column =
      static_cast<size_t>(std::find(header.begin(), header.end(), "comm_s") - header.begin());
  EXPECT_LT(column, header.size());
  std::vector<double> values;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string cell;
    for (size_t i = 0; i <= column && std::getline(row, cell, ','); ++i) {
    }
    values.push_back(std::stod(cell));
  }
  return values;
}

constexpr const char* kSweep = "sweep resnet50 --device v100-sxm2 --batches 32,64,128 --devices 2";

TEST(LinksCli, SweepDeviceTakesTheDevicesLinkFromTheFile) {
  const LinksFile slow({Link("devices", 1e10, 0, "linkbench test")});
  const LinksFile slower({Link("devices", 5e9, 0, "linkbench test")});
  const CliRun run = RunCli(std::string(kSweep) + " --output csv --links " + slow.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The message names the file, the link and its sources.
  EXPECT_THAT(run.err, HasSubstr("the devices link of v100-sxm2 comes from " + slow.path()));
  EXPECT_THAT(run.err, HasSubstr("'measured-devices', 1e+10 B/s (linkbench test)"));
  EXPECT_THAT(run.err, HasSubstr("(linkbench test latency)"));
  const std::vector<double> comm = CommSeconds(run.out);
  ASSERT_EQ(comm.size(), 3u);

  // Ring over n = 2 with no latency: 2(n-1)/n * S/B = S/B with S = 4 bytes per
  // trainable parameter (FP32 gradients): S/1e10.
  const CliRun models = RunCli("models --output json");
  ASSERT_EQ(models.exit_code, 0) << models.err;
  double params = 0;
  const nlohmann::json zoo = nlohmann::json::parse(models.out);
  for (const auto& m : zoo["models"]) {
    if (m["name"] == "resnet50") params = m["trainable_params"].get<double>();
  }
  ASSERT_GT(params, 2e7);
  EXPECT_NEAR(comm[0], 4 * params / 1e10, 1e-5 * comm[0]);
  EXPECT_EQ(comm[0], comm[1]);  // the gradient does not depend on the batch

  // Half the bandwidth, twice the time; the catalog's NVLink (150 GB/s) is faster.
  const CliRun half = RunCli(std::string(kSweep) + " --output csv --links " + slower.path());
  ASSERT_EQ(half.exit_code, 0) << half.err;
  EXPECT_NEAR(CommSeconds(half.out)[0], 2 * comm[0], 1e-5 * comm[0]);
  const CliRun catalog = RunCli(std::string(kSweep) + " --output csv");
  ASSERT_EQ(catalog.exit_code, 0) << catalog.err;
  EXPECT_LT(CommSeconds(catalog.out)[0], comm[0] / 5);
  EXPECT_THAT(catalog.err, ::testing::Not(HasSubstr("comes from")));
}

TEST(LinksCli, SweepLinksNeedsADeviceAndAReadableFile) {
  const LinksFile links({Link("devices", 1e10, 1e-6, "test")});
  EXPECT_EQ(RunCli("sweep resnet50 --batches 1 --links " + links.path()).exit_code, 64);
  const CliRun missing = RunCli(std::string(kSweep) + " --links /no/such/links.json");
  EXPECT_EQ(missing.exit_code, 66);
  EXPECT_THAT(missing.err, HasSubstr("/no/such/links.json"));
  const LinksFile broken({Link("devices", -1e10, 1e-6, "test")});
  const CliRun bad = RunCli(std::string(kSweep) + " --links " + broken.path());
  EXPECT_EQ(bad.exit_code, 65);
  EXPECT_THAT(bad.err, HasSubstr(broken.path() + ":2: field 'links[0].bandwidth_bytes_per_s"));
}

constexpr const char* kProject =
    "project --v0 1000 --t 0.05 --samples 50000 --batch 64 --epochs 10 --devices 1,2,4,8 "
    "--params 25e6 --allreduce hierarchical --devices-per-node 4";

nlohmann::json Rows(const CliRun& run) {
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out)["rows"];
}

TEST(LinksCli, ProjectLinksEqualTheSameNumbersGivenAsOptions) {
  const LinksFile links(
      {Link("devices", 1.2e10, 1e-6, "intra test"), Link("network", 1.25e9, 5e-5, "inter test")});
  const CliRun from_file = RunCli(std::string(kProject) + " --output json --links " + links.path());
  const CliRun from_options =
      RunCli(std::string(kProject) +
             " --output json --intra-bw 12GB/s --intra-latency 1us --inter-bw 10Gbit/s "
             "--inter-latency 50us");
  const nlohmann::json a = Rows(from_file), b = Rows(from_options);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GE(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["label"], b[i]["label"]);
    EXPECT_DOUBLE_EQ(a[i]["total_s"].get<double>(), b[i]["total_s"].get<double>()) << a[i];
  }
  // A slower network makes the 8-device rows (two nodes) slower, the 4-device ones not.
  const LinksFile slow_network(
      {Link("devices", 1.2e10, 1e-6, "intra test"), Link("network", 1.25e8, 5e-5, "slow")});
  const nlohmann::json c =
      Rows(RunCli(std::string(kProject) + " --output json --links " + slow_network.path()));
  ASSERT_EQ(c.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string label = a[i]["label"];
    if (label.find("n=8") != std::string::npos) {
      EXPECT_GT(c[i]["total_s"].get<double>(), a[i]["total_s"].get<double>()) << label;
    } else {
      EXPECT_DOUBLE_EQ(c[i]["total_s"].get<double>(), a[i]["total_s"].get<double>()) << label;
    }
  }
}

TEST(LinksCli, ProjectAndPlanNotesNameTheFile) {
  const LinksFile links(
      {Link("devices", 1.2e10, 1e-6, "intra test"), Link("network", 1.25e9, 5e-5, "inter test")});
  const CliRun project = RunCli(std::string(kProject) + " --links " + links.path());
  ASSERT_EQ(project.exit_code, 0) << project.err;
  EXPECT_THAT(project.out, HasSubstr("in-node link from " + links.path() +
                                     ": 'measured-devices', 1.200e+10 B/s (intra test)"));
  EXPECT_THAT(project.out, HasSubstr("between-node link from " + links.path() +
                                     ": 'measured-network', 1.250e+09 B/s (inter test)"));
  const CliRun plan = RunCli(
      "plan --v0 1000 --t 0.05 --samples 50000 --batch 64 --epochs 10 --devices 1,2,4 "
      "--params 25e6 --links " +
      links.path());
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_THAT(plan.out, HasSubstr("in-node link from " + links.path()));
}

TEST(LinksCli, ALinkGivenTwiceIsAUsageError) {
  const LinksFile both({Link("devices", 1.2e10, 1e-6, "a"), Link("network", 1.25e9, 5e-5, "b")});
  const LinksFile intra({Link("devices", 1.2e10, 1e-6, "a")});
  const LinksFile host_only({Link("host", 1.2e10, 1e-6, "a")});
  const std::string project = std::string(kProject) + " --links ";
  for (const char* extra : {" --intra-bw 12GB/s", " --intra-latency 1us", " --inter-bw 10Gbit/s",
                            " --inter-latency 5us", " --comm-from-fit"}) {
    const CliRun run = RunCli(project + both.path() + extra);
    EXPECT_EQ(run.exit_code, 64) << extra;
    EXPECT_THAT(run.err, HasSubstr("--links " + both.path() + " gives the")) << extra;
  }
  // A file with only the in-node link goes with the options of the other one.
  const CliRun mixed = RunCli(project + intra.path() + " --inter-bw 10Gbit/s --inter-latency 50us");
  EXPECT_EQ(mixed.exit_code, 0) << mixed.err;
  const CliRun plan = RunCli(
      "plan --v0 1000 --t 0.05 --samples 50000 --batch 64 --epochs 10 --devices 1,2 "
      "--params 25e6 --intra-bw 12GB/s --links " +
      intra.path());
  EXPECT_EQ(plan.exit_code, 64);
  const CliRun useless = RunCli(project + host_only.path() + " --intra-bw 12GB/s");
  EXPECT_EQ(useless.exit_code, 64);
  EXPECT_THAT(useless.err, HasSubstr("no link connects \"devices\" or \"network\""));
}

TEST(LinksCli, HelpExplainsLinksWithUnits) {
  for (const char* command : {"sweep", "project", "plan"}) {
    const CliRun run = RunCli(std::string(command) + " --help");
    EXPECT_EQ(run.exit_code, 0) << command;
    EXPECT_THAT(run.out, HasSubstr("--links")) << command;
    EXPECT_THAT(run.out, HasSubstr("fitspeed.links/1")) << command;
    EXPECT_THAT(run.out, HasSubstr("bytes/s")) << command;
  }
}

}  // namespace
