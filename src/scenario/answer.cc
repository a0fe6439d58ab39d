// The reports every answer shares (fitspeed/scenario/answer.h).
#include "fitspeed/scenario/answer.h"

#include <sstream>

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

}  // namespace fitspeed
