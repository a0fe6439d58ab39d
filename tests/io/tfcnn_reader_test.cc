// Tests of the tf_cnn_benchmarks reader on output quoted from published runs
// (each test names its source). Tests marked "assembled" join real lines with
// lines written in benchmark_cnn.py's own formats, with numbers chosen for the
// hand calculation in the comment.
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

const char kSourceTfcnn[] = "tfcnn.log";

std::vector<Sample> ReadTfcnn(std::string_view text) {
  const std::string source = kSourceTfcnn;
  const Attributes attributes;
  const ReadOptions options;
  return io::ReadTfcnn(text, io::ReaderContext{source, attributes, options});
}

std::string ErrorOfTfcnn(std::string_view text) {
  return testing::DataErrorOf([&] { ReadTfcnn(text); });
}

// A complete single-GPU run, resnet50 on synthetic ImageNet (a public
// benchmark write-up, found by text search).
const char kFullRun[] =
    "Model:       resnet50\n"
    "Dataset:     imagenet (synthetic)\n"
    "Mode:        training\n"
    "SingleSess:  False\n"
    "Batch size:  32 global\n"
    "             32 per device\n"
    "Num batches: 100\n"
    "Num epochs:  0.00\n"
    "Devices:     ['/gpu:0']\n"
    "NUMA bind:   False\n"
    "Data format: NHWC\n"
    "Optimizer:   sgd\n"
    "Variables:   parameter_server\n"
    "==========\n"
    "Generating training model\n"
    "Initializing graph\n"
    "Running warm up\n"
    "Done warm up\n"
    "Step\tImg/sec\ttotal_loss\n"
    "1\timages/sec: 180.2 +/- 0.0 (jitter = 0.0)\t8.108\n"
    "10\timages/sec: 181.0 +/- 0.1 (jitter = 0.2)\t8.122\n"
    "20\timages/sec: 180.6 +/- 0.1 (jitter = 0.4)\t7.983\n"
    "30\timages/sec: 180.2 +/- 0.3 (jitter = 0.8)\t7.780\n"
    "40\timages/sec: 180.2 +/- 0.2 (jitter = 0.8)\t7.848\n"
    "50\timages/sec: 180.2 +/- 0.2 (jitter = 0.7)\t7.779\n"
    "60\timages/sec: 180.2 +/- 0.1 (jitter = 0.5)\t7.824\n"
    "70\timages/sec: 180.2 +/- 0.2 (jitter = 0.5)\t7.838\n"
    "80\timages/sec: 180.2 +/- 0.2 (jitter = 0.5)\t7.818\n"
    "90\timages/sec: 180.3 +/- 0.1 (jitter = 0.5)\t7.647\n"
    "100\timages/sec: 180.4 +/- 0.1 (jitter = 0.5)\t7.915\n"
    "----------------------------------------------------------------\n"
    "total images/sec: 180.26\n"
    "----------------------------------------------------------------\n";

TEST(TfcnnReader, TotalOfARunWithItsHeader) {
  const std::vector<Sample> samples = ReadTfcnn(kFullRun);
  ASSERT_EQ(samples.size(), 1u);
  // The total, not a step line's running figure (180.4 at step 100).
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 180.26);
  EXPECT_EQ(samples[0].line, 32);
  EXPECT_EQ(samples[0].batch, 32);
  EXPECT_EQ(samples[0].devices, 1);  // 32 global / 32 per device
  EXPECT_TRUE(samples[0].label.empty());
}

