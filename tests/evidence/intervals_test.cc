// Prediction intervals of the device model (fitspeed/device/intervals.h):
// classes, the fallback to the device kind, leave-one-source-out coverage by
// hand, the JSON table, and that the built-in table (data/intervals.json) is
// the current model's errors on the current published cases.
#include "fitspeed/device/intervals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "fitspeed/calibrate/cases.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/frameworks.h"
#include "fitspeed/evidence/framework_profiles.h"
#include "fitspeed/evidence/interval_table.h"
#include "fitspeed/evidence/mlperf.h"
#include "fitspeed/evidence/transfer.h"
#include "fitspeed/evidence/validate.h"

namespace fitspeed {
namespace {

std::string MeasuredDirIntervals() {
  return std::string(FITSPEED_TEST_DATA_DIR) + "/../../data/measured";
}

std::vector<ModelError> Errors(const std::string& source, std::vector<double> log_ratios) {
  std::vector<ModelError> errors;
  for (size_t i = 0; i < log_ratios.size(); ++i) {
    errors.push_back({source, source + std::to_string(i), log_ratios[i]});
  }
  return errors;
}

TEST(ModelErrorClassTest, KindAndWhereTheMatrixWorkRuns) {
  EXPECT_EQ(ModelErrorClass(LoadDevice("v100-sxm2"), Precision::kFp32), "gpu/fp32");
  EXPECT_EQ(ModelErrorClass(LoadDevice("v100-sxm2"), Precision::kMixed), "gpu/tensor");
  EXPECT_EQ(ModelErrorClass(LoadDevice("a100"), Precision::kTf32), "gpu/tensor");
  // A TPU runs FP32 matrix work on its MXU (fp32_matrix_on_tensor16).
  EXPECT_EQ(ModelErrorClass(LoadDevice("tpu-v2-8"), Precision::kFp32), "tpu/tensor");
  EXPECT_EQ(ModelErrorKindClass("gpu/tensor"), "gpu");
}

TEST(CasePublisherTest, OneOrganizationWhateverItsFilesAndFrameworks) {
  // NVIDIA's DeepLearningExamples tables are one publisher, whatever the framework;
  // Paddle's GPU and CPU tables another; a file not listed is its own.
  EXPECT_EQ(CasePublisher("/x/y/nvidia_dle_training_perf_tables.csv"), "NVIDIA");
  EXPECT_EQ(CasePublisher("paddle_benchmark_k40m_gpu.csv"),
            CasePublisher("data/paddle_intel_xeon6148_cpu_train.csv"));
  EXPECT_EQ(CasePublisher("pollux_t4_single_node.csv"), CasePublisher("pollux_t4_multi_node.csv"));
  EXPECT_EQ(CasePublisher("/home/me/my_runs.csv"), "my_runs.csv");
  EXPECT_EQ(JoinedPublishers({"pollux_t4_single_node.csv", "nvidia_dle_training_perf_tables.csv",
                              "nvidia_dle_training_perf_tables.csv"}),
            "NVIDIA+Pollux authors");
  EXPECT_EQ(PublishersOfSource("NVIDIA+Pollux authors"),
            (std::vector<std::string>{"NVIDIA", "Pollux authors"}));
}

TEST(EmpiricalIntervalTest, WeighsPublishersEqually) {
  // Publisher A has 8 errors at 0, B, C and D one each at 1, -1 and 0.5: n = 11,
  // four publishers. At 50%: tail 0.25, k_lo = floor(12 x 0.25) = 3, k_hi =
  // ceil(12 x 0.75) = 9; the ends exceed the shares (k_lo - 1)/n = 2/11 = 0.182
  // from below and (n - k_hi)/n = 2/11 from above. Weights (each publisher 1/4 in
  // all): A's errors 1/32 each, B, C, D 1/4. From below C (-1) alone holds 0.25
  // > 0.182: low e^-1; from above B (1) alone: high e^1. Unweighted the ends
  // would be e(3) = e(9) = 0 of (-1, 0 x 8, 0.5, 1): [1, 1]. Median: the
  // cumulative share from below is C 0.25, A's 0.28125 .. 0.5, landing on 1/2
  // exactly at A's last, so (0 + 0.5) / 2 = 0.25 (unweighted: 0).
  std::vector<ModelError> errors = Errors("A", std::vector<double>(8, 0.0));
  errors.push_back({"B", "b", 1.0});
  errors.push_back({"C", "c", -1.0});
  errors.push_back({"D", "d", 0.5});
  const PredictionInterval i = EmpiricalInterval(errors, 0.5, "gpu", 4);
  ASSERT_TRUE(i.available) << i.reason;
  EXPECT_EQ(i.sources, 4);
  EXPECT_DOUBLE_EQ(i.low_factor, std::exp(-1.0));
  EXPECT_DOUBLE_EQ(i.high_factor, std::exp(1.0));
  EXPECT_DOUBLE_EQ(i.median_log_ratio, 0.25);
  // A joined source counts each of its publishers, and weighs as one source.
  errors.back().source = "D+E";
  EXPECT_EQ(EmpiricalInterval(errors, 0.5, "gpu", 4).sources, 5);
}

TEST(IntervalTableTest, FallsBackToTheKindWhenTheClassIsThin) {
  IntervalTable table;
  table.classes["gpu/tensor"] = Errors("a", {0.1, 0.2, 0.3});  // 3 cases: too few
  std::vector<ModelError> fp32 = Errors("b", {-0.4, -0.3, -0.2, -0.1, 0.0});
  for (const std::vector<ModelError>& more :
       {Errors("c", {0.05, 0.15, 0.25, 0.35}), Errors("d", {0.4, 0.45})}) {
    fp32.insert(fp32.end(), more.begin(), more.end());
  }
  table.classes["gpu/fp32"] = fp32;
  // gpu/tensor alone: 3 cases from 1 source; the kind "gpu": all 14, four
  // sources. n = 14 at 80%: k_lo = floor(1.5) = 1, k_hi = ceil(13.5) = 14: the
  // extremes (whatever the publishers' weights: nothing is excluded beyond them).
  const PredictionInterval i = table.For("gpu/tensor", 0.8);
  ASSERT_TRUE(i.available) << i.reason;
  EXPECT_EQ(i.basis, "gpu");
  EXPECT_EQ(i.cases, 14);
  EXPECT_EQ(i.sources, 4);
  EXPECT_NEAR(std::log(i.low_factor), -0.4, 1e-12);
  EXPECT_NEAR(std::log(i.high_factor), 0.45, 1e-12);
  // gpu/fp32 has 11 cases, enough for 80%, but 3 sources: the kind's too.
  const PredictionInterval fp32_interval = table.For("gpu/fp32", 0.8);
  ASSERT_TRUE(fp32_interval.available) << fp32_interval.reason;
  EXPECT_EQ(fp32_interval.basis, "gpu");
  // Without source d the kind has 3 sources: no interval, and both reasons.
  IntervalTable three = table;
  three.classes["gpu/fp32"].resize(9);
  const PredictionInterval thin = three.For("gpu/tensor", 0.8);
  EXPECT_FALSE(thin.available);
  EXPECT_NE(thin.reason.find("gpu: 12 published case(s) from 3 publisher(s)"), std::string::npos)
      << thin.reason;
  EXPECT_NE(thin.reason.find("4 or more publishers"), std::string::npos) << thin.reason;
  // A kind without errors: not available, both reasons given.
  const PredictionInterval none = table.For("tpu/tensor", 0.8);
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.reason.find("tpu/tensor"), std::string::npos) << none.reason;
  EXPECT_NE(none.reason.find("tpu:"), std::string::npos) << none.reason;
}

TEST(IntervalTableTest, LeaveOneSourceOutCoverageByHand) {
  // Publishers A, B, D and E: 9 errors 0.0..0.8 each; publisher C: one error 2.0.
  // A case of A: the interval from B, D, E and C (4 publishers), n = 28: k_lo =
  // floor(2.9) = 2, k_hi = ceil(26.1) = 27, so one error's share is excluded at
  // each end, 1/28 = 0.036. Publishers weighted equally: B's, D's and E's errors
  // weigh 1/36 each, C's 1/4. From below the two 0.0s of two publishers hold
  // 0.056 > 0.036: low 0.0; from above C's 2.0 alone holds 0.25: high 2.0. The
  // interval [0.0, 2.0] covers it; the same for B, D and E. C's case: the
  // interval from A, B, D and E (equal weights), n = 36: k_lo = 3, k_hi = 34:
  // [0.0, 0.8]; 2.0 lies above. Coverage 36/37 by case; by publisher A, B, D, E
  // 1 and C 0: 4/5. Widths: 36 of exp(2.0), one of exp(0.8): median exp(2.0).
  IntervalTable table;
  std::vector<double> ladder;
  for (int i = 0; i < 9; ++i) ladder.push_back(0.1 * i);
  std::vector<ModelError> errors;
  for (const char* source : {"A", "B", "D", "E"}) {
    const std::vector<ModelError> e = Errors(source, ladder);
    errors.insert(errors.end(), e.begin(), e.end());
  }
  errors.push_back(Errors("C", {2.0}).front());
  table.classes["gpu/fp32"] = errors;
  const CoverageReport report = LeaveOneSourceOutCoverage(table, 0.8);
  ASSERT_EQ(report.classes.size(), 1u);
  const CoverageRow& row = report.classes[0];
  EXPECT_EQ(row.cases, 37);
  EXPECT_EQ(row.with_interval, 37);
  EXPECT_EQ(row.covered, 36);
  EXPECT_EQ(row.above, 1);
  EXPECT_EQ(row.below, 0);
  EXPECT_NEAR(row.coverage(), 36.0 / 37, 1e-12);
  EXPECT_NEAR(row.median_width, std::exp(2.0), 1e-9);
  EXPECT_EQ(row.publishers, 5);
  EXPECT_NEAR(row.publisher_coverage, 0.8, 1e-12);
  EXPECT_EQ(report.overall.covered, 36);
  EXPECT_NEAR(report.overall.publisher_coverage, 0.8, 1e-12);
  // With four sources in all, leaving one out leaves three: no interval is
  // built for any case (the rule asks for four), and none is counted.
  IntervalTable four;
  four.classes["gpu/fp32"] = std::vector<ModelError>(errors.begin(), errors.begin() + 27);
  four.classes["gpu/fp32"].push_back(errors.back());
  const CoverageReport thin = LeaveOneSourceOutCoverage(four, 0.8);
  EXPECT_EQ(thin.classes[0].cases, 28);
  EXPECT_EQ(thin.classes[0].with_interval, 0);
}

TEST(IntervalTableTest, JsonRoundTripAndErrors) {
  IntervalTable table;
  table.generated_by = "test";
  table.classes["gpu/fp32"] = Errors("a.csv/pytorch", {0.125, -0.5});
  table.transfer["gpu"] = Errors("b.csv", {0.0625});
  const IntervalTable back = ParseIntervalTable(IntervalTableToJson(table), "t.json");
  EXPECT_EQ(back.generated_by, "test");
  ASSERT_EQ(back.classes.at("gpu/fp32").size(), 2u);
  EXPECT_EQ(back.classes.at("gpu/fp32")[1].log_ratio, -0.5);
  EXPECT_EQ(back.classes.at("gpu/fp32")[0].source, "a.csv/pytorch");
  EXPECT_EQ(back.transfer.at("gpu")[0].log_ratio, 0.0625);
  EXPECT_THROW(ParseIntervalTable("{", "t.json"), DataError);
  EXPECT_THROW(ParseIntervalTable(R"({"schema": "other"})", "t.json"), DataError);
  try {
    ParseIntervalTable(
        R"({"schema": "fitspeed.intervals/1", "classes": [{"class": "gpu/fp32",
            "errors": [{"source": "a", "log_ratio": "x"}]}]})",
        "t.json");
    FAIL() << "a text log ratio was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("classes[0].errors[0]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadIntervalTableFile("/nonexistent/intervals.json"), InputError);
  // A schema or generated_by of the wrong type (the fuzzer's find: a "schema" array) is a
  // DataError, not the JSON library's type error escaping.
  EXPECT_THROW(ParseIntervalTable("{\"schema\": [{\"publisher\": \"Dell\"}]}", "s.json"),
               DataError);
  const IntervalTable odd = ParseIntervalTable(
      "{\"schema\": \"fitspeed.intervals/1\", \"generated_by\": 7, \"classes\": []}", "g.json");
  EXPECT_EQ(odd.generated_by, "");
}

