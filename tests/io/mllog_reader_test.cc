// Tests of the MLPerf ":::MLLOG" reader on the six MLPerf Training v0.7
// ResNet-50 logs in tests/data/mllog (mlcommons/training_results_v0.7,
// <submitter>/results/<system>/resnet/result_0.txt) and on small texts in
// their style. Expected epoch times are differences of time_ms values quoted
// from the logs.
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

constexpr double kImageNetTrainSamples = 1281167;  // train_samples in every log

// A log of tests/data/mllog.
std::string ReadMllogData(const std::string& name) { return testing::ReadData("mllog/" + name); }

// Through the public entry point: attributes applied, samples validated.
std::vector<Sample> ParseMllog(std::string_view text, int skip_first_epochs = 1,
                               const Attributes& attributes = {}) {
  ReadOptions options;
  options.format = Format::kMllog;
  options.skip_first_epochs = skip_first_epochs;
  return ParseSamples(text, "test.log", attributes, options);
}

// The reader alone: what the log states, before attributes and validation.
std::vector<Sample> ReadRawMllog(std::string_view text, int skip_first_epochs = 1) {
  const std::string source = "raw.log";
  const Attributes attributes;
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return io::ReadMllog(text, io::ReaderContext{source, attributes, options});
}

// A real log of ../shared/data/logs-wild/mllog, copied to tests/data/logs-wild/mllog.
std::string ReadWildMllog(const std::string& name) {
  return ReadMllogData("../logs-wild/mllog/" + name);
}

// Samples and the warnings the reader gave.
std::vector<Sample> ParseWarned(std::string_view text, std::vector<std::string>& warnings) {
  ReadOptions options;
  options.format = Format::kMllog;
  options.warn = [&](const std::string& w) { warnings.push_back(w); };
  return ParseSamples(text, "test.log", {}, options);
}

std::string DataErrorMessageMllog(std::string_view text) {
  return testing::DataErrorOf([&] { ReadRawMllog(text); });
}

// One event line in the style of the NVIDIA logs (mlperf-logging 0.7 output).
std::string Event(const std::string& prefix, long long time_ms, const std::string& key,
                  const std::string& metadata, const std::string& value = "null") {
  return prefix + ":::MLLOG {\"namespace\": \"\", \"time_ms\": " + std::to_string(time_ms) +
         ", \"event_type\": \"POINT_IN_TIME\", \"key\": \"" + key + "\", \"value\": " + value +
         ", \"metadata\": {\"file\": \"train.py\", \"lineno\": 1" +
         (metadata.empty() ? "" : ", " + metadata) + "}}\n";
}

TEST(MllogReader, NvidiaEpochTimeIsTheDifferenceOfItsTimestamps) {
  const std::vector<Sample> samples =
      ParseMllog(ReadMllogData("NVIDIA_dgxa100_ngc20.06_mxnet_resnet_result_0.txt"));
  // 41 epoch intervals (epoch_num 1..41); epoch 1 is dropped as warm-up.
  ASSERT_EQ(samples.size(), 40u);
  const Sample& s = samples.front();
  // Line 170: "time_ms": 1592669281196, "key": "epoch_start", ... "epoch_num": 2
  // Line 190: "time_ms": 1592669337854, "key": "epoch_stop",  ... "epoch_num": 2
  // 1592669337854 - 1592669281196 = 56658 ms.
  EXPECT_DOUBLE_EQ(*s.epoch_time_s, 56.658);
  EXPECT_EQ(*s.epoch, 2);
  EXPECT_EQ(s.line, 190);
  EXPECT_EQ(s.batch, 3264);  // line 97: "key": "global_batch_size", "value": 3264
  EXPECT_EQ(s.devices, 1);
  EXPECT_EQ(*s.samples_per_epoch, kImageNetTrainSamples);
  EXPECT_EQ(s.label, "1xNVIDIA DGX A100");  // line 14: submission_platform
  EXPECT_EQ(s.steps_rule, StepsRule::kDropRemainder);
  EXPECT_EQ(*samples.back().epoch, 41);
}

