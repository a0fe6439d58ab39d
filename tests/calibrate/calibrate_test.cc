// Calibration of a device to measured cases: recovery of parameters set by
// hand, leave-one-network-out on the held-out network only, refusals, the
// cases CSV reader, and a real calibration on published T4 numbers.
#include "fitspeed/calibrate/calibrate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "fitspeed/calibrate/cases.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/calibration.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

// `base` with its efficiency curves scaled and its overheads set by hand: the
// "true" device the synthetic cases are measured on.
Device TrueDevice(const Device& base, double compute_scale, double memory_scale, double launch_s,
                  double host_s) {
  Device d = base;
  ScaleComputeEfficiency(d, compute_scale);
  ScaleMemoryEfficiency(d, memory_scale);
  d.kernel_launch_s = launch_s;
  d.step_host_s = host_s;
  return d;
}

// Cases "measured" exactly on `truth`: the modeled throughput of each network
// at each batch, FP32 on one device.
std::vector<MeasuredCase> SyntheticCases(const Device& truth,
                                         const std::vector<std::string>& networks,
                                         const std::vector<int64_t>& batches,
                                         Precision precision = Precision::kFp32) {
  std::vector<MeasuredCase> cases;
  for (const std::string& name : networks) {
    const Network network = ZooNetwork(name);
    for (int64_t batch : batches) {
      MeasuredCase c;
      c.network = name;
      c.device = truth.name;
      c.batch = batch;
      c.precision = precision;
      DeviceModelOptions options;
      options.precision = precision;
      c.throughput_sps = ModelStep(network, truth, batch, options).throughput_sps;
      c.source = "synthetic";
      c.line = static_cast<int>(cases.size()) + 1;
      cases.push_back(c);
    }
  }
  return cases;
}

CalibrationOptions AllFourParameters() {
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kMemoryScale,
                        CalibrationParameter::kKernelLaunch, CalibrationParameter::kStepHost};
  return options;
}

const std::vector<std::string> kNetworks = {"cnn-cifar-small", "resnet18-cifar", "mobilenet-v1"};
const std::vector<int64_t> kBatches = {8, 32, 128, 512};

TEST(Calibrate, RecoversComputeScaleAndHostOverheadSetByHand) {
  const Device t4 = LoadDevice("t4");
  // Chosen: cuDNN reaching 0.7 of the catalog's compute efficiencies, 4 ms of
  // host work per step (catalog: 1 ms).
  const Device truth = TrueDevice(t4, 0.7, 1.0, t4.kernel_launch_s, 4e-3);
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kStepHost};
  const CalibrationResult r =
      CalibrateDevice(t4, SyntheticCases(truth, kNetworks, kBatches), options);
  ASSERT_TRUE(r.converged) << r.FullReport();
  ASSERT_EQ(r.parameters.size(), 2u);
  EXPECT_EQ(r.parameters[0].name, "compute_scale");
  EXPECT_NEAR(r.parameters[0].value, 0.7, 1e-7);
  EXPECT_EQ(r.parameters[1].name, "step_host_s");
  EXPECT_NEAR(r.parameters[1].value, 4e-3, 1e-9);
  EXPECT_EQ(r.fixed, (std::vector<std::string>{"memory_scale", "kernel_launch_s", "tensor_scale"}));
  EXPECT_EQ(r.dof, 12 - 2);
  // The catalog device predicts the slower truth too fast: errors before, none after.
  EXPECT_GT(r.before.max_abs, 0.05);
  EXPECT_LT(r.after.max_abs, 1e-7);
  // The calibrated device carries the values and what it was calibrated on.
  EXPECT_NEAR(r.device.compute_efficiency.points.back().efficiency,
              0.7 * t4.compute_efficiency.points.back().efficiency, 1e-8);
  EXPECT_NEAR(r.device.step_host_s, 4e-3, 1e-9);
  EXPECT_EQ(r.device.kernel_launch_s, t4.kernel_launch_s);
  // The compute scale is that of the Winograd curve too, and the file says so.
  ASSERT_FALSE(t4.winograd_efficiency.points.empty());
  EXPECT_NEAR(r.device.winograd_efficiency.points.back().efficiency,
              0.7 * t4.winograd_efficiency.points.back().efficiency, 1e-8);
  EXPECT_THAT(r.device.sources.at("efficiency.winograd"), HasSubstr("scaled with"));
  EXPECT_EQ(r.device.bases.at("efficiency.compute"), "fitted");
  EXPECT_EQ(r.device.bases.at("efficiency.winograd"), "fitted");
  EXPECT_EQ(ApplyCalibration(t4, r.parameters).bases.at("efficiency.compute"), "carried");
  ASSERT_EQ(r.device.calibrated_on.size(), 12u);
  EXPECT_EQ(r.device.calibrated_on.front(), "cnn-cifar-small/t4/fp32/x1/b8");
  EXPECT_THAT(r.device.sources.at("overheads.step_host_s"), HasSubstr("calibrated"));
}

