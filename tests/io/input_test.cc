// Tests of the reader dispatch (src/io/input.cc): input specifications,
// format names, detection of the csv, nist and epochs formats, and the errors
// ParseSamples and ReadSamples raise before or after any reader.
#include "fitspeed/io/input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "io/reader_test_util.h"
#include "io/readers.h"

namespace fitspeed {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

using fitspeed::testing::ReadData;

template <typename E, typename F>
std::string ErrorOfInput(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error of the expected kind";
}

// --- ParseInputSpec ----------------------------------------------------------------

TEST(ParseInputSpec, PathAlone) {
  const InputSpec spec = ParseInputSpec("logs/run.csv");
  EXPECT_EQ(spec.path, "logs/run.csv");
  EXPECT_FALSE(spec.attributes.batch.has_value());
  EXPECT_FALSE(spec.attributes.devices.has_value());
  EXPECT_EQ(ParseInputSpec("-").path, "-");
}

TEST(ParseInputSpec, Attributes) {
  const InputSpec spec = ParseInputSpec(
      "run.txt@batch=64,devices=8,samples=50000,label=tpu,precision=BF16,drop_remainder=true");
  EXPECT_EQ(spec.path, "run.txt");
  EXPECT_EQ(spec.attributes.batch, 64);
  EXPECT_EQ(spec.attributes.devices, 8);
  EXPECT_EQ(spec.attributes.samples_per_epoch, 50000);
  EXPECT_EQ(spec.attributes.label, "tpu");
  EXPECT_EQ(spec.attributes.precision, "bf16");  // lower-cased
  EXPECT_EQ(spec.attributes.drop_remainder, true);
  EXPECT_EQ(ParseInputSpec("r@drop_remainder=no").attributes.drop_remainder, false);
}

TEST(ParseInputSpec, PathsMayContainAt) {
  // The last '@' followed by key=value pairs starts the attributes.
  EXPECT_EQ(ParseInputSpec("runs/user@host/log.csv@batch=32").path, "runs/user@host/log.csv");
  EXPECT_EQ(ParseInputSpec("runs/user@host/log.csv@batch=32").attributes.batch, 32);
  const InputSpec no_attributes = ParseInputSpec("runs/user@host/log.csv");
  EXPECT_EQ(no_attributes.path, "runs/user@host/log.csv");
  EXPECT_FALSE(no_attributes.attributes.batch.has_value());
}

TEST(ParseInputSpec, BadAttributes) {
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("r.csv@speed=3"); }),
              HasSubstr("unknown attribute 'speed'"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("r.csv@batch=0"); }),
              HasSubstr("batch=0 must be a positive number"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("r.csv@batch=-64"); }),
              HasSubstr("must be a positive number"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("r.csv@batch=lots"); }),
              HasSubstr("batch=lots"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("r.csv@devices=1.5"); }),
              HasSubstr("devices=1.5 must be a positive integer"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("r.csv@batch=64,samples"); }),
              HasSubstr("'samples' is not key=value"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("r.csv@drop_remainder=maybe"); }),
              HasSubstr("drop_remainder=maybe must be true or false"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("@batch=64"); }),
              HasSubstr("has no path"));
  EXPECT_THROW(ParseInputSpec(""), UsageError);
}

// --- Format names --------------------------------------------------------------------

TEST(ParseFormat, NamesRoundTrip) {
  for (Format f :
       {Format::kAuto, Format::kCsv, Format::kNist, Format::kKeras, Format::kMllog,
        Format::kDllogger, Format::kTimm, Format::kHf, Format::kTfcnn, Format::kEpochs}) {
    EXPECT_EQ(ParseFormat(FormatName(f)), f) << FormatName(f);
  }
  // The names the CLI documents (--input-format auto|csv|nist|...|epochs).
  EXPECT_EQ(FormatName(Format::kCsv), "csv");
  EXPECT_EQ(FormatName(Format::kNist), "nist");
  EXPECT_EQ(FormatName(Format::kEpochs), "epochs");
  EXPECT_EQ(ParseFormat("CSV"), Format::kCsv);
}

