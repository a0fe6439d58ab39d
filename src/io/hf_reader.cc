// PLACEHOLDER until the hf reader lands (replaced in this session).
#include "fitspeed/core/error.h"
#include "readers.h"

namespace fitspeed::io {

std::vector<Sample> ReadHf(std::string_view, const ReaderContext& context) {
  throw DataError(context.source, 0, "", "the hf reader is not built yet");
}

bool LooksLikeHf(std::string_view) { return false; }

}  // namespace fitspeed::io
