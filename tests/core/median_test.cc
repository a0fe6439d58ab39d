#include "core/median.h"

#include <gtest/gtest.h>

namespace fitspeed {
namespace {

TEST(Median, OddCountIsTheMiddleValue) {
  EXPECT_EQ(Median({7}), 7);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({5, -1, 9, 9, 0}), 5);  // sorted: -1 0 5 9 9
}

TEST(Median, EvenCountIsTheMeanOfTheTwoMiddleValues) {
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);  // sorted: 1 2 3 4
  EXPECT_EQ(Median({10, 0}), 5);
  EXPECT_EQ(Median({1, 1, 8, 100, 2, 50}), 5);  // sorted: 1 1 2 8 50 100 -> (2 + 8)/2
}

}  // namespace
}  // namespace fitspeed
