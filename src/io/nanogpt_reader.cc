// Reader of the step lines of three GPT training scripts that share no library:
// karpathy/nanoGPT (train.py), KellerJordan/modded-nanogpt (train_gpt*.py) and
// pytorch/torchtitan (torchtitan/train.py, components/metrics.py). Defined in
// docs/formats/nanogpt.md. The lines:
//  - nanoGPT, every log_interval iterations, and at each evaluation:
//      iter 20: loss 3.0954, time 226.42ms, mfu 108.19%
//      step 200: train loss 2.4314, val loss 2.4601
//    `time` is the wall time since the previous iteration ended (t0 is reset every
//    iteration), so it holds the evaluation (and checkpoint) that ran at its start;
//    mfu prints -100.00% until nanoGPT's own 5 warm-up iterations are over. Before
//    them, "tokens per iteration will be: 16,384" states the global batch in tokens.
//  - modded-nanogpt, every step and at each evaluation:
//      step:13/6200 train_loss:6.5125 train_time:641ms step_avg:213.66ms
//      step:125/6200 val_loss:4.2 train_time:26651ms step_avg:231.75ms
//    train_time is the training time summed since the clock was reset at step 10
//    (evaluations excluded), step_avg is "nan" before that; the log begins with the
//    script's own code, whose `class Hyperparameters:` states the batch.
//  - torchtitan (ANSI colours removed):
//      step: 10  loss:  6.73  grad_norm: 41.25  memory: 169.10GiB(94.81%)  tps: 10,530  ...
//    tps = tokens since the previous logged step / (seconds x non-data-parallel size)
//    on rank 0: tokens per second per GPU. The start-up lines "Building device mesh
//    with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1" and
//    "Trainer is initialized with local batch size 160, global batch size 1280,
//    gradient accumulation steps 1, sequence length 128, ..." give the rest.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
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

enum class KindNanogpt { kNanogpt, kModded, kTorchtitan };

const char* KindName(KindNanogpt kind) {
  switch (kind) {
    case KindNanogpt::kNanogpt:
      return "nanoGPT";
    case KindNanogpt::kModded:
      return "modded-nanogpt";
    case KindNanogpt::kTorchtitan:
      return "torchtitan";
  }
  return "";
}

bool IsDigitNanogpt(char c) { return c >= '0' && c <= '9'; }
bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Reads "<digits>" at s[i] (at most 15); nullopt when there are none.
std::optional<long long> WholeAtNanogpt(std::string_view s, size_t& i) {
  const size_t first = i;
  while (i < s.size() && IsDigitNanogpt(s[i]) && i - first < 15) ++i;
  if (i == first || (i < s.size() && IsDigitNanogpt(s[i]))) return std::nullopt;
  return static_cast<long long>(*ToDouble(s.substr(first, i - first)));
}

void SkipBlanks(std::string_view s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
}

// The word after "key:" (blanks allowed after the colon) where `key` starts a word;
// nullopt when the line lacks the key.
std::optional<std::string_view> FieldValue(std::string_view text, std::string_view key) {
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    if (at > 0 && IsWordChar(text[at - 1])) continue;
    size_t i = at + key.size();
    if (i >= text.size() || text[i] != ':') continue;
    ++i;
    SkipBlanks(text, i);
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t') ++end;
    return text.substr(i, end - i);
  }
  return std::nullopt;
}

// "1,125" or "10530.5": digits with thousands separators in groups of three. A
// DataError naming `field` otherwise (a line cut at "10,1" must not read 101).
double GroupedNumber(std::string_view value, const std::string& source, int line,
                     std::string_view field) {
  const std::string_view whole = value.substr(0, value.find('.'));
  std::string plain;
  bool ok = !whole.empty();
  if (whole.find(',') != std::string_view::npos) {
    const std::vector<std::string> groups = Split(whole, ',');
    for (size_t g = 0; g < groups.size() && ok; ++g) {
      const std::string& digits = groups[g];
      ok = (g == 0 ? !digits.empty() && digits.size() <= 3 : digits.size() == 3) &&
           digits.find_first_not_of("0123456789") == std::string::npos;
      plain += digits;
    }
  } else {
    plain = std::string(whole);
  }
  if (!ok) {
    throw DataError(source, line, std::string(field),
                    fmt::format("expected a number, got '{}'", Excerpt(value)));
  }
  plain += std::string(value.substr(whole.size()));
  return ParsePositive(plain, source, line, field);
}

