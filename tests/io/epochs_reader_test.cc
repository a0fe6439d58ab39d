// Tests of the "epochs" reader (docs/formats/epochs.md): a list of epoch
// times, or "epoch time" pairs, with the batch and samples as attributes.
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

std::vector<Sample> ReadRawEpochs(std::string_view text, int skip_first_epochs = 1) {
  const std::string source = "e.txt";
  const Attributes attributes;
  ReadOptions options;
  options.skip_first_epochs = skip_first_epochs;
  return io::ReadEpochs(text, io::ReaderContext{source, attributes, options});
}

std::string DataErrorMessageEpochs(std::string_view text) {
  return testing::DataErrorOf([&] { ReadRawEpochs(text); });
}

TEST(EpochsReader, TimesOnePerLine) {
  // Line 1 a comment, lines 2-4 epochs 1-3; epoch 1 (compilation) is dropped.
  const auto samples = ReadRawEpochs("# WRN on a TPU, batch 1024\n144.3\n50.2\n50.1  # steady\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].line, 3);
  EXPECT_EQ(samples[0].epoch, 2);
  ASSERT_TRUE(samples[0].epoch_time_s.has_value());
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 50.2);
  EXPECT_EQ(samples[1].epoch, 3);
  EXPECT_DOUBLE_EQ(*samples[1].epoch_time_s, 50.1);
  EXPECT_EQ(samples[0].batch, 0);  // from the attributes, later
  EXPECT_FALSE(samples[0].samples_per_epoch.has_value());
  EXPECT_EQ(ReadRawEpochs("144.3\n50.2\n50.1\n", /*skip_first_epochs=*/0).size(), 3u);
  EXPECT_EQ(ReadRawEpochs("144.3\n50.2\n50.1\n", /*skip_first_epochs=*/2).size(), 1u);
}

TEST(EpochsReader, EpochTimePairs) {
  // Blank- or comma-separated; the stated numbers are kept, not renumbered.
  const auto samples = ReadRawEpochs("1 144.3\n\n2, 50.2\n5\t49.9\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].epoch, 2);
  EXPECT_EQ(samples[0].line, 3);
  EXPECT_EQ(samples[1].epoch, 5);
  EXPECT_DOUBLE_EQ(*samples[1].epoch_time_s, 49.9);
}

TEST(EpochsReader, ZeroBasedPairsAreShifted) {
  // Epochs 0, 1, 2 as Keras' CSVLogger counts them are epochs 1, 2, 3: the first is dropped.
  const auto samples = ReadRawEpochs("0 90\n1 60\n2 61\n");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].epoch, 2);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 60);
}

TEST(EpochsReader, AttributesGiveBatchAndSamples) {
  Attributes attributes;
  attributes.batch = 256;
  attributes.samples_per_epoch = 50000;
  ReadOptions options;
  options.format = Format::kEpochs;
  const auto samples = ParseSamples("120\n61.5\n61.0\n", "e.txt", attributes, options);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].batch, 256);
  EXPECT_EQ(samples[0].samples_per_epoch, 50000);
  EXPECT_DOUBLE_EQ(*samples[0].epoch_time_s, 61.5);
}

TEST(EpochsReader, BadLines) {
  EXPECT_THAT(DataErrorMessageEpochs("90\n60 # ok\nsixty\n"),
              HasSubstr("e.txt:3: field 'epoch_time': expected a number, got 'sixty'"));
  EXPECT_THAT(DataErrorMessageEpochs("90\n-60\n"),
              HasSubstr("e.txt:2: field 'epoch_time': must be > 0"));
  EXPECT_THAT(DataErrorMessageEpochs("90\n0\n"),
              HasSubstr("e.txt:2: field 'epoch_time': must be > 0"));
  EXPECT_THAT(DataErrorMessageEpochs("90\nnan\n"),
              HasSubstr("e.txt:2: field 'epoch_time': is NaN"));
  EXPECT_THAT(DataErrorMessageEpochs("90\ninf\n"),
              HasSubstr("e.txt:2: field 'epoch_time': is infinite"));
  EXPECT_THAT(DataErrorMessageEpochs("1 90\n2 60 3\n"),
              HasSubstr("e.txt:2: expected an epoch time"));
  EXPECT_THAT(DataErrorMessageEpochs("1 90\n60\n"),
              HasSubstr("e.txt:2: has 1 number(s) but line 1 has 2"));
  EXPECT_THAT(DataErrorMessageEpochs("1.5 90\n"),
              HasSubstr("e.txt:1: field 'epoch': must be a whole"));
  EXPECT_THAT(DataErrorMessageEpochs("-1 90\n"),
              HasSubstr("e.txt:1: field 'epoch': must be a whole"));
}

TEST(EpochsReader, OnlyWarmUpEpochs) {
  EXPECT_THAT(DataErrorMessageEpochs("# one epoch only\n144.3\n"),
              HasSubstr("e.txt:2: field 'epoch': every epoch listed (1) is <= skip_first_epochs"));
  EXPECT_TRUE(ReadRawEpochs("# nothing\n\n").empty());
}

TEST(LooksLikeEpochs, NumbersOnly) {
  EXPECT_TRUE(io::LooksLikeEpochs("# times\n144.3\n50.2\n"));
  EXPECT_TRUE(io::LooksLikeEpochs("1 144.3\n2, 50.2\n"));
  EXPECT_FALSE(io::LooksLikeEpochs("1 2 3\n"));
  EXPECT_FALSE(io::LooksLikeEpochs("batch,throughput\n64,100\n"));
  EXPECT_FALSE(io::LooksLikeEpochs("# only a comment\n"));
  EXPECT_FALSE(io::LooksLikeEpochs("Epoch 1/20\n"));
}

}  // namespace
}  // namespace fitspeed
