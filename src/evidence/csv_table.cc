#include "evidence/csv_table.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

const std::string& CsvTable::Get(const Row& row, const std::string& name) const {
  return row.fields[column.at(name)];
}

double CsvTable::Positive(const Row& row, const std::string& name) const {
  return io::ParsePositive(Get(row, name), source, row.line, name);
}

double CsvTable::NonNegative(const Row& row, const std::string& name) const {
  const double value = io::ParseNumber(Get(row, name), source, row.line, name);
  if (!std::isfinite(value) || value < 0) {
    throw DataError(source, row.line, name,
                    fmt::format("expected a finite number >= 0, got {}", value));
  }
  return value;
}

int64_t CsvTable::PositiveInt(const Row& row, const std::string& name) const {
  const double value = Positive(row, name);
  if (value != std::floor(value) || value > 1e15) {
    throw DataError(source, row.line, name, fmt::format("expected a whole number, got {}", value));
  }
  return static_cast<int64_t>(value);
}

bool CsvTable::Bool(const Row& row, const std::string& name) const {
  const std::string& text = Get(row, name);
  if (text == "True") return true;
  if (text == "False") return false;
  throw DataError(source, row.line, name,
                  fmt::format("expected True or False, got '{}'", io::Excerpt(text)));
}

CsvTable ReadCsvTable(const std::string& path, const std::vector<std::string>& required) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open the measurement table", path));
  std::stringstream text;
  text << file.rdbuf();
  const std::string content = text.str();
  if (io::LooksBinary(content)) {
    throw DataError(path, 0, "", "binary data, not a CSV table");
  }
  CsvTable table;
  table.source = path;
  io::LineCursor cursor(content);
  std::string_view line;
  size_t width = 0;
  while (cursor.Next(line)) {
    if (io::Trim(line).empty()) continue;
    std::vector<std::string> fields = io::Split(line, ',', true);
    if (width == 0) {
      width = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) table.column[std::string(io::Trim(fields[i]))] = i;
      for (const std::string& name : required) {
        if (table.column.count(name) == 0) {
          throw DataError(path, cursor.number(), name, "column missing from the header");
        }
      }
      continue;
    }
    if (fields.size() != width) {
      throw DataError(path, cursor.number(), "row",
                      fmt::format("has {} fields, the header has {}", fields.size(), width));
    }
    table.rows.push_back({cursor.number(), std::move(fields)});
  }
  if (width == 0) throw DataError(path, 0, "header", "the file is empty");
  return table;
}

}  // namespace fitspeed
