// Tests of the CSV/TSV reader on two real tables in tests/data/measured
// (koshian2/TPU-Benchmark per-epoch times; the Pollux OSDI'21 T4 placements
// trace) and on small tables written here. Expected values are quoted from the
// files' lines (line numbers as `grep -n` prints them, header = line 1).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
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

const char kKoshian2[] = "measured/koshian2_tpu_benchmark_main_per_epoch.csv";
const char kPollux[] = "measured/pollux_t4_single_node.csv";

using fitspeed::testing::AtLine;
using fitspeed::testing::ReadData;

// The reader alone: what the table states, before attributes and validation.
std::vector<Sample> ReadRaw(std::string_view text, int skip_first_epochs = 1,
                            const Attributes& attributes = {}) {
  const std::string source = "t.csv";
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return io::ReadCsv(text, io::ReaderContext{source, attributes, options});
}

std::string DataErrorMessage(std::string_view text, const Attributes& attributes = {}) {
  return testing::DataErrorOf([&] { ReadRaw(text, 1, attributes); });
}

// --- koshian2/TPU-Benchmark main_per_epoch.csv ----------------------------------
// Header: device,batch_size,use_validation,use_augmentation,from_storage,
//         num_workers,epoch,epoch_time_s,initial_time_s,source_file

TEST(CsvReader, Koshian2KeepsEpochsAfterTheFirst) {
  const std::vector<Sample> samples = ReadRaw(ReadData(kKoshian2));
  // Counted with awk, independently of the reader: 1600 data rows in 80 distinct
  // (device, batch_size, use_validation, use_augmentation, from_storage,
  // num_workers) configurations; `awk -F, 'NR>1 && $7>1'` prints 1520 rows.
  // By hand for one configuration: lines 2-21 are gpu,64,False,False,False,1
  // epochs 1..20, so 19 samples remain from it: 80 x 19 = 1520.
  EXPECT_EQ(samples.size(), 1520u);
  int from_first_config = 0;
  for (const Sample& s : samples) {
    if (s.line >= 2 && s.line <= 21) ++from_first_config;
  }
  EXPECT_EQ(from_first_config, 19);
}

TEST(CsvReader, Koshian2KeepsEveryEpochWhenAskedTo) {
  EXPECT_EQ(ReadRaw(ReadData(kKoshian2), /*skip_first_epochs=*/0).size(), 1600u);
}

TEST(CsvReader, Koshian2ValuesAndSeriesKeys) {
  const std::vector<Sample> samples = ReadRaw(ReadData(kKoshian2));
  // Line 2 is epoch 1 (dropped): gpu,64,False,False,False,1,1,993.567,...
  EXPECT_EQ(AtLine(samples, 2), nullptr);
  // Line 3: gpu,64,False,False,False,1,2,976.306,7.141,raw_result/main/gpu_batchsize_64_sep0.dat
  const Sample* s = AtLine(samples, 3);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->batch, 64);
  EXPECT_EQ(s->devices, 1);
  ASSERT_TRUE(s->epoch_time_s.has_value());
  EXPECT_DOUBLE_EQ(*s->epoch_time_s, 976.306);
  EXPECT_EQ(s->epoch, 2);
  EXPECT_FALSE(s->throughput_sps.has_value());
  EXPECT_FALSE(s->step_time_s.has_value());
  EXPECT_FALSE(s->samples_per_epoch.has_value());  // the table has no such column
  EXPECT_EQ(s->label,
            "device=gpu,use_validation=False,use_augmentation=False,from_storage=False,"
            "num_workers=1");
  // initial_time_s (a per-run float) and source_file are not keys (not in the
  // label) but travel as tags, as the line has them; epoch is neither.
  const std::map<std::string, std::string> expected_tags = {
      {"device", "gpu"},
      {"use_validation", "False"},
      {"use_augmentation", "False"},
      {"from_storage", "False"},
      {"num_workers", "1"},
      {"initial_time_s", "7.141"},
      {"source_file", "raw_result/main/gpu_batchsize_64_sep0.dat"}};
  EXPECT_EQ(s->tags, expected_tags);

  // Line 1443:
  // tpu,4096,False,False,False,1,2,50.199,0.146,raw_result/main/tpu_batchsize_4096_sep0.dat
  s = AtLine(samples, 1443);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->batch, 4096);
  EXPECT_DOUBLE_EQ(*s->epoch_time_s, 50.199);
  EXPECT_EQ(s->tags.at("device"), "tpu");

  // Line 43: gpu,64,False,False,True,4,2,1043.058,4.736,raw_result/main/gpu_batchsize_64_sep3_1.dat
  s = AtLine(samples, 43);
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(*s->epoch_time_s, 1043.058);
  EXPECT_EQ(s->tags.at("num_workers"), "4");
  EXPECT_EQ(s->tags.at("from_storage"), "True");
}

