// All-reduce timings read from nccl-tests and OSU logs, and the network link
// of a two-level all-reduce (fitspeed/project/link_logs.h).
//
// The logs in tests/data/links/ are hand-made in the benchmarks' printed
// formats: nccl-tests all_reduce_perf as src/common.cu's print_header() and
// the result lines print them (github.com/NVIDIA/nccl-tests; rank lines
// "#  Rank  N Group  0 Pid  P on HOST device  D [bus] NAME", then the table
// "size count type redop root time algbw busbw #wrong" out-of-place and
// in-place, us and GB/s), and osu_allreduce as OSU Micro-Benchmarks 7.x
// prints it ("# OSU MPI Allreduce Latency Test v7.3", "# Datatype: ...",
// "# Size       Avg Latency(us)", one row per size). Their times come from
// the formulas below, so the tests know the links behind them.
#include "fitspeed/project/link_logs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/project/links.h"
#include "fitspeed/project/scaling.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

std::string Data(const std::string& name) {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/links/" + name;
}

// nccl_tests_all_reduce_2x4.txt: 2 nodes (node-a, node-b) x 4 ranks; in-place
// times t(S) = HierarchicalAllReduceTime(S, 4, 2, in-node, network) with
// in-node 10 GB/s, 5 us and network 5 GB/s, 20 us:
//   alpha = 2*3*5 + 2*1*20 = 70 us, beta = 2*3/4/10e9 + 2*1/2/5e9 = 3.5e-10 s/B
// printed to 0.1 us (1 us from 10 ms); the out-of-place times are 2% longer.
const Link kInNode{10e9, 5e-6};
const Link kNetwork{5e9, 20e-6};

TEST(LinkLogs, NcclTestsGivesInPlaceTimesRanksAndNodes) {
  const LinkLog log = ReadLinkLogFile(Data("nccl_tests_all_reduce_2x4.txt"));
  EXPECT_EQ(log.format, LinkLogFormat::kNcclTests);
  EXPECT_EQ(log.ranks, 8);
  EXPECT_EQ(log.nodes, 2);
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"node-a", "node-b"}));
  ASSERT_EQ(log.timings.size(), 10u);  // 1 KiB, 4 KiB, ..., 256 MiB
  EXPECT_EQ(log.timings.front().bytes, 1024);
  EXPECT_EQ(log.timings.back().bytes, 268435456);
  EXPECT_EQ(log.lines.front(), 16);
  // The first row's in-place time, 70.4 us (out-of-place 71.8).
  EXPECT_DOUBLE_EQ(log.timings.front().seconds, 70.4e-6);
  for (const LinkTiming& t : log.timings) {
    const double formula = HierarchicalAllReduceTime(t.bytes, 4, 2, kInNode, kNetwork);
    EXPECT_NEAR(t.seconds / formula, 1, 0.002) << t.bytes;
  }
}

TEST(LinkLogs, OsuGivesAverageLatenciesAndNoCounts) {
  // osu_allreduce_1x4.txt: one node, 4 ranks, ring over 12 GB/s and 10 us:
  // t = 2*3*10 us + 2*3/4 * S / 12e9.
  const LinkLog log = ReadLinkLogFile(Data("osu_allreduce_1x4.txt"));
  EXPECT_EQ(log.format, LinkLogFormat::kOsu);
  EXPECT_EQ(log.ranks, 0);
  EXPECT_EQ(log.nodes, 0);
  EXPECT_THAT(log.benchmark, HasSubstr("OSU MPI Allreduce Latency Test v7.3"));
  ASSERT_EQ(log.timings.size(), 12u);
  EXPECT_EQ(log.timings.front().bytes, 4);
  EXPECT_DOUBLE_EQ(log.timings.front().seconds, 60.00e-6);
  EXPECT_EQ(log.timings.back().bytes, 16777216);
  EXPECT_DOUBLE_EQ(log.timings.back().seconds, 2157.15e-6);
  // The fitted ring link is the one the times came from.
  const MeasuredLink ring = RingLinkFromAllReduce(FitAlphaBeta(log.timings), 4);
  EXPECT_NEAR(ring.link.bandwidth_bytes_per_s / 12e9, 1, 0.01);
  EXPECT_NEAR(ring.link.latency_s / 10e-6, 1, 0.01);
}

