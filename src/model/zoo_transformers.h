// The transformer builders of the zoo (zoo_transformers.cc), taking the
// sequence length in tokens. Private to the model layer.
#ifndef FITSPEED_SRC_MODEL_ZOO_TRANSFORMERS_H_
#define FITSPEED_SRC_MODEL_ZOO_TRANSFORMERS_H_

#include <cstdint>

#include "fitspeed/model/network.h"

namespace fitspeed {

// head_positions: the masked-LM head's positions per sequence, 1..seq_len;
// 0: 15% of seq_len rounded up.
Network BertBase(int64_t seq_len, int64_t head_positions);
Network BertLarge(int64_t seq_len, int64_t head_positions);
Network Gpt2Small(int64_t seq_len);
Network Gpt2Medium(int64_t seq_len);
Network VitB16(int64_t seq_len);  // the sequence is the image's 197 tokens; seq_len unused
Network TinyLlama11b(int64_t seq_len);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_MODEL_ZOO_TRANSFORMERS_H_
