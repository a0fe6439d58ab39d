// Reading a log in pieces (io::LineCursor on a ReadBytes, io::ParseStream, what
// ReadSamples does with a file) gives what reading it whole gives: the same
// lines and line numbers, and over every file of tests/data the same samples
// (batch, times, line, label, ...), warnings and errors as ParseSamples.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/reader_test_util.h"
#include "io/readers.h"
#include "io/text.h"

namespace fitspeed {
namespace {

using fitspeed::testing::ReadData;

// A ReadBytes on `text` that gives at most `piece` bytes per call, as a pipe may.
io::ReadBytes Trickle(std::string_view text, size_t piece) {
  return [text, piece, at = size_t{0}](char* data, size_t size) mutable {
    const size_t n = std::min({size, piece, text.size() - at});
    std::copy_n(text.data() + at, n, data);
    at += n;
    return n;
  };
}

// Every line with its number and cut(), one per line of the result.
std::string LinesOf(io::LineCursor& cursor) {
  std::string out;
  std::string_view line;
  while (cursor.Next(line)) {
    out += fmt::format("{}{}:[{}]\n", cursor.number(), cursor.cut() ? " cut" : "", line);
  }
  return out;
}

std::string Describe(const Sample& s) {
  std::string tags;
  for (const auto& [name, value] : s.tags) tags += fmt::format("{}={};", name, value);
  auto opt = [](const auto& v) { return v ? fmt::format("{:.17g}", *v) : std::string("-"); };
  return fmt::format(
      "{}:{} label={} precision={} tags={} batch={:.17g} v={} step={} epoch_time={} N={} "
      "seq_len={} devices={} epoch={} rule={} unit={}",
      s.source.str(), s.line, s.label.str(), s.precision.str(), tags, s.batch,
      opt(s.throughput_sps), opt(s.step_time_s), opt(s.epoch_time_s), opt(s.samples_per_epoch),
      opt(s.seq_len), s.devices, s.epoch ? fmt::format("{}", *s.epoch) : "-",
      static_cast<int>(s.steps_rule), UnitName(s.unit));
}

// A read's samples (described), warnings, and the message of the Error it threw.
struct Outcome {
  std::vector<std::string> samples;
  std::vector<std::string> warnings;
  std::string error;
};

template <class F>
Outcome OutcomeOf(F&& read, ReadOptions options = {}) {
  Outcome outcome;
  options.warn = [&outcome](const std::string& w) { outcome.warnings.push_back(w); };
  try {
    for (const Sample& s : read(options)) outcome.samples.push_back(Describe(s));
  } catch (const Error& e) {
    outcome.error = e.what();
  }
  return outcome;
}

void ExpectSame(const Outcome& whole, const Outcome& streamed, const std::string& what) {
  EXPECT_EQ(whole.error, streamed.error) << what;
  EXPECT_EQ(whole.warnings, streamed.warnings) << what;
  ASSERT_EQ(whole.samples.size(), streamed.samples.size()) << what;
  for (size_t i = 0; i < whole.samples.size(); ++i) {
    ASSERT_EQ(whole.samples[i], streamed.samples[i]) << what << ", sample " << i;
  }
}

// Attributes that let most logs read without their own batch or epoch size.
Attributes Filling() {
  Attributes a;
  a.batch = 64;
  a.samples_per_epoch = 50000;
  return a;
}

// ParseSamples on `text` against ParseStream on it in pieces of `piece` bytes
// read `chunk` at a time.
void ExpectStreamReadsAsWhole(const std::string& text, const std::string& source, size_t piece,
                              size_t chunk, const Attributes& attributes = Filling()) {
  const Outcome whole =
      OutcomeOf([&](const ReadOptions& o) { return ParseSamples(text, source, attributes, o); });
  const Outcome streamed = OutcomeOf([&](const ReadOptions& o) {
    return io::ParseStream(Trickle(text, piece), source, attributes, o, chunk);
  });
  ExpectSame(whole, streamed, fmt::format("{} (pieces of {}, chunks of {})", source, piece, chunk));
}

TEST(LineCursor, StreamedGivesTheLinesNumbersAndCutsOfTheWholeText) {
  const std::vector<std::string> texts = {
      "",
      "one",
      "one\n",
      "one\ntwo",
      "one\r\ntwo\r\n",
      "one\r\ntwo\r\nthree",
      "bar 1\rbar 2\rbar 3\nnext\n",
      "a\r",
      "a\r\r\n\n\nb\r\n\r",
      std::string(100, 'x') + "\r\n" + std::string(37, 'y') + "\n\n" + std::string(250, 'z'),
  };
  for (const std::string& text : texts) {
    io::LineCursor whole(text);
    const std::string expected = LinesOf(whole);
    for (size_t chunk : {1, 2, 3, 7, 64, 1024}) {
      for (size_t piece : {size_t{1}, size_t{5}, chunk}) {
        for (size_t start : {size_t{0}, std::min<size_t>(3, text.size())}) {
          // The first `start` bytes already read, as ParseStream passes its head.
          io::LineCursor streamed(Trickle(std::string_view(text).substr(start), piece), chunk,
                                  text.substr(0, start));
          EXPECT_EQ(LinesOf(streamed), expected)
              << "text '" << io::Excerpt(text, 60) << "', chunk " << chunk << ", piece " << piece
              << ", start " << start;
        }
      }
    }
  }
}

// Every file of tests/data (logs of every format, and files that are no log)
// through ParseStream and ParseSamples: the same samples, warnings and errors.
// Files over 64 KiB of a line-oriented format are streamed past their start.
TEST(ParseStream, ReadsEveryFileOfTestDataAsParseSamples) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(FITSPEED_TEST_DATA_DIR)) {
    if (!entry.is_regular_file()) continue;
    const std::string name =
        std::filesystem::relative(entry.path(), FITSPEED_TEST_DATA_DIR).generic_string();
    const std::string text = ReadData(name);
    ++files;
    for (size_t chunk : {size_t{4096}, io::kStreamChunkBytes}) {
      ExpectStreamReadsAsWhole(text, name, chunk, chunk);
    }
    ExpectStreamReadsAsWhole(text, name, 4096, 4096, Attributes{});
  }
  EXPECT_GT(files, 100);
}

