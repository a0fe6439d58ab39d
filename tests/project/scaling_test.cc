#include "fitspeed/project/scaling.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

constexpr double kBytes = 1e8;  // a 25M-parameter FP32 gradient

Link MakeLink(double bandwidth, double latency) { return Link{bandwidth, latency}; }

TEST(OverlapTime, LimitsAtGammaOneAndLargeGamma) {
  // g = 1: no overlap, 0.3 + 0.1 = 0.4. g = 2: sqrt(0.09 + 0.01) = 0.3162278.
  EXPECT_NEAR(OverlapTime(0.3, 0.1, 1), 0.4, 1e-15);
  EXPECT_NEAR(OverlapTime(0.3, 0.1, 2), std::sqrt(0.1), 1e-15);
  // Large g -> max(0.3, 0.1): 0.3*(1 + 3^-1000)^(1/1000) = 0.3 to double precision.
  EXPECT_NEAR(OverlapTime(0.3, 0.1, 1000), 0.3, 1e-15);
  EXPECT_EQ(OverlapTime(0.1, 0.3, INFINITY), 0.3);
  // Equal parts: 2^(1/g) of either; g = 2: 0.2*sqrt(2) = 0.2828427.
  EXPECT_NEAR(OverlapTime(0.2, 0.2, 2), 0.2 * std::sqrt(2.0), 1e-15);
  // 1e6 would overflow a naive pow at g = 60; the scaled form does not.
  EXPECT_NEAR(OverlapTime(1e6, 1.0, 60), 1e6, 1e-6);
  EXPECT_THROW(OverlapTime(0.3, 0.1, 0.5), UsageError);
}

DataParallelModel Model(double v0, double t, double bytes, double gamma = 1) {
  DataParallelModel m;
  m.single_device.v0_sps = v0;
  m.single_device.t_s = t;
  m.gradient_bytes = bytes;
  m.comm.intra_node = MakeLink(1e10, 0);
  m.overlap_gamma = gamma;
  return m;
}

TEST(Scaling, WeakScalingIsPerfectWithoutCommunication) {
  // t_comm = 0 (no gradient bytes): T_n(b) = T_1(b), speed-up n, efficiency 1.
  const DataParallelModel m = Model(250, 0.04, 0);
  for (double b : {1.0, 32.0, 4096.0}) {
    for (const ScalingRow& row : Scaling(m, ScalingMode::kWeak, b, {1, 2, 3, 8, 64, 1000})) {
      EXPECT_NEAR(row.efficiency, 1, 1e-12) << row.devices << " devices, batch " << b;
      EXPECT_NEAR(row.speedup, row.devices, 1e-9);
    }
  }
}

TEST(Scaling, StrongScalingSplitsTheGlobalBatch) {
  // v0 = 100/s, t = 0.1 s, B = 100, no comm: T_1 = 1.1 s; T_4 = 25/100 + 0.1 = 0.35 s;
  // speed-up 1.1/0.35 = 3.142857, efficiency 0.7857143.
  const std::vector<ScalingRow> rows =
      Scaling(Model(100, 0.1, 0), ScalingMode::kStrong, 100, {1, 4});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].per_device_batch, 25);
  EXPECT_EQ(rows[1].global_batch, 100);
  EXPECT_NEAR(rows[1].step_time_s, 0.35, 1e-15);
  EXPECT_NEAR(rows[1].speedup, 1.1 / 0.35, 1e-12);
  EXPECT_NEAR(rows[1].efficiency, 1.1 / 0.35 / 4, 1e-12);
}

TEST(Scaling, WeakScalingPaysTheAllReduce) {
  // v0 = 100, t = 0.1, b = 50, ring of 1e8 B at 1e10 B/s over 4: t_comm = 0.015;
  // T_4 = 0.5 + 0.1 + 0.015 = 0.615, efficiency 0.6/0.615 = 0.9756098.
  const std::vector<ScalingRow> rows =
      Scaling(Model(100, 0.1, kBytes), ScalingMode::kWeak, 50, {4});
  EXPECT_NEAR(rows[0].comm_s, 0.015, 1e-15);
  EXPECT_NEAR(rows[0].step_time_s, 0.615, 1e-14);
  EXPECT_NEAR(rows[0].efficiency, 0.6 / 0.615, 1e-12);
}

