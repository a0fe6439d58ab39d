// Golden tests of the `fitspeed` CLI: exit codes, messages and output formats,
// run as a user would run the installed program.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_util.h"

namespace {

using ::fitspeed::test::CliRun;
using ::fitspeed::test::Data;
using ::fitspeed::test::ReadFile;
using ::fitspeed::test::RunCli;
using ::testing::HasSubstr;

TEST(Cli, HelpListsTheSubcommandsAndExitsZero) {
  const CliRun run = RunCli("--help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.out, HasSubstr("read"));
  EXPECT_THAT(run.out, HasSubstr("fit"));
  EXPECT_THAT(run.out, HasSubstr("Exit codes"));
}

TEST(Cli, NoSubcommandIsAUsageError) { EXPECT_EQ(RunCli("").exit_code, 64); }

TEST(Cli, UnknownOptionValueIsAUsageError) {
  const CliRun run = RunCli("fit --objective nonsense " + Data("nist/Misra1d.dat"));
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("nonsense"));
}

TEST(Cli, MissingInputExits66AndNamesTheFile) {
  const CliRun run = RunCli("fit /nonexistent/speed.csv");
  EXPECT_EQ(run.exit_code, 66);
  EXPECT_THAT(run.err, HasSubstr("/nonexistent/speed.csv"));
}

TEST(Cli, TokensWithASequenceLengthAreFittedPerSequence) {
  // A language model's steps in tokens: step = b/v0 + t with v0 = 512,000
  // tokens/s and t = 0.05 s, batches of 4..64 sequences of 1024 tokens
  // (4096..65536 tokens). Per sequence: v0 = 512000 / 1024 = 500 sequences/s,
  // the same t, b_half = 500 * 0.05 = 25 sequences.
  const std::string table =
      "batch,step_time_s\n4096,0.058\n8192,0.066\n16384,0.082\n32768,0.114\n65536,0.178\n";
  const CliRun run = RunCli("fit --output json -- -@unit=tokens,seq_len=1024", table);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto fit = nlohmann::json::parse(run.out)["fits"][0];
  EXPECT_EQ(fit["counts"], "sequences");
  EXPECT_EQ(fit["seq_len"], 1024);
  EXPECT_EQ(fit["params"]["v0"]["unit"], "sequences/s");
  EXPECT_NEAR(fit["params"]["v0"]["value"].get<double>(), 500, 1e-6);
  EXPECT_NEAR(fit["b_half"].get<double>(), 25, 1e-6);

  // The text report gives tokens/s too: 500 * 1024 = 512,000.
  const CliRun text = RunCli("fit -- -@unit=tokens,seq_len=1024", table);
  EXPECT_THAT(text.out, HasSubstr("= 512000 +/- "));
  EXPECT_THAT(text.out, HasSubstr("tokens/s (sequences of 1024 tokens)"));

  // Without the length the same table is fitted per token.
  const CliRun tokens = RunCli("fit --output json -- -@unit=tokens", table);
  ASSERT_EQ(tokens.exit_code, 0) << tokens.err;
  const auto per_token = nlohmann::json::parse(tokens.out)["fits"][0];
  EXPECT_EQ(per_token["group"]["unit"], "tokens");
  EXPECT_EQ(per_token["params"]["v0"]["unit"], "tokens/s");
  EXPECT_NEAR(per_token["params"]["v0"]["value"].get<double>(), 512000, 1e-3);
}

TEST(Cli, BinaryJunkOnStdinExits65) {
  const CliRun run = RunCli("fit -", std::string("\x7f"
                                                 "ELF\x02\x01\x01\0\0\0junk",
                                                 14));
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr("binary"));
}

TEST(Cli, AStepTimeCsvOnStdinIsReadAndFitted) {
  // Exact data from v0 = 1000 samples/s, t = 0.05 s: step = b/1000 + 0.05.
  const CliRun run = RunCli("fit - --output json",
                            "batch,step_time_s\n10,0.06\n20,0.07\n40,0.09\n80,0.13\n160,0.21\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.fit/1");
  const auto& fit = json["fits"][0];
  EXPECT_NEAR(fit["params"]["v0"]["value"].get<double>(), 1000, 1e-6);
  EXPECT_NEAR(fit["params"]["t"]["value"].get<double>(), 0.05, 1e-10);
  EXPECT_EQ(fit["params"]["v0"]["unit"], "samples/s");
  EXPECT_EQ(fit["n_points"], 5);
  EXPECT_EQ(fit["dof"], 3);
  // b_half = v0 * t = 50 samples.
  EXPECT_NEAR(fit["b_half"].get<double>(), 50, 1e-6);
}

