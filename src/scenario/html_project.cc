// The HTML reports of a fit, a projection and a plan from a law
// (docs/reports.md): a fit's points, curves and bands; a projection's and a
// plan's totals (and costs) per configuration with their intervals.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/html.h"
#include "core/svg_chart.h"
#include "core/table.h"
#include "fitspeed/scenario/project.h"
#include "scenario/html_report.h"

namespace fitspeed {

// This file's helpers (the folder compiles as one unit: docs/design.md).
namespace html_project {
namespace {

constexpr size_t kProjectChartRows =
    30;  // configurations drawn per chart (the tables list them all)

// Durations drawn in hours, or in days when the longest is over three days.
struct TimeUnit {
  const char* name;
  double seconds;
};
TimeUnit UnitFor(double longest_s) {
  return longest_s > 3 * 86400 ? TimeUnit{"days", 86400} : TimeUnit{"hours", 3600};
}

std::string ConfigLabel(const std::string& label, int devices, double batch) {
  return fmt::format("{} x{} b{}", label, devices, FormatSig(batch, 6));
}

}  // namespace
}  // namespace html_project

void FitAnswer::WriteHtml(std::ostream& out) const {
  HtmlPage page(out, "The fit of the law");
  html_report::Opening(page, *this);
  page.Paragraph(fit.fits.size() == 1 ? BriefReport() + "."
                                      : fmt::format("{} series fitted.", fit.fits.size()));
  page.Figure(html_report::FitChart("throughput", "Throughput against batch", fit),
              "Each series' points (markers), its fitted law (line of the same colour and dash) "
              "and the curve's confidence band: where the mean throughput lies, not where single "
              "measurements fall.");
  html_report::FitTables(page, fit);
  if (!fit.scaling.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const DeviceScaling& s : fit.scaling) {
      for (const DeviceScalingRow& r : s.rows) {
        rows.push_back({s.label, s.precision, std::to_string(r.devices),
                        html_report::WithInterval(r.v0, r.v0 - r.v0_stderr, r.v0 + r.v0_stderr),
                        s.rate_unit,
                        html_report::WithInterval(r.t, r.t - r.t_stderr, r.t + r.t_stderr)});
      }
    }
    page.Table(
        "scaling", "The fits across device counts (values +- one standard error)",
        {{"label", false}, {"precision", false}, {"devices"}, {"v0"}, {"unit", false}, {"t (s)"}},
        rows);
  }
  html_report::Closing(page, *this, {});
}

