// The published measurement tables of data/measured as read by `fitspeed
// validate` (published_cases.cc, layer_check.cc): a CSV file with a header
// row, fields found by column name, every bad field a DataError naming the
// file, line and field.
#ifndef FITSPEED_SRC_EVIDENCE_CSV_TABLE_H_
#define FITSPEED_SRC_EVIDENCE_CSV_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fitspeed {

// A CSV table (RFC 4180 quoting) with a header row; every row has as many
// fields as the header.
struct CsvTable {
  struct Row {
    int line = 0;  // 1-based line of the file
    std::vector<std::string> fields;
  };
  std::string source;
  std::map<std::string, size_t> column;  // header name -> field index
  std::vector<Row> rows;

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
// header or a row has another number of fields than the header. Blank lines are skipped.
CsvTable ReadCsvTable(const std::string& path, const std::vector<std::string>& required);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_EVIDENCE_CSV_TABLE_H_
