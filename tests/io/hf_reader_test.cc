// Tests of the Hugging Face Trainer reader on lines quoted from published logs
// (each test names its source; "assembled" marks text joined from two sources).
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char kSourceHf[] = "hf.log";

std::vector<Sample> ReadHf(std::string_view text, const Attributes& attributes = {}) {
  const std::string source = kSourceHf;
  const ReadOptions options;
  return io::ReadHf(text, io::ReaderContext{source, attributes, options});
}

std::string ErrorOfHf(std::string_view text) {
  return testing::DataErrorOf([&] { ReadHf(text); });
}

// The end of a QLoRA fine-tuning run of llama-7b (a write-up by guodong.li,
// found by text search): Trainer.log's dict, then the example script's
// log_metrics block repeating the same metrics.
const char kQlora[] =
    "{'loss': 1.6287, 'learning_rate': 0.0002, 'epoch': 0.34}\n"
    "{'loss': 2.3511, 'learning_rate': 0.0002, 'epoch': 0.34}\n"
    "100%|████████████████████████████████| 1000/1000 [1:42:08<00:00,  7.34s/it]Saving PEFT "
    "checkpoint...\n"
    "{'train_runtime': 6132.3668, 'train_samples_per_second': 2.609, 'train_steps_per_second': "
    "0.163, 'train_loss': 1.7447978076934814, 'epoch': 0.34}\n"
    "100%|████████████████████████████████| 1000/1000 [1:42:12<00:00,  6.13s/it]\n"
    "Saving PEFT checkpoint...\n"
    "***** train metrics *****\n"
    "  epoch                    =       0.34\n"
    "  train_loss               =     1.7448\n"
    "  train_runtime            = 1:42:12.36\n"
    "  train_samples_per_second =      2.609\n"
    "  train_steps_per_second   =      0.163\n";

TEST(HfReader, DictAndMetricsBlockOfOneRunGiveOneSample) {
  const std::vector<Sample> samples = ReadHf(kQlora);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 4);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 2.609);
  // No "***** Running training *****" header in this excerpt: the batch comes
  // from PATH@batch=N.
  EXPECT_EQ(samples[0].batch, 0);
  EXPECT_EQ(samples[0].devices, 1);
  EXPECT_FALSE(samples[0].epoch.has_value());
}

// The header of hiyouga/LlamaFactory#4783.
const char kHeader[] =
    "***** Running training *****\n"
    "  Num examples = 900\n"
    "  Num Epochs = 10\n"
    "  Instantaneous batch size per device = 1\n"
    "  Total train batch size (w. parallel, distributed & accumulation) = 16\n"
    "  Gradient Accumulation steps = 8\n"
    "  Total optimization steps = 560\n"
    "  Number of trainable parameters = 21,176,320\n";

TEST(HfReader, HeaderGivesTheGlobalBatchAndTheDevices) {
  // Assembled: kHeader, then kQlora's metrics.
  const std::vector<Sample> samples = ReadHf(std::string(kHeader) + kQlora);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 8 + 4);
  // Total train batch size 16 = 1 per device x 8 accumulation steps x 2 devices.
  EXPECT_EQ(samples[0].batch, 16);
  EXPECT_EQ(samples[0].devices, 2);
  // ParseSamples keeps the batch the log states over an attribute.
  Attributes a;
  a.batch = 64;
  const std::vector<Sample> parsed = ParseSamples(std::string(kHeader) + kQlora, kSourceHf, a);
  EXPECT_EQ(parsed[0].batch, 16);
}

TEST(HfReader, EachRunHeaderStartsANewRun) {
  // Assembled: two runs with the same speed are two samples, each with its header.
  const std::string run = std::string(kHeader) + kQlora;
  const std::vector<Sample> samples = ReadHf(run + run);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 12);
  EXPECT_EQ(samples[1].line, 20 + 12);
  EXPECT_EQ(samples[1].batch, 16);
}

TEST(HfReader, HeaderCountsWithThousandsSeparators) {
  // Trainer prints counts with f"{n:,}": a global batch of 1,024.
  const char text[] =
      "***** Running training *****\n"
      "  Instantaneous batch size per device = 128\n"
      "  Total train batch size (w. parallel, distributed & accumulation) = 1,024\n"
      "  Gradient Accumulation steps = 1\n"
      "{'train_runtime': 6132.3668, 'train_samples_per_second': 2.609, 'epoch': 0.34}\n";
  const std::vector<Sample> samples = ReadHf(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].batch, 1024);
  EXPECT_EQ(samples[0].devices, 8);  // 1024 / (128 x 1)
}

