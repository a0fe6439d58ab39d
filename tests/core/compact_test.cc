#include "fitspeed/core/compact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "fitspeed/core/sample.h"

namespace fitspeed {
namespace {

TEST(CompactOptional, BehavesAsStdOptional) {
  CompactOptional<double> x;
  EXPECT_FALSE(x.has_value());
  EXPECT_TRUE(x == std::nullopt);
  EXPECT_THROW(x.value(), std::bad_optional_access);
  EXPECT_EQ(x.value_or(7), 7);
  x = 2.5;
  ASSERT_TRUE(x);
  EXPECT_EQ(*x, 2.5);
  EXPECT_TRUE(x == 2.5);
  EXPECT_TRUE(x != 3.0);
  *x /= 2;
  EXPECT_EQ(x.value(), 1.25);
  const std::optional<double> copy = x;
  EXPECT_EQ(copy, std::optional<double>(1.25));
  x = std::nullopt;
  EXPECT_FALSE(std::optional<double>(x).has_value());
  x = std::optional<double>(-0.0);
  EXPECT_TRUE(x.has_value());
  EXPECT_EQ(sizeof(CompactOptional<double>), sizeof(double));
  EXPECT_EQ(sizeof(CompactOptional<int>), sizeof(int));
}

TEST(CompactOptional, EveryDoubleIsAValueEvenNaN) {
  // A NaN read from a log stays a value, so ValidateSample names it as not
  // finite rather than as missing; so do infinities and the largest numbers.
  for (const double v :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::signaling_NaN(),
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::max(),
        std::numeric_limits<double>::denorm_min(), 0.0}) {
    const CompactOptional<double> x = v;
    EXPECT_TRUE(x.has_value()) << v;
  }
  // Even the bit pattern that marks "empty", stored as a value, reads as a NaN.
  double reserved;
  const std::uint64_t bits = CompactOptionalTraits<double>::kEmptyBits;
  std::memcpy(&reserved, &bits, sizeof reserved);
  const CompactOptional<double> x = reserved;
  ASSERT_TRUE(x.has_value());
  EXPECT_TRUE(std::isnan(*x));
}

TEST(CompactOptional, TheSmallestIntIsRefused) {
  CompactOptional<int> epoch = 3;
  EXPECT_EQ(epoch, 3);
  EXPECT_THROW(epoch = std::numeric_limits<int>::min(), std::invalid_argument);
  EXPECT_EQ(epoch, 3);
  epoch = std::numeric_limits<int>::min() + 1;
  EXPECT_TRUE(epoch.has_value());
}

TEST(SharedString, CopiesShareOneStringAndCompareAsStrings) {
  const SharedString a = std::string("model=bert,device=tpu");
  const SharedString b = a;
  EXPECT_TRUE(a.SharesWith(b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(b, "model=bert,device=tpu");
  EXPECT_EQ(std::string("model=bert,device=tpu"), b);
  const SharedString c = std::string("model=bert,device=tpu");
  EXPECT_FALSE(a.SharesWith(c));
  EXPECT_EQ(a, c);
  EXPECT_NE(a, SharedString("other"));
  EXPECT_TRUE(SharedString().empty());
  EXPECT_EQ(SharedString(""), SharedString());
  EXPECT_EQ(sizeof(SharedString), sizeof(void*));
}

TEST(Tags, ReadLikeAMapInNameOrder) {
  const Tags tags = TagMap{{"model", "bert"}, {"device", "tpu"}, {"empty", ""}};
  EXPECT_EQ(tags.size(), 3u);
  EXPECT_EQ(tags.at("device"), "tpu");
  EXPECT_EQ(tags.at("empty"), "");
  EXPECT_EQ(tags.count("model"), 1u);
  EXPECT_EQ(tags.count("mode"), 0u);
  EXPECT_FALSE(tags.Find("modelx"));
  EXPECT_THROW(tags.at("batch"), std::out_of_range);
  std::string order;
  for (const auto [name, value] : tags) order += std::string(name) + "=" + std::string(value) + ";";
  EXPECT_EQ(order, "device=tpu;empty=;model=bert;");
  EXPECT_EQ(tags.ToMap(), (TagMap{{"model", "bert"}, {"device", "tpu"}, {"empty", ""}}));
  EXPECT_EQ(sizeof(Tags), sizeof(void*));
}

TEST(Tags, CopiesAreEqualAndWithChangesOnlyTheCopy) {
  const Tags none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.begin(), none.end());
  EXPECT_EQ(none, Tags(TagMap{}));
  const Tags a = TagMap{{"optimizer", "adam"}};
  const Tags b = a.With("optimizer", "sgd").With("device", "a100");
  EXPECT_EQ(a.at("optimizer"), "adam");
  EXPECT_EQ(b.at("optimizer"), "sgd");
  EXPECT_EQ(b.size(), 2u);
  EXPECT_NE(a, b);
  EXPECT_EQ(b, (Tags{{"device", "a100"}, {"optimizer", "sgd"}}));
  Tags c = b;
  c = none;
  EXPECT_EQ(b.size(), 2u);
  EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace fitspeed
