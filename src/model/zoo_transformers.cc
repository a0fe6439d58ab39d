// Transformer networks of the zoo: BERT, GPT-2, ViT and a Llama-style model.
// Each follows the reference implementation named in its entry (zoo.cc);
// parameter counts are exact against them (tests/model/transformer_zoo_test.cc
// shows the sums). Q, K and V are three dense layers (GPT-2's fused c_attn is
// one {d, 3d} matrix: the same parameters and FLOPs).
#include "zoo_transformers.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace fitspeed {

namespace {

enum class MlpKind { kGeluErf, kGeluTanh, kSwiGlu };

// One architecture's choices (Vaswani et al. 2017, with the variants of each model).
struct TransformerConfig {
  int layers = 12;
  int64_t d_model = 768;
  int64_t heads = 12;
  int64_t kv_heads = 12;  // < heads: grouped-query attention
  int64_t ffn = 3072;
  bool pre_norm = true;  // GPT-2, ViT, Llama; BERT normalizes after each residual add
  bool rms_norm = false;
  double norm_epsilon = 1e-5;
  MlpKind mlp = MlpKind::kGeluErf;
  bool bias = true;  // dense layers carry biases (not Llama)
  bool causal = false;
  bool rotary = false;
  double dropout = 0.0;  // hidden and attention-probability dropout
};

DenseAttrs Linear(int64_t units, bool bias) {
  DenseAttrs a;
  a.units = units;
  a.bias = bias;
  return a;
}

std::string Norm(Network& net, const std::string& x, const TransformerConfig& c,
                 const std::string& name) {
  NormAttrs a;
  a.epsilon = c.norm_epsilon;
  return c.rms_norm ? net.RmsNorm(x, a, name) : net.LayerNorm(x, a, name);
}

std::string Drop(Network& net, const std::string& x, double rate, const std::string& name) {
  if (rate <= 0) return x;
  DropoutAttrs a;
  a.rate = rate;
  return net.Dropout(x, a, name);
}

// Multi-head (or grouped-query) self-attention of a {T, d} sequence, through
// the output projection (and its dropout).
std::string Attention(Network& net, const std::string& x, const TransformerConfig& c,
                      const std::string& p) {
  const int64_t head_dim = c.d_model / c.heads;
  const int64_t kv_dim = head_dim * c.kv_heads;
  std::string q =
      net.SplitHeads(net.Dense(x, Linear(c.d_model, c.bias), p + ".q"), c.heads, p + ".q_heads");
  std::string k =
      net.SplitHeads(net.Dense(x, Linear(kv_dim, c.bias), p + ".k"), c.kv_heads, p + ".k_heads");
  const std::string v =
      net.SplitHeads(net.Dense(x, Linear(kv_dim, c.bias), p + ".v"), c.kv_heads, p + ".v_heads");
  if (c.rotary) {
    q = net.Rotary(q, {}, p + ".q_rotary");
    k = net.Rotary(k, {}, p + ".k_rotary");
  }
  MatmulAttrs scores;
  scores.transpose_b = true;
  scores.scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  SoftmaxAttrs softmax;
  softmax.causal = c.causal;
  std::string probs =
      net.Softmax(net.BatchedMatmul(q, k, scores, p + ".scores"), softmax, p + ".softmax");
  probs = Drop(net, probs, c.dropout, p + ".attn_dropout");
  const std::string context = net.BatchedMatmul(probs, v, {}, p + ".context");
  const std::string out =
      net.Dense(net.MergeHeads(context, p + ".merge"), Linear(c.d_model, c.bias), p + ".out");
  return Drop(net, out, c.dropout, p + ".out_dropout");
}

// The position-wise MLP of a {T, d} sequence, through its dropout.
std::string MlpBlock(Network& net, const std::string& x, const TransformerConfig& c,
                     const std::string& p) {
  std::string h;
  if (c.mlp == MlpKind::kSwiGlu) {  // Shazeer 2020: down(silu(gate(x)) * up(x))
    const std::string gate =
        net.Swish(net.Dense(x, Linear(c.ffn, c.bias), p + ".gate"), p + ".silu");
    const std::string up = net.Dense(x, Linear(c.ffn, c.bias), p + ".up");
    h = net.Mul(gate, up, p + ".glu");
  } else {
    GeluAttrs gelu;
    gelu.tanh_approximation = c.mlp == MlpKind::kGeluTanh;
    h = net.Gelu(net.Dense(x, Linear(c.ffn, c.bias), p + ".fc1"), gelu, p + ".gelu");
  }
  const std::string out = net.Dense(h, Linear(c.d_model, c.bias), p + ".fc2");
  return Drop(net, out, c.dropout, p + ".mlp_dropout");
}

// One encoder/decoder block: attention and MLP, each with a residual add,
// normalized before (pre-norm) or after (post-norm, BERT) the add.
std::string Block(Network& net, const std::string& x, const TransformerConfig& c,
                  const std::string& p) {
  if (c.pre_norm) {
    const std::string h =
        net.Add({x, Attention(net, Norm(net, x, c, p + ".norm1"), c, p + ".attn")}, p + ".add1");
    return net.Add({h, MlpBlock(net, Norm(net, h, c, p + ".norm2"), c, p + ".mlp")}, p + ".add2");
  }
  const std::string h =
      Norm(net, net.Add({x, Attention(net, x, c, p + ".attn")}, p + ".add1"), c, p + ".norm1");
  return Norm(net, net.Add({h, MlpBlock(net, h, c, p + ".mlp")}, p + ".add2"), c, p + ".norm2");
}

std::string Blocks(Network& net, std::string x, const TransformerConfig& c) {
  for (int i = 0; i < c.layers; ++i) x = Block(net, x, c, "layer" + std::to_string(i));
  return x;
}

// BERT pre-training (Devlin et al. 2019; the parameters of HF transformers
// BertForPreTraining): word + position + segment embeddings, post-norm
// encoder, the masked-LM head on the masked positions (dense, GELU, layer
// norm, decoder tied to the word embeddings with its own bias) and the
// next-sentence head on the pooled first token. The masked-LM head runs on the
// gathered masked positions only, as Google's run_pretraining.py
// (gather_indexes) and NVIDIA's DeepLearningExamples do; HF's
// BertForPreTraining runs it on every position (the same parameters, about
// 22% more training FLOPs at 128 tokens). Masked positions per sequence:
// `head_positions`, or 15% of the tokens rounded up when 0 (the reference
// scripts' max_predictions_per_seq is 20 at 128 tokens, 80 at 512).
Network Bert(const std::string& name, int layers, int64_t d, int64_t heads, int64_t seq_len,
             int64_t head_positions) {
  TransformerConfig c;
  c.layers = layers;
  c.d_model = d;
  c.heads = c.kv_heads = heads;
  c.ffn = 4 * d;
  c.pre_norm = false;
  c.norm_epsilon = 1e-12;
  c.dropout = 0.1;
  constexpr int64_t kVocab = 30522;
  Network net(name, Shape::Vector(seq_len));
  EmbeddingAttrs words;
  words.vocab = kVocab;
  words.dim = d;
  std::string x = net.Embedding("input", words, "embeddings.word");
  x = net.PositionEmbedding(x, 512, "embeddings.position");
  x = net.SegmentEmbedding(x, 2, "embeddings.segment");
  x = Drop(net, Norm(net, x, c, "embeddings.norm"), c.dropout, "embeddings.dropout");
  x = Blocks(net, x, c);

  const int64_t masked =
      head_positions > 0 ? head_positions
                         : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(0.15 * seq_len)));
  std::string m = net.GatherTokens(x, masked, "mlm.gather");
  m = net.Gelu(net.Dense(m, Linear(d, true), "mlm.transform"), {}, "mlm.gelu");
  m = Norm(net, m, c, "mlm.norm");
  DenseAttrs decoder = Linear(kVocab, true);
  decoder.tied_to = "embeddings.word";
  net.SoftmaxCrossEntropy(net.Dense(m, decoder, "mlm.decoder"), "mlm.loss");

  std::string s =
      net.Tanh(net.Dense(net.SelectToken(x, 0, "pooler.first"), Linear(d, true), "pooler.dense"),
               "pooler.tanh");
  net.SoftmaxCrossEntropy(net.Dense(s, Linear(2, true), "nsp.classifier"), "nsp.loss");
  return net;
}

