// Reader of the Hugging Face Trainer's speed metrics. Defined in docs/formats/hf.md.
// Trainer.train() logs, in transformers/trainer.py:
//   ***** Running training *****
//     Num examples = 900
//     Instantaneous batch size per device = 1
//     Total train batch size (w. parallel, distributed & accumulation) = 16
//     Gradient Accumulation steps = 8
// and at the end the dict of speed_metrics("train", ...) through Trainer.log:
//   {'train_runtime': 123.4, 'train_samples_per_second': 45.6, ..., 'epoch': 3.0}
// (newer versions print the values quoted: 'train_samples_per_second': '45.6'),
// which example scripts repeat with trainer.log_metrics as
//   ***** train metrics *****
//     train_samples_per_second =       45.6
// The samples per second count all devices (num_train_samples / train_runtime).
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr std::string_view kRunHeader = "***** Running training *****";
constexpr std::string_view kSpeedKey = "train_samples_per_second";

// The number after the '=' of a header line "  Total train batch size (...) = 1,024"
// (Trainer prints counts with thousands separators); throws DataError naming `field`.
double HeaderValue(std::string_view text, size_t key_end, const std::string& source, int line,
                   std::string_view field) {
  const size_t eq = text.find('=', key_end);
  if (eq == std::string_view::npos) {
    throw DataError(source, line, std::string(field), "expected '= <number>' after the name");
  }
  std::string digits;
  for (const char c : Trim(text.substr(eq + 1))) {
    if (c != ',') digits += c;
  }
  return ParsePositive(digits, source, line, field);
}

// The value of train_samples_per_second on a line, or nullopt when the line
// does not hold it. Forms: 'key': 45.6 / 'key': '45.6' / "key": 45.6 (a dict
// or JSON), and key = 45.6 (log_metrics). Throws DataError when the key is
// there in one of these forms but its value is not a number.
std::optional<double> SpeedValue(std::string_view text, const std::string& source, int line) {
  size_t at = text.find(kSpeedKey);
  while (at != std::string_view::npos) {
    const char before = at > 0 ? text[at - 1] : ' ';
    const size_t end = at + kSpeedKey.size();
    const char after = end < text.size() ? text[end] : ' ';
    std::string_view value;
    if ((before == '\'' || before == '"') && after == before) {
      std::string_view rest = Trim(text.substr(end + 1));
      if (StartsWith(rest, ":")) {
        rest = Trim(rest.substr(1));
        const size_t stop = rest.find_first_of(",}");
        value = Trim(rest.substr(0, stop));
        if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
            value.back() == value.front()) {
          value = value.substr(1, value.size() - 2);
        }
        return ParsePositive(value, source, line, kSpeedKey);
      }
    } else if (before == ' ' || before == '\t') {
      const std::string_view rest = Trim(text.substr(end));
      if (StartsWith(rest, "="))
        return ParsePositive(Trim(rest.substr(1)), source, line, kSpeedKey);
    }
    at = text.find(kSpeedKey, end);
  }
  return std::nullopt;
}

class HfReader {
 public:
  explicit HfReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view text, int line) {
    const std::string& source = context_.source;
    if (Contains(text, kRunHeader)) {
      run_ = Run{};
      return;
    }
    if (const size_t at = text.find("Total train batch size"); at != std::string_view::npos) {
      run_.total_batch = HeaderValue(text, at, source, line, "Total train batch size");
    } else if (const size_t at = text.find("Instantaneous batch size per device");
               at != std::string_view::npos) {
      run_.per_device_batch = HeaderValue(text, at, source, line, "batch size per device");
    } else if (const size_t at = text.find("Gradient Accumulation steps");
               at != std::string_view::npos) {
      run_.accumulation = HeaderValue(text, at, source, line, "Gradient Accumulation steps");
    } else if (const auto speed = SpeedValue(text, source, line)) {
      // The dict and the log_metrics block of one run repeat the same value.
      if (run_.reported && std::fabs(*run_.reported - *speed) <= 5e-4 * (1 + *speed)) return;
      run_.reported = speed;
      Sample s;
      s.source = source;
      s.line = line;
      s.throughput_sps = *speed;
      if (run_.total_batch) s.batch = *run_.total_batch;
      if (const auto devices = run_.Devices()) s.devices = *devices;
      samples_.push_back(std::move(s));
    }
  }

  std::vector<Sample> Finish() { return std::move(samples_); }

 private:
  struct Run {
    std::optional<double> total_batch;
    std::optional<double> per_device_batch;
    std::optional<double> accumulation;
    std::optional<double> reported;  // samples/s already taken from this run

    // total = per-device batch x accumulation x devices (Trainer's
    // total_train_batch_size, where a DataParallel GPU counts as a device).
    std::optional<int> Devices() const {
      if (!total_batch || !per_device_batch || !accumulation) return std::nullopt;
      const double devices = *total_batch / (*per_device_batch * *accumulation);
      if (devices < 1 || devices > 1e6 || devices != std::floor(devices)) return std::nullopt;
      return static_cast<int>(devices);
    }
  };

  const ReaderContext& context_;
  Run run_;
  std::vector<Sample> samples_;
};

}  // namespace

bool LooksLikeHf(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.Next(line)) {
    if (Contains(line, kRunHeader)) return true;
    try {
      if (SpeedValue(line, "", cursor.number())) return true;
    } catch (const DataError&) {
      return true;  // the key in Trainer's form, with a broken value: still this format
    }
  }
  return false;
}

std::vector<Sample> ReadHf(std::string_view text, const ReaderContext& context) {
  HfReader reader(context);
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) reader.Add(line, cursor.number());
  return reader.Finish();
}

}  // namespace fitspeed::io
