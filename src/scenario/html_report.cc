// The parts every HTML report shares (scenario/html_report.h).
#include "scenario/html_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/table.h"
#include "fitspeed/io/output.h"

namespace fitspeed::html_report {

namespace {

constexpr size_t kMaxFoldedReportBytes = 256 * 1024;

}  // namespace

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
  // The table report, unless it is long (a plan of thousands of splits): its
  // rows are the tables' CSV already, and a browser parses megabytes of text
  // in a good part of a second (bench/README.md, "HTML reports in a browser").
  const std::string report = answer.FullReport();
  if (report.size() <= kMaxFoldedReportBytes) {
    page.Preformatted("The table report (as `fitspeed` prints it)", report);
  } else {
    page.Paragraph(fmt::format(
        "The table report ({} lines) is left out of this page: `--output table` prints it.",
        std::count(report.begin(), report.end(), '\n')));
  }
}

std::string FitChart(const std::string& id, const std::string& title, const FitResult& fit) {
  PlotOptions options;
  options.id = id;
  options.title = title;
  options.width_px = 720;
  options.height_px = 420;
  return FitSvg(fit, options);
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
