// The catalog's device files (data/devices/*.json), compiled into the library
// by cmake/EmbedDevices.cmake so that an installed or build tree finds them.
#ifndef FITSPEED_SRC_DEVICE_EMBEDDED_DEVICES_H_
#define FITSPEED_SRC_DEVICE_EMBEDDED_DEVICES_H_

#include <string>
#include <vector>

namespace fitspeed {

struct EmbeddedDevice {
  std::string name;  // the file's name without ".json"
  std::string json;  // its whole text
};

// Every catalog file, in file-name order.
const std::vector<EmbeddedDevice>& EmbeddedDevices();

}  // namespace fitspeed

#endif  // FITSPEED_SRC_DEVICE_EMBEDDED_DEVICES_H_
