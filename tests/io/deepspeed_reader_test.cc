// Tests of the DeepSpeed throughput-line reader on logs quoted from public sources
// (each test names its source). Tests marked "assembled" join real lines with
// lines written in DeepSpeed's own formats. Expected numbers are worked by hand
// from the raw lines in the comments, never taken from the reader's output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
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
using ::testing::IsEmpty;

const char kSource[] = "ds.log";

// tests/data/logs-wild/deepspeed/README.md: the first 120 and 80 lines of two
// DeepSpeed-Chat logs (deepspeedai/DeepSpeedExamples, 16 x V100): step 1 (SFT,
// OPT-1.3b, one engine) and step 3 (RLHF, actor OPT-1.3b + critic OPT-350m).
const char kStep1[] =
    "logs-wild/deepspeed/DeepSpeedExamples_DeepSpeed-Chat_step1_opt-1.3b-globalBatchSize128."
    "excerpt.log";
const char kStep3[] =
    "logs-wild/deepspeed/"
    "DeepSpeedExamples_DeepSpeed-Chat_step3_actor_opt-1.3b_critic_opt-350m_globalBatchSize64."
    "excerpt.log";

using fitspeed::testing::AtLine;
using fitspeed::testing::ReadData;
using Result = fitspeed::testing::ReadResult;

Result Read(std::string_view text, const Attributes& attributes = {}) {
  return testing::ReadWith(io::ReadDeepspeed, text, kSource, attributes);
}

std::string ErrorOf(std::string_view text, const Attributes& attributes = {}) {
  return testing::DataErrorOf([&] { Read(text, attributes); });
}

Attributes Batch(double batch) {
  Attributes a;
  a.batch = batch;
  return a;
}

TEST(DeepspeedReader, RealSftLogGivesOneSamplePerReportInterval) {
  const Result r = Read(ReadData(kStep1), Batch(128));
  // Timer reports at lines 13, 15, ..., 103 (global steps 10..460) and 108, 110,
  // ..., 120 (470..520): 46 + 6 = 52 reports, 51 intervals. Left out: (500, 510]
  // at line 118, where the progress lines 113 and 117 say skipped=6 then 8 (two
  // loss-scale overflows at lines 115-116). 50 samples.
  ASSERT_EQ(r.samples.size(), 50u);
  EXPECT_EQ(AtLine(r.samples, 13), nullptr);  // the first report: warm-up
  EXPECT_EQ(AtLine(r.samples, 118), nullptr);

  // Line 13: global_step=10, RunningAvgSamplesPerSec=173.4455644119137; line 15:
  // global_step=20, RunningAvgSamplesPerSec=172.66319574149418. The running
  // average over steps 3..g is B (g-2) / T(g), so steps 11-20 took
  // B (18/172.66319574149418 - 8/173.4455644119137) = B x 0.0581252184 s and ran
  // at 10 / 0.0581252184 = 172.04236439 samples/s.
  const Sample* s = AtLine(r.samples, 15);
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(*s->throughput_sps, 172.04236439, 1e-7);
  EXPECT_EQ(s->batch, 128);
  EXPECT_EQ(s->devices, 1);
  EXPECT_THAT(s->label, IsEmpty());
  // Line 17: global_step=30, RunningAvgSamplesPerSec=172.38095135217128:
  // 10 / (28/172.38095135217128 - 18/172.66319574149418) = 171.87522994.
  s = AtLine(r.samples, 17);
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(*s->throughput_sps, 171.87522994, 1e-7);
  // Line 108 (global step 470, after the epoch-1 perplexity evaluation): the
  // timer runs from forward() to step() only, so the interval is kept.
  EXPECT_NE(AtLine(r.samples, 108), nullptr);

  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_THAT(r.warnings[0], HasSubstr("ds.log:118: 1 interval(s) left out that include skipped "
                                       "steps"));
  EXPECT_THAT(r.warnings[1], HasSubstr("ds.log:15: the log does not state the data-parallel "
                                       "devices"));
  Attributes a = Batch(128);
  a.devices = 16;
  const Result with_devices = Read(ReadData(kStep1), a);
  // The reader leaves devices at 1; ParseSamples applies @devices afterwards.
  EXPECT_EQ(with_devices.samples[0].devices, 1);
  EXPECT_EQ(with_devices.warnings.size(), 1u);  // the skipped steps only
}

