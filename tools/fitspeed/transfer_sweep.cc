// `fitspeed sweep MODEL --device B --from RUN --from-device A`: a measurement
// of MODEL on device A (a training log any reader of `fitspeed fit` takes, with
// PATH@key=value attributes; a cases CSV; a host sweep CSV) calibrates the step
// model on A, and B is modeled with what carries over (fitspeed/evidence/transfer.h;
// docs/devices.md, "Transfer from your own run").
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "fitspeed/core/error.h"
#include "fitspeed/core/table.h"
#include "fitspeed/evidence/cases.h"
#include "fitspeed/io/input.h"
#include "fitspeed/model/zoo.h"
#include "transfer_cli.h"

namespace fitspeed::cli {

namespace {

using json = nlohmann::ordered_json;

// Tags of a log that name the network it trained.
constexpr const char* kNetworkTags[] = {"model",        "network",    "arch",
                                        "architecture", "model_name", "net"};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

// Letters and digits only, lower case: "ResNet-50" and "resnet50" are one name.
std::string Normalized(const std::string& name) {
  std::string out;
  for (unsigned char ch : name) {
    if (std::isalnum(ch)) out.push_back(static_cast<char>(std::tolower(ch)));
  }
  return out;
}

bool SameNetwork(const std::string& named, const std::string& model, const Network& network) {
  const std::string n = Normalized(named);
  return !n.empty() && (n == Normalized(model) || n == Normalized(network.name));
}

// A precision as logs and @precision= write it; nullopt for an unknown name.
std::optional<DevicePrecision> MeasuredPrecision(const std::string& name) {
  const std::string n = Lower(name);
  if (n == "fp32" || n == "float32" || n == "float") return DevicePrecision::kFp32;
  if (n == "tf32") return DevicePrecision::kTf32;
  if (n == "mixed" || n == "amp" || n == "fp16" || n == "bf16" || n == "float16" ||
      n == "bfloat16" || n == "half") {
    return DevicePrecision::kMixed;
  }
  return std::nullopt;
}

// Splits "PATH@k=v,layout=nhwc,network=NAME,..." into the spec without the
// keys fitspeed's readers do not know and their values, when given: the
// activation layout, and the network the log measured (which states it where
// the log's model column names a task, e.g. Pollux's "cifar10").
std::string TakeTransferAttributes(const std::string& text, std::optional<ActivationLayout>& layout,
                                   std::string& network) {
  const size_t at = text.rfind('@');
  if (at == std::string::npos || text.find('=', at) == std::string::npos) return text;
  std::vector<std::string> kept;
  std::stringstream items(text.substr(at + 1));
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.rfind("layout=", 0) == 0) {
      layout = ParseActivationLayout(Lower(item.substr(7)));
    } else if (item.rfind("network=", 0) == 0) {
      network = item.substr(8);
    } else {
      kept.push_back(item);
    }
  }
  std::string spec = text.substr(0, at);
  if (!kept.empty()) spec += "@" + fmt::format("{}", fmt::join(kept, ","));
  return spec;
}

// Whether the file's first line (after blank and '#' lines) is a cases CSV
// header: it names network, device and throughput_sps columns.
bool IsCasesCsv(const std::string& path) {
  if (path == "-") return false;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::vector<std::string> columns;
    std::stringstream fields(line);
    std::string field;
    while (std::getline(fields, field, ',')) {
      field.erase(0, field.find_first_not_of(" \t\""));
      field.erase(field.find_last_not_of(" \t\r\"") + 1);
      columns.push_back(Lower(field));
    }
    auto has = [&columns](const char* name) {
      return std::find(columns.begin(), columns.end(), name) != columns.end();
    };
    return has("network") && has("device") && has("throughput_sps");
  }
  return false;
}

