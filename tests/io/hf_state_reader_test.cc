// Tests of the reader of the Hugging Face Trainer's trainer_state.json, on the
// three published files of tests/data/logs-wild/hf-trainer-state/ (copies of
// ../shared/data/logs-wild/hf-trainer-state/) and on states assembled from their
// numbers. Expected values come from reading the files by hand; the lines and
// the arithmetic are in each test's comment.
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

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const char kWhisper[] = "P4P4N1CK-whisper-large-v2-japanese-5k-steps_trainer_state.json";
const char kTinyLlama[] = "Dheena731-tinyLlama-finetune_trainer_state.json";
const char kDnabert[] = "ShashankBommana-DNABERT-2_trainer_state.json";

std::string ReadWild(const std::string& name) {
  return testing::ReadData("logs-wild/hf-trainer-state/" + name);
}

// Reads through ParseSamples (detection, attributes, validation) and keeps the warnings.
using ReadHfState = fitspeed::testing::ReadResult;

ReadHfState ReadState(const std::string& text, const std::string& source = "trainer_state.json",
                      const Attributes& attributes = {}) {
  return testing::ParseWith(text, source, attributes);
}

std::string ErrorOfHfState(const std::string& text, const Attributes& attributes = {}) {
  return testing::DataErrorOf([&] { ReadState(text, "trainer_state.json", attributes); });
}

// The reader alone, without ParseSamples' binary check and auto-detection.
std::string ReaderErrorOf(std::string_view text) {
  return testing::DataErrorOf(
      [&] { testing::ReadWith(io::ReadHfState, text, "trainer_state.json"); });
}

// A state in TrainerState.save_to_json's layout (indent 2, sorted keys): line 1
// "{", line 2 "global_step", line 3 "log_history": [, line 4 the summary's "{",
// then one line per summary field (5, 6, ...), then "}", "]", max_steps and the
// `tail` lines. The defaults are the whisper run's (see WhisperFinalStateGivesOneWholeRunSample).
std::string State(const std::vector<std::string>& summary, const std::string& global_step = "5000",
                  const std::string& max_steps = "5000",
                  const std::vector<std::string>& tail = {}) {
  std::string text = "{\n  \"global_step\": " + global_step + ",\n  \"log_history\": [\n    {\n";
  for (size_t i = 0; i < summary.size(); ++i) {
    text += "      " + summary[i] + (i + 1 < summary.size() ? ",\n" : "\n");
  }
  text += "    }\n  ],\n  \"max_steps\": " + max_steps;
  for (const std::string& line : tail) text += ",\n  " + line;
  return text + "\n}\n";
}

const std::vector<std::string> kWhisperSummary = {"\"epoch\": 38.17",                     // line 5
                                                  "\"step\": 5000",                       // line 6
                                                  "\"train_runtime\": 77350.9963",        // line 7
                                                  "\"train_samples_per_second\": 3.232",  // line 8
                                                  "\"train_steps_per_second\": 0.065"};   // line 9

TEST(HfStateReader, WhisperFinalStateGivesOneWholeRunSample) {
  // P4P4N1CK/whisper-large-v2-japanese-5k-steps, trainer_state.json as
  // trainer.save_state() wrote it after training. By hand:
  //   line 5     "global_step": 5000
  //   line 1255  {"epoch": 38.17, "step": 5000, ...           (the summary's dict)
  //   line 1260  "train_runtime": 77350.9963,
  //   line 1261  "train_samples_per_second": 3.232,
  //   line 1262  "train_steps_per_second": 0.065
  //   line 1265  "max_steps": 5000
  // (no train_batch_size: the state predates that field).
  // Steps rate: 5000 / 77350.9963 = 0.064640, printed 0.065: consistent.
  // Samples per step: 3.232 x 77350.9963 / 5000 = 249998.42 / 5000 = 49.99968;
  // 3.232 is rounded to +/- 0.0005 (0.0155%), so 49.99968 +/- 0.0077: batch 50.
  // step 5000 = max_steps: the stated 3.232 samples/s stands.
  // Evaluations in log_history before the summary, eval_runtime at lines 253,
  // 502, 751, 1000, 1249: 1728.016 + 1718.5005 + 1714.4778 + 1713.6333 +
  // 1710.8673 = 8585.4949 s, 8585.4949 / 77350.9963 = 11.1% of the run; without
  // them 50 x 5000 / (77350.9963 - 8585.4949) = 250000 / 68765.5014 = 3.636 samples/s.
  // 77350.9963 s = 21 h 29 min 11 s.
  const ReadHfState read = ReadState(ReadWild(kWhisper), kWhisper);
  ASSERT_EQ(read.samples.size(), 1u);
  const Sample& s = read.samples[0];
  EXPECT_EQ(s.line, 1261);
  EXPECT_EQ(s.batch, 50);
  EXPECT_EQ(s.devices, 1);
  ASSERT_TRUE(s.throughput_sps.has_value());
  EXPECT_NEAR(*s.throughput_sps, 3.232, 1e-12);
  EXPECT_FALSE(s.step_time_s.has_value());
  EXPECT_FALSE(s.epoch.has_value());  // a whole-run average belongs to no epoch
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0],
              AllOf(HasSubstr(std::string(kWhisper) + ":1261: "), HasSubstr("whole-run average"),
                    HasSubstr("train_runtime 77350.9963 s (21:29:11)"), HasSubstr("5 evaluations"),
                    HasSubstr("eval_runtime 8585.49 s"), HasSubstr("11.1% of it"),
                    HasSubstr("without them 3.636 samples/s")));
}

