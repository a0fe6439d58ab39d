// The all-reduce between devices in the step model: PyTorch DDP's buckets
// overlapped with the backward pass, the serial all-reduce, and the two-level
// all-reduce over nodes, against hand calculations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/project/scaling.h"
#include "fitspeed/timing/data_parallel.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

constexpr double kMs = 1e-3;
constexpr double kLayerBytes = 262144;  // 256 x 256 FP32 weights

// A device on which every pass that does anything takes 1 ms: peaks so high
// that compute and memory take ~1e-22 s, and a 1 ms kernel launch. Its
// devices link moves one layer's gradient over a 2-device ring in 1 ms:
// 2(n-1)/n * S/B = S/B = 262144 B / 2.62144e8 B/s, no latency. The network
// link (between nodes) is half as fast with 10 us per message.
Device SlowLaunchDevice(bool network = true) {
  std::string links = R"([{"name": "pcie", "connects": "devices",
             "bandwidth_bytes_per_s": {"value": 2.62144e8, "source": "test"},
             "latency_s": {"value": 0, "source": "test"}})";
  if (network) {
    links += R"(, {"name": "ethernet", "connects": "network",
             "bandwidth_bytes_per_s": {"value": 1.31072e8, "source": "test"},
             "latency_s": {"value": 1e-5, "source": "test"}})";
  }
  links += "]";
  return ParseDeviceJson(R"({
  "schema": "fitspeed.device/1", "name": "slow-launch", "kind": "gpu",
  "cores": {"value": 1, "source": "test"},
  "peak_flops_per_s": {"fp32": {"value": 1e30, "source": "test"}},
  "memory": {"bandwidth_bytes_per_s": {"value": 1e30, "source": "test"},
             "capacity_bytes": {"value": 8589934592, "source": "test"}},
  "efficiency": {"compute": {"points": [[1e6, 1.0]], "source": "test"},
                 "memory": {"points": [[1e6, 1.0]], "source": "test"}},
  "overheads": {"kernel_launch_s": {"value": 1e-3, "source": "test"},
                "step_host_s": {"value": 0, "source": "test"}},
  "tiles": {"batch_multiple": {"value": 1, "source": "test"},
            "feature_multiple_fp32": {"value": 1, "source": "test"},
            "feature_multiple_tensor": {"value": 8, "source": "test"}},
  "links": )" + links + "}",
                         "slow-launch.json");
}

// input {256} -> d1 -> d2 -> d3 -> d4 (256 units each, no bias) -> loss.
Network FourDense() {
  Network net("four-dense", Shape::Vector(256));
  DenseAttrs dense;
  dense.units = 256;
  dense.bias = false;
  std::string x = "input";
  for (const char* name : {"d1", "d2", "d3", "d4"}) x = net.Dense(x, dense, name);
  net.SoftmaxCrossEntropy(x);
  net.Finalize();
  return net;
}

double Backward(const LayerTime& t) {
  return t.passes[static_cast<size_t>(Pass::kBackwardData)].time_s +
         t.passes[static_cast<size_t>(Pass::kBackwardWeights)].time_s;
}

DeviceModelOptions ThreeBuckets() {
  DeviceModelOptions o;
  o.devices = 2;
  o.overlap = true;
  o.first_bucket_bytes = kLayerBytes;  // closes after d4
  o.bucket_bytes = 2 * kLayerBytes;    // d3 + d2, then d1 alone
  return o;
}

