// `fitspeed sweep --data-parallel` and `fitspeed linkbench` as a user runs
// them: under mpirun with 2 ranks (1 thread each), alone, and with options
// that do not go together.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"
#include "fitspeed/device/device.h"

namespace fitspeed::test {
namespace {

// Every process that starts MPI (under mpirun or alone): LeakSanitizer off,
// as for tests/mpi (tests/CMakeLists.txt says why); the other sanitizer
// checks stay on in a sanitizer build.
const std::string kMpiProcess = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1";

// mpirun with `ranks` ranks on however many CPUs there are, allowed as root (CI).
std::string Mpirun(int ranks) {
  return kMpiProcess +
         " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 " +
         FITSPEED_MPIEXEC + " --oversubscribe -np " + std::to_string(ranks);
}

const char* kQuick = "--threads 1 --warmup 1 --min-repeats 2 --min-time 0";

TEST(LinkbenchCli, TwoRanksFitTheLinkAndWriteALinksFileThatProjectReads) {
  const std::string links = ::testing::TempDir() + "/linkbench_links.json";
  const CliRun run = RunCli(
      "linkbench --max-bytes 65536 --min-repeats 3 --min-time 0 --output "
      "json --links-out " +
          links,
      "", Mpirun(2));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema"], "fitspeed.linkbench/1");
  EXPECT_EQ(j["ranks"], 2);
  // 4, 16, 64, ..., 65536 bytes: 8 sizes, every time positive.
  ASSERT_EQ(j["points"].size(), 8u);
  for (const auto& p : j["points"]) {
    EXPECT_GT(p["allreduce_s"].get<double>(), 0);
    EXPECT_GT(p["one_way_s"].get<double>(), 0);
  }
  const double alpha = j["allreduce_fit"]["alpha_s"];
  const double low = j["allreduce_fit"]["alpha_ci"][0], high = j["allreduce_fit"]["alpha_ci"][1];
  EXPECT_LE(low, alpha);
  EXPECT_GE(high, alpha);
  // The file is a links file: one "devices" link (one node), its sources say how it was measured.
  const LinksFile file = ReadLinksJsonFile(links);
  ASSERT_EQ(file.links.size(), 1u);
  EXPECT_EQ(file.links[0].connects, "devices");
  EXPECT_GT(file.links[0].bandwidth_bytes_per_s, 0);
  EXPECT_NE(file.sources.at("links[0].latency_s").find("fitspeed linkbench"), std::string::npos);
  const CliRun project = RunCli(
      "project --v0 100 --t 0.01 --samples 1000 --batch 32 --devices "
      "1,2 --params 1e6 --links " +
      links);
  EXPECT_EQ(project.exit_code, 0) << project.err;
  EXPECT_NE(project.out.find(links), std::string::npos);
}

TEST(LinkbenchCli, OneRankIsAUsageErrorThatSaysHowToStartTwo) {
  const CliRun run = RunCli("linkbench", "", kMpiProcess);
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_NE(run.err.find("mpirun -np 2"), std::string::npos) << run.err;
  EXPECT_EQ(RunCli("linkbench --min-bytes 64 --max-bytes 128", "", Mpirun(2)).exit_code, 64);
}

TEST(DataParallelCli, RankZeroAloneShowsProgress) {
  const CliRun run = RunCli(std::string("sweep cnn-cifar-small --data-parallel --batches 2,4 ") +
                                kQuick + " --progress always --output csv",
                            "", Mpirun(2));
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  const std::string started = "sweep cnn-cifar-small: batch 2 (1 of 2): measuring";
  const size_t first = run.err.find(started);
  ASSERT_NE(first, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(started, first + 1), std::string::npos) << run.err;  // one rank
  EXPECT_NE(run.err.find("batch 4 (2 of 2): "), std::string::npos) << run.err;
}

TEST(DataParallelCli, TwoRanksReportDevicesAndTheirCommunication) {
  const CliRun run = RunCli(std::string("sweep cnn-cifar-small --data-parallel --batches 2,4,8 ") +
                                kQuick + " --output csv",
                            "", Mpirun(2));
  // 0, or 1 where the fit of 3 quick batches is not usable.
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  // One report (rank 0's): a header and three rows, each on 2 devices.
  std::istringstream lines(run.out);
  std::string header, row;
  std::getline(lines, header);
  EXPECT_NE(header.find(",devices,per_rank_batch,"), std::string::npos) << header;
  EXPECT_NE(header.find("comm_cost_s"), std::string::npos) << header;
  int rows = 0;
  while (std::getline(lines, row)) {
    ++rows;
    EXPECT_NE(row.find(",2,"), std::string::npos) << row;
  }
  EXPECT_EQ(rows, 3) << run.out;
}

TEST(DataParallelCli, OneRankModelsTwoFromALinksFile) {
  const std::string links = ::testing::TempDir() + "/dp_links.json";
  std::ofstream(links) << R"({"schema": "fitspeed.links/1", "links": [{"name": "test",
    "connects": "devices", "bandwidth_bytes_per_s": {"value": 1e9, "source": "test"},
    "latency_s": {"value": 1e-6, "source": "test"}}]})";
  const CliRun run = RunCli(std::string("sweep cnn-cifar-small --data-parallel --batches 2,4 ") +
                                kQuick + " --links " + links + " --model-ranks 2",
                            "", kMpiProcess);
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  EXPECT_NE(run.out.find("modeled from " + links + " on 2 ranks"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("serial_ms"), std::string::npos);
  EXPECT_NE(run.err.find("without mpirun"), std::string::npos) << run.err;
}

