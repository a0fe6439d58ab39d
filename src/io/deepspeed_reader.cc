// Reader of DeepSpeed's throughput lines (deepspeedai/DeepSpeed). Defined in
// docs/formats/deepspeed.md. The lines, and where DeepSpeed prints them:
//  - the engine's ThroughputTimer (deepspeed/utils/timer.py, the form since late 2022):
//      [2023-04-18 01:46:59,171] [INFO] [timer.py:199:stop] epoch=0/micro_step=10/global_step=10,
//      RunningAvgSamplesPerSec=173.44, CurrSamplesPerSec=171.98, MemAllocated=3.96GB, ...
//    with samples = train_batch_size (the global batch) and the time summed from each
//    micro-batch's forward() to its step(); the running average leaves out global steps 1-2;
//  - the engine's progress (runtime/engine.py _report_progress):
//      [Rank 0] step=10, skipped=6, lr=[...], mom=[...]
//  - the pipeline engine (runtime/pipe/engine.py train_batch), not read: its "iter time (s)"
//    was in milliseconds in 2022 releases (DeepSpeed PR #1934) and the line cannot say which:
//      steps: 10 loss: 2.3456 iter time (s): 0.485 samples/sec: 527.835
//  - the hybrid engine of RLHF (runtime/hybrid_engine.py eval):
//      |E2E latency=3.88s |Gather latency=0.00s (0.00%) |Generate time=2.54s (65.36%) |...
//      |CurSamplesPerSec=16.50 |AvgSamplesPerSec=15.06
//    latency = time between two eval() calls (one generation + training iteration),
//    CurSamplesPerSec = generation batch per rank x world size / latency;
//  - the configuration dump (runtime/config.py DeepSpeedConfig.print):
//      [config.py:982:print]   train_batch_size ............. 256
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "line_reader.h"
#include "log_lines.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr std::string_view kE2eLabel = "rlhf-e2e";

