// Input specifications, format names, detection and the reader dispatch.
#include "fitspeed/io/input.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>

#include "core/input_file.h"
#include "fitspeed/core/error.h"
#include "readers.h"
#include "text.h"

namespace fitspeed {

void io::Warn(const ReaderContext& context, int line, std::string_view message) {
  const std::string text = line > 0 ? fmt::format("{}:{}: {}", context.source, line, message)
                                    : fmt::format("{}: {}", context.source, message);
  if (context.options.warn) {
    context.options.warn(text);
  } else {
    std::cerr << "fitspeed: warning: " << text << "\n";
  }
}

namespace {

struct FormatInfo {
  Format format;
  const char* name;
  std::vector<Sample> (*read)(std::string_view, const io::ReaderContext&);
  bool (*looks_like)(std::string_view);
  io::LineReader read_lines = nullptr;  // the reader on a LineCursor, if it has one
};

// In detection order: the most specific signatures first, CSV and the bare
// epoch list last.
constexpr FormatInfo kFormats[] = {
    {Format::kTensorboard, "tensorboard", io::ReadTensorboard, io::LooksLikeTensorboard},
    {Format::kNist, "nist", io::ReadNist, io::LooksLikeNist},
    // Before mllog: MLPerf logs of fairseq and maskrcnn-benchmark carry their
    // trainer's lines, which state the step's tokens and time.
    {Format::kFairseq, "fairseq", io::ReadFairseq, io::LooksLikeFairseq, io::ReadFairseq},
    {Format::kDetectron2, "detectron2", io::ReadDetectron2, io::LooksLikeDetectron2,
     io::ReadDetectron2},
    {Format::kMllog, "mllog", io::ReadMllog, io::LooksLikeMllog, io::ReadMllog},
    {Format::kDllogger, "dllogger", io::ReadDllogger, io::LooksLikeDllogger, io::ReadDllogger},
    {Format::kTfcnn, "tfcnn", io::ReadTfcnn, io::LooksLikeTfcnn, io::ReadTfcnn},
    {Format::kMegatron, "megatron", io::ReadMegatron, io::LooksLikeMegatron, io::ReadMegatron},
    {Format::kDeepspeed, "deepspeed", io::ReadDeepspeed, io::LooksLikeDeepspeed, io::ReadDeepspeed},
    {Format::kNanogpt, "nanogpt", io::ReadNanogpt, io::LooksLikeNanogpt, io::ReadNanogpt},
    {Format::kHfState, "hf-state", io::ReadHfState, io::LooksLikeHfState},
    {Format::kHf, "hf", io::ReadHf, io::LooksLikeHf, io::ReadHf},
    {Format::kTimm, "timm", io::ReadTimm, io::LooksLikeTimm, io::ReadTimm},
    {Format::kKeras, "keras", io::ReadKeras, io::LooksLikeKeras, io::ReadKeras},
    {Format::kLightning, "lightning", io::ReadLightning, io::LooksLikeLightning},
    {Format::kKerasCsv, "keras-csv", io::ReadKerasCsv, io::LooksLikeKerasCsv},
    {Format::kWandb, "wandb", io::ReadWandb, io::LooksLikeWandb},
    {Format::kCsv, "csv", io::ReadCsv, io::LooksLikeCsv},
    {Format::kEpochs, "epochs", io::ReadEpochs, io::LooksLikeEpochs},
};

const FormatInfo& InfoOf(Format format) {
  for (const FormatInfo& info : kFormats) {
    if (info.format == format) return info;
  }
  FITSPEED_CHECK(false, "no reader for format");
}

std::optional<bool> ParseBool(std::string_view v) {
  const std::string s = io::ToLower(v);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  return std::nullopt;
}

// Parses "k=v,k=v" into attributes; throws UsageError on a bad pair.
Attributes ParseAttributes(std::string_view text, std::string_view spec) {
  Attributes a;
  for (const std::string& pair : io::Split(text, ',')) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(fmt::format("input '{}': attribute '{}' is not key=value", spec, pair));
    }
    const std::string key = io::ToLower(io::Trim(std::string_view(pair).substr(0, eq)));
    const std::string_view value = io::Trim(std::string_view(pair).substr(eq + 1));
    auto number = [&](bool integer) {
      const auto v = io::ToDouble(value);
      if (!v || !std::isfinite(*v) || *v <= 0 || (integer && *v != std::floor(*v))) {
        throw UsageError(fmt::format("input '{}': attribute {}={} must be a positive {}", spec, key,
                                     value, integer ? "integer" : "number"));
      }
      return *v;
    };
    if (key == "batch") {
      a.batch = number(false);
    } else if (key == "devices") {
      a.devices = static_cast<int>(number(true));
    } else if (key == "samples") {
      a.samples_per_epoch = number(false);
    } else if (key == "label") {
      a.label = std::string(value);
    } else if (key == "precision") {
      a.precision = io::ToLower(value);
    } else if (key == "drop_remainder") {
      a.drop_remainder = ParseBool(value);
      if (!a.drop_remainder) {
        throw UsageError(
            fmt::format("input '{}': drop_remainder={} must be true or false", spec, value));
      }
    } else if (key == "unit") {
      try {
        a.unit = ParseUnit(io::ToLower(value));
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("input '{}': {}", spec, e.what()));
      }
    } else if (key == "seq_len") {
      a.seq_len = number(true);
    } else {
      throw UsageError(
          fmt::format("input '{}': unknown attribute '{}' (known: batch, devices, samples, label, "
                      "precision, drop_remainder, unit, seq_len)",
                      spec, key));
    }
  }
  return a;
}

}  // namespace

