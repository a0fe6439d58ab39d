// Tests of the NVIDIA dllogger "DLLL {json}" reader. The PyTorch ResNet-50 lines
// are quoted from NVIDIA/dllogger, examples/example_resnet_log.json (written by
// DeepLearningExamples' PyTorch ConvNets training script); the other texts
// follow the line format of dllogger/logger.py JSONStreamBackend with the data
// keys and step shapes of the DeepLearningExamples scripts named at each test.
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

// From NVIDIA/dllogger examples/example_resnet_log.json: the PARAMETER line,
// two METADATA lines, the first training and validation iterations, both
// end-of-epoch records ("step": [0] and [1]) and the summary ("step": []).
constexpr const char* kResnetLog =
    R"log(DLLL {"timestamp": "1570716916.143421", "datetime": "2019-10-10 14:15:16.143421+00:00", "type": "LOG", "step": "PARAMETER", "data": {"data": "/imagenet", "data_backend": "dali-cpu", "arch": "resnet50", "model_config": "classic", "workers": 5, "epochs": 2, "batch_size": 128, "optimizer_batch_size": -1, "lr": 0.1, "lr_schedule": "step", "warmup": 0, "label_smoothing": 0.0, "mixup": 0.0, "momentum": 0.9, "weight_decay": 0.0001, "bn_weight_decay": false, "nesterov": false, "print_freq": 5, "resume": "", "pretrained_weights": "", "fp16": false, "static_loss_scale": 1, "dynamic_loss_scale": false, "prof": 25, "amp": true, "local_rank": 0, "seed": null, "gather_checkpoints": false, "raport_file": "experiment_raport.json", "evaluate": false, "training_only": false, "save_checkpoints": true, "workspace": "/results", "distributed": false, "gpu": 0, "world_size": 1}}
DLLL {"timestamp": "1570716916.152793", "datetime": "2019-10-10 14:15:16.152793+00:00", "type": "METADATA", "metric": "train.compute_ips", "metadata": {"unit": "img/s", "format": ":.2f+00:00", "type": "THROUGHPUT"}}
DLLL {"timestamp": "1570716916.15283", "datetime": "2019-10-10 14:15:16.152830+00:00", "type": "METADATA", "metric": "train.total_ips", "metadata": {"unit": "img/s", "format": ":.2f+00:00", "type": "THROUGHPUT"}}
DLLL {"timestamp": "1570716921.842053", "datetime": "2019-10-10 14:15:21.842053+00:00", "type": "LOG", "step": [0, 5], "data": {"train.loss": 8.56640625, "train.total_ips": 545.2730241953889}}
DLLL {"timestamp": "1570716921.84219", "datetime": "2019-10-10 14:15:21.842190+00:00", "type": "LOG", "step": [0, 5], "data": {"lr": 0.1, "train.compute_ips": 547.1155618593889, "train.data_time": 0.0024609088897705076, "train.compute_time": 1.1351056098937988}}
DLLL {"timestamp": "1570716925.976676", "datetime": "2019-10-10 14:15:25.976676+00:00", "type": "LOG", "step": [0, 25, 5], "data": {"val.top1": 0.0, "val.top5": 0.0, "val.loss": 980.1, "val.total_ips": 1899.5387923262765}}
DLLL {"timestamp": "1570716927.418798", "datetime": "2019-10-10 14:15:27.418798+00:00", "type": "LOG", "step": [0], "data": {"train.loss": 8.34140625, "train.total_ips": 648.9330897795348, "val.top1": 0.0, "val.top5": 0.0, "val.loss": 907.16, "val.total_ips": 1838.6215513621019}}
DLLL {"timestamp": "1570716927.418929", "datetime": "2019-10-10 14:15:27.418929+00:00", "type": "LOG", "step": [0], "data": {"lr": 0.1, "train.compute_ips": 650.8774403403595, "train.data_time": 0.0009337902069091797, "train.compute_time": 0.37831764221191405, "val.compute_ips": 1948.5837818061648, "val.data_time": 0.005306968688964844, "val.compute_latency": 0.06570755004882813}}
DLLL {"timestamp": "1570716928.478332", "datetime": "2019-10-10 14:15:28.478332+00:00", "type": "LOG", "step": [1, 5], "data": {"train.loss": 7.26328125, "train.total_ips": 675.02666986389}}
DLLL {"timestamp": "1570716934.053365", "datetime": "2019-10-10 14:15:34.053365+00:00", "type": "LOG", "step": [1], "data": {"train.loss": 7.094375, "train.total_ips": 675.0272251225636, "val.top1": 0.0, "val.top5": 0.28125, "val.loss": 7.0034375, "val.total_ips": 1853.2851323015802}}
DLLL {"timestamp": "1570716934.053537", "datetime": "2019-10-10 14:15:34.053537+00:00", "type": "LOG", "step": [1], "data": {"lr": 0.1, "train.compute_ips": 677.075601164113, "train.data_time": 0.0005739879608154297, "train.compute_time": 0.18904858589172363, "val.compute_ips": 1935.621602561903, "val.data_time": 0.00468775749206543, "val.compute_latency": 0.06614609718322755}}
DLLL {"timestamp": "1570716934.289014", "datetime": "2019-10-10 14:15:34.289014+00:00", "type": "LOG", "step": [], "data": {"train.loss": 8.34140625, "train.total_ips": 661.9801574510492, "val.top1": 0.0, "val.top5": 0.28125, "val.loss": 907.16, "val.total_ips": 1845.9533418318408}}
DLLL {"timestamp": "1570716934.289168", "datetime": "2019-10-10 14:15:34.289168+00:00", "type": "LOG", "step": [], "data": {"lr": 0.1, "train.compute_ips": 663.9765207522363, "train.data_time": 0.0007538890838623047, "train.compute_time": 0.28368311405181884, "val.compute_ips": 1942.102692184034, "val.data_time": 0.0049973630905151365, "val.compute_latency": 0.06592682361602784}}
)log";

