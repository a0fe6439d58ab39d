// The "fitspeed.device/1" JSON format (docs/devices.md) and the catalog.
#include "fitspeed/device/device.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/input_file.h"
#include "core/json_text.h"
#include "device/embedded_devices.h"
#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

using nlohmann::json;

constexpr const char* kSchema = "fitspeed.device/1";
constexpr const char* kLinksSchema = "fitspeed.links/1";

// One step of a path into the document: an object key or an array index.
struct PathStep {
  std::string key;  // empty for an index
  int index = -1;
};
using Path = std::vector<PathStep>;

std::string FieldName(const Path& path) {
  std::string field;
  for (const PathStep& step : path) {
    if (step.index >= 0) {
      field += fmt::format("[{}]", step.index);
    } else {
      if (!field.empty()) field += ".";
      field += step.key;
    }
  }
  return field;
}

// The line of the deepest part of `path` found in the (valid) JSON text:
// nlohmann::json keeps no positions, so the text is scanned.
int PathLine(const std::string& text, const Path& path) {
  size_t at = text.find('{');
  if (at == std::string::npos) return 1;
  size_t found = at;
  for (const PathStep& step : path) {
    if (at >= text.size()) break;
    size_t next =
        step.index >= 0
            ? (text[at] == '[' ? FindJsonElement(text, at, step.index) : std::string::npos)
            : (text[at] == '{' ? FindJsonKey(text, at, step.key) : std::string::npos);
    if (next != std::string::npos && step.index < 0) next = JsonValueOfKey(text, next);
    if (next == std::string::npos) break;
    at = found = next;
  }
  return LineAt(text, found);
}

// Reads the fields of the document, naming file, line and field in errors.
class Reader {
 public:
  // Records the "source" text of every sourced field in `sources` (by field path).
  Reader(const std::string& text, std::string source, std::map<std::string, std::string>* sources,
         std::map<std::string, std::string>* bases = nullptr)
      : text_(text), source_(std::move(source)), sources_(sources), bases_(bases) {}

  [[noreturn]] void Fail(const Path& path, const std::string& problem) const {
    throw DataError(source_, PathLine(text_, path), FieldName(path), problem);
  }

  static Path Sub(Path path, const std::string& key) {
    path.push_back({key, -1});
    return path;
  }
  static Path Index(Path path, int index) {
    path.push_back({"", index});
    return path;
  }

  // Checks that `object` (at `path`) is an object with only `allowed` keys.
  void Object(const json& object, const Path& path, const std::set<std::string>& allowed) const {
    if (!object.is_object()) Fail(path, fmt::format("expected an object, got {}", Excerpt(object)));
    for (const auto& item : object.items()) {
      if (allowed.count(item.key()) == 0) Fail(Sub(path, item.key()), "unknown key");
    }
  }

  const json& Required(const json& object, const Path& path, const std::string& key) const {
    if (!object.contains(key)) Fail(Sub(path, key), "missing");
    return object.at(key);
  }

  std::string String(const json& object, const Path& path, const std::string& key,
                     bool required = true) const {
    if (!object.contains(key)) {
      if (required) Fail(Sub(path, key), "missing");
      return "";
    }
    const json& v = object.at(key);
    if (!v.is_string()) Fail(Sub(path, key), fmt::format("expected a string, got {}", Excerpt(v)));
    return v.get<std::string>();
  }

  // A source text: a non-empty string; and the optional basis beside it.
  void Source(const json& object, const Path& path) const {
    const std::string text = String(object, path, "source");
    if (text.empty()) Fail(Sub(path, "source"), "must not be empty");
    (*sources_)[FieldName(path)] = text;
    if (!object.contains("basis")) return;
    const std::string basis = String(object, path, "basis");
    if (basis != "datasheet" && basis != "measured" && basis != "fitted" && basis != "carried" &&
        basis != "assumed") {
      Fail(Sub(path, "basis"),
           fmt::format("expected datasheet, measured, fitted, carried or assumed, got \"{}\"",
                       basis));
    }
    if (bases_ != nullptr) (*bases_)[FieldName(path)] = basis;
  }

  // {"value": number, "source": "..."} at object[key]; `rule` names the
  // allowed range, checked by `ok`.
  template <typename Ok>
  double Quantity(const json& object, const Path& path, const std::string& key, const char* rule,
                  Ok ok) const {
    const Path at = Sub(path, key);
    const json& q = Required(object, path, key);
    Object(q, at, {"value", "source", "type", "basis"});
    const json& v = Required(q, at, "value");
    if (!v.is_number())
      Fail(Sub(at, "value"), fmt::format("expected a number, got {}", Excerpt(v)));
    const double value = v.get<double>();
    if (!std::isfinite(value) || !ok(value)) {
      Fail(Sub(at, "value"), fmt::format("{} breaks the rule: {}", Excerpt(v), rule));
    }
    Source(q, at);
    return value;
  }

  double Positive(const json& object, const Path& path, const std::string& key) const {
    return Quantity(object, path, key, "must be > 0", [](double x) { return x > 0; });
  }
  double NonNegative(const json& object, const Path& path, const std::string& key) const {
    return Quantity(object, path, key, "must be >= 0", [](double x) { return x >= 0; });
  }
  int Count(const json& object, const Path& path, const std::string& key) const {
    const double value =
        Quantity(object, path, key, "must be an integer in [1, 65536]",
                 [](double x) { return x >= 1 && x <= 65536 && x == std::floor(x); });
    return static_cast<int>(value);
  }

