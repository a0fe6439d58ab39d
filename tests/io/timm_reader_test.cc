// Tests of the timm train.py reader on lines quoted from published logs (each
// test names its source). Expected numbers are worked by hand in the comments.
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

const char kSourceTimm[] = "timm.log";

std::vector<Sample> ReadTimm(std::string_view text, const Attributes& attributes = {},
                             int skip_first_epochs = 1) {
  const std::string source = kSourceTimm;
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return io::ReadTimm(text, io::ReaderContext{source, attributes, options});
}

std::string ErrorOfTimm(std::string_view text, const Attributes& attributes = {},
                        int skip_first_epochs = 1) {
  return testing::DataErrorOf([&] { ReadTimm(text, attributes, skip_first_epochs); });
}

// huggingface/optimum-habana, examples/pytorch-image-models/README.md: timm
// train.py, resnet50.a1_in1k, one Gaudi in lazy mode (validation and
// checkpoint lines included as printed).
const char kHabana[] =
    "Train: 0 [   0/73 (  1%)]  Loss: 6.86 (6.86)  Time: 9.575s,   13.37/s  (9.575s,   13.37/s)  "
    "LR: 1.000e-05  Data: 0.844 (0.844)\n"
    "Train: 0 [  50/73 ( 70%)]  Loss: 6.77 (6.83)  Time: 0.320s,  400.32/s  (0.470s,  272.39/s)  "
    "LR: 1.000e-05  Data: 0.217 (0.047)\n"
    "Test: [   0/30]  Time: 6.593 (6.593)  Loss:   6.723 ( 6.723)  Acc@1:   0.000 (  0.000)  "
    "Acc@5:   0.000 (  0.000)\n"
    "Test: [  30/30]  Time: 3.856 (0.732)  Loss:   6.615 ( 6.691)  Acc@1:   0.000 (  0.076)  "
    "Acc@5:   1.176 (  3.287)\n"
    "Current checkpoints:\n"
    " ('./output/train/20241016-034927-resnet50_a1_in1k-224/checkpoint-0.pth.tar', "
    "0.07643312101910828)\n"
    "\n"
    "Train: 1 [   0/73 (  1%)]  Loss: 6.69 (6.69)  Time: 0.796s,  160.74/s  (0.796s,  160.74/s)  "
    "LR: 1.001e-02  Data: 0.685 (0.685)\n"
    "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  (0.148s,  863.22/s)  "
    "LR: 1.001e-02  Data: 0.053 (0.051)\n";

TEST(TimmReader, ThroughputAfterTheFirstUpdateOfEachEpoch) {
  const std::vector<Sample> samples = ReadTimm(kHabana, {}, 0);
  ASSERT_EQ(samples.size(), 2u);
  // The running mean over updates 0..k is c/r(k) s for c samples per update:
  // updates 1..50 took c (51/272.39 - 1/13.37) = c (0.18723154 - 0.07479432) s
  // for 50c samples: 50 / 0.11243723 = 444.6926 samples/s.
  EXPECT_EQ(samples[0].epoch, 1);  // timm's epoch 0
  EXPECT_EQ(samples[0].line, 2);
  EXPECT_NEAR(*samples[0].throughput_sps, 444.6925735, 1e-6);
  // Epoch 1: 50 / (51/863.22 - 1/160.74) = 50 / 0.05285989 = 945.8968 samples/s.
  EXPECT_EQ(samples[1].epoch, 2);
  EXPECT_EQ(samples[1].line, 9);
  EXPECT_NEAR(*samples[1].throughput_sps, 945.8968194, 1e-6);
  // The batch: rate x time = 13.37 x 9.575 = 128.02 (127.96..128.07 within the
  // printed digits), 160.74 x 0.796 = 127.95 (127.86..128.03): only 128 fits.
  EXPECT_EQ(samples[0].batch, 128);
  EXPECT_EQ(samples[1].batch, 128);
  EXPECT_EQ(samples[1].devices, 1);
  EXPECT_FALSE(samples[1].step_time_s.has_value());
  EXPECT_FALSE(samples[1].epoch_time_s.has_value());
}

TEST(TimmReader, SkipFirstEpochsDropsTheWarmUpEpoch) {
  // Lazy mode compiles in timm's epoch 0: 445 against 946 samples/s above.
  const std::vector<Sample> samples = ReadTimm(kHabana);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].epoch, 2);
  // When that would drop every epoch (a one-epoch benchmarking run), they are
  // read with a warning instead of refused.
  ReadOptions options;
  options.format = Format::kTimm;
  options.skip_first_epochs = 2;
  std::vector<std::string> warnings;
  options.warn = [&](const std::string& w) { warnings.push_back(w); };
  const std::vector<Sample> all = ParseSamples(kHabana, "timm.log", {}, options);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].epoch, 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("timm.log:9: every epoch in the log (2) is <= "
                                     "skip_first_epochs = 2"));
}

