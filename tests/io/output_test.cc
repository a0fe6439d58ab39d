#include "fitspeed/io/output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

// A hand-made hyperbolic fit: v0 = 1000 samples/s, t = 0.05 s, two points.
GroupFit HandFit() {
  GroupFit fit;
  fit.group.devices = 2;
  fit.group.label = "gpu";
  fit.law = "hyperbolic";
  fit.objective = Objective::kRelativeTime;
  fit.n_points = 2;
  fit.dof = 0;
  fit.converged = true;
  fit.params = {{"v0", "samples/s", 1000, 10, 980, 1020}, {"t", "s", 0.05, 0.001, 0.048, 0.052}};
  fit.correlation = Eigen::MatrixXd::Identity(2, 2);
  fit.correlation(0, 1) = fit.correlation(1, 0) = 0.9;
  fit.covariance = Eigen::MatrixXd::Identity(2, 2);
  fit.b_half = 50;
  fit.b_90 = 450;
  // Observed step times: b/1000 + 0.05 -> 0.06 s at b = 10, 0.15 s at b = 100.
  fit.points = {{"a.csv", 2, 10, 2, 0.06, 0.06, 0}, {"a.csv", 3, 100, 2, 0.15, 0.15, 0}};
  fit.warnings = {"dof = 0: no uncertainty"};
  return fit;
}

TEST(WriteFit, JsonFollowsTheFitSchema) {
  FitResult result;
  result.fits.push_back(HandFit());
  std::ostringstream out;
  WriteFit(out, result, OutputFormat::kJson);
  const auto json = nlohmann::json::parse(out.str());
  EXPECT_EQ(json["schema"], "fitspeed.fit/1");
  const auto& fit = json["fits"][0];
  EXPECT_EQ(fit["group"]["devices"], 2);
  EXPECT_EQ(fit["group"]["label"], "gpu");
  EXPECT_EQ(fit["objective"], "relative-time");
  EXPECT_EQ(fit["params"]["v0"]["value"], 1000);
  EXPECT_EQ(fit["params"]["v0"]["stderr"], 10);
  EXPECT_EQ(fit["params"]["v0"]["ci95"][0], 980);
  EXPECT_EQ(fit["params"]["t"]["unit"], "s");
  EXPECT_EQ(fit["corr"]["v0,t"], 0.9);
  EXPECT_EQ(fit["b_half"], 50);
  EXPECT_EQ(fit["points"][1]["line"], 3);
  EXPECT_EQ(fit["warnings"][0], "dof = 0: no uncertainty");
}

TEST(WriteFit, NonFiniteNumbersBecomeJsonNull) {
  FitResult result;
  result.fits.push_back(HandFit());
  result.fits[0].loo_rel_rmse = std::nan("");
  std::ostringstream out;
  WriteFit(out, result, OutputFormat::kJson);
  EXPECT_TRUE(nlohmann::json::parse(out.str())["fits"][0]["loo_rel_rmse"].is_null());
}

TEST(WriteFit, CsvHasOneRowPerGroupAndParameter) {
  FitResult result;
  result.fits = {HandFit(), HandFit()};
  std::ostringstream out;
  WriteFit(out, result, OutputFormat::kCsv);
  const std::string text = out.str();
  // Header + 2 groups x 2 parameters.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
  EXPECT_THAT(text, HasSubstr("2,gpu,,hyperbolic,relative-time,v0,1000,"));
}

TEST(WriteFitSvg, DrawsOneMarkerPerPointAndACurvePerGroup) {
  FitResult result;
  result.fits.push_back(HandFit());
  std::ostringstream out;
  WriteFitSvg(out, result);
  const std::string svg = out.str();
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  // The legend, the chart's last group, has a marker of its own.
  const std::string plot = svg.substr(0, svg.rfind("<g transform=\"translate(0,"));
  size_t circles = 0;
  for (size_t pos = 0; (pos = plot.find("<circle", pos)) != std::string::npos; ++pos) ++circles;
  EXPECT_EQ(circles, 2u);
  EXPECT_THAT(svg, HasSubstr("<path d=\"M"));
}

TEST(WriteSamples, JsonHasNullForFieldsThatDoNotApply) {
  Sample s;
  s.source = "log.txt";
  s.line = 4;
  s.batch = 64;
  s.step_time_s = 0.5;
  std::ostringstream out;
  WriteSamples(out, {s}, OutputFormat::kJson);
  const auto json = nlohmann::json::parse(out.str());
  EXPECT_EQ(json["schema"], "fitspeed.samples/1");
  const auto& sample = json["samples"][0];
  EXPECT_EQ(sample["step_time_s"], 0.5);
  EXPECT_TRUE(sample["throughput_sps"].is_null());
  EXPECT_TRUE(sample["epoch_time_s"].is_null());
  EXPECT_TRUE(sample["epoch"].is_null());
}

TEST(WriteSamples, CsvPutsEachRateUnderItsUnit) {
  // 64 sequences of 128 tokens in 0.5 s: 128 sequences/s = 16,384 tokens/s.
  Sample sequences;
  sequences.source = "a.log";
  sequences.batch = 64;
  sequences.seq_len = 128;
  sequences.step_time_s = 0.5;
  // 8192 tokens in 0.5 s, length unknown: 16,384 tokens/s, samples/s unknown.
  Sample tokens = sequences;
  tokens.batch = 8192;
  tokens.unit = Unit::kTokens;
  tokens.seq_len.reset();
  std::ostringstream out;
  WriteSamples(out, {sequences, tokens}, OutputFormat::kCsv);
  std::istringstream lines(out.str());
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_NE(header.find("samples/s,step_s"), std::string::npos) << header;
  EXPECT_NE(header.find(",unit,seq_len,tokens/s"), std::string::npos) << header;
  EXPECT_NE(first.find(",128,0.5,"), std::string::npos) << first;
  EXPECT_NE(first.find(",samples,128,16384"), std::string::npos) << first;
  EXPECT_NE(second.find(",,0.5,"), std::string::npos) << second;  // no samples/s
  EXPECT_NE(second.find(",tokens,,16384"), std::string::npos) << second;
}

}  // namespace
}  // namespace fitspeed
