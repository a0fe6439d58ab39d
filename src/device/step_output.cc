// Writers of a modeled sweep: text report, CSV and JSON (docs/devices.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "core/finite.h"
#include "core/model_error_json.h"
#include "core/table.h"
#include "device/conv_algorithm.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/device/step_model.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

std::string Gib(double bytes) { return FormatSig(bytes / (1u << 30), 4); }

const char* Bound(bool memory_bound) { return memory_bound ? "memory" : "compute"; }

// The algorithm a layer's matrix work runs with: a convolution's (Winograd when
// its forward pass is, src/device/conv_algorithm.h; "depthwise" for a grouped one
// off the matrix units), "gemm" for other matrix layers, "fused-into-bn" for a
// layer run inside a batch norm's kernel (DeviceModelOptions::fusion), "-" for
// the rest.
const char* Algorithm(const LayerTime& t) {
  if (t.fused != FusedRole::kNone) return "fused-into-bn";
  if (!t.matrix) return t.kind == "conv2d" ? "depthwise" : "-";
  if (t.kind != "conv2d") return "gemm";
  return ConvAlgorithmName(t.passes[static_cast<size_t>(Pass::kForward)].winograd
                               ? ConvAlgorithm::kWinogradF2x2_3x3
                               : ConvAlgorithm::kImplicitGemm);
}

// The interval when one was given and is available, else nullptr.
const PredictionInterval* Usable(const PredictionInterval* interval) {
  return interval != nullptr && interval->available ? interval : nullptr;
}

// "model_interval" of the JSON: the interval and the errors it came from.
ordered_json IntervalJson(const PredictionInterval* interval) {
  if (interval == nullptr) {
    return {{"available", false}, {"reason", "no interval was asked for"}};
  }
  ordered_json j = {
      {"available", interval->available},
      {"reason", interval->available ? ordered_json(nullptr) : ordered_json(interval->reason)},
      {"basis", interval->basis},
      {"level", interval->level},
      {"cases", interval->cases},
      {"sources", interval->sources},
      {"min_sources", interval->min_sources},
      {"low_factor",
       interval->available ? ordered_json(interval->low_factor) : ordered_json(nullptr)},
      {"high_factor",
       interval->available ? ordered_json(interval->high_factor) : ordered_json(nullptr)},
      {"median_log_ratio",
       interval->available ? ordered_json(interval->median_log_ratio) : ordered_json(nullptr)},
      {"log_ratio", "ln(measured / predicted throughput), out-of-sample"},
      {"errors", ModelErrorsToJson<json>(interval->errors)}};
  return j;
}