  EfficiencyCurve Curve(const json& object, const Path& path, const std::string& key) const {
    const Path at = Sub(path, key);
    const json& c = Required(object, path, key);
    Object(c, at, {"points", "half_dim", "from", "source", "basis"});
    const json& points = Required(c, at, "points");
    const Path points_path = Sub(at, "points");
    if (!points.is_array() || points.empty()) {
      Fail(points_path, "expected a non-empty list of [size, efficiency] pairs");
    }
    EfficiencyCurve curve;
    for (size_t i = 0; i < points.size(); ++i) {
      const Path p = Index(points_path, static_cast<int>(i));
      const json& pair = points[i];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number()) {
        Fail(p, fmt::format("expected [size, efficiency], got {}", Excerpt(pair)));
      }
      const double size = pair[0].get<double>();
      const double eff = pair[1].get<double>();
      if (!(size > 0) || !std::isfinite(size)) Fail(p, "size must be > 0 and finite");
      if (!(eff > 0 && eff <= 1)) Fail(p, fmt::format("efficiency {} is outside (0, 1]", eff));
      if (!curve.points.empty() && size <= curve.points.back().size) {
        Fail(p, "sizes must be strictly increasing");
      }
      curve.points.push_back({size, eff});
    }
    if (c.contains("half_dim")) {
      const json& h = c["half_dim"];
      if (!h.is_number() || !std::isfinite(h.get<double>()) || h.get<double>() < 0) {
        Fail(Sub(at, "half_dim"),
             fmt::format("expected a GEMM dimension >= 0, got {}", Excerpt(h)));
      }
      curve.half_dim = h.get<double>();
    }
    if (c.contains("from")) {
      const json& f = c["from"];
      if (!f.is_string() || f.get<std::string>().empty()) {
        Fail(Sub(at, "from"),
             fmt::format("expected the name of the GPU the curve was fitted on, got {}",
                         Excerpt(f)));
      }
      curve.from = f.get<std::string>();
    }
    Source(c, at);
    return curve;
  }

  static std::string Excerpt(const json& v) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }

 private:
  const std::string& text_;
  std::string source_;
  std::map<std::string, std::string>* sources_;
  std::map<std::string, std::string>* bases_;  // nullptr: bases checked, not kept
};

// The document in `text`; DataError at the line where it stops being JSON.
json ParseDocument(const std::string& text, const std::string& source) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw DataError(source, LineAt(text, e.byte > 0 ? e.byte - 1 : 0), "",
                    fmt::format("malformed JSON: {}", e.what()));
  } catch (const json::exception& e) {
    throw DataError(source, 0, "", fmt::format("malformed JSON: {}", e.what()));
  }
}

// The "links" array at `path` (docs/devices.md: device files and links files).
std::vector<DeviceLink> ReadLinks(const Reader& r, const json& links, const Path& path) {
  if (!links.is_array()) r.Fail(path, "expected a list of links");
  std::vector<DeviceLink> result;
  for (size_t i = 0; i < links.size(); ++i) {
    const Path p = Reader::Index(path, static_cast<int>(i));
    const json& l = links[i];
    r.Object(l, p, {"name", "connects", "bandwidth_bytes_per_s", "latency_s", "per"});
    DeviceLink link;
    link.name = r.String(l, p, "name");
    link.connects = r.String(l, p, "connects");
    if (link.connects != "cores" && link.connects != "devices" && link.connects != "host" &&
        link.connects != "network") {
      r.Fail(Reader::Sub(p, "connects"),
             fmt::format("expected cores, devices, host or network, got \"{}\"", link.connects));
    }
    link.bandwidth_bytes_per_s = r.Positive(l, p, "bandwidth_bytes_per_s");
    link.latency_s = r.NonNegative(l, p, "latency_s");
    if (l.contains("per")) {
      const std::string per = r.String(l, p, "per");
      if (per != "device" && per != "node") {
        r.Fail(Reader::Sub(p, "per"), fmt::format("expected device or node, got \"{}\"", per));
      }
      if (link.connects != "network") {
        r.Fail(Reader::Sub(p, "per"), "only a link that connects network has \"per\"");
      }
      link.per_device = per == "device";
    }
    result.push_back(link);
  }
  return result;
}

// The parameters a calibration may fit, in the order DeviceCalibration lists
// them, with the rule their value obeys.
struct CalibrationParameterRule {
  const char* name;
  const char* rule;
  bool (*ok)(double);
};
constexpr CalibrationParameterRule kCalibrationParameters[] = {
    {"compute_scale", "must be > 0", [](double x) { return x > 0; }},
    {"memory_scale", "must be > 0", [](double x) { return x > 0; }},
    {"kernel_launch_s", "must be >= 0", [](double x) { return x >= 0; }},
    {"step_host_s", "must be >= 0", [](double x) { return x >= 0; }},
    {"tensor_scale", "must be > 0", [](double x) { return x > 0; }},
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A finite number at object[key] (or NaN for null when `nullable`).
double CalibrationNumber(const Reader& r, const json& object, const Path& path,
                         const std::string& key, bool nullable) {
  const json& v = r.Required(object, path, key);
  if (nullable && v.is_null()) return kNaN;
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    r.Fail(Reader::Sub(path, key), fmt::format("expected a finite number{}, got {}",
                                               nullable ? " or null" : "", Reader::Excerpt(v)));
  }
  return v.get<double>();
}

DeviceCalibration::Error CalibrationError(const Reader& r, const json& object, const Path& path) {
  r.Object(object, path, {"cases", "rms", "median_abs", "max_abs"});
  DeviceCalibration::Error e;
  const double cases = CalibrationNumber(r, object, path, "cases", false);
  if (!(cases >= 1 && cases <= 1e9 && cases == std::floor(cases))) {
    r.Fail(Reader::Sub(path, "cases"), "must be an integer >= 1");
  }
  e.cases = static_cast<int>(cases);
  e.rms = CalibrationNumber(r, object, path, "rms", false);
  e.median_abs = CalibrationNumber(r, object, path, "median_abs", false);
  e.max_abs = CalibrationNumber(r, object, path, "max_abs", false);
  for (const char* key : {"rms", "median_abs", "max_abs"}) {
    if (object.at(key).get<double>() < 0) r.Fail(Reader::Sub(path, key), "must be >= 0");
  }
  return e;
}

