// The split model's calibration and prediction interval (docs/llm.md,
// "Calibration and intervals"): constants fitted on vTrain's measured
// Megatron-DeepSpeed iterations (the evidence layer's CalibrateLlmOnVtrain
// writes data/llm-calibration.json, compiled in), and the interval from the
// errors of folds that did not see the rows they predict.
#ifndef FITSPEED_LLM_CALIBRATION_H_
#define FITSPEED_LLM_CALIBRATION_H_

#include <string>
#include <vector>

#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/split.h"

namespace fitspeed {

// The compiled-in calibration ("fitspeed.llm-calibration/1"): the fitted
// constants and the held-out errors they were judged by.
struct LlmCalibrationTable {
  std::string schema = "fitspeed.llm-calibration/1";
  std::string generated_by;
  std::string device;  // the device the runs were measured on ("a100")
  LlmCalibration calibration;
  // ln(measured / predicted) of each row, from folds that excluded it.
  std::vector<ModelError> held_out;
  // The split model's errors on every development row it was checked on,
  // with the accelerator (catalog device) and the framework family of each:
  // vTrain's rows (their held-out errors; "megatron-deepspeed", a100) and the
  // MLPerf Training v3.0-v4.1 runs modeled with the compiled-in calibration
  // (their publisher as the source; runs whose throughput includes evaluation
  // left out). What LlmInterval builds a left-out accelerator's interval from.
  // JSON "development" (optional: older tables have none).
  struct DevelopmentError {
    ModelError error;
    std::string device;     // "h100"
    std::string framework;  // "nemo", "jax", "deepspeed", "habana", "megatron-deepspeed"
  };
  std::vector<DevelopmentError> development;
  // The factor a left-out accelerator's interval is widened by, in log space
  // around its median (LlmLeaveOutWidening at 80%, computed with the
  // development rows): 1 when not computed. JSON "accelerator_widening".
  double accelerator_widening = 1;
};

// Parses a "fitspeed.llm-calibration/1" document; DataError(source, line, field, problem).
LlmCalibrationTable ParseLlmCalibrationJson(const std::string& text, const std::string& source);
std::string LlmCalibrationToJson(const LlmCalibrationTable& table);

// The compiled-in table.
const LlmCalibrationTable& BuiltinLlmCalibration();

// The calibration for `device`: the table's constants where they were fitted
// (the same device), else the same constants carried, with the source saying so.
LlmCalibration LlmCalibrationFor(const Device& device);

// The interval of a predicted step on `device` at `level`: the held-out
// errors' split-conformal interval (fitspeed/device/intervals.h) on the
// calibrated device; elsewhere the interval of the table's development rows
// on every other accelerator (the device left out, publishers weighted
// equally, widened by accelerator_widening: how far off the model was on an
// accelerator it was not developed on; for a table without development rows
// the held-out errors), combined in quadrature, per side in log space, with
// the device interval table's spread for the device's class (what the
// catalog's kernels are known to miss on such a device); the basis says
// which. A `framework` (LlmFrameworks()) whose family has no development
// rows (FSDP, DeepSpeed over Hugging Face modules, MaxText) gets, on any
// device, the interval of every development row (all another framework's),
// widened by the larger of the left-out accelerator's and the left-out
// framework family's stretches, combined with the device class as above;
// "" or a family with rows: as without it.
PredictionInterval LlmInterval(const Device& device, double level,
                               const std::string& framework = "");

// The interval LlmInterval gives a setup whose `key` (the accelerator, the
// framework or the publisher) is `left_out`: the split-conformal interval of
// the development rows whose key differs, publishers weighted equally.
enum class LlmLeaveOut { kAccelerator, kFramework, kPublisher };
// `widen` >= 1 stretches it around its median in log space.
PredictionInterval LlmLeaveOutInterval(
    const std::vector<LlmCalibrationTable::DevelopmentError>& development, LlmLeaveOut key,
    const std::string& left_out, double level, double widen = 1);

// How such intervals hold: for each value of `key` among the rows, its rows
// checked against the interval of the others (LlmLeaveOutInterval); the
// share covered, publishers weighted equally (PublisherCoverageTally), and
// the values checked (a value whose interval is not available is skipped).
struct LlmLeaveOutCoverage {
  double coverage = 0;  // NaN when nothing was checked
  int values = 0, rows = 0, publishers = 0;
  double median_low = 0, median_high = 0;  // the intervals' factors, median over values
};
LlmLeaveOutCoverage LlmLeaveOutCoverageOf(
    const std::vector<LlmCalibrationTable::DevelopmentError>& development, LlmLeaveOut key,
    double level, double widen = 1);

// The smallest widening (1 to 8 in steps of 0.05) whose left-out intervals
// hold at least `level` of the left-out rows (LlmLeaveOutCoverageOf): the
// width the rows' own leave-one-out says a new value of `key` needs. 8 when
// none does.
double LlmLeaveOutWidening(const std::vector<LlmCalibrationTable::DevelopmentError>& development,
                           LlmLeaveOut key, double level);

}  // namespace fitspeed

#endif  // FITSPEED_LLM_CALIBRATION_H_