// Whether `precision`'s matrix work runs on tensor units of either device,
// where the activation layout changes the modeled step.
bool LayoutMatters(const Device& a, const Device& b, DevicePrecision precision) {
  return (!a.tensor_layout.empty() && MatrixOnTensorUnits(a, precision)) ||
         (!b.tensor_layout.empty() && MatrixOnTensorUnits(b, precision));
}

// The rows of a cases CSV that measure MODEL on A at the modeled precision.
std::vector<MeasuredCase> CasesFromCsv(const std::string& path, const Network& network,
                                       const Device& a, const Device& b,
                                       const DeviceModelOptions& options,
                                       const TransferSource& source) {
  std::vector<MeasuredCase> used;
  std::vector<std::string> networks_on_a;
  int other_precision = 0;
  for (MeasuredCase& c : ReadCasesCsv(path)) {
    if (c.device != a.name && c.device != source.from_device) continue;
    if (!SameNetwork(c.network, source.model, network)) {
      if (std::find(networks_on_a.begin(), networks_on_a.end(), c.network) == networks_on_a.end()) {
        networks_on_a.push_back(c.network);
      }
      continue;
    }
    if (c.precision != options.precision) {
      ++other_precision;
      continue;
    }
    if (c.layout != options.layout && LayoutMatters(a, b, c.precision)) {
      throw DataError(c.source, c.line, "layout",
                      fmt::format("{}, but {} is modeled in {} (--layout): on tensor units the "
                                  "layout changes the step; model the layout measured",
                                  ActivationLayoutName(c.layout), b.name,
                                  ActivationLayoutName(options.layout)));
    }
    c.device = a.name;
    c.network = source.model;
    c.seq_len = source.seq_len;
    if (!c.optimizer) c.optimizer = options.optimizer;
    used.push_back(std::move(c));
  }
  if (used.empty()) {
    std::string found;
    if (!networks_on_a.empty()) {
      found = fmt::format("; its {} rows are of {}", a.name, fmt::join(networks_on_a, ", "));
    } else if (other_precision > 0) {
      found = fmt::format("; its {} {} row(s) on {} are of another precision than --precision {}",
                          other_precision, source.model, a.name,
                          DevicePrecisionName(options.precision));
    }
    throw DataError(path, 0, "network",
                    fmt::format("no case of {} on {} at {}{}", source.model, a.name,
                                DevicePrecisionName(options.precision), found));
  }
  if (other_precision > 0) {
    std::cerr << fmt::format(
        "fitspeed: {} case(s) of {} on {} at another precision than {} not used\n", other_precision,
        source.model, a.name, DevicePrecisionName(options.precision));
  }
  return used;
}