// README of the general_backbone project (a timm-derived trainer, found by
// text search): 33 batches of 16 with a last batch of 8, which its loader keeps.
const char kPartialBatch[] =
    "Model resnet50 created, param count:25557032\n"
    "Train: 0 [   0/33 (  0%)]  Loss: 8.863 (8.86)  Time: 1.663s,    9.62/s  (1.663s,    9.62/s)  "
    "LR: 5.000e-04  Data: 0.460 (0.460)\n"
    "Train: 0 [  32/33 (100%)]  Loss: 1.336 (4.00)  Time: 0.934s,    8.57/s  (0.218s,   36.68/s)  "
    "LR: 5.000e-04  Data: 0.000 (0.014)\n"
    "Test: [   0/29]  Time: 0.560 (0.560)  Loss:  0.6912 (0.6912)  Acc@1: 87.5000 (87.5000)  "
    "Acc@5: 100.0000 (100.0000)\n"
    "Test: [  29/29]  Time: 0.041 (0.064)  Loss:  0.5951 (0.5882)  Acc@1: 81.2500 (87.5000)  "
    "Acc@5: 100.0000 (99.3750)\n"
    "Train: 1 [   0/33 (  0%)]  Loss: 0.5741 (0.574)  Time: 0.645s,   24.82/s  (0.645s,   24.82/s) "
    " "
    "LR: 5.000e-04  Data: 0.477 (0.477)\n"
    "Train: 1 [  32/33 (100%)]  Loss: 0.5411 (0.313)  Time: 0.089s,   90.32/s  (0.166s,   48.17/s) "
    " "
    "LR: 5.000e-04  Data: 0.000 (0.016)\n";

TEST(TimmReader, PartialLastBatchGivesTheMeanUpdateTime) {
  // Line 7: 0.089 s x 90.32/s = 8.04 samples, not the 0.645 x 24.82 = 16.0 of
  // line 6, so the rates cannot be compared; the mean times can: updates
  // 1..32 took 33 x 0.166 - 1 x 0.645 = 4.833 s, 0.15103125 s each.
  const std::vector<Sample> samples = ReadTimm(kPartialBatch, {}, 0);
  ASSERT_EQ(samples.size(), 2u);
  // Epoch 0: (33 x 0.218 - 1.663) / 32 = 5.531 / 32 = 0.17284375 s.
  EXPECT_EQ(samples[0].line, 3);
  EXPECT_NEAR(*samples[0].step_time_s, 0.17284375, 1e-12);
  EXPECT_EQ(samples[1].line, 7);
  EXPECT_NEAR(*samples[1].step_time_s, 0.15103125, 1e-12);
  EXPECT_FALSE(samples[1].throughput_sps.has_value());
  // 1.663 x 9.62 = 16.00 and 0.645 x 24.82 = 16.01: a batch of 16.
  EXPECT_EQ(samples[0].batch, 16);
  EXPECT_EQ(samples[1].batch, 16);
}

TEST(TimmReader, ConcatenatedRunsGiveOneSampleEachPerEpoch) {
  // Two runs in one file: the epoch number going back starts the second.
  const std::string text = std::string(kPartialBatch) + kHabana;
  const std::vector<Sample> samples = ReadTimm(text);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].batch, 16);
  EXPECT_EQ(samples[0].line, 7);
  EXPECT_EQ(samples[1].batch, 128);
  EXPECT_EQ(samples[1].line, 7 + 9);
  EXPECT_NEAR(*samples[1].throughput_sps, 945.8968194, 1e-6);
}

TEST(TimmReader, WorldSizeFromTheStartUpLines) {
  // Assembled: the start-up lines of a two-GPU timm run from the Determined AI
  // Core API guide (prefixed by its launcher), then kHabana's training lines.
  const std::string text =
      "[rank=0] || Training in distributed mode with multiple processes, 1 GPU per process. "
      "Process 0, total 2.\n"
      "[rank=1] || Training in distributed mode with multiple processes, 1 GPU per process. "
      "Process 1, total 2.\n" +
      std::string(kHabana);
  const std::vector<Sample> samples = ReadTimm(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].devices, 2);
  EXPECT_EQ(samples[0].line, 11);
  // train.py's current wording.
  const std::vector<Sample> current = ReadTimm(
      "Training in distributed mode with multiple processes, 1 device per process.Process 0, "
      "total 8, device cuda:0.\n" +
      std::string(kHabana));
  EXPECT_EQ(current[0].devices, 8);
  const std::vector<Sample> single =
      ReadTimm("Training with a single process on 1 device (hpu).\n" + std::string(kHabana));
  EXPECT_EQ(single[0].devices, 1);
}

