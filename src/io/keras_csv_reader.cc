// Reader of the file Keras' CSVLogger callback writes (often training.log).
// Defined in docs/formats/keras-csv.md. CSVLogger.on_epoch_end writes one row
// per epoch: the epoch counted from 0, then the logs' keys in sorted order:
//   epoch,accuracy,loss,val_accuracy,val_loss
//   0,0.4110209345817566,1.7160215377807617,0.469490110874176,1.4435802698135376
// Keras logs no time: a row gives a sample only where a callback added a time
// or a rate to the logs before CSVLogger ran.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fitspeed/core/error.h"
#include "metric_table.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

namespace {

constexpr char kFormat[] = "Keras CSVLogger log";
// Seconds after 1973-03-03: a time column whose every value is above is a Unix
// timestamp, not a duration.
constexpr double kMinTimestamp = 1e8;

// "time", "duration", "time_s", "duration [ms]": a duration that does not say
// of what; on rows of epochs it is read as the epoch's.
bool IsBareDuration(const std::string& name) {
  return ClassifyMetric(name).kind == MetricKind::kOther &&
         ClassifyMetric("epoch_" + name).kind == MetricKind::kEpochTime;
}

// The bare duration column `c` read as epoch times, or as a clock when its
// values are Unix timestamps. Throws DataError when its values grow as a
// running total would, which an epoch's duration does not.
MetricName BareDurationMeaning(const CsvTable& table, size_t c, const std::string& source) {
  MetricName meaning = ClassifyMetric("epoch_" + table.columns[c]);
  std::vector<std::pair<int, double>> values;  // line, value
  for (const CsvRow& row : table.rows) {
    if (const auto v = ToDouble(row.cells[c]); v && std::isfinite(*v)) {
      values.emplace_back(row.line, *v);
    }
  }
  if (values.empty()) return meaning;
  if (std::all_of(values.begin(), values.end(),
                  [](const auto& v) { return v.second > kMinTimestamp; })) {
    meaning.kind = MetricKind::kClock;
    meaning.scale = 1;
    return meaning;
  }
  bool growing = values.size() >= 3 && values.back().second >= 2 * values.front().second;
  for (size_t i = 1; growing && i < values.size(); ++i) {
    growing = values[i].second > values[i - 1].second;
  }
  if (growing) {
    throw DataError(
        source, values.back().first, table.columns[c],
        fmt::format("{}: '{}' grows on every row ({} on line {} to {} on line {}), as a time "
                    "since the start would, not an epoch's duration; name the column "
                    "'elapsed' if it is the time since the start, or 'epoch_time' if it is "
                    "each epoch's",
                    kFormat, table.columns[c], values.front().second, values.front().first,
                    values.back().second, values.back().first));
  }
  return meaning;
}

}  // namespace

bool LooksLikeKerasCsv(std::string_view head) {
  const auto records = HeadRecords(head, 2);
  if (records.size() < 2) return false;
  const std::vector<std::string>& header = records[0];
  if (header.size() < 2 || header[0] != "epoch") return false;
  for (size_t i = 1; i < header.size(); ++i) {
    const std::string& name = header[i];
    if (name.empty() || ToDouble(name) || IsFitspeedBatchColumn(name) || name == "step") {
      return false;
    }
    // CSVLogger writes the logs' keys sorted.
    if (i > 1 && !(header[i - 1] < name)) return false;
  }
  const auto epoch = ToDouble(records[1][0]);
  return epoch && *epoch >= 0 && *epoch == static_cast<double>(static_cast<long long>(*epoch));
}

std::vector<Sample> ReadKerasCsv(std::string_view text, const ReaderContext& context) {
  const std::string& source = context.source;
  const CsvTable table = ParseCsvTable(text, source, {kFormat});
  if (table.header_line == 0) return {};
  const int epoch = table.Find("epoch");
  if (epoch < 0) {
    throw DataError(source, table.header_line, "epoch",
                    fmt::format("{}: no 'epoch' column (columns: {}); CSVLogger writes it first",
                                kFormat, ColumnList(table.columns)));
  }
  if (table.rows.empty()) {
    throw DataError(source, table.header_line, "",
                    fmt::format("{}: the header is not followed by any row", kFormat));
  }

  Series series;
  series.epoch_column = epoch;
  series.zero_based_epochs = true;  // CSVLogger writes the epoch index fit() passes, from 0
  series.one_row_per_epoch = true;
  series.names = table.columns;
  std::vector<MetricColumn> candidates;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    const int column = static_cast<int>(c);
    if (column == epoch) continue;
    const std::string& name = table.columns[c];
    MetricColumn candidate{column, name, ClassifyMetric(name), 0};
    if (IsBareDuration(name)) candidate.metric = BareDurationMeaning(table, c, source);
    for (const CsvRow& row : table.rows) {
      if (!row.cells[c].empty()) ++candidate.values;
    }
    if (candidate.metric.evaluation) series.evaluation_columns.push_back(column);
    candidates.push_back(std::move(candidate));
  }
  const auto observation = ChooseObservation(candidates, /*has_step=*/false, /*has_epoch=*/true,
                                             context, table.header_line);
  if (!observation) {
    throw DataError(source, table.header_line, "",
                    fmt::format("{}: no time column (columns: {}): fitspeed needs epoch or step "
                                "times; log them with a callback (an 'epoch_time' key in the "
                                "logs) or give the measurements another way",
                                kFormat, ColumnList(table.columns)));
  }
  series.observation = *observation;
  return ReadSeries(table, series, context, kFormat);
}

}  // namespace fitspeed::io
