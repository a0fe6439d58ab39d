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
// the end (`Finish()`).
template <class Reader>
std::vector<Sample> ReadLineByLine(std::string_view text, const ReaderContext& context) {
  Reader reader(context);
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) reader.Add(line, cursor.number());
  return reader.Finish();
}

}  // namespace fitspeed::io

#endif  // FITSPEED_SRC_IO_LINE_READER_H_
