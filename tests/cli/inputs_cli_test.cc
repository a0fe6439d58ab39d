// Bad inputs at the CLI (issue 45, "Every request validated, every input
// bounded"), each refused with the exit code of its kind (docs/design.md,
// "CLI contract") and a message naming the file or option.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_util.h"

namespace fitspeed::test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// tools/fitspeed/exit_code.h, ExitCode
constexpr int kUsageInputs = 64;
constexpr int kDataInputs = 65;
constexpr int kInputInputs = 66;

// A scratch folder of this test and process, removed at the end of the test.
class ScratchInputs {
 public:
  ScratchInputs()
      : dir_(::testing::TempDir() + "/inputs_cli_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
             std::to_string(getpid())) {
    std::filesystem::create_directories(dir_);
  }
  ~ScratchInputs() { std::filesystem::remove_all(dir_); }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

const char kPlanInputs[] = "plan llama-2-7b --device h100 --global-batch 64 --seq-len 4096 --top 1";
const char kLlmSweepInputs[] = "sweep llama-2-7b --device h100 --tp 1 --seq-len 4096";

// A FIFO without a writer blocked the CLI forever; each is refused at once.
TEST(InputsCli, FifoModelOrConfigJsonIsAnInputError) {
  const ScratchInputs scratch;
  const std::string fifo = scratch.dir() + "/net.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string folder = scratch.dir() + "/model";
  std::filesystem::create_directories(folder);
  ASSERT_EQ(mkfifo((folder + "/config.json").c_str(), 0600), 0);
  for (const std::string& args :
       {"models " + fifo, "sweep " + fifo + " --device h100", "models " + folder,
        "sweep " + folder + " --device h100 --tp 1 --seq-len 4096"}) {
    const CliRun run = RunCli(args);
    EXPECT_EQ(run.exit_code, kInputInputs) << args << "\n" << run.err;
    EXPECT_THAT(run.err, AllOf(HasSubstr("a FIFO"), HasSubstr("not a regular file"))) << args;
  }
}

TEST(InputsCli, DevZeroAsModelIsAnInputError) {
  const CliRun run = RunCli("models /dev/zero");
  EXPECT_EQ(run.exit_code, kInputInputs) << run.err;
  EXPECT_THAT(run.err, HasSubstr("'/dev/zero': it is a character device, not a regular file"));
}

// `models` said 64 (usage) and `sweep` 66 for the same missing file.
TEST(InputsCli, MissingModelFileIsAnInputErrorInModelsAndSweep) {
  for (const std::string& args :
       {std::string("models /nonexistent/fitspeed/net.json"),
        std::string("sweep /nonexistent/fitspeed/net.json --device h100")}) {
    const CliRun run = RunCli(args);
    EXPECT_EQ(run.exit_code, kInputInputs) << args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("'/nonexistent/fitspeed/net.json'")) << args;
  }
}

// A folder given as --links was read as malformed JSON (65).
TEST(InputsCli, LinksDirectoryIsAnInputError) {
  const ScratchInputs scratch;
  const CliRun run = RunCli(std::string(kLlmSweepInputs) + " --links " + scratch.dir());
  EXPECT_EQ(run.exit_code, kInputInputs) << run.err;
  EXPECT_THAT(run.err, HasSubstr("links file '" + scratch.dir() + "': it is a directory"));
}

// It said "field 'input': missing", a network JSON's field.
TEST(InputsCli, ConfigJsonWithoutModelTypeSaysWhatIsMissing) {
  const ScratchInputs scratch;
  const std::string path = scratch.dir() + "/config.json";
  std::ofstream(path) << "{\"hidden_size\": 4096, \"num_hidden_layers\": 32}\n";
  const CliRun run = RunCli("models " + path);
  EXPECT_EQ(run.exit_code, kDataInputs) << run.err;
  EXPECT_THAT(run.err, AllOf(HasSubstr("field 'model_type': missing"), Not(HasSubstr("'input'"))));
  std::ofstream(path) << "{\"colour\": \"blue\"}\n";
  const CliRun neither = RunCli("models " + path);
  EXPECT_EQ(neither.exit_code, kDataInputs) << neither.err;
  EXPECT_THAT(neither.err, HasSubstr("neither a network JSON"));
}

// Doubling to 2^62 overflowed int64 and looped, growing to 8 GB.
TEST(InputsCli, BatchesBeyondTheMaximumAreUsageErrors) {
  const CliRun max_batch = RunCli("sweep resnet50 --device h100 --max-batch 4611686018427387904");
  EXPECT_EQ(max_batch.exit_code, kUsageInputs) << max_batch.err;
  EXPECT_THAT(max_batch.err, AllOf(HasSubstr("--max-batch"), HasSubstr("1073741824")));
  const CliRun batches = RunCli("sweep resnet50 --device h100 --batches 1:4611686018427387904");
  EXPECT_EQ(batches.exit_code, kUsageInputs) << batches.err;
  EXPECT_THAT(batches.err,
              HasSubstr("--batches: 4611686018427387904 is above the largest batch a sweep takes, "
                        "2^30 = 1073741824"));
}

// nan passed CLI11's PositiveNumber (and dropped the days column); inf
// priced the run at inf.
TEST(InputsCli, NonFiniteNumberOptionsAreUsageErrors) {
  const CliRun tokens = RunCli(std::string(kPlanInputs) + " --devices 8 --tokens nan");
  EXPECT_EQ(tokens.exit_code, kUsageInputs) << tokens.out;
  EXPECT_THAT(tokens.err, HasSubstr("--tokens: nan is not a finite number > 0"));
  const CliRun price = RunCli(std::string(kPlanInputs) + " --devices 8 --tokens 1e12 --price inf");
  EXPECT_EQ(price.exit_code, kUsageInputs) << price.out;
  EXPECT_THAT(price.err, HasSubstr("--price"));
}

// CLI11's PositiveNumber printed its bounds in full: a 309-digit DBL_MAX.
TEST(InputsCli, ZeroDevicesIsAShortUsageError) {
  for (const std::string& args :
       {std::string(kPlanInputs) + " --devices 0", std::string(kLlmSweepInputs) + " --devices 0"}) {
    const CliRun run = RunCli(args);
    EXPECT_EQ(run.exit_code, kUsageInputs) << args << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("--devices")) << args;
    EXPECT_LT(run.err.size(), 300u) << run.err;
  }
}

}  // namespace
}  // namespace fitspeed::test
