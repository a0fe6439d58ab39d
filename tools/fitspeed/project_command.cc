// `fitspeed project`: epoch, device and cost projection tables from a fit, a
// fit JSON file, numbers, or per-epoch logs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "command.h"
#include "core/input_file.h"
#include "core/table.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/device.h"
#include "fitspeed/project/config.h"
#include "fitspeed/project/model_params.h"
#include "fitspeed/project/report.h"
#include "fitspeed/project/scaling.h"
#include "fitspeed/project/whatif.h"
#include "fitspeed/scenario/project.h"
#include "project/units.h"
#include "project_options.h"

namespace fitspeed::cli {

// --- Shared with plan_command.cc (declared in project_options.h) -----------

void AddLawSourceOptions(CLI::App& command, LawSourceOptions& o) {
  command.add_option("--fit", o.fit_json,
                     "Fit JSON file written by `fitspeed fit --output json` (schema "
                     "fitspeed.fit/1); one configuration per fitted group");
  command.add_option(
      "--v0", o.v0, "Ideal throughput v0 of the law, samples/s of all devices together (with --t)");
  command.add_option("--t", o.t, "Fixed time per step t of the law, seconds (with --v0)");
  command.add_option("--label", o.label,
                     "Name of the --v0/--t configuration (a device name; also the key of its "
                     "--price)");
  command
      .add_option("--law-devices", o.law_devices,
                  "Devices the --v0/--t law was measured on (its v0 covers them all)")
      ->capture_default_str()
      ->check(PositiveFinite());
  command
      .add_option("--samples", o.samples_per_epoch,
                  "Training samples per epoch N (default: the logs' samples per epoch)")
      ->check(PositiveFinite());
  command.add_flag("--drop-remainder", o.drop_remainder,
                   "Epochs have floor(N/b) steps, the remainder dropped (TPU input pipelines, "
                   "fit_generator); default ceil(N/b) steps with a partial last batch");
  command
      .add_option("--batch", o.batches,
                  "Global batch sizes (samples per step, all devices), comma-separated "
                  "(default: the batches measured for each configuration)")
      ->delimiter(',')
      ->check(PositiveFinite());
  command.add_option("--startup", o.startup,
                     "Time before epoch 1 (build, compile), e.g. 90s, 2m (default 0)");
  command.add_option("--first-epoch-extra", o.first_epoch_extra,
                     "Time epoch 1 takes beyond a steady epoch (compilation, warm-up), e.g. 45s");
  command
      .add_option("--price", o.prices,
                  "Price per device-hour: PRICE for every configuration or LABEL=PRICE for one "
                  "(repeatable); adds a cost to every row")
      ->allow_extra_args(false);
}

void AddScalingOptions(CLI::App& command, ScalingCliOptions& o) {
  command
      .add_option("--devices", o.devices,
                  "Device counts to scale single-device configurations to, comma-separated "
                  "(data parallel)")
      ->delimiter(',')
      ->check(PositiveFinite());
  command
      .add_option("--allreduce", o.allreduce,
                  "Gradient all-reduce: ring (2(n-1)/n S/B + 2(n-1)a), tree (2 ceil(log2 n)(a + "
                  "S/B)) or hierarchical (in-node ring, then a ring between nodes)")
      ->capture_default_str()
      ->check(CLI::IsMember({"ring", "tree", "hierarchical"}));
  command.add_option("--intra-bw", o.intra_bw,
                     "Bandwidth between devices of a node, with a unit: 12GB/s, 100Gbit/s, "
                     "900MiB/s");
  command.add_option("--intra-latency", o.intra_latency,
                     "Latency per message between devices of a node, e.g. 5us (default 0)");
  command.add_option("--inter-bw", o.inter_bw,
                     "Bandwidth between nodes (one network interface per node), e.g. 50Gbit/s");
  command.add_option("--inter-latency", o.inter_latency,
                     "Latency per message between nodes, e.g. 50us (default 0)");
  command.add_option("--links", o.links,
                     "Links file (schema fitspeed.links/1, e.g. written by `fitspeed linkbench`; "
                     "docs/devices.md): its \"devices\" link sets the in-node bandwidth (bytes/s "
                     "per direction) and latency (s per message), its \"network\" link those "
                     "between nodes, instead of --intra-bw/--intra-latency and "
                     "--inter-bw/--inter-latency");
  command
      .add_option("--devices-per-node", o.devices_per_node,
                  "Devices per node; 0: all devices in one node")
      ->capture_default_str()
      ->check(NonNegativeFinite());
  command
      .add_option("--overlap", o.overlap,
                  "Overlap exponent g >= 1 of compute and communication: T = (Tc^g + Tn^g)^(1/g); "
                  "1 = none (Pollux, OSDI'21)")
      ->capture_default_str()
      ->check(FiniteRange(1.0, 1e6));
  command
      .add_option("--params", o.params, "Model parameters (gradient elements) all-reduced per step")
      ->check(PositiveFinite());
  command.add_option("--model", o.model,
                     "A published model for --params: resnet50 (imagenet), resnet18-cifar "
                     "(cifar10), bert-base-squad (bert), deepspeech2, neumf (ncf), yolov3-voc");
  command
      .add_option("--bytes-per-param", o.bytes_per_param,
                  "Bytes per gradient element: 4 (FP32), 2 (FP16/BF16)")
      ->capture_default_str()
      ->check(PositiveFinite());
  command
      .add_option("--gradient-bytes", o.gradient_bytes,
                  "Bytes all-reduced per step, instead of --params/--model")
      ->check(PositiveFinite());
  command.add_flag("--comm-from-fit", o.comm_from_fit,
                   "Take the in-node communication time from the fits on several device counts: "
                   "t(n) - t(1) fitted to the ring's shape, extrapolated to larger n");
}

LawSource ToLawSource(const InputOptions& input, const FitCliOptions& fit,
                      const LawSourceOptions& o) {
  LawSource source;
  const bool numbers = !std::isnan(o.v0) || !std::isnan(o.t);
  const int sources = numbers + !o.fit_json.empty() + !input.inputs.empty();
  if (sources != 1) {
    throw UsageError(
        "give exactly one source of the law: logs (INPUT...), --fit FILE.json, or "
        "--v0 and --t");
  }
  if (numbers) {
    if (std::isnan(o.v0) || std::isnan(o.t)) throw UsageError("--v0 and --t go together");
    SpeedLaw law;
    law.v0_sps = o.v0;
    law.t_s = o.t;
    source.law = law;
    source.label = o.label;
    source.law_devices = o.law_devices;
  } else if (!o.fit_json.empty()) {
    source.fit_json = ReadInputFile(o.fit_json, "the fit file");
    source.fit_json_name = o.fit_json;
  } else {
    source.samples = LoadSamples(input);
    source.fit = ToFitOptions(fit);
  }
  source.batches = o.batches;
  return source;
}

ScalingSpec ToScalingSpec(const ScalingCliOptions& o) {
  ScalingSpec s;
  s.devices = o.devices;
  s.allreduce = ParseAllReduce(o.allreduce);
  if (!o.intra_bw.empty()) s.intra_bandwidth = ParseBandwidth(o.intra_bw, "--intra-bw");
  if (!o.intra_latency.empty()) s.intra_latency = ParseSeconds(o.intra_latency, "--intra-latency");
  if (!o.inter_bw.empty()) s.inter_bandwidth = ParseBandwidth(o.inter_bw, "--inter-bw");
  if (!o.inter_latency.empty()) s.inter_latency = ParseSeconds(o.inter_latency, "--inter-latency");
  s.links = o.links;
  s.comm_from_fit = o.comm_from_fit;
  s.devices_per_node = o.devices_per_node;
  s.overlap = o.overlap;
  if (!std::isnan(o.gradient_bytes)) s.gradient_bytes = o.gradient_bytes;
  if (!std::isnan(o.params)) s.params = o.params;
  s.model = o.model;
  s.bytes_per_param = o.bytes_per_param;
  return s;
}

// --- project ----------------------------------------------------------------

namespace {

struct ProjectCommandOptions {
  InputOptions input;
  FitCliOptions fit;
  LawSourceOptions law;
  ScalingCliOptions scaling;
  std::string output = "table";
  std::vector<double> epochs = DefaultEpochCounts();
  bool measured = false;
  std::string scaling_mode = "weak";
  int max_devices = 0;
  double min_efficiency = 0.5;
  // Validation pass.
  double val_samples = 0;
  double val_batch = 0;
  double val_v0 = NAN;
  double val_t = NAN;
  double val_forward_fraction = 1.0 / 3.0;
  double val_fixed_fraction = 1.0 / 3.0;
  // What-ifs.
  double scale_v0 = 1;
  double scale_t = 1;
  std::vector<std::string> spe_points;  // K=T
  double spe_k = 0;
};

int RunProject(ProjectCommandOptions o) {
  ProjectRequest r;
  r.measured = o.measured;
  if (o.measured) {
    if (o.input.inputs.empty() || !o.law.fit_json.empty() || !std::isnan(o.law.v0)) {
      throw UsageError(
          "--measured projects per-epoch logs given as INPUT...; not with --fit, "
          "--v0 or --t");
    }
    o.input.skip_epochs = 0;  // epoch 1 is needed
    r.source.samples = LoadSamples(o.input);
  } else {
    r.source = ToLawSource(o.input, o.fit, o.law);
    r.validation = MakeValidationSpec(o.val_samples, o.val_batch, o.val_v0, o.val_t,
                                      o.val_forward_fraction, o.val_fixed_fraction);
    r.whatifs = WhatIfs{o.scale_v0, o.scale_t, std::nullopt, o.spe_k};
    if (!o.spe_points.empty()) {
      if (!(o.spe_k >= 1)) throw UsageError("--spe-t needs --spe-k K >= 1 to project");
      r.whatifs.host = FitHostOverhead(ParseFixedTimesAtK(o.spe_points, "--spe-t"));
    }
  }
  if (!std::isnan(o.law.samples_per_epoch)) r.samples_per_epoch = o.law.samples_per_epoch;
  r.steps_rule = o.law.drop_remainder ? StepsRule::kDropRemainder : StepsRule::kKeepPartial;
  if (!o.law.startup.empty()) r.startup_s = ParseSeconds(o.law.startup, "--startup");
  if (!o.law.first_epoch_extra.empty()) {
    r.first_epoch_extra_s = ParseSeconds(o.law.first_epoch_extra, "--first-epoch-extra");
  }
  r.scaling = ToScalingSpec(o.scaling);
  r.weak = o.scaling_mode == "weak" || o.scaling_mode == "both";
  r.strong = o.scaling_mode == "strong" || o.scaling_mode == "both";
  r.max_devices = o.max_devices;
  r.min_efficiency = o.min_efficiency;
  r.options.epochs = o.epochs;
  r.options.confidence = o.fit.confidence;
  r.options.prices = ParsePrices(o.law.prices);
  return PrintAnswer(r.Run(), o.output);
}

}  // namespace

void SetupProjectCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ProjectCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "project",
      "Project training time and cost: total = startup + first-epoch extra + E x epoch "
      "(+ validation) for E = 10 ... 2000 epochs, per configuration and batch, with a 95% "
      "interval from the fit's covariance; optionally scaled to more devices (weak/strong "
      "scaling with ring, tree or hierarchical all-reduce). The law comes from logs (fitted "
      "first), a fit JSON (--fit) or numbers (--v0, --t); --measured projects per-epoch logs "
      "directly.");
  AddInputOptions(*command, options->input, /*inputs_required=*/false);
  AddFitOptions(*command, options->fit);
  AddLawSourceOptions(*command, options->law);
  AddScalingOptions(*command, options->scaling);
  AddOutputOption(*command, options->output, HtmlReport::kYes);
  command->add_option("--epochs", options->epochs, "Epoch counts to project, comma-separated")
      ->delimiter(',')
      ->check(PositiveFinite())
      ->default_str("10,20,50,100,200,500,1000,2000");
  command->add_flag("--measured", options->measured,
                    "INPUTs are per-epoch logs: startup = time before epoch 1 (a CSV column "
                    "initial_time_s, or --startup), steady epoch = mean of epochs 2..E, "
                    "first-epoch extra = epoch 1 - steady; no fit");
  command
      ->add_option("--scaling", options->scaling_mode,
                   "With --devices: weak (per-device batch fixed, --batch per device), strong "
                   "(global batch fixed) or both")
      ->capture_default_str()
      ->check(CLI::IsMember({"weak", "strong", "both"}));
  command
      ->add_option("--max-devices", options->max_devices,
                   "With --devices: also report the device count (1..N) where strong scaling of "
                   "each batch stops paying")
      ->check(NonNegativeFinite());
  command
      ->add_option("--min-efficiency", options->min_efficiency,
                   "With --max-devices: the scaling efficiency still worth paying for")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 1.0));
  command
      ->add_option("--val-samples", options->val_samples,
                   "Validation samples per epoch (0: no validation pass)")
      ->check(NonNegativeFinite());
  command
      ->add_option("--val-batch", options->val_batch,
                   "Validation batch (default: the training batch)")
      ->check(NonNegativeFinite());
  command
      ->add_option("--val-v0", options->val_v0,
                   "Measured forward-only v0 of the validation pass, samples/s (with --val-t)")
      ->check(PositiveFinite());
  command
      ->add_option("--val-t", options->val_t,
                   "Measured fixed time per validation step, s (with --val-v0)")
      ->check(NonNegativeFinite());
  command
      ->add_option("--val-forward-fraction", options->val_forward_fraction,
                   "Without --val-v0: validation time per sample as a fraction of training's "
                   "(assumption: forward ~ 1/3 of the training FLOPs)")
      ->capture_default_str()
      ->check(FiniteRange(0.0, 1.0));
  command
      ->add_option("--val-fixed-fraction", options->val_fixed_fraction,
                   "Without --val-t: validation fixed time per step as a fraction of t "
                   "(assumption: no optimizer update or all-reduce)")
      ->capture_default_str()
      ->check(FiniteRange(0.0, 1.0));
  command
      ->add_option("--scale-v0", options->scale_v0,
                   "What-if: also project with v0 times this factor (e.g. 1.8 for mixed "
                   "precision)")
      ->check(PositiveFinite());
  command
      ->add_option("--scale-t", options->scale_t,
                   "What-if: also project with t times this factor (e.g. 0.5 for a faster "
                   "all-reduce)")
      ->check(PositiveFinite());
  command
      ->add_option("--spe-t", options->spe_points,
                   "Steps per call: fixed time t measured at K steps per call, as K=SECONDS, "
                   "comma-separated (>= 2 distinct K); fits t(k) = t_device + t_host/k")
      ->delimiter(',');
  command->add_option("--spe-k", options->spe_k,
                      "With --spe-t: also project at this many steps per call");
  command->callback([options, &exit_code] { exit_code = RunProject(*options); });
}

}  // namespace fitspeed::cli
