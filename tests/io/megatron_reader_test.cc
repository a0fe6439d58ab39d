// Tests of the Megatron-LM / Megatron-DeepSpeed / NeMo 2 iteration-line reader on
// logs and lines quoted from public sources (each test names its source). Tests
// marked "assembled" join real lines with lines written in Megatron's own format,
// with numbers chosen for the hand calculation in the comment. Expected numbers are
// read off the raw lines by hand, never from the reader's output.
#include <fmt/format.h>
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
using ::testing::IsEmpty;

const char kSourceMegatron[] = "megatron.log";

// tests/data/logs-wild/megatron-nemo/README.md: lines 165-373 (the arguments
// dump) and 2736-2830 (iterations 10-220) of a Megatron-DeepSpeed GPT-3 125M run
// on 8 GPUs, microsoft/Megatron-DeepSpeed examples/random_ltd. Excerpt line =
// original line - 164 for the first part, original line - 2526 for the second.
const char kExcerpt[] =
    "logs-wild/megatron-nemo/"
    "microsoft-Megatron-DeepSpeed_examples_random_ltd_gpt3-0.125B-baseline.excerpt.log";

using fitspeed::testing::AtLine;
using fitspeed::testing::ReadData;
using Result = fitspeed::testing::ReadResult;

Result ReadMegatron(std::string_view text, const Attributes& attributes = {}) {
  return testing::ReadWith(io::ReadMegatron, text, kSourceMegatron, attributes);
}

std::string ErrorOfMegatron(std::string_view text, const Attributes& attributes = {}) {
  return testing::DataErrorOf([&] { ReadMegatron(text, attributes); });
}

TEST(MegatronReader, RealMegatronDeepSpeedExcerpt) {
  const Result r = ReadMegatron(ReadData(kExcerpt));
  // 22 iteration lines (iterations 10, 20, ..., 220). Left out: iteration 10
  // (line 214, the first interval: 1001.5 ms against ~485), and iterations 110
  // and 210 (lines 257 and 300), whose intervals hold the evaluations printed
  // at lines 253 and 296 ("validation loss at iteration 100/200"; 802.8 and
  // 806.4 ms). 22 - 3 = 19 samples.
  ASSERT_EQ(r.samples.size(), 19u);
  EXPECT_EQ(AtLine(r.samples, 214), nullptr);
  EXPECT_EQ(AtLine(r.samples, 257), nullptr);
  EXPECT_EQ(AtLine(r.samples, 300), nullptr);

  // Line 218 (original 2744): " iteration 20/ 171661 | consumed samples: 5120 |
  // ... | elapsed time per iteration (ms): 484.7 | ... | global batch size: 256
  // |reserve_length: 256 | ...": 484.7 ms = 0.4847 s per step of 256 sequences.
  // Arguments dump: data_parallel_size 8 (line 41), seq_length 2048 (line 176),
  // fp16 True (line 67).
  const Sample* s = AtLine(r.samples, 218);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.4847);
  EXPECT_FALSE(s->throughput_sps.has_value());
  EXPECT_EQ(s->batch, 256);
  EXPECT_EQ(s->devices, 8);
  EXPECT_EQ(s->label, "seq=2048,ltd=256");
  EXPECT_EQ(s->precision, "fp16");

  // Line 250 (original 2776), iteration 100: 484.4 ms, reserve_length 272.
  s = AtLine(r.samples, 250);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.4844);
  EXPECT_EQ(s->label, "seq=2048,ltd=272");
  // Line 261 (original 2787), iteration 120, after the evaluated interval: 486.1 ms.
  s = AtLine(r.samples, 261);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.4861);
  // Line 304 (original 2830), iteration 220: 493.9 ms, reserve_length 288.
  s = AtLine(r.samples, 304);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.4939);
  EXPECT_EQ(s->label, "seq=2048,ltd=288");

  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("megatron.log:257: 2 interval(s) left out that include "
                                       "an evaluation"));
}

TEST(MegatronReader, RealExcerptIsDetectedAndReadThroughParseSamples) {
  const std::string text = ReadData(kExcerpt);
  EXPECT_EQ(DetectFormat(text), Format::kMegatron);
  // The arguments dump alone (excerpt lines 1-209) is enough to tell: the real
  // file's first iteration line is 232 kB in, past the 64 KiB that detection reads.
  EXPECT_TRUE(io::LooksLikeMegatron(text.substr(0, text.find(" iteration "))));
  ReadOptions options;
  options.warn = [](const std::string&) {};
  const std::vector<Sample> samples = ParseSamples(text, kSourceMegatron, {}, options);
  EXPECT_EQ(samples.size(), 19u);
  EXPECT_EQ(FormatName(Format::kMegatron), "megatron");
  EXPECT_EQ(ParseFormat("megatron"), Format::kMegatron);
}

