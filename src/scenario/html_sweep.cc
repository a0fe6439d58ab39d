// The HTML reports of a host sweep and a device sweep (docs/reports.md):
// throughput and step time against the batch with the interval band, where a
// modeled step's time goes, and the fit of the law.
#include <fmt/format.h>

#include <cmath>

#include "core/html.h"
#include "core/svg_chart.h"
#include "core/table.h"
#include "fitspeed/scenario/sweep.h"
#include "scenario/html_report.h"

namespace fitspeed {

// This file's helpers (the folder compiles as one unit: docs/design.md).
namespace html_sweep {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

// The law's fitted step time at each of `batches`, as a line, with the
// curve's confidence band when `band`.
svg::XySeries FittedStepTimes(const FitResult& fit, const std::vector<double>& batches, bool band) {
  svg::XySeries s;
  if (fit.fits.empty() || !fit.fits.front().converged) return s;
  const GroupFit& g = fit.fits.front();
  s.name = "fitted " + g.law + ": T(b)";
  s.style = 1;
  for (double b : batches) {
    s.x.push_back(b);
    s.y.push_back(1e3 * g.PredictStepTime(b));
    if (!band) continue;
    const auto [low, high] = g.ThroughputInterval(b, g.confidence);
    s.low.push_back(1e3 * b / high);
    s.high.push_back(low > 0 ? 1e3 * b / low : NAN);  // a band down to 0/s: no upper end
  }
  if (band) s.band_name = "fitted T(b): " + html_report::Level(g.confidence) + " confidence band";
  return s;
}

}  // namespace
}  // namespace html_sweep

void HostSweepAnswer::WriteHtml(std::ostream& out) const {
  using namespace html_sweep;
  HtmlPage page(out, Title() + ": measured training steps");
  html_report::Opening(page, *this);
  page.Paragraph(BriefReport() + ". Each batch's step time is the median of its timed steps.");
  if (!fit.fits.empty()) {
    page.Figure(html_report::FitChart("throughput", "Throughput against batch", fit),
                "Measured throughput (markers), the fitted law (line) and the curve's "
                "confidence band.");
  }
  svg::XyChart times;
  times.id = "step-time";
  times.title = "Step time against batch";
  times.x = {"batch (samples per step, log scale)", true};
  times.y = {"time per step (ms)"};
  svg::XySeries measured;
  measured.name = "measured: median, band from the fastest step to the mean + 1 sd";
  measured.markers = true;
  measured.band_name = "measured: fastest step to mean + 1 standard deviation";
  std::vector<double> batches;
  std::vector<std::vector<std::string>> rows;
  for (const BatchMeasurement& m : sweep.measurements) {
    const double b = static_cast<double>(m.batch);
    batches.push_back(b);
    measured.x.push_back(b);
    measured.y.push_back(1e3 * m.step_time_s);
    measured.low.push_back(1e3 * m.min_time_s);
    measured.high.push_back(1e3 * m.mean_time_s * (1 + m.cv));
    rows.push_back({std::to_string(m.batch), FormatSig(1e3 * m.step_time_s),
                    FormatSig(1e3 * m.min_time_s), FormatSig(100 * m.cv, 3),
                    std::to_string(m.repeats), FormatSig(m.throughput_sps), FormatSig(m.gflops),
                    FormatSig(100 * m.peak_fraction, 3), FormatSig(m.memory_estimate_bytes / kGib),
                    m.preemptions_per_s > kBusyPreemptionsPerSecond ? "yes" : "no"});
  }
  times.series.push_back(std::move(measured));
  svg::XySeries fitted = FittedStepTimes(fit, batches, /*band=*/true);
  if (!fitted.x.empty()) times.series.push_back(std::move(fitted));
  page.Figure(svg::RenderXy(times), "Measured step times and the fitted law's T(b) = b/v0 + t.");
  page.Table("steps", "The measured batches",
             {{"batch"},
              {"median step (ms)"},
              {"fastest step (ms)"},
              {"CV (%)"},
              {"timed steps"},
              {"samples/s"},
              {"GFLOP/s"},
              {"% of FP32 peak"},
              {"memory estimate (GiB)"},
              {"contended", false}},
             rows);
  if (!fit.fits.empty()) html_report::FitTables(page, fit);
  std::vector<std::string> about = {fmt::format("CPU: {}, {} threads, oneDNN {} ({})",
                                                sweep.context.cpu_model, sweep.context.threads,
                                                sweep.context.onednn_version, sweep.context.isa)};
  if (!sweep.stop_reason.empty()) about.push_back("the sweep stopped: " + sweep.stop_reason);
  for (const SkippedBatch& s : sweep.skipped) {
    about.push_back(fmt::format("batch {} skipped: {}", s.batch, s.reason));
  }
  html_report::Closing(page, *this, about);
}

