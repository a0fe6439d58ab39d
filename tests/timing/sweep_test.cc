#include "fitspeed/timing/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/timing/host.h"
#include "timing/test_networks.h"

namespace fitspeed {
namespace {

// Short budgets: tests check that a sweep runs and reports consistently, never its speed.
SweepOptions Quick() {
  SweepOptions o;
  o.warmup_steps = 1;
  o.warmup_time_s = 0;
  o.min_repeats = 2;
  o.max_repeats = 3;
  o.min_time_s = 0;
  o.threads = 1;
  return o;
}

TEST(RepeatPolicy, AtLeastTheCountThenUntilTheTimeAtMostTheLimit) {
  const RepeatPolicy policy{3, 10, 1.0};
  // Fewer than 3 repeats: another, however long they took.
  EXPECT_TRUE(policy.WantsMore(0, 0));
  EXPECT_TRUE(policy.WantsMore(2, 5.0));
  // 3 or more: another only while under 1 s in total and under 10 repeats.
  EXPECT_TRUE(policy.WantsMore(3, 0.9));
  EXPECT_FALSE(policy.WantsMore(3, 1.0));
  EXPECT_TRUE(policy.WantsMore(9, 0.5));
  EXPECT_FALSE(policy.WantsMore(10, 0.5));
  // No time budget: exactly min_repeats.
  const RepeatPolicy count_only{2, 3, 0};
  EXPECT_TRUE(count_only.WantsMore(1, 0));
  EXPECT_FALSE(count_only.WantsMore(2, 0));
}

TEST(Sweep, MeasuresEveryBatchAndProducesSamples) {
  const Network net = testing::ResidualNet();
  SweepOptions o = Quick();
  o.batches = {2, 4, 8};
  std::vector<SweepProgress::Stage> stages;
  o.progress = [&](const SweepProgress& p) { stages.push_back(p.stage); };
  const SweepResult r = Sweep(net, o);
  ASSERT_EQ(r.measurements.size(), 3u);
  EXPECT_EQ(stages.size(), 6u);  // starting and measured, per batch
  EXPECT_EQ(r.context.threads, 1);
  for (size_t i = 0; i < 3; ++i) {
    const BatchMeasurement& m = r.measurements[i];
    EXPECT_EQ(m.batch, o.batches[i]);
    EXPECT_GT(m.step_time_s, 0.0);
    EXPECT_GE(m.step_time_s, m.min_time_s);
    EXPECT_GE(m.cv, 0.0);
    EXPECT_GE(m.repeats, 2);
    EXPECT_LE(m.repeats, 3);
    EXPECT_EQ(m.warmup_steps, 1);
    EXPECT_DOUBLE_EQ(m.throughput_sps, static_cast<double>(m.batch) / m.step_time_s);
    EXPECT_DOUBLE_EQ(m.gflops, m.step_flops / m.step_time_s / 1e9);
    EXPECT_TRUE(std::isfinite(m.loss));
    EXPECT_GT(m.memory_estimate_bytes, 0.0);
    ASSERT_EQ(m.layers.size(), static_cast<size_t>(net.size()));
    EXPECT_EQ(m.layers[1].name, "c1");
    EXPECT_GT(m.layers[1].seconds[0], 0.0);
  }
  // Larger batches hold more activations.
  EXPECT_LT(r.measurements[0].memory_estimate_bytes, r.measurements[2].memory_estimate_bytes);

  const std::vector<Sample> samples = r.Samples();
  ASSERT_EQ(samples.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(samples[i].label, "test-residual");
    EXPECT_EQ(samples[i].precision, "fp32");
    EXPECT_EQ(samples[i].devices, 1);
    EXPECT_DOUBLE_EQ(samples[i].batch, static_cast<double>(o.batches[i]));
    ASSERT_TRUE(samples[i].step_time_s.has_value());
    EXPECT_DOUBLE_EQ(*samples[i].step_time_s, r.measurements[i].step_time_s);
    EXPECT_NO_THROW(ValidateSample(samples[i]));
  }
  const FitResult fit = Fit(samples);
  ASSERT_EQ(fit.fits.size(), 1u);
  EXPECT_EQ(fit.fits[0].n_points, 3);
}

TEST(Sweep, ProgressCountsEachBatchUpToTheTotal) {
  SweepOptions o = Quick();
  o.batches = {1, 2, 4};
  std::vector<SweepProgress> seen;
  o.progress = [&](const SweepProgress& p) { seen.push_back(p); };
  const SweepResult r = Sweep(testing::SequenceNet(), o);
  // Batch i of 3 starts, then is measured with its time and repeats: the
  // positions never go back and the last is the total.
  ASSERT_EQ(seen.size(), 6u);
  for (size_t i = 0; i < seen.size(); ++i) {
    const SweepProgress& p = seen[i];
    EXPECT_EQ(p.index, static_cast<int>(i / 2) + 1);
    EXPECT_EQ(p.total, 3);
    EXPECT_EQ(p.batch, o.batches[i / 2]);
    if (i % 2 == 0) {
      EXPECT_EQ(p.stage, SweepProgress::Stage::kStarting);
    } else {
      EXPECT_EQ(p.stage, SweepProgress::Stage::kMeasured);
      EXPECT_EQ(p.step_time_s, r.measurements[i / 2].step_time_s);
      EXPECT_EQ(p.repeats, r.measurements[i / 2].repeats);
      EXPECT_GE(p.repeats, 2);
    }
  }
  EXPECT_EQ(seen.back().index, seen.back().total);
}

TEST(Sweep, EigenBackendRunsTheSameStep) {
  SweepOptions o = Quick();
  o.backend = Backend::kEigen;
  o.batches = {2};
  const SweepResult r = Sweep(testing::PoolingNet(), o);
  ASSERT_EQ(r.measurements.size(), 1u);
  EXPECT_EQ(r.measurements[0].layers[1].implementation[0], "eigen");
  EXPECT_EQ(r.Samples()[0].tags.at("backend"), "eigen");
}

TEST(Sweep, SkipsBatchesOverTheMemoryLimit) {
  SweepOptions o = Quick();
  o.batches = {1, 2};
  o.memory_limit_bytes = 1;  // one byte: nothing fits
  std::vector<std::string> messages;
  o.progress = [&](const SweepProgress& p) {
    if (p.stage == SweepProgress::Stage::kSkipped) messages.push_back(p.message);
  };
  const SweepResult r = Sweep(testing::SequenceNet(), o);
  EXPECT_TRUE(r.measurements.empty());
  ASSERT_EQ(r.skipped.size(), 2u);
  EXPECT_EQ(r.skipped[1].batch, 2);
  EXPECT_GT(r.skipped[1].memory_estimate_bytes, 1.0);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_NE(messages[0].find("memory"), std::string::npos) << messages[0];
}

TEST(Sweep, AutomaticBatchesDoubleUpToTheLimit) {
  SweepOptions o = Quick();
  o.auto_max_batch = 6;
  const SweepResult r = Sweep(testing::SequenceNet(), o);
  ASSERT_EQ(r.measurements.size(), 3u);  // 1, 2, 4; 8 > 6
  EXPECT_EQ(r.measurements[2].batch, 4);
  EXPECT_NE(r.stop_reason.find("largest batch"), std::string::npos) << r.stop_reason;

  o.memory_limit_bytes = 1;
  const SweepResult none = Sweep(testing::SequenceNet(), o);
  EXPECT_TRUE(none.measurements.empty());
  EXPECT_NE(none.stop_reason.find("memory"), std::string::npos) << none.stop_reason;
}

TEST(Sweep, EstimateGrowsWithTheBatch) {
  // Every sample adds at least its input (3 rows of 4 floats), which has a
  // buffer of its own: 16 more samples, at least 16*12*4 = 768 more bytes.
  const Network net = testing::SequenceNet();
  const double grown = EstimateStepMemoryBytes(net, 32) - EstimateStepMemoryBytes(net, 16);
  EXPECT_GE(grown, 768.0);
}

TEST(Sweep, RejectsBadOptions) {
  SweepOptions o;
  o.min_repeats = 0;
  try {
    ValidateSweepOptions(o);
    FAIL() << "min_repeats = 0 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("min_repeats"), std::string::npos) << e.what();
  }
  o = SweepOptions();
  o.batches = {4, 0};
  EXPECT_THROW(ValidateSweepOptions(o), UsageError);
  o = SweepOptions();
  o.memory_fraction = 1.5;
  EXPECT_THROW(ValidateSweepOptions(o), UsageError);
  o = SweepOptions();
  o.momentum = 1.0;
  EXPECT_THROW(ValidateSweepOptions(o), UsageError);
  o = SweepOptions();
  o.precision = Precision::kTf32;  // a device's precision: the host cannot run it
  EXPECT_THROW(ValidateSweepOptions(o), UsageError);
  EXPECT_EQ(ParseBackend("eigen"), Backend::kEigen);
  EXPECT_THROW(ParseBackend("cuda"), UsageError);
}

// An automatic sweep doubled to auto_max_batch: at 2^62 the batch overflowed
// int64 and the sweep never ended.
TEST(Sweep, BatchesAboveTheMaximumAreRefusedNamingTheField) {
  SweepOptions o;
  o.auto_max_batch = int64_t{1} << 62;
  try {
    ValidateSweepOptions(o);
    FAIL() << "auto_max_batch = 2^62 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("SweepOptions.auto_max_batch = 4611686018427387904: must "
                                         "be in [1, 1073741824]"),
              std::string::npos)
        << e.what();
  }
  o = SweepOptions();
  o.auto_max_batch = kMaxSweepBatch;
  EXPECT_NO_THROW(ValidateSweepOptions(o));
  o.batches = {4, kMaxSweepBatch + 1};
  EXPECT_THROW(ValidateSweepOptions(o), UsageError);
}