TEST(Calibrate, RecoversSeparateFp32AndTensorCoreScalesSetByHand) {
  // A V100 with one curve for CUDA cores and tensor cores alike.
  Device v100 = LoadDevice("v100-sxm2");
  v100.tensor_efficiency.points.clear();
  // Chosen: FP32 kernels at 1.1x the catalog's efficiency, tensor-core kernels
  // at 0.6x of the same curve, 3 ms of host work per step.
  Device truth = TrueDevice(v100, 1.1, 1.0, v100.kernel_launch_s, 3e-3);
  truth.tensor_efficiency = v100.compute_efficiency;
  for (EfficiencyCurve::Point& p : truth.tensor_efficiency.points) p.efficiency *= 0.6;
  std::vector<MeasuredCase> cases = SyntheticCases(truth, {"resnet50"}, {32, 64, 128});
  for (const MeasuredCase& c :
       SyntheticCases(truth, {"resnet50"}, {32, 64, 128, 256}, Precision::kMixed)) {
    cases.push_back(c);
  }
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kStepHost,
                        CalibrationParameter::kTensorScale};
  options.leave_one_network_out = false;
  const CalibrationResult r = CalibrateDevice(v100, cases, options);
  ASSERT_TRUE(r.converged) << r.FullReport();
  ASSERT_EQ(r.parameters.size(), 3u);
  EXPECT_EQ(r.parameters[2].name, "tensor_scale");
  EXPECT_NEAR(r.parameters[0].value, 1.1, 1e-6);
  EXPECT_NEAR(r.parameters[1].value, 3e-3, 1e-8);
  EXPECT_NEAR(r.parameters[2].value, 0.6, 1e-6);
  EXPECT_LT(r.after.max_abs, 1e-6);
  // The calibrated device has a tensor curve of its own (0.6 x the compute
  // curve it started from) and keeps it through its JSON.
  ASSERT_EQ(r.device.tensor_efficiency.points.size(), v100.compute_efficiency.points.size());
  EXPECT_NEAR(r.device.tensor_efficiency.points.back().efficiency,
              0.6 * v100.compute_efficiency.points.back().efficiency, 1e-7);
  const Device again = ParseDeviceJson(DeviceToJson(r.device), "again.json");
  ASSERT_EQ(again.tensor_efficiency.points.size(), r.device.tensor_efficiency.points.size());
  EXPECT_THAT(r.device.sources.at("efficiency.tensor"), HasSubstr("calibrated"));
  // FP32 cases alone say nothing of the tensor cores: both columns are needed.
  std::vector<MeasuredCase> fp32_only(cases.begin(), cases.begin() + 3);
  const CalibrationResult blind = CalibrateDevice(v100, fp32_only, options);
  EXPECT_THAT(blind.warnings, testing::Contains(HasSubstr("rank deficient")));
}

