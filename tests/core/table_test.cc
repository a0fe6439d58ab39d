#include "core/table.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fitspeed {
namespace {

TEST(FormatSig, SignificantDigitsWithoutExponentInTheUsualRange) {
  EXPECT_EQ(FormatSig(1592.54, 4), "1593");
  EXPECT_EQ(FormatSig(0.0541234, 4), "0.05412");
  EXPECT_EQ(FormatSig(437.3697075, 10), "437.3697075");
  EXPECT_EQ(FormatSig(-2.5, 2), "-2.5");
  EXPECT_EQ(FormatSig(0, 4), "0");
  // No trailing zeros: 1000 to 10 digits is still "1000", 0.05 to 4 is "0.05".
  EXPECT_EQ(FormatSig(1000.0, 10), "1000");
  EXPECT_EQ(FormatSig(0.05, 4), "0.05");
}

TEST(FormatSig, ExponentForTinyAndHugeValues) {
  EXPECT_EQ(FormatSig(3.0227324449e-04, 4), "0.0003023");
  EXPECT_EQ(FormatSig(1.2e-7, 2), "1.2e-07");
  EXPECT_EQ(FormatSig(2.5e12, 3), "2.50e+12");
  EXPECT_EQ(FormatSig(std::nan(""), 4), "nan");
  EXPECT_EQ(FormatSig(-INFINITY, 4), "-inf");
}

TEST(FormatDuration, HoursMinutesSeconds) {
  EXPECT_EQ(FormatDuration(12.34), "12.3 s");
  EXPECT_EQ(FormatDuration(61), "0:01:01");
  // 2 h 3 min 7 s = 7387 s.
  EXPECT_EQ(FormatDuration(7387), "2:03:07");
  // 1 day 1 h 0 min 1 s = 90001 s.
  EXPECT_EQ(FormatDuration(90001), "1-1:00:01");
}

TEST(TextTable, AlignsNumbersRightAndTextLeft) {
  TextTable table({"name", "value"});
  table.AddRow({"a", "1.5"});
  table.AddRow({"long name", "10"});
  EXPECT_EQ(table.Render(),
            "name       value\n"
            "a            1.5\n"
            "long name     10\n");
}

TEST(TextTable, CsvQuotesFieldsThatNeedIt) {
  TextTable table({"label", "n"});
  table.AddRow({"a,b", "1"});
  table.AddRow({"say \"hi\"", "2"});
  EXPECT_EQ(table.RenderCsv(), "label,n\n\"a,b\",1\n\"say \"\"hi\"\"\",2\n");
}

}  // namespace
}  // namespace fitspeed