// The "calibration" object (docs/devices.md, "Calibration").
void ReadCalibration(const Reader& r, const json& c, Device& d) {
  const Path path = Reader::Sub({}, "calibration");
  r.Object(
      c, path,
      {"cases", "method", "confidence", "parameters", "error_before", "error_after", "error_loo"});
  const Path cases_path = Reader::Sub(path, "cases");
  const json& cases = r.Required(c, path, "cases");
  if (!cases.is_array() || cases.empty()) r.Fail(cases_path, "expected a non-empty list of cases");
  std::set<std::string> seen;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Path p = Reader::Index(cases_path, static_cast<int>(i));
    if (!cases[i].is_string() || cases[i].get<std::string>().empty()) {
      r.Fail(p, fmt::format("expected a case key string, got {}", Reader::Excerpt(cases[i])));
    }
    const std::string key = cases[i].get<std::string>();
    if (!seen.insert(key).second) r.Fail(p, fmt::format("case \"{}\" is listed twice", key));
    d.calibrated_on.push_back(key);
  }
  DeviceCalibration& cal = d.calibration;
  cal.method = r.String(c, path, "method");
  if (cal.method.empty()) r.Fail(Reader::Sub(path, "method"), "must not be empty");
  if (c.contains("confidence")) {
    cal.confidence = CalibrationNumber(r, c, path, "confidence", false);
    if (!(cal.confidence > 0 && cal.confidence < 1)) {
      r.Fail(Reader::Sub(path, "confidence"), "must be in (0, 1)");
    }
  }
  const Path params_path = Reader::Sub(path, "parameters");
  const json& params = r.Required(c, path, "parameters");
  std::set<std::string> names;
  for (const CalibrationParameterRule& rule : kCalibrationParameters) names.insert(rule.name);
  r.Object(params, params_path, names);
  if (params.empty()) r.Fail(params_path, "expected at least one fitted parameter");
  for (const CalibrationParameterRule& rule : kCalibrationParameters) {
    if (!params.contains(rule.name)) continue;
    const Path p = Reader::Sub(params_path, rule.name);
    const json& q = params.at(rule.name);
    r.Object(q, p, {"value", "stderr", "ci"});
    DeviceCalibration::Parameter param;
    param.name = rule.name;
    param.value = CalibrationNumber(r, q, p, "value", false);
    if (!rule.ok(param.value)) {
      r.Fail(Reader::Sub(p, "value"),
             fmt::format("{} breaks the rule: {}", param.value, rule.rule));
    }
    param.std_error = CalibrationNumber(r, q, p, "stderr", true);
    if (param.std_error < 0) r.Fail(Reader::Sub(p, "stderr"), "must be >= 0");
    const json& ci = r.Required(q, p, "ci");
    const Path ci_path = Reader::Sub(p, "ci");
    if (!ci.is_array() || ci.size() != 2) r.Fail(ci_path, "expected [low, high]");
    for (size_t i = 0; i < 2; ++i) {
      if (!ci[i].is_null() && !(ci[i].is_number() && std::isfinite(ci[i].get<double>()))) {
        r.Fail(Reader::Index(ci_path, static_cast<int>(i)), "expected a finite number or null");
      }
    }
    param.ci_low = ci[0].is_null() ? kNaN : ci[0].get<double>();
    param.ci_high = ci[1].is_null() ? kNaN : ci[1].get<double>();
    if (param.ci_low > param.ci_high) r.Fail(ci_path, "low must not exceed high");
    cal.parameters.push_back(param);
  }
  cal.error_before =
      CalibrationError(r, r.Required(c, path, "error_before"), Reader::Sub(path, "error_before"));
  cal.error_after =
      CalibrationError(r, r.Required(c, path, "error_after"), Reader::Sub(path, "error_after"));
  if (c.contains("error_loo")) {
    cal.error_loo = CalibrationError(r, c.at("error_loo"), Reader::Sub(path, "error_loo"));
  }
}

// A non-empty list of distinct non-empty strings at `path`.
std::vector<std::string> ReadNameList(const Reader& r, const json& list, const Path& path) {
  if (!list.is_array() || list.empty()) {
    r.Fail(path, fmt::format("expected a non-empty list of names, got {}", Reader::Excerpt(list)));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const Path p = Reader::Index(path, static_cast<int>(i));
    const json& v = list[i];
    if (!v.is_string() || v.get<std::string>().empty()) {
      r.Fail(p, fmt::format("expected a non-empty string, got {}", Reader::Excerpt(v)));
    }
    if (std::find(names.begin(), names.end(), v.get<std::string>()) != names.end()) {
      r.Fail(p, fmt::format("{} is listed twice", Reader::Excerpt(v)));
    }
    names.push_back(v.get<std::string>());
  }
  return names;
}

// The "aliases" list: each a name, or {"name": ..., "note": ...}.
std::vector<DeviceAlias> ReadAliases(const Reader& r, const json& list, const Path& path) {
  if (!list.is_array() || list.empty()) {
    r.Fail(path, fmt::format("expected a non-empty list of names, got {}", Reader::Excerpt(list)));
  }
  std::vector<DeviceAlias> aliases;
  for (size_t i = 0; i < list.size(); ++i) {
    const Path p = Reader::Index(path, static_cast<int>(i));
    const json& v = list[i];
    DeviceAlias a;
    if (v.is_string()) {
      a.name = v.get<std::string>();
    } else if (v.is_object()) {
      r.Object(v, p, {"name", "note"});
      a.name = r.String(v, p, "name");
      a.note = r.String(v, p, "note", false);
      if (v.contains("note") && a.note.empty()) r.Fail(Reader::Sub(p, "note"), "must not be empty");
    } else {
      r.Fail(p,
             fmt::format("expected a name or {{\"name\", \"note\"}}, got {}", Reader::Excerpt(v)));
    }
    if (a.name.empty()) r.Fail(p, "the name must not be empty");
    for (const DeviceAlias& other : aliases) {
      if (other.name == a.name) r.Fail(p, fmt::format("\"{}\" is listed twice", a.name));
    }
    aliases.push_back(std::move(a));
  }
  return aliases;
}

// The "curves_from" object: {"kernels": {"fitted": [...], "carried": [...]},
// "memory_sweeps": {...}}, each part and list optional but not empty.
void ReadCurvesFrom(const Reader& r, const json& object, const Path& path, Device& d) {
  r.Object(object, path, {"kernels", "memory_sweeps"});
  for (const auto& [key, sources] : {std::pair{"kernels", &d.kernel_curves_from},
                                     std::pair{"memory_sweeps", &d.memory_curves_from}}) {
    if (!object.contains(key)) continue;
    const Path p = Reader::Sub(path, key);
    const json& part = object.at(key);
    r.Object(part, p, {"fitted", "carried"});
    if (part.empty()) r.Fail(p, "expected \"fitted\" or \"carried\" GPUs");
    if (part.contains("fitted")) {
      sources->fitted = ReadNameList(r, part.at("fitted"), Reader::Sub(p, "fitted"));
    }
    if (part.contains("carried")) {
      sources->carried = ReadNameList(r, part.at("carried"), Reader::Sub(p, "carried"));
    }
  }
}