TEST(CalibrateShared, OneScaleFromTwoDevicesPredictsAThird) {
  // The "truth": every GPU's kernels reach 0.7 of the catalog's compute
  // efficiencies (a network-specific factor), each GPU keeps its own overheads.
  auto scaled = [](const std::string& name) {
    return TrueDevice(LoadDevice(name), 0.7, 1.0, LoadDevice(name).kernel_launch_s,
                      LoadDevice(name).step_host_s);
  };
  std::vector<MeasuredCase> cases = SyntheticCases(scaled("t4"), {"resnet18-cifar"}, kBatches);
  for (const MeasuredCase& c : SyntheticCases(scaled("v100-sxm2"), {"resnet18-cifar"}, kBatches)) {
    cases.push_back(c);
  }
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale};
  const SharedCalibration r =
      CalibrateShared({LoadDevice("t4"), LoadDevice("v100-sxm2")}, cases, options);
  ASSERT_TRUE(r.converged) << r.solver_message;
  ASSERT_EQ(r.parameters.size(), 1u);
  EXPECT_EQ(r.parameters[0].name, "compute_scale");
  EXPECT_NEAR(r.parameters[0].value, 0.7, 1e-6);
  EXPECT_LT(r.after.max_abs, 1e-6);
  // Applied to a device without measurements, it predicts that device's truth.
  const Device k80 = ApplyCalibration(LoadDevice("k80"), r.parameters);
  const Network net = ZooNetwork("resnet18-cifar");
  EXPECT_NEAR(ModelStep(net, k80, 64).step_time_s / ModelStep(net, scaled("k80"), 64).step_time_s,
              1.0, 1e-6);
  EXPECT_THAT(k80.sources.at("efficiency.compute"), HasSubstr("calibrated elsewhere"));
  // A case of a device not given, and an unknown parameter, are refused.
  EXPECT_THROW(CalibrateShared({LoadDevice("t4")}, cases, options), DataError);
  CalibratedParameter bogus;
  bogus.name = "warp_scale";
  EXPECT_THROW(ApplyCalibration(k80, {bogus}), UsageError);
}

TEST(Calibrate, RecoversAllFourParametersSetByHand) {
  const Device t4 = LoadDevice("t4");
  // Chosen: compute x0.8, memory x0.9, 8 us per kernel, 3 ms per step.
  const Device truth = TrueDevice(t4, 0.8, 0.9, 8e-6, 3e-3);
  const CalibrationResult r =
      CalibrateDevice(t4, SyntheticCases(truth, kNetworks, kBatches), AllFourParameters());
  ASSERT_TRUE(r.converged) << r.FullReport();
  ASSERT_EQ(r.parameters.size(), 4u);
  EXPECT_NEAR(r.parameters[0].value, 0.8, 1e-6);
  EXPECT_NEAR(r.parameters[1].value, 0.9, 1e-6);
  EXPECT_NEAR(r.parameters[2].value, 8e-6, 1e-11);
  EXPECT_NEAR(r.parameters[3].value, 3e-3, 1e-8);
  EXPECT_LT(r.after.max_abs, 1e-6);
}

TEST(Calibrate, NoisyCasesGiveIntervalsThatCoverTheTruth) {
  const Device t4 = LoadDevice("t4");
  const Device truth = TrueDevice(t4, 0.7, 1.0, t4.kernel_launch_s, 4e-3);
  std::vector<MeasuredCase> cases = SyntheticCases(truth, kNetworks, kBatches);
  // Deterministic +/-2% "noise", alternating in sign.
  for (size_t i = 0; i < cases.size(); ++i) cases[i].throughput_sps *= i % 2 == 0 ? 1.02 : 0.98;
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kStepHost};
  const CalibrationResult r = CalibrateDevice(t4, cases, options);
  ASSERT_TRUE(r.converged);
  for (const CalibratedParameter& p : r.parameters) {
    EXPECT_GT(p.std_error, 0) << p.name;
    EXPECT_LT(p.ci_low, p.value);
    EXPECT_GT(p.ci_high, p.value);
  }
  EXPECT_LE(r.parameters[0].ci_low, 0.7);
  EXPECT_GE(r.parameters[0].ci_high, 0.7);
  EXPECT_LE(r.parameters[1].ci_low, 4e-3);
  EXPECT_GE(r.parameters[1].ci_high, 4e-3);
  // Each error is +/-2% of the truth's throughput, so about 2% after: 1/1.02 - 1 .. 1/0.98 - 1.
  EXPECT_NEAR(r.after.rms, 0.02, 0.005);
}

