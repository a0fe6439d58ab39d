#include "fitspeed/core/error.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace fitspeed {

namespace {
std::string DataMessage(const std::string& source, int line, const std::string& field,
                        const std::string& problem) {
  std::string where = source.empty() ? std::string("<input>") : source;
  if (line > 0) where += fmt::format(":{}", line);
  if (field.empty()) return fmt::format("{}: {}", where, problem);
  return fmt::format("{}: field '{}': {}", where, field, problem);
}
}  // namespace

DataError::DataError(const std::string& source, int line, const std::string& field,
                     const std::string& problem)
    : Error(DataMessage(source, line, field, problem)),
      source_(source),
      line_(line),
      field_(field) {}

void CheckFailed(const char* condition, const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "fitspeed: internal error: %s:%d: check '%s' failed: %s\n", file, line,
               condition, message.c_str());
  std::abort();
}

}  // namespace fitspeed
