// Every file of tests/data/logs-wild/{keras,timm,tf-cnn-benchmarks,fairseq,
// detectron2-mmdet}/ and dllogger/gkebe-EventBERT_dllogger.json, read through
// ParseSamples as `fitspeed read` reads them (issue 12): each either reads, with
// its count, batch, devices, unit and median throughput checked against a
// reading of the log's own numbers by hand (the comments give the lines and
// the arithmetic), or is refused with a message that says what to give, and
// then reads right with it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/reader_test_util.h"

namespace fitspeed {
namespace {

using fitspeed::testing::AtLine;
using fitspeed::testing::DataErrorOf;
using fitspeed::testing::ParseWith;
using fitspeed::testing::ReadData;
using fitspeed::testing::ReadResult;
using ::testing::HasSubstr;

// `name` under tests/data/logs-wild, read with `attributes`.
ReadResult ReadLogsWild(const std::string& name, const Attributes& attributes = {}) {
  const std::string path = "logs-wild/" + name;
  return ParseWith(ReadData(path), path, attributes);
}

// The message ParseSamples refuses `name` with (without attributes).
std::string Refusal(const std::string& name) {
  const std::string path = "logs-wild/" + name;
  const std::string text = ReadData(path);
  return DataErrorOf([&] { ParseWith(text, path); });
}

Attributes BatchLogsWild(double batch) {
  Attributes a;
  a.batch = batch;
  return a;
}

double ThroughputOf(const Sample& s) { return ToStepObservation(s).throughput_sps(); }

double MedianThroughput(const std::vector<Sample>& samples) {
  std::vector<double> v;
  for (const Sample& s : samples) v.push_back(ThroughputOf(s));
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Count, batch, devices and unit of every sample, and the median throughput
// (relative tolerance `tolerance`).
void ExpectReading(const std::vector<Sample>& samples, size_t count, double batch, int devices,
                   double median_sps, double tolerance = 1e-9) {
  ASSERT_EQ(samples.size(), count);
  for (const Sample& s : samples) {
    EXPECT_EQ(s.batch, batch) << "line " << s.line;
    EXPECT_EQ(s.devices, devices) << "line " << s.line;
    EXPECT_EQ(s.unit, Unit::kSamples) << "line " << s.line;
  }
  EXPECT_NEAR(MedianThroughput(samples), median_sps, median_sps * tolerance);
}

// ---- keras/: Keras prints no batch size; every file asks for @batch=N. ----

TEST(LogsWild, KerasMnistConvnet) {
  const std::string name = "keras/keras-io_examples_vision_md_mnist_convnet.md.excerpt.txt";
  // The code cell above the output says batch_size = 128, but the log does not.
  EXPECT_THAT(Refusal(name), HasSubstr(":18: field 'batch': the log does not state the batch "
                                       "size; give it as PATH@batch=N"));
  // Epochs 2-11 (epoch 1 is warm-up; epoch 12 never completes). Each bar
  // "422/422 ... 13s 31ms/step": the ms/step is the more precise figure, so
  // the epoch takes 422 x 0.031 s and trains 422 x 128 samples: 128/0.031
  // samples/s. ms/step of epochs 2-11: 31 33 33 35 40 41 39 39 38 37, median
  // of the rates between 37 and 38 ms: (128/0.037 + 128/0.038) / 2 = 3413.94.
  const ReadResult read = ReadLogsWild(name, BatchLogsWild(128));
  ExpectReading(read.samples, 10, 128, 1, (128 / 0.037 + 128 / 0.038) / 2);
  EXPECT_EQ(read.samples.front().line, 18);
  EXPECT_EQ(read.samples.front().samples_per_epoch, 422 * 128);
  EXPECT_NEAR(*read.samples.front().epoch_time_s, 422 * 0.031, 1e-9);
}

TEST(LogsWild, KerasTextClassificationKeras3) {
  const std::string name =
      "keras/keras-io_examples_nlp_md_text_classification_from_scratch.md.excerpt.txt";
  EXPECT_THAT(Refusal(name), HasSubstr("give it as PATH@batch=N"));
  // Keras 3 bars "625/625 ━━━ 2s 3ms/step" for epochs 2 and 3 (lines 15, 17);
  // the evaluate() bar "782/782" after the run is not an epoch. 3 ms (17%
  // uncertain) beats 2 s (25%): 32/0.003 = 10666.7 samples/s at the example's
  // batch of 32 (625 x 32 = 20000 IMDB training reviews).
  ExpectReading(ReadLogsWild(name, BatchLogsWild(32)).samples, 2, 32, 1, 32 / 0.003);
}

TEST(LogsWild, KerasNotebookWithCallbackLines) {
  const std::string name = "keras/Aditya24jar-Emotion-Detection-Resnet50_ipynb-cell100-stdout.txt";
  EXPECT_THAT(Refusal(name), HasSubstr(":8: field 'batch'"));
  // 449 steps per epoch (FER-2013's 28,709 images at batch 64). Epochs 2-17;
  // the "ETA: 0s" bars and "Epoch N: val_loss ..." callback lines are not
  // epochs. ms/step of epochs 2-16: 902 906 906 914 936 929 921 913 940 932 945
  // 916 914 924 902; epoch 17 "482s 1s/step" is 482 s (449 x 64 / 482 = 59.6).
  // Sixteen rates, the middle two at 916 and 921 ms: (64/0.916 + 64/0.921) / 2.
  const ReadResult read = ReadLogsWild(name, BatchLogsWild(64));
  ExpectReading(read.samples, 16, 64, 1, (64 / 0.916 + 64 / 0.921) / 2);
  EXPECT_NEAR(*AtLine(read.samples, 69)->epoch_time_s, 482, 1e-9);
  // With the dataset size too, 449 = ceil(28709 / 64): the last batch is partial.
  Attributes a = BatchLogsWild(64);
  a.samples_per_epoch = 28709;
  const ReadResult exact = ReadLogsWild(name, a);
  ASSERT_EQ(exact.samples.size(), 16u);
  EXPECT_EQ(exact.samples[0].steps_rule, StepsRule::kKeepPartial);
}

TEST(LogsWild, KerasFiveRunsInOneFile) {
  const std::string name =
      "keras/ttukei-Twitter-language-models-about-Ukraine_TCSS456_NLP_FinalProject_ReadMe.txt";
  EXPECT_THAT(Refusal(name), HasSubstr(":20: field 'batch'"));
  // Five fit() calls (headers "Epoch 1/100" line 17, "1/500" lines 286, 1376,
  // 2470, "1/100" line 3545): 100 + 500 + 500 + 500 + 100 epochs, the first of
  // each dropped as warm-up: 1695 samples. Keras' default batch is 32 (4067
  // sequences in 128 steps). tf.keras verbose 2 prints "0s ... 358ms/epoch -
  // 3ms/step": 358 ms is the precise one (line 20: 128 x 32 / 0.358 = 11441.3;
  // read before issue 12 as 128 x 3 ms = 0.384 s). Median of the 1695 rates,
  // each from the most precise of the elapsed, per-epoch and per-step times
  // (an awk script over the file): 7724.14 = 7 x 32 / 0.029, the
  // "7/7 - 0s - ... - 29ms/epoch" epochs of runs 2-4.
  const ReadResult read = ReadLogsWild(name, BatchLogsWild(32));
  ExpectReading(read.samples, 1695, 32, 1, 7 * 32 / 0.029);
  EXPECT_NEAR(ThroughputOf(*AtLine(read.samples, 20)), 128 * 32 / 0.358, 1e-6);
  // Run 4, line 2473: "7/7 - 1s - ... - 899ms/epoch - 128ms/step": 0.899 s.
  EXPECT_NEAR(*AtLine(read.samples, 2473)->epoch_time_s, 0.899, 1e-12);
  // Run 5 (Keras 2 bars), line 3548: "4/4 [===] - 0s 10ms/step": 4 x 0.010 s.
  EXPECT_NEAR(*AtLine(read.samples, 3548)->epoch_time_s, 0.040, 1e-12);
}

// ---- timm/: train.py, 1 GPU, batch 128 inferred from rate x time. ----

// Throughput over updates (a, b] from the running-mean rates r_a, r_b (timm.md):
// (b - a) / ((b + 1)/r_b - (a + 1)/r_a).
double TimmRate(double a, double r_a, double b, double r_b) {
  return (b - a) / ((b + 1) / r_b - (a + 1) / r_a);
}

TEST(LogsWild, TimmMlp) {
  // "Training with a single process on 1 GPUs." (line 1); 6.01/s x 21.288 s =
  // 127.9 samples per update on line 17: batch 128. Epochs 2-9 (timm 1-8; the
  // file is cut inside timm epoch 8). Rates, sorted: 54.6 65.8 93.5 96.4 97.1
  // 100.4 104.5 106.6; the middle two are timm epoch 4 (line 978 "[0/10009]
  // ... (14.435s, 8.87/s)", line 1195 "[10008/10009] ... (1.329s, 96.34/s)")
  // and epoch 8 (line 1956 "(15.781s, 8.11/s)", line 2000 "[2200/10009] ...
  // 96.66/s").
  const ReadResult read = ReadLogsWild("timm/fabfish-Monarch-README_utils_mlp.log");
  ExpectReading(read.samples, 8, 128, 1,
                (TimmRate(0, 8.87, 10008, 96.34) + TimmRate(0, 8.11, 2200, 96.66)) / 2);
}

TEST(LogsWild, TimmVitaeWithoutStartUpLine) {
  // No start-up line: devices default to 1; the rates are all devices' anyway.
  // Epochs 2-10; the median of the nine is timm epoch 4 (lines 887 "(12.461s,
  // 10.27/s)" and 1088 "[10008/10009] ... (1.208s, 105.93/s)"): 106.03.
  const ReadResult read = ReadLogsWild("timm/fabfish-Monarch-README_utils_vitae-monarch.txt");
  ExpectReading(read.samples, 9, 128, 1, TimmRate(0, 10.27, 10008, 105.93));
}

// ---- tf-cnn-benchmarks/: "total images/sec" with the header's global batch. ----

TEST(LogsWild, TfCnnBenchmarksLambda) {
  // Line 31 "Batch size: 48 global", 32 "48 per device", line 83 "total
  // images/sec: 875.20". Cross-check with the Unix times that end the step
  // lines: steps 1-100 from 1604275111 to 1604275116, 99 x 48 in 5 +- 1 s.
  ExpectReading(
      ReadLogsWild("tf-cnn-benchmarks/lambda-tensorflow-benchmark_3960X-RTX3080-XLA_syn-fp16-1gpu_"
                   "resnet50-48.log")
          .samples,
      1, 48, 1, 875.20);
  // "192 global", "96 per device": 2 devices; line 105 "total images/sec:
  // 440.00"; steps 1-100 took 1597424123 - 1597424080 = 43 s: 99 x 192 / 43 = 442.
  ExpectReading(
      ReadLogsWild("tf-cnn-benchmarks/lambda-tensorflow-benchmark_3970X-RadeonVIIPro-PCIeGen4_syn-"
                   "fp32-2gpu_resnet50-96.log")
          .samples,
      1, 192, 2, 440.00);
  // "3584 global", "448 per device": 8 devices; line 267 "total images/sec:
  // 14356.33"; steps 1-100 in 1599429529 - 1599429504 = 25 s: 99 x 3584 / 25 = 14193.
  ExpectReading(
      ReadLogsWild(
          "tf-cnn-benchmarks/lambda-tensorflow-benchmark_7742-A100-SXM4-40GB-TF2.3-XLA_real-"
          "fp16-8gpu_resnet50-448.log")
          .samples,
      1, 3584, 8, 14356.33);
}

// ---- fairseq/: MLPerf v0.7 Transformer, batch in tokens, epoch in sentences. ----

// The batch in sentence pairs is not in the log: it is asked for. With it
// (and drop_remainder=false: fairseq trains every sentence pair) the epoch
// times of epoch_start/epoch_stop give 4,590,101 (train_samples) sentence
// pairs per epoch; fairseq's "epoch time" lines agree to the millisecond.
// The batch given is fairseq's mean, 4590101 / (num_updates of epoch 2).
void ExpectFairseq(const std::string& file, double batch, double epoch2_ms, double epoch3_ms) {
  const std::string name = "fairseq/" + file;
  EXPECT_THAT(Refusal(name), HasSubstr("field 'batch': the log does not state the batch size; "
                                       "give it as PATH@batch=N"));
  Attributes a = BatchLogsWild(batch);
  a.drop_remainder = false;
  const ReadResult read = ReadLogsWild(name, a);
  EXPECT_THAT(read.warnings.at(0), HasSubstr("counts tokens while train_samples counts sentence "
                                             "pairs"));
  ExpectReading(read.samples, 2, batch, 1,
                (4590101 / (epoch2_ms / 1000) + 4590101 / (epoch3_ms / 1000)) / 2);
}

TEST(LogsWild, FairseqTransformer) {
  // DellEMC C4140, 4 GPUs (line 83): epoch 2 lines 191-198, 1593122948356 -
  // 1593122259701 = 688655 ms ("epoch time 688.655"), epoch 3 lines 211-217,
  // 688450 ms; num_updates 4360 - 2178 = 2182: 2104 pairs per update.
  ExpectFairseq("mlperf-v0.7_DellEMC_C4140_transformer_result_0.txt", 2104, 688655, 688450);
  // NVIDIA DGX-1, 8 GPUs: lines 393-397, 1592717316780 - 1592716969245 =
  // 347535 ms; lines 410-416, 347714 ms; 3268 - 1631 = 1637 updates: 2804.
  ExpectFairseq("mlperf-v0.7_NVIDIA_dgx1_ngc20.06_pytorch_transformer_result_0.txt", 2804, 347535,
                347714);
  // Tencent 8x V100: lines 184-191, 1593193001729 - 1593192735658 = 266071 ms;
  // lines 204-210, 266464 ms; 4096 - 2047 = 2049 updates: 2240.
  ExpectFairseq("mlperf-v0.7_Tencent_GN10X-8xV100_transformer_result_0.txt", 2240, 266071, 266464);
}

// ---- detectron2-mmdet/ ----

TEST(LogsWild, DetectronMmcvAndMetricLoggerLogsAreNamedAndRefused) {
  EXPECT_THAT(Refusal("detectron2-mmdet/Richard-cpu2333-tx2dl_models_log_R50-FPN_log.py.txt"),
              HasSubstr(":357: this is a detectron2 or maskrcnn-benchmark training log, which "
                        "fitspeed does not read yet"));
  EXPECT_THAT(Refusal("detectron2-mmdet/beijn-bachelor-thesis_detection_traingraph.py.txt"),
              HasSubstr(":1: this is a torchvision MetricLogger training log"));
  const std::string mmcv =
      Refusal("detectron2-mmdet/issue_open-mmlab-mmpretrain-408_mmcls-log.excerpt.txt");
  EXPECT_THAT(mmcv, HasSubstr(":2: this is a mmcv training log"));
  EXPECT_THAT(mmcv, HasSubstr("as a CSV table (columns batch,step_time; see docs/formats/csv.md)"));
}

TEST(LogsWild, MaskRcnnTrainSamplesContradictedByTheTrainer) {
  // Lines 1-1570 of the DellEMC DSS8440 MLPerf v0.7 Mask R-CNN log.
  // global_batch_size 64 (line 323); train_samples 40000 (line 764) is the
  // config's MAX_ITER (line 310), not an epoch: the trainer shows iteration
  // 1820 (line 1194) before epoch 1 stops (line 1195), 116480 images. Read as
  // it was before issue 12: 40000 / 543.8 s = 73.6 img/s.
  const std::string name =
      "detectron2-mmdet/mlperf-v0.7_DellEMC_DSS8440_maskrcnn_result_0.excerpt.txt";
  EXPECT_THAT(Refusal(name), HasSubstr("give it as PATH@samples=N"));
  // With COCO 2017 train's 117266 images: epoch 2, lines 1245-1383,
  // 1593103585952 - 1593103010827 = 575125 ms (the COCO scoring of epoch 1
  // runs on until 1593103042135 while the trainer goes on: line 1248 "iter:
  // 1840" at 16:36:52, so it is not subtracted); epoch 3, lines 1432-1570,
  // 577972 ms. MLPerf's drop_remainder: 1832 x 64 = 117248 images.
  // Cross-check with the trainer: iterations 1840 to 3660 (lines 1248, 1382)
  // from 16:36:52.988 to 16:46:24.098: 1820 x 64 / 571.110 s = 203.95 img/s.
  Attributes a;
  a.samples_per_epoch = 117266;
  const ReadResult read = ReadLogsWild(name, a);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0],
              HasSubstr(":764: train_samples 40000 is contradicted by the trainer's lines: line "
                        "1194 shows iteration 1820 at global_batch_size 64 (116480 samples)"));
  ExpectReading(read.samples, 2, 64, 1, (117248 / 575.125 + 117248 / 577.972) / 2);
}

// ---- dllogger/: NVIDIA DLE BERT pre-training, phase 2. ----

TEST(LogsWild, DlloggerBertSummaryNeedsTheGlobalBatch) {
  const std::string name = "dllogger/gkebe-EventBERT_dllogger.json";
  // Line 1 gives train_batch_size=10 per GPU and gradient_accumulation_steps=
  // 512, but not the number of GPUs.
  EXPECT_THAT(Refusal(name), HasSubstr(":1597: field 'batch': the log does not state the batch "
                                       "size; give it as PATH@batch=N"));
  // The summary (line 1597) says training_sequences_per_second 128.2778 and
  // raw_train_time 125567.504 s; DLE computes it as 10 x 512 x GPUs x steps /
  // time, and 10 x 512 x 2 x 1573 / 125567.504 = 128.2778 (1573 from the
  // final_loss record, line 1595): 2 GPUs, global batch 10240 sequences.
  ExpectReading(ReadLogsWild(name, BatchLogsWild(10240)).samples, 1, 10240, 1,
                10 * 512 * 2 * 1573 / 125567.50402712822, 1e-9);
}

}  // namespace
}  // namespace fitspeed