// The standard errors come from the Jacobian of the log ratios, whose
// derivatives calibrate.cc writes by hand: each equals sqrt(s^2 / sum J_i^2),
// s^2 = RSS / dof, with J_i = d ln(step_i) / d p taken here by central
// differences of ModelStep on the device with p moved by 1e-4 of its value
// (ApplyCalibration), one parameter fitted at a time.
TEST(Calibrate, StandardErrorsMatchFiniteDifferencesOfTheModeledStep) {
  const Device t4 = LoadDevice("t4");
  const Device truth = TrueDevice(t4, 0.7, 0.9, 6e-6, 4e-3);
  std::vector<MeasuredCase> cases = SyntheticCases(truth, kNetworks, kBatches);
  // Deterministic noise of -3%, 0 and +3% in turn.
  for (size_t i = 0; i < cases.size(); ++i) cases[i].throughput_sps *= 1 + 0.03 * (i % 3 - 1.0);
  for (CalibrationParameter parameter :
       {CalibrationParameter::kComputeScale, CalibrationParameter::kMemoryScale,
        CalibrationParameter::kKernelLaunch, CalibrationParameter::kStepHost}) {
    CalibrationOptions options;
    options.parameters = {parameter};
    const CalibrationResult r = CalibrateDevice(t4, cases, options);
    ASSERT_TRUE(r.converged) << r.FullReport();
    ASSERT_EQ(r.parameters.size(), 1u);
    const CalibratedParameter& fitted = r.parameters[0];
    ASSERT_FALSE(fitted.at_bound()) << fitted.name;
    // The step of case i on the device with the parameter at `value`.
    auto step_at = [&](size_t i, double value) {
      CalibratedParameter moved = fitted;
      moved.value = value;
      DeviceModelOptions model;
      model.precision = cases[i].precision;
      return ModelStep(ZooNetwork(cases[i].network), ApplyCalibration(t4, {moved}), cases[i].batch,
                       model)
          .step_time_s;
    };
    const double h = 1e-4 * fitted.value;
    double rss = 0, jj = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      ASSERT_NEAR(step_at(i, fitted.value), r.cases[i].after_step_s,
                  1e-9 * r.cases[i].after_step_s);
      const double j =
          (std::log(step_at(i, fitted.value + h)) - std::log(step_at(i, fitted.value - h))) /
          (2 * h);
      const double residual = std::log(r.cases[i].after_step_s / r.cases[i].measured_step_s);
      rss += residual * residual;
      jj += j * j;
    }
    EXPECT_NEAR(r.rss, rss, 1e-9 * rss) << fitted.name;
    EXPECT_NEAR(fitted.std_error, std::sqrt(rss / r.dof / jj), 1e-5 * fitted.std_error)
        << fitted.name;
  }
}

TEST(Calibrate, LeaveOneNetworkOutOfExactCasesPredictsEveryNetwork) {
  const Device t4 = LoadDevice("t4");
  const Device truth = TrueDevice(t4, 0.7, 1.0, t4.kernel_launch_s, 4e-3);
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kStepHost};
  const CalibrationResult r =
      CalibrateDevice(t4, SyntheticCases(truth, kNetworks, kBatches), options);
  ASSERT_EQ(r.held_out.size(), 3u);
  for (const HeldOutNetwork& fold : r.held_out) {
    EXPECT_TRUE(fold.computed) << fold.network;
    EXPECT_EQ(fold.cases, 4);
    EXPECT_EQ(fold.training_cases, 8);
    // The other two networks determine the truth, so the held-out one is predicted exactly.
    EXPECT_NEAR(fold.values[0], 0.7, 1e-6);
    EXPECT_LT(fold.error.max_abs, 1e-6) << fold.network;
  }
  ASSERT_TRUE(r.loo.has_value());
  EXPECT_EQ(r.loo->cases, 12);
  EXPECT_LT(r.loo->max_abs, 1e-6);
}

TEST(Calibrate, LeaveOneNetworkOutErrorIsThatOfTheHeldOutNetworkOnly) {
  const Device t4 = LoadDevice("t4");
  const Device truth = TrueDevice(t4, 0.7, 1.0, t4.kernel_launch_s, 4e-3);
  std::vector<MeasuredCase> cases = SyntheticCases(truth, kNetworks, kBatches);
  // mobilenet-v1 "measured" 10% faster than the truth at every batch.
  for (MeasuredCase& c : cases) {
    if (c.network == "mobilenet-v1") c.throughput_sps *= 1.1;
  }
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kStepHost};
  const CalibrationResult r = CalibrateDevice(t4, cases, options);
  ASSERT_EQ(r.held_out.size(), 3u);
  const HeldOutNetwork& mobilenet = r.held_out[2];
  ASSERT_EQ(mobilenet.network, "mobilenet-v1");
  // Fitted on the two exact networks, the fold recovers the truth and predicts
  // the truth's throughput for mobilenet: error = 1/1.1 - 1 = -0.0909... at
  // every batch. Had its own cases entered the fit, the error would be smaller.
  EXPECT_NEAR(mobilenet.values[0], 0.7, 1e-6);
  EXPECT_NEAR(mobilenet.error.median_abs, 1 - 1 / 1.1, 1e-6);
  EXPECT_NEAR(mobilenet.error.max_abs, 1 - 1 / 1.1, 1e-6);
  for (const CaseFit& c : r.cases) {
    if (c.measured.network == "mobilenet-v1") {
      EXPECT_NEAR(c.error_loo(), 1 / 1.1 - 1, 1e-6);
    }
  }
  // In-sample, the fit spreads the misfit over all cases: smaller than 9%.
  EXPECT_LT(r.after.max_abs, 1 - 1 / 1.1);
}

