#include "core/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/html.h"
#include "core/table.h"

namespace fitspeed::svg {

namespace {

// Okabe and Ito (2008), "Color Universal Design": blue, vermillion, bluish
// green, reddish purple, orange, sky blue, black, yellow (yellow last: it is
// faint as a line on white).
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr int kColourCount = sizeof(kColours) / sizeof(kColours[0]);
constexpr const char* kDashes[] = {"", "7 3", "2 2", "9 3 2 3", "4 4", "1 3", "12 4", "3 2 1 2"};
constexpr int kHatchCount = 6;  // solid, /, \, -, |, dots

const char* Colour(int i) { return kColours[((i % kColourCount) + kColourCount) % kColourCount]; }
const char* Dash(int i) { return kDashes[((i % kColourCount) + kColourCount) % kColourCount]; }

std::string Num(double v) { return fmt::format("{:.1f}", v); }

// A marker of shape `style` centred on (x, y).
std::string Marker(int style, double x, double y, const char* colour, const std::string& tip) {
  const double r = 4;
  std::string shape;
  switch (((style % 6) + 6) % 6) {
    case 0:
      shape = fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"", Num(x), Num(y), r);
      break;
    case 1:
      shape = fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"", Num(x - r),
                          Num(y - r), 2 * r, 2 * r);
      break;
    case 2:
      shape = fmt::format("<path d=\"M{},{} L{},{} L{},{} Z\"", Num(x), Num(y - r - 1),
                          Num(x + r + 1), Num(y + r), Num(x - r - 1), Num(y + r));
      break;
    case 3:
      shape = fmt::format("<path d=\"M{},{} L{},{} L{},{} L{},{} Z\"", Num(x), Num(y - r - 1),
                          Num(x + r + 1), Num(y), Num(x), Num(y + r + 1), Num(x - r - 1), Num(y));
      break;
    case 4:
      shape = fmt::format("<path d=\"M{},{} L{},{} L{},{} Z\"", Num(x), Num(y + r + 1),
                          Num(x + r + 1), Num(y - r), Num(x - r - 1), Num(y - r));
      break;
    default:
      shape = fmt::format("<path d=\"M{},{} L{},{} M{},{} L{},{}\" stroke-width=\"2.5\"",
                          Num(x - r), Num(y - r), Num(x + r), Num(y + r), Num(x - r), Num(y + r),
                          Num(x + r), Num(y - r));
  }
  return fmt::format("{} fill=\"{}\" stroke=\"{}\"><title>{}</title></{}>\n", shape, colour, colour,
                     HtmlEscape(tip), shape.substr(1, shape.find(' ') - 1));
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

// An axis' scale: data value to position, and its ticks.
struct Scale {
  bool log2 = false;
  double lo = 0, hi = 1;      // in data units (log2 of them on a log axis)
  double from = 0, to = 1;    // positions of lo and hi
  std::vector<double> ticks;  // in data units

  double operator()(double v) const {
    const double u = log2 ? std::log2(v) : v;
    return from + (u - lo) / (hi - lo) * (to - from);
  }
};

// The scale of values in [min, max] on `axis`.
Scale MakeScale(const Axis& axis, double min, double max, double from, double to) {
  Scale s;
  s.log2 = axis.log2;
  s.from = from;
  s.to = to;
  if (axis.log2) {
    if (!(min > 0) || !std::isfinite(max)) min = 1, max = 2;
    s.lo = std::floor(std::log2(min));
    s.hi = std::max(s.lo + 1, std::ceil(std::log2(max)));
    const double every = std::max(1.0, std::ceil((s.hi - s.lo) / 12));
    for (double e = s.lo; e <= s.hi + 1e-9; e += every) s.ticks.push_back(std::exp2(e));
    return s;
  }
  if (axis.from_zero) min = std::min(0.0, min);
  if (!std::isfinite(min) || !std::isfinite(max) || !(max > min)) {
    max = std::isfinite(max) && max > 0 ? max * 1.5 : 1;
    min = std::isfinite(min) && min < max ? min : 0;
  }
  const double step = NiceStep((max - min) * 1.04, 6);
  s.lo = std::floor(min / step) * step;
  s.hi = std::ceil(max * 1.04 / step) * step;
  if (s.hi <= s.lo) s.hi = s.lo + step;
  for (double v = s.lo; v <= s.hi + step * 1e-6; v += step) s.ticks.push_back(v);
  return s;
}

std::string SvgOpen(const std::string& id, const std::string& title, double width, double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}\" width=\"{1}\" height=\"{2}\" "
      "viewBox=\"0 0 {1} {2}\" role=\"img\" aria-labelledby=\"{0}-title\" "
      "font-family=\"system-ui, sans-serif\" font-size=\"12\">\n"
      "<title id=\"{0}-title\">{3}</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{4}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" "
      "font-weight=\"600\">{3}</text>\n",
      HtmlEscape(id), Num(width), Num(height), HtmlEscape(title), Num(width / 2));
}

