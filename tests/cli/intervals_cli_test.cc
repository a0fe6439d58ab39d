// Prediction intervals end to end: `sweep --device` prints them (table, CSV,
// JSON) from the built-in errors, says why when there are none, and `project`
// combines a modeled sweep's errors with its fit's uncertainty; `validate`
// reports their leave-one-source-out coverage and writes the table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "fitspeed/device/intervals.h"

namespace {

using ::fitspeed::test::CliRun;
using ::fitspeed::test::RunCli;
using ::testing::HasSubstr;

std::string ScratchIntervals(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(IntervalsCli, ModeledThroughputCarriesTheBuiltInInterval) {
  const CliRun run =
      RunCli("sweep resnet50 --device v100-sxm2 --precision mixed --batches 64,128,256 -o json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const auto& mi = j["model_interval"];
  ASSERT_TRUE(mi["available"].get<bool>()) << mi.dump();
  // The tensor-core class's errors come from NVIDIA, the Pollux authors and the
  // MLPerf development publishers: four or more, its own errors.
  EXPECT_EQ(mi["basis"], "gpu/tensor");
  EXPECT_EQ(mi["min_sources"], fitspeed::kModelIntervalMinSources);
  EXPECT_DOUBLE_EQ(mi["level"].get<double>(), 0.8);
  // The same interval as the library builds from the built-in table.
  const fitspeed::PredictionInterval expected = fitspeed::BuiltinIntervalTable().For(
      fitspeed::LoadDevice("v100-sxm2"), fitspeed::Precision::kMixed, 0.8);
  EXPECT_NEAR(mi["low_factor"].get<double>(), expected.low_factor, 1e-12);
  EXPECT_EQ(mi["errors"].size(), static_cast<size_t>(expected.cases));
  for (const auto& step : j["steps"]) {
    const double sps = step["throughput_sps"], t = step["step_time_s"];
    EXPECT_NEAR(step["throughput_interval_sps"][0].get<double>(), sps * expected.low_factor,
                1e-9 * sps);
    EXPECT_NEAR(step["throughput_interval_sps"][1].get<double>(), sps * expected.high_factor,
                1e-9 * sps);
    // A step time is the reciprocal: its low end from the high factor.
    EXPECT_NEAR(step["step_time_interval_s"][0].get<double>(), t / expected.high_factor, 1e-12);
  }
}

TEST(IntervalsCli, TableAndCsvShowTheIntervalAndItsBasis) {
  const CliRun table = RunCli("sweep resnet50 --device v100-sxm2 --batches 32,64,128");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("interval: 80% prediction interval"));
  EXPECT_THAT(table.out, HasSubstr("class gpu/fp32"));
  EXPECT_THAT(table.out, HasSubstr("samples/s_80%"));
  const CliRun csv =
      RunCli("sweep resnet50 --device v100-sxm2 --batches 32,64,128 --interval-level 0.9 -o csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr("interval_level,throughput_low_sps,throughput_high_sps,"
                                 "step_time_low_s,step_time_high_s,interval_basis"));
  EXPECT_THAT(csv.out, HasSubstr(",0.9,"));
  EXPECT_THAT(csv.out, HasSubstr("gpu/fp32"));
}

TEST(IntervalsCli, SaysWhyWhenTheDataIsTooThin) {
  // Every published TPU case comes from one publisher (koshian2's Colab runs).
  const CliRun run = RunCli("sweep wrn-k7n4-7x7 --device tpu-v2-8 --batches 128,256,512");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("interval: none ("));
  EXPECT_THAT(run.out, HasSubstr("4 or more publishers"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("samples/s_80%")));
}

