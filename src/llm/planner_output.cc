// The writers of one modeled split and of a plan (fitspeed/llm/planner.h):
// table, CSV and JSON ("fitspeed.llm-step/1", "fitspeed.llm-plan/1"; docs/llm.md, "The CLI").
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/finite.h"
#include "core/table.h"
#include "fitspeed/llm/planner.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

}  // namespace

// This file's helpers: a namespace of its own, so that their names need not
// differ from the other files' of src/llm, which compile with it as one unit
// (docs/design.md, "Build and CI time").
namespace planner_output {
namespace {

constexpr double kGb = 1e9;  // GB, decimal, as the catalog states capacities

// A step time's interval: throughput lies in predicted x [low, high], so a
// time in predicted / [high, low]. NaN (null in JSON) when there is none.
struct StepBounds {
  double step_low = NAN, step_high = NAN, tokens_low = NAN, tokens_high = NAN;
};

StepBounds Bounds(const LlmStep& s, const PredictionInterval& i) {
  StepBounds b;
  std::tie(b.step_low, b.step_high) = i.TimeRange(s.step_s);
  std::tie(b.tokens_low, b.tokens_high) = i.RateRange(s.tokens_per_s);
  return b;
}

ordered_json IntervalJson(const PredictionInterval& i) {
  ordered_json j;
  j["level"] = i.level;
  j["available"] = i.available;
  j["low_factor"] = i.available ? ordered_json(i.low_factor) : ordered_json(nullptr);
  j["high_factor"] = i.available ? ordered_json(i.high_factor) : ordered_json(nullptr);
  j["basis"] = i.basis;
  j["cases"] = i.cases;
  j["sources"] = i.sources;
  j["reason"] = i.reason;
  return j;
}

ordered_json SplitJson(const LlmStep& s) {
  const LlmSplit& p = s.split;
  ordered_json j;
  j["tp"] = p.tp;
  j["pp"] = p.pp;
  j["vp"] = p.vp;
  j["cp"] = p.cp;
  j["ep"] = p.ep;
  j["dp"] = p.dp;
  j["micro_batch"] = p.micro_batch;
  j["global_batch"] = p.global_batch;
  j["accumulation"] = s.accumulation;
  j["recompute"] = RecomputeName(p.recompute);
  j["sequence_parallel"] = p.sequence_parallel;
  j["zero"] = p.zero;
  j["overlap_grad_reduce"] = p.overlap_grad_reduce;
  j["etp"] = p.etp > 0 ? ordered_json(p.etp) : ordered_json(nullptr);  // null: tp
  j["layout"] = p.layout;                                              // "": even stages
  j["overlap_moe_comm"] = p.overlap_moe_comm;
  j["tp_comm_overlap"] = p.tp_comm_overlap;
  j["shard_group"] = p.ShardRanks();
  j["recompute_modules"] =
      p.recompute == Recompute::kSelective ? RecomputeModulesName(p.recompute_modules) : "";
  return j;
}

// Every field of one step (the body of fitspeed.llm-step/1 and of each entry
// of fitspeed.llm-plan/1's lists).
ordered_json StepJson(const LlmStep& s, const PredictionInterval& interval) {
  const StepBounds b = Bounds(s, interval);
  ordered_json j;
  j["step_time_s"] = s.step_s;
  j["step_time_s_low"] = FiniteOrNull<ordered_json>(b.step_low);
  j["step_time_s_high"] = FiniteOrNull<ordered_json>(b.step_high);
  j["throughput_sps"] = s.sequences_per_s;
  j["tokens_per_s"] = s.tokens_per_s;
  j["tokens_per_s_low"] = FiniteOrNull<ordered_json>(b.tokens_low);
  j["tokens_per_s_high"] = FiniteOrNull<ordered_json>(b.tokens_high);
  j["mfu"] = s.mfu;
  j["memory_bytes"] = s.memory.total;
  j["fits"] = s.memory.fits;
  j["shortfall_bytes"] = s.memory.shortfall;
  j["split"] = SplitJson(s);
  ordered_json parts;
  for (const auto& [name, value] : NamedStepParts(s.parts)) parts[name] = value;
  j["parts"] = parts;
  ordered_json memory;
  for (const auto& [name, value] : NamedMemoryParts(s.memory)) memory[name] = value;
  memory["total"] = s.memory.total;
  memory["capacity"] = s.memory.capacity;
  memory["shortfall"] = s.memory.shortfall;
  memory["stage"] = s.memory.stage;
  memory["stage_totals"] = s.memory.stage_totals;
  j["memory"] = memory;
  j["notes"] = s.notes;
  return j;
}

// What the document is about: the model, the cluster, the training and the calibration.
void HeaderJson(ordered_json& doc, const TransformerConfig& model, const LlmCluster& c,
                const LlmTraining& t, const LlmCalibration& calibration) {
  const TransformerParameters params = CountParameters(model);
  doc["model"] = {{"name", model.name},
                  {"architecture", model.architecture},
                  {"source", model.source},
                  {"parameters", params.total},
                  {"active_parameters", params.active_per_token},
                  {"dropout", model.dropout}};
  ordered_json links = ordered_json::array();
  links.push_back({{"connects", "devices"},
                   {"bandwidth_bytes_per_s", c.intra.bandwidth_bytes_per_s},
                   {"latency_s", c.intra.latency_s},
                   {"source", c.intra_source}});
  links.push_back({{"connects", "network"},
                   {"bandwidth_bytes_per_s", c.inter.bandwidth_bytes_per_s},
                   {"latency_s", c.inter.latency_s},
                   {"source", c.inter_source}});
  doc["cluster"] = {{"device", c.device.name},
                    {"devices", c.devices},
                    {"domain", c.domain},
                    {"memory_capacity_bytes", c.device.memory_capacity_bytes},
                    {"links", links}};
  doc["training"] = {{"seq_len", t.seq_len},
                     {"framework", t.framework},
                     {"format", MatrixFormatName(t.format)},
                     {"lora_rank", t.lora_rank},
                     {"lora_dropout", t.lora_dropout},
                     {"fp8_weights", t.fp8_weights},
                     {"activation_fp8_store", t.activation_fp8_store},
                     {"flash_attention", t.flash_attention},
                     {"gradient_bytes", t.gradient_bytes},
                     {"workspace_bytes", t.workspace_bytes},
                     {"fragmentation", t.fragmentation}};
  doc["calibration"] = {{"source", calibration.source},
                        {"matrix_size_scale", calibration.matrix_size_scale},
                        {"memory_scale", calibration.memory_scale},
                        {"dispatch_s", calibration.dispatch_s},
                        {"step_overhead_s", calibration.step_overhead_s}};
}

std::string Gb(double bytes) { return FormatSig(bytes / kGb, 4); }

std::string Percent(double fraction) { return fmt::format("{:.1f}", 100 * fraction); }

std::string IntervalText(double low, double high, int digits = 4) {
  if (std::isnan(low)) return "";
  return fmt::format(" [{}, {}]", FormatSig(low, digits), FormatSig(high, digits));
}

std::string SplitText(const LlmSplit& s) {
  std::string text = fmt::format(
      "tp {}, pp {}, vp {}, cp {}, ep {}, dp {}, micro-batch {}, recompute {}, "
      "sequence parallel {}, zero {}",
      s.tp, s.pp, s.vp, s.cp, s.ep, s.dp, s.micro_batch, RecomputeName(s.recompute),
      s.sequence_parallel ? "on" : "off", s.zero);
  if (s.etp > 0) text += fmt::format(", etp {}", s.etp);
  if (s.recompute == Recompute::kSelective && s.recompute_modules != kRecomputeCoreAttn)
    text += fmt::format(", recomputed {}", RecomputeModulesName(s.recompute_modules));
  if (!s.layout.empty()) text += ", layout " + CompactPipelineLayout(s.layout);
  return text;
}

std::string IntervalNote(const PredictionInterval& i) {
  if (!i.available) return fmt::format("interval: not available ({})", i.reason);
  return fmt::format("interval: {:.0f}% of throughputs lie in predicted x [{}, {}] ({})",
                     100 * i.level, FormatSig(i.low_factor, 3), FormatSig(i.high_factor, 3),
                     i.basis);
}

// What the header line says of the training beyond its format.
std::string TrainingText(const LlmTraining& t) {
  std::string text = t.fp8_weights ? " (weights in FP8 alone)" : "";
  if (t.activation_fp8_store) text += ", SwiGLU input held in FP8";
  if (t.lora_rank > 0) text += fmt::format(", LoRA rank {}", t.lora_rank);
  return text;
}

void WriteStepTable(std::ostream& out, const TransformerConfig& model, const LlmCluster& c,
                    const LlmTraining& t, const LlmStep& s, const PredictionInterval& interval,
                    const LlmCalibration& calibration) {
  const StepBounds b = Bounds(s, interval);
  out << fmt::format("{} ({} parameters) on {} x {}, sequence {}, {}{}\n", model.name,
                     CountParameters(model).total, c.devices, c.device.name, t.seq_len,
                     MatrixFormatName(t.format), TrainingText(t));
  out << "split: " << SplitText(s.split) << "\n\n";
  TextTable summary({"quantity", "value"});
  summary.AddRow({"step time (ms)",
                  FormatSig(1e3 * s.step_s) + IntervalText(1e3 * b.step_low, 1e3 * b.step_high)});
  summary.AddRow({"sequences/s", FormatSig(s.sequences_per_s)});
  summary.AddRow(
      {"tokens/s", FormatSig(s.tokens_per_s) + IntervalText(b.tokens_low, b.tokens_high)});
  summary.AddRow({"MFU (%)", Percent(s.mfu)});
  summary.AddRow({"micro-batches per step", std::to_string(s.accumulation)});
  summary.AddRow(
      {"memory per GPU (GB)", fmt::format("{} of {}", Gb(s.memory.total), Gb(s.memory.capacity))});
  summary.AddRow(
      {"fits", s.memory.fits ? "yes" : fmt::format("no: {} GB short", Gb(s.memory.shortfall))});
  out << summary.Render() << "\n";
  TextTable parts({"part", "ms", "% of step"});
  for (const auto& [name, value] : NamedStepParts(s.parts)) {
    std::string label = name;
    label.resize(label.size() - 2);  // "_s"
    parts.AddRow({label, FormatSig(1e3 * value), Percent(value / s.step_s)});
  }
  parts.AddRow({"step", FormatSig(1e3 * s.step_s), "100.0"});
  out << parts.Render() << "\n";
  TextTable memory({"memory", "GB"});
  for (const auto& [name, value] : NamedMemoryParts(s.memory)) {
    memory.AddRow({name, Gb(value)});
  }
  memory.AddRow({"total", Gb(s.memory.total)});
  memory.AddRow({"capacity", Gb(s.memory.capacity)});
  out << memory.Render() << "\n";
  if (s.memory.stage_totals.size() > 1) {
    std::vector<std::string> per;
    for (double bytes : s.memory.stage_totals) per.push_back(Gb(bytes));
    out << fmt::format(
        "memory per GPU of each pipeline stage (GB): {}; stage {} the most loaded\n\n",
        fmt::join(per, " "), s.memory.stage);
  }
  out << "assumptions:\n";
  for (const std::string& note : LlmStepAssumptions(s, c, interval, calibration)) {
    out << "  - " << note << "\n";
  }
}

// The CSV columns of one step (sweep: one row; plan: one per split).
std::vector<std::string> CsvHeader() {
  std::vector<std::string> h = {"tp",
                                "pp",
                                "vp",
                                "cp",
                                "ep",
                                "dp",
                                "micro_batch",
                                "global_batch",
                                "accumulation",
                                "recompute",
                                "sequence_parallel",
                                "zero",
                                "step_time_s",
                                "step_time_s_low",
                                "step_time_s_high",
                                "throughput_sps",
                                "tokens_per_s",
                                "tokens_per_s_low",
                                "tokens_per_s_high",
                                "mfu",
                                "memory_bytes",
                                "fits",
                                "shortfall_bytes"};
  for (const auto& [name, value] : NamedStepParts({})) h.push_back(name);
  for (const auto& [name, value] : NamedMemoryParts({})) h.push_back(std::string(name) + "_bytes");
  return h;
}

std::string CsvNumber(double v) { return std::isnan(v) ? "" : fmt::format("{:.9g}", v); }

std::vector<std::string> CsvRow(const LlmStep& s, const PredictionInterval& i) {
  const StepBounds b = Bounds(s, i);
  const LlmSplit& p = s.split;
  std::vector<std::string> r = {std::to_string(p.tp),
                                std::to_string(p.pp),
                                std::to_string(p.vp),
                                std::to_string(p.cp),
                                std::to_string(p.ep),
                                std::to_string(p.dp),
                                std::to_string(p.micro_batch),
                                std::to_string(p.global_batch),
                                std::to_string(s.accumulation),
                                RecomputeName(p.recompute),
                                p.sequence_parallel ? "1" : "0",
                                std::to_string(p.zero),
                                CsvNumber(s.step_s),
                                CsvNumber(b.step_low),
                                CsvNumber(b.step_high),
                                CsvNumber(s.sequences_per_s),
                                CsvNumber(s.tokens_per_s),
                                CsvNumber(b.tokens_low),
                                CsvNumber(b.tokens_high),
                                CsvNumber(s.mfu),
                                CsvNumber(s.memory.total),
                                s.memory.fits ? "1" : "0",
                                CsvNumber(s.memory.shortfall)};
  for (const auto& [name, value] : NamedStepParts(s.parts)) r.push_back(CsvNumber(value));
  for (const auto& [name, value] : NamedMemoryParts(s.memory)) {
    r.push_back(CsvNumber(value));
  }
  return r;
}

ordered_json RunJson(const LlmRunTotals& t) {
  return {{"tokens", t.tokens},
          {"seconds", t.seconds},
          {"days", t.days},
          {"days_low", t.days_low},
          {"days_high", t.days_high},
          {"device_hours", t.device_hours},
          {"cost", t.cost ? ordered_json(*t.cost) : ordered_json(nullptr)}};
}

ordered_json FixedJson(const LlmPlanOptions& o) {
  ordered_json j = ordered_json::object();
  auto size = [&](const char* key, int64_t v) {
    if (v > 0) j[key] = v;
  };
  size("tp", o.tp);
  size("pp", o.pp);
  size("vp", o.vp);
  size("cp", o.cp);
  size("ep", o.ep);
  size("dp", o.dp);
  size("micro_batch", o.micro_batch);
  if (o.recompute) j["recompute"] = RecomputeName(*o.recompute);
  if (o.sequence_parallel) j["sequence_parallel"] = *o.sequence_parallel;
  if (o.zero) j["zero"] = *o.zero;
  return j;
}

}  // namespace
}  // namespace planner_output