TEST(LargestUsefulDevices, FindsTheThroughputPeak) {
  // Latency-bound ring: a = 0.05 s, no bytes. Strong scaling of B = 1000 at
  // v0 = 100/device, t = 0.01: T(n) = 10/n + 0.01 + 0.1(n-1), minimal at
  // n = sqrt(10/0.1) = 10: T(9) = 1.9211, T(10) = 1.91, T(11) = 1.9191.
  DataParallelModel m = Model(100, 0.01, 0);
  m.comm.intra_node = MakeLink(1e9, 0.05);
  const UsefulDevices useful = LargestUsefulDevices(m, 1000, 64, 0.6);
  EXPECT_EQ(useful.fastest_devices, 10);
  EXPECT_NEAR(useful.fastest_throughput_sps, 1000 / 1.91, 1e-9);
  // Efficiency T(1)/(n T(n)) = 10.01/(n T(n)): n = 8 -> 10.01/15.68 = 0.638;
  // n = 9 -> 10.01/17.29 = 0.579 < 0.6.
  EXPECT_EQ(useful.efficient_devices, 8);
  // A device limit below the peak caps the answer.
  EXPECT_EQ(LargestUsefulDevices(m, 1000, 6, 0.6).fastest_devices, 6);
  EXPECT_THROW(LargestUsefulDevices(m, 1000, 0), UsageError);
}

TEST(FitRingToFixedTimes, RecoversRingShapedFixedTimes) {
  // t(n) = 0.05 + 0.02 * 2(n-1)/n + 0.001 * 2(n-1):
  // t(2) = 0.072, t(3) = 0.05 + 0.0266667 + 0.004, t(4) = 0.05 + 0.03 + 0.006 = 0.086.
  DeviceScaling scaling;
  scaling.label = "synthetic";
  scaling.rows = {{1, 0.05, 0, 0, 0},
                  {2, 0.072, 0, 0, 0},
                  {3, 0.05 + 0.08 / 3 + 0.004, 0, 0, 0},
                  {4, 0.086, 0, 0, 0}};
  const RingCommFit fit = FitRingToFixedTimes(scaling);
  EXPECT_NEAR(fit.bandwidth_term_s, 0.02, 1e-12);
  EXPECT_NEAR(fit.latency_s, 0.001, 1e-12);
  EXPECT_EQ(fit.points, 3);
  // Extrapolation to 8: 0.02*1.75 + 0.001*14 = 0.049 s of communication.
  EXPECT_NEAR(fit.Predict(8), 0.049, 1e-12);
  // A 1e8-byte gradient over S/B = 0.02 s is a 5e9 B/s link.
  EXPECT_NEAR(fit.AsLink(1e8).bandwidth_bytes_per_s, 5e9, 1e-3);
}

TEST(FitRingToFixedTimes, ClipsNegativeTermsToZero) {
  // t falls with n: the best non-negative fit has no communication.
  DeviceScaling scaling;
  scaling.rows = {{1, 0.05, 0, 0, 0}, {2, 0.04, 0, 0, 0}, {4, 0.03, 0, 0, 0}};
  const RingCommFit fit = FitRingToFixedTimes(scaling);
  EXPECT_EQ(fit.bandwidth_term_s, 0);
  EXPECT_EQ(fit.latency_s, 0);
  DeviceScaling no_single;
  no_single.rows = {{2, 0.04, 0, 0, 0}};
  EXPECT_THROW(FitRingToFixedTimes(no_single), DataError);
}

TEST(FitOverlapModel, RecoversSyntheticParameters) {
  // Steps generated from v0 = 200, t = 0.02, S/B = 0.05 s, a = 2e-4 s, g = 2.
  SpeedLaw law;
  law.v0_sps = 200;
  law.t_s = 0.02;
  std::vector<MultiDeviceStep> steps;
  for (int n : {2, 3, 4}) {
    for (double b : {8.0, 16.0, 32.0, 64.0, 128.0}) {
      const double comm = 2.0 * (n - 1) / n * 0.05 + 2.0 * (n - 1) * 2e-4;
      steps.push_back({n, b, std::hypot(b / 200 + 0.02, comm), std::nullopt});
    }
  }
  const OverlapFit fit = FitOverlapModel(law, steps);
  EXPECT_NEAR(fit.gamma, 2, 1e-5);
  EXPECT_NEAR(fit.bandwidth_term_s, 0.05, 1e-7);
  EXPECT_NEAR(fit.latency_s, 2e-4, 1e-7);
  EXPECT_LT(fit.rel_rmse, 1e-8);
  EXPECT_EQ(fit.points, 15);
  EXPECT_THROW(FitOverlapModel(law, {steps[0], steps[1]}), DataError);
}

