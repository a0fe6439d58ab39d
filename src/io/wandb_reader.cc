// Reader of the CSV files exported from Weights & Biases. Defined in
// docs/formats/wandb.md. Three layouts:
// - a run's history (run.history().to_csv(), or an export of the history
//   table): one row per wandb.log call, with W&B's own `_step` (the call's
//   index), `_runtime` (seconds since the run started) and `_timestamp` (Unix
//   seconds) beside the logged keys;
// - a chart ("line plot") export from the web page: the x axis first
//   ("Step", "Relative Time (Process)", ...), then "<run> - <metric>" per run,
//   with "<run> - <metric>__MIN" and "__MAX" beside it for grouped runs;
// - the runs table: one row per run ("Name","State",...,"Runtime",...,
//   config, summary metrics), refused: Runtime is a whole run's wall time.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "metric_table.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

enum class Layout { kUnknown, kHistory, kChart, kRunsTable };

constexpr char kHistoryFormat[] = "W&B history export";
constexpr char kChartFormat[] = "W&B chart export";
constexpr char kRunsFormat[] = "W&B runs table";

// The x axes of a W&B line plot, as the export names them.
constexpr char kStepAxis[] = "Step";
bool IsClockAxis(const std::string& name) {
  // W&B's _runtime (process) and _absolute_runtime (wall), in seconds.
  return name == "Relative Time (Process)" || name == "Relative Time (Wall)";
}
bool IsChartAxis(const std::string& name) {
  return name == kStepAxis || IsClockAxis(name) || name == "Wall Time";
}

constexpr char kSeparator[] = " - ";  // "<run> - <metric>"

bool IsAggregate(const std::string& name) {
  return EndsWith(name, "__MIN") || EndsWith(name, "__MAX");
}

// Training-step counters in the order they are preferred; `_step` (W&B's
// count of wandb.log calls) comes last.
constexpr const char* kStepNames[] = {"trainer/global_step",
                                      "train/global_step",
                                      "global_step",
                                      "iter",
                                      "iteration",
                                      "step",
                                      "_step"};

Layout LayoutOf(const std::vector<std::string>& columns) {
  if (columns.empty()) return Layout::kUnknown;
  auto has = [&](const char* name) {
    return std::find(columns.begin(), columns.end(), name) != columns.end();
  };
  if (columns[0] == "Name" && has("State") && has("Runtime")) return Layout::kRunsTable;
  if (columns.size() >= 2 && IsChartAxis(columns[0]) &&
      std::all_of(columns.begin() + 1, columns.end(),
                  [](const std::string& c) { return Contains(c, kSeparator); })) {
    return Layout::kChart;
  }
  if (has("_step") || has("_runtime") || has("_timestamp")) return Layout::kHistory;
  return Layout::kUnknown;
}

int CountValues(const CsvTable& table, int column) {
  int n = 0;
  for (const CsvRow& row : table.rows) {
    if (!row.cells[static_cast<size_t>(column)].empty()) ++n;
  }
  return n;
}

// An epoch column of whole numbers (Keras' WandbCallback logs one; the
// Hugging Face Trainer's train/epoch is fractional and is not one).
bool IsWholeColumn(const CsvTable& table, int column) {
  bool any = false;
  for (const CsvRow& row : table.rows) {
    const std::string& cell = row.cells[static_cast<size_t>(column)];
    if (cell.empty()) continue;
    const auto v = ToDouble(cell);
    if (!v || !(*v >= 0 && *v <= 1e9) || *v != static_cast<double>(static_cast<long long>(*v))) {
      return false;
    }
    any = true;
  }
  return any;
}

bool HasZero(const CsvTable& table, int column) {
  return std::any_of(table.rows.begin(), table.rows.end(), [&](const CsvRow& row) {
    const auto v = ToDouble(row.cells[static_cast<size_t>(column)]);
    return v && *v == 0;
  });
}

void WarnLogCallSteps(const ReaderContext& context, int line) {
  Warn(context, line,
       "steps are counted by '_step', W&B's count of wandb.log calls: the step times are per "
       "optimizer step only if the script logged once per step (log a step counter such as "
       "trainer/global_step to make it certain)");
}

std::vector<Sample> ReadHistory(const CsvTable& table, const ReaderContext& context) {
  const std::string& source = context.source;
  Series series;
  series.names = table.columns;
  for (const char* name : kStepNames) {
    series.step_column = table.Find(name);
    if (series.step_column >= 0) break;
  }
  const int epoch = table.Find("epoch");
  if (epoch >= 0 && IsWholeColumn(table, epoch)) {
    series.epoch_column = epoch;
    series.zero_based_epochs = HasZero(table, epoch);
  }
  const bool has_runtime = table.Find("_runtime") >= 0;
  std::vector<MetricColumn> candidates;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const int column = static_cast<int>(c);
    const std::string& name = table.columns[c];
    if (column == series.step_column || column == series.epoch_column || name.empty() ||
        name == "_step" || (name == "_timestamp" && has_runtime)) {
      continue;  // the pandas index, counters, and the second clock
    }
    MetricColumn candidate{column, name, ClassifyMetric(name), CountValues(table, column)};
    if (candidate.metric.evaluation) series.evaluation_columns.push_back(column);
    candidates.push_back(std::move(candidate));
  }
  const auto observation = ChooseObservation(candidates, series.step_column >= 0,
                                             series.epoch_column >= 0, context, table.header_line);
  if (!observation) {
    throw DataError(source, table.header_line, "",
                    fmt::format("{}: no time column (columns: {}): fitspeed needs step or epoch "
                                "times; export the history with _runtime and a step column, "
                                "or log a samples-per-second rate",
                                kHistoryFormat, ColumnList(table.columns)));
  }
  series.observation = *observation;
  if (observation->kind == Observation::kClock &&
      table.columns[static_cast<size_t>(series.step_column)] == "_step") {
    WarnLogCallSteps(context, table.header_line);
  }
  return ReadSeries(table, series, context, kHistoryFormat);
}

