// linkbench's link derivation, fits and writers (fitspeed/project/linkbench.h),
// against links and times worked by hand from the ring formulas of
// fitspeed/core/comm.h.
#include "fitspeed/project/linkbench.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

AlphaBetaFit ExactFit(double alpha_s, double beta_s_per_byte) {
  AlphaBetaFit f;
  f.alpha_s = f.alpha_ci_low = f.alpha_ci_high = alpha_s;
  f.beta_s_per_byte = f.beta_ci_low = f.beta_ci_high = beta_s_per_byte;
  f.points = 3;
  f.converged = true;
  return f;
}

TEST(DeriveLink, OneNodeIsTheRingOverItsRanks) {
  // 4 ranks: alpha = 2(n-1) a = 6a and beta = 2(n-1)/n / B = 1.5/B, so
  // alpha = 6e-5 s, beta = 1.5e-10 s/B give a = 10 us, B = 10 GB/s.
  LinkbenchRun run;
  run.ranks = 4;
  run.nodes = 1;
  const DerivedLink d = DeriveLink(run, ExactFit(6e-5, 1.5e-10));
  EXPECT_EQ(d.connects, "devices");
  EXPECT_NEAR(d.measured.link.latency_s, 1e-5, 1e-18);
  EXPECT_NEAR(d.measured.link.bandwidth_bytes_per_s, 1e10, 1e-2);
  EXPECT_THAT(d.how, HasSubstr("reproduces the fit at 4 ranks"));
}

TEST(DeriveLink, AnMpiJobOverNodesIsTheRingOverAllRanksOnTheNetwork) {
  // Not two-level: the ring over 8 ranks, 14a = 1.4e-4 -> a = 10 us,
  // 1.75/B = 1.75e-10 -> B = 10 GB/s; the link is between nodes.
  LinkbenchRun run;
  run.ranks = 8;
  run.nodes = 2;
  const DerivedLink d = DeriveLink(run, ExactFit(1.4e-4, 1.75e-10));
  EXPECT_EQ(d.connects, "network");
  EXPECT_NEAR(d.measured.link.latency_s, 1e-5, 1e-18);
  EXPECT_NEAR(d.measured.link.bandwidth_bytes_per_s, 1e10, 1e-2);
}

TEST(DeriveLink, TwoLevelTakesTheInNodeRingOut) {
  // 2 nodes of 4 ranks, in-node a = 5 us, B = 10 GB/s; network a = 20 us,
  // B = 5 GB/s: alpha = 2(4-1) 5e-6 + 2(2-1) 2e-5 = 3e-5 + 4e-5 = 7e-5 s;
  // beta = 1.5/1e10 + 1/5e9 = 1.5e-10 + 2e-10 = 3.5e-10 s/B.
  LinkbenchRun run;
  run.ranks = 8;
  run.nodes = 2;
  run.two_level = true;
  run.in_node = Link{1e10, 5e-6};
  run.in_node_name = "pcie";
  run.in_node_source = "in_node.json";
  const DerivedLink d = DeriveLink(run, ExactFit(7e-5, 3.5e-10));
  EXPECT_EQ(d.connects, "network");
  EXPECT_NEAR(d.measured.link.latency_s, 2e-5, 1e-15);
  EXPECT_NEAR(d.measured.link.bandwidth_bytes_per_s / 5e9, 1, 1e-9);
  EXPECT_THAT(d.how, HasSubstr("in-node ring over 'pcie' from in_node.json: 1e+10 B/s, 5e-06 s"));
}

TEST(DeriveLink, TwoLevelWithoutAnInNodeLinkIsTheFlatRingOverNodes) {
  // The in-node ring is free: alpha = 2(2-1) a -> a = 4e-5/2 = 20 us;
  // beta = 2(2-1)/2 / B -> B = 1/2e-10 = 5 GB/s.
  LinkbenchRun run;
  run.ranks = 8;
  run.nodes = 2;
  run.two_level = true;
  const DerivedLink d = DeriveLink(run, ExactFit(4e-5, 2e-10));
  EXPECT_NEAR(d.measured.link.latency_s, 2e-5, 1e-15);
  EXPECT_NEAR(d.measured.link.bandwidth_bytes_per_s / 5e9, 1, 1e-9);
  EXPECT_THAT(d.how, HasSubstr("flat ring over the 2 nodes"));
  EXPECT_THAT(d.how, HasSubstr("4 ranks per node"));
}

