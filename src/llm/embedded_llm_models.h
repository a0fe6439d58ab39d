// The built-in transformer configurations (data/llm-models/*.json, Hugging
// Face config.json files), compiled into the library by
// cmake/EmbedLlmModels.cmake so that an installed or build tree finds them.
#ifndef FITSPEED_SRC_LLM_EMBEDDED_LLM_MODELS_H_
#define FITSPEED_SRC_LLM_EMBEDDED_LLM_MODELS_H_

#include <string>
#include <vector>

namespace fitspeed {

struct EmbeddedLlmModel {
  std::string name;  // the file's name without ".json"
  std::string json;  // its whole text
};

// Every file, in file-name order.
const std::vector<EmbeddedLlmModel>& EmbeddedLlmModels();

}  // namespace fitspeed

#endif  // FITSPEED_SRC_LLM_EMBEDDED_LLM_MODELS_H_
