// Cases split by device and counted (fitspeed/calibrate/cases.h), as
// `calibrate` selects the cases of its devices.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fitspeed/calibrate/cases.h"

namespace fitspeed {
namespace {

MeasuredCase Of(const std::string& device, int line) {
  MeasuredCase c;
  c.network = "resnet50";
  c.device = device;
  c.batch = 64;
  c.throughput_sps = 100;
  c.line = line;
  return c;
}

TEST(SelectCasesOf, KeepsTheNamedDevicesInInputOrder) {
  // Lines 2..6: t4, v100, my.json (t4 as written on the command line), k80, t4.
  const CaseSelection s =
      SelectCasesOf({Of("t4", 2), Of("v100-sxm2", 3), Of("my.json", 4), Of("k80", 5), Of("t4", 6)},
                    {"my.json", "t4"});
  ASSERT_EQ(s.used.size(), 3u);
  EXPECT_EQ(s.used[0].line, 2);
  EXPECT_EQ(s.used[1].line, 4);
  EXPECT_EQ(s.used[2].line, 6);
  ASSERT_EQ(s.skipped.size(), 2u);
  EXPECT_EQ(s.skipped[0].line, 3);
  EXPECT_EQ(s.skipped[1].line, 5);
  EXPECT_TRUE(SelectCasesOf({Of("k80", 2)}, {"t4"}).used.empty());
}

TEST(CountByDevice, CountsPerDeviceInNameOrder) {
  EXPECT_EQ(CountByDevice({Of("v100-sxm2", 2), Of("k80", 3), Of("v100-sxm2", 4)}),
            "k80 (1), v100-sxm2 (2)");
  EXPECT_EQ(CountByDevice({}), "");
}

}  // namespace
}  // namespace fitspeed
