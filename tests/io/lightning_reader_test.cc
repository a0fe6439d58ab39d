// Tests of the reader of PyTorch Lightning's CSVLogger metrics.csv on two real
// files in tests/data/logs-wild/lightning-csvlogger (byte copies of
// ../shared/data/logs-wild/lightning-csvlogger) and on small tables written
// here in the logger's layout. Expected values are read off the files' lines
// (line numbers as `grep -n` prints them, header = line 1).
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

const char kSlm[] =
    "logs-wild/lightning-csvlogger/0Xero7-slm_training_lightning_logs_version_0_metrics.csv";
const char kOpal[] =
    "logs-wild/lightning-csvlogger/Eve-ning-opal-v2_lightning_logs_version_0_metrics.csv";

using fitspeed::testing::ReadData;

// The reader alone, with its warnings collected.
using ReadLightning = fitspeed::testing::ReadResult;

ReadLightning ReadRawLightning(std::string_view text, const Attributes& attributes = {},
                               int skip_first_epochs = 1) {
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return testing::ReadWith(io::ReadLightning, text, "metrics.csv", attributes, options);
}

std::string DataErrorOfLightning(std::string_view text, const Attributes& attributes = {}) {
  return testing::DataErrorOf([&] { ReadRawLightning(text, attributes); });
}

// --- 0Xero7/slm_training: an epoch_time logged in on_train_epoch_end ---------------
// lightning_train.py logs self.log("epoch_time", time.time() - self.epoch_start_time)
// in on_train_epoch_end. The rows with an epoch_time (grep -n ',[0-9.]*,[0-9]*,[0-9]'):
//   284: 0,2517.10107421875,14073,...     851: 2,2415.34765625,42221,...
//   567: 1,2414.659423828125,28147,...    1134: 3,2417.922607421875,56295,...
//   1418: 4,2418.14111328125,70369,...    1701: 5,2417.5390625,84443,...
//   1985: 6,2418.7001953125,98517,...
// Steps per epoch, by hand from the step column: 28147-14073 = 42221-28147 =
// 56295-42221 = 70369-56295 = 84443-70369 = 98517-84443 = 14074.
// The validation rows (val_loss, ...) are on lines 283, 566, 850, 1133, 1417,
// 1700, 1984: each just before its epoch's epoch_time row, at the same step.

TEST(LightningReader, SlmEpochTimesAfterTheFirstEpoch) {
  Attributes attributes;
  attributes.batch = 128;
  const ReadLightning read = ReadRawLightning(ReadData(kSlm), attributes);
  ASSERT_EQ(read.samples.size(), 6u);
  const int lines[] = {567, 851, 1134, 1418, 1701, 1985};
  const double times[] = {2414.659423828125, 2415.34765625, 2417.922607421875,
                          2418.14111328125,  2417.5390625,  2418.7001953125};
  for (size_t i = 0; i < 6; ++i) {
    const Sample& s = read.samples[i];
    EXPECT_EQ(s.line, lines[i]);
    ASSERT_TRUE(s.epoch_time_s.has_value());
    EXPECT_DOUBLE_EQ(*s.epoch_time_s, times[i]);
    EXPECT_EQ(s.epoch, static_cast<int>(i) + 2);  // Lightning counts from 0; epoch 1 dropped
    // 14074 steps x the given batch 128 = 1801472 samples.
    ASSERT_TRUE(s.samples_per_epoch.has_value());
    EXPECT_EQ(*s.samples_per_epoch, 1801472);
    EXPECT_FALSE(s.throughput_sps.has_value());
    EXPECT_FALSE(s.step_time_s.has_value());
    EXPECT_EQ(s.batch, 0);  // the attribute is applied by ParseSamples
  }
  // The validation metrics of each epoch come before its epoch_time: said once.
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("metrics.csv:567:"));
  EXPECT_THAT(read.warnings[0], HasSubstr("validation"));
  EXPECT_THAT(read.warnings[0], HasSubstr("line 566"));
}

TEST(LightningReader, SlmFirstEpochKeptOnRequestHasNoStepCount) {
  Attributes attributes;
  attributes.batch = 128;
  const ReadLightning read = ReadRawLightning(ReadData(kSlm), attributes, /*skip_first_epochs=*/0);
  ASSERT_EQ(read.samples.size(), 7u);
  EXPECT_EQ(read.samples[0].line, 284);
  EXPECT_DOUBLE_EQ(*read.samples[0].epoch_time_s, 2517.10107421875);
  EXPECT_EQ(read.samples[0].epoch, 1);
  // No epoch_time row before it: its steps are not in the log.
  EXPECT_FALSE(read.samples[0].samples_per_epoch.has_value());
}

