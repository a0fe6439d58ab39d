// The publishers and their splits (data/publishers.json), compiled into the
// library by cmake/EmbedJson.cmake so that an installed or build tree has it.
#ifndef FITSPEED_SRC_EVIDENCE_EMBEDDED_PUBLISHERS_H_
#define FITSPEED_SRC_EVIDENCE_EMBEDDED_PUBLISHERS_H_

namespace fitspeed {

// The file's whole text.
const char* EmbeddedPublishersJson();

}  // namespace fitspeed

#endif  // FITSPEED_SRC_EVIDENCE_EMBEDDED_PUBLISHERS_H_
