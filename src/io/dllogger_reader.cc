// PLACEHOLDER until the dllogger reader lands (replaced in this session).
#include "fitspeed/core/error.h"
#include "readers.h"

namespace fitspeed::io {

std::vector<Sample> ReadDllogger(std::string_view, const ReaderContext& context) {
  throw DataError(context.source, 0, "", "the dllogger reader is not built yet");
}

bool LooksLikeDllogger(std::string_view) { return false; }

}  // namespace fitspeed::io