// Who the device is: "aliases", "curves_from" and "class_interval", each optional.
void ReadIdentity(const Reader& r, const json& doc, const Path& root, Device& d) {
  if (doc.contains("aliases")) {
    d.aliases = ReadAliases(r, doc.at("aliases"), Reader::Sub(root, "aliases"));
  }
  if (doc.contains("curves_from")) {
    ReadCurvesFrom(r, doc.at("curves_from"), Reader::Sub(root, "curves_from"), d);
  }
  if (doc.contains("class_interval")) {
    const json& v = doc.at("class_interval");
    if (!v.is_boolean()) r.Fail(Reader::Sub(root, "class_interval"), "expected true or false");
    d.class_interval = v.get<bool>();
  }
  if (doc.contains("block_scaled")) {
    const Path p = Reader::Sub(root, "block_scaled");
    const json& v = doc.at("block_scaled");
    r.Object(v, p, {"formats", "source"});
    d.block_scaled_formats = ReadNameList(r, v.contains("formats") ? v.at("formats") : json(),
                                          Reader::Sub(p, "formats"));
    for (size_t i = 0; i < d.block_scaled_formats.size(); ++i) {
      const std::string& f = d.block_scaled_formats[i];
      if (f != "mxfp8" && f != "nvfp4" && f != "mxfp4")
        r.Fail(Reader::Index(Reader::Sub(p, "formats"), static_cast<int>(i)),
               fmt::format("\"{}\" is not mxfp8, nvfp4 or mxfp4", f));
    }
    d.block_scaled_source = r.String(v, p, "source");
    if (d.block_scaled_source.empty()) r.Fail(Reader::Sub(p, "source"), "must not be empty");
  }
}

// "achievable_matmul" (Device::achievable16, achievable_fp8), optional; after
// the peaks, which bound it.
void ReadAchievableMatmul(const Reader& r, const json& doc, const Path& root, Device& d) {
  if (!doc.contains("achievable_matmul")) return;
  const Path p = Reader::Sub(root, "achievable_matmul");
  const json& v = doc.at("achievable_matmul");
  r.Object(v, p, {"bf16", "fp8", "source"});
  for (const auto& [key, out, peak] : {std::tuple{"bf16", &d.achievable16, d.tensor16_flops_per_s},
                                       std::tuple{"fp8", &d.achievable_fp8, d.fp8_flops_per_s}}) {
    if (!v.contains(key)) continue;
    const Path q = Reader::Sub(p, key);
    const json& e = v.at(key);
    r.Object(e, q, {"flops_per_s", "shape"});
    const json& f = r.Required(e, q, "flops_per_s");
    if (!f.is_number())
      r.Fail(Reader::Sub(q, "flops_per_s"),
             fmt::format("expected a number, got {}", Reader::Excerpt(f)));
    out->flops_per_s = f.get<double>();
    if (!(out->flops_per_s > 0) || !(out->flops_per_s <= peak))
      r.Fail(Reader::Sub(q, "flops_per_s"),
             fmt::format("{} must be > 0 and at most the device's {} peak {}", out->flops_per_s,
                         key, peak));
    const json& shape = e.contains("shape") ? e.at("shape") : json();
    if (!shape.is_array() || shape.size() != 3)
      r.Fail(Reader::Sub(q, "shape"), "expected [m, n, k]");
    for (int i = 0; i < 3; ++i) {
      const json& x = shape.at(static_cast<size_t>(i));
      if (!x.is_number() || !(x.get<double>() >= 1))
        r.Fail(Reader::Index(Reader::Sub(q, "shape"), i), "expected a dimension >= 1");
    }
    out->m = shape.at(0).get<double>();
    out->n = shape.at(1).get<double>();
    out->k = shape.at(2).get<double>();
  }
  d.achievable_source = r.String(v, p, "source");
  if (d.achievable_source.empty()) r.Fail(Reader::Sub(p, "source"), "must not be empty");
}

using ordered_json = nlohmann::ordered_json;

// Writes what ReadIdentity reads into `doc`, each only when set.
void WriteIdentity(const Device& d, ordered_json& doc) {
  if (!d.aliases.empty()) {
    ordered_json aliases = ordered_json::array();
    for (const DeviceAlias& a : d.aliases) {
      if (a.note.empty()) {
        aliases.push_back(a.name);
      } else {
        aliases.push_back(ordered_json{{"name", a.name}, {"note", a.note}});
      }
    }
    doc["aliases"] = aliases;
  }
  ordered_json curves_from = ordered_json::object();
  for (const auto& [key, sources] : {std::pair{"kernels", &d.kernel_curves_from},
                                     std::pair{"memory_sweeps", &d.memory_curves_from}}) {
    if (sources->empty()) continue;
    ordered_json part = ordered_json::object();
    if (!sources->fitted.empty()) part["fitted"] = sources->fitted;
    if (!sources->carried.empty()) part["carried"] = sources->carried;
    curves_from[key] = part;
  }
  if (!curves_from.empty()) doc["curves_from"] = curves_from;
  if (d.class_interval) doc["class_interval"] = true;
  if (!d.block_scaled_formats.empty())
    doc["block_scaled"] = {{"formats", d.block_scaled_formats}, {"source", d.block_scaled_source}};
  if (!d.achievable_source.empty()) {
    ordered_json a = ordered_json::object();
    for (const auto& [key, x] :
         {std::pair{"bf16", &d.achievable16}, std::pair{"fp8", &d.achievable_fp8}}) {
      if (x->flops_per_s > 0)
        a[key] = {{"flops_per_s", x->flops_per_s}, {"shape", {x->m, x->n, x->k}}};
    }
    a["source"] = d.achievable_source;
    doc["achievable_matmul"] = a;
  }
}

// A number JSON can hold: NaN (not estimated) becomes null.
ordered_json NumberOrNull(double x) { return std::isfinite(x) ? ordered_json(x) : ordered_json(); }

ordered_json ErrorJson(const DeviceCalibration::Error& e) {
  return {{"cases", e.cases}, {"rms", e.rms}, {"median_abs", e.median_abs}, {"max_abs", e.max_abs}};
}

// The source recorded for `field`, or a note that there is none.
std::string SourceOf(const std::map<std::string, std::string>& sources, const std::string& field,
                     const std::string& origin) {
  const auto it = sources.find(field);
  if (it != sources.end() && !it->second.empty()) return it->second;
  return fmt::format("not recorded (written from {})", origin.empty() ? "fitspeed" : origin);
}