// NVIDIA Megatron-LM lines from epfLLM/Megatron-LLM issue #11 (no arguments dump
// in the quote).
const char kEpfl[] =
    " iteration      122/  250000 | consumed samples:       124928 | elapsed time per iteration "
    "(ms): 86545.2 | learning rate: 9.150E-06 | global batch size:  1024 | lm loss: 2.504220E+00 "
    "| loss scale: 1.0 | grad norm: 0.231 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |\n"
    " iteration      123/  250000 | consumed samples:       125952 | elapsed time per iteration "
    "(ms): 87871.6 | learning rate: 9.225E-06 | global batch size:  1024 | lm loss: 2.493043E+00 "
    "| loss scale: 1.0 | grad norm: 0.236 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |\n"
    " iteration      124/  250000 | consumed samples:       126976 | elapsed time per iteration "
    "(ms): 89474.8 | learning rate: 9.300E-06 | global batch size:  1024 | lm loss: 2.559583E+00 "
    "| loss scale: 1.0 | grad norm: 0.242 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |\n"
    " iteration      125/  250000 | consumed samples:       128000 | elapsed time per iteration "
    "(ms): 89075.2 | learning rate: 9.375E-06 | global batch size:  1024 | lm loss: 2.477393E+00 "
    "| loss scale: 1.0 | grad norm: 0.356 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |\n";

TEST(MegatronReader, MegatronLmLinesWithoutArguments) {
  const Result r = ReadMegatron(kEpfl);
  // Line 1 is the warm-up; lines 2-4: 87871.6, 89474.8, 89075.2 ms. Consumed
  // samples grow by 125952 - 124928 = 1024 per iteration = the global batch.
  ASSERT_EQ(r.samples.size(), 3u);
  EXPECT_EQ(r.samples[0].line, 2);
  EXPECT_DOUBLE_EQ(*r.samples[0].step_time_s, 87.8716);
  EXPECT_DOUBLE_EQ(*r.samples[1].step_time_s, 89.4748);
  EXPECT_DOUBLE_EQ(*r.samples[2].step_time_s, 89.0752);
  EXPECT_EQ(r.samples[0].batch, 1024);
  EXPECT_EQ(r.samples[0].devices, 1);
  EXPECT_THAT(r.samples[0].label, IsEmpty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("megatron.log:2: the log does not state the "
                                       "data-parallel size"));
  EXPECT_THAT(r.warnings[0], HasSubstr("PATH@devices=N"));
  EXPECT_EQ(DetectFormat(kEpfl), Format::kMegatron);

  // Given devices silence the warning; a batch other than the log's is refused.
  Attributes a;
  a.devices = 64;
  EXPECT_THAT(ReadMegatron(kEpfl, a).warnings, IsEmpty());
  a.batch = 512;
  EXPECT_THAT(ErrorOfMegatron(kEpfl, a),
              HasSubstr("megatron.log:2: field 'batch': batch=512 contradicts the log's global "
                        "batch size 1024"));
}

// bigscience-workshop/bigscience, train/tr11-176B-ml/chronicles.md (BLOOM 176B,
// Megatron-DeepSpeed, elapsed time in seconds): the quoted line, preceded
// (assembled) by the same line as iteration 12694 so that it is not the warm-up.
const char kBloomLine[] =
    " [default7]: iteration    12695/  115311 | consumed samples:      9841584 | consumed tokens:  "
    "20155564032 | elapsed time per iteration (s): 105.22 | learning rate: 5.969E-05 | global "
    "batch size:  2048 | lm loss: 2.463556E+00 | grad norm: 0.174 | num zeros: 0.0 | number of "
    "skipped iterations:   0 | number of nan iterations:   0 | samples per second: 19.463 | "
    "TFLOPs: 149.02 |\n";

std::string BloomPair(std::string_view second) {
  std::string first = kBloomLine;
  first.replace(first.find("12695"), 5, "12694");
  first.replace(first.find("9841584"), 7, "9839536");  // 2048 samples fewer
  return first + std::string(second);
}

