// Golden tests of `fitspeed validate mlperf` on the fixture in
// tests/data/mlperf-fixture: six rows of the MLPerf ResNet-50/BERT table (file
// lines 2-7: Dell's 8xH100 BERT, test split; NVIDIA's 8xH100 ResNet-50 and
// BERT and 8xH200 ResNet-50, Fujitsu's 4xH100 ResNet-50, development;
// tinycorp's 6x GeForce RTX 4090 ResNet-50 with tinygrad, development, not
// mapped to a catalog device).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_util.h"

namespace {

using ::fitspeed::test::CliRun;
using ::fitspeed::test::Data;
using ::fitspeed::test::RunCli;
using ::testing::HasSubstr;
using ::testing::Not;

std::string FixtureArgsMlperfCli() {
  return "validate mlperf --data " + Data("mlperf-fixture") + " --publishers " +
         Data("mlperf-fixture/publishers.json");
}

TEST(ValidateMlperfCli, PublishersWeighEquallyInTheDevelopmentSplit) {
  const CliRun run = RunCli(FixtureArgsMlperfCli() + " --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema"], "fitspeed.validate_mlperf/1");
  EXPECT_EQ(j["split"], "development");
  // Five development rows: NVIDIA 3, Fujitsu 1, tinycorp 1 (not modelable).
  ASSERT_EQ(j["cases"].size(), 5u);
  std::map<std::string, std::vector<nlohmann::json>> by_publisher;
  for (const auto& c : j["cases"]) by_publisher[c["publisher"]].push_back(c);
  ASSERT_EQ(by_publisher["NVIDIA"].size(), 3u);
  ASSERT_EQ(by_publisher["Fujitsu"].size(), 1u);
  ASSERT_EQ(by_publisher["tinycorp"].size(), 1u);
  EXPECT_FALSE(by_publisher["tinycorp"][0]["modeled"]);
  for (const char* name : {"NVIDIA", "Fujitsu"}) {
    for (const auto& c : by_publisher[name]) {
      ASSERT_TRUE(c["modeled"]) << c.dump();
      ASSERT_TRUE(c["interval_available"]) << c.dump();
      // Covered means measured inside the printed interval.
      const double m = c["measured_sps"];
      EXPECT_EQ(c["covered"].get<bool>(), c["interval_low_sps"].get<double>() <= m &&
                                              m <= c["interval_high_sps"].get<double>());
    }
  }

  // The hand calculation, from each case's error and covered flag: NVIDIA's
  // three cases have |errors| a <= b <= c (sorted) and k of them covered; its
  // median |error| is b and its coverage k/3. Fujitsu's one case has |error| d
  // and coverage f (0 or 1). tinycorp has no modeled case and weighs nothing.
  // Publishers weighted equally: median |error| = (b + d)/2 (the median of two
  // publishers), coverage = (k/3 + f)/2 - not the pooled (k + f)/4, which
  // weighs NVIDIA three times. E.g. k = 2, f = 1: 5/6 = 83.3%, pooled 75%.
  std::vector<double> nvidia;
  int k = 0;
  for (const auto& c : by_publisher["NVIDIA"]) {
    nvidia.push_back(std::fabs(c["error_pct"].get<double>()));
    k += c["covered"].get<bool>() ? 1 : 0;
  }
  std::sort(nvidia.begin(), nvidia.end());
  const double b = nvidia[1];
  const double d = std::fabs(by_publisher["Fujitsu"][0]["error_pct"].get<double>());
  const double f = by_publisher["Fujitsu"][0]["covered"].get<bool>() ? 1 : 0;
  const auto& s = j["summary"];
  EXPECT_EQ(s["publishers"], 2);
  EXPECT_NEAR(s["median_of_publisher_median_abs_error_pct"].get<double>(), (b + d) / 2, 1e-9);
  EXPECT_EQ(s["publishers_with_interval"], 2);
  EXPECT_NEAR(s["publisher_weighted_coverage"].get<double>(), (k / 3.0 + f) / 2, 1e-12);
  EXPECT_NEAR(s["case_coverage"].get<double>(), (k + f) / 4, 1e-12);
  EXPECT_EQ(s["cases"], 4);

