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
// calibrated device; elsewhere those errors widened by the device interval
// table's spread for the device's class (the catalog's uncertainty on a
// device nothing of this model was measured on), with the basis saying so.
PredictionInterval LlmInterval(const Device& device, double level);

}  // namespace fitspeed

#endif  // FITSPEED_LLM_CALIBRATION_H_
