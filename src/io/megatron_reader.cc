// Reader of the iteration lines of Megatron-LM (NVIDIA/Megatron-LM, megatron/training.py
// training_log) and its forks (Megatron-DeepSpeed), and of NeMo 2 (nemo.lightning).
// Defined in docs/formats/megatron.md. Megatron prints every --log-interval iterations
//    iteration       20/  171661 | consumed samples:         5120 | elapsed time per
//    iteration (ms): 484.7 | learning rate: 1.972E-07 | global batch size:   256 | ... |
//    samples per second: 528.170 | TFLOPs: 12.34 |
// (one line) where the elapsed time is the interval timer over the iterations since the
// previous line divided by their number, and Megatron-DeepSpeed's samples per second is
// micro batch x micro batches x data-parallel size / that time. The arguments dump at the
// start ("------------------------ arguments ------------------------", then
// "  data_parallel_size .............. 8") gives the devices and the sequence length.
// NeMo 2 prints, per logged step,
//    Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 |
//    global_batch_size: 1 | global_step: 120 | reduced_train_loss: 1.233 |
//    train_step_timing in s: 0.03146
// where train_step_timing is the time of that one step (TimingCallback).
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "line_reader.h"
#include "log_lines.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

enum class Kind { kMegatron, kNemo };

// One "key: value" field of an iteration line; `key` as compared (see NormalKey),
// `name` as printed (for messages).
struct Field {
  std::string key;
  std::string_view name;
  std::string_view value;
};

// The header of an iteration line and its fields. Parsed again for every line
// into the same object, whose fields (and their keys' buffers) are reused.
struct IterationLine {
  Kind kind = Kind::kMegatron;
  long long iteration = 0;
  std::vector<Field> fields;  // the first `field_count` are this line's
  size_t field_count = 0;
  bool truncated = false;  // a Megatron line that does not end with '|'

  const Field* Find(std::string_view key) const {
    for (size_t i = 0; i < field_count; ++i) {
      if (fields[i].key == key) return &fields[i];
    }
    return nullptr;
  }
};

// A key as compared: lower case, '_' read as a blank, blanks collapsed and none before
// '(' ("elapsed time per iteration(ms)", "global_batch_size" -> "global batch size"),
// written over `key`.
void NormalKeyInto(std::string_view name, std::string& key) {
  key.clear();
  for (const char raw : Trim(name)) {
    // std::tolower in the "C" locale, inline: this runs on every field of every line.
    const char c = raw == '_' || raw == '\t'  ? ' '
                   : raw >= 'A' && raw <= 'Z' ? static_cast<char>(raw - 'A' + 'a')
                                              : raw;
    if (c == ' ' && (key.empty() || key.back() == ' ')) continue;
    if (c == '(' && !key.empty() && key.back() == ' ') key.pop_back();
    key += c;
  }
  while (!key.empty() && key.back() == ' ') key.pop_back();
}

std::string NormalKey(std::string_view name) {
  std::string key;
  NormalKeyInto(name, key);
  return key;
}

bool IsDigitMegatron(char c) { return c >= '0' && c <= '9'; }

// Reads "<blanks><digits>" at s[i]; nullopt when there are no digits.
std::optional<long long> WholeAt(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  const size_t first = i;
  while (i < s.size() && IsDigitMegatron(s[i]) && i - first < 15) ++i;
  if (i == first || (i < s.size() && IsDigitMegatron(s[i]))) return std::nullopt;
  return static_cast<long long>(*ToDouble(s.substr(first, i - first)));
}