TEST(ParseFormat, UnknownName) {
  const std::string message = ErrorOfInput<UsageError>([] { ParseFormat("xlsx"); });
  EXPECT_THAT(message, HasSubstr("unknown input format 'xlsx'"));
  EXPECT_THAT(message, HasSubstr("csv"));  // the known names are listed
}

// --- Detection -----------------------------------------------------------------------

TEST(DetectFormat, CsvNistEpochs) {
  EXPECT_EQ(DetectFormat(ReadData("measured/koshian2_tpu_benchmark_main_per_epoch.csv")),
            Format::kCsv);
  EXPECT_EQ(DetectFormat(ReadData("measured/pollux_t4_single_node.csv"), "p.csv"), Format::kCsv);
  EXPECT_EQ(DetectFormat("model\tbatch\tthroughput\nresnet\t64\t250.5\n", "r.tsv"), Format::kCsv);
  EXPECT_EQ(DetectFormat(ReadData("nist/Misra1d.dat"), "Misra1d.dat"), Format::kNist);
  EXPECT_EQ(DetectFormat(ReadData("nist/Misra1d.dat")), Format::kNist);
  EXPECT_EQ(DetectFormat("# epoch times of a run\n144.3\n50.2\n50.1\n"), Format::kEpochs);
  EXPECT_EQ(DetectFormat("1 144.3\n2 50.2\n"), Format::kEpochs);
  EXPECT_EQ(DetectFormat("hello there\nthis is not a log\n"), Format::kAuto);
}

TEST(DetectFormat, FindsMllogTagsPastTheHead) {
  // Intel's MLPerf v0.7 log opens with ~182 kB of shell output before its first
  // :::MLLOG line, beyond the 64 KiB head the sniffers look at.
  const std::string text = ReadData("mllog/Intel_1-node-8s-cpx-2-mxnet_resnet_result_0.txt");
  ASSERT_GT(text.find(":::MLLOG"), 64u * 1024u);
  EXPECT_EQ(DetectFormat(text), Format::kMllog);
}

TEST(ReadSamples, DirectoryIsAnInputError) {
  const InputSpec spec = ParseInputSpec(std::string(FITSPEED_TEST_DATA_DIR));
  EXPECT_THAT(ErrorOfInput<InputError>([&] { ReadSamples(spec); }), HasSubstr("is a directory"));
}

// A log may be a pipe (`<(zcat run.log.gz)`), never a device: /dev/zero was
// read until memory ran out.
TEST(ReadSamples, CharacterDeviceIsAnInputError) {
  EXPECT_THAT(ErrorOfInput<InputError>([] { ReadSamples(ParseInputSpec("/dev/zero")); }),
              HasSubstr("cannot read '/dev/zero': it is a character device, not a regular file"));
}

// `fitspeed read <(zcat run.log.gz)` and named pipes: a log is read from a
// FIFO to its end.
TEST(ReadSamples, FifoIsReadToItsEnd) {
  const std::string path =
      ::testing::TempDir() + "/input_test_fifo_" + std::to_string(getpid()) + ".csv";
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(path) << "batch,throughput_sps\n64,100\n128,180\n"; });
  const std::vector<Sample> samples = ReadSamples(ParseInputSpec(path));
  writer.join();
  std::remove(path.c_str());
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].batch, 128);
}

// --- ParseSamples errors ---------------------------------------------------------------

TEST(ParseSamples, EmptyInput) {
  EXPECT_THAT(ErrorOfInput<DataError>([] { ParseSamples("", "e.csv"); }),
              HasSubstr("e.csv: the input is empty"));
  EXPECT_THAT(ErrorOfInput<DataError>([] { ParseSamples(" \n\r\n\t\n", "e.csv"); }),
              HasSubstr("the input is empty"));
}