TEST(MegatronReader, SamplesPerSecondAgreesWithinRounding) {
  // 2048 / 105.22 s = 19.4640, printed 19.463: elapsed 105.22 +/- 0.005 s gives
  // 2048/105.225 = 19.46306 to 2048/105.215 = 19.46491 samples/s, and 19.463
  // +/- 0.0005 reaches 19.46306. The line agrees.
  const Result r = ReadMegatron(BloomPair(kBloomLine));
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].line, 2);
  EXPECT_DOUBLE_EQ(*r.samples[0].step_time_s, 105.22);
  EXPECT_EQ(r.samples[0].batch, 2048);
  EXPECT_THAT(r.warnings, ::testing::Not(::testing::Contains(HasSubstr("samples per second"))));
}

TEST(MegatronReader, SamplesPerSecondThatDisagreesIsNotRead) {
  // Assembled: the BLOOM line with 9.732 samples/s (half of 19.463, as if counted
  // per replica pair): 2048 / 105.22 = 19.464, so the line contradicts itself.
  std::string bad = kBloomLine;
  bad.replace(bad.find("19.463"), 6, "9.732");
  bad.replace(bad.find("12695"), 5, "12696");
  bad.replace(bad.find("9841584"), 7, "9843632");
  Result r = ReadMegatron(BloomPair(kBloomLine) + bad);
  ASSERT_EQ(r.samples.size(), 1u);  // line 2 only
  EXPECT_EQ(r.samples[0].line, 2);
  ASSERT_EQ(r.warnings.size(), 2u);  // the disagreement, then the devices
  EXPECT_THAT(r.warnings[0], HasSubstr("megatron.log:3: 1 line(s) left out whose samples per "
                                       "second disagrees with global batch size / elapsed time"));
  EXPECT_THAT(r.warnings[0], HasSubstr("9.732 samples/s against 2048 / 105.22 s = 19.464"));
  // When no line agrees, nothing is read and the reader says why.
  bad.replace(bad.find("12696"), 5, "12695");
  bad.replace(bad.find("9843632"), 7, "9841584");
  EXPECT_THAT(ErrorOfMegatron(BloomPair(bad)),
              HasSubstr("megatron.log:2: field 'samples per second': no line's samples per "
                        "second agrees"));
}

// NeMo 2 lines from NVIDIA-BioNeMo/bionemo-recipes pull request #740.
const char kNemo[] =
    "Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 | global_batch_size: "
    "1 | global_step: 120 | reduced_train_loss: 1.233 | train_step_timing in s: 0.03146 | "
    "val_loss: 4.106\n"
    "Training epoch 0, iteration 121/149 | lr: 3e-05 | consumed_samples: 122 | global_batch_size: "
    "1 | global_step: 121 | reduced_train_loss: 1.288 | train_step_timing in s: 0.03163 | "
    "val_loss: 4.106\n"
    "Training epoch 0, iteration 122/149 | lr: 3e-05 | consumed_samples: 123 | global_batch_size: "
    "1 | global_step: 122 | reduced_train_loss: 1.333 | train_step_timing in s: 0.03215 | "
    "val_loss: 4.106\n"
    "Training epoch 0, iteration 123/149 | lr: 3e-05 | consumed_samples: 124 | global_batch_size: "
    "1 | global_step: 123 | reduced_train_loss: 1.245 | train_step_timing in s: 0.03157 | "
    "val_loss: 4.106\n"
    "Training epoch 0, iteration 124/149 | lr: 3e-05 | consumed_samples: 125 | global_batch_size: "
    "1 | global_step: 124 | reduced_train_loss: 1.375 | train_step_timing in s: 0.0317 | "
    "val_loss: 4.106\n"
    "Training epoch 0, iteration 125/149 | lr: 3e-05 | consumed_samples: 126 | global_batch_size: "
    "1 | global_step: 125 | reduced_train_loss: 1.34 | train_step_timing in s: 0.03147 | "
    "val_loss: 4.106\n";