TEST(HfStateReader, AGivenBatchMustAgreeWithTheFile) {
  // The file fixes the global batch at 50 (see above): @batch=50 agrees, a
  // per-device or mistaken 64 is refused. The devices are not in the file.
  Attributes a;
  a.batch = 50;
  a.devices = 4;
  const ReadHfState read = ReadState(ReadWild(kWhisper), kWhisper, a);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 50);
  EXPECT_EQ(read.samples[0].devices, 4);
  a.batch = 64;
  EXPECT_THAT(ErrorOfHfState(ReadWild(kWhisper), a),
              AllOf(HasSubstr("trainer_state.json:1261: field 'batch': PATH@batch=64 "
                              "contradicts the file"),
                    HasSubstr("= 49.9997 (+/- 0.0077 from the rounding) samples per optimizer "
                              "step, so 50")));
}

TEST(HfStateReader, CheckpointStatesHaveNoTimes) {
  // Dheena731/tinyLlama-finetune: line 7 "global_step": 2800, line 11
  // "log_history": [, line 1828 "max_steps": 2808, line 1854 "train_batch_size": 2;
  // log_history holds 186 per-step dicts (loss, grad_norm, num_tokens, no time)
  // and 14 evaluations, no train_runtime: a checkpoint's state.
  EXPECT_THAT(
      ErrorOfHfState(ReadWild(kTinyLlama)),
      AllOf(HasSubstr("trainer_state.json:11: field 'train_runtime': log_history has "
                      "no end-of-training summary"),
            HasSubstr("global_step 2800 of max_steps 2808"), HasSubstr("trainer.save_state()")));
  // ShashankBommana/DNABERT-2: line 5 "global_step": 2200, line 9
  // "log_history": [, line 286 "max_steps": 2315; 22 per-step dicts and 11
  // evaluations, no train_runtime.
  EXPECT_THAT(ErrorOfHfState(ReadWild(kDnabert)),
              AllOf(HasSubstr("trainer_state.json:9: field 'train_runtime'"),
                    HasSubstr("global_step 2200 of max_steps 2315")));
}

TEST(HfStateReader, AssembledStateReadsLikeTheFile) {
  // kWhisperSummary alone: the same sample, at the line of train_samples_per_second
  // (8), with no evaluation in the warning.
  const ReadHfState read = ReadState(State(kWhisperSummary));
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].line, 8);
  EXPECT_EQ(read.samples[0].batch, 50);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_THAT(read.warnings[0], HasSubstr("trainer_state.json:8: the sample is a whole-run "
                                          "average: train_runtime 77350.9963 s"));
  EXPECT_THAT(read.warnings[0], Not(HasSubstr("evaluation")));
}