TEST(LightningReader, SlmSamplesAttributeMustMatchTheSteps) {
  Attributes attributes;
  attributes.batch = 128;
  // ceil(1801400/128) = ceil(14073.4) = 14074: the last batch partial.
  attributes.samples_per_epoch = 1801400;
  const ReadLightning read = ReadRawLightning(ReadData(kSlm), attributes);
  ASSERT_EQ(read.samples.size(), 6u);
  EXPECT_EQ(read.samples[0].steps_rule, StepsRule::kKeepPartial);
  EXPECT_FALSE(read.samples[0].samples_per_epoch.has_value());  // the attribute fills it
  // 1800000/128 = 14062.5: 14063 or 14062 steps, not the 14074 the log shows.
  attributes.samples_per_epoch = 1800000;
  const std::string message = DataErrorOfLightning(ReadData(kSlm), attributes);
  EXPECT_THAT(message, HasSubstr("metrics.csv:567: field 'step'"));
  EXPECT_THAT(message, HasSubstr("14074 steps"));
  EXPECT_THAT(message, HasSubstr("14063"));
}

TEST(LightningReader, SlmThroughParseSamples) {
  const std::string text = ReadData(kSlm);
  ReadOptions options;
  options.warn = [](const std::string&) {};
  // Auto-detected; the batch is not in the log.
  try {
    ParseSamples(text, "slm.csv", {}, options);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("slm.csv:567: field 'batch'"));
    EXPECT_THAT(e.what(), HasSubstr("PATH@batch=N"));
  }
  Attributes attributes;
  attributes.batch = 128;
  const std::vector<Sample> samples = ParseSamples(text, "slm.csv", attributes, options);
  ASSERT_EQ(samples.size(), 6u);
  // The law's terms: 14074 steps of 128, so 2414.659423828125 / 14074 s per step.
  const StepObservation o = ToStepObservation(samples[0]);
  EXPECT_DOUBLE_EQ(o.batch, 128);
  EXPECT_NEAR(o.step_time_s, 2414.659423828125 / 14074, 1e-15);
}

// --- Eve-ning/opal-v2: losses and a learning rate, no time ----------------------------
// Header (line 1): epoch,lr-Adam,step,train/nll_loss,val/rmse_loss

TEST(LightningReader, OpalHasNoTimeAndSaysSo) {
  const std::string message = DataErrorOfLightning(ReadData(kOpal));
  EXPECT_THAT(message, HasSubstr("metrics.csv:1: Lightning CSVLogger metrics: no time column"));
  EXPECT_THAT(message, HasSubstr("(columns: epoch, lr-Adam, step, train/nll_loss, val/rmse_loss)"));
  EXPECT_THAT(message, HasSubstr("fitspeed needs step or epoch times"));
}

// --- Clocks, rates and step times written here ----------------------------------------

// ThroughputMonitor's train/time (seconds since it started) beside train/batches;
// log_every_n_steps = 50 (steps 49, 99, ...), a validation row after step 199 and
// steps 300-398 missing.
const char kClockLog[] =
    "epoch,step,train/batches,train/time,train_loss_step,val_loss\n"  // 1
    "0,49,50,10.0,2.5,\n"                                             // 2
    "0,99,100,15.0,2.4,\n"                                            // 3
    "0,149,150,20.5,2.3,\n"                                           // 4
    "0,199,200,25.5,2.2,\n"                                           // 5
    "0,199,,,,1.9\n"                                                  // 6
    "0,249,250,33.0,2.1,\n"                                           // 7
    "0,299,300,38.2,2.0,\n"                                           // 8
    "0,399,400,48.6,1.9,\n"                                           // 9
    "1,449,450,53.6,1.8,\n";                                          // 10