TEST(TimmReader, BatchAttributeMustBeTheGlobalBatch) {
  Attributes a;
  a.batch = 128;
  EXPECT_EQ(ReadTimm(kHabana, a)[0].batch, 128);
  // A per-device batch (say 64 of 2 devices) contradicts rate x time = 128.
  a.batch = 64;
  EXPECT_THAT(ErrorOfTimm(kHabana, a),
              HasSubstr("timm.log:1: field 'batch': batch=64 contradicts the log: rate x time "
                        "gives 128 to 128.1 samples per update"));
}

TEST(TimmReader, LinesWithoutRunningMeans) {
  // The older form "Time: 0.160s, 798.85/s" without the parenthesised means
  // (kHabana's epoch 1 with them cut): the harmonic mean of the rates after
  // the first line, here the one rate 798.85.
  const char text[] =
      "Train: 1 [   0/73 (  1%)]  Loss: 6.69 (6.69)  Time: 0.796s,  160.74/s  LR: 1.001e-02\n"
      "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  LR: 1.001e-02\n";
  const std::vector<Sample> samples = ReadTimm(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 798.85);
}

TEST(TimmReader, AnEpochWithOneLineGivesNoSample) {
  const char text[] =
      "Train: 1 [   0/73 (  1%)]  Loss: 6.69 (6.69)  Time: 0.796s,  160.74/s  (0.796s,  160.74/s)  "
      "LR: 1.001e-02  Data: 0.685 (0.685)\n";
  EXPECT_TRUE(ReadTimm(text).empty());
}

TEST(TimmReader, BadNumbersAreDataErrors) {
  EXPECT_THAT(ErrorOfTimm("Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.1x0s,  798.85/s  "
                          "(0.148s,  863.22/s)\n"),
              HasSubstr("timm.log:1: field 'Time': expected a number followed by 's,', got "
                        "'0.1x0s,'"));
  EXPECT_THAT(ErrorOfTimm("Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.8a/s  "
                          "(0.148s,  863.22/s)\n"),
              HasSubstr("timm.log:1: field 'rate': expected a number followed by '/s'"));
  EXPECT_THAT(
      ErrorOfTimm("\nTrain: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  "
                  "(0.148s,  0.00/s)\n"),
      HasSubstr("timm.log:2: field 'rate (mean)': must be > 0, got 0"));
  // A line cut after "Time:".
  EXPECT_THAT(ErrorOfTimm("Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,\n"),
              HasSubstr("timm.log:1: field 'Time': expected 'Time: <s>s, <rate>/s', got "
                        "'Time: 0.160s,'"));
}

TEST(TimmReader, OtherTrainLinesAreSkipped) {
  // OpenPCDet's "timm style" line (open-mmlab/OpenPCDet#1229) has no rates.
  const char text[] =
      "2023-01-05 16:34:37,748   INFO  Train:    1/3 ( 33%) [   0/323 (  0%)]  Loss: 516.7 (517.)  "
      "LR: 1.000e-04  Time cost: 00:04/21:46 [00:04/1:05:18]  Acc_iter 1           Data time: "
      "0.87(0.87)  Forward time: 3.18(3.18)  Batch time: 4.04(4.04)\n";
  EXPECT_TRUE(ReadTimm(text).empty());
  EXPECT_FALSE(io::LooksLikeTimm(text));
}

TEST(TimmReader, Detection) {
  EXPECT_TRUE(io::LooksLikeTimm(kHabana));
  EXPECT_EQ(DetectFormat(kHabana), Format::kTimm);
  EXPECT_EQ(DetectFormat(kPartialBatch), Format::kTimm);
  // Keras, tf_cnn_benchmarks and Trainer lines (see their tests) are not timm's.
  EXPECT_FALSE(io::LooksLikeTimm(
      "Epoch 2/100\n423/423 [==============================] - 186s 439ms/step - loss: 1.8087\n"));
  EXPECT_FALSE(io::LooksLikeTimm("10\timages/sec: 139.6 +/- 0.1 (jitter = 0.3)\t8.137\n"));
  EXPECT_FALSE(io::LooksLikeTimm(
      "{'train_runtime': 6132.3668, 'train_samples_per_second': 2.609, 'epoch': 0.34}\n"));
}

}  // namespace
}  // namespace fitspeed
