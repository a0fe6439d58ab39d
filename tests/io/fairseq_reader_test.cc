// Tests of the fairseq reader on lines quoted from the MLPerf v0.7 Transformer
// logs in tests/data/logs-wild/fairseq (each test names the file and lines)
// and on copies of them with one field broken. Expected numbers are worked by
// hand in the comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/reader_test_util.h"
#include "io/readers.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;

const char kSourceFairseq[] = "fairseq.log";

testing::ReadResult ReadFairseqText(std::string_view text, int skip_first_epochs = 1) {
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return testing::ReadWith(io::ReadFairseq, text, kSourceFairseq, {}, options);
}

std::string ErrorOfFairseq(std::string_view text) {
  return testing::DataErrorOf([&] { ReadFairseqText(text, 0); });
}

// mlperf-v0.7_DellEMC_C4140_transformer_result_0.txt, line 55 and lines
// 164-168, 193-196 (the fairseq lines of epochs 1 and 2), with a Namespace cut
// to the three settings the reader uses (the log's line 66 holds them among
// 150 others).
const char kDellEpochs[] =
    "| distributed env init. MASTER_ADDR: 127.0.0.1, MASTER_PORT: 29500, WORLD_SIZE: 4, RANK: 0\n"
    "Namespace(distributed_world_size=4, max_tokens=15360, update_freq=[1])\n"
    "| epoch 001:   1000 / 2184 loss=81194.557, nll_loss=0.000, ppl=1.00, wps=176776, ups=3.1, "
    "wpb=56091, bsz=485, num_updates=997, lr=0.000985036, gnorm=100454.812, clip=100%, oom=0, "
    "loss_scale=8.000, wall=323\n"
    "| epoch 001:   2000 / 2184 loss=66602.039, nll_loss=0.000, ppl=1.00, wps=176938, ups=3.1, "
    "wpb=56076, bsz=487, num_updates=1995, lr=0.00197106, gnorm=69763.465, clip=100%, oom=0, "
    "loss_scale=4.000, wall=639\n"
    "| epoch 001 | loss 65192.095 | nll_loss 0.000 | ppl 1.00 | wps 176942 | ups 3.1 | wpb 56060 "
    "| bsz 487 | num_updates 2178 | lr 0.00189353 | gnorm 66746.875 | clip 100% | oom 0 | "
    "loss_scale 4.000 | wall 696\n"
    "| epoch 002:   1000 / 2184 loss=46622.835, nll_loss=0.000, ppl=1.00, wps=177685, ups=3.0, "
    "wpb=56125, bsz=505, num_updates=3178, lr=0.00156756, gnorm=60325.009, clip=100%, oom=0, "
    "loss_scale=4.000, wall=1028\n"
    "| epoch 002:   2000 / 2184 loss=45661.623, nll_loss=0.000, ppl=1.00, wps=177659, ups=3.1, "
    "wpb=56067, bsz=494, num_updates=4177, lr=0.00136732, gnorm=51717.227, clip=100%, oom=0, "
    "loss_scale=2.000, wall=1343\n"
    "| epoch 002 | loss 45546.664 | nll_loss 0.000 | ppl 1.00 | wps 177660 | ups 3.1 | wpb 56067 "
    "| bsz 492 | num_updates 4360 | lr 0.00133832 | gnorm 50807.357 | clip 100% | oom 0 | "
    "loss_scale 4.000 | wall 1400\n";

TEST(FairseqReader, OneSamplePerEpochFromItsSummaryInTokens) {
  const testing::ReadResult read = ReadFairseqText(kDellEpochs);
  EXPECT_TRUE(read.warnings.empty());
  // Epoch 1 is warm-up; epoch 2's summary (line 8): wps 177660 tokens/s at wpb
  // 56067 tokens per update, on 4 workers. Cross-check with the log's MLLOG
  // lines 191 and 198: epoch 2 ran from 1593122259701 to 1593122948356 ms,
  // 688.655 s, for 4360 - 2178 = 2182 updates: 2182 x 56067 / 688.655 =
  // 177,645 tokens/s, 0.01% from wps. wps / wpb = 3.169 updates/s, ups 3.1.
  ASSERT_EQ(read.samples.size(), 1u);
  const Sample& s = read.samples[0];
  EXPECT_EQ(s.line, 8);
  EXPECT_EQ(s.epoch, 2);
  EXPECT_EQ(s.unit, Unit::kTokens);
  EXPECT_EQ(s.batch, 56067);
  EXPECT_EQ(*s.throughput_sps, 177660);
  EXPECT_EQ(s.devices, 4);
  EXPECT_FALSE(s.step_time_s);
}

