// Tests of the nanoGPT / modded-nanogpt / torchtitan step-line reader on the six
// real logs of tests/data/logs-wild/nanogpt-torchtitan (README there) and on lines
// written in those scripts' formats ("assembled"). Expected numbers are read off the
// raw lines by hand (the comment says which lines and the arithmetic), never from
// the reader's output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/reader_test_util.h"
#include "io/readers.h"

namespace fitspeed {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

using fitspeed::testing::AtLine;
using fitspeed::testing::ReadData;
using Result = fitspeed::testing::ReadResult;

const char kDir[] = "logs-wild/nanogpt-torchtitan/";
const char kNanogpt[] =
    "druidowm-nanoGPT_wandb_run-20241012_153325-jnyhr7aj_files_output.excerpt.log";
const char kMuon[] = "modded-nanogpt_track_1_short_2024-10-10_Muon_eb5659d0.excerpt.txt";
const char kSub3Min[] = "modded-nanogpt_track_1_short_2025-01-16_Sub3Min_1d3bd93b.excerpt.txt";
const char kTitan214[] = "torchtitan_autoresearch-may19-qwen3-14b_run214_run.log";
const char kTitan217[] = "torchtitan_autoresearch-may19-qwen3-14b_run217_run.log";
const char kTitan379[] = "torchtitan_autoresearch-may19-qwen3-14b_run379_run.log";
const char kSourceNanogpt[] = "train.log";

std::string Data(const char* name) { return ReadData(std::string(kDir) + name); }

Result ReadNanogpt(std::string_view text, const Attributes& attributes = {}) {
  return testing::ReadWith(io::ReadNanogpt, text, kSourceNanogpt, attributes);
}

Result ParseNanogpt(std::string_view text, const Attributes& attributes = {}) {
  return testing::ParseWith(text, kSourceNanogpt, attributes);
}

std::string ErrorOfNanogpt(std::string_view text, const Attributes& attributes = {}) {
  return testing::DataErrorOf([&] { ParseNanogpt(text, attributes); });
}

// The median of the samples' throughputs (batch / step time where a step time is
// the observation), in the samples' own unit per second.
double MedianThroughputNanogpt(const std::vector<Sample>& samples) {
  std::vector<double> v;
  for (const Sample& s : samples) {
    v.push_back(s.throughput_sps ? *s.throughput_sps : s.batch / *s.step_time_s);
  }
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// --- nanoGPT -------------------------------------------------------------------------

TEST(NanogptReader, RealNanogptLogWithoutBatchIsRefusedSayingWhatToGive) {
  // The W&B output.log starts at "step 0: train loss ..." (line 1): nanoGPT's
  // start-up line "tokens per iteration will be: N" is not in it.
  const std::string text = Data(kNanogpt);
  EXPECT_EQ(DetectFormat(text), Format::kNanogpt);
  const std::string error = ErrorOfNanogpt(text);
  EXPECT_THAT(error, HasSubstr("train.log:7: field 'batch'"));
  EXPECT_THAT(error, HasSubstr("give it as PATH@batch=N"));
  Result r;
  ReadOptions options;
  options.warn = [&r](const std::string& w) { r.warnings.push_back(w); };
  EXPECT_THROW(ParseSamples(text, kSourceNanogpt, {}, options), DataError);
  EXPECT_THAT(r.warnings, Contains(HasSubstr("tokens per iteration will be")));
}

TEST(NanogptReader, RealNanogptLogWithBatchAttribute) {
  Attributes a;
  a.batch = 64;  // what the user states; the log does not
  const Result r = ParseNanogpt(Data(kNanogpt), a);
  // Lines 2-201, 204-403, 406-420 are "iter N" lines for N = 0..414: 415 lines.
  // Left out: iter 0 (line 2, 23218.37 ms: compilation and the step-0
  // evaluation), iters 1-4 (lines 3-6, "mfu -100.00%"), iter 200 (line 204,
  // 6710.85 ms) and iter 400 (line 406, 6660.11 ms), which follow the evaluations
  // of lines 202 and 404. 415 - 1 - 4 - 2 = 408.
  ASSERT_EQ(r.samples.size(), 408u);
  for (const int line : {2, 3, 6, 204, 406}) EXPECT_EQ(AtLine(r.samples, line), nullptr) << line;
  // Line 7: "iter 5: loss 4.0060, time 229.57ms, mfu 106.93%".
  const Sample* s = AtLine(r.samples, 7);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.22957);
  EXPECT_EQ(s->batch, 64);
  EXPECT_EQ(s->unit, Unit::kSamples);
  EXPECT_FALSE(s->seq_len.has_value());
  EXPECT_EQ(s->devices, 1);
  // The 408 times sorted: the 204th and 205th are 227.41 and 227.42 ms, so the
  // median throughput is the mean of 64 / 0.22741 s and 64 / 0.22742 s (281.42).
  EXPECT_NEAR(MedianThroughputNanogpt(r.samples), (64 / 0.22741 + 64 / 0.22742) / 2, 1e-9);
  EXPECT_THAT(r.warnings, Contains(HasSubstr("train.log:2: 5 warm-up line(s) left out")));
  EXPECT_THAT(r.warnings,
              Contains(HasSubstr("train.log:204: 2 step(s) left out whose time spans an "
                                 "evaluation")));
  EXPECT_THAT(r.warnings, Contains(HasSubstr("devices = 1 assumed; give PATH@devices=N")));
}

TEST(NanogptReader, StartUpLineGivesTheBatchInTokens) {
  // Assembled: nanoGPT's start-up line (train.py prints tokens_per_iter =
  // gradient_accumulation_steps * ddp_world_size * batch_size * block_size) and
  // iteration lines in its format, log_interval 10.
  const std::string text =
      "tokens per iteration will be: 491,520\n"
      "iter 0: loss 10.9, time 41000.00ms, mfu -100.00%\n"
      "iter 10: loss 9.1, time 5100.50ms, mfu -100.00%\n"
      "iter 20: loss 8.2, time 5000.00ms, mfu 42.10%\n"
      "iter 30: loss 7.9, time 5200.00ms, mfu 42.00%\n";
  const Result r = ParseNanogpt(text);
  // Lines 4 and 5: 491,520 tokens per 5.0 s and 5.2 s.
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].line, 4);
  EXPECT_EQ(r.samples[0].batch, 491520);
  EXPECT_EQ(r.samples[0].unit, Unit::kTokens);
  EXPECT_DOUBLE_EQ(*r.samples[1].step_time_s, 5.2);
  // @seq_len turns them into sequences: 491520 / 1024 = 480.
  Attributes a;
  a.seq_len = 1024;
  EXPECT_EQ(ParseNanogpt(text, a).samples[0].batch, 480);
  // A batch the log states cannot be overridden.
  a = {};
  a.batch = 480;
  EXPECT_THAT(ErrorOfNanogpt(text, a),
              HasSubstr("train.log:4: field 'batch': batch=480 contradicts the log's batch of "
                        "491520 tokens"));
}

