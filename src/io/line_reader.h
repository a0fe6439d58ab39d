// The loop of the readers that read a log line by line.
#ifndef FITSPEED_SRC_IO_LINE_READER_H_
#define FITSPEED_SRC_IO_LINE_READER_H_

#include <string_view>
#include <vector>

#include "fitspeed/core/sample.h"
#include "readers.h"
#include "text.h"

namespace fitspeed::io {

// The reader of a log read line by line: a `Reader(context)` that takes each
// line with its 1-based number (`Add(line, number)`) and gives the samples at
// the end (`Finish()`). A line lasts only until the next is read (a streamed
// log's buffer is reused): a reader keeps what it needs as values.
template <class Reader>
std::vector<Sample> ReadLineByLine(LineCursor& lines, const ReaderContext& context) {
  Reader reader(context);
  std::string_view line;
  while (lines.Next(line)) reader.Add(line, lines.number());
  return reader.Finish();
}

}  // namespace fitspeed::io

#endif  // FITSPEED_SRC_IO_LINE_READER_H_