void ProjectAnswer::WriteHtml(std::ostream& out) const {
  using namespace html_project;
  const Projection& p = projection;
  HtmlPage page(out, "Training time and cost");
  html_report::Opening(page, *this);
  page.Paragraph(fmt::format(
      "{} configurations projected over {} epoch counts; intervals at {} (the fit's uncertainty "
      "and, for a modeled law, the model's errors).",
      p.models.size(), p.epochs.size(), html_report::Level(p.confidence)));
  // One chart of totals per epoch count (the largest four), one of costs.
  std::map<double, std::vector<const ProjectionRow*>> by_epochs;
  for (const ProjectionRow& r : p.rows) by_epochs[r.epochs].push_back(&r);
  int chart = 0;
  for (auto it = by_epochs.rbegin(); it != by_epochs.rend() && chart < 4; ++it, ++chart) {
    const std::vector<const ProjectionRow*>& rows = it->second;
    double longest = 0;
    bool any_cost = false;
    for (const ProjectionRow* r : rows) {
      longest = std::max(longest, r->ci_high_s.value_or(r->total_s));
      any_cost = any_cost || r->cost.has_value();
    }
    const TimeUnit unit = UnitFor(longest);
    svg::BarChart total;
    total.id = fmt::format("total-{}", chart);
    const std::string epochs =
        fmt::format("{} epoch{}", FormatSig(it->first, 6), it->first == 1 ? "" : "s");
    total.title = epochs + ": wall-clock time";
    total.axis_label = fmt::format("time ({})", unit.name);
    total.part_names = {"total time"};
    total.whisker_name = html_report::Level(p.confidence) + " interval";
    svg::BarChart cost = total;
    cost.id = fmt::format("cost-{}", chart);
    cost.title = epochs + ": cost";
    cost.axis_label = "cost (the prices' currency)";
    cost.part_names = {"cost"};
    for (size_t k = 0; k < rows.size() && k < kProjectChartRows; ++k) {
      const ProjectionRow& r = *rows[k];
      const std::string label = ConfigLabel(r.label, r.devices, r.batch);
      svg::BarRow bar(label, {r.total_s / unit.seconds});
      if (r.ci_low_s && r.ci_high_s) {
        bar.low = *r.ci_low_s / unit.seconds;
        bar.high = *r.ci_high_s / unit.seconds;
      }
      total.rows.push_back(bar);
      if (r.cost) {
        // cost = devices x hours x price: the interval of the time scales it alike.
        svg::BarRow c(label, {*r.cost});
        if (r.ci_low_s && r.ci_high_s) {
          c.low = *r.cost * *r.ci_low_s / r.total_s;
          c.high = *r.cost * *r.ci_high_s / r.total_s;
        }
        cost.rows.push_back(c);
      }
    }
    page.Figure(svg::RenderBars(total),
                "Time to train " + epochs +
                    " per configuration (label x devices, batch), with the interval.");
    if (any_cost) page.Figure(svg::RenderBars(cost), "The same runs' cost, with the interval.");
  }
  std::vector<std::vector<std::string>> rows;
  for (const ProjectionRow& r : p.rows) {
    const double h = 3600;
    rows.push_back({r.label, std::to_string(r.devices), FormatSig(r.batch, 6),
                    FormatSig(r.epochs, 6), FormatSig(r.steps_per_epoch, 6),
                    FormatSig(r.epoch_s / h), FormatSig(r.total_s / h),
                    r.ci_low_s ? FormatSig(*r.ci_low_s / h) : "",
                    r.ci_high_s ? FormatSig(*r.ci_high_s / h) : "", r.interval_basis,
                    r.cost ? FormatSig(*r.cost) : ""});
  }
  page.Table("projection", "Every configuration and epoch count",
             {{"label", false},
              {"devices"},
              {"batch"},
              {"epochs"},
              {"steps/epoch"},
              {"epoch (h)"},
              {"total (h)"},
              {"low (h)"},
              {"high (h)"},
              {"interval from", false},
              {"cost"}},
             rows);
  if (!p.scaling.empty()) {
    std::vector<std::vector<std::string>> scaling;
    for (const ScalingRow& s : p.scaling) {
      scaling.push_back(
          {ScalingModeName(s.mode), std::to_string(s.devices), FormatSig(s.per_device_batch, 6),
           FormatSig(s.global_batch, 6), FormatSig(1e3 * s.comm_s), FormatSig(1e3 * s.step_time_s),
           FormatSig(s.throughput_sps), FormatSig(s.speedup, 3), FormatSig(100 * s.efficiency, 3)});
    }
    page.Table("scaling", "Data-parallel scaling",
               {{"mode", false},
                {"devices"},
                {"batch per device"},
                {"global batch"},
                {"all-reduce (ms)"},
                {"step (ms)"},
                {"samples/s"},
                {"speedup"},
                {"efficiency (%)"}},
               scaling);
  }
  html_report::Closing(page, *this, p.assumptions);
}