TEST(LinkLogs, AutoDetectsEitherAndAFormatCanBeForced) {
  EXPECT_EQ(ParseLinkLogFormat("auto"), LinkLogFormat::kAuto);
  EXPECT_EQ(ParseLinkLogFormat("osu"), LinkLogFormat::kOsu);
  EXPECT_THROW(ParseLinkLogFormat("mpi"), UsageError);
  // The OSU log forced to be read as nccl-tests has no nccl-tests table.
  try {
    ReadLinkLogFile(Data("osu_allreduce_1x4.txt"), LinkLogFormat::kNcclTests);
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not nccl-tests output"));
  }
  EXPECT_THROW(ParseLinkLog("step 1 loss 2.3\n", "x.log"), DataError);
  EXPECT_THROW(ReadLinkLogFile(Data("no_such_log.txt")), InputError);
}

TEST(LinkLogs, OlderNcclTestsWithoutRootAndWithErrorColumns) {
  // nccl-tests before the root column (2.0-era print_header(): "size count
  // type redop time algbw busbw error", the largest deviation as "error").
  const std::string text =
      "#   Rank  0 Pid  12345 on   gpu01 device  0 [0x1a] Tesla V100-SXM2-16GB\n"
      "#   Rank  1 Pid  12345 on   gpu01 device  1 [0x1b] Tesla V100-SXM2-16GB\n"
      "#\n"
      "#                                                 out-of-place                    in-place\n"
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw "
      "  busbw  error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s) "
      " (GB/s)\n"
      "        1024           256   float     sum    12.50    0.08    0.08  0e+00    12.00    0.09 "
      "   0.09  0e+00\n"
      "     1048576        262144   float     sum    80.00   13.11   13.11  2e-07    79.00   13.27 "
      "  13.27  2e-07\n"
      "    16777216       4194304   float     sum   1000.0   16.78   16.78  2e-07   990.00   16.95 "
      "  16.95  2e-07\n";
  const LinkLog log = ParseLinkLog(text, "old.txt");
  EXPECT_EQ(log.ranks, 2);
  EXPECT_EQ(log.nodes, 1);
  ASSERT_EQ(log.timings.size(), 3u);
  EXPECT_DOUBLE_EQ(log.timings[2].seconds, 990e-6);
}

TEST(LinkLogs, MalformedNcclTestsNameFileLineAndField) {
  try {
    ReadLinkLogFile(Data("nccl_tests_bad_time.txt"));
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("nccl_tests_bad_time.txt:18"));
    EXPECT_THAT(e.what(), HasSubstr("time (in-place, us)"));
    EXPECT_THAT(e.what(), HasSubstr("12.x"));
  }
  const std::string header =
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0] T4\n"
      "#  Rank  1 Group  0 Pid 2 on h device  1 [0] T4\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  auto fails = [&](const std::string& rows, const std::string& what) {
    try {
      ParseLinkLog(header + rows, "run.txt");
      ADD_FAILURE() << "expected a DataError: " << what;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  // A row cut short: line 4.
  fails("1024  256  float  sum  -1  10.0  0.10  0.10  0  10.0\n", "run.txt:4");
  // Wrong results.
  fails("1024  256  float  sum  -1  10.0  0.10  0.10  0  10.0  0.10  0.10  3\n", "#wrong");
  // Another collective: all_gather_perf (redop none) and reduce_perf (root 0).
  fails("1024  256  float  none  -1  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n", "redop");
  fails("1024  256  float  sum  0  10.0  0.10  0.10  0  10.0  0.10  0.10  0\n", "root");
  // A time that is not > 0.
  fails("1024  256  float  sum  -1  10.0  0.10  0.10  0  0.0  0.10  0.10  0\n", "time");
  // A header and no rows.
  fails("", "no rows");
}