TEST(FitRingCommTimes, FitsMeasuredAllReduceTimes) {
  // t_comm(n) = 0.04 * 2(n-1)/n + 0.002 * 2(n-1): n = 2 -> 0.044, n = 3 ->
  // 0.0533333 + 0.008 = 0.0613333, n = 4 -> 0.06 + 0.012 = 0.072. One device is ignored.
  const RingCommFit fit =
      FitRingCommTimes({{1, 0.5}, {2, 0.044}, {3, 0.16 / 3 + 0.008}, {4, 0.072}, {4, 0.072}});
  EXPECT_NEAR(fit.bandwidth_term_s, 0.04, 1e-12);
  EXPECT_NEAR(fit.latency_s, 0.002, 1e-12);
  EXPECT_EQ(fit.points, 4);
  EXPECT_THROW(FitRingCommTimes({{1, 0.5}}), DataError);
}

std::vector<MultiDeviceStep> SyntheticSteps(double gamma, bool with_exposed) {
  // v0 = 200, t = 0.02, S/B = 0.05 s, a = 2e-4 s.
  std::vector<MultiDeviceStep> steps;
  for (int n : {2, 3, 4}) {
    for (double b : {8.0, 32.0, 128.0}) {
      const double compute = b / 200 + 0.02;
      const double comm = 2.0 * (n - 1) / n * 0.05 + 2.0 * (n - 1) * 2e-4;
      const double step = std::pow(std::pow(compute, gamma) + std::pow(comm, gamma), 1 / gamma);
      steps.push_back({n, b, step, std::nullopt});
      if (with_exposed) steps.back().exposed_comm_s = step - compute;
    }
  }
  return steps;
}

TEST(FitOverlapModel, FitsGammaAloneWhenTheCommunicationIsKnown) {
  SpeedLaw law;
  law.v0_sps = 200;
  law.t_s = 0.02;
  RingCommFit comm;
  comm.bandwidth_term_s = 0.05;
  comm.latency_s = 2e-4;
  const OverlapFit fit = FitOverlapModel(law, SyntheticSteps(3, false), comm);
  EXPECT_NEAR(fit.gamma, 3, 1e-6);
  EXPECT_EQ(fit.bandwidth_term_s, 0.05);
  EXPECT_EQ(fit.latency_s, 2e-4);
}

TEST(FitOverlapModel, FitsStepAndExposedTimesTogether) {
  SpeedLaw law;
  law.v0_sps = 200;
  law.t_s = 0.02;
  const OverlapFit fit = FitOverlapModel(law, SyntheticSteps(1.5, true));
  EXPECT_NEAR(fit.gamma, 1.5, 1e-5);
  EXPECT_NEAR(fit.bandwidth_term_s, 0.05, 1e-7);
  EXPECT_EQ(fit.exposed_points, 9);
  EXPECT_LT(fit.exposed_rmse, 1e-8);
}

TEST(EpochModelFromScaling, TimesThePartialLastStepAtItsOwnBatch) {
  // 4 devices, 25 per device (B = 100), v0 = 100/device, t = 0.01, t_comm =
  // 0.05 (ring over 4 of 1e8/3 B at 1e9 B/s: 1.5 * 0.0333 = 0.05), g = 1.
  // N = 1050: 10 full steps of 0.25 + 0.01 + 0.05 = 0.31 s, then 50 samples
  // (12.5 per device): 0.125 + 0.01 + 0.05 = 0.185 s. Epoch = 3.1 + 0.185 = 3.285 s.
  DataParallelModel m = Model(100, 0.01, 1e8 / 3);
  m.comm.intra_node = MakeLink(1e9, 0);
  Workload w;
  w.samples_per_epoch = 1050;
  const EpochModel e = EpochModelFromScaling(m, 4, 25, w, "x4");
  EXPECT_EQ(e.steps_per_epoch, 11);
  EXPECT_NEAR(e.epoch_s, 3.285, 1e-12);
  // Dropping the remainder: 10 steps, 3.1 s.
  w.steps_rule = StepsRule::kDropRemainder;
  EXPECT_NEAR(EpochModelFromScaling(m, 4, 25, w).epoch_s, 3.1, 1e-12);
}

