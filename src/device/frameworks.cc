// Framework profiles (fitspeed/device/frameworks.h).
#include "fitspeed/device/frameworks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "core/finite.h"
#include "device/embedded_frameworks.h"
#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr const char* kSchemaFrameworks = "fitspeed.frameworks/1";
constexpr const char* kMethod =
    "per framework, the calibration parameters its published GPU runs determine (compute_scale "
    "for FP32 on CUDA cores, tensor_scale for TF32 and mixed precision, and step_host_s), fitted "
    "jointly over every GPU it ran on (CalibrateShared: least squares of ln(measured/modeled step "
    "time)) against the kernel-fitted catalog devices";
// Frameworks of issue 14's list that no published case here ran: a profile
// cannot be fitted, and FindFrameworkProfile says so.
constexpr const char* kWithoutCases[] = {"xla", "jax"};

double NumberOrNaN(const ordered_json& v) {
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

std::string FrameworkProfilesToJson(const std::vector<FrameworkProfile>& profiles) {
  ordered_json list = ordered_json::array();
  for (const FrameworkProfile& p : profiles) {
    ordered_json parameters = ordered_json::array();
    for (const CalibratedParameter& q : p.parameters) {
      parameters.push_back({{"name", q.name},
                            {"value", q.value},
                            {"std_error", FiniteOrNull<ordered_json>(q.std_error)},
                            {"ci_low", FiniteOrNull<ordered_json>(q.ci_low)},
                            {"ci_high", FiniteOrNull<ordered_json>(q.ci_high)}});
    }
    list.push_back({{"name", p.name},
                    {"devices", p.devices},
                    {"networks", p.networks},
                    {"cases", p.cases},
                    {"converged", p.converged},
                    {"rms_error", FiniteOrNull<ordered_json>(p.rms_error)},
                    {"parameters", parameters}});
  }
  return ordered_json{{"schema", kSchemaFrameworks}, {"method", kMethod}, {"profiles", list}}.dump(
             2) +
         "\n";
}

std::vector<FrameworkProfile> ParseFrameworkProfiles(const std::string& text,
                                                     const std::string& source) {
  if (io::LooksBinary(text)) throw DataError(source, 0, "", "binary data, not a profiles file");
  ordered_json doc;
  try {
    doc = ordered_json::parse(text);
  } catch (
      const ordered_json::exception& e) {  // parse_error, and out_of_range for a number overflow
    throw DataError(source, 0, "", fmt::format("not JSON: {}", e.what()));
  }
  // (Json::value would throw its own type_error on a "schema" that is not a string.)
  const auto schema = doc.is_object() ? doc.find("schema") : doc.end();
  if (!doc.is_object() || schema == doc.end() || !schema->is_string() ||
      schema->get<std::string>() != kSchemaFrameworks) {
    throw DataError(source, 0, "schema",
                    fmt::format("expected a \"{}\" document", kSchemaFrameworks));
  }
  const auto list = doc.find("profiles");
  if (list == doc.end() || !list->is_array()) {
    throw DataError(source, 0, "profiles", "expected an array of profiles");
  }
  std::vector<FrameworkProfile> profiles;
  for (size_t i = 0; i < list->size(); ++i) {
    const ordered_json& p = (*list)[i];
    const std::string at = fmt::format("profiles[{}]", i);
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string() ||
        !p.contains("parameters") || !p["parameters"].is_array()) {
      throw DataError(source, 0, at, "expected {\"name\": text, \"parameters\": [...], ...}");
    }
    FrameworkProfile profile;
    profile.name = p["name"].get<std::string>();
    for (const char* key : {"devices", "networks"}) {
      if (!p.contains(key)) continue;
      if (!p[key].is_array()) throw DataError(source, 0, at + "." + key, "expected an array");
      for (const ordered_json& s : p[key]) {
        if (!s.is_string()) throw DataError(source, 0, at + "." + key, "expected names");
        (key == std::string("devices") ? profile.devices : profile.networks)
            .push_back(s.get<std::string>());
      }
    }
    const ordered_json& cases = p.contains("cases") ? p["cases"] : ordered_json(0);
    const ordered_json& converged = p.contains("converged") ? p["converged"] : ordered_json(false);
    if (!cases.is_number_integer() || cases.get<int64_t>() < 0 || cases.get<int64_t>() > 1000000) {
      throw DataError(source, 0, at + ".cases", "expected a whole number of cases");
    }
    if (!converged.is_boolean())
      throw DataError(source, 0, at + ".converged", "expected true or false");
    profile.cases = static_cast<int>(cases.get<int64_t>());
    profile.converged = converged.get<bool>();
    profile.rms_error = p.contains("rms_error") ? NumberOrNaN(p["rms_error"]) : 0;
    for (size_t j = 0; j < p["parameters"].size(); ++j) {
      const ordered_json& q = p["parameters"][j];
      const std::string where = fmt::format("{}.parameters[{}]", at, j);
      if (!q.is_object() || !q.contains("name") || !q["name"].is_string() || !q.contains("value") ||
          !q["value"].is_number()) {
        throw DataError(source, 0, where, "expected {\"name\": text, \"value\": number, ...}");
      }
      CalibratedParameter c;
      c.name = q["name"].get<std::string>();
      c.value = q["value"].get<double>();
      if (c.name != "compute_scale" && c.name != "tensor_scale" && c.name != "step_host_s" &&
          c.name != "memory_scale" && c.name != "kernel_launch_s") {
        throw DataError(source, 0, where + ".name", fmt::format("unknown parameter '{}'", c.name));
      }
      const bool scale = c.name.find("scale") != std::string::npos;
      if (!std::isfinite(c.value) || (scale ? !(c.value > 0) : !(c.value >= 0))) {
        throw DataError(source, 0, where + ".value",
                        fmt::format("{} must be finite and {}", c.name, scale ? "> 0" : ">= 0"));
      }
      c.std_error = q.contains("std_error") ? NumberOrNaN(q["std_error"]) : std::nan("");
      c.ci_low = q.contains("ci_low") ? NumberOrNaN(q["ci_low"]) : std::nan("");
      c.ci_high = q.contains("ci_high") ? NumberOrNaN(q["ci_high"]) : std::nan("");
      profile.parameters.push_back(c);
    }
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

const std::vector<FrameworkProfile>& BuiltinFrameworkProfiles() {
  static const std::vector<FrameworkProfile> profiles =
      ParseFrameworkProfiles(EmbeddedFrameworksJson(), "data/frameworks.json");
  return profiles;
}

const FrameworkProfile& FindFrameworkProfile(const std::string& name) {
  std::vector<std::string> known;
  for (const FrameworkProfile& p : BuiltinFrameworkProfiles()) {
    if (p.name == name) return p;
    known.push_back(p.name);
  }
  for (const char* without : kWithoutCases) {
    if (name == without) {
      throw UsageError(fmt::format(
          "no profile for framework '{}': no published GPU run of it is among the validation "
          "cases (docs/validation.md), so none could be fitted; known: {}",
          name, fmt::join(known, ", ")));
    }
  }
  throw UsageError(
      fmt::format("unknown framework '{}' (profiles: {}; a transformer split takes its own "
                  "frameworks, megatron by default: `fitspeed sweep llm --help`)",
                  name, fmt::join(known, ", ")));
}

Device ApplyFrameworkProfile(const Device& device, const FrameworkProfile& profile) {
  Device d = ApplyCalibration(device, profile.parameters);
  for (const CalibratedParameter& p : profile.parameters) {
    const std::string field = p.name == "compute_scale"     ? "efficiency.compute"
                              : p.name == "tensor_scale"    ? "efficiency.tensor"
                              : p.name == "memory_scale"    ? "efficiency.memory"
                              : p.name == "kernel_launch_s" ? "overheads.kernel_launch_s"
                                                            : "overheads.step_host_s";
    d.sources[field] =
        fmt::format("framework profile '{}' ({} published runs on {}): {}", profile.name,
                    profile.cases, fmt::join(profile.devices, ", "), d.sources[field]);
  }
  return d;
}

AmpOpList FrameworkAmpOps(const std::string& framework) {
  return framework == "tensorflow" || framework == "keras" ? AmpOpList::kTensorFlow
                                                           : AmpOpList::kPyTorch;
}

ElementwiseFusion FrameworkFusion(const std::string& framework, Precision precision) {
  return framework == "mxnet" && precision == Precision::kMixed
             ? ElementwiseFusion::kBatchNormReluAdd
             : ElementwiseFusion::kNone;
}

}  // namespace fitspeed
