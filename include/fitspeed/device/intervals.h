// Prediction intervals of the device step model, from its out-of-sample
// errors on published measurements (docs/validation.md, "Prediction
// intervals").
//
// An error is the log ratio e = ln(measured / predicted) of a case's
// throughput, predicted by a model that was not calibrated on it. The errors
// of a class of predictions (device kind x precision group: "gpu/fp32",
// "gpu/tensor", ...) give the interval of a new prediction of that class by
// split conformal prediction (Vovk et al. 2005; Lei et al., JASA 2018): with
// n exchangeable errors sorted e(1) <= ... <= e(n) and miscoverage a = 1 -
// level, throughput lies in
//   predicted x [exp(e(k_lo)), exp(e(k_hi))],
//   k_lo = floor((n+1) a/2),  k_hi = ceil((n+1)(1 - a/2)),
// with probability >= level, each tail <= a/2. It needs k_lo >= 1 and
// k_hi <= n (n >= 9 at 80%, n >= 39 at 95%), and errors from
// kModelIntervalMinSources sources or more: cases of one published table
// share its framework and method, so they are not exchangeable with another
// table's, and a new user's setup is a new source. A class with fewer
// sources uses its kind's errors (all its precision groups); where the data
// is thinner still the interval is not given and the reason says so.
//
// The rule is tested as a user meets it: leave one source out
// (LeaveOneSourceOutCoverage, fitspeed/evidence/interval_table.h, which also
// builds the table), the interval built without the source's cases must
// contain the stated share of them.
//
//   fitspeed::IntervalTable table = fitspeed::BuiltinIntervalTable();
//   fitspeed::PredictionInterval i = table.For(device, Precision::kMixed, 0.8);
//   if (i.available) low_sps = predicted_sps * i.low_factor;
#ifndef FITSPEED_DEVICE_INTERVALS_H_
#define FITSPEED_DEVICE_INTERVALS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/step_model.h"

namespace fitspeed {

// The sources a class's (or kind's) errors must come from for its interval.
// With three sources, leaving one out leaves two, whose difference is all the
// interval sees of how far a new source can fall: the GPU tensor-core class,
// when it had three sources (three frameworks of one file), covered 61% of
// the held-out cases at 80% with its own errors and 92% with the GPU kind's
// (docs/validation.md, "Prediction intervals"). Transferred predictions keep
// two: their errors are relative to a measurement of the same network.
inline constexpr int kModelIntervalMinSources = 4;
inline constexpr int kTransferIntervalMinSources = 2;

// The class of a prediction: "<kind>/<group>", group "fp32" when the matrix
// work runs on CUDA cores or a CPU's vector units, "tensor" when it runs on
// tensor units (TF32, FP16/BF16, a TPU's MXU): the two have different errors.
std::string ModelErrorClass(const Device& device, Precision precision);
// The coarser class it falls back to: the kind alone ("gpu").
std::string ModelErrorKindClass(const std::string& error_class);

// Out-of-sample errors per class.
struct IntervalTable {
  std::string schema = "fitspeed.intervals/1";
  std::string generated_by;  // the command and fitspeed version that wrote it
  std::map<std::string, std::vector<ModelError>> classes;  // class -> errors
  // Transferred predictions (fitspeed sweep --from), per device kind.
  std::map<std::string, std::vector<ModelError>> transfer;
  // Predictions with a framework profile (fitspeed sweep --framework) on a GPU
  // the profile was not fitted on (its leave-one-GPU-out folds), per class,
  // every framework's together: no framework alone has runs from
  // kModelIntervalMinSources sources.
  std::map<std::string, std::vector<ModelError>> framework;

  // The interval of a prediction of `error_class`: from its errors when they
  // give one, else from its kind's (all its errors together), else not
  // available with both reasons.
  PredictionInterval For(const std::string& error_class, double level) const;
  // For a device: its class's interval when some published case of the table
  // ran on it (or it was calibrated, or its file has "class_interval": true,
  // Device::class_interval: the catalog devices the class's interval was
  // reported for before issue 30, h100, p100, v100-pcie and tpu-v3-8); for a
  // device without one (the catalog's H200, B200, MI300X, ...,
  // a user's file), wider: each error of the class is shifted by each measured
  // device's bias (its cases' median log ratio less the median over devices),
  // and the basis says "widened: <device> has no published case (uncalibrated)".
  PredictionInterval For(const Device& device, Precision precision, double level) const;
  // The interval of a transferred prediction on a device of `kind`.
  PredictionInterval ForTransfer(const std::string& kind, double level) const;
  // The interval of a prediction with a framework profile applied: from the
  // profiles' held-out errors of its class, else of its kind (as For()); the
  // basis reads "framework:<class>".
  PredictionInterval ForFramework(const std::string& error_class, double level) const;
  PredictionInterval ForFramework(const Device& device, Precision precision, double level) const;
};

// Whether a published case of `table` ran on `device` (by the device part of
// its case key), or the device was calibrated (Device::calibrated_on).
bool HasPublishedCases(const IntervalTable& table, const Device& device);

// JSON (schema "fitspeed.intervals/1", docs/validation.md) and back. Parsing
// throws DataError naming `source` and the field.
std::string IntervalTableToJson(const IntervalTable& table);
IntervalTable ParseIntervalTable(std::string_view text, const std::string& source);
IntervalTable ReadIntervalTableFile(const std::string& path);

// The table compiled in from data/intervals.json (written by `fitspeed validate
// --intervals-out`; a test checks it matches the current model and data).
const IntervalTable& BuiltinIntervalTable();

}  // namespace fitspeed

#endif  // FITSPEED_DEVICE_INTERVALS_H_
