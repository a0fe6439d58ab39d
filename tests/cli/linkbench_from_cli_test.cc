// `fitspeed linkbench --from FILE` (no MPI): links from nccl-tests and OSU
// logs (tests/data/links/, see tests/project/link_logs_test.cc for how they
// were made), the links file they write and `sweep --device` over nodes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "fitspeed/device/device.h"

namespace fitspeed::test {
namespace {

using ::testing::HasSubstr;

std::string Log(const std::string& name) { return Data("links/" + name); }

std::string ScratchLinkbenchFrom(const std::string& what) {
  return ::testing::TempDir() + "/fitspeed_linkbench_from_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + what;
}

TEST(LinkbenchFromCli, OsuOneNodeGivesTheDevicesLink) {
  // osu_allreduce_1x4.txt: 4 ranks in one node, ring over 12 GB/s, 10 us.
  const std::string out = ScratchLinkbenchFrom("links.json");
  const CliRun run = RunCli("linkbench --from " + Log("osu_allreduce_1x4.txt") +
                            " --ranks 4 --nodes 1 --links-out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("osu_allreduce"));
  EXPECT_THAT(run.out, HasSubstr("devices link: bandwidth "));
  const LinksFile file = ReadLinksJsonFile(out);
  ASSERT_EQ(file.links.size(), 1u);
  EXPECT_EQ(file.links[0].connects, "devices");
  EXPECT_NEAR(file.links[0].bandwidth_bytes_per_s / 12e9, 1, 0.01);
  EXPECT_NEAR(file.links[0].latency_s / 10e-6, 1, 0.01);
  EXPECT_THAT(file.sources.at("links[0].latency_s"), HasSubstr("osu_allreduce_1x4.txt"));
  std::remove(out.c_str());
}

TEST(LinkbenchFromCli, OsuNeedsRanksAndNodes) {
  const CliRun run = RunCli("linkbench --from " + Log("osu_allreduce_1x4.txt") + " --nodes 1");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("--ranks"));
  EXPECT_EQ(RunCli("linkbench --from " + Log("osu_allreduce_1x4.txt") + " --ranks 4").exit_code,
            64);
}

TEST(LinkbenchFromCli, NcclTestsOverNodesGivesTheNetworkLinkAndSweepUsesIt) {
  // The 2x4 log was made with an in-node link of 10 GB/s, 5 us and a network
  // link of 5 GB/s, 20 us; given the in-node link, the network one comes back.
  const std::string in_node = ScratchLinkbenchFrom("in_node.json");
  std::ofstream(in_node) << R"({"schema": "fitspeed.links/1", "links": [
    {"name": "pcie", "connects": "devices",
     "bandwidth_bytes_per_s": {"value": 10e9, "source": "test"},
     "latency_s": {"value": 5e-6, "source": "test"}}]})";
  const std::string out = ScratchLinkbenchFrom("links.json");
  const CliRun run = RunCli("linkbench --from " + Log("nccl_tests_all_reduce_2x4.txt") +
                            " --links " + in_node + " --links-out " + out + " --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["ranks"], 8);
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_EQ(j["points"].size(), 10u);
  EXPECT_TRUE(j["one_way_fit"].is_null());
  const LinksFile file = ReadLinksJsonFile(out);
  ASSERT_EQ(file.links.size(), 1u);
  EXPECT_EQ(file.links[0].connects, "network");
  EXPECT_NEAR(file.links[0].bandwidth_bytes_per_s / 5e9, 1, 0.01);
  EXPECT_NEAR(file.links[0].latency_s / 20e-6, 1, 0.05);
  EXPECT_THAT(file.sources.at("links[0].bandwidth_bytes_per_s"), HasSubstr("two-level"));

  // The network link models 2 nodes of 4 T4; without it, a usage error.
  const std::string sweep =
      "sweep resnet50 --device t4 --batches 256 --devices 8 "
      "--devices-per-node 4 --output csv";
  const CliRun with = RunCli(sweep + " --links " + out);
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_THAT(with.out, HasSubstr("exposed_comm_s"));
  const CliRun without = RunCli(sweep);
  EXPECT_EQ(without.exit_code, 64);
  EXPECT_THAT(without.err, HasSubstr("no network link"));
  std::remove(in_node.c_str());
  std::remove(out.c_str());
}

