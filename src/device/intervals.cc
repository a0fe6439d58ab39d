// Prediction intervals from out-of-sample errors (see intervals.h and
// docs/validation.md, "Prediction intervals").
#include "fitspeed/device/intervals.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/input_file.h"
#include "core/model_error_json.h"
#include "device/embedded_intervals.h"
#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

namespace {

using Json = nlohmann::json;

// The errors of every class of `kind` ("gpu": "gpu/fp32" and "gpu/tensor").
std::vector<ModelError> KindErrors(const std::map<std::string, std::vector<ModelError>>& classes,
                                   const std::string& kind) {
  std::vector<ModelError> all;
  for (const auto& [name, errors] : classes) {
    if (ModelErrorKindClass(name) == kind) all.insert(all.end(), errors.begin(), errors.end());
  }
  return all;
}

// For() on a map of classes, the kind's errors as the fallback. `label`
// prefixes the basis ("framework:").
PredictionInterval ClassInterval(const std::map<std::string, std::vector<ModelError>>& classes,
                                 const std::string& error_class, double level, int min_sources,
                                 const std::string& label = "") {
  const auto it = classes.find(error_class);
  const std::vector<ModelError> none;
  const PredictionInterval own = EmpiricalInterval(it == classes.end() ? none : it->second, level,
                                                   label + error_class, min_sources);
  if (own.available) return own;
  const std::string kind = ModelErrorKindClass(error_class);
  if (kind == error_class) return own;
  PredictionInterval coarse =
      EmpiricalInterval(KindErrors(classes, kind), level, label + kind, min_sources);
  if (!coarse.available) {
    coarse.reason = fmt::format("{}; {}", own.reason, coarse.reason);
  }
  return coarse;
}

void CheckLevel(double level) {
  if (!(level > 0 && level < 1)) {
    throw UsageError(fmt::format("interval level must be in (0, 1), got {}", level));
  }
}

Json ErrorsToJson(const std::map<std::string, std::vector<ModelError>>& classes) {
  Json out = Json::array();
  for (const auto& [name, errors] : classes) {
    out.push_back({{"class", name}, {"errors", ModelErrorsToJson<Json>(errors)}});
  }
  return out;
}

std::map<std::string, std::vector<ModelError>> ErrorsFromJson(const Json& doc,
                                                              const std::string& field,
                                                              const std::string& source) {
  std::map<std::string, std::vector<ModelError>> classes;
  const auto it = doc.find(field);
  if (it == doc.end()) return classes;
  if (!it->is_array()) throw DataError(source, 0, field, "expected an array of classes");
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& c = (*it)[i];
    const std::string where = fmt::format("{}[{}]", field, i);
    if (!c.is_object() || !c.contains("class") || !c["class"].is_string() ||
        !c.contains("errors")) {
      throw DataError(source, 0, where, "expected {\"class\": name, \"errors\": [...]}");
    }
    std::vector<ModelError>& errors = classes[c["class"].get<std::string>()];
    for (ModelError& e : ModelErrorsFromJson(c["errors"], source, where + ".errors")) {
      errors.push_back(std::move(e));
    }
  }
  return classes;
}

// The device of a case key, network[/sN]/device/precision/xD/bB[/aN][@line]
// (CaseKey of fitspeed/calibrate/cases.h): the part two before "xD"; "" when
// there is none.
std::string CaseDeviceIntervals(const std::string& case_key) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t end; (end = case_key.find('/', begin)) != std::string::npos; begin = end + 1) {
    parts.push_back(case_key.substr(begin, end - begin));
  }
  parts.push_back(case_key.substr(begin));
  for (size_t i = 2; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p.size() >= 2 && p[0] == 'x' &&
        std::all_of(p.begin() + 1, p.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return parts[i - 2];
    }
  }
  return "";
}

// The interval of `base` (a class's, available) for a device with no published
// case: each of its errors is shifted by each measured device's bias (the
// median log ratio of that device's cases, less the median of those medians),
// so the interval holds the spread between devices a new device may fall
// anywhere in, on top of the spread within them. Wider than the class's unless
// every device has the same bias.
PredictionInterval UncalibratedDeviceInterval(const PredictionInterval& base,
                                              const std::string& device, double level) {
  std::map<std::string, std::vector<double>> by_device;
  for (const ModelError& e : base.errors) {
    by_device[CaseDeviceIntervals(e.case_key)].push_back(e.log_ratio);
  }
  std::vector<double> medians;
  for (auto& [name, ratios] : by_device) {
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    medians.push_back(n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2);
  }
  std::vector<double> sorted = medians;
  std::sort(sorted.begin(), sorted.end());
  const size_t m = sorted.size();
  const double center = m % 2 == 1 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
  std::vector<ModelError> shifted;
  size_t j = 0;
  for (const auto& [name, ratios] : by_device) {
    const double bias = medians[j++] - center;
    for (const ModelError& e : base.errors) {
      shifted.push_back(
          {e.source, fmt::format("{} + {} bias", e.case_key, name), e.log_ratio + bias});
    }
  }
  PredictionInterval widened = EmpiricalInterval(
      shifted, level,
      fmt::format("{}, widened: {} has no published case (uncalibrated), each of the {} "
                  "errors shifted by each of the {} measured devices' bias",
                  base.basis, device, base.errors.size(), by_device.size()),
      base.min_sources);
  widened.cases = base.cases;  // the published cases; `errors` holds their shifted copies
  return widened;
}

}  // namespace