TEST(CsvReader, Koshian2HasSixteenSeries) {
  // `awk -F, 'NR>1{print $1,$3,$4,$5,$6}' | sort -u` gives 16 combinations of
  // the key columns: 8 for gpu (3 batch sizes each) and 8 for tpu (7 each).
  // initial_time_s as a key would have split them into 80 single-batch series.
  std::set<std::string> labels;
  std::set<std::string> tpu_labels;
  for (const Sample& s : ReadRaw(ReadData(kKoshian2))) {
    labels.insert(s.label);
    if (s.tags.at("device") == "tpu") tpu_labels.insert(s.label);
  }
  EXPECT_EQ(labels.size(), 16u);
  EXPECT_EQ(tpu_labels.size(), 8u);
}

TEST(CsvReader, Koshian2ThroughParseSamplesTakesSamplesFromAttributes) {
  const std::string text = ReadData(kKoshian2);
  Attributes attributes;
  attributes.samples_per_epoch = 50000;  // CIFAR-100 training images
  const std::vector<Sample> samples = ParseSamples(text, "k.csv", attributes);
  EXPECT_EQ(samples.size(), 1520u);
  EXPECT_EQ(samples.front().samples_per_epoch, 50000);

  // Without it, validation names the first kept row (line 3) and the attribute to give.
  try {
    ParseSamples(text, "k.csv");
    FAIL() << "expected a DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("k.csv:3"));
    EXPECT_THAT(e.what(), HasSubstr("PATH@samples=N"));
  }
}

// --- Pollux placements.csv (T4, one node) -----------------------------------------
// Header: model,placement,local_bsz,step_time,sync_time

TEST(CsvReader, PolluxGlobalBatchIsLocalTimesPlacement) {
  const std::vector<Sample> samples = ReadRaw(ReadData(kPollux));
  // 220 lines (`wc -l`) less the header; per model x placement 5 (bert),
  // 11 (cifar10), 7 (deepspeech2), 8 (imagenet), 21+19+18+17 (ncf), 5 (yolov3):
  // 4*5 + 4*11 + 4*7 + 4*8 + 75 + 4*5 = 219.
  EXPECT_EQ(samples.size(), 219u);

  // Line 2: bert,1,4,0.45532354712486267,0.013738612174987792
  const Sample* s = AtLine(samples, 2);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->devices, 1);
  EXPECT_EQ(s->batch, 4);
  ASSERT_TRUE(s->step_time_s.has_value());
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.45532354712486267);  // includes sync_time
  EXPECT_EQ(s->label, "model=bert");
  // sync_time is read past, not a key: a tag only, with the line's text.
  const std::map<std::string, std::string> expected_tags = {{"model", "bert"},
                                                            {"sync_time", "0.013738612174987792"}};
  EXPECT_EQ(s->tags, expected_tags);

  // Line 102: imagenet,2,20,0.15286269187927246,... -> 2 GPUs x 20 = 40 per step.
  s = AtLine(samples, 102);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->devices, 2);
  EXPECT_EQ(s->batch, 40);
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.15286269187927246);

  // Line 218: yolov3,4,8,0.5009251087903976,... -> 4 GPUs x 8 = 32.
  s = AtLine(samples, 218);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->devices, 4);
  EXPECT_EQ(s->batch, 32);
  EXPECT_DOUBLE_EQ(*s->step_time_s, 0.5009251087903976);
  EXPECT_EQ(s->label, "model=yolov3");
}

