// The library's version, "MAJOR.MINOR.PATCH": project(VERSION) of the top
// CMakeLists.txt, the one place it is written (src/CMakeLists.txt passes it to
// src/core/version.cc). The CLI's --version, the Python package's
// fitspeed.__version__ and its pip metadata (setup.py) all read it from there.
#ifndef FITSPEED_CORE_VERSION_H_
#define FITSPEED_CORE_VERSION_H_

namespace fitspeed {

// The version of the library this program was built with, e.g. "0.1.0".
const char* Version();

}  // namespace fitspeed

#endif  // FITSPEED_CORE_VERSION_H_
