#include "fitspeed/core/comm.h"

#include <gtest/gtest.h>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

constexpr double kBytes = 1e8;  // a 25M-parameter FP32 gradient

Link MakeLink(double bandwidth, double latency) { return Link{bandwidth, latency}; }

TEST(RingFactors, AreTwiceTheStepsOfTheRing) {
  // n = 4: 2*3/4 = 1.5 and 2*3 = 6; one device communicates nothing.
  EXPECT_DOUBLE_EQ(RingBandwidthFactor(4), 1.5);
  EXPECT_DOUBLE_EQ(RingLatencyFactor(4), 6);
  EXPECT_EQ(RingBandwidthFactor(1), 0);
  EXPECT_EQ(RingLatencyFactor(1), 0);
}

TEST(RingAllReduce, MatchesTheTextbookFactors) {
  // n = 4, S = 1e8 B, B = 1e10 B/s, a = 10 us:
  // 2*3/4 * 1e8/1e10 + 2*3*1e-5 = 0.015 + 0.00006 = 0.01506 s.
  EXPECT_NEAR(RingAllReduceTime(kBytes, 4, MakeLink(1e10, 1e-5)), 0.01506, 1e-15);
  // n = 2: 2*1/2 * 0.01 + 2*1e-5 = 0.01002 s.
  EXPECT_NEAR(RingAllReduceTime(kBytes, 2, MakeLink(1e10, 1e-5)), 0.01002, 1e-15);
  EXPECT_EQ(RingAllReduceTime(kBytes, 1, MakeLink(1e10, 1e-5)), 0);
}

TEST(RingAllReduce, BandwidthTermTendsToTwiceTheMessageTime) {
  // 2(n-1)/n -> 2: at n = 1000 the bandwidth term is 1.998 * S/B.
  EXPECT_NEAR(RingAllReduceTime(kBytes, 1000, MakeLink(1e10, 0)), 1.998 * 0.01, 1e-15);
}

TEST(TreeAllReduce, TwiceCeilLog2Rounds) {
  // n = 4: 2*2*(1e-5 + 0.01) = 0.04004 s; n = 5: ceil(log2 5) = 3 -> 0.06006 s.
  EXPECT_NEAR(TreeAllReduceTime(kBytes, 4, MakeLink(1e10, 1e-5)), 0.04004, 1e-15);
  EXPECT_NEAR(TreeAllReduceTime(kBytes, 5, MakeLink(1e10, 1e-5)), 0.06006, 1e-15);
  EXPECT_EQ(TreeAllReduceTime(kBytes, 1, MakeLink(1e10, 1e-5)), 0);
}

CommModel TwoTier(AllReduceAlgorithm algorithm) {
  CommModel comm;
  comm.algorithm = algorithm;
  comm.intra_node = MakeLink(1e10, 1e-5);
  comm.inter_node = MakeLink(6.25e9, 5e-5);  // 50 Gbit/s
  comm.devices_per_node = 4;
  return comm;
}

TEST(HierarchicalAllReduce, AddsTheInNodeRingAndTheBetweenNodeRing) {
  // 2 nodes x 4: in node 0.01506 s (above); between nodes
  // 2*1/2 * 1e8/6.25e9 + 2*1*5e-5 = 0.016 + 0.0001 = 0.0161 s; sum 0.03116 s.
  EXPECT_NEAR(AllReduceTime(kBytes, 8, TwoTier(AllReduceAlgorithm::kHierarchical)), 0.03116, 1e-14);
  // 4 nodes x 4: 0.01506 + 2*3/4*0.016 + 2*3*5e-5 = 0.01506 + 0.024 + 0.0003 = 0.03936 s.
  EXPECT_NEAR(AllReduceTime(kBytes, 16, TwoTier(AllReduceAlgorithm::kHierarchical)), 0.03936,
              1e-14);
  // Inside one node it is the in-node ring.
  EXPECT_NEAR(AllReduceTime(kBytes, 4, TwoTier(AllReduceAlgorithm::kHierarchical)), 0.01506, 1e-15);
}

TEST(HierarchicalAllReduce, SplitsTheBetweenNodeRingOverTheRails) {
  const Link intra = MakeLink(1e10, 1e-5), inter = MakeLink(6.25e9, 5e-5);
  // 2 nodes x 4 with a network interface per device (4 rails): in node
  // 0.01506 s; between nodes each rail all-reduces S/4 = 2.5e7 B:
  // 2*1/2 * 2.5e7/6.25e9 + 2*1*5e-5 = 0.004 + 0.0001 = 0.0041 s; sum 0.01916 s.
  EXPECT_NEAR(HierarchicalAllReduceTime(kBytes, 4, 2, intra, inter, 4), 0.01916, 1e-14);
  // One rail is the node's one interface (the default): 0.03116 s, above.
  EXPECT_NEAR(HierarchicalAllReduceTime(kBytes, 4, 2, intra, inter), 0.03116, 1e-14);
  EXPECT_THROW(HierarchicalAllReduceTime(kBytes, 4, 2, intra, inter, 5), UsageError);
  EXPECT_THROW(HierarchicalAllReduceTime(kBytes, 4, 2, intra, inter, 0), UsageError);
}

TEST(FlatRingAcrossNodes, RunsAtTheSlowestLink) {
  // 8 devices over 2 nodes: B = min(1e10, 6.25e9), a = max(1e-5, 5e-5):
  // 2*7/8 * 0.016 + 14 * 5e-5 = 0.028 + 0.0007 = 0.0287 s.
  EXPECT_NEAR(AllReduceTime(kBytes, 8, TwoTier(AllReduceAlgorithm::kRing)), 0.0287, 1e-14);
}

TEST(AllReduceTime, RefusesMissingLinks) {
  CommModel comm = TwoTier(AllReduceAlgorithm::kHierarchical);
  comm.inter_node.bandwidth_bytes_per_s = 0;
  EXPECT_THROW(AllReduceTime(kBytes, 8, comm), UsageError);
  EXPECT_NO_THROW(AllReduceTime(kBytes, 4, comm));  // one node: no inter-node link used
  comm.intra_node.latency_s = -1;
  EXPECT_THROW(AllReduceTime(kBytes, 4, comm), UsageError);
  EXPECT_THROW(ParseAllReduce("butterfly"), UsageError);
  EXPECT_EQ(ParseAllReduce("tree"), AllReduceAlgorithm::kTree);
}

TEST(GradientBytes, ParametersTimesPrecision) {
  // ResNet-50's 25,557,032 FP32 gradients: 102,228,128 bytes.
  EXPECT_EQ(GradientBytes(25557032, 4), 102228128);
  EXPECT_THROW(GradientBytes(-1, 4), UsageError);
}

}  // namespace
}  // namespace fitspeed