// A legend line: a swatch (line, marker, band or patterned box) and its text.
struct LegendEntry {
  std::string swatch;  // SVG drawn in a 30 x 12 box at (0, 0), translated
  std::string text;
};

// Entries laid out left to right from (x, y) in slots `column_w` wide, an
// entry taking as many slots as its text needs (about 6.4 px a character at
// 12 px), wrapping within `width`; returns the SVG and sets the height used.
std::string Legend(const std::vector<LegendEntry>& entries, double x, double y, double width,
                   double column_w, double* height) {
  std::string out;
  double at = 0;
  int row = 0;
  for (const LegendEntry& e : entries) {
    std::string text = e.text;
    const size_t fits = static_cast<size_t>(std::max(8.0, (width - 40) / 6.4));
    if (text.size() > fits) text = text.substr(0, fits - 3) + "...";
    const double needed = 40 + 6.4 * static_cast<double>(text.size());
    const double span = std::ceil(needed / column_w) * column_w;
    if (at > 0 && at + span > width + 1) {
      at = 0;
      ++row;
    }
    out +=
        fmt::format("<g transform=\"translate({},{})\">{}<text x=\"36\" y=\"10\">{}</text></g>\n",
                    Num(x + at), Num(y + 18 * row), e.swatch, HtmlEscape(text));
    at += span;
  }
  *height = entries.empty() ? 0 : 18 * static_cast<double>(row + 1);
  return out;
}

// The x axis' grid lines from `top` to `bottom` and their labels below.
std::string VerticalGrid(const Scale& sx, double top, double bottom) {
  std::string out;
  for (double t : sx.ticks) {
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e3e3e3\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        Num(sx(t)), Num(top), Num(bottom), Num(bottom + 16), FormatSig(t, 6));
  }
  return out;
}

bool Drawable(const Axis& axis, double v) { return std::isfinite(v) && (!axis.log2 || v > 0); }

}  // namespace