TEST(IntervalTableTest, FrameworkProfileErrorsByHand) {
  // Two folds: pytorch's profile from the A100 80 GB predicting a V100's two
  // runs 25% too fast and 20% too slow (predicted / measured - 1 = 0.25 and
  // -0.2), and a fold that could not be computed (no errors added).
  MeasuredCase fp32, mixed;
  fp32.network = mixed.network = "resnet50";
  fp32.device = mixed.device = "v100-sxm2";
  fp32.batch = mixed.batch = 256;
  fp32.framework = mixed.framework = "pytorch";
  fp32.source = mixed.source = "/data/nvidia_dle.csv";
  fp32.line = 7;
  mixed.line = 8;
  mixed.precision = Precision::kMixed;
  FrameworkProfileReport report;
  FrameworkFold fold;
  fold.framework = "pytorch";
  fold.device = "v100-sxm2";
  fold.training_devices = {"a100-80gb"};
  fold.computed = true;
  fold.held_out = {fp32, mixed};
  fold.profile_errors = {0.25, -0.2};
  report.folds.push_back(fold);
  FrameworkFold failed = fold;
  failed.computed = false;
  failed.profile_errors.clear();
  report.folds.push_back(failed);
  IntervalTable table;
  AddFrameworkErrors(table, report);
  ASSERT_EQ(table.framework.size(), 2u);
  ASSERT_EQ(table.framework.at("gpu/fp32").size(), 1u);
  ASSERT_EQ(table.framework.at("gpu/tensor").size(), 1u);
  // ln(measured / predicted) = -ln(1.25) and -ln(0.8) = +ln(1.25).
  const ModelError& e = table.framework.at("gpu/fp32")[0];
  EXPECT_NEAR(e.log_ratio, -std::log(1.25), 1e-15);
  EXPECT_NEAR(table.framework.at("gpu/tensor")[0].log_ratio, std::log(1.25), 1e-15);
  EXPECT_EQ(e.source, "nvidia_dle.csv");  // not a listed file: its own publisher
  EXPECT_NE(e.case_key.find("pytorch profile from a100-80gb"), std::string::npos) << e.case_key;
  EXPECT_TRUE(table.classes.empty());
  // Four sources of nine tensor errors each: ForFramework uses the class and
  // says it is a profile's (n = 36 at 80%: k_lo = 3, k_hi = 34, the ladder's
  // third and thirty-fourth: 0.0 and 0.8).
  table.framework.clear();
  std::vector<double> ladder;
  for (int i = 0; i < 9; ++i) ladder.push_back(0.1 * i);
  for (const char* source : {"A", "B", "C", "D"}) {
    const std::vector<ModelError> more = Errors(source, ladder);
    table.framework["gpu/tensor"].insert(table.framework["gpu/tensor"].end(), more.begin(),
                                         more.end());
  }
  const PredictionInterval own = table.ForFramework("gpu/tensor", 0.8);
  ASSERT_TRUE(own.available) << own.reason;
  EXPECT_EQ(own.basis, "framework:gpu/tensor");
  EXPECT_NEAR(std::log(own.low_factor), 0.0, 1e-12);
  EXPECT_NEAR(std::log(own.high_factor), 0.8, 1e-12);
  // gpu/fp32 has none: the kind's (the same errors), and the catalog's For()
  // does not see them.
  EXPECT_EQ(table.ForFramework("gpu/fp32", 0.8).basis, "framework:gpu");
  EXPECT_FALSE(table.For("gpu/tensor", 0.8).available);
  // A table without any (an older file) says so.
  const PredictionInterval older = IntervalTable().ForFramework("gpu/tensor", 0.8);
  EXPECT_FALSE(older.available);
  EXPECT_NE(older.reason.find("no errors of framework-profile predictions"), std::string::npos)
      << older.reason;
  // JSON keeps them apart from the catalog's.
  const IntervalTable back = ParseIntervalTable(IntervalTableToJson(table), "t.json");
  EXPECT_EQ(back.framework.at("gpu/tensor").size(), 36u);
  EXPECT_TRUE(back.classes.empty());
  const CoverageReport coverage = LeaveOneSourceOutFrameworkCoverage(table, 0.8);
  ASSERT_EQ(coverage.classes.size(), 1u);
  // Leaving a source out leaves three: no interval for any case.
  EXPECT_EQ(coverage.classes[0].with_interval, 0);
}

