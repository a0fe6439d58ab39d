// Projection and plan reports (see report.h).
#include "fitspeed/project/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/finite.h"
#include "core/table.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

using nlohmann::json;

namespace {

std::string Money(const std::optional<double>& value) {
  return value ? fmt::format("{:.2f}", *value) : "";
}
std::string Count(double value) { return std::isfinite(value) ? FormatSig(value, 10) : ""; }

void AddOnceReport(std::vector<std::string>& list, const std::string& text) {
  if (std::find(list.begin(), list.end(), text) == list.end()) list.push_back(text);
}

std::string Percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }

void WriteAssumptions(std::ostream& out, const std::vector<std::string>& assumptions) {
  if (assumptions.empty()) return;
  out << "\nAssumptions and methods:\n";
  for (const std::string& a : assumptions) out << "  - " << a << "\n";
}

TextTable ScalingTable(const std::vector<ScalingRow>& rows) {
  TextTable table({"scaling", "devices", "batch/device", "global_batch", "comm_s", "step_s",
                   "samples/s", "speedup", "efficiency"});
  for (const ScalingRow& r : rows) {
    table.AddRow({ScalingModeName(r.mode), std::to_string(r.devices),
                  FormatSig(r.per_device_batch, 6), FormatSig(r.global_batch, 8),
                  FormatSig(r.comm_s, 4), FormatSig(r.step_time_s, 4),
                  FormatSig(r.throughput_sps, 5), FormatSig(r.speedup, 4), Percent(r.efficiency)});
  }
  return table;
}

json ScalingJson(const ScalingRow& r) {
  return {{"mode", ScalingModeName(r.mode)},
          {"devices", r.devices},
          {"per_device_batch", r.per_device_batch},
          {"global_batch", r.global_batch},
          {"comm_s", FiniteOrNull<json>(r.comm_s)},
          {"step_time_s", FiniteOrNull<json>(r.step_time_s)},
          {"throughput_sps", FiniteOrNull<json>(r.throughput_sps)},
          {"speedup", FiniteOrNull<json>(r.speedup)},
          {"efficiency", FiniteOrNull<json>(r.efficiency)}};
}

json ModelJson(const EpochModel& m) {
  return {{"label", m.label},
          {"devices", m.devices},
          {"batch", m.batch},
          {"origin", m.origin},
          {"steps_per_epoch", FiniteOrNull<json>(m.steps_per_epoch)},
          {"samples_used", FiniteOrNull<json>(m.samples_used)},
          {"train_epoch_s", FiniteOrNull<json>(m.train_epoch_s)},
          {"validation_epoch_s", FiniteOrNull<json>(m.validation_epoch_s)},
          {"epoch_s", FiniteOrNull<json>(m.epoch_s)},
          {"epoch_stderr_s", m.dof > 0 ? FiniteOrNull<json>(m.epoch_stderr_s) : json(nullptr)},
          {"epoch_sd_s", m.dof > 0 ? FiniteOrNull<json>(m.epoch_sd_s) : json(nullptr)},
          {"dof", m.dof},
          {"startup_s", FiniteOrNull<json>(m.startup_s)},
          {"first_epoch_extra_s", FiniteOrNull<json>(m.first_epoch_extra_s)}};
}

}  // namespace

std::string FormatHms(double seconds) {
  if (!std::isfinite(seconds)) return "nan";
  const double rounded = std::round(seconds);
  const long long total = static_cast<long long>(std::fabs(rounded));
  return fmt::format("{}{}:{:02}:{:02}", rounded < 0 ? "-" : "", total / 3600, total % 3600 / 60,
                     total % 60);
}

