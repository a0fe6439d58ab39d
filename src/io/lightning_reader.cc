// Reader of the metrics.csv that PyTorch Lightning's CSVLogger writes
// (lightning_logs/version_N/metrics.csv). Defined in docs/formats/lightning.md.
// The logger writes one row per log call, with the union of every key logged
// as columns, `step` (the trainer's optimizer step) among them and `epoch`
// (counted from 0) for what LightningModule.log sends; cells of keys a call
// did not log are empty:
//   epoch,epoch_time,step,train_loss_step,val_loss
//   0,,49,7.63,
//   0,,14073,,4.13
//   0,2517.10,14073,,
// Lightning itself logs no time: a row gives samples only where the user's
// code or a callback (ThroughputMonitor) logged a time or a rate.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "metric_table.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr char kFormatLightning[] = "Lightning CSVLogger metrics";

// ThroughputMonitor's cumulative keys beside "<stage>/time" (its elapsed seconds).
bool IsThroughputMonitorClock(const CsvTable& table, const std::string& name) {
  const size_t slash = name.rfind('/');
  if (slash == std::string::npos || name.substr(slash + 1) != "time") return false;
  const std::string stage = name.substr(0, slash + 1);
  return table.Find(stage + "batches") >= 0 || table.Find(stage + "samples") >= 0;
}

}  // namespace

bool LooksLikeLightning(std::string_view head) {
  const auto records = HeadRecords(head, 2);
  if (records.size() < 2) return false;
  const std::vector<std::string>& header = records[0];
  int step = -1, epoch = -1;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& name = header[i];
    if (name.empty() || ToDouble(name) || IsFitspeedBatchColumn(name)) return false;
    if (name == "step") step = static_cast<int>(i);
    if (name == "epoch") epoch = static_cast<int>(i);
  }
  if (step < 0 || epoch < 0 || header.size() < 3 || records[1].size() != header.size()) {
    return false;
  }
  // csv.DictWriter fills every field; the step of a row is a whole number.
  const auto value = ToDouble(records[1][static_cast<size_t>(step)]);
  return value && *value >= 0 && *value == static_cast<double>(static_cast<long long>(*value));
}

std::vector<Sample> ReadLightning(std::string_view text, const ReaderContext& context) {
  const std::string& source = context.source;
  const CsvTable table = ParseCsvTable(text, source, {kFormatLightning});
  if (table.header_line == 0) return {};
  const int step = table.Find("step");
  if (step < 0) {
    throw DataError(source, table.header_line, "step",
                    fmt::format("{}: no 'step' column (columns: {}); CSVLogger writes one in "
                                "every metrics.csv",
                                kFormatLightning, ColumnList(table.columns)));
  }
  if (table.rows.empty()) {
    throw DataError(source, table.header_line, "",
                    fmt::format("{}: the header is not followed by any row", kFormatLightning));
  }
  const int epoch = table.Find("epoch");

  Series series;
  series.step_column = step;
  series.epoch_column = epoch;
  series.zero_based_epochs = true;  // trainer.current_epoch
  series.names = table.columns;
  std::vector<MetricColumn> candidates;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const int column = static_cast<int>(c);
    if (column == step || column == epoch) continue;
    const std::string& name = table.columns[c];
    MetricColumn candidate{column, name, ClassifyMetric(name), 0};
    if (IsThroughputMonitorClock(table, name)) candidate.metric.kind = MetricKind::kClock;
    for (const CsvRow& row : table.rows) {
      if (!row.cells[c].empty()) ++candidate.values;
    }
    if (candidate.metric.evaluation) series.evaluation_columns.push_back(column);
    candidates.push_back(std::move(candidate));
  }
  const auto observation =
      ChooseObservation(candidates, /*has_step=*/true, epoch >= 0, context, table.header_line);
  if (!observation) {
    throw DataError(source, table.header_line, "",
                    fmt::format("{}: no time column (columns: {}): fitspeed needs step or "
                                "epoch times; log them (self.log(\"step_time\", ...), "
                                "\"epoch_time\", or Lightning's ThroughputMonitor callback) "
                                "or give the measurements another way",
                                kFormatLightning, ColumnList(table.columns)));
  }
  series.observation = *observation;
  return ReadSeries(table, series, context, kFormatLightning);
}

}  // namespace fitspeed::io