TEST(MllogReader, SkipZeroKeepsTheWarmUpEpoch) {
  const std::vector<Sample> samples =
      ParseMllog(ReadMllogData("NVIDIA_dgxa100_ngc20.06_mxnet_resnet_result_0.txt"), 0);
  ASSERT_EQ(samples.size(), 41u);
  // Lines 116 and 141: epoch 1 runs from 1592669215245 to 1592669278705 = 63460 ms.
  EXPECT_DOUBLE_EQ(*samples.front().epoch_time_s, 63.460);
  EXPECT_EQ(*samples.front().epoch, 1);
}

TEST(MllogReader, IntelEpochAgreesWithMxnetTimeCost) {
  // The first :::MLLOG line is 182 kB into this file, past the 64 KiB that
  // auto-detection looks at, so the format is named.
  const std::vector<Sample> samples =
      ParseMllog(ReadMllogData("Intel_1-node-8s-cpx-2-mxnet_resnet_result_0.txt"));
  ASSERT_EQ(samples.size(), 39u);  // epochs 2..40
  // Lines 2990 and 2997: epoch 2 from 1592879947831.559326 to 1592881577123.110352 ms,
  // 1629291.551026 ms. MXNet's own line 2999 says "Epoch[1] Time cost=1629.292".
  EXPECT_NEAR(*samples.front().epoch_time_s, 1629.291551026, 1e-6);
  EXPECT_NEAR(*samples.front().epoch_time_s, 1629.292, 0.0005);
  EXPECT_EQ(samples.front().batch, 4096);
  EXPECT_EQ(samples.front().label, "one node with Cooperlake");
}

TEST(MllogReader, BlocksSubtractTheEvaluationInside) {
  // Google's V100 log has blocks only, the evaluation between block_start and block_stop.
  const std::vector<Sample> samples =
      ParseMllog(ReadMllogData("Google_gpu-v100-8-TF2.0_resnet_result_0.txt"));
  // 10 blocks (first epochs 1, 4, 8, ..., 36); the block starting at epoch 1 is dropped.
  ASSERT_EQ(samples.size(), 9u);
  const Sample& s = samples.front();
  // Line 28 block_start (first_epoch_num 4, epoch_count 4) at 1593155188793,
  // line 29 eval_start at 1593155719235, line 30 eval_stop at 1593155728306,
  // line 32 block_stop at 1593155728314:
  // (539521 - 9071) ms / 4 epochs = 132612.5 ms.
  EXPECT_DOUBLE_EQ(*s.epoch_time_s, 132.6125);
  EXPECT_EQ(*s.epoch, 4);
  EXPECT_EQ(s.line, 32);
  EXPECT_EQ(s.batch, 2496);
}

TEST(MllogReader, ZeroBasedEpochNumbersStartAtOne) {
  // TPU v3-32 counts from 0: the first block is first_epoch_num 0, epoch_count 3.
  const std::vector<Sample> samples =
      ParseMllog(ReadMllogData("Google_tpu-v3-32-TF2.0_resnet_result_0.txt"));
  ASSERT_EQ(samples.size(), 9u);
  const Sample& s = samples.front();
  // Lines 28-32: block first_epoch_num 3 from 1595499516492 to 1595499676392 with an
  // evaluation from 1595499673767 to 1595499673989: (159900 - 222) / 4 = 39919.5 ms.
  EXPECT_DOUBLE_EQ(*s.epoch_time_s, 39.9195);
  EXPECT_EQ(*s.epoch, 4);  // epoch 3 counted from 0
}

TEST(MllogReader, BlocksWithoutEvalIntervalsKeepTheirWholeSpan) {
  // TPU v4-16 logs eval_accuracy but no eval_start/eval_stop, and epoch numbers as
  // floats ("first_epoch_num": 3.0).
  const std::vector<Sample> samples =
      ParseMllog(ReadMllogData("Google_tpu-v4-16-TF_resnet_result_0.txt"));
  ASSERT_EQ(samples.size(), 9u);
  // Lines 26 and 28: 1592969541186 - 1592969356979 = 184207 ms over 4 epochs.
  EXPECT_DOUBLE_EQ(*samples.front().epoch_time_s, 46.05175);
  EXPECT_EQ(*samples.front().epoch, 4);
  EXPECT_EQ(samples.front().batch, 2048);
}

