// Tests of the reader of `time:` training lines (detectron2, maskrcnn-benchmark,
// mmcv, torchvision's MetricLogger) on lines quoted from the logs in
// tests/data/logs-wild/detectron2-mmdet (each test names the file and lines),
// on settings lines as those trainers print them, and on broken copies.
// Expected numbers are worked by hand in the comments.
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

const char kSourceDetectron2[] = "det.log";

testing::ReadResult ReadDetectron2Text(std::string_view text, const Attributes& attributes = {},
                                       int skip_first_epochs = 1) {
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return testing::ReadWith(io::ReadDetectron2, text, kSourceDetectron2, attributes, options);
}

std::string ErrorOfDetectron2(std::string_view text) {
  return testing::DataErrorOf([&] { ReadDetectron2Text(text); });
}

// Richard-cpu2333-tx2dl_models_log_R50-FPN_log.py.txt, lines 357-359
// (detectron2's CommonMetricPrinter).
const char kDetectron2Lines[] =
    "[09/02 02:37:24 d2.utils.events]:  eta: 0:05:22  iter: 19  total_loss: 1.986  loss_cls: 0.595 "
    " "
    "loss_box_reg: 0.549  loss_mask: 0.697  loss_rpn_cls: 0.03067  loss_rpn_loc: 0.01108  time: "
    "1.1678  data_time: 0.0222  lr: 1.6068e-05  max_mem: 2725M\n"
    "[09/02 02:37:48 d2.utils.events]:  eta: 0:05:14  iter: 39  total_loss: 1.872  loss_cls: "
    "0.5049  loss_box_reg: 0.6145  loss_mask: 0.6069  loss_rpn_cls: 0.03091  loss_rpn_loc: "
    "0.008448  time: 1.2048  data_time: 0.0108  lr: 3.2718e-05  max_mem: 2849M\n"
    "[09/02 02:38:14 d2.utils.events]:  eta: 0:04:51  iter: 59  total_loss: 1.578  loss_cls: "
    "0.4264  loss_box_reg: 0.6225  loss_mask: 0.4759  loss_rpn_cls: 0.03019  loss_rpn_loc: "
    "0.008936  time: 1.2217  data_time: 0.0114  lr: 4.9367e-05  max_mem: 2849M\n";

TEST(Detectron2Reader, StepTimeOfEachLineAfterTheFirst) {
  // The first line's window holds the warm-up; lines 2 and 3 give 1.2048 and
  // 1.2217 s per iteration. The log names no batch: left at 0.
  const testing::ReadResult read = ReadDetectron2Text(kDetectron2Lines);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].line, 2);
  EXPECT_EQ(*read.samples[0].step_time_s, 1.2048);
  EXPECT_EQ(*read.samples[1].step_time_s, 1.2217);
  EXPECT_EQ(read.samples[0].batch, 0);
  EXPECT_FALSE(read.samples[0].epoch);
  // ParseSamples then asks for the batch.
  EXPECT_THAT(testing::DataErrorOf([] { testing::ParseWith(kDetectron2Lines, "det.log"); }),
              HasSubstr("det.log:2: field 'batch': the log does not state the batch size; give "
                        "it as PATH@batch=N"));
}

TEST(Detectron2Reader, SolverImsPerBatchIsTheGlobalBatch) {
  // detectron2 and maskrcnn-benchmark print their config as YAML; SOLVER's
  // IMS_PER_BATCH counts all GPUs, TEST's is inference. "World size: 2" is
  // detectron2's launch line (detectron2/engine/defaults.py, default_setup).
  const std::string text =
      "[09/02 02:36:50 detectron2]: Rank of current process: 0. World size: 2\n"
      "SOLVER:\n"
      "  BASE_LR: 0.00025\n"
      "  IMS_PER_BATCH: 4\n"
      "TEST:\n"
      "  IMS_PER_BATCH: 8\n" +
      std::string(kDetectron2Lines);
  const testing::ReadResult read = ReadDetectron2Text(text);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].batch, 4);
  EXPECT_EQ(read.samples[0].devices, 2);
  EXPECT_TRUE(read.warnings.empty());
  // A command-line option overrides the config file (printed before or after).
  EXPECT_EQ(ReadDetectron2Text("opts=['SOLVER.IMS_PER_BATCH', '16']\n" + text).samples[0].batch,
            16);
  // The merged config is printed after the file's: the last dump counts.
  EXPECT_EQ(ReadDetectron2Text("SOLVER:\n  IMS_PER_BATCH: 32\n" + text).samples[0].batch, 4);
  // MLPerf's tag states the batch the run used: a config that disagrees is refused.
  const std::string tag =
      ":::MLLOG {\"namespace\": \"\", \"key\": \"global_batch_size\", \"value\": 64}\n";
  EXPECT_THAT(ErrorOfDetectron2(tag + text),
              HasSubstr("det.log:5: field 'SOLVER.IMS_PER_BATCH': SOLVER.IMS_PER_BATCH 4 "
                        "contradicts global_batch_size 64 on line 1"));
}

