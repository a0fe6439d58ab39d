#include "fitspeed/project/config.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fitspeed/core/error.h"
#include "fitspeed/io/output.h"

namespace fitspeed {
namespace {

// v0 = 1000 +- 10, t = 0.05 +- 0.001, correlation 0.5, 5 dof: Cov(v0, t) =
// 0.5 * 10 * 0.001 = 0.005 (the case of EpochModelFromLaw's correlation test).
constexpr char kFitJson[] = R"({
  "schema": "fitspeed.fit/1",
  "fits": [{"group": {"devices": 2, "label": "gpu", "precision": null},
            "law": "hyperbolic", "dof": 5, "converged": true, "usable": true,
            "params": {"v0": {"value": 1000, "stderr": 10, "unit": "samples/s"},
                       "t": {"value": 0.05, "stderr": 0.001, "unit": "s"}},
            "corr": {"v0,t": 0.5},
            "warnings": ["few points"],
            "points": [{"batch": 128}, {"batch": 64}, {"batch": 128}]}]})";

TEST(ConfigurationsFromFitJson, RebuildsTheCovariance) {
  const std::vector<Configuration> configs = ConfigurationsFromFitJson(kFitJson, "fit.json");
  ASSERT_EQ(configs.size(), 1u);
  const Configuration& c = configs[0];
  EXPECT_EQ(c.label, "gpu");
  EXPECT_EQ(c.devices, 2);
  EXPECT_EQ(c.law.v0_sps, 1000);
  EXPECT_EQ(c.law.t_s, 0.05);
  EXPECT_NEAR(c.law.covariance(0, 0), 100, 1e-12);
  EXPECT_NEAR(c.law.covariance(0, 1), 0.005, 1e-15);
  EXPECT_NEAR(c.law.covariance(1, 1), 1e-6, 1e-18);
  EXPECT_EQ(c.law.dof, 5);
  EXPECT_EQ(c.batches, (std::vector<double>{64, 128}));
  EXPECT_EQ(c.warnings, (std::vector<std::string>{"few points"}));
  EXPECT_EQ(c.Name(), "gpu");
}

TEST(ConfigurationsFromFitJson, ReadsWhatTheFitCounts) {
  std::string json = kFitJson;
  EXPECT_EQ(ConfigurationsFromFitJson(json, "fit.json")[0].law.counts, "samples");
  // Older files: the rate unit of v0 says it.
  const std::string tokens_unit = "\"unit\": \"tokens/s\"";
  json.replace(json.find("\"unit\": \"samples/s\""), 19, tokens_unit);
  EXPECT_EQ(ConfigurationsFromFitJson(json, "fit.json")[0].law.counts, "tokens");
  // Files from `fit --output json`: "counts".
  json.replace(json.find("\"law\""), 5, "\"counts\": \"sequences\", \"law\"");
  EXPECT_EQ(ConfigurationsFromFitJson(json, "fit.json")[0].law.counts, "sequences");
}

TEST(ConfigurationsFromFitJson, RefusesMalformedDocuments) {
  EXPECT_THROW(ConfigurationsFromFitJson("{", "x"), DataError);
  EXPECT_THROW(ConfigurationsFromFitJson(R"({"schema": "fitspeed.samples/1"})", "x"), DataError);
  EXPECT_THROW(ConfigurationsFromFitJson(R"({"schema": "fitspeed.fit/1", "fits": []})", "x"),
               DataError);
  // Another law, a missing t, a negative v0, a device count of the wrong type or size.
  const std::string head = R"({"schema": "fitspeed.fit/1", "fits": [)";
  EXPECT_THROW(ConfigurationsFromFitJson(head + R"({"law": "exponential"}]})", "x"), DataError);
  EXPECT_THROW(ConfigurationsFromFitJson(
                   head + R"({"law": "hyperbolic", "params": {"v0": {"value": 1}}}]})", "x"),
               DataError);
  EXPECT_THROW(ConfigurationsFromFitJson(head + R"({"law": "hyperbolic", "params": {"v0":
                   {"value": -1}, "t": {"value": 0.1}}}]})",
                                         "x"),
               DataError);
  EXPECT_THROW(ConfigurationsFromFitJson(head + R"({"law": "hyperbolic", "group": {"devices":
                   "two"}, "params": {"v0": {"value": 1}, "t": {"value": 0.1}}}]})",
                                         "x"),
               DataError);
  EXPECT_THROW(ConfigurationsFromFitJson(head + R"({"law": "hyperbolic", "group": {"devices":
                   1e300}, "params": {"v0": {"value": 1}, "t": {"value": 0.1}}}]})",
                                         "x"),
               DataError);
}