TEST(HfStateReader, TrainBatchSizeCrossCheck) {
  // train_batch_size is one process's dataloader batch. 50 = 5 x 10: five
  // processes or accumulation steps, which the file does not separate.
  ReadHfState read =
      ReadState(State(kWhisperSummary, "5000", "5000", {"\"train_batch_size\": 10"}));
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 50);
  EXPECT_EQ(read.samples[0].devices, 1);
  ASSERT_EQ(read.warnings.size(), 2u);
  EXPECT_THAT(read.warnings[1],
              AllOf(HasSubstr("batch 50 = 5 x train_batch_size 10"), HasSubstr("PATH@devices=N")));
  // 50 = train_batch_size: one process, no accumulation; nothing to warn of.
  read = ReadState(State(kWhisperSummary, "5000", "5000", {"\"train_batch_size\": 50"}));
  EXPECT_EQ(read.samples[0].batch, 50);
  EXPECT_EQ(read.warnings.size(), 1u);
  // 50 is not a multiple of 16: the file contradicts itself; the batch must be given.
  const std::string text = State(kWhisperSummary, "5000", "5000", {"\"train_batch_size\": 16"});
  EXPECT_THAT(ErrorOfHfState(text),
              AllOf(HasSubstr("trainer_state.json:8: field 'batch': "
                              "train_samples_per_second x train_runtime / max_steps = 3.232 x "
                              "77350.9963 / 5000 = 49.9997"),
                    HasSubstr("not a multiple of train_batch_size 16"),
                    HasSubstr("give the global batch per optimizer step as PATH@batch=N")));
  // Given, the sample is the step time the file does give: 77350.9963 / 5000 = 15.47019926 s.
  Attributes a;
  a.batch = 48;
  read = ReadState(text, "trainer_state.json", a);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 48);
  EXPECT_FALSE(read.samples[0].throughput_sps.has_value());
  EXPECT_NEAR(*read.samples[0].step_time_s, 15.47019926, 1e-9);
}

TEST(HfStateReader, FractionalSamplesPerStepNeedTheBatch) {
  // 3.1 x 77350.9963 / 5000 = 47.958: not whole (a run given in epochs with a
  // partial last batch gives such averages).
  std::vector<std::string> summary = kWhisperSummary;
  summary[3] = "\"train_samples_per_second\": 3.1";
  EXPECT_THAT(
      ErrorOfHfState(State(summary)),
      AllOf(HasSubstr("= 47.9576"), HasSubstr("not a whole number"), HasSubstr("PATH@batch=N")));
}

TEST(HfStateReader, StatesWithoutAStepRateNeedTheBatch) {
  // The summary of an early transformers 4.x state (huggingface.co, commit
  // a3b069f of nsi319/legal-led-base-16384, trainer_state.json):
  //   {"epoch": 3.0, "step": 2193, "train_runtime": 3680.7884,
  //    "train_samples_per_second": 0.596}, "max_steps": 2193
  // 2193 / 3680.7884 = 0.5958 steps/s: the "samples" per second are steps per
  // second (or the batch is 1); 0.596 x 3680.7884 / 2193 = 1.0003 +/- 0.0008.
  const std::string text =
      State({"\"epoch\": 3.0", "\"step\": 2193", "\"train_runtime\": 3680.7884",
             "\"train_samples_per_second\": 0.596"},
            "2193", "2193");
  EXPECT_THAT(ErrorOfHfState(text),
              AllOf(HasSubstr("trainer_state.json:8: field 'batch'"), HasSubstr("= 1.00034"),
                    HasSubstr("there is no train_steps_per_second"), HasSubstr("PATH@batch=N")));
  // With the batch given: step time 3680.7884 / 2193 = 1.678426 s.
  Attributes a;
  a.batch = 4;
  const ReadHfState read = ReadState(text, "trainer_state.json", a);
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 4);
  EXPECT_NEAR(*read.samples[0].step_time_s, 3680.7884 / 2193, 1e-12);
  EXPECT_NEAR(*read.samples[0].step_time_s, 1.678426, 1e-6);
}

TEST(HfStateReader, EarlyStopIsTakenOverTheStepsDone) {
  // Assembled: the whisper run stopped at step 4000 of 5000. The Trainer's
  // rates still divide max_steps' samples by the runtime of 4000 steps, so the
  // sample is 3.232 x 4000 / 5000 = 2.5856 samples/s.
  std::vector<std::string> summary = kWhisperSummary;
  summary[1] = "\"step\": 4000";
  const ReadHfState read = ReadState(State(summary, "4000"));
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].batch, 50);
  EXPECT_NEAR(*read.samples[0].throughput_sps, 2.5856, 1e-12);
  ASSERT_EQ(read.warnings.size(), 2u);
  EXPECT_THAT(read.warnings[1], HasSubstr("stopped at step 4000 of max_steps 5000"));
  // A step past max_steps is a contradiction.
  summary[1] = "\"step\": 5001";
  EXPECT_THAT(ErrorOfHfState(State(summary)),
              HasSubstr("trainer_state.json:6: field 'step': 5001 exceeds max_steps 5000"));
}

