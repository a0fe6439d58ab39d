// Writers of a sweep: text report, CSV and JSON (docs/timing.md).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/finite.h"
#include "core/table.h"
#include "fitspeed/timing/sweep.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json ContextJson(const HostContext& c) {
  return {{"cpu", c.cpu_model},
          {"logical_cpus", c.logical_cpus},
          {"threads", c.threads},
          {"isa", c.isa},
          {"bf16_supported", c.bf16_supported},
          {"amx", c.amx},
          {"onednn_version", c.onednn_version},
          {"onednn_runtime", c.onednn_runtime},
          {"build_type", c.build_type},
          {"compiler", c.compiler},
          {"fp32_peak_gflops", FiniteOrNull<ordered_json>(c.fp32_peak_gflops)},
          {"memory_total_bytes", FiniteOrNull<ordered_json>(c.memory_total_bytes)},
          {"memory_available_bytes", FiniteOrNull<ordered_json>(c.memory_available_bytes)}};
}

ordered_json PassesJson(const std::array<double, 4>& values) {
  ordered_json j = ordered_json::object();
  for (Pass p : kAllPasses)
    j[PassName(p)] = FiniteOrNull<ordered_json>(values[static_cast<size_t>(p)]);
  return j;
}

std::string Mib(double bytes) { return FormatSig(bytes / (1u << 20), 4); }

ordered_json MeasurementJson(const BatchMeasurement& m, int64_t tokens_per_sample) {
  ordered_json layers = ordered_json::array();
  for (const LayerTiming& t : m.layers) {
    ordered_json impl = ordered_json::object();
    for (Pass p : kAllPasses) {
      const std::string& name = t.implementation[static_cast<size_t>(p)];
      if (!name.empty()) impl[PassName(p)] = name;
    }
    layers.push_back({{"name", t.name},
                      {"kind", t.kind},
                      {"seconds", PassesJson(t.seconds)},
                      {"flops", PassesJson(t.flops)},
                      {"implementation", impl}});
  }
  ordered_json j = {{"batch", m.batch},
                    {"step_time_s", FiniteOrNull<ordered_json>(m.step_time_s)},
                    {"cv", FiniteOrNull<ordered_json>(m.cv)},
                    {"min_time_s", FiniteOrNull<ordered_json>(m.min_time_s)},
                    {"mean_time_s", FiniteOrNull<ordered_json>(m.mean_time_s)},
                    {"repeats", m.repeats},
                    {"warmup_steps", m.warmup_steps},
                    {"throughput_sps", FiniteOrNull<ordered_json>(m.throughput_sps)},
                    {"step_flops", FiniteOrNull<ordered_json>(m.step_flops)},
                    {"gflops", FiniteOrNull<ordered_json>(m.gflops)},
                    {"peak_fraction", FiniteOrNull<ordered_json>(m.peak_fraction)},
                    {"memory_estimate_bytes", FiniteOrNull<ordered_json>(m.memory_estimate_bytes)},
                    {"loss", FiniteOrNull<ordered_json>(m.loss)},
                    {"preemptions_per_step", FiniteOrNull<ordered_json>(m.preemptions_per_step)},
                    {"preemptions_per_s", FiniteOrNull<ordered_json>(m.preemptions_per_s)},
                    {"pass_seconds", PassesJson(m.pass_seconds)},
                    {"layers", layers}};
  if (tokens_per_sample > 0) {
    j["throughput_tokens_per_s"] =
        FiniteOrNull<ordered_json>(m.throughput_sps * static_cast<double>(tokens_per_sample));
  }
  if (m.data_parallel) {
    const DataParallelTiming& d = *m.data_parallel;
    ordered_json buckets = ordered_json::array();
    for (const BucketTiming& b : d.buckets) {
      buckets.push_back({{"parameters", b.parameters},
                         {"bytes", FiniteOrNull<ordered_json>(b.bytes)},
                         {"ready_s", FiniteOrNull<ordered_json>(b.ready_s)},
                         {"allreduce_s", FiniteOrNull<ordered_json>(b.allreduce_s)},
                         {"bare_allreduce_s", FiniteOrNull<ordered_json>(b.bare_allreduce_s)}});
    }
    j["data_parallel"] = {{"ranks", d.ranks},
                          {"per_rank_batch", d.per_rank_batch},
                          {"compute_s", FiniteOrNull<ordered_json>(d.compute_s)},
                          {"backward_s", FiniteOrNull<ordered_json>(d.backward_s)},
                          {"in_backward_comm_s", FiniteOrNull<ordered_json>(d.in_backward_comm_s)},
                          {"pack_s", FiniteOrNull<ordered_json>(d.pack_s)},
                          {"exposed_comm_s", FiniteOrNull<ordered_json>(d.exposed_comm_s)},
                          {"average_s", FiniteOrNull<ordered_json>(d.average_s)},
                          {"comm_cost_s", FiniteOrNull<ordered_json>(d.comm_cost_s)},
                          {"bare_comm_s", FiniteOrNull<ordered_json>(d.bare_comm_s)},
                          {"hidden_fraction", FiniteOrNull<ordered_json>(d.hidden_fraction())},
                          {"buckets", buckets}};
  }
  return j;
}

