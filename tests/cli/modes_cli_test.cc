// sweep's and plan's explicit modes (`sweep host|device|llm`, `plan llm`):
// each takes its own options only, and the spelling of earlier versions
// (`sweep MODEL [--device D] [--tp ...]`, `plan MODEL --device D`) picks the
// same mode and prints the same bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ModesCli, DeviceAndLlmModesPrintWhatTheOldSpellingPrints) {
  const std::string device = " resnet50 --device a100 --precision mixed --batches 64,128,256";
  const CliRun mode = RunCli("sweep device" + device);
  const CliRun old = RunCli("sweep" + device);
  ASSERT_EQ(mode.exit_code, 0) << mode.err;
  EXPECT_EQ(mode.out, old.out);
  const std::string llm = " llama-2-7b --device h100 --tp 2 --seq-len 4096 --output json";
  const CliRun llm_mode = RunCli("sweep llm" + llm);
  ASSERT_EQ(llm_mode.exit_code, 0) << llm_mode.err;
  EXPECT_EQ(llm_mode.out, RunCli("sweep" + llm).out);
}

// `sweep host` once failed before measuring anything ("internal error:
// --recompute not found": the command asked its host mode for a device-mode
// option). It measures here, and reports the batches it was given.
TEST(ModesCli, HostModeMeasuresTheBatchesItWasGiven) {
  const CliRun host = RunCli(
      "sweep host mlp-mnist --batches 8,16,32 --min-repeats 2 --min-time 0.01 --output json");
  ASSERT_NE(host.exit_code, 70) << host.err;  // 0, or 1 when the CPU was too busy to fit
  EXPECT_THAT(host.err, Not(HasSubstr("internal error")));
  const nlohmann::json doc = nlohmann::json::parse(host.out);
  ASSERT_EQ(doc["measurements"].size(), 3u) << host.out.substr(0, 400);
  EXPECT_EQ(doc["measurements"][2]["batch"], 32);
}

TEST(ModesCli, PlanLlmRanksWhatThePlanWithDeviceRanks) {
  const std::string args =
      " llama-2-7b --device h100 --devices 64 --global-batch 256 --seq-len 4096 --top 3 "
      "--output json";
  const CliRun mode = RunCli("plan llm" + args);
  const CliRun old = RunCli("plan" + args);
  ASSERT_EQ(mode.exit_code, 0) << mode.err;
  ASSERT_EQ(old.exit_code, 0) << old.err;
  nlohmann::json a = nlohmann::json::parse(mode.out), b = nlohmann::json::parse(old.out);
  a.erase("search");  // the search's own speed is measured, so it differs
  b.erase("search");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["ranked"].size(), 3u);
}

TEST(ModesCli, EachModeRefusesTheOthersOptions) {
  // An explicit mode does not have the option at all (CLI11's usage error).
  const CliRun device = RunCli("sweep device resnet50 --device a100 --threads 2");
  EXPECT_EQ(device.exit_code, 64);
  EXPECT_THAT(device.err, HasSubstr("--threads"));
  // The old spelling names the mode the options chose and the one that takes it.
  const CliRun old = RunCli("sweep resnet50 --device a100 --threads 2");
  EXPECT_EQ(old.exit_code, 64);
  EXPECT_THAT(old.err, HasSubstr("--threads is for `sweep host`; these options make this a "
                                 "`sweep device`"));
  const CliRun split = RunCli("sweep llama-2-7b --device h100 --seq-len 4096 --batches 1,2");
  EXPECT_EQ(split.exit_code, 64);
  EXPECT_THAT(split.err, HasSubstr("--batches is for `sweep host` and `sweep device`"));
  const CliRun plan = RunCli(
      "plan llm llama-2-7b --device h100 --devices 8 --global-batch 8 "
      "--seq-len 2048 --epochs 3");
  EXPECT_EQ(plan.exit_code, 64);
}

TEST(ModesCli, EachModesHelpListsItsOwnOptions) {
  const CliRun sweep = RunCli("sweep --help");
  ASSERT_EQ(sweep.exit_code, 0);
  EXPECT_THAT(sweep.out, HasSubstr("`sweep host MODEL`"));
  const CliRun host = RunCli("sweep host --help");
  EXPECT_THAT(host.out, HasSubstr("--threads"));
  EXPECT_THAT(host.out, Not(HasSubstr("--device ")));
  EXPECT_THAT(host.out, Not(HasSubstr("--tp ")));
  const CliRun llm = RunCli("sweep llm --help");
  EXPECT_THAT(llm.out, HasSubstr("--lora-rank"));
  EXPECT_THAT(llm.out, Not(HasSubstr("--batches")));
  const CliRun plan = RunCli("plan llm --help");
  EXPECT_THAT(plan.out, HasSubstr("--global-batch"));
  EXPECT_THAT(plan.out, Not(HasSubstr("--e-min")));
}

}  // namespace
}  // namespace fitspeed
