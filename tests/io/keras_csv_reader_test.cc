// Tests of the reader of Keras' CSVLogger files on two real logs in
// tests/data/logs-wild/keras-csvlogger (byte copies of
// ../shared/data/logs-wild/keras-csvlogger; neither has a time column) and on
// small logs written here in CSVLogger's layout: `epoch` (from 0) first, then
// the logs' keys sorted, one row per epoch.
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

const char kEmotion[] =
    "logs-wild/keras-csvlogger/Aditya24jar-Emotion-Detection-Resnet50_training.log";
const char kIrfanet[] = "logs-wild/keras-csvlogger/AhmedImtiazPrio-irfanet-10_training.log";

using fitspeed::testing::ReadData;
using ReadKerasCsv = fitspeed::testing::ReadResult;

ReadKerasCsv ReadRawKerasCsv(std::string_view text, int skip_first_epochs = 1) {
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return testing::ReadWith(io::ReadKerasCsv, text, "training.log", {}, options);
}

std::string DataErrorOf(std::string_view text) {
  return testing::DataErrorOf([&] { ReadRawKerasCsv(text); });
}

// --- The real logs: no time, refused with what is missing ---------------------------

TEST(KerasCsvReader, RealLogsHaveNoTimeAndSaySo) {
  // Line 1 of each: "epoch,accuracy,loss,val_accuracy,val_loss" (17 epochs) and
  // "epoch,acc,loss,val_acc,val_loss" (3 epochs).
  std::string message = DataErrorOf(ReadData(kEmotion));
  EXPECT_THAT(message,
              HasSubstr("training.log:1: Keras CSVLogger log: no time column (columns: epoch, "
                        "accuracy, loss, val_accuracy, val_loss): fitspeed needs epoch or step "
                        "times; log them with a callback"));
  EXPECT_THAT(message, HasSubstr("or give the measurements another way"));
  message = DataErrorOf(ReadData(kIrfanet));
  EXPECT_THAT(message, HasSubstr("(columns: epoch, acc, loss, val_acc, val_loss)"));
  EXPECT_THAT(message, HasSubstr("no time column"));
  // The same through the dispatch, auto-detected, with the path.
  try {
    ReadSamples(ParseInputSpec(std::string(FITSPEED_TEST_DATA_DIR) + "/" + kIrfanet +
                               "@batch=32,samples=1000"));
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("irfanet-10_training.log:1: Keras CSVLogger log: no time"));
  }
}

// --- Times a callback added to the logs (written here) --------------------------------

TEST(KerasCsvReader, EpochTimeColumn) {
  const char text[] =
      "epoch,epoch_time,loss,val_loss\n"  // 1
      "0,12.5,1.0,1.1\n"                  // 2: epoch 1, warm-up
      "1,10.25,0.9,1.0\n"                 // 3
      "2,10.5,0.8,0.9\n"                  // 4
      "3,10.0,0.7,0.8\n";                 // 5
  const ReadKerasCsv read = ReadRawKerasCsv(text);
  ASSERT_EQ(read.samples.size(), 3u);
  const double times[] = {10.25, 10.5, 10.0};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(read.samples[i].line, static_cast<int>(i) + 3);
    EXPECT_EQ(read.samples[i].epoch, static_cast<int>(i) + 2);
    EXPECT_DOUBLE_EQ(*read.samples[i].epoch_time_s, times[i]);
    EXPECT_FALSE(read.samples[i].samples_per_epoch.has_value());  // from @samples
  }
  // val_loss on every row: Keras validates inside the epoch, before on_epoch_end.
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("training.log:3: the epoch times"));
  EXPECT_THAT(read.warnings[0], HasSubstr("'val_loss'"));

  // Through ParseSamples: the samples per epoch from the attribute.
  Attributes attributes;
  attributes.batch = 32;
  attributes.samples_per_epoch = 1000;
  ReadOptions options;
  options.warn = [](const std::string&) {};
  const std::vector<Sample> samples = ParseSamples(text, "training.log", attributes, options);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].samples_per_epoch, 1000);
  // Without it, the validation asks for it.
  attributes.samples_per_epoch.reset();
  try {
    ParseSamples(text, "training.log", attributes, options);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("training.log:3: field 'samples_per_epoch'"));
    EXPECT_THAT(e.what(), HasSubstr("PATH@samples=N"));
  }
}

