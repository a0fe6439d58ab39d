// The line of progress on stderr (`--progress auto|always|never`,
// FITSPEED_PROGRESS): drawn only when asked or when stderr is a terminal, so
// with stderr in a file (as here) `auto` writes nothing and stdout is the same
// whatever the mode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cli_util.h"

namespace fitspeed::test {
namespace {

using ::testing::HasSubstr;

constexpr int kUsageProgress = 64;  // tools/fitspeed/exit_code.h, ExitCode::kUsage

// A search of 34 (tp, cp, pp) groups (tests/llm/split_test.cc counts them).
// CSV: the table also says how long the search took.
const std::string kPlanProgress =
    "plan llama-3-8b --device a100 --devices 16 --global-batch 64 --seq-len 4096 --output csv";

// Whether the line was erased at the end: after the last carriage return
// comes the erase-line sequence, then only messages on lines of their own.
bool ErasedProgress(const std::string& err) {
  const size_t last = err.rfind('\r');
  if (last == std::string::npos) return false;
  const std::string after = err.substr(last + 1);
  return after.rfind("\033[K", 0) == 0 && (after.size() == 3 || after.back() == '\n');
}

TEST(ProgressCli, AlwaysDrawsTheStageAndErasesItAtTheEnd) {
  const CliRun run = RunCli(kPlanProgress + " --progress always");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The first group is always drawn, on a line redrawn in place.
  EXPECT_THAT(run.err, HasSubstr("\r\033[Kplan llama-3-8b: planner (0 of 34): tp 1, cp 1, pp 1"));
  EXPECT_TRUE(ErasedProgress(run.err));  // nothing left on the line
  EXPECT_EQ(run.out, RunCli(kPlanProgress + " --progress never").out);
}

TEST(ProgressCli, AutoAndNeverWriteNothingWhenStderrIsNotATerminal) {
  const CliRun automatic = RunCli(kPlanProgress);
  ASSERT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_EQ(automatic.err, "");
  const CliRun given = RunCli(kPlanProgress + " --progress auto");
  EXPECT_EQ(given.err, "");
  const CliRun never = RunCli(kPlanProgress + " --progress never", "", "FITSPEED_PROGRESS=always");
  EXPECT_EQ(never.err, "");  // the option wins over the environment
  EXPECT_EQ(never.out, automatic.out);
}

TEST(ProgressCli, EnvironmentSetsTheDefault) {
  const CliRun run = RunCli(kPlanProgress, "", "FITSPEED_PROGRESS=always");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("planner (0 of 34)"));
  EXPECT_EQ(RunCli(kPlanProgress, "", "FITSPEED_PROGRESS=never").err, "");
  EXPECT_EQ(RunCli(kPlanProgress, "", "FITSPEED_PROGRESS=").err, "");  // empty: auto
}

TEST(ProgressCli, BadModesAreUsageErrors) {
  const CliRun option = RunCli(kPlanProgress + " --progress sometimes");
  EXPECT_EQ(option.exit_code, kUsageProgress);
  EXPECT_THAT(option.err, HasSubstr("--progress"));
  const CliRun env = RunCli(kPlanProgress, "", "FITSPEED_PROGRESS=yes");
  EXPECT_EQ(env.exit_code, kUsageProgress);
  EXPECT_THAT(env.err, HasSubstr("FITSPEED_PROGRESS='yes'"));
}

TEST(ProgressCli, HostSweepShowsEachBatchStartedAndMeasured) {
  const std::string sweep =
      "sweep mlp-mnist --batches 1,4 --threads 1 --warmup 1 --min-time 0 --min-repeats 2";
  const CliRun run = RunCli(sweep + " --progress always --output json");
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.exit_code << run.err;
  EXPECT_THAT(run.err, HasSubstr("sweep mlp-mnist: batch 1 (1 of 2): measuring"));
  EXPECT_THAT(run.err, HasSubstr("sweep mlp-mnist: batch 4 (2 of 2): "));
  EXPECT_THAT(run.err, HasSubstr(" samples/s, 2 repeats"));
  EXPECT_TRUE(ErasedProgress(run.err));
  EXPECT_EQ(RunCli(sweep + " --output json").err.find("sweep mlp-mnist"), std::string::npos);
}

TEST(ProgressCli, ValidateFrameworksShowsEachFramework) {
  const CliRun run = RunCli("validate frameworks --progress always --output json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The first framework is always drawn, with its cases.
  EXPECT_THAT(run.err, HasSubstr("validate frameworks: framework profiles (0 of "));
  EXPECT_THAT(run.err, HasSubstr(" cases, each GPU held out in turn"));
  EXPECT_TRUE(ErasedProgress(run.err));
  // The older spelling and the subcommands take it too.
  EXPECT_EQ(RunCli("validate --frameworks --progress never --output json").err, "");
}

TEST(ProgressCli, HelpNamesTheOptionWhereItApplies) {
  EXPECT_THAT(RunCli("--help").out, HasSubstr("FITSPEED_PROGRESS"));
  for (const char* command : {"sweep", "demo", "plan", "validate", "validate cases",
                              "validate intervals", "validate frameworks", "validate llm"}) {
    const CliRun run = RunCli(std::string(command) + " --help");
    EXPECT_EQ(run.exit_code, 0) << command;
    EXPECT_THAT(run.out, HasSubstr("--progress")) << command;
  }
}

}  // namespace
}  // namespace fitspeed::test
