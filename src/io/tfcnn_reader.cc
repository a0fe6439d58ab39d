// PLACEHOLDER until the tfcnn reader lands (replaced in this session).
#include "fitspeed/core/error.h"
#include "readers.h"

namespace fitspeed::io {

std::vector<Sample> ReadTfcnn(std::string_view, const ReaderContext& context) {
  throw DataError(context.source, 0, "", "the tfcnn reader is not built yet");
}

bool LooksLikeTfcnn(std::string_view) { return false; }

}  // namespace fitspeed::io
