// Transformer shapes from Hugging Face config.json files, the short form and
// the built-in list; their exact parameter counts and FLOPs per token
// (docs/llm.md, "Models").
#include "fitspeed/llm/transformer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
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

constexpr const char* kSupportedTypesTf = "gpt2, llama, mistral, qwen2, mixtral, bert";
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
// counts (which the bounds keep far from overflow).
double ApproxParametersTf(const TransformerConfig& m) {
  const double h = static_cast<double>(m.hidden);
  const double hd = static_cast<double>(HeadDimTf(m));
  const double attention =
      h * hd * static_cast<double>(2 * m.heads + 2 * m.kv_heads) + 4 * h + 4 * hd * m.heads;
  const double experts = static_cast<double>(std::max<int64_t>(1, m.experts));
  const double ffn = experts * (3 * h * static_cast<double>(m.ffn_hidden) + 3 * m.ffn_hidden) +
                     h * static_cast<double>(m.experts);
  const double embedding =
      h * static_cast<double>(m.vocab + m.max_positions + m.type_vocab) * 2 + 4 * h * h;
  return static_cast<double>(m.layers) * (attention + ffn + 4 * h) + embedding;
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

// The line of top-level key `key` of the (valid) JSON object in `text`, or of
// the object's '{' when the key is absent: nlohmann::json keeps no positions.
int KeyLineTf(const std::string& text, const std::string& key) {
  const size_t open = text.find('{');
  if (open == std::string::npos) return 1;
  const size_t at = FindJsonKey(text, open, key);
  return LineAt(text, at == std::string::npos ? open : at);
}

std::string ExcerptTf(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Reads the top-level fields of one config.json, naming source, line and key
// in every error.
class HfFieldsTf {
 public:
  HfFieldsTf(const std::string& text, const json& doc, std::string source)
      : text_(text), doc_(doc), source_(std::move(source)) {}

  [[noreturn]] void Fail(const std::string& key, const std::string& problem) const {
    throw DataError(source_, KeyLineTf(text_, key), key, problem);
  }

  // Present and not null.
  bool Has(const std::string& key) const { return doc_.contains(key) && !doc_[key].is_null(); }

  std::string String(const std::string& key) const {
    if (!doc_.contains(key)) Fail(key, "missing");
    const json& v = doc_[key];
    if (!v.is_string()) Fail(key, fmt::format("expected a string, got {}", ExcerptTf(v)));
    return v.get<std::string>();
  }

  // A positive integer within [1, hi].
  int64_t Count(const std::string& key, int64_t hi) const {
    if (!doc_.contains(key)) Fail(key, "missing");
    const json& v = doc_[key];
    if (!v.is_number_integer()) {
      Fail(key, fmt::format("expected an integer, got {}", ExcerptTf(v)));
    }
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
      Fail(key, fmt::format("{} is over the limit {}", ExcerptTf(v), hi));
    }
    const int64_t value = v.get<int64_t>();
    if (value < 1) Fail(key, fmt::format("must be >= 1, got {}", value));
    if (value > hi) Fail(key, fmt::format("{} is over the limit {}", value, hi));
    return value;
  }
  int64_t Count(const std::string& key, int64_t hi, int64_t absent) const {
    return Has(key) ? Count(key, hi) : absent;
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

  bool Bool(const std::string& key, bool absent) const {
    if (!doc_.contains(key)) return absent;
    const json& v = doc_[key];
    if (!v.is_boolean()) Fail(key, fmt::format("expected true or false, got {}", ExcerptTf(v)));
    return v.get<bool>();
  }

 private:
  const std::string& text_;
  const json& doc_;
  std::string source_;
};

// config.json keys of the TransformerConfig fields, per model_type, for the
// line and name of a shape rule's error.
std::string HfKeyOfTf(const std::string& model_type, const std::string& field) {
  static const std::map<std::string, std::string> gpt2 = {
      {"layers", "n_layer"},           {"hidden", "n_embd"},      {"heads", "n_head"},
      {"kv_heads", "n_head"},          {"ffn_hidden", "n_inner"}, {"vocab", "vocab_size"},
      {"max_positions", "n_positions"}};
  static const std::map<std::string, std::string> hf = {
      {"layers", "num_hidden_layers"},   {"hidden", "hidden_size"},
      {"heads", "num_attention_heads"},  {"kv_heads", "num_key_value_heads"},
      {"head_dim", "head_dim"},          {"ffn_hidden", "intermediate_size"},
      {"vocab", "vocab_size"},           {"max_positions", "max_position_embeddings"},
      {"type_vocab", "type_vocab_size"}, {"experts", "num_local_experts"},
      {"top_k", "num_experts_per_tok"}};
  const auto& keys = model_type == "gpt2" ? gpt2 : hf;
  const auto it = keys.find(field);
  return it == keys.end() ? field : it->second;
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
    // attention_bias: on q_a_proj (or q_proj), kv_a_proj_with_mqa and o_proj.
    if (m.attention_bias)
      p.attention += (mla.q_rank > 0 ? mla.q_rank : m.heads * qk) + mla.kv_rank + mla.rope_dim + h;
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
