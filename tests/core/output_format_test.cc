#include "fitspeed/core/output_format.h"

#include <gtest/gtest.h>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

TEST(ParseOutputFormat, RejectsUnknownNames) {
  EXPECT_EQ(ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_EQ(ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_THROW(ParseOutputFormat("xml"), UsageError);
}

}  // namespace
}  // namespace fitspeed