std::string FormatName(Format format) {
  if (format == Format::kAuto) return "auto";
  return InfoOf(format).name;
}

std::string FormatNames() {
  std::string names = "auto";
  for (const FormatInfo& info : kFormats) names += fmt::format(", {}", info.name);
  return names;
}

Format ParseFormat(std::string_view name) {
  const std::string lower = io::ToLower(name);
  if (lower == "auto") return Format::kAuto;
  for (const FormatInfo& info : kFormats) {
    if (lower == info.name) return info.format;
  }
  throw UsageError(fmt::format("unknown input format '{}' (known: {})", name, FormatNames()));
}

SampleFilter ParseSampleFilter(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw UsageError(fmt::format("--where '{}' is not key=value", text));
  }
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

bool SampleFilter::Matches(const Sample& s) const {
  if (key == "label") return s.label == value;
  if (key == "precision") return s.precision == value;
  if (key == "devices") return std::to_string(s.devices) == value;
  const std::optional<std::string_view> tag = s.tags.Find(key);
  return tag && *tag == value;
}

InputSpec ParseInputSpec(std::string_view text) {
  InputSpec spec;
  const size_t at = text.rfind('@');
  if (at != std::string_view::npos && text.find('=', at) != std::string_view::npos) {
    spec.path = std::string(text.substr(0, at));
    spec.attributes = ParseAttributes(text.substr(at + 1), text);
  } else {
    spec.path = std::string(text);
  }
  if (spec.path.empty()) throw UsageError(fmt::format("input '{}' has no path", text));
  return spec;
}

namespace {

// DetectFormat looks at the first 64 KiB, and at the rest only where the start
// does not decide.
constexpr size_t kDetectionBytes = 64 * 1024;

// The format the start of a text (its first kDetectionBytes) tells, or nullopt
// when the rest may tell another; `longer`: the text goes on past `head`.
std::optional<Format> DetectFormatFromHead(std::string_view head, std::string_view path,
                                           bool longer) {
  const std::string lower_path = io::ToLower(path);
  // TensorBoard names its files events.out.tfevents.<time>.<host>...
  if (io::Contains(lower_path, "tfevents")) return Format::kTensorboard;
  if (io::EndsWith(lower_path, ".dat") && io::LooksLikeNist(head)) return Format::kNist;
  for (const FormatInfo& info : kFormats) {
    if (!info.looks_like(head)) continue;
    // An MLPerf log's trainer lines may start after 64 KiB of shell traces,
    // configuration and :::MLLOG lines (maskrcnn-benchmark's, past its config
    // dump): they give the step's batch and time, so they win over the tags.
    if (info.format == Format::kMllog && longer) return std::nullopt;
    return info.format;
  }
  if (longer) return std::nullopt;
  return Format::kAuto;
}

}  // namespace