TEST(LinkLogs, MalformedOsuNamesFileLineAndField) {
  try {
    ReadLinkLogFile(Data("osu_allreduce_bad_row.txt"));
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("osu_allreduce_bad_row.txt:8"));
    EXPECT_THAT(e.what(), HasSubstr("Avg Latency(us)"));
  }
  // osu_latency's output is not an all-reduce.
  try {
    ParseLinkLog("# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n4   1.2\n", "lat.txt");
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("lat.txt:1"));
    EXPECT_THAT(e.what(), HasSubstr("not osu_allreduce"));
  }
  EXPECT_THROW(ParseLinkLog("# OSU MPI Allreduce Latency Test v7.3\n", "empty.txt"), DataError);
}

TEST(InterNodeLink, InvertsTheTwoLevelFormulaGivenTheInNodeLink) {
  // The fit of the 2x4 log, with the in-node link known: the network link
  // comes back (printing rounds the times by < 0.1%).
  const LinkLog log = ReadLinkLogFile(Data("nccl_tests_all_reduce_2x4.txt"));
  const AlphaBetaFit fit = FitAlphaBeta(log.timings);
  EXPECT_NEAR(fit.alpha_s / 70e-6, 1, 0.01);
  EXPECT_NEAR(fit.beta_s_per_byte / 3.5e-10, 1, 0.005);
  const MeasuredLink net = InterNodeLinkFromAllReduce(fit, 4, 2, kInNode);
  EXPECT_NEAR(net.link.bandwidth_bytes_per_s / kNetwork.bandwidth_bytes_per_s, 1, 0.01);
  EXPECT_NEAR(net.link.latency_s / kNetwork.latency_s, 1, 0.05);
  EXPECT_LE(net.bandwidth_low, net.link.bandwidth_bytes_per_s);
  EXPECT_GE(net.bandwidth_high, net.link.bandwidth_bytes_per_s);
  // Back through the formula: the measured times again.
  for (const LinkTiming& t : log.timings) {
    EXPECT_NEAR(HierarchicalAllReduceTime(t.bytes, 4, 2, kInNode, net.link) / t.seconds, 1, 0.01);
  }
}

TEST(InterNodeLink, WithoutAnInNodeLinkTheNetworkCarriesEverything) {
  // Exact fit alpha = 70 us, beta = 3.5e-10: a ring over 2 nodes has
  // 2(k-1) = 2 steps and moves 2(k-1)/k = 1 byte per byte, so a = 35 us and
  // B = 1 / 3.5e-10 = 2.857 GB/s.
  AlphaBetaFit fit;
  fit.alpha_s = 70e-6;
  fit.beta_s_per_byte = 3.5e-10;
  fit.alpha_ci_low = fit.alpha_ci_high = fit.alpha_s;
  fit.beta_ci_low = fit.beta_ci_high = fit.beta_s_per_byte;
  const Link free{std::numeric_limits<double>::infinity(), 0};
  const MeasuredLink net = InterNodeLinkFromAllReduce(fit, 4, 2, free);
  EXPECT_NEAR(net.link.latency_s, 35e-6, 1e-12);
  EXPECT_NEAR(net.link.bandwidth_bytes_per_s, 1 / 3.5e-10, 1);
  EXPECT_DOUBLE_EQ(RingAllReduceTime(1e6, 2, net.link), fit.Predict(1e6));
}

TEST(InterNodeLink, AnInNodeLinkSlowerThanTheMeasurementIsADataError) {
  AlphaBetaFit fit;
  fit.alpha_s = 70e-6;
  fit.beta_s_per_byte = 1e-10;  // 10 GB/s all told
  // 4 ranks per node over 1 GB/s take 1.5e-9 s/B alone.
  EXPECT_THROW(InterNodeLinkFromAllReduce(fit, 4, 2, Link{1e9, 0}), DataError);
  EXPECT_THROW(InterNodeLinkFromAllReduce(fit, 4, 1, kInNode), UsageError);
}