Projection MakeProjection(std::vector<EpochModel> models, const ProjectOptions& options) {
  Projection p;
  p.rows = ProjectTotals(models, options);
  p.epochs = options.epochs;
  p.confidence = options.confidence;
  bool any_law_interval = false, any_measured_interval = false;
  for (const EpochModel& m : models) {
    for (const std::string& a : m.assumptions) AddOnceReport(p.assumptions, a);
    if (m.dof > 0 && m.epoch_sd_s > 0) any_measured_interval = true;
    if (m.dof > 0 && m.epoch_sd_s == 0) any_law_interval = true;
  }
  const std::string level = Percent(options.confidence);
  if (any_law_interval) {
    AddOnceReport(
        p.assumptions,
        fmt::format("{} interval (fits): the fit covariance of (v0, t) propagated by the delta "
                    "method (Var(1/v0) = Var(v0)/v0^4; the epoch time is linear in 1/v0 and t), "
                    "total +- q*E*se with q the Student t quantile at the fit's dof; it "
                    "covers the parameters' uncertainty, not a change of setup",
                    level));
  }
  if (any_measured_interval) {
    AddOnceReport(
        p.assumptions,
        fmt::format("{} interval (measured): steady epochs independent around their mean, "
                    "total +- q*sqrt(E^2*sd^2/n + E*sd^2), n steady epochs, q the Student t "
                    "quantile at n-1 dof",
                    level));
  }
  for (const EpochModel& m : models) {
    if (m.model_errors.empty()) continue;
    const PredictionInterval model = m.model_errors.At(options.confidence);
    if (!model.available) {
      AddOnceReport(
          p.assumptions,
          fmt::format("{} interval (model): none from the model's errors ({}); the interval "
                      "shown, if any, is the fit's alone and does not cover the model's error",
                      level, model.reason));
      continue;
    }
    AddOnceReport(
        p.assumptions,
        fmt::format("{} interval (model): the law was fitted to a device model's predictions; "
                    "the model's split conformal interval on throughput, x[{}, {}] from {} "
                    "out-of-sample published cases of class {} ({} publishers; median case at "
                    "{}x the modeled speed), combined with the fit's relative half-width in "
                    "quadrature on each side around that median (CombinedTimeFactors); "
                    "startup and first-epoch extra are not scaled",
                    level, FormatSig(model.low_factor, 3), FormatSig(model.high_factor, 3),
                    model.cases, model.basis, model.sources,
                    FormatSig(std::exp(model.median_log_ratio), 3)));
    if (m.origin == "scaling") {
      AddOnceReport(p.assumptions,
                    "scaled rows: the model interval covers the modeled single-configuration step, "
                    "not the error of the all-reduce model added to it");
    }
  }
  if (!options.prices.empty()) {
    AddOnceReport(p.assumptions, "cost = devices x hours x price per device-hour");
  }
  p.models = std::move(models);
  return p;
}

