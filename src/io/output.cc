// Writers for samples and fits: text tables, CSV, and the JSON schemas
// "fitspeed.samples/1" and "fitspeed.fit/1" (docs/design.md, "Schemas").
#include "fitspeed/io/output.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/finite.h"
#include "core/table.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

using nlohmann::json;

namespace {

std::string Cell(const std::optional<double>& value, int digits = 6) {
  return value ? FormatSig(*value, digits) : "";
}

const char* StepsRuleName(StepsRule rule) {
  return rule == StepsRule::kKeepPartial ? "keep_partial" : "drop_remainder";
}

json SampleJson(const Sample& s) {
  json j;
  j["source"] = s.source.str();
  j["line"] = s.line > 0 ? json(s.line) : json(nullptr);
  j["batch"] = s.batch;
  j["devices"] = s.devices;
  j["label"] = s.label.str();
  j["precision"] = s.precision.empty() ? json(nullptr) : json(s.precision.str());
  j["throughput_sps"] = FiniteOrNull<json>(s.throughput_sps);
  j["step_time_s"] = FiniteOrNull<json>(s.step_time_s);
  j["epoch_time_s"] = FiniteOrNull<json>(s.epoch_time_s);
  j["samples_per_epoch"] = FiniteOrNull<json>(s.samples_per_epoch);
  j["epoch"] = s.epoch ? json(*s.epoch) : json(nullptr);
  j["steps_rule"] = s.epoch_time_s ? json(StepsRuleName(s.steps_rule)) : json(nullptr);
  j["unit"] = UnitName(s.unit);
  j["seq_len"] = FiniteOrNull<json>(s.seq_len);
  j["tags"] = s.tags.ToMap();
  return j;
}

// The throughput a sample states, or else the one the law sees in its step or
// epoch time (effective batch / step time, ToStepObservation); none when the
// sample lacks what that needs (a batch, the samples of an epoch).
std::optional<double> Throughput(const Sample& s) {
  if (s.throughput_sps) return s.throughput_sps;
  try {
    return ToStepObservation(s).throughput_sps();
  } catch (const Error&) {
    return std::nullopt;
  }
}

TextTable SamplesTable(const std::vector<Sample>& samples) {
  // batch and samples/epoch count `unit`. A rate in tokens goes to tokens/s
  // only (its samples/s is unknown without a sequence length); a rate in
  // samples gives tokens/s too where seq_len is known.
  TextTable table({"source", "line", "batch", "devices", "label", "precision", "samples/s",
                   "step_s", "epoch_s", "samples/epoch", "epoch", "steps_rule", "unit", "seq_len",
                   "tokens/s"});
  for (const Sample& s : samples) {
    std::optional<double> samples_per_s = Throughput(s), tokens_per_s;
    if (s.unit == Unit::kTokens) {
      std::swap(samples_per_s, tokens_per_s);
    } else if (s.seq_len && samples_per_s) {
      tokens_per_s = *samples_per_s * *s.seq_len;
    }
    table.AddRow({s.source, s.line > 0 ? std::to_string(s.line) : "", FormatSig(s.batch, 8),
                  std::to_string(s.devices), s.label, s.precision, Cell(samples_per_s),
                  Cell(s.step_time_s), Cell(s.epoch_time_s), Cell(s.samples_per_epoch, 10),
                  s.epoch ? std::to_string(*s.epoch) : "",
                  s.epoch_time_s ? StepsRuleName(s.steps_rule) : "", UnitName(s.unit),
                  Cell(s.seq_len), Cell(tokens_per_s)});
  }
  return table;
}

json GroupJson(const GroupKey& key) {
  json j;
  j["devices"] = key.devices;
  j["label"] = key.label;
  j["precision"] = key.precision.empty() ? json(nullptr) : json(key.precision);
  j["unit"] = UnitName(key.unit);
  return j;
}

json FitJson(const GroupFit& fit) {
  json j;
  j["group"] = GroupJson(fit.group);
  j["counts"] = fit.CountName();  // what batches and rates count
  j["seq_len"] = FiniteOrNull<json>(fit.seq_len);
  j["law"] = fit.law;
  j["objective"] = ObjectiveName(fit.objective);
  j["loss"] = LossName(fit.loss);
  j["n_points"] = fit.n_points;
  j["dof"] = fit.dof;
  j["converged"] = fit.converged;
  j["iterations"] = fit.iterations;
  // The "ci95" intervals are at this level (0.95 unless --confidence changed it).
  j["confidence"] = fit.confidence;
  j["usable"] = fit.usable;
  json params = json::object();
  for (const ParamEstimate& p : fit.params) {
    params[p.name] = {{"value", FiniteOrNull<json>(p.value)},
                      {"stderr", FiniteOrNull<json>(p.std_error)},
                      {"ci95", {FiniteOrNull<json>(p.ci_low), FiniteOrNull<json>(p.ci_high)}},
                      {"unit", p.unit}};
  }
  j["params"] = params;
  json corr = json::object();
  for (size_t a = 0; a < fit.params.size(); ++a) {
    for (size_t b = a + 1; b < fit.params.size(); ++b) {
      const bool have = static_cast<Eigen::Index>(b) < fit.correlation.rows();
      corr[fit.params[a].name + "," + fit.params[b].name] =
          have ? FiniteOrNull<json>(
                     fit.correlation(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)))
               : json(nullptr);
    }
  }
  j["corr"] = corr;
  j["rss"] = FiniteOrNull<json>(fit.rss);
  j["r2"] = FiniteOrNull<json>(fit.r2);
  j["rel_rmse"] = FiniteOrNull<json>(fit.rel_rmse);
  j["aic"] = FiniteOrNull<json>(fit.aic);
  j["loo_rel_rmse"] = FiniteOrNull<json>(fit.loo_rel_rmse);
  j["loo_one_step"] = fit.loo_one_step;
  j["b_half"] = FiniteOrNull<json>(fit.b_half);
  j["b_90"] = FiniteOrNull<json>(fit.b_90);
  j["warnings"] = fit.warnings;
  json points = json::array();
  for (const FitPoint& p : fit.points) {
    points.push_back({{"source", p.source},
                      {"line", p.line > 0 ? json(p.line) : json(nullptr)},
                      {"batch", FiniteOrNull<json>(p.batch)},
                      {"devices", p.devices},
                      {"observed", FiniteOrNull<json>(p.observed)},
                      {"predicted", FiniteOrNull<json>(p.predicted)},
                      {"residual", FiniteOrNull<json>(p.residual)}});
  }
  j["points"] = points;
  return j;
}