TEST(KerasCsvReader, ElapsedColumnGivesDifferences) {
  const char text[] =
      "epoch,elapsed,loss\n"
      "0,15.0,1.0\n"   // 2: no start time for epoch 1
      "1,25.5,0.9\n"   // 3: 25.5 - 15.0 = 10.5 s
      "2,36.0,0.8\n"   // 4: 36.0 - 25.5 = 10.5 s
      "3,47.0,0.7\n";  // 5: 47.0 - 36.0 = 11.0 s
  const ReadKerasCsv read = ReadRawKerasCsv(text);
  ASSERT_EQ(read.samples.size(), 3u);
  EXPECT_EQ(read.samples[0].line, 3);
  EXPECT_EQ(read.samples[0].epoch, 2);
  EXPECT_DOUBLE_EQ(*read.samples[0].epoch_time_s, 10.5);
  EXPECT_DOUBLE_EQ(*read.samples[1].epoch_time_s, 10.5);
  EXPECT_DOUBLE_EQ(*read.samples[2].epoch_time_s, 11.0);
  EXPECT_TRUE(read.warnings.empty());  // no validation metric
}

TEST(KerasCsvReader, BareTimeColumn) {
  // Durations that do not grow: each epoch's time.
  ReadKerasCsv read = ReadRawKerasCsv("epoch,loss,time\n0,1.0,14.2\n1,0.9,11.0\n2,0.8,11.4\n");
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*read.samples[0].epoch_time_s, 11.0);
  EXPECT_DOUBLE_EQ(*read.samples[1].epoch_time_s, 11.4);
  // Unix timestamps: differences, 1700000021.5 - 1700000011.0 = 10.5 s.
  read = ReadRawKerasCsv(
      "epoch,loss,time\n0,1.0,1700000000.5\n1,0.9,1700000011.0\n2,0.8,1700000021.5\n");
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_NEAR(*read.samples[0].epoch_time_s, 10.5, 1e-6);
  EXPECT_NEAR(*read.samples[1].epoch_time_s, 10.5, 1e-6);
  // Growing on every row to 2x and more (14.2, 25.2, 36.6): a running total or
  // slower and slower epochs; the reader does not guess.
  const std::string message = DataErrorOf("epoch,loss,time\n0,1.0,14.2\n1,0.9,25.2\n2,0.8,36.6\n");
  EXPECT_THAT(message, HasSubstr("training.log:4: field 'time'"));
  EXPECT_THAT(message, HasSubstr("grows on every row (14.2 on line 2 to 36.6 on line 4)"));
  EXPECT_THAT(message, HasSubstr("'elapsed'"));
}

TEST(KerasCsvReader, RateAndStepTimeColumns) {
  // A rate: one sample per epoch after the first.
  ReadKerasCsv read =
      ReadRawKerasCsv("epoch,loss,samples_per_sec\n0,1.0,900\n1,0.9,1000\n2,0.8,1010\n");
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].line, 3);
  EXPECT_DOUBLE_EQ(*read.samples[0].throughput_sps, 1000);
  EXPECT_DOUBLE_EQ(*read.samples[1].throughput_sps, 1010);
  // A step time in ms, preferred over the epoch time beside it.
  read = ReadRawKerasCsv("epoch,epoch_time,loss,ms_per_step\n0,30,1.0,31\n1,25,0.9,24.5\n");
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*read.samples[0].step_time_s, 0.0245);
  EXPECT_EQ(read.samples[0].epoch, 2);
  // Kept from epoch 1 on request.
  read = ReadRawKerasCsv("epoch,loss,samples_per_sec\n0,1.0,900\n1,0.9,1000\n", 0);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*read.samples[0].throughput_sps, 900);
}