Format DetectFormat(std::string_view text, std::string_view path) {
  const std::string_view head = text.substr(0, kDetectionBytes);
  if (const auto format = DetectFormatFromHead(head, path, text.size() > head.size())) {
    return *format;
  }
  // The trainer's lines of an MLPerf log (above). Tagged logs may start with
  // long shell traces (Intel's MLPerf v0.7 log has its first :::MLLOG line
  // 182 kB in): look for the tags in the whole text. A Markdown page may show
  // the Trainer's output past its first 64 KiB.
  if (io::LooksLikeFairseq(text)) return Format::kFairseq;
  if (io::LooksLikeDetectron2(text)) return Format::kDetectron2;
  if (io::LooksLikeMllog(text)) return Format::kMllog;
  if (io::LooksLikeDllogger(text)) return Format::kDllogger;
  if (io::LooksLikeHf(text)) return Format::kHf;
  return Format::kAuto;
}

namespace io {

void ApplyAttributes(const Attributes& a, Sample& s, StringPool& strings) {
  if (a.batch && s.batch <= 0) s.batch = *a.batch;
  if (a.devices && s.devices <= 1) s.devices = *a.devices;
  if (a.samples_per_epoch && !s.samples_per_epoch) s.samples_per_epoch = a.samples_per_epoch;
  if (a.drop_remainder) {
    s.steps_rule = *a.drop_remainder ? StepsRule::kDropRemainder : StepsRule::kKeepPartial;
  }
  if (a.label) s.label = strings.Get(s.label.empty() ? *a.label : *a.label + "/" + s.label.str());
  if (a.precision) s.precision = strings.Get(*a.precision);
  if (a.unit && *a.unit != s.unit) {
    // A reader sets tokens only where the log counts them; "samples" is the
    // default and may mean the log did not say.
    if (s.unit == Unit::kTokens) {
      throw DataError(
          s.source, s.line, "unit",
          fmt::format("the log counts tokens here; @unit={} contradicts it", UnitName(*a.unit)));
    }
    s.unit = *a.unit;
  }
  if (a.seq_len && !s.seq_len) s.seq_len = a.seq_len;
  if (a.seq_len && *s.seq_len != *a.seq_len) {
    throw DataError(s.source, s.line, "seq_len",
                    fmt::format("the log states sequences of {} tokens; @seq_len={} contradicts it",
                                *s.seq_len, *a.seq_len));
  }
}

}  // namespace io

namespace {

// The checks of ParseSamples before it reads anything.
void ValidateReadOptions(const ReadOptions& options) {
  if (options.skip_first_epochs < 0) {
    throw UsageError(
        fmt::format("ReadOptions.skip_first_epochs = {} must be >= 0", options.skip_first_epochs));
  }
  io::ValidateTensorboardOptions(options);
}

// Refuses a text that is not a log of `format` at all: binary where text is
// expected, or of a format not found.
void CheckReadable(std::string_view text, Format format, const std::string& source) {
  // TensorBoard event files are the one binary format.
  if (format != Format::kTensorboard && io::LooksBinary(text)) {
    throw DataError(source, 0, "", "the input looks binary, not a text log");
  }
  if (format == Format::kAuto) {
    throw DataError(source, 0, "",
                    fmt::format("cannot tell the log format; name it with --input-format "
                                "(one of {})",
                                FormatNames()));
  }
}

// What ParseSamples does to a reader's samples: refuses none, applies the
// attributes, validates each.
std::vector<Sample> FinishSamples(std::vector<Sample> samples, Format format,
                                  const std::string& source, const Attributes& attributes) {
  if (samples.empty()) {
    throw DataError(source, 0, "",
                    fmt::format("no samples found (read as format '{}')", FormatName(format)));
  }
  io::StringPool strings;
  for (Sample& s : samples) {
    io::ApplyAttributes(attributes, s, strings);
    ToSequences(s);
    if (s.batch <= 0 && !attributes.batch) {
      throw DataError(s.source, s.line, "batch",
                      "the log does not state the batch size; give it as PATH@batch=N");
    }
    ValidateSample(s);
  }
  return samples;
}

// Fills text[used...] from `read` to the text's end, growing it by doubling
// (a regular file's size is known: `expected_bytes` sizes it at once); the
// text ends trimmed to what was read.
void ReadRest(const io::ReadBytes& read, std::string& text, size_t used, size_t expected_bytes) {
  text.resize(std::max({text.size(), used + 1, expected_bytes + 1}));
  for (;;) {
    if (used == text.size()) text.resize(2 * text.size());
    const size_t n = read(text.data() + used, text.size() - used);
    if (n == 0) break;
    used += n;
  }
  text.resize(used);
}

}  // namespace

