// Helpers for the reader tests: the files of tests/data, a reader's samples
// with the warnings it gave, the message of the DataError it threw, and cut and
// mutated copies of texts fed through ParseSamples.
#ifndef FITSPEED_TESTS_IO_READER_TEST_UTIL_H_
#define FITSPEED_TESTS_IO_READER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/io/input.h"
#include "io/readers.h"

namespace fitspeed::testing {

// The bytes of tests/data/`name`; the test fails when the file cannot be opened.
inline std::string ReadData(const std::string& name) {
  const std::string path = std::string(FITSPEED_TEST_DATA_DIR) + "/" + name;
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << "cannot open " << path;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// What a reader returned and the warnings it gave through ReadOptions::warn.
struct ReadResult {
  std::vector<Sample> samples;
  std::vector<std::string> warnings;
};

// One reader of src/io/readers.h: io::ReadCsv, io::ReadDeepspeed, ...
using Reader = std::vector<Sample> (*)(std::string_view, const io::ReaderContext&);

// `reader` alone on `text` from `source`, collecting the warnings (options.warn is replaced).
inline ReadResult ReadWith(Reader reader, std::string_view text, const std::string& source,
                           const Attributes& attributes = {}, ReadOptions options = {}) {
  ReadResult result;
  options.warn = [&result](const std::string& w) { result.warnings.push_back(w); };
  result.samples = reader(text, io::ReaderContext{source, attributes, options});
  return result;
}

// ParseSamples on `text` from `source`, collecting the warnings (options.warn is replaced).
inline ReadResult ParseWith(std::string_view text, const std::string& source,
                            const Attributes& attributes = {}, ReadOptions options = {}) {
  ReadResult result;
  options.warn = [&result](const std::string& w) { result.warnings.push_back(w); };
  result.samples = ParseSamples(text, source, attributes, options);
  return result;
}

// The message of the DataError that `read()` throws, or "no DataError".
template <typename F>
std::string DataErrorOf(F&& read) {
  try {
    read();
  } catch (const DataError& e) {
    return e.what();
  }
  return "no DataError";
}

// The sample read at `line`, or nullptr when there is none.
inline const Sample* AtLine(const std::vector<Sample>& samples, int line) {
  for (const Sample& s : samples) {
    if (s.line == line) return &s;
  }
  return nullptr;
}

// ParseSamples on `count` cut, mutated copies of each text: fails on any exception but an Error.
inline void ParseCutAndMutated(const std::vector<std::string>& texts, std::string_view alphabet,
                               int count, unsigned seed, const std::string& source,
                               const Attributes& attributes, const ReadOptions& options) {
  std::mt19937 random(seed);
  for (const std::string& base : texts) {
    for (int i = 0; i < count; ++i) {
      std::string text = base.substr(0, random() % (base.size() + 1));
      for (int k = random() % 8; k > 0 && !text.empty(); --k) {
        text[random() % text.size()] = alphabet[random() % alphabet.size()];
      }
      try {
        ParseSamples(text, source, attributes, options);
      } catch (const Error&) {
      }
    }
  }
}

}  // namespace fitspeed::testing

#endif  // FITSPEED_TESTS_IO_READER_TEST_UTIL_H_