TEST(MegatronReader, NemoStepTimings) {
  const Result r = ReadMegatron(kNemo);
  // Line 1 (iteration 120) is the warm-up; lines 2-6 give one step each:
  // 0.03163, 0.03215, 0.03157, 0.0317, 0.03147 s at global batch 1.
  ASSERT_EQ(r.samples.size(), 5u);
  EXPECT_EQ(r.samples[0].line, 2);
  EXPECT_DOUBLE_EQ(*r.samples[0].step_time_s, 0.03163);
  EXPECT_DOUBLE_EQ(*r.samples[3].step_time_s, 0.0317);
  EXPECT_DOUBLE_EQ(*r.samples[4].step_time_s, 0.03147);
  EXPECT_EQ(r.samples[0].batch, 1);
  EXPECT_EQ(r.samples[0].devices, 1);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("data-parallel size"));
  EXPECT_TRUE(io::LooksLikeMegatron(kNemo));
  EXPECT_EQ(DetectFormat(kNemo), Format::kMegatron);
}

TEST(MegatronReader, NemoLinesWithoutTimingSayWhy) {
  // The same lines without the TimingCallback's field (lines 1-3, shortened).
  const char text[] =
      "Training epoch 0, iteration 120/149 | lr: 3e-05 | global_batch_size: 1 | global_step: 120\n"
      "Training epoch 0, iteration 121/149 | lr: 3e-05 | global_batch_size: 1 | global_step: 121\n"
      "Training epoch 0, iteration 122/149 | lr: 3e-05 | global_batch_size: 1 | global_step: 122\n";
  EXPECT_THAT(ErrorOfMegatron(text),
              HasSubstr("megatron.log:2: field 'train_step_timing in s': NeMo "
                        "iteration lines without"));
}

// A real line of the excerpt (original line 2744), with its numbers as printed.
const char kLine20[] =
    " iteration       20/  171661 | consumed samples:         5120 | consumed tokens:     "
    "10485760 | elapsed time per iteration (ms): 484.7 | learning rate: 1.972E-07 | global batch "
    "size:   256 |reserve_length:   256 | lm loss: 1.074999E+01 | loss scale: 2048.0 | number of "
    "skipped iterations:   0 | number of nan iterations:   0 |\n";

// kLine20 as iteration `n` with consumed samples `consumed`, elapsed `ms`.
std::string Line(int n, long consumed, std::string_view ms = "484.7",
                 std::string_view skipped = "0") {
  std::string s = kLine20;
  s.replace(s.find("      20/"), 9, fmt::format("{:8d}/", n));
  s.replace(s.find("        5120"), 12, fmt::format("{:12d}", consumed));
  s.replace(s.find("484.7"), 5, std::string(ms));
  s.replace(s.find("iterations:   0"), 15, fmt::format("iterations: {:>3}", skipped));
  return s;
}

TEST(MegatronReader, ModelParallelSizesGoToTheLabel) {
  // Assembled: Megatron's start-up line for 16 GPUs as 4 data-parallel replicas
  // of tensor 2 x pipeline 2, then two iteration lines (the first is warm-up).
  const std::string text =
      "using world size: 16, data-parallel-size: 4, tensor-model-parallel size: 2, "
      "pipeline-model-parallel size: 2 \n" +
      Line(10, 2560) + Line(20, 5120);
  const Result r = ReadMegatron(text);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].devices, 4);
  EXPECT_EQ(r.samples[0].label, "ltd=256,tp=2,pp=2");
  EXPECT_THAT(r.warnings, IsEmpty());
  Attributes a;
  a.devices = 16;
  EXPECT_THAT(ErrorOfMegatron(text, a), HasSubstr("megatron.log:3: field 'devices': devices=16 "
                                                  "contradicts the log's data-parallel size 4"));
}

TEST(MegatronReader, StartUpLineOf2020) {
  // Assembled: Megatron-LM's start-up line of 2020 ("using world size: 2 and
  // model-parallel size: 2") says the world size but not the data-parallel size:
  // devices stay 1, with the warning.
  const std::string text =
      "using world size: 2 and model-parallel size: 2 \n" + Line(10, 2560) + Line(20, 5120);
  const Result r = ReadMegatron(text);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].devices, 1);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("megatron.log:3: the log does not state the data-parallel "
                                       "size"));
}

TEST(MegatronReader, IntervalsThatCannotBeTrustedAreLeftOut) {
  // Assembled from kLine20: iterations 10, 20 (2 skipped iterations: no optimizer
  // update in them), 30 (consumed samples grew by 192 per iteration, not 256:
  // the batch changed inside the interval), 40 (fine).
  const std::string text =
      Line(10, 2560) + Line(20, 5120, "470.1", "2") + Line(30, 7040) + Line(40, 9600);
  const Result r = ReadMegatron(text);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].line, 4);
  ASSERT_EQ(r.warnings.size(), 3u);
  EXPECT_THAT(r.warnings[0], HasSubstr("megatron.log:2: 1 interval(s) left out that include "
                                       "skipped iterations"));
  EXPECT_THAT(r.warnings[1], HasSubstr("megatron.log:3: 1 interval(s) left out over which the "
                                       "batch size changed (consumed samples grew by 192 per "
                                       "iteration"));
}

