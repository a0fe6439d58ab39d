// Tests of the reader of Weights & Biases CSV exports on two real exports in
// tests/data/logs-wild/wandb-csv (byte copies of ../shared/data/logs-wild/wandb-csv:
// a runs table and a chart of train/loss, neither with step times) and on
// small exports written here in W&B's layouts: a run's history with _step,
// _runtime and _timestamp (as run.history().to_csv() writes it, pandas index
// first), and chart exports ("Step", "<run> - <metric>", __MIN/__MAX).
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

const char kRunsTable[] =
    "logs-wild/wandb-csv/"
    "Lucas-longxutang-Comp3242_Group_Project_nanoGPT_training_records_wandb_export.csv";
const char kLossChart[] = "logs-wild/wandb-csv/druidowm-nanoGPT_wandb_export.csv";

using fitspeed::testing::ReadData;
using ReadWandb = fitspeed::testing::ReadResult;

ReadWandb ReadRawWandb(std::string_view text) {
  return testing::ReadWith(io::ReadWandb, text, "export.csv");
}

std::string DataErrorOfWandb(std::string_view text) {
  return testing::DataErrorOf([&] { ReadRawWandb(text); });
}

// --- The real exports: refused with what is missing -----------------------------------

TEST(WandbReader, RunsTableIsRefused) {
  // Line 1: "Name","State","Notes","User","Tags","Created","Runtime","Sweep",
  // "activation_type","batch_size",...,"eval_interval","eval_iters",...; line 2
  // (G1_ternary_weights): Runtime "732" for max_iters 5000 with eval_interval 250
  // and eval_iters 200, so evaluation is inside the run's time.
  const std::string message = DataErrorOfWandb(ReadData(kRunsTable));
  EXPECT_THAT(message, HasSubstr("export.csv:1: field 'Runtime': W&B runs table (one row per "
                                 "run): 'Runtime' is a run's whole wall time"));
  EXPECT_THAT(message, HasSubstr("export a run's history (_step, _runtime)"));
}

TEST(WandbReader, LossChartHasNoTimeAndSaysSo) {
  // Line 1: "Step" then, for 8 runs, "<run> - train/loss" and its __MIN, __MAX.
  const std::string message = DataErrorOfWandb(ReadData(kLossChart));
  EXPECT_THAT(message, HasSubstr("export.csv:1: W&B chart export: no time column: the chart "
                                 "plots train/loss against 'Step' for 8 run(s)"));
  EXPECT_THAT(message, HasSubstr("fitspeed needs step times"));
}

// --- History exports (written here) -----------------------------------------------------

// A Hugging Face Trainer run: train/global_step every 10 steps, an evaluation
// logged as its own row at step 30.
const char kHistory[] =
    ",_runtime,_step,_timestamp,eval/loss,train/global_step,train/loss\n"  // 1
    "0,10.0,0,1700000010.0,,10,2.0\n"                                      // 2
    "1,12.0,1,1700000012.0,,20,1.9\n"                                      // 3
    "2,14.5,2,1700000014.5,,30,1.8\n"                                      // 4
    "3,25.0,3,1700000025.0,1.7,30,\n"                                      // 5
    "4,27.0,4,1700000027.0,,40,1.6\n"                                      // 6
    "5,29.0,5,1700000029.0,,50,1.5\n";                                     // 7

TEST(WandbReader, HistoryStepTimesFromRuntime) {
  const ReadWandb read = ReadRawWandb(kHistory);
  // By hand, _runtime against train/global_step (period 10 steps):
  //   10->20 (line 3): the first interval, warm-up;
  //   20->30 (line 4): (14.5 - 12.0)/10 = 0.25 s;
  //   30->30 (line 5): the evaluation row, no steps: its 10.5 s are left out;
  //   30->40 (line 6): (27.0 - 25.0)/10 = 0.2 s, from the evaluation row on;
  //   40->50 (line 7): (29.0 - 27.0)/10 = 0.2 s.
  ASSERT_EQ(read.samples.size(), 3u);
  EXPECT_EQ(read.samples[0].line, 4);
  EXPECT_NEAR(*read.samples[0].step_time_s, 0.25, 1e-12);
  EXPECT_EQ(read.samples[1].line, 6);
  EXPECT_NEAR(*read.samples[1].step_time_s, 0.2, 1e-12);
  EXPECT_EQ(read.samples[2].line, 7);
  EXPECT_NEAR(*read.samples[2].step_time_s, 0.2, 1e-12);
  EXPECT_EQ(read.samples[0].batch, 0);  // from @batch
  EXPECT_TRUE(read.warnings.empty());
}

