#include "fitspeed/core/sample.h"

#include <gtest/gtest.h>

#include <cmath>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

TEST(StepsPerEpoch, KeepPartialRoundsUp) {
  // 50000 / 64 = 781.25: 781 full steps and one of 16 samples -> 782 steps.
  EXPECT_EQ(StepsPerEpoch(50000, 64, StepsRule::kKeepPartial), 782);
  // 50000 / 4096 = 12.2 -> 13 steps keeping the partial batch.
  EXPECT_EQ(StepsPerEpoch(50000, 4096, StepsRule::kKeepPartial), 13);
}

TEST(StepsPerEpoch, DropRemainderRoundsDown) {
  EXPECT_EQ(StepsPerEpoch(50000, 64, StepsRule::kDropRemainder), 781);
  EXPECT_EQ(StepsPerEpoch(50000, 4096, StepsRule::kDropRemainder), 12);
}

TEST(StepsPerEpoch, ExactDivisionIsTheSameUnderBothRules) {
  // 50000 / 250 = 200 exactly.
  EXPECT_EQ(StepsPerEpoch(50000, 250, StepsRule::kKeepPartial), 200);
  EXPECT_EQ(StepsPerEpoch(50000, 250, StepsRule::kDropRemainder), 200);
}

TEST(SamplesUsedPerEpoch, DropRemainderTrainsWholeBatchesOnly) {
  // 12 steps of 4096 = 49152 samples; keeping the partial batch trains all 50000.
  EXPECT_EQ(SamplesUsedPerEpoch(50000, 4096, StepsRule::kDropRemainder), 49152);
  EXPECT_EQ(SamplesUsedPerEpoch(50000, 4096, StepsRule::kKeepPartial), 50000);
}

Sample EpochSample(double batch, double epoch_time_s, StepsRule rule) {
  Sample s;
  s.source = "test.csv";
  s.line = 7;
  s.batch = batch;
  s.epoch_time_s = epoch_time_s;
  s.samples_per_epoch = 50000;
  s.steps_rule = rule;
  return s;
}

TEST(ToStepObservation, EpochTimeBecomesMeanStepAtEffectiveBatch) {
  // Keep partial: 782 steps over 50000 samples: b_eff = 50000/782 = 63.9386...,
  // step = 100 s / 782 = 0.127877... s.
  const StepObservation keep = ToStepObservation(EpochSample(64, 100.0, StepsRule::kKeepPartial));
  EXPECT_NEAR(keep.batch, 63.93861892583120, 1e-12);
  EXPECT_NEAR(keep.step_time_s, 0.12787723785166240, 1e-15);
  // Drop remainder: 781 steps of exactly 64.
  const StepObservation drop = ToStepObservation(EpochSample(64, 100.0, StepsRule::kDropRemainder));
  EXPECT_EQ(drop.batch, 64);
  EXPECT_NEAR(drop.step_time_s, 100.0 / 781, 1e-15);
}

TEST(ToStepObservation, ThroughputAndStepTimeAgree) {
  Sample rate;
  rate.batch = 256;
  rate.throughput_sps = 1024;  // 256 samples at 1024/s: 0.25 s per step
  EXPECT_DOUBLE_EQ(ToStepObservation(rate).step_time_s, 0.25);
  Sample step;
  step.batch = 256;
  step.step_time_s = 0.25;
  EXPECT_DOUBLE_EQ(ToStepObservation(step).throughput_sps(), 1024);
}

TEST(ValidateSample, NamesSourceLineAndField) {
  Sample s = EpochSample(64, std::nan(""), StepsRule::kKeepPartial);
  try {
    ValidateSample(s);
    FAIL() << "NaN epoch time was accepted";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(), "test.csv:7: field 'epoch_time': is NaN");
  }
}

TEST(ValidateSample, RejectsZeroNegativeAndInfinite) {
  Sample s;
  s.source = "x";
  s.batch = 0;
  s.step_time_s = 1;
  EXPECT_THROW(ValidateSample(s), DataError);
  s.batch = 8;
  s.step_time_s = -1;
  EXPECT_THROW(ValidateSample(s), DataError);
  s.step_time_s = INFINITY;
  EXPECT_THROW(ValidateSample(s), DataError);
  s.step_time_s = 1;
  EXPECT_NO_THROW(ValidateSample(s));
}

TEST(ValidateSample, NeedsExactlyOneObservation) {
  Sample s;
  s.batch = 8;
  EXPECT_THROW(ValidateSample(s), DataError);
  s.step_time_s = 1;
  s.throughput_sps = 8;
  EXPECT_THROW(ValidateSample(s), DataError);
}