TEST(ParseSamples, BinaryJunk) {
  const std::string junk(
      "\x7f"
      "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0",
      20);
  EXPECT_THAT(ErrorOfInput<DataError>([&] { ParseSamples(junk, "a.out"); }),
              HasSubstr("a.out: the input looks binary"));
  // The check comes before the reader, whatever format is named.
  ReadOptions options;
  options.format = Format::kEpochs;
  EXPECT_THAT(ErrorOfInput<DataError>([&] { ParseSamples(junk, "a.out", {}, options); }),
              HasSubstr("looks binary"));
}

TEST(ParseSamples, UnknownFormat) {
  EXPECT_THAT(
      ErrorOfInput<DataError>([] { ParseSamples("hello there\nthis is not a log\n", "x.log"); }),
      HasSubstr("x.log: cannot tell the log format"));
}

TEST(ParseSamples, MissingBatch) {
  // An epoch list states no batch: ParseSamples names the first sample's line.
  EXPECT_THAT(ErrorOfInput<DataError>([] { ParseSamples("144.3\n50.2\n", "e.txt"); }),
              HasSubstr("e.txt:2: field 'batch': the log does not state the batch size; give it "
                        "as PATH@batch=N"));
  Attributes attributes;
  attributes.batch = 1024;
  attributes.samples_per_epoch = 50000;
  EXPECT_EQ(ParseSamples("144.3\n50.2\n", "e.txt", attributes).size(), 1u);
}

TEST(ParseSamples, NoSamplesAfterReading) {
  ReadOptions options;
  options.format = Format::kEpochs;
  EXPECT_THAT(
      ErrorOfInput<DataError>([&] { ParseSamples("# only comments\n", "e.txt", {}, options); }),
      HasSubstr("no samples found (read as format 'epochs')"));
}

TEST(ParseSamples, AttributesAreApplied) {
  Attributes attributes;
  attributes.label = "colab";
  attributes.devices = 8;
  const auto samples = ParseSamples("model,batch,throughput\nwrn,1024,1600\n", "r.csv", attributes);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].label, "colab/model=wrn");  // "attr/log"
  EXPECT_EQ(samples[0].devices, 8);                // the table has no devices column
}

TEST(ParseInputSpec, UnitAndSeqLen) {
  const InputSpec spec = ParseInputSpec("gpt.csv@unit=Tokens,seq_len=2048");
  EXPECT_EQ(spec.attributes.unit, Unit::kTokens);
  EXPECT_EQ(spec.attributes.seq_len, 2048);
  EXPECT_EQ(ParseInputSpec("g.csv@unit=sequences").attributes.unit, Unit::kSamples);
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("g.csv@unit=images"); }),
              HasSubstr("unknown unit 'images'"));
  EXPECT_THAT(ErrorOfInput<UsageError>([] { ParseInputSpec("g.csv@seq_len=12.5"); }),
              HasSubstr("seq_len=12.5 must be a positive integer"));
}

TEST(ParseSamples, TokenAttributesTurnATableIntoSequences) {
  // A CSV of a language model in tokens: batch 65536 tokens, 131072 tokens/s.
  // With seq_len 1024: 64 sequences per step at 128 sequences/s.
  Attributes attributes;
  attributes.unit = Unit::kTokens;
  attributes.seq_len = 1024;
  const auto samples = ParseSamples("batch,throughput\n65536,131072\n", "lm.csv", attributes);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].unit, Unit::kSamples);
  EXPECT_DOUBLE_EQ(samples[0].batch, 64);
  EXPECT_DOUBLE_EQ(*samples[0].throughput_sps, 128);
  EXPECT_EQ(samples[0].seq_len, 1024);

  // Without the length the samples stay in tokens, to be fitted per token.
  Attributes tokens_only;
  tokens_only.unit = Unit::kTokens;
  const auto in_tokens = ParseSamples("batch,throughput\n65536,131072\n", "lm.csv", tokens_only);
  EXPECT_EQ(in_tokens[0].unit, Unit::kTokens);
  EXPECT_DOUBLE_EQ(in_tokens[0].batch, 65536);
}