TEST(IntervalsCli, ProjectCombinesTheModelsErrorsWithTheFit) {
  const std::string sweep_json = ScratchIntervals("intervals_cli_sweep.json");
  const CliRun sweep = RunCli(
      "sweep resnet50 --device v100-sxm2 --precision mixed --batches "
      "64,128,256 -o json");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  std::ofstream(sweep_json) << sweep.out;
  const CliRun run = RunCli("project --fit " + sweep_json +
                            " --samples 1281167 --epochs 90 --batch 256 --confidence 0.8 -o json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["rows"].size(), 1u);
  const auto& row = j["rows"][0];
  EXPECT_EQ(row["interval_basis"], "fit + model gpu/tensor");
  // The interval is the model's at 80% widened by the fit's (tiny here: the
  // model's points lie on the law), so close to total / [high, low] factors.
  const fitspeed::PredictionInterval model = fitspeed::BuiltinIntervalTable().For(
      fitspeed::LoadDevice("v100-sxm2"), fitspeed::Precision::kMixed, 0.8);
  const double total = row["total_s"];
  EXPECT_NEAR(row["ci95_s"][0].get<double>(), total / model.high_factor, 0.02 * total);
  EXPECT_NEAR(row["ci95_s"][1].get<double>(), total / model.low_factor, 0.02 * total);
  EXPECT_LE(row["ci95_s"][0].get<double>(), total / model.high_factor * (1 + 1e-9));
  bool said = false;
  for (const auto& a : j["assumptions"]) {
    if (a.get<std::string>().find("interval (model)") != std::string::npos) said = true;
  }
  EXPECT_TRUE(said) << j["assumptions"].dump();
}

TEST(IntervalsCli, ProjectKeepsTheSweepsSourceRule) {
  // The CPU class has 36 published cases, enough for 80% (9), from 1 publisher
  // (Baidu's Paddle tables), fewer than the rule's 4: project, rebuilding the interval at its own
  // level from the sweep's errors, must refuse it as the sweep did.
  const std::string sweep_json = ScratchIntervals("intervals_cli_cpu_sweep.json");
  const CliRun sweep = RunCli("sweep resnet50 --device xeon-6148x2 --batches 64,128,256 -o json");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_EQ(nlohmann::json::parse(sweep.out)["model_interval"]["available"], false);
  std::ofstream(sweep_json) << sweep.out;
  const CliRun run = RunCli("project --fit " + sweep_json +
                            " --samples 1281167 --epochs 90 --batch 256 --confidence 0.8");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("80% interval (model): none from the model's errors"));
  EXPECT_THAT(run.out, HasSubstr("4 or more publishers"));
}

TEST(IntervalsCli, ProjectSaysWhenTheModelsErrorsAreTooFewForItsLevel) {
  // A GPU sweep's errors cut to 20 of 4 sources: enough for 80% (9), too few
  // for 95% (39).
  const std::string sweep_json = ScratchIntervals("intervals_cli_thin_sweep.json");
  const CliRun sweep = RunCli("sweep resnet50 --device v100-sxm2 --batches 32,64,128 -o json");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  auto doc = nlohmann::json::parse(sweep.out);
  auto& errors = doc["model_interval"]["errors"];
  ASSERT_GE(errors.size(), 20u);
  errors.erase(errors.begin() + 20, errors.end());
  for (size_t i = 0; i < errors.size(); ++i) errors[i]["source"] = "s" + std::to_string(i % 4);
  std::ofstream(sweep_json) << doc.dump();
  const CliRun run =
      RunCli("project --fit " + sweep_json + " --samples 1281167 --epochs 90 --batch 256");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("95% interval (model): none from the model's errors"));
  EXPECT_THAT(run.out, HasSubstr("a 95% interval needs at least 39"));
  // A rule asking for fewer than two sources is not one: a data error.
  doc["model_interval"]["min_sources"] = 1;
  std::ofstream(sweep_json) << doc.dump();
  const CliRun bad =
      RunCli("project --fit " + sweep_json + " --samples 1281167 --epochs 90 --batch 256");
  EXPECT_EQ(bad.exit_code, 65) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("model_interval.min_sources"));
}

TEST(IntervalsCli, ValidateReportsCoverageAndWritesTheTable) {
  const std::string out = ScratchIntervals("intervals_cli_table.json");
  const CliRun run =
      RunCli("validate --no-cross-validation --no-cross-device --intervals-out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Prediction intervals (80%): leave one publisher out"));
  EXPECT_THAT(run.out, HasSubstr("gpu/tensor"));
  const fitspeed::IntervalTable written = fitspeed::ReadIntervalTableFile(out);
  EXPECT_EQ(written.classes.size(), fitspeed::BuiltinIntervalTable().classes.size());
  // The framework profiles' held-out errors (sweep --framework) too.
  EXPECT_THAT(run.out, HasSubstr("Predictions with a framework profile"));
  EXPECT_THAT(run.out,
              HasSubstr("framework:gpu/tensor"));  // the class's row, with or without an interval
  EXPECT_EQ(written.framework.size(), fitspeed::BuiltinIntervalTable().framework.size());
  EXPECT_FALSE(written.framework.empty());
  const CliRun bad = RunCli("sweep resnet50 --device v100-sxm2 --batches 32 --intervals " +
                            ::fitspeed::test::Data("nist/Misra1a.dat"));
  EXPECT_EQ(bad.exit_code, 65) << bad.out;  // not an intervals file: a data error
}

}  // namespace