TEST(CsvReader, PolluxMultiNodePlacementSumsItsDigits) {
  // Pollux writes a placement as one digit per node: "22" is 2 nodes x 2 GPUs.
  const auto samples = ReadRaw("model,placement,local_bsz,step_time\nbert,22,8,0.5\n");
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].devices, 4);
  EXPECT_EQ(samples[0].batch, 32);  // 8 per GPU x 4 GPUs
}

// --- Names, units, delimiters ------------------------------------------------------

TEST(CsvReader, TimeUnitsScaleToSeconds) {
  auto step = [](const std::string& header) {
    const auto samples = ReadRaw("batch," + header + "\n64,250\n");
    EXPECT_EQ(samples.size(), 1u);
    return samples.empty() || !samples[0].step_time_s ? -1.0 : *samples[0].step_time_s;
  };
  EXPECT_DOUBLE_EQ(step("step_time_ms"), 0.25);       // 250 ms
  EXPECT_DOUBLE_EQ(step("time_ms_per_batch"), 0.25);  // Paddle's benchmark column
  EXPECT_DOUBLE_EQ(step("step time [ms]"), 0.25);
  EXPECT_DOUBLE_EQ(step("Step_Time (s)"), 250);
  EXPECT_DOUBLE_EQ(step("step_time"), 250);  // seconds when no unit is named
  EXPECT_DOUBLE_EQ(step("step_time_us"), 250e-6);
  EXPECT_DOUBLE_EQ(step("ms_per_step"), 0.25);
  const auto epochs = ReadRaw("batch,epoch_time (min)\n64,2\n");
  ASSERT_EQ(epochs.size(), 1u);
  EXPECT_DOUBLE_EQ(*epochs[0].epoch_time_s, 120);  // 2 min
  const auto epochs_ms = ReadRaw("batch,epoch_time_ms\n64,1500\n");
  ASSERT_EQ(epochs_ms.size(), 1u);
  EXPECT_DOUBLE_EQ(*epochs_ms[0].epoch_time_s, 1.5);
}

TEST(CsvReader, ThroughputColumns) {
  auto rate = [](const std::string& header) {
    const auto samples = ReadRaw("batch_size," + header + "\n128,400\n");
    EXPECT_EQ(samples.size(), 1u) << header;
    return samples.empty() || !samples[0].throughput_sps ? -1.0 : *samples[0].throughput_sps;
  };
  for (const char* header : {"throughput", "throughput_sps", "samples_per_sec", "img/s",
                             "images_per_second", "train_images_per_second", "tokens/s",
                             "sequences/s", "Throughput (img/s)", "samples/sec"}) {
    EXPECT_DOUBLE_EQ(rate(header), 400) << header;
  }
  EXPECT_DOUBLE_EQ(rate("samples_per_ms"), 400000);  // 400 per ms = 400000 per s
}

TEST(CsvReader, SniffsTabsAndSemicolonsAndReadsQuotes) {
  const auto tsv = ReadRaw("model\tbatch\tthroughput\nresnet\t64\t250.5\n");
  ASSERT_EQ(tsv.size(), 1u);
  EXPECT_DOUBLE_EQ(*tsv[0].throughput_sps, 250.5);
  EXPECT_EQ(tsv[0].label, "model=resnet");

  const auto semi = ReadRaw("model;bs;step_time_s\n\"a;b\";32;0.1\n");
  ASSERT_EQ(semi.size(), 1u);
  EXPECT_EQ(semi[0].batch, 32);
  EXPECT_EQ(semi[0].label, "model=a;b");

  // A comma inside quotes, an escaped quote, CRLF line ends, blank and '#' lines.
  const auto quoted = ReadRaw(
      "# measured by hand\r\nsystem,batch,throughput\r\n\r\n\"DGX-1, 8x \"\"V100\"\"\",256,"
      "1000\r\n");
  ASSERT_EQ(quoted.size(), 1u);
  EXPECT_EQ(quoted[0].tags.at("system"), "DGX-1, 8x \"V100\"");
  EXPECT_EQ(quoted[0].line, 4);
}