// Parses "... iteration N/ M | key: value | ..." (Megatron) or "Training epoch E,
// iteration N/M | key: value | ..." (NeMo 2) into `parsed`; false for any other line.
bool ParseIterationLine(std::string_view text, IterationLine& parsed) {
  constexpr std::string_view kWord = "iteration";
  for (size_t at = text.find(kWord); at != std::string_view::npos; at = text.find(kWord, at + 1)) {
    if (at > 0 && std::isalpha(static_cast<unsigned char>(text[at - 1]))) continue;
    size_t i = at + kWord.size();
    const auto iteration = WholeAt(text, i);
    if (!iteration) continue;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || text[i] != '/') continue;
    ++i;
    if (!WholeAt(text, i)) continue;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size() || text[i] != '|') continue;

    parsed.iteration = *iteration;
    parsed.kind = Contains(text.substr(0, at), "Training epoch") ? Kind::kNemo : Kind::kMegatron;
    parsed.field_count = 0;
    std::string_view rest = Trim(text.substr(i + 1));
    // Megatron ends every field with " |": a line that does not end so was cut
    // short, and its last field may be too.
    parsed.truncated = parsed.kind == Kind::kMegatron && !EndsWith(rest, "|") && !rest.empty();
    while (!rest.empty()) {
      const size_t bar = rest.find('|');
      const std::string_view chunk = Trim(rest.substr(0, bar));
      if (bar == std::string_view::npos) {
        if (parsed.truncated) break;  // the cut field
        rest = {};
      } else {
        rest = rest.substr(bar + 1);
      }
      const size_t colon = chunk.find(':');
      if (colon == std::string_view::npos || colon == 0) continue;
      if (parsed.field_count == parsed.fields.size()) parsed.fields.emplace_back();
      Field& field = parsed.fields[parsed.field_count++];
      field.name = Trim(chunk.substr(0, colon));
      NormalKeyInto(field.name, field.key);
      field.value = Trim(chunk.substr(colon + 1));
    }
    return true;
  }
  return false;
}

bool IsArgumentsHeader(std::string_view text) {
  const std::string_view t = Trim(text);
  return StartsWith(t, "---") && EndsWith(t, "---") && Contains(t, " arguments ") &&
         !Contains(t, "end of arguments");
}

// A field's number with the rounding of its printout, or a DataError naming it.
Printed PositiveField(const Field& f, const std::string& source, int line) {
  const double value = ParsePositive(f.value, source, line, f.name);
  std::string_view rest;
  const auto printed = LeadingPrinted(f.value, &rest);
  if (printed && Trim(rest).empty()) return *printed;
  return Printed{value, std::fabs(value) * 5e-7};  // "1.078E+01": about 7 digits
}

// A whole number >= 1 (devices, sizes) or a DataError naming `field`.
int WholeCount(std::string_view text, const std::string& source, int line, std::string_view field) {
  const double v = ParsePositive(text, source, line, field);
  if (v != std::floor(v) || v > 1e7) {
    throw DataError(source, line, std::string(field),
                    fmt::format("must be a whole number, got '{}'", Excerpt(Trim(text))));
  }
  return static_cast<int>(v);
}

// What the arguments dump (or the "using world size: ..." line) says of a run.
struct Arguments {
  std::optional<int> world_size;
  std::optional<int> data_parallel;
  std::optional<int> tensor_parallel;
  std::optional<int> pipeline_parallel;
  std::optional<int> context_parallel;
  std::optional<double> seq_length;
  std::optional<double> global_batch;
  SharedString precision;

  std::optional<int> DataParallel() const {
    if (data_parallel) return data_parallel;
    if (world_size && tensor_parallel && pipeline_parallel) {
      const int model = *tensor_parallel * *pipeline_parallel * context_parallel.value_or(1);
      if (*world_size % model == 0) return *world_size / model;
    }
    return std::nullopt;
  }
};