void WriteLlmStep(std::ostream& out, const TransformerConfig& model, const LlmCluster& cluster,
                  const LlmTraining& training, const LlmStep& step,
                  const PredictionInterval& interval, const LlmCalibration& calibration,
                  OutputFormat format) {
  if (format == OutputFormat::kTable) {
    planner_output::WriteStepTable(out, model, cluster, training, step, interval, calibration);
    return;
  }
  if (format == OutputFormat::kCsv) {
    std::vector<std::string> header = {"model", "device", "devices", "seq_len", "framework"};
    const std::vector<std::string> rest = planner_output::CsvHeader();
    header.insert(header.end(), rest.begin(), rest.end());
    TextTable table(header);
    std::vector<std::string> row = {model.name, cluster.device.name,
                                    std::to_string(cluster.devices),
                                    std::to_string(training.seq_len), training.framework};
    const std::vector<std::string> values = planner_output::CsvRow(step, interval);
    row.insert(row.end(), values.begin(), values.end());
    table.AddRow(row);
    out << table.RenderCsv();
    return;
  }
  ordered_json doc;
  doc["schema"] = "fitspeed.llm-step/1";
  planner_output::HeaderJson(doc, model, cluster, training, calibration);
  doc["interval"] = planner_output::IntervalJson(interval);
  doc.update(planner_output::StepJson(step, interval));
  out << doc.dump(2) << "\n";
}

