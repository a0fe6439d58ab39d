// Prediction intervals from out-of-sample errors (see intervals.h and
// docs/validation.md, "Prediction intervals").
#include "fitspeed/device/intervals.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

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

}  // namespace

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
  return For(ModelErrorClass(device, precision), level);
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
  if (!doc.is_object() || doc.value("schema", std::string()) != "fitspeed.intervals/1") {
    throw DataError(source, 0, "schema", "expected a \"fitspeed.intervals/1\" document");
  }
  IntervalTable table;
  table.generated_by = doc.value("generated_by", std::string());
  table.classes = ErrorsFromJson(doc, "classes", source);
  table.transfer = ErrorsFromJson(doc, "transfer", source);
  table.framework = ErrorsFromJson(doc, "framework", source);
  return table;
}

IntervalTable ReadIntervalTableFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot open intervals file {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseIntervalTable(text.str(), path);
}

const IntervalTable& BuiltinIntervalTable() {
  static const IntervalTable table =
      ParseIntervalTable(EmbeddedIntervalsJson(), "data/intervals.json (built in)");
  return table;
}

}  // namespace fitspeed
