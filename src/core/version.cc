#include "fitspeed/core/version.h"

// FITSPEED_VERSION_STRING: PROJECT_VERSION, set on this file alone by
// src/CMakeLists.txt (which keeps it out of the core's unity unit).
#ifndef FITSPEED_VERSION_STRING
#error "FITSPEED_VERSION_STRING must be defined by the build (src/CMakeLists.txt)"
#endif

namespace fitspeed {

const char* Version() { return FITSPEED_VERSION_STRING; }

}  // namespace fitspeed