class MegatronReader {
 public:
  explicit MegatronReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view raw, int line) {
    const std::string_view text = StripTerminalCodes(raw, buffer_);
    if (IsArgumentsHeader(text)) {
      StartPreamble();
      in_arguments_ = true;
      return;
    }
    if (in_arguments_) {
      if (Contains(text, "end of arguments")) {
        in_arguments_ = false;
      } else if (const auto setting = ParseSetting(text)) {
        AddArgument(*setting, line);
      }
      return;
    }
    if (StartsWith(Trim(text), "using world size:")) {
      StartPreamble();
      AddWorldSizeLine(text, line);
      return;
    }
    if (ParseIterationLine(text, iteration_line_)) {
      AddIteration(iteration_line_, line);
      return;
    }
    // Evaluation and checkpointing run between two iteration lines; in
    // Megatron-DeepSpeed and older Megatron-LM the interval timer keeps running.
    if (Contains(text, "validation loss at") || Contains(text, "saving checkpoint at iteration") ||
        Contains(text, "saved checkpoint at iteration")) {
      paused_ = true;
    }
  }

  std::vector<Sample> Finish() {
    const std::string& source = context_.source;
    if (samples_.empty()) {
      if (disagreeing_.count > 0) {
        throw DataError(source, disagreeing_.first_line, "samples per second",
                        fmt::format("no line's samples per second agrees with its global batch "
                                    "size / elapsed time ({}); fitspeed cannot tell which "
                                    "to trust",
                                    disagreeing_.first_detail));
      }
      if (untimed_.count > 0) {
        throw DataError(source, untimed_.first_line, "train_step_timing in s",
                        "NeMo iteration lines without 'train_step_timing in s' (the "
                        "TimingCallback) give no step time");
      }
    }
    if (disagreeing_.count > 0) {
      Warn(context_, disagreeing_.first_line,
           fmt::format("{} line(s) left out whose samples per second disagrees with global batch "
                       "size / elapsed time ({})",
                       disagreeing_.count, disagreeing_.first_detail));
    }
    if (paused_intervals_.count > 0) {
      Warn(context_, paused_intervals_.first_line,
           fmt::format("{} interval(s) left out that include an evaluation or a checkpoint save "
                       "(Megatron-DeepSpeed and older Megatron-LM keep timing through them)",
                       paused_intervals_.count));
    }
    if (skipped_intervals_.count > 0) {
      Warn(context_, skipped_intervals_.first_line,
           fmt::format("{} interval(s) left out that include skipped iterations (loss-scale "
                       "overflow: no optimizer update)",
                       skipped_intervals_.count));
    }
    if (batch_changed_.count > 0) {
      Warn(context_, batch_changed_.first_line,
           fmt::format("{} interval(s) left out over which the batch size changed ({})",
                       batch_changed_.count, batch_changed_.first_detail));
    }
    if (no_devices_line_ > 0 && !context_.attributes.devices) {
      Warn(context_, no_devices_line_,
           "the log does not state the data-parallel size (no Megatron arguments dump): "
           "devices = 1 assumed; give PATH@devices=N");
    }
    return std::move(samples_);
  }

 private:
  // The arguments dump and the "using world size" line come before a run's
  // iteration lines: after iteration lines, they begin the next run.
  void StartPreamble() {
    if (!iterations_seen_) return;
    args_ = Arguments{};
    previous_.reset();
    paused_ = false;
    iterations_seen_ = false;
  }

  void AddArgument(const Setting& s, int line) {
    const std::string& source = context_.source;
    const std::string_view v = s.value;
    if (v == "None" || v.empty()) return;
    if (s.name == "world_size") {
      args_.world_size = WholeCount(v, source, line, "world_size");
    } else if (s.name == "data_parallel_size") {
      args_.data_parallel = WholeCount(v, source, line, "data_parallel_size");
    } else if (s.name == "tensor_model_parallel_size") {
      args_.tensor_parallel = WholeCount(v, source, line, "tensor_model_parallel_size");
    } else if (s.name == "pipeline_model_parallel_size") {
      args_.pipeline_parallel = WholeCount(v, source, line, "pipeline_model_parallel_size");
    } else if (s.name == "context_parallel_size") {
      args_.context_parallel = WholeCount(v, source, line, "context_parallel_size");
    } else if (s.name == "seq_length") {
      args_.seq_length = ParsePositive(v, source, line, "seq_length");
    } else if (s.name == "global_batch_size") {
      args_.global_batch = ParsePositive(v, source, line, "global_batch_size");
    } else if ((s.name == "fp16" || s.name == "bf16") && v == "True") {
      args_.precision = std::string(s.name);
    }
  }

  // "using world size: 8, data-parallel-size: 8, tensor-model-parallel size: 1,
  // pipeline-model-parallel size: 1" (newer: "data-parallel size: 8, context-parallel
  // size: 1, ..."; 2020: "using world size: 2 and model-parallel size: 2"), printed
  // before the arguments dump. A value is the number that starts it.
  void AddWorldSizeLine(std::string_view text, int line) {
    const std::string& source = context_.source;
    for (const std::string& part : Split(text.substr(text.find("using ") + 6), ',')) {
      const size_t colon = part.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = NormalKey(std::string_view(part).substr(0, colon));
      std::string_view value = Trim(std::string_view(part).substr(colon + 1));
      value = value.substr(0, value.find(' '));
      if (value.empty() || !(IsDigitMegatron(value[0]) || value[0] == '-')) continue;  // "None"
      if (key == "world size") {
        args_.world_size = WholeCount(value, source, line, "world size");
      } else if (key == "data-parallel-size" || key == "data-parallel size") {
        args_.data_parallel = WholeCount(value, source, line, "data-parallel size");
      } else if (key == "tensor-model-parallel size") {
        args_.tensor_parallel = WholeCount(value, source, line, "tensor-model-parallel size");
      } else if (key == "pipeline-model-parallel size") {
        args_.pipeline_parallel = WholeCount(value, source, line, "pipeline-model-parallel size");
      } else if (key == "context-parallel size") {
        args_.context_parallel = WholeCount(value, source, line, "context-parallel size");
      }
    }
  }

  void AddIteration(const IterationLine& it, int line) {
    const std::string& source = context_.source;
    const bool megatron = it.kind == Kind::kMegatron;

    // The step time: Megatron's mean over the interval, NeMo's one step.
    std::optional<Printed> step_s;
    if (megatron) {
      if (const Field* f = it.Find("elapsed time per iteration(ms)")) {
        const Printed ms = PositiveField(*f, source, line);
        step_s = Printed{ms.value / 1000, ms.half_unit / 1000};
      } else if (const Field* f = it.Find("elapsed time per iteration(s)")) {
        step_s = PositiveField(*f, source, line);
      } else {
        throw DataError(source, line, "elapsed time per iteration (ms)",
                        it.truncated ? "the line ends before it (cut short?)"
                                     : "a Megatron iteration line without it");
      }
    } else if (const Field* f = it.Find("train step timing in s")) {
      step_s = PositiveField(*f, source, line);
    }

    std::optional<double> batch;
    const Field* batch_field = it.Find("global batch size");
    if (!batch_field) batch_field = it.Find("gloabl batch size");  // sic, in Ascend's fork
    if (batch_field) {
      batch = PositiveField(*batch_field, source, line).value;
    } else if (megatron && it.truncated) {
      throw DataError(source, line, "global batch size", "the line ends before it (cut short?)");
    } else {
      batch = args_.global_batch;  // Megatron versions whose lines do not print it
    }

    std::optional<double> consumed;
    if (const Field* f = it.Find("consumed samples")) {
      consumed = ParseNumber(f->value, source, line, f->name);
      if (!(*consumed >= 0) || !std::isfinite(*consumed)) {
        throw DataError(source, line, std::string(f->name),
                        fmt::format("must be >= 0, got {}", *consumed));
      }
    }
    bool skipped = false;
    if (const Field* f = it.Find("number of skipped iterations")) {
      const double n = ParseNumber(f->value, source, line, f->name);
      if (!(n >= 0) || n != std::floor(n)) {
        throw DataError(source, line, std::string(f->name),
                        fmt::format("must be a whole number >= 0, got '{}'", Excerpt(f->value)));
      }
      skipped = n > 0;
    }
    std::optional<Printed> reported_sps;
    if (const Field* f = it.Find("samples per second")) {
      reported_sps = PositiveField(*f, source, line);
    }
    std::string label = Label(it, line);

    // Interval bookkeeping: the first line of a run is warm-up; a line with the
    // previous one's iteration is a repeat; a smaller iteration starts a new run.
    const std::optional<Previous> previous = previous_;
    const bool paused = paused_;
    if (previous && it.iteration == previous->iteration) return;
    iterations_seen_ = true;
    previous_ = Previous{it.iteration, consumed};
    paused_ = false;
    if (!previous || it.iteration < previous->iteration) return;  // warm-up

    if (!step_s) {
      untimed_.Add(line);
      return;
    }
    if (megatron && paused) {
      paused_intervals_.Add(line);
      return;
    }
    if (skipped) {
      skipped_intervals_.Add(line);
      return;
    }
    if (megatron && batch && consumed && previous->consumed) {
      const double per_iteration = (*consumed - *previous->consumed) /
                                   static_cast<double>(it.iteration - previous->iteration);
      if (std::fabs(per_iteration - *batch) > 0.5) {
        batch_changed_.Add(line, fmt::format("consumed samples grew by {} per iteration since "
                                             "the previous line, global batch size is {}",
                                             per_iteration, *batch));
        return;
      }
    }
    if (batch && reported_sps && !Agrees(*reported_sps, *batch, *step_s)) {
      disagreeing_.Add(
          line, fmt::format("{} samples/s against {} / {} s = {:.6g}", reported_sps->value, *batch,
                            step_s->value, *batch / step_s->value));
      return;
    }

    Sample s;
    s.source = context_.sample_source;
    s.line = line;
    s.step_time_s = step_s->value;
    if (batch) s.batch = *batch;
    CheckAttributes(s.batch, line);
    if (const auto dp = args_.DataParallel()) {
      s.devices = *dp;
    } else if (no_devices_line_ == 0) {
      no_devices_line_ = line;
    }
    s.label = labels_.Get(label);
    s.seq_len = SeqLen(it, line);
    s.precision = args_.precision;
    samples_.push_back(std::move(s));
  }

  // Samples per second as printed against batch / elapsed, within the rounding of both.
  static bool Agrees(const Printed& sps, double batch, const Printed& step_s) {
    const double low = batch / (step_s.value + step_s.half_unit) - sps.half_unit;
    const double high = step_s.value > step_s.half_unit
                            ? batch / (step_s.value - step_s.half_unit) + sps.half_unit
                            : HUGE_VAL;
    return sps.value >= low * (1 - 1e-9) && sps.value <= high * (1 + 1e-9);
  }

  // Attributes fill what the log lacks; a batch or device count that the log
  // states otherwise is a contradiction, not an override.
  void CheckAttributes(double log_batch, int line) const {
    const Attributes& a = context_.attributes;
    if (a.batch && log_batch > 0 && std::fabs(*a.batch - log_batch) > 1e-9 * log_batch) {
      throw DataError(
          context_.source, line, "batch",
          fmt::format("batch={} contradicts the log's global batch size {}", *a.batch, log_batch));
    }
    const auto dp = args_.DataParallel();
    if (a.devices && dp && *a.devices != *dp) {
      throw DataError(
          context_.source, line, "devices",
          fmt::format("devices={} contradicts the log's data-parallel size {}", *a.devices, *dp));
    }
  }

  // "seq=2048" (a sample is a sequence of that many tokens), the random-LTD kept
  // length where token dropping is on ("ltd=256"), and the model-parallel sizes
  // where a data-parallel replica spans several devices ("tp=2,pp=4").
  // Tokens per sample of this iteration: the arguments' seq_length, or the
  // curriculum's current length where the line states one.
  std::optional<double> SeqLen(const IterationLine& it, int line) const {
    std::optional<double> seq = args_.seq_length;
    for (const char* key : {"curriculum seqlen", "actual seqlen"}) {
      if (const Field* f = it.Find(key)) seq = PositiveField(*f, context_.source, line).value;
    }
    return seq;
  }

  std::string Label(const IterationLine& it, int line) const {
    const std::string& source = context_.source;
    std::string label;
    auto add = [&label](std::string_view key, auto value) {
      fmt::format_to(std::back_inserter(label), "{}{}={}", label.empty() ? "" : ",", key, value);
    };
    if (const std::optional<double> seq = SeqLen(it, line)) add("seq", *seq);
    for (const char* key : {"random ltd reserved length", "reserve length"}) {
      if (const Field* f = it.Find(key)) add("ltd", PositiveField(*f, source, line).value);
    }
    if (args_.tensor_parallel.value_or(1) > 1) add("tp", *args_.tensor_parallel);
    if (args_.pipeline_parallel.value_or(1) > 1) add("pp", *args_.pipeline_parallel);
    if (args_.context_parallel.value_or(1) > 1) add("cp", *args_.context_parallel);
    return label;
  }

  struct Previous {
    long long iteration = 0;
    std::optional<double> consumed;
  };

  const ReaderContext& context_;
  std::string buffer_;
  IterationLine iteration_line_;
  bool in_arguments_ = false;
  Arguments args_;
  std::optional<Previous> previous_;
  bool paused_ = false;           // an evaluation or checkpoint since the previous iteration line
  bool iterations_seen_ = false;  // in this run
  int no_devices_line_ = 0;
  Dropped paused_intervals_, skipped_intervals_, batch_changed_, disagreeing_, untimed_;
  std::vector<Sample> samples_;
  StringPool labels_;  // one label per series, shared by its samples
};

}  // namespace

bool LooksLikeMegatron(std::string_view head) {
  LineCursor cursor(head);
  std::string_view raw;
  std::string buffer;
  IterationLine it;
  bool in_arguments = false;
  while (cursor.Next(raw)) {
    const std::string_view line = StripTerminalCodes(raw, buffer);
    if (ParseIterationLine(line, it)) {
      if (it.Find(it.kind == Kind::kNemo ? "train step timing in s"
                                         : "elapsed time per iteration(ms)") ||
          it.Find("elapsed time per iteration(s)")) {
        return true;
      }
    } else if (IsArgumentsHeader(line)) {
      in_arguments = true;
    } else if (in_arguments) {
      if (Contains(line, "end of arguments")) {
        in_arguments = false;
      } else if (const auto s = ParseSetting(line)) {
        // Names only Megatron's dump has together with the header.
        if (s->name == "tensor_model_parallel_size" || s->name == "pipeline_model_parallel_size") {
          return true;
        }
      }
    }
  }
  return false;
}

std::vector<Sample> ReadMegatron(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<MegatronReader>(lines, context);
}

}  // namespace fitspeed::io
