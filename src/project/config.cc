// Configurations from fits and fit JSON (see config.h).
#include "fitspeed/project/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/model_error_json.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

using nlohmann::json;

std::string Configuration::Name() const {
  if (label.empty() && precision.empty()) return fmt::format("devices={}", devices);
  if (precision.empty()) return label;
  if (label.empty()) return precision;
  return label + " " + precision;
}

std::vector<Configuration> ConfigurationsFromFit(const FitResult& result,
                                                 const std::vector<Sample>& samples) {
  std::vector<Configuration> configs;
  for (const GroupFit& fit : result.fits) {
    Configuration c;
    c.label = fit.group.label;
    c.precision = fit.group.precision;
    c.devices = fit.group.devices;
    c.law = SpeedLawFromFit(fit);
    c.usable = fit.usable;
    c.warnings = fit.warnings;
    std::set<double> batches;
    for (const Sample& s : samples) {
      if (GroupOf(s) == fit.group) batches.insert(s.batch);
    }
    c.batches.assign(batches.begin(), batches.end());
    configs.push_back(std::move(c));
  }
  return configs;
}

namespace {

// The number at `key` of `object`, or DataError naming the field.
double NumberAt(const json& object, const char* key, const std::string& source,
                const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) {
    throw DataError(source, 0, where + key, "expected a number");
  }
  return it->get<double>();
}

// A whole number in [0, 1e9] at `key` (`fallback` when absent), or DataError;
// read as a double first so that no out-of-range conversion happens.
int WholeAt(const json& object, const char* key, int fallback, const std::string& source,
            const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  const double value = it->is_number() ? it->get<double>() : std::nan("");
  if (!(value >= 0 && value <= 1e9 && value == std::floor(value))) {
    throw DataError(source, 0, where + key, "expected a whole number >= 0");
  }
  return static_cast<int>(value);
}

// A number that may be null (NaN then).
double NumberOrNan(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nan("");
  return it->get<double>();
}

}  // namespace

namespace {

std::vector<Configuration> ParseFits(const json& doc, const std::string& source);

}  // namespace

std::vector<Configuration> ConfigurationsFromFitJson(std::string_view text,
                                                     const std::string& source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw DataError(source, 0, "", fmt::format("not JSON: {}", e.what()));
  }
  try {
    return ParseFits(doc, source);
  } catch (const json::exception& e) {
    // A field of the wrong type (e.g. "devices": "two").
    throw DataError(source, 0, "", fmt::format("unexpected content: {}", e.what()));
  }
}

