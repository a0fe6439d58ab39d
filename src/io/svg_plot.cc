// The fit's plot (`fit --plot`, `sweep --plot` and the HTML reports): each
// group's points, fitted curve and the curve's confidence band, drawn by the
// reports' chart (core/svg_chart.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/svg_chart.h"
#include "fitspeed/io/output.h"

namespace fitspeed {

namespace {

// Observed throughput of a point, whatever quantity the objective compares.
double ObservedThroughput(const GroupFit& fit, const FitPoint& p) {
  return fit.objective == Objective::kAbsoluteThroughput ? p.observed : p.batch / p.observed;
}

std::string Percent(double level) { return fmt::format("{:g}%", 100 * level); }

}  // namespace

std::string FitSvg(const FitResult& result, const PlotOptions& options) {
  svg::XyChart chart;
  chart.id = options.id;
  chart.title = options.title;
  chart.width = options.width_px;
  chart.height = options.height_px;
  // The axes name what the groups count; where they differ the legend's
  // group names say which counts tokens.
  std::string count = result.fits.empty() ? "samples" : result.fits.front().CountName();
  for (const GroupFit& g : result.fits) {
    if (g.CountName() != count) count = "samples or tokens";
  }
  chart.x = {fmt::format("batch size ({} per step, log scale)", count), true};
  chart.y = {fmt::format("throughput ({}/s)", count)};
  for (size_t i = 0; i < result.fits.size(); ++i) {
    const GroupFit& g = result.fits[i];
    const std::string name = g.group.ToString();
    svg::XySeries points;
    points.name = name + ": measured";
    points.line = false;
    points.markers = true;
    points.style = static_cast<int>(i);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const FitPoint& p : g.points) {
      points.x.push_back(p.batch);
      points.y.push_back(ObservedThroughput(g, p));
      if (p.batch > 0) lo = std::min(lo, p.batch), hi = std::max(hi, p.batch);
    }
    if (g.converged && hi > 0) {
      svg::XySeries curve;
      curve.name = name + ": fitted " + g.law;
      if (g.params.size() >= 2) {
        curve.name +=
            fmt::format(" ({} = {:.4g} {}, {} = {:.4g} {})", g.params[0].name, g.params[0].value,
                        g.params[0].unit, g.params[1].name, g.params[1].value, g.params[1].unit);
      }
      curve.style = static_cast<int>(i);
      curve.band_name = name + ": " + Percent(g.confidence) + " confidence band of the curve";
      bool band = false;
      const double from = std::log2(lo), to = std::log2(hi);
      for (int k = 0; k <= 100; ++k) {
        const double b = std::exp2(from + (to - from) * k / 100.0);
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

void WriteFitSvg(std::ostream& out, const FitResult& result, const PlotOptions& options) {
  out << FitSvg(result, options);
}

}  // namespace fitspeed