TEST(CsvReader, PerDeviceBatchTimesDevices) {
  const auto samples = ReadRaw("local_bsz,num_gpus,throughput\n32,4,1000\n");
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].devices, 4);
  EXPECT_EQ(samples[0].batch, 128);  // 32 x 4

  // Paddle's K40m table states both: 4 GPUs x 64 = 256.
  const auto both = ReadRaw(
      "model,num_gpus,batch_size_per_gpu,total_batch_size,time_ms_per_batch\n"
      "AlexNet,4,64,256,300\n");
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].batch, 256);
  EXPECT_DOUBLE_EQ(*both[0].step_time_s, 0.3);

  // Without a devices column the devices are the ratio of the two batches.
  const auto ratio = ReadRaw("batch_size_per_gpu,global_batch_size,throughput\n64,512,900\n");
  ASSERT_EQ(ratio.size(), 1u);
  EXPECT_EQ(ratio[0].devices, 8);

  // A bracket that is not a unit is part of the name.
  const auto bracket = ReadRaw("Batch size (per GPU),GPUs,img/s\n32,2,100\n");
  ASSERT_EQ(bracket.size(), 1u);
  EXPECT_EQ(bracket[0].batch, 64);  // 32 x 2
  const auto samples_unit = ReadRaw("batch [samples],throughput\n48,100\n");
  ASSERT_EQ(samples_unit.size(), 1u);
  EXPECT_EQ(samples_unit[0].batch, 48);

  EXPECT_THAT(DataErrorMessage("num_gpus,batch_size_per_gpu,total_batch_size,throughput\n"
                               "4,64,200,300\n"),
              HasSubstr("t.csv:2: field 'total_batch_size'"));
}

TEST(CsvReader, PaddleK40mExcerpt) {
  // Lines 1, 22, 35, 36, 65 and 66 of ../shared/data/measured/paddle_benchmark_k40m_gpu.csv
  // (PaddlePaddle/Paddle benchmark/README.md), lines 1-6 here.
  const auto samples = ReadRaw(
      "table,model,framework,num_gpus,batch_size_per_gpu,total_batch_size,hidden_size,"
      "time_ms_per_batch\n"
      "single_gpu_image,GoogleNet,Caffe,1,256,256,,OOM\n"
      "multi_gpu_image,AlexNet,PaddlePaddle,4,128,512,,347\n"
      "multi_gpu_image,AlexNet,PaddlePaddle,4,256,1024,,622\n"
      "multi_gpu_lstm,LSTM-2layer+fc (IMDB seq len 100),PaddlePaddle,4,,256,256,90\n"
      "multi_gpu_lstm,LSTM-2layer+fc (IMDB seq len 100),PaddlePaddle,4,,512,256,118\n");
  ASSERT_EQ(samples.size(), 4u);  // the OOM row is not a measurement
  EXPECT_EQ(samples[0].line, 3);
  EXPECT_EQ(samples[0].batch, 512);  // 4 GPUs x 128
  EXPECT_EQ(samples[0].devices, 4);
  EXPECT_DOUBLE_EQ(*samples[0].step_time_s, 0.347);
  EXPECT_EQ(samples[0].label, "table=multi_gpu_image,model=AlexNet,framework=PaddlePaddle");
  // The LSTM rows leave the per-GPU batch empty: the total batch stands alone.
  EXPECT_EQ(samples[2].line, 5);
  EXPECT_EQ(samples[2].batch, 256);
  EXPECT_EQ(samples[2].devices, 4);
  EXPECT_DOUBLE_EQ(*samples[2].step_time_s, 0.090);
  EXPECT_EQ(samples[2].label,
            "table=multi_gpu_lstm,model=LSTM-2layer+fc (IMDB seq len 100),framework=PaddlePaddle,"
            "hidden_size=256");
}