TEST(Calibrate, TooFewCasesOrNetworksAreRefusedClearly) {
  const Device t4 = LoadDevice("t4");
  const std::vector<MeasuredCase> one_case = SyntheticCases(t4, {"cnn-cifar-small"}, {32});
  try {
    CalibrateDevice(t4, one_case, AllFourParameters());
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("1 case(s) for 4 parameters"));
    EXPECT_THAT(e.what(), HasSubstr("compute, memory, launch, host"));
  }
  const std::vector<MeasuredCase> one_network = SyntheticCases(t4, {"cnn-cifar-small"}, kBatches);
  try {
    CalibrateDevice(t4, one_network, AllFourParameters());
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("at least 2 networks"));
  }
  // Without cross-validation one network is enough.
  CalibrationOptions options;
  options.leave_one_network_out = false;
  options.parameters = {CalibrationParameter::kStepHost};
  EXPECT_FALSE(CalibrateDevice(t4, one_network, options).loo.has_value());
  // A fold with fewer training cases than parameters is reported, not fitted:
  // 4 parameters, and 2 + 4 cases of two networks.
  std::vector<MeasuredCase> uneven = SyntheticCases(t4, {"cnn-cifar-small"}, {8, 64});
  for (const MeasuredCase& c : SyntheticCases(t4, {"resnet18-cifar"}, kBatches)) {
    uneven.push_back(c);
  }
  const CalibrationResult r = CalibrateDevice(t4, uneven, AllFourParameters());
  ASSERT_EQ(r.held_out.size(), 2u);
  EXPECT_TRUE(r.held_out[0].computed);  // trained on resnet18-cifar's 4 cases
  EXPECT_FALSE(r.held_out[1].computed);
  EXPECT_THAT(r.held_out[1].problem, HasSubstr("2 case(s) of the other networks"));
}

TEST(Calibrate, UnknownNetworkAndBadOptionsAreNamed) {
  const Device t4 = LoadDevice("t4");
  std::vector<MeasuredCase> cases = SyntheticCases(t4, {"cnn-cifar-small", "resnet18-cifar"}, {8});
  cases[1].network = "no-such-net";
  cases[1].source = "mine.csv";
  cases[1].line = 7;
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kStepHost};
  try {
    CalibrateDevice(t4, cases, options);
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("mine.csv:7"));
    EXPECT_THAT(e.what(), HasSubstr("no-such-net"));
  }
  options.parameters = {CalibrationParameter::kStepHost, CalibrationParameter::kStepHost};
  EXPECT_THROW(CalibrateDevice(t4, cases, options), UsageError);
  EXPECT_EQ(ParseCalibrationParameter("launch"), CalibrationParameter::kKernelLaunch);
  EXPECT_EQ(ParseCalibrationParameter("memory_scale"), CalibrationParameter::kMemoryScale);
  EXPECT_THROW(ParseCalibrationParameter("peak"), UsageError);
}

TEST(Calibrate, ScaleBoundsKeepEfficienciesAtMostOne) {
  const Device t4 = LoadDevice("t4");
  // A truth faster than any efficiency <= 1 allows: compute x3 (T4's largest
  // CUDA-core point, about 0.5, would become 1.5). The scale stops at 1 over
  // that point.
  double largest = 0;
  for (const EfficiencyCurve* curve : {&t4.compute_efficiency, &t4.winograd_efficiency}) {
    for (const EfficiencyCurve::Point& p : curve->points) largest = std::max(largest, p.efficiency);
  }
  ASSERT_GT(largest, 0.34);
  Device truth = t4;
  for (EfficiencyCurve* curve : {&truth.compute_efficiency, &truth.winograd_efficiency}) {
    for (EfficiencyCurve::Point& p : curve->points) p.efficiency *= 3;  // beyond 1 on purpose
  }
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kStepHost};
  const CalibrationResult r =
      CalibrateDevice(t4, SyntheticCases(truth, kNetworks, kBatches), options);
  EXPECT_NEAR(r.parameters[0].value, 1 / largest, 1e-9);
  EXPECT_TRUE(r.parameters[0].at_bound());
  EXPECT_LE(r.device.compute_efficiency.points.back().efficiency, 1.0);
  EXPECT_GE(r.parameters[1].value, 0);
}

