// The planner's inputs: the --fix text and the run's token budget and price.
#include "fitspeed/llm/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

std::string UsageErrorOfFix(const std::string& text) {
  LlmPlanOptions options;
  try {
    ApplyLlmPlanFix(text, options);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ApplyLlmPlanFix, PinsTheGivenSizes) {
  LlmPlanOptions options;
  ApplyLlmPlanFix("tp=8,pp=4,mb=2,zero=1", options);
  EXPECT_EQ(options.tp, 8);
  EXPECT_EQ(options.pp, 4);
  EXPECT_EQ(options.micro_batch, 2);
  EXPECT_EQ(options.zero, 1);
}

TEST(ApplyLlmPlanFix, KeyGivenTwiceIsRefusedNamingIt) {
  EXPECT_THAT(UsageErrorOfFix("tp=8,pp=2,tp=4"),
              HasSubstr("--fix: key 'tp' given twice ('tp=8' and 'tp=4')"));
  EXPECT_THAT(UsageErrorOfFix("recompute=full,recompute=none"), HasSubstr("key 'recompute'"));
}

// "8,pp=2" smuggled in as tp's value is two items, each read as such; an '='
// inside one value is not an integer.
TEST(ApplyLlmPlanFix, EqualsInsideAValueIsRefused) {
  EXPECT_THAT(UsageErrorOfFix("tp=8=2"), HasSubstr("--fix tp=8=2: not an integer"));
}

TEST(LlmTotals, NonFiniteTokensOrPriceAreUsageErrors) {
  LlmStep step;
  step.tokens_per_s = 1000;
  LlmCluster cluster;
  const PredictionInterval none;
  EXPECT_THROW(LlmTotals(step, cluster, NAN, std::nullopt, none), UsageError);
  EXPECT_THROW(LlmTotals(step, cluster, INFINITY, std::nullopt, none), UsageError);
  EXPECT_THROW(LlmTotals(step, cluster, 1e9, INFINITY, none), UsageError);
  EXPECT_THROW(LlmTotals(step, cluster, 1e9, NAN, none), UsageError);
  EXPECT_THROW(LlmTotals(step, cluster, 1e9, -1.0, none), UsageError);
  // 1e9 tokens at 1000 tokens/s on one device: 1e6 s, 277.8 device-hours.
  const LlmRunTotals totals = LlmTotals(step, cluster, 1e9, 2.0, none);
  EXPECT_NEAR(totals.seconds, 1e6, 1e-6);
  EXPECT_NEAR(*totals.cost, 2.0 * 1e6 / 3600, 1e-9);
}

}  // namespace
}  // namespace fitspeed
