// The "fitspeed.network/1" JSON format (docs/models.md).
#include "fitspeed/model/network_json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "fitspeed/core/error.h"

namespace fitspeed {

namespace {

using nlohmann::json;

constexpr const char* kSchema = "fitspeed.network/1";

// 1-based line of byte `offset` in `text`.
int LineAt(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
  }
  return line;
}

// The line on which each element of the top-level "layers" array starts, found
// by scanning the (already valid) JSON text: nlohmann::json keeps no positions.
std::vector<int> LayerLines(const std::string& text) {
  std::vector<int> lines;
  int depth = 0;
  int line = 1;
  int layers_depth = -1;  // depth inside the "layers" array, -1 outside
  bool in_string = false;
  bool escape = false;
  bool expect_element = false;
  std::string last_string;
  std::string current;
  std::string key;
  for (char ch : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (ch == '\\') {
        escape = true;
      } else if (ch == '"') {
        in_string = false;
        last_string = current;
      } else {
        current += ch;
      }
      if (ch == '\n') ++line;
      continue;
    }
    const bool blank = ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
    if (expect_element && !blank && ch != ',' && ch != ']') {
      lines.push_back(line);
      expect_element = false;
    }
    switch (ch) {
      case '\n':
        ++line;
        break;
      case '"':
        in_string = true;
        current.clear();
        break;
      case ':':
        if (depth == 1) key = last_string;
        break;
      case '{':
      case '[':
        ++depth;
        if (ch == '[' && depth == 2 && key == "layers") {
          layers_depth = depth;
          expect_element = true;
        }
        break;
      case '}':
      case ']':
        if (depth == layers_depth) layers_depth = -1;
        --depth;
        break;
      case ',':
        if (depth == layers_depth) expect_element = true;
        break;
      default:
        break;
    }
  }
  return lines;
}

// Reads the fields of one JSON object, naming them in errors, and checks that
// no unknown key remains.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string source, int line, std::string where)
      : object_(object), source_(std::move(source)), line_(line), where_(std::move(where)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& problem) const {
    const std::string field = key.empty() ? where_ : (where_.empty() ? key : where_ + "." + key);
    throw DataError(source_, line_, field, problem);
  }

  bool Has(const std::string& key) {
    used_.insert(key);
    return object_.contains(key);
  }
  const json& Get(const std::string& key) {
    used_.insert(key);
    return object_.at(key);
  }

  std::string String(const std::string& key, const std::string& fallback) {
    if (!Has(key)) return fallback;
    const json& v = Get(key);
    if (!v.is_string()) Fail(key, fmt::format("expected a string, got {}", Excerpt(v)));
    return v.get<std::string>();
  }

  bool Bool(const std::string& key, bool fallback) {
    if (!Has(key)) return fallback;
    const json& v = Get(key);
    if (!v.is_boolean()) Fail(key, fmt::format("expected true or false, got {}", Excerpt(v)));
    return v.get<bool>();
  }

  double Number(const std::string& key, double fallback) {
    if (!Has(key)) return fallback;
    const json& v = Get(key);
    if (!v.is_number()) Fail(key, fmt::format("expected a number, got {}", Excerpt(v)));
    const double value = v.get<double>();
    if (!std::isfinite(value)) Fail(key, "expected a finite number");
    return value;
  }

  // An integer in [lo, hi]; `value` is the element at `key` (or inside it).
  int64_t Integer(const std::string& key, const json& value, int64_t lo, int64_t hi) {
    if (!value.is_number_integer()) {
      Fail(key, fmt::format("expected an integer, got {}", Excerpt(value)));
    }
    // nlohmann::json stores non-negative integers as unsigned.
    const bool in_range = value.is_number_unsigned()
                              ? value.get<uint64_t>() <= static_cast<uint64_t>(hi) &&
                                    static_cast<int64_t>(value.get<uint64_t>()) >= lo
                              : value.get<int64_t>() >= lo && value.get<int64_t>() <= hi;
    if (!in_range) Fail(key, fmt::format("{} is out of range [{}, {}]", Excerpt(value), lo, hi));
    return value.get<int64_t>();
  }
  int64_t Integer(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
    if (!Has(key)) return fallback;
    return Integer(key, Get(key), lo, hi);
  }
  int64_t RequiredInteger(const std::string& key, int64_t lo, int64_t hi) {
    if (!Has(key)) Fail(key, "missing");
    return Integer(key, Get(key), lo, hi);
  }

  // An int or a list of `sizes` ints (e.g. kernel 3 or [3, 5]).
  std::vector<int64_t> IntegerList(const std::string& key, const std::vector<size_t>& sizes,
                                   int64_t lo, int64_t hi) {
    const json& v = Get(key);
    if (v.is_array()) {
      bool size_ok = false;
      for (size_t n : sizes) size_ok = size_ok || v.size() == n;
      if (!size_ok) {
        Fail(key, fmt::format("expected an integer or a list of {} integers, got {}",
                              fmt::join(sizes, " or "), Excerpt(v)));
      }
      std::vector<int64_t> out;
      for (const json& e : v) out.push_back(Integer(key, e, lo, hi));
      return out;
    }
    return {Integer(key, v, lo, hi)};
  }

  void RejectUnknownKeys() const {
    for (const auto& item : object_.items()) {
      if (used_.count(item.key()) == 0) Fail(item.key(), "unknown key");
    }
  }

  static std::string Excerpt(const json& v) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }

 private:
  const json& object_;
  std::string source_;
  int line_;
  std::string where_;
  std::set<std::string> used_;
};

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr int64_t kMaxDim = int64_t{1} << 40;