TEST(MllogReader, EveryLogGivesValidSamples) {
  const struct {
    const char* file;
    size_t samples;
    double batch;
  } logs[] = {
      {"Google_gpu-v100-8-TF2.0_resnet_result_0.txt", 9, 2496},
      {"Google_tpu-v3-32-TF2.0_resnet_result_0.txt", 9, 4096},
      {"Google_tpu-v4-16-TF_resnet_result_0.txt", 9, 2048},
      {"Intel_1-node-8s-cpx-2-mxnet_resnet_result_0.txt", 39, 4096},
      {"NVIDIA_dgxa100_n2_ngc20.06_mxnet_resnet_result_0.txt", 40, 3264},
      {"NVIDIA_dgxa100_ngc20.06_mxnet_resnet_result_0.txt", 40, 3264},
  };
  for (const auto& log : logs) {
    const std::vector<Sample> samples = ParseMllog(ReadMllogData(log.file));
    ASSERT_EQ(samples.size(), log.samples) << log.file;
    for (const Sample& s : samples) {
      EXPECT_EQ(s.batch, log.batch) << log.file;
      EXPECT_EQ(*s.samples_per_epoch, kImageNetTrainSamples) << log.file;
      EXPECT_GT(*s.epoch, 1) << log.file;
    }
  }
}

TEST(MllogReader, DetectsTheFormatFromTheStartOfALog) {
  EXPECT_TRUE(io::LooksLikeMllog(ReadMllogData("Google_tpu-v4-16-TF_resnet_result_0.txt")));
  const std::string nvidia = ReadMllogData("NVIDIA_dgxa100_ngc20.06_mxnet_resnet_result_0.txt");
  EXPECT_TRUE(io::LooksLikeMllog(nvidia.substr(0, 64 * 1024)));
  EXPECT_EQ(DetectFormat(nvidia), Format::kMllog);
  EXPECT_FALSE(io::LooksLikeMllog("batch,throughput\n64,100\n"));
  EXPECT_FALSE(io::LooksLikeMllog("echo ':::MLLOG' is the tag\n"));
}

TEST(MllogReader, RankPrefixesBeforeTheTagAreIgnored) {
  const std::string text = Event("0: ", 1000, "global_batch_size", "", "256") +
                           Event("[1,0]<stdout>:", 1001, "train_samples", "", "50000") +
                           Event("0: ", 2000, "epoch_start", "\"epoch_num\": 1") +
                           Event("[1,0]<stdout>:", 9000, "epoch_stop", "\"epoch_num\": 1") +
                           Event("0: ", 9000, "epoch_start", "\"epoch_num\": 2") +
                           Event("[1,0]<stdout>:", 14500, "epoch_stop", "\"epoch_num\": 2");
  const std::vector<Sample> samples = ParseMllog(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 5.5);  // 14500 - 9000 ms
  EXPECT_EQ(samples[0].batch, 256);
  EXPECT_EQ(*samples[0].samples_per_epoch, 50000);
}

TEST(MllogReader, EventsRepeatedByRanksCountOnce) {
  // Two workers log every event; the interval runs from the first start to the
  // last stop. Rank 1's lines come late, as buffered output does.
  std::string text = Event("0: ", 100, "global_batch_size", "", "512") +
                     Event("1: ", 101, "global_batch_size", "", "512") +
                     Event("0: ", 102, "train_samples", "", "1281167") +
                     Event("1: ", 103, "train_samples", "", "1281167");
  for (int epoch = 1; epoch <= 3; ++epoch) {
    const long long t0 = 1000LL * epoch * 10;
    const std::string meta = "\"epoch_num\": " + std::to_string(epoch);
    text += Event("0: ", t0, "epoch_start", meta);
    text += Event("0: ", t0 + 9000, "epoch_stop", meta);
    text += Event("1: ", t0 + 4, "epoch_start", meta);
    text += Event("1: ", t0 + 9012, "epoch_stop", meta);
  }
  const std::vector<Sample> samples = ParseMllog(text);
  ASSERT_EQ(samples.size(), 2u);  // epochs 2 and 3, each once
  // Epoch 2: first start 20000 (rank 0), last stop 29012 (rank 1): 9012 ms.
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 9.012);
  EXPECT_EQ(*samples[0].epoch, 2);
  EXPECT_EQ(*samples[1].epoch, 3);
  EXPECT_EQ(samples[0].batch, 512);
}