TEST(DeepspeedReader, RealSftLogAsksForTheBatch) {
  // The log states the per-device batch (8) and accumulation (1) on its command
  // line, but not the number of devices: the global batch is not in the log.
  EXPECT_THAT(ErrorOf(ReadData(kStep1)),
              HasSubstr("ds.log:13: field 'batch': DeepSpeed's samples per second count the "
                        "global batch of a step"));
  EXPECT_THAT(ErrorOf(ReadData(kStep1)), HasSubstr("give it as PATH@batch=N (the command line "
                                                   "on line 1 gives per-device batch 8 and 1 "
                                                   "accumulation step(s)"));
}

TEST(DeepspeedReader, BatchThatTheWallClockContradicts) {
  // Lines 13 and 15 are stamped 01:46:59,171 and 01:47:06,619: 7.448 s for steps
  // 11-20, 0.7448 s each. At 172.04 samples/s the timed part of a step of B
  // samples takes B / 172.04 s, which cannot exceed 0.7448 s: B <= 128.1 (the
  // reader allows 1% and 2 ms: 129.5). 128 passes (test above); 256 does not.
  EXPECT_THAT(ErrorOf(ReadData(kStep1), Batch(256)),
              HasSubstr("ds.log:15: field 'batch': a batch of 256 contradicts the log"));
}

TEST(DeepspeedReader, RealRlhfLogGivesEndToEndIterations) {
  const Result r = Read(ReadData(kStep3));
  // Hybrid-engine lines at 16, 22, 28, 32, 36, 41, 45, 49, 53, 60, 65, 69, 73,
  // 77; the first (7.99 s against ~3.8 s) is the warm-up: 13 samples.
  ASSERT_EQ(r.samples.size(), 13u);
  EXPECT_EQ(AtLine(r.samples, 16), nullptr);
  // The batch: line 16 "E2E latency=7.99s ... CurSamplesPerSec=8.01": 8.005 x
  // 7.985 = 63.92 to 8.015 x 7.995 = 64.08 samples; line 22 "3.73s ...
  // CurSamplesPerSec=17.17": 17.165 x 3.725 = 63.94 to 17.175 x 3.735 = 64.15.
  // 64 is the only whole number in both (and in every other line's bounds).
  const Sample* s = AtLine(r.samples, 22);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->batch, 64);
  EXPECT_DOUBLE_EQ(*s->throughput_sps, 17.17);
  EXPECT_EQ(s->label, "rlhf-e2e");
  s = AtLine(r.samples, 77);  // "E2E latency=3.75s ... CurSamplesPerSec=17.06"
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->throughput_sps, 17.06);
  // Lines 54 and 56 both report "[Rank 0] step=10" (actor and critic engines),
  // so the one timer line (55) cannot be attributed and is left out.
  EXPECT_EQ(AtLine(r.samples, 55), nullptr);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_THAT(r.warnings[0], HasSubstr("ds.log:55: 1 engine throughput line(s) left out: this "
                                       "log has several DeepSpeed engines"));
  EXPECT_THAT(r.warnings[0], HasSubstr("line 56"));
  // A batch other than 64 contradicts the lines.
  EXPECT_THAT(ErrorOf(ReadData(kStep3), Batch(128)),
              HasSubstr("ds.log:16: field 'batch': a batch of 128 contradicts the log"));
  EXPECT_EQ(Read(ReadData(kStep3), Batch(64)).samples.size(), 13u);
}