void LawPlanAnswer::WriteHtml(std::ostream& out) const {
  using namespace html_project;
  HtmlPage page(out, "Plan: the configurations that meet the limits");
  html_report::Opening(page, *this);
  size_t feasible = 0;
  for (const PlanRow& r : plan.rows) feasible += r.feasible() ? 1 : 0;
  std::string limits;
  if (request.deadline_s)
    limits += fmt::format(" Deadline {} h.", FormatSig(*request.deadline_s / 3600));
  if (request.budget) limits += fmt::format(" Budget {}.", FormatSig(*request.budget));
  page.Paragraph(fmt::format("{} configurations evaluated, {} meet the deadline and the budget.{}",
                             plan.rows.size(), feasible, limits));
  double longest = request.deadline_s.value_or(0);
  for (size_t k = 0; k < plan.rows.size() && k < kProjectChartRows; ++k) {
    longest = std::max(longest, plan.rows[k].total_high_s.value_or(plan.rows[k].total_s));
  }
  const TimeUnit unit = UnitFor(longest);
  svg::BarChart total;
  total.id = "total";
  total.title = "Wall-clock time per configuration";
  total.axis_label = fmt::format("time ({})", unit.name);
  total.part_names = {"total time"};
  total.whisker_name = html_report::Level(request.interval_level) + " interval of the model";
  if (request.deadline_s) {
    total.reference = *request.deadline_s / unit.seconds;
    total.reference_name = "deadline";
  }
  svg::BarChart cost = total;
  cost.id = "cost";
  cost.title = "Cost per configuration";
  cost.axis_label = "cost (the prices' currency)";
  cost.part_names = {"cost"};
  cost.reference = request.budget;
  cost.reference_name = "budget";
  bool any_cost = false;
  for (size_t k = 0; k < plan.rows.size() && k < kProjectChartRows; ++k) {
    const PlanRow& r = plan.rows[k];
    const std::string label = ConfigLabel(r.device, r.devices, r.batch);
    svg::BarRow bar(label, {r.total_s / unit.seconds}, !r.feasible());
    if (r.total_low_s && r.total_high_s) {
      bar.low = *r.total_low_s / unit.seconds;
      bar.high = *r.total_high_s / unit.seconds;
    }
    total.rows.push_back(bar);
    svg::BarRow c(label, {r.cost.value_or(0)}, !r.feasible());
    if (r.cost && r.total_low_s && r.total_high_s) {
      c.low = *r.cost * *r.total_low_s / r.total_s;
      c.high = *r.cost * *r.total_high_s / r.total_s;
    }
    any_cost = any_cost || r.cost.has_value();
    cost.rows.push_back(c);
  }
  if (!total.rows.empty()) {
    page.Figure(svg::RenderBars(total),
                "Each configuration's run (device x count, global batch) in the plan's order; "
                "faded: misses the deadline or the budget.");
  }
  if (any_cost) page.Figure(svg::RenderBars(cost), "The same runs' cost.");
  std::vector<std::vector<std::string>> rows;
  bool intervals = false;
  for (size_t k = 0; k < plan.rows.size(); ++k) {
    const PlanRow& r = plan.rows[k];
    intervals = intervals || r.total_low_s.has_value();
    std::string mark;
    if (plan.fastest && *plan.fastest == k) mark += "fastest ";
    if (plan.cheapest && *plan.cheapest == k) mark += "cheapest ";
    if (r.pareto) mark += "pareto ";
    if (r.deadline_at_risk) mark += "deadline at risk";
    const double h = 3600;
    rows.push_back({r.device, std::to_string(r.devices),
                    FormatSig(r.batch, 6) + (r.optimal_batch ? " (B*)" : ""),
                    FormatSig(r.epochs, 4), FormatSig(r.epoch_s / h),
                    html_report::WithInterval(r.total_s / h, r.total_low_s.value_or(NAN) / h,
                                              r.total_high_s.value_or(NAN) / h),
                    r.cost ? FormatSig(*r.cost) : "", r.meets_deadline ? "yes" : "no",
                    r.meets_budget ? "yes" : "no", mark});
  }
  page.Table("plan", "Every configuration, those that meet the limits first",
             {{"device", false},
              {"devices"},
              {"global batch"},
              {"epochs"},
              {"epoch (h)"},
              {intervals ? "total (h) [" + html_report::Level(request.interval_level) + "]"
                         : std::string("total (h)")},
              {"cost"},
              {"deadline", false},
              {"budget", false},
              {"marks", false}},
             rows);
  html_report::Closing(page, *this, plan.assumptions);
}

}  // namespace fitspeed
