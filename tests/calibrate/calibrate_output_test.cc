// The writers of `calibrate` and of a sweep transferred from the user's run
// (fitspeed/calibrate/output.h), on results set by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fitspeed/calibrate/output.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

CalibratedParameter Parameter(const std::string& name, const std::string& unit, double value) {
  CalibratedParameter p;
  p.name = name;
  p.unit = unit;
  p.initial = unit.empty() ? 1 : 0;
  p.value = value;
  p.std_error = std::numeric_limits<double>::quiet_NaN();
  p.ci_low = p.ci_high = std::numeric_limits<double>::quiet_NaN();
  p.lower = 0.05;
  p.upper = unit.empty() ? 20 : std::numeric_limits<double>::infinity();
  return p;
}

// One case of batch 64 measured at 128 samples/s (a 0.5 s step), modeled at
// 0.4 s before and 0.5 s after: 160 and 128 samples/s, errors +25% and 0.
CalibrationResult OneCase() {
  CalibrationResult r;
  r.device.name = "t4";
  r.device_before = "t4 (catalog:t4)";
  r.parameters = {Parameter("compute_scale", "", 0.8)};
  CaseFit c;
  c.measured.batch = 64;
  c.measured.throughput_sps = 128;
  c.measured.source = "cases.csv";
  c.measured.line = 2;
  c.key = "resnet50 t4 fp32 x1 b64";
  c.measured_step_s = 0.5;
  c.before_step_s = 0.4;
  c.after_step_s = 0.5;
  c.loo_step_s = std::numeric_limits<double>::quiet_NaN();
  r.cases = {c};
  r.networks = {"resnet50"};
  r.converged = true;
  return r;
}

TEST(WriteCalibration, JsonGivesEachCaseBeforeAndAfter) {
  std::ostringstream out;
  WriteCalibration(out, OneCase(), {}, OutputFormat::kJson);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "fitspeed.calibration/1");
  EXPECT_EQ(j["device"], "t4");
  EXPECT_EQ(j["parameters"][0]["value"], 0.8);
  EXPECT_TRUE(j["parameters"][0]["stderr"].is_null());       // NaN: not estimable
  EXPECT_TRUE(j["parameters"][0]["bounds"][1].is_number());  // 20
  const nlohmann::json& c = j["cases"][0];
  EXPECT_NEAR(c["before_sps"].get<double>(), 160, 1e-12);     // 64 / 0.4
  EXPECT_NEAR(c["after_sps"].get<double>(), 128, 1e-12);      // 64 / 0.5
  EXPECT_NEAR(c["error_before"].get<double>(), 0.25, 1e-15);  // 0.5/0.4 - 1
  EXPECT_DOUBLE_EQ(c["error_after"].get<double>(), 0);
  EXPECT_TRUE(c["loo_sps"].is_null());
  EXPECT_TRUE(j["error_loo"].is_null());
}

TEST(WriteCalibration, JsonListsTheSkippedCases) {
  MeasuredCase other;
  other.network = "resnet50";
  other.device = "v100-sxm2";
  other.batch = 128;
  other.source = "cases.csv";
  other.line = 3;
  std::ostringstream out;
  WriteCalibration(out, OneCase(), {other}, OutputFormat::kJson);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_EQ(j["skipped"][0]["line"], 3);
  EXPECT_EQ(j["skipped"][0]["key"], CaseKey(other));
}

TEST(WriteCalibration, CsvOneRowPerCase) {
  std::ostringstream out;
  WriteCalibration(out, OneCase(), {}, OutputFormat::kCsv);
  EXPECT_THAT(out.str(), HasSubstr("resnet50 t4 fp32 x1 b64,cases.csv,2,128,160,128,nan,0.25,0,"));
}

SharedCalibration TwoScales() {
  SharedCalibration r;
  r.parameters = {Parameter("compute_scale", "", 0.9), Parameter("tensor_scale", "", 0.05)};
  r.converged = true;
  r.iterations = 7;
  r.after.cases = 2;
  r.after.rms = 0.1;
  r.after.median_abs = 0.08;
  r.after.max_abs = 0.125;
  return r;
}