TEST(DeepspeedReader, RealLogsAreDetected) {
  // Both logs open with DeepSpeed-Chat's "***** Running training *****", which
  // the Hugging Face Trainer prints too: DeepSpeed's lines decide.
  EXPECT_EQ(DetectFormat(ReadData(kStep1)), Format::kDeepspeed);
  EXPECT_EQ(DetectFormat(ReadData(kStep3)), Format::kDeepspeed);
  EXPECT_EQ(FormatName(Format::kDeepspeed), "deepspeed");
  EXPECT_EQ(ParseFormat("deepspeed"), Format::kDeepspeed);
  ReadOptions options;
  options.warn = [](const std::string&) {};
  Attributes a = Batch(128);
  a.devices = 16;
  const std::vector<Sample> samples = ParseSamples(ReadData(kStep1), kSource, a, options);
  ASSERT_EQ(samples.size(), 50u);
  EXPECT_EQ(samples[0].devices, 16);
  EXPECT_EQ(samples[0].batch, 128);
}

// Assembled: DeepSpeed's configuration dump as printed in the Megatron-DeepSpeed
// log of tests/data/logs-wild/megatron-nemo (its lines 1674 and 1677), then
// progress and timer lines of the step-1 log (lines 12-17) without their
// timestamps.
const char kConfigured[] =
    "[2022-10-31 10:59:31,004] [INFO] [config.py:982:print]   train_batch_size ............. 256\n"
    "[2022-10-31 10:59:31,007] [INFO] [config.py:982:print]   world_size ................... 8\n"
    "[Rank 0] step=10, skipped=6, lr=[9.649992967150629e-06, 9.649992967150629e-06]\n"
    "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=173.4455644119137, "
    "CurrSamplesPerSec=171.97903593624417, MemAllocated=3.96GB, MaxMemAllocated=22.95GB\n"
    "[Rank 0] step=20, skipped=6, lr=[9.649913847830647e-06, 9.649913847830647e-06]\n"
    "epoch=0/micro_step=20/global_step=20, RunningAvgSamplesPerSec=172.66319574149418, "
    "CurrSamplesPerSec=171.4073346136102, MemAllocated=3.96GB, MaxMemAllocated=22.95GB\n"
    "[Rank 0] step=30, skipped=6, lr=[9.649746819575313e-06, 9.649746819575313e-06]\n"
    "epoch=0/micro_step=30/global_step=30, RunningAvgSamplesPerSec=172.38095135217128, "
    "CurrSamplesPerSec=171.8685942346471, MemAllocated=3.96GB, MaxMemAllocated=22.95GB\n";

TEST(DeepspeedReader, ConfigurationDumpGivesBatchAndDevices) {
  const Result r = Read(kConfigured);
  // Intervals (10, 20] and (20, 30] as in the SFT test: 172.04236 and 171.87523
  // samples/s, at train_batch_size 256 on world_size 8.
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].line, 6);
  EXPECT_NEAR(*r.samples[0].throughput_sps, 172.04236439, 1e-7);
  EXPECT_EQ(r.samples[0].batch, 256);
  EXPECT_EQ(r.samples[0].devices, 8);
  EXPECT_THAT(r.warnings, IsEmpty());
  EXPECT_THAT(ErrorOf(kConfigured, Batch(128)),
              HasSubstr("ds.log:1: field 'batch': batch=128 contradicts the log's "
                        "train_batch_size 256"));
  Attributes a;
  a.devices = 16;
  EXPECT_THAT(ErrorOf(kConfigured, a),
              HasSubstr("ds.log:6: field 'devices': devices=16 contradicts the log's world_size "
                        "8 (line 2)"));
}

TEST(DeepspeedReader, HuggingFaceTrainerTotalBatch) {
  // Assembled: the Trainer's header line (its format, from transformers'
  // trainer.py) before the timer lines of kConfigured.
  const std::string text =
      "  Total train batch size (w. parallel, distributed & accumulation) = 1,024\n" +
      std::string(kConfigured).substr(std::string(kConfigured).find("[Rank 0]"));
  const Result r = Read(text);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].batch, 1024);
}

