// The parts every HTML report shares (scenario/html_report.h).
#include "scenario/html_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/svg_chart.h"
#include "core/table.h"

namespace fitspeed::html_report {

std::string Level(double level) { return FormatSig(100 * level, 3) + "%"; }

std::string WithInterval(double value, double low, double high, int digits) {
  if (!std::isfinite(low) || !std::isfinite(high)) return FormatSig(value, digits);
  return fmt::format("{} [{}, {}]", FormatSig(value, digits), FormatSig(low, digits),
                     FormatSig(high, digits));
}

void Opening(HtmlPage& page, const Answer& answer) {
  if (answer.usable) return;
  page.Heading("Not usable");
  page.Paragraph(answer.problem.empty()
                     ? "the numbers below cannot be relied on"
                     : "The numbers below cannot be relied on: " + answer.problem + ".");
}

void Closing(HtmlPage& page, const Answer& answer, const std::vector<std::string>& assumptions) {
  if (!answer.notes.empty()) {
    page.Heading("Notes");
    page.List(answer.notes);
  }
  if (!assumptions.empty()) {
    page.Heading("Assumptions");
    page.List(assumptions);
  }
  page.Preformatted("The table report (as `fitspeed` prints it)", answer.FullReport());
}

namespace {

// A point's throughput, whatever quantity the objective compared.
double Throughput(const GroupFit& fit, const FitPoint& p) {
  return fit.objective == Objective::kAbsoluteThroughput ? p.observed : p.batch / p.observed;
}

}  // namespace

std::string FitChart(const std::string& id, const std::string& title, const FitResult& fit) {
  svg::XyChart chart;
  chart.id = id;
  chart.title = title;
  std::string count = fit.fits.empty() ? "samples" : fit.fits.front().CountName();
  for (const GroupFit& g : fit.fits) {
    if (g.CountName() != count) count = "samples or tokens";
  }
  chart.x = {fmt::format("batch ({} per step, log scale)", count), true};
  chart.y = {fmt::format("throughput ({}/s)", count)};
  for (size_t i = 0; i < fit.fits.size(); ++i) {
    const GroupFit& g = fit.fits[i];
    const std::string name = g.group.ToString();
    svg::XySeries points;
    points.name = name + ": measured";
    points.line = false;
    points.markers = true;
    points.style = static_cast<int>(i);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const FitPoint& p : g.points) {
      points.x.push_back(p.batch);
      points.y.push_back(Throughput(g, p));
      if (p.batch > 0) lo = std::min(lo, p.batch), hi = std::max(hi, p.batch);
    }
    if (g.converged && hi > 0) {
      svg::XySeries curve;
      curve.name = name + ": fitted " + g.law;
      curve.style = static_cast<int>(i);
      curve.band_name = name + ": " + Level(g.confidence) + " confidence band of the curve";
      bool band = false;
      for (int k = 0; k <= 80; ++k) {
        const double b = std::exp2(std::log2(lo) + (std::log2(hi) - std::log2(lo)) * k / 80.0);
        curve.x.push_back(b);
        curve.y.push_back(g.PredictThroughput(b));
        const auto [low, high] = g.ThroughputInterval(b, g.confidence);
        curve.low.push_back(low);
        curve.high.push_back(high);
        band = band || std::isfinite(low);
      }
      if (!band) curve.low.clear(), curve.high.clear();
      chart.series.push_back(std::move(curve));
    }
    chart.series.push_back(std::move(points));
  }
  return svg::RenderXy(chart);
}

void FitTables(HtmlPage& page, const FitResult& fit) {
  std::vector<std::vector<std::string>> params, quality;
  for (const GroupFit& g : fit.fits) {
    const std::string name = g.group.ToString();
    for (const ParamEstimate& p : g.params) {
      params.push_back({name, g.law, p.name, FormatSig(p.value), FormatSig(p.std_error, 3),
                        FormatSig(p.ci_low), FormatSig(p.ci_high), p.unit});
    }
    quality.push_back({name, std::to_string(g.n_points), std::to_string(g.dof), FormatSig(g.r2),
                       FormatSig(100 * g.rel_rmse, 3), FormatSig(100 * g.loo_rel_rmse, 3),
                       FormatSig(g.b_half), FormatSig(g.b_90), g.usable ? "yes" : "no",
                       g.warnings.empty() ? "" : fmt::format("{}", fmt::join(g.warnings, "; "))});
  }
  const std::string level = fit.fits.empty() ? "95%" : Level(fit.fits.front().confidence);
  page.Table("parameters", "Fitted parameters, with their " + level + " confidence intervals",
             {{"series", false},
              {"law", false},
              {"parameter", false},
              {"value"},
              {"std error"},
              {"CI low"},
              {"CI high"},
              {"unit", false}},
             params);
  page.Table("fit-quality", "How well each series is fitted",
             {{"series", false},
              {"points"},
              {"dof"},
              {"R²"},
              {"rel RMSE (%)"},
              {"leave-one-out rel RMSE (%)"},
              {"b_half (batch)"},
              {"b_90 (batch)"},
              {"usable", false},
              {"warnings", false}},
             quality);
}

}  // namespace fitspeed::html_report