// The "links" array, each quantity with its source from `sources`.
ordered_json LinksJson(const std::vector<DeviceLink>& links,
                       const std::map<std::string, std::string>& sources, const std::string& origin,
                       const std::map<std::string, std::string>* bases = nullptr) {
  ordered_json array = ordered_json::array();
  for (size_t i = 0; i < links.size(); ++i) {
    const DeviceLink& l = links[i];
    auto quantity = [&](const std::string& key, double value) {
      const std::string field = fmt::format("links[{}].{}", i, key);
      ordered_json q{{"value", value}, {"source", SourceOf(sources, field, origin)}};
      if (bases != nullptr && bases->count(field) > 0) q["basis"] = bases->at(field);
      return q;
    };
    ordered_json link{{"name", l.name}, {"connects", l.connects}};
    if (l.per_device) link["per"] = "device";
    link["bandwidth_bytes_per_s"] = quantity("bandwidth_bytes_per_s", l.bandwidth_bytes_per_s);
    link["latency_s"] = quantity("latency_s", l.latency_s);
    array.push_back(std::move(link));
  }
  return array;
}

// Throws UsageError for a link a links file could not hold (the parser's rules).
void CheckLinks(const LinksFile& links, const char* what) {
  for (size_t i = 0; i < links.links.size(); ++i) {
    const DeviceLink& l = links.links[i];
    if (!(std::isfinite(l.bandwidth_bytes_per_s) && l.bandwidth_bytes_per_s > 0) ||
        !(std::isfinite(l.latency_s) && l.latency_s >= 0)) {
      throw UsageError(fmt::format(
          "{}: links[{}] ('{}') needs a finite bandwidth > 0 and a finite latency >= 0, got {} "
          "B/s and {} s",
          what, i, l.name, l.bandwidth_bytes_per_s, l.latency_s));
    }
  }
}

}  // namespace

std::string DeviceToJson(const Device& d) {
  auto source = [&d](const std::string& field) { return SourceOf(d.sources, field, d.origin); };
  auto with_basis = [&d](const std::string& field, ordered_json object) {
    const auto basis = d.bases.find(field);
    if (basis != d.bases.end()) object["basis"] = basis->second;
    return object;
  };
  auto quantity = [&source, &with_basis](const std::string& field, const ordered_json& value) {
    return with_basis(field, ordered_json{{"value", value}, {"source", source(field)}});
  };
  auto curve = [&source, &with_basis](const std::string& field, const EfficiencyCurve& c) {
    ordered_json points = ordered_json::array();
    for (const EfficiencyCurve::Point& p : c.points) points.push_back({p.size, p.efficiency});
    ordered_json object{{"points", points}};
    if (c.half_dim > 0) object["half_dim"] = c.half_dim;
    if (!c.from.empty()) object["from"] = c.from;
    object["source"] = source(field);
    return with_basis(field, object);
  };
  ordered_json doc;
  doc["schema"] = kSchema;
  doc["name"] = d.name;
  if (!d.description.empty()) doc["description"] = d.description;
  doc["kind"] = d.kind;
  WriteIdentity(d, doc);
  doc["cores"] = quantity("cores", d.cores);
  ordered_json peaks;
  peaks["fp32"] = quantity("peak_flops_per_s.fp32", d.fp32_flops_per_s);
  if (d.tf32_flops_per_s > 0) peaks["tf32"] = quantity("peak_flops_per_s.tf32", d.tf32_flops_per_s);
  if (d.tensor16_flops_per_s > 0) {
    peaks["tensor16"] =
        with_basis("peak_flops_per_s.tensor16", {{"value", d.tensor16_flops_per_s},
                                                 {"type", d.tensor16_type},
                                                 {"source", source("peak_flops_per_s.tensor16")}});
  }
  for (const auto& [key, value] :
       {std::pair{"fp8", d.fp8_flops_per_s}, std::pair{"int8", d.int8_flops_per_s},
        std::pair{"fp4", d.fp4_flops_per_s}}) {
    if (value > 0) peaks[key] = quantity(fmt::format("peak_flops_per_s.{}", key), value);
  }
  doc["peak_flops_per_s"] = peaks;
  if (d.fp32_matrix_on_tensor16) {
    doc["fp32_matrix_on_tensor16"] = quantity("fp32_matrix_on_tensor16", true);
  }
  if (!d.tensor_layout.empty()) doc["tensor_layout"] = quantity("tensor_layout", d.tensor_layout);
  doc["memory"] = {{"bandwidth_bytes_per_s",
                    quantity("memory.bandwidth_bytes_per_s", d.memory_bandwidth_bytes_per_s)},
                   {"capacity_bytes", quantity("memory.capacity_bytes", d.memory_capacity_bytes)}};
  doc["efficiency"] = {{"compute", curve("efficiency.compute", d.compute_efficiency)},
                       {"memory", curve("efficiency.memory", d.memory_efficiency)}};
  if (!d.tensor_efficiency.points.empty()) {
    doc["efficiency"]["tensor"] = curve("efficiency.tensor", d.tensor_efficiency);
  }
  if (!d.fp8_efficiency.points.empty()) {
    doc["efficiency"]["fp8"] = curve("efficiency.fp8", d.fp8_efficiency);
  }
  if (!d.winograd_efficiency.points.empty()) {
    doc["efficiency"]["winograd"] = curve("efficiency.winograd", d.winograd_efficiency);
  }
  if (!d.depthwise_efficiency.points.empty()) {
    doc["efficiency"]["depthwise"] = curve("efficiency.depthwise", d.depthwise_efficiency);
  }
  if (!d.normalization_memory_efficiency.points.empty()) {
    doc["efficiency"]["memory_normalization"] =
        curve("efficiency.memory_normalization", d.normalization_memory_efficiency);
  }
  if (!d.attention_forward_efficiency.points.empty()) {
    doc["efficiency"]["attention_forward"] =
        curve("efficiency.attention_forward", d.attention_forward_efficiency);
  }
  if (!d.attention_backward_efficiency.points.empty()) {
    doc["efficiency"]["attention_backward"] =
        curve("efficiency.attention_backward", d.attention_backward_efficiency);
  }
  doc["overheads"] = {{"kernel_launch_s", quantity("overheads.kernel_launch_s", d.kernel_launch_s)},
                      {"step_host_s", quantity("overheads.step_host_s", d.step_host_s)}};
  doc["tiles"] = {
      {"batch_multiple", quantity("tiles.batch_multiple", d.batch_multiple)},
      {"feature_multiple_fp32", quantity("tiles.feature_multiple_fp32", d.feature_multiple_fp32)},
      {"feature_multiple_tensor",
       quantity("tiles.feature_multiple_tensor", d.feature_multiple_tensor)}};
  if (d.scale_up_domain > 0)
    doc["scale_up_domain"] = quantity("scale_up_domain", d.scale_up_domain);
  if (d.streaming_multiprocessors > 0)
    doc["streaming_multiprocessors"] =
        quantity("streaming_multiprocessors", d.streaming_multiprocessors);
  if (!d.links.empty()) doc["links"] = LinksJson(d.links, d.sources, d.origin, &d.bases);
  if (d.price_per_hour) doc["price_per_hour"] = quantity("price_per_hour", *d.price_per_hour);
  if (!d.calibrated_on.empty()) {
    const DeviceCalibration& cal = d.calibration;
    ordered_json params = ordered_json::object();
    for (const DeviceCalibration::Parameter& p : cal.parameters) {
      params[p.name] = {{"value", p.value},
                        {"stderr", NumberOrNull(p.std_error)},
                        {"ci", {NumberOrNull(p.ci_low), NumberOrNull(p.ci_high)}}};
    }
    ordered_json c;
    c["cases"] = d.calibrated_on;
    c["method"] = cal.method;
    c["confidence"] = cal.confidence;
    c["parameters"] = params;
    c["error_before"] = ErrorJson(cal.error_before);
    c["error_after"] = ErrorJson(cal.error_after);
    if (cal.error_loo) c["error_loo"] = ErrorJson(*cal.error_loo);
    doc["calibration"] = c;
  }
  return doc.dump(2) + "\n";
}

