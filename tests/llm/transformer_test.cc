// Transformer shapes: parameter counts against Hugging Face transformers,
// FLOPs per token against hand calculations and Narayanan et al. 2021, and
// every way a config.json or short form is refused.
#include "fitspeed/llm/transformer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "fitspeed/core/error.h"

namespace fitspeed {
namespace {

int64_t TotalOf(const std::string& name) { return CountParameters(LoadTransformer(name)).total; }

// The parameter counts are Hugging Face transformers' model.num_parameters()
// (shared tensors counted once) of LlamaForCausalLM, MistralForCausalLM,
// MixtralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel and
// BertForPreTraining built from the config.json files in data/llm-models,
// transformers 4.40 (the modules' parameters have not changed from 4.31 to
// 4.46). Each is also derived by hand in its comment.

// Llama-3-8B: embedding 128256*4096 = 525,336,576; per layer q 4096*4096 +
// k,v 2*4096*1024 + o 4096*4096 = 41,943,040, MLP 3*4096*14336 =
// 176,160,768, 2 RMS norms 8192: 218,112,000, x32 = 6,979,584,000; final norm
// 4096; untied head 525,336,576. Sum 8,030,261,248.
TEST(TransformerParameters, Llama3_8bMatchesHuggingFace) {
  const TransformerParameters p = CountParameters(LoadTransformer("llama-3-8b"));
  EXPECT_EQ(p.embedding, 525336576);
  EXPECT_EQ(p.attention_per_layer, 41943040);
  EXPECT_EQ(p.feed_forward_per_layer, 176160768);
  EXPECT_EQ(p.norms_per_layer, 8192);
  EXPECT_EQ(p.per_layer, 218112000);
  EXPECT_EQ(p.final_norm, 4096);
  EXPECT_EQ(p.output, 525336576);
  EXPECT_EQ(p.total, 8030261248);
  EXPECT_EQ(p.active_per_token, p.total);
}

// Llama-3-70B: embedding and head 2*128256*8192 = 2,101,346,304; per layer
// q,o 2*8192^2 = 134,217,728 + k,v 2*8192*1024 = 16,777,216, MLP
// 3*8192*28672 = 704,643,072, norms 16384: 855,654,400, x80 =
// 68,452,352,000; final norm 8192. Sum 70,553,706,496.
TEST(TransformerParameters, Llama3_70bMatchesHuggingFace) {
  EXPECT_EQ(TotalOf("llama-3-70b"), 70553706496);
}

// Llama-2-7B: embedding and head 2*32000*4096 = 262,144,000; per layer
// 4*4096^2 = 67,108,864 + 3*4096*11008 = 135,266,304 + 8192 = 202,383,360,
// x32 = 6,476,267,520; final norm 4096. Sum 6,738,415,616.
TEST(TransformerParameters, Llama2_7bMatchesHuggingFace) {
  EXPECT_EQ(TotalOf("llama-2-7b"), 6738415616);
}

// Llama-2-70B: as Llama-3-70B with vocabulary 32000: 2*32000*8192 =
// 524,288,000 + 68,452,352,000 + 8192 = 68,976,648,192.
TEST(TransformerParameters, Llama2_70bMatchesHuggingFace) {
  EXPECT_EQ(TotalOf("llama-2-70b"), 68976648192);
}

// Llama-3.1-405B (no reference value given; by hand): per layer q,o
// 2*16384^2 = 536,870,912 + k,v 2*16384*1024 = 33,554,432, MLP
// 3*16384*53248 = 2,617,245,696, norms 32768: 3,187,703,808, x126 =
// 401,650,679,808; embedding and head 2*128256*16384 = 4,202,692,608; final
// norm 16384. Sum 405,853,388,800.
TEST(TransformerParameters, Llama31_405bByHand) {
  EXPECT_EQ(TotalOf("llama-3.1-405b"), 405853388800);
}

// Mistral-7B v0.1: per layer as Llama-3-8B (218,112,000) x32 =
// 6,979,584,000; embedding and head 2*32000*4096 = 262,144,000; final 4096.
// Sum 7,241,732,096.
TEST(TransformerParameters, Mistral7bMatchesHuggingFace) {
  EXPECT_EQ(TotalOf("mistral-7b"), 7241732096);
}

// Mixtral-8x7B: per layer attention 41,943,040 + 8 experts x 176,160,768 =
// 1,409,286,144 + router 4096*8 = 32,768 (no bias) + norms 8192 =
// 1,451,270,144, x32 = 46,440,644,608; + 262,144,000 + 4096 =
// 46,702,792,704. Active: 6 of 8 experts skipped per layer: 46,702,792,704 -
// 32*6*176,160,768 = 12,879,925,248 (Mistral AI's "12.9B active").
TEST(TransformerParameters, Mixtral8x7bMatchesHuggingFaceAndActive) {
  const TransformerParameters p = CountParameters(LoadTransformer("mixtral-8x7b"));
  EXPECT_EQ(p.feed_forward_per_layer, 1409318912);
  EXPECT_EQ(p.total, 46702792704);
  EXPECT_EQ(p.active_per_token, 12879925248);
}

// Qwen2-7B (by hand): per layer q 3584^2 + bias 3584, k,v 2*3584*512 + bias
// 1024, o 3584^2 (no bias): 29,364,736; MLP 3*3584*18944 = 203,685,888;
// norms 7168: 233,057,792, x28 = 6,525,618,176; embedding and head
// 2*152064*3584 = 1,089,994,752; final 3584. Sum 7,615,616,512.
TEST(TransformerParameters, Qwen2_7bByHandWithQkvBias) {
  const TransformerParameters p = CountParameters(LoadTransformer("qwen2-7b"));
  EXPECT_EQ(p.attention_per_layer, 29364736);
  EXPECT_EQ(p.total, 7615616512);
}

// GPT-2: wte 50257*768 = 38,597,376, wpe 1024*768 = 786,432; per layer
// c_attn 768*2304 + 2304, c_proj 768^2 + 768, c_fc 768*3072 + 3072, mlp
// c_proj 3072*768 + 768, 2 LayerNorms 4*768: 7,087,872, x12 = 85,054,464;
// ln_f 1536; tied head. Sum 124,439,808.
TEST(TransformerParameters, Gpt2MatchesHuggingFace) {
  const TransformerParameters p = CountParameters(LoadTransformer("gpt2"));
  EXPECT_EQ(p.embedding, 38597376 + 786432);
  EXPECT_EQ(p.per_layer, 7087872);
  EXPECT_EQ(p.final_norm, 1536);
  EXPECT_EQ(p.output, 0);
  EXPECT_EQ(p.total, 124439808);
}

// GPT-2 medium: 50257*1024 + 1024*1024 + 24*(12*1024^2 + 13*1024) + 2*1024 =
// 51,463,168 + 1,048,576 + 302,309,376 + 2048 = 354,823,168.
TEST(TransformerParameters, Gpt2MediumMatchesHuggingFace) {
  EXPECT_EQ(TotalOf("gpt2-medium"), 354823168);
}

// GPT-2 XL (by hand): 50257*1600 + 1024*1600 + 48*(12*1600^2 + 13*1600) +
// 3200 = 80,411,200 + 1,638,400 + 1,475,558,400 + 3200 = 1,557,611,200.
TEST(TransformerParameters, Gpt2XlByHand) { EXPECT_EQ(TotalOf("gpt2-xl"), 1557611200); }

// GPT-3 175B as a GPT-2 (biases, learned positions of 2048 rows, tied head;
// by hand): wte 50257*12288 = 617,558,016, wpe 2048*12288 = 25,165,824; per
// layer 12*12288^2 + 13*12288 = 1,812,099,072, x96 = 173,961,510,912; ln_f
// 24,576. Sum 174,604,259,328 (Brown et al. 2020 round it to 175.0B).
TEST(TransformerParameters, Gpt3_175bByHand) { EXPECT_EQ(TotalOf("gpt3-175b"), 174604259328); }

// BERT-large uncased, BertForPreTraining (by hand): embeddings 30522*1024 +
// 512*1024 + 2*1024 + LayerNorm 2048 = 31,782,912; per layer Q,K,V,O with
// biases 4*(1024^2 + 1024) = 4,198,400, FFN 1024*4096 + 4096 + 4096*1024 +
// 1024 = 8,393,728, 2 LayerNorms 4096: 12,596,224, x24 = 302,309,376; pooler
// 1,049,600 (BertModel so far: 335,141,888); MLM transform 1,049,600 +
// LayerNorm 2048 + output bias 30522 (decoder tied), NSP 1024*2 + 2.
// Sum 336,226,108.
TEST(TransformerParameters, BertLargeForPreTrainingByHand) {
  const TransformerParameters p = CountParameters(LoadTransformer("bert-large-uncased"));
  EXPECT_EQ(p.embedding, 31782912);
  EXPECT_EQ(p.final_norm, 0);
  EXPECT_EQ(p.total - p.output + 1049600, 335141888);  // BertModel: with the pooler only
  EXPECT_EQ(p.total, 336226108);
}

TEST(TransformerParameters, UntyingAddsTheOutputProjection) {
  TransformerConfig m = LoadTransformer("gpt2");
  const int64_t tied = CountParameters(m).total;
  m.tied_embeddings = false;
  EXPECT_EQ(CountParameters(m).total - tied, 50257 * 768);
}

// Forward FLOPs per token of GPT-3 175B at s = 2048: Narayanan et al. 2021
// (Sec. 5.1, "Megatron-LM") count a forward pass as 24*B*s*l*h^2 *
// (1 + s/(6h) + V/(12*l*h)) (their 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) is
// 4 passes of the layers, with activation recomputation, and 3 of the
// logits). Per token: 24*96*12288^2 + 4*96*2048*12288 + 2*50257*12288 =
// 347,892,350,976 + 9,663,676,416 + 1,235,116,032 = 358,791,143,424. Both
// omit the same things: biases, LayerNorms, GELU, softmax and the position
// embedding's addition (elementwise, O(h) per token).
TEST(TransformerFlops, Gpt3MatchesNarayanan) {
  const TransformerConfig m = LoadTransformer("gpt3-175b");
  const double l = 96, h = 12288, s = 2048, v = 50257;
  const double narayanan = 24 * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h)) / s;
  EXPECT_NEAR(ForwardFlopsPerToken(m, 2048), narayanan, 1e-9 * narayanan);
  EXPECT_DOUBLE_EQ(ForwardFlopsPerToken(m, 2048), 358791143424.0);
  // Training, 3 forward passes: Narayanan's 96 form less one recomputed
  // forward of the layers (24*B*s*l*h^2*(1 + s/(6h))).
  const double with_recompute = 96 * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h)) / s;
  EXPECT_NEAR(3 * ForwardFlopsPerToken(m, 2048),
              with_recompute - 24 * l * h * h * (1 + s / (6 * h)), 1e-9 * with_recompute);
}