TEST(WandbReader, HistoryWithLogCallsOnlyWarns) {
  // No step counter but W&B's own: one wandb.log call per row.
  const ReadWandb read =
      ReadRawWandb("_runtime,_step,loss\n1.0,0,2.0\n1.5,1,1.9\n2.0,2,1.8\n2.6,3,1.7\n");
  // 0->1 warm-up; 1->2 (line 4): 0.5 s; 2->3 (line 5): 0.6 s.
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_NEAR(*read.samples[0].step_time_s, 0.5, 1e-12);
  EXPECT_NEAR(*read.samples[1].step_time_s, 0.6, 1e-12);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("wandb.log calls"));
}

TEST(WandbReader, HistoryEvaluatedOnEveryRowIsRefused) {
  // nanoGPT logs to W&B only at evaluation: every interval holds an evaluation.
  const char text[] =
      "_runtime,_step,iter,lr,train/loss,val/loss\n"
      "30.5,0,0,0.0,4.2,4.2\n"
      "60.1,1,250,0.0006,2.1,2.2\n"
      "89.9,2,500,0.0006,1.6,1.8\n"
      "119.6,3,750,0.0006,1.4,1.7\n";
  const std::string message = DataErrorOfWandb(text);
  EXPECT_THAT(message, HasSubstr("W&B history export: no step time from '_runtime' and 'iter'"));
  EXPECT_THAT(message, HasSubstr("includes evaluation ('val/loss' has a value on line 4)"));
}

TEST(WandbReader, HistoryRateColumn) {
  // A rate wins over the clock; Hugging Face's end-of-run
  // train/train_samples_per_second (one row) is not a per-step rate.
  const char text[] =
      "_runtime,_step,train/samples_per_sec,train/train_samples_per_second\n"
      "10,0,900,\n"
      "20,1,1000,\n"
      "30,2,1020,\n"
      "31,3,,950\n";
  const ReadWandb read = ReadRawWandb(text);
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*read.samples[0].throughput_sps, 1000);
  EXPECT_DOUBLE_EQ(*read.samples[1].throughput_sps, 1020);
}

TEST(WandbReader, HistoryGapsAreNotConsecutive) {
  // A sampled export: step 30 missing, so 20->40 is not one logging period.
  const ReadWandb read = ReadRawWandb(
      "_runtime,_step,global_step\n1,0,0\n2,1,10\n3,2,20\n5.5,3,40\n6.75,4,50\n8,5,60\n");
  // 0->10 warm-up; 10->20: 0.1 s; 20->40 skipped; 40->50: 0.125 s; 50->60: 0.125 s.
  ASSERT_EQ(read.samples.size(), 3u);
  EXPECT_NEAR(*read.samples[0].step_time_s, 0.1, 1e-12);
  EXPECT_NEAR(*read.samples[1].step_time_s, 0.125, 1e-12);
  EXPECT_EQ(read.samples[1].line, 6);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("export.csv:5: 1 interval(s) skipped"));
  EXPECT_THAT(read.warnings[0], HasSubstr("'global_step' difference is not the logging period 10"));
}

TEST(WandbReader, CoarseRuntimeWarns) {
  // Whole seconds only (older wandb) over 2-3 s intervals: +-1 s at worst.
  const ReadWandb read =
      ReadRawWandb("_runtime,_step,global_step\n1,0,10\n3,1,20\n6,2,30\n8,3,40\n");
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_NEAR(*read.samples[0].step_time_s, 0.3, 1e-12);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("uncertain by up to 50%"));  // (0.5 + 0.5)/2
}

// --- Chart exports (written here) --------------------------------------------------------

TEST(WandbReader, ChartOfRuntimeAgainstStepPerRun) {
  const char text[] =
      "\"Step\",\"runA - _runtime\",\"runA - _runtime__MIN\",\"runA - _runtime__MAX\","
      "\"runB - _runtime\",\"runB - _runtime__MIN\",\"runB - _runtime__MAX\"\n"  // 1
      "\"100\",\"20\",\"20\",\"20\",\"40\",\"40\",\"40\"\n"                      // 2
      "\"200\",\"30\",\"30\",\"30\",\"60.5\",\"60.5\",\"60.5\"\n"                // 3
      "\"300\",\"40.5\",\"40.5\",\"40.5\",\"80.5\",\"80.5\",\"80.5\"\n"          // 4
      "\"400\",\"51\",\"51\",\"51\",\"\",\"\",\"\"\n";                           // 5
  const ReadWandb read = ReadRawWandb(text);
  // runA: 100->200 warm-up; (40.5-30)/100 = 0.105 (line 4); (51-40.5)/100 = 0.105 (line 5).
  // runB: 100->200 warm-up; (80.5-60.5)/100 = 0.2 (line 4). In line order.
  ASSERT_EQ(read.samples.size(), 3u);
  EXPECT_EQ(read.samples[0].label, "runA");
  EXPECT_EQ(read.samples[0].line, 4);
  EXPECT_NEAR(*read.samples[0].step_time_s, 0.105, 1e-12);
  EXPECT_EQ(read.samples[1].label, "runB");
  EXPECT_EQ(read.samples[1].line, 4);
  EXPECT_NEAR(*read.samples[1].step_time_s, 0.2, 1e-12);
  EXPECT_EQ(read.samples[2].label, "runA");
  EXPECT_EQ(read.samples[2].line, 5);
  EXPECT_NEAR(*read.samples[2].step_time_s, 0.105, 1e-12);
  EXPECT_TRUE(read.warnings.empty());
}