std::vector<Sample> Parse(std::string_view text, int skip_first_epochs = 1,
                          const Attributes& attributes = {}) {
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;  // format detected from the text
  return ParseSamples(text, "test.json", attributes, options);
}

std::vector<Sample> ReadRawDllogger(std::string_view text, const Attributes& attributes = {}) {
  const std::string source = "raw.json";
  const ReadOptions options;
  return io::ReadDllogger(text, io::ReaderContext{source, attributes, options});
}

std::string DataErrorMessageDllogger(std::string_view text, const Attributes& attributes = {}) {
  return testing::DataErrorOf([&] { ReadRawDllogger(text, attributes); });
}

// A LOG line as JSONStreamBackend writes it.
std::string Log(const std::string& step, const std::string& data) {
  return "DLLL {\"timestamp\": \"1600000000.0\", \"datetime\": \"2020-09-13 12:26:40+00:00\", "
         "\"elapsedtime\": \"1.0\", \"type\": \"LOG\", \"step\": " +
         step + ", \"data\": {" + data + "}}\n";
}

TEST(DlloggerReader, PyTorchConvNetsTakesEpochAverages) {
  EXPECT_EQ(DetectFormat(kResnetLog), Format::kDllogger);
  const std::vector<Sample> samples = Parse(kResnetLog);
  // Two end-of-epoch records, "step": [0] and [1] (epochs 1 and 2); epoch 1 is warm-up.
  ASSERT_EQ(samples.size(), 1u);
  const Sample& s = samples[0];
  EXPECT_DOUBLE_EQ(*s.throughput_sps, 675.0272251225636);  // "step": [1], "train.total_ips"
  EXPECT_EQ(*s.epoch, 2);
  EXPECT_EQ(s.line, 10);
  // PARAMETER: "batch_size": 128 per GPU, "world_size": 1.
  EXPECT_EQ(s.batch, 128);
  EXPECT_EQ(s.devices, 1);
  EXPECT_EQ(s.precision, "mixed");  // "amp": true
}