// The samples of a training log (or a host sweep CSV) as cases of MODEL on A.
std::vector<MeasuredCase> CasesFromLog(const InputSpec& spec,
                                       const std::optional<ActivationLayout>& spec_layout,
                                       const std::string& spec_network, const Network& network,
                                       const Device& a, const Device& b,
                                       const DeviceModelOptions& options,
                                       const TransferSource& source, DevicePrecision& precision,
                                       ActivationLayout& layout) {
  const std::vector<Sample> samples = ReadSamples(spec);
  if (samples.empty()) throw DataError(spec.path, 0, "", "no measurement read");
  std::vector<MeasuredCase> cases;
  const int64_t tokens = network.TokensPerSample();
  if (!spec_network.empty() && !SameNetwork(spec_network, source.model, network)) {
    throw UsageError(
        fmt::format("--from {}: network={} is not {}: a transfer carries one "
                    "network's measurement to another device",
                    source.from, spec_network, source.model));
  }
  for (const Sample& s : samples) {
    for (const auto& [key, value] : s.tags) {
      const std::string k = Lower(key);
      if (spec_network.empty() &&
          std::find(std::begin(kNetworkTags), std::end(kNetworkTags), k) !=
              std::end(kNetworkTags) &&
          !SameNetwork(value, source.model, network)) {
        throw DataError(s.source, s.line, key,
                        fmt::format("the measurement is of '{}', not of {}: a transfer carries "
                                    "one network's measurement to another device (where the "
                                    "column names a task or data set, state the network with "
                                    "{}@network={})",
                                    value, source.model, spec.path, source.model));
      }
    }
    // The precision: the log's or @precision's, else --precision's.
    if (s.precision.empty() && !source.precision_given) {
      throw UsageError(
          fmt::format("--from {}: the measurement's precision is not stated: give it as "
                      "{}@precision=fp32|tf32|mixed or with --precision",
                      source.from, spec.path));
    }
    DevicePrecision measured = options.precision;
    if (!s.precision.empty()) {
      const std::optional<DevicePrecision> p = MeasuredPrecision(s.precision);
      if (!p) {
        throw DataError(
            s.source, s.line, "precision",
            fmt::format("'{}' is none of fp32, tf32, mixed (fp16, bf16, amp)", s.precision));
      }
      measured = *p;
    }
    if (measured != options.precision) {
      const std::string message = fmt::format(
          "the measurement is {} ('{}') but {} is modeled at {} (--precision): "
          "a transfer needs them equal",
          DevicePrecisionName(measured), s.precision, b.name,
          DevicePrecisionName(options.precision));
      if (spec.attributes.precision)
        throw UsageError(fmt::format("--from {}: {}", source.from, message));
      throw DataError(s.source, s.line, "precision", message);
    }
    precision = measured;
    // Sequences, not tokens; at the modeled sequence length.
    double batch = s.batch;
    double throughput = ToStepObservation(s).throughput_sps();
    if (s.seq_len && tokens > 0 && std::llround(*s.seq_len) != tokens) {
      throw DataError(s.source, s.line, "seq_len",
                      fmt::format("measured at {} tokens per sequence, {} is modeled at {} "
                                  "(--seq-len)",
                                  *s.seq_len, source.model, tokens));
    }
    if (s.unit == Unit::kTokens) {
      if (tokens <= 0) {
        throw DataError(
            s.source, s.line, "unit",
            fmt::format("the log counts tokens; {} is not a sequence model", source.model));
      }
      batch /= static_cast<double>(tokens);
      throughput /= static_cast<double>(tokens);
    }
    if (batch < 1 || std::fabs(batch - std::round(batch)) > 1e-6 * batch) {
      throw DataError(s.source, s.line, "batch",
                      fmt::format("{} is not a whole number of samples per step", batch));
    }
    MeasuredCase c;
    c.network = source.model;
    c.seq_len = source.seq_len;
    c.device = a.name;
    c.precision = measured;
    c.devices = s.devices;
    c.batch = std::llround(batch);
    c.throughput_sps = throughput;
    c.optimizer = options.optimizer;
    c.source = s.source;
    c.line = s.line;
    cases.push_back(std::move(c));
  }
  // The layout: @layout= or --layout; it must be stated where it matters.
  if (spec_layout && source.layout_given && *spec_layout != options.layout) {
    throw UsageError(fmt::format("--from {}: layout={} contradicts --layout {}", source.from,
                                 ActivationLayoutName(*spec_layout),
                                 ActivationLayoutName(options.layout)));
  }
  if (LayoutMatters(a, b, precision)) {
    if (!spec_layout && !source.layout_given) {
      throw UsageError(fmt::format(
          "--from {}: the measurement's activation layout is not stated; {} matrix work runs "
          "on tensor units, where it changes the step: give {}@layout=nchw|nhwc or --layout",
          source.from, DevicePrecisionName(precision), spec.path));
    }
    if (spec_layout && *spec_layout != options.layout) {
      throw UsageError(
          fmt::format("--from {}: the measurement is {} but {} is modeled in {}: give --layout {}",
                      source.from, ActivationLayoutName(*spec_layout), b.name,
                      ActivationLayoutName(options.layout), ActivationLayoutName(*spec_layout)));
    }
  }
  layout = spec_layout.value_or(options.layout);
  for (MeasuredCase& c : cases) c.layout = layout;
  return cases;
}

