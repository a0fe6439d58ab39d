// The prediction-interval table (data/intervals.json), compiled into the
// library by cmake/EmbedJson.cmake so that an installed or build tree
// has it.
#ifndef FITSPEED_SRC_DEVICE_EMBEDDED_INTERVALS_H_
#define FITSPEED_SRC_DEVICE_EMBEDDED_INTERVALS_H_

namespace fitspeed {

// The file's whole text.
const char* EmbeddedIntervalsJson();

}  // namespace fitspeed

#endif  // FITSPEED_SRC_DEVICE_EMBEDDED_INTERVALS_H_
