// Every file of tests/data/logs-wild/{keras,timm,tf-cnn-benchmarks,fairseq,
// detectron2-mmdet}/ and dllogger/gkebe-EventBERT_dllogger.json, read through
// ParseSamples as `fitspeed read` reads them (issues 12 and 31): each either reads, with
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

// ---- fairseq/: MLPerf v0.7 Transformer, read from fairseq's own lines. ----

// The summaries of epochs 2 and 3 (epoch 1 is warm-up): wps tokens/s of all
// workers at wpb tokens per update, on the workers of the log's Namespace
// (distributed_world_size) and "WORLD_SIZE: N" lines. `lines` and `wps` are
// the two summary lines and their wps; `wpb` their wpb.
void ExpectFairseq(const std::string& file, int devices, const std::vector<int>& lines,
                   const std::vector<double>& wps, const std::vector<double>& wpb) {
  const ReadResult read = ReadLogsWild("fairseq/" + file);
  EXPECT_TRUE(read.warnings.empty()) << read.warnings.at(0);
  ASSERT_EQ(read.samples.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Sample& s = read.samples[i];
    EXPECT_EQ(s.line, lines[i]);
    EXPECT_EQ(s.epoch, static_cast<int>(i) + 2);
    EXPECT_EQ(s.unit, Unit::kTokens);
    EXPECT_EQ(s.devices, devices);
    EXPECT_EQ(s.batch, wpb[i]);
    EXPECT_EQ(*s.throughput_sps, wps[i]);
  }
}

TEST(LogsWild, FairseqTransformerTokensPerSecond) {
  // Each wps checked against the MLLOG epoch_start/epoch_stop times and the
  // updates of the epoch (num_updates of its summary less the previous one's):
  // tokens = updates x wpb over the epoch's seconds.
  // DellEMC C4140, 4 workers (Namespace distributed_world_size=4, lines 51-57
  // WORLD_SIZE: 4). Epoch 2 (lines 191-198): 2182 x 56067 / 688.655 s =
  // 177,648 vs wps 177660 (line 196); epoch 3 (lines 211-217): 2183 x 56061 /
  // 688.450 = 177,763 vs 177776 (line 215). wpb is all workers' tokens: 56067
  // > max_tokens 15360 of one worker, and 2182 x 56067 = 122.3 M tokens per
  // epoch of 4,590,101 sentence pairs (train_samples) is 26.7 per pair,
  // under max_target_positions 64; one worker's would be 106.6 per pair.
  ExpectFairseq("mlperf-v0.7_DellEMC_C4140_transformer_result_0.txt", 4, {196, 215},
                {177660, 177776}, {56067, 56061});
  // NVIDIA DGX-1, 8 workers: epoch 2 (lines 393-397) 1637 x 74793 / 347.535 =
  // 352,299 vs 352453 (line 395); epoch 3 (lines 410-416) 1635 x 74797 /
  // 347.714 = 351,706 vs 351840 (line 414).
  ExpectFairseq("mlperf-v0.7_NVIDIA_dgx1_ngc20.06_pytorch_transformer_result_0.txt", 8, {395, 414},
                {352453, 351840}, {74793, 74797});
  // Tencent 8x V100: epoch 2 (lines 184-191) 2049 x 59700 / 266.071 = 459,747
  // vs 459989 (line 189); epoch 3 (lines 204-210) 2050 x 59696 / 266.464 =
  // 459,262 vs 459464 (line 208).
  ExpectFairseq("mlperf-v0.7_Tencent_GN10X-8xV100_transformer_result_0.txt", 8, {189, 208},
                {459989, 459464}, {59700, 59696});
}

TEST(LogsWild, FairseqLogsStillReadAsMllogWhenNamed) {
  // --input-format mllog reads the MLLOG epochs, which count sentence pairs
  // while global_batch_size counts tokens: the batch is asked for.
  ReadOptions options;
  options.format = Format::kMllog;
  const std::string path = "logs-wild/fairseq/mlperf-v0.7_DellEMC_C4140_transformer_result_0.txt";
  const std::string text = ReadData(path);
  EXPECT_THAT(DataErrorOf([&] { ParseWith(text, path, {}, options); }),
              HasSubstr("give it as PATH@batch=N"));
}

// ---- detectron2-mmdet/: the `time:` of each training line. ----

TEST(LogsWild, Detectron2BalloonTutorialNeedsTheBatch) {
  const std::string name = "detectron2-mmdet/Richard-cpu2333-tx2dl_models_log_R50-FPN_log.py.txt";
  // No IMS_PER_BATCH or world size in the log (the balloon tutorial sets
  // IMS_PER_BATCH = 2 in its notebook, which the log does not show).
  EXPECT_THAT(Refusal(name), HasSubstr(":358: field 'batch': the log does not state the batch "
                                       "size; give it as PATH@batch=N"));
  // Lines 358-371 (line 357, iteration 19, is warm-up): time 1.2048 ...
  // 1.2533, sorted the 7th and 8th of 14 are 1.2379 (line 365) and 1.2383
  // (line 363). This detectron2's `time` is the mean since the start: the last
  // (1.2533, line 371) is line 372's "298 iterations in 0:06:13 (1.2533 s /
  // it)"; the timestamps give iterations 19-299 in 02:43:17 - 02:37:24 = 353 s,
  // 1.261 s each.
  ExpectReading(ReadLogsWild(name, BatchLogsWild(2)).samples, 14, 2, 1,
                (2 / 1.2379 + 2 / 1.2383) / 2);
}

