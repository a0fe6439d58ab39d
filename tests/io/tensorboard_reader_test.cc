// Tests of the TensorBoard event-file reader on the two event files of an
// MLPerf v3.0 RNN-T run (NVIDIA's code on 6 L4, xFusion; the same run's
// dllogger log is tests/data/logs-wild/dllogger/) and on event files built
// here, byte by byte, with this file's own TFRecord framing, CRC-32C and
// protobuf encoding (independent of the reader's code and of libprotobuf).
//
// The expected numbers of the real files come from a separate decoder written
// in Python for this test (framing, varints, fixed32/64; no TensorFlow):
// the train file has 7967 records: 'brain.Event:2', tags aaa and zzz (one
// value each, at step 1), then every 10 steps one event each for loss,
// throughput, took, lrate (1991 values each, steps 10..19910). 'took' is
// the time of the 10 steps since the previous value (5.03 s at step 10;
// 'throughput' = 768 / took: the batch of one step over the time of ten).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/reader_test_util.h"
#include "io/readers.h"

namespace fitspeed {
namespace {

using fitspeed::testing::DataErrorOf;
using fitspeed::testing::ParseWith;
using fitspeed::testing::ReadData;
using ::testing::HasSubstr;
using ::testing::Not;

const char kTrain[] =
    "logs-wild/tensorboard/"
    "mlperf-v3.0_xFusion_2288H_V7x6xL4_rnnt_train_events.out.tfevents.1683859779.mlperf1.328.0";
const char kDevEma[] =
    "logs-wild/tensorboard/"
    "mlperf-v3.0_xFusion_2288H_V7x6xL4_rnnt_dev_ema_events.out.tfevents.1683859779.mlperf1.328.1";

// --- An event-file writer of this test's own ---------------------------------

// CRC-32C bit by bit (reflected polynomial 0x82f63b78).
uint32_t Crc32c(const std::string& data) {
  uint32_t crc = 0xffffffffu;
  for (const char c : data) {
    crc ^= static_cast<unsigned char>(c);
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
  }
  return ~crc;
}

TEST(TensorboardTestWriter, Crc32cHasTheCheckValue) {
  // The CRC-32C check value of "123456789" (RFC 3720, B.4).
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);
}

std::string LittleEndian(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

uint32_t Masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::string Record(const std::string& payload) {
  const std::string length = LittleEndian(payload.size(), 8);
  return length + LittleEndian(Masked(Crc32c(length)), 4) + payload +
         LittleEndian(Masked(Crc32c(payload)), 4);
}

std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  return out + static_cast<char>(v);
}
std::string VarintField(int field, uint64_t v) { return Varint(field << 3 | 0) + Varint(v); }
std::string BytesField(int field, const std::string& b) {
  return Varint(field << 3 | 2) + Varint(b.size()) + b;
}
std::string FloatBytes(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return LittleEndian(bits, 4);
}
std::string DoubleBytes(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return LittleEndian(bits, 8);
}

// tensorflow.Event: wall_time 1 (double), step 2, file_version 3, summary 5.
std::string EventTensorboard(double wall_time, int64_t step, const std::string& what) {
  return Record(Varint(1 << 3 | 1) + DoubleBytes(wall_time) + VarintField(2, step) + what);
}
std::string FileVersion() { return Record(BytesField(3, "brain.Event:2")); }

// Summary { Value value = 1 { tag 1, simple_value 2 (float), tensor 8, metadata 9 } }
std::string SimpleValue(const std::string& tag, float value) {
  return BytesField(5, BytesField(1, BytesField(1, tag) + Varint(2 << 3 | 5) + FloatBytes(value)));
}
std::string TensorValue(const std::string& tag, const std::string& tensor,
                        const std::string& plugin = "") {
  const std::string metadata =
      plugin.empty() ? "" : BytesField(9, BytesField(1, BytesField(1, plugin)));
  return BytesField(5, BytesField(1, BytesField(1, tag) + metadata + BytesField(8, tensor)));
}
// TensorProto: dtype 1 (DT_FLOAT 1, DT_DOUBLE 2), tensor_shape 2, tensor_content 4,
// float_val 5 and double_val 6 (packed).
std::string FloatValTensor(float v) {
  return VarintField(1, 1) + BytesField(2, "") + BytesField(5, FloatBytes(v));
}
std::string FloatContentTensor(float v) { return VarintField(1, 1) + BytesField(4, FloatBytes(v)); }
std::string DoubleValTensor(double v) { return VarintField(1, 2) + BytesField(6, DoubleBytes(v)); }
std::string ThreeFloatsTensor() {
  const std::string dim = BytesField(2, VarintField(1, 3));  // shape [3]
  return VarintField(1, 1) + BytesField(2, dim) +
         BytesField(5, FloatBytes(1) + FloatBytes(2) + FloatBytes(3));
}

// A PyTorch-SummaryWriter-like file: batch 64, steps 100..500, the step times
// of the five intervals 0.3 (warm-up), 0.25, 0.25, 0.2, 0.25 s, so
// examples/sec = 64 / step time (213.3, 256, 256, 320, 256) and
// global_step/sec = 1 / step time; wall times advance by 100 x step time.
// Records: 1 file_version, then per step loss, examples/sec, global_step/sec
// (records 3, 6, 9, 12, 15 hold examples/sec).
std::string SimpleValueFile(double speed_factor = 1) {
  const double step_times[] = {0.3, 0.25, 0.25, 0.2, 0.25};
  std::string file = FileVersion();
  double wall = 1.7e9;
  for (int k = 0; k < 5; ++k) {
    const int64_t step = 100 * (k + 1);
    wall += 100 * step_times[k];
    file += EventTensorboard(wall, step, SimpleValue("loss", 2.5f - 0.1f * k));
    file += EventTensorboard(wall, step,
                             SimpleValue("examples/sec", static_cast<float>(64 / step_times[k])));
    file += EventTensorboard(
        wall, step,
        SimpleValue("global_step/sec", static_cast<float>(speed_factor / step_times[k])));
  }
  return file;
}

Attributes BatchTensorboard(double batch) {
  Attributes a;
  a.batch = batch;
  return a;
}

ReadOptions Tag(const std::string& tag, const std::string& unit = "") {
  ReadOptions options;
  options.tensorboard_tag = tag;
  options.tensorboard_unit = unit;
  return options;
}

// --- Detection ---------------------------------------------------------------

TEST(TensorboardReader, IsDetectedByContentAndByName) {
  const std::string file = SimpleValueFile();
  EXPECT_TRUE(io::LooksLikeTensorboard(file));
  EXPECT_EQ(DetectFormat(file, "run.bin"), Format::kTensorboard);
  EXPECT_EQ(DetectFormat(ReadData(kTrain), "copy"), Format::kTensorboard);
  EXPECT_EQ(DetectFormat("junk", "logs/events.out.tfevents.1683859779.host"), Format::kTensorboard);
  EXPECT_EQ(ParseFormat("tensorboard"), Format::kTensorboard);
  EXPECT_EQ(FormatName(Format::kTensorboard), "tensorboard");
  // A valid TFRecord whose first record is not an Event with a file_version.
  EXPECT_FALSE(io::LooksLikeTensorboard(Record("hello")));
  EXPECT_FALSE(io::LooksLikeTensorboard("epoch,time\n1,20\n"));
  EXPECT_FALSE(io::LooksLikeTensorboard(""));
}

// --- The real files ----------------------------------------------------------

TEST(TensorboardReader, RealTrainFileWithoutATagInAKnownUnitListsItsScalarTags) {
  // Detected by content: the source name does not say tfevents.
  const std::string message =
      DataErrorOf([&] { ParseSamples(ReadData(kTrain), "train.bin", BatchTensorboard(768)); });
  EXPECT_THAT(message, HasSubstr("'aaa' (1), 'zzz' (1), 'loss' (1991), 'throughput' (1991), "
                                 "'took' (1991), 'lrate' (1991)"));
  EXPECT_THAT(message, HasSubstr("--tag"));
  EXPECT_THAT(message, Not(HasSubstr("binary")));
  // 'throughput' says neither samples nor steps nor per what.
  EXPECT_THAT(DataErrorOf([&] {
                ParseSamples(ReadData(kTrain), kTrain, BatchTensorboard(768), Tag("throughput"));
              }),
              HasSubstr("does not say what its values count"));
  EXPECT_THAT(DataErrorOf([&] {
                ParseSamples(ReadData(kTrain), kTrain, BatchTensorboard(768), Tag("wer"));
              }),
              HasSubstr("no scalar tag 'wer'"));
}

TEST(TensorboardReader, RealTrainThroughputIsOneStepsBatchOverTheTimeOfTen) {
  // throughput 152.72 at step 10 = 768 / 5.0288 s; the events are 10 steps and
  // a median 5.30 s apart, so as samples/s at batch 768 it implies steps ten
  // times longer than the wall times give: refused, not read 10x too slow.
  const std::string message = DataErrorOf([&] {
    ParseSamples(ReadData(kTrain), kTrain, BatchTensorboard(768), Tag("throughput", "samples/s"));
  });
  EXPECT_THAT(message, HasSubstr("means 9.99"));
  EXPECT_THAT(message, HasSubstr("(10 steps every 5.30"));
  EXPECT_THAT(message, HasSubstr("s/interval"));
}

TEST(TensorboardReader, RealTrainTookAsIntervalTimeAgreesWithTheDlloggerEpochs) {
  const auto [samples, warnings] =
      ParseWith(ReadData(kTrain), kTrain, BatchTensorboard(768), Tag("took", "s/interval"));
  // 1991 values; the first (step 10, record 6) has no interval; 44 of the
  // other 1990 are left out: RNN-T restarts its timer each epoch (362
  // iterations), so the first 'took' of an epoch covers fewer steps than the
  // 10 since the previous value (step 370: 3.94 s for 8 iterations, dllogger
  // line [2, 8, 362]).
  ASSERT_EQ(samples.size(), 1946u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("44 of 1990 values of tag 'took' are left out"));
  EXPECT_THAT(warnings[0], HasSubstr("record 150, step 370"));
  // Step 20 (record 10): took 5.040005207061768 s for 10 steps.
  EXPECT_EQ(samples[0].line, 10);
  EXPECT_DOUBLE_EQ(*samples[0].step_time_s, 5.040005207061768 / 10);
  EXPECT_EQ(samples[0].batch, 768);
  EXPECT_EQ(samples.back().line, 7966);
  EXPECT_DOUBLE_EQ(*samples.back().step_time_s, 5.334097385406494 / 10);
  // Median step time 0.53018 s (Python), 768 / 0.53018 = 1448.6 utterances/s,
  // within the dllogger log's epoch averages (train_avg_throughput 1431.8 to
  // 1477.3; epoch 10: 1446.55).
  std::vector<double> step_times;
  for (const Sample& s : samples) step_times.push_back(*s.step_time_s);
  std::sort(step_times.begin(), step_times.end());
  const double median = (step_times[972] + step_times[973]) / 2;
  EXPECT_NEAR(median, 0.5301842927932738, 1e-9);
  EXPECT_GT(768 / median, 1431.8);
  EXPECT_LT(768 / median, 1477.4);
}

TEST(TensorboardReader, RealDevEmaFileListsItsScalarTags) {
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(ReadData(kDevEma), kDevEma, BatchTensorboard(768)); }),
              HasSubstr("'aaa' (1), 'zzz' (1), 'wer' (55), 'took' (55)"));
  // 'took' here times one evaluation (1.0 s), not the 362 training steps
  // between its values (190 s): refused by the wall-clock check.
  EXPECT_THAT(DataErrorOf([&] {
                ParseSamples(ReadData(kDevEma), kDevEma, BatchTensorboard(768),
                             Tag("took", "s/interval"));
              }),
              HasSubstr("is not what was assumed"));
}

