// The split model's calibration table and interval (fitspeed/llm/calibration.h).
#include "fitspeed/llm/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/median.h"
#include "core/model_error_json.h"
#include "fitspeed/core/error.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/llm/framework.h"

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
  if (doc.contains("development")) {
    const nlohmann::json& d = doc["development"];
    if (!d.is_array()) throw DataError(source, 0, "development", "expected an array");
    const std::vector<ModelError> errors = ModelErrorsFromJson(d, source, "development");
    for (size_t i = 0; i < d.size(); ++i) {
      const nlohmann::json& row = d[i];
      const std::string where = fmt::format("development[{}]", i);
      for (const char* key : {"device", "framework"}) {
        if (!row.contains(key) || !row[key].is_string() || row[key].get<std::string>().empty())
          throw DataError(source, 0, where + "." + key, "expected a name");
      }
      t.development.push_back({errors[i], row["device"], row["framework"]});
    }
  }
  if (doc.contains("accelerator_widening")) {
    const nlohmann::json& w = doc["accelerator_widening"];
    if (!w.is_number() || !(w.get<double>() >= 1) || !std::isfinite(w.get<double>()))
      throw DataError(source, 0, "accelerator_widening", "expected a number >= 1");
    t.accelerator_widening = w.get<double>();
  }
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
  if (!t.development.empty()) {
    std::vector<ModelError> errors;
    for (const auto& d : t.development) errors.push_back(d.error);
    nlohmann::ordered_json rows = ModelErrorsToJson<nlohmann::ordered_json>(errors);
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i]["device"] = t.development[i].device;
      rows[i]["framework"] = t.development[i].framework;
    }
    doc["development"] = rows;
    doc["accelerator_widening"] = t.accelerator_widening;
  }
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

namespace {

const std::string& KeyOfLlmRow(const LlmCalibrationTable::DevelopmentError& d, LlmLeaveOut key) {
  return key == LlmLeaveOut::kAccelerator ? d.device
         : key == LlmLeaveOut::kFramework ? d.framework
                                          : d.error.source;
}

const char* LlmLeaveOutName(LlmLeaveOut key) {
  return key == LlmLeaveOut::kAccelerator ? "accelerator"
         : key == LlmLeaveOut::kFramework ? "framework"
                                          : "publisher";
}

}  // namespace

PredictionInterval LlmLeaveOutInterval(
    const std::vector<LlmCalibrationTable::DevelopmentError>& development, LlmLeaveOut key,
    const std::string& left_out, double level, double widen) {
  std::vector<ModelError> errors;
  std::set<std::string> others;
  for (const auto& d : development) {
    if (KeyOfLlmRow(d, key) == left_out) continue;
    errors.push_back(d.error);
    others.insert(KeyOfLlmRow(d, key));
  }
  PredictionInterval in = EmpiricalInterval(
      errors, level,
      fmt::format("llm, {} {} left out: the split model's development rows (vTrain's A100 folds, "
                  "MLPerf Training v3.0-v4.1) on {} other {}s, publishers weighted equally",
                  LlmLeaveOutName(key), left_out, others.size(), LlmLeaveOutName(key)),
      2);
  if (in.available && widen != 1) {
    const double m = in.median_log_ratio;
    in.low_factor = std::exp(m - widen * (m - std::log(in.low_factor)));
    in.high_factor = std::exp(m + widen * (std::log(in.high_factor) - m));
    in.basis += fmt::format(", widened x{:.2f} about its median", widen);
  }
  return in;
}

LlmLeaveOutCoverage LlmLeaveOutCoverageOf(
    const std::vector<LlmCalibrationTable::DevelopmentError>& development, LlmLeaveOut key,
    double level, double widen) {
  std::set<std::string> values;
  for (const auto& d : development) values.insert(KeyOfLlmRow(d, key));
  PublisherCoverageTally tally;
  std::vector<double> lows, highs;
  std::set<std::string> publishers;
  LlmLeaveOutCoverage out;
  for (const std::string& v : values) {
    const PredictionInterval in = LlmLeaveOutInterval(development, key, v, level, widen);
    if (!in.available) continue;
    ++out.values;
    lows.push_back(in.low_factor);
    highs.push_back(in.high_factor);
    for (const auto& d : development) {
      if (KeyOfLlmRow(d, key) != v) continue;
      const double ratio = std::exp(d.error.log_ratio);  // measured / predicted
      tally.Add(d.error.source, ratio >= in.low_factor && ratio <= in.high_factor);
      publishers.insert(d.error.source);
      ++out.rows;
    }
  }
  out.coverage = tally.Coverage();
  out.publishers = static_cast<int>(publishers.size());
  out.median_low = lows.empty() ? std::nan("") : Median(lows);
  out.median_high = highs.empty() ? std::nan("") : Median(highs);
  return out;
}