// GPT-2 (Radford et al. 2019; HF transformers GPT2LMHeadModel): token and
// learned position embeddings, pre-norm causal decoder, final layer norm, the
// language-model head tied to the token embeddings (no bias), loss on every token.
Network Gpt2(const std::string& name, int layers, int64_t d, int64_t heads, int64_t seq_len) {
  TransformerConfig c;
  c.layers = layers;
  c.d_model = d;
  c.heads = c.kv_heads = heads;
  c.ffn = 4 * d;
  c.mlp = MlpKind::kGeluTanh;
  c.causal = true;
  c.dropout = 0.1;
  constexpr int64_t kVocab = 50257;
  Network net(name, Shape::Vector(seq_len));
  EmbeddingAttrs tokens;
  tokens.vocab = kVocab;
  tokens.dim = d;
  std::string x = net.Embedding("input", tokens, "wte");
  x = Drop(net, net.PositionEmbedding(x, 1024, "wpe"), c.dropout, "embeddings.dropout");
  x = Norm(net, Blocks(net, x, c), c, "ln_f");
  DenseAttrs head = Linear(kVocab, false);
  head.tied_to = "wte";
  net.SoftmaxCrossEntropy(net.Dense(x, head, "lm_head"), "loss");
  return net;
}

// ViT-B/16 (Dosovitskiy et al. 2021; timm vit_base_patch16_224): 16x16 patches
// by a strided convolution, class token, learned positions, pre-norm encoder
// (layer-norm epsilon 1e-6), final norm, a linear head on the class token.
Network Vit() {
  TransformerConfig c;
  c.norm_epsilon = 1e-6;
  Network net("vit-b16", Shape::Chw(3, 224, 224));
  Conv2dAttrs patches;
  patches.out_channels = c.d_model;
  patches.window = MakeWindow(16, 16, 0);
  std::string x = net.ImageToSequence(net.Conv2d("input", patches, "patch_embed"), "patches");
  x = net.PositionEmbedding(net.ClassToken(x, "cls_token"), 197, "pos_embed");
  x = Norm(net, Blocks(net, x, c), c, "norm");
  x = net.Dense(net.SelectToken(x, 0, "cls"), Linear(1000, true), "head");
  net.SoftmaxCrossEntropy(x, "loss");
  return net;
}

