#include "evidence/csv_table.h"

#include <fmt/format.h>

#include <cmath>

#include "core/input_file.h"
#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

const std::string& CsvTable::Get(const Row& row, const std::string& name) const {
  const int at = Find(name);
  FITSPEED_CHECK(at >= 0, "no column '" + name + "' in " + source);
  return row.cells[static_cast<size_t>(at)];
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
  const std::string content = ReadInputFile(path, "the measurement table");
  if (io::LooksBinary(content)) {
    throw DataError(path, 0, "", "binary data, not a CSV table");
  }
  CsvTable table;
  static_cast<io::CsvTable&>(table) = io::ParseCsvTable(content, path, io::CsvDialect{});
  if (table.header_line == 0) throw DataError(path, 0, "header", "the file is empty");
  for (const std::string& name : required) {
    if (!table.Has(name)) {
      throw DataError(path, table.header_line, name, "column missing from the header");
    }
  }
  return table;
}

}  // namespace fitspeed