// --- modded-nanogpt ------------------------------------------------------------------

TEST(NanogptReader, RealModdedNanogptMuonRecord) {
  const std::string text = Data(kMuon);
  EXPECT_EQ(DetectFormat(text), Format::kNanogpt);
  const Result raw = ReadNanogpt(text);
  // Train step lines: steps 1-200 at lines 587-711 and 713-787 (line 712 is the
  // step-125 evaluation). Steps 1-12 print step_avg:nanms (modded-nanogpt's own
  // untimed steps; the clock restarts at step 10: step 11 reads 214 ms after
  // step 10's 77676 ms). Each later step's time is the train_time difference to
  // the previous step: steps 13-200 = 188, less step 126 (line 713), whose
  // difference spans the evaluation's synchronize: 187 samples.
  ASSERT_EQ(raw.samples.size(), 187u);
  EXPECT_EQ(AtLine(raw.samples, 598), nullptr);  // step 12, nan
  EXPECT_EQ(AtLine(raw.samples, 713), nullptr);  // step 126
  // Line 599: step 13 train_time 641 ms, line 598: step 12 428 ms -> 213 ms.
  const Sample* s = AtLine(raw.samples, 599);
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(*s->step_time_s, 0.213, 1e-12);
  // Line 714: step 127 at 24997 ms after step 126 (line 713) at 24781 ms: 216 ms.
  s = AtLine(raw.samples, 714);
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(*s->step_time_s, 0.216, 1e-12);
  // Line 334: "batch_size : int = 8*64 # batch size, in sequences, across all
  // devices"; line 336: "sequence_length : int = 1024".
  EXPECT_EQ(s->batch, 512);
  EXPECT_EQ(s->unit, Unit::kSamples);
  EXPECT_EQ(s->seq_len, 1024);
  EXPECT_EQ(s->devices, 1);
  EXPECT_THAT(raw.warnings, Contains(HasSubstr("devices = 1 assumed; give PATH@devices=N")));
  EXPECT_THAT(raw.warnings, Contains(HasSubstr("train.log:713: 1 step(s) left out whose time "
                                               "spans an evaluation")));
  EXPECT_THAT(raw.warnings, Contains(HasSubstr("train.log:587: 12 warm-up line(s) left out")));
  // The 187 differences: 211 ms 2 times, 212 ms 15, 213 ms 52 (69 below 214),
  // 214 ms 73, ... (two outliers of 461 and 463 ms); the 94th smallest is 214 ms,
  // so the median is 512 / 0.214 sequences/s.
  const Result r = ParseNanogpt(text);
  EXPECT_NEAR(MedianThroughputNanogpt(r.samples), 512 / 0.214, 1e-9);
}