// A number with a unit suffix ("226.42ms", "213ms"), or a DataError naming `field`.
double NumberWithSuffix(std::string_view value, std::string_view suffix, const std::string& source,
                        int line, std::string_view field) {
  if (!EndsWith(value, suffix)) {
    throw DataError(source, line, std::string(field),
                    fmt::format("expected a number followed by '{}', got '{}' (line cut short?)",
                                suffix, Excerpt(value)));
  }
  return ParsePositive(value.substr(0, value.size() - suffix.size()), source, line, field);
}

// nanoGPT: "iter N: loss X, time Yms, mfu Z%" -> its iteration and comma fields.
struct NanogptIter {
  long long iteration = 0;
  std::optional<std::string_view> time, mfu;
};
std::optional<NanogptIter> ParseNanogptIter(std::string_view text) {
  const std::string_view t = Trim(text);
  if (!StartsWith(t, "iter ")) return std::nullopt;
  size_t i = 5;
  const auto iteration = WholeAtNanogpt(t, i);
  if (!iteration || i >= t.size() || t[i] != ':') return std::nullopt;
  std::string_view rest = Trim(t.substr(i + 1));
  if (!StartsWith(rest, "loss ")) return std::nullopt;
  NanogptIter it;
  it.iteration = *iteration;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view chunk = Trim(rest.substr(0, comma));
    const size_t blank = chunk.find(' ');
    if (blank != std::string_view::npos) {
      const std::string_view key = chunk.substr(0, blank);
      const std::string_view value = Trim(chunk.substr(blank));
      if (key == "time") it.time = value;
      if (key == "mfu") it.mfu = value;
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return it;
}

// nanoGPT's evaluation line "step N: train loss X, val loss Y" -> N.
std::optional<long long> ParseNanogptEval(std::string_view text) {
  const std::string_view t = Trim(text);
  if (!StartsWith(t, "step ")) return std::nullopt;
  size_t i = 5;
  const auto step = WholeAtNanogpt(t, i);
  if (!step || !StartsWith(t.substr(i), ": train loss")) return std::nullopt;
  return step;
}

// modded-nanogpt: "step:N/M [train_loss:X|val_loss:X] train_time:Tms step_avg:Sms".
struct ModdedStep {
  long long step = 0;
  bool validation = false;
  std::optional<std::string_view> train_time, step_avg;
};
std::optional<ModdedStep> ParseModdedStep(std::string_view text) {
  const std::string_view t = Trim(text);
  if (!StartsWith(t, "step:")) return std::nullopt;
  size_t i = 5;
  const auto step = WholeAtNanogpt(t, i);
  if (!step || i >= t.size() || t[i] != '/') return std::nullopt;
  ++i;
  if (!WholeAtNanogpt(t, i) || (i < t.size() && t[i] != ' ')) return std::nullopt;
  const std::string_view rest = t.substr(i);
  ModdedStep s;
  s.step = *step;
  s.validation = FieldValue(rest, "val_loss").has_value();
  s.train_time = FieldValue(rest, "train_time");
  s.step_avg = FieldValue(rest, "step_avg");
  if (!s.train_time && !s.validation && !FieldValue(rest, "train_loss")) return std::nullopt;
  return s;
}

// torchtitan: "... step: N  loss: X ... tps: T  tflops: F  mfu: M%".
struct TitanStep {
  long long step = 0;
  std::optional<std::string_view> tps;
  bool complete = false;  // the line reaches its last field, "mfu:"
};
std::optional<TitanStep> ParseTitanStep(std::string_view text) {
  constexpr std::string_view kKey = "step:";
  for (size_t at = text.find(kKey); at != std::string_view::npos; at = text.find(kKey, at + 1)) {
    if (at > 0 && IsWordChar(text[at - 1])) continue;
    size_t i = at + kKey.size();
    SkipBlanks(text, i);
    const auto step = WholeAtNanogpt(text, i);
    if (!step) continue;
    const std::string_view rest = text.substr(i);
    if (!StartsWith(Trim(rest), "loss:")) continue;
    TitanStep s;
    s.step = *step;
    s.tps = FieldValue(rest, "tps");
    s.complete = FieldValue(rest, "mfu").has_value();
    return s;
  }
  return std::nullopt;
}

// The whole number after `key` in "..., key N, ..." (torchtitan's trainer line).
std::optional<std::string_view> WordAfter(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = Trim(text.substr(at + key.size()));
  return rest.substr(0, rest.find_first_of(", \t"));
}

// A whole number >= 1 or a DataError naming `field`.
int WholeCountNanogpt(std::string_view text, const std::string& source, int line,
                      std::string_view field) {
  const double v = ParsePositive(text, source, line, field);
  if (v != std::floor(v) || v > 1e9) {
    throw DataError(source, line, std::string(field),
                    fmt::format("must be a whole number, got '{}'", Excerpt(Trim(text))));
  }
  return static_cast<int>(v);
}

// "8*64*1024" -> 524288; nullopt for any other expression.
std::optional<double> IntegerProduct(std::string_view expr) {
  double product = 1;
  for (const std::string& factor : Split(expr, '*')) {
    const std::string_view f = Trim(factor);
    if (f.empty() || f.size() > 9) return std::nullopt;
    for (const char c : f) {
      if (!IsDigitNanogpt(c)) return std::nullopt;
    }
    product *= *ToDouble(f);
  }
  return product > 0 && product < 1e15 ? std::optional<double>(product) : std::nullopt;
}

// One "name[: type] = value  # comment" line of modded-nanogpt's Hyperparameters.
struct Assignment {
  std::string_view name, value, comment;
};
std::optional<Assignment> ParseAssignment(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  std::string_view name = Trim(text.substr(0, eq));
  name = Trim(name.substr(0, name.find(':')));
  std::string_view value = text.substr(eq + 1);
  const size_t hash = value.find('#');
  const std::string_view comment = hash == std::string_view::npos ? "" : value.substr(hash + 1);
  value = Trim(value.substr(0, hash));
  if (name.empty()) return std::nullopt;
  return Assignment{name, value, comment};
}

class NanogptReader {
 public:
  explicit NanogptReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view raw, int line) {
    const std::string_view text = StripTerminalCodes(raw, buffer_);
    if (in_hyperparameters_) AddHyperparameter(text, line);
    if (StartsWith(text, "class Hyperparameters")) {
      in_hyperparameters_ = true;
      hparams_ = Hyperparameters{};
      return;
    }
    if (Trim(text) == "args = Hyperparameters()") hparams_.instantiated = true;
    if (Contains(text, "argparse") || Contains(text, "args.batch_size =")) {
      hparams_.overridden = true;
    }
    if (const auto it = ParseNanogptIter(text)) return AddNanogpt(*it, line);
    if (const auto step = ParseNanogptEval(text)) {
      evaluated_iteration_ = *step;
      return;
    }
    if (const auto v = ValueAfterPrefix(text, "tokens per iteration will be:")) {
      nanogpt_tokens_ = GroupedNumber(*v, context_.source, line, "tokens per iteration");
      return;
    }
    if (const auto s = ParseModdedStep(text)) return AddModded(*s, line);
    if (const auto s = ParseTitanStep(text)) return AddTitan(*s, line);
    if (Contains(text, "Building device mesh with parallelism:")) return AddMesh(text, line);
    if (Contains(text, "local batch size") && Contains(text, "global batch size")) {
      return AddTrainerLine(text, line);
    }
    if (Contains(text, "Training starts at step")) previous_.reset();
  }

  std::vector<Sample> Finish() {
    if (warmup_.count > 0) {
      Warn(context_, warmup_.first_line,
           fmt::format("{} warm-up line(s) left out: {}", warmup_.count, warmup_reason_));
    }
    if (evaluated_.count > 0) {
      Warn(context_, evaluated_.first_line,
           fmt::format("{} step(s) left out whose time spans an evaluation ({})", evaluated_.count,
                       kind_ == KindNanogpt::kNanogpt
                           ? "nanoGPT times it with the iteration that follows it"
                           : "modded-nanogpt synchronizes the GPU for it and not at other "
                             "steps"));
    }
    if (clock_back_.count > 0) {
      Warn(context_, clock_back_.first_line,
           fmt::format("{} step line(s) left out whose train_time is not above the previous "
                       "step's",
                       clock_back_.count));
    }
    if (!samples_.empty() && unknown_devices_line_ > 0 && !context_.attributes.devices) {
      Warn(context_, unknown_devices_line_,
           kind_ == KindNanogpt::kTorchtitan
               ? "tps is per GPU and the log lacks torchtitan's 'Building device mesh' line: "
                 "1 GPU assumed; give PATH@devices=N (the data-parallel size)"
               : fmt::format("the {} log does not state the number of GPUs: devices = 1 "
                             "assumed; give PATH@devices=N",
                             KindName(kind_)));
    }
    if (!samples_.empty() && samples_.front().batch <= 0 && !batch_doubt_.empty() &&
        !context_.attributes.batch) {
      Warn(context_, batch_doubt_line_, batch_doubt_);
    }
    return std::move(samples_);
  }

 private:
  // What modded-nanogpt's printed code says of the batch.
  struct Hyperparameters {
    std::optional<std::string> batch_size;  // the expression ("8*64")
    std::string batch_comment;              // lower case
    int batch_line = 0;
    std::optional<double> seq_len;
    bool instantiated = false;  // "args = Hyperparameters()": the defaults are what ran
    bool overridden = false;    // argparse or an assignment to args.batch_size
  };
  struct Previous {
    long long step = 0;
    double train_time_ms = 0;
  };

  static std::optional<std::string_view> ValueAfterPrefix(std::string_view text,
                                                          std::string_view prefix) {
    const size_t at = text.find(prefix);
    if (at == std::string_view::npos) return std::nullopt;
    return Trim(text.substr(at + prefix.size()));
  }

  void AddHyperparameter(std::string_view text, int line) {
    if (!text.empty() && text[0] != ' ' && text[0] != '\t') {
      in_hyperparameters_ = false;
      return;
    }
    const auto a = ParseAssignment(text);
    if (!a) return;
    if (a->name == "batch_size") {
      hparams_.batch_size = std::string(a->value);
      hparams_.batch_comment = ToLower(a->comment);
      hparams_.batch_line = line;
    } else if (a->name == "sequence_length" || a->name == "seq_len") {
      hparams_.seq_len = IntegerProduct(a->value);
    }
  }

  void SetKind(KindNanogpt kind, int line) {
    if (kind_set_ && kind != kind_) {
      throw DataError(context_.source, line, "",
                      fmt::format("a {} step line in a {} log: fitspeed reads one kind per file",
                                  KindName(kind), KindName(kind_)));
    }
    kind_ = kind;
    kind_set_ = true;
  }

  // A sample of the run's global batch, or 0 where the log does not state it.
  Sample NewSample(int line) const {
    Sample s;
    s.source = context_.sample_source;
    s.line = line;
    return s;
  }

  // @batch= and @devices= fill what the log lacks; one that the log states
  // otherwise is a contradiction, not an override.
  void CheckAttributes(const Sample& s) const {
    const Attributes& a = context_.attributes;
    if (a.batch && s.batch > 0 && std::fabs(*a.batch - s.batch) > 1e-9 * s.batch) {
      throw DataError(context_.source, s.line, "batch",
                      fmt::format("batch={} contradicts the log's batch of {} {}", *a.batch,
                                  s.batch, UnitName(s.unit)));
    }
    if (a.devices && s.devices > 1 && *a.devices != s.devices) {
      throw DataError(context_.source, s.line, "devices",
                      fmt::format("devices={} contradicts the log's data-parallel size {}",
                                  *a.devices, s.devices));
    }
  }

  void Push(Sample s) {
    CheckAttributes(s);
    samples_.push_back(std::move(s));
  }

  void AddNanogpt(const NanogptIter& it, int line) {
    const std::string& source = context_.source;
    SetKind(KindNanogpt::kNanogpt, line);
    if (!it.time) {
      throw DataError(source, line, "time", "an iteration line without it (cut short?)");
    }
    const double ms = NumberWithSuffix(*it.time, "ms", source, line, "time");
    std::optional<double> mfu;
    if (it.mfu) {
      std::string_view m = *it.mfu;
      if (EndsWith(m, "%")) m.remove_suffix(1);
      mfu = ParseNumber(m, source, line, "mfu");
    }
    // A new run (or a restart) begins where the iteration number does not grow.
    const bool first = !last_iteration_ || it.iteration <= *last_iteration_;
    last_iteration_ = it.iteration;
    if (first) {
      warmup_.Add(line);
      warmup_reason_ =
          "the first iteration of each run (compilation, and the evaluation at its start)";
      return;
    }
    if (evaluated_iteration_ && *evaluated_iteration_ == it.iteration) {
      evaluated_.Add(line);
      return;
    }
    if (mfu && *mfu < 0) {  // -100.00%: running_mfu not yet set, local_iter_num < 5
      warmup_.Add(line);
      warmup_reason_ =
          "the first iteration of each run and those with mfu -100.00% (nanoGPT's own "
          "warm-up: local iterations 0-4)";
      return;
    }
    Sample s = NewSample(line);
    s.step_time_s = ms / 1000;
    if (nanogpt_tokens_) {
      s.batch = *nanogpt_tokens_;
      s.unit = Unit::kTokens;
    } else if (batch_doubt_.empty()) {
      batch_doubt_line_ = line;
      batch_doubt_ =
          "the log lacks nanoGPT's start-up line 'tokens per iteration will be: N' (the "
          "global batch in tokens); give PATH@batch=N (sequences) or @batch=N,unit=tokens";
    }
    if (unknown_devices_line_ == 0) unknown_devices_line_ = line;
    Push(std::move(s));
  }

  // The batch that modded-nanogpt's printed Hyperparameters state, into `s`.
  void ModdedBatch(Sample& s) {
    const Hyperparameters& h = hparams_;
    const auto doubt = [&](std::string message) {
      if (batch_doubt_.empty()) {
        batch_doubt_line_ = h.batch_line > 0 ? h.batch_line : s.line;
        batch_doubt_ = std::move(message);
      }
    };
    if (!h.batch_size) {
      return doubt(
          "the log does not hold modded-nanogpt's code with 'batch_size' in class "
          "Hyperparameters; give PATH@batch=N");
    }
    const auto batch = IntegerProduct(*h.batch_size);
    const bool tokens = Contains(h.batch_comment, "token");
    const bool sequences = Contains(h.batch_comment, "sequence");
    if (!batch || !h.instantiated || h.overridden || tokens == sequences) {
      return doubt(fmt::format(
          "batch_size = {} in the printed Hyperparameters is not read (it must be a product "
          "of integers, commented 'in tokens' or 'in sequences', with 'args = "
          "Hyperparameters()' and no override); give PATH@batch=N",
          Excerpt(*h.batch_size)));
    }
    s.batch = *batch;
    s.unit = tokens ? Unit::kTokens : Unit::kSamples;
    s.seq_len = h.seq_len;
  }

  void AddModded(const ModdedStep& step, int line) {
    const std::string& source = context_.source;
    SetKind(KindNanogpt::kModded, line);
    if (!step.train_time || !step.step_avg) {
      throw DataError(source, line, step.train_time ? "step_avg" : "train_time",
                      "a step line without it (cut short?)");
    }
    const std::string_view time = *step.train_time;
    // train_time:0ms is printed at step 0, before any training.
    const double ms = time == "0ms" ? 0 : NumberWithSuffix(time, "ms", source, line, "train_time");
    if (step.validation) {
      // train_time stops (after a synchronize) for the evaluation; the next step's
      // difference spans that synchronize while the others are read without one.
      evaluated_step_ = step.step;
      return;
    }
    const bool timed = *step.step_avg != "nanms";
    if (timed) NumberWithSuffix(*step.step_avg, "ms", source, line, "step_avg");

    const std::optional<Previous> previous = previous_;
    previous_ = Previous{step.step, ms};
    if (!timed) {
      warmup_.Add(line);
      warmup_reason_ =
          "modded-nanogpt's untimed steps (step_avg:nanms: steps 1-12, compilation and the "
          "clock reset at step 10)";
      return;
    }
    if (!previous || step.step <= previous->step) return;  // a new run
    if (evaluated_step_ && *evaluated_step_ == previous->step) {
      evaluated_.Add(line);
      return;
    }
    if (ms <= previous->train_time_ms) {
      clock_back_.Add(line);
      return;
    }
    Sample s = NewSample(line);
    s.step_time_s =
        (ms - previous->train_time_ms) / 1000 / static_cast<double>(step.step - previous->step);
    ModdedBatch(s);
    if (unknown_devices_line_ == 0) unknown_devices_line_ = line;
    Push(std::move(s));
  }

  void AddMesh(std::string_view text, int line) {
    const std::string& source = context_.source;
    mesh_ = Mesh{};
    for (const std::string& part : Split(text.substr(text.find("parallelism:") + 12), ',')) {
      const std::string_view p = Trim(part);
      const size_t eq = p.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string_view key = p.substr(0, eq);
      const std::string_view value = p.substr(eq + 1);
      int* slot = key == "pp"             ? &mesh_->pp
                  : key == "dp_replicate" ? &mesh_->dp_replicate
                  : key == "dp_shard"     ? &mesh_->dp_shard
                  : key == "cp"           ? &mesh_->cp
                  : key == "tp"           ? &mesh_->tp
                                          : nullptr;
      if (slot) *slot = WholeCountNanogpt(value, source, line, key);
    }
    std::string label;
    for (const auto& [name, size] :
         {std::pair{"tp", mesh_->tp}, {"pp", mesh_->pp}, {"cp", mesh_->cp}}) {
      if (size > 1) label += fmt::format("{}{}={}", label.empty() ? "" : ",", name, size);
    }
    mesh_label_ = label;
    mesh_line_ = line;
    previous_.reset();
  }

  void AddTrainerLine(std::string_view text, int line) {
    const std::string& source = context_.source;
    Trainer t;
    t.line = line;
    if (const auto v = WordAfter(text, "local batch size")) {
      t.local = WholeCountNanogpt(*v, source, line, "local batch size");
    }
    if (const auto v = WordAfter(text, "global batch size")) {
      t.global = WholeCountNanogpt(*v, source, line, "global batch size");
    }
    if (const auto v = WordAfter(text, "gradient accumulation steps")) {
      t.accumulation = WholeCountNanogpt(*v, source, line, "gradient accumulation steps");
    }
    if (const auto v = WordAfter(text, "sequence length")) {
      t.seq_len = WholeCountNanogpt(*v, source, line, "sequence length");
    }
    trainer_ = t;
    previous_.reset();
  }

  void AddTitan(const TitanStep& step, int line) {
    const std::string& source = context_.source;
    SetKind(KindNanogpt::kTorchtitan, line);
    if (!step.tps || !step.complete) {
      throw DataError(source, line, step.tps ? "mfu" : "tps",
                      "a torchtitan step line that ends before it (cut short?)");
    }
    const double tps = GroupedNumber(*step.tps, source, line, "tps");
    const std::optional<Previous> previous = previous_;
    previous_ = Previous{step.step, 0};
    if (!previous || step.step <= previous->step) {
      warmup_.Add(line);
      warmup_reason_ = "the first logged step of each torchtitan run (compilation, warm-up)";
      return;
    }

    Sample s = NewSample(line);
    s.unit = Unit::kTokens;
    // World size: the mesh's product; without the mesh line, @devices (data
    // parallel only) or 1.
    int world = context_.attributes.devices.value_or(1);
    if (mesh_) {
      world = mesh_->pp * mesh_->dp_replicate * mesh_->dp_shard * mesh_->cp * mesh_->tp;
      s.devices = mesh_->dp_replicate * mesh_->dp_shard;
      s.label = mesh_label_;
    } else if (unknown_devices_line_ == 0) {
      unknown_devices_line_ = line;
    }
    s.throughput_sps = tps * world;  // tps is per GPU
    if (trainer_ && trainer_->global && trainer_->seq_len) {
      if (mesh_ && trainer_->local &&
          *trainer_->global != *trainer_->local * trainer_->accumulation * s.devices) {
        throw DataError(
            source, trainer_->line, "global batch size",
            fmt::format("{} is not local batch size {} x gradient accumulation steps {} x the "
                        "data-parallel size {} (dp_replicate x dp_shard, line {})",
                        *trainer_->global, *trainer_->local, trainer_->accumulation, s.devices,
                        mesh_line_));
      }
      s.batch = static_cast<double>(*trainer_->global) * *trainer_->seq_len;
      s.seq_len = *trainer_->seq_len;
    } else if (batch_doubt_.empty()) {
      batch_doubt_line_ = line;
      batch_doubt_ =
          "the log lacks torchtitan's line 'Trainer is initialized with local batch size N, "
          "global batch size N, ..., sequence length N'; give PATH@batch=N,unit=tokens";
    }
    Push(std::move(s));
  }

  struct Mesh {
    int pp = 1, dp_replicate = 1, dp_shard = 1, cp = 1, tp = 1;
  };
  struct Trainer {
    int line = 0;
    std::optional<int> local, global, seq_len;
    int accumulation = 1;
  };

  const ReaderContext& context_;
  std::string buffer_;
  KindNanogpt kind_ = KindNanogpt::kNanogpt;
  bool kind_set_ = false;
  // nanoGPT
  std::optional<long long> last_iteration_, evaluated_iteration_;
  std::optional<long long> evaluated_step_;  // modded-nanogpt
  std::optional<double> nanogpt_tokens_;
  // modded-nanogpt
  bool in_hyperparameters_ = false;
  Hyperparameters hparams_;
  // modded-nanogpt and torchtitan: the previous step line of this run
  std::optional<Previous> previous_;
  // torchtitan
  std::optional<Mesh> mesh_;
  SharedString mesh_label_;  // "tp=2,pp=4" from the mesh, shared by its samples
  int mesh_line_ = 0;
  std::optional<Trainer> trainer_;

  int unknown_devices_line_ = 0;
  std::string batch_doubt_;
  int batch_doubt_line_ = 0;
  Dropped warmup_, evaluated_, clock_back_;
  std::string warmup_reason_;
  std::vector<Sample> samples_;
};

}  // namespace

bool LooksLikeNanogpt(std::string_view head) {
  LineCursor cursor(head);
  std::string_view raw;
  std::string buffer;
  while (cursor.Next(raw)) {
    const std::string_view line = StripTerminalCodes(raw, buffer);
    if (const auto it = ParseNanogptIter(line)) {
      if (it->time) return true;
    } else if (const auto s = ParseModdedStep(line)) {
      if (s->train_time && s->step_avg) return true;
    } else if (const auto s = ParseTitanStep(line)) {
      if (s->tps) return true;
    }
  }
  return false;
}

std::vector<Sample> ReadNanogpt(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<NanogptReader>(lines, context);
}

}  // namespace fitspeed::io
