// ModelError lists (fitspeed/core/prediction_interval.h) in JSON, as the
// interval table (fitspeed.intervals/1), a modeled sweep's "model_interval"
// and the fit JSON that `project --fit` reads carry them:
//   [{"source": "...", "case": "...", "log_ratio": -0.12}, ...]
#ifndef FITSPEED_SRC_CORE_MODEL_ERROR_JSON_H_
#define FITSPEED_SRC_CORE_MODEL_ERROR_JSON_H_

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/core/prediction_interval.h"

namespace fitspeed {

// The list as a JSON array (nlohmann::json or nlohmann::ordered_json).
template <class Json>
Json ModelErrorsToJson(const std::vector<ModelError>& errors) {
  Json list = Json::array();
  for (const ModelError& e : errors) {
    list.push_back({{"source", e.source}, {"case", e.case_key}, {"log_ratio", e.log_ratio}});
  }
  return list;
}

// Reads the array at `field` of `source`; "case" is optional. Throws DataError
// naming the element for a non-array, an element without a text source or a
// numeric, finite log_ratio.
inline std::vector<ModelError> ModelErrorsFromJson(const nlohmann::json& list,
                                                   const std::string& source,
                                                   const std::string& field) {
  if (!list.is_array()) throw DataError(source, 0, field, "expected an array of errors");
  std::vector<ModelError> errors;
  for (size_t k = 0; k < list.size(); ++k) {
    const nlohmann::json& e = list[k];
    const std::string at = fmt::format("{}[{}]", field, k);
    if (!e.is_object() || !e.contains("log_ratio") || !e["log_ratio"].is_number() ||
        !e.contains("source") || !e["source"].is_string()) {
      throw DataError(source, 0, at, "expected {\"source\": text, \"log_ratio\": number}");
    }
    ModelError m;
    m.source = e["source"];
    if (e.contains("case") && e["case"].is_string()) m.case_key = e["case"];
    m.log_ratio = e["log_ratio"];
    if (!std::isfinite(m.log_ratio)) throw DataError(source, 0, at + ".log_ratio", "not finite");
    errors.push_back(std::move(m));
  }
  return errors;
}

}  // namespace fitspeed

#endif  // FITSPEED_SRC_CORE_MODEL_ERROR_JSON_H_
