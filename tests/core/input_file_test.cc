#include "core/input_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

template <class E, class F>
std::string ErrorOfInputFile(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error of the expected kind";
}

// A scratch path of this test and process.
std::string ScratchInputFile(const std::string& name) {
  return ::testing::TempDir() + "/input_file_" + name + "_" + std::to_string(getpid());
}

TEST(InputFile, ReadsARegularFileWhole) {
  const std::string path = ScratchInputFile("whole.json");
  const std::string text = std::string("{\"a\": 1}\n") + std::string(100000, ' ') + "\n";
  std::ofstream(path, std::ios::binary) << text;
  EXPECT_EQ(ReadInputFile(path, "the test file"), text);
  std::remove(path.c_str());
}

TEST(InputFile, MissingFileIsAnInputErrorNamingIt) {
  EXPECT_THAT(ErrorOfInputFile<InputError>(
                  [] { ReadInputFile("/nonexistent/fitspeed/config.json", "the config.json"); }),
              HasSubstr("cannot open the config.json '/nonexistent/fitspeed/config.json'"));
}

// Opened without O_NONBLOCK, a FIFO with no writer would block this test forever.
TEST(InputFile, FifoIsRefusedWithoutBlocking) {
  const std::string path = ScratchInputFile("fifo.json");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  EXPECT_THAT(ErrorOfInputFile<InputError>([&] { ReadInputFile(path, "the config.json"); }),
              AllOf(HasSubstr(path), HasSubstr("a FIFO"), HasSubstr("not a regular file")));
  std::remove(path.c_str());
}

TEST(InputFile, CharacterDeviceIsRefused) {
  EXPECT_THAT(ErrorOfInputFile<InputError>([] { ReadInputFile("/dev/zero", "device file"); }),
              AllOf(HasSubstr("'/dev/zero'"), HasSubstr("a character device"),
                    HasSubstr("not a regular file")));
  // A log may be a pipe, never a device: /dev/zero would fill memory.
  EXPECT_THAT(ErrorOfInputFile<InputError>(
                  [] { ReadInputFile("/dev/zero", "", kMaxLogBytes, PipeInputs::kRead); }),
              HasSubstr("a character device"));
}

TEST(InputFile, DirectoryIsRefused) {
  EXPECT_THAT(
      ErrorOfInputFile<InputError>([] { ReadInputFile(::testing::TempDir(), "links file"); }),
      HasSubstr("is a directory, not a regular file"));
}

TEST(InputFile, FileOverTheCapIsRefusedNamingTheCap) {
  const std::string path = ScratchInputFile("big.json");
  std::ofstream(path, std::ios::binary) << std::string(101, 'x');
  EXPECT_EQ(ReadInputFile(path, "the test file", 101).size(), 101u);
  EXPECT_THAT(ErrorOfInputFile<InputError>([&] { ReadInputFile(path, "the test file", 100); }),
              AllOf(HasSubstr(path), HasSubstr("more than 100 bytes")));
  std::remove(path.c_str());
}

TEST(InputFile, NulInThePathIsRefused) {
  const std::string path("/tmp/a\0b", 8);
  EXPECT_THAT(ErrorOfInputFile<InputError>([&] { ReadInputFile(path, "the config.json"); }),
              HasSubstr("contains a NUL character"));
}

TEST(InputFile, StreamOverTheCapIsRefused) {
  std::istringstream small(std::string(100, 'x'));
  EXPECT_EQ(ReadInputStream(small, "standard input", 100).size(), 100u);
  std::istringstream big(std::string(200000, 'x'));
  EXPECT_THAT(ErrorOfInputFile<InputError>([&] { ReadInputStream(big, "standard input", 100000); }),
              AllOf(HasSubstr("standard input"), HasSubstr("more than 100000 bytes")));
}

}  // namespace
}  // namespace fitspeed
