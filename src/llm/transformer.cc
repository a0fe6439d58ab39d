// Transformer shapes from Hugging Face config.json files, the short form and
// the built-in list; their exact parameter counts and FLOPs per token
// (docs/llm.md, "Models").
#include "fitspeed/llm/transformer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "core/input_file.h"
#include "core/json_text.h"
#include "fitspeed/core/error.h"
#include "llm/embedded_llm_models.h"

namespace fitspeed {

namespace {

using nlohmann::json;

// Upper bounds past which a shape is refused as absurd (each far above any
// published model: Llama 3.1 405B has 126 layers, hidden 16384, vocabulary
// 128256, context 131072).
constexpr int64_t kMaxLayersTf = 16384;
constexpr int64_t kMaxWidthTf = int64_t{1} << 20;      // hidden, head_dim
constexpr int64_t kMaxHeadsTf = int64_t{1} << 16;      // heads, kv_heads
constexpr int64_t kMaxFfnTf = int64_t{1} << 24;        // feed-forward inner size
constexpr int64_t kMaxVocabTf = int64_t{1} << 26;      // vocabulary, token types
constexpr int64_t kMaxPositionsTf = int64_t{1} << 30;  // max_positions
constexpr int64_t kMaxExpertsTf = int64_t{1} << 14;
constexpr double kMaxParametersTf = 1e15;  // keeps every count far inside int64_t

constexpr int64_t kMaxMtpTf = 64;  // multi-token prediction modules (DeepSeek-V3: 1)

constexpr const char* kSupportedTypesTf =
    "gpt2, llama, mistral, qwen2, mixtral, bert, qwen3, qwen3_moe, deepseek_v3, kimi_k2, gpt_oss, "
    "gemma3, gemma3_text";
constexpr const char* kShortPrefixTf = "transformer:";

// The first rule `model` breaks: the TransformerConfig field and the problem.
struct ShapeProblemTf {
  std::string field;
  std::string problem;
};

std::optional<ShapeProblemTf> InRangeTf(const char* field, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return std::nullopt;
  return ShapeProblemTf{field, fmt::format("{} is outside [{}, {}]", value, lo, hi)};
}

int64_t HeadDimTf(const TransformerConfig& m) {
  return m.head_dim > 0 ? m.head_dim : m.hidden / m.heads;
}

// Every count below in double, for the size check before the exact integer
// counts (which the bounds keep far from overflow): an upper bound of what
// CountParameters counts, multi-token prediction modules included, whatever
// the layers' kinds.
double ApproxParametersTf(const TransformerConfig& m) {
  const double h = static_cast<double>(m.hidden);
  const double hd = static_cast<double>(HeadDimTf(m));
  const double heads = static_cast<double>(m.heads);
  double attention = h * hd * static_cast<double>(2 * m.heads + 2 * m.kv_heads) + 4 * h +
                     4 * hd * heads + 2 * hd + heads;
  const LatentAttention& a = m.latent;
  if (a.kv_rank > 0) {
    const double q_rank = static_cast<double>(a.q_rank), kv_rank = static_cast<double>(a.kv_rank);
    const double qk = static_cast<double>(a.nope_dim + a.rope_dim);
    attention += h * q_rank + q_rank * heads * qk + h * heads * qk +
                 h * (kv_rank + static_cast<double>(a.rope_dim)) +
                 kv_rank * heads * static_cast<double>(a.nope_dim + a.v_dim) +
                 heads * static_cast<double>(a.v_dim) * h + 2 * (q_rank + kv_rank) + heads * qk;
  }
  const auto block = [h](double inner) { return 3 * h * inner + 3 * inner + h; };
  const double experts = static_cast<double>(std::max<int64_t>(1, m.experts));
  const double ffn_hidden = static_cast<double>(m.ffn_hidden);
  const double ffn = experts * block(ffn_hidden) + 2 * h * static_cast<double>(m.experts) +
                     block(static_cast<double>(m.shared_experts) * ffn_hidden) +
                     block(static_cast<double>(m.dense_ffn_hidden));
  const double embedding =
      h * static_cast<double>(m.vocab + m.max_positions + m.type_vocab) * 2 + 4 * h * h;
  const double layers = static_cast<double>(m.layers + m.mtp_layers);
  return layers * (attention + ffn + 8 * h) + static_cast<double>(m.mtp_layers) * 2 * h * h +
         embedding;
}

// The rules of the layer kinds, latent attention and the mixture of experts
// as DeepSeek, Qwen3-MoE and GPT-OSS give it.
std::optional<ShapeProblemTf> FindLayerProblemTf(const TransformerConfig& m) {
  const auto sized = [&m](const char* field, const std::vector<bool>& v) {
    return v.empty() || static_cast<int64_t>(v.size()) == m.layers
               ? std::nullopt
               : std::optional<ShapeProblemTf>(ShapeProblemTf{
                     field,
                     fmt::format("has {} entries for {} layers (give one per layer, or none)",
                                 v.size(), m.layers)});
  };
  const LatentAttention& a = m.latent;
  for (const auto& problem :
       {sized("sliding_layers", m.sliding_layers), sized("moe_layers", m.moe_layers),
        InRangeTf("sliding_window", m.sliding_window, 0, kMaxPositionsTf),
        InRangeTf("dense_ffn_hidden", m.dense_ffn_hidden, 0, kMaxFfnTf),
        InRangeTf("shared_experts", m.shared_experts, 0, kMaxExpertsTf),
        InRangeTf("mtp_layers", m.mtp_layers, 0, kMaxMtpTf),
        InRangeTf("latent.q_rank", a.q_rank, 0, kMaxWidthTf),
        InRangeTf("latent.kv_rank", a.kv_rank, 0, kMaxWidthTf),
        InRangeTf("latent.rope_dim", a.rope_dim, 0, kMaxWidthTf),
        InRangeTf("latent.nope_dim", a.nope_dim, 0, kMaxWidthTf),
        InRangeTf("latent.v_dim", a.v_dim, 0, kMaxWidthTf)}) {
    if (problem) return problem;
  }
  if (std::find(m.sliding_layers.begin(), m.sliding_layers.end(), true) != m.sliding_layers.end() &&
      m.sliding_window < 1) {
    return ShapeProblemTf{
        "sliding_window",
        fmt::format("is {}, but sliding layers need a window of >= 1 keys", m.sliding_window)};
  }
  for (const auto& [field, cap] :
       {std::pair<const char*, double>{"attention_softcap", m.attention_softcap},
        {"final_softcap", m.final_softcap}}) {
    if (!(std::isfinite(cap) && cap >= 0)) {
      return ShapeProblemTf{field, fmt::format("{} is not a finite cap >= 0 (0: none)", cap)};
    }
  }
  if (a.kv_rank > 0) {
    for (const auto& [field, value] :
         {std::pair<const char*, int64_t>{"latent.rope_dim", a.rope_dim},
          {"latent.nope_dim", a.nope_dim},
          {"latent.v_dim", a.v_dim}}) {
      if (value < 1) {
        return ShapeProblemTf{
            field, fmt::format("must be >= 1 with latent attention (kv_rank {}), got {}", a.kv_rank,
                               value)};
      }
    }
    if (m.head_dim != a.nope_dim + a.rope_dim) {
      return ShapeProblemTf{"head_dim",
                            fmt::format("{} is not nope_dim {} + rope_dim {} (latent attention)",
                                        m.head_dim, a.nope_dim, a.rope_dim)};
    }
    if (m.kv_heads != m.heads) {
      return ShapeProblemTf{"kv_heads", fmt::format("{} is not heads {} (latent attention gives "
                                                    "each head its own key and value)",
                                                    m.kv_heads, m.heads)};
    }
    if (m.qk_norm) return ShapeProblemTf{"qk_norm", "and latent attention are exclusive"};
  } else if (a.q_rank != 0 || a.rope_dim != 0 || a.nope_dim != 0 || a.v_dim != 0) {
    return ShapeProblemTf{"latent.kv_rank",
                          "is 0 (no latent attention) but other latent dimensions are given"};
  }
  if (m.experts == 0) {
    if (!m.moe_layers.empty()) return ShapeProblemTf{"moe_layers", "given without experts"};
    if (m.shared_experts != 0) return ShapeProblemTf{"shared_experts", "given without experts"};
    if (m.dense_ffn_hidden != 0) {
      return ShapeProblemTf{"dense_ffn_hidden",
                            "given without experts (ffn_hidden is the dense layers' size)"};
    }
    if (m.router_bias) return ShapeProblemTf{"router_bias", "given without experts"};
  }
  return std::nullopt;
}

std::optional<ShapeProblemTf> FindShapeProblemTf(const TransformerConfig& m) {
  for (const auto& problem :
       {InRangeTf("layers", m.layers, 1, kMaxLayersTf),
        InRangeTf("hidden", m.hidden, 1, kMaxWidthTf), InRangeTf("heads", m.heads, 1, kMaxHeadsTf),
        InRangeTf("kv_heads", m.kv_heads, 1, kMaxHeadsTf),
        InRangeTf("head_dim", m.head_dim, 0, kMaxWidthTf),
        InRangeTf("ffn_hidden", m.ffn_hidden, 1, kMaxFfnTf),
        InRangeTf("vocab", m.vocab, 1, kMaxVocabTf),
        InRangeTf("max_positions", m.max_positions,
                  m.positions == PositionEncoding::kLearned ? 1 : 0, kMaxPositionsTf),
        InRangeTf("type_vocab", m.type_vocab, 0, kMaxVocabTf),
        InRangeTf("experts", m.experts, 0, kMaxExpertsTf)}) {
    if (problem) return problem;
  }
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    return ShapeProblemTf{"heads", fmt::format("{} heads do not divide hidden {} (give head_dim)",
                                               m.heads, m.hidden)};
  }
  if (m.heads % m.kv_heads != 0) {
    return ShapeProblemTf{
        "kv_heads", fmt::format("{} key/value heads do not divide {} heads", m.kv_heads, m.heads)};
  }
  if (m.experts == 0 && m.top_k != 0) {
    return ShapeProblemTf{"top_k", fmt::format("top_k {} without experts", m.top_k)};
  }
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)) {
    return ShapeProblemTf{"top_k",
                          fmt::format("{} is outside [1, experts {}]", m.top_k, m.experts)};
  }
  if (m.attention_bias && m.qkv_bias_only) {
    return ShapeProblemTf{"qkv_bias_only", "and attention_bias are exclusive"};
  }
  if (auto problem = FindLayerProblemTf(m)) return problem;
  const double approx = ApproxParametersTf(m);
  if (approx > kMaxParametersTf) {
    return ShapeProblemTf{"layers", fmt::format("the shape has about {:.3g} parameters, over the "
                                                "{:.0e} fitspeed accepts",
                                                approx, kMaxParametersTf)};
  }
  return std::nullopt;
}