TEST(FairseqReader, ProgressLinesWhereAnEpochHasNoSummary) {
  // The epoch-2 lines without the summary (a log cut inside the epoch): each
  // progress line is a sample (lines 6 and 7).
  std::string text = kDellEpochs;
  text = text.substr(0, text.rfind("| epoch 002 |"));
  const testing::ReadResult read = ReadFairseqText(text);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].line, 6);
  EXPECT_EQ(*read.samples[0].throughput_sps, 177685);
  EXPECT_EQ(read.samples[0].batch, 56125);
  EXPECT_EQ(*read.samples[1].throughput_sps, 177659);
}

TEST(FairseqReader, OnlyWarmUpEpochsAreReadWithAWarning) {
  std::string text = kDellEpochs;
  text = text.substr(0, text.find("| epoch 002:"));
  const testing::ReadResult read = ReadFairseqText(text);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(*read.samples[0].throughput_sps, 176942);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("fairseq.log:5: every epoch in the log is <= "
                                          "skip_first_epochs = 1"));
}

// fairseq 0.10 and later print the same fields after Python logging's prefix;
// validation lines carry wps and wpb too and are not training. Lines written
// for this test in that layout (the numbers are the Dell log's epoch 2).
const char kHydraLayout[] =
    "2020-11-01 12:00:00 | INFO | train_inner | epoch 002:   1000 / 2184 loss=4.655, ppl=25.2, "
    "wps=177685, ups=3.2, wpb=56125, bsz=505, num_updates=3178, lr=0.0015, gnorm=0.6, "
    "train_wall=310, gb_free=10.1, wall=1028\n"
    "2020-11-01 12:05:00 | INFO | train | epoch 002 | loss 4.6 | ppl 24.3 | wps 177660 | ups 3.17 "
    "| wpb 56067 | bsz 492 | num_updates 4360 | lr 0.0013 | train_wall 680 | wall 1400\n"
    "2020-11-01 12:05:10 | INFO | valid | epoch 002 | valid on 'valid' subset | loss 4.1 | ppl 17 "
    "| wps 412345 | wpb 3021.5 | bsz 100.9 | num_updates 4360\n";

TEST(FairseqReader, LoggingPrefixOfNewerFairseqAndValidationLinesSkipped) {
  const testing::ReadResult read = ReadFairseqText(kHydraLayout, 0);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].line, 2);
  EXPECT_EQ(*read.samples[0].throughput_sps, 177660);
  EXPECT_EQ(read.samples[0].batch, 56067);
  EXPECT_EQ(read.samples[0].devices, 1);  // no world size in these lines
  EXPECT_EQ(DetectFormat(kHydraLayout), Format::kFairseq);
}

// The summary line of epoch 2 with `field` set to `value` (or removed when
// `value` is empty), behind the settings lines.
std::string WithFairseqField(const std::string& field, const std::string& value) {
  std::string line =
      "| epoch 002 | loss 45546.664 | wps 177660 | ups 3.1 | wpb 56067 | num_updates 4360\n";
  const size_t at = line.find("| " + field + " ");
  const size_t end = line.find(" |", at + 2);
  line.replace(at, end - at, value.empty() ? "" : "| " + field + " " + value);
  return "Namespace(distributed_world_size=4, max_tokens=15360, update_freq=[1])\n" + line;
}

TEST(FairseqReader, BadFieldsNameFileLineAndField) {
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wps", "17x660")),
              HasSubstr("fairseq.log:2: field 'wps': expected a number, got '17x660'"));
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wps", "nan")),
              HasSubstr("fairseq.log:2: field 'wps'"));
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wps", "nan")), HasSubstr("NaN"));
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wps", "0")),
              HasSubstr("fairseq.log:2: field 'wps'"));
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wpb", "-56067")),
              HasSubstr("fairseq.log:2: field 'wpb'"));
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wpb", "")),
              HasSubstr("fairseq.log:2: field 'wpb': a fairseq training line with wps but no "
                        "wpb"));
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wps", "")),
              HasSubstr("fairseq.log:2: field 'wps': a fairseq training line with wpb but no "
                        "wps"));
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("ups", "fast")),
              HasSubstr("fairseq.log:2: field 'ups'"));
}

