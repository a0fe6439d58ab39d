// The one CSV table parser: records (RFC 4180 quoting), the header, rows with
// the header's field count, and column lookup. Used by fitspeed's own tables
// (csv_reader.cc), the training tools' metric tables (metric_table.h) and the
// published measurement tables of the evidence library.
#ifndef FITSPEED_SRC_IO_CSV_TABLE_H_
#define FITSPEED_SRC_IO_CSV_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "io/text.h"

namespace fitspeed::io {

// How a table is written.
struct CsvDialect {
  // The writer named at the start of messages ("Keras CSVLogger log"); none when empty.
  std::string_view format;
  char delimiter = ',';
  // A quoted field may span lines: a record continues over line ends while a
  // quote is open. Otherwise every line is a record, and one with an odd
  // count of '"' is an error.
  bool multiline_quotes = true;
  // Lines that start with '#' (after blanks) are comments, between records.
  bool comments = false;
};

// The records of a text, skipping a UTF-8 byte-order mark, blank lines and
// (with CsvDialect::comments) comment lines.
class CsvRecordCursor {
 public:
  CsvRecordCursor(std::string_view text, const CsvDialect& dialect);

  // The next record (its lines joined by '\n') and the 1-based line it starts
  // on; false at the end. `open` is set when a quote is left open: at the end
  // of the text, or (without multiline_quotes) at the end of the line.
  bool Next(std::string& record, int& line, bool& open);

 private:
  LineCursor cursor_;
  const CsvDialect& dialect_;
};

// The fields of a record, unquoted and trimmed; `expected`: how many there
// usually are (the header's count), reserved.
std::vector<std::string> CsvCells(const std::string& record, char delimiter, size_t expected = 0);

struct CsvRow {
  int line = 0;                    // 1-based line where the record starts
  std::vector<std::string> cells;  // unquoted and trimmed
};

struct CsvTable {
  std::string source;
  int header_line = 0;               // 0 when the text has no record
  std::vector<std::string> columns;  // as the header writes them, unquoted and trimmed
  std::vector<CsvRow> rows;

  // The index of the first column named exactly `name`, or -1.
  int Find(std::string_view name) const;
  bool Has(std::string_view name) const { return Find(name) >= 0; }
};

// Parses `text`: the first record is the header, every later one a row.
// Throws DataError naming `source` and the line when a quote is left open or a
// row has another field count than the header. A text without records gives
// a table with header_line 0.
CsvTable ParseCsvTable(std::string_view text, const std::string& source, const CsvDialect& dialect);

}  // namespace fitspeed::io

#endif  // FITSPEED_SRC_IO_CSV_TABLE_H_