TEST(KerasCsvReader, AppendedRunsRestartTheEpochs) {
  // CSVLogger(append=True) over two fit() calls: the epochs start again at 0.
  const ReadKerasCsv read =
      ReadRawKerasCsv("epoch,epoch_time,loss\n0,12,1\n1,10,0.9\n0,13,1\n1,11,0.9\n");
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].line, 3);
  EXPECT_DOUBLE_EQ(*read.samples[0].epoch_time_s, 10);
  EXPECT_EQ(read.samples[1].line, 5);
  EXPECT_DOUBLE_EQ(*read.samples[1].epoch_time_s, 11);
}

// --- Malformed input -----------------------------------------------------------------

TEST(KerasCsvReader, BadCellsNameLineAndField) {
  const std::string head = "epoch,epoch_time,loss\n0,12,1\n";
  EXPECT_THAT(DataErrorOf(head + "1,nan,0.9\n"),
              HasSubstr("training.log:3: field 'epoch_time': is NaN"));
  EXPECT_THAT(DataErrorOf(head + "1,-10,0.9\n"),
              HasSubstr("training.log:3: field 'epoch_time': must be > 0, got -10"));
  EXPECT_THAT(DataErrorOf(head + "1,0,0.9\n"),
              HasSubstr("training.log:3: field 'epoch_time': must be > 0, got 0"));
  EXPECT_THAT(DataErrorOf(head + "1,10s,0.9\n"),
              HasSubstr("training.log:3: field 'epoch_time': expected a number, got '10s'"));
  EXPECT_THAT(DataErrorOf(head + "-1,10,0.9\n"),
              HasSubstr("training.log:3: field 'epoch': must be a whole number >= 0"));
  EXPECT_THAT(DataErrorOf(head + "1,10\n"), HasSubstr("training.log:3: Keras CSVLogger log: the "
                                                      "row has 2 fields but the header (line 1) "
                                                      "has 3"));
  EXPECT_THAT(DataErrorOf("epoch,elapsed\n0,10\n1,10\n"),
              HasSubstr("training.log:3: field 'elapsed': Keras CSVLogger log: 'elapsed' does "
                        "not advance from epoch 1 (line 2) to epoch 2"));
  EXPECT_THAT(DataErrorOf("loss,epoch_time\n1.0,12\n"), HasSubstr("no 'epoch' column"));
  EXPECT_THAT(DataErrorOf("epoch,epoch_time\n"), HasSubstr("not followed by any row"));
}

TEST(KerasCsvReader, JunkIsADataErrorNeverACrash) {
  ReadOptions options;
  options.format = Format::kKerasCsv;
  options.warn = [](const std::string&) {};
  Attributes attributes;
  attributes.batch = 64;
  attributes.samples_per_epoch = 50000;
  EXPECT_THROW(ParseSamples(std::string("epoch,loss\n\0\0\0", 14), "j", attributes, options),
               DataError);
  const std::vector<std::string> bases = {
      ReadData(kEmotion), "epoch,elapsed,loss,time\n0,15.0,1.0,3\n1,25.5,0.9,4\n2,36.0,0.8,5\n"};
  const char alphabet[] = "0123456789.,-\"\n\re nan";
  testing::ParseCutAndMutated(bases, alphabet, 300, 777, "j", attributes, options);
}

// --- Detection -------------------------------------------------------------------------

TEST(KerasCsvReader, Detection) {
  EXPECT_EQ(DetectFormat(ReadData(kEmotion)), Format::kKerasCsv);
  EXPECT_EQ(DetectFormat(ReadData(kIrfanet)), Format::kKerasCsv);
  EXPECT_EQ(DetectFormat("epoch,epoch_time,loss,val_loss\n0,12.5,1.0,1.1\n"), Format::kKerasCsv);
  // fitspeed tables stay csv: a batch column, or keys that are not sorted.
  EXPECT_EQ(DetectFormat("epoch,batch,throughput\n1,64,1200\n"), Format::kCsv);
  EXPECT_EQ(DetectFormat("epoch,throughput,batch_size\n1,1200,64\n"), Format::kCsv);
  EXPECT_EQ(DetectFormat("epoch,time,loss\n0,12,1.0\n"), Format::kCsv);
  EXPECT_EQ(ParseFormat("keras-csv"), Format::kKerasCsv);
  EXPECT_EQ(FormatName(Format::kKerasCsv), "keras-csv");
}

}  // namespace
}  // namespace fitspeed