TEST(StepOverlap, ThreeBucketsMatchTheHandTimeline) {
  const ModeledStep step = ModelStep(FourDense(), SlowLaunchDevice(), 64, ThreeBuckets());
  // The backward pass, last layer first: the loss's backward-data (1 ms);
  // d4, d3, d2 each backward-data and backward-weights (2 ms); d1 only
  // backward-weights (the input needs no gradient, 1 ms); 8 ms in all.
  ASSERT_EQ(step.layers.size(), 6u);  // input, d1..d4, loss
  EXPECT_NEAR(Backward(step.layers[5]), 1 * kMs, 1e-12);
  for (int id = 2; id <= 4; ++id) EXPECT_NEAR(Backward(step.layers[id]), 2 * kMs, 1e-12);
  EXPECT_NEAR(Backward(step.layers[1]), 1 * kMs, 1e-12);
  EXPECT_NEAR(step.backward_s, 8 * kMs, 1e-12);
  // Gradients ready: d4 at 1+2 = 3 ms, d3 at 5, d2 at 7, d1 at 8.
  // Buckets (first 1 layer, then 2): {d4} ready 3 ms, {d3, d2} ready 7 ms,
  // {d1} ready 8 ms; all-reduce 1 ms per layer on 2 devices.
  //   {d4}:     starts 3, ends 4
  //   {d3, d2}: starts 7, ends 9
  //   {d1}:     ready 8 but the communicator is busy until 9: 9 to 10
  // All of it 1 + 2 + 1 = 4 ms; exposed 10 - 8 = 2 ms.
  EXPECT_EQ(step.comm_buckets, 3);
  EXPECT_NEAR(step.comm_s, 4 * kMs, 1e-12);
  EXPECT_NEAR(step.exposed_comm_s, 2 * kMs, 1e-12);
  // The step waits for the exposed part only.
  EXPECT_NEAR(step.step_time_s, step.compute_s + step.update_s + 2 * kMs + step.host_s, 1e-12);
}

TEST(StepOverlap, SerialIsOneAllReduceAfterTheBackwardPass) {
  DeviceModelOptions o = ThreeBuckets();
  o.overlap = false;
  const ModeledStep step = ModelStep(FourDense(), SlowLaunchDevice(), 64, o);
  // All four layers' gradients, 4 x 262144 B, in one all-reduce: 4 ms, all exposed.
  EXPECT_EQ(step.comm_buckets, 1);
  EXPECT_NEAR(step.comm_s, 4 * kMs, 1e-12);
  EXPECT_DOUBLE_EQ(step.exposed_comm_s, step.comm_s);
  EXPECT_NEAR(step.step_time_s, step.compute_s + step.update_s + 4 * kMs + step.host_s, 1e-12);
  // The same step overlapped is 2 ms shorter (ThreeBucketsMatchTheHandTimeline).
  const ModeledStep overlapped = ModelStep(FourDense(), SlowLaunchDevice(), 64, ThreeBuckets());
  EXPECT_NEAR(step.step_time_s - overlapped.step_time_s, 2 * kMs, 1e-12);
}

TEST(StepOverlap, SerialModelIsUnchanged) {
  // The serial all-reduce is the ring formula on all gradients, as before
  // buckets existed: on the 4-layer net over 4 devices, S = 1048576 B,
  // 2*3/4 * S / 2.62144e8 = 6 ms (no latency).
  DeviceModelOptions o;
  o.devices = 4;
  o.overlap = false;
  const ModeledStep step = ModelStep(FourDense(), SlowLaunchDevice(), 64, o);
  EXPECT_NEAR(step.comm_s, 6 * kMs, 1e-12);
  EXPECT_NEAR(step.comm_s, RingAllReduceTime(4 * kLayerBytes, 4, Link{2.62144e8, 0}), 1e-15);
  EXPECT_NEAR(step.device_step_s, step.compute_s + step.update_s + step.comm_s + step.host_s,
              1e-15);
}

TEST(StepOverlap, OneBucketHidesNothingAndOneDeviceHasNoCommunication) {
  // DDP's defaults (first 1 MiB, then 25 MiB): the 1 MiB of gradients fill
  // the first bucket only when d1 joins it, at the end of the backward pass:
  // one bucket, nothing hidden, the serial time.
  DeviceModelOptions o;
  EXPECT_FALSE(o.overlap);  // serial by default (docs/validation.md, "Pollux placements")
  o.devices = 2;
  o.overlap = true;
  EXPECT_EQ(o.bucket_bytes, kDefaultBucketBytes);
  EXPECT_EQ(o.first_bucket_bytes, kDefaultFirstBucketBytes);
  const ModeledStep step = ModelStep(FourDense(), SlowLaunchDevice(), 64, o);
  EXPECT_EQ(step.comm_buckets, 1);
  EXPECT_NEAR(step.exposed_comm_s, step.comm_s, 1e-15);
  o.devices = 1;
  const ModeledStep one = ModelStep(FourDense(), SlowLaunchDevice(), 64, o);
  EXPECT_EQ(one.comm_buckets, 0);
  EXPECT_DOUBLE_EQ(one.comm_s, 0);
  EXPECT_DOUBLE_EQ(one.exposed_comm_s, 0);
}