int64_t NormParametersTf(const TransformerConfig& m) {
  return m.norm == NormKind::kLayerNorm ? 2 * m.hidden : m.hidden;
}

// --- config.json ---------------------------------------------------------

std::string ExcerptTf(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Reads the fields of one object of a config.json (the top level, or a
// nested one such as Gemma 3's text_config), naming source, line and key in
// every error. nlohmann::json keeps no positions: the lines come from
// scanning the (valid) text again.
class HfFieldsTf {
 public:
  // `begin`: the offset of the object's '{' in `text` (npos: the top level);
  // `prefix` goes before each key named in an error ("text_config.").
  HfFieldsTf(const std::string& text, const json& doc, std::string source,
             size_t begin = std::string::npos, std::string prefix = "")
      : text_(text), doc_(doc), source_(std::move(source)), prefix_(std::move(prefix)) {
    begin_ = begin == std::string::npos ? text.find('{') : begin;
  }

  // The line of key `key` of this object, or of its '{' when absent.
  int Line(const std::string& key) const {
    if (begin_ == std::string::npos) return 1;
    const size_t at = FindJsonKey(text_, begin_, key);
    return LineAt(text_, at == std::string::npos ? begin_ : at);
  }

  [[noreturn]] void Fail(const std::string& key, const std::string& problem) const {
    throw DataError(source_, Line(key), prefix_ + key, problem);
  }

  // The nested object `key` (an empty one when absent or null, so that every
  // field takes its default); DataError when it is not an object.
  HfFieldsTf Object(const std::string& key) const {
    static const json kEmpty = json::object();
    if (!Has(key)) return HfFieldsTf(text_, kEmpty, source_, begin_, prefix_ + key + ".");
    if (!doc_[key].is_object()) {
      Fail(key, fmt::format("expected an object, got {}", ExcerptTf(doc_[key])));
    }
    const size_t at = FindJsonKey(text_, begin_, key);
    return HfFieldsTf(text_, doc_[key], source_,
                      at == std::string::npos ? begin_ : JsonValueOfKey(text_, at),
                      prefix_ + key + ".");
  }

  // Present and not null.
  bool Has(const std::string& key) const { return doc_.contains(key) && !doc_[key].is_null(); }

  std::string String(const std::string& key) const {
    if (!doc_.contains(key)) Fail(key, "missing");
    const json& v = doc_[key];
    if (!v.is_string()) Fail(key, fmt::format("expected a string, got {}", ExcerptTf(v)));
    return v.get<std::string>();
  }

  // An integer within [lo, hi].
  int64_t Integer(const std::string& key, int64_t lo, int64_t hi) const {
    if (!doc_.contains(key)) Fail(key, "missing");
    return IntegerOf(doc_[key], lo, hi, [&](const std::string& problem) { Fail(key, problem); });
  }
  // `absent` when absent or null.
  int64_t Integer(const std::string& key, int64_t lo, int64_t hi, int64_t absent) const {
    return Has(key) ? Integer(key, lo, hi) : absent;
  }

  // A positive integer within [1, hi].
  int64_t Count(const std::string& key, int64_t hi) const { return Integer(key, 1, hi); }
  // `absent` when absent or null.
  int64_t Count(const std::string& key, int64_t hi, int64_t absent) const {
    return Has(key) ? Count(key, hi) : absent;
  }
  // `absent` when absent, 0 when null (DeepSeek's "q_lora_rank": null, a
  // "sliding_window": null).
  int64_t NullableCount(const std::string& key, int64_t hi, int64_t absent) const {
    if (!doc_.contains(key)) return absent;
    return doc_[key].is_null() ? 0 : Count(key, hi);
  }

  // A dropout probability: a number in [0, 1), `absent` when not given.
  double Probability(const std::string& key, double absent) const {
    if (!Has(key)) return absent;
    const json& v = doc_[key];
    if (!v.is_number()) Fail(key, fmt::format("expected a probability, got {}", ExcerptTf(v)));
    const double p = v.get<double>();
    if (!(p >= 0.0 && p < 1.0)) Fail(key, fmt::format("{} is not a probability in [0, 1)", p));
    return p;
  }

  // A soft-capping value: a finite number > 0, or 0 when absent or null.
  double Softcap(const std::string& key) const {
    if (!Has(key)) return 0;
    const json& v = doc_[key];
    if (!v.is_number()) Fail(key, fmt::format("expected a number or null, got {}", ExcerptTf(v)));
    const double cap = v.get<double>();
    if (!(std::isfinite(cap) && cap > 0)) Fail(key, fmt::format("{} is not a cap > 0", cap));
    return cap;
  }

  bool Bool(const std::string& key, bool absent) const {
    if (!doc_.contains(key)) return absent;
    const json& v = doc_[key];
    if (!v.is_boolean()) Fail(key, fmt::format("expected true or false, got {}", ExcerptTf(v)));
    return v.get<bool>();
  }

  // A list of layer indices, each in [0, layers) (Qwen's mlp_only_layers), as
  // one flag per layer; all false when absent or null. An element's error
  // names its own line.
  std::vector<bool> LayerIndices(const std::string& key, int64_t layers) const {
    std::vector<bool> marked(static_cast<size_t>(layers), false);
    if (!Has(key)) return marked;
    const json& list = Array(key);
    for (size_t i = 0; i < list.size(); ++i) {
      const int64_t layer = IntegerOf(list[i], 0, layers - 1, [&](const std::string& problem) {
        FailElement(key, i,
                    fmt::format("element {}: {} (a layer index of {} layers)", i, problem, layers));
      });
      marked[static_cast<size_t>(layer)] = true;
    }
    return marked;
  }

  // `layer_types`: one "sliding_attention" or "full_attention" per layer, as
  // sliding flags.
  std::vector<bool> LayerTypes(const std::string& key, int64_t layers) const {
    const json& list = Array(key);
    if (static_cast<int64_t>(list.size()) != layers) {
      Fail(key, fmt::format("has {} entries for {} layers", list.size(), layers));
    }
    std::vector<bool> sliding;
    for (size_t i = 0; i < list.size(); ++i) {
      const json& v = list[i];
      if (v == "sliding_attention" || v == "full_attention") {
        sliding.push_back(v == "sliding_attention");
      } else {
        FailElement(key, i,
                    fmt::format("element {} is {}, not \"sliding_attention\" or \"full_attention\"",
                                i, ExcerptTf(v)));
      }
    }
    return sliding;
  }

 private:
  template <typename OnError>
  static int64_t IntegerOf(const json& v, int64_t lo, int64_t hi, OnError fail) {
    if (!v.is_number_integer()) {
      fail(fmt::format("expected an integer, got {}", ExcerptTf(v)));
    } else if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
      fail(fmt::format("{} is over the limit {}", ExcerptTf(v), hi));
    } else {
      const int64_t value = v.get<int64_t>();
      if (value < lo) fail(fmt::format("must be >= {}, got {}", lo, value));
      if (value > hi) fail(fmt::format("{} is over the limit {}", value, hi));
      return value;
    }
    return lo;  // not reached: fail throws
  }

  const json& Array(const std::string& key) const {
    const json& v = doc_[key];
    if (!v.is_array()) Fail(key, fmt::format("expected a list, got {}", ExcerptTf(v)));
    return v;
  }

  [[noreturn]] void FailElement(const std::string& key, size_t index,
                                const std::string& problem) const {
    const size_t at = FindJsonKey(text_, begin_, key);
    const size_t element =
        at == std::string::npos
            ? std::string::npos
            : FindJsonElement(text_, JsonValueOfKey(text_, at), static_cast<int>(index));
    if (element == std::string::npos) Fail(key, problem);
    throw DataError(source_, LineAt(text_, element), prefix_ + key, problem);
  }

  const std::string& text_;
  const json& doc_;
  std::string source_;
  std::string prefix_;
  size_t begin_ = std::string::npos;
};

// config.json keys of the TransformerConfig fields, per model_type, for the
// line and name of a shape rule's error.
std::string HfKeyOfTf(const std::string& model_type, const std::string& field) {
  static const std::map<std::string, std::string> gpt2 = {
      {"layers", "n_layer"},           {"hidden", "n_embd"},      {"heads", "n_head"},
      {"kv_heads", "n_head"},          {"ffn_hidden", "n_inner"}, {"vocab", "vocab_size"},
      {"max_positions", "n_positions"}};
  static const std::map<std::string, std::string> hf = {
      {"layers", "num_hidden_layers"},
      {"hidden", "hidden_size"},
      {"heads", "num_attention_heads"},
      {"kv_heads", "num_key_value_heads"},
      {"head_dim", "head_dim"},
      {"ffn_hidden", "intermediate_size"},
      {"vocab", "vocab_size"},
      {"max_positions", "max_position_embeddings"},
      {"type_vocab", "type_vocab_size"},
      {"experts", "num_local_experts"},
      {"top_k", "num_experts_per_tok"},
      {"sliding_layers", "layer_types"},
      {"attention_softcap", "attn_logit_softcapping"},
      {"final_softcap", "final_logit_softcapping"}};
  // Where a type names a field otherwise than `hf` does.
  static const std::map<std::string, std::map<std::string, std::string>> by_type = {
      {"qwen3_moe",
       {{"experts", "num_experts"},
        {"ffn_hidden", "moe_intermediate_size"},
        {"dense_ffn_hidden", "intermediate_size"},
        {"moe_layers", "mlp_only_layers"}}},
      {"deepseek_v3",
       {{"experts", "n_routed_experts"},
        {"ffn_hidden", "moe_intermediate_size"},
        {"dense_ffn_hidden", "intermediate_size"},
        {"shared_experts", "n_shared_experts"},
        {"moe_layers", "first_k_dense_replace"},
        {"mtp_layers", "num_nextn_predict_layers"},
        {"head_dim", "qk_nope_head_dim"},
        {"kv_heads", "num_attention_heads"},
        {"latent.q_rank", "q_lora_rank"},
        {"latent.kv_rank", "kv_lora_rank"},
        {"latent.rope_dim", "qk_rope_head_dim"},
        {"latent.nope_dim", "qk_nope_head_dim"},
        {"latent.v_dim", "v_head_dim"}}}};
  const std::string type = model_type == "kimi_k2" ? "deepseek_v3" : model_type;
  const auto special = by_type.find(type);
  if (special != by_type.end()) {
    const auto it = special->second.find(field);
    if (it != special->second.end()) return it->second;
  }
  const auto& keys = type == "gpt2" ? gpt2 : hf;
  const auto it = keys.find(field);
  return it == keys.end() ? field : it->second;
}

// --- config.json, the types of 2025 ----------------------------------------
// Each reads the fields its transformers configuration class has, with that
// class's defaults where the file omits one (docs/llm.md, "config.json").

// The defaults of a decoder's common fields in one configuration class.
struct HfDefaultsTf {
  int64_t vocab, hidden, ffn, layers, heads, kv_heads;
  int64_t head_dim;  // 0: hidden / heads
  int64_t max_positions;
  bool tied;
};

// A pre-norm RoPE decoder with RMSNorm and a gated MLP: the fields of
// Qwen3Config, Qwen3MoeConfig, GptOssConfig and Gemma3TextConfig alike.
void ReadDecoderTf(const HfFieldsTf& f, const HfDefaultsTf& d, TransformerConfig& m) {
  m.layers = f.Count("num_hidden_layers", kMaxLayersTf, d.layers);
  m.hidden = f.Count("hidden_size", kMaxWidthTf, d.hidden);
  m.heads = f.Count("num_attention_heads", kMaxHeadsTf, d.heads);
  m.kv_heads = f.Count("num_key_value_heads", kMaxHeadsTf, d.kv_heads);
  m.head_dim = f.Count("head_dim", kMaxWidthTf, d.head_dim);
  m.ffn_hidden = f.Count("intermediate_size", kMaxFfnTf, d.ffn);
  m.vocab = f.Count("vocab_size", kMaxVocabTf, d.vocab);
  m.max_positions = f.Count("max_position_embeddings", kMaxPositionsTf, d.max_positions);
  m.positions = PositionEncoding::kRope;
  m.norm = NormKind::kRmsNorm;
  m.feed_forward = FeedForwardKind::kGated;
  m.tied_embeddings = f.Bool("tie_word_embeddings", d.tied);
  m.dropout = f.Probability("attention_dropout", 0.0) > 0;
}

// `layer_types` when given, else `pattern(i)` for layer i; the window is
// `sliding_window` (null: none, refused when a layer slides).
void ReadSlidingLayersTf(const HfFieldsTf& f, int64_t default_window,
                         const std::function<bool(int64_t)>& pattern, TransformerConfig& m) {
  m.sliding_window = f.NullableCount("sliding_window", kMaxPositionsTf, default_window);
  if (f.Has("layer_types")) {
    m.sliding_layers = f.LayerTypes("layer_types", m.layers);
  } else {
    for (int64_t i = 0; i < m.layers; ++i) m.sliding_layers.push_back(pattern(i));
  }
}

// Qwen3Config (qwen3) and Qwen3MoeConfig (qwen3_moe).
void ReadQwen3Tf(const HfFieldsTf& f, bool moe, TransformerConfig& m) {
  if (moe) {
    ReadDecoderTf(f, {151936, 2048, 6144, 24, 32, 4, 0, 32768, false}, m);
  } else {
    ReadDecoderTf(f, {151936, 4096, 22016, 32, 32, 32, 128, 32768, false}, m);
  }
  m.attention_bias = f.Bool("attention_bias", false);  // Q, K, V and O
  m.qk_norm = true;                                    // q_norm, k_norm: RMSNorm(head_dim)
  // sliding_window holds only with use_sliding_window (else None). Qwen3:
  // layer_types, by default the layers from max_window_layers on;
  // Qwen3-MoE's attention takes the window on every layer.
  const bool use_window = f.Bool("use_sliding_window", false);
  const int64_t window = f.NullableCount("sliding_window", kMaxPositionsTf, 4096);
  if (!moe) {
    const int64_t from = f.Integer("max_window_layers", 0, kMaxLayersTf, 28);
    ReadSlidingLayersTf(
        f, 4096, [from](int64_t i) { return i >= from; }, m);
  }
  if (use_window && window > 0) {
    m.sliding_window = window;
    if (moe) m.sliding_layers.assign(static_cast<size_t>(m.layers), true);
  } else {
    m.sliding_window = 0;
    m.sliding_layers.clear();
  }
  if (!moe) return;
  // Qwen3MoeDecoderLayer: layer i is an MoE layer iff num_experts > 0, i is
  // not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0; a dense
  // layer's MLP is intermediate_size wide, an expert moe_intermediate_size.
  m.experts = f.Integer("num_experts", 0, kMaxExpertsTf, 128);
  const int64_t top_k = f.Count("num_experts_per_tok", kMaxExpertsTf, 8);
  const int64_t expert_ffn = f.Count("moe_intermediate_size", kMaxFfnTf, 768);
  const int64_t step = f.Count("decoder_sparse_step", kMaxLayersTf, 1);
  const std::vector<bool> mlp_only = f.LayerIndices("mlp_only_layers", m.layers);
  if (m.experts == 0) return;
  m.top_k = top_k;
  m.dense_ffn_hidden = m.ffn_hidden;
  m.ffn_hidden = expert_ffn;
  for (int64_t i = 0; i < m.layers; ++i) {
    m.moe_layers.push_back(!mlp_only[static_cast<size_t>(i)] && (i + 1) % step == 0);
  }
}

// DeepseekV3Config (deepseek_v3; kimi_k2 declares DeepseekV3ForCausalLM and
// has the same fields), and moe_layer_freq and num_nextn_predict_layers of
// DeepSeek's own configuration_deepseek.py, which transformers' class lacks.
void ReadDeepseekV3Tf(const HfFieldsTf& f, TransformerConfig& m) {
  m.layers = f.Count("num_hidden_layers", kMaxLayersTf, 61);
  m.hidden = f.Count("hidden_size", kMaxWidthTf, 7168);
  m.heads = f.Count("num_attention_heads", kMaxHeadsTf, 128);
  m.kv_heads = m.heads;  // num_key_value_heads is read by nothing in the attention
  const int64_t dense_ffn = f.Count("intermediate_size", kMaxFfnTf, 18432);
  const int64_t expert_ffn = f.Count("moe_intermediate_size", kMaxFfnTf, 2048);
  m.vocab = f.Count("vocab_size", kMaxVocabTf, 129280);
  m.max_positions = f.Count("max_position_embeddings", kMaxPositionsTf, 4096);
  m.positions = PositionEncoding::kRope;
  m.norm = NormKind::kRmsNorm;
  m.feed_forward = FeedForwardKind::kGated;
  m.tied_embeddings = f.Bool("tie_word_embeddings", false);
  m.attention_bias = f.Bool("attention_bias", false);  // q_a_proj, kv_a_proj_with_mqa, o_proj
  m.dropout = f.Probability("attention_dropout", 0.0) > 0;
  LatentAttention& a = m.latent;
  a.q_rank = f.NullableCount("q_lora_rank", kMaxWidthTf, 1536);  // null: one q_proj
  a.kv_rank = f.NullableCount("kv_lora_rank", kMaxWidthTf, 512);
  if (a.kv_rank == 0) f.Fail("kv_lora_rank", "is null; the latent attention needs a rank >= 1");
  a.rope_dim = f.Count("qk_rope_head_dim", kMaxWidthTf, 64);
  a.nope_dim = f.Count("qk_nope_head_dim", kMaxWidthTf, 128);
  a.v_dim = f.Count("v_head_dim", kMaxWidthTf, 128);
  m.head_dim = a.nope_dim + a.rope_dim;
  m.mtp_layers = f.Integer("num_nextn_predict_layers", 0, kMaxMtpTf, 0);
  // Layer i is an MoE layer iff n_routed_experts is set, i >=
  // first_k_dense_replace and i % moe_layer_freq == 0 (transformers tests the
  // first two only: its class has no moe_layer_freq, 1 in every release).
  const int64_t experts = f.NullableCount("n_routed_experts", kMaxExpertsTf, 256);
  const int64_t shared = f.Integer("n_shared_experts", 0, kMaxExpertsTf, 1);
  const int64_t top_k = f.Count("num_experts_per_tok", kMaxExpertsTf, 8);
  const int64_t first_dense = f.Integer("first_k_dense_replace", 0, kMaxLayersTf, 3);
  const int64_t frequency = f.Count("moe_layer_freq", kMaxLayersTf, 1);
  if (experts == 0) {
    m.ffn_hidden = dense_ffn;
    return;
  }
  m.experts = experts;
  m.top_k = top_k;
  m.shared_experts = shared;
  m.ffn_hidden = expert_ffn;
  m.dense_ffn_hidden = dense_ffn;
  for (int64_t i = 0; i < m.layers; ++i) {
    m.moe_layers.push_back(i >= first_dense && i % frequency == 0);
  }
}

// GptOssConfig (gpt_oss): every layer a mixture of experts with biases on
// the experts and the router, attention sinks, alternate sliding layers.
void ReadGptOssTf(const HfFieldsTf& f, TransformerConfig& m) {
  ReadDecoderTf(f, {201088, 2880, 2880, 36, 64, 8, 64, 131072, false}, m);
  m.attention_bias = f.Bool("attention_bias", true);  // Q, K, V and O
  m.attention_sinks = true;
  // num_experts is the attribute_map's alias of num_local_experts.
  m.experts = f.Has("num_local_experts") || !f.Has("num_experts")
                  ? f.Count("num_local_experts", kMaxExpertsTf, 128)
                  : f.Count("num_experts", kMaxExpertsTf);
  m.top_k = f.Count("num_experts_per_tok", kMaxExpertsTf, 4);
  m.feed_forward_bias = true;  // gate_up_proj_bias, down_proj_bias
  m.router_bias = true;
  // Default layer_types: layer i slides iff (i + 1) % 2 != 0.
  ReadSlidingLayersTf(
      f, 128, [](int64_t i) { return (i + 1) % 2 != 0; }, m);
}

// Gemma3TextConfig (gemma3_text, and gemma3's text_config): QK-norm, four
// norms a layer, tied embeddings, five sliding layers to one global.
void ReadGemma3TextTf(const HfFieldsTf& f, TransformerConfig& m) {
  ReadDecoderTf(f, {262208, 2304, 9216, 26, 8, 4, 256, 131072, true}, m);
  m.attention_bias = f.Bool("attention_bias", false);
  m.qk_norm = true;
  m.sandwich_norms = true;
  m.attention_softcap = f.Softcap("attn_logit_softcapping");
  m.final_softcap = f.Softcap("final_logit_softcapping");
  // Default layer_types: layer i slides iff (i + 1) % sliding_window_pattern != 0.
  const int64_t pattern = f.Count("sliding_window_pattern", kMaxLayersTf, 6);
  ReadSlidingLayersTf(
      f, 4096, [pattern](int64_t i) { return (i + 1) % pattern != 0; }, m);
}

std::string NameFromSourceTf(const std::string& source) {
  const std::filesystem::path path(source);
  std::string stem = path.stem().string();
  if (stem == "config" && path.has_parent_path()) {
    const std::string parent = path.parent_path().filename().string();
    if (!parent.empty() && parent != "." && parent != "..") stem = parent;
  }
  return stem.empty() ? "custom" : stem;
}

// --- short form ----------------------------------------------------------

int64_t ShortIntegerTf(const std::string& key, const std::string& value, int64_t lo, int64_t hi) {
  int64_t result = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, result);
  if (value.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(fmt::format("transformer short form: {}={} is not an integer", key, value));
  }
  if (result < lo || result > hi) {
    throw UsageError(
        fmt::format("transformer short form: {}={} is outside [{}, {}]", key, value, lo, hi));
  }
  return result;
}