// --- Files built here --------------------------------------------------------

TEST(TensorboardReader, SimpleValuesInSamplesPerSecondAreChosenByName) {
  // examples/sec (samples/s) is preferred to global_step/sec (steps/s).
  const auto [samples, warnings] = ParseWith(SimpleValueFile(), "events", BatchTensorboard(64));
  EXPECT_THAT(warnings, ::testing::IsEmpty());
  ASSERT_EQ(samples.size(), 4u);  // the first value (step 100) is warm-up
  const int lines[] = {6, 9, 12, 15};
  const float sps[] = {256, 256, 320, 256};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(samples[i].line, lines[i]);
    EXPECT_FLOAT_EQ(*samples[i].throughput_sps, sps[i]);
    EXPECT_EQ(samples[i].unit, Unit::kSamples);
    EXPECT_EQ(samples[i].batch, 64);
  }
  // --skip-epochs 0 keeps the warm-up value: 64 / 0.3.
  ReadOptions keep;
  keep.skip_first_epochs = 0;
  const auto all = ParseWith(SimpleValueFile(), "events", BatchTensorboard(64), keep).samples;
  ASSERT_EQ(all.size(), 5u);
  EXPECT_FLOAT_EQ(*all[0].throughput_sps, static_cast<float>(64 / 0.3));
}