std::vector<Sample> ParseSamples(std::string_view text, const std::string& source,
                                 const Attributes& attributes, const ReadOptions& options) {
  ValidateReadOptions(options);
  if (io::Trim(text).empty()) throw DataError(source, 0, "", "the input is empty");
  Format format = options.format;
  if (format == Format::kAuto) format = DetectFormat(text, source);
  CheckReadable(text, format, source);
  const io::ReaderContext context{source, attributes, options};
  return FinishSamples(InfoOf(format).read(text, context), format, source, attributes);
}

namespace io {

LineReader LineReaderOf(Format format) {
  return format == Format::kAuto ? nullptr : InfoOf(format).read_lines;
}

std::vector<Sample> ParseStream(const ReadBytes& read, const std::string& source,
                                const Attributes& attributes, const ReadOptions& options,
                                size_t chunk_bytes, size_t expected_bytes) {
  ValidateReadOptions(options);
  // The start, enough to tell the format (and one byte more: whether the text
  // goes on past it).
  std::string head(kDetectionBytes + 1, '\0');
  size_t used = 0;
  while (used < head.size()) {
    const size_t n = read(head.data() + used, head.size() - used);
    if (n == 0) break;
    used += n;
  }
  if (used < head.size()) {  // all of it
    head.resize(used);
    return ParseSamples(head, source, attributes, options);
  }
  std::optional<Format> format;
  if (!Trim(head).empty()) {
    format = options.format;
    if (format == Format::kAuto) {
      format = DetectFormatFromHead(std::string_view(head).substr(0, kDetectionBytes), source,
                                    /*longer=*/true);
    }
  }
  const LineReader read_lines = format ? LineReaderOf(*format) : nullptr;
  if (read_lines == nullptr) {
    // A whole document, or a text whose start does not tell its format.
    ReadRest(read, head, used, expected_bytes);
    return ParseSamples(head, source, attributes, options);
  }
  CheckReadable(head, *format, source);
  const ReaderContext context{source, attributes, options};
  LineCursor lines(read, chunk_bytes, std::move(head));
  return FinishSamples(read_lines(lines, context), *format, source, attributes);
}

namespace {

// A line-oriented reader on a text held whole.
template <LineReader read_lines>
std::vector<Sample> ReadWhole(std::string_view text, const ReaderContext& context) {
  LineCursor lines(text);
  return read_lines(lines, context);
}

}  // namespace

std::vector<Sample> ReadKeras(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadKeras>(text, context);
}
std::vector<Sample> ReadMllog(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadMllog>(text, context);
}
std::vector<Sample> ReadDllogger(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadDllogger>(text, context);
}
std::vector<Sample> ReadTimm(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadTimm>(text, context);
}
std::vector<Sample> ReadHf(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadHf>(text, context);
}
std::vector<Sample> ReadTfcnn(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadTfcnn>(text, context);
}
std::vector<Sample> ReadMegatron(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadMegatron>(text, context);
}
std::vector<Sample> ReadDeepspeed(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadDeepspeed>(text, context);
}
std::vector<Sample> ReadNanogpt(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadNanogpt>(text, context);
}
std::vector<Sample> ReadFairseq(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadFairseq>(text, context);
}
std::vector<Sample> ReadDetectron2(std::string_view text, const ReaderContext& context) {
  return ReadWhole<ReadDetectron2>(text, context);
}

}  // namespace io

std::vector<Sample> ReadSamples(const InputSpec& input, const ReadOptions& options) {
  if (input.path == "-") {
    InputStream in(std::cin, "standard input", kMaxLogBytes);
    return io::ParseStream([&in](char* data, size_t size) { return in.Read(data, size); },
                           input.path, input.attributes, options);
  }
  // A FIFO is read like standard input (`fitspeed read <(zcat run.log.gz)`);
  // a device such as /dev/zero or a directory is refused; both stop at the cap.
  InputFile file(input.path, "", kMaxLogBytes, PipeInputs::kRead);
  return io::ParseStream([&file](char* data, size_t size) { return file.Read(data, size); },
                         input.path, input.attributes, options, io::kStreamChunkBytes,
                         static_cast<size_t>(file.size_at_open().value_or(0)));
}

}  // namespace fitspeed