// mlperf-v0.7_DellEMC_DSS8440_maskrcnn_result_0.excerpt.txt, lines 1104-1105
// (maskrcnn-benchmark: "time: <median of 20> (<mean since the start>)").
const char kMaskRcnnLines[] =
    "2020-06-25 16:26:07,381 maskrcnn_benchmark.trainer INFO: eta: 6:38:07  iter: 20  loss: 2.0931 "
    "(3.3078)  loss_classifier: 0.5335 (1.7317)  loss_box_reg: 0.0068 (0.0175)  loss_mask: 1.0062 "
    "(1.0004)  loss_objectness: 0.5865 (0.5348)  loss_rpn_box_reg: 0.0220 (0.0233)  time: 0.2946 "
    "(0.5975)  data: 0.0025 (0.0923)  lr: 0.002000  max mem: 7905\n"
    "2020-06-25 16:26:13,365 maskrcnn_benchmark.trainer INFO: eta: 4:58:35  iter: 40  loss: 1.4253 "
    "(2.3632)  loss_classifier: 0.4102 (1.0941)  loss_box_reg: 0.0458 (0.0356)  loss_mask: 0.6972 "
    "(0.8526)  loss_objectness: 0.1675 (0.3557)  loss_rpn_box_reg: 0.0210 (0.0253)  time: 0.2928 "
    "(0.4483)  data: 0.0027 (0.0475)  lr: 0.004000  max mem: 8472\n";

TEST(Detectron2Reader, MaskRcnnBenchmarkWindowMedian) {
  // The window's median, 0.2928 s, not the mean since the start (0.4483);
  // cross-check: iterations 20 to 40 took 16:26:13.365 - 16:26:07.381 =
  // 5.984 s, 0.2992 s each. The MLLOG tag (the log's line 323) gives the batch.
  const std::string text =
      ":::MLLOG {\"namespace\": \"\", \"time_ms\": 1593102343055, \"event_type\": "
      "\"POINT_IN_TIME\", \"key\": \"global_batch_size\", \"value\": 64, \"metadata\": {\"file\": "
      "\"tools/train_mlperf.py\", \"lineno\": 156}}\n" +
      std::string(kMaskRcnnLines);
  const testing::ReadResult read = ReadDetectron2Text(text);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(*read.samples[0].step_time_s, 0.2928);
  EXPECT_EQ(read.samples[0].batch, 64);
}

TEST(Detectron2Reader, MllogLineCutAfterItsValueKeyIsNotABatch) {
  const testing::ReadResult read = ReadDetectron2Text(
      ":::MLLOG {\"key\": \"global_batch_size\", \"value\"\n" + std::string(kMaskRcnnLines));
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 0);
}

// issue_open-mmlab-mmpretrain-408_mmcls-log.excerpt.txt, lines 2-3 (mmcv).
const char kMmcvLines[] =
    "2021-08-17 17:00:17,073 - mmcls - INFO - Epoch [1][100/5005]    lr: 1.000e-01, eta: 37 days, "
    "5:46:17, time: 6.430, data_time: 5.762, memory: 3086, loss: 6.8864\n"
    "2021-08-17 17:00:36,627 - mmcls - INFO - Epoch [1][200/5005]    lr: 1.000e-01, eta: 19 days, "
    "4:23:45, time: 0.196, data_time: 0.008, memory: 3086, loss: 6.5649\n"
    "2021-08-17 17:00:52,606 - mmcls - INFO - Epoch [2][100/5005]    lr: 1.000e-01, eta: 13 days, "
    "2:12:15, time: 0.158, data_time: 0.023, memory: 3086, loss: 6.4290\n";