bool ShortFlagTf(const std::string& key, const std::string& value) {
  if (value == "0") return false;
  if (value == "1") return true;
  throw UsageError(fmt::format("transformer short form: {}={} must be 0 or 1", key, value));
}

TransformerConfig ParseShortFormTf(const std::string& spec) {
  static const std::vector<std::string> kKeys = {
      "layers",        "hidden", "heads", "kv_heads", "head_dim", "ffn",  "vocab", "positions",
      "max_positions", "gated",  "norm",  "experts",  "top_k",    "bias", "tied",  "dropout"};
  std::map<std::string, std::string> values;
  std::stringstream items(spec.substr(std::string(kShortPrefixTf).size()));
  std::string item;
  while (std::getline(items, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      throw UsageError(fmt::format("transformer short form: '{}' is not key=value", item));
    }
    const std::string key = item.substr(0, eq);
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      throw UsageError(fmt::format("transformer short form: unknown key '{}' (keys: {})", key,
                                   fmt::join(kKeys, ", ")));
    }
    if (!values.emplace(key, item.substr(eq + 1)).second) {
      throw UsageError(fmt::format("transformer short form: key '{}' given twice", key));
    }
  }
  for (const char* key : {"layers", "hidden", "heads", "vocab"}) {
    if (values.count(key) == 0) {
      throw UsageError(
          fmt::format("transformer short form '{}' lacks {}= (needs layers, hidden, "
                      "heads and vocab)",
                      spec, key));
    }
  }
  const auto integer = [&values](const char* key, int64_t lo, int64_t hi, int64_t absent) {
    const auto it = values.find(key);
    return it == values.end() ? absent : ShortIntegerTf(key, it->second, lo, hi);
  };
  const auto flag = [&values](const char* key, bool absent) {
    const auto it = values.find(key);
    return it == values.end() ? absent : ShortFlagTf(key, it->second);
  };
  TransformerConfig m;
  m.name = "custom";
  m.architecture = "transformer";
  m.source = spec;
  m.layers = integer("layers", 1, kMaxLayersTf, 0);
  m.hidden = integer("hidden", 1, kMaxWidthTf, 0);
  m.heads = integer("heads", 1, kMaxHeadsTf, 0);
  m.kv_heads = integer("kv_heads", 1, kMaxHeadsTf, m.heads);
  m.head_dim = integer("head_dim", 1, kMaxWidthTf, 0);
  m.ffn_hidden = integer("ffn", 1, kMaxFfnTf, 4 * m.hidden);
  m.vocab = integer("vocab", 1, kMaxVocabTf, 0);
  const std::string positions = values.count("positions") ? values["positions"] : "rope";
  if (positions == "learned") {
    m.positions = PositionEncoding::kLearned;
    if (values.count("max_positions") == 0) {
      throw UsageError(
          "transformer short form: positions=learned needs max_positions= (the table's rows)");
    }
  } else if (positions == "rope") {
    m.positions = PositionEncoding::kRope;
  } else if (positions == "alibi") {
    m.positions = PositionEncoding::kAlibi;
  } else {
    throw UsageError(fmt::format(
        "transformer short form: positions={} is not learned, rope or alibi", positions));
  }
  m.max_positions = integer("max_positions", 1, kMaxPositionsTf, 2048);
  m.feed_forward = flag("gated", false) ? FeedForwardKind::kGated : FeedForwardKind::kPlain;
  const std::string norm = values.count("norm") ? values["norm"] : "layer";
  if (norm == "layer") {
    m.norm = NormKind::kLayerNorm;
  } else if (norm == "rms") {
    m.norm = NormKind::kRmsNorm;
  } else {
    throw UsageError(fmt::format("transformer short form: norm={} is not layer or rms", norm));
  }
  m.experts = integer("experts", 1, kMaxExpertsTf, 0);
  m.top_k = integer("top_k", 1, kMaxExpertsTf, 0);
  if (m.experts > 0 && m.top_k == 0) {
    throw UsageError("transformer short form: experts= needs top_k= (experts per token)");
  }
  const bool bias = flag("bias", false);
  m.attention_bias = bias;
  m.feed_forward_bias = bias;
  m.tied_embeddings = flag("tied", true);
  m.dropout =
      flag("dropout", m.norm == NormKind::kLayerNorm && m.feed_forward == FeedForwardKind::kPlain);
  if (m.head_dim == 0) {
    if (m.hidden % m.heads != 0) {
      throw UsageError(
          fmt::format("transformer short form: heads={} does not divide hidden={} (give head_dim=)",
                      m.heads, m.hidden));
    }
    m.head_dim = m.hidden / m.heads;
  }
  if (auto problem = FindShapeProblemTf(m)) {
    throw UsageError(fmt::format("transformer short form: {}: {}",
                                 problem->field == "ffn_hidden" ? "ffn" : problem->field,
                                 problem->problem));
  }
  return m;
}

}  // namespace