bool HasPublishedCases(const IntervalTable& table, const Device& device) {
  if (!device.calibrated_on.empty()) return true;
  for (const auto& [name, errors] : table.classes) {
    for (const ModelError& e : errors) {
      if (CaseDeviceIntervals(e.case_key) == device.name) return true;
    }
  }
  return false;
}

std::string ModelErrorClass(const Device& device, Precision precision) {
  return device.kind + "/" + (MatrixOnTensorUnits(device, precision) ? "tensor" : "fp32");
}

std::string ModelErrorKindClass(const std::string& error_class) {
  return error_class.substr(0, error_class.find('/'));
}

PredictionInterval IntervalTable::For(const std::string& error_class, double level) const {
  return ClassInterval(classes, error_class, level, kModelIntervalMinSources);
}

PredictionInterval IntervalTable::For(const Device& device, Precision precision,
                                      double level) const {
  PredictionInterval interval = For(ModelErrorClass(device, precision), level);
  if (!interval.available || HasPublishedCases(*this, device) || device.class_interval) {
    return interval;
  }
  return UncalibratedDeviceInterval(interval, device.name, level);
}

PredictionInterval IntervalTable::ForTransfer(const std::string& kind, double level) const {
  const auto it = transfer.find(kind);
  const std::vector<ModelError> none;
  return EmpiricalInterval(it == transfer.end() ? none : it->second, level, "transfer:" + kind,
                           kTransferIntervalMinSources);
}

PredictionInterval IntervalTable::ForFramework(const std::string& error_class, double level) const {
  if (framework.empty()) {
    CheckLevel(level);
    PredictionInterval none;
    none.level = level;
    none.basis = "framework:" + error_class;
    none.min_sources = kModelIntervalMinSources;
    none.reason =
        "the intervals table holds no errors of framework-profile predictions (a file written "
        "before they were recorded: `fitspeed validate --intervals-out` writes them)";
    return none;
  }
  return ClassInterval(framework, error_class, level, kModelIntervalMinSources, "framework:");
}

PredictionInterval IntervalTable::ForFramework(const Device& device, Precision precision,
                                               double level) const {
  return ForFramework(ModelErrorClass(device, precision), level);
}

std::string IntervalTableToJson(const IntervalTable& table) {
  Json doc = {{"schema", table.schema},
              {"generated_by", table.generated_by},
              {"log_ratio", "ln(measured / predicted throughput), out-of-sample"},
              {"classes", ErrorsToJson(table.classes)},
              {"transfer", ErrorsToJson(table.transfer)},
              {"framework", ErrorsToJson(table.framework)}};
  return doc.dump(1) + "\n";
}

IntervalTable ParseIntervalTable(std::string_view text, const std::string& source) {
  if (io::LooksBinary(text)) throw DataError(source, 0, "", "binary data, not an intervals file");
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    throw DataError(source, 0, "", fmt::format("not JSON: {}", e.what()));
  }
  // A member that is not a string reads as "" (Json::value would throw its own
  // type_error on a wrong type: a fuzzer found a "schema" that is an array).
  auto string_member = [&doc](const char* name) {
    const auto it = doc.find(name);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (!doc.is_object() || string_member("schema") != "fitspeed.intervals/1") {
    throw DataError(source, 0, "schema", "expected a \"fitspeed.intervals/1\" document");
  }
  IntervalTable table;
  table.generated_by = string_member("generated_by");
  table.classes = ErrorsFromJson(doc, "classes", source);
  table.transfer = ErrorsFromJson(doc, "transfer", source);
  table.framework = ErrorsFromJson(doc, "framework", source);
  return table;
}

IntervalTable ReadIntervalTableFile(const std::string& path) {
  return ParseIntervalTable(ReadInputFile(path, "intervals file"), path);
}

const IntervalTable& BuiltinIntervalTable() {
  static const IntervalTable table =
      ParseIntervalTable(EmbeddedIntervalsJson(), "data/intervals.json (built in)");
  return table;
}

}  // namespace fitspeed