// Llama-3-8B at s = 8192, by hand: matrices per layer 41,943,040 + 176,160,768
// = 218,103,808, x2 x32 = 13,958,643,712; attention 4*8192*32*128 = 134,217,728
// x32 = 4,294,967,296; logits 2*128256*4096 = 1,050,673,152. Sum
// 19,304,284,160.
TEST(TransformerFlops, Llama3_8bByHand) {
  EXPECT_DOUBLE_EQ(ForwardFlopsPerToken(LoadTransformer("llama-3-8b"), 8192), 19304284160.0);
}

// Mixtral at s = 4096: per layer 2*(41,943,040 + 2*176,160,768 + 32,768) =
// 788,594,688 + attention 4*4096*4096 = 67,108,864: 855,703,552, x32 =
// 27,382,513,664; logits 2*32000*4096 = 262,144,000. Sum 27,644,657,664.
TEST(TransformerFlops, MixtralCountsTopKExpertsAndRouter) {
  EXPECT_DOUBLE_EQ(ForwardFlopsPerToken(LoadTransformer("mixtral-8x7b"), 4096), 27644657664.0);
}

TEST(TransformerFlops, AttentionTermIsLinearInSequence) {
  const TransformerConfig m = LoadTransformer("llama-2-7b");
  // 4 * heads * head_dim * layers = 4*4096*32 FLOPs more per token per extra token.
  EXPECT_DOUBLE_EQ(ForwardFlopsPerToken(m, 2001) - ForwardFlopsPerToken(m, 2000), 4.0 * 4096 * 32);
}

TEST(TransformerFlops, RefusesSequenceOutOfRange) {
  EXPECT_THROW(ForwardFlopsPerToken(LoadTransformer("gpt2"), 2048), UsageError);
  EXPECT_THROW(ForwardFlopsPerToken(LoadTransformer("llama-3-8b"), 0), UsageError);
}

TEST(TransformerSequence, LearnedPositionsBoundTheSequence) {
  const TransformerConfig m = LoadTransformer("gpt2");
  EXPECT_NO_THROW(CheckSequenceLength(m, 1024));
  try {
    CheckSequenceLength(m, 2048);
    FAIL() << "sequence 2048 accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "gpt2 has learned positions for 1024 tokens; sequence 2048 needs a model with "
                 "RoPE or ALiBi positions");
  }
}

TEST(TransformerSequence, RopeAndAlibiTakeAnyLength) {
  EXPECT_NO_THROW(CheckSequenceLength(LoadTransformer("llama-3-8b"), 1000000));
  EXPECT_NO_THROW(CheckSequenceLength(
      LoadTransformer("transformer:layers=2,hidden=64,heads=4,vocab=100,positions=alibi"),
      1 << 20));
  EXPECT_THROW(CheckSequenceLength(LoadTransformer("llama-3-8b"), 0), UsageError);
}

// --- config.json -----------------------------------------------------------

std::string DataErrorOf(const std::string& text) {
  try {
    ParseHfConfig(text, "cfg.json");
  } catch (const DataError& e) {
    return e.what();
  }
  return "accepted";
}

const char* kLlamaTf =
    "{\n"
    "  \"model_type\": \"llama\",\n"          // line 2
    "  \"hidden_size\": 256,\n"               // line 3
    "  \"intermediate_size\": 688,\n"         // line 4
    "  \"num_attention_heads\": 8,\n"         // line 5
    "  \"num_hidden_layers\": 2,\n"           // line 6
    "  \"num_key_value_heads\": 2,\n"         // line 7
    "  \"max_position_embeddings\": 4096,\n"  // line 8
    "  \"vocab_size\": 1000\n"                // line 9
    "}\n";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ParseHfConfig, ReadsALlamaConfigWithDefaults) {
  const TransformerConfig m = ParseHfConfig(kLlamaTf, "/models/tiny/config.json");
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.layers, 2);
  EXPECT_EQ(m.head_dim, 32);
  EXPECT_EQ(m.kv_heads, 2);
  EXPECT_FALSE(m.tied_embeddings);  // LlamaConfig's default
  EXPECT_EQ(m.positions, PositionEncoding::kRope);
  // 2*1000*256 + 2*(2*256*256 + 2*256*64 + 3*256*688 + 512) + 256 by hand.
  EXPECT_EQ(CountParameters(m).total, 512000 + 2 * (131072 + 32768 + 528384 + 512) + 256);
}