TEST(MeasuredLinkSources, StateValueAndIntervalAtTheLevel) {
  MeasuredLink m;
  m.link = Link{1.2e10, 1e-5};
  m.bandwidth_low = 1.1e10;
  m.bandwidth_high = 1.3e10;
  m.latency_low = 8e-6;
  m.latency_high = 1.25e-5;
  const LinkSources s = MeasuredLinkSources(m, "measured today", "ring step", 0.9);
  // FormatSig with 4 digits: 1.1e10 is past 1e9, so exponent form "1.100e+10".
  EXPECT_EQ(s.bandwidth, "measured today: 1.2e+10 B/s, 90% interval [1.100e+10, 1.300e+10]");
  EXPECT_EQ(s.latency,
            "measured today: 1e-05 s per ring step, 90% interval [8.000e-06, 1.250e-05]");
}

// All-reduce times of a ring over 4 ranks at a = 10 us, B = 10 GB/s:
// t(S) = 6e-5 + 1.5e-10 S, so 1000 B take 60.15 us, 1e6 B 210 us and
// 1e7 B 1560 us.
LinkbenchRun FourRanks() {
  LinkbenchRun run;
  run.describe = "test job, 4 ranks on 1 node";
  run.method = "hand-made times";
  run.timing_note = "exact ring times";
  run.link_name = "mpi";
  run.ranks = 4;
  for (double bytes : {1e3, 1e5, 1e6, 1e7}) {
    LinkbenchPoint p;
    p.bytes = bytes;
    p.allreduce_s = 6e-5 + 1.5e-10 * bytes;
    run.points.push_back(p);
  }
  return run;
}

TEST(FitLinkbench, RecoversTheRingAndDatesItsSource) {
  const LinkbenchResult r = FitLinkbench(FourRanks(), {0, 1e99, 0.95, "2026-01-31"});
  EXPECT_TRUE(r.converged());
  EXPECT_FALSE(r.one_way.has_value());
  EXPECT_EQ(r.fitted_sizes, 4);
  EXPECT_NEAR(r.link.measured.link.latency_s / 1e-5, 1, 1e-6);
  EXPECT_NEAR(r.link.measured.link.bandwidth_bytes_per_s / 1e10, 1, 1e-6);
  EXPECT_THAT(r.source, HasSubstr("measured 2026-01-31 by fitspeed linkbench: hand-made times, "
                                  "test job, 4 ranks on 1 node"));
  EXPECT_THAT(r.source, HasSubstr("at 4 sizes 1000 B..10000000 B"));
}

TEST(FitLinkbench, FitsOnlyTheSizesWithinTheBounds) {
  // 1e5 .. 1e7 leaves three sizes; 1e6 .. 1e7 two, too few for the fit.
  const LinkbenchResult r = FitLinkbench(FourRanks(), {1e5, 1e7, 0.95, "today"});
  EXPECT_EQ(r.fitted_sizes, 3);
  EXPECT_EQ(r.fitted_min_bytes, 1e5);
  EXPECT_EQ(r.run.points.size(), 4u);  // every size is still reported
  EXPECT_THROW(FitLinkbench(FourRanks(), {1e6, 1e7, 0.95, "today"}), UsageError);
}

TEST(WriteLinkbench, CsvHasOneRowPerSizeAndNoOneWayColumnsWithoutThem) {
  const LinkbenchResult r = FitLinkbench(FourRanks(), {0, 1e99, 0.95, "today"});
  std::ostringstream out;
  WriteLinkbench(out, r, "{}", "", OutputFormat::kCsv);
  // 6e-5 + 1.5e-10 * 1000 = 6.015e-05 s.
  EXPECT_THAT(out.str(), HasSubstr("bytes,allreduce_s,one_way_s,allreduce_repeats,"
                                   "pingpong_repeats\n1000,6.015e-05,,,\n"));
}