double LlmLeaveOutWidening(const std::vector<LlmCalibrationTable::DevelopmentError>& development,
                           LlmLeaveOut key, double level) {
  for (int i = 0; i <= 140; ++i) {
    const double widen = 1.0 + 0.05 * i;
    const double held = LlmLeaveOutCoverageOf(development, key, level, widen).coverage;
    if (held >= level - 1e-12) return widen;
  }
  return 8.0;
}

namespace {

// `own` on `device`: unchanged on the calibration device, else combined with
// the catalog interval of the device's class.
PredictionInterval CombinedWithDeviceClass(const PredictionInterval& own, const Device& device,
                                           double level, const std::string& calibration_device) {
  if (device.name == calibration_device || !own.available) return own;
  // Another device: the held-out spread combined in quadrature, per side in
  // log space, with the catalog interval of the device's class (what the
  // step model is known to miss on a device of that kind), around the held-out bias.
  const PredictionInterval device_side =
      BuiltinIntervalTable().For(device, Precision::kMixed, level);
  if (!device_side.available) {
    PredictionInterval none = own;
    none.available = false;
    none.reason = "no interval for " + device.name + ": " + device_side.reason;
    return none;
  }
  const double m = own.median_log_ratio;
  const double lo_own = m - std::log(own.low_factor), hi_own = std::log(own.high_factor) - m;
  const double md = device_side.median_log_ratio;
  const double lo_dev = md - std::log(device_side.low_factor),
               hi_dev = std::log(device_side.high_factor) - md;
  PredictionInterval out = own;
  out.low_factor = std::exp(m - std::hypot(lo_own, lo_dev));
  out.high_factor = std::exp(m + std::hypot(hi_own, hi_dev));
  out.basis = own.basis + "; combined with " + device_side.basis + " (what the catalog's " +
              "kernels are known to miss on a device of " + device.name + "'s class)";
  return out;
}

// The interval of a framework whose family has no development rows: every
// row is another framework's, so it is the rows' interval (publishers
// weighted equally), widened by the larger of the stretches a new
// accelerator and a new framework family need on these rows.
PredictionInterval UnseenFrameworkInterval(const LlmCalibrationTable& t, const LlmFramework& fw,
                                           double level) {
  static const double framework_widening =
      LlmLeaveOutWidening(t.development, LlmLeaveOut::kFramework, 0.8);
  const double widen = std::max(t.accelerator_widening, framework_widening);
  PredictionInterval out = LlmLeaveOutInterval(t.development, LlmLeaveOut::kFramework,
                                               fw.development_family, level, widen);
  out.basis = fmt::format(
      "framework {} ({}): no development rows of its family ({}), so the model's errors on "
      "every other framework's rows, widened x{:.2f} (the larger of the stretches a left-out "
      "accelerator and a left-out framework family need on those rows): {}",
      fw.name, fw.title, fw.development_family, widen, out.basis);
  return out;
}

}  // namespace

PredictionInterval LlmInterval(const Device& device, double level, const std::string& framework) {
  const LlmCalibrationTable& t = BuiltinLlmCalibration();
  if (!framework.empty()) {
    const LlmFramework& fw = FindLlmFramework(framework);
    const bool seen = std::any_of(t.development.begin(), t.development.end(),
                                  [&](const LlmCalibrationTable::DevelopmentError& e) {
                                    return e.framework == fw.development_family;
                                  });
    if (!seen && !t.development.empty()) {
      PredictionInterval unseen = UnseenFrameworkInterval(t, fw, level);
      if (unseen.available) return CombinedWithDeviceClass(unseen, device, level, t.device);
    }
  }
  // vTrain's rows are one publisher's; the errors' sources are its
  // leave-one-GPU-count-out folds, so the basis says that a setup unlike
  // vTrain's (another framework, another cluster) is not covered by it.
  PredictionInterval own = EmpiricalInterval(
      t.held_out, level,
      "llm/" + t.device +
          ": vTrain's rows, one publisher, predicted by folds that left their GPU count out",
      2);
  if (device.name == t.device || !own.available) return own;
  if (!t.development.empty()) {
    // How far off the split model was on accelerators other than this one
    // (its own rows, if any, left out), widened as the rows' leave-one-
    // accelerator-out says a new accelerator needs.
    const PredictionInterval left_out = LlmLeaveOutInterval(
        t.development, LlmLeaveOut::kAccelerator, device.name, level, t.accelerator_widening);
    if (left_out.available) own = left_out;
  }
  return CombinedWithDeviceClass(own, device, level, t.device);
}

}  // namespace fitspeed