TEST(ParseHfConfig, DropoutFollowsTheConfigsProbabilities) {
  // Llama family: attention_dropout, 0.0 when absent (LlamaConfig's default).
  EXPECT_FALSE(ParseHfConfig(kLlamaTf, "cfg.json").dropout);
  EXPECT_TRUE(ParseHfConfig(Replace(kLlamaTf, "\"vocab_size\": 1000",
                                    "\"vocab_size\": 1000, \"attention_dropout\": 0.1"),
                            "cfg.json")
                  .dropout);
  // GPT-2 and BERT: 0.1 in the built-in configs (and GPT2Config's default).
  EXPECT_TRUE(LoadTransformer("gpt2-medium").dropout);
  EXPECT_TRUE(LoadTransformer("bert-large-uncased").dropout);
  EXPECT_FALSE(LoadTransformer("llama-3-8b").dropout);
  const std::string gpt2 =
      "{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4,\n"
      " \"vocab_size\": 100, \"n_positions\": 128";
  EXPECT_TRUE(ParseHfConfig(gpt2 + "}", "gpt2.json").dropout);  // absent: 0.1
  EXPECT_TRUE(ParseHfConfig(gpt2 + ", \"resid_pdrop\": 0.0}", "gpt2.json").dropout);
  EXPECT_FALSE(
      ParseHfConfig(gpt2 + ", \"resid_pdrop\": 0.0, \"attn_pdrop\": 0}", "gpt2.json").dropout);
  // Not a probability: the field is named, even where the other field
  // already says dropout is on.
  const std::string bad_attn = DataErrorOf(gpt2 + ", \"resid_pdrop\": 0.1, \"attn_pdrop\": 5}");
  EXPECT_NE(bad_attn.find("field 'attn_pdrop': 5 is not a probability"), std::string::npos)
      << bad_attn;
  // Not a probability: the field is named.
  std::string message = DataErrorOf(Replace(kLlamaTf, "\"vocab_size\": 1000",
                                            "\"vocab_size\": 1000, \"attention_dropout\": 1.5"));
  EXPECT_NE(message.find("field 'attention_dropout': 1.5 is not a probability"), std::string::npos)
      << message;
  message = DataErrorOf(Replace(kLlamaTf, "\"vocab_size\": 1000",
                                "\"vocab_size\": 1000, \"attention_dropout\": \"0.1\""));
  EXPECT_NE(message.find("field 'attention_dropout': expected a probability"), std::string::npos)
      << message;
}

TEST(ParseHfConfig, KvHeadsDefaultToHeadsAndHeadDimIsRead) {
  std::string text = Replace(kLlamaTf, "  \"num_key_value_heads\": 2,\n", "  \"head_dim\": 64,\n");
  const TransformerConfig m = ParseHfConfig(text, "cfg.json");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 64);
}

TEST(ParseHfConfig, MalformedJsonNamesTheLine) {
  const std::string message =
      DataErrorOf("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": ,\n}");
  EXPECT_NE(message.find("cfg.json:3"), std::string::npos) << message;
  EXPECT_NE(message.find("malformed JSON"), std::string::npos) << message;
}

TEST(ParseHfConfig, MissingFieldIsNamed) {
  const std::string message = DataErrorOf(Replace(kLlamaTf, "  \"intermediate_size\": 688,\n", ""));
  EXPECT_NE(message.find("field 'intermediate_size': missing"), std::string::npos) << message;
}