// An epoch of 20 digits: the line was dropped, so the log read as one
// without that epoch. Sample::epoch is an int: at most 9 digits.
TEST(FairseqReader, EpochOfMoreThanNineDigitsNamesFileLineAndField) {
  std::string text = WithFairseqField("wps", "177660");
  text.replace(text.find("epoch 002"), 9, "epoch 12345678901234567890");
  EXPECT_THAT(ErrorOfFairseq(text),
              HasSubstr("fairseq.log:2: field 'epoch': '12345678901234567890' has 20 digits"));
  std::string nine = WithFairseqField("wps", "177660");
  nine.replace(nine.find("epoch 002"), 9, "epoch 123456789");
  EXPECT_EQ(ReadFairseqText(nine, 0).samples.at(0).epoch, 123456789);
}

TEST(FairseqReader, NumbersTheLogContradictsAreRefused) {
  // 4 workers of max_tokens 15360 hold at most 61440 tokens per update.
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wpb", "61441")),
              HasSubstr("fairseq.log:2: field 'wpb': wpb 61441 is more than the tokens an update "
                        "can hold: max_tokens 15360 (line 1) x update_freq 1 x 4 workers = "
                        "61440"));
  // One worker's wps (177660 / 4 = 44415) against ups 3.1: 44415 / 56067 =
  // 0.792 updates/s, below (3.1 - 0.05) / 1.5 = 2.03.
  EXPECT_THAT(ErrorOfFairseq(WithFairseqField("wps", "44415")),
              HasSubstr("fairseq.log:2: field 'wps': wps / wpb = 0.7922 updates/s contradicts "
                        "ups 3.1"));
  // MLPerf's global_batch_size bounds wpb too (the Dell log's line 68).
  const std::string mllog =
      ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1593121539363, \"event_type\": "
      "\"POINT_IN_TIME\", \"key\": \"global_batch_size\", \"value\": 50000, \"metadata\": "
      "{\"file\": \"/workspace/translation/train.py\", \"lineno\": 133}}\n";
  EXPECT_THAT(ErrorOfFairseq(mllog + "| epoch 002 | wps 177660 | ups 3.1 | wpb 56067\n"),
              HasSubstr("fairseq.log:2: field 'wpb': wpb 56067 is more than global_batch_size "
                        "50000 (line 1)"));
}

TEST(FairseqReader, MllogLineCutAfterItsValueKeyIsNotABatch) {
  // A log cut inside an MLLOG line: no global_batch_size to check against.
  const testing::ReadResult read = ReadFairseqText(
      ":::MLLOG {\"key\": \"global_batch_size\", \"value\"\n"
      "| epoch 002 | wps 177660 | ups 3.1 | wpb 56067\n",
      0);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 56067);
}

TEST(FairseqReader, WarnsWhereWpbFitsOneWorker) {
  // 12000 tokens per update on 4 workers of max_tokens 15360: it could be one
  // worker's count; read as all workers' (fairseq sums them), with a warning.
  // wps 37200 = 12000 x 3.1 agrees with ups.
  std::string text = WithFairseqField("wpb", "12000");
  text.replace(text.find("177660"), 6, "37200");
  const testing::ReadResult read = ReadFairseqText(text, 0);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 12000);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("fairseq.log:2: wpb 12000 would fit in one worker's "
                                          "max_tokens 15360"));
}

TEST(FairseqReader, DetectedAndNamed) {
  EXPECT_EQ(ParseFormat("fairseq"), Format::kFairseq);
  EXPECT_EQ(FormatName(Format::kFairseq), "fairseq");
  EXPECT_EQ(DetectFormat(kDellEpochs), Format::kFairseq);
  // Its lines must carry both wps and wpb.
  EXPECT_EQ(DetectFormat("| epoch 001 | loss 2.3 | ppl 4.9\n"), Format::kAuto);
}

TEST(FairseqReader, CutAndMutatedLinesThrowOnlyDataErrors) {
  ReadOptions options;
  options.format = Format::kFairseq;
  testing::ParseCutAndMutated({kDellEpochs, kHydraLayout}, "0123456789.|=, -eEnaxwpsb", 300, 31,
                              kSourceFairseq, {}, options);
}

}  // namespace
}  // namespace fitspeed