void ValidateTransformer(const TransformerConfig& model) {
  if (auto problem = FindShapeProblemTf(model)) {
    throw UsageError(
        fmt::format("transformer '{}': {}: {}", model.name, problem->field, problem->problem));
  }
}

void CheckSequenceLength(const TransformerConfig& model, int64_t seq_len) {
  if (seq_len < 1) {
    throw UsageError(fmt::format("sequence length must be >= 1, got {}", seq_len));
  }
  if (model.positions == PositionEncoding::kLearned && seq_len > model.max_positions) {
    throw UsageError(fmt::format(
        "{} has learned positions for {} tokens; sequence {} needs a model with RoPE or "
        "ALiBi positions",
        model.name, model.max_positions, seq_len));
  }
}

TransformerLayerKind LayerKindAt(const TransformerConfig& m, int64_t layer) {
  const int64_t i = std::min(layer, m.layers - 1);
  TransformerLayerKind kind;
  const auto at = [i](const std::vector<bool>& v) {
    return i >= 0 && static_cast<size_t>(i) < v.size() && v[static_cast<size_t>(i)];
  };
  kind.sliding = m.sliding_window > 0 && at(m.sliding_layers);
  kind.moe = m.experts > 0 && (m.moe_layers.empty() || at(m.moe_layers));
  return kind;
}

