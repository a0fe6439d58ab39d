#include "core/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/table.h"

namespace fitspeed {

namespace {

// The page's whole style: the system's fonts, tables that scroll sideways
// when wide, figures that shrink to the page, and black on white in print.
constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 1.5em auto; max-width: 1200px; padding: 0 1em; color: #111; line-height: 1.4; }
h1 { font-size: 1.45em; margin-bottom: 0.3em; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
figure { margin: 1em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9em; color: #333; margin-top: 0.3em; }
.table-wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
caption { text-align: left; font-weight: 600; padding: 0.3em 0; }
th, td { border: 1px solid #d0d0d0; padding: 0.2em 0.5em; white-space: nowrap; }
th { background: #f0f0f0; position: sticky; top: 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
pre { font-size: 0.8em; overflow-x: auto; background: #f7f7f7; padding: 0.6em; }
details { margin: 1em 0; }
summary { cursor: pointer; font-weight: 600; }
footer { margin-top: 2em; font-size: 0.8em; color: #555; }
@media print { body { max-width: none; } th { position: static; } details > pre { display: block; } }
)";

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

HtmlPage::HtmlPage(std::ostream& out, const std::string& title) : out_(out) {
  out_ << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
       << "<meta charset=\"utf-8\"/>\n"
       << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
       << "<meta name=\"generator\" content=\"fitspeed\"/>\n"
       << "<title>" << HtmlEscape(title) << "</title>\n<style>" << kStyle << "</style>\n"
       << "</head>\n<body>\n<h1>" << HtmlEscape(title) << "</h1>\n";
}

HtmlPage::~HtmlPage() {
  if (open_) Close();
}

void HtmlPage::Heading(const std::string& text) { out_ << "<h2>" << HtmlEscape(text) << "</h2>\n"; }

void HtmlPage::Paragraph(const std::string& text) { out_ << "<p>" << HtmlEscape(text) << "</p>\n"; }

void HtmlPage::List(const std::vector<std::string>& items) {
  if (items.empty()) return;
  out_ << "<ul>\n";
  for (const std::string& item : items) out_ << "<li>" << HtmlEscape(item) << "</li>\n";
  out_ << "</ul>\n";
}

void HtmlPage::Figure(const std::string& svg, const std::string& caption) {
  out_ << "<figure>\n"
       << svg << "<figcaption>" << HtmlEscape(caption) << "</figcaption>\n"
       << "</figure>\n";
}

void HtmlPage::Table(const std::string& id, const std::string& caption,
                     const std::vector<HtmlColumn>& columns,
                     const std::vector<std::vector<std::string>>& rows) {
  const size_t shown = std::min(rows.size(), kHtmlTableRows);
  const std::string title =
      shown < rows.size() ? fmt::format("{} (the first {} of {} rows; all of them as CSV below)",
                                        caption, shown, rows.size())
                          : caption;
  out_ << "<div class=\"table-wrap\">\n<table id=\"" << HtmlEscape(id) << "\">\n<caption>"
       << HtmlEscape(title) << "</caption>\n<thead><tr>";
  for (const HtmlColumn& c : columns)
    out_ << "<th scope=\"col\">" << HtmlEscape(c.heading) << "</th>";
  out_ << "</tr></thead>\n<tbody>\n";
  for (const std::vector<std::string>& row : rows) {
    if (row.size() != columns.size()) {
      throw std::logic_error(fmt::format("HtmlPage::Table '{}': a row of {} cells for {} columns",
                                         id, row.size(), columns.size()));
    }
  }
  std::string line;
  for (size_t r = 0; r < shown; ++r) {
    const std::vector<std::string>& row = rows[r];
    line = "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      line += columns[i].numeric ? "<td class=\"n\">" : "<td>";
      line += HtmlEscape(row[i]);
      line += "</td>";
    }
    line += "</tr>\n";
    out_ << line;
  }
  out_ << "</tbody>\n</table>\n</div>\n";
  if (shown == rows.size()) return;
  out_ << "<details>\n<summary>" << HtmlEscape(caption) << ": all " << rows.size()
       << " rows as CSV</summary>\n<pre id=\"" << HtmlEscape(id) << "-csv\">";
  line.clear();
  for (size_t i = 0; i < columns.size(); ++i) line += (i ? "," : "") + CsvField(columns[i].heading);
  out_ << HtmlEscape(line) << "\n";
  for (const std::vector<std::string>& row : rows) {
    line.clear();
    for (size_t i = 0; i < row.size(); ++i) line += (i ? "," : "") + CsvField(row[i]);
    out_ << HtmlEscape(line) << "\n";
  }
  out_ << "</pre>\n</details>\n";
}

void HtmlPage::Preformatted(const std::string& summary, const std::string& text) {
  out_ << "<details>\n<summary>" << HtmlEscape(summary) << "</summary>\n<pre>" << HtmlEscape(text)
       << "</pre>\n</details>\n";
}

void HtmlPage::Close() {
  if (!open_) return;
  open_ = false;
  out_ << "<footer>Written by fitspeed. One file: no scripts, fonts or links outside it."
       << "</footer>\n</body>\n</html>\n";
}

}  // namespace fitspeed