TEST(ApplyAttributes, UnitAndSeqLenNeverOverrideWhatTheLogStates) {
  Sample s;
  s.source = "gpt.log";
  s.line = 7;
  s.unit = Unit::kTokens;
  s.seq_len = 2048;
  Attributes samples_unit;
  samples_unit.unit = Unit::kSamples;
  EXPECT_THAT(ErrorOfInput<DataError>([&] { io::ApplyAttributes(samples_unit, s); }),
              AllOf(HasSubstr("gpt.log:7"), HasSubstr("the log counts tokens here")));
  Attributes other_length;
  other_length.seq_len = 1024;
  EXPECT_THAT(ErrorOfInput<DataError>([&] { io::ApplyAttributes(other_length, s); }),
              HasSubstr("sequences of 2048 tokens; @seq_len=1024 contradicts it"));
  Attributes same;
  same.unit = Unit::kTokens;
  same.seq_len = 2048;
  EXPECT_NO_THROW(io::ApplyAttributes(same, s));
}

TEST(ParseSamples, NegativeSkipIsAUsageError) {
  ReadOptions options;
  options.skip_first_epochs = -1;
  EXPECT_THROW(ParseSamples("144.3\n", "e.txt", {}, options), UsageError);
}

// An empty input is bad data (the CLI's exit code 65), not a usage or input error.
TEST(ParseSamples, EmptyInputIsADataError) { EXPECT_THROW(ParseSamples("", "e.csv"), DataError); }

// --- ReadSamples -------------------------------------------------------------------------

TEST(ReadSamples, MissingFileIsAnInputError) {
  const InputSpec spec = ParseInputSpec("/nonexistent/fitspeed/run.csv@batch=64");
  EXPECT_THAT(ErrorOfInput<InputError>([&] { ReadSamples(spec); }),
              HasSubstr("cannot open '/nonexistent/fitspeed/run.csv'"));
}

TEST(ReadSamples, ReadsAFileWithItsAttributes) {
  const InputSpec spec = ParseInputSpec(std::string(FITSPEED_TEST_DATA_DIR) +
                                        "/measured/koshian2_tpu_benchmark_main_per_epoch.csv"
                                        "@samples=50000,drop_remainder=true");
  const std::vector<Sample> samples = ReadSamples(spec);
  ASSERT_EQ(samples.size(), 1520u);  // see CsvReader.Koshian2KeepsEpochsAfterTheFirst
  EXPECT_EQ(samples[0].samples_per_epoch, 50000);
  EXPECT_EQ(samples[0].steps_rule, StepsRule::kDropRemainder);
  EXPECT_EQ(samples[0].source, spec.path);
}

TEST(SampleFilter, MatchesLabelDevicesPrecisionOrATag) {
  Sample s;
  s.label = "tpu";
  s.devices = 8;
  s.precision = "bf16";
  s.tags = TagMap{{"optimizer", "adam"}};
  EXPECT_TRUE(ParseSampleFilter("label=tpu").Matches(s));
  EXPECT_FALSE(ParseSampleFilter("label=gpu").Matches(s));
  EXPECT_TRUE(ParseSampleFilter("devices=8").Matches(s));
  EXPECT_FALSE(ParseSampleFilter("devices=08").Matches(s));  // the count as written: 8
  EXPECT_TRUE(ParseSampleFilter("precision=bf16").Matches(s));
  EXPECT_TRUE(ParseSampleFilter("optimizer=adam").Matches(s));
  EXPECT_FALSE(ParseSampleFilter("optimizer=sgd").Matches(s));
  EXPECT_FALSE(ParseSampleFilter("lr=0.1").Matches(s));  // no such tag
  // The value is all after the first '=': "a=b=c" keeps the tag "a" equal to "b=c".
  s.tags = TagMap{{"a", "b=c"}};
  EXPECT_TRUE(ParseSampleFilter("a=b=c").Matches(s));
}

TEST(SampleFilter, NeedsKeyEqualsValue) {
  EXPECT_THROW(ParseSampleFilter("label"), UsageError);
  EXPECT_THROW(ParseSampleFilter("=tpu"), UsageError);
  EXPECT_EQ(ParseSampleFilter("label=").value, "");  // an empty value matches an empty field
}

}  // namespace
}  // namespace fitspeed