std::string RenderXy(const XyChart& chart) {
  const double left = 78, right = 24, top = 34, bottom = 46;
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min;
  double y_min = x_min, y_max = -x_min;
  auto take_y = [&](double v) {
    if (!Drawable(chart.y, v)) return;
    y_min = std::min(y_min, v);
    y_max = std::max(y_max, v);
  };
  for (const XySeries& s : chart.series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!Drawable(chart.x, s.x[i]) || !Drawable(chart.y, s.y[i])) continue;
      x_min = std::min(x_min, s.x[i]);
      x_max = std::max(x_max, s.x[i]);
      take_y(s.y[i]);
      if (i < s.low.size()) take_y(s.low[i]);
      if (i < s.high.size()) take_y(s.high[i]);
    }
  }
  const bool empty = !std::isfinite(x_min);
  if (empty) x_min = 1, x_max = 2, y_min = 0, y_max = 1;
  if (!chart.x.log2 && x_max == x_min) x_max = x_min + 1;

  // The legend below the plot: one entry per series, one per band.
  std::vector<LegendEntry> entries;
  for (const XySeries& s : chart.series) {
    const char* colour = Colour(s.style);
    if (!s.low.empty() && !s.band_name.empty()) {
      entries.push_back({fmt::format("<rect x=\"0\" y=\"1\" width=\"30\" height=\"11\" fill=\"{}\" "
                                     "fill-opacity=\"0.22\" stroke=\"{}\" stroke-opacity=\"0.5\"/>",
                                     colour, colour),
                         s.band_name});
    }
    std::string swatch;
    if (s.line) {
      swatch = fmt::format(
          "<line x1=\"0\" y1=\"6\" x2=\"30\" y2=\"6\" stroke=\"{}\" stroke-width=\"2\" "
          "stroke-dasharray=\"{}\"/>",
          colour, Dash(s.style));
    }
    if (s.markers) swatch += Marker(s.style, 15, 6, colour, s.name);
    entries.push_back({swatch, s.name});
  }
  const double plot_w = chart.width - left - right;
  double legend_h = 0;
  const std::string legend = Legend(entries, left, 0, plot_w, 160, &legend_h);
  const double plot_h = chart.height - top - bottom;
  const double height = chart.height + legend_h + 8;
  const Scale sx = MakeScale(chart.x, x_min, x_max, left, left + plot_w);
  const Scale sy = MakeScale(chart.y, y_min, y_max, top + plot_h, top);

  std::string out = SvgOpen(chart.id, chart.title, chart.width, height);
  out += VerticalGrid(sx, top, top + plot_h);
  for (double t : sy.ticks) {
    const double y = sy(t);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#e3e3e3\"/>"
        "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>\n",
        Num(left), Num(y), Num(left + plot_w), Num(left - 6), Num(y + 4), FormatSig(t, 6));
  }
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n"
      "<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      Num(left), Num(top), Num(plot_w), Num(plot_h), Num(left + plot_w / 2), Num(top + plot_h + 36),
      HtmlEscape(chart.x.label), Num(top + plot_h / 2), HtmlEscape(chart.y.label));
  if (empty) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">nothing to draw</text>\n",
                       Num(left + plot_w / 2), Num(top + plot_h / 2));
  }
  // Bands first, then lines, then markers on top.
  for (const XySeries& s : chart.series) {
    if (s.low.size() != s.x.size() || s.high.size() != s.x.size()) continue;
    std::string upper, lower;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!Drawable(chart.x, s.x[i]) || !Drawable(chart.y, s.low[i]) ||
          !Drawable(chart.y, s.high[i])) {
        continue;
      }
      upper +=
          fmt::format("{}{},{}", upper.empty() ? "M" : " L", Num(sx(s.x[i])), Num(sy(s.high[i])));
      lower = fmt::format(" L{},{}", Num(sx(s.x[i])), Num(sy(s.low[i]))) + lower;
    }
    if (upper.empty()) continue;
    out += fmt::format(
        "<path d=\"{}{} Z\" fill=\"{}\" fill-opacity=\"0.22\" stroke=\"none\"><title>{}</title>"
        "</path>\n",
        upper, lower, Colour(s.style), HtmlEscape(s.band_name.empty() ? s.name : s.band_name));
  }
  for (const XySeries& s : chart.series) {
    if (!s.line) continue;
    std::string path;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!Drawable(chart.x, s.x[i]) || !Drawable(chart.y, s.y[i])) continue;
      path += fmt::format("{}{},{}", path.empty() ? "M" : " L", Num(sx(s.x[i])), Num(sy(s.y[i])));
    }
    if (path.empty()) continue;
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"{}\">"
        "<title>{}</title></path>\n",
        path, Colour(s.style), Dash(s.style), HtmlEscape(s.name));
  }
  for (const XySeries& s : chart.series) {
    if (!s.markers) continue;
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!Drawable(chart.x, s.x[i]) || !Drawable(chart.y, s.y[i])) continue;
      out += Marker(s.style, sx(s.x[i]), sy(s.y[i]), Colour(s.style),
                    fmt::format("{}: {}, {}", s.name, FormatSig(s.x[i]), FormatSig(s.y[i])));
    }
  }
  out += fmt::format("<g transform=\"translate(0,{})\">\n{}</g>\n", Num(chart.height + 4), legend);
  out += "</svg>\n";
  return out;
}