// Every file of tests/data whose format has a line-by-line reader, that reader
// on the file in chunks far smaller than its lines against the reader on the
// whole text, small files included.
TEST(ParseStream, LineReadersReadEveryFileInTinyChunksAsWhole) {
  int read = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(FITSPEED_TEST_DATA_DIR)) {
    if (!entry.is_regular_file()) continue;
    const std::string name =
        std::filesystem::relative(entry.path(), FITSPEED_TEST_DATA_DIR).generic_string();
    const std::string text = ReadData(name);
    const io::LineReader reader = io::LineReaderOf(DetectFormat(text, name));
    if (reader == nullptr) continue;
    ++read;
    const Attributes attributes = Filling();
    const Outcome whole = OutcomeOf([&](const ReadOptions& o) {
      io::LineCursor lines(text);
      return reader(lines, io::ReaderContext{name, attributes, o});
    });
    for (size_t chunk : {size_t{13}, size_t{256}}) {
      const Outcome streamed = OutcomeOf([&](const ReadOptions& o) {
        io::LineCursor lines(Trickle(text, chunk), chunk);
        return reader(lines, io::ReaderContext{name, attributes, o});
      });
      ExpectSame(whole, streamed, fmt::format("{} (chunks of {})", name, chunk));
    }
  }
  // Megatron, DeepSpeed, nanoGPT, MLLOG, dllogger, Keras, HF, timm, tfcnn, fairseq, detectron2.
  EXPECT_GT(read, 40);
}

// A log past the first 64 KiB (so that it is streamed) with a line longer than
// a chunk, without its final newline, and with CRLF line ends.
TEST(ParseStream, LongLinesNoFinalNewlineAndCrlfReadAsWhole) {
  const std::vector<std::string> logs = {
      "logs-wild/megatron-nemo/"
      "microsoft-Megatron-DeepSpeed_examples_random_ltd_gpt3-0.125B-baseline.excerpt.log",
      "logs-wild/deepspeed/"
      "DeepSpeedExamples_DeepSpeed-Chat_step1_opt-1.3b-globalBatchSize128.excerpt.log",
  };
  for (const std::string& name : logs) {
    std::string base = ReadData(name);
    ASSERT_FALSE(base.empty()) << name;
    while (base.size() < 300 * 1024) base += base;
    // A line of 5,000 characters in the middle, past the first 64 KiB.
    const size_t middle = base.find('\n', base.size() / 2) + 1;
    std::string with_long = base;
    with_long.insert(middle, "warning: " + std::string(5000, '=') + "\n");
    std::string crlf;
    for (char c : base) {
      if (c == '\n') crlf += '\r';
      crlf += c;
    }
    std::string unterminated = base;
    while (!unterminated.empty() && unterminated.back() == '\n') unterminated.pop_back();
    for (const std::string* text : {&base, &with_long, &crlf, &unterminated}) {
      for (size_t chunk : {size_t{1024}, size_t{4096}}) {
        ExpectStreamReadsAsWhole(*text, name, chunk, chunk);
        ExpectStreamReadsAsWhole(*text, name, 1000, chunk);
      }
    }
  }
}

// The checks before a reader runs, on a streamed text: a text binary at its
// start, one whose start is blank, and one whose format its start does not tell.
TEST(ParseStream, RefusesAsParseSamplesPastTheFirst64KiB) {
  const std::string blank_start = std::string(70 * 1024, '\n') + "1 10\n2 11\n3 12\n";
  const std::string binary = std::string(4096, '\x01') + std::string(70 * 1024, 'a');
  const std::string unknown = std::string(70 * 1024, '#') + "\nnothing here\n";
  for (const std::string* text : {&blank_start, &binary, &unknown}) {
    ExpectStreamReadsAsWhole(*text, "odd.log", 4096, 4096);
  }
}

}  // namespace
}  // namespace fitspeed
