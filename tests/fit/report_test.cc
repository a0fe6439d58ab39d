// The text reports: one line, or an lmfit-like block with units.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fitspeed/fit/fit.h"

namespace fitspeed {
namespace {

// Exact law data, v0 = 2000 samples/s, t = 0.25 s: b_half = v0*t = 500 samples,
// b_90 = 4500 samples.
std::vector<Sample> ExactSamples(int devices) {
  std::vector<Sample> samples;
  for (double b : {50.0, 100.0, 200.0, 400.0, 800.0, 1600.0}) {
    Sample s;
    s.source = "exact.csv";
    s.batch = b * devices;
    s.devices = devices;
    s.label = "cnn";
    s.step_time_s = s.batch / (2000.0 * devices) + 0.25 * devices;
    samples.push_back(s);
  }
  return samples;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FitReport, BriefReportIsOneLineWithValuesAndUnits) {
  const GroupFit fit = FitGroup(ExactSamples(1));
  const std::string brief = fit.BriefReport();
  EXPECT_EQ(brief.find('\n'), std::string::npos) << brief;
  EXPECT_TRUE(Contains(brief, "devices=1 label=cnn")) << brief;
  EXPECT_TRUE(Contains(brief, "v0 = 2000")) << brief;
  EXPECT_TRUE(Contains(brief, "samples/s")) << brief;
  EXPECT_TRUE(Contains(brief, "t = 0.25")) << brief;
  EXPECT_TRUE(Contains(brief, "usable")) << brief;
}

TEST(FitReport, FullReportHasEverySection) {
  const std::string full = FitGroup(ExactSamples(1)).FullReport();
  for (const char* part :
       {"[[Fit]] devices=1 label=cnn", "hyperbolic: v(b) = b/(b/v0 + t)", "relative-time",
        "loss         squared", "points       6 (dof 4)", "[[Parameters]]", "95% CI",
        "[[Correlations]]", "C(v0, t) = ", "[[Statistics]]", "R^2", "AIC", "LOO rel RMSE",
        "b_half       500 samples", "b_90         4500 samples", "[[Warnings]]\n    none"}) {
    EXPECT_TRUE(Contains(full, part)) << part << "\n" << full;
  }
}

TEST(FitReport, ResultReportListsDeviceScaling) {
  // Two devices: v0 = 4000 samples/s, t = 0.5 s (the generator doubles both).
  std::vector<Sample> samples = ExactSamples(1);
  for (const Sample& s : ExactSamples(2)) samples.push_back(s);
  const FitResult result = Fit(samples);
  const std::string full = result.FullReport();
  EXPECT_TRUE(Contains(full, "[[Device scaling]] label=cnn")) << full;
  EXPECT_TRUE(Contains(full, "[[Fit]] devices=2 label=cnn")) << full;
  const std::string brief = result.BriefReport();
  EXPECT_EQ(std::count(brief.begin(), brief.end(), '\n'), 2) << brief;
  EXPECT_TRUE(Contains(brief, "v0 = 4000")) << brief;
  EXPECT_TRUE(Contains(brief, "t = 0.5")) << brief;
}

TEST(FitReport, SequencesReportTokensPerSecondToo) {
  // The exact data of ExactSamples as sequences of 512 tokens: v0 = 2000
  // sequences/s is 2000 * 512 = 1,024,000 tokens/s.
  std::vector<Sample> samples = ExactSamples(1);
  for (Sample& s : samples) s.seq_len = 512;
  const GroupFit fit = FitGroup(samples);
  EXPECT_EQ(fit.CountName(), "sequences");
  EXPECT_EQ(fit.Param("v0").unit, "sequences/s");
  const std::string brief = fit.BriefReport();
  EXPECT_TRUE(Contains(brief, "sequences/s (1024000 tokens/s)")) << brief;
  const std::string full = fit.FullReport();
  EXPECT_TRUE(Contains(full, "= 1024000 +/- 0 tokens/s")) << full;
  EXPECT_TRUE(Contains(full, "tokens/s (sequences of 512 tokens)")) << full;
  EXPECT_TRUE(Contains(full, "b_half       500 sequences")) << full;
}

TEST(FitReport, TokensAreFittedAndNamedAsTokens) {
  std::vector<Sample> samples = ExactSamples(1);
  for (Sample& s : samples) s.unit = Unit::kTokens;
  const FitResult result = Fit(samples);
  ASSERT_EQ(result.fits.size(), 1u);
  const GroupFit& fit = result.fits[0];
  EXPECT_EQ(fit.CountName(), "tokens");
  EXPECT_EQ(fit.Param("v0").unit, "tokens/s");
  EXPECT_NEAR(fit.Param("v0").value, 2000, 1e-6);
  const std::string full = fit.FullReport();
  EXPECT_TRUE(Contains(full, "[[Fit]] devices=1 label=cnn unit=tokens")) << full;
  EXPECT_TRUE(Contains(full, "b_half       500 tokens")) << full;
  EXPECT_FALSE(Contains(full, "samples")) << full;
}

TEST(FitReport, DeviceScalingNamesTheRateUnit) {
  std::vector<Sample> samples = ExactSamples(1);
  for (const Sample& s : ExactSamples(2)) samples.push_back(s);
  for (Sample& s : samples) s.unit = Unit::kTokens;
  const FitResult result = Fit(samples);
  ASSERT_EQ(result.scaling.size(), 1u);
  EXPECT_EQ(result.scaling[0].rate_unit, "tokens/s");
  EXPECT_TRUE(Contains(result.FullReport(), "v0 [tokens/s]")) << result.FullReport();
}

}  // namespace
}  // namespace fitspeed
