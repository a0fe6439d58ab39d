// The split model's calibration table and interval (fitspeed/llm/calibration.h).
#include "fitspeed/llm/calibration.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/model_error_json.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/intervals.h"

namespace fitspeed {

const char* EmbeddedLlmCalibrationJson();

namespace {

double PositiveFieldLlmCalibration(const nlohmann::json& object, const char* key,
                                   const std::string& source, bool allow_zero) {
  const std::string field = std::string("calibration.") + key;
  if (!object.contains(key)) throw DataError(source, 0, field, "missing");
  if (!object[key].is_number()) throw DataError(source, 0, field, "expected a number");
  const double v = object[key].get<double>();
  if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0))
    throw DataError(source, 0, field,
                    allow_zero ? "must be finite and >= 0" : "must be finite and > 0");
  return v;
}

}  // namespace

LlmCalibrationTable ParseLlmCalibrationJson(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw DataError(source, 0, "json", e.what());
  }
  if (!doc.is_object()) throw DataError(source, 0, "json", "expected an object");
  LlmCalibrationTable t;
  if (!doc.contains("schema") || doc["schema"] != t.schema)
    throw DataError(source, 0, "schema", "expected \"" + t.schema + "\"");
  if (doc.contains("generated_by") && doc["generated_by"].is_string())
    t.generated_by = doc["generated_by"];
  if (!doc.contains("device") || !doc["device"].is_string())
    throw DataError(source, 0, "device", "expected a device name");
  t.device = doc["device"];
  if (!doc.contains("calibration") || !doc["calibration"].is_object())
    throw DataError(source, 0, "calibration", "expected an object");
  const nlohmann::json& c = doc["calibration"];
  t.calibration.matrix_size_scale =
      PositiveFieldLlmCalibration(c, "matrix_size_scale", source, false);
  t.calibration.memory_scale = PositiveFieldLlmCalibration(c, "memory_scale", source, false);
  t.calibration.dispatch_s = PositiveFieldLlmCalibration(c, "dispatch_s", source, true);
  t.calibration.step_overhead_s = PositiveFieldLlmCalibration(c, "step_overhead_s", source, true);
  if (!c.contains("source") || !c["source"].is_string())
    throw DataError(source, 0, "calibration.source", "expected text");
  t.calibration.source = c["source"];
  if (!doc.contains("held_out")) throw DataError(source, 0, "held_out", "missing");
  t.held_out = ModelErrorsFromJson(doc["held_out"], source, "held_out");
  return t;
}

std::string LlmCalibrationToJson(const LlmCalibrationTable& t) {
  nlohmann::ordered_json doc;
  doc["schema"] = t.schema;
  doc["generated_by"] = t.generated_by;
  doc["device"] = t.device;
  doc["calibration"] = {{"matrix_size_scale", t.calibration.matrix_size_scale},
                        {"memory_scale", t.calibration.memory_scale},
                        {"dispatch_s", t.calibration.dispatch_s},
                        {"step_overhead_s", t.calibration.step_overhead_s},
                        {"source", t.calibration.source}};
  doc["held_out"] = ModelErrorsToJson<nlohmann::ordered_json>(t.held_out);
  return doc.dump(1) + "\n";
}

const LlmCalibrationTable& BuiltinLlmCalibration() {
  static const LlmCalibrationTable table = ParseLlmCalibrationJson(
      EmbeddedLlmCalibrationJson(), "data/llm-calibration.json (compiled in)");
  return table;
}

LlmCalibration LlmCalibrationFor(const Device& device) {
  const LlmCalibrationTable& t = BuiltinLlmCalibration();
  LlmCalibration c = t.calibration;
  if (device.name != t.device) {
    c.source = "carried from " + t.device + " (fitted there, nothing of this model measured on " +
               device.name + "): " + c.source;
    // The size scale corrects the calibration device's matrix curve, fitted
    // on another GPU's kernels and carried (EfficiencyCurve::from). A device
    // whose curve was fitted on a different GPU's kernels (its own chip's)
    // has its own curve's errors, not that one's: the scale is not carried.
    static const std::string calibrated_from = LoadDevice(t.device).TensorEfficiency().from;
    const std::string& from = device.TensorEfficiency().from;
    if (!from.empty() && !calibrated_from.empty() && from != calibrated_from) {
      c.source += fmt::format(
          "; matrix size scale {:.3g} not carried: it corrects the {} kernels' curve that {} "
          "carries, and {}'s matrix curve was fitted on {} kernels (scale 1)",
          c.matrix_size_scale, calibrated_from, t.device, device.name, from);
      c.matrix_size_scale = 1.0;
    }
  }
  return c;
}

PredictionInterval LlmInterval(const Device& device, double level) {
  const LlmCalibrationTable& t = BuiltinLlmCalibration();
  // vTrain's rows are one publisher's; the errors' sources are its
  // leave-one-GPU-count-out folds, so the basis says that a setup unlike
  // vTrain's (another framework, another cluster) is not covered by it.
  PredictionInterval own = EmpiricalInterval(
      t.held_out, level,
      "llm/" + t.device +
          ": vTrain's rows, one publisher, predicted by folds that left their GPU count out",
      2);
  if (device.name == t.device || !own.available) return own;
  // Another device: the held-out spread combined in quadrature, per side in
  // log space, with the catalog interval of the device's class (what the
  // step model is known to miss on a device of that kind), around the held-out bias.
  const PredictionInterval device_side =
      BuiltinIntervalTable().For(device, Precision::kMixed, level);
  if (!device_side.available) {
    own.available = false;
    own.reason = "no interval for " + device.name + ": " + device_side.reason;
    return own;
  }
  const double m = own.median_log_ratio;
  const double lo_own = m - std::log(own.low_factor), hi_own = std::log(own.high_factor) - m;
  const double md = device_side.median_log_ratio;
  const double lo_dev = md - std::log(device_side.low_factor),
               hi_dev = std::log(device_side.high_factor) - md;
  PredictionInterval out = own;
  out.low_factor = std::exp(m - std::hypot(lo_own, lo_dev));
  out.high_factor = std::exp(m + std::hypot(hi_own, hi_dev));
  out.basis = own.basis + " widened by " + device_side.basis + " (" + device.name +
              ": no LLM step measured on it)";
  return out;
}

}  // namespace fitspeed