TEST(WriteLinkbench, TableShowsTheLinkAndTheLinksFileOrWhereItWent) {
  const LinkbenchResult r = FitLinkbench(FourRanks(), {0, 1e99, 0.95, "today"});
  std::ostringstream shown, written;
  WriteLinkbench(shown, r, "{\"links\": []}\n", "", OutputFormat::kTable);
  // 1e7 B in 1560 us: 1e7/1.56e-3/1e9 = 6.41 GB/s of algorithm bandwidth.
  EXPECT_THAT(shown.str(), HasSubstr("6.41"));
  EXPECT_THAT(shown.str(), HasSubstr("devices link: bandwidth 10 GB/s 95% "));
  EXPECT_THAT(shown.str(), HasSubstr("latency 10 us per ring step"));
  EXPECT_THAT(shown.str(),
              HasSubstr("links file (--links-out FILE writes it):\n{\"links\": []}\n"));
  WriteLinkbench(written, r, "{}", "out.json", OutputFormat::kTable);
  EXPECT_THAT(written.str(), HasSubstr("links file written: out.json"));
}

TEST(WriteLinkbench, JsonCarriesPointsFitAndLinksFile) {
  const LinkbenchResult r = FitLinkbench(FourRanks(), {0, 1e99, 0.95, "today"});
  std::ostringstream out;
  WriteLinkbench(out, r, R"({"schema": "fitspeed.links/1"})", "", OutputFormat::kJson);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "fitspeed.linkbench/1");
  EXPECT_EQ(j["ranks"], 4);
  ASSERT_EQ(j["points"].size(), 4u);
  EXPECT_TRUE(j["points"][0]["one_way_s"].is_null());
  EXPECT_NEAR(j["allreduce_fit"]["alpha_s"].get<double>() / 6e-5, 1, 1e-6);
  EXPECT_NEAR(j["allreduce_fit"]["beta_s_per_byte"].get<double>() / 1.5e-10, 1, 1e-6);
  EXPECT_TRUE(j["one_way_fit"].is_null());
  EXPECT_EQ(j["links"]["schema"], "fitspeed.links/1");
}

TEST(WriteNodeCountLinkbench, TableShowsEachRunsDifference) {
  // D = T(2) - T(1) = S/B + 2a with B = 1e9, a = 100 us: 0.1002, 0.2002 and
  // 0.4002 s at 1e8, 2e8 and 4e8 bytes.
  NodeCountLinkbench r;
  r.from_runs = "runs.csv";
  r.runs = {{1e8, 0.5, 0.6002}, {2e8, 0.6, 0.8002}, {4e8, 0.7, 1.1002}};
  r.fit = NetworkLinkFromNodeCounts(r.runs, 1, 2);
  r.how = NodeCountLinkSource("2026-01-31", "runs.csv", r.runs.size(), 1, 2);
  EXPECT_THAT(r.how, HasSubstr("fitted 2026-01-31 by fitspeed linkbench --from-runs runs.csv: "
                               "3 runs' step on 2 nodes minus the step on 1"));
  std::ostringstream table, csv;
  WriteNodeCountLinkbench(table, r, "{}", "", OutputFormat::kTable);
  EXPECT_THAT(table.str(), HasSubstr("network link from 3 runs on 1 and 2 nodes (runs.csv)"));
  EXPECT_THAT(table.str(), HasSubstr("0.4002"));
  WriteNodeCountLinkbench(csv, r, "{}", "", OutputFormat::kCsv);
  // The exact runs leave no residual: fit_% 0 (or -0 at rounding).
  EXPECT_THAT(csv.str(), HasSubstr("100000000,0.5,0.6002,0.1002,"));
  std::ostringstream json;
  WriteNodeCountLinkbench(json, r, "{}", "", OutputFormat::kJson);
  const nlohmann::json j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["fewer_nodes"], 1);
  EXPECT_EQ(j["more_nodes"], 2);
  EXPECT_EQ(j["runs"].size(), 3u);
  EXPECT_NEAR(j["difference_fit"]["alpha_s"].get<double>() / 2e-4, 1, 1e-6);
}

}  // namespace
}  // namespace fitspeed
