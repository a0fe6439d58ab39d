// The reports every answer shares (fitspeed/scenario/answer.h).
#include "fitspeed/scenario/answer.h"

#include <sstream>

#include "fitspeed/core/error.h"

namespace fitspeed {

std::string Answer::FullReport() const {
  std::ostringstream out;
  Write(out, OutputFormat::kTable);
  return out.str();
}

std::string Answer::ToJson() const {
  std::ostringstream out;
  Write(out, OutputFormat::kJson);
  return out.str();
}

void Answer::WriteHtml(std::ostream&) const {
  throw UsageError(
      "this answer has no HTML report (`--output html` is written by sweep, fit, project and "
      "plan)");
}

std::string Answer::ToHtml() const {
  std::ostringstream out;
  WriteHtml(out);
  return out.str();
}

}  // namespace fitspeed