// The published single-GPU T4 numbers of tests/data/cases/pollux_t4.csv (Pollux
// traces: ResNet-50/ImageNet and ResNet-18/CIFAR-10, throughput = local_bsz /
// step_time at placement 1), e.g. the rows
//   imagenet,1,200,0.923530888557434     -> 200/0.9235 = 216.56 img/s
//   cifar10,1,1024,0.7020925283432007    -> 1024/0.7021 = 1458.5 img/s
TEST(Calibrate, RealPolluxT4Cases) {
  const std::vector<MeasuredCase> cases =
      ReadCasesCsv(std::string(FITSPEED_TEST_DATA_DIR) + "/cases/pollux_t4.csv");
  ASSERT_EQ(cases.size(), 19u);  // 8 imagenet and 11 cifar10 rows at placement 1
  CalibrationOptions options;
  options.parameters = {CalibrationParameter::kComputeScale, CalibrationParameter::kStepHost};
  const CalibrationResult r = CalibrateDevice(LoadDevice("t4"), cases, options);
  std::printf("%s", r.FullReport().c_str());
  ASSERT_TRUE(r.converged);
  // Fitting can only lower the in-sample error of the objective's optimum.
  EXPECT_LT(r.after.rms, r.before.rms);
  ASSERT_TRUE(r.loo.has_value());
  EXPECT_EQ(r.loo->cases, 19);
  // The calibrated device file reads back with what it was calibrated on.
  const Device back = ParseDeviceJson(DeviceToJson(r.device), "calibrated.json");
  EXPECT_EQ(back.calibrated_on, r.device.calibrated_on);
  EXPECT_EQ(back.calibrated_on.front(), "resnet50/t4/fp32/x1/b20");
  EXPECT_DOUBLE_EQ(back.step_host_s, r.parameters[1].value);
}

// ---- ReadCasesCsv ----

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/fitspeed_cases_" + name + ".csv";
  std::ofstream(path) << text;
  return path;
}

std::string CsvError(const std::string& name, const std::string& text) {
  const std::string path = WriteTemp(name, text);
  try {
    ReadCasesCsv(path);
  } catch (const DataError& e) {
    std::remove(path.c_str());
    return e.what();
  }
  std::remove(path.c_str());
  return "no error";
}

TEST(ReadCasesCsv, ReadsRowsCommentsAndOptionalColumns) {
  const std::string path = WriteTemp("valid",
                                     "# measured on our cluster\n"
                                     "network,device,precision,devices,batch,throughput_sps,note\n"
                                     "resnet50,v100-sxm2,mixed,8,2048,9000.5,\"dali, nhwc\"\n"
                                     "\n"
                                     "vgg16,t4,fp32,1,32,60\n"
                                     "vgg16,t4,fp32,1,64,70,tuned\n");
  const std::vector<MeasuredCase> cases = ReadCasesCsv(path);
  std::remove(path.c_str());
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].network, "resnet50");
  EXPECT_EQ(cases[0].device, "v100-sxm2");
  EXPECT_EQ(cases[0].precision, Precision::kMixed);
  EXPECT_EQ(cases[0].devices, 8);
  EXPECT_EQ(cases[0].batch, 2048);
  EXPECT_DOUBLE_EQ(cases[0].throughput_sps, 9000.5);
  EXPECT_EQ(cases[0].note, "dali, nhwc");
  EXPECT_EQ(cases[0].framework, "");
  EXPECT_EQ(cases[0].source, path);
  EXPECT_EQ(cases[0].line, 3);
  EXPECT_EQ(cases[1].line, 5);
  EXPECT_EQ(CaseKey(cases[1]), "vgg16/t4/fp32/x1/b32");
  // The optional note and framework may be left off the end of a row.
  EXPECT_EQ(cases[1].note, "");
  EXPECT_EQ(cases[2].framework, "");
  EXPECT_EQ(cases[2].note, "tuned");
}

