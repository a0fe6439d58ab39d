// Each law evaluated with double and with ceres::Jet: the automatic derivative
// must match a central difference, and values must match hand calculations.
#include "fit/laws.h"

#include <ceres/jet.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "fit/registry.h"

namespace fitspeed {
namespace {

// Parameter points and batches per law to differentiate at.
template <class Law>
struct LawCases;
template <>
struct LawCases<HyperbolicLaw> {
  static constexpr std::array<std::array<double, 2>, 3> kParams{
      {{1500, 0.8}, {258.1, 0.054}, {437.4, 7.56}}};
};
template <>
struct LawCases<ExponentialLaw> {
  static constexpr std::array<std::array<double, 2>, 3> kParams{
      {{1500, 400}, {238.9, 1817.6}, {80, 3}}};
};
constexpr double kBatchesLaws[] = {1, 32, 256, 777.7, 4096, 65536};

template <class Law>
class LawTest : public ::testing::Test {};
using AllLaws = ::testing::Types<HyperbolicLaw, ExponentialLaw>;
// The name generator is given: without it clang -Wpedantic refuses the empty variadic argument.
TYPED_TEST_SUITE(LawTest, AllLaws, ::testing::internal::DefaultNameGenerator);

TYPED_TEST(LawTest, JetDerivativeMatchesCentralDifference) {
  using Law = TypeParam;
  constexpr int kP = Law::kNumParams;
  // Differentiate with respect to every parameter and the batch.
  using Jet = ceres::Jet<double, kP + 1>;
  for (const auto& params : LawCases<Law>::kParams) {
    for (double batch : kBatchesLaws) {
      std::array<Jet, kP> jet_params;
      for (int j = 0; j < kP; ++j) jet_params[j] = Jet(params[j], j);
      const Jet v = Law::Throughput(jet_params.data(), Jet(batch, kP));
      EXPECT_EQ(v.a, Law::Throughput(params.data(), batch));
      for (int k = 0; k <= kP; ++k) {
        // Central difference with a step of 1e-5 relative: truncation error
        // O(h^2 f''') and rounding O(eps/h) both stay below ~1e-8 relative.
        std::array<double, kP> plus = params, minus = params;
        double b_plus = batch, b_minus = batch, h;
        if (k < kP) {
          h = 1e-5 * params[k];
          plus[k] += h;
          minus[k] -= h;
        } else {
          h = 1e-5 * batch;
          b_plus += h;
          b_minus -= h;
        }
        const double numeric =
            (Law::Throughput(plus.data(), b_plus) - Law::Throughput(minus.data(), b_minus)) /
            (2 * h);
        const double scale = std::fabs(v.a) / (k < kP ? params[k] : batch);
        EXPECT_NEAR(v.v[k], numeric, 1e-7 * scale + 1e-300)
            << Law::kName << " d/d" << (k < kP ? Law::kParams[k].name : "batch") << " at batch "
            << batch;
      }
    }
  }
}

TYPED_TEST(LawTest, RegisteredUnderItsName) {
  using Law = TypeParam;
  const LawEntry* entry = FindLaw(Law::kName);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->num_params, Law::kNumParams);
  const auto& params = LawCases<Law>::kParams[0];
  EXPECT_EQ(entry->throughput(params.data(), 300), Law::Throughput(params.data(), 300.0));
}

TYPED_TEST(LawTest, BatchAtFractionReachesTheFraction) {
  using Law = TypeParam;
  for (const auto& params : LawCases<Law>::kParams) {
    for (double fraction : {0.5, 0.9}) {
      const double batch = Law::BatchAtFraction(params.data(), fraction);
      EXPECT_NEAR(Law::Throughput(params.data(), batch) / Law::Asymptote(params.data()), fraction,
                  1e-12);
    }
  }
}

TEST(HyperbolicLaw, HandValues) {
  // v0 = 1000 samples/s, t = 0.5 s, b = 500: T = 500/1000 + 0.5 = 1 s, v = 500.
  const double params[] = {1000, 0.5};
  EXPECT_DOUBLE_EQ(HyperbolicLaw::Throughput(params, 500.0), 500);
  // b_half = v0*t = 500, b_90 = 9*b_half = 4500 (docs/design.md "The law").
  EXPECT_DOUBLE_EQ(HyperbolicLaw::BatchAtFraction(params, 0.5), 500);
  EXPECT_DOUBLE_EQ(HyperbolicLaw::BatchAtFraction(params, 0.9), 4500);
}

TEST(ExponentialLaw, HandValues) {
  // vmax = 1000, b_scale = 100: at b = 100 ln 2 the throughput is 1000*(1 - 1/2) = 500;
  // at b = 100: 1000*(1 - e^-1) = 632.12055882855767.
  const double params[] = {1000, 100};
  EXPECT_NEAR(ExponentialLaw::Throughput(params, 100 * std::log(2.0)), 500, 1e-12);
  EXPECT_NEAR(ExponentialLaw::Throughput(params, 100.0), 632.12055882855767, 1e-11);
  // Numeric b_half against the closed form b_scale*ln 2 = 69.314718055994531.
  EXPECT_NEAR(ExponentialLaw::BatchAtFraction(params, 0.5), 69.314718055994531, 1e-11);
  // b_90 = b_scale * ln 10 = 230.25850929940457.
  EXPECT_NEAR(ExponentialLaw::BatchAtFraction(params, 0.9), 230.25850929940457, 1e-11);
}

TEST(Laws, NamesListed) {
  const std::vector<std::string> names = LawNames();
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "hyperbolic");
  EXPECT_EQ(names[1], "exponential");
}

}  // namespace
}  // namespace fitspeed