TEST(MllogReader, RepeatedEvaluationsAreSubtractedOnce) {
  // Two ranks evaluate inside a block with overlapping intervals, 2000-3000 and
  // 2500-3500: their union, 1500 ms, is not training time.
  const std::string text =
      Event("", 0, "global_batch_size", "", "1024") + Event("", 0, "train_samples", "", "10000") +
      Event("", 0, "block_start", "\"first_epoch_num\": 1, \"epoch_count\": 1") +
      Event("", 1000, "block_stop", "\"first_epoch_num\": 1") +
      Event("", 1000, "block_start", "\"first_epoch_num\": 2, \"epoch_count\": 2") +
      Event("0: ", 2000, "eval_start", "\"epoch_num\": 3") +
      Event("1: ", 2500, "eval_start", "\"epoch_num\": 3") +
      Event("0: ", 3000, "eval_stop", "\"epoch_num\": 3") +
      Event("1: ", 3500, "eval_stop", "\"epoch_num\": 3") +
      Event("", 5000, "block_stop", "\"first_epoch_num\": 2");
  const std::vector<Sample> samples = ParseMllog(text);
  ASSERT_EQ(samples.size(), 1u);
  // (5000 - 1000 - 1500) ms / 2 epochs = 1250 ms.
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 1.25);
  EXPECT_EQ(*samples[0].epoch, 2);
}