// TinyLlama-1.1B (Zhang et al. 2024; HF transformers LlamaForCausalLM with
// TinyLlama/TinyLlama-1.1B's config.json): RMS norm, rotary positions,
// grouped-query attention (32 query, 4 key/value heads), SwiGLU MLP, no
// biases, an untied language-model head.
Network TinyLlama(int64_t seq_len) {
  TransformerConfig c;
  c.layers = 22;
  c.d_model = 2048;
  c.heads = 32;
  c.kv_heads = 4;
  c.ffn = 5632;
  c.rms_norm = true;
  c.mlp = MlpKind::kSwiGlu;
  c.bias = false;
  c.causal = true;
  c.rotary = true;
  constexpr int64_t kVocab = 32000;
  Network net("tinyllama-1.1b", Shape::Vector(seq_len));
  EmbeddingAttrs tokens;
  tokens.vocab = kVocab;
  tokens.dim = c.d_model;
  std::string x = net.Embedding("input", tokens, "embed_tokens");
  x = Norm(net, Blocks(net, x, c), c, "norm");
  net.SoftmaxCrossEntropy(net.Dense(x, Linear(kVocab, false), "lm_head"), "loss");
  return net;
}

}  // namespace

Network BertBase(int64_t seq_len, int64_t head_positions) {
  return Bert("bert-base", 12, 768, 12, seq_len, head_positions);
}
Network BertLarge(int64_t seq_len, int64_t head_positions) {
  return Bert("bert-large", 24, 1024, 16, seq_len, head_positions);
}
Network Gpt2Small(int64_t seq_len) { return Gpt2("gpt2", 12, 768, 12, seq_len); }
Network Gpt2Medium(int64_t seq_len) { return Gpt2("gpt2-medium", 24, 1024, 16, seq_len); }
Network VitB16(int64_t /*seq_len*/) { return Vit(); }
Network TinyLlama11b(int64_t seq_len) { return TinyLlama(seq_len); }

}  // namespace fitspeed