TEST(DataParallelCli, ALinksFileNeedsALinkBetweenRanks) {
  // Written by linkbench across nodes: only a "network" link. It models the
  // ranks' ring at its pace.
  const std::string network = ::testing::TempDir() + "/dp_network_links.json";
  std::ofstream(network) << R"({"schema": "fitspeed.links/1", "links": [{"name": "ib",
    "connects": "network", "bandwidth_bytes_per_s": {"value": 1e9, "source": "test"},
    "latency_s": {"value": 1e-6, "source": "test"}}]})";
  const std::string args = std::string("sweep cnn-cifar-small --data-parallel --batches 2,4 ") +
                           kQuick + " --model-ranks 4 --links ";
  const CliRun run = RunCli(args + network, "", kMpiProcess);
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  EXPECT_NE(run.out.find("on 4 ranks"), std::string::npos) << run.out;
  // Only a host link: nothing connects the ranks.
  const std::string host = ::testing::TempDir() + "/dp_host_links.json";
  std::ofstream(host) << R"({"schema": "fitspeed.links/1", "links": [{"name": "pcie",
    "connects": "host", "bandwidth_bytes_per_s": {"value": 1e10, "source": "test"},
    "latency_s": {"value": 1e-6, "source": "test"}}]})";
  const CliRun bad = RunCli(args + host, "", kMpiProcess);
  EXPECT_EQ(bad.exit_code, 65) << bad.err;
  EXPECT_NE(bad.err.find("\"network\""), std::string::npos) << bad.err;
}

TEST(DataParallelCli, OptionsThatDoNotGoTogetherAreUsageErrors) {
  EXPECT_EQ(RunCli("sweep cnn-cifar-small --bucket-mb 4").exit_code, 64);
  EXPECT_EQ(RunCli("sweep cnn-cifar-small --data-parallel --device v100-sxm2").exit_code, 64);
  EXPECT_EQ(RunCli("sweep cnn-cifar-small --data-parallel --model-ranks 2").exit_code, 64);
  EXPECT_EQ(RunCli("sweep cnn-cifar-small --data-parallel --bucket-mb 0").exit_code, 64);
  const CliRun missing = RunCli(
      "sweep cnn-cifar-small --data-parallel --links /nonexistent/links.json", "", kMpiProcess);
  EXPECT_EQ(missing.exit_code, 66) << missing.err;
}

}  // namespace
}  // namespace fitspeed::test