std::string ParameterText(const CalibratedParameter& p) {
  return p.unit == "s" ? fmt::format("{} = {} ms", p.name, FormatSig(p.value * 1e3, 4))
                       : fmt::format("{} = {}", p.name, FormatSig(p.value, 4));
}

std::string ParametersText(const std::vector<CalibratedParameter>& parameters) {
  std::vector<std::string> items;
  for (const CalibratedParameter& p : parameters) items.push_back(ParameterText(p));
  return items.empty() ? "none" : fmt::format("{}", fmt::join(items, ", "));
}

std::string Pct(double fraction) { return FormatSig(100 * fraction, 3) + "%"; }

// The header lines (without a comment prefix).
std::vector<std::string> HeaderLines(const TransferRun& run, bool interval_given) {
  const TransferCalibration& t = run.calibration;
  std::vector<std::string> lines;
  lines.push_back(fmt::format(
      "transferred from {}: {} measured in {} ({}, {} case{} -> {} measured point{}), {}, {}",
      t.source_device, t.network, run.source.from, run.source_kind, t.cases,
      t.cases == 1 ? "" : "s", t.points, t.points == 1 ? "" : "s",
      DevicePrecisionName(run.precision), ActivationLayoutName(run.layout)));
  lines.push_back(fmt::format("fitted on {} to {} measured point{}: {}", t.source_device, t.points,
                              t.points == 1 ? "" : "s", ParametersText(t.fitted)));
  lines.push_back(fmt::format("applied to {}: {}", t.target_device, ParametersText(t.applied)));
  for (const TransferCalibration::Kept& k : t.kept) {
    lines.push_back(
        fmt::format("kept at {}'s catalog value: {} ({})", t.target_device, k.name, k.reason));
  }
  lines.push_back(fmt::format(
      "{} fit error (in-sample, throughput): median |e| {}, max {} (catalog before: median {}){}",
      t.source_device, Pct(t.source_after.median_abs), Pct(t.source_after.max_abs),
      Pct(t.source_before.median_abs),
      t.points <= static_cast<int>(t.fitted.size()) ? "; as many parameters as points: exact"
                                                    : ""));
  if (!t.converged) {
    lines.push_back(fmt::format("the calibration on {} did not converge: {}", t.source_device,
                                t.solver_message));
  }
  // The interval itself is printed by WriteDeviceSweep; here only where it
  // comes from.
  if (!interval_given) {
    lines.push_back(
        "prediction interval: none given; the transfer errors on the published cases: "
        "`fitspeed validate`, section Transfer");
  } else {
    lines.push_back(
        "prediction interval: from the errors of transferred predictions on the published "
        "cases (`fitspeed validate`, sections Transfer and Prediction intervals), not the "
        "catalog's");
  }
  return lines;
}

json ParametersJson(const std::vector<CalibratedParameter>& parameters) {
  json j = json::array();
  for (const CalibratedParameter& p : parameters) {
    j.push_back({{"name", p.name}, {"unit", p.unit}, {"value", p.value}, {"initial", p.initial}});
  }
  return j;
}

json ErrorJson(const DeviceCalibration::Error& e) {
  auto number = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  return {{"cases", e.cases},
          {"rms", number(e.rms)},
          {"median_abs", number(e.median_abs)},
          {"max_abs", number(e.max_abs)}};
}

json TransferJson(const TransferRun& run) {
  const TransferCalibration& t = run.calibration;
  json kept = json::array();
  for (const TransferCalibration::Kept& k : t.kept) {
    kept.push_back({{"name", k.name}, {"reason", k.reason}});
  }
  return {{"from", run.source.from},
          {"from_kind", run.source_kind},
          {"source_device", t.source_device},
          {"target_device", t.target_device},
          {"network", t.network},
          {"precision", DevicePrecisionName(run.precision)},
          {"layout", ActivationLayoutName(run.layout)},
          {"cases", t.cases},
          {"points", t.points},
          {"fitted", ParametersJson(t.fitted)},
          {"applied", ParametersJson(t.applied)},
          {"kept", kept},
          {"source_error_before", ErrorJson(t.source_before)},
          {"source_error_after", ErrorJson(t.source_after)},
          {"converged", t.converged},
          {"solver_message", t.solver_message}};
}

}  // namespace

