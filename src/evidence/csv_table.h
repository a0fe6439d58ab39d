// The published measurement tables of data/measured as read by `fitspeed
// validate` (published_cases.cc, layer_check.cc): a CSV file with a header
// row, fields found by column name, every bad field a DataError naming the
// file, line and field.
#ifndef FITSPEED_SRC_EVIDENCE_CSV_TABLE_H_
#define FITSPEED_SRC_EVIDENCE_CSV_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "io/csv_table.h"

namespace fitspeed {

// A CSV table (io::ParseCsvTable, RFC 4180 quoting) whose fields are read as
// the measurements need them.
struct CsvTable : io::CsvTable {
  using Row = io::CsvRow;

  // The field of `row` in column `name` (a column ReadCsvTable required).
  const std::string& Get(const Row& row, const std::string& name) const;
  // The field as a finite number > 0.
  double Positive(const Row& row, const std::string& name) const;
  // The field as a finite number >= 0.
  double NonNegative(const Row& row, const std::string& name) const;
  // The field as a whole number >= 1.
  int64_t PositiveInt(const Row& row, const std::string& name) const;
  // "True" or "False".
  bool Bool(const Row& row, const std::string& name) const;
};

// Reads the CSV file at `path`. Throws InputError when it cannot be opened,
// DataError when it is binary (io::LooksBinary) or empty, a `required` column is missing from the
// header, a quote is left open or a row has another number of fields than the header. Blank
// lines are skipped.
CsvTable ReadCsvTable(const std::string& path, const std::vector<std::string>& required);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_EVIDENCE_CSV_TABLE_H_