bool DataParallel(const SweepResult& s) { return !s.communicator.empty(); }

// The buckets of one data-parallel measurement.
std::string BucketTable(const DataParallelTiming& d) {
  TextTable table({"bucket", "tensors", "MiB", "ready_ms", "allreduce_ms", "bare_ms"});
  for (size_t k = 0; k < d.buckets.size(); ++k) {
    const BucketTiming& b = d.buckets[k];
    table.AddRow({std::to_string(k + 1), std::to_string(b.parameters), Mib(b.bytes),
                  FormatSig(b.ready_s * 1e3, 3), FormatSig(b.allreduce_s * 1e3, 3),
                  FormatSig(b.bare_allreduce_s * 1e3, 3)});
  }
  return table.Render();
}

std::string Header(const SweepResult& s) {
  std::string text = fmt::format(
      "fitspeed sweep: {} ({}, {}, {} backend)\n"
      "host: {}, {} thread{}, {} ({} {}), FP32 FMA peak {:.1f} GFLOPS (measured)\n"
      "work: {} GFLOP/sample forward, {} GFLOP/sample forward+backward\n",
      s.model, PrecisionName(s.precision, PrecisionContext::kHost), OptimizerName(s.optimizer),
      BackendName(s.backend), s.context.cpu_model, s.context.threads,
      s.context.threads == 1 ? "" : "s", s.context.isa,
      s.backend == Backend::kOnednn ? "oneDNN" : "Eigen",
      s.backend == Backend::kOnednn ? s.context.onednn_version : "reference",
      s.context.fp32_peak_gflops, FormatSig(s.forward_flops_per_sample / 1e9),
      FormatSig(s.train_flops_per_sample / 1e9));
  if (s.tokens_per_sample > 0) {
    text += fmt::format("a sample is one sequence of {} tokens: tokens/s = samples/s x {}\n",
                        s.tokens_per_sample, s.tokens_per_sample);
  }
  if (DataParallel(s)) {
    text += fmt::format(
        "data parallel: {}; batch = global batch, split evenly over the ranks; gradients "
        "averaged by all-reduce in buckets (first {} MiB, then {} MiB, in the order the backward "
        "pass finishes them), each started as soon as it is ready\n",
        s.communicator, Mib(s.first_bucket_bytes), Mib(s.bucket_bytes));
  }
  if (!s.stop_reason.empty()) text += "automatic batches: stopped, " + s.stop_reason + "\n";
  return text;
}

std::string LayerTable(const BatchMeasurement& m) {
  TextTable table({"layer", "kind", "forward_ms", "bwd_data_ms", "bwd_weights_ms", "update_ms",
                   "fwd_GFLOPS", "implementation"});
  for (const LayerTiming& t : m.layers) {
    if (t.kind == "input") continue;
    auto ms = [&](Pass p) { return FormatSig(t.seconds[static_cast<size_t>(p)] * 1e3, 3); };
    const double fwd = t.seconds[0] > 0 ? t.flops[0] / t.seconds[0] / 1e9 : 0.0;
    table.AddRow({t.name, t.kind, ms(Pass::kForward), ms(Pass::kBackwardData),
                  ms(Pass::kBackwardWeights), ms(Pass::kUpdate), FormatSig(fwd, 3),
                  t.implementation[0]});
  }
  return table.Render();
}

}  // namespace

