// TensorBoard event files (events.out.tfevents.*): TFRecord-framed
// tensorflow.Event protobufs (src/io/tensorboard_event.proto). One scalar tag,
// chosen by ReadOptions::tensorboard_tag or by its name, becomes throughput or
// step-time samples, one per logged value. See docs/formats/tensorboard.md.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/median.h"
#include "fitspeed/core/error.h"
#include "io/tensorboard_event.pb.h"  // generated from tensorboard_event.proto
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

namespace pb = fitspeed::tensorboard;

// CRC-32C (Castagnoli; reflected polynomial 0x82f63b78), as TFRecord uses it.
uint32_t Crc32c(std::string_view data) {
  static const std::array<uint32_t, 256> kTable = [] {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t crc = i;
      for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78u : 0u);
      table[i] = crc;
    }
    return table;
  }();
  uint32_t crc = 0xffffffffu;
  for (const char c : data) crc = kTable[(crc ^ static_cast<unsigned char>(c)) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// TFRecord stores CRCs masked (tensorflow/core/lib/hash/crc32c.h, Mask).
uint32_t MaskedCrc32c(std::string_view data) {
  const uint32_t crc = Crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint64_t LittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;)
    value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

// TFRecord framing: uint64 length, uint32 masked CRC of the length, the
// payload, uint32 masked CRC of the payload; all little-endian.
constexpr size_t kHeaderBytes = 12;
constexpr size_t kFooterBytes = 4;

struct Record {
  std::string_view payload;
  size_t offset = 0;  // of the record's first byte in the file
  int number = 0;     // 1-based
};

// The record at `offset`, or the reason it is not one.
struct Framed {
  std::optional<Record> record;
  std::string problem;
};

Framed FrameAt(std::string_view text, size_t offset, int number) {
  const std::string_view rest = text.substr(offset);
  if (rest.size() < kHeaderBytes) {
    return {std::nullopt,
            fmt::format("truncated: {} bytes where a 12-byte record header starts", rest.size())};
  }
  if (LittleEndian(rest.substr(8, 4)) != MaskedCrc32c(rest.substr(0, 8))) {
    return {std::nullopt, "the CRC of the length does not match (not a TFRecord, or damaged)"};
  }
  const uint64_t length = LittleEndian(rest.substr(0, 8));
  if (length > rest.size() - kHeaderBytes || rest.size() - kHeaderBytes - length < kFooterBytes) {
    return {std::nullopt, fmt::format("truncated: a {}-byte payload announced, {} bytes left",
                                      length, rest.size() - kHeaderBytes)};
  }
  const std::string_view payload = rest.substr(kHeaderBytes, length);
  if (LittleEndian(rest.substr(kHeaderBytes + length, 4)) != MaskedCrc32c(payload)) {
    return {std::nullopt, "the CRC of the payload does not match (damaged)"};
  }
  return {Record{payload, offset, number}, {}};
}

std::vector<Record> Records(std::string_view text, const std::string& source) {
  std::vector<Record> records;
  for (size_t offset = 0; offset < text.size();) {
    const int number = static_cast<int>(records.size()) + 1;
    const Framed framed = FrameAt(text, offset, number);
    if (!framed.record) {
      throw DataError(
          source, number, "",
          fmt::format("record {} at byte offset {}: {}", number, offset, framed.problem));
    }
    records.push_back(*framed.record);
    offset += kHeaderBytes + framed.record->payload.size() + kFooterBytes;
  }
  return records;
}

bool ParseEvent(std::string_view payload, pb::Event& event) {
  return payload.size() <= static_cast<size_t>(std::numeric_limits<int>::max()) &&
         event.ParseFromArray(payload.data(), static_cast<int>(payload.size()));
}

// The number a one-element numeric tensor holds (tf.summary.scalar in TF2).
std::optional<double> TensorScalar(const pb::TensorProto& t) {
  for (const pb::TensorShapeProto::Dim& dim : t.tensor_shape().dim()) {
    if (dim.size() != 1) return std::nullopt;
  }
  const std::string& raw = t.tensor_content();
  auto from_raw = [&raw](auto zero) -> std::optional<double> {
    if (raw.size() != sizeof(zero)) return std::nullopt;
    std::memcpy(&zero, raw.data(), sizeof(zero));  // little-endian, as TF writes it
    return static_cast<double>(zero);
  };
  auto single = [&raw, &from_raw](const auto& values, auto zero) -> std::optional<double> {
    if (!raw.empty()) return from_raw(zero);
    if (values.size() != 1) return std::nullopt;
    return static_cast<double>(values[0]);
  };
  switch (t.dtype()) {
    case 1:  // DT_FLOAT
      return single(t.float_val(), float{});
    case 2:  // DT_DOUBLE
      return single(t.double_val(), double{});
    case 3:  // DT_INT32
      return single(t.int_val(), int32_t{});
    case 9:  // DT_INT64
      return single(t.int64_val(), int64_t{});
    default:
      return std::nullopt;
  }
}

// What a tag's values measure.
enum class TagUnit { kUnknown, kSamplesPerS, kTokensPerS, kStepsPerS, kSPerStep, kSPerInterval };

struct UnitName {
  TagUnit unit;
  const char* name;
};
constexpr UnitName kUnitNames[] = {
    {TagUnit::kSamplesPerS, "samples/s"},   {TagUnit::kTokensPerS, "tokens/s"},
    {TagUnit::kStepsPerS, "steps/s"},       {TagUnit::kSPerStep, "s/step"},
    {TagUnit::kSPerInterval, "s/interval"},
};

const char* NameOf(TagUnit unit) {
  for (const UnitName& u : kUnitNames) {
    if (u.unit == unit) return u.name;
  }
  return "unknown";
}

std::string UnitList() {
  std::string list;
  for (const UnitName& u : kUnitNames)
    list += fmt::format("{}{}", list.empty() ? "" : ", ", u.name);
  return list;
}

std::optional<TagUnit> ParseTagUnit(std::string_view name) {
  for (const UnitName& u : kUnitNames) {
    if (name == u.name) return u.unit;
  }
  return std::nullopt;
}

// Whether `name` holds one of `words` with no letter a-z right before or after
// it ("examples/s" in "train/examples/sec" once "/sec" is "/s", not in
// "myexamples/s").
bool HasWord(const std::string& name, std::initializer_list<std::string_view> words) {
  auto letter = [](char c) { return c >= 'a' && c <= 'z'; };
  for (std::string_view word : words) {
    for (size_t at = name.find(word); at != std::string::npos; at = name.find(word, at + 1)) {
      const size_t end = at + word.size();
      if ((at == 0 || !letter(name[at - 1])) && (end == name.size() || !letter(name[end]))) {
        return true;
      }
    }
  }
  return false;
}

// The unit a tag's name states, by the conventions of the writers named in
// docs/formats/tensorboard.md ("examples/sec" and "global_step/sec" of TF
// Estimator, "samples_per_second", "tokens_per_sec", "it/s", "step_time", ...).
// Names in milliseconds, or that say "throughput" without a unit, are unknown.
TagUnit UnitFromName(const std::string& tag) {
  std::string name = ToLower(tag);
  for (const auto& [from, to] : {std::pair<const char*, const char*>{"_per_", "/"},
                                 {" per ", "/"},
                                 {"-per-", "/"},
                                 {"/second", "/s"},
                                 {"/sec", "/s"}}) {
    for (size_t at = name.find(from); at != std::string::npos; at = name.find(from, at)) {
      name.replace(at, std::strlen(from), to);
      at += std::strlen(to);
    }
  }
  if (HasWord(name, {"ms"})) return TagUnit::kUnknown;
  if (HasWord(name, {"examples/s", "samples/s", "images/s", "imgs/s", "img/s", "sequences/s",
                     "seqs/s", "sentences/s", "utts/s", "utterances/s"})) {
    return TagUnit::kSamplesPerS;
  }
  if (HasWord(name, {"tokens/s", "toks/s", "tok/s"})) return TagUnit::kTokensPerS;
  if (HasWord(name, {"global_step/s", "steps/s", "step/s", "it/s", "its/s", "iters/s",
                     "iterations/s", "batches/s"})) {
    return TagUnit::kStepsPerS;
  }
  if (HasWord(name, {"s/step", "s/it", "s/iter", "s/iteration", "s/batch", "time/step", "time/it",
                     "time/iter", "time/iteration", "time/batch"}) ||
      name.find("step_tim") != std::string::npos || name.find("steptim") != std::string::npos) {
    return TagUnit::kSPerStep;
  }
  return TagUnit::kUnknown;
}

// One logged value of a scalar tag.
struct Point {
  int record = 0;  // 1-based record number
  int64_t step = 0;
  double wall_time_s = 0;
  double value = 0;
};

// The scalar tags of a file, in the order they first appear.
struct Scalars {
  std::vector<std::string> order;
  std::map<std::string, std::vector<Point>> points;

  std::string List() const {
    std::string list;
    for (const std::string& tag : order) {
      list += fmt::format("{}'{}' ({})", list.empty() ? "" : ", ", tag, points.at(tag).size());
    }
    return list;
  }
};

Scalars ReadScalars(std::string_view text, const std::string& source) {
  Scalars scalars;
  std::map<std::string, std::string> plugin;  // of each tag, from its first metadata
  for (const Record& record : Records(text, source)) {
    pb::Event event;
    if (!ParseEvent(record.payload, event)) {
      throw DataError(source, record.number, "",
                      fmt::format("record {} at byte offset {}: its {} bytes are not a "
                                  "tensorflow.Event protobuf",
                                  record.number, record.offset, record.payload.size()));
    }
    if (!event.has_summary()) continue;
    for (const pb::Summary::Value& value : event.summary().value()) {
      if (value.has_metadata() && !plugin.count(value.tag())) {
        plugin[value.tag()] = value.metadata().plugin_data().plugin_name();
      }
      std::optional<double> number;
      if (value.value_case() == pb::Summary::Value::kSimpleValue) {
        number = value.simple_value();
      } else if (value.value_case() == pb::Summary::Value::kTensor) {
        const auto it = plugin.find(value.tag());
        if (it == plugin.end() || it->second.empty() || it->second == "scalars") {
          number = TensorScalar(value.tensor());
        }
      }
      if (!number) continue;
      auto [it, inserted] = scalars.points.try_emplace(value.tag());
      if (inserted) scalars.order.push_back(value.tag());
      it->second.push_back(Point{record.number, event.step(), event.wall_time(), *number});
    }
  }
  return scalars;
}

// The tag to read and its unit: the one asked for, or the one whose name
// states a rate or a step time (samples/s first, then tokens/s, steps/s, s/step).
std::pair<std::string, TagUnit> ChooseTag(const Scalars& scalars, const ReaderContext& context) {
  const ReadOptions& options = context.options;
  const std::string how = fmt::format(
      "name one with --tag TAG, and its unit with --tag-unit UNIT when the name does not say it "
      "({})",
      UnitList());
  if (!options.tensorboard_tag.empty()) {
    const std::string& tag = options.tensorboard_tag;
    if (!scalars.points.count(tag)) {
      throw DataError(
          context.source, 0, "",
          fmt::format("no scalar tag '{}'; the scalar tags are {}", tag, scalars.List()));
    }
    const TagUnit unit = options.tensorboard_unit.empty() ? UnitFromName(tag)
                                                          : *ParseTagUnit(options.tensorboard_unit);
    if (unit == TagUnit::kUnknown) {
      throw DataError(context.source, 0, "",
                      fmt::format("the name of tag '{}' does not say what its values count; give "
                                  "it with --tag-unit UNIT ({})",
                                  tag, UnitList()));
    }
    return {tag, unit};
  }
  if (!options.tensorboard_unit.empty()) {
    throw UsageError(
        fmt::format("ReadOptions.tensorboard_unit = '{}' needs the tag it is the unit "
                    "of (ReadOptions.tensorboard_tag, --tag)",
                    options.tensorboard_unit));
  }
  std::vector<std::pair<TagUnit, std::string>> known;
  for (const std::string& tag : scalars.order) {
    const TagUnit unit = UnitFromName(tag);
    if (unit != TagUnit::kUnknown) known.emplace_back(unit, tag);
  }
  if (known.empty()) {
    throw DataError(context.source, 0, "",
                    fmt::format("no scalar tag names a throughput or step time in a unit fitspeed "
                                "knows; {}. The scalar tags are {}",
                                how, scalars.List()));
  }
  std::stable_sort(known.begin(), known.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (known.size() > 1 && known[1].first == known[0].first) {
    std::string same;
    for (const auto& [unit, tag] : known) {
      if (unit == known[0].first) same += fmt::format("{}'{}'", same.empty() ? "" : ", ", tag);
    }
    throw DataError(
        context.source, 0, "",
        fmt::format("several tags count {}: {}; {}", NameOf(known[0].first), same, how));
  }
  return {known[0].second, known[0].first};
}

}  // namespace

void ValidateTensorboardOptions(const ReadOptions& options) {
  if (!options.tensorboard_unit.empty() && !ParseTagUnit(options.tensorboard_unit)) {
    throw UsageError(fmt::format("ReadOptions.tensorboard_unit = '{}' must be one of {}",
                                 options.tensorboard_unit, UnitList()));
  }
}

bool LooksLikeTensorboard(std::string_view head) {
  const Framed framed = FrameAt(head, 0, 1);
  pb::Event event;
  return framed.record && ParseEvent(framed.record->payload, event) &&
         StartsWith(event.file_version(), "brain.Event:");
}

std::vector<Sample> ReadTensorboard(std::string_view text, const ReaderContext& context) {
  const Scalars scalars = ReadScalars(text, context.source);
  if (scalars.order.empty()) {
    throw DataError(context.source, 0, "", "the event file holds no scalar values");
  }
  const auto [tag, unit] = ChooseTag(scalars, context);
  const std::optional<double> batch = context.attributes.batch;
  const bool keep_first = context.options.skip_first_epochs == 0;

  // Each event carries its step and wall time, so a value can be checked: the
  // step time it implies over the one the wall times give since the tag's
  // previous value. A logger that divides one step's batch by the time of all
  // the steps since its previous value is off by that many steps.
  struct Read {
    Sample sample;
    std::optional<double> ratio;
    int64_t step = 0;
  };
  std::vector<Read> reads;
  std::vector<double> ratios, step_gaps, wall_gaps;
  const std::vector<Point>& points = scalars.points.at(tag);
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    // A step that does not grow starts a new run (a restart appending to the file).
    const Point* previous = i > 0 && points[i - 1].step < p.step ? &points[i - 1] : nullptr;
    if (!std::isfinite(p.value) || p.value <= 0) {
      throw DataError(context.source, p.record, tag,
                      fmt::format("value {} at step {} is not a positive number", p.value, p.step));
    }
    // The first value of a run is warm-up; an interval time has no interval.
    if (!previous && (!keep_first || unit == TagUnit::kSPerInterval)) continue;
    Read read;
    read.step = p.step;
    read.sample.source = context.sample_source;
    read.sample.line = p.record;
    std::optional<double> step_time_s;  // what the value says a step takes
    switch (unit) {
      case TagUnit::kSamplesPerS:
      case TagUnit::kTokensPerS:
        read.sample.throughput_sps = p.value;
        if (unit == TagUnit::kTokensPerS) read.sample.unit = Unit::kTokens;
        if (batch) step_time_s = *batch / p.value;
        break;
      case TagUnit::kStepsPerS:
        read.sample.step_time_s = step_time_s = 1 / p.value;
        break;
      case TagUnit::kSPerStep:
        read.sample.step_time_s = step_time_s = p.value;
        break;
      case TagUnit::kSPerInterval:
        read.sample.step_time_s = step_time_s =
            p.value / static_cast<double>(p.step - previous->step);
        break;
      case TagUnit::kUnknown:
        FITSPEED_CHECK(false, "a tag of unknown unit was chosen");
    }
    if (previous && step_time_s && p.wall_time_s > previous->wall_time_s) {
      const double steps = static_cast<double>(p.step - previous->step);
      const double seconds = p.wall_time_s - previous->wall_time_s;
      read.ratio = *step_time_s / (seconds / steps);
      ratios.push_back(*read.ratio);
      step_gaps.push_back(steps);
      wall_gaps.push_back(seconds);
    }
    reads.push_back(std::move(read));
  }
  if (reads.empty()) {
    throw DataError(
        context.source, 0, "",
        fmt::format("tag '{}' has {} value(s), none after the warm-up (its first "
                    "value{})",
                    tag, points.size(),
                    unit == TagUnit::kSPerInterval ? "" : "; --skip-epochs 0 keeps it"));
  }
  const bool rate = unit == TagUnit::kSamplesPerS || unit == TagUnit::kTokensPerS;
  double median_ratio = 1;
  if (!ratios.empty()) {
    median_ratio = Median(ratios);
    const std::string comparison = fmt::format(
        "tag '{}' read as {}{} means {:.4g} times the step time its events' wall times give "
        "({} steps every {:.4g} s, median)",
        tag, NameOf(unit), rate && batch ? fmt::format(" at batch {}", *batch) : "", median_ratio,
        Median(step_gaps), Median(wall_gaps));
    if (median_ratio < 0.5 || median_ratio > 2) {
      throw DataError(context.source, 0, tag,
                      fmt::format("{}: its unit{} is not what was assumed; give it with --tag-unit "
                                  "({}; s/interval for a time of all the steps since the "
                                  "previous value)",
                                  comparison, rate ? ", or the batch," : "", UnitList()));
    }
    if (median_ratio < 0.8 || median_ratio > 1.25) Warn(context, 0, comparison);
  }
  // Values off the median ratio by more than 25% time something else than
  // their interval (MLPerf RNN-T restarts its timer each epoch: the first
  // 'took' of an epoch covers 8 of the 10 steps since the previous value).
  std::vector<Sample> samples;
  int dropped = 0;
  std::string example;
  for (Read& read : reads) {
    if (read.ratio && std::abs(*read.ratio / median_ratio - 1) > 0.25) {
      if (dropped++ == 0) {
        example = fmt::format("record {}, step {}: {:.3g} times", read.sample.line, read.step,
                              *read.ratio / median_ratio);
      }
      continue;
    }
    samples.push_back(std::move(read.sample));
  }
  if (dropped > 0) {
    Warn(context, 0,
         fmt::format("{} of {} values of tag '{}' are left out: the step time each implies is "
                     "more than 25% off the median against its events' wall times (first: {})",
                     dropped, reads.size(), tag, example));
  }
  return samples;
}

}  // namespace fitspeed::io