json ScalingJson(const DeviceScaling& scaling) {
  json rows = json::array();
  for (const DeviceScalingRow& r : scaling.rows) {
    rows.push_back({{"devices", r.devices},
                    {"v0", FiniteOrNull<json>(r.v0)},
                    {"v0_stderr", FiniteOrNull<json>(r.v0_stderr)},
                    {"t", FiniteOrNull<json>(r.t)},
                    {"t_stderr", FiniteOrNull<json>(r.t_stderr)}});
  }
  return {{"label", scaling.label},
          {"precision", scaling.precision.empty() ? json(nullptr) : json(scaling.precision)},
          {"rate_unit", scaling.rate_unit},
          {"rows", rows}};
}

std::string ScalingTable(const DeviceScaling& scaling) {
  TextTable table({"devices", fmt::format("v0 ({})", scaling.rate_unit), "+/-", "t (s)", "+/-",
                   "v0 per device"});
  for (const DeviceScalingRow& r : scaling.rows) {
    table.AddRow({std::to_string(r.devices), FormatSig(r.v0, 5), FormatSig(r.v0_stderr, 2),
                  FormatSig(r.t, 4), FormatSig(r.t_stderr, 2), FormatSig(r.v0 / r.devices, 5)});
  }
  std::string title = "Growth of the fixed cost t with the device count";
  if (!scaling.label.empty()) title += fmt::format(" (label {})", scaling.label);
  if (!scaling.precision.empty()) title += fmt::format(" (precision {})", scaling.precision);
  return fmt::format("{}:\n{}", title, table.Render());
}

void WriteFitCsv(std::ostream& out, const FitResult& result) {
  TextTable table({"devices", "label",     "precision", "law",     "objective", "param",
                   "value",   "stderr",    "ci_low",    "ci_high", "unit",      "n_points",
                   "dof",     "converged", "usable",    "rss",     "r2",        "rel_rmse",
                   "b_half",  "b_90",      "counts",    "seq_len"});
  for (const GroupFit& fit : result.fits) {
    for (const ParamEstimate& p : fit.params) {
      table.AddRow({std::to_string(fit.group.devices),
                    fit.group.label,
                    fit.group.precision,
                    fit.law,
                    ObjectiveName(fit.objective),
                    p.name,
                    FormatSig(p.value, 12),
                    FormatSig(p.std_error, 6),
                    FormatSig(p.ci_low, 12),
                    FormatSig(p.ci_high, 12),
                    p.unit,
                    std::to_string(fit.n_points),
                    std::to_string(fit.dof),
                    fit.converged ? "true" : "false",
                    fit.usable ? "true" : "false",
                    FormatSig(fit.rss, 8),
                    FormatSig(fit.r2, 8),
                    FormatSig(fit.rel_rmse, 6),
                    FormatSig(fit.b_half, 6),
                    FormatSig(fit.b_90, 6),
                    fit.CountName(),
                    fit.seq_len ? FormatSig(*fit.seq_len, 8) : ""});
    }
  }
  out << table.RenderCsv();
}

}  // namespace

void WriteSamples(std::ostream& out, const std::vector<Sample>& samples, OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable:
      out << SamplesTable(samples).Render();
      break;
    case OutputFormat::kCsv:
      out << SamplesTable(samples).RenderCsv();
      break;
    case OutputFormat::kJson: {
      json j;
      j["schema"] = "fitspeed.samples/1";
      j["samples"] = json::array();
      for (const Sample& s : samples) j["samples"].push_back(SampleJson(s));
      out << j.dump(2) << "\n";
      break;
    }
  }
}

std::string FitToJson(const FitResult& result) {
  json j;
  j["schema"] = "fitspeed.fit/1";
  j["fits"] = json::array();
  for (const GroupFit& fit : result.fits) j["fits"].push_back(FitJson(fit));
  j["scaling"] = json::array();
  for (const DeviceScaling& s : result.scaling) j["scaling"].push_back(ScalingJson(s));
  return j.dump(2);
}

void WriteFit(std::ostream& out, const FitResult& result, OutputFormat format) {
  switch (format) {
    case OutputFormat::kTable: {
      for (size_t i = 0; i < result.fits.size(); ++i) {
        if (i > 0) out << "\n";
        out << result.fits[i].FullReport();
      }
      for (const DeviceScaling& s : result.scaling) out << "\n" << ScalingTable(s);
      break;
    }
    case OutputFormat::kCsv:
      WriteFitCsv(out, result);
      break;
    case OutputFormat::kJson:
      out << FitToJson(result) << "\n";
      break;
  }
}

}  // namespace fitspeed
