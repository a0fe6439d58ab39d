// Options and helpers shared by the subcommands.
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

#include "command.h"
#include "fitspeed/core/error.h"
#include "fitspeed/io/output.h"

namespace fitspeed::cli {

namespace {

constexpr const char* kInputHelp =
    "Input logs: PATH or PATH@key=value,... for what the log lacks (keys: batch, devices, "
    "samples, label, precision, drop_remainder, unit (samples or tokens: what batch and rates "
    "count), seq_len (tokens per sequence: tokens become sequences)). '-' reads standard input; "
    "write '-- -@key=value' to give it attributes.";

// A finite number in [low, high] (above low when `low_open`), else a
// message saying `rule`.
CLI::Validator FiniteCheckCommon(double low, bool low_open, double high, std::string rule,
                                 std::string name) {
  return CLI::Validator(
      [low, low_open, high, rule](std::string& input) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        if (input.empty() || end != input.c_str() + input.size()) {
          return fmt::format("'{}' is not a number", input);
        }
        const bool below = low_open ? !(value > low) : !(value >= low);
        if (!std::isfinite(value) || below || value > high) {
          return fmt::format("{} is not {}", input, rule);
        }
        return std::string();
      },
      std::move(name));
}

}  // namespace

CLI::Validator PositiveFinite() {
  return FiniteCheckCommon(0, true, HUGE_VAL, "a finite number > 0", "POSITIVE");
}

CLI::Validator NonNegativeFinite() {
  return FiniteCheckCommon(0, false, HUGE_VAL, "a finite number >= 0", "NONNEGATIVE");
}

CLI::Validator FiniteRange(double low, double high) {
  return FiniteCheckCommon(low, false, high, fmt::format("a finite number in [{}, {}]", low, high),
                           fmt::format("FLOAT in [{} - {}]", low, high));
}

void AddInputOptions(CLI::App& command, InputOptions& options, bool inputs_required) {
  auto* inputs = command.add_option("inputs", options.inputs, kInputHelp);
  if (inputs_required) inputs->required();
  command
      .add_option("--input-format", options.input_format,
                  "Format of every input: " + FormatNames() + " (docs/formats/)")
      ->capture_default_str();
  command
      .add_option("--skip-epochs", options.skip_epochs,
                  "Drop samples of epochs 1..N where the log numbers epochs (epoch 1 carries "
                  "compilation and warm-up); 0 keeps all")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command.add_option("--tag", options.tag,
                     "TensorBoard event files: the scalar tag to read (default: the one whose "
                     "name states a throughput or step time, e.g. examples/sec, global_step/sec, "
                     "tokens_per_sec, step_time)");
  command
      .add_option("--tag-unit", options.tag_unit,
                  "What the --tag values count when the name does not say: samples/s, "
                  "tokens/s, steps/s, s/step, or s/interval (seconds over all the steps since "
                  "the tag's previous value)")
      ->needs("--tag");
  command
      .add_option("--where", options.where,
                  "Keep only samples with key=value (a CSV series column, label, devices or "
                  "precision); repeat to require several")
      ->allow_extra_args(false);
}

std::vector<Sample> LoadSamples(const InputOptions& options) {
  ReadOptions read_options;
  read_options.format = ParseFormat(options.input_format);
  read_options.skip_first_epochs = options.skip_epochs;
  read_options.tensorboard_tag = options.tag;
  read_options.tensorboard_unit = options.tag_unit;
  std::vector<SampleFilter> filters;
  for (const std::string& text : options.where) filters.push_back(ParseSampleFilter(text));

  // Filtered where they were read, and the first input's vector kept as the
  // result: a long log's samples are not copied again.
  std::vector<Sample> samples;
  for (const std::string& text : options.inputs) {
    std::vector<Sample> read = ReadSamples(ParseInputSpec(text), read_options);
    read.erase(std::remove_if(read.begin(), read.end(),
                              [&](const Sample& s) {
                                return !std::all_of(
                                    filters.begin(), filters.end(),
                                    [&](const SampleFilter& f) { return f.Matches(s); });
                              }),
               read.end());
    if (samples.empty()) {
      samples = std::move(read);
    } else {
      samples.insert(samples.end(), std::make_move_iterator(read.begin()),
                     std::make_move_iterator(read.end()));
    }
  }
  if (samples.empty()) {
    throw DataError(fmt::format("the --where filters leave no samples from {} input(s)",
                                options.inputs.size()));
  }
  return samples;
}

void AddFitOptions(CLI::App& command, FitCliOptions& options) {
  command
      .add_option("--law", options.law,
                  "Throughput law: hyperbolic (v0, t) or exponential (vmax, b_scale)")
      ->capture_default_str();
  command
      .add_option("--objective", options.objective,
                  "Residual: relative-time (predicted/observed step time - 1), "
                  "absolute-throughput (samples/s) or absolute-time (s)")
      ->capture_default_str();
  command.add_option("--loss", options.loss, "Robust loss: squared, huber or cauchy")
      ->capture_default_str();
  command
      .add_option("--loss-scale", options.loss_scale,
                  "Scale of the huber/cauchy loss, in the residual's unit")
      ->capture_default_str()
      ->check(PositiveFinite());
  command
      .add_option("--confidence", options.confidence,
                  "Confidence level of the reported intervals, in (0, 1)")
      ->capture_default_str()
      ->check(FiniteRange(0.0, 1.0));
  command.add_flag("--no-loo", options.no_loo,
                   "Skip the leave-one-out prediction error (one re-fit per point)");
}