TEST(NanogptReader, RealModdedNanogptRecordCountsTokens) {
  const std::string text = Data(kSub3Min);
  EXPECT_EQ(DetectFormat(text), Format::kNanogpt);
  const Result raw = ReadNanogpt(text);
  // Steps 13-200 at lines 686-798 and 800-874 (line 799: the step-125
  // evaluation, train_time 14281 ms against step 125's 14159 ms: the GPU had
  // not caught up when step 125 was printed), less step 126 (line 800: 18 ms
  // after the evaluation, 140 ms after step 125): 187 samples. Line 686: step 13
  // at 370 ms after step 12's 248 ms (line 685): 122 ms.
  ASSERT_EQ(raw.samples.size(), 187u);
  EXPECT_EQ(AtLine(raw.samples, 800), nullptr);
  const Sample* s = AtLine(raw.samples, 686);
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(*s->step_time_s, 0.122, 1e-12);
  // Line 462: "batch_size = 8*64*1024 # batch size in tokens" = 524288 tokens;
  // line 468: "seq_len = 64*1024 # FlexAttention sequence length" = 65536.
  EXPECT_EQ(s->batch, 524288);
  EXPECT_EQ(s->unit, Unit::kTokens);
  EXPECT_EQ(s->seq_len, 65536);
  // ParseSamples: 524288 / 65536 = 8 sequences per step. The 187 differences:
  // 121 ms once, 122 ms 44 times (45 below 123), 123 ms 74, ...; the 94th
  // smallest is 123 ms, so the median
  // is 8 / 0.123 sequences/s (524288 / 0.123 = 4.26 M tokens/s).
  const Result r = ParseNanogpt(text);
  ASSERT_EQ(r.samples.size(), 187u);
  EXPECT_EQ(r.samples[0].batch, 8);
  EXPECT_NEAR(MedianThroughputNanogpt(r.samples), 8 / 0.123, 1e-9);
}