void WriteLlmPlan(std::ostream& out, const TransformerConfig& model, const LlmCluster& cluster,
                  const LlmPlanOptions& options, const LlmPlan& plan,
                  const PredictionInterval& interval, const LlmCalibration& calibration,
                  std::optional<double> tokens, std::optional<double> price_per_device_hour,
                  OutputFormat format) {
  const double per_s = plan.search_s > 0 ? plan.evaluated / plan.search_s : NAN;
  auto totals = [&](const LlmStep& s) {
    return LlmTotals(s, cluster, *tokens, price_per_device_hour, interval);
  };
  if (format == OutputFormat::kJson) {
    ordered_json doc;
    doc["schema"] = "fitspeed.llm-plan/1";
    planner_output::HeaderJson(doc, model, cluster, options.training, calibration);
    doc["global_batch"] = options.global_batch;
    doc["fixed"] = planner_output::FixedJson(options);
    doc["interval"] = planner_output::IntervalJson(interval);
    doc["tokens"] = tokens ? ordered_json(*tokens) : ordered_json(nullptr);
    doc["price_per_device_hour"] =
        price_per_device_hour ? ordered_json(*price_per_device_hour) : ordered_json(nullptr);
    doc["search"] = {{"evaluated", plan.evaluated},
                     {"fitting", plan.fitting},
                     {"search_s", plan.search_s},
                     {"configurations_per_s", per_s}};
    ordered_json ranked = ordered_json::array();
    for (size_t i = 0; i < plan.ranked.size(); ++i) {
      ordered_json j;
      j["rank"] = i + 1;
      j.update(planner_output::StepJson(plan.ranked[i], interval));
      if (tokens) j["run"] = planner_output::RunJson(totals(plan.ranked[i]));
      ranked.push_back(j);
    }
    doc["ranked"] = ranked;
    ordered_json not_fitting = ordered_json::array();
    for (const LlmStep& s : plan.not_fitting)
      not_fitting.push_back(planner_output::StepJson(s, interval));
    doc["not_fitting"] = not_fitting;
    out << doc.dump(2) << "\n";
    return;
  }
  if (format == OutputFormat::kCsv) {
    std::vector<std::string> header = {"rank"};
    const std::vector<std::string> rest = planner_output::CsvHeader();
    header.insert(header.end(), rest.begin(), rest.end());
    if (tokens) {
      for (const char* h : {"days", "days_low", "days_high", "device_hours", "cost"}) {
        header.push_back(h);
      }
    }
    TextTable table(header);
    auto add = [&](const LlmStep& s, const std::string& rank) {
      std::vector<std::string> row = {rank};
      const std::vector<std::string> values = planner_output::CsvRow(s, interval);
      row.insert(row.end(), values.begin(), values.end());
      if (tokens) {
        const LlmRunTotals t = totals(s);
        for (double v : {t.days, t.days_low, t.days_high, t.device_hours}) {
          row.push_back(planner_output::CsvNumber(v));
        }
        row.push_back(t.cost ? planner_output::CsvNumber(*t.cost) : "");
      }
      table.AddRow(row);
    };
    for (size_t i = 0; i < plan.ranked.size(); ++i) add(plan.ranked[i], std::to_string(i + 1));
    for (const LlmStep& s : plan.not_fitting) add(s, "");
    out << table.RenderCsv();
    return;
  }
  const LlmTraining& t = options.training;
  out << fmt::format(
      "{} ({} parameters) on {} x {} ({} GB each), global batch {} x {} tokens, "
      "{}{}\n\n",
      model.name, CountParameters(model).total, cluster.devices, cluster.device.name,
      planner_output::Gb(cluster.device.memory_capacity_bytes), options.global_batch, t.seq_len,
      MatrixFormatName(t.format), planner_output::TrainingText(t));
  std::vector<std::string> header = {"rank", "tp",     "pp",       "vp",        "cp",
                                     "ep",   "dp",     "mb",       "recompute", "sp",
                                     "zero", "step s", "tokens/s", "MFU %",     "memory GB"};
  if (tokens) {
    header.push_back("days [low, high]");
    if (price_per_device_hour) header.push_back("cost");
  }
  auto split_cells = [](const LlmSplit& s) {
    return std::vector<std::string>{
        std::to_string(s.tp),          std::to_string(s.pp),       std::to_string(s.vp),
        std::to_string(s.cp),          std::to_string(s.ep),       std::to_string(s.dp),
        std::to_string(s.micro_batch), RecomputeName(s.recompute), s.sequence_parallel ? "1" : "0",
        std::to_string(s.zero)};
  };
  TextTable ranked(header);
  for (size_t i = 0; i < plan.ranked.size(); ++i) {
    const LlmStep& s = plan.ranked[i];
    std::vector<std::string> row = {std::to_string(i + 1)};
    const std::vector<std::string> cells = split_cells(s.split);
    row.insert(row.end(), cells.begin(), cells.end());
    row.push_back(FormatSig(s.step_s));
    row.push_back(FormatSig(s.tokens_per_s));
    row.push_back(planner_output::Percent(s.mfu));
    row.push_back(planner_output::Gb(s.memory.total) + "/" + planner_output::Gb(s.memory.capacity));
    if (tokens) {
      const LlmRunTotals run = totals(s);
      row.push_back(FormatSig(run.days, 3) +
                    planner_output::IntervalText(run.days_low, run.days_high, 3));
      if (price_per_device_hour) row.push_back(FormatSig(*run.cost, 4));
    }
    ranked.AddRow(row);
  }
  if (ranked.rows() > 0) {
    out << "fastest splits that fit:\n" << ranked.Render() << "\n";
  } else {
    out << "no split fits in " << planner_output::Gb(cluster.device.memory_capacity_bytes)
        << " GB per device\n\n";
  }
  if (!plan.not_fitting.empty()) {
    TextTable missing({"tp", "pp", "vp", "cp", "ep", "dp", "mb", "recompute", "sp", "zero",
                       "step s", "tokens/s", "memory GB", "short GB"});
    for (const LlmStep& s : plan.not_fitting) {
      std::vector<std::string> row = split_cells(s.split);
      row.push_back(FormatSig(s.step_s));
      row.push_back(FormatSig(s.tokens_per_s));
      row.push_back(planner_output::Gb(s.memory.total));
      row.push_back(planner_output::Gb(s.memory.shortfall));
      missing.AddRow(row);
    }
    out << "fastest splits that do not fit:\n" << missing.Render() << "\n";
  }
  out << fmt::format("searched: {} splits evaluated, {} fit, {} configurations/s ({} s)\n",
                     plan.evaluated, plan.fitting, FormatSig(per_s, 3),
                     FormatSig(plan.search_s, 3));
  out << "assumptions:\n";
  for (const std::string& note :
       LlmPlanAssumptions(plan, cluster, interval, calibration, tokens.has_value())) {
    out << "  - " << note << "\n";
  }
}

