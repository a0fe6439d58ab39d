// Error kinds of fitspeed. Bad input and I/O problems are thrown as one of these;
// the CLI maps each kind to its documented exit code (tools/fitspeed/exit_code.h;
// docs/design.md, "CLI contract").
#ifndef FITSPEED_CORE_ERROR_H_
#define FITSPEED_CORE_ERROR_H_

#include <stdexcept>
#include <string>

namespace fitspeed {

// Base of every exception fitspeed throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Options or arguments that break a documented rule (e.g. FitOptions field out of range).
class UsageError : public Error {
 public:
  using Error::Error;
};

// Input that could be read but is not valid data. The message names the source,
// the line (1-based, 0 when the problem is with the whole input) and the field.
class DataError : public Error {
 public:
  DataError(const std::string& source, int line, const std::string& field,
            const std::string& problem);
  explicit DataError(const std::string& message) : Error(message) {}

  // Where the problem is, as given to the first constructor: the source
  // (file, "-" for standard input; empty when not known), the 1-based line (0
  // for the whole input or when not known) and the field (empty when none).
  // The message-only constructor leaves them empty and 0.
  const std::string& source() const { return source_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }

 private:
  std::string source_;
  int line_ = 0;
  std::string field_;
};

// Input that could not be opened or read at all.
class InputError : public Error {
 public:
  using Error::Error;
};

// Aborts with a message when an internal invariant does not hold.
[[noreturn]] void CheckFailed(const char* condition, const char* file, int line,
                              const std::string& message);

}  // namespace fitspeed

#define FITSPEED_CHECK(condition, message)                                \
  do {                                                                    \
    if (!(condition)) {                                                   \
      ::fitspeed::CheckFailed(#condition, __FILE__, __LINE__, (message)); \
    }                                                                     \
  } while (false)

#endif  // FITSPEED_CORE_ERROR_H_