TEST(LightningReader, StepTimesFromThroughputMonitorClock) {
  const ReadLightning read = ReadRawLightning(kClockLog);
  // By hand, intervals between the rows with a train/time (period 50 steps):
  //   49->99 (line 3): the first, dropped as warm-up;
  //   99->149 (line 4): (20.5 - 15.0)/50 = 0.11 s;
  //   149->199 (line 5): (25.5 - 20.5)/50 = 0.1 s;
  //   199->249 (line 7): the validation row 6 lies within: skipped;
  //   249->299 (line 8): (38.2 - 33.0)/50 = 0.104 s;
  //   299->399 (line 9): 100 steps, not one period: skipped;
  //   399->449 (line 10): (53.6 - 48.6)/50 = 0.1 s.
  ASSERT_EQ(read.samples.size(), 4u);
  const int lines[] = {4, 5, 8, 10};
  const double step_s[] = {0.11, 0.1, 0.104, 0.1};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(read.samples[i].line, lines[i]);
    ASSERT_TRUE(read.samples[i].step_time_s.has_value());
    EXPECT_NEAR(*read.samples[i].step_time_s, step_s[i], 1e-12);
  }
  EXPECT_EQ(read.samples[0].epoch, 1);
  EXPECT_EQ(read.samples[3].epoch, 2);
  ASSERT_EQ(read.warnings.size(), 2u);
  EXPECT_THAT(read.warnings[0], HasSubstr("metrics.csv:9: 1 interval(s) skipped"));
  EXPECT_THAT(read.warnings[0], HasSubstr("logging period 50"));
  EXPECT_THAT(read.warnings[1], HasSubstr("metrics.csv:6: 1 interval(s) skipped: evaluation"));
  EXPECT_THAT(read.warnings[1], HasSubstr("'val_loss'"));
}

TEST(LightningReader, ThroughputMonitorPerDeviceRateOnOneDevice) {
  // With one device ThroughputMonitor logs only the device/ rates.
  const char text[] =
      "epoch,step,train/batches,train/device/batches_per_sec,train/device/samples_per_sec,"
      "train/samples,train/time\n"
      "0,99,100,9.5,304.0,3200,10.5\n"
      "0,199,200,10.0,320.0,6400,20.5\n"
      "0,299,300,10.0,321.5,9600,30.5\n";
  const ReadLightning read = ReadRawLightning(text);
  // The rate wins over the clock; the first row (line 2) is warm-up.
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].line, 3);
  EXPECT_DOUBLE_EQ(*read.samples[0].throughput_sps, 320.0);
  EXPECT_DOUBLE_EQ(*read.samples[1].throughput_sps, 321.5);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("per-device rate 'train/device/samples_per_sec'"));
}

TEST(LightningReader, GlobalRateBeforePerDeviceRate) {
  const char text[] =
      "epoch,step,train/device/samples_per_sec,train/samples_per_sec\n"
      "0,99,300,1200\n"
      "0,199,320,1280\n"
      "0,299,330,1320\n";
  const ReadLightning read = ReadRawLightning(text);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*read.samples[0].throughput_sps, 1280);
  EXPECT_DOUBLE_EQ(*read.samples[1].throughput_sps, 1320);
  EXPECT_TRUE(read.warnings.empty());
}

TEST(LightningReader, StepTimeLoggedOnStepAndEpoch) {
  // self.log("step_time_ms", ..., on_step=True, on_epoch=True) gives two columns.
  const char text[] =
      "epoch,step,step_time_ms_epoch,step_time_ms_step,train_loss\n"
      "0,49,,210,2.0\n"
      "0,99,,200,1.9\n"
      "0,99,205,,\n"
      "1,149,,190,1.8\n";
  const ReadLightning read = ReadRawLightning(text);
  // The per-step values: 200 ms (line 3) and 190 ms (line 5); 210 ms is warm-up.
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].line, 3);
  EXPECT_DOUBLE_EQ(*read.samples[0].step_time_s, 0.2);
  EXPECT_EQ(read.samples[1].line, 5);
  EXPECT_DOUBLE_EQ(*read.samples[1].step_time_s, 0.19);
}

TEST(LightningReader, AnOnlyEpochIsWarmUp) {
  const char text[] = "epoch,step,epoch_time\n0,99,30.5\n";
  const std::string message = DataErrorOfLightning(text);
  EXPECT_THAT(message, HasSubstr("metrics.csv:2: field 'epoch'"));
  EXPECT_THAT(message, HasSubstr("skip_first_epochs = 1"));
}

// --- Malformed input -----------------------------------------------------------------