TEST(NanogptReader, ModdedBatchThatCannotBeReadIsAskedFor) {
  // Assembled: step lines of modded-nanogpt's format, without the code, and
  // with a Hyperparameters whose batch_size comment names no unit.
  const std::string steps =
      "step:11/100 train_time:214ms step_avg:nanms\n"
      "step:12/100 train_time:428ms step_avg:nanms\n"
      "step:13/100 train_time:641ms step_avg:213.66ms\n";
  EXPECT_THAT(ErrorOfNanogpt(steps), HasSubstr("train.log:3: field 'batch': the log does not state "
                                               "the batch size; give it as PATH@batch=N"));
  const std::string code =
      "@dataclass\n"
      "class Hyperparameters:\n"
      "    batch_size : int = 8*64 # the batch\n"
      "args = Hyperparameters()\n";
  const Result raw = ReadNanogpt(code + steps);
  ASSERT_EQ(raw.samples.size(), 1u);
  EXPECT_EQ(raw.samples[0].batch, 0);
  EXPECT_THAT(raw.warnings, Contains(HasSubstr("train.log:3: batch_size = 8*64 in the printed "
                                               "Hyperparameters is not read")));
  Attributes a;
  a.batch = 512;
  EXPECT_EQ(ParseNanogpt(code + steps, a).samples[0].batch, 512);
}

// --- torchtitan ----------------------------------------------------------------------

// Checks one of the three torchtitan runs (Qwen3 14B, 8 x B200): the mesh line
// (20 or 21: "pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1": 8 GPUs, all
// data parallel) and the trainer line; step 1 (`step1_line`) is left out, steps
// 2-10 are samples.
void CheckTitan(const char* name, int step1_line, double global_batch, double median_tps) {
  SCOPED_TRACE(name);
  const std::string text = Data(name);
  EXPECT_EQ(DetectFormat(text), Format::kNanogpt);
  const Result raw = ReadNanogpt(text);
  ASSERT_EQ(raw.samples.size(), 9u);
  EXPECT_EQ(AtLine(raw.samples, step1_line), nullptr);
  const Sample& s = raw.samples.front();
  EXPECT_EQ(s.unit, Unit::kTokens);
  EXPECT_EQ(s.batch, global_batch * 128);
  EXPECT_EQ(s.seq_len, 128);
  EXPECT_EQ(s.devices, 8);
  EXPECT_EQ(raw.warnings.size(), 1u);  // the warm-up line only: devices and batch are stated
  // tps is per GPU: global tokens/s = tps x 8; in sequences of 128 tokens,
  // tps x 8 / 128.
  const Result r = ParseNanogpt(text);
  EXPECT_EQ(r.samples.front().batch, global_batch);
  EXPECT_NEAR(MedianThroughputNanogpt(r.samples), median_tps * 8 / 128, 1e-9);
}

TEST(NanogptReader, RealTorchtitanRuns) {
  // run214, line 39: "local batch size 160, global batch size 1280, gradient
  // accumulation steps 1, sequence length 128". Steps 2-10 (lines 45-53) tps:
  // 9913, 9898, 10142, 10104, 10290, 10360, 10360, 10424, 10530; sorted, the 5th
  // is 10290. Cross-check with the timestamps: step 6 (line 49, 02:13:54,436)
  // after step 5 (02:13:52,445) is 1.991 s; 1280 x 128 / (10290 x 8) = 1.990 s.
  CheckTitan(kTitan214, 41, 1280, 10290);
  // run217 (no colour codes), line 39: the same batch. tps of lines 45-53:
  // 9891, 9893, 10139, 10280, 10231, 10318, 10332, 10368, 10550; median 10280.
  CheckTitan(kTitan217, 41, 1280, 10280);
  // run379, line 321: "local batch size 128, global batch size 1024, ...,
  // sequence length 128". tps of lines 331-339: 10770, 10911, 10965, 11110,
  // 11234, 11412, 11359, 11504, 11248; sorted, the 5th is 11234.
  CheckTitan(kTitan379, 329, 1024, 11234);

  // Line 49 of run214 (step 6), before ParseSamples: 10290 x 8 = 82320 tokens/s.
  const Result run214 = ReadNanogpt(Data(kTitan214));  // kept: AtLine points into it
  const Sample* s = AtLine(run214.samples, 49);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->throughput_sps, 82320);
  EXPECT_FALSE(s->step_time_s.has_value());
}