TEST(MllogReader, MalformedJsonNamesTheLine) {
  const std::string text = Event("", 1, "global_batch_size", "", "256") +
                           ":::MLLOG {\"time_ms\": 2, \"key\": \"epoch_start\", \n" +
                           Event("", 3, "train_samples", "", "100");
  const std::string message = DataErrorMessageMllog(text);
  EXPECT_NE(message.find("raw.log:2"), std::string::npos) << message;
  EXPECT_NE(message.find("malformed JSON"), std::string::npos) << message;
  EXPECT_NE(DataErrorMessageMllog(":::MLLOG [1, 2]\n").find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(DataErrorMessageMllog(":::MLLOG {\"key\" \"x\"}\n").find("expected ':' at column 9"),
            std::string::npos);
  EXPECT_NE(
      DataErrorMessageMllog(":::MLLOG {\"a\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                            "[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
                            "]]]]]]]]]]]]]]]]]]]}\n")
          .find("nested too deeply"),
      std::string::npos);
  EXPECT_NE(DataErrorMessageMllog(":::MLLOG {\"key\": \"x\"} trailing\n").find("raw.log:1"),
            std::string::npos);
}

TEST(MllogReader, ReadsJsonEscapesAndPythonLiterals) {
  // Python's json module writes NaN for a NaN float; keys and strings may be escaped.
  const std::string text =
      ":::MLLOG {\"time_ms\": 1, \"k\\u0065y\": \"submission_platform\", "
      "\"value\": \"caf\\u00e9 \\ud83d\\ude80\\t\\\"x\\\"\", \"metadata\": {}}\n" +
      Event("", 2, "global_batch_size", "", "64") + Event("", 3, "train_samples", "", "6400") +
      Event("", 4, "eval_accuracy", "\"epoch_num\": 1", "NaN") +
      Event("", 5, "train_loss", "\"values\": [-Infinity, Infinity, 1e-3, -0.5E+2]", "{}") +
      Event("", 1000, "epoch_st\\u0061rt", "\"epoch_num\": 1") +
      Event("", 3000, "epoch_stop", "\"epoch_num\": 1");
  const std::vector<Sample> samples = ParseMllog(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 2.0);  // 3000 - 1000 ms
  // U+00E9 is C3 A9 in UTF-8, U+1F680 (the pair D83D DE80) is F0 9F 9A 80.
  EXPECT_EQ(samples[0].label, "caf\xC3\xA9 \xF0\x9F\x9A\x80\t\"x\"");
}

TEST(MllogReader, BadFieldsAreNamed) {
  EXPECT_NE(DataErrorMessageMllog(Event("", 5, "epoch_start", "\"epoch_num\": 1.5"))
                .find("metadata.epoch_num"),
            std::string::npos);
  EXPECT_NE(DataErrorMessageMllog(Event("", 5, "epoch_start", "")).find("metadata.epoch_num"),
            std::string::npos);
  EXPECT_NE(DataErrorMessageMllog(Event("", 5, "global_batch_size", "", "\"big\"")).find("value"),
            std::string::npos);
  EXPECT_NE(DataErrorMessageMllog(":::MLLOG {\"key\": \"epoch_start\", \"metadata\": "
                                  "{\"epoch_num\": 1}}\n")
                .find("time_ms"),
            std::string::npos);
  // Two different global batches in one file are two runs.
  EXPECT_NE(DataErrorMessageMllog(Event("", 1, "global_batch_size", "", "256") +
                                  Event("", 2, "global_batch_size", "", "512"))
                .find("raw.log:2"),
            std::string::npos);
}

TEST(MllogReader, NoEpochOrBlockIntervalsGivesNoSamples) {
  const std::string text = Event("", 1, "global_batch_size", "", "256") +
                           Event("", 2, "run_start", "") + Event("", 9, "run_stop", "");
  EXPECT_TRUE(ReadRawMllog(text).empty());
  // The caller reports it.
  EXPECT_THROW(ParseMllog(text), DataError);
}

TEST(MllogReader, MissingGlobalBatchSizeLeavesTheBatchToTheUser) {
  const std::string text = Event("", 1, "train_samples", "", "1000") +
                           Event("", 10, "epoch_start", "\"epoch_num\": 1") +
                           Event("", 20, "epoch_stop", "\"epoch_num\": 1");
  const std::vector<Sample> raw = ReadRawMllog(text);
  ASSERT_EQ(raw.size(), 1u);  // the only epoch is kept although it is epoch 1
  EXPECT_EQ(raw[0].batch, 0);
  try {
    ParseMllog(text);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("PATH@batch=N"), std::string::npos) << e.what();
  }
  Attributes attributes;
  attributes.batch = 100;
  const std::vector<Sample> given = ParseMllog(text, 1, attributes);
  ASSERT_EQ(given.size(), 1u);
  EXPECT_EQ(given[0].batch, 100);
  EXPECT_DOUBLE_EQ(*given[0].epoch_time_s, 0.010);  // 20 - 10 ms
}

TEST(MllogReader, AStopWithoutItsStartIsAnError) {
  const std::string text = Event("", 1, "global_batch_size", "", "256") +
                           Event("", 10, "epoch_start", "\"epoch_num\": 1") +
                           Event("", 20, "epoch_stop", "\"epoch_num\": 1") +
                           Event("", 30, "epoch_stop", "\"epoch_num\": 2");
  const std::string message = DataErrorMessageMllog(text);
  EXPECT_NE(message.find("raw.log:4"), std::string::npos) << message;
  EXPECT_NE(message.find("epoch_stop for epoch 2 has no epoch_start"), std::string::npos)
      << message;
  // A stop before its start is an error too.
  EXPECT_NE(DataErrorMessageMllog(Event("", 50, "epoch_start", "\"epoch_num\": 1") +
                                  Event("", 40, "epoch_stop", "\"epoch_num\": 1"))
                .find("before its epoch_start"),
            std::string::npos);
}

TEST(MllogReader, ATruncatedLogKeepsItsCompleteEpochs) {
  const std::string full = ReadMllogData("NVIDIA_dgxa100_ngc20.06_mxnet_resnet_result_0.txt");
  // Cut in the middle of line 212, the epoch_stop of epoch 3: epochs 1 and 2
  // are complete, epoch 3 started on line 191 and never stops.
  size_t at = 0;
  for (int line = 1; line < 212; ++line) at = full.find('\n', at) + 1;
  const std::string cut = full.substr(0, at + 60);
  const std::vector<Sample> samples = ParseMllog(cut);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(*samples[0].epoch, 2);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 56.658);
  // The same broken line followed by a line end is malformed, not cut.
  EXPECT_THROW(ParseMllog(cut + "\n"), DataError);
}