TEST(ParseHfConfig, WrongTypeNamesFieldAndLine) {
  const std::string message =
      DataErrorOf(Replace(kLlamaTf, "\"hidden_size\": 256", "\"hidden_size\": \"256\""));
  EXPECT_NE(message.find("cfg.json:3: field 'hidden_size': expected an integer"), std::string::npos)
      << message;
  const std::string fraction =
      DataErrorOf(Replace(kLlamaTf, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 2.5"));
  EXPECT_NE(fraction.find("cfg.json:6: field 'num_hidden_layers'"), std::string::npos) << fraction;
  const std::string tie = DataErrorOf(Replace(kLlamaTf, "\"vocab_size\": 1000",
                                              "\"vocab_size\": 1000, \"tie_word_embeddings\": 1"));
  EXPECT_NE(tie.find("field 'tie_word_embeddings': expected true or false"), std::string::npos)
      << tie;
}

TEST(ParseHfConfig, NonPositiveAndAbsurdValuesAreRefused) {
  const std::string negative =
      DataErrorOf(Replace(kLlamaTf, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": -3"));
  EXPECT_NE(negative.find("cfg.json:6: field 'num_hidden_layers': must be >= 1"), std::string::npos)
      << negative;
  const std::string zero =
      DataErrorOf(Replace(kLlamaTf, "\"vocab_size\": 1000", "\"vocab_size\": 0"));
  EXPECT_NE(zero.find("cfg.json:9: field 'vocab_size'"), std::string::npos) << zero;
  const std::string huge = DataErrorOf(
      Replace(kLlamaTf, "\"hidden_size\": 256", "\"hidden_size\": 99999999999999999999"));
  EXPECT_NE(huge.find("field 'hidden_size'"), std::string::npos) << huge;
  // Every field within its bound, the whole over 1e15 parameters.
  std::string big = Replace(kLlamaTf, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 16000");
  big = Replace(big, "\"hidden_size\": 256", "\"hidden_size\": 1048576");
  big = Replace(big, "\"intermediate_size\": 688", "\"intermediate_size\": 4000000");
  EXPECT_NE(DataErrorOf(big).find("parameters"), std::string::npos) << DataErrorOf(big);
}

TEST(ParseHfConfig, UnknownModelTypeNamesTheSupportedOnes) {
  const std::string message =
      DataErrorOf(Replace(kLlamaTf, "\"model_type\": \"llama\"", "\"model_type\": \"t5\""));
  EXPECT_NE(
      message.find("cfg.json:2: field 'model_type': \"t5\" is not supported (supported: "
                   "gpt2, llama, mistral, qwen2, mixtral, bert, qwen3, qwen3_moe, deepseek_v3, "
                   "kimi_k2, gpt_oss, gemma3, gemma3_text)"),
      std::string::npos)
      << message;
  EXPECT_NE(DataErrorOf("{\"hidden_size\": 3}").find("field 'model_type': missing"),
            std::string::npos);
}

TEST(ParseHfConfig, HeadsMustDivideHidden) {
  const std::string message =
      DataErrorOf(Replace(kLlamaTf, "\"num_attention_heads\": 8", "\"num_attention_heads\": 6"));
  EXPECT_NE(
      message.find("cfg.json:5: field 'num_attention_heads': 6 heads do not divide hidden 256"),
      std::string::npos)
      << message;
  // With head_dim given, hidden need not be heads x head_dim (Gemma-style).
  std::string text = Replace(kLlamaTf, "\"num_attention_heads\": 8", "\"num_attention_heads\": 6");
  text =
      Replace(text, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 2, \"head_dim\": 48");
  EXPECT_EQ(ParseHfConfig(text, "cfg.json").head_dim, 48);
}

TEST(ParseHfConfig, KvHeadsMustDivideHeads) {
  const std::string message =
      DataErrorOf(Replace(kLlamaTf, "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"));
  EXPECT_NE(message.find("cfg.json:7: field 'num_key_value_heads': 3 key/value heads do not "
                         "divide 8 heads"),
            std::string::npos)
      << message;
}

TEST(ParseHfConfig, TopKMustNotExceedExperts) {
  std::string text = Replace(kLlamaTf, "\"llama\"", "\"mixtral\"");
  text =
      Replace(text, "\"vocab_size\": 1000",
              "\"vocab_size\": 1000,\n  \"num_local_experts\": 4,\n  \"num_experts_per_tok\": 5");
  const std::string message = DataErrorOf(text);
  EXPECT_NE(message.find("cfg.json:11: field 'num_experts_per_tok': 5 is outside [1, experts 4]"),
            std::string::npos)
      << message;
  EXPECT_NE(DataErrorOf(Replace(kLlamaTf, "\"llama\"", "\"mixtral\"")).find("num_local_experts"),
            std::string::npos);
}

TEST(ParseHfConfig, NonObjectsAndBinaryJunkAreDataErrors) {
  for (const std::string& text :
       {std::string("[1, 2]"), std::string("42"), std::string(""), std::string("\x00\xff\xfe{", 4),
        std::string("{\"model_type\": \"gpt2\", \"n_layer\": {\"a\": 1}}")}) {
    EXPECT_THROW(ParseHfConfig(text, "junk"), DataError) << text;
  }
}

TEST(ParseHfConfig, Gpt2NInnerNullIsFourTimesHidden) {
  const std::string text =
      "{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_embd\": 64, \"n_head\": 4, \"n_inner\": null,"
      " \"vocab_size\": 100, \"n_positions\": 128}";
  const TransformerConfig m = ParseHfConfig(text, "cfg.json");
  EXPECT_EQ(m.ffn_hidden, 256);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.positions, PositionEncoding::kLearned);
  const TransformerConfig inner =
      ParseHfConfig(Replace(text, "\"n_inner\": null", "\"n_inner\": 100"), "cfg.json");
  EXPECT_EQ(inner.ffn_hidden, 100);
}

// --- short form and loading ---------------------------------------------------

TEST(LoadTransformer, ShortFormDropoutFlag) {
  const std::string base = "transformer:layers=2,hidden=64,heads=4,vocab=100";
  EXPECT_TRUE(LoadTransformer(base).dropout);                // norm=layer, gated=0
  EXPECT_FALSE(LoadTransformer(base + ",gated=1").dropout);  // Llama-style
  EXPECT_FALSE(LoadTransformer(base + ",norm=rms").dropout);
  EXPECT_FALSE(LoadTransformer(base + ",dropout=0").dropout);
  EXPECT_TRUE(LoadTransformer(base + ",gated=1,dropout=1").dropout);
}

TEST(LoadTransformer, ShortFormDefaults) {
  const TransformerConfig m =
      LoadTransformer("transformer:layers=24,hidden=1024,heads=16,vocab=50257");
  EXPECT_EQ(m.kv_heads, 16);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.ffn_hidden, 4096);
  EXPECT_EQ(m.positions, PositionEncoding::kRope);
  EXPECT_EQ(m.feed_forward, FeedForwardKind::kPlain);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_FALSE(m.attention_bias);
  EXPECT_EQ(m.experts, 0);
}

// The short form of GPT-2 medium counts as its config.json does.
TEST(LoadTransformer, ShortFormOfGpt2MediumCountsAsHuggingFace) {
  const TransformerConfig m = LoadTransformer(
      "transformer:layers=24,hidden=1024,heads=16,ffn=4096,vocab=50257,positions=learned,"
      "max_positions=1024,bias=1,tied=1,norm=layer");
  EXPECT_EQ(CountParameters(m).total, 354823168);
}

// The short form of Mixtral counts 46,702,792,704 as its config.json.
TEST(LoadTransformer, ShortFormOfMixtral) {
  const TransformerConfig m = LoadTransformer(
      "transformer:layers=32,hidden=4096,heads=32,kv_heads=8,ffn=14336,vocab=32000,gated=1,"
      "norm=rms,tied=0,experts=8,top_k=2,max_positions=32768");
  EXPECT_EQ(CountParameters(m).total, 46702792704);
  EXPECT_EQ(CountParameters(m).active_per_token, 12879925248);
}

std::string UsageErrorOf(const std::string& spec) {
  try {
    LoadTransformer(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(LoadTransformer, ShortFormErrorsNameKeyAndValue) {
  const std::string base = "transformer:layers=2,hidden=64,heads=4,vocab=100";
  EXPECT_NE(UsageErrorOf(base + ",depth=3").find("unknown key 'depth'"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",ffn=abc").find("ffn=abc is not an integer"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",ffn=-5").find("ffn=-5 is outside"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",gated=2").find("gated=2 must be 0 or 1"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",norm=batch").find("norm=batch"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",positions=sinus").find("positions=sinus"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",positions=learned").find("max_positions"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",layers=3").find("'layers' given twice"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",kv_heads=3").find("kv_heads"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",experts=4").find("top_k"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",experts=4,top_k=5").find("top_k"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",top_k=2").find("top_k"), std::string::npos);
  EXPECT_NE(UsageErrorOf(base + ",heads").find("not key=value"), std::string::npos);
  EXPECT_NE(UsageErrorOf("transformer:layers=2,hidden=64,heads=5,vocab=100").find("heads=5"),
            std::string::npos);
  EXPECT_NE(UsageErrorOf("transformer:layers=2,hidden=64,heads=4").find("vocab"),
            std::string::npos);
}

TEST(LoadTransformer, UnknownNameListsTheBuiltIns) {
  const std::string message = UsageErrorOf("llama-9");
  EXPECT_NE(message.find("llama-3-8b"), std::string::npos) << message;
  EXPECT_NE(message.find("short form"), std::string::npos) << message;
}

TEST(LoadTransformer, ReadsAConfigFileAndRefusesAMissingOne) {
  const std::string dir = ::testing::TempDir() + "/fitspeed_llm_cfg_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << kLlamaTf;
  const TransformerConfig from_file = LoadTransformer(dir + "/config.json");
  EXPECT_EQ(from_file.hidden, 256);
  EXPECT_EQ(LoadTransformer(dir).layers, 2);  // the folder holding config.json
  EXPECT_THROW(LoadTransformer(dir + "/absent.json"), InputError);
  std::filesystem::remove_all(dir);
}

// nlohmann::json keeps the last of two equal keys silently; which one the
// author meant is unknown, so the config.json is refused.
TEST(ParseHfConfig, DuplicateKeyNamesFileLineAndKey) {
  const std::string message = DataErrorOf(Replace(
      kLlamaTf, "  \"vocab_size\": 1000\n", "  \"vocab_size\": 1000,\n  \"hidden_size\": 512\n"));
  EXPECT_NE(message.find("cfg.json:10: field 'hidden_size': given twice"), std::string::npos)
      << message;
  // The same key in two different objects is no duplicate.
  const std::string nested = Replace(kLlamaTf, "  \"vocab_size\": 1000\n",
                                     "  \"vocab_size\": 1000,\n  \"rope_scaling\": {\"factor\": 2, "
                                     "\"type\": \"linear\"},\n  \"x\": {\"factor\": 3}\n");
  EXPECT_EQ(ParseHfConfig(nested, "cfg.json").hidden, 256);
}

// Opened blocking, a FIFO named config.json would hang; read, /dev/zero would
// fill memory.
TEST(LoadTransformer, FifoConfigJsonIsAnInputError) {
  const std::string dir = ::testing::TempDir() + "/fitspeed_llm_fifo_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  ASSERT_EQ(mkfifo((dir + "/config.json").c_str(), 0600), 0);
  for (const std::string& spec : {dir, dir + "/config.json"}) {
    try {
      LoadTransformer(spec);
      ADD_FAILURE() << spec << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(dir + "/config.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(LoadTransformer, EveryBuiltInLoadsAndValidates) {
  const std::vector<std::string> names = BuiltinTransformerNames();
  EXPECT_EQ(names.size(), 21u);
  for (const std::string& name : names) {
    const TransformerConfig m = LoadTransformer(name);
    EXPECT_EQ(m.name, name);
    EXPECT_NO_THROW(ValidateTransformer(m)) << name;
    // The parts add up, and the layers are the sum of each layer's kind.
    const TransformerParameters p = CountParameters(m);
    EXPECT_EQ(p.total, p.embedding + p.layers + p.final_norm + p.output) << name;
    int64_t layers = 0;
    for (int64_t i = 0; i < m.layers; ++i) {
      layers += CountLayerParameters(m, LayerKindAt(m, i)).Total();
    }
    EXPECT_EQ(p.layers, layers) << name;
    EXPECT_LE(p.active_per_token, p.total) << name;
  }
}

TEST(ValidateTransformer, NamesTheFieldOfAHandBuiltShape) {
  TransformerConfig m = LoadTransformer("llama-3-8b");
  m.kv_heads = 5;
  try {
    ValidateTransformer(m);
    FAIL() << "kv_heads 5 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("kv_heads"), std::string::npos) << e.what();
  }
  m.kv_heads = 8;
  m.layers = 0;
  EXPECT_THROW(CountParameters(m), UsageError);
}

// --- The model types of 2025 ----------------------------------------------
//
// Counts as transformers' num_parameters() counts them (registered buffers,
// such as DeepSeek-V3's e_score_correction_bias and Gemma's embed_scale, are
// not parameters), for Qwen3ForCausalLM, Qwen3MoeForCausalLM,
// DeepseekV3ForCausalLM, GptOssForCausalLM and Gemma3ForCausalLM; modules
// read in transformers' sources of 4.50 (Gemma 3) to 4.55 and the 5.0
// development branch (the others), whose parameters these releases share.

// Qwen3-30B-A3B (model card: 30.5B total, 3.3B activated, 29.9B
// non-embedding). Per layer: q 2048*4096 = 8,388,608, k and v 2048*512 =
// 1,048,576 each, o 4096*2048 = 8,388,608, q_norm and k_norm 2*128: attention
// 18,874,624; 128 experts of 3*2048*768 = 4,718,592: 603,979,776; router
// 2048*128 = 262,144; norms 2*2048: 623,120,640, x48 = 29,909,790,720.
// Embedding and untied head 2*151936*2048 = 622,329,856, final norm 2048.
// Total 30,532,122,624. Active: less 48 x 120 experts x 4,718,592 =
// 27,179,089,920: 3,353,032,704.
TEST(TransformerParameters, Qwen3_30bA3bMatchesHuggingFace) {
  const TransformerParameters p = CountParameters(LoadTransformer("qwen3-30b-a3b"));
  EXPECT_EQ(p.attention_per_layer, 18874624);
  EXPECT_EQ(p.feed_forward_per_layer, 603979776 + 262144);
  EXPECT_EQ(p.layers, 29909790720);
  EXPECT_EQ(p.total, 30532122624);
  EXPECT_EQ(p.active_per_token, 3353032704);
  EXPECT_EQ(p.mtp, 0);
}

// Qwen3-235B-A22B (model card: 235B total, 22B activated). Per layer: q
// 4096*8192 = 33,554,432, k and v 4096*512 = 2,097,152 each, o 33,554,432,
// QK-norm 256: 71,303,424; 128 experts of 3*4096*1536 = 18,874,368:
// 2,415,919,104; router 4096*128 = 524,288; norms 8192: 2,487,755,008, x94 =
// 233,848,970,752. Embedding and head 2*151936*4096 = 1,244,659,712, final
// norm 4096. Total 235,093,634,560; active less 94 x 120 x 18,874,368 =
// 212,902,871,040: 22,190,763,520.
TEST(TransformerParameters, Qwen3_235bA22bMatchesHuggingFace) {
  const TransformerParameters p = CountParameters(LoadTransformer("qwen3-235b-a22b"));
  EXPECT_EQ(p.per_layer, 2487755008);
  EXPECT_EQ(p.total, 235093634560);
  EXPECT_EQ(p.active_per_token, 22190763520);
}

// Qwen3-8B (model card: 8.2B, 6.95B non-embedding). Per layer: q, o
// 2*4096*4096 = 33,554,432, k, v 2*4096*1024 = 8,388,608, QK-norm 256, MLP
// 3*4096*12288 = 150,994,944, norms 8192: 192,946,432, x36 =
// 6,946,071,552; embedding and head 2*151936*4096 = 1,244,659,712; final norm
// 4096. Total 8,190,735,360.
TEST(TransformerParameters, Qwen3_8bMatchesHuggingFace) {
  const TransformerConfig m = LoadTransformer("qwen3-8b");
  EXPECT_EQ(m.heads * m.head_dim, 4096);
  EXPECT_TRUE(m.qk_norm);
  EXPECT_TRUE(m.sliding_layers.empty());  // use_sliding_window false
  EXPECT_EQ(CountParameters(m).total, 8190735360);
}

// DeepSeek-V3 as DeepseekV3ForCausalLM loads it (the MTP module, layer 61 of
// the checkpoint, is not loaded). Attention (MLA): q_a_proj 7168*1536 =
// 11,010,048, q_a_layernorm 1536, q_b_proj 1536*128*192 = 37,748,736,
// kv_a_proj_with_mqa 7168*(512+64) = 4,128,768, kv_a_layernorm 512,
// kv_b_proj 512*128*(128+128) = 16,777,216, o_proj 128*128*7168 =
// 117,440,512: 187,107,328. Dense layers (0-2): MLP 3*7168*18432 =
// 396,361,728 + norms 14,336: 583,483,392 each. MoE layers (3-60): 256
// experts of 3*7168*2048 = 44,040,192: 11,274,289,152, one shared expert
// 44,040,192, router 256*7168 = 1,835,008 (its e_score_correction_bias is a
// register_buffer in modeling_deepseek_v3.py, not counted): 11,507,286,016
// each. Layers 3*583,483,392 + 58*11,507,286,016 = 669,173,039,104;
// embedding and head 2*129280*7168 = 1,853,358,080; final norm 7168. Total
// 671,026,404,352 (DeepSeek: 671B). Active: less 58 x 248 x 44,040,192 =
// 633,474,121,728: 37,552,282,624; DeepSeek's README_WEIGHTS.md gives 36.6B
// "including 0.9B for the output Head", i.e. without the input embedding
// (37.55B - 0.93B = 36.63B).
// MTP: enorm and hnorm 2*7168, eh_proj 2*7168*7168 = 102,760,448, one MoE
// layer 11,507,286,016, shared_head.norm 7168: 11,610,067,968.
// README_WEIGHTS.md says "11.5B unique parameters (excluding the shared 0.9B
// Embedding and 0.9B output Head)", and the report's "14B" for the module
// counts those two copies the checkpoint holds: 11.61B + 2*0.93B = 13.46B.
// (Its 11.5B is 0.1B under ours; we count every tensor of layer 61 that
// modeling_deepseek.py builds.)
TEST(TransformerParameters, DeepseekV3MatchesHuggingFace) {
  const TransformerConfig m = LoadTransformer("deepseek-v3");
  EXPECT_EQ(m.head_dim, 192);
  EXPECT_EQ(m.kv_heads, 128);
  EXPECT_FALSE(LayerKindAt(m, 2).moe);
  EXPECT_TRUE(LayerKindAt(m, 3).moe);
  const TransformerParameters p = CountParameters(m);
  EXPECT_EQ(p.attention_per_layer, 187107328);
  EXPECT_EQ(p.per_layer, 11507286016);
  EXPECT_EQ(CountLayerParameters(m, LayerKindAt(m, 0)).Total(), 583483392);
  EXPECT_EQ(p.layers, 669173039104);
  EXPECT_EQ(p.total, 671026404352);
  EXPECT_EQ(p.active_per_token, 37552282624);
  EXPECT_EQ(p.mtp, 11610067968);
}

// Kimi K2 (model card: 1T total, 32B activated): DeepSeek-V3's layers with 64
// heads, 384 experts and one dense layer. Attention: q_a 11,010,048 + 1536,
// q_b 1536*64*192 = 18,874,368, kv_a 4,128,768 + 512, kv_b 512*64*256 =
// 8,388,608, o 64*128*7168 = 58,720,256: 101,124,096. Dense layer 0:
// 101,124,096 + 396,361,728 + 14,336 = 497,500,160. MoE layers 1-60:
// 384*44,040,192 = 16,911,433,728 + shared 44,040,192 + router 384*7168 =
// 2,752,512 + attention + norms: 17,059,364,864. Layers 497,500,160 +
// 60*17,059,364,864 = 1,024,059,392,000; embedding and head 2*163840*7168 =
// 2,348,810,240; final norm 7168. Total 1,026,408,209,408; active less 60 x
// 376 x 44,040,192: 32,861,477,888 (31.7B without the input embedding).
TEST(TransformerParameters, KimiK2MatchesHuggingFace) {
  const TransformerParameters p = CountParameters(LoadTransformer("kimi-k2"));
  EXPECT_EQ(p.attention_per_layer, 101124096);
  EXPECT_EQ(p.total, 1026408209408);
  EXPECT_EQ(p.active_per_token, 32861477888);
  EXPECT_EQ(p.mtp, 0);
}

// GPT-OSS-120B (OpenAI's model card: 116.83B total, 5.13B active). Per
// layer: q 2880*4096 + 4096, k and v 2880*512 + 512 each, o 4096*2880 +
// 2880, sinks 64: 26,550,144; 128 experts of gate_up 2880*5760 + 5760 and
// down 2880*2880 + 2880 = 24,891,840: 3,186,155,520; router 2880*128 + 128
// = 368,768; norms 5760: 3,213,080,192, x36 = 115,670,886,912. Embedding
// and head 2*201088*2880 = 1,158,266,880, final norm 2880. Total
// 116,829,156,672 (116.83B). Active: less 36 x 124 x 24,891,840 =
// 111,117,173,760: 5,711,982,912; the card's 5.13B leaves out the input
// embedding: 5,711,982,912 - 579,133,440 = 5,132,849,472.
TEST(TransformerParameters, GptOss120bMatchesTheModelCard) {
  const TransformerConfig m = LoadTransformer("gpt-oss-120b");
  const TransformerParameters p = CountParameters(m);
  EXPECT_EQ(p.attention_per_layer, 26550144);
  EXPECT_EQ(p.per_layer, 3213080192);
  EXPECT_EQ(p.total, 116829156672);
  EXPECT_EQ(p.active_per_token, 5711982912);
  EXPECT_EQ(p.active_per_token - p.embedding, 5132849472);
  int sliding = 0;
  for (int64_t i = 0; i < m.layers; ++i) sliding += LayerKindAt(m, i).sliding ? 1 : 0;
  EXPECT_EQ(sliding, 18);  // layer_types: even layers slide over 128 keys
  EXPECT_TRUE(LayerKindAt(m, 0).sliding);
  EXPECT_FALSE(LayerKindAt(m, 1).sliding);
}

// GPT-OSS-20B (model card: 20.91B total, 3.61B active): 24 layers of
// 26,550,144 + 32*24,891,840 + 2880*32 + 32 + 5760 = 823,186,976 =
// 19,756,487,424, + 1,158,266,880 + 2880 = 20,914,757,184. Active less 24 x
// 28 x 24,891,840: 4,187,440,704, 3,608,307,264 without the embedding.
TEST(TransformerParameters, GptOss20bMatchesTheModelCard) {
  const TransformerParameters p = CountParameters(LoadTransformer("gpt-oss-20b"));
  EXPECT_EQ(p.total, 20914757184);
  EXPECT_EQ(p.active_per_token - p.embedding, 3608307264);
}

// Gemma-3-27B's text model, Gemma3ForCausalLM from its text_config (vocab
// 262208 by Gemma3TextConfig's default, tied head). Per layer: q 5376*4096 =
// 22,020,096, k, v 5376*2048 = 11,010,048 each, o 22,020,096, q_norm and
// k_norm 2*128: 66,060,544; MLP 3*5376*21504 = 346,816,512; four norms
// 4*5376 = 21,504: 412,898,560, x62 = 25,599,710,720. Embedding 262208*5376
// = 1,409,630,208; final norm 5376. Total 27,009,346,304 (Gemma 3 report,
// Table 1: 25,600M non-embedding).
// Not counted: Gemma3ForConditionalGeneration's SigLIP vision tower from
// vision_config: patch embedding 3*14*14*1152 + 1152 = 678,528, positions
// (896/14)^2*1152 = 4,718,592, 27 layers of q,k,v,o 4*(1152^2 + 1152) =
// 5,313,024, two LayerNorms 4608, fc1 1152*4304 + 4304 = 4,962,512 and fc2
// 4304*1152 + 1152 = 4,959,360: 15,239,504 each, 411,466,608; post-layernorm
// 2304: 416,866,032 (the report's 417M); projector 1152*5376 + 1152 =
// 6,194,304. The whole model: 27,432,406,640 ("27.4B" on its Hub page).
TEST(TransformerParameters, Gemma3_27bTextModelMatchesHuggingFace) {
  const TransformerConfig m = LoadTransformer("gemma-3-27b");
  EXPECT_EQ(m.vocab, 262208);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.sandwich_norms);
  EXPECT_EQ(m.sliding_window, 1024);
  const TransformerParameters p = CountParameters(m);
  EXPECT_EQ(p.attention_per_layer, 66060544);
  EXPECT_EQ(p.norms_per_layer, 21504);
  EXPECT_EQ(p.layers + p.final_norm, 25599716096);
  EXPECT_EQ(p.total, 27009346304);
  // Five sliding layers to one global: layers 5, 11, ..., 59 are global.
  int global = 0;
  for (int64_t i = 0; i < m.layers; ++i) global += LayerKindAt(m, i).sliding ? 0 : 1;
  EXPECT_EQ(global, 10);
  EXPECT_FALSE(LayerKindAt(m, 5).sliding);
  EXPECT_TRUE(LayerKindAt(m, 61).sliding);
}

// A sliding layer's attention products cover the window, not the sequence:
// gpt-oss-20b at 4096 tokens, 12 full layers of 4096 keys and 12 sliding of
// 128, 64 heads of 64 + 64 (score and value widths), 2 FLOPs a multiply-add:
// 2*64*128*(12*4096 + 12*128) = 830,472,192 less than 24 full layers.
TEST(TransformerFlops, SlidingLayersAttendToTheirWindow) {
  TransformerConfig m = LoadTransformer("gpt-oss-20b");
  const double sliding = ForwardFlopsPerToken(m, 4096);
  m.sliding_layers.clear();
  const double full = ForwardFlopsPerToken(m, 4096);
  EXPECT_DOUBLE_EQ(full - sliding, 2.0 * 64 * 128 * 12 * (4096 - 128));
}

// --- config.json of 2025: fields, defaults, refusals ------------------------

TransformerConfig ParseTf(const std::string& text) { return ParseHfConfig(text, "cfg.json"); }

const char* kQwen3MoeTf =
    "{\n"
    "  \"model_type\": \"qwen3_moe\",\n"  // line 2
    "  \"hidden_size\": 64,\n"            // line 3
    "  \"num_hidden_layers\": 6,\n"       // line 4
    "  \"num_attention_heads\": 4,\n"     // line 5
    "  \"num_key_value_heads\": 2,\n"     // line 6
    "  \"intermediate_size\": 96,\n"      // line 7
    "  \"moe_intermediate_size\": 16,\n"  // line 8
    "  \"num_experts\": 8,\n"             // line 9
    "  \"num_experts_per_tok\": 2,\n"     // line 10
    "  \"decoder_sparse_step\": 2,\n"     // line 11
    "  \"mlp_only_layers\": [\n"          // line 12
    "    0,\n"                            // line 13
    "    3\n"                             // line 14
    "  ],\n"                              // line 15
    "  \"vocab_size\": 100\n"             // line 16
    "}\n";

// Layer i is MoE iff i is not in mlp_only_layers and (i + 1) % 2 == 0:
// layers 1 and 5 (3 is listed); the others are dense, intermediate_size wide.
// Head size by default hidden / heads = 16 (Qwen3MoeAttention's getattr).
TEST(ParseHfConfig, Qwen3MoeLayersFollowSparseStepAndMlpOnlyLayers) {
  const TransformerConfig m = ParseTf(kQwen3MoeTf);
  EXPECT_EQ(m.head_dim, 16);
  EXPECT_EQ(m.ffn_hidden, 16);
  EXPECT_EQ(m.dense_ffn_hidden, 96);
  EXPECT_EQ(m.moe_layers, (std::vector<bool>{false, true, false, false, false, true}));
  EXPECT_EQ(m.max_positions, 32768);  // Qwen3MoeConfig's default
  EXPECT_FALSE(m.tied_embeddings);
  // Hand count: attention q,o 2*64*64 + k,v 2*64*32 + QK-norm 32 = 12,320;
  // norms 128; dense MLP 3*64*96 = 18,432; MoE 8*3*64*16 + router 64*8 =
  // 25,088. Layers 4*(12,448 + 18,432) + 2*(12,448 + 25,088) = 198,592;
  // embedding and head 2*100*64 = 12,800; final norm 64. Total 211,456.
  EXPECT_EQ(CountParameters(m).total, 211456);
}

TEST(ParseHfConfig, Qwen3SlidingLayersNeedUseSlidingWindow) {
  const std::string base =
      "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 4, \"max_window_layers\": 2, "
      "\"sliding_window\": 512";
  EXPECT_TRUE(ParseTf(base + "}").sliding_layers.empty());
  const TransformerConfig m = ParseTf(base + ", \"use_sliding_window\": true}");
  EXPECT_EQ(m.sliding_window, 512);
  EXPECT_EQ(m.sliding_layers, (std::vector<bool>{false, false, true, true}));
  // Qwen3Config's defaults for what the file omits.
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.kv_heads, 32);
  EXPECT_EQ(m.head_dim, 128);
}

// q_lora_rank null: one q_proj (hidden x heads*(nope+rope)), no bias even
// with attention_bias (transformers' DeepseekV3Attention); layers from
// first_k_dense_replace on that are multiples of moe_layer_freq are MoE.
TEST(ParseHfConfig, DeepseekQueryWithoutLoraAndMoeLayerFrequency) {
  const std::string text =
      "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 32, \"num_hidden_layers\": 5,\n"
      " \"num_attention_heads\": 2, \"q_lora_rank\": null, \"kv_lora_rank\": 8,\n"
      " \"qk_rope_head_dim\": 4, \"qk_nope_head_dim\": 4, \"v_head_dim\": 6,\n"
      " \"intermediate_size\": 40, \"moe_intermediate_size\": 10, \"n_routed_experts\": 4,\n"
      " \"n_shared_experts\": 2, \"num_experts_per_tok\": 2, \"first_k_dense_replace\": 1,\n"
      " \"moe_layer_freq\": 2, \"attention_bias\": true, \"vocab_size\": 50}";
  const TransformerConfig m = ParseTf(text);
  EXPECT_EQ(m.latent.q_rank, 0);
  EXPECT_EQ(m.moe_layers, (std::vector<bool>{false, false, true, false, true}));
  // q_proj 32*2*8 = 512; kv_a 32*(8+4) = 384 + bias 12; kv_a_layernorm 8;
  // kv_b 8*2*(4+6) = 160; o_proj 2*6*32 = 384 + bias 32: 1,492.
  EXPECT_EQ(CountLayerParameters(m, LayerKindAt(m, 0)).attention, 1492);
  // MoE: 4 experts of 3*32*10 = 960, shared 3*32*20 = 1,920, router 4*32 = 128.
  const LayerParameters moe = CountLayerParameters(m, LayerKindAt(m, 2));
  EXPECT_EQ(moe.experts, 3840);
  EXPECT_EQ(moe.feed_forward, 1920 + 128);
}

// Gemma 3's text_config, absent: every field Gemma3TextConfig's default
// (26 layers, hidden 2304, 8 heads of 256, 4 key/value heads).
TEST(ParseHfConfig, Gemma3WithoutTextConfigTakesTheTextDefaults) {
  const TransformerConfig m = ParseTf("{\"model_type\": \"gemma3\"}");
  EXPECT_EQ(m.layers, 26);
  EXPECT_EQ(m.hidden, 2304);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.attention_softcap, 0);
  const TransformerConfig text = ParseTf(
      "{\"model_type\": \"gemma3_text\", \"attn_logit_softcapping\": 50.0, "
      "\"final_logit_softcapping\": 30.0, \"sliding_window_pattern\": 2}");
  EXPECT_EQ(text.attention_softcap, 50.0);
  EXPECT_EQ(text.final_softcap, 30.0);
  EXPECT_TRUE(LayerKindAt(text, 0).sliding);
  EXPECT_FALSE(LayerKindAt(text, 1).sliding);
}

TEST(ParseHfConfig, MlpOnlyLayersOutOfRangeNamesTheElementsLine) {
  const std::string message = DataErrorOf(Replace(kQwen3MoeTf, "    3\n", "    6\n"));
  EXPECT_NE(message.find("cfg.json:14: field 'mlp_only_layers': element 1: 6 is over the limit 5"),
            std::string::npos)
      << message;
  const std::string listed = DataErrorOf(Replace(kQwen3MoeTf, "    0,\n", "    \"0\",\n"));
  EXPECT_NE(listed.find("cfg.json:13: field 'mlp_only_layers': element 0: expected an integer"),
            std::string::npos)
      << listed;
  const std::string scalar =
      DataErrorOf(Replace(Replace(kQwen3MoeTf, "[\n    0,\n", "4\n"), "    3\n  ],\n", ","));
  EXPECT_NE(scalar.find("cfg.json:12: field 'mlp_only_layers': expected a list"), std::string::npos)
      << scalar;
}

TEST(ParseHfConfig, MoeFieldsOutOfRangeNameTheirKeyAndLine) {
  std::string message =
      DataErrorOf(Replace(kQwen3MoeTf, "\"decoder_sparse_step\": 2", "\"decoder_sparse_step\": 0"));
  EXPECT_NE(message.find("cfg.json:11: field 'decoder_sparse_step': must be >= 1, got 0"),
            std::string::npos)
      << message;
  message =
      DataErrorOf(Replace(kQwen3MoeTf, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 9"));
  EXPECT_NE(message.find("cfg.json:10: field 'num_experts_per_tok': 9 is outside [1, experts 8]"),
            std::string::npos)
      << message;
  message = DataErrorOf(Replace(kQwen3MoeTf, "\"num_experts\": 8", "\"num_experts\": -1"));
  EXPECT_NE(message.find("cfg.json:9: field 'num_experts': must be >= 0, got -1"),
            std::string::npos)
      << message;
  // num_experts 0: a dense model, every layer intermediate_size wide.
  const TransformerConfig dense =
      ParseTf(Replace(kQwen3MoeTf, "\"num_experts\": 8", "\"num_experts\": 0"));
  EXPECT_EQ(dense.experts, 0);
  EXPECT_EQ(dense.top_k, 0);
  EXPECT_EQ(dense.ffn_hidden, 96);
}

const char* kGptOssTf =
    "{\n"
    "  \"model_type\": \"gpt_oss\",\n"  // line 2
    "  \"num_hidden_layers\": 2,\n"     // line 3
    "  \"layer_types\": [\n"            // line 4
    "    \"sliding_attention\",\n"      // line 5
    "    \"full_attention\"\n"          // line 6
    "  ],\n"                            // line 7
    "  \"sliding_window\": 128\n"       // line 8
    "}\n";

TEST(ParseHfConfig, LayerTypesAreCheckedElementByElement) {
  const TransformerConfig m = ParseTf(kGptOssTf);
  EXPECT_EQ(m.sliding_layers, (std::vector<bool>{true, false}));
  EXPECT_EQ(m.experts, 128);  // GptOssConfig's defaults
  EXPECT_EQ(m.top_k, 4);
  std::string message = DataErrorOf(Replace(kGptOssTf, "\"full_attention\"", "\"chunked\""));
  EXPECT_NE(message.find("cfg.json:6: field 'layer_types': element 1 is \"chunked\", not "
                         "\"sliding_attention\" or \"full_attention\""),
            std::string::npos)
      << message;
  message = DataErrorOf(Replace(kGptOssTf, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3"));
  EXPECT_NE(message.find("cfg.json:4: field 'layer_types': has 2 entries for 3 layers"),
            std::string::npos)
      << message;
  message = DataErrorOf(Replace(kGptOssTf, "\"sliding_window\": 128", "\"sliding_window\": null"));
  EXPECT_NE(message.find("cfg.json:8: field 'sliding_window': is 0, but sliding layers need a "
                         "window of >= 1 keys"),
            std::string::npos)
      << message;
}

TEST(ParseHfConfig, DeepseekLatentAndMtpFieldsNameTheirKey) {
  const std::string base =
      "{\n  \"model_type\": \"kimi_k2\",\n  \"num_hidden_layers\": 4,\n  \"kv_lora_rank\": 512,\n"
      "  \"num_nextn_predict_layers\": 1,\n  \"n_shared_experts\": 1\n}\n";
  EXPECT_EQ(ParseTf(base).mtp_layers, 1);
  std::string message =
      DataErrorOf(Replace(base, "\"kv_lora_rank\": 512", "\"kv_lora_rank\": null"));
  EXPECT_NE(message.find("cfg.json:4: field 'kv_lora_rank': is null"), std::string::npos)
      << message;
  message = DataErrorOf(
      Replace(base, "\"num_nextn_predict_layers\": 1", "\"num_nextn_predict_layers\": 65"));
  EXPECT_NE(message.find("cfg.json:5: field 'num_nextn_predict_layers': 65 is over the limit 64"),
            std::string::npos)
      << message;
  message = DataErrorOf(Replace(base, "\"n_shared_experts\": 1", "\"n_shared_experts\": -1"));
  EXPECT_NE(message.find("cfg.json:6: field 'n_shared_experts': must be >= 0"), std::string::npos)
      << message;
  // 16384 experts of 2^20-wide blocks: far over 10^15 parameters.
  message = DataErrorOf(Replace(base, "\"n_shared_experts\": 1",
                                "\"n_routed_experts\": 16384, \"moe_intermediate_size\": 1048576"));
  EXPECT_NE(message.find("field 'num_hidden_layers': the shape has about"), std::string::npos)
      << message;
}

const char* kGemma3Tf =
    "{\n"
    "  \"model_type\": \"gemma3\",\n"         // line 2
    "  \"text_config\": {\n"                  // line 3
    "    \"num_attention_heads\": 8,\n"       // line 4
    "    \"num_key_value_heads\": 4,\n"       // line 5
    "    \"attn_logit_softcapping\": 50.0\n"  // line 6
    "  }\n"                                   // line 7
    "}\n";

TEST(ParseHfConfig, Gemma3TextConfigErrorsNameTheNestedKeyAndLine) {
  EXPECT_EQ(ParseTf(kGemma3Tf).attention_softcap, 50.0);
  std::string message =
      DataErrorOf(Replace(kGemma3Tf, "\"num_key_value_heads\": 4", "\"num_key_value_heads\": 3"));
  EXPECT_NE(message.find("cfg.json:5: field 'text_config.num_key_value_heads': 3 key/value heads "
                         "do not divide 8 heads"),
            std::string::npos)
      << message;
  message = DataErrorOf(
      Replace(kGemma3Tf, "\"attn_logit_softcapping\": 50.0", "\"attn_logit_softcapping\": -1"));
  EXPECT_NE(message.find("cfg.json:6: field 'text_config.attn_logit_softcapping': -1 is not a cap"),
            std::string::npos)
      << message;
  message = DataErrorOf("{\n  \"model_type\": \"gemma3\",\n  \"text_config\": [1]\n}\n");
  EXPECT_NE(message.find("cfg.json:3: field 'text_config': expected an object"), std::string::npos)
      << message;
  // A key the nested object lacks: the line of its '{'.
  message = DataErrorOf(Replace(Replace(kGemma3Tf, "\"num_key_value_heads\": 4,\n", ""),
                                "\"num_attention_heads\": 8", "\"num_attention_heads\": 6"));
  EXPECT_NE(message.find("cfg.json:3: field 'text_config.num_key_value_heads': 4 key/value heads "
                         "do not divide 6"),
            std::string::npos)
      << message;
}

// Hand-built shapes: each layer rule names the TransformerConfig field.
TEST(ValidateTransformer, LayerKindLatentAndMoeRulesNameTheField) {
  const auto field_of = [](const TransformerConfig& m) -> std::string {
    try {
      ValidateTransformer(m);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "accepted";
  };
  const TransformerConfig base = LoadTransformer("gpt-oss-20b");
  EXPECT_EQ(field_of(base), "accepted");
  TransformerConfig m = base;
  m.sliding_layers.push_back(true);
  EXPECT_NE(field_of(m).find("sliding_layers: has 25 entries for 24 layers"), std::string::npos);
  m = base;
  m.sliding_window = 0;
  EXPECT_NE(field_of(m).find("sliding_window: is 0"), std::string::npos);
  m = base;
  m.moe_layers.assign(3, true);
  EXPECT_NE(field_of(m).find("moe_layers: has 3 entries"), std::string::npos);
  m = base;
  m.attention_softcap = std::nan("");
  EXPECT_NE(field_of(m).find("attention_softcap:"), std::string::npos);
  m = base;
  m.mtp_layers = 65;
  EXPECT_NE(field_of(m).find("mtp_layers: 65 is outside [0, 64]"), std::string::npos);

  const TransformerConfig dense = LoadTransformer("llama-3-8b");
  m = dense;
  m.shared_experts = 1;
  EXPECT_NE(field_of(m).find("shared_experts: given without experts"), std::string::npos);
  m = dense;
  m.dense_ffn_hidden = 100;
  EXPECT_NE(field_of(m).find("dense_ffn_hidden: given without experts"), std::string::npos);
  m = dense;
  m.latent.v_dim = 128;
  EXPECT_NE(field_of(m).find("latent.kv_rank: is 0"), std::string::npos);

  const TransformerConfig mla = LoadTransformer("deepseek-v3");
  m = mla;
  m.latent.v_dim = 0;
  EXPECT_NE(field_of(m).find("latent.v_dim: must be >= 1"), std::string::npos);
  m = mla;
  m.kv_heads = 8;
  EXPECT_NE(field_of(m).find("kv_heads: 8 is not heads 128"), std::string::npos);
  m = mla;
  m.head_dim = 128;
  EXPECT_NE(field_of(m).find("head_dim: 128 is not nope_dim 128 + rope_dim 64"), std::string::npos);
  m = mla;
  // kv_b_proj alone: 2^20 x 128 heads x (2^19 + 128) x 61 layers ~ 4.3e15.
  m.latent.kv_rank = int64_t{1} << 20;
  m.latent.nope_dim = int64_t{1} << 19;
  m.head_dim = m.latent.nope_dim + m.latent.rope_dim;
  EXPECT_NE(field_of(m).find("layers: the shape has about"), std::string::npos);
}

}  // namespace
}  // namespace fitspeed
