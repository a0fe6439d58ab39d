// Large-model training as requests (fitspeed/scenario/llm.h).
#include "fitspeed/scenario/llm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "fitspeed/core/error.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/framework.h"
#include "fitspeed/model/zoo.h"
#include "scenario/notes.h"

namespace fitspeed {

namespace {

bool InZoo(const std::string& name) {
  const std::vector<ZooEntry>& zoo = ZooEntries();
  return std::any_of(zoo.begin(), zoo.end(), [&](const ZooEntry& e) { return e.name == name; });
}

}  // namespace

bool IsTransformerModel(const std::string& model) {
  if (model.rfind("transformer:", 0) == 0) return true;
  if (InZoo(model)) return false;
  const std::vector<std::string> builtins = BuiltinTransformerNames();
  if (std::find(builtins.begin(), builtins.end(), model) != builtins.end()) return true;
  std::error_code error;
  if (std::filesystem::is_directory(model, error)) {
    // Any config.json, so that LoadTransformer names the one it refuses.
    return std::filesystem::exists(std::filesystem::path(model) / "config.json", error);
  }
  if (!std::filesystem::is_regular_file(model, error)) return false;
  const nlohmann::json doc =
      nlohmann::json::parse(ReadInputFile(model, "the model file"), nullptr, false);
  return doc.is_object() && doc.contains("model_type");
}

TransformerConfig LoadLlmModel(const std::string& model, std::optional<bool> dropout) {
  if (model.empty()) {
    throw UsageError(
        "model: give a built-in transformer, transformer:key=value,... or a config.json");
  }
  const std::vector<std::string> builtins = BuiltinTransformerNames();
  const bool builtin = std::find(builtins.begin(), builtins.end(), model) != builtins.end();
  if (InZoo(model) && !builtin) {
    throw UsageError(
        fmt::format("'{}' is a zoo network, not a transformer: give a built-in transformer ({}), "
                    "transformer:layers=..,hidden=..,heads=..,vocab=.. or a config.json",
                    model, fmt::join(builtins, ", ")));
  }
  TransformerConfig config = LoadTransformer(model);
  if (dropout) config.dropout = *dropout;
  return config;
}

void LlmClusterRequest::Validate(bool devices_may_be_zero) const {
  if (device.empty()) {
    throw UsageError("device: a transformer is modeled on a catalogued device; give one");
  }
  if (devices < (devices_may_be_zero ? 0 : 1) || devices > 65536) {
    throw UsageError(
        fmt::format("devices {}: must be in {}..65536", devices, devices_may_be_zero ? 0 : 1));
  }
  if (devices_per_node < 0 || devices_per_node > 65536) {
    throw UsageError(fmt::format("devices_per_node {}: must be in 0..65536", devices_per_node));
  }
  if (devices_per_node > 0 && devices > devices_per_node && devices % devices_per_node != 0) {
    throw UsageError(fmt::format(
        "devices {} over domains of devices_per_node {}: the domains must be whole (a multiple "
        "of {})",
        devices, devices_per_node, devices_per_node));
  }
}

LlmCluster LlmClusterRequest::Make(int n, std::vector<std::string>& notes) const {
  Device d = LoadDevice(device);
  if (!links.empty()) ApplyLinksFileWithNotes(d, links, notes);
  return MakeCluster(d, n, devices_per_node);
}

// ------------------------------------------------------------------ step

void LlmStepRequest::Validate() const {
  cluster.Validate(/*devices_may_be_zero=*/true);
  if (training.seq_len < 1) {
    throw UsageError(
        fmt::format("seq_len {}: give the tokens per sequence (>= 1)", training.seq_len));
  }
  if (split.global_batch < 0) {
    throw UsageError(
        fmt::format("global_batch {}: must be >= 0 (0: micro_batch x dp, x pp when vp > 1)",
                    split.global_batch));
  }
  if (split.zero < -1 || split.zero > 3) {
    throw UsageError(
        fmt::format("zero {}: expected 0, 1, 2 or 3 (-1: the framework's default)", split.zero));
  }
  FindLlmFramework(training.framework);
  CheckIntervalLevel(interval_level);
}

LlmStepAnswer LlmStepRequest::Run() const {
  Validate();
  LlmStepAnswer answer;
  answer.model = LoadLlmModel(model, dropout);
  const int model_parallel = std::max(1, split.tp * split.pp * split.cp);
  answer.cluster =
      cluster.Make(cluster.devices > 0 ? cluster.devices : model_parallel, answer.notes);
  answer.training = training;
  // The framework's kernels, projections and sharding; gradient bytes 0 and
  // zero -1 become its defaults (the CLI and Python resolve fp16's).
  ApplyLlmFramework(answer.training, "bf16");
  LlmSplit s = split;
  if (s.zero < 0) s.zero = FindLlmFramework(training.framework).zero_default;
  s.dp = std::max(1, answer.cluster.devices / model_parallel);  // ValidateSplit refuses a remainder
  if (s.global_batch == 0) s.global_batch = s.micro_batch * s.dp * (s.vp > 1 ? s.pp : 1);
  if (first_stage_layers > 0 || last_stage_layers > 0 || embedding_as_layer || loss_as_layer) {
    if (!s.layout.empty())
      throw UsageError(
          "a pipeline layout and first/last stage layers (or the embedding or loss as layers) "
          "are exclusive: give one");
    s.layout = PipelineLayoutOf(answer.model, s.pp, s.vp, first_stage_layers, last_stage_layers,
                                embedding_as_layer, loss_as_layer);
  }
  answer.calibration = LlmCalibrationFor(answer.cluster.device);
  answer.step = ModelLlmStep(answer.model, answer.cluster, answer.training, s, answer.calibration);
  answer.interval = LlmInterval(answer.cluster.device, interval_level, training.framework);
  return answer;
}

void LlmStepAnswer::Write(std::ostream& out, OutputFormat format) const {
  WriteLlmStep(out, model, cluster, training, step, interval, calibration, format);
}

std::string LlmStepAnswer::BriefReport() const {
  const LlmSplit& s = step.split;
  return fmt::format(
      "{} on {} {} (tp {}, pp {}, cp {}, dp {}, micro-batch {}): {:.4g} s/step, {:.4g} "
      "tokens/s, MFU {:.1f}%, {:.1f} GB per GPU{}",
      model.name, cluster.devices, cluster.device.name, s.tp, s.pp, s.cp, s.dp, s.micro_batch,
      step.step_s, step.tokens_per_s, 100 * step.mfu, step.memory.total / 1e9,
      step.memory.fits ? "" : " (does not fit)");
}

// ------------------------------------------------------------------ plan

void LlmPlanRequest::Validate() const {
  cluster.Validate(/*devices_may_be_zero=*/false);
  if (options.global_batch < 1) {
    throw UsageError(
        fmt::format("global_batch {}: give the sequences per step (>= 1)", options.global_batch));
  }
  if (options.training.seq_len < 1) {
    throw UsageError(
        fmt::format("seq_len {}: give the tokens per sequence (>= 1)", options.training.seq_len));
  }
  if (tokens && !(std::isfinite(*tokens) && *tokens > 0)) {
    throw UsageError(fmt::format("tokens {}: must be a finite number > 0", *tokens));
  }
  if (price_per_device_hour) {
    if (!(std::isfinite(*price_per_device_hour) && *price_per_device_hour >= 0)) {
      throw UsageError(fmt::format("price per device-hour {}: must be a finite number >= 0",
                                   *price_per_device_hour));
    }
    if (!tokens) throw UsageError("a price prices a run: give its tokens as well");
  }
  FindLlmFramework(options.training.framework);
  CheckIntervalLevel(interval_level);
}

LlmPlanAnswer LlmPlanRequest::Run() const {
  Validate();
  LlmPlanAnswer answer;
  answer.model = LoadLlmModel(model, dropout);
  answer.cluster = cluster.Make(cluster.devices, answer.notes);
  answer.options = options;
  ApplyLlmFramework(answer.options.training, "bf16");
  answer.calibration = LlmCalibrationFor(answer.cluster.device);
  answer.plan = PlanLlm(answer.model, answer.cluster, answer.options, answer.calibration);
  answer.interval =
      LlmInterval(answer.cluster.device, interval_level, answer.options.training.framework);
  answer.tokens = tokens;
  answer.price_per_device_hour = price_per_device_hour;
  return answer;
}

void LlmPlanAnswer::Write(std::ostream& out, OutputFormat format) const {
  WriteLlmPlan(out, model, cluster, options, plan, interval, calibration, tokens,
               price_per_device_hour, format);
}

std::string LlmPlanAnswer::BriefReport() const {
  if (plan.ranked.empty()) {
    return fmt::format("{} on {} {}: none of {} splits fits", model.name, cluster.devices,
                       cluster.device.name, plan.evaluated);
  }
  const LlmStep& best = plan.ranked.front();
  return fmt::format(
      "{} on {} {}: {} of {} splits fit; fastest tp {}, pp {}, vp {}, cp {}, dp {}, "
      "micro-batch {}: {:.4g} s/step, {:.4g} tokens/s, MFU {:.1f}%",
      model.name, cluster.devices, cluster.device.name, plan.fitting, plan.evaluated, best.split.tp,
      best.split.pp, best.split.vp, best.split.cp, best.split.dp, best.split.micro_batch,
      best.step_s, best.tokens_per_s, 100 * best.mfu);
}

}  // namespace fitspeed
