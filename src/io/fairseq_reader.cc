// Reader of fairseq's training progress lines (facebookresearch/fairseq,
// fairseq_cli/train.py and its forks, such as the MLPerf v0.7 Transformer).
// Defined in docs/formats/fairseq.md. The lines, old (0.6-0.9) and new
// (0.10+, after the logging prefix "... | INFO | train_inner |"):
//   | epoch 001:   1000 / 2184 loss=81194.557, ..., wps=176776, ups=3.1, wpb=56091, bsz=485,
//     num_updates=997, ..., wall=323
//   | epoch 001 | loss 65192.095 | ... | wps 176942 | ups 3.1 | wpb 56060 | ... | wall 696
// The first is a progress line inside an epoch, the second the epoch's
// summary. trainer.py updates the meters once per optimizer update with the
// ntokens of the update summed over all workers: wps (a TimeMeter) is tokens
// per second of all devices together, wpb (an AverageMeter) the mean tokens of
// one update of all devices. train.py resets them when an epoch's training ends.
#include <fmt/format.h>

#include <algorithm>
#include <map>
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

// One training line: its epoch (as printed, from 1), whether it is the
// epoch's summary, and its fields by name.
struct FairseqLine {
  int line = 0;
  long long epoch = 0;
  bool summary = false;
  std::map<std::string, std::string, std::less<>> fields;
};

// The "key=value, key=value" (progress) or "key value | key value" (summary)
// fields after the epoch.
std::map<std::string, std::string, std::less<>> FairseqFields(std::string_view rest, bool summary) {
  std::map<std::string, std::string, std::less<>> fields;
  for (const std::string& piece : Split(rest, summary ? '|' : ',')) {
    const std::string_view p = Trim(piece);
    const size_t cut = summary ? p.find(' ') : p.find('=');
    if (cut == std::string_view::npos || cut == 0) continue;
    fields.emplace(std::string(Trim(p.substr(0, cut))), std::string(Trim(p.substr(cut + 1))));
  }
  return fields;
}

// Reads the line when it is a fairseq training line carrying wps or wpb;
// nullopt for other text (validation lines: "valid on 'valid' subset").
// DataError naming the field "epoch" for a training line whose epoch has more
// than 9 digits (Sample::epoch is an int).
std::optional<FairseqLine> ParseFairseqLine(std::string_view text, int line,
                                            const std::string& source) {
  const size_t at = text.find("| epoch ");
  if (at == std::string_view::npos || Contains(text, "valid on ")) return std::nullopt;
  std::string_view rest = text.substr(at + 8);
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
  if (digits == 0 || digits == rest.size()) return std::nullopt;
  FairseqLine f;
  f.line = line;
  const std::string_view epoch = rest.substr(0, digits);
  rest = rest.substr(digits);
  if (rest[0] == ':') {  // ":   1000 / 2184 loss=..., wps=..."
    const size_t slash = rest.find(" / ");
    if (slash == std::string_view::npos) return std::nullopt;
    std::string_view after = Trim(rest.substr(slash + 3));
    const size_t blank = after.find(' ');
    if (blank == std::string_view::npos) return std::nullopt;
    f.fields = FairseqFields(after.substr(blank + 1), false);
  } else if (StartsWith(rest, " |")) {
    f.summary = true;
    f.fields = FairseqFields(rest.substr(2), true);
  } else {
    return std::nullopt;
  }
  if (f.fields.count("wps") == 0 && f.fields.count("wpb") == 0) return std::nullopt;
  if (digits > 9) {
    throw DataError(
        source, line, "epoch",
        fmt::format("'{}' has {} digits; an epoch has at most 9", Excerpt(epoch), digits));
  }
  f.epoch = static_cast<long long>(*ToDouble(epoch));
  return f;
}

