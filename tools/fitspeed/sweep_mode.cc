// Which mode `fitspeed sweep MODEL ...`, the spelling of earlier versions, is
// (sweep_options.h): the one the options given choose, refusing those the mode
// does not take.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "sweep_options.h"

namespace fitspeed::cli {

namespace {

// A split option or a transformer MODEL takes `sweep MODEL` to the LLM mode.
bool AnyGiven(const SweepOptionModes& modes, unsigned only) {
  for (const auto& [option, m] : modes) {
    if (m == only && option->count() > 0) return true;
  }
  return false;
}

}  // namespace

const char* SweepModeName(unsigned mode) {
  return mode == kHostMode ? "host" : mode == kDeviceMode ? "device" : "llm";
}

unsigned ChooseSweepMode(const SweepValues& values, const SweepOptionModes& modes) {
  unsigned mode = kHostMode;
  if (AnyGiven(modes, kLlmMode) || IsTransformerModel(values.model)) {
    mode = kLlmMode;
  } else if (!values.device.empty()) {
    mode = kDeviceMode;
  }
  for (const auto& [option, m] : modes) {
    if ((m & mode) != 0 || option->count() == 0) continue;
    std::vector<std::string> takers;
    for (unsigned bit : {kHostMode, kDeviceMode, kLlmMode}) {
      if ((m & bit) != 0) takers.push_back(fmt::format("`sweep {}`", SweepModeName(bit)));
    }
    throw UsageError(fmt::format(
        "{} is for {}; these options make this a `sweep {}` ({}; see `fitspeed sweep {} --help`)",
        option->get_name(), fmt::join(takers, " and "), SweepModeName(mode),
        mode == kLlmMode      ? "a transformer split"
        : mode == kDeviceMode ? "a step modeled on --device"
                              : "the step run on this CPU",
        SweepModeName(mode)));
  }
  return mode;
}

}  // namespace fitspeed::cli
