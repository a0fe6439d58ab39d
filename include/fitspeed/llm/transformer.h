// A decoder or encoder transformer as the LLM planner sees it: its shape
// (layers, hidden size, heads, key/value heads, feed-forward size,
// vocabulary), how it places positions and normalizes, its mixture of experts,
// read from a Hugging Face config.json, a short form, or the built-in list.
// Parameter counts and FLOPs per token are exact functions of the shape
// (docs/llm.md, "Models").
//
//   fitspeed::TransformerConfig m = fitspeed::LoadTransformer("llama-3-8b");
//   fitspeed::TransformerParameters p = fitspeed::CountParameters(m);  // p.total 8,030,261,248
#ifndef FITSPEED_LLM_TRANSFORMER_H_
#define FITSPEED_LLM_TRANSFORMER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace fitspeed {

// How token positions enter the model.
enum class PositionEncoding {
  kLearned,  // a learned table of max_positions rows (GPT-2, BERT): sequence <= max_positions
  kRope,     // rotary (Llama, Mistral, Qwen2, Mixtral): no parameters, any sequence
  kAlibi,    // attention biases (BLOOM, MPT): no parameters, any sequence
};

enum class NormKind { kLayerNorm, kRmsNorm };  // LayerNorm: weight and bias; RMSNorm: weight

// The feed-forward block: two matrices with an activation between (GPT-2,
// BERT: GELU) or three with a gate (Llama: SwiGLU, gate * up then down).
enum class FeedForwardKind { kPlain, kGated };

struct TransformerConfig {
  std::string name;          // "llama-3-8b", the file's stem, or "custom"
  std::string architecture;  // config.json "model_type": gpt2, llama, mistral, qwen2, mixtral, bert
  std::string source;        // where it was read from (built-in name, path or short form)

  int64_t layers = 0;
  int64_t hidden = 0;      // d_model
  int64_t heads = 0;       // query heads
  int64_t kv_heads = 0;    // key/value heads (grouped-query attention); == heads without GQA
  int64_t head_dim = 0;    // per head; hidden / heads unless the config says otherwise
  int64_t ffn_hidden = 0;  // feed-forward inner size (per expert for MoE)
  int64_t vocab = 0;       // as the config gives it (unpadded)

  PositionEncoding positions = PositionEncoding::kLearned;
  int64_t max_positions =
      0;  // rows of the learned table; for RoPE/ALiBi the trained context (informative)
  NormKind norm = NormKind::kLayerNorm;
  FeedForwardKind feed_forward = FeedForwardKind::kPlain;
  bool attention_bias = false;     // bias on Q, K, V and the output projection (GPT-2, BERT)
  bool qkv_bias_only = false;      // bias on Q, K, V but not the output projection (Qwen2)
  bool feed_forward_bias = false;  // bias on the feed-forward matrices (GPT-2, BERT)
  bool tied_embeddings = true;     // the output projection shares the input embedding
  bool causal = true;              // decoder (causal mask); false: encoder (BERT)
  bool final_norm = true;          // a norm after the last layer (pre-norm decoders); BERT has none
  // The layers apply dropout (masks drawn and held, dropout kernels run): as
  // config.json gives it, a probability > 0 in gpt2's resid_pdrop or
  // attn_pdrop (GPT2Config default 0.1), bert's hidden_dropout_prob or
  // attention_probs_dropout_prob (0.1), or the llama family's
  // attention_dropout (0.0; they have no other dropout); the short form's
  // dropout= flag (default: on for norm=layer without gated=1, the GPT/BERT
  // style). A run can turn it off (MLPerf's GPT-3 sets both dropouts to 0).
  bool dropout = false;
  // BERT only: token-type embeddings (type_vocab rows), the embedding
  // LayerNorm, and BertForPreTraining's heads: the pooler (hidden x hidden +
  // bias), the masked-LM head's transform (dense hidden x hidden + bias,
  // LayerNorm) and output bias (vocab), the next-sentence head (hidden x 2 + 2).
  int64_t type_vocab = 0;
  bool bert_heads = false;

  // Mixture of experts (Mixtral): `experts` feed-forward blocks per layer, each
  // token routed to `top_k` of them by a router (hidden x experts, no bias).
  // experts 0: a dense model.
  int64_t experts = 0;
  int64_t top_k = 0;
};

// Parameter counts (elements), exact for the shape.
struct TransformerParameters {
  int64_t embedding = 0;  // token (+ position, + token type) tables (+ BERT's embedding LayerNorm)
  int64_t per_layer = 0;  // one transformer layer, all experts
  int64_t attention_per_layer = 0;
  int64_t feed_forward_per_layer = 0;  // all experts and the router
  int64_t norms_per_layer = 0;
  int64_t final_norm = 0;
  int64_t output = 0;  // untied output projection (0 when tied), BERT's heads
  int64_t total = 0;   // what the reference implementation counts (num_parameters())
  // MoE: total less the (experts - top_k) experts a token skips in each layer
  // (embedding and output included, as "12.9B active" for Mixtral counts
  // them); == total when dense.
  int64_t active_per_token = 0;
};

TransformerParameters CountParameters(const TransformerConfig& model);

// Floating-point operations (one multiply-add = 2) of one token's forward pass
// through the matrix products at sequence length `seq_len` (the attention
// score and value products included, causal or not as the model is, counted
// whole: no halving for the mask); training = 3x (forward, activation and
// weight gradients). UsageError for seq_len out of range.
double ForwardFlopsPerToken(const TransformerConfig& model, int64_t seq_len);

// Throws UsageError naming the field when a shape breaks a rule (counts > 0,
// hidden divisible by heads unless head_dim is given, heads divisible by
// kv_heads, top_k in [1, experts] for MoE, ...).
void ValidateTransformer(const TransformerConfig& model);

// UsageError when `seq_len` is not allowed: < 1, or above max_positions for
// learned positions (RoPE and ALiBi take any length).
void CheckSequenceLength(const TransformerConfig& model, int64_t seq_len);

// A Hugging Face config.json (model_type gpt2, llama, mistral, qwen2, mixtral,
// bert; docs/llm.md lists the fields read). DataError(source, line, field,
// problem) for malformed JSON, a missing or wrong-typed field, or an unknown
// model_type (naming the supported ones).
TransformerConfig ParseHfConfig(const std::string& text, const std::string& source);

// The built-in configurations (data/llm-models/*.json, compiled in), by name.
std::vector<std::string> BuiltinTransformerNames();

// A built-in name ("llama-3-70b"), a short form
// ("transformer:layers=24,hidden=1024,heads=16,vocab=50257[,ffn=..,kv_heads=..,head_dim=..,
// experts=..,top_k=..,positions=rope|learned|alibi,max_positions=..,gated=0|1,norm=rms|layer,
// bias=0|1,tied=0|1]", docs/llm.md), or a path to a config.json (or to a
// folder holding one). UsageError for an unknown name or bad short form,
// InputError when the file cannot be read, DataError as ParseHfConfig.
TransformerConfig LoadTransformer(const std::string& name_spec_or_path);

}  // namespace fitspeed

#endif  // FITSPEED_LLM_TRANSFORMER_H_