TEST(HfReader, QuotedNumbersOfNewerVersions) {
  // Newer transformers print the logged values as strings (an SmolLM LoRA run,
  // found by text search; the eval dict abridged). Evaluation speeds are ignored.
  const char text[] =
      "{'eval_runtime': '8.109', 'eval_samples_per_second': '31.2', 'eval_steps_per_second': "
      "'3.946', 'epoch': '3'}\n"
      "{'train_runtime': '2279', 'train_samples_per_second': '2.996', 'train_steps_per_second': "
      "'1.498', 'train_loss': '1.229', 'epoch': '3'}\n"
      "100%|██████████████████████████████| 3414/3414 [37:59<00:00,  1.50it/s]\n";
  const std::vector<Sample> samples = ReadHf(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 2);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 2.996);
}

TEST(HfReader, PrefixedMetricsBlock) {
  // PaddleNLP's port of the Trainer prints the block through its logger (found
  // by text search); test_* and prediction lines are not training speed.
  const char text[] =
      "[2022-08-31 16:24:54,981] [    INFO] - ***** train metrics *****\n"
      "[2022-08-31 16:24:54,981] [    INFO] -   epoch                    =     2.6455\n"
      "[2022-08-31 16:24:54,981] [    INFO] -   train_loss               =        1.5\n"
      "[2022-08-31 16:24:54,981] [    INFO] -   train_runtime            = 0:05:39.32\n"
      "[2022-08-31 16:24:54,981] [    INFO] -   train_samples_per_second =    891.178\n"
      "[2022-08-31 16:24:54,981] [    INFO] -   train_steps_per_second   =    111.397\n"
      "[2022-08-31 16:24:54,987] [    INFO] - ***** Running Prediction *****\n"
      "[2022-08-31 16:24:54,987] [    INFO] -   Num examples = 1749\n"
      "[2022-08-31 16:24:54,987] [    INFO] -   Total Batch size = 32\n"
      "[2022-08-31 16:25:10,125] [    INFO] -   test_runtime            = 0:00:15.13\n";
  const std::vector<Sample> samples = ReadHf(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 5);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 891.178);
  EXPECT_EQ(samples[0].batch, 0);
}

TEST(HfReader, SavedMetricsJson) {
  // trainer.save_metrics writes all_results.json with json.dump(indent=4);
  // kQlora's values in that form.
  const char text[] =
      "{\n"
      "    \"epoch\": 0.34,\n"
      "    \"train_loss\": 1.7447978076934814,\n"
      "    \"train_runtime\": 6132.3668,\n"
      "    \"train_samples_per_second\": 2.609,\n"
      "    \"train_steps_per_second\": 0.163\n"
      "}\n";
  const std::vector<Sample> samples = ReadHf(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 5);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 2.609);
}

TEST(HfReader, BadValuesAreDataErrors) {
  EXPECT_THAT(ErrorOfHf("  train_samples_per_second =      abc\n"),
              HasSubstr("hf.log:1: field 'train_samples_per_second': expected a number, got "
                        "'abc'"));
  EXPECT_THAT(ErrorOfHf("\n{'train_runtime': '2279', 'train_samples_per_second': 'fast'}\n"),
              HasSubstr("hf.log:2: field 'train_samples_per_second': expected a number, got "
                        "'fast'"));
  EXPECT_THAT(ErrorOfHf("{'train_runtime': 0.1, 'train_samples_per_second': 0.0}\n"),
              HasSubstr("hf.log:1: field 'train_samples_per_second': must be > 0, got 0"));
  EXPECT_THAT(
      ErrorOfHf("  Total train batch size (w. parallel, distributed & accumulation) = lots\n"),
      HasSubstr("hf.log:1: field 'Total train batch size': expected a number, got "
                "'lots'"));
  // A dict cut after the key.
  EXPECT_THAT(ErrorOfHf("{'train_runtime': 6132.3668, 'train_samples_per_second': \n"),
              HasSubstr("hf.log:1: field 'train_samples_per_second': expected a number, got ''"));
}

TEST(HfReader, Detection) {
  EXPECT_TRUE(io::LooksLikeHf(kQlora));
  EXPECT_TRUE(io::LooksLikeHf(kHeader));
  EXPECT_EQ(DetectFormat(kQlora), Format::kHf);
  EXPECT_EQ(DetectFormat(std::string(kHeader) + kQlora), Format::kHf);
  // Keras, timm and tf_cnn_benchmarks lines (see their tests) are not Trainer's.
  EXPECT_FALSE(io::LooksLikeHf(
      "Epoch 2/100\n423/423 [==============================] - 186s 439ms/step - loss: 1.8087\n"));
  EXPECT_FALSE(io::LooksLikeHf(
      "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  (0.148s,  863.22/s)  "
      "LR: 1.001e-02  Data: 0.053 (0.051)\n"));
  EXPECT_FALSE(io::LooksLikeHf("total images/sec: 138.95\n"));
  // A CSV column of that name is not the Trainer's form.
  EXPECT_FALSE(io::LooksLikeHf("model,train_samples_per_second\nbert,45.6\n"));
}