TEST(WriteSharedCalibration, TableNamesTheScalesAndTheErrorInPercent) {
  std::ostringstream out;
  WriteSharedCalibration(out, TwoScales(), "t4", {"v100-sxm2", "a100"}, 2, OutputFormat::kTable);
  EXPECT_THAT(out.str(), HasSubstr("fitted to 2 case(s) of v100-sxm2, a100 jointly (converged "
                                   "after 7 iterations), applied to t4"));
  EXPECT_THAT(out.str(), HasSubstr("  compute_scale = 0.9\n"));
  EXPECT_THAT(out.str(), HasSubstr("  tensor_scale = 0.05 (at its bound)\n"));  // lower 0.05
  // 0.1, 0.08, 0.125 -> 10.0%, 8.0%, 12.5%.
  EXPECT_THAT(out.str(), HasSubstr("rms 10.0%, median |e| 8.0%, max |e| 12.5%"));
}

TEST(WriteSharedCalibration, JsonNamesDevicesAndBounds) {
  std::ostringstream out;
  WriteSharedCalibration(out, TwoScales(), "t4", {"v100-sxm2"}, 2, OutputFormat::kJson);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["schema"], "fitspeed.calibration-transfer/1");
  EXPECT_EQ(j["device"], "t4");
  EXPECT_EQ(j["from"][0], "v100-sxm2");
  EXPECT_EQ(j["cases"], 2);
  EXPECT_EQ(j["parameters"][1]["at_bound"], true);
  EXPECT_EQ(j["error_after"]["rms"], 0.1);
}

// A transfer from t4 to v100-sxm2 fitted on one measured point (two cases).
TransferRun OnePointTransfer() {
  TransferRun run;
  run.source.from = "run.csv@precision=fp32";
  run.source_kind = "log";
  TransferCalibration& t = run.calibration;
  t.source_device = "t4";
  t.target_device = "v100-sxm2";
  t.network = "resnet18-cifar";
  t.cases = 2;
  t.points = 1;
  t.fitted = {Parameter("step_host_s", "s", 0.003)};
  t.applied = t.fitted;
  t.kept = {{"compute_scale", "one measured point fits one parameter"}};
  t.source_before.median_abs = 0.2;
  t.source_before.max_abs = 0.2;
  t.converged = true;
  return run;
}

TEST(WriteTransferSweep, CsvHeaderSaysWhatWasFittedAndKept) {
  std::ostringstream out;
  WriteTransferSweep(out, OnePointTransfer(), DeviceSweepResult(), FitResult(), OutputFormat::kCsv,
                     false);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("# transferred from t4: resnet18-cifar measured in "
                              "run.csv@precision=fp32 (log, 2 cases -> 1 measured point), fp32, "
                              "nchw\n"));
  // 0.003 s = 3 ms.
  EXPECT_THAT(text, HasSubstr("# fitted on t4 to 1 measured point: step_host_s = 3 ms\n"));
  EXPECT_THAT(text, HasSubstr("# kept at v100-sxm2's catalog value: compute_scale (one measured "
                              "point fits one parameter)\n"));
  // One parameter on one point: exact; A's error before, 0.2: 20%.
  EXPECT_THAT(text, HasSubstr("(catalog before: median 20%); as many parameters as points: "
                              "exact\n"));
  EXPECT_THAT(text, HasSubstr("# prediction interval: none given"));
}

TEST(WriteTransferSweep, JsonCarriesTheTransferObject) {
  std::ostringstream out;
  PredictionInterval interval;
  WriteTransferSweep(out, OnePointTransfer(), DeviceSweepResult(), FitResult(), OutputFormat::kJson,
                     false, &interval);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const nlohmann::json& t = j["transfer"];
  EXPECT_EQ(t["source_device"], "t4");
  EXPECT_EQ(t["target_device"], "v100-sxm2");
  EXPECT_EQ(t["from_kind"], "log");
  EXPECT_EQ(t["precision"], "fp32");
  EXPECT_EQ(t["fitted"][0]["value"], 0.003);
  EXPECT_EQ(t["kept"][0]["name"], "compute_scale");
  EXPECT_EQ(t["source_error_before"]["median_abs"], 0.2);
}

}  // namespace
}  // namespace fitspeed