TEST(BuiltinIntervalTableTest, IsTheCurrentModelsErrorsOnThePublishedCases) {
  // data/intervals.json must be regenerated (`fitspeed validate --intervals-out
  // data/intervals.json`) whenever the model, the catalog or the cases change:
  // an interval built from stale errors would not describe the model printed.
  const std::vector<MeasuredCase> cases = PublishedCases(MeasuredDirIntervals());
  IntervalTable now = IntervalTableFromValidation(Validate(cases));
  AddTransferErrors(now, ValidateTransfer(cases));
  AddFrameworkErrors(now, FitFrameworkProfiles(cases));
  // And MLPerf's development split (the test split never enters).
  MlperfValidationOptions development;
  development.split = "development";
  AddMlperfErrors(
      now, ValidateMlperf(ReadMlperfCases(MeasuredDirIntervals() + "/" + kMlperfResnetBertTable,
                                          BuiltinPublishers()),
                          development));
  MlperfValidationOptions test;
  test.split = "test";
  EXPECT_THROW(AddMlperfErrors(now, ValidateMlperf(ReadMlperfCases(MeasuredDirIntervals() + "/" +
                                                                       kMlperfResnetBertTable,
                                                                   BuiltinPublishers()),
                                                   test)),
               UsageError);
  const IntervalTable& built_in = BuiltinIntervalTable();
  ASSERT_EQ(built_in.classes.size(), now.classes.size());
  ASSERT_EQ(built_in.transfer.size(), now.transfer.size());
  ASSERT_EQ(built_in.framework.size(), now.framework.size());
  std::map<std::string, std::vector<ModelError>> all = now.classes, kept_all = built_in.classes;
  for (const auto& [kind, errors] : now.transfer) all["transfer:" + kind] = errors;
  for (const auto& [kind, errors] : built_in.transfer) kept_all["transfer:" + kind] = errors;
  for (const auto& [c, errors] : now.framework) all["framework:" + c] = errors;
  for (const auto& [c, errors] : built_in.framework) kept_all["framework:" + c] = errors;
  for (const auto& [name, errors] : all) {
    ASSERT_TRUE(kept_all.count(name)) << name;
    const std::vector<ModelError>& kept = kept_all.at(name);
    ASSERT_EQ(kept.size(), errors.size()) << name;
    for (size_t i = 0; i < errors.size(); ++i) {
      EXPECT_EQ(kept[i].case_key, errors[i].case_key) << name;
      EXPECT_EQ(kept[i].source, errors[i].source) << name;
      EXPECT_NEAR(kept[i].log_ratio, errors[i].log_ratio, 1e-9)
          << name << " " << errors[i].case_key
          << ": regenerate data/intervals.json with `fitspeed validate --intervals-out`";
    }
  }
}