TEST(CsvReader, OutOfMemoryRowsAreSkipped) {
  // Paddle's K40m table prints OOM where a configuration did not fit.
  const auto samples = ReadRaw(
      "model,batch_size,time_ms_per_batch\n"
      "GoogleNet,128,1176\n"
      "GoogleNet,256,OOM\n"
      "GoogleNet,512,N/A\n"
      "GoogleNet,64,644\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 2);
  EXPECT_EQ(samples[1].line, 5);
  EXPECT_DOUBLE_EQ(*samples[1].step_time_s, 0.644);
  EXPECT_THAT(DataErrorMessage("batch,throughput\n64,OOM\n128,\n"),
              HasSubstr("no row has a measurement"));
}

TEST(CsvReader, NumericKeyNeedsFewRepeatedWholeValues) {
  // hidden_size (2 values, each on 2 rows) names series; memory_mib (whole
  // numbers, each once) and accuracy (fractions) are per-row measurements;
  // compile_time_s is a duration by its name, whatever its values.
  const auto samples = ReadRaw(
      "hidden_size,batch,memory_mib,accuracy,compile_time_s,throughput\n"
      "256,64,1000,0.5,3,100\n"
      "256,128,1900,0.6,3,150\n"
      "512,64,1500,0.5,5,80\n"
      "512,128,2800,0.7,5,120\n");
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].label, "hidden_size=256");
  EXPECT_EQ(samples[3].label, "hidden_size=512");
  // Only hidden_size is a key; the per-row columns are tags outside the label.
  EXPECT_EQ(samples[0].tags.at("memory_mib"), "1000");
  EXPECT_EQ(samples[0].tags.at("compile_time_s"), "3");
}

TEST(CsvReader, EmptyKeyCellsAreLeftOutOfTheLabel) {
  const auto samples = ReadRaw(
      "model,hidden,batch,throughput\nlstm,256,64,10\nlstm,256,32,6\n"
      "alexnet,,64,100\nalexnet,,32,60\n");
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].label, "model=lstm,hidden=256");
  EXPECT_EQ(samples[2].label, "model=alexnet");
  EXPECT_EQ(samples[2].tags.count("hidden"), 0u);
}

