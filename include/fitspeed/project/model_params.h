// Parameter counts of published models, for gradient sizes (all-reduce bytes)
// when a model's own count is not at hand. Each entry names its source.
#ifndef FITSPEED_PROJECT_MODEL_PARAMS_H_
#define FITSPEED_PROJECT_MODEL_PARAMS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fitspeed {

struct PublishedModel {
  std::string name;                  // key, e.g. "resnet50"
  std::vector<std::string> aliases;  // other keys, e.g. the Pollux trace name "imagenet"
  std::string description;
  double parameters = 0;  // trainable parameters (all gradients all-reduced)
  std::string source;     // where the count comes from
};

// The table, in a fixed order.
const std::vector<PublishedModel>& PublishedModels();

// The entry whose name or alias equals `name` (case-insensitive); nullopt if none.
std::optional<PublishedModel> FindPublishedModel(std::string_view name);

}  // namespace fitspeed

#endif  // FITSPEED_PROJECT_MODEL_PARAMS_H_