// Hugging Face transformers' modules, counted as num_parameters() counts
// them (shared tensors once, buffers not at all), docs/llm.md lists each
// model type's modules.
LayerParameters CountLayerParameters(const TransformerConfig& m, TransformerLayerKind kind) {
  LayerParameters p;
  const int64_t h = m.hidden;
  const LatentAttention& mla = m.latent;
  if (mla.kv_rank > 0) {
    // DeepseekV3Attention: q_a_proj (h -> q_rank), q_a_layernorm, q_b_proj
    // (q_rank -> heads x (nope + rope)), or q_proj (h -> heads x (nope +
    // rope)); kv_a_proj_with_mqa (h -> kv_rank + rope), kv_a_layernorm,
    // kv_b_proj (kv_rank -> heads x (nope + v)); o_proj (heads x v -> h).
    const int64_t qk = mla.nope_dim + mla.rope_dim;
    p.attention =
        mla.q_rank > 0 ? h * mla.q_rank + mla.q_rank + mla.q_rank * m.heads * qk : h * m.heads * qk;
    p.attention += h * (mla.kv_rank + mla.rope_dim) + mla.kv_rank +
                   mla.kv_rank * m.heads * (mla.nope_dim + mla.v_dim);
    p.attention += m.heads * mla.v_dim * h;
    // attention_bias: on q_a_proj, kv_a_proj_with_mqa and o_proj; never on
    // q_proj, q_b_proj or kv_b_proj (transformers' DeepseekV3Attention).
    if (m.attention_bias) p.attention += mla.q_rank + mla.kv_rank + mla.rope_dim + h;
  } else {
    const int64_t hd = HeadDimTf(m);
    const int64_t q = m.heads * hd;
    const int64_t kv = m.kv_heads * hd;
    p.attention = 2 * h * q + 2 * h * kv;
    if (m.attention_bias) p.attention += q + 2 * kv + h;
    if (m.qkv_bias_only) p.attention += q + 2 * kv;
    if (m.qk_norm) p.attention += 2 * hd;  // q_norm and k_norm over one head, shared by the heads
  }
  if (m.attention_sinks) p.attention += m.heads;
  const int64_t matrices = m.feed_forward == FeedForwardKind::kGated ? 3 : 2;
  const auto block = [&](int64_t inner) {
    int64_t n = matrices * h * inner;
    if (m.feed_forward_bias) n += (matrices - 1) * inner + h;
    return n;
  };
  if (kind.moe && m.experts > 0) {
    p.expert = block(m.ffn_hidden);
    p.experts = m.experts * p.expert;
    p.feed_forward = h * m.experts + (m.router_bias ? m.experts : 0);
    if (m.shared_experts > 0) p.feed_forward += block(m.shared_experts * m.ffn_hidden);
  } else {
    p.feed_forward = block(m.dense_ffn_hidden > 0 ? m.dense_ffn_hidden : m.ffn_hidden);
  }
  p.norms = (m.sandwich_norms ? 4 : 2) * NormParametersTf(m);
  return p;
}