TEST(HfStateReader, StepRateMustMatchMaxSteps) {
  // 5000 / 77350.9963 = 0.0646, printed 0.065; 0.1 belongs to another run.
  std::vector<std::string> summary = kWhisperSummary;
  summary[4] = "\"train_steps_per_second\": 0.1";
  EXPECT_THAT(ErrorOfHfState(State(summary)),
              HasSubstr("trainer_state.json:9: field 'train_steps_per_second': is 0.1, but "
                        "max_steps / train_runtime = 5000 / 77350.9963 = 0.064640"));
}

TEST(HfStateReader, BadValuesAreDataErrors) {
  std::vector<std::string> summary = kWhisperSummary;
  summary[3] = "\"train_samples_per_second\": NaN";  // Python's json writes NaN bare
  EXPECT_THAT(ErrorOfHfState(State(summary)),
              HasSubstr("trainer_state.json:8: field 'train_samples_per_second': is NaN"));
  summary = kWhisperSummary;
  summary[2] = "\"train_runtime\": -5.0";
  EXPECT_THAT(ErrorOfHfState(State(summary)),
              HasSubstr("trainer_state.json:7: field 'train_runtime': must be > 0, got -5"));
  summary = kWhisperSummary;
  summary[2] = "\"train_runtime\": Infinity";
  EXPECT_THAT(ErrorOfHfState(State(summary)),
              HasSubstr("trainer_state.json:7: field 'train_runtime': is infinite"));
  summary = kWhisperSummary;
  summary[3] = "\"train_samples_per_second\": 0.0";
  EXPECT_THAT(ErrorOfHfState(State(summary)),
              HasSubstr("trainer_state.json:8: field 'train_samples_per_second': must be > 0, "
                        "got 0"));
  summary = kWhisperSummary;
  summary[3] = "\"train_samples_per_second\": \"fast\"";
  EXPECT_THAT(ErrorOfHfState(State(summary)),
              HasSubstr("trainer_state.json:8: field 'train_samples_per_second': expected a "
                        "number, got 'fast'"));
  EXPECT_THAT(ErrorOfHfState(State(kWhisperSummary, "5000", "2.5")),
              HasSubstr("trainer_state.json:12: field 'max_steps': must be a whole number"));
  EXPECT_THAT(ErrorOfHfState(State(kWhisperSummary, "5000", "0")),
              HasSubstr("trainer_state.json:12: field 'max_steps': must be > 0, got 0"));
  // A NaN where the reader does not look (a diverged loss) is no error.
  std::vector<std::string> with_nan_loss = kWhisperSummary;
  with_nan_loss.push_back("\"loss\": NaN");
  EXPECT_EQ(ReadState(State(with_nan_loss)).samples.size(), 1u);
}

