// An SVG of observed throughput (markers) and fitted curves (lines) against
// batch size on a log2 axis, written directly (no plotting dependency).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/table.h"
#include "fitspeed/io/output.h"

namespace fitspeed {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Observed throughput of a point, whatever quantity the objective compares.
double ObservedThroughput(const GroupFit& fit, const FitPoint& p) {
  return fit.objective == Objective::kAbsoluteThroughput ? p.observed : p.batch / p.observed;
}

// A "nice" step (1, 2 or 5 times a power of ten) giving about `count` ticks.
double NiceStep(double range, int count) {
  const double raw = range / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

}  // namespace

void WriteFitSvg(std::ostream& out, const FitResult& result, const PlotOptions& options) {
  const double width = options.width_px, height = options.height_px;
  const double left = 80, right = 20, top = 40, bottom = 55;
  const double plot_w = width - left - right, plot_h = height - top - bottom;

  double b_min = std::numeric_limits<double>::infinity(), b_max = 0, v_max = 0;
  for (const GroupFit& fit : result.fits) {
    for (const FitPoint& p : fit.points) {
      b_min = std::min(b_min, p.batch);
      b_max = std::max(b_max, p.batch);
      v_max = std::max(v_max, ObservedThroughput(fit, p));
    }
  }
  if (!(b_max > 0) || !std::isfinite(b_min)) {  // nothing to draw: an empty frame
    b_min = 1;
    b_max = 2;
  }
  const double lx_min = std::floor(std::log2(b_min)), lx_max = std::ceil(std::log2(b_max));
  const double lx_span = std::max(1.0, lx_max - lx_min);
  // Curves may exceed the data; scale y to both, from zero.
  for (const GroupFit& fit : result.fits) {
    if (!fit.converged) continue;
    const double v = fit.PredictThroughput(std::exp2(lx_max));
    if (std::isfinite(v)) v_max = std::max(v_max, v);
  }
  if (!(v_max > 0)) v_max = 1;
  const double y_step = NiceStep(v_max * 1.05, 6);
  const double y_top = std::ceil(v_max * 1.05 / y_step) * y_step;

  auto x_of = [&](double b) { return left + (std::log2(b) - lx_min) / lx_span * plot_w; };
  auto y_of = [&](double v) { return top + plot_h - v / y_top * plot_h; };

  out << fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      width, height, left + plot_w / 2, Escape(options.title));
  // Grid and ticks.
  for (double lx = lx_min; lx <= lx_max + 1e-9; lx += 1) {
    const double x = x_of(std::exp2(lx));
    out << fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e5e5e5\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
        x, top, top + plot_h, top + plot_h + 16, FormatSig(std::exp2(lx), 6));
  }
  for (double v = 0; v <= y_top + y_step * 1e-6; v += y_step) {
    const double y = y_of(v);
    out << fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#e5e5e5\"/>\n"
        "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        left, y, left + plot_w, left - 6, y + 4, FormatSig(v, 6));
  }
  // The axes name what the groups count; where they differ the legend's
  // group names say which counts tokens.
  std::string count = result.fits.empty() ? "samples" : result.fits.front().CountName();
  for (const GroupFit& fit : result.fits) {
    if (fit.CountName() != count) count = "samples or tokens";
  }
  out << fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">batch size ({} per step, log scale)"
      "</text>\n"
      "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">throughput "
      "({}/s)</text>\n",
      left, top, plot_w, plot_h, left + plot_w / 2, height - 12, count, top + plot_h / 2, count);

  for (size_t g = 0; g < result.fits.size(); ++g) {
    const GroupFit& fit = result.fits[g];
    const char* colour = kPalette[g % (sizeof(kPalette) / sizeof(kPalette[0]))];
    if (fit.converged) {
      std::string path;
      for (int i = 0; i <= 200; ++i) {
        const double b = std::exp2(lx_min + lx_span * i / 200.0);
        const double v = fit.PredictThroughput(b);
        if (!std::isfinite(v)) continue;
        path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", x_of(b),
                            y_of(std::min(v, y_top)));
      }
      out << fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path,
                         colour);
    }
    for (const FitPoint& p : fit.points) {
      out << fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" fill-opacity=\"0.7\"/>\n",
          x_of(p.batch), y_of(ObservedThroughput(fit, p)), colour);
    }
    std::string legend = fit.group.ToString();
    if (fit.converged && fit.params.size() >= 2) {
      legend +=
          fmt::format(": {} = {} {}, {} = {} {}", fit.params[0].name,
                      FormatSig(fit.params[0].value, 4), fit.params[0].unit, fit.params[1].name,
                      FormatSig(fit.params[1].value, 4), fit.params[1].unit);
    }
    const double ly = top + 18 + 17 * static_cast<double>(g);
    out << fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"2\"/>\n<text x=\"{4}\" y=\"{5:.1f}\">{6}</text>\n",
        left + 10, ly, left + 30, colour, left + 36, ly + 4, Escape(legend));
  }
  out << "</svg>\n";
}

}  // namespace fitspeed