TEST(TensorboardReader, StepsPerSecondBecomeStepTimes) {
  const auto samples =
      ParseWith(SimpleValueFile(), "events", BatchTensorboard(64), Tag("global_step/sec")).samples;
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_FLOAT_EQ(*samples[2].step_time_s, 1 / 5.0f);  // step 400: 0.2 s
  EXPECT_EQ(samples[2].line, 13);
}

TEST(TensorboardReader, AStepRateOffTheWallTimesIsRefused) {
  // global_step/sec ten times too high for the events' wall times.
  EXPECT_THAT(DataErrorOf([&] {
                ParseSamples(SimpleValueFile(10), "events", BatchTensorboard(64),
                             Tag("global_step/sec"));
              }),
              HasSubstr("means 0.1 times the step time"));
}

TEST(TensorboardReader, Tf2TensorScalarsAreRead) {
  // tf.summary.scalar: a rank-0 float tensor, plugin "scalars" with the first
  // value only; values as float_val, as tensor_content and as a double. A
  // histogram-like [3] tensor and an image's string tensor are not scalars.
  // Step times 0.6 (warm-up), 0.5, 0.45, 0.55 s; 10 steps between values.
  std::string file = FileVersion();
  file +=
      EventTensorboard(100, 10, TensorValue("train/step_time", FloatValTensor(0.6f), "scalars"));
  file += EventTensorboard(100, 10, TensorValue("weights", ThreeFloatsTensor(), "histograms"));
  file += EventTensorboard(105, 20, TensorValue("train/step_time", FloatContentTensor(0.5f)));
  file += EventTensorboard(
      105, 20, TensorValue("sample", VarintField(1, 7) + BytesField(8, "png"), "images"));
  file += EventTensorboard(109.5, 30, TensorValue("train/step_time", FloatContentTensor(0.45f)));
  file += EventTensorboard(115, 40, TensorValue("train/step_time", DoubleValTensor(0.55)));
  const auto [samples, warnings] = ParseWith(file, "tf2-events", BatchTensorboard(32));
  EXPECT_THAT(warnings, ::testing::IsEmpty());
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_FLOAT_EQ(*samples[0].step_time_s, 0.5f);
  EXPECT_FLOAT_EQ(*samples[1].step_time_s, 0.45f);
  EXPECT_DOUBLE_EQ(*samples[2].step_time_s, 0.55);
  EXPECT_EQ(samples[2].line, 7);
  const std::string message =
      DataErrorOf([&] { ParseSamples(file, "tf2-events", BatchTensorboard(32), Tag("loss")); });
  EXPECT_THAT(message, HasSubstr("the scalar tags are 'train/step_time' (4)"));
}

