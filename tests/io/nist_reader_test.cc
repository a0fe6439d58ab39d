// Tests of the NIST StRD .dat reader on tests/data/nist/Misra1d.dat (NIST's
// file as copied in Ceres Solver's data/nist/, CRLF line ends) and on small
// texts in its layout. Expected values are quoted from the file's lines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/reader_test_util.h"
#include "io/readers.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

using fitspeed::testing::ReadData;

std::vector<Sample> ReadRawNist(std::string_view text) {
  const std::string source = "t.dat";
  const Attributes attributes;
  const ReadOptions options;
  return io::ReadNist(text, io::ReaderContext{source, attributes, options});
}

std::string DataErrorMessageNist(std::string_view text) {
  return testing::DataErrorOf([&] { ReadRawNist(text); });
}

// The head of a NIST file cut down: the range entry, the column line, data.
std::string MiniNist(const std::string& range, const std::string& columns,
                     const std::string& data) {
  return "NIST/ITL StRD\nDataset Name:  Mini  (Mini.dat)\n" + range + "\n" + columns + "\n" + data;
}

TEST(NistReader, ReadsMisra1d) {
  const std::vector<Sample> samples = ReadRawNist(ReadData("nist/Misra1d.dat"));
  // Header: "Data (lines 61 to 74)" and "14 Observations".
  ASSERT_EQ(samples.size(), 14u);
  // Line 61: "      10.07E0      77.6E0" (y x): throughput 10.07 at batch 77.6.
  EXPECT_EQ(samples.front().line, 61);
  EXPECT_DOUBLE_EQ(samples.front().batch, 77.6);
  ASSERT_TRUE(samples.front().throughput_sps.has_value());
  EXPECT_DOUBLE_EQ(*samples.front().throughput_sps, 10.07);
  // Line 74: "      81.78E0     760.0E0".
  EXPECT_EQ(samples.back().line, 74);
  EXPECT_DOUBLE_EQ(samples.back().batch, 760.0);
  EXPECT_DOUBLE_EQ(*samples.back().throughput_sps, 81.78);
  // Line 67 (the 7th point): "      40.02E0     332.8E0".
  EXPECT_EQ(samples[6].line, 67);
  EXPECT_DOUBLE_EQ(samples[6].batch, 332.8);
  EXPECT_DOUBLE_EQ(*samples[6].throughput_sps, 40.02);
  EXPECT_EQ(samples.front().label, "Misra1d");  // "Dataset Name:  Misra1d"
  EXPECT_EQ(samples.front().devices, 1);
  EXPECT_FALSE(samples.front().step_time_s.has_value());
}

TEST(NistReader, ThroughParseSamples) {
  // Detected by content, validated: 14 samples as above.
  const std::vector<Sample> samples = ParseSamples(ReadData("nist/Misra1d.dat"), "Misra1d.dat");
  EXPECT_EQ(samples.size(), 14u);
}

TEST(NistReader, WithoutARangeReadsAfterTheColumnLine) {
  const auto samples = ReadRawNist("NIST/ITL StRD\n\nData:   y   x\n  2.0  10\n\n  3.0  20\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 4);
  EXPECT_EQ(samples[1].line, 6);
  EXPECT_DOUBLE_EQ(*samples[1].throughput_sps, 3.0);
  EXPECT_DOUBLE_EQ(samples[1].batch, 20);
}

TEST(NistReader, FollowsTheStatedRange) {
  // Lines: 1 signature, 2 name, 3 range, 4 columns, 5-6 data, 7 a trailer.
  const auto samples = ReadRawNist(
      MiniNist("   Data   (lines 5 to 6)", "Data:  y  x", "  1.5  8\n  2.5  16\nEnd of data\n"));
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 5);
  EXPECT_DOUBLE_EQ(samples[0].batch, 8);
  EXPECT_DOUBLE_EQ(*samples[1].throughput_sps, 2.5);
}

TEST(NistReader, FileEndsBeforeTheRange) {
  EXPECT_THAT(DataErrorMessageNist(MiniNist("Data (lines 5 to 9)", "Data: y x", "1 2\n3 4\n")),
              HasSubstr("runs to line 9, but the file ends at line 6"));
}

TEST(NistReader, BadCellsNameLineAndVariable) {
  EXPECT_THAT(DataErrorMessageNist(MiniNist("Data (lines 5 to 6)", "Data: y x", "1 2\nabc 4\n")),
              HasSubstr("t.dat:6: field 'y': expected a number, got 'abc'"));
  EXPECT_THAT(DataErrorMessageNist(MiniNist("Data (lines 5 to 6)", "Data: y x", "1 2\n3 -4\n")),
              HasSubstr("t.dat:6: field 'x': must be > 0, got -4"));
  EXPECT_THAT(DataErrorMessageNist(MiniNist("Data (lines 5 to 6)", "Data: y x", "1 2\n3\n")),
              HasSubstr("t.dat:6: expected two numbers"));
  EXPECT_THAT(DataErrorMessageNist(MiniNist("Data (lines 5 to 6)", "Data: y x", "1 2\n\n")),
              HasSubstr("t.dat:6: blank line inside the data range"));
}

TEST(NistReader, RejectsSeveralPredictors) {
  // Nelson.dat's column line: "Data:   y              x1            x2".
  EXPECT_THAT(
      DataErrorMessageNist(MiniNist("Data (lines 5 to 5)", "Data:   y   x1   x2", "1 2 3\n")),
      HasSubstr("t.dat:4: the data has 3 columns"));
}

TEST(NistReader, NotANistFile) {
  EXPECT_THAT(DataErrorMessageNist("NIST/ITL StRD\nnothing else\n"), HasSubstr("not a NIST StRD"));
}

TEST(LooksLikeNist, Signature) {
  EXPECT_TRUE(io::LooksLikeNist(ReadData("nist/Misra1d.dat")));
  EXPECT_TRUE(io::LooksLikeNist("\n  NIST/ITL StRD\nDataset Name: X\n"));
  EXPECT_FALSE(io::LooksLikeNist("batch,throughput\n64,100\n"));
  EXPECT_FALSE(io::LooksLikeNist("a file that mentions NIST/ITL StRD later\n"));
  EXPECT_FALSE(io::LooksLikeNist(""));
}

}  // namespace
}  // namespace fitspeed