TransformerParameters CountParameters(const TransformerConfig& m) {
  ValidateTransformer(m);
  TransformerParameters p;
  p.embedding = m.vocab * m.hidden;
  if (m.positions == PositionEncoding::kLearned) p.embedding += m.max_positions * m.hidden;
  p.embedding += m.type_vocab * m.hidden;
  if (m.bert_heads) p.embedding += NormParametersTf(m);  // BertEmbeddings.LayerNorm

  // The largest kind of layer stands for "a layer"; the sum runs layer by layer.
  bool any_moe = false;
  for (int64_t i = 0; i < m.layers && !any_moe; ++i) any_moe = LayerKindAt(m, i).moe;
  TransformerLayerKind largest;
  largest.moe = any_moe;
  const LayerParameters layer = CountLayerParameters(m, largest);
  p.attention_per_layer = layer.attention;
  p.feed_forward_per_layer = layer.feed_forward + layer.experts;
  p.norms_per_layer = layer.norms;
  p.per_layer = layer.Total();
  int64_t skipped = 0;  // routed experts a token does not pass through
  for (int64_t i = 0; i < m.layers; ++i) {
    const TransformerLayerKind kind = LayerKindAt(m, i);
    const LayerParameters here = kind == largest ? layer : CountLayerParameters(m, kind);
    p.layers += here.Total();
    if (kind.moe) skipped += (m.experts - m.top_k) * here.expert;
  }

  p.final_norm = m.final_norm ? NormParametersTf(m) : 0;
  if (!m.tied_embeddings) p.output += m.vocab * m.hidden;
  if (m.bert_heads) {
    p.output += m.hidden * m.hidden + m.hidden;                                  // pooler
    p.output += m.hidden * m.hidden + m.hidden + NormParametersTf(m) + m.vocab;  // MLM head
    p.output += 2 * m.hidden + 2;  // next-sentence head
  }
  p.total = p.embedding + p.layers + p.final_norm + p.output;
  p.active_per_token = p.total - skipped;
  if (m.mtp_layers > 0) {
    // enorm, hnorm, eh_proj (2h -> h, no bias), the layer, shared_head.norm.
    const LayerParameters last = CountLayerParameters(m, LayerKindAt(m, m.layers));
    p.mtp = m.mtp_layers * (3 * NormParametersTf(m) + 2 * m.hidden * m.hidden + last.Total());
  }
  return p;
}