// MLPerf v1.0 Graphcore BERT: blocks numbered 0, 1, ... (epoch_count 1), and
// eval_accuracy's epoch_num counts the samples trained so far. Read as 16
// "epochs" of 2,800,237 samples it gave 22,760 samples/s; its own numbers say
// about 1,420.
TEST(MllogReader, GraphcoreBertCountsSamplesNotEpochs) {
  std::vector<std::string> warnings;
  const std::vector<Sample> samples = ParseWarned(
      ReadWildMllog("mlperf-v1.0_Graphcore_ipu-pod16-POPART-closed_bert_result_0.txt"), warnings);
  // 16 counted intervals (each of the 16 blocks is followed by an
  // eval_accuracy); the first is dropped as warm-up.
  ASSERT_EQ(samples.size(), 15u);
  const Sample& s = samples.front();
  // Line 27: eval_accuracy epoch_num 175523 (time 1621400036475); line 28:
  // block_start 1621400036476; line 29: block_stop 1621400159577; line 31:
  // eval_accuracy epoch_num 350685. Samples 350685 - 175523 = 175162 over the
  // block's 1621400159577 - 1621400036476 = 123101 ms: 1422.92 samples/s.
  EXPECT_EQ(s.line, 31);
  EXPECT_NEAR(*s.throughput_sps, 175162 / 123.101, 1e-9);
  EXPECT_EQ(s.batch, 3072);  // line 9: global_batch_size 3072
  EXPECT_FALSE(s.epoch_time_s.has_value());
  for (const Sample& x : samples) {
    EXPECT_GT(*x.throughput_sps, 1400) << x.line;
    EXPECT_LT(*x.throughput_sps, 1450) << x.line;
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("counts samples"), std::string::npos) << warnings[0];
}

// MLPerf v3.0 NVIDIA GPT-3 (NeMo, 512 H100): one block over the whole run,
// token counts in tracked_stats' step, eval_* epoch_num and epoch_stop.
TEST(MllogReader, NvidiaGpt3CountsTokensInSequences) {
  std::vector<std::string> warnings;
  const std::vector<Sample> samples =
      ParseWarned(ReadWildMllog("mlperf-v3.0_NVIDIA_dgxh100_n64_nemo_gpt3_result_0.txt"), warnings);
  ASSERT_GT(samples.size(), 200u);
  const Sample& s = samples.front();
  // Line 603: tracked_stats step 4194304 at 1684040096650; line 604: step
  // 8388608 at 1684040108718. 4194304 tokens = 2048 sequences of
  // max_sequence_length 2048 (line 597) in 12068 ms: 169.705 sequences/s,
  // close to 2048 / train_step_timing 12.04 s = 170.1.
  EXPECT_EQ(s.line, 604);
  EXPECT_NEAR(*s.throughput_sps, 2048 / 12.068, 1e-9);
  EXPECT_EQ(s.batch, 2048);  // global_batch_size in sequences
  // Intervals with an evaluation inside lose its time: every sample is a
  // step's rate, 165-175 sequences/s, but for the step logged on line 1032,
  // which took 1684043763582 - 1684043749580 = 14002 ms (its own
  // train_step_timing says 13.69 s): 2048 / 14.002 = 146.3.
  for (const Sample& x : samples) {
    if (x.line == 1032) {
      EXPECT_NEAR(*x.throughput_sps, 2048 / 14.002, 1e-9);
      continue;
    }
    EXPECT_GT(*x.throughput_sps, 165) << x.line;
    EXPECT_LT(*x.throughput_sps, 175) << x.line;
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("max_sequence_length 2048 tokens (line 597)"), std::string::npos)
      << warnings[0];
}