TEST(LightningReader, BadCellsNameLineAndField) {
  const std::string head = "epoch,epoch_time,step\n0,30.0,99\n";
  EXPECT_THAT(DataErrorOfLightning(head + "1,nan,199\n"),
              HasSubstr("metrics.csv:3: field 'epoch_time': is NaN"));
  EXPECT_THAT(DataErrorOfLightning(head + "1,-4,199\n"),
              HasSubstr("metrics.csv:3: field 'epoch_time': must be > 0, got -4"));
  EXPECT_THAT(DataErrorOfLightning(head + "1,0,199\n"),
              HasSubstr("metrics.csv:3: field 'epoch_time': must be > 0, got 0"));
  EXPECT_THAT(DataErrorOfLightning(head + "1,fast,199\n"),
              HasSubstr("metrics.csv:3: field 'epoch_time': expected a number, got 'fast'"));
  EXPECT_THAT(DataErrorOfLightning(head + "1.5,30,199\n"),
              HasSubstr("metrics.csv:3: field 'epoch': must be a whole number"));
  EXPECT_THAT(DataErrorOfLightning(head + "1,30\n"),
              HasSubstr("metrics.csv:3: Lightning CSVLogger metrics: the row has 2 fields but "
                        "the header (line 1) has 3"));
  EXPECT_THAT(DataErrorOfLightning(head + "1,\"30,199\n"), HasSubstr("metrics.csv:3:"));
  EXPECT_THAT(DataErrorOfLightning(head + "1,\"30,199\n"), HasSubstr("not closed"));
  const std::string clock = "epoch,step,train/batches,train/time\n0,49,50,1.0\n";
  EXPECT_THAT(DataErrorOfLightning(clock + "0,99.5,100,2.0\n0,149,150,3.0\n"),
              HasSubstr("metrics.csv:3: field 'step': must be a whole number"));
  EXPECT_THAT(DataErrorOfLightning(clock + "0,99,100,-2.0\n0,149,150,3.0\n"),
              HasSubstr("metrics.csv:3: field 'train/time': a clock must be >= 0"));
  EXPECT_THAT(DataErrorOfLightning("epoch,loss\n0,1.0\n"), HasSubstr("no 'step' column"));
  EXPECT_THAT(DataErrorOfLightning("epoch,step,epoch_time\n"),
              HasSubstr("not followed by any row"));
}

TEST(LightningReader, JunkIsADataErrorNeverACrash) {
  ReadOptions options;
  options.format = Format::kLightning;
  options.warn = [](const std::string&) {};
  Attributes attributes;
  attributes.batch = 64;
  attributes.samples_per_epoch = 50000;
  // Binary input is refused before the reader runs.
  EXPECT_THROW(ParseSamples(std::string("epoch,step\n\0\x01\x02", 14), "j", attributes, options),
               DataError);
  // Cut and mutated copies of the real log and of the clock table: any
  // outcome but an exception other than fitspeed::Error.
  const std::vector<std::string> bases = {ReadData(kSlm).substr(0, 40000), kClockLog};
  const char alphabet[] = "0123456789.,-\"\n\re nan";
  testing::ParseCutAndMutated(bases, alphabet, 300, 12345, "j", attributes, options);
}

// --- Detection -------------------------------------------------------------------------

TEST(LightningReader, Detection) {
  EXPECT_EQ(DetectFormat(ReadData(kSlm)), Format::kLightning);
  EXPECT_EQ(DetectFormat(ReadData(kOpal)), Format::kLightning);
  EXPECT_EQ(DetectFormat(kClockLog), Format::kLightning);
  // Lightning 1.x wrote the keys in first-logged order.
  EXPECT_EQ(DetectFormat("train_loss_batch,epoch,step\n28.5,0,49\n"), Format::kLightning);
  // fitspeed's own tables stay csv: a batch column, or no step column.
  EXPECT_EQ(DetectFormat("batch_size,epoch,step,step_time\n64,1,10,0.2\n"), Format::kCsv);
  EXPECT_EQ(DetectFormat(ReadData("measured/pollux_t4_single_node.csv")), Format::kCsv);
  EXPECT_EQ(DetectFormat(ReadData("measured/koshian2_tpu_benchmark_main_per_epoch.csv")),
            Format::kCsv);
  EXPECT_EQ(ParseFormat("lightning"), Format::kLightning);
  EXPECT_EQ(FormatName(Format::kLightning), "lightning");
}

}  // namespace
}  // namespace fitspeed