void DeviceSweepAnswer::WriteHtml(std::ostream& out) const {
  using namespace html_sweep;
  HtmlPage page(out, Title());
  html_report::Opening(page, *this);
  page.Paragraph(BriefReport() + ".");
  const PredictionInterval& i = interval;
  // The legend's name of the interval (its basis is in the assumptions).
  const std::string band =
      i.available ? html_report::Level(i.level) + " interval of the model" : std::string();
  const std::string count = sweep.tokens_per_sample > 0 ? "sequences" : "samples";

  svg::XyChart throughput;
  throughput.id = "throughput";
  throughput.title = "Throughput against batch";
  throughput.x = {fmt::format("global batch ({} per step, log scale)", count), true};
  throughput.y = {fmt::format("throughput ({}/s)", count)};
  svg::XySeries modeled;
  modeled.name = "modeled";
  modeled.markers = true;
  modeled.band_name = band;
  svg::XyChart times = throughput;
  times.id = "step-time";
  times.title = "Step time against batch";
  times.y = {"time per optimizer step (ms)"};
  svg::XySeries modeled_time = modeled;
  std::vector<double> batches;
  std::vector<std::vector<std::string>> rows;
  svg::BarChart parts;
  parts.id = "step-parts";
  parts.title = "Where each step's time goes";
  parts.axis_label = "time per optimizer step (ms)";
  parts.part_names = {"compute",          "layout transposes",  "AMP/FP8 casts",
                      "optimizer update", "exposed all-reduce", "host",
                      "input wait"};
  parts.whisker_name = band.empty() ? "" : "step time's " + band;
  for (const ModeledStep& s : sweep.steps) {
    const double b = static_cast<double>(s.batch);
    const auto [low, high] = i.RateRange(s.throughput_sps);
    const auto [time_low, time_high] = i.TimeRange(1e3 * s.step_time_s);
    batches.push_back(b);
    modeled.x.push_back(b);
    modeled.y.push_back(s.throughput_sps);
    if (i.available) modeled.low.push_back(low), modeled.high.push_back(high);
    modeled_time.x.push_back(b);
    modeled_time.y.push_back(1e3 * s.step_time_s);
    if (i.available) modeled_time.low.push_back(time_low), modeled_time.high.push_back(time_high);
    svg::BarRow row(fmt::format("batch {}", s.batch),
                    {1e3 * (s.compute_s - s.layout_s - s.cast_s), 1e3 * s.layout_s, 1e3 * s.cast_s,
                     1e3 * s.update_s, 1e3 * s.exposed_comm_s, 1e3 * s.host_s,
                     1e3 * std::max(0.0, s.input_s - s.device_step_s)});
    if (i.available) row.low = time_low, row.high = time_high;
    parts.rows.push_back(std::move(row));
    rows.push_back({std::to_string(s.batch),
                    html_report::WithInterval(1e3 * s.step_time_s, time_low, time_high),
                    html_report::WithInterval(s.throughput_sps, low, high),
                    FormatSig(100 * s.mfu, 3), FormatSig(1e3 * s.compute_s),
                    FormatSig(1e3 * s.update_s), FormatSig(1e3 * s.exposed_comm_s),
                    FormatSig(1e3 * s.host_s), FormatSig(s.memory_bytes / kGib),
                    FormatSig(s.memory_capacity_bytes / kGib)});
  }
  throughput.series.push_back(std::move(modeled));
  times.series.push_back(std::move(modeled_time));
  if (!fit.fits.empty() && fit.fits.front().converged) {
    const GroupFit& g = fit.fits.front();
    svg::XySeries law;
    law.name = "fitted " + g.law;
    law.style = 1;
    for (double b : batches) law.x.push_back(b), law.y.push_back(g.PredictThroughput(b));
    throughput.series.push_back(std::move(law));
    // A law fitted to a model's points: its band is not news.
    times.series.push_back(FittedStepTimes(fit, batches, /*band=*/false));
  }
  page.Figure(svg::RenderXy(throughput),
              "Modeled throughput at each batch, the interval the model's out-of-sample errors "
              "give, and the law fitted to the modeled steps.");
  page.Figure(svg::RenderXy(times), "Modeled time per optimizer step, with the same interval.");
  if (!parts.rows.empty()) {
    page.Figure(svg::RenderBars(parts),
                "Each batch's step by part: compute (its layout transposes and casts apart), the "
                "update, the all-reduce the step waits for, host time and waiting for input.");
  }
  const std::string level = i.available ? " [" + html_report::Level(i.level) + "]" : "";
  page.Table("steps", "The modeled batches",
             {{"batch"},
              {"step (ms)" + level},
              {count + "/s" + level},
              {"MFU (%)"},
              {"compute (ms)"},
              {"update (ms)"},
              {"exposed comm (ms)"},
              {"host (ms)"},
              {"memory (GiB)"},
              {"capacity (GiB)"}},
             rows);
  std::vector<std::string> about;
  for (const ModeledStep& s : sweep.out_of_memory) {
    about.push_back(fmt::format("batch {} does not fit: {} GiB of {} GiB", s.batch,
                                FormatSig(s.memory_bytes / kGib),
                                FormatSig(s.memory_capacity_bytes / kGib)));
  }
  about.push_back(i.available
                      ? fmt::format("interval: {} of throughputs lie in modeled x [{}, {}] "
                                    "({}, {} cases from {} publishers)",
                                    html_report::Level(i.level), FormatSig(i.low_factor, 3),
                                    FormatSig(i.high_factor, 3), i.basis, i.cases, i.sources)
                      : "interval: not available (" + i.reason + ")");
  if (!fit.fits.empty()) html_report::FitTables(page, fit);
  html_report::Closing(page, *this, about);
}

}  // namespace fitspeed
