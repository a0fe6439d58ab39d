// The model zoo: standard networks defined in code, each with the source of
// its architecture and published parameter count, and loading a network by
// zoo name or from a JSON file (fitspeed/model/network_json.h).
#ifndef FITSPEED_MODEL_ZOO_H_
#define FITSPEED_MODEL_ZOO_H_

#include <string>
#include <vector>

#include "fitspeed/model/network.h"

namespace fitspeed {

// A zoo entry as listed by `fitspeed models`.
struct ZooEntry {
  std::string name;         // "resnet50"
  std::string description;  // one line: input, classes, structure
  std::string reference;    // where the architecture is defined
};

// Every zoo network, in listing order: mlp-mnist, cnn-cifar-small,
// resnet18-cifar, resnet50, vgg16, mobilenet-v1, wrn-k7n4-7x7, efficientnet-b0,
// alexnet, googlenet.
const std::vector<ZooEntry>& ZooEntries();

// The zoo network `name`, finalized. Throws UsageError naming the known
// networks when there is no such network.
Network ZooNetwork(const std::string& name);

// A zoo name, or else a path to a JSON network file (ReadNetworkJsonFile).
// Throws UsageError for a name that is neither a zoo name nor an existing file,
// InputError / DataError as ReadNetworkJsonFile does.
Network LoadNetwork(const std::string& name_or_path);

}  // namespace fitspeed

#endif  // FITSPEED_MODEL_ZOO_H_