void WriteProjection(std::ostream& out, const Projection& p, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    json rows = json::array();
    for (const ProjectionRow& r : p.rows) {
      rows.push_back({{"label", r.label},
                      {"devices", r.devices},
                      {"batch", r.batch},
                      {"epochs", r.epochs},
                      {"steps_per_epoch", FiniteOrNull<json>(r.steps_per_epoch)},
                      {"epoch_s", FiniteOrNull<json>(r.epoch_s)},
                      {"total_s", FiniteOrNull<json>(r.total_s)},
                      {"total_hms", FormatHms(r.total_s)},
                      {"ci95_s", r.ci_low_s ? json::array({FiniteOrNull<json>(*r.ci_low_s),
                                                           FiniteOrNull<json>(*r.ci_high_s)})
                                            : json(nullptr)},
                      {"interval_basis", r.ci_low_s ? json(r.interval_basis) : json(nullptr)},
                      {"price_per_device_hour", FiniteOrNull<json>(r.price_per_device_hour)},
                      {"cost", FiniteOrNull<json>(r.cost)}});
    }
    json models = json::array();
    for (const EpochModel& m : p.models) models.push_back(ModelJson(m));
    json scaling = json::array();
    for (const ScalingRow& s : p.scaling) scaling.push_back(ScalingJson(s));
    const json doc = {{"schema", "fitspeed.project/1"},
                      {"confidence", p.confidence},
                      {"epochs", p.epochs},
                      {"rows", rows},
                      {"models", models},
                      {"scaling", scaling},
                      {"assumptions", p.assumptions}};
    out << doc.dump(2) << "\n";
    return;
  }
  if (format == OutputFormat::kCsv) {
    TextTable table({"label", "devices", "batch", "steps_per_epoch", "epoch_s", "epochs", "total_s",
                     "total_hms", "ci_low_s", "ci_high_s", "price_per_device_hour", "cost",
                     "interval_basis"});
    for (const ProjectionRow& r : p.rows) {
      table.AddRow({r.label, std::to_string(r.devices), FormatSig(r.batch, 10),
                    Count(r.steps_per_epoch), FormatSig(r.epoch_s, 8), FormatSig(r.epochs, 10),
                    FormatSig(r.total_s, 10), FormatHms(r.total_s),
                    r.ci_low_s ? FormatSig(*r.ci_low_s, 10) : "",
                    r.ci_high_s ? FormatSig(*r.ci_high_s, 10) : "",
                    r.price_per_device_hour ? FormatSig(*r.price_per_device_hour, 8) : "",
                    r.cost ? FormatSig(*r.cost, 10) : "", r.interval_basis});
    }
    out << table.RenderCsv();
    return;
  }
  // The wide table: one line of totals per configuration, then its interval
  // half-widths and its costs where known.
  std::vector<std::string> header = {"label", "devices", "batch", "steps/epoch", "epoch", ""};
  for (double e : p.epochs) header.push_back(fmt::format("E={}", FormatSig(e, 8)));
  TextTable table(header);
  const size_t per_model = p.epochs.size();
  FITSPEED_CHECK(p.rows.size() == p.models.size() * per_model,
                 "projection rows are not one per model and epoch count");
  for (size_t i = 0; i < p.models.size(); ++i) {
    const EpochModel& m = p.models[i];
    const auto first = p.rows.begin() + static_cast<std::ptrdiff_t>(i * per_model);
    const auto last = first + static_cast<std::ptrdiff_t>(per_model);
    std::vector<std::string> totals = {m.label,
                                       std::to_string(m.devices),
                                       FormatSig(m.batch, 8),
                                       Count(m.steps_per_epoch),
                                       FormatHms(m.epoch_s),
                                       "total"};
    for (auto r = first; r != last; ++r) totals.push_back(FormatHms(r->total_s));
    table.AddRow(totals);
    if (first->ci_low_s) {
      // A fit's interval is symmetric (+-); a model's is not (-low/+high).
      bool symmetric = true;
      for (auto r = first; r != last; ++r) {
        if (r->ci_low_s && std::fabs((*r->ci_high_s - r->total_s) - (r->total_s - *r->ci_low_s)) >
                               1e-6 * std::max(1.0, r->total_s)) {
          symmetric = false;
        }
      }
      // An asymmetric one is printed as its ends (a biased model's interval
      // need not contain the point estimate).
      std::vector<std::string> interval = {
          "", "", "",
          "", "", fmt::format("{}{}", symmetric ? "+-" : "range ", Percent(p.confidence))};
      for (auto r = first; r != last; ++r) {
        if (!r->ci_high_s) {
          interval.push_back("");
        } else if (symmetric) {
          interval.push_back(FormatHms(*r->ci_high_s - r->total_s));
        } else {
          interval.push_back(
              fmt::format("{}..{}", FormatHms(*r->ci_low_s), FormatHms(*r->ci_high_s)));
        }
      }
      table.AddRow(interval);
    }
    if (first->cost) {
      std::vector<std::string> cost = {"", "", "", "", "", "cost"};
      for (auto r = first; r != last; ++r) cost.push_back(Money(r->cost));
      table.AddRow(cost);
    }
  }
  out << table.Render();
  if (!p.scaling.empty()) out << "\n" << ScalingTable(p.scaling).Render();
  WriteAssumptions(out, p.assumptions);
}