TransferRun CalibrateFromRun(const Network& network, const Device& target,
                             const DeviceModelOptions& options, const TransferSource& source) {
  if (source.from_device.empty()) {
    throw UsageError("--from needs --from-device: the device the measurement was taken on");
  }
  if (options.steps_per_execution != 1 || options.recompute ||
      options.attention != AttentionKernel::kUnfused) {
    throw UsageError(
        "--from models the measurement with one step per host call, no recomputation and "
        "unfused attention; --steps-per-execution, --recompute and --attention fused cannot be "
        "combined with it");
  }
  const Device a = LoadDevice(source.from_device);
  if (a.kind != target.kind) {
    throw UsageError(fmt::format(
        "--from-device {} is a {}, --device {} a {}: the efficiency scales describe one kind's "
        "kernel libraries and carry over between devices of one kind only",
        a.name, a.kind, target.name, target.kind));
  }
  TransferRun run;
  run.source = source;
  run.precision = options.precision;
  run.layout = options.layout;
  std::optional<ActivationLayout> spec_layout;
  std::string spec_network;
  const InputSpec spec =
      ParseInputSpec(TakeTransferAttributes(source.from, spec_layout, spec_network));
  std::vector<MeasuredCase> cases;
  if (IsCasesCsv(spec.path)) {
    if (spec_layout || !spec_network.empty() || spec.attributes.batch || spec.attributes.devices ||
        spec.attributes.precision || spec.attributes.samples_per_epoch || spec.attributes.unit ||
        spec.attributes.seq_len) {
      throw UsageError(fmt::format(
          "--from {}: a cases file states every case's precision, layout, devices and batch; "
          "@attributes are for logs",
          source.from));
    }
    run.source_kind = "cases";
    cases = CasesFromCsv(spec.path, network, a, target, options, source);
  } else {
    run.source_kind = "log";
    cases = CasesFromLog(spec, spec_layout, spec_network, network, a, target, options, source,
                         run.precision, run.layout);
  }
  TransferOptions transfer;
  transfer.optimizer = options.optimizer;
  run.calibration = CalibrateTransfer(a, target, cases, transfer);
  return run;
}

void WriteTransferSweep(std::ostream& out, const TransferRun& run, const DeviceSweepResult& sweep,
                        const FitResult& fit, OutputFormat format, bool layers,
                        const PredictionInterval* interval) {
  switch (format) {
    case OutputFormat::kTable:
      for (const std::string& line : HeaderLines(run, interval)) out << line << "\n";
      out << "\n";
      WriteDeviceSweep(out, sweep, fit, format, layers, interval);
      break;
    case OutputFormat::kCsv:
      for (const std::string& line : HeaderLines(run, interval)) out << "# " << line << "\n";
      WriteDeviceSweep(out, sweep, fit, format, layers, interval);
      break;
    case OutputFormat::kJson: {
      std::stringstream text;
      WriteDeviceSweep(text, sweep, fit, format, layers, interval);
      json j = json::parse(text.str());
      j["transfer"] = TransferJson(run);
      out << j.dump(2) << "\n";
      break;
    }
  }
}

int TransferExitCode(const TransferRun& run, int code) {
  if (run.calibration.converged) return code;
  std::cerr << fmt::format("fitspeed: the calibration on {} did not converge ({})\n",
                           run.calibration.source_device, run.calibration.solver_message);
  return static_cast<int>(ExitCode::kFitUnusable);
}

}  // namespace fitspeed::cli