TEST(DlloggerReader, SkipZeroKeepsTheFirstEpoch) {
  const std::vector<Sample> samples = Parse(kResnetLog, 0);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 648.9330897795348);  // "step": [0]
  EXPECT_EQ(*samples[0].epoch, 1);
  EXPECT_EQ(samples[0].line, 7);
  // The summary, 661.9801574510492, is the mean of both epochs,
  // (648.933 + 675.027) / 2 = 661.980, warm-up included: it is not used.
  EXPECT_DOUBLE_EQ(*samples[1].throughput_sps, 675.0272251225636);
}

TEST(DlloggerReader, SummaryIsUsedWithoutEpochRecords) {
  // TensorFlow ConvNets (runner.py, utils/hooks/training_hooks.py): iterations log
  // "imgs_per_sec" = global_batch_size / step time at "step": [epoch, global_step],
  // end-of-epoch lines log losses only, the summary logs "train_throughput".
  const std::string text =
      Log("\"PARAMETER\"", "\"global_batch_size\": 2048, \"num_gpus\": 8") +
      Log("[0, 20]", "\"imgs_per_sec\": 9750.5, \"cross_entropy\": 6.9, \"total_loss\": 7.9") +
      Log("[0, 21]", "\"imgs_per_sec\": 9812.25, \"cross_entropy\": 6.8, \"total_loss\": 7.8") +
      Log("[0]", "\"cross_entropy\": 6.8, \"l2_loss\": 1.0, \"total_loss\": 7.8") +
      Log("[]", "\"train_throughput\": 9781.375");
  const std::vector<Sample> samples = Parse(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 9781.375);
  EXPECT_EQ(samples[0].line, 5);
  EXPECT_EQ(samples[0].batch, 2048);  // global, not multiplied by num_gpus
  EXPECT_EQ(samples[0].devices, 8);
  EXPECT_FALSE(samples[0].epoch.has_value());
}

TEST(DlloggerReader, IterationsGiveTheMedianAfterWarmUp) {
  // BERT TF (run_pretraining.py): every rank logs "throughput_train" =
  // global_batch_size / step time at a bare global step; no epoch, no summary here.
  std::string text = Log("\"PARAMETER\"", "\"global_batch_size\": 65536");
  const double values[] = {1200, 2800, 3000, 3150, 3100, 3120};
  for (int i = 0; i < 6; ++i) {
    text += Log(std::to_string(100 * (i + 1)),
                "\"Rank\": 0, \"throughput_train\": " + std::to_string(values[i]) +
                    ", \"total_loss\": 9.5");
  }
  const std::vector<Sample> samples = Parse(text);
  ASSERT_EQ(samples.size(), 1u);
  // 6 iterations: min(20, 6 / 2) = 3 dropped as warm-up; median of 3150, 3100, 3120 = 3120.
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 3120);
  EXPECT_EQ(samples[0].line, 7);
  EXPECT_EQ(samples[0].batch, 65536);
}

TEST(DlloggerReader, LinesOfOneIterationAreMerged) {
  // PyTorch ConvNets writes train.total_ips and train.compute_ips of one step on two
  // lines (as in the quoted example log); only the preferred total_ips is used.
  std::string text = Log("\"PARAMETER\"", "\"global_batch_size\": 256");
  const double total[] = {300, 500, 600, 700};
  for (int i = 0; i < 4; ++i) {
    const std::string step = "[0, " + std::to_string(5 * (i + 1)) + "]";
    text += Log(step, "\"train.total_ips\": " + std::to_string(total[i]));
    text += Log(step, "\"train.compute_ips\": 9999.0");
  }
  const std::vector<Sample> samples = Parse(text);
  ASSERT_EQ(samples.size(), 1u);
  // 4 iterations, 2 dropped as warm-up: median of 600 and 700.
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 650);
  EXPECT_EQ(*samples[0].epoch, 1);
}