double EfficiencyCurve::At(double size) const {
  FITSPEED_CHECK(!points.empty(), "an efficiency curve needs at least one point");
  if (!(size > points.front().size)) return points.front().efficiency;
  if (size >= points.back().size) return points.back().efficiency;
  for (size_t i = 1; i < points.size(); ++i) {
    if (size <= points[i].size) {
      const Point& a = points[i - 1];
      const Point& b = points[i];
      const double f = std::log(size / a.size) / std::log(b.size / a.size);
      return a.efficiency + f * (b.efficiency - a.efficiency);
    }
  }
  return points.back().efficiency;
}

double EfficiencyCurve::ShapeFactor(double m, double n, double k) const {
  if (!(half_dim > 0)) return 1.0;
  FITSPEED_CHECK(m > 0 && n > 0 && k > 0, "ShapeFactor needs GEMM dimensions > 0");
  return m / (m + half_dim) * (n / (n + half_dim)) * (k / (k + half_dim));
}

Device::MatrixCurve Device::Fp8Matrix() const {
  FITSPEED_CHECK(fp8_flops_per_s > 0, "Fp8Matrix needs a device with FP8 units");
  if (!fp8_efficiency.points.empty()) return {&fp8_efficiency, 1.0};
  const double peak16 = tensor16_flops_per_s > 0 ? tensor16_flops_per_s : fp32_flops_per_s;
  return {&TensorEfficiency(), peak16 / fp8_flops_per_s};
}

const DeviceLink* Device::FindLink(const std::string& what) const {
  for (const DeviceLink& link : links) {
    if (link.connects == what) return &link;
  }
  return nullptr;
}

void ScaleComputeEfficiency(Device& device, double scale) {
  FITSPEED_CHECK(scale > 0, "ScaleComputeEfficiency needs a scale > 0");
  for (EfficiencyCurve* curve :
       {&device.compute_efficiency, &device.winograd_efficiency, &device.depthwise_efficiency}) {
    for (EfficiencyCurve::Point& p : curve->points)
      p.efficiency = std::min(1.0, p.efficiency * scale);
  }
}

void ScaleMemoryEfficiency(Device& device, double scale) {
  FITSPEED_CHECK(scale > 0, "ScaleMemoryEfficiency needs a scale > 0");
  for (EfficiencyCurve* curve :
       {&device.memory_efficiency, &device.normalization_memory_efficiency}) {
    for (EfficiencyCurve::Point& p : curve->points)
      p.efficiency = std::min(1.0, p.efficiency * scale);
  }
}