// --- Per-step token rates (include_num_input_tokens_seen) ----------------------------

const char kEzpzIndex[] =
    "logs-wild/hf-trainer-console/saforem2-ezpz_docs_examples_hf-trainer_index.md";
const char kEzpzSlides[] =
    "logs-wild/hf-trainer-console/saforem2-ezpz_docs_notes_slides-2025-05-07.md";

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::vector<double> Throughputs(const std::vector<Sample>& samples) {
  std::vector<double> v;
  for (const Sample& s : samples) v.push_back(*s.throughput_sps);
  return v;
}

TEST(HfReader, EzpzPerStepTokenRates) {
  // ezpz's HF Trainer page: 24 XPU ranks, header lines 1224-1231 (batch per
  // device 1, total 24, accumulation 1, 100 optimization steps), step dicts on
  // lines 1260-1280 (steps 1-11) and 1284-1292 (steps 96-100), the summary on
  // line 1313 ('num_input_tokens_seen': 19660800).
  const testing::ReadResult r = testing::ParseWith(testing::ReadData(kEzpzIndex), kEzpzIndex);
  // 16 step dicts give 15 rates; the first dict's rate counts from the start
  // of train() and the summary's 5.641 samples/s is a whole-run average: neither is read.
  ASSERT_EQ(r.samples.size(), 15u);
  for (const Sample& s : r.samples) {
    EXPECT_EQ(s.unit, Unit::kTokens);
    // 19660800 tokens / 100 steps = 196608 = 24 sequences x 8192 (--block_size).
    EXPECT_EQ(s.batch, 196608);
    EXPECT_EQ(s.devices, 24);  // 24 / (1 x 1)
    EXPECT_FALSE(s.seq_len.has_value());
  }
  EXPECT_EQ(r.samples[0].line, 1262);
  // Lines 1260-1262: (393216 - 196608) / (30.8283 - 27.3002) = 196608 / 3.5281.
  EXPECT_NEAR(*r.samples[0].throughput_sps, 55726.31, 0.01);
  // Lines 1280-1284, across the page's clip: 85 steps, 16711680 / 311.1982 s.
  EXPECT_EQ(r.samples[10].line, 1284);
  EXPECT_NEAR(*r.samples[10].throughput_sps, 53701.08, 0.01);
  // Sorted, the 8th of the 15 rates is lines 1264-1266: 196608 / (37.9205 - 34.3821).
  EXPECT_NEAR(Median(Throughputs(r.samples)), 196608 / 3.5384, 0.01);
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr(":1313: 196608 tokens per optimizer step")));
}

TEST(HfReader, EzpzSeqLenGivesSequences) {
  // @seq_len=8192: the batch is the header's 24 sequences x 8192 tokens, and
  // ParseSamples counts sequences: 55564.10 tokens/s / 8192 = 6.7827 sequences/s.
  Attributes a;
  a.seq_len = 8192;
  const testing::ReadResult r = testing::ParseWith(testing::ReadData(kEzpzIndex), kEzpzIndex, a);
  ASSERT_EQ(r.samples.size(), 15u);
  EXPECT_EQ(r.samples[0].unit, Unit::kSamples);
  EXPECT_EQ(r.samples[0].batch, 24);
  EXPECT_NEAR(Median(Throughputs(r.samples)), 196608 / 3.5384 / 8192, 1e-6);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(HfReader, EzpzBatchTheLogContradicts) {
  // @batch=24 counts sequences, not tokens: 196608 tokens at line 1260 would be
  // 8192 steps of 24 tokens, more than the header's 100.
  Attributes a;
  a.batch = 24;
  EXPECT_THAT(testing::DataErrorOf([&] { ReadHf(testing::ReadData(kEzpzIndex), a); }),
              HasSubstr(":1260: field 'num_input_tokens_seen': 196608 tokens seen are 8192 "
                        "optimizer steps of 24 tokens (@batch=24), more than the 100"));
  // 8192 x 25 does not divide 196608: not a whole number of steps.
  a.batch = 204800;
  EXPECT_THAT(testing::DataErrorOf([&] { ReadHf(testing::ReadData(kEzpzIndex), a); }),
              HasSubstr(":1260: field 'num_input_tokens_seen': 196608 tokens seen is not a whole "
                        "number of optimizer steps"));
}

TEST(HfReader, EzpzSlidesTwoRunsUnderOneHeader) {
  // The slides page: one header (lines 1160-1166: 8 per device, total 192,
  // accumulation 1), then two runs' summaries (lines 1224 and 1239) whose step
  // dicts carry no train_runtime. Hand check: 154.249 x 12.4474 = 1920.0 and
  // 70.544 x 27.2171 = 1920.0 samples = 192 x 10 steps, the header's plan.
  const testing::ReadResult r = testing::ParseWith(testing::ReadData(kEzpzSlides), kEzpzSlides);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].line, 1224);
  EXPECT_DOUBLE_EQ(*r.samples[0].throughput_sps, 154.249);
  EXPECT_EQ(r.samples[1].line, 1239);
  EXPECT_DOUBLE_EQ(*r.samples[1].throughput_sps, 70.544);
  for (const Sample& s : r.samples) {
    EXPECT_EQ(s.unit, Unit::kSamples);
    EXPECT_EQ(s.batch, 192);
    EXPECT_EQ(s.devices, 24);  // 192 / (8 x 1)
  }
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr(":1239: a new training run without a")));
}

