// A user's measured cases as CSV (docs/devices.md, "Calibration"):
//   network,device,precision,devices,batch,throughput_sps[,framework][,layout][,optimizer][,fusion][,note]
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/input_file.h"
#include "fitspeed/calibrate/cases.h"
#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

namespace {

constexpr std::array<const char*, 6> kRequired = {"network", "device", "precision",
                                                  "devices", "batch",  "throughput_sps"};
constexpr std::array<const char*, 5> kOptional = {"framework", "layout", "optimizer", "fusion",
                                                  "note"};
// Bounds that keep the conversions to int and int64_t defined.
constexpr double kMaxDevices = 1e7;
constexpr double kMaxBatch = 1e15;

bool Known(const std::string& column) {
  for (const char* name : kRequired) {
    if (column == name) return true;
  }
  for (const char* name : kOptional) {
    if (column == name) return true;
  }
  return false;
}

// A whole number >= 1 and <= max read from `field`.
double ParseCount(const std::string& text, double max, const std::string& source, int line,
                  const std::string& field) {
  const double value = io::ParseNumber(text, source, line, field);
  if (!(value > 0)) {
    throw DataError(source, line, field, fmt::format("{} breaks the rule: must be > 0", text));
  }
  if (value != std::floor(value) || value > max) {
    throw DataError(source, line, field,
                    fmt::format("{} is not a whole number in [1, {}]", text, max));
  }
  return value;
}

// `parse(text)` (a name parser that throws UsageError), or DataError naming
// the file, line and field, and the `known` names.
template <typename Parse>
auto ParseNamed(const std::string& text, Parse parse, const std::string& source, int line,
                const std::string& field, const char* known) {
  try {
    return parse(text);
  } catch (const UsageError&) {
    throw DataError(source, line, field,
                    fmt::format("unknown {} '{}' (known: {})", field, io::Excerpt(text), known));
  }
}

}  // namespace

CaseSelection SelectCasesOf(std::vector<MeasuredCase> cases,
                            const std::vector<std::string>& names) {
  CaseSelection selection;
  for (MeasuredCase& c : cases) {
    const bool ours = std::find(names.begin(), names.end(), c.device) != names.end();
    (ours ? selection.used : selection.skipped).push_back(std::move(c));
  }
  return selection;
}

std::string CountByDevice(const std::vector<MeasuredCase>& cases) {
  std::map<std::string, int> by_device;
  for (const MeasuredCase& c : cases) ++by_device[c.device];
  std::string list;
  for (const auto& [name, count] : by_device) {
    list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", name, count);
  }
  return list;
}

std::vector<MeasuredCase> ReadCasesCsv(const std::string& path) {
  const std::string text = ReadInputFile(path, "cases file");
  if (io::LooksBinary(text)) throw DataError(path, 0, "", "not a text file");

  io::LineCursor cursor(text);
  std::string_view line;
  std::map<std::string, size_t> column;  // name -> index in a row
  size_t n_columns = 0;
  int header_line = 0;
  std::vector<MeasuredCase> cases;
  while (cursor.Next(line)) {
    const std::string_view trimmed = io::Trim(line);
    // Blank lines and "#" comment lines (where the numbers came from) are skipped.
    if (trimmed.empty() || trimmed.front() == '#') continue;
    const std::vector<std::string> fields = io::Split(trimmed, ',', /*quotes=*/true);
    const int n = cursor.number();
    if (header_line == 0) {
      header_line = n;
      n_columns = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        const std::string name(io::Trim(fields[i]));
        if (!Known(name)) {
          throw DataError(path, n, name,
                          "unknown column (expected network, device, precision, devices, batch, "
                          "throughput_sps, and optionally framework, layout, optimizer, fusion "
                          "and note)");
        }
        if (!column.emplace(name, i).second) {
          throw DataError(path, n, name, "column appears twice");
        }
      }
      for (const char* name : kRequired) {
        if (column.count(name) == 0) throw DataError(path, n, name, "missing column");
      }
      continue;
    }
    // A row may end before trailing optional columns (framework, layout, optimizer, fusion,
    // note), which are then empty.
    if (fields.size() > n_columns) {
      throw DataError(path, n, "",
                      fmt::format("{} fields, the header (line {}) has {}", fields.size(),
                                  header_line, n_columns));
    }
    for (const char* name : kRequired) {
      if (column.at(name) >= fields.size()) {
        throw DataError(path, n, name,
                        fmt::format("missing: {} fields, the header (line {}) has {}",
                                    fields.size(), header_line, n_columns));
      }
    }
    auto get = [&](const char* name) -> std::string {
      const auto it = column.find(name);
      return it == column.end() || it->second >= fields.size()
                 ? std::string()
                 : std::string(io::Trim(fields[it->second]));
    };
    MeasuredCase c;
    c.source = path;
    c.line = n;
    c.network = get("network");
    c.device = get("device");
    if (c.network.empty()) throw DataError(path, n, "network", "must not be empty");
    if (c.device.empty()) throw DataError(path, n, "device", "must not be empty");
    c.precision = ParseNamed(
        get("precision"),
        [](const std::string& name) { return ParsePrecision(name, PrecisionContext::kDevice); },
        path, n, "precision", "fp32, tf32, mixed, fp8");
    c.devices = static_cast<int>(ParseCount(get("devices"), kMaxDevices, path, n, "devices"));
    c.batch = static_cast<int64_t>(ParseCount(get("batch"), kMaxBatch, path, n, "batch"));
    if (c.batch < c.devices) {
      throw DataError(path, n, "batch",
                      fmt::format("global batch {} is smaller than devices {}: every device "
                                  "needs at least one sample",
                                  c.batch, c.devices));
    }
    c.throughput_sps = io::ParsePositive(get("throughput_sps"), path, n, "throughput_sps");
    c.framework = get("framework");
    if (const std::string layout = get("layout"); !layout.empty()) {
      c.layout = ParseNamed(layout, ParseActivationLayout, path, n, "layout", "nchw, nhwc");
    }
    if (const std::string optimizer = get("optimizer"); !optimizer.empty()) {
      c.optimizer = ParseNamed(optimizer, ParseOptimizer, path, n, "optimizer",
                               "sgd, sgd-momentum, adam, rmsprop");
    }
    if (const std::string fusion = get("fusion"); !fusion.empty()) {
      c.fusion = ParseNamed(fusion, ParseElementwiseFusion, path, n, "fusion", "none, bn-relu-add");
    }
    c.note = get("note");
    cases.push_back(std::move(c));
  }
  if (header_line == 0) throw DataError(path, 0, "", "empty: expected a header line");
  return cases;
}

bool LooksLikeCasesCsv(const std::string& path) {
  // Only a regular file: a pipe would lose what is read here, a device such
  // as /dev/zero never end its first line.
  std::error_code error;
  if (path == "-" || !std::filesystem::is_regular_file(path, error)) return false;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::vector<std::string> columns;
    std::stringstream fields(line);
    std::string field;
    while (std::getline(fields, field, ',')) {
      field.erase(0, field.find_first_not_of(" \t\""));
      field.erase(field.find_last_not_of(" \t\r\"") + 1);
      columns.push_back(io::ToLower(field));
    }
    auto has = [&columns](const char* name) {
      return std::find(columns.begin(), columns.end(), name) != columns.end();
    };
    return has("network") && has("device") && has("throughput_sps");
  }
  return false;
}

}  // namespace fitspeed