// MLPerf v4.0 Google GPT-3 (MaxText, TPU v5p): blocks whose first_epoch_num
// and epoch_count count tokens; the first block_start lies before the log.
TEST(MllogReader, GoogleGpt3BlocksCountTokens) {
  const std::vector<Sample> samples =
      ParseMllog(ReadWildMllog("mlperf-v4.0_Google_cloud-tpu-v5p-1024-maxtext_gpt3_result_0.txt"));
  ASSERT_FALSE(samples.empty());
  // The first counted interval: block_start first_epoch_num 50331648 at
  // 1709184112964 to block_stop at 1709184398702 with eval_accuracy epoch_num
  // 100663296 there: 50331648 / 2048 = 24576 sequences in 285738 ms = 86.008/s.
  // It is dropped as warm-up; the next block is the same within 0.01%.
  for (const Sample& x : samples) EXPECT_NEAR(*x.throughput_sps, 24576 / 285.738, 0.05) << x.line;
}

// MLPerf v2.0 MosaicML ResNet (Composer): epoch_stop carries the number of
// the next epoch, so it comes before the epoch_start of its own number.
TEST(MllogReader, ComposerEpochStopsPairWithThePreviousStart) {
  std::vector<std::string> warnings;
  const std::vector<Sample> samples = ParseWarned(
      ReadWildMllog("mlperf-v2.0_MosaicML_8xA100_80GB-baseline_resnet_result_0.txt"), warnings);
  ASSERT_FALSE(samples.empty());
  // Line 18: epoch_start epoch_num 1 at 1653030764404; line 20: epoch_stop
  // epoch_num 2 at 1653030840900: 76.496 s, epoch 2 (epoch_num 0 is epoch 1).
  EXPECT_EQ(samples.front().line, 20);
  EXPECT_DOUBLE_EQ(*samples.front().epoch_time_s, 76.496);
  EXPECT_EQ(*samples.front().epoch, 2);
  EXPECT_EQ(*samples.front().samples_per_epoch, 1281168);  // train_samples, line 11
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("test.log:17: epoch_stop carries the number of the next epoch"),
            std::string::npos)
      << warnings[0];
}

// MLPerf Llama-2-70B LoRA (v4.0 on): block and eval events carry
// metadata.samples_count, the sequences trained so far, and no epoch numbers.
// Before it was read, every such log was refused ("metadata.first_epoch_num:
// missing"). The real logs are checked in tests/evidence/llm_cases_test.cc.
TEST(MllogReader, LoraSamplesCountIsACount) {
  const std::string text =
      Event("", 1, "submission_benchmark", "", "\"llama2_70b_lora\"") +
      Event("", 2, "global_batch_size", "", "8") + Event("", 1000, "run_start", "") +
      // Warm-up: 0 to 1536 samples in 100 s.
      Event("", 1000, "block_start", "\"samples_count\": 0") +
      Event("", 101000, "block_stop", "\"samples_count\": 1536") +
      Event("", 101000, "eval_start", "\"samples_count\": 1536") +
      Event("", 109000, "eval_stop", "\"samples_count\": 1536") +
      // A block_start numbered with a step's samples (as Habana's logs do) is no count.
      Event("", 109000, "block_start", "\"samples_count\": 192") +
      // 384 samples in 30 s of training after the evaluation: 12.8/s.
      Event("", 139000, "block_stop", "\"samples_count\": 1920") +
      Event("", 139000, "eval_start", "\"samples_count\": 1920") +
      Event("", 147000, "eval_accuracy", "\"samples_count\": 1920", "0.93") +
      Event("", 147000, "eval_stop", "\"samples_count\": 1920") +
      // 384 samples in 50 s, 10 s of it an evaluation without counts: 9.6/s.
      Event("", 187000, "eval_start", "") + Event("", 197000, "eval_stop", "") +
      Event("", 197000, "block_stop", "\"samples_count\": 2304");
  std::vector<std::string> warnings;
  const std::vector<Sample> samples = ParseWarned(text, warnings);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 9);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 384 / 30.0);
  EXPECT_EQ(samples[1].line, 15);
  EXPECT_DOUBLE_EQ(*samples[1].throughput_sps, 384 / 40.0);
  EXPECT_EQ(samples[0].batch, 8);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("counts samples in metadata.samples_count (line 4)"),
            std::string::npos)
      << warnings[0];
  // Without block_start 0 the count starts at run_start.
  const std::vector<Sample> from_run_start =
      ReadRawMllog(Event("", 1, "submission_benchmark", "", "\"llama2_70b_lora\"") +
                       Event("", 1000, "run_start", "") +
                       Event("", 11000, "eval_accuracy", "\"samples_count\": 100", "0.9") +
                       Event("", 31000, "eval_accuracy", "\"samples_count\": 300", "0.9"),
                   0);
  ASSERT_EQ(from_run_start.size(), 2u);
  EXPECT_DOUBLE_EQ(*from_run_start[0].throughput_sps, 100 / 10.0);
  EXPECT_DOUBLE_EQ(*from_run_start[1].throughput_sps, 200 / 20.0);
}