  // Per publisher, sorted by name.
  ASSERT_EQ(j["publishers"].size(), 3u);
  EXPECT_EQ(j["publishers"][0]["publisher"], "Fujitsu");
  EXPECT_EQ(j["publishers"][1]["publisher"], "NVIDIA");
  EXPECT_NEAR(j["publishers"][1]["median_abs_error_pct"].get<double>(), b, 1e-9);
  EXPECT_NEAR(j["publishers"][1]["coverage"].get<double>(), k / 3.0, 1e-12);
  EXPECT_EQ(j["publishers"][2]["publisher"], "tinycorp");
  EXPECT_EQ(j["publishers"][2]["not_modelable"], 1);
  EXPECT_TRUE(j["publishers"][2]["median_abs_error_pct"].is_null());

  // The RTX 4090 is listed as not modelable, with its publisher.
  ASSERT_EQ(j["not_modelable"].size(), 1u);
  EXPECT_EQ(j["not_modelable"][0]["what"], "GeForce RTX 4090-24GB");
  EXPECT_EQ(j["not_modelable"][0]["cases"], 1);
  EXPECT_EQ(j["not_modelable"][0]["publishers"], nlohmann::json::array({"tinycorp"}));
}

TEST(ValidateMlperfCli, CaseRowsCarryTheirSetup) {
  const CliRun run = RunCli(FixtureArgsMlperfCli() + " --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const auto& c : j["cases"]) {
    if (c["line"] == 4) {  // NVIDIA 3.0 8xH100 BERT: packed, global batch 768 sequences
      EXPECT_EQ(c["benchmark"], "bert");
      EXPECT_EQ(c["device"], "h100");
      EXPECT_EQ(c["devices"], 8);
      EXPECT_EQ(c["global_batch"], 768);
      EXPECT_EQ(c["sequences_per_row"], 2);
      EXPECT_DOUBLE_EQ(c["measured_sps"].get<double>(), 7759.6);
      EXPECT_THAT(c["assumed"].get<std::string>(), HasSubstr("fused attention"));
      EXPECT_THAT(c["assumed"].get<std::string>(), HasSubstr("FP8 dense layers and attention"));
      // NVIDIA's code removes the padding: the prediction is the sweep of 768
      // sequences with the options its assumptions name (4/3 x 254.43^2 =
      // 86,312.8332), sequences/s as they are, not rows times two; packed, it
      // runs FP8 (Transformer Engine) on a model cast to FP16 whole.
      const CliRun sweep = RunCli(
          "sweep bert-large --device h100 --devices 8 --devices-per-node 8 --precision fp8 "
          "--amp-ops none --attention fused --optimizer adam --seq-len 512 --mean-tokens 254.43 "
          "--mean-square-tokens 86312.8332 --head-positions 38 --batches 768 --output json");
      ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
      const double swept =
          nlohmann::json::parse(sweep.out)["steps"][0]["throughput_sps"].get<double>();
      EXPECT_NEAR(c["predicted_sps"].get<double>() / swept, 1.0, 1e-6);
    }
    if (c["line"] == 3) {  // NVIDIA 3.0 8xH100 ResNet-50
      EXPECT_EQ(c["sequences_per_row"], 1);
      EXPECT_THAT(c["assumed"].get<std::string>(), HasSubstr("nhwc, fused bn-relu-add"));
    }
  }
}