TEST(MegatronReader, RestartsAndRepeats) {
  // Assembled: iterations 10, 20, 20 again (a second rank's copy: ignored), 30,
  // then a restart from a checkpoint at 10 and 20: each run's first line is
  // warm-up, so lines 2, 4 and 6 remain.
  const std::string text = Line(10, 2560) + Line(20, 5120) + Line(20, 5120) + Line(30, 7680) +
                           Line(10, 2560, "990.0") + Line(20, 5120, "485.5");
  const Result r = ReadMegatron(text);
  ASSERT_EQ(r.samples.size(), 3u);
  EXPECT_EQ(r.samples[0].line, 2);
  EXPECT_EQ(r.samples[1].line, 4);
  EXPECT_EQ(r.samples[2].line, 6);
  EXPECT_DOUBLE_EQ(*r.samples[2].step_time_s, 0.4855);
}

TEST(MegatronReader, ColouredAndPrefixedLines) {
  // A launcher's rank prefix and ANSI colours around real line text.
  std::string first = Line(10, 2560);
  std::string second = Line(20, 5120, "481.6");
  first.pop_back();  // the newline
  second.pop_back();
  const std::string text =
      "[default0]: \x1b[32m" + first + "\x1b[0m\n" + "[default0]: \x1b[32m" + second + "\x1b[0m\n";
  const Result r = ReadMegatron(text);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].line, 2);
  EXPECT_DOUBLE_EQ(*r.samples[0].step_time_s, 0.4816);
  EXPECT_TRUE(io::LooksLikeMegatron(text));
}

TEST(MegatronReader, OldLinesWithoutBatchNeedTheAttribute) {
  // Assembled in Megatron-LM's 2020 form (no consumed samples, no global batch
  // size on the line, no arguments dump): the batch must be given.
  const char text[] =
      " iteration      100/  500000 | elapsed time per iteration (ms): 535.1 | learning rate: "
      "1.500E-04 | lm loss: 7.543213E+00 | loss scale: 65536.0 | number of skipped iterations:   "
      "0 | number of nan iterations:   0 |\n"
      " iteration      200/  500000 | elapsed time per iteration (ms): 531.9 | learning rate: "
      "1.500E-04 | lm loss: 7.123456E+00 | loss scale: 65536.0 | number of skipped iterations:   "
      "0 | number of nan iterations:   0 |\n";
  ReadOptions options;
  options.warn = [](const std::string&) {};
  try {
    ParseSamples(text, kSourceMegatron, {}, options);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("megatron.log:2: field 'batch': the log does not state the "
                                    "batch size; give it as PATH@batch=N"));
  }
  Attributes a;
  a.batch = 512;
  const std::vector<Sample> samples = ParseSamples(text, kSourceMegatron, a, options);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].batch, 512);
  EXPECT_DOUBLE_EQ(*samples[0].step_time_s, 0.5319);
}

TEST(MegatronReader, BadNumbersAreDataErrors) {
  const std::string first = Line(10, 2560);
  EXPECT_THAT(ErrorOfMegatron(first + Line(20, 5120, "nan")),
              HasSubstr("megatron.log:2: field 'elapsed time per iteration (ms)': is NaN"));
  EXPECT_THAT(ErrorOfMegatron(first + Line(20, 5120, "-484.7")),
              HasSubstr("megatron.log:2: field 'elapsed time per iteration (ms)': must be > 0"));
  EXPECT_THAT(ErrorOfMegatron(first + Line(20, 5120, "0.0")),
              HasSubstr("megatron.log:2: field 'elapsed time per iteration (ms)': must be > 0"));
  EXPECT_THAT(ErrorOfMegatron(first + Line(20, 5120, "fast!")),
              HasSubstr("megatron.log:2: field 'elapsed time per iteration (ms)': expected a "
                        "number, got 'fast!'"));
  // The warm-up line is checked as well.
  EXPECT_THAT(ErrorOfMegatron(Line(10, 2560, "inf")),
              HasSubstr("megatron.log:1: field 'elapsed time per iteration (ms)': is infinite"));
  std::string batch = Line(20, 5120);
  batch.replace(batch.find("size:   256"), 11, "size:  -256");
  EXPECT_THAT(ErrorOfMegatron(first + batch),
              HasSubstr("megatron.log:2: field 'global batch size': must be > 0"));
  std::string consumed = Line(20, 5120);
  consumed.replace(consumed.find("        5120"), 12, "       -5120");
  EXPECT_THAT(ErrorOfMegatron(first + consumed),
              HasSubstr("megatron.log:2: field 'consumed samples': must be >= 0"));
  EXPECT_THAT(ErrorOfMegatron("------------------------ arguments ------------------------\n"
                              "  data_parallel_size .............................. eight\n"),
              HasSubstr("megatron.log:2: field 'data_parallel_size': expected a number, got "
                        "'eight'"));
  EXPECT_THAT(ErrorOfMegatron("using world size: 8, data-parallel-size: 2.5, tensor-model-parallel "
                              "size: 1, pipeline-model-parallel size: 1\n"),
              HasSubstr("megatron.log:1: field 'data-parallel size': must be a whole number"));
}