TEST(BuiltinIntervalTableTest, GivesGpuIntervalsAndSaysWhyNotForTheTpu) {
  const IntervalTable& table = BuiltinIntervalTable();
  const PredictionInterval gpu = table.For(LoadDevice("v100-sxm2"), Precision::kMixed, 0.8);
  ASSERT_TRUE(gpu.available) << gpu.reason;
  // gpu/tensor has NVIDIA's tables, Pollux's AMP ResNet-50 and the MLPerf
  // development publishers (13 with modeled cases): more than
  // kModelIntervalMinSources, so its own errors.
  EXPECT_EQ(gpu.basis, "gpu/tensor");
  EXPECT_GE(gpu.sources, kModelIntervalMinSources);
  EXPECT_LT(gpu.low_factor, 1.0);
  EXPECT_GT(gpu.high_factor, gpu.low_factor);
  // Transferred predictions have their own errors. docs/guide.md claims a run of one's own
  // narrows the FP32 interval (and says it does not narrow the tensor-core one): the
  // transfer interval must be narrower than the catalog's gpu/fp32 one.
  const PredictionInterval transfer = table.ForTransfer("gpu", 0.8);
  ASSERT_TRUE(transfer.available) << transfer.reason;
  EXPECT_EQ(transfer.basis, "transfer:gpu");
  EXPECT_LT(transfer.low_factor, 1.0);
  EXPECT_GT(transfer.high_factor, 1.0);
  const PredictionInterval fp32 = table.For(LoadDevice("v100-sxm2"), Precision::kFp32, 0.8);
  ASSERT_TRUE(fp32.available) << fp32.reason;
  EXPECT_EQ(fp32.basis, "gpu/fp32");
  EXPECT_LT(transfer.high_factor / transfer.low_factor, fp32.high_factor / fp32.low_factor);
  EXPECT_FALSE(table.ForTransfer("tpu", 0.8).available);
  // Predictions with a framework profile (one publisher's runs on a held-out GPU,
  // the profile fitted on other publishers'): errors from three publishers in
  // all (NVIDIA, Pollux, Baidu), fewer than four: no interval, and it says why.
  const PredictionInterval profiled =
      table.ForFramework(LoadDevice("a100"), Precision::kMixed, 0.8);
  EXPECT_FALSE(profiled.available);
  EXPECT_NE(profiled.reason.find("framework:gpu: "), std::string::npos) << profiled.reason;
  EXPECT_NE(profiled.reason.find("from 3 publisher(s)"), std::string::npos) << profiled.reason;
  // The Colab TPU cases all come from one publisher.
  const PredictionInterval tpu = table.For(LoadDevice("tpu-v2-8"), Precision::kFp32, 0.8);
  EXPECT_FALSE(tpu.available);
  EXPECT_NE(tpu.reason.find("4 or more publishers"), std::string::npos) << tpu.reason;
}

}  // namespace
}  // namespace fitspeed
