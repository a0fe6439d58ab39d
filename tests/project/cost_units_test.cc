#include <gtest/gtest.h>

#include "fitspeed/core/error.h"
#include "fitspeed/project/cost.h"
#include "fitspeed/project/model_params.h"
#include "fitspeed/project/report.h"
#include "project/units.h"

namespace fitspeed {
namespace {

TEST(RunCost, DevicesTimesHoursTimesPrice) {
  // 3 devices for 2 h at 2.50 per device-hour: 3 * 2 * 2.5 = 15.
  EXPECT_DOUBLE_EQ(RunCost(7200, 3, 2.5), 15.0);
  EXPECT_EQ(RunCost(0, 1, 9), 0);
  EXPECT_THROW(RunCost(-1, 1, 1), UsageError);
  EXPECT_THROW(RunCost(1, 0, 1), UsageError);
}

TEST(ParsePrices, DefaultAndPerLabel) {
  const PriceList prices = ParsePrices({"1.5", "tpu=4.5"});
  EXPECT_EQ(prices.For("tpu"), 4.5);
  EXPECT_EQ(prices.For("gpu"), 1.5);
  EXPECT_FALSE(ParsePrices({"t4=0.98"}).For("v100").has_value());
  EXPECT_THROW(ParsePrices({"free"}), UsageError);
  EXPECT_THROW(ParsePrices({"tpu=-1"}), UsageError);
  EXPECT_THROW(ParsePrices({"=3"}), UsageError);
}

TEST(ParseBandwidth, DecimalBinaryAndBitUnits) {
  EXPECT_DOUBLE_EQ(ParseBandwidth("50Gbit/s"), 6.25e9);  // 50e9 bits / 8
  EXPECT_DOUBLE_EQ(ParseBandwidth("50 Gbps"), 6.25e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("6.25GB/s"), 6.25e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("1GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(ParseBandwidth("12e9"), 12e9);
  EXPECT_DOUBLE_EQ(ParseBandwidth("900 Mb/s"), 9e8 / 8);  // exact case: megabits
  EXPECT_DOUBLE_EQ(ParseBandwidth("6 mbps"), 6e6 / 8);    // any case, one meaning
  EXPECT_THROW(ParseBandwidth("10 gb/s"), UsageError);    // gigabytes or gigabits?
  EXPECT_THROW(ParseBandwidth("fast"), UsageError);
  EXPECT_THROW(ParseBandwidth("0GB/s"), UsageError);
  EXPECT_THROW(ParseBandwidth("5 furlongs"), UsageError);
}

TEST(ParseSeconds, UnitsAndClockTimes) {
  EXPECT_DOUBLE_EQ(ParseSeconds("5us"), 5e-6);
  EXPECT_DOUBLE_EQ(ParseSeconds("0.05ms"), 5e-5);
  EXPECT_DOUBLE_EQ(ParseSeconds("90m"), 5400);
  EXPECT_DOUBLE_EQ(ParseSeconds("2h"), 7200);
  EXPECT_DOUBLE_EQ(ParseSeconds("1.5d"), 129600);
  EXPECT_DOUBLE_EQ(ParseSeconds("1:30:00"), 5400);
  EXPECT_DOUBLE_EQ(ParseSeconds("2:05"), 125);
  EXPECT_DOUBLE_EQ(ParseSeconds("42"), 42);
  EXPECT_THROW(ParseSeconds("soon"), UsageError);
  EXPECT_THROW(ParseSeconds("-5s"), UsageError);
  EXPECT_THROW(ParseSeconds("1:x:00"), UsageError);
  EXPECT_THROW(ParseSeconds("1:2:3:4"), UsageError);
}

TEST(FormatHms, UnboundedHours) {
  EXPECT_EQ(FormatHms(3725), "1:02:05");
  EXPECT_EQ(FormatHms(480000), "133:20:00");  // 133 h 20 min
  EXPECT_EQ(FormatHms(59.6), "0:01:00");
  EXPECT_EQ(FormatHms(-61), "-0:01:01");
  EXPECT_EQ(FormatHms(NAN), "nan");
}

TEST(PublishedModels, CountsMatchTheirLayerArithmetic) {
  // ResNet-50 (torchvision): 25,557,032, the count torchvision documents.
  EXPECT_EQ(FindPublishedModel("imagenet")->parameters, 25557032);
  // NeuMF-end, ML-1M, factor 32, 3 layers:
  // embeddings (6040 + 3706)*(32 + 128) = 1,559,360; MLP 256*128+128 + 128*64+64
  // + 64*32+32 = 43,232; predict 64+1 = 65; total 1,602,657.
  EXPECT_EQ(FindPublishedModel("NCF")->parameters, 1559360 + 43232 + 65);
  // YOLOv3 for 20 classes: 61,949,149 - (255-75)*(1024+512+256) - (255-75)*3.
  EXPECT_EQ(FindPublishedModel("yolov3")->parameters, 61949149 - 180 * 1792 - 540);
  for (const PublishedModel& m : PublishedModels()) {
    EXPECT_FALSE(m.source.empty()) << m.name;
  }
  EXPECT_FALSE(FindPublishedModel("alexnet").has_value());
}

}  // namespace
}  // namespace fitspeed
