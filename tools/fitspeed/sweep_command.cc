// `fitspeed sweep`: a training step at many batch sizes, fitted to
// v(b) = b/(b/v0 + t), in three modes (sweep_options.h): `sweep host MODEL`
// runs the real step on this CPU (fitspeed/timing/sweep.h), `sweep device
// MODEL --device D` models it on a catalogued device
// (fitspeed/device/step_model.h), `sweep llm MODEL --device D --tp ...` models
// one step of a transformer split (fitspeed/llm/split.h). Each parses its
// options into a request of fitspeed/scenario/ and prints the answer.
// `sweep MODEL ...`, the spelling of earlier versions, picks the mode from the
// options given.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "command.h"
#include "fitspeed/core/error.h"
#include "sweep_options.h"

namespace fitspeed::cli {

namespace {

FitOptions FitOf(const SweepValues& v) { return ToFitOptions(v.fit); }

void MaybePlot(const SweepValues& v, const FitResult& fit, const std::string& title) {
  if (!v.plot_path.empty() && !fit.fits.empty()) WriteFitPlot(v.plot_path, fit, title);
}

int RunHost(const SweepValues& v) {
  HostSweepRequest request = ToHostRequest(v);
  if (v.data_parallel.enabled) {
    request.Validate();
    if (v.output == "html") {
      throw UsageError(
          "--output html: a data-parallel sweep's report (its ranks' communication) has no HTML "
          "form yet; give table, csv or json");
    }
    DataParallelCliOptions dp = v.data_parallel;
    dp.links = v.links;
    return RunDataParallelSweep(LoadNetwork(request.model, ZooOptions{request.seq_len}),
                                request.options, dp, request.fit, ParseOutputFormat(v.output),
                                v.layers, v.plot_path, v.progress);
  }
  ProgressLine progress(v.progress);
  request.options.progress = progress.SweepCallback(request.model);
  const HostSweepAnswer answer = request.Run();
  progress.Clear();
  MaybePlot(v, answer.fit, answer.Title());
  return PrintAnswer(answer, v.output);
}

int RunDevice(const SweepValues& v) {
  const DeviceSweepAnswer answer = ToDeviceRequest(v).Run();
  MaybePlot(v, answer.fit, answer.Title());
  return PrintAnswer(answer, v.output);
}

int RunLlm(const SweepValues& v) { return PrintAnswer(ToLlmRequest(v).Run(), v.output); }

int RunMode(unsigned mode, const SweepValues& v) {
  if (mode == kHostMode) return RunHost(v);
  if (mode == kDeviceMode) return RunDevice(v);
  return RunLlm(v);
}

// The help of each mode's subcommand.
const char* ModeHelp(unsigned mode) {
  if (mode == kHostMode) {
    return "Run MODEL's training step (forward, backward, optimizer update) for real on this CPU "
           "with oneDNN at many batch sizes, fit v(b) = b/(b/v0 + t) and print the fit and the "
           "per-batch table (step time, samples/s, GFLOPS, % of the measured FP32 FMA peak)";
  }
  if (mode == kDeviceMode) {
    return "Model MODEL's training step on a catalogued GPU/TPU (--device; a roofline per layer "
           "and pass) at many batch sizes, fit v(b) = b/(b/v0 + t) and print the fit, the "
           "per-batch table and the prediction interval from the model's errors on published "
           "cases";
  }
  return "Model one training step of a transformer split on --device: its time by part, memory "
         "per GPU, MFU and interval (docs/llm.md, \"The CLI\")";
}

}  // namespace

HostSweepRequest ToHostRequest(const SweepValues& v) {
  if (v.precision == "tf32" || v.precision == "mixed" || v.precision == "fp8") {
    throw UsageError(fmt::format(
        "--precision {} needs --device (`sweep device`; this CPU runs fp32 or bf16)", v.precision));
  }
  if (v.precision == "fp16" || v.precision == "int8" || v.precision == "fp4") {
    throw UsageError(fmt::format(
        "--precision {} is for transformer splits (`sweep llm`); this CPU runs fp32 or bf16",
        v.precision));
  }
  HostSweepRequest r;
  r.model = v.model;
  r.seq_len = v.seq_len;
  SweepOptions& o = r.options;
  o.batches = ParseBatchList(v.batches, "--batches");
  o.auto_max_batch = v.max_batch;
  o.precision = ParsePrecision(v.precision.empty() ? "fp32" : v.precision, PrecisionContext::kHost);
  o.optimizer = ParseOptimizer(v.optimizer);
  o.backend = ParseBackend(v.backend);
  o.threads = v.threads;
  o.warmup_steps = v.warmup;
  o.min_repeats = v.min_repeats;
  o.max_repeats = std::max(o.max_repeats, v.min_repeats);
  o.min_time_s = v.min_time_s;
  o.memory_limit_bytes = v.memory_limit_gib * (1u << 30);
  r.fit = FitOf(v);
  r.layers = v.layers;
  if (!v.data_parallel.enabled &&
      (v.data_parallel.bucket_mib != 25 || v.data_parallel.first_bucket_mib != 1)) {
    throw UsageError(
        "--bucket-mb and --first-bucket-mb on this CPU size a --data-parallel "
        "run's buckets: give --data-parallel");
  }
  if (!v.links.empty() && !v.data_parallel.enabled) {
    throw UsageError(
        "--links on this CPU models a --data-parallel run's all-reduces: give "
        "--data-parallel, or model a device with `sweep device --device D`");
  }
  return r;
}

DeviceSweepRequest ToDeviceRequest(const SweepValues& v) {
  if (v.precision == "bf16") {
    throw UsageError("--precision bf16 is the host's mixed precision; with --device use mixed");
  }
  if (v.precision == "fp16" || v.precision == "int8" || v.precision == "fp4") {
    throw UsageError(fmt::format(
        "--precision {} is for transformer splits (`sweep llm`); a zoo network takes fp32, tf32, "
        "mixed or fp8",
        v.precision));
  }
  if (v.recompute == "selective") {
    throw UsageError(
        "--recompute selective is for transformer splits (`sweep llm`); a zoo network "
        "recomputes whole segments (--recompute, or --recompute full)");
  }
  DeviceSweepRequest r;
  r.model = v.model;
  r.zoo = ZooOptions{v.seq_len, v.mean_tokens, v.mean_square_tokens, v.head_positions};
  r.device = v.device;
  r.links = v.links;
  r.framework = v.framework;
  DeviceModelOptions& o = r.options;
  o.batches = ParseBatchList(v.batches, "--batches");
  o.max_batch = v.max_batch;
  o.precision =
      ParsePrecision(v.precision.empty() ? "fp32" : v.precision, PrecisionContext::kDevice);
  o.layout = ParseActivationLayout(v.layout.empty() ? "nchw" : v.layout);
  o.optimizer = ParseOptimizer(v.optimizer);
  o.devices = v.devices > 0 ? v.devices : 1;
  o.devices_per_node = v.devices_per_node;
  o.overlap = v.overlap;
  o.bucket_bytes = v.data_parallel.bucket_mib * 1048576;
  o.first_bucket_bytes = v.data_parallel.first_bucket_mib * 1048576;
  o.steps_per_execution = v.steps_per_execution;
  o.accumulation = v.accumulation;
  o.recompute = v.recompute == "full";
  o.input_samples_per_s = v.input_rate;
  o.attention = ParseAttentionKernel(v.attention.empty() ? "unfused" : v.attention);
  if (!v.amp_ops.empty()) r.amp_ops = ParseAmpOpList(v.amp_ops);
  if (!v.fuse.empty()) r.fusion = ParseElementwiseFusion(v.fuse);
  r.from = v.from;
  r.from_device = v.from_device;
  r.precision_stated = !v.precision.empty();
  r.layout_stated = !v.layout.empty();
  r.intervals = v.intervals;
  r.interval_level = v.interval_level;
  r.fit = FitOf(v);
  r.layers = v.layers;
  return r;
}

LlmStepRequest ToLlmRequest(const SweepValues& v) {
  if (v.precision == "fp32" || v.precision == "tf32") {
    throw UsageError(fmt::format(
        "--precision {}: a transformer split trains in mixed, bf16, fp16, fp8, fp8-block, mxfp8, "
        "int8, fp4 or nvfp4",
        v.precision));
  }
  LlmStepRequest r;
  r.model = v.model;
  r.dropout = DropoutOf(v.training);
  r.cluster = ToLlmCluster(v.device, v.devices, v.devices_per_node, v.links);
  if (v.device.empty()) {
    throw UsageError(
        "a transformer split is modeled on a catalogued device: give --device (see "
        "`fitspeed devices`)");
  }
  LlmTrainingCliOptions training = v.training;
  if (!v.framework.empty()) training.framework = v.framework;
  r.training = ToLlmTraining(training, v.seq_len, v.precision.empty() ? "mixed" : v.precision);
  LlmSplit& s = r.split;
  s.tp = v.tp;
  s.pp = v.pp;
  s.vp = v.vp;
  s.cp = v.cp;
  s.ep = v.ep;
  s.etp = v.etp;
  s.overlap_moe_comm = v.overlap_moe_comm;
  s.tp_comm_overlap = v.tp_comm_overlap;
  s.shard_group = v.shard_group;
  s.layout = v.training.pipeline_layout;
  r.first_stage_layers = v.training.first_stage_layers;
  r.last_stage_layers = v.training.last_stage_layers;
  r.embedding_as_layer = v.training.embedding_as_layer;
  r.loss_as_layer = v.training.loss_as_layer;
  s.micro_batch = v.micro_batch;
  s.global_batch = v.global_batch;
  s.recompute = ParseRecompute(v.recompute.empty() ? "none" : v.recompute);
  if (!v.training.recompute_modules.empty()) {
    if (!v.recompute.empty() && s.recompute != Recompute::kSelective)
      throw UsageError(
          "--recompute-modules is selective recomputation's: give --recompute "
          "selective or leave --recompute out");
    s.recompute = Recompute::kSelective;
    s.recompute_modules = ParseRecomputeModules(v.training.recompute_modules);
  }
  s.sequence_parallel = v.sequence_parallel;
  s.zero = v.zero;
  s.overlap_grad_reduce = !v.no_overlap_grad_reduce;
  r.interval_level = v.interval_level;
  return r;
}

void SetupSweepCommand(CLI::App& app, int& exit_code) {
  auto values = std::make_shared<SweepValues>();
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "A training step at many batch sizes, fitted to v(b) = b/(b/v0 + t), in one of three "
      "modes: `sweep host MODEL` (run on this CPU), `sweep device MODEL --device D` (modeled on "
      "a catalogued GPU/TPU) or `sweep llm MODEL --device D --tp ...` (one transformer split "
      "modeled). `sweep MODEL [options]`, the spelling of earlier versions, still works: it "
      "takes every option below and picks the mode from them (a split option or a transformer "
      "MODEL: llm; --device: device; else host), refusing options the mode does not take");
  auto modes = std::make_shared<SweepOptionModes>(AddSweepOptions(*sweep, *values, kEveryMode));
  for (unsigned mode : {kHostMode, kDeviceMode, kLlmMode}) {
    auto mode_values = std::make_shared<SweepValues>();
    CLI::App* sub = sweep->add_subcommand(SweepModeName(mode), ModeHelp(mode));
    sub->fallthrough(false);
    AddSweepOptions(*sub, *mode_values, mode);
    sub->callback([mode, mode_values, sub, &exit_code] {
      // --recompute is an option of the device and llm modes only.
      const CLI::Option* recompute = sub->get_option_no_throw("--recompute");
      if (recompute != nullptr && recompute->count() > 0 && mode_values->recompute.empty()) {
        mode_values->recompute = "full";
      }
      exit_code = RunMode(mode, *mode_values);
    });
  }
  sweep->require_subcommand(0, 1);
  sweep->callback([values, modes, sweep, &exit_code] {
    if (sweep->get_subcommands().size() > 0) return;  // a mode ran
    if (values->model.empty()) {
      throw UsageError("sweep: give a mode (host, device, llm) and MODEL, or MODEL alone");
    }
    if (sweep->count("--recompute") > 0 && values->recompute.empty()) values->recompute = "full";
    exit_code = RunMode(ChooseSweepMode(*values, *modes), *values);
  });
}

}  // namespace fitspeed::cli