namespace {

std::vector<Configuration> ParseFits(const json& doc, const std::string& source) {
  if (!doc.is_object() || doc.value("schema", std::string()) != "fitspeed.fit/1") {
    throw DataError(source, 0, "schema",
                    "expected a \"fitspeed.fit/1\" document (`fitspeed fit --output json`)");
  }
  const auto fits = doc.find("fits");
  if (fits == doc.end() || !fits->is_array() || fits->empty()) {
    throw DataError(source, 0, "fits", "expected a non-empty array of fits");
  }
  // A modeled sweep (`sweep --device --output json`) carries the model's
  // out-of-sample errors: every configuration's law is that model's.
  ModelErrorRecord model_errors;  // min_sources 2 for files written before it
  if (const auto mi = doc.find("model_interval"); mi != doc.end() && mi->is_object()) {
    if (mi->contains("basis") && (*mi)["basis"].is_string()) model_errors.basis = (*mi)["basis"];
    if (mi->contains("min_sources")) {
      model_errors.min_sources = WholeAt(*mi, "min_sources", 2, source, "model_interval.");
      if (model_errors.min_sources < 2) {
        throw DataError(source, 0, "model_interval.min_sources",
                        fmt::format("expected 2 or more, got {}", model_errors.min_sources));
      }
    }
    model_errors.errors =
        ModelErrorsFromJson(mi->value("errors", json::array()), source, "model_interval.errors");
  }
  std::vector<Configuration> configs;
  for (size_t i = 0; i < fits->size(); ++i) {
    const json& fit = (*fits)[i];
    const std::string where = fmt::format("fits[{}].", i);
    if (!fit.is_object()) throw DataError(source, 0, fmt::format("fits[{}]", i), "not an object");
    if (fit.value("law", std::string()) != "hyperbolic") {
      throw DataError(source, 0, where + "law",
                      fmt::format("is '{}'; projections need the hyperbolic law (v0, t)",
                                  fit.value("law", std::string("?"))));
    }
    Configuration c;
    const json group = fit.value("group", json::object());
    if (group.is_object()) {
      c.devices = WholeAt(group, "devices", 1, source, where + "group.");
      if (group.contains("label") && group["label"].is_string()) c.label = group["label"];
      if (group.contains("precision") && group["precision"].is_string()) {
        c.precision = group["precision"];
      }
    }
    if (c.devices < 1) throw DataError(source, 0, where + "group.devices", "must be >= 1");
    const json params = fit.value("params", json::object());
    const json v0 = params.value("v0", json::object()), t = params.value("t", json::object());
    if (!v0.is_object() || !t.is_object()) {
      throw DataError(source, 0, where + "params", "expected objects v0 and t");
    }
    c.law.v0_sps = NumberAt(v0, "value", source, where + "params.v0.");
    c.law.t_s = NumberAt(t, "value", source, where + "params.t.");
    // What the fit counts: "counts" as `fit --output json` writes it, or the
    // rate unit of v0 ("tokens/s") in files written before it.
    if (fit.contains("counts") && fit["counts"].is_string()) {
      c.law.counts = fit["counts"];
    } else if (v0.contains("unit") && v0["unit"].is_string()) {
      const std::string unit = v0["unit"];
      if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0) {
        c.law.counts = unit.substr(0, unit.size() - 2);
      }
    }
    if (!(std::isfinite(c.law.v0_sps) && c.law.v0_sps > 0 && std::isfinite(c.law.t_s) &&
          c.law.t_s >= 0)) {
      throw DataError(source, 0, where + "params",
                      fmt::format("v0 = {} and t = {}; projections need v0 > 0 and t >= 0",
                                  c.law.v0_sps, c.law.t_s));
    }
    const double se_v0 = NumberOrNan(v0, "stderr"), se_t = NumberOrNan(t, "stderr");
    double corr = 0;
    if (fit.contains("corr") && fit["corr"].is_object()) corr = NumberOrNan(fit["corr"], "v0,t");
    const int dof = WholeAt(fit, "dof", 0, source, where);
    if (dof > 0 && std::isfinite(se_v0) && std::isfinite(se_t) && std::isfinite(corr)) {
      const double cross = corr * se_v0 * se_t;
      c.law.covariance << se_v0 * se_v0, cross, cross, se_t * se_t;
      c.law.dof = dof;
    }
    c.law.model_errors = model_errors;
    c.usable = fit.value("usable", fit.value("converged", false));
    if (fit.contains("warnings") && fit["warnings"].is_array()) {
      for (const json& w : fit["warnings"]) {
        if (w.is_string()) c.warnings.push_back(w);
      }
    }
    std::set<double> batches;
    if (fit.contains("points") && fit["points"].is_array()) {
      for (const json& p : fit["points"]) {
        if (!p.is_object()) continue;
        const double b = NumberOrNan(p, "batch");
        if (std::isfinite(b) && b > 0) batches.insert(b);
      }
    }
    c.batches.assign(batches.begin(), batches.end());
    configs.push_back(std::move(c));
  }
  return configs;
}

}  // namespace

RingCommFit FitRingToConfigurations(const Configuration& config,
                                    const std::vector<Configuration>& all) {
  DeviceScaling scaling;
  scaling.label = config.label;
  for (const Configuration& c : all) {
    if (c.label == config.label && c.precision == config.precision) {
      scaling.rows.push_back({c.devices, c.law.t_s, 0, c.law.v0_sps, 0});
    }
  }
  return FitRingToFixedTimes(scaling);
}

}  // namespace fitspeed