class FairseqReader {
 public:
  explicit FairseqReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view text, int line) {
    if (auto f = ParseFairseqLine(text, line, context_.source)) {
      lines_.push_back(std::move(*f));
      return;
    }
    // Settings: the argparse Namespace (old), the config dict (new), the
    // fork's "distributed env init. ... WORLD_SIZE: 4", and MLPerf's tag.
    Remember(world_size_, text, "distributed_world_size", line);
    Remember(world_size_, text, "WORLD_SIZE", line);
    Remember(max_tokens_, text, "max_tokens", line);
    Remember(update_freq_, text, "update_freq", line);
    if (const auto n = MllogWholeValue(text, "global_batch_size"); n && !global_batch_) {
      global_batch_ = Found{*n, line};
    }
  }

  std::vector<Sample> Finish() {
    // The epochs in file order (a new run when the epoch number changes):
    // each gives its summary line, else every progress line it has.
    std::vector<Sample> samples, dropped;
    size_t i = 0;
    while (i < lines_.size()) {
      size_t end = i;
      while (end < lines_.size() && lines_[end].epoch == lines_[i].epoch) ++end;
      bool has_summary = false;
      for (size_t j = i; j < end; ++j) has_summary = has_summary || lines_[j].summary;
      for (size_t j = i; j < end; ++j) {
        if (has_summary && !lines_[j].summary) continue;
        Sample s = SampleOf(lines_[j]);
        (*s.epoch <= context_.options.skip_first_epochs ? dropped : samples).push_back(s);
      }
      i = end;
    }
    if (samples.empty() && !dropped.empty()) {
      Warn(context_, dropped.back().line,
           fmt::format("every epoch in the log is <= skip_first_epochs = {}, which holds "
                       "warm-up: read anyway, so the throughput may be low (--skip-epochs 0 "
                       "keeps warm-up epochs without this warning)",
                       context_.options.skip_first_epochs));
      samples = std::move(dropped);
    }
    if (!samples.empty()) WarnIfOneGpuSized(samples.front());
    return samples;
  }

 private:
  // A setting and its line; value 0: not in the log (yet).
  struct Found {
    double value = 0;
    int line = 0;
    explicit operator bool() const { return value > 0; }
  };

  static void Remember(Found& slot, std::string_view text, std::string_view key, int line) {
    if (slot) return;
    if (const auto n = WholeSettingAfter(text, key)) slot = Found{*n, line};
  }

  double Field(const FairseqLine& f, std::string_view name) const {
    const auto it = f.fields.find(name);
    if (it == f.fields.end()) {
      throw DataError(context_.source, f.line, std::string(name),
                      fmt::format("a fairseq training line with {} but no {}: both are needed "
                                  "(wps tokens/s, wpb tokens per update)",
                                  name == "wps" ? "wpb" : "wps", name));
    }
    return ParsePositive(it->second, context_.source, f.line, name);
  }

  Sample SampleOf(const FairseqLine& f) const {
    const double wps = Field(f, "wps");
    const double wpb = Field(f, "wpb");
    CheckCapacity(f, wpb);
    CheckUps(f, wps, wpb);
    Sample s;
    s.source = context_.sample_source;
    s.line = f.line;
    s.unit = Unit::kTokens;
    s.batch = wpb;
    s.throughput_sps = wps;
    s.epoch = static_cast<int>(std::min<long long>(f.epoch, 1000000000));
    if (world_size_) s.devices = static_cast<int>(std::min(world_size_.value, 1e6));
    return s;
  }

  // wpb counts the tokens of one update of all workers, so it fits in their
  // capacity: max_tokens per worker and batch x update_freq x world size, and
  // MLPerf's global_batch_size (the same product, in tokens).
  void CheckCapacity(const FairseqLine& f, double wpb) const {
    if (max_tokens_) {
      const double freq = update_freq_ ? update_freq_.value : 1;
      const double world = world_size_ ? world_size_.value : 1;
      const double capacity = max_tokens_.value * freq * world;
      if (wpb > capacity) {
        throw DataError(
            context_.source, f.line, "wpb",
            fmt::format("wpb {} is more than the tokens an update can hold: max_tokens {} (line "
                        "{}) x update_freq {} x {} workers = {}; the log contradicts itself",
                        wpb, max_tokens_.value, max_tokens_.line, freq, world, capacity));
      }
    }
    if (global_batch_ && wpb > global_batch_.value) {
      throw DataError(context_.source, f.line, "wpb",
                      fmt::format("wpb {} is more than global_batch_size {} (line {}), the "
                                  "tokens an update can hold; the log contradicts itself",
                                  wpb, global_batch_.value, global_batch_.line));
    }
  }

  // ups (updates per second, rounded to 0.1) should be about wps / wpb. train.py
  // resets wps after an epoch's first update but not ups, whose clock also runs
  // through the previous epoch's validation: they differ by a few percent (8%
  // in the MLPerf logs). A factor of 1.5 or more (one worker's wps or wpb on 2
  // or more) is a contradiction.
  void CheckUps(const FairseqLine& f, double wps, double wpb) const {
    const auto it = f.fields.find("ups");
    if (it == f.fields.end()) return;
    std::string_view tail;
    const auto ups = LeadingPrinted(it->second, &tail);
    if (!ups || !Trim(tail).empty()) {
      throw DataError(context_.source, f.line, "ups",
                      fmt::format("expected a number, got '{}'", Excerpt(it->second)));
    }
    if (ups->value - ups->half_unit <= 0) return;  // too slow to tell
    const double rate = wps / wpb;
    const double low = (ups->value - ups->half_unit) / 1.5;
    const double high = (ups->value + ups->half_unit) * 1.5;
    if (rate < low || rate > high) {
      throw DataError(context_.source, f.line, "wps",
                      fmt::format("wps / wpb = {:.4g} updates/s contradicts ups {} on the same "
                                  "line (more than a factor of 1.5 apart): wps and wpb do not "
                                  "count the same tokens; write the throughput as a CSV table "
                                  "(docs/formats/csv.md)",
                                  rate, it->second));
    }
  }

  // On several workers, a wpb that one worker's max_tokens could hold may be
  // one worker's tokens (a fork that does not sum them); fairseq sums them.
  void WarnIfOneGpuSized(const Sample& s) const {
    if (!max_tokens_ || !world_size_ || world_size_.value <= 1) return;
    const double freq = update_freq_ ? update_freq_.value : 1;
    if (s.batch <= max_tokens_.value * freq) {
      Warn(context_, s.line,
           fmt::format("wpb {} would fit in one worker's max_tokens {} x update_freq {}: read "
                       "as the tokens of all {} workers, as fairseq's trainer sums them (if "
                       "this fork logs one worker's, write the global numbers as a CSV table, "
                       "docs/formats/csv.md)",
                       s.batch, max_tokens_.value, freq, world_size_.value));
    }
  }

  const ReaderContext& context_;
  std::vector<FairseqLine> lines_;
  Found world_size_, max_tokens_, update_freq_, global_batch_;
};

}  // namespace

bool LooksLikeFairseq(std::string_view head) {
  LineCursor cursor(head);
  std::string_view line;
  while (cursor.Next(line)) {
    try {
      const auto f = ParseFairseqLine(line, cursor.number(), "");
      if (f && f->fields.count("wps") && f->fields.count("wpb")) return true;
    } catch (const DataError&) {
      return true;  // a training line with a broken epoch: the reader says which
    }
  }
  return false;
}

std::vector<Sample> ReadFairseq(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<FairseqReader>(lines, context);
}

}  // namespace fitspeed::io