Device ParseDeviceJson(const std::string& text, const std::string& source) {
  const json doc = ParseDocument(text, source);
  Device d;
  const Reader r(text, source, &d.sources, &d.bases);
  const Path root;
  r.Object(doc, root,
           {"schema",
            "name",
            "description",
            "kind",
            "aliases",
            "curves_from",
            "class_interval",
            "block_scaled",
            "achievable_matmul",
            "cores",
            "peak_flops_per_s",
            "fp32_matrix_on_tensor16",
            "tensor_layout",
            "memory",
            "efficiency",
            "overheads",
            "tiles",
            "scale_up_domain",
            "streaming_multiprocessors",
            "links",
            "price_per_hour",
            "calibration",
            "comment"});
  const std::string schema = r.String(doc, root, "schema");
  if (schema != kSchema) {
    r.Fail(Reader::Sub(root, "schema"),
           fmt::format("expected \"{}\", got \"{}\"", kSchema, schema));
  }
  d.origin = source;
  d.name = r.String(doc, root, "name");
  if (d.name.empty()) r.Fail(Reader::Sub(root, "name"), "must not be empty");
  d.description = r.String(doc, root, "description", false);
  d.kind = r.String(doc, root, "kind");
  if (d.kind != "gpu" && d.kind != "tpu" && d.kind != "cpu") {
    r.Fail(Reader::Sub(root, "kind"), fmt::format("expected gpu, tpu or cpu, got \"{}\"", d.kind));
  }
  ReadIdentity(r, doc, root, d);
  d.cores = r.Count(doc, root, "cores");

  const Path peaks_path = Reader::Sub(root, "peak_flops_per_s");
  const json& peaks = r.Required(doc, root, "peak_flops_per_s");
  r.Object(peaks, peaks_path, {"fp32", "tf32", "tensor16", "fp8", "int8", "fp4"});
  d.fp32_flops_per_s = r.Positive(peaks, peaks_path, "fp32");
  if (peaks.contains("tf32")) d.tf32_flops_per_s = r.Positive(peaks, peaks_path, "tf32");
  if (peaks.contains("fp8")) d.fp8_flops_per_s = r.Positive(peaks, peaks_path, "fp8");
  if (peaks.contains("int8")) d.int8_flops_per_s = r.Positive(peaks, peaks_path, "int8");
  if (peaks.contains("fp4")) d.fp4_flops_per_s = r.Positive(peaks, peaks_path, "fp4");
  if (peaks.contains("tensor16")) {
    d.tensor16_flops_per_s = r.Positive(peaks, peaks_path, "tensor16");
    const Path t = Reader::Sub(peaks_path, "tensor16");
    d.tensor16_type = r.String(peaks.at("tensor16"), t, "type");
    if (d.tensor16_type != "fp16" && d.tensor16_type != "bf16") {
      r.Fail(Reader::Sub(t, "type"),
             fmt::format("expected fp16 or bf16, got \"{}\"", d.tensor16_type));
    }
  }
  if (doc.contains("fp32_matrix_on_tensor16")) {
    const Path p = Reader::Sub(root, "fp32_matrix_on_tensor16");
    const json& q = doc.at("fp32_matrix_on_tensor16");
    r.Object(q, p, {"value", "source"});
    const json& v = r.Required(q, p, "value");
    if (!v.is_boolean()) r.Fail(Reader::Sub(p, "value"), "expected true or false");
    r.Source(q, p);
    d.fp32_matrix_on_tensor16 = v.get<bool>();
    if (d.fp32_matrix_on_tensor16 && d.tensor16_flops_per_s == 0) {
      r.Fail(p, "needs peak_flops_per_s.tensor16");
    }
  }
  if (doc.contains("tensor_layout")) {
    const Path p = Reader::Sub(root, "tensor_layout");
    const json& q = doc.at("tensor_layout");
    r.Object(q, p, {"value", "source"});
    d.tensor_layout = r.String(q, p, "value");
    r.Source(q, p);
    if (d.tensor_layout != "nhwc" && d.tensor_layout != "nchw") {
      r.Fail(Reader::Sub(p, "value"),
             fmt::format("expected nhwc or nchw, got \"{}\"", d.tensor_layout));
    }
    if (d.tensor16_flops_per_s == 0 && d.tf32_flops_per_s == 0) {
      r.Fail(p, "needs tensor units: peak_flops_per_s.tensor16 or .tf32");
    }
  }

  const Path memory_path = Reader::Sub(root, "memory");
  const json& memory = r.Required(doc, root, "memory");
  r.Object(memory, memory_path, {"bandwidth_bytes_per_s", "capacity_bytes"});
  d.memory_bandwidth_bytes_per_s = r.Positive(memory, memory_path, "bandwidth_bytes_per_s");
  d.memory_capacity_bytes = r.Positive(memory, memory_path, "capacity_bytes");

  const Path eff_path = Reader::Sub(root, "efficiency");
  const json& eff = r.Required(doc, root, "efficiency");
  r.Object(eff, eff_path,
           {"compute", "memory", "tensor", "fp8", "winograd", "depthwise", "memory_normalization",
            "attention_forward", "attention_backward"});
  d.compute_efficiency = r.Curve(eff, eff_path, "compute");
  d.memory_efficiency = r.Curve(eff, eff_path, "memory");
  if (eff.contains("tensor")) {
    if (d.tensor16_flops_per_s == 0 && d.tf32_flops_per_s == 0) {
      r.Fail(Reader::Sub(eff_path, "tensor"),
             "needs tensor units: peak_flops_per_s.tensor16 or .tf32");
    }
    d.tensor_efficiency = r.Curve(eff, eff_path, "tensor");
  }
  if (eff.contains("fp8")) {
    if (d.fp8_flops_per_s == 0) {
      r.Fail(Reader::Sub(eff_path, "fp8"), "needs FP8 units: peak_flops_per_s.fp8");
    }
    d.fp8_efficiency = r.Curve(eff, eff_path, "fp8");
  }
  if (eff.contains("winograd")) d.winograd_efficiency = r.Curve(eff, eff_path, "winograd");
  if (eff.contains("depthwise")) d.depthwise_efficiency = r.Curve(eff, eff_path, "depthwise");
  if (eff.contains("memory_normalization")) {
    d.normalization_memory_efficiency = r.Curve(eff, eff_path, "memory_normalization");
  }
  for (const auto& [key, curve] :
       {std::pair{"attention_forward", &d.attention_forward_efficiency},
        std::pair{"attention_backward", &d.attention_backward_efficiency}}) {
    if (!eff.contains(key)) continue;
    if (d.tensor16_flops_per_s == 0) {
      r.Fail(Reader::Sub(eff_path, key), "needs 16-bit tensor units: peak_flops_per_s.tensor16");
    }
    *curve = r.Curve(eff, eff_path, key);
  }

  const Path over_path = Reader::Sub(root, "overheads");
  const json& over = r.Required(doc, root, "overheads");
  r.Object(over, over_path, {"kernel_launch_s", "step_host_s"});
  d.kernel_launch_s = r.NonNegative(over, over_path, "kernel_launch_s");
  d.step_host_s = r.NonNegative(over, over_path, "step_host_s");

  const Path tiles_path = Reader::Sub(root, "tiles");
  const json& tiles = r.Required(doc, root, "tiles");
  r.Object(tiles, tiles_path,
           {"batch_multiple", "feature_multiple_fp32", "feature_multiple_tensor"});
  d.batch_multiple = r.Count(tiles, tiles_path, "batch_multiple");
  d.feature_multiple_fp32 = r.Count(tiles, tiles_path, "feature_multiple_fp32");
  d.feature_multiple_tensor = r.Count(tiles, tiles_path, "feature_multiple_tensor");

  if (doc.contains("scale_up_domain")) d.scale_up_domain = r.Count(doc, root, "scale_up_domain");
  if (doc.contains("streaming_multiprocessors"))
    d.streaming_multiprocessors = r.Count(doc, root, "streaming_multiprocessors");
  if (doc.contains("links")) d.links = ReadLinks(r, doc.at("links"), Reader::Sub(root, "links"));
  if (doc.contains("price_per_hour")) d.price_per_hour = r.Positive(doc, root, "price_per_hour");
  if (d.cores > 1 && d.FindLink("cores") == nullptr) {
    r.Fail(Reader::Sub(root, "links"), "a device with cores > 1 needs a link that connects cores");
  }
  ReadAchievableMatmul(r, doc, root, d);
  if (doc.contains("calibration")) ReadCalibration(r, doc.at("calibration"), d);
  return d;
}

Device ReadDeviceJsonFile(const std::string& path) {
  return ParseDeviceJson(ReadInputFile(path, "device file"), path);
}

