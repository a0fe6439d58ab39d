// The HTML page writer and the SVG charts of the reports (core/html.h,
// core/svg_chart.h): escaping, tables, and marks placed where a hand
// calculation puts them.
#include "core/html.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/svg_chart.h"

namespace fitspeed {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Html, EscapesTheFiveCharactersMarkupGivesAMeaning) {
  EXPECT_EQ(HtmlEscape("a<b & \"c\" > 'd'"), "a&lt;b &amp; &quot;c&quot; &gt; &#39;d&#39;");
  EXPECT_EQ(HtmlEscape("tokens/s [80%]"), "tokens/s [80%]");
}

TEST(Html, PageClosesItsElementsAndEscapesItsText) {
  std::ostringstream out;
  {
    HtmlPage page(out, "plan <1>");
    page.Paragraph("a & b");
    page.Table("t", "caption", {{"name", false}, {"ms"}}, {{"x<y", "1.5"}, {"z", "2"}});
  }  // the destructor closes the page
  const std::string html = out.str();
  EXPECT_THAT(html, HasSubstr("<title>plan &lt;1&gt;</title>"));
  EXPECT_THAT(html, HasSubstr("<p>a &amp; b</p>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>x&lt;y</td><td class=\"n\">1.5</td></tr>"));
  EXPECT_THAT(html, HasSubstr("</body>\n</html>\n"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  // Every <tr> opened is closed (3: the heading's and two rows).
  size_t open = 0, close = 0;
  for (size_t at = 0; (at = html.find("<tr>", at)) != std::string::npos; ++at) ++open;
  for (size_t at = 0; (at = html.find("</tr>", at)) != std::string::npos; ++at) ++close;
  EXPECT_EQ(open, 3u);
  EXPECT_EQ(close, 3u);
}

TEST(Html, ALongTableShowsItsFirstRowsAndEveryRowAsCsv) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < kHtmlTableRows + 50; ++i) rows.push_back({std::to_string(i), "a,b"});
  std::ostringstream out;
  HtmlPage(out, "t").Table("big", "splits", {{"rank"}, {"name", false}}, rows);
  const std::string html = out.str();
  const std::string table = html.substr(0, html.find("</table>"));
  size_t shown = 0;
  for (size_t at = 0; (at = table.find("<tr><td", at)) != std::string::npos; ++at) ++shown;
  EXPECT_EQ(shown, kHtmlTableRows);
  EXPECT_THAT(html, HasSubstr("splits (the first 100 of 150 rows; all of them as CSV below)"));
  // The CSV: the heading, then every row, the field with a comma quoted (RFC 4180).
  EXPECT_THAT(html, HasSubstr("<pre id=\"big-csv\">rank,name\n0,&quot;a,b&quot;\n"));
  EXPECT_THAT(html, HasSubstr("\n149,&quot;a,b&quot;\n</pre>"));
}

TEST(Html, RefusesARowOfTheWrongWidth) {
  std::ostringstream out;
  HtmlPage page(out, "t");
  EXPECT_THROW(page.Table("t", "c", {{"a"}, {"b"}}, {{"1"}}), std::logic_error);
}

// The x of every marker of series 0 (circles) in the plot, the legend's left out
// (it is the chart's last group).
std::vector<double> CircleXs(const std::string& chart) {
  const std::string svg = chart.substr(0, chart.rfind("<g transform=\"translate(0,"));
  std::vector<double> xs;
  const std::regex circle("<circle cx=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator();
       ++it) {
    xs.push_back(std::stod((*it)[1]));
  }
  return xs;
}

TEST(SvgChart, PlacesPointsOnALog2AxisByTheirExponent) {
  svg::XyChart chart;
  chart.id = "c";
  chart.title = "t";
  chart.x = {"batch (samples, log scale)", true};
  chart.y = {"throughput (samples/s)"};
  chart.width = 720;  // plot from x = 78 to 720 - 24 = 696: 618 px
  svg::XySeries s;
  s.name = "s";
  s.line = false;
  s.markers = true;
  s.x = {2, 4, 16};
  s.y = {1, 2, 3};
  chart.series.push_back(s);
  // The axis spans 2^1 .. 2^4 (floor and ceil of the exponents): 4 is at
  // (2 - 1) / 3 of the plot, 78 + 618 / 3 = 284.
  const std::vector<double> xs = CircleXs(svg::RenderXy(chart));
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_NEAR(xs[0], 78.0, 0.06);
  EXPECT_NEAR(xs[1], 284.0, 0.06);
  EXPECT_NEAR(xs[2], 696.0, 0.06);
}

TEST(SvgChart, LeavesOutPointsALogAxisCannotDrawAndSaysWhenNothingIsLeft) {
  svg::XyChart chart;
  chart.id = "c";
  chart.x = {"b (1, log)", true};
  chart.y = {"v (1/s)"};
  svg::XySeries s;
  s.markers = true;
  s.line = false;
  s.x = {0, -1, std::nan("")};
  s.y = {1, 1, 1};
  chart.series.push_back(s);
  const std::string svg = svg::RenderXy(chart);
  EXPECT_TRUE(CircleXs(svg).empty());
  EXPECT_THAT(svg, HasSubstr("nothing to draw"));
}

TEST(SvgChart, StacksBarPartsInProportionAndDrawsTheReference) {
  svg::BarChart chart;
  chart.id = "m";
  chart.title = "memory";
  chart.axis_label = "GB (10^9 bytes)";
  chart.part_names = {"weights", "activations", "unused"};
  chart.rows.push_back(svg::BarRow("a", {10, 30, 0}));
  chart.reference = 80;
  chart.reference_name = "capacity";
  const std::string svg = svg::RenderBars(chart);
  // The scale runs 0 .. 100 (a nice step of 20 over 80 x 1.04): widths are
  // plot_w x 10/100 and x 30/100, in the ratio 1 : 3.
  const std::regex rect("<rect x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\" height=\"18.0\"");
  std::vector<double> widths;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator();
       ++it) {
    widths.push_back(std::stod((*it)[2]));
  }
  ASSERT_EQ(widths.size(), 2u);  // the part of 0 is not drawn
  EXPECT_NEAR(widths[1] / widths[0], 3.0, 1e-3);
  // The legend lists the parts some bar has, and the reference.
  EXPECT_THAT(svg, HasSubstr(">weights</text>"));
  EXPECT_THAT(svg, Not(HasSubstr(">unused</text>")));
  EXPECT_THAT(svg, HasSubstr(">capacity</text>"));
  // Each part has its own pattern (a hatching for grey print), in the chart's ids.
  EXPECT_THAT(svg, HasSubstr("<pattern id=\"m-p1\""));
}

}  // namespace
}  // namespace fitspeed