std::vector<Sample> ReadChart(const CsvTable& table, const ReaderContext& context) {
  const std::string& source = context.source;
  const std::string& axis = table.columns[0];
  // The runs in the order of their first column, and their metric columns.
  std::vector<std::string> runs;
  std::vector<std::vector<int>> run_columns;
  std::vector<std::string> metric_names = table.columns;  // "<run> - m" -> "m"
  std::vector<std::string> plotted;                       // metric names, for messages
  for (size_t c = 1; c < table.columns.size(); ++c) {
    const std::string& name = table.columns[c];
    if (IsAggregate(name)) continue;
    const size_t at = name.rfind(kSeparator);
    const std::string run = name.substr(0, at);
    metric_names[c] = name.substr(at + std::string_view(kSeparator).size());
    if (std::find(plotted.begin(), plotted.end(), metric_names[c]) == plotted.end()) {
      plotted.push_back(metric_names[c]);
    }
    const auto found = std::find(runs.begin(), runs.end(), run);
    if (found == runs.end()) {
      runs.push_back(run);
      run_columns.push_back({static_cast<int>(c)});
    } else {
      run_columns[static_cast<size_t>(found - runs.begin())].push_back(static_cast<int>(c));
    }
  }

  std::vector<Sample> samples;
  std::vector<std::string> without_time;
  for (size_t r = 0; r < runs.size(); ++r) {
    Series series;
    series.label = runs[r];
    series.names = metric_names;
    std::vector<MetricColumn> candidates;
    if (axis == kStepAxis) {
      series.step_column = 0;
    } else if (IsClockAxis(axis)) {
      MetricName clock;
      clock.kind = MetricKind::kClock;
      candidates.push_back({0, axis, clock, CountValues(table, 0)});
    }
    for (const char* step_name : kStepNames) {
      if (series.step_column >= 0) break;
      for (int c : run_columns[r]) {
        if (metric_names[static_cast<size_t>(c)] == step_name) series.step_column = c;
      }
    }
    for (int c : run_columns[r]) {
      if (c == series.step_column) continue;
      MetricColumn candidate{c, metric_names[static_cast<size_t>(c)],
                             ClassifyMetric(metric_names[static_cast<size_t>(c)]),
                             CountValues(table, c)};
      if (candidate.metric.evaluation) series.evaluation_columns.push_back(c);
      candidates.push_back(std::move(candidate));
    }
    const auto observation = ChooseObservation(candidates, series.step_column >= 0,
                                               /*has_epoch=*/false, context, table.header_line);
    if (!observation) {
      without_time.push_back(runs[r]);
      continue;
    }
    series.observation = *observation;
    if (observation->kind == Observation::kClock &&
        metric_names[static_cast<size_t>(series.step_column)] == "_step") {
      WarnLogCallSteps(context, table.header_line);
    }
    std::vector<Sample> run_samples = ReadSeries(table, series, context, kChartFormat);
    samples.insert(samples.end(), run_samples.begin(), run_samples.end());
  }
  if (samples.empty()) {
    throw DataError(source, table.header_line, "",
                    fmt::format("{}: no time column: the chart plots {} against '{}' for {} "
                                "run(s); fitspeed needs step times: export a chart of a "
                                "samples-per-second metric, or of _runtime against Step, or the "
                                "runs' history (_step, _runtime)",
                                kChartFormat, ColumnList(plotted, 4), axis, runs.size()));
  }
  if (!without_time.empty()) {
    Warn(context, table.header_line,
         fmt::format("run(s) with no time column in the chart, skipped: {}",
                     ColumnList(without_time, 4)));
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample& a, const Sample& b) { return a.line < b.line; });
  return samples;
}

}  // namespace

bool LooksLikeWandb(std::string_view head) {
  const auto records = HeadRecords(head, 1);
  return !records.empty() && LayoutOf(records[0]) != Layout::kUnknown;
}

std::vector<Sample> ReadWandb(std::string_view text, const ReaderContext& context) {
  const std::string& source = context.source;
  const CsvTable table = ParseCsvTable(text, source, {"W&B export"});
  if (table.header_line == 0) return {};
  const Layout layout = LayoutOf(table.columns);
  if (layout == Layout::kUnknown) {
    throw DataError(source, table.header_line, "",
                    fmt::format("not a W&B export: the header (columns: {}) has neither _step, "
                                "_runtime nor _timestamp (a history), nor a chart's axis and "
                                "'<run> - <metric>' columns, nor a runs table's Name, State "
                                "and Runtime",
                                ColumnList(table.columns)));
  }
  if (layout == Layout::kRunsTable) {
    throw DataError(source, table.header_line, "Runtime",
                    fmt::format("{} (one row per run): 'Runtime' is a run's whole wall time, "
                                "start-up, evaluation and checkpoints included, and no column "
                                "gives the time of the steps; export a run's history (_step, "
                                "_runtime) or a chart of a samples-per-second metric instead",
                                kRunsFormat));
  }
  if (table.rows.empty()) {
    throw DataError(source, table.header_line, "",
                    "W&B export: the header is not followed by any row");
  }
  return layout == Layout::kChart ? ReadChart(table, context) : ReadHistory(table, context);
}

}  // namespace fitspeed::io