TEST(DeepspeedReader, LinesItDoesNotReadSayWhy) {
  // The Megatron-DeepSpeed log (tests/data/logs-wild/megatron-nemo, its line
  // 2739) has DeepSpeed's throughput line of 2022, which counts micro batch x
  // data-parallel size per timed micro-step.
  EXPECT_THAT(
      ErrorOf("[2022-10-31 10:59:51,436] [INFO] [timer.py:198:stop] 0/10, "
              "RunningAvgSamplesPerSec=428.0729589385703, CurrSamplesPerSec=431.9529870656501, "
              "MemAllocated=1.64GB, MaxMemAllocated=7.01GB\n"),
      HasSubstr("ds.log:1: field 'SamplesPerSec': a throughput line of DeepSpeed before 2023"));
  // deepspeedai/DeepSpeed issue #1825 (2022): the older form still.
  EXPECT_THAT(ErrorOf("[2022-03-11 02:06:58,985] [INFO] [timer.py:189:stop] 0/40, "
                      "SamplesPerSec=83.48609168106144, MemAllocated=0.26GB, "
                      "MaxMemAllocated=9.02GB\n"),
              HasSubstr("before 2023"));
  // Assembled in the pipeline engine's format (runtime/pipe/engine.py).
  EXPECT_THAT(ErrorOf("steps: 10 loss: 2.3456 iter time (s): 0.485 samples/sec: 527.835\n"),
              HasSubstr("ds.log:1: field 'iter time (s)': a pipeline-engine line"));
}

TEST(DeepspeedReader, RunsRestartAtTheirFirstReport) {
  // Assembled: kConfigured's three reports, then the same three again (a second
  // run: global_step goes back to 10). Each run's first report is warm-up.
  const std::string body =
      std::string(kConfigured).substr(std::string(kConfigured).find("[Rank 0]"));
  const Result r = Read(std::string(kConfigured) + body);
  ASSERT_EQ(r.samples.size(), 4u);
  EXPECT_EQ(r.samples[2].line, 12);
  EXPECT_NEAR(*r.samples[2].throughput_sps, 172.04236439, 1e-7);
}

TEST(DeepspeedReader, BadNumbersAreDataErrors) {
  const std::string timer = "epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=";
  EXPECT_THAT(ErrorOf(timer + "nan, CurrSamplesPerSec=1.0\n"),
              HasSubstr("ds.log:1: field 'RunningAvgSamplesPerSec': is NaN"));
  EXPECT_THAT(ErrorOf(timer + "-173.4, CurrSamplesPerSec=1.0\n"),
              HasSubstr("ds.log:1: field 'RunningAvgSamplesPerSec': must be > 0"));
  EXPECT_THAT(ErrorOf(timer + "0, CurrSamplesPerSec=1.0\n"),
              HasSubstr("ds.log:1: field 'RunningAvgSamplesPerSec': must be > 0"));
  EXPECT_THAT(ErrorOf(timer + "1\x01"
                              "7x, CurrSamplesPerSec=1.0\n"),
              HasSubstr("ds.log:1: field 'RunningAvgSamplesPerSec': expected a number, got "
                        "'1\\x017x'"));
  EXPECT_THAT(ErrorOf(timer + "\n"),  // cut short after the '='
              HasSubstr("ds.log:1: field 'RunningAvgSamplesPerSec': expected a number, got ''"));
  EXPECT_THAT(ErrorOf(timer + "173.4, CurrSamplesPerSec=inf\n"),
              HasSubstr("ds.log:1: field 'CurrSamplesPerSec': is infinite"));
  EXPECT_THAT(ErrorOf("epoch=0/micro_step=10/global_step=ten, RunningAvgSamplesPerSec=173.4\n"),
              HasSubstr("ds.log:1: field 'global_step': expected a number, got 'ten'"));
  EXPECT_THAT(ErrorOf("[Rank 0] step=10, skipped=-1, lr=[0.1]\n"),
              HasSubstr("ds.log:1: field 'skipped': must be a whole number >= 0"));
  // Running averages that would make the steps between take no time: 18/1000
  // - 8/100 < 0.
  EXPECT_THAT(ErrorOf("epoch=0/micro_step=10/global_step=10, RunningAvgSamplesPerSec=100\n"
                      "epoch=0/micro_step=20/global_step=20, RunningAvgSamplesPerSec=1000\n",
                      Batch(64)),
              HasSubstr("ds.log:2: field 'RunningAvgSamplesPerSec': does not fit the running "
                        "average on line 1"));
  const std::string e2e =
      "|E2E latency=3.73s |Gather latency=0.00s (0.00%) |Generate time=2.78s "
      "(74.61%) |Training time=0.74s (19.84%) |Others=0.21 (5.55%)";
  EXPECT_THAT(ErrorOf(std::string(e2e).replace(13, 5, "0.00s") + "|CurSamplesPerSec=17.17\n"),
              HasSubstr("ds.log:1: field 'E2E latency': must be > 0"));
  EXPECT_THAT(ErrorOf(e2e + "|CurSamplesPerSec=NaN |AvgSamplesPerSec=10.92\n"),
              HasSubstr("ds.log:1: field 'CurSamplesPerSec': is NaN"));
  // Two lines whose rate x time cannot be the same batch: 17.17 x 3.73 = 64.04,
  // 34.34 x 3.73 = 128.09.
  EXPECT_THAT(ErrorOf(e2e + "|CurSamplesPerSec=17.17\n" + e2e + "|CurSamplesPerSec=34.34\n"),
              HasSubstr("ds.log:2: field 'CurSamplesPerSec': CurSamplesPerSec x E2E latency "
                        "gives"));
  EXPECT_THAT(ErrorOf("[2022-10-31 10:59:31,007] [INFO] [config.py:982:print]   world_size "
                      "................... 7.5\n" +
                          std::string(kConfigured).substr(std::string(kConfigured).find("[Rank")),
                      Batch(64)),
              HasSubstr("ds.log:1: field 'world_size': must be a whole number"));
}