TEST(DlloggerReader, IterationsAreGroupedByEpoch) {
  // TF ConvNets style [epoch, step] iterations, 44 of them: the first 20 are warm-up.
  std::string text;
  for (int i = 0; i < 44; ++i) {
    const int epoch = i < 30 ? 0 : 1;
    const double ips = i < 20 ? 100 : (epoch == 0 ? 1000 + i : 2000 + i);
    text += Log("[" + std::to_string(epoch) + ", " + std::to_string(i) + "]",
                "\"imgs_per_sec\": " + std::to_string(ips));
  }
  Attributes attributes;
  attributes.batch = 256;
  const std::vector<Sample> samples = Parse(text, 0, attributes);
  ASSERT_EQ(samples.size(), 2u);
  // Epoch 0 (1): i = 20..29, values 1020..1029, median (1024 + 1025) / 2.
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 1024.5);
  EXPECT_EQ(*samples[0].epoch, 1);
  // Epoch 1 (2): i = 30..43, values 2030..2043, median (2036 + 2037) / 2.
  EXPECT_DOUBLE_EQ(*samples[1].throughput_sps, 2036.5);
  EXPECT_EQ(samples[1].batch, 256);
}

TEST(DlloggerReader, PerDeviceBatchNeedsTheDeviceCount) {
  const std::string text =
      Log("\"PARAMETER\"", "\"batch_size\": 256") + Log("[]", "\"train.total_ips\": 20000.0");
  const std::string message = DataErrorMessageDllogger(text);
  EXPECT_NE(message.find("raw.json:1"), std::string::npos) << message;
  EXPECT_NE(message.find("PATH@devices=N"), std::string::npos) << message;
  Attributes eight;
  eight.devices = 8;
  const std::vector<Sample> samples = Parse(text, 1, eight);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].batch, 2048);  // 256 per device * 8
  EXPECT_EQ(samples[0].devices, 8);
  Attributes global;
  global.batch = 4096;
  EXPECT_EQ(Parse(text, 1, global)[0].batch, 4096);
}

TEST(DlloggerReader, ParametersMayComeOneKeyPerLine) {
  // FastPitch-style: one PARAMETER line per argument.
  const std::string text = Log("\"PARAMETER\"", "\"batch_size\": 32") +
                           Log("\"PARAMETER\"", "\"world_size\": 4") +
                           Log("[]", "\"train.total_ips\": 1000.0");
  const std::vector<Sample> samples = Parse(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].batch, 128);
  EXPECT_EQ(samples[0].devices, 4);
}

TEST(DlloggerReader, OptimizerBatchSizeIsTheGlobalBatch) {
  // PyTorch ConvNets --optimizer-batch-size: the batch of an optimizer step,
  // reached by accumulating iterations of batch_size * world_size = 512.
  const std::string text =
      Log("\"PARAMETER\"",
          "\"batch_size\": 64, \"world_size\": 8, \"optimizer_batch_size\": 2048") +
      Log("[]", "\"train.total_ips\": 7000.0");
  const std::vector<Sample> samples = Parse(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].batch, 2048);
  EXPECT_EQ(samples[0].devices, 8);
}

TEST(DlloggerReader, GradientAccumulationLeavesTheBatchToTheUser) {
  const std::string text =
      Log("\"PARAMETER\"",
          "\"train_batch_size\": 64, \"n_gpu\": 8, \"gradient_accumulation_steps\": 4") +
      Log("[]", "\"training_sequences_per_second\": 1500.0, \"e2e_train_time\": 100.0");
  const std::vector<Sample> raw = ReadRawDllogger(text);
  ASSERT_EQ(raw.size(), 1u);
  EXPECT_EQ(raw[0].batch, 0);
  EXPECT_EQ(raw[0].devices, 8);
  EXPECT_DOUBLE_EQ(*raw[0].throughput_sps, 1500.0);
  EXPECT_THROW(Parse(text), DataError);
}

