// The HTML reports of an LLM step and an LLM plan (docs/reports.md): each
// split's step time by part with the interval, its memory per GPU by component
// against the device's capacity, and with a token budget the run's days and
// cost with their intervals.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/html.h"
#include "core/svg_chart.h"
#include "core/table.h"
#include "fitspeed/llm/planner.h"
#include "fitspeed/scenario/llm.h"
#include "scenario/html_report.h"

namespace fitspeed {

// This file's helpers (the folder compiles as one unit: docs/design.md).
namespace html_llm {
namespace {

constexpr double kGb = 1e9;            // GB, decimal, as the catalog states capacities
constexpr size_t kPlanChartRows = 15;  // splits drawn per chart (the tables list them all)

std::string SplitLabel(const LlmSplit& s) {
  std::string text = fmt::format("tp{} pp{}", s.tp, s.pp);
  if (s.vp > 1) text += fmt::format(" vp{}", s.vp);
  if (s.cp > 1) text += fmt::format(" cp{}", s.cp);
  if (s.ep > 1) text += fmt::format(" ep{}", s.ep);
  text += fmt::format(" dp{} mb{}", s.dp, s.micro_batch);
  if (s.recompute != Recompute::kNone) text += std::string(" rc-") + RecomputeName(s.recompute);
  if (s.sequence_parallel) text += " sp";
  if (s.zero > 0) text += fmt::format(" z{}", s.zero);
  return text;
}

std::vector<std::string> PartNames(bool memory) {
  std::vector<std::string> names;
  if (memory) {
    for (const auto& [name, value] : NamedMemoryParts({})) names.push_back(name);
  } else {
    for (const auto& [name, value] : NamedStepParts({})) {
      names.push_back(name.substr(0, name.size() - 2));  // "compute_s" -> "compute"
    }
  }
  return names;
}

// The bar of a step's time by part, its whisker the interval of the step time
// (throughput in predicted x [low, high], so time in predicted / [high, low]).
svg::BarRow TimeRow(const std::string& label, const LlmStep& s, const PredictionInterval& i) {
  svg::BarRow row(label, {}, !s.memory.fits);
  for (const auto& [name, value] : NamedStepParts(s.parts)) row.parts.push_back(value);
  if (i.available) std::tie(row.low, row.high) = i.TimeRange(s.step_s);
  return row;
}

svg::BarRow MemoryRow(const std::string& label, const LlmStep& s) {
  svg::BarRow row(label, {}, !s.memory.fits);
  for (const auto& [name, value] : NamedMemoryParts(s.memory)) row.parts.push_back(value / kGb);
  return row;
}

// The legend's name of the interval (its basis is in the assumptions).
std::string IntervalName(const PredictionInterval& i) {
  return i.available ? html_report::Level(i.level) + " interval of the model" : "";
}

svg::BarChart TimeChart(const std::string& id, const std::string& title,
                        const PredictionInterval& interval) {
  svg::BarChart chart;
  chart.id = id;
  chart.title = title;
  chart.axis_label = "time per optimizer step (s)";
  chart.part_names = PartNames(false);
  chart.whisker_name = "step time's " + IntervalName(interval);
  return chart;
}

svg::BarChart MemoryChart(const std::string& id, const std::string& title, const LlmCluster& c) {
  svg::BarChart chart;
  chart.id = id;
  chart.title = title;
  chart.axis_label = "memory on the most loaded GPU (GB, 10^9 bytes)";
  chart.part_names = PartNames(true);
  chart.reference = c.device.memory_capacity_bytes / kGb;
  chart.reference_name =
      fmt::format("{} capacity, {} GB", c.device.name, FormatSig(*chart.reference));
  return chart;
}

std::vector<std::string> SplitCells(const LlmStep& s) {
  const LlmSplit& p = s.split;
  return {
      std::to_string(p.tp),          std::to_string(p.pp),       std::to_string(p.vp),
      std::to_string(p.cp),          std::to_string(p.ep),       std::to_string(p.dp),
      std::to_string(p.micro_batch), RecomputeName(p.recompute), p.sequence_parallel ? "on" : "off",
      std::to_string(p.zero)};
}

std::vector<HtmlColumn> SplitColumns() {
  return {{"tp"},
          {"pp"},
          {"vp"},
          {"cp"},
          {"ep"},
          {"dp"},
          {"micro-batch"},
          {"recompute", false},
          {"sequence parallel", false},
          {"ZeRO"}};
}

std::string Title(const TransformerConfig& model, const LlmCluster& c, const char* what) {
  return fmt::format("{} on {} x {}: {}", model.name, c.devices, c.device.name, what);
}

}  // namespace
}  // namespace html_llm

void LlmStepAnswer::WriteHtml(std::ostream& out) const {
  using namespace html_llm;
  HtmlPage page(out, Title(model, cluster, "one split"));
  html_report::Opening(page, *this);
  page.Paragraph(BriefReport() + ".");
  const PredictionInterval& i = interval;
  const auto [low, high] = i.TimeRange(step.step_s);
  const auto [tokens_low, tokens_high] = i.RateRange(step.tokens_per_s);
  page.Table("summary", "The step", {{"quantity", false}, {"value"}},
             {{"split", SplitLabel(step.split)},
              {"step time (s)", html_report::WithInterval(step.step_s, low, high)},
              {"tokens/s", html_report::WithInterval(step.tokens_per_s, tokens_low, tokens_high)},
              {"sequences/s", FormatSig(step.sequences_per_s)},
              {"MFU (%)", FormatSig(100 * step.mfu, 3)},
              {"micro-batches per step", std::to_string(step.accumulation)},
              {"memory per GPU (GB)", fmt::format("{} of {}", FormatSig(step.memory.total / kGb),
                                                  FormatSig(step.memory.capacity / kGb))},
              {"fits", step.memory.fits ? "yes"
                                        : fmt::format("no: {} GB short",
                                                      FormatSig(step.memory.shortfall / kGb))}});
  svg::BarChart time = TimeChart("step-parts", "Where the step's time goes", interval);
  time.rows.push_back(TimeRow(SplitLabel(step.split), step, interval));
  time.rows.back().muted = false;  // one split: its memory chart shows whether it fits
  page.Figure(svg::RenderBars(time),
              "The parts of one optimizer step, exposed time only (communication hidden behind "
              "compute is not drawn); the whisker is the step time's interval.");
  svg::BarChart memory = MemoryChart("memory", "Memory per GPU by component", cluster);
  memory.rows.push_back(MemoryRow(SplitLabel(step.split), step));
  memory.rows.back().muted = false;
  page.Figure(svg::RenderBars(memory),
              "Memory of the most loaded GPU (the first pipeline stage) "
              "against the device's capacity.");
  std::vector<std::vector<std::string>> parts;
  for (const auto& [name, value] : NamedStepParts(step.parts)) {
    parts.push_back({name.substr(0, name.size() - 2), FormatSig(1e3 * value),
                     FormatSig(100 * value / step.step_s, 3)});
  }
  page.Table("parts", "The step's parts", {{"part", false}, {"ms"}, {"% of step"}}, parts);
  html_report::Closing(page, *this, LlmStepAssumptions(step, cluster, interval, calibration));
}

void LlmPlanAnswer::WriteHtml(std::ostream& out) const {
  using namespace html_llm;
  HtmlPage page(out, Title(model, cluster, "the fastest splits"));
  html_report::Opening(page, *this);
  page.Paragraph(fmt::format(
      "{}. Global batch {} sequences of {} tokens, {}. {} splits evaluated in {} s, {} fit in "
      "memory.",
      BriefReport(), options.global_batch, options.training.seq_len,
      MatrixFormatName(options.training.format), plan.evaluated, FormatSig(plan.search_s, 3),
      plan.fitting));
  const size_t drawn = std::min(plan.ranked.size(), kPlanChartRows);
  std::vector<LlmRunTotals> totals;
  if (tokens) {
    for (const LlmStep& s : plan.ranked) {
      totals.push_back(LlmTotals(s, cluster, *tokens, price_per_device_hour, interval));
    }
  }
  if (drawn > 0) {
    svg::BarChart time = TimeChart(
        "step-parts", fmt::format("Step time by part, the {} fastest splits", drawn), interval);
    for (size_t k = 0; k < drawn; ++k) {
      time.rows.push_back(TimeRow(fmt::format("#{} {}", k + 1, SplitLabel(plan.ranked[k].split)),
                                  plan.ranked[k], interval));
    }
    page.Figure(svg::RenderBars(time),
                "Each split's optimizer step by part (exposed time), fastest first; the whisker "
                "is the step time's interval.");
  }
  const size_t missing = std::min<size_t>(plan.not_fitting.size(), 5);
  if (drawn + missing > 0) {
    svg::BarChart memory =
        MemoryChart("memory", "Memory per GPU by component against the capacity", cluster);
    for (size_t k = 0; k < drawn; ++k) {
      memory.rows.push_back(MemoryRow(
          fmt::format("#{} {}", k + 1, SplitLabel(plan.ranked[k].split)), plan.ranked[k]));
    }
    for (size_t k = 0; k < missing; ++k) {
      memory.rows.push_back(
          MemoryRow("no fit: " + SplitLabel(plan.not_fitting[k].split), plan.not_fitting[k]));
    }
    page.Figure(svg::RenderBars(memory),
                "Memory of each split's most loaded GPU; the faded bars are the fastest splits "
                "that do not fit.");
  }
  if (tokens && drawn > 0) {
    const std::string band = IntervalName(interval);
    svg::BarChart days;
    days.id = "days";
    days.title = fmt::format("Days to train {} tokens", FormatSig(*tokens, 3));
    days.axis_label = "days (wall clock)";
    days.part_names = {"days"};
    days.whisker_name = band;
    for (size_t k = 0; k < drawn; ++k) {
      svg::BarRow row(fmt::format("#{} {}", k + 1, SplitLabel(plan.ranked[k].split)),
                      {totals[k].days});
      row.low = totals[k].days_low;
      row.high = totals[k].days_high;
      days.rows.push_back(std::move(row));
    }
    page.Figure(svg::RenderBars(days), "Days of the run at each split's pace, with the interval.");
    if (price_per_device_hour) {
      svg::BarChart cost = days;
      cost.id = "cost";
      cost.title = fmt::format("Cost at {} per device-hour", FormatSig(*price_per_device_hour));
      cost.axis_label = "cost (the price's currency)";
      cost.part_names = {"cost"};
      for (size_t k = 0; k < drawn; ++k) {
        // Cost is devices x hours x price: the days' interval scales it alike.
        const double c = totals[k].cost.value_or(NAN), d = totals[k].days;
        cost.rows[k].parts = {c};
        cost.rows[k].low = c * totals[k].days_low / d;
        cost.rows[k].high = c * totals[k].days_high / d;
      }
      page.Figure(svg::RenderBars(cost), "The run's cost at each split, with the interval.");
    }
  }
  std::vector<HtmlColumn> columns = {{"rank"}};
  const std::vector<HtmlColumn> split = SplitColumns();
  columns.insert(columns.end(), split.begin(), split.end());
  const std::string level =
      interval.available ? " [" + html_report::Level(interval.level) + "]" : "";
  for (const std::string& h : {"step (s)" + level, "tokens/s" + level, std::string("MFU (%)"),
                               std::string("memory (GB)")}) {
    columns.push_back({h});
  }
  if (tokens) columns.push_back({"days" + level});
  if (price_per_device_hour) columns.push_back({"cost"});
  auto row_of = [&](const LlmStep& s, const std::string& rank, const LlmRunTotals* run) {
    std::vector<std::string> row = {rank};
    const std::vector<std::string> cells = SplitCells(s);
    row.insert(row.end(), cells.begin(), cells.end());
    const auto [step_low, step_high] = interval.TimeRange(s.step_s);
    const auto [tokens_low, tokens_high] = interval.RateRange(s.tokens_per_s);
    row.push_back(html_report::WithInterval(s.step_s, step_low, step_high));
    row.push_back(html_report::WithInterval(s.tokens_per_s, tokens_low, tokens_high));
    row.push_back(FormatSig(100 * s.mfu, 3));
    row.push_back(fmt::format("{} of {}", FormatSig(s.memory.total / kGb),
                              FormatSig(s.memory.capacity / kGb)));
    if (tokens) {
      row.push_back(run ? html_report::WithInterval(run->days, run->days_low, run->days_high, 3)
                        : "");
    }
    if (price_per_device_hour) row.push_back(run && run->cost ? FormatSig(*run->cost) : "");
    return row;
  };
  std::vector<std::vector<std::string>> ranked;
  for (size_t k = 0; k < plan.ranked.size(); ++k) {
    ranked.push_back(row_of(plan.ranked[k], std::to_string(k + 1), tokens ? &totals[k] : nullptr));
  }
  if (ranked.empty()) {
    page.Paragraph(fmt::format(
        "No split fits in {} GB per device: the fastest that do not fit follow, with how much "
        "memory each lacks.",
        FormatSig(cluster.device.memory_capacity_bytes / kGb)));
  } else {
    page.Table("ranked", fmt::format("The {} fastest splits that fit", plan.ranked.size()), columns,
               ranked);
  }
  std::vector<std::vector<std::string>> short_rows;
  for (const LlmStep& s : plan.not_fitting) {
    std::vector<std::string> row = row_of(s, "", nullptr);
    row.front() = FormatSig(s.memory.shortfall / kGb) + " GB short";
    short_rows.push_back(std::move(row));
  }
  if (!short_rows.empty()) {
    columns.front() = {"shortfall", false};
    page.Table("not-fitting", "The fastest splits that do not fit", columns, short_rows);
  }
  html_report::Closing(
      page, *this, LlmPlanAssumptions(plan, cluster, interval, calibration, tokens.has_value()));
}

}  // namespace fitspeed
