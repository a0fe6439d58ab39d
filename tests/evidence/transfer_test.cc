// Transfer from a run on one device to another: a hand calculation of a
// host-overhead-only transfer, recovery of parameters set by hand, the
// parameter choice at one batch size, refusals, and the validation on the
// published cases (every prediction out-of-sample).
#include "fitspeed/evidence/transfer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

std::string MeasuredDirTransfer() {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/measured";
}

// A case of `network` on `device` whose measured throughput is `throughput_sps`.
MeasuredCase Case(const std::string& network, const std::string& device, int64_t batch,
                  double throughput_sps, Precision precision = Precision::kFp32) {
  MeasuredCase c;
  c.network = network;
  c.device = device;
  c.batch = batch;
  c.throughput_sps = throughput_sps;
  c.precision = precision;
  c.source = "hand";
  c.line = static_cast<int>(batch);
  return c;
}

std::vector<std::string> Names(const std::vector<CalibratedParameter>& parameters) {
  std::vector<std::string> names;
  for (const CalibratedParameter& p : parameters) names.push_back(p.name);
  return names;
}

TEST(Transfer, OneSmallBatchDeterminesTheHostOverheadOnlyHandCalculation) {
  // mlp-mnist at batch 1: a few tiny kernels, so the modeled step on a V100 is
  // its catalog host overhead h_A plus a device part D_A of microseconds
  // (launches); the step depends on the host overhead far more than on the
  // compute scale, and one point fits one parameter: the host overhead.
  //   measured step on A:  T_A = D_A + 10 ms            (the user's run)
  //   fitted host:         h   = T_A - D_A = 10 ms       (the model is linear in h)
  //   prediction on B:     T_B = D_B + h                 (default: the host overhead carried)
  //                        T_B = D_B + h_B               (transfer_host false: B keeps its own)
  // with D_B = (B's catalog step) - h_B. E.g. D_A ~ 0.1 ms gives a measured
  // 1 / 10.1 ms = 99 samples/s on A, and B (an A100) about 1 / (D_B + 10 ms).
  const Device a = LoadDevice("v100-sxm2");
  const Device b = LoadDevice("a100");
  const Network net = LoadNetwork("mlp-mnist");
  const double d_a = ModelStep(net, a, 1).step_time_s - a.step_host_s;
  const double d_b = ModelStep(net, b, 1).step_time_s - b.step_host_s;
  ASSERT_GT(d_a, 0);
  ASSERT_LT(d_a, 0.002);  // microseconds to a millisecond: the host overhead dominates
  const double host_s = 0.010;
  const std::vector<MeasuredCase> run = {Case("mlp-mnist", "v100-sxm2", 1, 1 / (d_a + host_s))};

  const TransferCalibration t = CalibrateTransfer(a, b, run);
  ASSERT_TRUE(t.converged);
  EXPECT_EQ(t.points, 1);
  EXPECT_EQ(Names(t.fitted), std::vector<std::string>{"step_host_s"});
  ASSERT_EQ(t.applied.size(), 1u);
  EXPECT_NEAR(t.applied[0].value, host_s, 1e-7);
  // The compute scale was a candidate (FP32 matrix work) but one point fits one parameter.
  const auto compute =
      std::find_if(t.kept.begin(), t.kept.end(), [](const auto& k) { return k.name == "compute"; });
  ASSERT_NE(compute, t.kept.end());
  EXPECT_THAT(compute->reason, HasSubstr("1 measured point fits 1 parameter"));
  EXPECT_NEAR(t.source_after.max_abs, 0, 1e-6);  // one point, one parameter: exact
  EXPECT_NEAR(ModelStep(net, t.target, 1).step_time_s, d_b + host_s, 1e-9);

  // Without the host overhead nothing carries over: B as catalogued.
  TransferOptions options;
  options.transfer_host = false;
  const TransferCalibration kept = CalibrateTransfer(a, b, run, options);
  EXPECT_TRUE(kept.applied.empty());
  EXPECT_NEAR(ModelStep(net, kept.target, 1).step_time_s, d_b + b.step_host_s, 1e-12);
}

TEST(Transfer, TwoBatchesRecoverComputeScaleAndHostSetByHand) {
  // Measurements made exactly on a V100 whose compute curve is 0.8 of the
  // catalog's and whose host overhead is 4 ms: the calibration finds both,
  // and B gets both (only the compute scale without transfer_host).
  const Device a = LoadDevice("v100-sxm2");
  const Device b = LoadDevice("a100");
  const Network net = LoadNetwork("resnet50");
  CalibratedParameter scale{"compute_scale", "", 1, 0.8};
  CalibratedParameter host{"step_host_s", "s", 0, 0.004};
  const Device truth = ApplyCalibration(a, {scale, host});
  std::vector<MeasuredCase> run;
  for (int64_t batch : {16, 64, 256}) {
    // Two log lines per batch: the median of each batch is one point.
    for (double jitter : {0.99, 1.01}) {
      run.push_back(Case("resnet50", "v100-sxm2", batch,
                         jitter * ModelStep(net, truth, batch).throughput_sps));
    }
  }
  const TransferCalibration t = CalibrateTransfer(a, b, run);
  ASSERT_TRUE(t.converged);
  EXPECT_EQ(t.cases, 6);
  EXPECT_EQ(t.points, 3);
  ASSERT_EQ(Names(t.fitted), (std::vector<std::string>{"compute_scale", "step_host_s"}));
  EXPECT_NEAR(t.fitted[0].value, 0.8, 1e-5);
  EXPECT_NEAR(t.fitted[1].value, 0.004, 1e-8);
  EXPECT_EQ(Names(t.applied), (std::vector<std::string>{"compute_scale", "step_host_s"}));
  TransferOptions scales_only;
  scales_only.transfer_host = false;
  EXPECT_EQ(Names(CalibrateTransfer(a, b, run, scales_only).applied),
            std::vector<std::string>{"compute_scale"});
  const Device expected = ApplyCalibration(b, {scale, host});
  for (int64_t batch : {32, 512}) {
    EXPECT_NEAR(ModelStep(net, t.target, batch).step_time_s,
                ModelStep(net, expected, batch).step_time_s,
                1e-6 * ModelStep(net, expected, batch).step_time_s);
  }
}