TEST(MllogReader, CountsWithoutAKnownUnitAreRefused) {
  // Epoch numbers that cannot be epochs, from a benchmark whose unit fitspeed does not know.
  const std::string text =
      Event("", 1, "submission_benchmark", "", "\"llm_new\"") +
      Event("", 2, "global_batch_size", "", "8") +
      Event("", 10, "block_start", "\"first_epoch_num\": 0, \"epoch_count\": 1000000") +
      Event("", 20, "eval_accuracy", "\"epoch_num\": 1000000", "0.5");
  const std::string message = DataErrorMessageMllog(text);
  EXPECT_NE(message.find("raw.log:4"), std::string::npos) << message;
  EXPECT_NE(message.find("not for benchmark 'llm_new'"), std::string::npos) << message;
}

TEST(MllogReader, TokensNeedTheSequenceLength) {
  const std::string text =
      Event("", 1, "submission_benchmark", "", "\"gpt3\"") +
      Event("", 2, "global_batch_size", "", "8") +
      Event("", 10, "block_start", "\"first_epoch_num\": 0, \"epoch_count\": 1000000") +
      Event("", 20, "eval_accuracy", "\"epoch_num\": 1000000", "0.5");
  EXPECT_NE(DataErrorMessageMllog(text).find("states no max_sequence_length"), std::string::npos);
  // With it: 1e6 tokens / 1000 = 1000 sequences in 10 ms = 100,000 sequences/s.
  const std::vector<Sample> samples =
      ReadRawMllog(Event("", 0, "max_sequence_length", "", "1000") + text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 1000 / 0.010);
}

TEST(MllogReader, ACountThatGoesBackIsAnError) {
  const std::string text = Event("", 1, "submission_benchmark", "", "\"bert\"") +
                           Event("", 10, "eval_accuracy", "\"epoch_num\": 500", "0.5") +
                           Event("", 20, "eval_accuracy", "\"epoch_num\": 400", "0.5");
  const std::string message = DataErrorMessageMllog(text);
  EXPECT_NE(message.find("raw.log:3"), std::string::npos) << message;
  EXPECT_NE(message.find("fewer than the 500 of line 2"), std::string::npos) << message;
}

// MLPerf v0.7 Transformer: the batch counts tokens, the epoch sentence pairs.
TEST(MllogReader, TransformerBatchInTokensIsNotReadAsSentences) {
  const std::string text = Event("", 1, "submission_benchmark", "", "\"transformer\"") +
                           Event("", 2, "global_batch_size", "", "61440") +
                           Event("", 3, "train_samples", "", "4590101") +
                           Event("", 10, "epoch_start", "\"epoch_num\": 1") +
                           Event("", 20, "epoch_stop", "\"epoch_num\": 1");
  std::vector<std::string> warnings;
  ReadOptions options;
  options.warn = [&](const std::string& w) { warnings.push_back(w); };
  const std::string source = "raw.log";
  const Attributes attributes;
  const std::vector<Sample> samples =
      io::ReadMllog(text, io::ReaderContext{source, attributes, options});
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].batch, 0);  // ParseSamples asks for PATH@batch=N
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 0.010);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(
      warnings[0].find("raw.log:2: MLPerf transformer's global_batch_size 61440 counts tokens"),
      std::string::npos)
      << warnings[0];
}

}  // namespace
}  // namespace fitspeed