LinksFile ParseLinksJson(const std::string& text, const std::string& source) {
  const json doc = ParseDocument(text, source);
  LinksFile f;
  const Reader r(text, source, &f.sources);
  const Path root;
  const Path links_path = Reader::Sub(root, "links");
  if (doc.is_object() && doc.contains("schema") && doc.at("schema") == kSchema) {
    // A device file: its links, with their sources.
    Device d = ParseDeviceJson(text, source);
    f.links = std::move(d.links);
    for (const auto& [field, text_of_source] : d.sources) {
      if (field.rfind("links[", 0) == 0) f.sources[field] = text_of_source;
    }
  } else {
    r.Object(doc, root, {"schema", "links", "comment"});
    const std::string schema = r.String(doc, root, "schema");
    if (schema != kLinksSchema) {
      r.Fail(Reader::Sub(root, "schema"),
             fmt::format("expected \"{}\" (or a \"{}\" file), got \"{}\"", kLinksSchema, kSchema,
                         schema));
    }
    f.links = ReadLinks(r, r.Required(doc, root, "links"), links_path);
  }
  if (f.links.empty()) r.Fail(links_path, "expected a non-empty list of links");
  for (size_t i = 0; i < f.links.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (f.links[j].connects == f.links[i].connects) {
        r.Fail(Reader::Sub(Reader::Index(links_path, static_cast<int>(i)), "connects"),
               fmt::format("links[{}] already connects {}", j, f.links[i].connects));
      }
    }
  }
  return f;
}

std::string LinksToJson(const LinksFile& links) {
  CheckLinks(links, "LinksToJson");
  ordered_json doc;
  doc["schema"] = kLinksSchema;
  doc["links"] = LinksJson(links.links, links.sources, "");
  return doc.dump(2) + "\n";
}

const DeviceLink* LinksFile::FindLink(const std::string& what) const {
  for (const DeviceLink& link : links) {
    if (link.connects == what) return &link;
  }
  return nullptr;
}

LinksFile ReadLinksJsonFile(const std::string& path) {
  return ParseLinksJson(ReadInputFile(path, "links file"), path);
}

void WriteLinksJsonFile(const std::string& path, const LinksFile& links) {
  const std::string text = LinksToJson(links);
  std::ofstream out(path);
  out << text;
  if (!out || !out.flush()) {
    throw InputError(fmt::format("cannot write the links file '{}'", path));
  }
}

CommModel CommModelFromLinks(const LinksFile& links, const std::string& source,
                             int devices_per_node) {
  CommModel comm;
  comm.devices_per_node = devices_per_node;
  const DeviceLink* intra = links.FindLink("devices");
  const DeviceLink* inter = links.FindLink("network");
  if (intra) comm.intra_node = *intra;
  if (inter) comm.inter_node = *inter;
  if (!intra && !inter) {
    throw DataError(source, 0, "links",
                    "no link with \"connects\": \"devices\" or \"network\" (the ranks' "
                    "all-reduce link)");
  }
  if (!intra) {
    comm.intra_node = comm.inter_node;
  } else if (inter) {
    comm.algorithm = AllReduceAlgorithm::kHierarchical;
  }
  return comm;
}

void ApplyLinks(Device& device, const LinksFile& links) {
  CheckLinks(links, "ApplyLinks");
  // Moves the sources of links.links[from] to device.links[to].
  auto take_sources = [&](size_t from, size_t to) {
    for (const char* quantity : {"bandwidth_bytes_per_s", "latency_s"}) {
      const auto it = links.sources.find(fmt::format("links[{}].{}", from, quantity));
      const std::string field = fmt::format("links[{}].{}", to, quantity);
      if (it != links.sources.end()) {
        device.sources[field] = it->second;
      } else {
        device.sources.erase(field);
      }
      device.bases.erase(field);  // a links file's numbers say their source, not a basis
    }
  };
  for (size_t j = 0; j < links.links.size(); ++j) {
    const DeviceLink& link = links.links[j];
    bool replaced = false;
    for (size_t i = 0; i < device.links.size(); ++i) {
      if (device.links[i].connects != link.connects) continue;
      device.links[i] = link;
      take_sources(j, i);
      replaced = true;
    }
    if (!replaced) {
      device.links.push_back(link);
      take_sources(j, device.links.size() - 1);
    }
  }
}

std::vector<std::string> CatalogDeviceNames() {
  std::vector<std::string> names;
  for (const EmbeddedDevice& e : EmbeddedDevices()) names.push_back(e.name);
  names.push_back("host");
  return names;
}

const std::string& CatalogDeviceJson(const std::string& name) {
  for (const EmbeddedDevice& e : EmbeddedDevices()) {
    if (e.name == name) return e.json;
  }
  std::vector<std::string> names;
  for (const EmbeddedDevice& e : EmbeddedDevices()) names.push_back(e.name);
  throw UsageError(
      fmt::format("unknown catalog device '{}' (known: {})", name, fmt::join(names, ", ")));
}

std::optional<CatalogAlias> FindCatalogAlias(const std::string& alias) {
  static const std::map<std::string, CatalogAlias> aliases = [] {
    std::map<std::string, CatalogAlias> all;
    for (const EmbeddedDevice& e : EmbeddedDevices()) {
      for (const DeviceAlias& a : LoadDevice(e.name).aliases) {
        const bool once = all.emplace(a.name, CatalogAlias{e.name, a.note}).second;
        FITSPEED_CHECK(once, "a name is the alias of one catalog device");
      }
    }
    return all;
  }();
  const auto it = aliases.find(alias);
  if (it == aliases.end()) return std::nullopt;
  return it->second;
}

Device LoadDevice(const std::string& name_or_path) {
  if (name_or_path == "host") return ProbeHostDevice();
  for (const EmbeddedDevice& e : EmbeddedDevices()) {
    if (e.name == name_or_path) {
      Device d = ParseDeviceJson(e.json, "data/devices/" + e.name + ".json");
      d.origin = "catalog:" + e.name;
      return d;
    }
  }
  // A path (a '/', a ".json" name or a file that exists) is read as one, so
  // that a missing, unreadable or special file is an InputError.
  struct stat info {};
  if (LooksLikeFilePath(name_or_path) || stat(name_or_path.c_str(), &info) == 0) {
    return ReadDeviceJsonFile(name_or_path);
  }
  throw UsageError(fmt::format("'{}' is neither a catalog device ({}) nor a device JSON file",
                               name_or_path, fmt::join(CatalogDeviceNames(), ", ")));
}

}  // namespace fitspeed
