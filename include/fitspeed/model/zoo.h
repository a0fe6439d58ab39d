// The model zoo: standard networks defined in code, each with the source of
// its architecture and published parameter count, and loading a network by
// zoo name or from a JSON file (fitspeed/model/network_json.h).
#ifndef FITSPEED_MODEL_ZOO_H_
#define FITSPEED_MODEL_ZOO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/model/network.h"

namespace fitspeed {

// A zoo entry as listed by `fitspeed models`.
struct ZooEntry {
  std::string name;         // "resnet50"
  std::string description;  // one line: input, classes, structure
  std::string reference;    // where the architecture is defined
  // Sequence models (input {T} token ids): the default and largest sequence
  // length in tokens; 0 for the others (ViT's 197 tokens are fixed by its image).
  int64_t default_seq_len = 0;
  int64_t max_seq_len = 0;
};

// Options of a zoo network.
struct ZooOptions {
  // Tokens per sequence of a sequence model, 1..max_seq_len; 0 takes the
  // model's default. A UsageError for a model without a sequence length.
  int64_t seq_len = 0;
  // Unpadded sequences (a framework that removes the padding, as NVIDIA's
  // BERT with unpad: the dense layers run on the real tokens only, attention
  // within each sequence): the mean real tokens per sequence, 1..seq_len (or
  // the model's max_seq_len when seq_len is 0). The network is built at
  // round(mean_tokens) tokens. 0: every sequence has seq_len tokens (padded).
  double mean_tokens = 0;
  // With mean_tokens: the mean of the squared tokens per sequence, which sets
  // each attention core's {T, T} work (the sum over sequences of L^2):
  // mean_tokens^2 <= mean_square_tokens <= mean_tokens * the padded length
  // (Network::mean_square_tokens). 0: mean_tokens^2 (every sequence of the
  // mean length).
  double mean_square_tokens = 0;
  // BERT's masked-LM head (bert-*): the positions per sequence it is
  // computed on (gathered), 1..tokens. 0: 15% of the tokens rounded up.
  int64_t head_positions = 0;
};

// Every zoo network, in listing order: mlp-mnist, cnn-cifar-small,
// resnet18-cifar, resnet50, vgg16, mobilenet-v1, wrn-k7n4-7x7, efficientnet-b0,
// alexnet, googlenet, vgg19, then the transformers bert-base, bert-large, gpt2,
// gpt2-medium, vit-b16 and tinyllama-1.1b.
const std::vector<ZooEntry>& ZooEntries();

// The zoo network `name`, finalized. Throws UsageError naming the known
// networks when there is no such network.
Network ZooNetwork(const std::string& name, const ZooOptions& options = {});

// A zoo name, or else a path to a JSON network file (ReadNetworkJsonFile).
// Throws UsageError for a name that is neither a zoo name nor an existing file,
// InputError / DataError as ReadNetworkJsonFile does.
// `options` apply to zoo names; a UsageError for a file with a seq_len.
Network LoadNetwork(const std::string& name_or_path, const ZooOptions& options = {});

}  // namespace fitspeed

#endif  // FITSPEED_MODEL_ZOO_H_