TEST(CsvReader, ZeroBasedEpochsAreShifted) {
  // Keras' CSVLogger numbers epochs from 0: 0 -> epoch 1 (dropped), 1 -> 2, 2 -> 3.
  const auto samples = ReadRaw(
      "epoch,batch,epoch_time_s,samples\n0,64,90,50000\n1,64,60,50000\n"
      "2,64,61,50000\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].epoch, 2);
  EXPECT_EQ(samples[0].line, 3);
  EXPECT_EQ(samples[0].samples_per_epoch, 50000);
  EXPECT_EQ(samples[1].epoch, 3);
}

TEST(CsvReader, EpochTimesWithoutAnEpochColumnAreAllKept) {
  EXPECT_EQ(ReadRaw("batch,epoch_time_s\n64,90\n128,50\n").size(), 2u);
}

TEST(CsvReader, PrecisionColumnIsNotAKey) {
  const auto samples = ReadRaw("precision,batch,throughput\nFP32,64,100\nAMP,64,180\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].precision, "fp32");
  EXPECT_EQ(samples[1].precision, "amp");
  EXPECT_TRUE(samples[0].label.empty());
}

// --- Bad input ---------------------------------------------------------------------

TEST(CsvReader, HeaderOnly) {
  EXPECT_THAT(DataErrorMessage("batch,throughput\n"), HasSubstr("not followed by any data row"));
}

TEST(CsvReader, MissingBatchColumn) {
  const std::string text = "model,throughput\nresnet,100\n";
  EXPECT_THAT(DataErrorMessage(text), HasSubstr("t.csv:1: no batch column"));
  // The batch may come from the attributes instead.
  Attributes attributes;
  attributes.batch = 64;
  EXPECT_EQ(ReadRaw(text, 1, attributes).size(), 1u);
}

TEST(CsvReader, MissingObservationColumn) {
  // sync_time and initial_time_s are not observations.
  EXPECT_THAT(DataErrorMessage("batch,sync_time,initial_time_s\n64,0.1,3.5\n"),
              HasSubstr("no throughput, step time or epoch time column"));
}

TEST(CsvReader, NonNumericCellNamesLineAndColumn) {
  EXPECT_THAT(DataErrorMessage("model,batch,step_time_s\nbert,64,0.5\nbert,128,fast\n"),
              HasSubstr("t.csv:3: field 'step_time_s': expected a number, got 'fast'"));
  EXPECT_THAT(DataErrorMessage("model,batch,step_time_s\nbert,sixty,0.5\n"),
              HasSubstr("t.csv:2: field 'batch'"));
}

TEST(CsvReader, NotPositiveOrNotFiniteCells) {
  EXPECT_THAT(DataErrorMessage("batch,throughput\n64,nan\n"),
              HasSubstr("t.csv:2: field 'throughput': is NaN"));
  EXPECT_THAT(DataErrorMessage("batch,throughput\n64,inf\n"),
              HasSubstr("t.csv:2: field 'throughput': is infinite"));
  EXPECT_THAT(DataErrorMessage("batch,throughput\n64,100\n64,-5\n"),
              HasSubstr("t.csv:3: field 'throughput': must be > 0, got -5"));
  EXPECT_THAT(DataErrorMessage("batch,throughput\n0,100\n"),
              HasSubstr("t.csv:2: field 'batch': must be > 0, got 0"));
  EXPECT_THAT(DataErrorMessage("batch,devices,throughput\n64,2.5,100\n"),
              HasSubstr("t.csv:2: field 'devices': must be a whole number"));
  EXPECT_THAT(DataErrorMessage("model,placement,local_bsz,step_time\nbert,0,8,0.5\n"),
              HasSubstr("t.csv:2: field 'placement'"));
}

TEST(CsvReader, RaggedRow) {
  EXPECT_THAT(DataErrorMessage("model,batch,throughput\nbert,64,10\nbert,128\n"),
              HasSubstr("t.csv:3: the row has 2 fields but the header (line 1) has 3"));
  EXPECT_THAT(DataErrorMessage("model,batch,throughput\n\"bert,64,10\n"),
              HasSubstr("t.csv:2: a quoted field is not closed"));
}

TEST(CsvReader, HeaderProblems) {
  EXPECT_THAT(DataErrorMessage("64,100\n128,180\n"), HasSubstr("needs a header row"));
  EXPECT_THAT(DataErrorMessage("batch,throughput,Batch\n64,100,64\n"),
              HasSubstr("field 'Batch': the header names this column twice"));
  EXPECT_THAT(DataErrorMessage("batch,bs,throughput\n64,64,100\n"),
              HasSubstr("columns 'batch' and 'bs' both give the global batch"));
}

TEST(CsvReader, EveryRowAWarmUpEpoch) {
  EXPECT_THAT(DataErrorMessage("epoch,batch,epoch_time_s\n1,64,90\n1,128,60\n"),
              HasSubstr("skip_first_epochs = 1"));
}

TEST(CsvReader, BinaryJunkIsADataError) {
  // Bytes with no line structure (ParseSamples rejects NULs before any reader;
  // this is what the reader sees when the format is forced).
  const std::string junk = "\x89PNG\r\n\x1a\n\x7f\xff\xfe,\x01\x02;\x03\t\x04\n\xc3\x28,\xa0\xa1\n";
  EXPECT_THROW(ReadRaw(junk), DataError);
  ReadOptions options;
  options.format = Format::kCsv;
  EXPECT_THROW(ParseSamples(std::string("batch,throughput\n\0\0\0", 20), "b.csv", {}, options),
               DataError);
}

// --- Detection ---------------------------------------------------------------------

TEST(LooksLikeCsv, RealTablesAndOthers) {
  EXPECT_TRUE(io::LooksLikeCsv(ReadData(kKoshian2)));
  EXPECT_TRUE(io::LooksLikeCsv(ReadData(kPollux)));
  EXPECT_TRUE(io::LooksLikeCsv("model\tbatch\tthroughput\nresnet\t64\t250.5\n"));
  EXPECT_TRUE(io::LooksLikeCsv("# comment\nbs;step_time_s\n32;0.1\n"));
  EXPECT_FALSE(io::LooksLikeCsv(ReadData("nist/Misra1d.dat")));
  EXPECT_FALSE(io::LooksLikeCsv("1,90.5\n2,60.1\n"));            // no header: the epochs format
  EXPECT_FALSE(io::LooksLikeCsv("batch,throughput\n"));          // a header alone
  EXPECT_FALSE(io::LooksLikeCsv("batch,throughput\n64,1,2\n"));  // field counts differ
  EXPECT_FALSE(io::LooksLikeCsv("Epoch 1/20\n782/782 - 45s - loss: 1.2\n"));
}

}  // namespace
}  // namespace fitspeed