TEST(NodeCountLink, HandCalculationOneNodeAgainstTwo) {
  // Network link a = 1 ms, B = 1 GB/s; 1 node against 2 of the same GPUs:
  // D = T(2) - T(1) = 2(2-1)/2 * S/B + 2(2-1) a = S/1e9 + 2 ms, so
  //   S = 100 MB: 0.102 s, 200 MB: 0.202 s, 400 MB: 0.402 s,
  // on top of any one-node step (compute and in-node ring cancel).
  const std::vector<NodeCountRun> runs = {
      {100e6, 0.5, 0.602}, {200e6, 1.25, 1.452}, {400e6, 0.3, 0.702}};
  const NodeCountLinkFit fit = NetworkLinkFromNodeCounts(runs, 1, 2);
  EXPECT_EQ(fit.fewer_nodes, 1);
  EXPECT_EQ(fit.more_nodes, 2);
  EXPECT_NEAR(fit.fit.alpha_s, 2e-3, 1e-7);           // alpha = 2(k2-k1) a
  EXPECT_NEAR(fit.fit.beta_s_per_byte, 1e-9, 1e-14);  // beta = (2(k2-1)/k2 - 0) / B
  EXPECT_NEAR(fit.network.link.latency_s, 1e-3, 1e-7);
  EXPECT_NEAR(fit.network.link.bandwidth_bytes_per_s / 1e9, 1, 1e-5);
}

TEST(NodeCountLink, HandCalculationTwoNodesAgainstFour) {
  // Same link, 2 against 4 nodes: D = (2*3/4 - 2*1/2) S/B + 2(4-2) a
  // = 0.5 S/B + 4 a: 100 MB 0.054 s, 200 MB 0.104 s, 400 MB 0.204 s.
  const std::vector<NodeCountRun> runs = {
      {100e6, 1.0, 1.054}, {200e6, 1.0, 1.104}, {400e6, 1.0, 1.204}};
  const NodeCountLinkFit fit = NetworkLinkFromNodeCounts(runs, 2, 4);
  EXPECT_NEAR(fit.network.link.latency_s, 1e-3, 1e-7);
  EXPECT_NEAR(fit.network.link.bandwidth_bytes_per_s / 1e9, 1, 1e-5);
}

TEST(NodeCountLink, InvertsTheTwoLevelAllReduce) {
  // Steps built from HierarchicalAllReduceTime (4 GPUs per node, 3 and 4
  // nodes) with an in-node link the calibration never sees: the network link
  // comes back, the in-node ring cancelling in the difference.
  const Link net{2.5e9, 40e-6};
  std::vector<NodeCountRun> runs;
  for (double bytes : {45e6, 102e6, 435e6}) {
    const double compute = 0.2 + bytes * 1e-9;
    runs.push_back({bytes, compute + HierarchicalAllReduceTime(bytes, 4, 3, kInNode, net),
                    compute + HierarchicalAllReduceTime(bytes, 4, 4, kInNode, net)});
  }
  const NodeCountLinkFit fit = NetworkLinkFromNodeCounts(runs, 3, 4);
  EXPECT_NEAR(fit.network.link.bandwidth_bytes_per_s / net.bandwidth_bytes_per_s, 1, 1e-4);
  EXPECT_NEAR(fit.network.link.latency_s / net.latency_s, 1, 1e-2);
  EXPECT_THAT(fit.BriefReport(), HasSubstr("4 vs 3 nodes"));
}

TEST(NodeCountLink, RejectsRunsThatDoNotExposeTheAllReduce) {
  const std::vector<NodeCountRun> slower = {{1e8, 0.5, 0.6}, {2e8, 0.5, 0.4}, {4e8, 0.5, 0.9}};
  EXPECT_THROW(NetworkLinkFromNodeCounts(slower, 1, 2), DataError);  // run 2: 2 nodes faster
  const std::vector<NodeCountRun> one_size = {{1e8, 0.5, 0.6}, {1e8, 0.5, 0.61}, {1e8, 0.5, 0.59}};
  EXPECT_THROW(NetworkLinkFromNodeCounts(one_size, 1, 2), DataError);  // latency vs bandwidth
  EXPECT_THROW(NetworkLinkFromNodeCounts(slower, 2, 2), UsageError);
  EXPECT_THROW(NetworkLinkFromNodeCounts(slower, 0, 2), UsageError);
}

}  // namespace
}  // namespace fitspeed