std::vector<std::pair<std::string, double>> NamedStepParts(const LlmStepParts& p) {
  return {{"compute_s", p.compute_s},         {"recompute_s", p.recompute_s},
          {"tensor_comm_s", p.tensor_comm_s}, {"context_comm_s", p.context_comm_s},
          {"expert_comm_s", p.expert_comm_s}, {"pipeline_comm_s", p.pipeline_comm_s},
          {"bubble_s", p.bubble_s},           {"data_comm_s", p.data_comm_s},
          {"optimizer_s", p.optimizer_s},     {"overhead_s", p.overhead_s}};
}

std::vector<std::pair<std::string, double>> NamedMemoryParts(const LlmMemory& m) {
  return {{"weights", m.weights},
          {"gradients", m.gradients},
          {"optimizer", m.optimizer},
          {"activations", m.activations},
          {"logits", m.logits},
          {"workspace", m.workspace},
          {"fragmentation", m.fragmentation}};
}

std::vector<std::string> LlmStepAssumptions(const LlmStep& step, const LlmCluster& cluster,
                                            const PredictionInterval& interval,
                                            const LlmCalibration& calibration) {
  std::vector<std::string> notes = step.notes;
  notes.push_back(planner_output::IntervalNote(interval));
  notes.push_back("calibration: " + calibration.source);
  notes.push_back("links: devices " + cluster.intra_source + "; network " + cluster.inter_source);
  return notes;
}

std::vector<std::string> LlmPlanAssumptions(const LlmPlan& plan, const LlmCluster& cluster,
                                            const PredictionInterval& interval,
                                            const LlmCalibration& calibration, bool tokens) {
  // The notes of the fastest split listed (they are the model's assumptions for that split).
  const LlmStep* first = !plan.ranked.empty()        ? &plan.ranked.front()
                         : !plan.not_fitting.empty() ? &plan.not_fitting.front()
                                                     : nullptr;
  std::vector<std::string> notes;
  if (first) notes = first->notes;
  notes.push_back(planner_output::IntervalNote(interval));
  if (tokens)
    notes.push_back("days = tokens / tokens/s / 86400; the interval widens them by its factors");
  notes.push_back("calibration: " + calibration.source);
  notes.push_back("links: devices " + cluster.intra_source + "; network " + cluster.inter_source);
  return notes;
}

}  // namespace fitspeed