// Matrix elements one token multiplies by in a layer of `kind` (no biases,
// norms or sinks): the attention's projections, the top_k routed experts it
// passes through, the shared experts and the router, or the dense block.
int64_t MatrixElementsPerTokenTf(const TransformerConfig& m, TransformerLayerKind kind) {
  const int64_t h = m.hidden;
  const LatentAttention& mla = m.latent;
  int64_t attention = 0;
  if (mla.kv_rank > 0) {
    const int64_t qk = mla.nope_dim + mla.rope_dim;
    attention = mla.q_rank > 0 ? h * mla.q_rank + mla.q_rank * m.heads * qk : h * m.heads * qk;
    attention += h * (mla.kv_rank + mla.rope_dim) +
                 mla.kv_rank * m.heads * (mla.nope_dim + mla.v_dim) + m.heads * mla.v_dim * h;
  } else {
    const int64_t hd = HeadDimTf(m);
    attention = 2 * h * m.heads * hd + 2 * h * m.kv_heads * hd;
  }
  const int64_t matrices = m.feed_forward == FeedForwardKind::kGated ? 3 : 2;
  int64_t ffn = 0;
  if (kind.moe && m.experts > 0) {
    ffn = m.top_k * matrices * h * m.ffn_hidden + h * m.experts +
          matrices * h * m.shared_experts * m.ffn_hidden;
  } else {
    ffn = matrices * h * (m.dense_ffn_hidden > 0 ? m.dense_ffn_hidden : m.ffn_hidden);
  }
  return attention + ffn;
}

double ForwardFlopsPerToken(const TransformerConfig& model, int64_t seq_len) {
  ValidateTransformer(model);
  CheckSequenceLength(model, seq_len);
  const TransformerConfig& m = model;
  const LatentAttention& mla = m.latent;
  // Per query head, the widths of the score product (query . key) and the
  // value product.
  const double qk_dim =
      static_cast<double>(mla.kv_rank > 0 ? mla.nope_dim + mla.rope_dim : HeadDimTf(m));
  const double v_dim = static_cast<double>(mla.kv_rank > 0 ? mla.v_dim : HeadDimTf(m));
  double layers = 0;
  for (int64_t i = 0; i < m.layers; ++i) {
    const TransformerLayerKind kind = LayerKindAt(m, i);
    const double matrices = static_cast<double>(MatrixElementsPerTokenTf(m, kind));
    // The keys each query meets, counted whole (no halving for the mask): the
    // window on a sliding layer.
    const double keys =
        static_cast<double>(kind.sliding ? std::min<int64_t>(seq_len, m.sliding_window) : seq_len);
    layers += 2.0 * matrices + 2.0 * keys * static_cast<double>(m.heads) * (qk_dim + v_dim);
  }
  // The logits (vocab x hidden, tied or not) and BERT's masked-LM transform;
  // BERT's pooler and next-sentence head act once per sequence, not per token.
  double output = static_cast<double>(model.vocab) * static_cast<double>(model.hidden);
  if (model.bert_heads) output += static_cast<double>(model.hidden) * model.hidden;
  return layers + 2.0 * output;
}