TEST(ValidateMlperfCli, TestSplitOnlyWhenAsked) {
  // The table: the development split, no test row (Dell's is line 2).
  const CliRun dev = RunCli(FixtureArgsMlperfCli());
  ASSERT_EQ(dev.exit_code, 0) << dev.err;
  EXPECT_THAT(dev.out, HasSubstr("development split"));
  EXPECT_THAT(dev.out, HasSubstr("NVIDIA"));
  EXPECT_THAT(dev.out, Not(HasSubstr("Dell")));
  EXPECT_THAT(dev.out, Not(HasSubstr("XE9680")));
  EXPECT_THAT(dev.out, HasSubstr("Not modelable"));
  EXPECT_THAT(dev.out, HasSubstr("GeForce RTX 4090-24GB: 1 case, 1 publisher (tinycorp)"));
  const CliRun csv = RunCli(FixtureArgsMlperfCli() + " --output csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, Not(HasSubstr("Dell")));

  // --split test: Dell alone, and none of the development rows.
  const CliRun test = RunCli(FixtureArgsMlperfCli() + " --split test --output json");
  ASSERT_EQ(test.exit_code, 0) << test.err;
  const auto j = nlohmann::json::parse(test.out);
  EXPECT_EQ(j["split"], "test");
  ASSERT_EQ(j["cases"].size(), 1u);
  EXPECT_EQ(j["cases"][0]["publisher"], "Dell");
  EXPECT_EQ(j["summary"]["publishers"], 1);
  const CliRun test_table = RunCli(FixtureArgsMlperfCli() + " --split test");
  EXPECT_THAT(test_table.out, HasSubstr("report once per release of the model"));
  for (const char* development : {"dgxh100", "h200_ngc", "GX2560M7", "Fujitsu", "tinycorp"}) {
    EXPECT_THAT(test_table.out, Not(HasSubstr(development)));
  }

  const CliRun bad = RunCli(FixtureArgsMlperfCli() + " --split both");
  EXPECT_EQ(bad.exit_code, 64) << bad.err;
}

// A copy of the fixture with one field of one row replaced, in a scratch folder.
std::string BadFixtureMlperfCli(const std::string& name, int line, const std::string& from,
                                const std::string& to) {
  const std::string dir = ::testing::TempDir() + "/mlperf_cli_" + name;
  std::system(("mkdir -p " + dir).c_str());
  std::ifstream in(Data("mlperf-fixture/mlperf_training_resnet_bert_throughput_v3.0-v5.0.csv"));
  std::ofstream out(dir + "/mlperf_training_resnet_bert_throughput_v3.0-v5.0.csv");
  std::string text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (n == line) {
      const size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      text.replace(at, from.size(), to);
    }
    out << text << "\n";
  }
  return dir;
}

TEST(ValidateMlperfCli, BadRowsNameFileLineAndFieldWithExit65) {
  struct Bad {
    const char* name;
    int line;
    const char* from;
    const char* to;
    const char* field;
  };
  const Bad bad[] = {
      // Line 3: NVIDIA's ResNet-50; "resnet" becomes an unknown benchmark.
      {"benchmark", 3, ",resnet,", ",resnet101,", ".csv:3: field 'benchmark'"},
      // A submitter no publisher lists.
      {"submitter", 3, "3.0,NVIDIA,", "3.0,NVIDIA2,", ".csv:3: field 'submitter'"},
      // 8 per node x 1 node is not 16.
      {"count", 3, ",8,1,8,", ",8,1,16,", ".csv:3: field 'n_accelerators'"},
      // Line 6: Fujitsu's 3264 images on 4 GPUs; 3263 does not divide.
      {"batch", 6, ",3264,", ",3263,", ".csv:6: field 'global_batch'"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.name);
    const std::string dir = BadFixtureMlperfCli(b.name, b.line, b.from, b.to);
    const CliRun run = RunCli("validate mlperf --data " + dir + " --publishers " +
                              Data("mlperf-fixture/publishers.json"));
    EXPECT_EQ(run.exit_code, 65) << run.err;
    EXPECT_THAT(run.err, HasSubstr("mlperf_training_resnet_bert_throughput_v3.0-v5.0.csv"));
    EXPECT_THAT(run.err, HasSubstr(b.field));
  }
}

}  // namespace