TEST(ReadCasesCsv, FusionColumnIsNoneOrBnReluAdd) {
  const std::string path = WriteTemp("fusion",
                                     "network,device,precision,devices,batch,throughput_sps,"
                                     "framework,layout,fusion\n"
                                     "resnet50,a100-80gb,mixed,1,256,3411,mxnet,nhwc,bn-relu-add\n"
                                     "resnet50,a100-80gb,tf32,1,256,1056,mxnet,nchw,none\n"
                                     "resnet50,a100-80gb,tf32,1,256,1056,mxnet\n");
  const std::vector<MeasuredCase> cases = ReadCasesCsv(path);
  std::remove(path.c_str());
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].fusion, ElementwiseFusion::kBatchNormReluAdd);
  EXPECT_EQ(cases[1].fusion, ElementwiseFusion::kNone);
  EXPECT_EQ(cases[2].fusion, ElementwiseFusion::kNone);  // left off: none
  EXPECT_EQ(CaseModelOptions(cases[0], Optimizer::kSgdMomentum).fusion,
            ElementwiseFusion::kBatchNormReluAdd);
  const std::string error = CsvError("bad_fusion",
                                     "network,device,precision,devices,batch,throughput_sps,"
                                     "fusion\n"
                                     "resnet50,v100-sxm2,mixed,1,256,1200,xla\n");
  EXPECT_THAT(error, HasSubstr(":2:"));
  EXPECT_THAT(error, HasSubstr("fusion"));
  EXPECT_THAT(error, HasSubstr("unknown fusion 'xla'"));
}

TEST(ReadCasesCsv, LayoutColumnIsNchwOrNhwc) {
  const std::string path = WriteTemp("layout",
                                     "network,device,precision,devices,batch,throughput_sps,"
                                     "framework,layout\n"
                                     "resnet50,a100,tf32,1,256,909,tensorflow,nchw\n"
                                     "resnet50,a100,mixed,1,256,2375,tensorflow,nhwc\n"
                                     "resnet50,a100,mixed,1,256,2375,tensorflow\n");
  const std::vector<MeasuredCase> cases = ReadCasesCsv(path);
  std::remove(path.c_str());
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].layout, ActivationLayout::kNchw);
  EXPECT_EQ(cases[1].layout, ActivationLayout::kNhwc);
  EXPECT_EQ(cases[2].layout, ActivationLayout::kNchw);  // left off: the default
  EXPECT_EQ(CaseModelOptions(cases[1], Optimizer::kAdam).layout, ActivationLayout::kNhwc);
  // No optimizer column: the default applies.
  EXPECT_FALSE(cases[1].optimizer.has_value());
  EXPECT_EQ(CaseModelOptions(cases[1], Optimizer::kAdam).optimizer, Optimizer::kAdam);
  const std::string error = CsvError("bad_layout",
                                     "network,device,precision,devices,batch,throughput_sps,"
                                     "layout\n"
                                     "resnet50,a100,mixed,1,256,2375,channels_last\n");
  EXPECT_THAT(error, HasSubstr(":2"));
  EXPECT_THAT(error, HasSubstr("layout"));
  EXPECT_THAT(error, HasSubstr("channels_last"));
}

TEST(ReadCasesCsv, OptimizerColumnOverridesTheDefault) {
  const std::string path = WriteTemp("optimizer",
                                     "network,device,precision,devices,batch,throughput_sps,"
                                     "optimizer\n"
                                     "wrn-k7n4-7x7,k80,fp32,1,256,65.84,adam\n"
                                     "wrn-k7n4-7x7,k80,fp32,1,128,61.51,\n");
  const std::vector<MeasuredCase> cases = ReadCasesCsv(path);
  std::remove(path.c_str());
  ASSERT_EQ(cases.size(), 2u);
  ASSERT_TRUE(cases[0].optimizer.has_value());
  EXPECT_EQ(CaseModelOptions(cases[0], Optimizer::kSgd).optimizer, Optimizer::kAdam);
  EXPECT_EQ(CaseModelOptions(cases[1], Optimizer::kSgd).optimizer, Optimizer::kSgd);
  const std::string error = CsvError("bad_optimizer",
                                     "network,device,precision,devices,batch,throughput_sps,"
                                     "optimizer\n"
                                     "resnet50,t4,fp32,1,64,170,lamb\n");
  EXPECT_THAT(error, HasSubstr(":2"));
  EXPECT_THAT(error, HasSubstr("optimizer"));
  EXPECT_THAT(error, HasSubstr("lamb"));
}