void WritePlan(std::ostream& out, const PlanResult& plan, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    json rows = json::array();
    for (const PlanRow& r : plan.rows) {
      rows.push_back(
          {{"device", r.device},
           {"devices", r.devices},
           {"batch", r.batch},
           {"optimal_batch", r.optimal_batch},
           {"epochs", FiniteOrNull<json>(r.epochs)},
           {"steps_per_epoch", FiniteOrNull<json>(r.steps_per_epoch)},
           {"epoch_s", FiniteOrNull<json>(r.epoch_s)},
           {"total_s", FiniteOrNull<json>(r.total_s)},
           {"cost", FiniteOrNull<json>(r.cost)},
           {"meets_deadline", r.meets_deadline},
           {"meets_budget", r.meets_budget},
           {"feasible", r.feasible()},
           {"pareto", r.pareto},
           {"total_interval_s", r.total_low_s ? json::array({FiniteOrNull<json>(*r.total_low_s),
                                                             FiniteOrNull<json>(*r.total_high_s)})
                                              : json(nullptr)},
           {"interval_basis", r.total_low_s ? json(r.interval_basis) : json(nullptr)},
           {"deadline_at_risk", r.deadline_at_risk}});
    }
    const json doc = {{"schema", "fitspeed.plan/1"},
                      {"rows", rows},
                      {"fastest", plan.fastest ? json(*plan.fastest) : json(nullptr)},
                      {"cheapest", plan.cheapest ? json(*plan.cheapest) : json(nullptr)},
                      {"assumptions", plan.assumptions}};
    out << doc.dump(2) << "\n";
    return;
  }
  // The interval columns only when some row has a model's interval (CSV:
  // always, empty where none).
  const bool intervals = format == OutputFormat::kCsv ||
                         std::any_of(plan.rows.begin(), plan.rows.end(),
                                     [](const PlanRow& r) { return r.total_low_s.has_value(); });
  std::vector<std::string> header = {"device",      "devices", "batch", "B*",     "epochs",
                                     "steps/epoch", "epoch",   "total", "total_s"};
  if (intervals) {
    for (const char* h : {"total_low", "total_high", "total_low_s", "total_high_s"}) {
      header.push_back(h);
    }
  }
  for (const char* h : {"cost", "deadline", "budget", "pareto"}) header.push_back(h);
  TextTable table(header);
  for (const PlanRow& r : plan.rows) {
    std::vector<std::string> row = {r.device,
                                    std::to_string(r.devices),
                                    FormatSig(r.batch, 10),
                                    r.optimal_batch ? "yes" : "",
                                    FormatSig(r.epochs, 6),
                                    Count(r.steps_per_epoch),
                                    FormatHms(r.epoch_s),
                                    FormatHms(r.total_s),
                                    FormatSig(r.total_s, 8)};
    if (intervals) {
      row.push_back(r.total_low_s ? FormatHms(*r.total_low_s) : "");
      row.push_back(r.total_high_s ? FormatHms(*r.total_high_s) : "");
      row.push_back(r.total_low_s ? FormatSig(*r.total_low_s, 8) : "");
      row.push_back(r.total_high_s ? FormatSig(*r.total_high_s, 8) : "");
    }
    row.push_back(Money(r.cost));
    row.push_back(!r.meets_deadline ? "missed" : r.deadline_at_risk ? "met (at risk)" : "met");
    row.push_back(r.meets_budget ? "met" : "over");
    row.push_back(r.pareto ? "*" : "");
    table.AddRow(row);
  }
  if (format == OutputFormat::kCsv) {
    out << table.RenderCsv();
    return;
  }
  out << table.Render();
  auto describe = [&](const char* what, const std::optional<size_t>& index) {
    if (!index) return;
    const PlanRow& r = plan.rows[*index];
    out << fmt::format("{}: {} x{} at batch {}: {}{}\n", what, r.device, r.devices,
                       FormatSig(r.batch, 10), FormatHms(r.total_s),
                       r.cost ? fmt::format(", cost {}", Money(r.cost)) : "");
  };
  out << "\n";
  if (!plan.fastest) out << "no configuration meets the limits\n";
  describe("fastest", plan.fastest);
  describe("cheapest", plan.cheapest);
  out << "pareto (*): no other configuration that meets the limits is both faster and cheaper\n";
  WriteAssumptions(out, plan.assumptions);
}

}  // namespace fitspeed