TEST(Detectron2Reader, MmcvPerGpuBatchTimesTheWorldSize) {
  // mmcv's config dump: samples_per_gpu is per GPU; gpu_ids names 8 of them.
  // Epoch 1 is warm-up; epoch 2's line: 0.158 s for 32 x 8 = 256 images.
  const std::string text =
      "data = dict(samples_per_gpu=32, workers_per_gpu=2)\n"
      "gpu_ids = range(0, 8)\n" +
      std::string(kMmcvLines);
  const testing::ReadResult read = ReadDetectron2Text(text);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].line, 5);
  EXPECT_EQ(read.samples[0].epoch, 2);
  EXPECT_EQ(*read.samples[0].step_time_s, 0.158);
  EXPECT_EQ(read.samples[0].batch, 256);
  EXPECT_EQ(read.samples[0].devices, 8);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("det.log:1: samples_per_gpu 32 is a per-GPU batch: "
                                          "read as 32 x 8 (gpu_ids, line 2) = 256 per iteration"));
}

TEST(Detectron2Reader, PerGpuBatchWithoutWorldSizeAsksForDevices) {
  const std::string text =
      "data = dict(samples_per_gpu=32, workers_per_gpu=2)\n" + std::string(kMmcvLines);
  try {
    ReadDetectron2Text(text);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("det.log:1: samples_per_gpu 32 is a per-GPU batch and the log does not "
                          "say how many GPUs share an iteration; give them as "
                          "det.log@devices=N (or the global batch as @batch=N)"));
  }
  Attributes devices;
  devices.devices = 4;
  const testing::ReadResult read = ReadDetectron2Text(text, devices);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 128);
  EXPECT_EQ(read.samples[0].devices, 4);
  Attributes batch;
  batch.batch = 96;  // the global batch given: nothing asked, ParseSamples applies it
  EXPECT_EQ(ReadDetectron2Text(text, batch).samples[0].batch, 0);
}

// beijn-bachelor-thesis_detection_traingraph.py.txt, lines 6-7 and 13-14
// (torchvision's references/detection MetricLogger).
const char kTorchvisionLines[] =
    "Epoch: [0]  [5/6]  eta: 0:00:00  lr: 0.005000  loss: 2.4622 (4.1605)  loss_classifier: 0.5505 "
    "(0.5914)  loss_box_reg: 0.7064 (0.6924)  loss_mask: 0.7002 (1.1171)  loss_objectness: 0.2731 "
    "(1.6362)  loss_rpn_box_reg: 0.1090 (0.1234)  time: 0.9761  data: 0.2334  max mem: 2670\n"
    "Epoch: [0] Total time: 0:00:05 (0.9880 s / it)\n"
    "Epoch: [1]  [5/6]  eta: 0:00:00  lr: 0.005000  loss: 1.9190 (2.2851)  loss_classifier: 0.4389 "
    "(0.4667)  loss_box_reg: 0.1778 (0.2230)  loss_mask: 0.2245 (0.2099)  loss_objectness: 0.5832 "
    "(0.5622)  loss_rpn_box_reg: 0.3529 (0.8233)  time: 0.5654  data: 0.2716  max mem: 2852\n"
    "Epoch: [1] Total time: 0:00:03 (0.5778 s / it)\n";

TEST(Detectron2Reader, TorchvisionEpochTotalsWhereTheLogHasThem) {
  // Epochs are printed from 0: "Epoch: [1]" is epoch 2, 0.5778 s per
  // iteration over the epoch (6 iterations, 3.47 s: "0:00:03").
  const testing::ReadResult read = ReadDetectron2Text(kTorchvisionLines);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].line, 4);
  EXPECT_EQ(read.samples[0].epoch, 2);
  EXPECT_EQ(*read.samples[0].step_time_s, 0.5778);
  // Without the totals, the lines: epoch 2's is 0.5654.
  const std::string lines_only =
      "Epoch: [0]  [5/6]  eta: 0:00:00  time: 0.9761  data: 0.2334\n"
      "Epoch: [1]  [5/6]  eta: 0:00:00  time: 0.5654  data: 0.2716\n";
  EXPECT_EQ(*ReadDetectron2Text(lines_only).samples.at(0).step_time_s, 0.5654);
  // torchvision's Namespace: --batch-size per GPU, world_size.
  const testing::ReadResult namespaced =
      ReadDetectron2Text("Namespace(batch_size=2, epochs=26, world_size=4, dist_url='env://')\n" +
                         std::string(kTorchvisionLines));
  EXPECT_EQ(namespaced.samples.at(0).batch, 8);
  EXPECT_EQ(namespaced.samples.at(0).devices, 4);
}