TEST(Sweep, JsonIsTheFitJsonPlusMeasurementsAndContext) {
  SweepOptions o = Quick();
  o.batches = {1, 2, 3};
  const SweepResult r = Sweep(testing::SequenceNet(), o);
  const FitResult fit = Fit(r.Samples());
  const nlohmann::json j = nlohmann::json::parse(SweepToJson(r, fit));
  EXPECT_EQ(j.at("schema"), "fitspeed.fit/1");
  ASSERT_EQ(j.at("fits").size(), 1u);
  EXPECT_EQ(j.at("fits")[0].at("group").at("label"), "test-sequence");
  ASSERT_EQ(j.at("measurements").size(), 3u);
  const nlohmann::json& m = j.at("measurements")[2];
  EXPECT_EQ(m.at("batch"), 3);
  for (const char* key : {"step_time_s", "cv", "throughput_sps", "gflops"}) {
    EXPECT_TRUE(m.at(key).is_number()) << key;
  }
  EXPECT_DOUBLE_EQ(m.at("step_time_s").get<double>(), r.measurements[2].step_time_s);
  EXPECT_EQ(m.at("layers").size(), 5u);
  const nlohmann::json& c = j.at("context");
  EXPECT_EQ(c.at("threads"), 1);
  EXPECT_FALSE(c.at("isa").get<std::string>().empty());
  // "major.minor.patch" (gtest's POSIX regex; std::regex trips GCC 12's
  // -Wmaybe-uninitialized under the sanitizer build).
  EXPECT_THAT(c.at("onednn_version").get<std::string>(),
              ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
}

TEST(Sweep, Bf16IsRefusedWhereOneDnnHasNoKernels) {
  SweepOptions o = Quick();
  o.batches = {2};
  o.precision = Precision::kMixed;
  if (DescribeHost(1).bf16_supported) {
    const SweepResult r = Sweep(testing::ResidualNet(), o);
    ASSERT_EQ(r.measurements.size(), 1u);
    EXPECT_EQ(r.Samples()[0].precision, "bf16");
  } else {
    EXPECT_THROW(Sweep(testing::ResidualNet(), o), UsageError);
  }
}

TEST(Sweep, ContentionWarningNamesTheBatchesMeasuredOnABusyCpu) {
  SweepResult r;
  for (auto [batch, rate] :
       {std::pair<int64_t, double>{1, 30.0}, {2, 100.0}, {4, 100.5}, {8, 250.0}}) {
    BatchMeasurement m;
    m.batch = batch;
    m.preemptions_per_s = rate;
    r.measurements.push_back(m);
  }
  // The threshold is "more than 100 per second": 100 itself is not contended.
  EXPECT_EQ(r.ContendedBatches(), (std::vector<int64_t>{4, 8}));
  const std::string w = r.ContentionWarning();
  EXPECT_NE(w.find("batches 4, 8"), std::string::npos) << w;
  EXPECT_NE(w.find("250 times per second"), std::string::npos) << w;
  r.measurements.resize(2);
  EXPECT_TRUE(r.ContentionWarning().empty());
}

TEST(HostContext, IdleCpusIsAShareOfTheMachinesCpus) {
  // /proc/stat exists on Linux: idle CPUs lie between 0 and the CPU count
  // (a little slack for jiffies counted between the reads of its lines).
  const double idle = IdleCpus(0.05);
  EXPECT_GE(idle, 0.0);
  EXPECT_LE(idle, std::thread::hardware_concurrency() + 0.05);
}

TEST(HostContext, DescribesThisMachine) {
  const HostContext c = DescribeHost(1);
  EXPECT_EQ(c.threads, 1);
  EXPECT_GE(c.logical_cpus, 1);
  EXPECT_FALSE(c.cpu_model.empty());
  EXPECT_FALSE(c.isa.empty());
  EXPECT_FALSE(c.compiler.empty());
  EXPECT_GT(c.fp32_peak_gflops, 0.0);
  EXPECT_GT(c.memory_total_bytes, 0.0);
  EXPECT_GT(c.memory_available_bytes, 0.0);
  EXPECT_LE(c.memory_available_bytes, c.memory_total_bytes);
  EXPECT_NE(c.ToString().find("isa: " + c.isa), std::string::npos);
  EXPECT_THROW(DescribeHost(0), UsageError);
}

}  // namespace
}  // namespace fitspeed
