// Shared by the readers of the metric tables that training tools write as CSV
// (Lightning's CSVLogger, Keras' CSVLogger, Weights & Biases exports): the
// table, what a metric's name says it measures, and the samples one series of
// a table gives. The rules are defined in docs/formats/lightning.md,
// docs/formats/keras-csv.md and docs/formats/wandb.md.
#ifndef FITSPEED_SRC_IO_METRIC_TABLE_H_
#define FITSPEED_SRC_IO_METRIC_TABLE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/sample.h"
#include "io/csv_table.h"
#include "readers.h"

namespace fitspeed::io {

// --- The table -----------------------------------------------------------------
// A metric table is comma-separated with RFC 4180 quoting (a quoted field may
// span lines): io::ParseCsvTable with CsvDialect{format}.

// The first `count` records of `head` (the start of a file), for the
// sniffers: never throws, and leaves out a record the end of `head` cuts.
std::vector<std::vector<std::string>> HeadRecords(std::string_view head, size_t count);

// "epoch, accuracy, loss, ..." (at most `max` names) for messages.
std::string ColumnList(const std::vector<std::string>& names, size_t max = 8);

// True when `name` is one of the batch columns of fitspeed's own CSV tables
// (docs/formats/csv.md): a table with one is a fitspeed table, not a tool's
// metric log, and the sniffers leave it to the csv format.
bool IsFitspeedBatchColumn(std::string_view name);

// --- Metric names ----------------------------------------------------------------

enum class MetricKind {
  kOther,      // losses, accuracies, learning rates, ...
  kStepTime,   // the time of one optimizer step
  kEpochTime,  // the time of one epoch
  kRate,       // samples (or tokens) per unit of time
  kClock,      // seconds since the start, or a Unix timestamp: times are differences
};

struct MetricName {
  MetricKind kind = MetricKind::kOther;
  double scale = 1;         // to seconds, or to samples per second
  bool per_device = false;  // a `device` path segment (Lightning's ThroughputMonitor)
  bool tokens = false;      // a rate counted in tokens
  bool evaluation = false;  // a validation, evaluation or test metric
  bool epoch_mean = false;  // Lightning's `<name>_epoch`: the mean of `<name>` over an epoch
};

// What a metric's name says it measures (docs/formats/lightning.md lists the names).
MetricName ClassifyMetric(std::string_view name);

// --- Series and their samples --------------------------------------------------

enum class Observation {
  kStepTime,    // a step-time column: one sample per row
  kThroughput,  // a rate column: one sample per row
  kClock,       // a clock column with a step column: step time = dclock / dstep
  kEpochTime,   // an epoch-time column: one sample per epoch
  kEpochClock,  // a clock column on one row per epoch: epoch time = dclock
};

struct ObservationColumn {
  Observation kind = Observation::kStepTime;
  int column = -1;
  double scale = 1;  // to seconds or samples per second
};

// One series of a table: the rows of one run (all rows, or the cells of one
// run in a W&B chart export) and which columns carry what.
struct Series {
  SharedString label;     // Sample::label
  int step_column = -1;   // optimizer steps, whole numbers
  int epoch_column = -1;  // epoch numbers, whole numbers
  bool zero_based_epochs = false;
  // Each row is one epoch (Keras' CSVLogger): per-row values of the epochs
  // <= ReadOptions::skip_first_epochs are warm-up, not only the first row.
  bool one_row_per_epoch = false;
  std::vector<int> evaluation_columns;  // a value here marks a row as evaluation
  ObservationColumn observation;
  // Names of the series' columns for messages (the metric part in a W&B chart).
  std::vector<std::string> names;  // indexed like CsvTable::columns
};

// A candidate metric column of a series.
struct MetricColumn {
  int column = -1;
  std::string name;  // the metric's name (without a W&B run prefix)
  MetricName metric;
  int values = 0;  // rows with a value in the column
};

// The column of `candidates` that observes the time, the first of: step time,
// rate, clock (when `has_step`), epoch time, clock on epoch rows (when
// `has_epoch` and not `has_step`); evaluation metrics never, per-step kinds
// only with values on two rows or more (the first is warm-up); per-device
// rates only when no global rate is there, tokens only when no samples, epoch
// means only when no per-step values. Warns about a column of the chosen kind
// that is left out, and when a per-device rate is read. nullopt when no
// column measures time.
std::optional<ObservationColumn> ChooseObservation(const std::vector<MetricColumn>& candidates,
                                                   bool has_step, bool has_epoch,
                                                   const ReaderContext& context, int header_line);

// The samples of `series` (docs/formats/lightning.md, "Which numbers"). Leaves
// the batch at 0 when the log lacks it. Throws DataError on a malformed cell
// and when no sample remains, saying why (warm-up, evaluation, gaps).
std::vector<Sample> ReadSeries(const CsvTable& table, const Series& series,
                               const ReaderContext& context, std::string_view format);

}  // namespace fitspeed::io

#endif  // FITSPEED_SRC_IO_METRIC_TABLE_H_