TEST(HfStateReader, MalformedStructureIsADataError) {
  // Truncated in the middle of line 601 of the real file.
  const std::string whisper = ReadWild(kWhisper);
  size_t cut = 0;
  for (int line = 0; line < 600; ++line) cut = whisper.find('\n', cut) + 1;
  EXPECT_THAT(
      ErrorOfHfState(whisper.substr(0, cut) + "      \"loss\": 0."),
      AllOf(HasSubstr("trainer_state.json:601: not valid JSON"), Not(HasSubstr("json.exception"))));
  EXPECT_THAT(ErrorOfHfState(whisper.substr(0, whisper.size() / 2)), HasSubstr("not valid JSON"));
  EXPECT_THAT(ReaderErrorOf("{\n  \"global_step\": 5,\n  \"max_steps\": 5\n}\n"),
              HasSubstr("trainer_state.json: field 'log_history': missing"));
  EXPECT_THAT(ReaderErrorOf("{\n  \"log_history\": {}\n}\n"),
              HasSubstr("trainer_state.json:2: field 'log_history': must be a list of dicts"));
  EXPECT_THAT(ReaderErrorOf("{\n  \"log_history\": 3\n}\n"),
              HasSubstr("trainer_state.json:2: field 'log_history': must be a list of dicts"));
  EXPECT_THAT(ReaderErrorOf("{\n  \"log_history\": [\n    {},\n    7\n  ]\n}\n"),
              HasSubstr("trainer_state.json:4: field 'log_history': every entry must be a dict"));
  EXPECT_THAT(ReaderErrorOf("[1, 2]"), HasSubstr("the top level is not a JSON object"));
  EXPECT_THAT(ReaderErrorOf(""), HasSubstr("trainer_state.json:1: not valid JSON"));
  // No max_steps: the steps of train_runtime are unknown.
  std::string text = State(kWhisperSummary);
  text.replace(text.find("  \"max_steps\": 5000"), 19, "  \"max_step\": 5000");
  EXPECT_THAT(ReaderErrorOf(text), HasSubstr("field 'max_steps': missing"));
  // An empty log_history: nothing was logged.
  EXPECT_THAT(ReaderErrorOf("{\"global_step\": 0, \"log_history\": [], \"max_steps\": 9}"),
              HasSubstr("no end-of-training summary"));
}

TEST(HfStateReader, BinaryJunkIsADataError) {
  const std::string junk("\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\xff\xfe", 12);
  EXPECT_THAT(ErrorOfHfState(junk), HasSubstr("looks binary"));
  EXPECT_THAT(ReaderErrorOf(junk), HasSubstr("not valid JSON"));
  // The format's signature, then junk: ill-formed UTF-8 in a key, a cut string.
  EXPECT_THAT(ReaderErrorOf("{\"log_history\": [{\"\xff\xfe\": 1}]}"),
              HasSubstr("trainer_state.json:1: not valid JSON"));
  EXPECT_THAT(ReaderErrorOf("{\"log_history\": [{\"train_runt"), HasSubstr("not valid JSON"));
  EXPECT_THAT(ReaderErrorOf(std::string("{\"log_history\": [\0\0\0]}", 22)),
              HasSubstr("not valid JSON"));
}

TEST(HfStateReader, Detection) {
  for (const char* name : {kWhisper, kTinyLlama, kDnabert}) {
    const std::string text = ReadWild(name);
    EXPECT_TRUE(io::LooksLikeHfState(text)) << name;
    EXPECT_EQ(DetectFormat(text, name), Format::kHfState) << name;
  }
  EXPECT_EQ(ParseFormat("hf-state"), Format::kHfState);
  EXPECT_EQ(FormatName(Format::kHfState), "hf-state");
  // The whisper state also holds "train_samples_per_second": 3.232, the hf
  // reader's signature; hf-state is tried first and takes it.
  EXPECT_TRUE(io::LooksLikeHf(ReadWild(kWhisper)));
  // Not a Trainer state: the saved metrics JSON (the hf reader's), a dllogger
  // and an MLLOG line, a CSV whose column is named log_history, JSON whose
  // log_history is not a list.
  const char all_results[] =
      "{\n    \"epoch\": 0.34,\n    \"train_runtime\": 6132.3668,\n"
      "    \"train_samples_per_second\": 2.609\n}\n";
  EXPECT_FALSE(io::LooksLikeHfState(all_results));
  EXPECT_EQ(DetectFormat(all_results), Format::kHf);
  EXPECT_FALSE(io::LooksLikeHfState(
      "DLLL {\"timestamp\": \"1570716934.053365\", \"type\": \"LOG\", \"step\": [1], \"data\": "
      "{\"log_history\": [1]}}\n"));
  EXPECT_FALSE(
      io::LooksLikeHfState(":::MLLOG {\"namespace\": \"\", \"time_ms\": 1593990883045, "
                           "\"event_type\": \"POINT_IN_TIME\", "
                           "\"key\": \"log_history\", \"value\": []}\n"));
  EXPECT_FALSE(io::LooksLikeHfState("step,log_history\n1,2\n"));
  EXPECT_FALSE(io::LooksLikeHfState("{\"log_history\": \"none\"}"));
  // A UTF-8 byte order mark and blanks before the object are allowed.
  EXPECT_TRUE(io::LooksLikeHfState("\xEF\xBB\xBF\n  {\"log_history\" :\n [ ]}"));
}

}  // namespace
}  // namespace fitspeed