TEST(DlloggerReader, MalformedJsonNamesTheLine) {
  const std::string text = Log("\"PARAMETER\"", "\"global_batch_size\": 8") +
                           "DLLL {\"type\": \"LOG\", \"step\": [], \"data\": {\"ips\": }\n";
  const std::string message = DataErrorMessageDllogger(text);
  EXPECT_NE(message.find("raw.json:2"), std::string::npos) << message;
  EXPECT_NE(message.find("malformed JSON"), std::string::npos) << message;
  // A last line cut without a line end (a log still being written) is ignored.
  const std::string cut = Log("[]", "\"train.total_ips\": 10.0") + "DLLL {\"type\": \"LO";
  EXPECT_EQ(ReadRawDllogger(cut).size(), 1u);
}

TEST(DlloggerReader, ReadsPythonNanAndInfinity) {
  // json.dumps writes a NaN loss as NaN; the line is still read.
  const std::string text =
      Log("\"PARAMETER\"", "\"global_batch_size\": 512, \"note\": \"NaN inside a string\"") +
      Log("[]", "\"train.loss\": NaN, \"lr\": -Infinity, \"train.total_ips\": 4000.5");
  const std::vector<Sample> samples = Parse(text);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 4000.5);
  EXPECT_EQ(samples[0].batch, 512);
  // A NaN throughput is an error.
  EXPECT_NE(
      DataErrorMessageDllogger(Log("[]", "\"train.total_ips\": NaN")).find("data.train.total_ips"),
      std::string::npos);
}

TEST(DlloggerReader, ABadThroughputIsNamed) {
  const std::string message = DataErrorMessageDllogger(Log("[]", "\"train.total_ips\": \"fast\""));
  EXPECT_NE(message.find("data.train.total_ips"), std::string::npos) << message;
  EXPECT_NE(DataErrorMessageDllogger(Log("[0]", "\"throughput_train\": -5")).find("positive"),
            std::string::npos);
}

TEST(DlloggerReader, NoTrainingThroughputGivesNoSamples) {
  // An inference run: only validation keys.
  const std::string text = Log("\"PARAMETER\"", "\"global_batch_size\": 8") +
                           Log("[]", "\"val.total_ips\": 1800.0, \"eval_throughput\": 1700");
  EXPECT_TRUE(ReadRawDllogger(text).empty());
  EXPECT_THROW(Parse(text), DataError);
}

TEST(DlloggerReader, DetectsTheFormat) {
  EXPECT_TRUE(io::LooksLikeDllogger(kResnetLog));
  EXPECT_TRUE(io::LooksLikeDllogger("0: DLLL {\"type\": \"LOG\"}\n"));
  EXPECT_FALSE(
      io::LooksLikeDllogger("DLL 2021-03-23 11:48:38.824370 - (0, 120) total_ips : 2879.1\n"));
  EXPECT_FALSE(io::LooksLikeDllogger("epoch,time\n1,20\n"));
}

// MLPerf v3.0 RNN-T, NVIDIA's code on 6 L4 (xFusion), dllogger with METADATA
// lines and iteration steps [epoch, iteration, iterations per epoch].
TEST(DlloggerReader, RnntEpochAveragesAreReadAndItsIterationRatesAreNot) {
  const std::string text =
      testing::ReadData("logs-wild/dllogger/mlperf-v3.0_xFusion_2288H_V7x6xL4_rnnt_nvlog.json");
  // batch_size 128 is per device and the log does not say on how many: asked for.
  EXPECT_THROW(Parse(text), DataError);
  Attributes given;
  given.batch = 768;
  const std::vector<Sample> samples = Parse(text, 1, given);
  ASSERT_FALSE(samples.empty());
  // Line 166, step [2]: train_avg_throughput 1469.325062111987 (and
  // train_avg_took 189.213 s: 278,016 utterances, LibriSpeech's 281,241 less
  // those over max_duration 16.7 s). Epoch 1 (line 128: 1477.3) is warm-up.
  EXPECT_EQ(samples[0].line, 166);
  EXPECT_EQ(*samples[0].epoch, 2);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 1469.325062111987);
  // Not the iteration records' train_throughput (152.7 on line 92: 768
  // utterances over train_took 5.03 s, the time of 10 iterations).
  for (const Sample& s : samples) EXPECT_GT(*s.throughput_sps, 1000) << s.line;
}

}  // namespace
}  // namespace fitspeed