TEST(TensorboardReader, TagNamesGiveTheUnitOrTheyAreAskedFor) {
  // Values 1000 per second at 0.5 s per step: batch 500 in either unit.
  auto file_with = [](const std::string& tag) {
    return FileVersion() + EventTensorboard(10, 1, SimpleValue(tag, 1000)) +
           EventTensorboard(15, 11, SimpleValue(tag, 1000)) +
           EventTensorboard(20, 21, SimpleValue(tag, 1000));
  };
  const auto tokens =
      ParseWith(file_with("perf/tokens_per_sec"), "e", BatchTensorboard(500)).samples;
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].unit, Unit::kTokens);
  EXPECT_EQ(
      ParseWith(file_with("train/samples_per_second"), "e", BatchTensorboard(500)).samples[0].unit,
      Unit::kSamples);
  // Milliseconds and bare "throughput" are not guessed.
  EXPECT_THAT(
      DataErrorOf([&] { ParseSamples(file_with("step_time_ms"), "e", BatchTensorboard(500)); }),
      HasSubstr("'step_time_ms' (3)"));
  EXPECT_THAT(
      DataErrorOf([&] { ParseSamples(file_with("throughput"), "e", BatchTensorboard(500)); }),
      HasSubstr("no scalar tag names a throughput"));
  const auto given =
      ParseWith(file_with("throughput"), "e", BatchTensorboard(500), Tag("throughput", "samples/s"))
          .samples;
  ASSERT_EQ(given.size(), 2u);
  EXPECT_DOUBLE_EQ(*given[0].throughput_sps, 1000);
  // Two tags of the same unit: neither is picked.
  const std::string two = FileVersion() + EventTensorboard(1, 1, SimpleValue("a/examples/sec", 1)) +
                          EventTensorboard(1, 1, SimpleValue("b/examples/sec", 1));
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(two, "e", BatchTensorboard(1)); }),
              HasSubstr("several tags count samples/s: 'a/examples/sec', 'b/examples/sec'"));
}