TEST(HfReader, TrainerOutputPastTheHeadIsDetected) {
  for (const char* name : {kEzpzIndex, kEzpzSlides}) {
    const std::string text = testing::ReadData(name);
    ASSERT_GT(text.find("***** Running training *****"), 64u * 1024u) << name;
    EXPECT_EQ(DetectFormat(text), Format::kHf) << name;
  }
}

// Step dicts in the form of kEzpzIndex's (lines 1260-1264), abridged.
const char kSteps[] =
    "{'loss': 2.5586, 'num_input_tokens_seen': 196608, 'train_runtime': 27.3002, "
    "'train_tokens_per_second': 7201.711}\n"
    "{'loss': 2.8427, 'num_input_tokens_seen': 393216, 'train_runtime': 30.8283, "
    "'train_tokens_per_second': 12755.034}\n"
    "{'loss': 2.6978, 'num_input_tokens_seen': 589824, 'train_runtime': 34.3821, "
    "'train_tokens_per_second': 17154.96}\n";

TEST(HfReader, StepRatesWithoutTheStepSizeAskForIt) {
  EXPECT_TRUE(io::LooksLikeHf(kSteps));
  const testing::ReadResult r = testing::ReadWith(io::ReadHf, kSteps, kSourceHf);
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_EQ(r.samples[0].batch, 0);
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("hf.log:1: the log does not say how many tokens")));
  EXPECT_THAT(testing::DataErrorOf([] { testing::ParseWith(kSteps, kSourceHf); }),
              HasSubstr("give it as PATH@batch=N"));
  Attributes a;
  a.batch = 196608;
  const std::vector<Sample> samples = ParseSamples(kSteps, kSourceHf, a);
  // (589824 - 393216) / (34.3821 - 30.8283) = 196608 / 3.5538.
  EXPECT_NEAR(*samples[1].throughput_sps, 55323.32, 0.01);
  EXPECT_EQ(samples[1].unit, Unit::kTokens);
}

TEST(HfReader, RestartedStepDictsAreANewRun) {
  // Assembled: kSteps twice; the tokens seen fall back, so the second copy is
  // a second run (2 + 2 rates), not a negative rate.
  const testing::ReadResult r =
      testing::ReadWith(io::ReadHf, std::string(kSteps) + kSteps, kSourceHf);
  ASSERT_EQ(r.samples.size(), 4u);
  EXPECT_EQ(r.samples[2].line, 5);
  for (const Sample& s : r.samples) EXPECT_GT(*s.throughput_sps, 55000);
}

TEST(HfReader, BadStepDictsAreDataErrors) {
  // A dict cut after the key.
  EXPECT_THAT(ErrorOfHf("{'loss': 2.5, 'num_input_tokens_seen': 196608, 'train_runtime': \n"),
              HasSubstr("hf.log:1: field 'train_runtime': expected a number, got ''"));
  EXPECT_THAT(ErrorOfHf("{'num_input_tokens_seen': 196608, 'train_runtime': nan}\n"),
              HasSubstr("hf.log:1: field 'train_runtime': is NaN"));
  EXPECT_THAT(ErrorOfHf("{'num_input_tokens_seen': -196608, 'train_runtime': 27.3}\n"),
              HasSubstr("hf.log:1: field 'num_input_tokens_seen': must be > 0"));
  // The dict's own rate must be tokens / runtime (196608 / 27.3002 = 7201.711).
  EXPECT_THAT(ErrorOfHf("{'num_input_tokens_seen': 196608, 'train_runtime': 27.3002, "
                        "'train_tokens_per_second': 300.078}\n"),
              HasSubstr("hf.log:1: field 'train_tokens_per_second': 300.078 is not"));
}

}  // namespace
}  // namespace fitspeed