// "kernel", "stride" and "padding" of a conv2d or pooling layer.
Window2d ReadWindow(ObjectReader& r, bool stride_defaults_to_kernel) {
  Window2d w;
  if (!r.Has("kernel")) r.Fail("kernel", "missing");
  const std::vector<int64_t> kernel = r.IntegerList("kernel", {2}, 1, kMaxInt);
  w.kernel_h = static_cast<int>(kernel.front());
  w.kernel_w = static_cast<int>(kernel.back());
  if (r.Has("stride")) {
    const std::vector<int64_t> stride = r.IntegerList("stride", {2}, 1, kMaxInt);
    w.stride_h = static_cast<int>(stride.front());
    w.stride_w = static_cast<int>(stride.back());
  } else if (stride_defaults_to_kernel) {
    w.stride_h = w.kernel_h;
    w.stride_w = w.kernel_w;
  }
  w.padding = Padding::kValid;
  if (r.Has("padding")) {
    const json& p = r.Get("padding");
    if (p.is_string()) {
      const std::string mode = p.get<std::string>();
      if (mode == "same") {
        w.padding = Padding::kSame;
      } else if (mode != "valid") {
        r.Fail("padding", fmt::format("expected \"same\", \"valid\" or pixels, got {}",
                                      ObjectReader::Excerpt(p)));
      }
    } else {
      // p, [vertical, horizontal] or [top, bottom, left, right].
      const std::vector<int64_t> pad = r.IntegerList("padding", {2, 4}, 0, kMaxInt);
      w.padding = Padding::kExplicit;
      if (pad.size() == 4) {
        w.pad_top = static_cast<int>(pad[0]);
        w.pad_bottom = static_cast<int>(pad[1]);
        w.pad_left = static_cast<int>(pad[2]);
        w.pad_right = static_cast<int>(pad[3]);
      } else {
        w.pad_top = w.pad_bottom = static_cast<int>(pad.front());
        w.pad_left = w.pad_right = static_cast<int>(pad.back());
      }
    }
  }
  return w;
}