// tensorflow/benchmarks#63: the timed part only (--batch_size=64 was on the
// command line, not in this excerpt).
const char kStepsOnly[] =
    "Step\tImg/sec\tloss\n"
    "1\timages/sec: 140.0 +/- 0.0 (jitter = 0.0)\t8.186\n"
    "10\timages/sec: 139.6 +/- 0.1 (jitter = 0.3)\t8.137\n"
    "20\timages/sec: 139.5 +/- 0.1 (jitter = 0.4)\t7.969\n"
    "30\timages/sec: 139.5 +/- 0.0 (jitter = 0.2)\t7.955\n"
    "40\timages/sec: 139.5 +/- 0.0 (jitter = 0.3)\t7.918\n"
    "50\timages/sec: 139.5 +/- 0.0 (jitter = 0.3)\t7.903\n"
    "60\timages/sec: 139.4 +/- 0.0 (jitter = 0.3)\t7.905\n"
    "70\timages/sec: 139.4 +/- 0.0 (jitter = 0.3)\t7.958\n"
    "80\timages/sec: 139.3 +/- 0.0 (jitter = 0.3)\t7.879\n"
    "90\timages/sec: 139.3 +/- 0.0 (jitter = 0.3)\t7.981\n"
    "100\timages/sec: 139.2 +/- 0.0 (jitter = 0.3)\t7.917\n"
    "----------------------------------------------------------------\n"
    "total images/sec: 138.95\n"
    "----------------------------------------------------------------\n";

TEST(TfcnnReader, RunWithoutHeaderNeedsTheBatchAttribute) {
  const std::vector<Sample> samples = ReadTfcnn(kStepsOnly);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 14);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 138.95);
  EXPECT_EQ(samples[0].batch, 0);
  Attributes a;
  a.batch = 64;
  const std::vector<Sample> parsed = ParseSamples(kStepsOnly, kSourceTfcnn, a);
  EXPECT_EQ(parsed[0].batch, 64);
}

TEST(TfcnnReader, ConcatenatedRunsGiveOneSampleEach) {
  // A Radeon VII write-up (found by text search): a GPU run, a prose line, then
  // a CPU run, copied with blanks for tabs and a shortened separator.
  const char text[] =
      "Step  Img/sec  total_loss\n"
      "1  images/sec: 241.7 +/- 0.0 (jitter = 0.0)  8.220\n"
      "10  images/sec: 241.6 +/- 0.2 (jitter = 0.5)  7.880\n"
      "100  images/sec: 238.7 +/- 0.8 (jitter = 1.2)  8.042\n"
      "-\n"
      "total images/sec: 238.68\n"
      "CPU: AMD Ryzen 9 3900X 12- (24) @ 3.800GHz\n"
      "Step    Img/sec total_loss\n"
      "1       images/sec: 5.7 +/- 0.0 (jitter = 0.0)  8.108\n"
      "100     images/sec: 5.8 +/- 0.0 (jitter = 0.1)  7.913\n"
      "----------------------------------------------------------------\n"
      "total images/sec: 5.26\n"
      "----------------------------------------------------------------\n";
  const std::vector<Sample> samples = ReadTfcnn(text);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 6);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 238.68);
  EXPECT_EQ(samples[1].line, 12);
  EXPECT_DOUBLE_EQ(*samples[1].throughput_sps, 5.26);
}

TEST(TfcnnReader, RanksOfOneJobGiveOneSample) {
  // Assembled: the header of horovod/horovod#124 as its two ranks printed it
  // (TF 1.4: 2 GPUs per rank), then, in the reader's test, two ranks' totals
  // 250.00 and 251.00: one run, mean (250 + 251) / 2 = 250.5 images/s.
  const std::string header =
      "TensorFlow:  1.4\n"
      "Model:       resnet50\n"
      "Mode:        training\n"
      "SingleSess:  False\n"
      "Batch size:  128 global\n"
      "             64 per device\n"
      "Devices:     ['/gpu:0', '/gpu:1']\n"
      "Data format: NCHW\n"
      "Optimizer:   sgd\n"
      "Variables:   parameter_server\n"
      "==========\n"
      "Generating model\n";
  const std::string text = header + header +
                           "Running warm up\nRunning warm up\nDone warm up\nDone warm up\n"
                           "Step\tImg/sec\ttotal_loss\nStep\tImg/sec\ttotal_loss\n"
                           "1\timages/sec: 125.1 +/- 0.0 (jitter = 0.0)\t7.981\n"
                           "1\timages/sec: 125.4 +/- 0.0 (jitter = 0.0)\t7.990\n"
                           "total images/sec: 250.00\n"
                           "total images/sec: 251.00\n";
  const std::vector<Sample> samples = ReadTfcnn(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 250.5);
  EXPECT_EQ(samples[0].line, 24 + 9);
  EXPECT_EQ(samples[0].batch, 128);
  EXPECT_EQ(samples[0].devices, 2);  // 128 global / 64 per device; also 2 listed
}