TEST(LogsWild, TorchvisionMetricLoggerEpochTotals) {
  const std::string name = "detectron2-mmdet/beijn-bachelor-thesis_detection_traingraph.py.txt";
  // A Python string of torchvision's detection output: no batch or world size.
  EXPECT_THAT(Refusal(name), HasSubstr(":14: field 'batch'"));
  // "Epoch: [k] Total time: ... (s / it)" of epochs 2-10 (printed 1-9):
  // 0.5778 0.5770 0.5360 0.5375 0.6004 0.5566 0.5570 0.5299 0.5841, median
  // 0.5570 (line 56, "Epoch: [7] Total time: 0:00:03", 6 x 0.557 = 3.3 s).
  // Batch 2, torchvision's default --batch-size, given for the test.
  ExpectReading(ReadLogsWild(name, BatchLogsWild(2)).samples, 9, 2, 1, 2 / 0.5570);
}

TEST(LogsWild, MmcvExcerptIsAllWarmUp) {
  const std::string name = "detectron2-mmdet/issue_open-mmlab-mmpretrain-408_mmcls-log.excerpt.txt";
  EXPECT_THAT(Refusal(name), HasSubstr(":2: field 'batch'"));
  // Seven lines of epoch 1 (2-8), all warm-up: read with a warning. time:
  // 6.430 0.196 0.158 0.165 0.176 0.142 0.171, median 0.171 (line 8); the
  // timestamps agree: lines 7-8 are 17:01:57.870 - 17:01:40.786 = 17.084 s for
  // 100 iterations. 5005 iterations per epoch are ImageNet's 1,281,167 images
  // at 256 (ceil(1281167 / 256) = 5005), given for the test: the log states
  // neither.
  const ReadResult read = ReadLogsWild(name, BatchLogsWild(256));
  ExpectReading(read.samples, 7, 256, 1, 256 / 0.171);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr(":8: every training line of the log is in the warm-up"));
}

TEST(LogsWild, MaskRcnnReadFromTheTrainerLines) {
  // Lines 1-1570 of the DellEMC DSS8440 MLPerf v0.7 Mask R-CNN log: 274
  // maskrcnn_benchmark.trainer lines (iterations 20-5480, lines 1104-1569),
  // the first dropped as warm-up. Batch 64: SOLVER's IMS_PER_BATCH (line 309)
  // and global_batch_size (line 323) agree. `time` is the median of 20
  // iterations; the median of the 273 is 0.3117 s (line 1302, iteration
  // 2060): 64 / 0.3117 = 205.33 img/s. Cross-check with the trainer's
  // timestamps: iterations 1840 to 3660 (lines 1248, 1382) from 16:36:52.988
  // to 16:46:24.098, 1820 x 64 / 571.110 s = 203.95 img/s (the mean, which
  // the median of each window is a little under). Read from the MLLOG epochs
  // instead, train_samples 40000 (line 764) is contradicted by the trainer
  // (iteration 1820 before epoch 1 stops): --input-format mllog asks for
  // @samples=.
  const std::string name =
      "detectron2-mmdet/mlperf-v0.7_DellEMC_DSS8440_maskrcnn_result_0.excerpt.txt";
  const ReadResult read = ReadLogsWild(name);
  EXPECT_TRUE(read.warnings.empty());
  ExpectReading(read.samples, 273, 64, 1, 64 / 0.3117);
  EXPECT_EQ(read.samples.front().line, 1105);
  EXPECT_EQ(*read.samples.front().step_time_s, 0.2928);
}

TEST(LogsWild, MaskRcnnAsMllogTrainSamplesContradictedByTheTrainer) {
  // Named as mllog, the same log is read from its MLLOG epochs (issue 12).
  // global_batch_size 64 (line 323); train_samples 40000 (line 764) is the
  // config's MAX_ITER (line 310), not an epoch: the trainer shows iteration
  // 1820 (line 1194) before epoch 1 stops (line 1195), 116480 images.
  const std::string path =
      "logs-wild/detectron2-mmdet/mlperf-v0.7_DellEMC_DSS8440_maskrcnn_result_0.excerpt.txt";
  const std::string text = ReadData(path);
  ReadOptions options;
  options.format = Format::kMllog;
  EXPECT_THAT(DataErrorOf([&] { ParseWith(text, path, {}, options); }),
              HasSubstr("give it as PATH@samples=N"));
  // With COCO 2017 train's 117266 images: epoch 2, lines 1245-1383,
  // 1593103585952 - 1593103010827 = 575125 ms; epoch 3, lines 1432-1570,
  // 577972 ms. MLPerf's drop_remainder: 1832 x 64 = 117248 images.
  Attributes a;
  a.samples_per_epoch = 117266;
  const ReadResult read = ParseWith(text, path, a, options);
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