TEST(TensorboardReader, BadUnitOptionsAreUsageErrors) {
  const std::string file = SimpleValueFile();
  EXPECT_THROW(ParseSamples(file, "e", BatchTensorboard(64), Tag("loss", "furlongs")), UsageError);
  EXPECT_THROW(ParseSamples(file, "e", BatchTensorboard(64), Tag("", "s/step")), UsageError);
}

// --- Malformed files ---------------------------------------------------------

TEST(TensorboardReader, DamagedOrTruncatedRecordsNameTheRecordAndItsOffset) {
  const std::string file = SimpleValueFile();
  const size_t second = 12 + 15 + 4;  // the file_version record is 31 bytes
  std::string bad_payload = file;
  bad_payload[second + 14] ^= 0x20;
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(bad_payload, "events.out.tfevents.x"); }),
              HasSubstr("events.out.tfevents.x:2: record 2 at byte offset 31: the CRC of the "
                        "payload does not match"));
  std::string bad_length = file;
  bad_length[second] ^= 0x01;
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(bad_length, "events.out.tfevents.x"); }),
              HasSubstr("record 2 at byte offset 31: the CRC of the length"));
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(file.substr(0, file.size() - 3), "e"); }),
              HasSubstr("truncated"));
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(file.substr(0, second + 5), "events.out.tfevents"); }),
              HasSubstr("record 2 at byte offset 31: truncated: 5 bytes"));
  // A well-framed record that is not an Event.
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(FileVersion() + Record("\xff\xff"), "e"); }),
              HasSubstr("record 2 at byte offset 31: its 2 bytes are not a tensorflow.Event"));
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(FileVersion(), "e"); }),
              HasSubstr("holds no scalar values"));
  EXPECT_THROW(ParseSamples("", "events.out.tfevents.x"), DataError);
}

TEST(TensorboardReader, BinaryJunkIsRefusedAndMutatedFilesNeverCrash) {
  std::mt19937 random(12);
  std::string junk(4096, '\0');
  for (char& c : junk) c = static_cast<char>(random());
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(junk, "junk.bin"); }), HasSubstr("looks binary"));
  EXPECT_THAT(DataErrorOf([&] { ParseSamples(junk, "events.out.tfevents.1"); }),
              HasSubstr("record 1 at byte offset 0"));
  EXPECT_THAT(DataErrorOf([&] {
                ReadOptions options;
                options.format = Format::kTensorboard;
                ParseSamples("epoch,time\n1,20\n", "log.csv", {}, options);
              }),
              HasSubstr("record 1 at byte offset 0"));
  std::string alphabet;
  for (int c = 0; c < 256; ++c) alphabet += static_cast<char>(c);
  testing::ParseCutAndMutated({SimpleValueFile(), ReadData(kDevEma)}, alphabet, 300, 5,
                              "events.out.tfevents.m", BatchTensorboard(64),
                              Tag("took", "s/interval"));
  testing::ParseCutAndMutated({SimpleValueFile()}, alphabet, 300, 6, "e", BatchTensorboard(64), {});
}

}  // namespace
}  // namespace fitspeed