TEST(ValidateSample, EpochTimeNeedsSamplesPerEpoch) {
  Sample s = EpochSample(64, 10, StepsRule::kKeepPartial);
  s.samples_per_epoch.reset();
  EXPECT_THROW(ValidateSample(s), DataError);
}

TEST(ValidateSample, DroppingRemainderOfTooLargeBatchLeavesNoStep) {
  // floor(50000/65536) = 0 steps.
  EXPECT_THROW(ValidateSample(EpochSample(65536, 10, StepsRule::kDropRemainder)), DataError);
  EXPECT_NO_THROW(ValidateSample(EpochSample(65536, 10, StepsRule::kKeepPartial)));
}

TEST(GroupSamples, SplitsByDevicesLabelAndPrecision) {
  std::vector<Sample> samples(5);
  samples[0].label = "gpu";
  samples[1].label = "tpu";
  samples[2].label = "gpu";
  samples[2].devices = 2;
  samples[3].label = "gpu";
  samples[4].label = "gpu";
  samples[4].precision = "mixed";
  const auto groups = GroupSamples(samples);
  ASSERT_EQ(groups.size(), 4u);
  // Key order: devices first, then label, then precision.
  EXPECT_EQ(groups[0].first.ToString(), "devices=1 label=gpu");
  EXPECT_EQ(groups[0].second.size(), 2u);
  EXPECT_EQ(groups[1].first.ToString(), "devices=1 label=gpu precision=mixed");
  EXPECT_EQ(groups[2].first.ToString(), "devices=1 label=tpu");
  EXPECT_EQ(groups[3].first.ToString(), "devices=2 label=gpu");
}

TEST(Units, NamesRoundTripAndSequencesMeanSamples) {
  EXPECT_EQ(UnitName(Unit::kSamples), "samples");
  EXPECT_EQ(UnitName(Unit::kTokens), "tokens");
  EXPECT_EQ(ParseUnit("tokens"), Unit::kTokens);
  EXPECT_EQ(ParseUnit("samples"), Unit::kSamples);
  EXPECT_EQ(ParseUnit("sequences"), Unit::kSamples);
  EXPECT_THROW(ParseUnit("images"), UsageError);
  EXPECT_EQ(RateUnitName(Unit::kTokens), "tokens/s");
}

TEST(ToSequences, TokensWithAKnownLengthBecomeSequences) {
  // GPT-3 at MLPerf: 1536 sequences of 2048 tokens = 3,145,728 tokens per step.
  Sample s;
  s.batch = 3145728;
  s.unit = Unit::kTokens;
  s.seq_len = 2048;
  s.throughput_sps = 1.2e6;            // tokens/s
  s.samples_per_epoch = 2048.0 * 1e4;  // 10,000 sequences
  ToSequences(s);
  EXPECT_EQ(s.unit, Unit::kSamples);
  EXPECT_DOUBLE_EQ(s.batch, 1536);
  EXPECT_DOUBLE_EQ(*s.throughput_sps, 1.2e6 / 2048);  // 585.9 sequences/s
  EXPECT_DOUBLE_EQ(*s.samples_per_epoch, 1e4);
  EXPECT_EQ(s.seq_len, 2048);  // kept, to report tokens/s again
}

TEST(ToSequences, LeavesSamplesAndTokensOfUnknownLengthAlone) {
  Sample tokens;
  tokens.batch = 524288;
  tokens.unit = Unit::kTokens;
  tokens.step_time_s = 0.5;
  ToSequences(tokens);
  EXPECT_EQ(tokens.unit, Unit::kTokens);
  EXPECT_EQ(tokens.batch, 524288);

  Sample sequences;
  sequences.batch = 32;
  sequences.seq_len = 128;
  sequences.throughput_sps = 100;
  ToSequences(sequences);
  EXPECT_EQ(sequences.batch, 32);  // already in sequences: seq_len only labels it
  EXPECT_EQ(*sequences.throughput_sps, 100);

  Sample bad = tokens;
  bad.seq_len = 0;
  EXPECT_THROW(ToSequences(bad), DataError);
  bad.seq_len = std::nan("");
  EXPECT_THROW(ValidateSample(bad), DataError);
}

TEST(GroupSamples, TokensAndSamplesAreNeverFittedTogether) {
  std::vector<Sample> samples(3);
  samples[1].unit = Unit::kTokens;
  samples[2].unit = Unit::kTokens;
  const auto groups = GroupSamples(samples);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].first.ToString(), "devices=1");  // samples: unit not named
  EXPECT_EQ(groups[1].first.ToString(), "devices=1 unit=tokens");
  EXPECT_EQ(groups[1].second.size(), 2u);
}

}  // namespace
}  // namespace fitspeed