TEST(EpochModelFromScaling, OneDeviceWithoutCommIsTheLaw) {
  DataParallelModel m = Model(1000, 0.05, kBytes);
  m.single_device.covariance << 100, 0, 0, 1e-6;
  m.single_device.dof = 5;
  Workload w;
  w.samples_per_epoch = 50000;
  const EpochModel scaled = EpochModelFromScaling(m, 1, 64, w);
  const EpochModel direct = EpochModelFromLaw(m.single_device, 64, w);
  EXPECT_NEAR(scaled.epoch_s, direct.epoch_s, 1e-9);
  EXPECT_NEAR(scaled.epoch_stderr_s, direct.epoch_stderr_s, 1e-9);
}

// Model(1000, 0.05, 1e8): v0 = 1000, t = 0.05 on one device; 1e8 gradient
// bytes over a ring at 10 GB/s with no latency: 2(n-1)/n * 1e8/1e10 = 0.01 s
// on 2 devices.
DataParallelModel TenMillisecondsOnTwo() { return Model(1000, 0.05, 1e8); }

TEST(ProjectScaling, RowsAndEpochModelsPerModeAndBatch) {
  Workload w;
  w.samples_per_epoch = 50000;
  ScalingRequest request;
  request.devices = {1, 2, 200};
  request.weak = true;
  request.strong = true;
  const ScaledProjection p = ProjectScaling("gpu", TenMillisecondsOnTwo(), {100}, w, request);
  // Weak: 3 rows; strong: 3 rows, of which 200 devices get 0.5 samples each
  // (no epoch model).
  ASSERT_EQ(p.rows.size(), 6u);
  ASSERT_EQ(p.models.size(), 5u);
  EXPECT_EQ(p.models[1].label, "gpu weak n=2");
  // Weak, 2 devices of 100: global 200, 250 steps of 0.1 + 0.05 + 0.01 = 0.16 s: 40 s.
  EXPECT_NEAR(p.models[1].epoch_s, 40, 1e-9);
  EXPECT_EQ(p.models[4].label, "gpu strong n=2");
  // Strong, 100 over 2: 500 steps of 0.05 + 0.05 + 0.01 = 0.11 s: 55 s.
  EXPECT_NEAR(p.models[4].epoch_s, 55, 1e-9);
  EXPECT_EQ(p.rows[5].mode, ScalingMode::kStrong);
  EXPECT_EQ(p.rows[5].per_device_batch, 0.5);
  ASSERT_EQ(p.notes.size(), 1u);  // the model's numbers only
  EXPECT_EQ(p.notes[0], DataParallelModelNote("gpu", TenMillisecondsOnTwo()));
}

TEST(ProjectScaling, SaysWhereStrongScalingStopsPaying) {
  // Global batch 100 on n devices: 0.1/n + 0.05 + 0.02(n-1)/n s per step.
  // n = 1: 0.15 s, 666.7/s; 2: 0.11 s, 909.1/s (efficiency 0.68); 3:
  // 0.09667 s, 1034.5/s (0.52); 4: 0.09 s, 1111.1/s (0.42). Up to 4: the
  // peak is at 4, and efficiency >= 50% holds up to 3.
  Workload w;
  w.samples_per_epoch = 50000;
  ScalingRequest request;
  request.devices = {2};
  request.max_devices = 4;
  const ScaledProjection p = ProjectScaling("gpu", TenMillisecondsOnTwo(), {100}, w, request);
  ASSERT_EQ(p.notes.size(), 2u);
  EXPECT_EQ(p.notes[0],
            "gpu at global batch 100: throughput peaks at 4 devices (1111.1 samples/s, "
            "efficiency 42%); efficiency stays >= 50% up to 3 devices");
}

TEST(DataParallelModelNote, NamesLinksAndOverlap) {
  DataParallelModel m = TenMillisecondsOnTwo();
  m.comm.devices_per_node = 4;
  EXPECT_EQ(DataParallelModelNote("gpu", m),
            "gpu: ring all-reduce of 100000000 bytes; in-node 1.000e+10 B/s, latency 0 s; "
            "between nodes 0 B/s, latency 0 s; 4 devices per node; overlap g = 1");
}

}  // namespace
}  // namespace fitspeed