TEST(ReadCasesCsv, ThePolluxFileQuotesItsRows) {
  const std::vector<MeasuredCase> cases =
      ReadCasesCsv(std::string(FITSPEED_TEST_DATA_DIR) + "/cases/pollux_t4.csv");
  ASSERT_EQ(cases.size(), 19u);
  // imagenet,1,20,0.14740917682647706: 20 / 0.147409 = 135.677 img/s.
  EXPECT_EQ(cases[0].network, "resnet50");
  EXPECT_EQ(cases[0].batch, 20);
  EXPECT_NEAR(cases[0].throughput_sps, 20 / 0.14740917682647706, 1e-3);
  EXPECT_EQ(cases[0].framework, "pytorch");
  // cifar10,1,32,0.0427886962890625: 32 / 0.0427887 = 747.861 img/s.
  EXPECT_EQ(cases[8].network, "resnet18-cifar");
  EXPECT_NEAR(cases[8].throughput_sps, 32 / 0.0427886962890625, 1e-3);
}

TEST(ReadCasesCsv, ErrorsNameFileLineAndField) {
  const std::string header = "network,device,precision,devices,batch,throughput_sps\n";
  std::string e = CsvError("missing_column", "network,device,precision,devices,batch\n");
  EXPECT_THAT(e, HasSubstr("fitspeed_cases_missing_column.csv:1: field 'throughput_sps'"));
  EXPECT_THAT(e, HasSubstr("missing column"));

  e = CsvError("not_number", header + "resnet50,t4,fp32,1,32,100\nresnet50,t4,fp32,1,abc,100\n");
  EXPECT_THAT(e, HasSubstr("fitspeed_cases_not_number.csv:3: field 'batch'"));

  e = CsvError("zero", header + "resnet50,t4,fp32,1,32,0\n");
  EXPECT_THAT(e, HasSubstr("fitspeed_cases_zero.csv:2: field 'throughput_sps'"));

  e = CsvError("negative_devices", header + "resnet50,t4,fp32,-2,32,10\n");
  EXPECT_THAT(e, HasSubstr(":2: field 'devices'"));
  EXPECT_THAT(e, HasSubstr("> 0"));

  e = CsvError("precision", header + "resnet50,t4,fp4,1,32,10\n");
  EXPECT_THAT(e, HasSubstr(":2: field 'precision'"));
  EXPECT_THAT(e, HasSubstr("unknown precision 'fp4'"));

  e = CsvError("short_row", header + "resnet50,t4,fp32,1,32\n");
  EXPECT_THAT(e, HasSubstr(":2: field 'throughput_sps'"));

  e = CsvError("long_row", header + "resnet50,t4,fp32,1,32,10,extra\n");
  EXPECT_THAT(e, HasSubstr(":2: 7 fields, the header (line 1) has 6"));

  e = CsvError("unknown_column", "network,device,precision,devices,batch,throughput,note\n");
  EXPECT_THAT(e, HasSubstr(":1: field 'throughput'"));

  e = CsvError("empty", "# nothing\n");
  EXPECT_THAT(e, HasSubstr("empty"));

  EXPECT_THROW(ReadCasesCsv(::testing::TempDir() + "/fitspeed_no_such_cases.csv"), InputError);
}

TEST(ApplyCalibration, TheTensorScaleScalesTheFp8AndAttentionCurvesWithIt) {
  // h200 has FP8 and attention curves of its own: the same units behind the
  // same framework.
  const Device h200 = LoadDevice("h200");
  CalibratedParameter tensor;
  tensor.name = "tensor_scale";
  tensor.value = 0.5;
  const Device d = ApplyCalibration(h200, {tensor});
  for (const auto& [field, scaled, base] :
       {std::tuple{"efficiency.fp8", &d.fp8_efficiency, &h200.fp8_efficiency},
        std::tuple{"efficiency.attention_forward", &d.attention_forward_efficiency,
                   &h200.attention_forward_efficiency},
        std::tuple{"efficiency.attention_backward", &d.attention_backward_efficiency,
                   &h200.attention_backward_efficiency}}) {
    ASSERT_FALSE(base->points.empty()) << field;
    ASSERT_EQ(scaled->points.size(), base->points.size()) << field;
    for (size_t i = 0; i < scaled->points.size(); ++i) {
      EXPECT_DOUBLE_EQ(scaled->points[i].efficiency, 0.5 * base->points[i].efficiency) << field;
    }
    EXPECT_NE(d.sources.at(field).find("scaled with efficiency.tensor"), std::string::npos)
        << field;
  }
}

}  // namespace
}  // namespace fitspeed
