#include "fitspeed/project/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace fitspeed {
namespace {

Projection Example() {
  // v0 = 1000, t = 0.05, batch 100, N = 50000: 50 + 500*0.05 = 75 s per epoch;
  // startup 25 s: 10 epochs = 775 s = 0:12:55, 20 epochs = 1525 s = 0:25:25.
  SpeedLaw law;
  law.v0_sps = 1000;
  law.t_s = 0.05;
  Workload w;
  w.samples_per_epoch = 50000;
  w.startup_s = 25;
  ProjectOptions options;
  options.epochs = {10, 20};
  options.prices.default_per_device_hour = 3.6;  // 1 per 1000 s
  return MakeProjection({EpochModelFromLaw(law, 100, w, "gpu", 2)}, options);
}

TEST(WriteProjection, JsonFollowsTheSchema) {
  std::ostringstream out;
  WriteProjection(out, Example(), OutputFormat::kJson);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["schema"], "fitspeed.project/1");
  ASSERT_EQ(doc["rows"].size(), 2u);
  const nlohmann::json& row = doc["rows"][1];
  EXPECT_EQ(row["label"], "gpu");
  EXPECT_EQ(row["devices"], 2);
  EXPECT_EQ(row["batch"], 100);
  EXPECT_EQ(row["epochs"], 20);
  EXPECT_NEAR(row["total_s"].get<double>(), 1525, 1e-9);
  EXPECT_TRUE(row["ci95_s"].is_null());  // numbers: no interval
  // 2 devices * 1525 s * 3.6/3600 per s = 3.05.
  EXPECT_NEAR(row["cost"].get<double>(), 3.05, 1e-12);
  EXPECT_FALSE(doc["assumptions"].empty());
}

TEST(WriteProjection, TableShowsHmsAndCost) {
  std::ostringstream out;
  WriteProjection(out, Example(), OutputFormat::kTable);
  const std::string text = out.str();
  EXPECT_NE(text.find("0:12:55"), std::string::npos) << text;
  EXPECT_NE(text.find("0:25:25"), std::string::npos) << text;
  EXPECT_NE(text.find("3.05"), std::string::npos) << text;  // cost of 20 epochs
  EXPECT_NE(text.find("E=10"), std::string::npos) << text;
}

TEST(WriteProjection, CsvHasOneRowPerEpochCount) {
  std::ostringstream out;
  WriteProjection(out, Example(), OutputFormat::kCsv);
  std::istringstream lines(out.str());
  std::string header, first, second, extra;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.rfind("label,devices,batch,", 0), 0u) << header;
  EXPECT_NE(first.find("0:12:55"), std::string::npos) << first;
  EXPECT_NE(second.find("0:25:25"), std::string::npos) << second;
  EXPECT_FALSE(std::getline(lines, extra) && !extra.empty());
}

}  // namespace
}  // namespace fitspeed