TEST(NanogptReader, TorchtitanAttributesThatContradictTheLog) {
  Attributes a;
  a.devices = 4;
  EXPECT_THAT(ErrorOfNanogpt(Data(kTitan217), a),
              HasSubstr("train.log:45: field 'devices': devices=4 contradicts the log's "
                        "data-parallel size 8"));
}

TEST(NanogptReader, TorchtitanWithoutStartUpLines) {
  // Assembled from run217's lines 45-47 alone: no mesh, no trainer line.
  const std::string text =
      "[rank0]:[titan] 2026-05-20 02:22:58,212 - root - INFO - step:  2  loss: 10.60813  "
      "grad_norm: 49.2500  memory: 169.10GiB(94.81%)  tps: 9,891  tflops: 833.38  mfu: 37.04%\n"
      "[rank0]:[titan] 2026-05-20 02:23:00,282 - root - INFO - step:  3  loss: 15.82324  "
      "grad_norm: 26.2500  memory: 169.10GiB(94.81%)  tps: 9,893  tflops: 833.58  mfu: 37.05%\n";
  EXPECT_THAT(ErrorOfNanogpt(text), HasSubstr("give it as PATH@batch=N"));
  Attributes a;
  a.batch = 163840;
  a.unit = Unit::kTokens;
  a.devices = 8;
  const Result r = ParseNanogpt(text, a);
  // Line 2 (line 1 is the first step seen): 9893 tokens/s per GPU x 8 = 79144.
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.samples[0].throughput_sps, 79144);
  EXPECT_EQ(r.samples[0].devices, 8);
  EXPECT_THAT(r.warnings, ::testing::Not(Contains(HasSubstr("1 GPU assumed"))));
}

// --- Malformed input -----------------------------------------------------------------

TEST(NanogptReader, BadAndTruncatedLinesAreDataErrors) {
  const std::string first = "iter 0: loss 4.4512, time 23218.37ms, mfu -100.00%\n";
  EXPECT_THAT(ErrorOfNanogpt(first + "iter 1: loss 4.4586, time 19\n"),
              HasSubstr("train.log:2: field 'time': expected a number followed by 'ms', got "
                        "'19' (line cut short?)"));
  EXPECT_THAT(ErrorOfNanogpt(first + "iter 1: loss 4.4586, ti\n"),
              HasSubstr("train.log:2: field 'time': an iteration line without it (cut short?)"));
  EXPECT_THAT(ErrorOfNanogpt(first + "iter 1: loss nan, time nanms, mfu 1.00%\n"),
              HasSubstr("train.log:2: field 'time': is NaN"));
  EXPECT_THAT(ErrorOfNanogpt(first + "iter 1: loss 4.4, time -193.77ms, mfu 1.00%\n"),
              HasSubstr("train.log:2: field 'time': must be > 0"));
  // The warm-up line is checked as well.
  EXPECT_THAT(ErrorOfNanogpt("iter 0: loss 4.4, time infms, mfu 1.00%\n"),
              HasSubstr("train.log:1: field 'time': is infinite"));

  EXPECT_THAT(ErrorOfNanogpt("step:13/100 train_time:641ms step_avg:213.66ms\nstep:14/100 "
                             "train_time:85\n"),
              HasSubstr("train.log:2: field 'step_avg': a step line without it (cut short?)"));
  EXPECT_THAT(ErrorOfNanogpt("step:13/100 train_time:641ms step_avg:213.66ms\nstep:14/100 "
                             "train_time:-854ms step_avg:213.44ms\n"),
              HasSubstr("train.log:2: field 'train_time': must be > 0"));

  const std::string titan =
      "step:  2  loss: 10.6  memory: 169.10GiB(94.81%)  tps: 9,891  tflops: 833.38  mfu: 37.04%\n";
  EXPECT_THAT(ErrorOfNanogpt(titan + "step:  3  loss: 15.8  memory: 169.10GiB(94.81%)  tps: 9,8\n"),
              HasSubstr("train.log:2: field 'mfu': a torchtitan step line that ends before it"));
  EXPECT_THAT(ErrorOfNanogpt(titan + "step:  3  loss: 15.8  tps: 9,8  tflops: 1  mfu: 3%\n"),
              HasSubstr("train.log:2: field 'tps': expected a number, got '9,8'"));
  EXPECT_THAT(ErrorOfNanogpt(titan + "step:  3  loss: 15.8  tps: nan  tflops: 1  mfu: 3%\n"),
              HasSubstr("train.log:2: field 'tps': is NaN"));
  EXPECT_THAT(ErrorOfNanogpt("Building device mesh with parallelism: pp=1, dp_replicate=1, "
                             "dp_shard=-1, cp=1, tp=1, ep=1\n" +
                             titan),
              HasSubstr("train.log:1: field 'dp_shard': must be > 0"));
}

