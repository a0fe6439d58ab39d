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

// Multi-head latent attention (DeepSeek-V2, sec. 2.1): queries through a
// rank-q_rank projection and its RMSNorm (or one full projection when q_rank
// is 0), keys and values through a shared rank-kv_rank latent and its
// RMSNorm, plus one rotary key of rope_dim shared by the heads. Each head's
// query and key are nope_dim + rope_dim wide, its value v_dim.
struct LatentAttention {
  int64_t q_rank = 0;    // q_lora_rank (0: no query compression)
  int64_t kv_rank = 0;   // kv_lora_rank (> 0: this is latent attention)
  int64_t rope_dim = 0;  // qk_rope_head_dim
  int64_t nope_dim = 0;  // qk_nope_head_dim
  int64_t v_dim = 0;     // v_head_dim
};

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

  // --- Attention variants ---------------------------------------------------
  // Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): kv_rank > 0.
  LatentAttention latent;
  // QK-norm: an RMSNorm over each query and key head (head_dim weights each;
  // Qwen3, Gemma 3, OLMo 2).
  bool qk_norm = false;
  // Attention sinks: one learned logit per query head joining each softmax
  // (GPT-OSS; `heads` parameters a layer).
  bool attention_sinks = false;
  // Sliding-window attention: a layer marked in `sliding_layers` attends to
  // the `sliding_window` keys before each query (itself included); the
  // others to the whole sequence. sliding_layers is empty (no sliding layer)
  // or has one entry per layer.
  int64_t sliding_window = 0;
  std::vector<bool> sliding_layers;
  // Logit soft-capping, cap x tanh(logit / cap) (Gemma 2): on the attention
  // scores and on the output logits; 0: none.
  double attention_softcap = 0;
  double final_softcap = 0;
  // Norms after the attention and after the feed-forward block as well as
  // before them (Gemma 2 and 3): four per layer instead of two.
  bool sandwich_norms = false;

  // --- Mixture of experts as DeepSeek, Qwen3-MoE and GPT-OSS give it ---------
  // Which layers are experts: empty, every layer when experts > 0; else one
  // entry per layer (DeepSeek's first_k_dense_replace, Qwen's
  // decoder_sparse_step and mlp_only_layers).
  std::vector<bool> moe_layers;
  // The feed-forward inner size of a dense layer of a mixture-of-experts
  // model (DeepSeek's and Qwen3-MoE's intermediate_size; ffn_hidden is then
  // each expert's, their moe_intermediate_size); 0: ffn_hidden.
  int64_t dense_ffn_hidden = 0;
  // Shared experts every token passes through beside its routed ones
  // (DeepSeek's n_shared_experts): one gated block of shared_experts x
  // ffn_hidden (DeepseekV3MLP's intermediate_size = moe_intermediate_size x
  // n_shared_experts).
  int64_t shared_experts = 0;
  bool router_bias = false;  // a bias on the router (GPT-OSS)
  // The biases of the feed-forward matrices on the experts (feed_forward_bias
  // then applies to every expert: GPT-OSS's gate_up_proj_bias, down_proj_bias).

  // --- Multi-token prediction (DeepSeek-V3's num_nextn_predict_layers) ------
  // Modules after the last layer, each predicting one token further: an
  // RMSNorm of the embedding and one of the hidden state, their concatenation
  // projected 2h -> h, one transformer layer (of the last layer's kind), and
  // the shared output head behind its own RMSNorm. Trained with the model;
  // not counted in `total` (Hugging Face's implementation does not load
  // them).
  int64_t mtp_layers = 0;
};

// One layer's kind: how it attends and what its feed-forward block is.
struct TransformerLayerKind {
  bool sliding = false;  // sliding-window attention (else over the whole sequence)
  bool moe = false;      // routed experts (else a dense feed-forward block)
  bool operator==(const TransformerLayerKind& o) const {
    return sliding == o.sliding && moe == o.moe;
  }
  bool operator!=(const TransformerLayerKind& o) const { return !(*this == o); }
};

// The kind of layer `layer` (0-based, < model.layers); the multi-token
// prediction layers are of the last layer's kind.
TransformerLayerKind LayerKindAt(const TransformerConfig& model, int64_t layer);

// One layer's parameters (elements), by block.
struct LayerParameters {
  int64_t attention = 0;     // projections, their biases, QK-norm, sinks, MLA's latent norms
  int64_t feed_forward = 0;  // a dense layer's block; an MoE layer's shared experts and router
  int64_t experts = 0;       // an MoE layer's routed experts, all of them
  int64_t expert = 0;        // one routed expert (0 in a dense layer)
  int64_t norms = 0;         // the layer's own norms (2, or 4 with sandwich norms)
  int64_t Total() const { return attention + feed_forward + experts + norms; }
};
LayerParameters CountLayerParameters(const TransformerConfig& model, TransformerLayerKind kind);

// Parameter counts (elements), exact for the shape.
struct TransformerParameters {
  int64_t embedding = 0;  // token (+ position, + token type) tables (+ BERT's embedding LayerNorm)
  // One layer, all experts: an MoE layer's in a mixture of experts (the
  // largest kind), else a dense one's; attention_per_layer,
  // feed_forward_per_layer (all experts and the router) and norms_per_layer
  // are that layer's parts.
  int64_t per_layer = 0;
  int64_t attention_per_layer = 0;
  int64_t feed_forward_per_layer = 0;
  int64_t norms_per_layer = 0;
  int64_t layers = 0;  // every layer together (mixed kinds summed layer by layer)
  int64_t final_norm = 0;
  int64_t output = 0;  // untied output projection (0 when tied), BERT's heads
  int64_t total = 0;   // what the reference implementation counts (num_parameters())
  // MoE: total less the (experts - top_k) routed experts a token skips in
  // each MoE layer (embedding and output included, as "12.9B active" for
  // Mixtral counts them); == total when dense.
  int64_t active_per_token = 0;
  // Multi-token prediction modules (not in total): each its two norms, the
  // 2h x h projection, its layer and the head's norm (the embedding and the
  // output head are shared, as Megatron trains them).
  int64_t mtp = 0;
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
// bert, qwen3, qwen3_moe, deepseek_v3, kimi_k2, gpt_oss, gemma3, gemma3_text;
// docs/llm.md lists the fields read). DataError(source, line, field,
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
