// The framework profiles (data/frameworks.json), compiled into the
// library by cmake/EmbedJson.cmake so that an installed or build tree
// has it.
#ifndef FITSPEED_SRC_DEVICE_EMBEDDED_FRAMEWORKS_H_
#define FITSPEED_SRC_DEVICE_EMBEDDED_FRAMEWORKS_H_

namespace fitspeed {

// The file's whole text.
const char* EmbeddedFrameworksJson();

}  // namespace fitspeed

#endif  // FITSPEED_SRC_DEVICE_EMBEDDED_FRAMEWORKS_H_