std::string SweepTable(const SweepResult& s) {
  // Sequence models also show tokens/s, after samples/s (a sample is a sequence).
  const bool tokens = s.tokens_per_sample > 0;
  std::vector<std::string> header{"batch", "step_ms", "cv_%", "samples/s"};
  if (tokens) header.push_back("tokens/s");
  for (const char* h : {"GFLOPS", "%_peak", "fwd_ms", "bwd_ms", "update_ms", "memory_MiB",
                        "repeats", "preempt/s"}) {
    header.push_back(h);
  }
  const bool dp = DataParallel(s);
  if (dp) {
    for (const char* h : {"ranks", "compute_ms", "copies_ms", "comm_ms", "exposed_ms",
                          "bare_comm_ms", "hidden_%"}) {
      header.push_back(h);
    }
  }
  TextTable table(header);
  for (const BatchMeasurement& m : s.measurements) {
    std::vector<std::string> row{std::to_string(m.batch), FormatSig(m.step_time_s * 1e3),
                                 FormatSig(m.cv * 100, 2), FormatSig(m.throughput_sps)};
    if (tokens) {
      row.push_back(FormatSig(m.throughput_sps * static_cast<double>(s.tokens_per_sample)));
    }
    for (std::string cell : {FormatSig(m.gflops), FormatSig(m.peak_fraction * 100, 3),
                             FormatSig(m.pass_seconds[0] * 1e3),
                             FormatSig((m.pass_seconds[1] + m.pass_seconds[2]) * 1e3),
                             FormatSig(m.pass_seconds[3] * 1e3), Mib(m.memory_estimate_bytes),
                             std::to_string(m.repeats), FormatSig(m.preemptions_per_s, 2)}) {
      row.push_back(std::move(cell));
    }
    if (dp && m.data_parallel) {
      const DataParallelTiming& d = *m.data_parallel;
      for (std::string cell :
           {std::to_string(d.ranks), FormatSig(d.compute_s * 1e3, 4),
            FormatSig((d.pack_s + d.average_s) * 1e3, 3), FormatSig(d.comm_cost_s * 1e3, 3),
            FormatSig(d.exposed_comm_s * 1e3, 3), FormatSig(d.bare_comm_s * 1e3, 3),
            FormatSig(d.hidden_fraction() * 100, 3)}) {
        row.push_back(std::move(cell));
      }
    }
    table.AddRow(row);
  }
  std::string text = table.Render();
  for (const SkippedBatch& k : s.skipped) {
    text += fmt::format("batch {} skipped: {}\n", k.batch, k.reason);
  }
  return text;
}

std::string SweepToJson(const SweepResult& s, const FitResult& fit) {
  ordered_json j = ordered_json::parse(FitToJson(fit));
  j["sweep"] = {
      {"model", s.model},
      {"precision", PrecisionName(s.precision, PrecisionContext::kHost)},
      {"optimizer", OptimizerName(s.optimizer)},
      {"backend", BackendName(s.backend)},
      {"forward_flops_per_sample", FiniteOrNull<ordered_json>(s.forward_flops_per_sample)},
      {"train_flops_per_sample", FiniteOrNull<ordered_json>(s.train_flops_per_sample)},
      {"tokens_per_sample", s.tokens_per_sample},
      {"sample", s.tokens_per_sample > 0 ? "one sequence" : "one input"},
      {"memory_limit_bytes", FiniteOrNull<ordered_json>(s.memory_limit_bytes)},
      {"ranks", s.ranks},
      {"stop_reason", s.stop_reason},
      {"warnings", ordered_json::array()}};
  if (DataParallel(s)) {
    j["sweep"]["communicator"] = s.communicator;
    j["sweep"]["bucket_bytes"] = FiniteOrNull<ordered_json>(s.bucket_bytes);
    j["sweep"]["first_bucket_bytes"] = FiniteOrNull<ordered_json>(s.first_bucket_bytes);
  }
  if (const std::string w = s.ContentionWarning(); !w.empty()) j["sweep"]["warnings"].push_back(w);
  j["measurements"] = ordered_json::array();
  for (const BatchMeasurement& m : s.measurements)
    j["measurements"].push_back(MeasurementJson(m, s.tokens_per_sample));
  j["skipped"] = ordered_json::array();
  for (const SkippedBatch& k : s.skipped) {
    j["skipped"].push_back(
        {{"batch", k.batch},
         {"memory_estimate_bytes", FiniteOrNull<ordered_json>(k.memory_estimate_bytes)},
         {"reason", k.reason}});
  }
  j["context"] = ContextJson(s.context);
  return j.dump(2);
}

