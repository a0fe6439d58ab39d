// Networks as JSON (schema "fitspeed.network/1", documented in docs/models.md,
// example in data/models/cnn-cifar-small.json):
//
//   {"schema": "fitspeed.network/1", "name": "tiny", "input": [3, 32, 32],
//    "layers": [
//      {"name": "c1", "kind": "conv2d", "filters": 16, "kernel": 3, "padding": "same"},
//      {"kind": "relu"},
//      {"kind": "global_avg_pool"},
//      {"kind": "dense", "units": 10},
//      {"kind": "softmax_cross_entropy"}]}
//
// A layer without "input"/"inputs" reads the layer before it.
#ifndef FITSPEED_MODEL_NETWORK_JSON_H_
#define FITSPEED_MODEL_NETWORK_JSON_H_

#include <string>

#include "fitspeed/model/network.h"

namespace fitspeed {

// Parses and finalizes a network. Throws DataError(source, line, field, problem)
// naming the layer (layers[3] "conv1", the input being layer 0) and the field for malformed JSON,
// an unknown kind or key, a bad value, or any Network::Finalize() error.
Network ParseNetworkJson(const std::string& text, const std::string& source);

// Reads `path` and parses it; InputError when it cannot be read.
Network ReadNetworkJsonFile(const std::string& path);

// The network as schema "fitspeed.network/1" JSON (explicit padding, every
// layer with its name and inputs); ParseNetworkJson() reads it back to an
// equal network.
std::string NetworkToJson(const Network& network, int indent = 2);

}  // namespace fitspeed

#endif  // FITSPEED_MODEL_NETWORK_JSON_H_