TEST(NanogptReader, JunkIsNeverACrash) {
  ReadOptions options;
  options.format = Format::kNanogpt;
  options.warn = [](const std::string&) {};
  const std::string binary(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0iter 1: loss 1, time 5ms\n",
      34);
  EXPECT_THROW(ParseSamples(binary, kSourceNanogpt, {}, options), DataError);
  EXPECT_THROW(ParseSamples("iter 99999999999999999: loss , time ms\nstep:/ step: loss: tps:\n",
                            kSourceNanogpt, {}, options),
               DataError);
  Attributes a;
  a.batch = 64;
  testing::ParseCutAndMutated({Data(kNanogpt).substr(0, 4000), Data(kTitan214), Data(kMuon)},
                              "0123456789:.,-% \n\x1b[mnasi", 200, 12, kSourceNanogpt, a, options);
}

TEST(NanogptReader, DetectionLeavesOtherFormatsAlone) {
  EXPECT_FALSE(io::LooksLikeNanogpt(
      " iteration       20/  171661 | consumed samples:         5120 | elapsed time per "
      "iteration (ms): 484.7 | global batch size:   256 |\n"));
  EXPECT_FALSE(io::LooksLikeNanogpt(
      "[2022-10-31 10:59:51,436] [INFO] [timer.py:198:stop] 0/10, "
      "RunningAvgSamplesPerSec=428.07, CurrSamplesPerSec=431.95, MemAllocated=1.64GB\n"));
  EXPECT_FALSE(io::LooksLikeNanogpt(
      "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  (0.148s,  "
      "863.22/s)  LR: 1.001e-02  Data: 0.053 (0.051)\n"));
  EXPECT_FALSE(io::LooksLikeNanogpt("step 200: train loss 2.4314, val loss 2.4601\n"));
  EXPECT_FALSE(io::LooksLikeNanogpt("Epoch 1/10\n100/100 - 5s - loss: 0.5 - step: 3\n"));
  // nanoGPT's own lines are.
  EXPECT_TRUE(io::LooksLikeNanogpt("iter 5: loss 4.0060, time 229.57ms, mfu 106.93%\n"));
  EXPECT_EQ(ParseFormat("nanogpt"), Format::kNanogpt);
  EXPECT_EQ(FormatName(Format::kNanogpt), "nanogpt");
}

}  // namespace
}  // namespace fitspeed
