#include "core/finite.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

namespace fitspeed {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Finite, PositiveAndNonNegativeRefuseNaNAndInfinities) {
  EXPECT_TRUE(PositiveFinite(1e-300));
  EXPECT_FALSE(PositiveFinite(0));
  EXPECT_TRUE(NonNegativeFinite(0));
  EXPECT_FALSE(NonNegativeFinite(-1e-300));
  for (double x : {kNaN, kInf, -kInf}) {
    EXPECT_FALSE(PositiveFinite(x)) << x;
    EXPECT_FALSE(NonNegativeFinite(x)) << x;
  }
}

TEST(FiniteOrNull, FiniteNumbersStayNumbers) {
  for (double x : {0.0, -0.0, 1.5, -2.25e-7, 3e300, std::numeric_limits<double>::denorm_min()}) {
    const nlohmann::json j = FiniteOrNull<nlohmann::json>(x);
    ASSERT_TRUE(j.is_number_float()) << x;
    EXPECT_EQ(j.get<double>(), x);
  }
  EXPECT_EQ(FiniteOrNull<nlohmann::ordered_json>(0.5).dump(), "0.5");
}

TEST(FiniteOrNull, NaNAndInfinitiesBecomeNull) {
  for (double x : {kNaN, kInf, -kInf}) {
    EXPECT_TRUE(FiniteOrNull<nlohmann::json>(x).is_null()) << x;
    EXPECT_TRUE(FiniteOrNull<nlohmann::ordered_json>(x).is_null()) << x;
  }
  // In a document: null, where a NaN number would be a number in memory.
  const nlohmann::ordered_json doc = {{"a", FiniteOrNull<nlohmann::ordered_json>(kNaN)},
                                      {"b", FiniteOrNull<nlohmann::ordered_json>(2.0)}};
  EXPECT_EQ(doc.dump(), R"({"a":null,"b":2.0})");
}

TEST(FiniteOrNull, AnAbsentOptionalIsNullAndAPresentOneIsItsValue) {
  EXPECT_TRUE(FiniteOrNull<nlohmann::json>(std::optional<double>()).is_null());
  EXPECT_TRUE(FiniteOrNull<nlohmann::json>(std::optional<double>(kInf)).is_null());
  EXPECT_EQ(FiniteOrNull<nlohmann::json>(std::optional<double>(64.0)).get<double>(), 64.0);
}

}  // namespace
}  // namespace fitspeed
