// Robust losses, warnings, unusable fits, input errors and option validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/fit/fit.h"

namespace fitspeed {
namespace {

Sample Throughput(double batch, double throughput_sps, const std::string& source = "bench.csv",
                  int line = 0) {
  Sample s;
  s.source = source;
  s.line = line;
  s.batch = batch;
  s.throughput_sps = throughput_sps;
  return s;
}

// v(b) = b/(b/v0 + t) with v0 = 1000 samples/s, t = 0.1 s, times (1 + noise).
std::vector<Sample> LawSamples(const std::vector<double>& batches,
                               const std::vector<double>& noise) {
  std::vector<Sample> samples;
  for (size_t i = 0; i < batches.size(); ++i) {
    const double b = batches[i];
    samples.push_back(
        Throughput(b, b / (b / 1000 + 0.1) * (1 + noise[i]), "bench.csv", static_cast<int>(i) + 2));
  }
  return samples;
}

bool HasWarning(const GroupFit& fit, const std::string& part) {
  return std::any_of(fit.warnings.begin(), fit.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

const std::vector<double> kBatches = {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
const std::vector<double> kNoise = {0.004,  -0.003, 0.002,  -0.004, 0.003,
                                    -0.002, 0.004,  -0.003, 0.001,  -0.002};

TEST(RobustLoss, OutlierMovesSquaredFitMoreThanHuberOrCauchy) {
  std::vector<Sample> samples = LawSamples(kBatches, kNoise);
  *samples[7].throughput_sps *= 0.5;  // one gross outlier: half the speed at b = 1024
  FitOptions squared;
  const double squared_error = std::fabs(FitGroup(samples, squared).Param("v0").value / 1000 - 1);
  for (Loss loss : {Loss::kHuber, Loss::kCauchy}) {
    FitOptions robust;
    robust.loss = loss;
    robust.loss_scale = 0.01;  // 1% of the step time
    const GroupFit fit = FitGroup(samples, robust);
    ASSERT_TRUE(fit.converged) << LossName(loss);
    const double error = std::fabs(fit.Param("v0").value / 1000 - 1);
    // The noise is <= 0.4%, so a fit that ignores the outlier is within ~1%
    // of v0 = 1000, while squared loss is pulled off by several per cent.
    EXPECT_LT(error, 0.01) << LossName(loss);
    EXPECT_GT(squared_error, 5 * error) << LossName(loss);
  }
  EXPECT_GT(squared_error, 0.03);
}

TEST(FitWarnings, SingleDistinctBatchIsADataErrorNamingTheFile) {
  const std::vector<Sample> samples = {Throughput(64, 500, "runs/tpu.csv", 2),
                                       Throughput(64, 510, "runs/tpu.csv", 3)};
  try {
    FitGroup(samples);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("runs/tpu.csv"), std::string::npos) << message;
    EXPECT_NE(message.find("1 distinct batch size"), std::string::npos) << message;
    EXPECT_NE(message.find("v0 and t"), std::string::npos) << message;
  }
}

TEST(FitWarnings, TwoPointsLeaveNoDegreesOfFreedom) {
  // v0 = 1000, t = 0.1: b = 100 -> T = 0.2 s, v = 500; b = 400 -> T = 0.5 s, v = 800.
  const GroupFit fit = FitGroup({Throughput(100, 500), Throughput(400, 800)});
  EXPECT_EQ(fit.dof, 0);
  EXPECT_FALSE(fit.usable);
  EXPECT_TRUE(HasWarning(fit, "no degrees of freedom"));
  EXPECT_NEAR(fit.Param("v0").value, 1000, 1e-9);
  EXPECT_NEAR(fit.Param("t").value, 0.1, 1e-12);
  EXPECT_TRUE(std::isnan(fit.Param("v0").std_error));
  EXPECT_TRUE(std::isnan(fit.loo_rel_rmse));
}

TEST(FitWarnings, NarrowBatchRangeCorrelatesTheParameters) {
  // With the absolute-time objective the Jacobian columns are -b/v0^2 and 1,
  // so corr(v0, t) = sum(b) / sqrt(n sum(b^2)) (inverse of the 2x2 J^T J):
  // b = 1000, 1010, 1020, 1030: 4060 / sqrt(4 * 4121400) = 0.99993933...
  const std::vector<Sample> samples =
      LawSamples({1000, 1010, 1020, 1030}, {0.001, -0.002, 0.0015, -0.001});
  FitOptions options;
  options.objective = Objective::kAbsoluteTime;
  const GroupFit fit = FitGroup(samples, options);
  EXPECT_NEAR(fit.correlation(0, 1), 4060 / std::sqrt(4 * 4121400.0), 1e-9);
  EXPECT_TRUE(HasWarning(fit, "strongly correlated"));
}

TEST(FitWarnings, WideBatchRangeHasNoCorrelationWarning) {
  const GroupFit fit = FitGroup(LawSamples(kBatches, kNoise));
  EXPECT_TRUE(fit.usable);
  EXPECT_FALSE(HasWarning(fit, "strongly correlated"));
}

TEST(FitWarnings, ObservationAboveTheAsymptote) {
  // Throughput rises to a peak of 950 samples/s at b = 1024 and falls beyond it
  // (the first three points follow v0 = 1000, t = 0.1). A hyperbola cannot
  // follow the fall, so its asymptote lands below the peak.
  const double batches[] = {16, 64, 256, 1024, 4096, 16384};
  const double throughputs[] = {137.9, 390.2, 719.1, 950, 800, 700};
  std::vector<Sample> samples;
  for (int i = 0; i < 6; ++i) {
    samples.push_back(Throughput(batches[i], throughputs[i], "x.csv", i + 2));
  }
  const GroupFit fit = FitGroup(samples);
  ASSERT_LT(fit.Param("v0").value, 950);
  EXPECT_TRUE(HasWarning(fit, "1 observation lies above the fitted asymptote")) << fit.FullReport();
  EXPECT_TRUE(HasWarning(fit, "at batch 1024, x.csv:5")) << fit.FullReport();
}

TEST(FitWarnings, NegativeFixedCostIsHeldAtItsBound) {
  // Step times T = b/1000 - 0.01 s (b = 20..640) would need t = -0.01 s; the
  // bound t >= 0 holds t at 0 and the fit says so. With t = 0 the relative-time
  // residual b a/T - 1 is linear in a = 1/v0: a = sum(b/T) / sum((b/T)^2).
  std::vector<Sample> samples;
  double sum1 = 0, sum2 = 0;
  for (double b : {20.0, 40.0, 80.0, 160.0, 320.0, 640.0}) {
    Sample s;
    s.batch = b;
    s.step_time_s = b / 1000 - 0.01;
    samples.push_back(s);
    sum1 += b / *s.step_time_s;
    sum2 += (b / *s.step_time_s) * (b / *s.step_time_s);
  }
  const GroupFit fit = FitGroup(samples);
  EXPECT_TRUE(fit.converged);
  EXPECT_EQ(fit.Param("t").value, 0);
  EXPECT_NEAR(fit.Param("v0").value, sum2 / sum1, 1e-9 * sum2 / sum1);
  EXPECT_TRUE(HasWarning(fit, "t is at its lower bound 0 s")) << fit.FullReport();
}

TEST(FitWarnings, WrongLawLeavesATrendInTheResiduals) {
  // Exponential saturation vmax = 1000, b_scale = 300 at 24 batches, fitted
  // with the hyperbolic law: the residual signs come in long runs.
  std::vector<Sample> samples;
  for (int i = 0; i < 24; ++i) {
    const double b = 16 * std::pow(2.0, i / 3.0);
    samples.push_back(Throughput(b, 1000 * (1 - std::exp(-b / 300))));
  }
  const GroupFit fit = FitGroup(samples);
  EXPECT_TRUE(HasWarning(fit, "Wald-Wolfowitz runs test")) << fit.FullReport();
  EXPECT_TRUE(HasWarning(fit, "curvature F-test")) << fit.FullReport();
  // The right law fits it exactly and warns of nothing.
  FitOptions exponential;
  exponential.law = "exponential";
  const GroupFit right = FitGroup(samples, exponential);
  EXPECT_NEAR(right.Param("vmax").value, 1000, 1e-7);
  EXPECT_NEAR(right.Param("b_scale").value, 300, 1e-9);
  EXPECT_TRUE(right.warnings.empty()) << right.FullReport();
}

TEST(FitWarnings, LawDataWithSmallNoiseWarnOfNothing) {
  const GroupFit fit = FitGroup(LawSamples(kBatches, kNoise));
  EXPECT_TRUE(fit.usable);
  EXPECT_TRUE(fit.warnings.empty()) << fit.FullReport();
}

TEST(FitInput, InvalidSampleIsADataError) {
  std::vector<Sample> samples = LawSamples(kBatches, kNoise);
  samples[3].throughput_sps = -5;
  EXPECT_THROW(FitGroup(samples), DataError);
  EXPECT_THROW(FitGroup({}), DataError);
  EXPECT_THROW(Fit({}), DataError);
}

// The UsageError's message names the field, the value and the rule.
void ExpectUsageError(const FitOptions& options, const std::vector<std::string>& parts) {
  try {
    ValidateFitOptions(options);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
}

TEST(FitOptionsValidation, NamesFieldValueAndRule) {
  FitOptions options;
  options.loss_scale = -1;
  ExpectUsageError(options, {"loss_scale", "-1", "> 0"});
  options = {};
  options.law = "cubic";
  ExpectUsageError(options, {"law", "cubic", "hyperbolic", "exponential"});
  options = {};
  options.initial = {1000};
  ExpectUsageError(options, {"initial", "1 values", "2"});
  options = {};
  options.initial = {1000, -0.5};
  ExpectUsageError(options, {"initial[1]", "-0.5", "t", ">= 0"});
  options = {};
  options.confidence = 1;
  ExpectUsageError(options, {"confidence", "1", "(0, 1)"});
  options = {};
  options.max_iterations = 0;
  ExpectUsageError(options, {"max_iterations", "0", ">= 1"});
  options = {};
  options.function_tolerance = std::nan("");
  ExpectUsageError(options, {"function_tolerance", "nan"});
  EXPECT_NO_THROW(ValidateFitOptions(FitOptions{}));
  // Fit and FitGroup validate at entry.
  options = {};
  options.confidence = 0;
  EXPECT_THROW(FitGroup(LawSamples(kBatches, kNoise), options), UsageError);
}

TEST(FitOptionsValidation, ParsesAndNamesObjectivesAndLosses) {
  for (Objective o :
       {Objective::kRelativeTime, Objective::kAbsoluteThroughput, Objective::kAbsoluteTime}) {
    EXPECT_EQ(ParseObjective(ObjectiveName(o)), o);
  }
  EXPECT_EQ(ObjectiveName(Objective::kRelativeTime), "relative-time");
  EXPECT_EQ(ParseLoss("huber"), Loss::kHuber);
  EXPECT_EQ(LossName(Loss::kCauchy), "cauchy");
  EXPECT_THROW(ParseObjective("relative"), UsageError);
  EXPECT_THROW(ParseLoss("l1"), UsageError);
}

TEST(FitGroups, GroupsByDevicesAndReportsDeviceScaling) {
  // Published case (docs/design.md, "The law"): 1 GPU v0 = 258.1, t = 0.054; 2 GPUs
  // v0 = 513.8, t = 0.15.
  std::vector<Sample> samples;
  for (int devices : {1, 2}) {
    const double v0 = devices == 1 ? 258.1 : 513.8, t = devices == 1 ? 0.054 : 0.15;
    for (double b : {16.0, 32.0, 64.0, 128.0, 256.0}) {
      Sample s = Throughput(b * devices, 0);
      s.devices = devices;
      s.label = "resnet";
      s.throughput_sps = s.batch / (s.batch / v0 + t);
      samples.push_back(s);
    }
  }
  const FitResult result = Fit(samples);
  ASSERT_EQ(result.fits.size(), 2u);
  EXPECT_EQ(result.fits[0].group.devices, 1);
  EXPECT_EQ(result.fits[1].group.devices, 2);
  ASSERT_EQ(result.scaling.size(), 1u);
  const DeviceScaling& scaling = result.scaling[0];
  EXPECT_EQ(scaling.label, "resnet");
  ASSERT_EQ(scaling.rows.size(), 2u);
  EXPECT_NEAR(scaling.rows[0].v0, 258.1, 1e-8);
  EXPECT_NEAR(scaling.rows[0].t, 0.054, 1e-12);
  EXPECT_NEAR(scaling.rows[1].v0, 513.8, 1e-8);
  EXPECT_NEAR(scaling.rows[1].t, 0.15, 1e-12);
  EXPECT_TRUE(result.AllUsable());
  // With the exponential law the scaling table still shows hyperbolic v0 and t.
  FitOptions exponential;
  exponential.law = "exponential";
  const FitResult other = Fit(samples, exponential);
  ASSERT_EQ(other.scaling.size(), 1u);
  EXPECT_NEAR(other.scaling[0].rows[1].t, 0.15, 1e-12);
}

}  // namespace
}  // namespace fitspeed
