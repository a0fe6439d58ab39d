// Reading measurements: input specifications (`PATH@key=value,...`), formats,
// auto-detection and the reader entry points.
#ifndef FITSPEED_IO_INPUT_H_
#define FITSPEED_IO_INPUT_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/sample.h"

namespace fitspeed {

// Log formats fitspeed reads. See docs/formats/ for what each one takes.
enum class Format {
  kAuto,
  kCsv,
  kNist,
  kKeras,
  kLightning,
  kKerasCsv,
  kWandb,
  kMllog,
  kDllogger,
  kTimm,
  kHf,
  kHfState,
  kTfcnn,
  kMegatron,
  kDeepspeed,
  kNanogpt,
  kFairseq,
  kDetectron2,
  kEpochs,
  kTensorboard
};

// "csv", "nist", ...; ParseFormat throws UsageError on an unknown name.
std::string FormatName(Format format);
Format ParseFormat(std::string_view name);
// "auto, tensorboard, nist, ...": every name ParseFormat accepts, in detection order.
std::string FormatNames();

// What a log itself lacks, given on the command line after '@'.
// Keys: batch, devices, samples, label, precision, drop_remainder.
struct Attributes {
  std::optional<double> batch;              // global batch per step
  std::optional<int> devices;               // data-parallel devices
  std::optional<double> samples_per_epoch;  // key "samples"
  std::optional<std::string> label;
  std::optional<std::string> precision;
  std::optional<bool> drop_remainder;  // steps rule for epoch times
  std::optional<Unit> unit;            // what batch and rates count (key "unit")
  std::optional<double> seq_len;       // tokens per sequence (key "seq_len")
};

// A path ("-" for standard input) and its attributes.
struct InputSpec {
  std::string path;
  Attributes attributes;
};

// Parses "PATH" or "PATH@batch=64,devices=8,samples=50000". The last '@' that
// is followed by key=value pairs starts the attributes, so paths may contain '@'.
// Throws UsageError naming the key or value that is wrong.
InputSpec ParseInputSpec(std::string_view text);

struct ReadOptions {
  // Format of every input; kAuto detects it from the content (and file name).
  Format format = Format::kAuto;
  // Samples whose epoch number is <= this are dropped by the readers whose
  // samples carry epoch numbers (epoch 1 carries compilation and warm-up).
  // 0 keeps all.
  int skip_first_epochs = 1;
  // TensorBoard event files: the scalar tag to read. Empty: the one tag whose
  // name states a throughput or a step time ("examples/sec", "global_step/sec",
  // "tokens_per_sec", "step_time", ...; docs/formats/tensorboard.md).
  std::string tensorboard_tag;
  // What the values of tensorboard_tag count, when its name does not say it:
  // "samples/s", "tokens/s", "steps/s", "s/step", or "s/interval" (seconds
  // over all the steps since the tag's previous value). Empty: from the name.
  std::string tensorboard_unit;
  // Receives each warning a reader gives about what it read with doubt
  // ("train.log:12: ..."): an assumption it made, lines it skipped, numbers
  // that disagree. Empty: warnings go to standard error, prefixed
  // "fitspeed: warning: ".
  std::function<void(const std::string&)> warn;
};

// Guesses the format of `text` (the start of a file suffices). `path` helps
// with extensions (.dat, .csv, .tsv). Returns kAuto when nothing matches.
Format DetectFormat(std::string_view text, std::string_view path = {});

// Reads the samples of `text`, which came from `source` (used in messages and
// in Sample::source). Attributes fill what the log lacks and override nothing
// the log states unless noted per format. Throws DataError on malformed input.
std::vector<Sample> ParseSamples(std::string_view text, const std::string& source,
                                 const Attributes& attributes = {},
                                 const ReadOptions& options = {});

// Reads the file (or standard input for "-") named by `input`. Throws
// InputError when it cannot be read, DataError when its content is bad.
std::vector<Sample> ReadSamples(const InputSpec& input, const ReadOptions& options = {});

// A filter "key=value" (`--where`): keeps a sample whose label, devices or
// precision (keys "label", "devices", "precision"), or else whose tag `key`
// (a CSV series column), equals `value`.
struct SampleFilter {
  std::string key;
  std::string value;
  bool Matches(const Sample& sample) const;
};
// Throws UsageError unless `text` is key=value with a key.
SampleFilter ParseSampleFilter(std::string_view text);

}  // namespace fitspeed

#endif  // FITSPEED_IO_INPUT_H_