TEST(Detectron2Reader, OnlyWarmUpIsReadWithAWarning) {
  // The two epoch-1 lines of kMmcvLines only.
  const std::string epoch1 = kMmcvLines;
  const testing::ReadResult read =
      ReadDetectron2Text(epoch1.substr(0, epoch1.find("2021-08-17 17:00:52")));
  ASSERT_EQ(read.samples.size(), 2u);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("det.log:2: every training line of the log is in the "
                                          "warm-up"));
}

TEST(Detectron2Reader, BadTimeNamesFileLineAndField) {
  const std::string good =
      "Epoch [2][200/5005]    lr: 1.000e-01, eta: 1 day, 0:00:00, time: 0.196, data_time: 0.008\n";
  auto with_time = [&](const std::string& value) {
    std::string line = good;
    line.replace(line.find("0.196"), 5, value);
    return line;
  };
  EXPECT_THAT(ErrorOfDetectron2(with_time("0.1x6")),
              HasSubstr("det.log:1: field 'time': expected a number, got '0.1x6'"));
  EXPECT_THAT(ErrorOfDetectron2(with_time("nan")), HasSubstr("det.log:1: field 'time': is NaN"));
  EXPECT_THAT(ErrorOfDetectron2(with_time("0")),
              HasSubstr("det.log:1: field 'time': must be > 0, got 0"));
  EXPECT_THAT(ErrorOfDetectron2(with_time("-0.2")),
              HasSubstr("det.log:1: field 'time': must be > 0"));
  EXPECT_THAT(ErrorOfDetectron2("Epoch: [0] Total time: 0:00:05 (fast s / it)\n"),
              HasSubstr("det.log:1: field 'time': expected 'Total time: H:MM:SS (<s> s / it)'"));
}

// docs/formats/detectron2.md: a Total time line without "(<s> s / it)" is a
// DataError; it was skipped.
TEST(Detectron2Reader, TorchvisionTotalWithoutSecondsPerIterationIsRefused) {
  EXPECT_THAT(
      ErrorOfDetectron2(std::string(kTorchvisionLines) + "Epoch: [2] Total time: 0:00:03\n"),
      HasSubstr("det.log:5: field 'time': expected 'Total time: H:MM:SS (<s> s / it)', "
                "got 'Total time: 0:00:03'"));
}

// Epochs were cut to their first 9 digits (an epoch of 13 read as
// 123456789). Sample::epoch is an int: at most 9 digits.
TEST(Detectron2Reader, EpochOfMoreThanNineDigitsNamesFileLineAndField) {
  EXPECT_THAT(ErrorOfDetectron2(
                  "Epoch [1234567890123][200/5005]    lr: 1.000e-01, eta: 0:00:00, time: 0.196\n"),
              HasSubstr("det.log:1: field 'epoch': '1234567890123' has 13 digits"));
  EXPECT_THAT(ErrorOfDetectron2("Epoch: [1234567890123]  [5/6]  eta: 0:00:00  time: 0.5654\n"),
              HasSubstr("det.log:1: field 'epoch': '1234567890123' has 13 digits"));
  Attributes batch;
  batch.batch = 256;
  const testing::ReadResult nine = ReadDetectron2Text(
      "Epoch [123456789][200/5005]    lr: 1.000e-01, eta: 0:00:00, time: 0.196\n", batch, 0);
  EXPECT_EQ(nine.samples.at(0).epoch, 123456789);
}

TEST(Detectron2Reader, DetectedAndNamed) {
  EXPECT_EQ(ParseFormat("detectron2"), Format::kDetectron2);
  EXPECT_EQ(DetectFormat(kDetectron2Lines), Format::kDetectron2);
  EXPECT_EQ(DetectFormat(kMaskRcnnLines), Format::kDetectron2);
  EXPECT_EQ(DetectFormat(kMmcvLines), Format::kDetectron2);
  EXPECT_EQ(DetectFormat(kTorchvisionLines), Format::kDetectron2);
  // data_time alone is not the iteration's time; validation is not training.
  EXPECT_EQ(DetectFormat("Epoch(val) [1][50/625]  eta: 0:01:00  time: 0.05  data_time: 0.01\n"),
            Format::kAuto);
}

TEST(Detectron2Reader, CutAndMutatedLinesThrowOnlyErrors) {
  ReadOptions options;
  options.format = Format::kDetectron2;
  testing::ParseCutAndMutated({kDetectron2Lines, kMaskRcnnLines, kMmcvLines, kTorchvisionLines},
                              "0123456789.:[]/(), -eEnatime", 300, 37, kSourceDetectron2, {},
                              options);
}

}  // namespace
}  // namespace fitspeed
