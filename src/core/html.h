// One self-contained HTML page (`--output html`, docs/reports.md): its head
// with the style inline (no scripts, no fonts, no network), headings, lists,
// tables and figures. The markup is polyglot: every element closed and every
// attribute quoted, so an XML parser reads the page as well as a browser does
// (the tests parse every report that way: no unclosed tags).
#ifndef FITSPEED_SRC_CORE_HTML_H_
#define FITSPEED_SRC_CORE_HTML_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace fitspeed {

// `text` with & < > " and ' as entities.
std::string HtmlEscape(std::string_view text);

// One column of an HtmlTable: its heading (units in it, "step (s)") and
// whether its cells are numbers (right-aligned, tabular figures).
struct HtmlColumn {
  std::string heading;
  bool numeric = true;
};

inline constexpr size_t kHtmlTableRows = 100;

class HtmlPage {
 public:
  // Writes the head and the page's title (h1) at once.
  HtmlPage(std::ostream& out, const std::string& title);
  ~HtmlPage();  // closes the page if Close() was not called
  HtmlPage(const HtmlPage&) = delete;
  HtmlPage& operator=(const HtmlPage&) = delete;

  void Heading(const std::string& text);  // h2, a section
  void Paragraph(const std::string& text);
  void List(const std::vector<std::string>& items);  // nothing when empty
  // A figure: `svg` (from svg_chart.h) and its caption.
  void Figure(const std::string& svg, const std::string& caption);
  // A table with a caption; every row has one cell per column. `id` names it
  // for the tests and for links ("ranked"). Past kHtmlTableRows rows the table
  // shows the first ones and every row follows as CSV text, folded: a browser
  // lays out a table of thousands of rows in seconds, a text in milliseconds
  // (bench/README.md, "HTML reports in a browser").
  void Table(const std::string& id, const std::string& caption,
             const std::vector<HtmlColumn>& columns,
             const std::vector<std::vector<std::string>>& rows);
  // Text kept as written (the CLI's table report), folded under `summary`.
  void Preformatted(const std::string& summary, const std::string& text);
  void Close();

 private:
  std::ostream& out_;
  bool open_ = true;
};

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_HTML_H_
