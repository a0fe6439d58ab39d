// PLACEHOLDER until the mllog reader lands (replaced in this session).
#include "fitspeed/core/error.h"
#include "readers.h"

namespace fitspeed::io {

std::vector<Sample> ReadMllog(std::string_view, const ReaderContext& context) {
  throw DataError(context.source, 0, "", "the mllog reader is not built yet");
}

bool LooksLikeMllog(std::string_view) { return false; }

}  // namespace fitspeed::io
