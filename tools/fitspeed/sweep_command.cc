// `fitspeed sweep MODEL`: runs the network's real training step (forward,
// backward, optimizer update) on this machine's CPU at many batch sizes, fits
// v(b) = b/(b/v0 + t) to the measured step times and prints the fit with the
// per-batch table. MODEL is a zoo name (`fitspeed models`) or a network JSON file.
// With --device NAME|FILE the step is modeled on a catalogued device instead
// (fitspeed/device/step_model.h) and fitted the same way. With a transformer
// split (--tp, --pp, ..., or a transformer MODEL) one training step of the
// split is modeled on --device instead (fitspeed/llm/split.h; docs/llm.md, "The CLI").
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "command.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/frameworks.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/llm/calibration.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/model/zoo.h"
#include "fitspeed/timing/sweep.h"
#include "llm_cli.h"
#include "transfer_cli.h"

namespace fitspeed::cli {

namespace {

struct SweepCommandOptions {
  std::string model;
  int64_t seq_len = 0;  // tokens per sequence of a sequence model; 0: its default
  // Unpadded sequences and BERT's masked-LM positions (ZooOptions); 0: not given.
  double mean_tokens = 0;
  double mean_square_tokens = 0;
  int64_t head_positions = 0;
  std::string batches = "auto";
  std::string precision = "fp32";
  bool precision_given = false;
  std::string optimizer = "sgd-momentum";
  std::string backend = "onednn";
  int threads = 0;
  int warmup = 2;
  int min_repeats = 5;
  double min_time_s = 0.5;
  int64_t max_batch = 4096;
  double memory_limit_gib = 0;
  bool layers = false;
  std::string device;           // empty: measure on this host
  std::string links;            // --links FILE: links replacing the device's
  std::string framework;        // --framework NAME: a framework profile applied to --device
  std::string from;             // --from RUN: a measurement on --from-device (transfer_sweep.cc)
  std::string from_device;      // --from-device A
  double interval_level = 0.8;  // prediction interval of a modeled sweep
  std::string intervals;        // --intervals FILE: errors instead of the built-in table
  std::string layout = "nchw";
  bool layout_given = false;
  std::string attention = "unfused";
  std::string amp_ops;  // --amp-ops; empty: FrameworkAmpOps(framework)
  std::string fuse;     // --fuse; empty: FrameworkFusion(framework, precision)
  int devices = 1;
  int devices_per_node = 0;  // --devices-per-node: 0, every device in one node
  bool overlap = false;      // --overlap / --no-overlap; the bucket sizes are data_parallel's
  int steps_per_execution = 1;
  int accumulation = 1;
  bool recompute = false;      // zoo networks: --recompute or --recompute full
  std::string recompute_name;  // --recompute [none|selective|full]; bare: full
  // The transformer split (--tp ...): 0 (or -1) when not given.
  int tp = 0, pp = 0, vp = 0, cp = 0, ep = 0;
  int64_t micro_batch = 0, global_batch = 0;
  int zero = -1;
  bool sequence_parallel = false;
  int64_t lora_rank = 0;
  bool fp8_weights = false;  // --fp8-weights (transformer splits)
  bool activation_fp8_store = false;  // --activation-fp8-store (transformer splits)
  std::string dropout;       // --dropout on|off (transformer splits); "": the model's
  bool lora_dropout = false;  // --lora-dropout (transformer splits)
  bool no_flash = false;
  bool no_overlap_grad_reduce = false;
  double gradient_bytes = 2;
  bool llm = false;  // a split option was given: the transformer path
  double input_rate = 0;
  DataParallelCliOptions data_parallel;
  FitCliOptions fit;
  std::string output = "table";
  std::string plot_path;
  std::string progress;  // --progress; empty: FITSPEED_PROGRESS, else auto
};

int64_t ParseBatch(const std::string& text) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0 || value < 1 || value > kMaxSweepBatch) {
    throw UsageError(
        fmt::format("--batches: '{}' is not a batch size in [1, {}]", text, kMaxSweepBatch));
  }
  return value;
}