TEST(LinkbenchFromCli, WithoutAnInNodeLinkTheFlatRingOverNodes) {
  const CliRun run = RunCli("linkbench --from " + Log("nccl_tests_all_reduce_2x4.txt"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("network link"));
  EXPECT_THAT(run.out, HasSubstr("flat ring over the 2 nodes"));
}

TEST(LinkbenchFromCli, MalformedLogsAreDataErrorsNamingTheLine) {
  const CliRun bad = RunCli("linkbench --from " + Log("nccl_tests_bad_time.txt"));
  EXPECT_EQ(bad.exit_code, 65);
  EXPECT_THAT(bad.err, HasSubstr("nccl_tests_bad_time.txt:18"));
  const CliRun osu =
      RunCli("linkbench --from " + Log("osu_allreduce_bad_row.txt") + " --ranks 4 --nodes 1");
  EXPECT_EQ(osu.exit_code, 65);
  EXPECT_THAT(osu.err, HasSubstr("osu_allreduce_bad_row.txt:8"));
  // A log that contradicts --ranks, and options that need --from.
  EXPECT_EQ(
      RunCli("linkbench --from " + Log("nccl_tests_all_reduce_2x4.txt") + " --ranks 4").exit_code,
      64);
  EXPECT_EQ(RunCli("linkbench --ranks 4").exit_code, 64);
  EXPECT_EQ(RunCli("linkbench --from " + Log("missing.txt")).exit_code, 66);
}

TEST(LinkbenchFromRunsCli, RecoversTheNetworkLinkOfTwoNodeCountsByHand) {
  // A network link of B = 1e9 B/s and a = 100 us per message between 1 and 2
  // nodes: the ring over 2 nodes costs D = 2(2-1)/2 S/B + 2(2-1) a = S/B + 2a,
  // so S = 1e8, 2e8 and 4e8 bytes add 0.1002, 0.2002 and 0.4002 s to the
  // one-node step (the second row gives params: 5e7 x 4 B = 2e8 B).
  const std::string runs = ScratchLinkbenchFrom("runs.csv");
  std::ofstream(runs) << "# two node counts\n"
                         "model,gradient_bytes,params,fewer_nodes_step_s,more_nodes_step_s\n";
  // gradient_bytes and params both present is refused: write two files.
  const std::string bytes_runs = ScratchLinkbenchFrom("bytes.csv");
  std::ofstream(bytes_runs) << "# hand-made\n"
                               "model,gradient_bytes,fewer_nodes_step_s,more_nodes_step_s\n"
                               "a,100000000,0.5,0.6002\n"
                               "b,200000000,0.6,0.8002\n"
                               "\n"
                               "c,400000000,0.7,1.1002\n";
  const std::string out = ScratchLinkbenchFrom("links.json");
  const CliRun run = RunCli("linkbench --from-runs " + bytes_runs +
                            " --fewer-nodes 1 --more-nodes 2 --links-out " + out + " -o json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["runs"].size(), 3u);
  const LinksFile links = ReadLinksJsonFile(out);
  ASSERT_EQ(links.links.size(), 1u);
  EXPECT_EQ(links.links[0].connects, "network");
  EXPECT_NEAR(links.links[0].bandwidth_bytes_per_s, 1e9, 1e9 * 1e-6);
  EXPECT_NEAR(links.links[0].latency_s, 1e-4, 1e-9);
  // The link models a two-level all-reduce over nodes.
  const CliRun sweep = RunCli(
      "sweep resnet50 --device t4 --batches 16,32,64 --devices 8 "
      "--devices-per-node 4 --links " +
      out);
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  // Both gradient columns, a missing column, a step that is not a number, a
  // faster run on more nodes, a missing file, node counts out of order.
  EXPECT_EQ(RunCli("linkbench --from-runs " + runs + " --fewer-nodes 1 --more-nodes 2").exit_code,
            65);
  const std::string bad = ScratchLinkbenchFrom("bad.csv");
  std::ofstream(bad) << "params,fewer_nodes_step_s,more_nodes_step_s\n"
                        "25000000,0.5,x\n";
  const CliRun not_number =
      RunCli("linkbench --from-runs " + bad + " --fewer-nodes 1 --more-nodes 2");
  EXPECT_EQ(not_number.exit_code, 65);
  EXPECT_THAT(not_number.err, HasSubstr("bad.csv:2"));
  EXPECT_THAT(not_number.err, HasSubstr("more_nodes_step_s"));
  const std::string faster = ScratchLinkbenchFrom("faster.csv");
  std::ofstream(faster) << "params,fewer_nodes_step_s,more_nodes_step_s\n"
                           "25000000,0.5,0.4\n25000000,0.5,0.6\n50000000,0.5,0.7\n";
  EXPECT_EQ(RunCli("linkbench --from-runs " + faster + " --fewer-nodes 1 --more-nodes 2").exit_code,
            65);
  EXPECT_EQ(RunCli("linkbench --from-runs " + ScratchLinkbenchFrom("missing.csv") +
                   " --fewer-nodes 1 --more-nodes 2")
                .exit_code,
            66);
  EXPECT_EQ(
      RunCli("linkbench --from-runs " + bytes_runs + " --fewer-nodes 2 --more-nodes 2").exit_code,
      64);
  EXPECT_EQ(RunCli("linkbench --fewer-nodes 1 --more-nodes 2").exit_code, 64);
}

TEST(SweepOverlapCli, OverlapHidesPartOfTheCommunicationSerialNone) {
  const std::string sweep = "sweep bert-base --device t4 --batches 16 --devices 4 --output json";
  const CliRun over = RunCli(sweep + " --overlap");
  const CliRun serial = RunCli(sweep);  // the default: --no-overlap
  ASSERT_EQ(over.exit_code, 0) << over.err;
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  const nlohmann::json a = nlohmann::json::parse(over.out)["steps"][0];
  const nlohmann::json b = nlohmann::json::parse(serial.out)["steps"][0];
  EXPECT_EQ(b["exposed_comm_s"], b["comm_s"]);
  EXPECT_LT(a["exposed_comm_s"].get<double>(), a["comm_s"].get<double>());
  EXPECT_GT(a["comm_buckets"].get<int>(), 1);
  EXPECT_LT(a["step_time_s"].get<double>(), b["step_time_s"].get<double>());
  EXPECT_EQ(b["comm_buckets"], 1);
  EXPECT_EQ(RunCli("sweep mlp-mnist --overlap").exit_code, 64);
  EXPECT_EQ(RunCli("sweep mlp-mnist --bucket-mb 10").exit_code, 64);
}

}  // namespace
}  // namespace fitspeed::test