FitOptions ToFitOptions(const FitCliOptions& o) {
  FitOptions options;
  options.law = o.law;
  options.objective = ParseObjective(o.objective);
  options.loss = ParseLoss(o.loss);
  options.loss_scale = o.loss_scale;
  options.confidence = o.confidence;
  options.leave_one_out = !o.no_loo;
  ValidateFitOptions(options);
  return options;
}

void AddOutputOption(CLI::App& command, std::string& output, HtmlReport html) {
  if (html == HtmlReport::kNo) {
    command.add_option("--output,-o", output, "Output format: table, csv or json")
        ->capture_default_str()
        ->check(CLI::IsMember({"table", "csv", "json"}));
    return;
  }
  command
      .add_option("--output,-o", output,
                  "Output format: table, csv, json, or html (one self-contained page with the "
                  "tables and plots, to redirect into a file: `-o html > report.html`; "
                  "docs/reports.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "csv", "json", "html"}));
}

void AddProgressOption(CLI::App& command, std::string& mode) {
  command
      .add_option("--progress", mode,
                  "Progress of long work on stderr, one line redrawn in place: auto (only when "
                  "stderr is a terminal), always or never. Default: $FITSPEED_PROGRESS, else auto")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

ProgressLine::ProgressLine(const std::string& mode) {
  std::string resolved = mode;
  if (resolved.empty()) {
    const char* env = std::getenv("FITSPEED_PROGRESS");
    resolved = env != nullptr && *env != '\0' ? env : "auto";
    if (resolved != "auto" && resolved != "always" && resolved != "never") {
      throw UsageError(
          fmt::format("FITSPEED_PROGRESS='{}': expected auto, always or never", resolved));
    }
  }
  const bool tty = isatty(fileno(stderr)) == 1;
  enabled_ = resolved == "always" || (resolved == "auto" && tty);
  winsize size{};
  if (enabled_ && tty && ioctl(fileno(stderr), TIOCGWINSZ, &size) == 0) width_ = size.ws_col;
}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Show(const std::string& text, bool now) {
  if (!enabled_) return;
  const auto time = std::chrono::steady_clock::now();
  if (shown_ && !now && time - last_ < std::chrono::milliseconds(100)) return;
  last_ = time;
  // Longer than the terminal, the line would wrap and "\r" not reach its start.
  const size_t room = width_ > 1 ? static_cast<size_t>(width_ - 1) : std::string::npos;
  std::cerr << "\r\033[K" << text.substr(0, room) << std::flush;
  shown_ = true;
}

void ProgressLine::Clear() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

void ProgressLine::Message(const std::string& text) {
  Clear();
  std::cerr << "fitspeed: " << text << "\n";
}

ProgressCallback ProgressLine::Callback(std::string title) {
  return [this, title = std::move(title)](const Progress& p) {
    const bool new_stage = p.stage != stage_;
    stage_ = p.stage;
    std::string text = fmt::format("{}: {} ({} of {})", title, p.stage, p.done, p.total);
    if (!p.what.empty()) text += ": " + p.what;
    Show(text, new_stage);
  };
}

std::function<void(const SweepProgress&)> ProgressLine::SweepCallback(std::string model) {
  return [this, model = std::move(model)](const SweepProgress& p) {
    if (p.stage == SweepProgress::Stage::kSkipped) {
      Message(p.message);
      return;
    }
    const std::string where = p.total > 0 ? fmt::format("{} of {}", p.index, p.total)
                                          : fmt::format("{}, automatic", p.index);
    std::string text = fmt::format("sweep {}: batch {} ({})", model, p.batch, where);
    if (p.stage == SweepProgress::Stage::kMeasured) {
      text += fmt::format(": {:.4g} ms/step, {:.4g} samples/s, {} repeats", p.step_time_s * 1e3,
                          p.throughput_sps, p.repeats);
    } else {
      text += ": measuring";
    }
    // Each batch's start and result are shown: a batch takes a second or more.
    Show(text, true);
  };
}

// An SVG plot of the fitted points and curve at `path`.
void WriteFitPlot(const std::string& path, const FitResult& fit, const std::string& title) {
  std::ofstream file(path);
  PlotOptions plot;
  plot.title = title;
  if (file) WriteFitSvg(file, fit, plot);
  if (!file || !file.flush()) {
    throw InputError(fmt::format("cannot write the plot to '{}'", path));
  }
}

int PrintAnswer(const Answer& answer, const std::string& output) {
  for (const std::string& note : answer.notes) std::cerr << "fitspeed: " << note << "\n";
  if (output == "html") {
    answer.WriteHtml(std::cout);
  } else {
    answer.Write(std::cout, ParseOutputFormat(output));
  }
  if (answer.usable) return 0;
  if (!answer.problem.empty()) std::cerr << "fitspeed: " << answer.problem << "\n";
  return static_cast<int>(ExitCode::kFitUnusable);
}

}  // namespace fitspeed::cli