TEST(TfcnnReader, ModesDecideWhatIsTrainingSpeed) {
  // Assembled: the header of tensorflow/benchmarks#84 (Mode: forward-only) with
  // a total of 46.80; then an --eval run, whose total times inference on the
  // validation set and gives no sample.
  const char text[] =
      "TensorFlow:  1.4\n"
      "Model:       inception3\n"
      "Mode:        forward-only\n"
      "SingleSess:  False\n"
      "Batch size:  32 global\n"
      "             32 per device\n"
      "Devices:     ['/job:worker/task:1/cpu:0']\n"
      "total images/sec: 46.80\n"
      "Model:       inception3\n"
      "Mode:        evaluation\n"
      "Batch size:  32 global\n"
      "             32 per device\n"
      "Accuracy @ 1 = 0.7767 Accuracy @ 5 = 0.9382 [50016 examples]\n"
      "total images/sec: 120.55\n";
  const std::vector<Sample> samples = ReadTfcnn(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 8);
  EXPECT_EQ(samples[0].label, "forward-only");
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 46.80);
}

TEST(TfcnnReader, PrefixedLines) {
  // A launcher that prefixes every line (found by text search).
  const char text[] =
      "INFO|2024-12-07T13:55:28|/opt/launcher.py|27| 90        images/sec: 82.5 +/- 0.7 (jitter = "
      "3.6) 7.806\n"
      "INFO|2024-12-07T13:55:32|/opt/launcher.py|27| 100       images/sec: 82.1 +/- 0.7 (jitter = "
      "3.4) 7.945\n"
      "INFO|2024-12-07T13:55:32|/opt/launcher.py|27| "
      "----------------------------------------------------------------\n"
      "INFO|2024-12-07T13:55:32|/opt/launcher.py|27| total images/sec: 82.40\n";
  const std::vector<Sample> samples = ReadTfcnn(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].line, 4);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 82.40);
  EXPECT_TRUE(io::LooksLikeTfcnn(text));
}

TEST(TfcnnReader, BadNumbersAreDataErrors) {
  EXPECT_THAT(ErrorOfTfcnn("Step\tImg/sec\tloss\ntotal images/sec: 1x8.95\n"),
              HasSubstr("tfcnn.log:2: field 'total images/sec': expected a number, got '1x8.95'"));
  EXPECT_THAT(ErrorOfTfcnn("total images/sec:\n"),
              HasSubstr("tfcnn.log:1: field 'total images/sec': expected a number, got ''"));
  EXPECT_THAT(ErrorOfTfcnn("Model:       resnet50\nBatch size:  lots global\n"),
              HasSubstr("tfcnn.log:2: field 'batch size': expected a number, got 'lots'"));
  EXPECT_THAT(ErrorOfTfcnn("Batch size:  64 global\n             sixty-four per device\n"),
              HasSubstr("tfcnn.log:2: field 'batch per device': expected a number"));
}

TEST(TfcnnReader, Detection) {
  EXPECT_TRUE(io::LooksLikeTfcnn(kFullRun));
  EXPECT_TRUE(io::LooksLikeTfcnn(kStepsOnly));
  EXPECT_EQ(DetectFormat(kFullRun), Format::kTfcnn);
  EXPECT_EQ(DetectFormat(kStepsOnly), Format::kTfcnn);
  // Keras, timm and Trainer lines (see their tests) are not tf_cnn_benchmarks'.
  EXPECT_FALSE(io::LooksLikeTfcnn(
      "Epoch 2/100\n423/423 [==============================] - 186s 439ms/step - loss: 1.8087\n"));
  EXPECT_FALSE(io::LooksLikeTfcnn(
      "Train: 1 [  50/73 ( 70%)]  Loss: 3.23 (3.76)  Time: 0.160s,  798.85/s  (0.148s,  863.22/s)  "
      "LR: 1.001e-02  Data: 0.053 (0.051)\n"));
  EXPECT_FALSE(io::LooksLikeTfcnn(
      "{'train_runtime': 6132.3668, 'train_samples_per_second': 2.609, 'epoch': 0.34}\n"));
}

}  // namespace
}  // namespace fitspeed
