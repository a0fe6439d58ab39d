// The "fitspeed.network/1" JSON format (docs/models.md).
#include "fitspeed/model/network_json.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/input_file.h"
#include "core/json_text.h"
#include "fitspeed/core/error.h"
#include "kinds/kind.h"

namespace fitspeed {

namespace {

using nlohmann::json;

constexpr const char* kSchema = "fitspeed.network/1";

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

using kinds::json;
using kinds::kMaxElements;
using kinds::ObjectReader;

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
    std::vector<std::string> known;
    for (const kinds::KindRules& k : kinds::AllRules()) {
      if (k.kind != LayerKind::kInput) known.push_back(k.name);
    }
    r.Fail("kind", fmt::format("unknown kind {} (known: {})",
                               ObjectReader::Excerpt(json(kind_name)), fmt::join(known, ", ")));
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

  const kinds::KindRules& rules = kinds::RulesOf(layer.kind);
  if (rules.read_json != nullptr) rules.read_json(r, layer);
  r.RejectUnknownKeys();
  return layer;
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
  if (!doc.contains("input") && !doc.contains("layers")) {
    // Not a network: say what the file would need rather than "input: missing".
    if (doc.contains("architectures") || doc.contains("hidden_size") ||
        doc.contains("num_hidden_layers") || doc.contains("vocab_size")) {
      throw DataError(source, 0, "model_type",
                      "missing: a Hugging Face config.json names its architecture there (e.g. "
                      "\"llama\")");
    }
    throw DataError(source, 0, "",
                    fmt::format("neither a network JSON (\"schema\": \"{}\" with \"input\" and "
                                "\"layers\") nor a Hugging Face config.json (with \"model_type\")",
                                kSchema));
  }
  ObjectReader top(doc, source, 0, "");
  const std::string schema = top.String("schema", kSchema);
  if (schema != kSchema) {
    top.Fail("schema",
             fmt::format("expected \"{}\", got {}", kSchema, ObjectReader::Excerpt(json(schema))));
  }
  if (!top.Has("input")) top.Fail("input", "missing (the per-sample shape, e.g. [3, 32, 32])");
  if (!top.Get("input").is_array()) top.Fail("input", "expected a list of 1 to 3 dimensions");
  Network net(top.String("name", "network"),
              Shape(top.IntegerList("input", {1, 2, 3}, 1, kMaxElements)));
  net.description = top.String("description", "");
  net.reference = top.String("reference", "");
  net.mean_square_tokens = top.Number("mean_square_tokens", 0);
  if (net.mean_square_tokens < 0) top.Fail("mean_square_tokens", "must be >= 0 (0: padded)");
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
  return ParseNetworkJson(ReadInputFile(path, "the network JSON"), path);
}

std::string NetworkToJson(const Network& network, int indent) {
  json doc;
  doc["schema"] = kSchema;
  doc["name"] = network.name;
  if (!network.description.empty()) doc["description"] = network.description;
  if (!network.reference.empty()) doc["reference"] = network.reference;
  if (network.mean_square_tokens > 0) doc["mean_square_tokens"] = network.mean_square_tokens;
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
    const kinds::KindRules& rules = kinds::RulesOf(layer.kind);
    if (rules.write_json != nullptr) rules.write_json(layer, out);
    layers.push_back(std::move(out));
  }
  doc["layers"] = std::move(layers);
  return doc.dump(indent);
}

}  // namespace fitspeed