// "auto" (empty list), "1,2,4,8" or "A:B" (A, 2A, 4A, ... up to B).
std::vector<int64_t> ParseBatches(const std::string& text) {
  if (text == "auto") return {};
  std::vector<int64_t> batches;
  const size_t colon = text.find(':');
  if (colon != std::string::npos) {
    const int64_t first = ParseBatch(text.substr(0, colon));
    const int64_t last = ParseBatch(text.substr(colon + 1));
    if (last < first) throw UsageError(fmt::format("--batches {}: {} < {}", text, last, first));
    for (int64_t b = first; b <= last; b *= 2) batches.push_back(b);
    return batches;
  }
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    batches.push_back(ParseBatch(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return batches;
}

ZooOptions SweepZooOptions(const SweepCommandOptions& o) {
  return ZooOptions{o.seq_len, o.mean_tokens, o.mean_square_tokens, o.head_positions};
}

// `--device`: the step modeled on a catalogued device at every batch, then fitted.
int RunDeviceSweep(const SweepCommandOptions& o) {
  const FitOptions fit_options = ToFitOptions(o.fit);
  const OutputFormat format = ParseOutputFormat(o.output);
  if (o.precision == "bf16") {
    throw UsageError("--precision bf16 is the host's mixed precision; with --device use mixed");
  }
  DeviceModelOptions options;
  options.batches = ParseBatches(o.batches);
  options.max_batch = o.max_batch;
  options.precision = ParsePrecision(o.precision, PrecisionContext::kDevice);
  options.layout = ParseActivationLayout(o.layout);
  options.optimizer = ParseOptimizer(o.optimizer);
  options.devices = o.devices;
  options.devices_per_node = o.devices_per_node;
  options.overlap = o.overlap;
  options.bucket_bytes = o.data_parallel.bucket_mib * 1048576;
  options.first_bucket_bytes = o.data_parallel.first_bucket_mib * 1048576;
  options.steps_per_execution = o.steps_per_execution;
  options.accumulation = o.accumulation;
  options.recompute = o.recompute;
  options.input_samples_per_s = o.input_rate;
  options.attention = ParseAttentionKernel(o.attention);
  options.amp_ops = !o.amp_ops.empty() ? ParseAmpOpList(o.amp_ops) : FrameworkAmpOps(o.framework);
  options.fusion = !o.fuse.empty() ? ParseElementwiseFusion(o.fuse)
                                   : FrameworkFusion(o.framework, options.precision);
  const Network network = LoadNetwork(o.model, SweepZooOptions(o));
  Device device = LoadDevice(o.device);
  if (!o.links.empty()) {
    const LinksFile links = ReadLinksJsonFile(o.links);
    ApplyLinks(device, links);
    for (size_t i = 0; i < links.links.size(); ++i) {
      const DeviceLink& l = links.links[i];
      std::cerr << fmt::format(
          "fitspeed: the {} link of {} comes from {}: '{}', {:.4g} B/s ({}), latency {:.4g} s "
          "({})\n",
          l.connects, device.name, o.links, l.name, l.bandwidth_bytes_per_s,
          links.sources.at(fmt::format("links[{}].bandwidth_bytes_per_s", i)), l.latency_s,
          links.sources.at(fmt::format("links[{}].latency_s", i)));
    }
  }
  if (!o.framework.empty()) {
    if (!o.from.empty()) {
      throw UsageError(
          "--framework and --from both calibrate the device: --from already fits what your own "
          "run says (framework included); give one of them");
    }
    const FrameworkProfile& profile = FindFrameworkProfile(o.framework);
    device = ApplyFrameworkProfile(device, profile);
    std::vector<std::string> values;
    for (const CalibratedParameter& p : profile.parameters) {
      values.push_back(fmt::format("{} {}", p.name, FormatSig(p.value, 4)));
    }
    std::cerr << fmt::format(
        "fitspeed: framework profile '{}' applied to {} ({}; fitted on {} published runs on {}; "
        "docs/validation.md, \"Framework profiles\"); the interval below is that of the "
        "framework profiles' predictions on GPUs they were not fitted on{}\n",
        profile.name, device.name, fmt::join(values, ", "), profile.cases,
        fmt::join(profile.devices, ", "),
        profile.devices.size() < 2
            ? fmt::format(" (other frameworks': '{}' has runs on one GPU only, so its profile "
                          "has never been tested on another)",
                          profile.name)
            : "");
  }
  // --from: B calibrated by transfer from a measurement on A (transfer_sweep.cc).
  std::optional<TransferRun> transfer;
  if (!o.from.empty()) {
    if (o.mean_tokens != 0 || o.mean_square_tokens != 0 || o.head_positions != 0) {
      throw UsageError(
          "--mean-tokens, --mean-square-tokens and --head-positions are not read with --from "
          "(the measured run is read as padded sequences with the default head)");
    }
    transfer = CalibrateFromRun(
        network, device, options,
        {o.from, o.from_device, o.model, o.seq_len, o.precision_given, o.layout_given});
    for (const std::string& note : transfer->notes) std::cerr << "fitspeed: " << note << "\n";
    device = transfer->calibration.target;
  }
  const DeviceSweepResult result = ModelSweep(network, device, options);
  const bool fittable = result.steps.size() >= 2;
  const FitResult fit = fittable ? Fit(result.Samples(), fit_options) : FitResult();
  // The interval from the model's out-of-sample errors on published cases
  // (fitspeed/device/intervals.h): those of the catalog model for this device
  // and precision; for a transfer, those of transferred predictions to a
  // device of this kind; with a framework profile, those of profiles on GPUs
  // they were not fitted on (the catalog's do not describe a calibrated device).
  const IntervalTable& table =
      o.intervals.empty() ? BuiltinIntervalTable() : ReadIntervalTableFile(o.intervals);
  const PredictionInterval interval =
      transfer               ? table.ForTransfer(device.kind, o.interval_level)
      : !o.framework.empty() ? table.ForFramework(device, options.precision, o.interval_level)
                             : table.For(device, options.precision, o.interval_level);
  if (transfer) {
    WriteTransferSweep(std::cout, *transfer, result, fit, format, o.layers, &interval);
  } else {
    WriteDeviceSweep(std::cout, result, fit, format, o.layers, &interval);
  }
  if (fittable && !o.plot_path.empty()) {
    WriteFitPlot(o.plot_path, fit,
                 fmt::format("{} modeled on {} ({}, {} device{})", network.name, device.name,
                             PrecisionName(options.precision), options.devices,
                             options.devices == 1 ? "" : "s"));
  }
  const int code = SweepFitExitCode(result.steps.size(), result.out_of_memory.empty(), fit);
  return transfer ? TransferExitCode(*transfer, code) : code;
}

// A transformer split (--tp ...): one step modeled on --device, its parts,
// memory and interval (fitspeed/llm/split.h, planner.h).
int RunLlmSweep(const SweepCommandOptions& o, bool devices_given) {
  if (o.device.empty()) {
    throw UsageError(
        "a transformer split (--tp, --pp, --micro-batch, ...) is modeled on a catalogued device: "
        "give --device (see `fitspeed devices`)");
  }
  if (o.batches != "auto" || !o.from.empty() || !o.framework.empty() || o.data_parallel.enabled ||
      o.layout_given || o.attention != "unfused" || !o.amp_ops.empty() || !o.fuse.empty() ||
      o.steps_per_execution != 1 || o.accumulation != 1 || o.overlap || o.input_rate != 0 ||
      !o.intervals.empty() || !o.plot_path.empty() || o.layers) {
    throw UsageError(
        "--batches, --from, --framework, --data-parallel, --layout, --attention, --amp-ops, "
        "--fuse, --steps-per-execution, --accumulation, --overlap, --input-rate, --intervals, "
        "--plot and --layers are for zoo networks; a transformer split takes --micro-batch and "
        "--global-batch (its accumulation is global / (micro-batch x dp))");
  }
  if (o.precision_given && (o.precision == "fp32" || o.precision == "tf32")) {
    throw UsageError(fmt::format(
        "--precision {}: a transformer split trains in mixed, bf16, fp16, fp8, int8 or fp4",
        o.precision));
  }
  TransformerConfig model = LoadTransformerLlmCli(o.model, "a split (--tp, --pp, ...)");
  ApplyDropoutLlmCli(model, o.dropout);
  const int tp = std::max(o.tp, 1), pp = std::max(o.pp, 1), cp = std::max(o.cp, 1);
  LlmCliOptions c;
  c.device = o.device;
  c.devices = devices_given ? o.devices : tp * pp * cp;
  c.devices_per_node = o.devices_per_node;
  c.links = o.links;
  c.seq_len = o.seq_len;
  c.precision = o.precision_given ? o.precision : "mixed";
  c.lora_rank = o.lora_rank;
  c.flash_attention = !o.no_flash;
  c.gradient_bytes = o.gradient_bytes;
  c.fp8_weights = o.fp8_weights;
  c.activation_fp8_store = o.activation_fp8_store;
  c.lora_dropout = o.lora_dropout;
  const LlmCluster cluster = MakeClusterLlmCli(c);
  const LlmTraining training = MakeTrainingLlmCli(c);
  LlmSplit split;
  split.tp = tp;
  split.pp = pp;
  split.vp = std::max(o.vp, 1);
  split.cp = cp;
  split.ep = std::max(o.ep, 1);
  split.dp = std::max(1, cluster.devices / (tp * pp * cp));  // ValidateSplit refuses a remainder
  split.micro_batch = o.micro_batch > 0 ? o.micro_batch : 1;
  split.global_batch = o.global_batch > 0 ? o.global_batch : split.micro_batch * split.dp;
  split.recompute = ParseRecompute(o.recompute_name.empty() ? "none" : o.recompute_name);
  split.sequence_parallel = o.sequence_parallel;
  split.zero = std::max(o.zero, 0);
  split.overlap_grad_reduce = !o.no_overlap_grad_reduce;
  const LlmCalibration calibration = LlmCalibrationFor(cluster.device);
  const LlmStep step = ModelLlmStep(model, cluster, training, split, calibration);
  const PredictionInterval interval = LlmInterval(cluster.device, o.interval_level);
  WriteLlmStep(std::cout, model, cluster, training, step, interval, calibration,
               ParseOutputFormat(o.output));
  return 0;
}

int RunSweep(SweepCommandOptions o, bool devices_given) {
  const bool unpadded = o.mean_tokens != 0 || o.mean_square_tokens != 0;
  if (o.llm || IsTransformerSpecLlmCli(o.model)) {
    if (unpadded || o.head_positions != 0) {
      throw UsageError(
          "--mean-tokens, --mean-square-tokens and --head-positions are for zoo sequence "
          "models (bert-*, gpt2*, tinyllama-*), not transformer splits");
    }
    return RunLlmSweep(o, devices_given);
  }
  if (!o.recompute_name.empty()) {
    if (o.recompute_name == "selective") {
      throw UsageError(
          "--recompute selective is for transformer splits (--tp ...); a zoo network recomputes "
          "whole segments (--recompute, or --recompute full)");
    }
    o.recompute = o.recompute_name == "full";
  }
  if (o.precision == "fp16" || o.precision == "int8" || o.precision == "fp4") {
    throw UsageError(fmt::format(
        "--precision {} is for transformer splits (--tp ...); a zoo network takes fp32, bf16, "
        "tf32, mixed or fp8",
        o.precision));
  }
  if (o.no_flash || o.no_overlap_grad_reduce || o.gradient_bytes != 2) {
    throw UsageError(
        "--no-flash, --no-overlap-grad-reduce and --gradient-bytes are for transformer "
        "splits (--tp ...)");
  }
  if ((!o.from.empty() || !o.from_device.empty()) && o.device.empty()) {
    throw UsageError("--from and --from-device predict the device of --device; give --device");
  }
  if (!o.from_device.empty() && o.from.empty()) {
    throw UsageError("--from-device names the device of a --from measurement; give --from");
  }
  if (!o.device.empty() && o.data_parallel.enabled) {
    throw UsageError(
        "--data-parallel measures on this host's MPI ranks; with --device, model data "
        "parallelism with --devices N");
  }
  if (!o.device.empty()) return RunDeviceSweep(o);
  if (unpadded) {
    throw UsageError(
        "--mean-tokens and --mean-square-tokens need --device (this host runs padded "
        "sequences)");
  }
  if (o.precision == "tf32" || o.precision == "mixed" || o.precision == "fp8") {
    throw UsageError(
        fmt::format("--precision {} needs --device (the host runs fp32 or bf16)", o.precision));
  }
  if (!o.framework.empty()) throw UsageError("--framework needs --device (a modeled device)");
  if (!o.links.empty() && !o.data_parallel.enabled) {
    throw UsageError("--links needs --device or --data-parallel");
  }
  if (o.devices != 1 || o.steps_per_execution != 1 || o.accumulation != 1 || o.recompute ||
      o.layout_given || o.input_rate != 0 || o.attention != "unfused" || !o.amp_ops.empty() ||
      !o.fuse.empty()) {
    throw UsageError(
        "--devices, --steps-per-execution, --accumulation, --recompute, --layout, --input-rate, "
        "--attention, --amp-ops and --fuse need --device");
  }
  if (o.devices_per_node != 0 || o.overlap ||
      (!o.data_parallel.enabled &&
       (o.data_parallel.bucket_mib != 25 || o.data_parallel.first_bucket_mib != 1))) {
    throw UsageError(
        "--devices-per-node and --overlap need --device; --bucket-mb and --first-bucket-mb "
        "need --device or --data-parallel");
  }
  const FitOptions fit_options = ToFitOptions(o.fit);
  const OutputFormat format = ParseOutputFormat(o.output);
  SweepOptions options;
  options.batches = ParseBatches(o.batches);
  options.auto_max_batch = o.max_batch;
  options.precision = ParsePrecision(o.precision, PrecisionContext::kHost);
  options.optimizer = ParseOptimizer(o.optimizer);
  options.backend = ParseBackend(o.backend);
  options.threads = o.threads;
  options.warmup_steps = o.warmup;
  options.min_repeats = o.min_repeats;
  options.max_repeats = std::max(options.max_repeats, o.min_repeats);
  options.min_time_s = o.min_time_s;
  options.memory_limit_bytes = o.memory_limit_gib * (1u << 30);
  const Network network = LoadNetwork(o.model, SweepZooOptions(o));
  if (o.data_parallel.enabled) {
    DataParallelCliOptions dp = o.data_parallel;
    dp.links = o.links;
    return RunDataParallelSweep(network, options, dp, fit_options, format, o.layers, o.plot_path,
                                o.progress);
  }

  ProgressLine progress(o.progress);
  options.progress = progress.SweepCallback(network.name);
  const SweepResult result = Sweep(network, options);
  progress.Clear();
  // One measured batch is a measurement, not a fit: print it without one.
  const bool fittable = result.measurements.size() >= 2;
  const FitResult fit = fittable ? Fit(result.Samples(), fit_options) : FitResult();
  WriteSweep(std::cout, result, fit, format, o.layers);
  if (fittable && !o.plot_path.empty()) {
    WriteFitPlot(o.plot_path, fit,
                 fmt::format("{} on {} ({}, {} thread{})", network.name, result.context.cpu_model,
                             PrecisionName(result.precision, PrecisionContext::kHost),
                             result.context.threads, result.context.threads == 1 ? "" : "s"));
  }
  return SweepFitExitCode(result.measurements.size(), result.skipped.empty(), fit);
}

}  // namespace

void SetupSweepCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SweepCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "sweep",
      "Run MODEL's training step (forward, backward, optimizer update) for real on this CPU "
      "with oneDNN at many batch sizes, fit v(b) = b/(b/v0 + t) and print the fit and the "
      "per-batch table (step time, samples/s, GFLOPS, % of the measured FP32 FMA peak); with "
      "--device NAME, model the step on a catalogued GPU/TPU instead (roofline per layer). With "
      "a transformer split (--tp, --pp, --vp, --cp, --ep, --micro-batch, --global-batch, --zero, "
      "--sequence-parallel, --lora-rank, or a transformer MODEL) and --device: one training "
      "step of the split modeled, its time by part, memory per GPU and interval (docs/llm.md, "
      "\"The CLI\")");
  command
      ->add_option("model", o->model,
                   "Zoo network (see `fitspeed models`) or network JSON file; or a transformer: "
                   "a built-in name (`fitspeed models --llm`), transformer:key=value,... or a "
                   "Hugging Face config.json")
      ->required();
  command->add_option("--seq-len", o->seq_len,
                      "Tokens per sequence of a sequence model (bert-*, gpt2*, tinyllama-*): "
                      "batches then count sequences, and tokens/s = sequences/s x seq-len; "
                      "default: the model's own. A transformer split: required");
  command->add_option(
      "--mean-tokens", o->mean_tokens,
      "With --device: sequences without padding (a framework that removes it, as NVIDIA's "
      "BERT with unpad or packing): the mean real tokens per sequence, 1 to --seq-len (or the "
      "model's longest). The dense layers run on the real tokens, attention within each "
      "sequence; the network is built at the rounded mean, a sample is still one sequence. "
      "MLPerf's BERT data: 254.43");
  command->add_option(
      "--mean-square-tokens", o->mean_square_tokens,
      "With --mean-tokens: the mean of the squared tokens per sequence, which sets the "
      "attention's work (a sequence of L tokens has L^2 scores per head); from mean^2 to "
      "mean x the longest sequence. Default mean^2 (every sequence of the mean length)");
  command->add_option(
      "--head-positions", o->head_positions,
      "bert-*: the positions per sequence the masked-LM head is computed on (the masked ones, "
      "gathered), 1 to the tokens per sequence. Default: 15% of the tokens, rounded up");
  command
      ->add_option("--batches", o->batches,
                   "Batch sizes: 1,2,4,... or A:B (A doubling up to B) or auto (double from 1 "
                   "until the throughput saturates or memory runs out)")
      ->capture_default_str();
  command
      ->add_option("--precision", o->precision,
                   "fp32, or bf16 (host mixed precision; AVX-512+); with --device: fp32, tf32, "
                   "mixed (FP16/BF16 tensor units) or fp8 (mixed, with dense layers and a fused "
                   "attention core in FP8 as Transformer Engine runs them). A transformer split: "
                   "mixed, bf16 or fp16 "
                   "(16-bit matrix units), fp8 (matrix products in FP8, the rest BF16, as "
                   "Transformer Engine runs them), int8 or fp4, on a device that has them; "
                   "default there: mixed")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16", "tf32", "mixed", "fp16", "fp8", "int8", "fp4"}))
      ->each([o](const std::string&) { o->precision_given = true; });
  command
      ->add_option("--device", o->device,
                   "Model the step on a catalogued device (see `fitspeed devices`) or a device "
                   "JSON file instead of running it on this CPU")
      ->check([](const std::string& v) { return v.empty() ? "empty device" : ""; });
  command->add_option(
      "--from", o->from,
      "With --device: transfer from your own run. A measurement of MODEL on --from-device: a "
      "training log (any format `fitspeed fit` reads; PATH@key=value gives what it lacks, "
      "precision and, for tensor-unit precisions, layout=nchw|nhwc), a cases CSV or a host "
      "sweep CSV. The step model is calibrated on it (the host overhead and the efficiency "
      "scale its precision uses; one parameter per measured batch) and --device is modeled "
      "with what was fitted (docs/devices.md, \"Transfer from your own run\")");
  command->add_option("--from-device", o->from_device,
                      "The device the --from measurement ran on: a catalog name (see `fitspeed "
                      "devices`, `host` for a host sweep) or a device JSON file");
  command->add_option(
      "--framework", o->framework,
      "With --device: apply the profile of this framework (pytorch, tensorflow, "
      "mxnet, keras, paddlepaddle, caffe: its efficiency scales and host overhead, "
      "fitted on its published GPU runs; `fitspeed validate --frameworks` shows them "
      "and their accuracy on a GPU left out)");
  command->add_option("--links", o->links,
                      "With --device: a links file (schema fitspeed.links/1, e.g. written by "
                      "`fitspeed linkbench`; docs/devices.md) whose links replace the device's "
                      "links that connect the same thing (\"devices\": the data-parallel "
                      "all-reduce); bandwidth in bytes/s per direction, latency in s per message. "
                      "With --data-parallel: the links that model the measured steps' all-reduces "
                      "in a second table (see --model-ranks). A transformer split: applied before "
                      "the cluster is made (\"devices\": inside a scale-up domain, \"network\": "
                      "between domains)");
  command
      ->add_option("--interval-level", o->interval_level,
                   "With --device: level of the prediction interval on every modeled "
                   "throughput and step time, from the model's out-of-sample errors on "
                   "published cases of the same device kind and precision group "
                   "(docs/validation.md, \"Prediction intervals\"); a transformer split: the "
                   "interval of LlmInterval (docs/llm.md)")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 0.99));
  command->add_option("--intervals", o->intervals,
                      "With --device: an intervals file (schema fitspeed.intervals/1, written by "
                      "`fitspeed validate --intervals-out`) instead of the built-in errors");
  command
      ->add_option(
          "--devices", o->devices,
          "With --device: data-parallel devices sharing each batch (gradients "
          "all-reduced over the device's link, ring formula). A transformer split: the devices in "
          "all, tp x pp x cp x dp (default tp x pp x cp)")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  command
      ->add_option(
          "--devices-per-node", o->devices_per_node,
          "With --device: devices per node (0: all in one node). Below --devices "
          "(which it must divide) the all-reduce is two-level: a ring in each node over "
          "the devices link, then a ring over the nodes over the network link, which "
          "a links file gives (--links; `fitspeed linkbench --from` writes one from "
          "nccl-tests or osu_allreduce output). A transformer split: the devices per scale-up "
          "domain (0: the device's scale_up_domain, else 8)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65536));
  command->add_flag("--overlap,!--no-overlap", o->overlap,
                    "With --device: all-reduce the gradients as PyTorch DDP does, in buckets "
                    "(--bucket-mb, --first-bucket-mb) each started when the backward pass has "
                    "produced its gradients, so that only what outlasts the backward pass is "
                    "exposed; for links measured with `fitspeed linkbench`. Default "
                    "(--no-overlap): one all-reduce after the backward pass, all of it exposed "
                    "(docs/devices.md, \"Step model\")");
  command
      ->add_option("--layout", o->layout,
                   "With --device: the framework's activation layout, nchw (PyTorch's default) "
                   "or nhwc (channels_last; TensorFlow moves FP16 convolutions to it). On a GPU "
                   "whose tensor cores work in NHWC, tf32/mixed convolutions in nchw pay "
                   "transposes of their inputs, outputs and kernels")
      ->capture_default_str()
      ->check(CLI::IsMember({"nchw", "nhwc"}))
      ->each([o](const std::string&) { o->layout_given = true; });
  command
      ->add_option("--attention", o->attention,
                   "With --device: how attention runs in a transformer, unfused (scores, "
                   "softmax and dropout each a kernel through memory: PyTorch's eager "
                   "attention) or fused (one FlashAttention-style kernel per pass: {H, T, T} "
                   "never in memory, scores recomputed in the backward pass)")
      ->capture_default_str()
      ->check(CLI::IsMember({"unfused", "fused"}));
  command
      ->add_option("--amp-ops", o->amp_ops,
                   "With --device --precision mixed: which layers automatic mixed precision "
                   "keeps in FP32, each with a cast up before it and down after it: pytorch "
                   "(autocast: layer_norm, rms_norm, softmax, softmax_cross_entropy) or "
                   "tensorflow (the AMP graph rewrite: layer_norm, rms_norm, gelu, "
                   "softmax_cross_entropy), or none (the model cast to 16 bits whole, as apex "
                   "amp O2 or model.half() run it: norms and losses read and write 16 bits, "
                   "no casts, gradients all-reduced in 16 bits; NVIDIA's MLPerf BERT). Default: "
                   "tensorflow with --framework "
                   "tensorflow or keras, else pytorch")
      ->check(CLI::IsMember({"pytorch", "tensorflow", "none"}));
  command
      ->add_option("--fuse", o->fuse,
                   "With --device: element-wise work fused into the batch norms' kernels: none "
                   "(each layer its own kernel, PyTorch eager) or bn-relu-add (a ReLU reading a "
                   "batch norm, and a residual add with its ReLU, run inside the batch norm's "
                   "kernel: cuDNN's fused batch norm, as NVIDIA's MXNet ResNet-50 runs FP16). "
                   "Default: bn-relu-add with --framework mxnet --precision mixed, else none")
      ->check(CLI::IsMember({"none", "bn-relu-add"}));
  command
      ->add_option("--steps-per-execution", o->steps_per_execution,
                   "With --device: training steps per host call (Keras steps_per_execution)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command
      ->add_option("--accumulation", o->accumulation,
                   "With --device: gradient accumulation, micro-batches per optimizer step. "
                   "Each batch of --batches is one micro-batch (forward and backward, one host "
                   "call); the all-reduce and the update run once per step, which trains "
                   "accumulation x batch samples (the fit's batch)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command
      ->add_option("--recompute", o->recompute_name,
                   "Activation recomputation. With --device and a zoo network (bare --recompute "
                   "or full): keep only the tensors where the network is cut to one live tensor "
                   "(on a transformer's residual stream between its attention and MLP "
                   "sub-blocks, after residual blocks) and run each segment's forward again "
                   "before its backward; less activation memory, about one more forward pass. "
                   "A transformer split: none (default), selective (the attention core "
                   "recomputed, Korthikanti et al. 2022) or full (each layer's forward again)")
      ->expected(0, 1)
      ->default_str("")
      ->check(CLI::IsMember({"", "none", "selective", "full"}));
  command
      ->add_option("--input-rate", o->input_rate,
                   "With --device: samples/s the input pipeline (read, decode, augment, copy) "
                   "delivers to each device; a step takes the longer of the device's step and "
                   "per-device batch / rate. 0: unlimited")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command
      ->add_option("--optimizer", o->optimizer,
                   "sgd, sgd-momentum (alias momentum), adam or rmsprop (with momentum)")
      ->capture_default_str();
  command->add_option("--backend", o->backend, "onednn, or eigen (the reference, slower)")
      ->capture_default_str()
      ->check(CLI::IsMember({"onednn", "eigen"}));
  command->add_option("--threads", o->threads, "Kernel threads; 0: every available CPU")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  command->add_option("--warmup", o->warmup, "Steps run before timing each batch")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command->add_option("--min-repeats", o->min_repeats, "Timed steps per batch, at least")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  command
      ->add_option("--min-time", o->min_time_s,
                   "Seconds of timed steps per batch, at least (after --min-repeats)")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command->add_option("--max-batch", o->max_batch, "Largest batch of --batches auto")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMaxSweepBatch));
  command
      ->add_option("--memory-limit", o->memory_limit_gib,
                   "Skip batches whose step needs more GiB; 0: 80% of the available memory")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command->add_flag("--layers", o->layers,
                    "Also print the per-layer time by pass at the largest batch (table output; "
                    "with --device also in JSON, each layer marked compute- or memory-bound)");
  // The transformer split (docs/llm.md, "The CLI"): any of these takes that path.
  command
      ->add_option("--tp", o->tp,
                   "Transformer split: tensor-parallel size (Megatron's "
                   "column/row split; divides the heads). Default 1")
      ->check(CLI::Range(1, 65536));
  command
      ->add_option("--pp", o->pp,
                   "Transformer split: pipeline stages (divides the layers; "
                   "1F1B schedule). Default 1")
      ->check(CLI::Range(1, 65536));
  command
      ->add_option("--vp", o->vp,
                   "Transformer split: virtual stages per pipeline stage "
                   "(interleaved 1F1B; needs --pp > 1). Default 1")
      ->check(CLI::Range(1, 65536));
  command
      ->add_option("--cp", o->cp,
                   "Transformer split: context-parallel size (ring attention; "
                   "2 x cp divides --seq-len). Default 1")
      ->check(CLI::Range(1, 65536));
  command
      ->add_option("--ep", o->ep,
                   "Transformer split: expert-parallel size (MoE models; "
                   "divides the experts and dp x cp). Default 1")
      ->check(CLI::Range(1, 65536));
  command
      ->add_option("--micro-batch", o->micro_batch,
                   "Transformer split: sequences per micro-batch per data-parallel rank. "
                   "Default 1")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command
      ->add_option("--global-batch", o->global_batch,
                   "Transformer split: sequences per optimizer step, a multiple of "
                   "micro-batch x dp (dp = devices / (tp x pp x cp)). Default: micro-batch x dp")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command
      ->add_option("--zero", o->zero,
                   "Transformer split: ZeRO stage, 0 (DDP), 1 (optimizer state sharded over "
                   "dp), 2 (+ gradients), 3 (+ weights, FSDP). Default 0")
      ->check(CLI::Range(0, 3));
  command->add_flag("--sequence-parallel", o->sequence_parallel,
                    "Transformer split: Megatron's sequence parallelism (norms and dropout split "
                    "over tp; reduce-scatter + all-gather in place of all-reduce)");
  command
      ->add_option("--lora-rank", o->lora_rank,
                   "Transformer split: LoRA adapters of this rank on every attention and "
                   "feed-forward matrix of a frozen base; 0: full training (default)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  command->add_flag("--fp8-weights", o->fp8_weights,
                    "Transformer split with --precision fp8: the weights held in FP8 alone "
                    "(Transformer Engine's FP8 parameters, NeMo's fp8_params), 1 byte each "
                    "and no 16-bit copy: memory only");
  command->add_flag("--lora-dropout", o->lora_dropout, kLoraDropoutHelpLlmCli);
  command->add_flag("--activation-fp8-store", o->activation_fp8_store,
                    kActivationFp8StoreHelpLlmCli);
  command->add_option("--dropout", o->dropout, kDropoutHelpLlmCli)
      ->check(CLI::IsMember({"on", "off"}));
  command->add_flag("--no-flash", o->no_flash,
                    "Transformer split: attention without flash attention (score matrices in "
                    "memory, Megatron's kernels before FlashAttention)");
  command->add_flag("--no-overlap-grad-reduce", o->no_overlap_grad_reduce,
                    "Transformer split: the gradient reduction runs after the last micro-batch, "
                    "exposed (default: overlapped with the backward pass)");
  command
      ->add_option("--gradient-bytes", o->gradient_bytes,
                   "Transformer split: bytes per gradient element reduced and accumulated, 2 "
                   "(16-bit, DeepSpeed's and DDP's default) or 4 (Megatron's FP32 main_grad)")
      ->capture_default_str();
  AddDataParallelOptions(*command, o->data_parallel);
  AddFitOptions(*command, o->fit);
  AddOutputOption(*command, o->output);
  command->add_option("--plot", o->plot_path,
                      "Also write an SVG plot of the measured points and the fitted curve");
  AddProgressOption(*command, o->progress);
  command->callback([o, command, &exit_code] {
    for (const char* name :
         {"--tp", "--pp", "--vp", "--cp", "--ep", "--micro-batch", "--global-batch", "--zero",
          "--sequence-parallel", "--lora-rank", "--fp8-weights", "--dropout", "--lora-dropout",
          "--activation-fp8-store"}) {
      if (command->count(name) > 0) o->llm = true;
    }
    if (command->count("--recompute") > 0 && o->recompute_name.empty()) o->recompute_name = "full";
    exit_code = RunSweep(*o, command->count("--devices") > 0);
  });
}

}  // namespace fitspeed::cli