// Layer `index` of the network (the first of the JSON list is 1: the input is 0).
Layer ReadLayer(const json& value, size_t index, const std::string& previous,
                const std::string& source, int line) {
  const std::string where = fmt::format("layers[{}]", index);
  if (!value.is_object()) {
    throw DataError(source, line, where, "expected an object {\"kind\": ...}");
  }
  Layer layer;
  {
    // The name first, so that every later error names the layer.
    ObjectReader names(value, source, line, where);
    layer.name = names.String("name", "");
  }
  const std::string label =
      layer.name.empty() ? where : fmt::format("{} \"{}\"", where, layer.name);
  ObjectReader r(value, source, line, label);
  r.String("name", "");
  if (!r.Has("kind")) r.Fail("kind", "missing");
  const std::string kind_name = r.String("kind", "");
  const std::optional<LayerKind> kind = LayerKindFromName(kind_name);
  if (!kind || *kind == LayerKind::kInput) {
    r.Fail("kind", fmt::format("unknown kind {} (known: conv2d, dense, batch_norm, relu, "
                               "avg_pool, max_pool, global_avg_pool, add, flatten, "
                               "softmax_cross_entropy, sigmoid, swish, mul, concat, lrn)",
                               ObjectReader::Excerpt(json(kind_name))));
  }
  layer.kind = *kind;

  if (r.Has("input") && r.Has("inputs")) r.Fail("inputs", "give either input or inputs");
  if (r.Has("input")) {
    layer.inputs = {r.String("input", "")};
  } else if (r.Has("inputs")) {
    const json& list = r.Get("inputs");
    if (!list.is_array()) r.Fail("inputs", "expected a list of layer names");
    for (const json& e : list) {
      if (!e.is_string()) r.Fail("inputs", "expected a list of layer names");
      layer.inputs.push_back(e.get<std::string>());
    }
  } else {
    layer.inputs = {previous};
  }

  switch (layer.kind) {
    case LayerKind::kInput:
      break;
    case LayerKind::kConv2d:
      layer.conv.out_channels = r.RequiredInteger("filters", 1, kMaxDim);
      layer.conv.window = ReadWindow(r, false);
      layer.conv.groups = r.Integer("groups", 1, 1, kMaxDim);
      layer.conv.bias = r.Bool("bias", true);
      break;
    case LayerKind::kDense:
      layer.dense.units = r.RequiredInteger("units", 1, kMaxDim);
      layer.dense.bias = r.Bool("bias", true);
      break;
    case LayerKind::kBatchNorm:
      layer.batch_norm.epsilon = r.Number("epsilon", layer.batch_norm.epsilon);
      layer.batch_norm.momentum = r.Number("momentum", layer.batch_norm.momentum);
      layer.batch_norm.scale = r.Bool("scale", true);
      layer.batch_norm.center = r.Bool("center", true);
      break;
    case LayerKind::kRelu:
      layer.relu.max_value = r.Number("max_value", layer.relu.max_value);
      break;
    case LayerKind::kAvgPool:
    case LayerKind::kMaxPool:
      layer.pool.window = ReadWindow(r, true);
      if (layer.kind == LayerKind::kAvgPool) {
        layer.pool.count_include_pad = r.Bool("count_include_pad", false);
      }
      break;
    case LayerKind::kLrn:
      layer.lrn.size = r.Integer("size", layer.lrn.size, 1, kMaxInt);
      layer.lrn.alpha = r.Number("alpha", layer.lrn.alpha);
      layer.lrn.beta = r.Number("beta", layer.lrn.beta);
      layer.lrn.k = r.Number("k", layer.lrn.k);
      break;
    case LayerKind::kGlobalAvgPool:
    case LayerKind::kAdd:
    case LayerKind::kFlatten:
    case LayerKind::kSoftmaxCrossEntropy:
    case LayerKind::kSigmoid:
    case LayerKind::kSwish:
    case LayerKind::kMul:
    case LayerKind::kConcat:
      break;
  }
  r.RejectUnknownKeys();
  return layer;
}

void WindowJson(const Window2d& w, json& out) {
  out["kernel"] = {w.kernel_h, w.kernel_w};
  out["stride"] = {w.stride_h, w.stride_w};
  switch (w.padding) {
    case Padding::kSame:
      out["padding"] = "same";
      break;
    case Padding::kValid:
      out["padding"] = "valid";
      break;
    case Padding::kExplicit:
      out["padding"] = {w.pad_top, w.pad_bottom, w.pad_left, w.pad_right};
      break;
  }
}

}  // namespace