TEST(WandbReader, ChartAgainstRelativeTime) {
  // A rate against time: one sample per row after the first.
  ReadWandb read = ReadRawWandb(
      "\"Relative Time (Process)\",\"run1 - train/samples_per_sec\"\n"
      "\"10.5\",\"800\"\n\"20.7\",\"1000\"\n\"31.0\",\"1010\"\n");
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_EQ(read.samples[0].label, "run1");
  EXPECT_DOUBLE_EQ(*read.samples[0].throughput_sps, 1000);
  // The trainer's step against time: dtime/dstep, (31-20)/100 = 0.11 s.
  read = ReadRawWandb(
      "\"Relative Time (Process)\",\"r - trainer/global_step\"\n"
      "\"10\",\"100\"\n\"20\",\"200\"\n\"31\",\"300\"\n\"42\",\"400\"\n");
  ASSERT_EQ(read.samples.size(), 2u);
  EXPECT_NEAR(*read.samples[0].step_time_s, 0.11, 1e-12);
  EXPECT_EQ(read.samples[0].line, 4);
  EXPECT_NEAR(*read.samples[1].step_time_s, 0.11, 1e-12);
}

// --- Malformed input -----------------------------------------------------------------

TEST(WandbReader, BadCellsNameLineAndField) {
  const std::string head = "_runtime,_step,global_step\n1,0,10\n";
  EXPECT_THAT(DataErrorOfWandb(head + "nan,1,20\n2,2,30\n"),
              HasSubstr("export.csv:3: field '_runtime': is NaN"));
  EXPECT_THAT(DataErrorOfWandb(head + "-2,1,20\n2,2,30\n"),
              HasSubstr("export.csv:3: field '_runtime': a clock must be >= 0"));
  EXPECT_THAT(DataErrorOfWandb(head + "2,1,2.5\n3,2,30\n"),
              HasSubstr("export.csv:3: field 'global_step': must be a whole number"));
  EXPECT_THAT(DataErrorOfWandb(head + "2,1\n"),
              HasSubstr("export.csv:3: W&B export: the row has 2 fields but the header"));
  EXPECT_THAT(DataErrorOfWandb("_runtime,_step,samples_per_sec\n1,0,10\n2,1,0\n"),
              HasSubstr("export.csv:3: field 'samples_per_sec': must be > 0, got 0"));
  EXPECT_THAT(DataErrorOfWandb("_runtime,_step,global_step\n1,0,10\n"),
              HasSubstr("fewer than two rows have both 'global_step' and '_runtime'"));
  EXPECT_THAT(DataErrorOfWandb("a,b\n1,2\n"), HasSubstr("not a W&B export"));
}

TEST(WandbReader, JunkIsADataErrorNeverACrash) {
  ReadOptions options;
  options.format = Format::kWandb;
  options.warn = [](const std::string&) {};
  Attributes attributes;
  attributes.batch = 64;
  attributes.samples_per_epoch = 50000;
  EXPECT_THROW(ParseSamples(std::string("_step\n\0\0\0", 9), "j", attributes, options), DataError);
  const std::vector<std::string> bases = {ReadData(kLossChart).substr(0, 20000), kHistory,
                                          ReadData(kRunsTable).substr(0, 5000)};
  const char alphabet[] = "0123456789.,-\"\n\re nan_";
  testing::ParseCutAndMutated(bases, alphabet, 300, 4242, "j", attributes, options);
}

// --- Detection -------------------------------------------------------------------------

TEST(WandbReader, Detection) {
  EXPECT_EQ(DetectFormat(ReadData(kRunsTable)), Format::kWandb);
  EXPECT_EQ(DetectFormat(ReadData(kLossChart)), Format::kWandb);
  EXPECT_EQ(DetectFormat(kHistory), Format::kWandb);
  EXPECT_EQ(DetectFormat("\"Relative Time (Process)\",\"r - loss\"\n\"1\",\"2\"\n"),
            Format::kWandb);
  // fitspeed tables stay csv.
  EXPECT_EQ(DetectFormat("Step,batch,throughput\n1,64,1200\n"), Format::kCsv);
  EXPECT_EQ(DetectFormat("Name,batch_size,Runtime\na,64,100\n"), Format::kCsv);
  EXPECT_EQ(ParseFormat("wandb"), Format::kWandb);
  EXPECT_EQ(FormatName(Format::kWandb), "wandb");
}

}  // namespace
}  // namespace fitspeed
