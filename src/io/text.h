// Small text utilities shared by the readers: line iteration with line numbers,
// number parsing that reports file, line and field, trimming and splitting.
#ifndef FITSPEED_SRC_IO_TEXT_H_
#define FITSPEED_SRC_IO_TEXT_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fitspeed::io {

// Reads up to `size` bytes of a text into `data`; returns how many, 0 at the
// text's end (a file read in pieces).
using ReadBytes = std::function<size_t(char* data, size_t size)>;

// Iterates over the lines of a text: "\n", "\r\n" and a lone "\r" end a line;
// Next() returns false at the end. number() is 1-based and counts "\n" only,
// so a progress bar redrawn with "\r" keeps the editor's line number.
//
// The text is either all in memory or read in pieces (a log file): then the
// cursor holds a buffer of a few `chunk_bytes` (more for a longer line), and a
// line that Next() gives lasts until the next call; the lines, their numbers
// and cut() are the same as for the whole text in memory.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : data_(text.data()), size_(text.size()) {}
  // `start`: the text's first bytes, already read; the rest comes from `read`.
  LineCursor(ReadBytes read, size_t chunk_bytes, std::string start = {});
  bool Next(std::string_view& line);
  int number() const { return number_; }
  // Whether the line Next() gave last ends the text with no line end after it
  // (a log cut off while it was written).
  bool cut() const { return cut_; }

 private:
  // Reads more of a streamed text after what is left unread, which moves to
  // the buffer's start; sets ended_ at the text's end.
  void Refill();

  const char* data_ = nullptr;  // the text in memory, or buffer_'s
  size_t size_ = 0;             // bytes at data_
  size_t pos_ = 0;              // where the next line starts
  int number_ = 0;
  bool last_was_cr_ = false;
  bool cut_ = false;
  bool ended_ = true;  // nothing more to read
  // A streamed text:
  ReadBytes read_;
  size_t chunk_bytes_ = 0;
  std::string buffer_;
};

std::string_view Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
bool Contains(std::string_view s, std::string_view part);
std::string ToLower(std::string_view s);

// Python's json module writes NaN, Infinity and -Infinity, which JSON lacks (a
// diverging run logs "loss": NaN). Returns `json` with each of them outside
// strings replaced by `replacement(word)` ("null", or the word in quotes so
// that a field holding one can be reported by name).
std::string ReplacePythonLiterals(std::string_view json,
                                  std::string (*replacement)(std::string_view word));
// Splits on `delimiter`; with `quotes`, double-quoted fields may contain it ("" is a quote).
std::vector<std::string> Split(std::string_view s, char delimiter, bool quotes = false);

// Parses a whole field as a double (leading/trailing blanks allowed, "nan",
// "inf" parse as such). nullopt when it is not a number.
std::optional<double> ToDouble(std::string_view s);
// Parses a leading number of s ("45s" -> 45, rest "s"); nullopt if none.
std::optional<double> LeadingDouble(std::string_view s, std::string_view* rest = nullptr);

// Parses a number, or throws DataError(source, line, field, "expected a number, got '...'").
double ParseNumber(std::string_view s, const std::string& source, int line, std::string_view field);

// Checks that a value read from `field` is finite and > 0 and returns it, or
// throws DataError(source, line, field, ...) saying it is NaN, infinite or not positive.
double RequirePositive(double value, const std::string& source, int line, std::string_view field);
// ParseNumber followed by RequirePositive.
double ParsePositive(std::string_view s, const std::string& source, int line,
                     std::string_view field);

// Splits on runs of blanks (spaces, tabs); no empty fields.
std::vector<std::string_view> SplitBlank(std::string_view s);

// A number as printed and half a unit of its last printed digit, which bounds
// the rounding error of the printout ("0.351" -> 0.351 +/- 0.0005).
struct Printed {
  double value = 0;
  double half_unit = 0;
  double RelativeError() const;  // half_unit / value; HUGE_VAL when value <= 0
};
// Reads a plain decimal number ("45", "0.351") at the start of `s` after
// blanks; `rest` gets what follows. nullopt when there is no number.
std::optional<Printed> LeadingPrinted(std::string_view s, std::string_view* rest);

// True when the text looks binary (NUL bytes, or many control characters).
bool LooksBinary(std::string_view text);

// The text shortened to at most n characters for an error message, with
// control characters escaped.
std::string Excerpt(std::string_view text, size_t n = 40);

}  // namespace fitspeed::io

#endif  // FITSPEED_SRC_IO_TEXT_H_
