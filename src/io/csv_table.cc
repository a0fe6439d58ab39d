#include "io/csv_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "fitspeed/core/error.h"

namespace fitspeed::io {

namespace {

std::string_view WithoutBom(std::string_view text) {
  return StartsWith(text, "\xEF\xBB\xBF") ? text.substr(3) : text;
}

// "W&B export: " before a message, or nothing.
std::string Prefix(std::string_view format) {
  return format.empty() ? std::string() : fmt::format("{}: ", format);
}

}  // namespace

CsvRecordCursor::CsvRecordCursor(std::string_view text, const CsvDialect& dialect)
    : cursor_(WithoutBom(text)), dialect_(dialect) {}

bool CsvRecordCursor::Next(std::string& record, int& line, bool& open) {
  record.clear();
  open = false;
  // An odd count of '"' so far leaves a quote open ("" keeps the parity).
  size_t quotes = 0;
  std::string_view text;
  while (cursor_.Next(text)) {
    if (record.empty()) {
      const std::string_view trimmed = Trim(text);
      if (trimmed.empty() || (dialect_.comments && trimmed.front() == '#')) continue;
      line = cursor_.number();
    } else {
      record += '\n';
    }
    record.append(text.data(), text.size());
    quotes += static_cast<size_t>(std::count(text.begin(), text.end(), '"'));
    if (quotes % 2 == 0) return true;
    if (!dialect_.multiline_quotes) {
      open = true;
      return true;
    }
  }
  if (record.empty()) return false;
  open = true;
  return true;
}

std::vector<std::string> CsvCells(const std::string& record, char delimiter, size_t expected) {
  std::vector<std::string> cells;
  if (record.find('"') != std::string::npos) {
    cells = Split(record, delimiter, true);
    for (std::string& cell : cells) cell = std::string(Trim(cell));
    return cells;
  }
  // Without quotes, each cell is the trimmed text between delimiters, made once
  // (Split's copy and the trimmed copy were a fifth of the CSV reader's time).
  cells.reserve(expected);
  const std::string_view text = record;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(text.find(delimiter, start), text.size());
    cells.emplace_back(Trim(text.substr(start, end - start)));
    if (end == text.size()) return cells;
    start = end + 1;
  }
}

int CsvTable::Find(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvTable ParseCsvTable(std::string_view text, const std::string& source,
                       const CsvDialect& dialect) {
  CsvTable table;
  table.source = source;
  CsvRecordCursor cursor(text, dialect);
  std::string record;
  int line = 0;
  bool open = false;
  while (cursor.Next(record, line, open)) {
    if (open) {
      throw DataError(source, line, "",
                      Prefix(dialect.format) + (dialect.multiline_quotes
                                                    ? "a quoted field opened here is not closed"
                                                    : "a quoted field is not closed on its line"));
    }
    std::vector<std::string> cells = CsvCells(record, dialect.delimiter, table.columns.size());
    if (table.header_line == 0) {
      table.header_line = line;
      table.columns = std::move(cells);
      continue;
    }
    if (cells.size() != table.columns.size()) {
      throw DataError(source, line, "",
                      fmt::format("{}the row has {} fields but the header (line {}) has {}",
                                  Prefix(dialect.format), cells.size(), table.header_line,
                                  table.columns.size()));
    }
    table.rows.push_back({line, std::move(cells)});
  }
  return table;
}

}  // namespace fitspeed::io
