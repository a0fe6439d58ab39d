// The two charts of the HTML reports (docs/reports.md), as inline SVG text:
// lines, markers and interval bands against a linear or log2 axis, and
// horizontal stacked bars with whiskers and a reference line. Colours are Okabe
// and Ito's (2008) eight, which stay distinct under the common colour-vision
// deficiencies; each series also has its own dash and marker shape, and each
// bar part its own hatching, so that a grey print tells them apart too.
// Every mark has a <title> (the browser shows it on hover; no script).
#ifndef FITSPEED_SRC_CORE_SVG_CHART_H_
#define FITSPEED_SRC_CORE_SVG_CHART_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fitspeed::svg {

struct Axis {
  std::string label;  // with its unit: "batch (samples per step)"
  bool log2 = false;  // ticks at powers of two; every value must be > 0
  // Linear axes start at 0 unless `from_zero` is false (then at the data's
  // minimum, rounded down to a tick).
  bool from_zero = true;
};

struct XySeries {
  std::string name;  // the legend's entry
  std::vector<double> x, y;
  bool line = true;      // joined by a line
  bool markers = false;  // a marker at each point
  // An interval band: low[i] <= y <= high[i] at x[i] (empty: none), and its
  // legend entry ("80% interval of the model").
  std::vector<double> low, high;
  std::string band_name;
  // Which of the palette's styles (colour, dash, marker); series that belong
  // together (points and their fitted curve) share one.
  int style = 0;
};

struct XyChart {
  std::string id;  // unique in the page (ids of its patterns and clip path)
  std::string title;
  Axis x, y;
  std::vector<XySeries> series;
  double width = 720, height = 420;
};

// The SVG of `chart`; points that are not finite (or not > 0 on a log axis)
// are left out, and a chart without any is an empty frame saying so.
std::string RenderXy(const XyChart& chart);

struct BarRow {
  BarRow(std::string label_, std::vector<double> parts_, bool muted_ = false)
      : label(std::move(label_)), parts(std::move(parts_)), muted(muted_) {}
  std::string label;
  std::vector<double> parts;  // one per BarChart::part_names, >= 0
  // A whisker from low to high (an interval of the bar's total); none when unset.
  std::optional<double> low, high;
  bool muted = false;  // drawn lighter (e.g. a split that does not fit)
};

struct BarChart {
  std::string id;
  std::string title;
  std::string axis_label;  // with its unit: "time per step (s)"
  std::vector<std::string> part_names;
  std::vector<BarRow> rows;         // top to bottom
  std::optional<double> reference;  // a vertical line (capacity, a deadline)
  std::string reference_name;
  std::string whisker_name;  // the legend's entry for the whiskers ("80% interval")
  double width = 900;
};

std::string RenderBars(const BarChart& chart);

}  // namespace fitspeed::svg

#endif  // FITSPEED_SRC_CORE_SVG_CHART_H_