// The text after `key` and blanks, up to the next ',', '|' or blank; nullopt when
// the line lacks the key.
std::optional<std::string_view> ValueAfter(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(at + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  return rest.substr(0, rest.find_first_of(",| \t"));
}

// A positive number as printed ("16.50", "0.485s" with `suffix` "s"), with its
// rounding; DataError naming `field` otherwise.
Printed PrintedValue(std::string_view value, std::string_view suffix, const std::string& source,
                     int line, std::string_view field) {
  if (!suffix.empty() && EndsWith(value, suffix)) value.remove_suffix(suffix.size());
  const double v = ParsePositive(value, source, line, field);
  std::string_view rest;
  const auto printed = LeadingPrinted(value, &rest);
  if (printed && Trim(rest).empty()) return *printed;
  return Printed{v, v * 5e-7};  // exponent form ("1.5e+03"): about 7 digits assumed
}

// A whole number >= 0 ("10" of "global_step=10"), or DataError naming `field`.
long long WholeValue(std::string_view value, const std::string& source, int line,
                     std::string_view field) {
  const double v = ParseNumber(value, source, line, field);
  if (!(v >= 0) || v != std::floor(v) || v > 1e15) {
    throw DataError(source, line, std::string(field),
                    fmt::format("must be a whole number >= 0, got '{}'", Excerpt(value)));
  }
  return static_cast<long long>(v);
}

// The samples of one step, bounded by the rounding of rate x time.
struct Bounds {
  double low = 0;
  double high = HUGE_VAL;

  static Bounds Of(const Printed& rate, const Printed& time_s) {
    return {std::max(0.0, rate.value - rate.half_unit) *
                std::max(0.0, time_s.value - time_s.half_unit) * (1 - 1e-12),
            (rate.value + rate.half_unit) * (time_s.value + time_s.half_unit) * (1 + 1e-12)};
  }
  bool Contains(double v) const { return v >= low && v <= high; }
  // The one whole number inside if exactly one is, else 0.
  double Whole() const {
    const double first = std::ceil(low);
    return first >= 1 && first == std::floor(high) ? first : 0;
  }
};

// An engine ThroughputTimer report.
struct TimerReport {
  int line = 0;
  long long global_step = 0;
  double running_avg_sps = 0;
  std::optional<double> time_s;      // the logging timestamp
  std::optional<long long> skipped;  // from the progress line of the same step
  int run = 0;                       // "***** Running training *****" headers before it
  bool run_start = false;            // first report of a run
};

// A hybrid-engine line: the time of one RLHF iteration and its samples per second.
struct E2eLine {
  int line = 0;
  std::optional<Printed> rate_sps;  // CurSamplesPerSec
  Printed time_s;                   // E2E latency
  int run = 0;
  bool run_start = false;
};

class DeepspeedReader {
 public:
  explicit DeepspeedReader(const ReaderContext& context) : context_(context) {}

  void Add(std::string_view raw, int line) {
    const std::string_view text = StripTerminalCodes(raw, buffer_);
    const std::string& source = context_.source;
    if (Contains(text, "***** Running training *****")) {
      ++run_;
    } else if (Contains(text, "E2E latency=")) {
      AddE2e(text, line);
    } else if (Contains(text, "SamplesPerSec=")) {
      AddTimer(text, line);
    } else if (Contains(text, "iter time (s):") && Contains(text, "samples/sec:")) {
      if (!pipeline_line_) pipeline_line_ = line;
    } else if (const auto step = ValueAfter(text, "] step=");
               step && Contains(text, "[Rank 0]") && Contains(text, "skipped=")) {
      const long long n = WholeValue(*step, source, line, "step");
      const long long skipped = WholeValue(*ValueAfter(text, "skipped="), source, line, "skipped");
      if (progress_ && progress_->step == n && !multi_engine_line_) multi_engine_line_ = line;
      progress_ = Progress{n, skipped};
    } else if (const size_t at = text.find("print]");
               at != std::string_view::npos && Contains(text.substr(0, at), "[config.py:")) {
      if (const auto setting = ParseSetting(text.substr(at + 6))) AddSetting(*setting, line);
    } else if (const size_t total = text.find("Total train batch size");
               total != std::string_view::npos) {
      // The Hugging Face Trainer's header when it runs DeepSpeed: "Total train batch
      // size (w. parallel, distributed & accumulation) = 1,024".
      const size_t eq = text.find('=', total);
      if (eq == std::string_view::npos) return;
      std::string digits;
      for (const char c : Trim(text.substr(eq + 1))) {
        if (c != ',') digits += c;
      }
      Offer(batch_statements_, ParsePositive(digits, source, line, "Total train batch size"), line);
    } else if (Contains(text, "--per_device_train_batch_size")) {
      command_line_ = line;
      const auto per_device = ValueAfter(text, "--per_device_train_batch_size");
      const auto accumulation = ValueAfter(text, "--gradient_accumulation_steps");
      per_device_hint_ = std::string(per_device.value_or(""));
      accumulation_hint_ = std::string(accumulation.value_or("1"));
    }
  }

  std::vector<Sample> Finish() {
    std::vector<Sample> samples;
    const bool use_timer = !timers_.empty() && !multi_engine_line_;
    if (use_timer) TimerSamples(samples);
    E2eSamples(samples);
    std::sort(samples.begin(), samples.end(),
              [](const Sample& a, const Sample& b) { return a.line < b.line; });

    const std::string& source = context_.source;
    if (!timers_.empty() && !use_timer) {
      const std::string why = fmt::format(
          "this log has several DeepSpeed engines (two progress reports of one step, line {}: "
          "an RLHF actor and critic?) and the throughput lines do not name theirs",
          multi_engine_line_);
      if (samples.empty()) {
        throw DataError(source, timers_.front().line, "SamplesPerSec",
                        fmt::format("the engine throughput lines are not read: {}", why));
      }
      Warn(context_, timers_.front().line,
           fmt::format("{} engine throughput line(s) left out: {}", timers_.size(), why));
    }
    if (samples.empty() && pipeline_line_) {
      throw DataError(source, pipeline_line_, "iter time (s)",
                      "a pipeline-engine line ('steps: N loss: L iter time (s): T samples/sec: "
                      "S'): fitspeed does not read it, since DeepSpeed releases of 2022 printed "
                      "milliseconds there (DeepSpeed PR #1934) and the line cannot say which");
    }
    if (samples.empty() && old_timer_line_) {
      throw DataError(source, old_timer_line_, "SamplesPerSec",
                      "a throughput line of DeepSpeed before 2023 ('0/10, SamplesPerSec=...'): "
                      "it counts micro batch x data-parallel size per timed micro-step, not the "
                      "global batch of a step, and what it times depends on the training loop; "
                      "fitspeed does not read it");
    }
    if (skipped_intervals_.count > 0) {
      Warn(context_, skipped_intervals_.first_line,
           fmt::format("{} interval(s) left out that include skipped steps (loss-scale "
                       "overflow: no optimizer update)",
                       skipped_intervals_.count));
    }
    if (!samples.empty() && !Devices() && !context_.attributes.devices) {
      Warn(context_, samples.front().line,
           "the log does not state the data-parallel devices (no DeepSpeed configuration dump): "
           "devices = 1 assumed; give PATH@devices=N");
    }
    return samples;
  }

 private:
  struct Progress {
    long long step = 0;
    long long skipped = 0;
  };
  // Distinct values a log states for one quantity, and the line of the first.
  struct Statements {
    std::set<double> values;
    int line = 0;
  };

  static void Offer(Statements& s, double value, int line) {
    if (s.values.empty()) s.line = line;
    s.values.insert(value);
  }

  void AddTimer(std::string_view text, int line) {
    const std::string& source = context_.source;
    const auto running = ValueAfter(text, "RunningAvgSamplesPerSec=");
    const auto step = ValueAfter(text, "global_step=");
    if (!running || !step) {  // "0/10, SamplesPerSec=..." and "0/10, RunningAvg..." forms
      if (!old_timer_line_) old_timer_line_ = line;
      return;
    }
    TimerReport r;
    r.line = line;
    r.global_step = WholeValue(*step, source, line, "global_step");
    r.running_avg_sps = ParsePositive(*running, source, line, "RunningAvgSamplesPerSec");
    if (const auto current = ValueAfter(text, "CurrSamplesPerSec=")) {
      ParsePositive(*current, source, line, "CurrSamplesPerSec");
    }
    r.time_s = LogTimestamp(text);
    if (progress_ && progress_->step == r.global_step) r.skipped = progress_->skipped;
    r.run = run_;
    r.run_start = timers_.empty() || timers_.back().run != run_ ||
                  r.global_step <= timers_.back().global_step;
    timers_.push_back(r);
  }

  void AddE2e(std::string_view text, int line) {
    const std::string& source = context_.source;
    E2eLine e;
    e.line = line;
    e.time_s = PrintedValue(ValueAfter(text, "E2E latency=").value_or(""), "s", source, line,
                            "E2E latency");
    if (const auto rate = ValueAfter(text, "CurSamplesPerSec=")) {
      e.rate_sps = PrintedValue(*rate, "", source, line, "CurSamplesPerSec");
    }
    e.run = run_;
    e.run_start = e2e_.empty() || e2e_.back().run != run_;
    e2e_.push_back(e);
  }

  void AddSetting(const Setting& s, int line) {
    const std::string& source = context_.source;
    if (s.name == "train_batch_size") {
      Offer(batch_statements_, ParsePositive(s.value, source, line, "train_batch_size"), line);
    } else if (s.name == "world_size") {
      Offer(world_statements_, ParsePositive(s.value, source, line, "world_size"), line);
    }
  }

  // The global batch the log states (DeepSpeed's train_batch_size, the Trainer's
  // total), when it states one value only.
  std::optional<double> StatedBatch() const {
    if (batch_statements_.values.size() != 1) return std::nullopt;
    return *batch_statements_.values.begin();
  }

  std::optional<int> Devices() const {
    if (world_statements_.values.size() != 1) return std::nullopt;
    const double n = *world_statements_.values.begin();
    if (n != std::floor(n) || n > 1e7) {
      throw DataError(context_.source, world_statements_.line, "world_size",
                      fmt::format("must be a whole number, got {}", n));
    }
    return static_cast<int>(n);
  }

  Sample MakeSample(int line, double batch) const {
    Sample s;
    s.source = context_.sample_source;
    s.line = line;
    s.batch = batch;
    const auto devices = Devices();
    if (devices) s.devices = *devices;
    if (context_.attributes.devices && devices && *context_.attributes.devices != *devices) {
      throw DataError(context_.source, line, "devices",
                      fmt::format("devices={} contradicts the log's world_size {} (line {})",
                                  *context_.attributes.devices, *devices, world_statements_.line));
    }
    return s;
  }

  // One throughput sample per interval between two timer reports of a run. The
  // running average over global steps 3..g is B (g-2) / T(g) for T the summed timed
  // seconds, so the steps (g_a, g_b] ran at (g_b - g_a) / ((g_b-2)/R_b - (g_a-2)/R_a)
  // samples/s: B cancels. The first report's interval is the warm-up and is left out.
  void TimerSamples(std::vector<Sample>& samples) {
    const std::string& source = context_.source;
    const Attributes& attributes = context_.attributes;
    std::optional<double> batch = StatedBatch();
    if (attributes.batch && batch && *attributes.batch != *batch) {
      throw DataError(source, batch_statements_.line, "batch",
                      fmt::format("batch={} contradicts the log's train_batch_size {}",
                                  *attributes.batch, *batch));
    }
    if (!batch) batch = attributes.batch;
    if (!batch) {
      std::string hint;
      if (batch_statements_.values.size() > 1) {
        hint = fmt::format(
            " (it states {} different train_batch_size values, from line {} on: "
            "several engines)",
            batch_statements_.values.size(), batch_statements_.line);
      }
      if (!per_device_hint_.empty()) {
        hint += fmt::format(
            " (the command line on line {} gives per-device batch {} and {} "
            "accumulation step(s): N = {} x {} x devices)",
            command_line_, per_device_hint_, accumulation_hint_, per_device_hint_,
            accumulation_hint_);
      }
      throw DataError(source, timers_.front().line, "batch",
                      fmt::format("DeepSpeed's samples per second count the global batch of a "
                                  "step (train_batch_size = per-device batch x gradient "
                                  "accumulation x data-parallel devices), which this log does "
                                  "not state: give it as PATH@batch=N{}",
                                  hint));
    }
    for (size_t k = 1; k < timers_.size(); ++k) {
      const TimerReport& a = timers_[k - 1];
      const TimerReport& b = timers_[k];
      if (b.run_start || a.global_step <= 2) continue;
      if (a.skipped && b.skipped && *b.skipped > *a.skipped) {
        skipped_intervals_.Add(b.line);
        continue;
      }
      const double steps = static_cast<double>(b.global_step - a.global_step);
      const double timed_s = static_cast<double>(b.global_step - 2) / b.running_avg_sps -
                             static_cast<double>(a.global_step - 2) / a.running_avg_sps;
      const double throughput = steps / timed_s;
      if (!(timed_s > 0) || !std::isfinite(throughput)) {
        throw DataError(source, b.line, "RunningAvgSamplesPerSec",
                        fmt::format("does not fit the running average on line {} (the steps "
                                    "between would take no time)",
                                    a.line));
      }
      // The timed part of the steps cannot exceed the wall time between the lines.
      if (a.time_s && b.time_s) {
        const double wall_s = *b.time_s - *a.time_s + 0.002;  // millisecond stamps
        const double most = throughput * wall_s / steps * 1.01;
        if (*batch > most) {
          throw DataError(source, b.line, "batch",
                          fmt::format("a batch of {} contradicts the log: {:.6g} samples/s over "
                                      "{:.4g} s of wall time between lines {} and {} allow at "
                                      "most {:.4g} samples per step",
                                      *batch, throughput, wall_s - 0.002, a.line, b.line, most));
        }
      }
      Sample s = MakeSample(b.line, *batch);
      s.throughput_sps = throughput;
      samples.push_back(std::move(s));
    }
  }

  // One sample per hybrid-engine line after the first of its run (warm-up). The
  // batch is the one whole number that CurSamplesPerSec x E2E latency allows on
  // every line of the run; it is the generation batch x world size, not the
  // configuration's train_batch_size.
  void E2eSamples(std::vector<Sample>& samples) {
    const std::string& source = context_.source;
    for (size_t first = 0; first < e2e_.size();) {
      size_t end = first + 1;
      while (end < e2e_.size() && !e2e_[end].run_start) ++end;
      Bounds bounds;
      bool all_rated = true;
      for (size_t k = first; k < end; ++k) {
        if (!e2e_[k].rate_sps) {
          all_rated = false;
          continue;
        }
        const Bounds b = Bounds::Of(*e2e_[k].rate_sps, e2e_[k].time_s);
        if (b.high < bounds.low || b.low > bounds.high) {
          throw DataError(source, e2e_[k].line, "CurSamplesPerSec",
                          fmt::format("CurSamplesPerSec x E2E latency gives {:.6g} to {:.6g} "
                                      "samples per iteration, the run's earlier lines {:.6g} to "
                                      "{:.6g}",
                                      b.low, b.high, bounds.low, bounds.high));
        }
        bounds = {std::max(bounds.low, b.low), std::min(bounds.high, b.high)};
      }
      double batch = all_rated ? bounds.Whole() : 0;
      if (const auto& given = context_.attributes.batch) {
        if (all_rated && !bounds.Contains(*given)) {
          throw DataError(source, e2e_[first].line, "batch",
                          fmt::format("a batch of {} contradicts the log: CurSamplesPerSec x E2E "
                                      "latency gives {:.6g} to {:.6g} samples per iteration",
                                      *given, bounds.low, bounds.high));
        }
        if (batch == 0) batch = *given;
      }
      const SharedString e2e_label(kE2eLabel);
      for (size_t k = first + 1; k < end; ++k) {
        Sample s = MakeSample(e2e_[k].line, batch);
        if (e2e_[k].rate_sps) {
          s.throughput_sps = e2e_[k].rate_sps->value;
        } else {
          s.step_time_s = e2e_[k].time_s.value;
        }
        s.label = e2e_label;
        samples.push_back(std::move(s));
      }
      first = end;
    }
  }

  const ReaderContext& context_;
  std::string buffer_;
  int run_ = 0;
  std::optional<Progress> progress_;
  int multi_engine_line_ = 0;
  int old_timer_line_ = 0;
  Statements batch_statements_;
  Statements world_statements_;
  int command_line_ = 0;
  std::string per_device_hint_;
  std::string accumulation_hint_;
  std::vector<TimerReport> timers_;
  std::vector<E2eLine> e2e_;
  int pipeline_line_ = 0;
  Dropped skipped_intervals_;
};

}  // namespace

bool LooksLikeDeepspeed(std::string_view head) {
  LineCursor cursor(head);
  std::string_view raw;
  std::string buffer;
  while (cursor.Next(raw)) {
    const std::string_view line = StripTerminalCodes(raw, buffer);
    if ((Contains(line, "RunningAvgSamplesPerSec=") && Contains(line, "CurrSamplesPerSec=")) ||
        (Contains(line, "[timer.py:") && Contains(line, "SamplesPerSec=")) ||
        (Contains(line, "|E2E latency=") && Contains(line, "|Generate time=")) ||
        (Contains(line, "steps: ") && Contains(line, " iter time (s): ") &&
         Contains(line, " samples/sec: "))) {
      return true;
    }
  }
  return false;
}

std::vector<Sample> ReadDeepspeed(LineCursor& lines, const ReaderContext& context) {
  return ReadLineByLine<DeepspeedReader>(lines, context);
}

}  // namespace fitspeed::io