TEST(DeepspeedReader, JunkAndColours) {
  ReadOptions options;
  options.format = Format::kDeepspeed;
  options.warn = [](const std::string&) {};
  const std::string binary(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0 RunningAvgSamplesPerSec=1",
      36);
  EXPECT_THROW(ParseSamples(binary, kSource, Batch(64), options), DataError);
  EXPECT_THROW(ParseSamples("SamplesPerSec==,,|E2E latency=|\n", kSource, Batch(64), options),
               DataError);
  // ANSI colours around the timer lines change nothing.
  std::string coloured;
  std::istringstream lines(kConfigured);
  for (std::string line; std::getline(lines, line);) coloured += "\x1b[36m" + line + "\x1b[0m\n";
  const Result r = Read(coloured);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_NEAR(*r.samples[1].throughput_sps, 171.87522994, 1e-7);
  EXPECT_TRUE(io::LooksLikeDeepspeed(coloured));
}

TEST(DeepspeedReader, DetectionLeavesOtherFormatsAlone) {
  // The Hugging Face Trainer's lines (see its tests) and Megatron's iteration
  // line (tests/data/logs-wild/megatron-nemo, line 2744) are not DeepSpeed's.
  EXPECT_FALSE(
      io::LooksLikeDeepspeed("***** Running training *****\n"
                             "  Num examples = 900\n"
                             "{'train_runtime': 6132.3668, 'train_samples_per_second': "
                             "2.609, 'epoch': 0.34}\n"));
  EXPECT_FALSE(io::LooksLikeDeepspeed(
      " iteration       20/  171661 | consumed samples:         5120 | elapsed time per "
      "iteration (ms): 484.7 | learning rate: 1.972E-07 | global batch size:   256 |\n"));
  EXPECT_FALSE(io::LooksLikeDeepspeed("10\timages/sec: 146.6 +/- 0.3 (jitter = 0.6)\t7.906\n"));
  // A Megatron-DeepSpeed log carries DeepSpeed's lines too; Megatron's reader is
  // tried first and takes it.
  const std::string megatron = ReadData(
      "logs-wild/megatron-nemo/"
      "microsoft-Megatron-DeepSpeed_examples_random_ltd_gpt3-0.125B-baseline.excerpt.log");
  EXPECT_TRUE(io::LooksLikeDeepspeed(megatron));
  EXPECT_EQ(DetectFormat(megatron), Format::kMegatron);
}

}  // namespace
}  // namespace fitspeed