TEST(Cli, FitsMisra1dToTheCertifiedValue) {
  const CliRun run =
      RunCli("fit " + Data("nist/Misra1d.dat") + " --objective absolute-throughput --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  // NIST certified b1 = 4.3736970754E+02 (Misra1d.dat); v0 = b1.
  EXPECT_NEAR(json["fits"][0]["params"]["v0"]["value"].get<double>(), 437.36970754, 1e-6);
}

TEST(Cli, ReadPrintsOneCsvRowPerSample) {
  const CliRun run = RunCli("read " + Data("nist/Misra1d.dat") + " --output csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Misra1d has 14 observations (NIST: "Data (lines 61 to 74)") plus the header row.
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 15);
}

TEST(Cli, ReadJsonFollowsTheSamplesSchema) {
  const CliRun run = RunCli("read - --output json", "batch,throughput\n32,100\n64,150\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.samples/1");
  ASSERT_EQ(json["samples"].size(), 2u);
  EXPECT_EQ(json["samples"][1]["line"], 3);
  EXPECT_EQ(json["samples"][1]["throughput_sps"], 150);
  EXPECT_TRUE(json["samples"][1]["step_time_s"].is_null());
}

TEST(Cli, OneDistinctBatchSizeIsBadData) {
  const CliRun run = RunCli("fit -", "batch,throughput\n32,100\n32,101\n32,99\n");
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr("batch"));
}

TEST(Cli, NegativeValueNamesLineAndField) {
  const CliRun run = RunCli("read -", "batch,throughput\n32,100\n64,-5\n");
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr(":3"));
  EXPECT_THAT(run.err, HasSubstr("throughput"));
}

TEST(Cli, AttributesFillWhatTheLogLacks) {
  // The epochs format has no batch: PATH@batch=... supplies it.
  const CliRun run =
      RunCli("read --output json -- -@batch=128,samples=50000,label=mine", "10.5\n10.0\n10.1\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["samples"].size(), 2u);  // epoch 1 dropped by default
  EXPECT_EQ(json["samples"][0]["batch"], 128);
  EXPECT_EQ(json["samples"][0]["label"], "mine");
  EXPECT_EQ(json["samples"][0]["samples_per_epoch"], 50000);
}

TEST(Cli, WhereFilterThatKeepsNothingIsBadData) {
  const CliRun run = RunCli("read - --where label=nothing", "batch,throughput\n32,100\n64,150\n");
  EXPECT_EQ(run.exit_code, 65);
}

TEST(Cli, PlotWritesAnSvg) {
  const std::string svg =
      ::testing::TempDir() + "/fitspeed_cli_plot_" + std::to_string(getpid()) + ".svg";
  const CliRun run = RunCli("fit " + Data("nist/Misra1d.dat") + " --plot " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string text = ReadFile(svg);
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  EXPECT_THAT(text, HasSubstr("</svg>"));
  // 14 observations -> 14 markers in the plot (the legend, its last group, has one more).
  const std::string plot = text.substr(0, text.rfind("<g transform=\"translate(0,"));
  size_t circles = 0;
  for (size_t pos = 0; (pos = plot.find("<circle", pos)) != std::string::npos; ++pos) ++circles;
  EXPECT_EQ(circles, 14u);
}

TEST(Cli, ProjectFromNumbersMatchesAHandCalculation) {
  // N = 50000, b = 100: 500 steps; epoch = 50000/1000 + 500 x 0.05 = 75 s;
  // 10 epochs = 750 s with no startup.
  const CliRun run =
      RunCli("project --v0 1000 --t 0.05 --samples 50000 --batch 100 --epochs 10 --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.project/1");
  ASSERT_EQ(json["rows"].size(), 1u);
  EXPECT_NEAR(json["rows"][0]["total_s"].get<double>(), 750, 1e-9);
}

TEST(Cli, ProjectOfAOneBatchEpochLogPointsToMeasured) {
  // tinycorp's MLPerf v4.0 ResNet log: 36 epochs, all at batch 1536.
  const std::string log = std::string(FITSPEED_TEST_DATA_DIR) +
                          "/logs-wild/mllog/mlperf-v4.0_tinycorp_tinybox_green_resnet_result_0.txt";
  const CliRun fitted = RunCli("project " + log);
  EXPECT_EQ(fitted.exit_code, 65);
  EXPECT_THAT(fitted.err, HasSubstr("1 distinct batch size (1536)"));
  EXPECT_THAT(fitted.err, HasSubstr("fitspeed project --measured"));
  const CliRun measured = RunCli("project --measured " + log);
  EXPECT_EQ(measured.exit_code, 0) << measured.err;
  // floor(1281167 / 1536) = 834 steps per epoch (drop_remainder).
  EXPECT_THAT(measured.out, HasSubstr("834"));
}

TEST(Cli, ProjectWithoutALawIsAUsageError) {
  const CliRun run = RunCli("project --samples 50000");
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr("--v0"));
}

TEST(Cli, ModelsListsTheWideResNetWithItsPublishedParameterCount) {
  const CliRun run = RunCli("models --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema"], "fitspeed.models/1");
  bool found = false;
  for (const auto& model : json["models"]) {
    if (model["name"] != "wrn-k7n4-7x7") continue;
    found = true;
    // koshian2/TPU-Benchmark's Keras summary: 103,465,028 params, 103,452,484 trainable.
    EXPECT_EQ(model["params"], 103465028);
    EXPECT_EQ(model["trainable_params"], 103452484);
  }
  EXPECT_TRUE(found);
}

}  // namespace