TEST(StepOverlap, HierarchicalOverNodesMatchesTheFormula) {
  // 8 devices, 4 per node, serial: one all-reduce of S = 1048576 B,
  //   in each node: 2*3/4 * S / 2.62144e8 = 6 ms;
  //   over 2 nodes: 2*1/2 * S / 1.31072e8 + 2*1*10 us = 8 ms + 20 us;
  // 14.02 ms (HierarchicalAllReduceTime).
  DeviceModelOptions o;
  o.devices = 8;
  o.devices_per_node = 4;
  o.overlap = false;
  const ModeledStep step = ModelStep(FourDense(), SlowLaunchDevice(), 64, o);
  EXPECT_EQ(step.nodes, 2);
  EXPECT_NEAR(step.comm_s, 14.02 * kMs, 1e-12);
  EXPECT_NEAR(
      step.comm_s,
      HierarchicalAllReduceTime(4 * kLayerBytes, 4, 2, Link{2.62144e8, 0}, Link{1.31072e8, 1e-5}),
      1e-15);
  // Overlapped, each bucket pays both levels: with ThreeBuckets' sizes a
  // layer costs 1.5 + 2 ms + 20 us = 3.52 ms, two layers 7.02 ms.
  //   {d4}: 3 to 6.52; {d3, d2}: 7 to 14.02; {d1}: 14.02 to 17.54.
  // Exposed 17.54 - 8 = 9.54 ms of 14.06 ms.
  DeviceModelOptions b = ThreeBuckets();
  b.devices = 8;
  b.devices_per_node = 4;
  const ModeledStep bucketed = ModelStep(FourDense(), SlowLaunchDevice(), 64, b);
  EXPECT_NEAR(bucketed.comm_s, 14.06 * kMs, 1e-12);
  EXPECT_NEAR(bucketed.exposed_comm_s, 9.54 * kMs, 1e-12);
  // A network interface per device: the between-node ring's S is split over
  // the node's 4 interfaces, S/4 = 262144 B each:
  //   2*1/2 * 262144 / 1.31072e8 + 2*1*10 us = 2 ms + 20 us; with the 6 ms in
  //   node 8.02 ms.
  Device per_device = SlowLaunchDevice();
  for (DeviceLink& l : per_device.links) l.per_device = l.connects == "network";
  EXPECT_NEAR(ModelStep(FourDense(), per_device, 64, o).comm_s, 8.02 * kMs, 1e-12);
  // Devices in one node (per node >= devices) take the in-node ring only.
  o.devices_per_node = 8;
  EXPECT_NEAR(ModelStep(FourDense(), SlowLaunchDevice(), 64, o).comm_s,
              RingAllReduceTime(4 * kLayerBytes, 8, Link{2.62144e8, 0}), 1e-15);
}

TEST(StepOverlap, NodesNeedANetworkLinkAndWholeNodes) {
  DeviceModelOptions o;
  o.devices = 8;
  o.devices_per_node = 4;
  try {
    ModelStep(FourDense(), SlowLaunchDevice(false), 64, o);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no network link"));
    EXPECT_THAT(e.what(), HasSubstr("--links"));
  }
  o.devices_per_node = 3;
  EXPECT_THROW(ModelStep(FourDense(), SlowLaunchDevice(), 64, o), UsageError);
  o.devices_per_node = 4;
  o.bucket_bytes = 0;
  EXPECT_THROW(ModelStep(FourDense(), SlowLaunchDevice(), 64, o), UsageError);
}

}  // namespace
}  // namespace fitspeed
