// Sweeps as requests (fitspeed/scenario/sweep.h).
#include "fitspeed/scenario/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/table.h"
#include "fitspeed/calibrate/output.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/frameworks.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/llm/transformer.h"
#include "scenario/notes.h"

namespace fitspeed {

namespace {

int64_t ParseOneBatch(const std::string& text, const std::string& option) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0 || value < 1) {
    throw UsageError(fmt::format("{}: '{}' is not a batch size >= 1", option, text));
  }
  if (value > kMaxSweepBatch) {
    throw UsageError(fmt::format("{}: {} is above the largest batch a sweep takes, 2^30 = {}",
                                 option, text, kMaxSweepBatch));
  }
  return value;
}

}  // namespace

std::vector<int64_t> ParseBatchList(const std::string& text, const std::string& option) {
  if (text == "auto") return {};
  std::vector<int64_t> batches;
  const size_t colon = text.find(':');
  if (colon != std::string::npos) {
    const int64_t first = ParseOneBatch(text.substr(0, colon), option);
    const int64_t last = ParseOneBatch(text.substr(colon + 1), option);
    if (last < first) throw UsageError(fmt::format("{} {}: {} < {}", option, text, last, first));
    // last <= 2^30, so b never overflows.
    for (int64_t b = first; b <= last; b *= 2) batches.push_back(b);
    return batches;
  }
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    batches.push_back(ParseOneBatch(text.substr(start, comma - start), option));
    start = comma + 1;
  }
  return batches;
}

void JudgeSweep(size_t fitted, bool all_fitted, const FitResult& fit, Answer& answer) {
  if (fitted < 2) {
    const std::string why =
        fmt::format("{} batch size(s) measured; fitting v0 and t needs 2 or more", fitted);
    if (all_fitted && fitted > 0) {
      answer.notes.push_back(why);
    } else {
      answer.usable = false;
      answer.problem = why;
    }
    return;
  }
  if (!fit.AllUsable()) {
    answer.usable = false;
    answer.problem = "the fit is not usable (see its warnings)";
  }
}

// ------------------------------------------------------------------ host

void HostSweepRequest::Validate() const {
  if (model.empty()) throw UsageError("model: give a zoo network or a network JSON file");
  if (seq_len < 0) throw UsageError(fmt::format("seq_len {}: must be >= 0", seq_len));
  ValidateSweepOptions(options);
  ValidateFitOptions(fit);
}

HostSweepAnswer HostSweepRequest::Run() const {
  Validate();
  const Network network = LoadNetwork(model, ZooOptions{seq_len});
  HostSweepAnswer answer;
  answer.layers = layers;
  answer.sweep = Sweep(network, options);
  // One measured batch is a measurement, not a fit: reported without one.
  if (answer.sweep.measurements.size() >= 2) answer.fit = Fit(answer.sweep.Samples(), fit);
  JudgeSweep(answer.sweep.measurements.size(), answer.sweep.skipped.empty(), answer.fit, answer);
  return answer;
}

void HostSweepAnswer::Write(std::ostream& out, OutputFormat format) const {
  WriteSweep(out, sweep, fit, format, layers);
}

std::string HostSweepAnswer::Title() const {
  return fmt::format("{} on {} ({}, {} thread{})", sweep.model, sweep.context.cpu_model,
                     PrecisionName(sweep.precision, PrecisionContext::kHost), sweep.context.threads,
                     sweep.context.threads == 1 ? "" : "s");
}

std::string HostSweepAnswer::BriefReport() const {
  std::string text = fmt::format("{}: {} batches measured", Title(), sweep.measurements.size());
  if (!fit.fits.empty()) text += "; " + fit.fits.front().BriefReport();
  return text;
}

// ------------------------------------------------------------------ device

void DeviceSweepRequest::Validate() const {
  if (model.empty()) throw UsageError("model: give a zoo network or a network JSON file");
  if (device.empty()) throw UsageError("device: give a catalog device or a device JSON file");
  ValidateDeviceModelOptions(options);
  CheckIntervalLevel(interval_level);
  ValidateFitOptions(fit);
  if (!from.empty() && !framework.empty()) {
    throw UsageError(
        "--framework and --from both calibrate the device: --from already fits what your own "
        "run says (framework included); give one of them");
  }
  if (!from.empty() &&
      (zoo.mean_tokens != 0 || zoo.mean_square_tokens != 0 || zoo.head_positions != 0)) {
    throw UsageError(
        "--mean-tokens, --mean-square-tokens and --head-positions are not read with --from "
        "(the measured run is read as padded sequences with the default head)");
  }
  if (from.empty() && !from_device.empty()) {
    throw UsageError("--from-device names the device of a --from measurement; give --from");
  }
}