TEST(Transfer, MixedPrecisionAtOneLargeBatchFitsTheTensorScale) {
  // At batch 256 ResNet-50's mixed-precision step is mostly tensor-core work:
  // the one point (measured at 80% of the catalog's speed) fits the tensor
  // scale, the host overhead is kept.
  const Device a = LoadDevice("v100-sxm2");
  const Device b = LoadDevice("a100");
  DeviceModelOptions mixed;
  mixed.precision = Precision::kMixed;
  const double catalog_sps = ModelStep(LoadNetwork("resnet50"), a, 256, mixed).throughput_sps;
  MeasuredCase c = Case("resnet50", "v100-sxm2", 256, 0.8 * catalog_sps, Precision::kMixed);
  const TransferCalibration t = CalibrateTransfer(a, b, {c});
  EXPECT_EQ(Names(t.fitted), std::vector<std::string>{"tensor_scale"});
  EXPECT_EQ(Names(t.applied), std::vector<std::string>{"tensor_scale"});
  EXPECT_NEAR(t.source_after.max_abs, 0, 1e-6);
}

TEST(Transfer, Refusals) {
  const Device v100 = LoadDevice("v100-sxm2");
  const Device a100 = LoadDevice("a100");
  EXPECT_THROW(CalibrateTransfer(v100, a100, {}), DataError);
  // A case of another device, of two networks, of a precision A lacks.
  try {
    CalibrateTransfer(v100, a100, {Case("resnet50", "t4", 64, 300)});
    ADD_FAILURE() << "a case of another device was accepted";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("device"));
  }
  try {
    CalibrateTransfer(
        v100, a100, {Case("resnet50", "v100-sxm2", 64, 300), Case("vgg16", "v100-sxm2", 64, 200)});
    ADD_FAILURE() << "cases of two networks were accepted";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("one network"));
  }
  EXPECT_THROW(
      CalibrateTransfer(v100, a100, {Case("resnet50", "v100-sxm2", 64, 300, Precision::kTf32)}),
      DataError);
  EXPECT_THROW(CalibrateTransfer(v100, a100, {Case("no-such-net", "v100-sxm2", 64, 300)}),
               DataError);
  // Devices of different kinds: the scales do not carry over.
  EXPECT_THROW(
      CalibrateTransfer(v100, LoadDevice("tpu-v3-8"), {Case("resnet50", "v100-sxm2", 64, 300)}),
      UsageError);
  TransferOptions bad;
  bad.calibration.max_iterations = 0;
  EXPECT_THROW(CalibrateTransfer(v100, a100, {Case("resnet50", "v100-sxm2", 64, 300)}, bad),
               UsageError);
}

// Each transferred case is predicted from a fit on the other device's cases only (never its
// own); both devices' runs are usually the same publisher's, so this is not out of sample by
// publisher.
TEST(ValidateTransfer, PublishedPairsFitOnTheOtherDeviceAndAreConsistent) {
  const std::vector<MeasuredCase> cases = PublishedCases(MeasuredDirTransfer());
  const TransferValidation v = ValidateTransfer(cases);
  ASSERT_FALSE(v.cases.empty());
  ASSERT_FALSE(v.pairs.empty());
  EXPECT_EQ(v.overall.cases, static_cast<int>(v.cases.size()));
  for (const TransferredCase& c : v.cases) {
    EXPECT_NE(c.source_device, c.target_device);
    EXPECT_EQ(c.pair, c.source_device + "->" + c.target_device);
    EXPECT_NEAR(c.log_ratio, std::log(c.measured_sps / c.predicted_sps), 1e-12);
    EXPECT_NEAR(c.error_pct, 100 * (c.predicted_sps / c.measured_sps - 1), 1e-9);
    EXPECT_FALSE(c.source.empty());
    EXPECT_GT(c.line, 0);
    // The fold that predicted it was fitted on the source device's cases (another device).
    for (const TransferFold& f : v.folds) {
      if (f.source_device == c.source_device && f.target_device == c.target_device &&
          f.network == c.network && f.precision == c.precision && f.framework == c.framework &&
          f.devices == c.devices) {
        EXPECT_TRUE(f.computed);
        EXPECT_GE(f.source_cases, 1);
      }
    }
  }
  // Every pair is of one kind, and both directions of a pair are validated.
  for (const TransferPairSummary& p : v.pairs) {
    EXPECT_EQ(LoadDevice(p.source_device).kind, LoadDevice(p.target_device).kind);
    const bool reverse = std::any_of(v.pairs.begin(), v.pairs.end(), [&p](const auto& q) {
      return q.source_device == p.target_device && q.target_device == p.source_device;
    });
    EXPECT_TRUE(reverse) << p.pair;
  }
  EXPECT_TRUE(std::isfinite(v.overall.median_abs_error_pct));
  EXPECT_EQ(v.other_rule.cases, v.overall.cases);
}

}  // namespace
}  // namespace fitspeed
