// The law on real measurements: koshian2/TPU-Benchmark, WideResNet (103M
// parameters) on CIFAR-100 on a Colab TPU v2-8, in-memory data without
// augmentation or validation, epochs 2..20 (epoch 1 carries compilation).
//
// Batch 64 does not follow the law: the author's mean epoch there, 973.0 s over
// ceil(50000/64) = 782 steps, is 1.244 s per step, longer than at batch 128
// (396.5 s / 391 steps = 1.014 s), and no T(b) = b/v0 + t with v0 > 0 falls
// with b. The law is therefore checked on batches 128..4096, and the fit that
// includes batch 64 must say that its residuals curve.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fitspeed/fit/fit.h"

namespace fitspeed {
namespace {

constexpr double kSamplesPerEpoch = 50000;

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

// Rows device=tpu, use_validation, use_augmentation, from_storage all false,
// num_workers=1, epochs 2..20, as epoch-time samples. model.fit over all 50000
// in-memory samples keeps the partial last batch (data/README.md).
std::vector<Sample> ReadTpuEpochs(double min_batch) {
  const std::string path =
      std::string(FITSPEED_TEST_DATA_DIR) + "/measured/koshian2_tpu_benchmark_main_per_epoch.csv";
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<Sample> samples;
  std::string text;
  std::getline(in, text);  // device,batch_size,use_validation,...,epoch,epoch_time_s,...
  for (int line = 2; std::getline(in, text); ++line) {
    const std::vector<std::string> f = SplitCsv(text);
    if (f.size() < 8 || f[0] != "tpu" || f[2] != "False" || f[3] != "False" || f[4] != "False" ||
        f[5] != "1") {
      continue;
    }
    const int epoch = std::stoi(f[6]);
    if (epoch < 2 || std::stod(f[1]) < min_batch) continue;
    Sample s;
    s.source = path;
    s.line = line;
    s.batch = std::stod(f[1]);
    s.label = "tpu";
    s.epoch = epoch;
    s.epoch_time_s = std::stod(f[7]);
    s.samples_per_epoch = kSamplesPerEpoch;
    s.steps_rule = StepsRule::kKeepPartial;
    samples.push_back(s);
  }
  return samples;
}

// The author's second_epoch_mean per batch for the same configuration.
std::map<double, double> ReadAuthorMeans() {
  const std::string path =
      std::string(FITSPEED_TEST_DATA_DIR) + "/measured/koshian2_tpu_benchmark_result_summary.csv";
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::map<double, double> means;
  std::string text;
  std::getline(
      in,
      text);  // device,batch_size,...,num_workers,before_training,first_epoch,second_epoch_mean,...
  while (std::getline(in, text)) {
    const std::vector<std::string> f = SplitCsv(text);
    if (f.size() < 9 || f[0] != "tpu" || f[2] != "FALSE" || f[3] != "FALSE" || f[4] != "FALSE" ||
        f[5] != "1") {
      continue;
    }
    means[std::stod(f[1])] = std::stod(f[8]);
  }
  return means;
}

TEST(Koshian2Tpu, LawPredictsTheAuthorsEpochTimes) {
  const std::vector<Sample> samples = ReadTpuEpochs(128);
  ASSERT_EQ(samples.size(), 6u * 19u);  // batches 128..4096, epochs 2..20
  const GroupFit fit = FitGroup(samples);
  std::printf("%s", fit.FullReport().c_str());
  ASSERT_TRUE(fit.usable) << fit.FullReport();
  const ParamEstimate& v0 = fit.Param("v0");
  const ParamEstimate& t = fit.Param("t");
  // The largest measured throughput is 50000 samples / 50.0 s = 1000 samples/s
  // at batch 4096, still climbing (62.2 s at 2048), so v0 lies above 1000 but
  // within a factor 2 of it; docs/design.md ("The law") quotes t ~ 1 s per step for this TPU.
  EXPECT_GT(v0.value, 1000);
  EXPECT_LT(v0.value, 2000);
  EXPECT_GT(t.value, 0.5);
  EXPECT_LT(t.value, 1.5);
  EXPECT_LT(v0.ci_low, v0.value);
  EXPECT_GT(v0.ci_high, v0.value);

  const std::map<double, double> means = ReadAuthorMeans();
  ASSERT_EQ(means.size(), 7u);
  for (const auto& [batch, mean_s] : means) {
    if (batch < 128) continue;
    // Epoch = ceil(N/b) steps of the effective batch N/steps.
    const double steps = std::ceil(kSamplesPerEpoch / batch);
    const double predicted_s = steps * fit.PredictStepTime(kSamplesPerEpoch / steps);
    std::printf("batch %5.0f: author %.1f s, law %.1f s (%+.2f%%)\n", batch, mean_s, predicted_s,
                100 * (predicted_s / mean_s - 1));
    EXPECT_NEAR(predicted_s / mean_s, 1, 0.04) << "batch " << batch;
  }
}

TEST(Koshian2Tpu, FitThroughBatch64FlagsTheCurvedResiduals) {
  const std::vector<Sample> samples = ReadTpuEpochs(0);
  ASSERT_EQ(samples.size(), 7u * 19u);
  const GroupFit fit = FitGroup(samples);
  const bool flagged = std::any_of(
      fit.warnings.begin(), fit.warnings.end(),
      [](const std::string& w) { return w.find("curvature F-test") != std::string::npos; });
  EXPECT_TRUE(flagged) << fit.FullReport();
  // At batch 64 the law cannot reach the author's 973.0 s (see the top).
  const double steps = std::ceil(kSamplesPerEpoch / 64);
  EXPECT_LT(steps * fit.PredictStepTime(kSamplesPerEpoch / steps), 0.9 * 973.0);
}

}  // namespace
}  // namespace fitspeed
