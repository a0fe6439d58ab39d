// What the HTML reports of every answer share (docs/reports.md): the opening
// (a warning when the answer is not usable), the closing (notes, assumptions,
// the table report folded), a fit's chart of throughput against batch with the
// curve's confidence band, and a fit's tables.
#ifndef FITSPEED_SRC_SCENARIO_HTML_REPORT_H_
#define FITSPEED_SRC_SCENARIO_HTML_REPORT_H_

#include <string>
#include <vector>

#include "core/html.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/scenario/answer.h"

namespace fitspeed::html_report {

// "80%" for 0.8.
std::string Level(double level);

// "v [low, high]" with `digits` significant digits; "v" when low is NaN.
std::string WithInterval(double value, double low, double high, int digits = 4);

// When the answer is not usable: a paragraph saying why, first on the page.
void Opening(HtmlPage& page, const Answer& answer);

// The page's end: the notes said on the way, the assumptions, and the table
// report (Answer::FullReport) folded.
void Closing(HtmlPage& page, const Answer& answer, const std::vector<std::string>& assumptions);

// Each series' points (markers), fitted curve (line) and the curve's
// confidence band at the fit's level (GroupFit::ThroughputInterval), throughput
// against batch on a log2 axis.
std::string FitChart(const std::string& id, const std::string& title, const FitResult& fit);

// A fit's parameters (one row each) and each series' quality.
void FitTables(HtmlPage& page, const FitResult& fit);

}  // namespace fitspeed::html_report

#endif  // FITSPEED_SRC_SCENARIO_HTML_REPORT_H_