TEST(ConfigurationsFromFitJson, NoIntervalWithoutStandardErrors) {
  const std::string json = R"({"schema": "fitspeed.fit/1", "fits": [{"law": "hyperbolic",
      "dof": 0, "params": {"v0": {"value": 10, "stderr": null}, "t": {"value": 0.1,
      "stderr": null}}}]})";
  const Configuration c = ConfigurationsFromFitJson(json, "x").at(0);
  EXPECT_EQ(c.law.dof, 0);
  EXPECT_EQ(c.Name(), "devices=1");
  EXPECT_TRUE(c.batches.empty());
}

TEST(ConfigurationsFromFit, JsonRoundTripKeepsLawAndCovariance) {
  // Step times from v0 = 800/s, t = 0.04 s with +-1% alternating noise: the fit,
  // written as JSON and read back, gives the same law and covariance.
  std::vector<Sample> samples;
  const double batches[] = {16, 32, 64, 128, 256, 512};
  for (int i = 0; i < 6; ++i) {
    Sample s;
    s.source = "synthetic";
    s.line = i + 1;
    s.batch = batches[i];
    s.step_time_s = (batches[i] / 800 + 0.04) * (i % 2 == 0 ? 1.01 : 0.99);
    samples.push_back(s);
  }
  FitOptions options;
  options.leave_one_out = false;
  const FitResult result = Fit(samples, options);
  const Configuration direct = ConfigurationsFromFit(result, samples).at(0);
  const Configuration read = ConfigurationsFromFitJson(FitToJson(result), "fit.json").at(0);
  EXPECT_EQ(direct.batches, (std::vector<double>{16, 32, 64, 128, 256, 512}));
  EXPECT_NEAR(read.law.v0_sps, direct.law.v0_sps, 1e-9 * direct.law.v0_sps);
  EXPECT_NEAR(read.law.t_s, direct.law.t_s, 1e-9 * direct.law.t_s);
  EXPECT_EQ(read.law.dof, direct.law.dof);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      EXPECT_NEAR(read.law.covariance(i, j), direct.law.covariance(i, j),
                  1e-6 * std::fabs(direct.law.covariance(i, j)) + 1e-300);
    }
  }
}

TEST(FitRingToConfigurations, FitsTheFixedTimesOfItsLabelAndPrecision) {
  // t(n) = 0.05 + 0.02 * 2(n-1)/n + 0.001 * 2(n-1) on t4 fp32:
  // t(1) = 0.05, t(2) = 0.05 + 0.02 + 0.002 = 0.072, t(4) = 0.05 + 0.03 + 0.006 = 0.086.
  auto config = [](const std::string& label, const std::string& precision, int devices, double t) {
    Configuration c;
    c.label = label;
    c.precision = precision;
    c.devices = devices;
    c.law.v0_sps = 1000.0 * devices;
    c.law.t_s = t;
    return c;
  };
  const std::vector<Configuration> all = {
      config("t4", "fp32", 1, 0.05),  config("t4", "fp32", 2, 0.072),
      config("t4", "fp32", 4, 0.086), config("t4", "mixed", 2, 0.5),
      config("v100", "fp32", 2, 0.9), config("v100", "fp32", 1, 0.01)};
  const RingCommFit ring = FitRingToConfigurations(all[1], all);
  EXPECT_NEAR(ring.bandwidth_term_s, 0.02, 1e-12);
  EXPECT_NEAR(ring.latency_s, 0.001, 1e-12);
  EXPECT_EQ(ring.points, 2);  // t4 fp32 on 2 and 4 devices
  // t4 mixed has no single-device configuration to measure against.
  EXPECT_THROW(FitRingToConfigurations(all[3], all), DataError);
}

}  // namespace
}  // namespace fitspeed