TEST(MegatronReader, TruncatedLinesAreDataErrors) {
  const std::string first = Line(10, 2560);
  const std::string full = Line(20, 5120);
  // Cut inside the elapsed time: "(ms): 48" would be a wrong number, so the
  // unfinished last field is not read at all.
  const std::string cut_time = full.substr(0, full.find("484.7") + 2) + "\n";
  EXPECT_THAT(ErrorOfMegatron(first + cut_time),
              HasSubstr("megatron.log:2: field 'elapsed time per iteration (ms)': the line ends "
                        "before it (cut short?)"));
  const std::string cut_batch = full.substr(0, full.find("global batch") + 8) + "\n";
  EXPECT_THAT(ErrorOfMegatron(first + cut_batch),
              HasSubstr("megatron.log:2: field 'global batch size': the line ends before it"));
  // Cut after the batch: what the line states is whole, and it is read.
  const std::string cut_late = full.substr(0, full.find("lm loss") + 4) + "\n";
  EXPECT_EQ(ReadMegatron(first + cut_late).samples.size(), 1u);
}

TEST(MegatronReader, JunkIsNeverACrash) {
  ReadOptions options;
  options.format = Format::kMegatron;
  options.warn = [](const std::string&) {};
  const std::string binary(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0 iteration 10/ 20 |",
      29);
  EXPECT_THROW(ParseSamples(binary, kSourceMegatron, {}, options), DataError);
  EXPECT_THROW(ParseSamples("iteration iteration 1/ | | : : |\n| iteration 99999999999999999/1 |",
                            kSourceMegatron, {}, options),
               DataError);
  EXPECT_THROW(ParseSamples("no megatron here\n", kSourceMegatron, {}, options), DataError);
}

TEST(MegatronReader, DetectionLeavesOtherFormatsAlone) {
  // The evaluation line alone, DeepSpeed's timer line (both from the excerpt),
  // and lines of other readers' formats (see their tests) are not Megatron's.
  EXPECT_FALSE(io::LooksLikeMegatron(
      " validation loss at iteration 100 | lm loss value: 9.661073E+00 | lm loss PPL: "
      "1.569461E+04 | \n"));
  EXPECT_FALSE(io::LooksLikeMegatron(
      "[2022-10-31 10:59:51,436] [INFO] [timer.py:198:stop] 0/10, "
      "RunningAvgSamplesPerSec=428.0729589385703, CurrSamplesPerSec=431.9529870656501, "
      "MemAllocated=1.64GB, MaxMemAllocated=7.01GB\n"));
  EXPECT_FALSE(io::LooksLikeMegatron("10\timages/sec: 146.6 +/- 0.3 (jitter = 0.6)\t7.906\n"));
  EXPECT_FALSE(io::LooksLikeMegatron(
      "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  (0.148s,  "
      "863.22/s)  LR: 1.001e-02  Data: 0.053 (0.051)\n"));
  EXPECT_FALSE(io::LooksLikeMegatron(
      "{'train_runtime': 6132.3668, 'train_samples_per_second': 2.609, 'epoch': 0.34}\n"));
  // A settings dump without Megatron's header is not enough.
  EXPECT_FALSE(io::LooksLikeMegatron("  tensor_model_parallel_size ...... 1\n"));
}

}  // namespace
}  // namespace fitspeed