std::string RenderBars(const BarChart& chart) {
  const double bar_h = 18, gap = 6, right = 30;
  size_t longest = 0;
  for (const BarRow& r : chart.rows) longest = std::max(longest, r.label.size());
  const double left = std::clamp(20.0 + 7.2 * static_cast<double>(longest), 80.0, 380.0);
  const double plot_w = chart.width - left - right;

  // Parts that some bar has, in their order; the legend lists only those.
  std::vector<bool> used(chart.part_names.size(), false);
  double max = chart.reference.value_or(0);
  bool whiskers = false;
  for (const BarRow& r : chart.rows) {
    double total = 0;
    for (size_t k = 0; k < r.parts.size() && k < used.size(); ++k) {
      if (r.parts[k] > 0) used[k] = true;
      if (std::isfinite(r.parts[k]) && r.parts[k] > 0) total += r.parts[k];
    }
    max = std::max(max, total);
    if (r.high && std::isfinite(*r.high)) max = std::max(max, *r.high), whiskers = true;
  }
  std::string defs = "<defs>\n";
  std::vector<LegendEntry> entries;
  for (size_t k = 0; k < chart.part_names.size(); ++k) {
    const std::string id = fmt::format("{}-p{}", chart.id, k);
    const int hatch = static_cast<int>(k) % kHatchCount;
    std::string marks;
    switch (hatch) {
      case 1:
        marks = "<path d=\"M-1,7 L7,-1 M5,9 L9,5\" stroke=\"white\" stroke-width=\"1.3\"/>";
        break;
      case 2:
        marks = "<path d=\"M-1,-1 L7,7 M5,-1 L9,3\" stroke=\"white\" stroke-width=\"1.3\"/>";
        break;
      case 3:
        marks = "<path d=\"M0,3 L6,3\" stroke=\"white\" stroke-width=\"1.3\"/>";
        break;
      case 4:
        marks = "<path d=\"M3,0 L3,6\" stroke=\"white\" stroke-width=\"1.3\"/>";
        break;
      case 5:
        marks = "<circle cx=\"3\" cy=\"3\" r=\"1.2\" fill=\"white\"/>";
        break;
      default:
        break;
    }
    defs += fmt::format(
        "<pattern id=\"{}\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
        "<rect width=\"6\" height=\"6\" fill=\"{}\"/>{}</pattern>\n",
        HtmlEscape(id), Colour(static_cast<int>(k)), marks);
    if (used[k]) {
      entries.push_back({fmt::format("<rect x=\"0\" y=\"0\" width=\"30\" height=\"12\" "
                                     "fill=\"url(#{})\" stroke=\"#333\" stroke-width=\"0.5\"/>",
                                     HtmlEscape(id)),
                         chart.part_names[k]});
    }
  }
  defs += "</defs>\n";
  if (whiskers && !chart.whisker_name.empty()) {
    entries.push_back(
        {"<path d=\"M2,6 L28,6 M2,1 L2,11 M28,1 L28,11\" stroke=\"black\" "
         "stroke-width=\"1.5\" fill=\"none\"/>",
         chart.whisker_name});
  }
  if (chart.reference) {
    entries.push_back(
        {"<line x1=\"15\" y1=\"0\" x2=\"15\" y2=\"12\" stroke=\"black\" "
         "stroke-width=\"2\" stroke-dasharray=\"4 2\"/>",
         chart.reference_name});
  }
  double legend_h = 0;
  const std::string legend = Legend(entries, left, 32, plot_w, 160, &legend_h);
  const double top = 32 + legend_h + 10;
  const double plot_h = static_cast<double>(chart.rows.size()) * (bar_h + gap) + gap;
  const double height = top + plot_h + 44;
  Axis axis;
  const Scale sx = MakeScale(axis, 0, max > 0 ? max : 1, left, left + plot_w);

  std::string out = SvgOpen(chart.id, chart.title, chart.width, height) + defs + legend;
  out += VerticalGrid(sx, top, top + plot_h);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                     Num(left + plot_w / 2), Num(top + plot_h + 36), HtmlEscape(chart.axis_label));
  for (size_t i = 0; i < chart.rows.size(); ++i) {
    const BarRow& r = chart.rows[i];
    const double y = top + gap + static_cast<double>(i) * (bar_h + gap);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", Num(left - 6),
                       Num(y + bar_h - 5), HtmlEscape(r.label));
    out += fmt::format("<g{}>", r.muted ? " opacity=\"0.45\"" : "");
    double at = 0, total = 0;
    for (size_t k = 0; k < r.parts.size() && k < chart.part_names.size(); ++k) {
      const double v = r.parts[k];
      if (!(std::isfinite(v) && v > 0)) continue;
      total += v;
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#{}-p{})\" "
          "stroke=\"white\" stroke-width=\"0.5\"><title>{}: {} {}</title></rect>",
          Num(sx(at)), Num(y), fmt::format("{:.2f}", sx(at + v) - sx(at)), Num(bar_h),
          HtmlEscape(chart.id), k, HtmlEscape(r.label), HtmlEscape(chart.part_names[k]),
          FormatSig(v));
      at += v;
    }
    out += "</g>\n";
    if (r.low && r.high && std::isfinite(*r.low) && std::isfinite(*r.high)) {
      const double yc = y + bar_h / 2;
      out += fmt::format(
          "<path d=\"M{0},{2} L{1},{2} M{0},{3} L{0},{4} M{1},{3} L{1},{4}\" stroke=\"black\" "
          "stroke-width=\"1.5\" fill=\"none\"><title>{5}: {6} [{7}, {8}]</title></path>\n",
          Num(sx(*r.low)), Num(sx(*r.high)), Num(yc), Num(yc - 5), Num(yc + 5), HtmlEscape(r.label),
          FormatSig(total), FormatSig(*r.low), FormatSig(*r.high));
    }
  }
  if (chart.reference) {
    const double x = sx(*chart.reference);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\" stroke-width=\"2\" "
        "stroke-dasharray=\"4 2\"><title>{3}</title></line>\n",
        Num(x), Num(top), Num(top + plot_h), HtmlEscape(chart.reference_name));
  }
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#333\"/>\n</svg>\n",
      Num(left), Num(top), Num(plot_w), Num(plot_h));
  return out;
}

}  // namespace fitspeed::svg
