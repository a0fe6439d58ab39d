// Example data compiled into the CLI (see data/examples/README.md).
#ifndef FITSPEED_TOOLS_FITSPEED_EMBEDDED_DATA_H_
#define FITSPEED_TOOLS_FITSPEED_EMBEDDED_DATA_H_

namespace fitspeed::cli {

extern const char* const kDemoLogName;  // the file's name in data/examples
extern const char* const kDemoLogText;  // its whole text

}  // namespace fitspeed::cli

#endif  // FITSPEED_TOOLS_FITSPEED_EMBEDDED_DATA_H_