// Each publisher's median case in the interval's errors, as a throughput ratio
// measured / modeled, slowest first: how far each publisher's setups ran from
// the point estimate ("Baidu PaddlePaddle 0.55x, NVIDIA 0.97x").
std::string PublisherSpread(const PredictionInterval& interval) {
  std::map<std::string, std::vector<double>> by_publisher;
  for (const ModelError& e : interval.errors) by_publisher[e.source].push_back(e.log_ratio);
  std::vector<std::pair<double, std::string>> medians;
  for (auto& [publisher, ratios] : by_publisher) {
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    const double m = n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
    medians.emplace_back(m, publisher);
  }
  std::sort(medians.begin(), medians.end());
  std::vector<std::string> parts;
  for (const auto& [m, publisher] : medians) {
    parts.push_back(fmt::format("{} {}x", publisher, FormatSig(std::exp(m), 3)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The table's header line about the interval.
std::string IntervalNote(const PredictionInterval* interval) {
  if (interval == nullptr) return "";
  if (!interval->available) {
    return fmt::format("interval: none ({})\n\n", interval->reason);
  }
  return fmt::format(
      "interval: {:.0f}% prediction interval (samples/s_{:.0f}%, step_ms_{:.0f}%) = the modeled "
      "throughput x [{}, {}]: the split conformal interval of the model's out-of-sample errors "
      "on {} published cases of class {} from {} publishers, weighted equally (docs/validation.md, "
      "\"Prediction intervals\"); a median case ran at {}x the modeled speed. The point "
      "estimate is the catalog device as published kernel timings describe it: what a tuned "
      "harness gets; each publisher's median case ran at {} of it\n\n",
      100 * interval->level, 100 * interval->level, 100 * interval->level,
      FormatSig(interval->low_factor, 3), FormatSig(interval->high_factor, 3), interval->cases,
      interval->basis, interval->sources, FormatSig(std::exp(interval->median_log_ratio), 3),
      PublisherSpread(*interval));
}

ordered_json StepJson(const DeviceSweepResult& sweep, const ModeledStep& s, bool with_layers,
                      const PredictionInterval* interval) {
  ordered_json j = {
      {"batch", s.batch},
      {"devices", s.devices},
      {"per_device_batch", FiniteOrNull<ordered_json>(s.per_device_batch)},
      {"per_core_batch", s.per_core_batch},
      {"step_time_s", FiniteOrNull<ordered_json>(s.step_time_s)},
      {"throughput_sps", FiniteOrNull<ordered_json>(s.throughput_sps)},
      {"compute_s", FiniteOrNull<ordered_json>(s.compute_s)},
      {"recompute_s", FiniteOrNull<ordered_json>(s.recompute_s)},
      {"layout_s", FiniteOrNull<ordered_json>(s.layout_s)},
      {"cast_s", FiniteOrNull<ordered_json>(s.cast_s)},
      {"update_s", FiniteOrNull<ordered_json>(s.update_s)},
      {"comm_s", FiniteOrNull<ordered_json>(s.comm_s)},
      {"exposed_comm_s", FiniteOrNull<ordered_json>(s.exposed_comm_s)},
      {"comm_buckets", s.comm_buckets},
      {"host_s", FiniteOrNull<ordered_json>(s.host_s)},
      {"device_step_s", FiniteOrNull<ordered_json>(s.device_step_s)},
      {"input_s", FiniteOrNull<ordered_json>(s.input_s)},
      {"input_bound", s.input_bound},
      {"cost_per_million_samples", sweep.CostPerMillionSamples(s)
                                       ? ordered_json(*sweep.CostPerMillionSamples(s))
                                       : ordered_json(nullptr)},
      {"step_flops", FiniteOrNull<ordered_json>(s.step_flops)},
      {"mfu", FiniteOrNull<ordered_json>(s.mfu)},
      {"tokens_per_s", sweep.tokens_per_sample > 0
                           ? FiniteOrNull<ordered_json>(
                                 s.throughput_sps * static_cast<double>(sweep.tokens_per_sample))
                           : ordered_json(nullptr)},
      {"memory_bytes", FiniteOrNull<ordered_json>(s.memory_bytes)},
      {"memory_capacity_bytes", FiniteOrNull<ordered_json>(s.memory_capacity_bytes)},
      {"fits", s.fits}};
  if (const PredictionInterval* i = Usable(interval)) {
    j["throughput_interval_sps"] = {s.throughput_sps * i->low_factor,
                                    s.throughput_sps * i->high_factor};
    j["step_time_interval_s"] = {s.step_time_s / i->high_factor, s.step_time_s / i->low_factor};
  } else {
    j["throughput_interval_sps"] = nullptr;
    j["step_time_interval_s"] = nullptr;
  }
  if (with_layers) {
    ordered_json layers = ordered_json::array();
    for (const LayerTime& t : s.layers) {
      if (t.kind == "input") continue;
      ordered_json passes = ordered_json::object();
      for (Pass p : kAllPasses) {
        const PassTime& pt = t.passes[static_cast<size_t>(p)];
        passes[PassName(p)] = {{"time_s", FiniteOrNull<ordered_json>(pt.time_s)},
                               {"flops", FiniteOrNull<ordered_json>(pt.flops)},
                               {"bytes", FiniteOrNull<ordered_json>(pt.bytes)},
                               {"bound", Bound(pt.memory_bound())},
                               {"layout_s", FiniteOrNull<ordered_json>(pt.layout_s)},
                               {"layout_bytes", FiniteOrNull<ordered_json>(pt.layout_bytes)},
                               {"winograd", pt.winograd},
                               {"algorithm_flops", FiniteOrNull<ordered_json>(pt.algorithm_flops)},
                               {"cast_s", FiniteOrNull<ordered_json>(pt.cast_s)},
                               {"cast_bytes", FiniteOrNull<ordered_json>(pt.cast_bytes)}};
      }
      layers.push_back({{"name", t.name},
                        {"kind", t.kind},
                        {"matrix", t.matrix},
                        {"algorithm", Algorithm(t)},
                        {"padding", FiniteOrNull<ordered_json>(t.padding)},
                        {"time_s", FiniteOrNull<ordered_json>(t.time_s())},
                        {"bound", Bound(t.memory_bound())},
                        {"passes", passes}});
    }
    j["layers"] = layers;
  }
  return j;
}

// How the gradients' all-reduce is modeled (table output, several devices).
std::string CommNote(const DeviceSweepResult& s) {
  const bool nodes = s.devices_per_node > 0 && s.devices > s.devices_per_node;
  const std::string how =
      nodes ? fmt::format(
                  "a ring in each node of {} over the devices link, then a ring over the "
                  "{} nodes over the network link",
                  s.devices_per_node, s.devices / s.devices_per_node)
            : std::string("a ring over the devices link");
  if (!s.overlap) {
    return fmt::format(
        "all-reduce: {}, one of all gradients after the backward pass "
        "(comm_ms, all exposed; --overlap models PyTorch DDP's buckets)\n\n",
        how);
  }
  return fmt::format(
      "all-reduce: {}, per bucket as PyTorch DDP does it ({} MiB buckets, the first {} MiB, "
      "last layers first), each started when its gradients are ready: comm_ms is all of it, "
      "exposed_comm_ms what outlasts the backward pass\n\n",
      how, FormatSig(s.bucket_bytes / 1048576, 4), FormatSig(s.first_bucket_bytes / 1048576, 4));
}

std::string LayerTable(const ModeledStep& s) {
  TextTable table({"layer", "kind", "forward_ms", "bwd_data_ms", "bwd_weights_ms", "update_ms",
                   "total_ms", "layout_ms", "bound", "padding", "algorithm"});
  for (const LayerTime& t : s.layers) {
    if (t.kind == "input") continue;
    auto ms = [&](Pass p) { return FormatSig(t.passes[static_cast<size_t>(p)].time_s * 1e3, 3); };
    double layout_s = 0;
    for (const PassTime& p : t.passes) layout_s += p.layout_s;
    table.AddRow({t.name, t.kind, ms(Pass::kForward), ms(Pass::kBackwardData),
                  ms(Pass::kBackwardWeights), ms(Pass::kUpdate), FormatSig(t.time_s() * 1e3, 3),
                  FormatSig(layout_s * 1e3, 3), Bound(t.memory_bound()), FormatSig(t.padding, 3),
                  Algorithm(t)});
  }
  return table.Render();
}

}  // namespace

void WriteDeviceSweep(std::ostream& out, const DeviceSweepResult& s, const FitResult& fit,
                      OutputFormat format, bool layers, const PredictionInterval* interval) {
  const PredictionInterval* usable = Usable(interval);
  switch (format) {
    case OutputFormat::kTable: {
      out << fmt::format(
          "fitspeed sweep: {} modeled on {} ({}, {}, {} device{}, {} step{} per execution)\n"
          "work: {} GFLOP/sample forward, {} GFLOP/sample forward+backward\n\n",
          s.network, s.device, PrecisionName(s.precision), OptimizerName(s.optimizer), s.devices,
          s.devices == 1 ? "" : "s", s.steps_per_execution, s.steps_per_execution == 1 ? "" : "s",
          FormatSig(s.forward_flops_per_sample / 1e9), FormatSig(s.train_flops_per_sample / 1e9));
      if (s.recompute) {
        out << fmt::format(
            "recomputation: activations kept at the {} checkpoint segments' boundaries; every "
            "segment but the last runs its forward again before its backward (recompute_ms)\n",
            s.checkpoint_segments);
      }
      if (s.accumulation > 1) {
        out << fmt::format(
            "gradient accumulation: {} micro-batches per optimizer step; batch is one "
            "micro-batch, samples/s counts all of them, the fit's batch is {} x batch\n",
            s.accumulation, s.accumulation);
      }
      if (s.tokens_per_sample > 0) {
        out << fmt::format(
            "sequences: a sample is one sequence of {} tokens; batch and samples/s count "
            "sequences, tokens/s = samples/s x {}\n",
            s.tokens_per_sample, s.tokens_per_sample);
      }
      if (s.attention_cores > 0) {
        out << fmt::format(
            "attention: {} ({} cores){}\n", AttentionKernelName(s.attention), s.attention_cores,
            s.attention == AttentionKernel::kFused
                ? ": one FlashAttention-style kernel per pass, {H, T, T} kept on chip, scores "
                  "recomputed in the backward pass"
                : ": scores, softmax and dropout each a kernel through memory (--attention "
                  "fused models FlashAttention)");
      }
      if (s.fusion != ElementwiseFusion::kNone) {
        out << fmt::format(
            "fusion: {}: {} ReLU and residual-add layers run inside their batch norms' kernels "
            "(--fuse; docs/devices.md, \"Step model\")\n",
            ElementwiseFusionName(s.fusion), s.fused_layers);
      }
      if (s.amp_casts) {
        out << fmt::format(
            "amp: {} op list: {} run in FP32, each cast up before and down after, forward and "
            "backward (--amp-ops; docs/devices.md, \"Step model\")\n",
            AmpOpListName(s.amp_ops), AmpFp32KindNames(s.amp_ops));
      } else if (s.amp_ops == AmpOpList::kNone && SixteenBitActivations(s.precision)) {
        out << "amp: none: the model cast to 16 bits whole (apex amp O2, model.half()): no "
               "layer kept in FP32, nothing cast (--amp-ops)\n";
      }
      if (s.precision == Precision::kFp8) {
        out << fmt::format(
            "fp8: the dense layers' products{} in FP8 at {} TFLOPS, on the 16-bit tensor curve "
            "carried at the same fraction of the peak; a cast-transpose of each dense layer's "
            "input and weight (forward) and output gradient (backward) as Transformer Engine "
            "runs them; everything else as mixed (docs/devices.md, \"Step model\")\n",
            s.attention == AttentionKernel::kFused ? " and the fused attention's" : "",
            FormatSig(s.matrix_peak_flops / 1e12));
      }
      out << fmt::format(
          "MFU: model FLOPs (forward + backward, no recomputation) per second over {} x {} "
          "TFLOPS, the {} dense matrix peak\n\n",
          s.devices, FormatSig(s.matrix_peak_flops / 1e12), PrecisionName(s.precision));
      if (s.price_per_hour) {
        out << fmt::format(
            "price: {} per device-hour (the device file's): cost_per_1M_samples = devices x "
            "price x time for a million samples\n\n",
            FormatSig(*s.price_per_hour));
      }
      if (s.input_samples_per_s > 0) {
        out << fmt::format(
            "input: {} samples/s per device from the input pipeline, prepared while the device "
            "trains: a step takes the longer of the device's step and per-device batch / rate "
            "(input_ms; '*' marks input-bound batches)\n\n",
            FormatSig(s.input_samples_per_s));
      }
      if (s.transposes) {
        out << fmt::format(
            "layout: {} activations, while the device's tensor-unit convolutions work in the "
            "other layout: a convolution pass transposes its input and output there and back, "
            "and its kernel when larger than 1x1, at the FP32 element rate (a 1x1 stride-1 "
            "convolution over a multiple of 8 pixels runs as GEMMs and transposes nothing; "
            "layout_ms, part of compute_ms); --layout {} models a framework that keeps them "
            "in the kernels' layout\n\n",
            ActivationLayoutName(s.layout), s.layout == ActivationLayout::kNchw ? "nhwc" : "nchw");
      }
      if (s.nchw_batch_norm) {
        out << fmt::format(
            "batch norm: cuDNN's NCHW kernels, at {}x the element-wise memory time of FP32 "
            "elements whatever the precision (measured on an H200: docs/validation.md, "
            "\"First-hand ResNet-50 on one H200\"); --layout nhwc models channels_last\n\n",
            kNchwBatchNormTimeRatio);
      }
      if (s.devices > 1) out << CommNote(s);
      out << IntervalNote(interval);
      for (const GroupFit& g : fit.fits) out << g.FullReport() << "\n";
      const bool tokens = s.tokens_per_sample > 0;
      std::vector<std::string> header = {"batch", "step_ms", "samples/s"};
      const std::string level =
          usable != nullptr ? fmt::format("{:.0f}%", 100 * usable->level) : "";
      if (usable != nullptr) {
        header.push_back("samples/s_" + level);
        header.push_back("step_ms_" + level);
      }
      if (tokens) header.push_back("tokens/s");
      for (const char* h : {"TFLOPS", "MFU_%", "compute_ms", "layout_ms", "update_ms", "comm_ms",
                            "exposed_comm_ms", "host_ms", "input_ms", "memory_GiB"}) {
        header.push_back(h);
      }
      if (s.recompute) header.push_back("recompute_ms");
      if (s.price_per_hour) header.push_back("cost_per_1M_samples");
      TextTable table(header);
      for (const ModeledStep& m : s.steps) {
        std::vector<std::string> row = {std::to_string(m.batch), FormatSig(m.step_time_s * 1e3),
                                        FormatSig(m.throughput_sps)};
        if (usable != nullptr) {
          row.push_back(fmt::format("{}-{}", FormatSig(m.throughput_sps * usable->low_factor, 3),
                                    FormatSig(m.throughput_sps * usable->high_factor, 3)));
          row.push_back(fmt::format("{}-{}",
                                    FormatSig(m.step_time_s / usable->high_factor * 1e3, 3),
                                    FormatSig(m.step_time_s / usable->low_factor * 1e3, 3)));
        }
        if (tokens) {
          row.push_back(FormatSig(m.throughput_sps * static_cast<double>(s.tokens_per_sample)));
        }
        for (const std::string& cell :
             {FormatSig(m.step_flops / m.step_time_s / 1e12), FormatSig(m.mfu * 100, 3),
              FormatSig(m.compute_s * 1e3), FormatSig(m.layout_s * 1e3),
              FormatSig(m.update_s * 1e3), FormatSig(m.comm_s * 1e3),
              FormatSig(m.exposed_comm_s * 1e3), FormatSig(m.host_s * 1e3),
              FormatSig(m.input_s * 1e3) + (m.input_bound ? "*" : ""), Gib(m.memory_bytes)}) {
          row.push_back(cell);
        }
        if (s.recompute) row.push_back(FormatSig(m.recompute_s * 1e3));
        if (const auto cost = s.CostPerMillionSamples(m)) row.push_back(FormatSig(*cost, 4));
        table.AddRow(row);
      }
      out << table.Render();
      for (const ModeledStep& m : s.out_of_memory) {
        out << fmt::format("batch {} does not fit: {} GiB per core needed, {} GiB available\n",
                           m.batch, Gib(m.memory_bytes), Gib(m.memory_capacity_bytes));
      }
      if (layers && !s.steps.empty()) {
        const ModeledStep& big = s.steps.back();
        out << fmt::format("\nper layer at batch {} (modeled, per core of {}):\n", big.batch,
                           s.device)
            << LayerTable(big);
      }
      break;
    }
    case OutputFormat::kCsv: {
      TextTable table({"device",
                       "model",
                       "precision",
                       "layout",
                       "batch",
                       "devices",
                       "step_time_s",
                       "throughput_sps",
                       "compute_s",
                       "layout_s",
                       "update_s",
                       "comm_s",
                       "exposed_comm_s",
                       "host_s",
                       "input_s",
                       "input_bound",
                       "memory_bytes",
                       "fits",
                       "cost_per_million_samples",
                       "mfu",
                       "tokens_per_s",
                       "attention",
                       "accumulation",
                       "interval_level",
                       "throughput_low_sps",
                       "throughput_high_sps",
                       "step_time_low_s",
                       "step_time_high_s",
                       "interval_basis"});
      auto g = [](double v) { return fmt::format("{:.6g}", v); };
      auto add = [&](const ModeledStep& m) {
        table.AddRow({s.device,
                      s.network,
                      PrecisionName(s.precision),
                      ActivationLayoutName(s.layout),
                      std::to_string(m.batch),
                      std::to_string(m.devices),
                      g(m.step_time_s),
                      g(m.throughput_sps),
                      g(m.compute_s),
                      g(m.layout_s),
                      g(m.update_s),
                      g(m.comm_s),
                      g(m.exposed_comm_s),
                      g(m.host_s),
                      g(m.input_s),
                      m.input_bound ? "true" : "false",
                      g(m.memory_bytes),
                      m.fits ? "true" : "false",
                      s.CostPerMillionSamples(m) ? g(*s.CostPerMillionSamples(m)) : "",
                      g(m.mfu),
                      s.tokens_per_sample > 0
                          ? g(m.throughput_sps * static_cast<double>(s.tokens_per_sample))
                          : "",
                      AttentionKernelName(s.attention),
                      std::to_string(m.accumulation),
                      usable != nullptr ? g(usable->level) : "",
                      usable != nullptr ? g(m.throughput_sps * usable->low_factor) : "",
                      usable != nullptr ? g(m.throughput_sps * usable->high_factor) : "",
                      usable != nullptr ? g(m.step_time_s / usable->high_factor) : "",
                      usable != nullptr ? g(m.step_time_s / usable->low_factor) : "",
                      usable != nullptr ? usable->basis : ""});
      };
      for (const ModeledStep& m : s.steps) add(m);
      for (const ModeledStep& m : s.out_of_memory) add(m);
      out << table.RenderCsv();
      break;
    }
    case OutputFormat::kJson: {
      ordered_json j = ordered_json::parse(FitToJson(fit));
      j["model"] = {
          {"device", s.device},
          {"network", s.network},
          {"precision", PrecisionName(s.precision)},
          {"layout", ActivationLayoutName(s.layout)},
          {"transposes", s.transposes},
          {"nchw_batch_norm", s.nchw_batch_norm},
          {"optimizer", OptimizerName(s.optimizer)},
          {"devices", s.devices},
          {"devices_per_node", s.devices_per_node},
          {"overlap", s.overlap},
          {"bucket_bytes", FiniteOrNull<ordered_json>(s.bucket_bytes)},
          {"first_bucket_bytes", FiniteOrNull<ordered_json>(s.first_bucket_bytes)},
          {"steps_per_execution", s.steps_per_execution},
          {"accumulation", s.accumulation},
          {"recompute", s.recompute},
          {"checkpoint_segments", s.checkpoint_segments},
          {"input_samples_per_s", FiniteOrNull<ordered_json>(s.input_samples_per_s)},
          {"price_per_hour",
           s.price_per_hour ? ordered_json(*s.price_per_hour) : ordered_json(nullptr)},
          {"forward_flops_per_sample", FiniteOrNull<ordered_json>(s.forward_flops_per_sample)},
          {"train_flops_per_sample", FiniteOrNull<ordered_json>(s.train_flops_per_sample)},
          {"tokens_per_sample",
           s.tokens_per_sample > 0 ? ordered_json(s.tokens_per_sample) : ordered_json(nullptr)},
          {"attention", AttentionKernelName(s.attention)},
          {"attention_cores", s.attention_cores},
          {"amp_ops",
           s.amp_casts || (s.amp_ops == AmpOpList::kNone && SixteenBitActivations(s.precision))
               ? ordered_json(AmpOpListName(s.amp_ops))
               : ordered_json(nullptr)},
          {"fusion", ElementwiseFusionName(s.fusion)},
          {"fused_layers", s.fused_layers},
          {"matrix_peak_flops", FiniteOrNull<ordered_json>(s.matrix_peak_flops)}};
      j["model_interval"] = IntervalJson(interval);
      j["steps"] = ordered_json::array();
      for (size_t i = 0; i < s.steps.size(); ++i) {
        j["steps"].push_back(StepJson(s, s.steps[i], layers && i + 1 == s.steps.size(), interval));
      }
      j["out_of_memory"] = ordered_json::array();
      for (const ModeledStep& m : s.out_of_memory)
        j["out_of_memory"].push_back(StepJson(s, m, false, interval));
      out << j.dump(2) << "\n";
      break;
    }
  }
}

}  // namespace fitspeed