TransformerConfig ParseHfConfig(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw DataError(source, LineAt(text, e.byte > 0 ? e.byte - 1 : 0), "",
                    fmt::format("malformed JSON: {}", e.what()));
  } catch (const json::exception& e) {
    throw DataError(source, 0, "", fmt::format("malformed JSON: {}", e.what()));
  }
  if (!doc.is_object()) {
    throw DataError(source, 1, "",
                    fmt::format("expected a config.json object, got {}", ExcerptTf(doc)));
  }
  if (const auto duplicate = FindDuplicateJsonKey(text)) {
    throw DataError(source, LineAt(text, duplicate->second), duplicate->first,
                    "given twice in one object (which one holds is ambiguous)");
  }
  const HfFieldsTf f(text, doc, source);
  TransformerConfig m;
  m.name = NameFromSourceTf(source);
  m.source = source;
  m.architecture = f.String("model_type");
  const std::string& type = m.architecture;
  if (type == "gpt2") {
    // transformers GPT2Config: n_inner None means 4 * n_embd.
    m.layers = f.Count("n_layer", kMaxLayersTf);
    m.hidden = f.Count("n_embd", kMaxWidthTf);
    m.heads = f.Count("n_head", kMaxHeadsTf);
    m.kv_heads = m.heads;
    m.ffn_hidden = f.Count("n_inner", kMaxFfnTf, 4 * m.hidden);
    m.vocab = f.Count("vocab_size", kMaxVocabTf);
    m.max_positions = f.Count("n_positions", kMaxPositionsTf);
    m.positions = PositionEncoding::kLearned;
    m.norm = NormKind::kLayerNorm;
    m.feed_forward = FeedForwardKind::kPlain;
    m.attention_bias = true;
    m.feed_forward_bias = true;
    m.tied_embeddings = f.Bool("tie_word_embeddings", true);
    // Both read, so that a bad one is refused whatever the other says.
    const double resid = f.Probability("resid_pdrop", 0.1), attn = f.Probability("attn_pdrop", 0.1);
    m.dropout = resid > 0 || attn > 0;
  } else if (type == "llama" || type == "mistral" || type == "qwen2" || type == "mixtral" ||
             type == "bert") {
    m.layers = f.Count("num_hidden_layers", kMaxLayersTf);
    m.hidden = f.Count("hidden_size", kMaxWidthTf);
    m.heads = f.Count("num_attention_heads", kMaxHeadsTf);
    m.ffn_hidden = f.Count("intermediate_size", kMaxFfnTf);
    m.vocab = f.Count("vocab_size", kMaxVocabTf);
    m.max_positions = f.Count("max_position_embeddings", kMaxPositionsTf);
    if (type == "bert") {
      m.kv_heads = m.heads;
      m.type_vocab = f.Count("type_vocab_size", kMaxVocabTf);
      m.positions = PositionEncoding::kLearned;
      m.norm = NormKind::kLayerNorm;
      m.feed_forward = FeedForwardKind::kPlain;
      m.attention_bias = true;
      m.feed_forward_bias = true;
      m.tied_embeddings = f.Bool("tie_word_embeddings", true);
      m.causal = false;
      m.final_norm = false;
      m.bert_heads = true;
      const double hidden_p = f.Probability("hidden_dropout_prob", 0.1);
      const double attention_p = f.Probability("attention_probs_dropout_prob", 0.1);
      m.dropout = hidden_p > 0 || attention_p > 0;
    } else {
      m.kv_heads = f.Count("num_key_value_heads", kMaxHeadsTf, m.heads);
      m.head_dim = f.Count("head_dim", kMaxWidthTf, 0);
      m.positions = PositionEncoding::kRope;
      m.norm = NormKind::kRmsNorm;
      m.feed_forward = FeedForwardKind::kGated;
      m.tied_embeddings = f.Bool("tie_word_embeddings", false);
      if (type == "llama") {
        m.attention_bias = f.Bool("attention_bias", false);
        m.feed_forward_bias = f.Bool("mlp_bias", false);
      }
      m.qkv_bias_only = type == "qwen2";
      m.dropout = f.Probability("attention_dropout", 0.0) > 0;
      if (type == "mixtral") {
        m.experts = f.Count("num_local_experts", kMaxExpertsTf);
        m.top_k = f.Count("num_experts_per_tok", kMaxExpertsTf);
      }
    }
  } else if (type == "qwen3" || type == "qwen3_moe") {
    ReadQwen3Tf(f, type == "qwen3_moe", m);
  } else if (type == "deepseek_v3" || type == "kimi_k2") {
    ReadDeepseekV3Tf(f, m);
  } else if (type == "gpt_oss") {
    ReadGptOssTf(f, m);
  } else if (type == "gemma3_text") {
    ReadGemma3TextTf(f, m);
  } else if (type == "gemma3") {
    // Gemma3Config: the text model's fields are text_config's (all of them
    // defaults when it is absent); the vision tower is not modeled.
    const HfFieldsTf text = f.Object("text_config");
    ReadGemma3TextTf(text, m);
    if (auto problem = FindShapeProblemTf(m)) {
      text.Fail(HfKeyOfTf("gemma3_text", problem->field), problem->problem);
    }
  } else {
    f.Fail("model_type",
           fmt::format("\"{}\" is not supported (supported: {})", type, kSupportedTypesTf));
  }
  if (auto problem = FindShapeProblemTf(m))
    f.Fail(HfKeyOfTf(type, problem->field), problem->problem);
  if (m.head_dim == 0) m.head_dim = m.hidden / m.heads;
  return m;
}

std::vector<std::string> BuiltinTransformerNames() {
  std::vector<std::string> names;
  for (const EmbeddedLlmModel& model : EmbeddedLlmModels()) names.push_back(model.name);
  return names;
}

TransformerConfig LoadTransformer(const std::string& spec) {
  if (spec.rfind(kShortPrefixTf, 0) == 0) return ParseShortFormTf(spec);
  for (const EmbeddedLlmModel& model : EmbeddedLlmModels()) {
    if (model.name != spec) continue;
    TransformerConfig m = ParseHfConfig(model.json, "data/llm-models/" + spec + ".json");
    m.name = spec;
    m.source = spec;
    return m;
  }
  std::error_code error;
  std::string path = spec;
  if (std::filesystem::is_directory(path, error))
    path = (std::filesystem::path(path) / "config.json").string();
  if (LooksLikeFilePath(spec) || std::filesystem::exists(path, error)) {
    return ParseHfConfig(ReadInputFile(path, "the config.json"), path);
  }
  throw UsageError(fmt::format(
      "'{}' is neither a built-in transformer ({}), a transformer:key=value,... short form nor "
      "a config.json path",
      spec, fmt::join(BuiltinTransformerNames(), ", ")));
}

}  // namespace fitspeed
