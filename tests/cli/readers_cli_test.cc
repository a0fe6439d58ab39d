// The fairseq and detectron2 readers through the CLI (issue 31): what `read`
// prints from a real log without attributes, and the exit codes of bad input
// (docs/design.md, "CLI contract": 65 bad data, 64 usage).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"

namespace fitspeed::test {
namespace {

using ::testing::HasSubstr;

TEST(ReadersCli, FairseqLogReadsAsTokensWithoutAttributes) {
  const CliRun run =
      RunCli("read --output json " +
             Data("logs-wild/fairseq/mlperf-v0.7_DellEMC_C4140_transformer_result_0.txt"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["samples"].size(), 2u);
  // Epoch 2's summary, line 196: wps 177660, wpb 56067, 4 workers.
  const auto& s = json["samples"][0];
  EXPECT_EQ(s["line"], 196);
  EXPECT_EQ(s["unit"], "tokens");
  EXPECT_EQ(s["batch"], 56067);
  EXPECT_EQ(s["devices"], 4);
  EXPECT_EQ(s["throughput_sps"], 177660);
}

TEST(ReadersCli, MalformedWpsExits65NamingLineAndField) {
  const CliRun run = RunCli("read --input-format fairseq -",
                            "| epoch 002 | loss 4.6 | wps 17x660 | ups 3.1 | wpb 56067\n");
  EXPECT_EQ(run.exit_code, 65);
  EXPECT_THAT(run.err, HasSubstr("-:1: field 'wps': expected a number, got '17x660'"));
}

TEST(ReadersCli, PerGpuBatchWithoutWorldSizeExits64AskingForDevices) {
  const std::string path = ::testing::TempDir() + "/fitspeed_readers_cli_mmcv.log";
  std::ofstream(path) << "data = dict(samples_per_gpu=32, workers_per_gpu=2)\n"
                         "Epoch [2][100/5005]    lr: 1.000e-01, eta: 1 day, 0:00:00, time: 0.158, "
                         "data_time: 0.023\n";
  const CliRun run = RunCli("read " + path);
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_THAT(run.err, HasSubstr(path + "@devices=N"));
  const CliRun given = RunCli("read --output json " + path + "@devices=8");
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_EQ(nlohmann::json::parse(given.out)["samples"][0]["batch"], 256);
}

}  // namespace
}  // namespace fitspeed::test