DeviceSweepRequest::Setup DeviceSweepRequest::Prepare() const {
  Validate();
  Setup setup{LoadNetwork(model, zoo), LoadDevice(device), options, {}};
  setup.options.amp_ops = amp_ops ? *amp_ops : FrameworkAmpOps(framework);
  setup.options.fusion = fusion ? *fusion : FrameworkFusion(framework, options.precision);
  if (!links.empty()) ApplyLinksFileWithNotes(setup.device, links, setup.notes);
  if (!framework.empty()) {
    const FrameworkProfile& profile = FindFrameworkProfile(framework);
    setup.device = ApplyFrameworkProfile(setup.device, profile);
    setup.notes.push_back(FrameworkProfileNote(profile, setup.device.name));
  }
  return setup;
}

DeviceSweepAnswer DeviceSweepRequest::Run() const {
  Setup setup = Prepare();
  DeviceSweepAnswer answer;
  answer.notes = std::move(setup.notes);
  answer.layers = layers;
  if (!from.empty()) {
    answer.transfer =
        CalibrateFromRun(setup.network, setup.device, setup.options,
                         {from, from_device, model, zoo.seq_len, precision_stated, layout_stated});
    answer.notes.insert(answer.notes.end(), answer.transfer->notes.begin(),
                        answer.transfer->notes.end());
    setup.device = answer.transfer->calibration.target;
  }
  const std::vector<std::string> transformers = BuiltinTransformerNames();
  if (std::find(transformers.begin(), transformers.end(), model) != transformers.end()) {
    answer.notes.push_back(fmt::format(
        "{0} is also a built-in transformer: this sweep models PyTorch's eager kernels with AMP, "
        "`fitspeed sweep llm {0} --device {1} ...` models it as Megatron-LM and Transformer Engine "
        "run it (docs/llm.md, \"Two models of a transformer\")",
        model, device));
  }
  answer.sweep = ModelSweep(setup.network, setup.device, setup.options);
  if (answer.sweep.steps.size() >= 2) answer.fit = Fit(answer.sweep.Samples(), fit);
  // The interval from the model's out-of-sample errors on published cases
  // (fitspeed/device/intervals.h): those of the catalog model for this device
  // and precision; for a transfer, those of transferred predictions to a
  // device of this kind; with a framework profile, those of profiles on GPUs
  // they were not fitted on (the catalog's do not describe a calibrated device).
  const IntervalTable& table =
      intervals.empty() ? BuiltinIntervalTable() : ReadIntervalTableFile(intervals);
  answer.interval = answer.transfer ? table.ForTransfer(setup.device.kind, interval_level)
                    : framework.empty()
                        ? table.For(setup.device, setup.options.precision, interval_level)
                        : table.ForFramework(setup.device, setup.options.precision, interval_level);
  JudgeSweep(answer.sweep.steps.size(), answer.sweep.out_of_memory.empty(), answer.fit, answer);
  if (answer.transfer && !answer.transfer->calibration.converged) {
    answer.usable = false;
    answer.problem = fmt::format("the calibration on {} did not converge ({})",
                                 answer.transfer->calibration.source_device,
                                 answer.transfer->calibration.solver_message);
  }
  return answer;
}

void DeviceSweepAnswer::Write(std::ostream& out, OutputFormat format) const {
  if (transfer) {
    WriteTransferSweep(out, *transfer, sweep, fit, format, layers, &interval);
  } else {
    WriteDeviceSweep(out, sweep, fit, format, layers, &interval);
  }
}

std::string DeviceSweepAnswer::Title() const {
  return fmt::format("{} modeled on {} ({}, {} device{})", sweep.network, sweep.device,
                     PrecisionName(sweep.precision), sweep.devices, sweep.devices == 1 ? "" : "s");
}

std::string DeviceSweepAnswer::BriefReport() const {
  std::string text = fmt::format("{}: {} batches modeled", Title(), sweep.steps.size());
  if (!sweep.out_of_memory.empty()) {
    text += fmt::format(", {} out of memory", sweep.out_of_memory.size());
  }
  if (!fit.fits.empty()) text += "; " + fit.fits.front().BriefReport();
  return text;
}

}  // namespace fitspeed