Network ParseNetworkJson(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw DataError(source, LineAt(text, e.byte > 0 ? e.byte - 1 : 0), "",
                    fmt::format("not valid JSON: {}", e.what()));
  } catch (const json::exception& e) {  // e.g. out_of_range: a number too large for a double
    throw DataError(source, 0, "", fmt::format("not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) throw DataError(source, 1, "", "expected a JSON object");
  ObjectReader top(doc, source, 0, "");
  const std::string schema = top.String("schema", kSchema);
  if (schema != kSchema) {
    top.Fail("schema",
             fmt::format("expected \"{}\", got {}", kSchema, ObjectReader::Excerpt(json(schema))));
  }
  if (!top.Has("input")) top.Fail("input", "missing (the per-sample shape, e.g. [3, 32, 32])");
  if (!top.Get("input").is_array()) top.Fail("input", "expected a list of 1 to 3 dimensions");
  Network net(top.String("name", "network"),
              Shape(top.IntegerList("input", {1, 2, 3}, 1, kMaxDim)));
  net.description = top.String("description", "");
  net.reference = top.String("reference", "");
  net.origin = source;
  if (!top.Has("layers")) top.Fail("layers", "missing");
  const json& layers = top.Get("layers");
  if (!layers.is_array() || layers.empty()) top.Fail("layers", "expected a list of layers");
  top.RejectUnknownKeys();

  const std::vector<int> lines = LayerLines(text);
  std::string previous = "input";
  for (size_t i = 0; i < layers.size(); ++i) {
    const int line = i < lines.size() ? lines[i] : 0;
    Layer layer = ReadLayer(layers[i], i + 1, previous, source, line);
    layer.origin_line = line;
    previous = net.Append(std::move(layer));
  }
  net.Finalize();
  return net;
}

Network ReadNetworkJsonFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw InputError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  return ParseNetworkJson(text.str(), path);
}

std::string NetworkToJson(const Network& network, int indent) {
  json doc;
  doc["schema"] = kSchema;
  doc["name"] = network.name;
  if (!network.description.empty()) doc["description"] = network.description;
  if (!network.reference.empty()) doc["reference"] = network.reference;
  doc["input"] =
      network.layers().empty() ? json::array() : json(network.layer(0).output_shape.dims);
  json layers = json::array();
  for (size_t i = 1; i < network.layers().size(); ++i) {
    const Layer& layer = network.layers()[i];
    json out;
    out["name"] = layer.name;
    out["kind"] = LayerKindName(layer.kind);
    if (layer.inputs.size() == 1) {
      out["input"] = layer.inputs.front();
    } else {
      out["inputs"] = layer.inputs;
    }
    switch (layer.kind) {
      case LayerKind::kInput:
        break;
      case LayerKind::kConv2d:
        out["filters"] = layer.conv.out_channels;
        WindowJson(layer.conv.window, out);
        out["groups"] = layer.conv.groups;
        out["bias"] = layer.conv.bias;
        break;
      case LayerKind::kDense:
        out["units"] = layer.dense.units;
        out["bias"] = layer.dense.bias;
        break;
      case LayerKind::kBatchNorm:
        out["epsilon"] = layer.batch_norm.epsilon;
        out["momentum"] = layer.batch_norm.momentum;
        out["scale"] = layer.batch_norm.scale;
        out["center"] = layer.batch_norm.center;
        break;
      case LayerKind::kRelu:
        if (std::isfinite(layer.relu.max_value)) out["max_value"] = layer.relu.max_value;
        break;
      case LayerKind::kAvgPool:
      case LayerKind::kMaxPool:
        WindowJson(layer.pool.window, out);
        if (layer.kind == LayerKind::kAvgPool) {
          out["count_include_pad"] = layer.pool.count_include_pad;
        }
        break;
      case LayerKind::kLrn:
        out["size"] = layer.lrn.size;
        out["alpha"] = layer.lrn.alpha;
        out["beta"] = layer.lrn.beta;
        out["k"] = layer.lrn.k;
        break;
      case LayerKind::kGlobalAvgPool:
      case LayerKind::kAdd:
      case LayerKind::kFlatten:
      case LayerKind::kSoftmaxCrossEntropy:
      case LayerKind::kSigmoid:
      case LayerKind::kSwish:
      case LayerKind::kMul:
      case LayerKind::kConcat:
        break;
    }
    layers.push_back(std::move(out));
  }
  doc["layers"] = std::move(layers);
  return doc.dump(indent);
}

}  // namespace fitspeed
