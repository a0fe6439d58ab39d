// Transfer from the command line's measurement (fitspeed/calibrate/transfer_run.h):
// a training log, a host sweep CSV or a cases CSV read as cases of MODEL on A,
// checked against what is modeled on B, and calibrated (CalibrateTransfer).
#include "fitspeed/calibrate/transfer_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>

#include "fitspeed/core/error.h"
#include "fitspeed/io/input.h"
#include "io/text.h"

namespace fitspeed {

namespace {

// Tags of a log that name the network it trained.
constexpr const char* kNetworkTags[] = {"model",        "network",    "arch",
                                        "architecture", "model_name", "net"};

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

// A precision as logs and @precision= write it (PrecisionContext::kLog);
// nullopt for another name.
std::optional<Precision> MeasuredPrecision(const std::string& name) {
  try {
    return ParsePrecision(name, PrecisionContext::kLog);
  } catch (const UsageError&) {
    return std::nullopt;
  }
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
      layout = ParseActivationLayout(io::ToLower(item.substr(7)));
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

// Whether `precision`'s matrix work runs on tensor units of either device,
// where the activation layout changes the modeled step.
bool LayoutMatters(const Device& a, const Device& b, Precision precision) {
  return (!a.tensor_layout.empty() && MatrixOnTensorUnits(a, precision)) ||
         (!b.tensor_layout.empty() && MatrixOnTensorUnits(b, precision));
}

// The rows of a cases CSV that measure MODEL on A at the modeled precision;
// `notes` says which rows were left out.
std::vector<MeasuredCase> CasesFromCsv(const std::string& path, const Network& network,
                                       const Device& a, const Device& b,
                                       const DeviceModelOptions& options,
                                       const TransferSource& source,
                                       std::vector<std::string>& notes) {
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
                          other_precision, source.model, a.name, PrecisionName(options.precision));
    }
    throw DataError(path, 0, "network",
                    fmt::format("no case of {} on {} at {}{}", source.model, a.name,
                                PrecisionName(options.precision), found));
  }
  if (other_precision > 0) {
    notes.push_back(fmt::format("{} case(s) of {} on {} at another precision than {} not used",
                                other_precision, source.model, a.name,
                                PrecisionName(options.precision)));
  }
  return used;
}

// The samples of a training log (or a host sweep CSV) as cases of MODEL on A.
std::vector<MeasuredCase> CasesFromLog(const InputSpec& spec,
                                       const std::optional<ActivationLayout>& spec_layout,
                                       const std::string& spec_network, const Network& network,
                                       const Device& a, const Device& b,
                                       const DeviceModelOptions& options,
                                       const TransferSource& source, Precision& precision,
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
    for (const auto [tag_name, tag_value] : s.tags) {
      const std::string key(tag_name), value(tag_value);
      const std::string k = io::ToLower(key);
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
    Precision measured = options.precision;
    if (!s.precision.empty()) {
      const std::optional<Precision> p = MeasuredPrecision(s.precision);
      if (!p) {
        throw DataError(
            s.source, s.line, "precision",
            fmt::format("'{}' is none of fp32, tf32, mixed (fp16, bf16, amp)", s.precision.str()));
      }
      measured = *p;
    }
    if (measured != options.precision) {
      const std::string message = fmt::format(
          "the measurement is {} ('{}') but {} is modeled at {} (--precision): "
          "a transfer needs them equal",
          PrecisionName(measured), s.precision.str(), b.name, PrecisionName(options.precision));
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
          source.from, PrecisionName(precision), spec.path));
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
  if (LooksLikeCasesCsv(spec.path)) {
    if (spec_layout || !spec_network.empty() || spec.attributes.batch || spec.attributes.devices ||
        spec.attributes.precision || spec.attributes.samples_per_epoch || spec.attributes.unit ||
        spec.attributes.seq_len) {
      throw UsageError(fmt::format(
          "--from {}: a cases file states every case's precision, layout, devices and batch; "
          "@attributes are for logs",
          source.from));
    }
    run.source_kind = "cases";
    cases = CasesFromCsv(spec.path, network, a, target, options, source, run.notes);
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

}  // namespace fitspeed