void WriteSweep(std::ostream& out, const SweepResult& s, const FitResult& fit, OutputFormat format,
                bool layers) {
  switch (format) {
    case OutputFormat::kTable: {
      out << Header(s) << "\n";
      for (const GroupFit& g : fit.fits) out << g.FullReport() << "\n";
      out << SweepTable(s);
      if (const std::string w = s.ContentionWarning(); !w.empty())
        out << "\nWarning: " << w << "\n";
      if (DataParallel(s) && !s.measurements.empty() && s.measurements.back().data_parallel) {
        const BatchMeasurement& big = s.measurements.back();
        out << fmt::format(
                   "\ngradient buckets at batch {} ({} per rank; medians over {} steps; ready and "
                   "all-reduce from the start of the backward pass, bare: the all-reduce alone):\n",
                   big.batch, big.data_parallel->per_rank_batch, big.repeats)
            << BucketTable(*big.data_parallel);
      }
      if (layers && !s.measurements.empty()) {
        const BatchMeasurement& big = s.measurements.back();
        out << fmt::format("\nper layer at batch {} (medians over {} steps):\n", big.batch,
                           big.repeats)
            << LayerTable(big);
      }
      break;
    }
    case OutputFormat::kCsv: {
      std::vector<std::string> header{"model",
                                      "precision",
                                      "batch",
                                      "step_time_s",
                                      "cv",
                                      "min_time_s",
                                      "throughput_sps",
                                      "gflops",
                                      "peak_fraction",
                                      "forward_s",
                                      "backward_data_s",
                                      "backward_weights_s",
                                      "update_s",
                                      "memory_estimate_bytes",
                                      "repeats",
                                      "preemptions_per_step",
                                      "preemptions_per_s"};
      // A data-parallel sweep: `devices` (the ranks; what `fitspeed fit` reads
      // to fit per device count) and the communication columns.
      const bool dp = DataParallel(s);
      if (dp) {
        for (const char* h :
             {"devices", "per_rank_batch", "compute_s", "in_backward_comm_s", "pack_s",
              "exposed_comm_s", "average_s", "comm_cost_s", "bare_comm_s", "hidden_fraction"}) {
          header.push_back(h);
        }
      }
      TextTable table(header);
      auto g = [](double v) { return fmt::format("{:.6g}", v); };
      for (const BatchMeasurement& m : s.measurements) {
        std::vector<std::string> row{s.model,
                                     PrecisionName(s.precision, PrecisionContext::kHost),
                                     std::to_string(m.batch),
                                     g(m.step_time_s),
                                     g(m.cv),
                                     g(m.min_time_s),
                                     g(m.throughput_sps),
                                     g(m.gflops),
                                     g(m.peak_fraction),
                                     g(m.pass_seconds[0]),
                                     g(m.pass_seconds[1]),
                                     g(m.pass_seconds[2]),
                                     g(m.pass_seconds[3]),
                                     g(m.memory_estimate_bytes),
                                     std::to_string(m.repeats),
                                     g(m.preemptions_per_step),
                                     g(m.preemptions_per_s)};
        if (dp && m.data_parallel) {
          const DataParallelTiming& d = *m.data_parallel;
          for (std::string cell :
               {std::to_string(d.ranks), std::to_string(d.per_rank_batch), g(d.compute_s),
                g(d.in_backward_comm_s), g(d.pack_s), g(d.exposed_comm_s), g(d.average_s),
                g(d.comm_cost_s), g(d.bare_comm_s), g(d.hidden_fraction())}) {
            row.push_back(std::move(cell));
          }
        }
        table.AddRow(row);
      }
      out << table.RenderCsv();
      break;
    }
    case OutputFormat::kJson:
      out << SweepToJson(s, fit) << "\n";
      break;
  }
}

}  // namespace fitspeed
