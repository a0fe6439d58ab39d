// The transformer networks of the zoo against their reference implementations'
// parameter counts and against published FLOP formulas.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fitspeed/core/error.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/model/zoo.h"

namespace fitspeed {
namespace {

Network Zoo(const std::string& name, int64_t seq_len = 0) {
  ZooOptions options;
  options.seq_len = seq_len;
  return ZooNetwork(name, options);
}

TEST(TransformerZoo, BertBaseParams) {
  // HF transformers BertForPreTraining(bert-base-uncased): 110,106,428.
  // By hand: embeddings 30522*768 + 512*768 + 2*768 + LN 2*768 = 23,837,184;
  // a layer: Q, K, V, out 4*(768*768 + 768) = 2,362,368, FFN 768*3072 + 3072 +
  // 3072*768 + 768 = 4,722,432, 2 LN 3,072: 7,087,872, x12 = 85,054,464; pooler
  // 590,592; masked-LM head: transform 590,592 + LN 1,536 + decoder bias 30,522
  // (its kernel is the word embeddings); next-sentence 768*2 + 2 = 1,538.
  const Network net = Zoo("bert-base");
  EXPECT_EQ(net.ParamCount(), 110106428);
  EXPECT_EQ(net.TrainableParamCount(), 110106428);
  EXPECT_EQ(net.input_shape(), Shape::Vector(128));  // the phase-1 pre-training length
  EXPECT_EQ(net.LossCount(), 2);
}

TEST(TransformerZoo, BertLargeParams) {
  // BertForPreTraining(bert-large-uncased): 336,226,108. Embeddings
  // 31,254,528 + 524,288 + 2,048 + 2,048 = 31,782,912; a layer 4*(1024*1024 +
  // 1024) + 2*4,194,304 + 4096 + 1024 + 2*2,048 = 12,596,224, x24 = 302,309,376;
  // pooler 1,049,600; heads 1,049,600 + 2,048 + 30,522 + 2,050.
  EXPECT_EQ(Zoo("bert-large").ParamCount(), 336226108);
}

TEST(TransformerZoo, Gpt2Params) {
  // GPT2LMHeadModel(gpt2): 124,439,808 (lm_head tied to wte). wte 50257*768 =
  // 38,597,376, wpe 1024*768 = 786,432, 12 layers of 7,087,872, ln_f 1,536.
  const Network net = Zoo("gpt2");
  EXPECT_EQ(net.ParamCount(), 124439808);
  // gpt2-medium: 354,823,168: wte 51,463,168, wpe 1,048,576, 24 x 12,596,224, ln_f 2,048.
  EXPECT_EQ(Zoo("gpt2-medium").ParamCount(), 354823168);
}

TEST(TransformerZoo, VitB16Params) {
  // timm vit_base_patch16_224: 86,567,656. Patch conv 768*3*16*16 + 768 =
  // 590,592; class token 768; positions 197*768 = 151,296; 12 x 7,087,872; norm
  // 1,536; head 768*1000 + 1000 = 769,000.
  const Network net = Zoo("vit-b16");
  EXPECT_EQ(net.ParamCount(), 86567656);
  EXPECT_EQ(net.layer(net.LayerId("pos_embed")).output_shape, Shape({197, 768}));
  EXPECT_THROW(Zoo("vit-b16", 256), UsageError);  // its sequence is fixed by the image
}

TEST(TransformerZoo, TinyLlamaParams) {
  // TinyLlama-1.1B (LlamaForCausalLM): 1,100,048,384. Embeddings 32000*2048 =
  // 65,536,000; a layer: q, o 2*2048*2048 = 8,388,608, k, v 2*2048*256 (4 KV heads
  // of 64) = 1,048,576, gate, up, down 3*2048*5632 = 34,603,008, 2 RMS norms
  // 4,096: 44,044,288, x22 = 968,974,336; norm 2,048; lm_head (untied) 65,536,000.
  const Network net = Zoo("tinyllama-1.1b");
  EXPECT_EQ(net.ParamCount(), 1100048384);
  // Grouped-query attention: 32 query heads over 4 key/value heads.
  EXPECT_EQ(net.layer(net.LayerId("layer0.attn.scores")).output_shape, Shape({32, 2048, 2048}));
  EXPECT_EQ(net.layer(net.LayerId("layer0.attn.k_heads")).output_shape, Shape({4, 2048, 64}));
}

TEST(TransformerZoo, SequenceLengthIsAnOption) {
  EXPECT_EQ(Zoo("gpt2", 256).input_shape(), Shape::Vector(256));
  EXPECT_EQ(Zoo("gpt2", 256).ParamCount(), 124439808);  // parameters do not depend on it
  EXPECT_THROW(Zoo("gpt2", 1025), UsageError);          // beyond its 1024 positions
  EXPECT_THROW(Zoo("resnet50", 128), UsageError);       // not a sequence model
  // BERT gathers 15% of the positions for the masked-LM head: 20 of 128, 77 of 512.
  EXPECT_EQ(Zoo("bert-base").layer(Zoo("bert-base").LayerId("mlm.gather")).output_shape,
            Shape({20, 768}));
  const Network long_bert = Zoo("bert-base", 512);
  EXPECT_EQ(long_bert.layer(long_bert.LayerId("mlm.gather")).output_shape, Shape({77, 768}));
}

// bert-large on unpadded sequences (ZooOptions::mean_tokens): built at the
// rounded mean, the masked-LM head on the positions given.
Network Unpadded(double mean, double mean_square, int64_t head_positions) {
  ZooOptions options;
  options.seq_len = 512;
  options.mean_tokens = mean;
  options.mean_square_tokens = mean_square;
  options.head_positions = head_positions;
  return ZooNetwork("bert-large", options);
}

TEST(TransformerZoo, UnpaddedBertIsBuiltAtTheMeanWithTheHeadGiven) {
  const Network net = Unpadded(254.43, 90000, 38);
  EXPECT_EQ(net.input_shape(), Shape::Vector(254));  // round(254.43)
  EXPECT_EQ(net.layer(net.LayerId("mlm.gather")).output_shape, Shape({38, 1024}));
  EXPECT_DOUBLE_EQ(net.mean_square_tokens, 90000);
  EXPECT_EQ(net.ParamCount(), 336226108);  // the same parameters
  // Without a mean square, every sequence has the mean length: mean^2.
  EXPECT_DOUBLE_EQ(Unpadded(254.43, 0, 0).mean_square_tokens, 254.43 * 254.43);
  // Without --head-positions, 15% of the (rounded mean) tokens, rounded up: 39 of 254.
  const Network defaults = Unpadded(254.43, 0, 0);
  EXPECT_EQ(defaults.layer(defaults.LayerId("mlm.gather")).output_shape, Shape({39, 1024}));
}

TEST(TransformerZoo, UnpaddedOptionsOutOfRangeAreUsageErrors) {
  ZooOptions gpt;
  gpt.mean_tokens = 100;
  EXPECT_NO_THROW(ZooNetwork("gpt2", gpt));  // any sequence model
  gpt.head_positions = 10;
  EXPECT_THROW(ZooNetwork("gpt2", gpt), UsageError);  // GPT-2 has no masked-LM head
  ZooOptions image;
  image.mean_tokens = 100;
  EXPECT_THROW(ZooNetwork("resnet50", image), UsageError);  // not a sequence model
  EXPECT_THROW(ZooNetwork("vit-b16", image), UsageError);   // its tokens are fixed
  EXPECT_THROW(Unpadded(0.5, 0, 0), UsageError);            // below 1 token
  EXPECT_THROW(Unpadded(513, 0, 0), UsageError);            // above --seq-len 512
  EXPECT_THROW(Unpadded(-3, 0, 0), UsageError);
  // The mean square lies in [mean^2, mean x 512]: 64,735 .. 130,268 at 254.43.
  EXPECT_THROW(Unpadded(254.43, 60000, 0), UsageError);
  EXPECT_THROW(Unpadded(254.43, 131000, 0), UsageError);
  EXPECT_NO_THROW(Unpadded(254.43, 130000, 0));
  EXPECT_THROW(Unpadded(0, 90000, 0), UsageError);     // a mean square needs the mean
  EXPECT_THROW(Unpadded(254.43, 0, 255), UsageError);  // more head positions than tokens
  EXPECT_THROW(Unpadded(254.43, 0, -1), UsageError);
  // Without seq_len the mean is bounded by the model's longest sequence
  // (512), not by its default length (128).
  ZooOptions no_length;
  no_length.mean_tokens = 300;
  EXPECT_EQ(ZooNetwork("bert-large", no_length).input_shape(), Shape::Vector(300));
}

// Multiply-add FLOPs (2 per multiply-add) of the matrix products of one pass:
// dense and batched-matmul layers without their bias adds and scale multiplies.
double MatrixFlops(const Network& net, const NetworkCost& cost, Pass pass) {
  double flops = 0;
  for (int id = 0; id < net.size(); ++id) {
    const Layer& layer = net.layer(id);
    const double out = static_cast<double>(layer.output_shape.elements());
    const double f = cost.layers[static_cast<size_t>(id)].pass(pass).flops.per_sample;
    if (layer.kind == LayerKind::kDense) {
      const bool bias = layer.dense.bias && pass != Pass::kBackwardData;
      flops += f - (bias ? out : 0);
    } else if (layer.kind == LayerKind::kBatchedMatmul) {
      // The scale multiplies the output forward and dy in the gradient of a:
      // every score, mean_square_tokens per {T, T} on unpadded sequences.
      const Shape& y = layer.output_shape;
      const double scores =
          net.mean_square_tokens > 0
              ? out * net.mean_square_tokens / static_cast<double>(y.dims[1] * y.dims[2])
              : out;
      const bool scaled = layer.matmul.scale != 1.0 && pass != Pass::kBackwardWeights;
      flops += f - (scaled ? scores : 0);
    }
  }
  return flops;
}

TEST(TransformerZoo, Gpt2MatchesNarayananFormula) {
  // Narayanan et al. 2021 (Megatron-LM, SC'21), eq. 3 without recomputation:
  // a training iteration of B sequences takes 72*B*s*l*h^2*(1 + s/(6h) +
  // V/(12*l*h)) FLOPs in its matrix products (forward 24*l*h^2*s + 4*l*s^2*h +
  // 2*s*h*V, backward twice that). GPT-2 small, s = 1024, l = 12, h = 768, V = 50257.
  const double s = 1024, l = 12, h = 768, V = 50257;
  const double narayanan = 72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  const Network net = Zoo("gpt2");
  const NetworkCost cost = CountCost(net);
  const double matrix = MatrixFlops(net, cost, Pass::kForward) +
                        MatrixFlops(net, cost, Pass::kBackwardData) +
                        MatrixFlops(net, cost, Pass::kBackwardWeights);
  EXPECT_NEAR(matrix / narayanan, 1.0, 1e-12);
  // Everything else (softmax, norms, GELU, dropout, residuals, embeddings,
  // biases, the loss) adds little: 2.4% by the counts of cost.h.
  const double all = cost.TrainFlopsPerSample();
  EXPECT_GT(all / narayanan, 1.0);
  EXPECT_LT(all / narayanan, 1.05);
}

TEST(TransformerZoo, UnpaddedBertLargeMatrixFlopsByHand) {
  // bert-large (l = 24, d = 1024, V = 30522) on unpadded sequences of mean
  // T = 254 tokens and mean square S = 90,000, the masked-LM head on M = 38
  // positions. Forward matrix FLOPs per sequence: per layer the Q, K, V, out
  // and FFN dense layers 2*(4 + 8)*d^2 per token = 24*d^2*T, the scores and
  // the context 2*d per score each, summed over sequences 2*d*L^2: 4*d*S;
  // the head's transform 2*d^2*M and decoder 2*d*V*M; the pooler 2*d^2 and
  // next-sentence classifier 2*d*2 on one token:
  //   24*(24*1024^2*254 + 4*1024*90000) + 2*1024^2*38 + 2*1024*30522*38
  //   + 2*1024^2 + 4*1024 = 164,715,360,256.
  // Training: every input of these products needs a gradient, so each dense
  // layer runs its product again for dx and for dW and each batched matmul
  // twice (da, db): 3x forward = 494,146,080,768.
  const Network net = Unpadded(254, 90000, 38);
  const NetworkCost cost = CountCost(net, Optimizer::kAdam);
  const double forward = MatrixFlops(net, cost, Pass::kForward);
  EXPECT_NEAR(forward / 164715360256.0, 1.0, 1e-12);
  const double training = forward + MatrixFlops(net, cost, Pass::kBackwardData) +
                          MatrixFlops(net, cost, Pass::kBackwardWeights);
  EXPECT_NEAR(training / 494146080768.0, 1.0, 1e-12);
  // The fused kernel keeps those FLOPs and adds the backward's recomputed
  // scores (2*d*S per layer: 24*2*1024*90000 = 4,423,680,000) and softmax.
  const NetworkCost fused = CountCost(net, Optimizer::kAdam, AttentionKernel::kFused);
  EXPECT_GT(fused.TrainFlopsPerSample() - cost.TrainFlopsPerSample(), 4423680000.0);
}

TEST(TransformerZoo, FusedAttentionReadsTheHeadsInPlaceSoSplitAndMergeAreViews) {
  // bert-base at 128 tokens: each layer splits Q, K and V into 12 heads and
  // merges the context back. Unfused, each is a copy: read and write the
  // {T, 768} tensor, 2 x 128 x 768 = 196,608 elements forward. Fused, the
  // kernel reads the heads strided: nothing moves, in any pass.
  const Network net = ZooNetwork("bert-base", ZooOptions{128});
  const NetworkCost unfused = CountCost(net, Optimizer::kAdam);
  const NetworkCost fused = CountCost(net, Optimizer::kAdam, AttentionKernel::kFused);
  int splits = 0, merges = 0;
  for (int id = 0; id < net.size(); ++id) {
    const LayerKind kind = net.layer(id).kind;
    if (kind != LayerKind::kSplitHeads && kind != LayerKind::kMergeHeads) continue;
    (kind == LayerKind::kSplitHeads ? splits : merges) += 1;
    const LayerCost& u = unfused.layers[static_cast<size_t>(id)];
    EXPECT_DOUBLE_EQ(u.forward.elements_read.per_sample + u.forward.elements_written.per_sample,
                     196608.0)
        << net.layer(id).name;
    for (Pass pass : {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeights}) {
      const PassCost& f = fused.layers[static_cast<size_t>(id)].pass(pass);
      EXPECT_DOUBLE_EQ(f.BytesRead(1, 2, 2) + f.BytesWritten(1, 2, 2), 0.0) << net.layer(id).name;
    }
  }
  EXPECT_EQ(splits, 12 * 3);
  EXPECT_EQ(merges, 12);
}

TEST(TransformerZoo, UnpaddedSequencesOfOneLengthCountAsPaddedOnes) {
  // Every sequence of 200 tokens, unpadded, is the padded 200-token network
  // (the same head positions): the same counts and memory, pass by pass.
  ZooOptions padded;
  padded.seq_len = 200;
  padded.head_positions = 30;
  const Network a = ZooNetwork("bert-base", padded);
  ZooOptions unpadded;
  unpadded.seq_len = 512;
  unpadded.mean_tokens = 200;
  unpadded.head_positions = 30;
  const Network b = ZooNetwork("bert-base", unpadded);
  EXPECT_DOUBLE_EQ(b.mean_square_tokens, 40000);
  for (AttentionKernel kernel : {AttentionKernel::kUnfused, AttentionKernel::kFused}) {
    const PassCost x = CountCost(a, Optimizer::kAdam, kernel).total.Step();
    const PassCost y = CountCost(b, Optimizer::kAdam, kernel).total.Step();
    EXPECT_DOUBLE_EQ(x.flops.per_sample, y.flops.per_sample);
    EXPECT_DOUBLE_EQ(x.elements_read.per_sample, y.elements_read.per_sample);
    EXPECT_DOUBLE_EQ(x.elements_written.per_sample, y.elements_written.per_sample);
    EXPECT_DOUBLE_EQ(EstimateTrainingMemory(a, 8, Optimizer::kAdam, 2, 4, kernel).total_bytes(),
                     EstimateTrainingMemory(b, 8, Optimizer::kAdam, 2, 4, kernel).total_bytes());
  }
}

TEST(TransformerZoo, UnpaddedAttentionTensorsScaleWithTheMeanSquare) {
  // bert-base (12 layers, H = 12), T = 200 tokens. Unfused, each layer keeps
  // for the backward pass the softmax's output and the dropout's output and
  // mask (a quarter element per element): 2.25 {H, T, T} tensors. Raising the
  // mean square from 200^2 to 50,000 adds 12 x 2.25 x 12 x 10,000 = 3,240,000
  // elements per sequence, 2 bytes each, x 8 sequences = 51,840,000 bytes.
  ZooOptions options;
  options.seq_len = 512;
  options.mean_tokens = 200;
  const Network even = ZooNetwork("bert-base", options);
  options.mean_square_tokens = 50000;
  const Network spread = ZooNetwork("bert-base", options);
  const double added = EstimateTrainingMemory(spread, 8, Optimizer::kAdam, 2, 4).activation_bytes -
                       EstimateTrainingMemory(even, 8, Optimizer::kAdam, 2, 4).activation_bytes;
  EXPECT_NEAR(added, 51840000.0, 1e-3);
  // Fused, nothing of {H, T, T} is kept: the same memory.
  EXPECT_DOUBLE_EQ(
      EstimateTrainingMemory(spread, 8, Optimizer::kAdam, 2, 4, AttentionKernel::kFused)
          .activation_bytes,
      EstimateTrainingMemory(even, 8, Optimizer::kAdam, 2, 4, AttentionKernel::kFused)
          .activation_bytes);
  // Traffic: a softmax reads and writes only {H, T, T} tensors: 1.25x.
  const int softmax = even.LayerId("layer0.attn.softmax");
  const double r = 50000.0 / 40000.0;
  EXPECT_DOUBLE_EQ(
      CountCost(spread).layers[static_cast<size_t>(softmax)].forward.elements_read.per_sample,
      r * CountCost(even).layers[static_cast<size_t>(softmax)].forward.elements_read.per_sample);
}

TEST(TransformerZoo, Gpt2MediumMatchesKaplanForward) {
  // Kaplan et al. 2020, table 1: forward FLOPs per token C = 2N + 2*l*n_ctx*d,
  // N the non-embedding parameters, attention counted over the causal half of
  // the context, the de-embedding (2*d*V) listed apart. fitspeed computes the
  // full T x T scores (as unfused kernels do): 2*l*n_ctx*d more.
  const double l = 24, d = 1024, ctx = 1024, V = 50257;
  const Network net = Zoo("gpt2-medium");
  // N: all parameters but the token and position embeddings.
  const double n = static_cast<double>(net.ParamCount()) - (V + 1024) * d;
  const double kaplan = 2 * n + 2 * l * ctx * d;
  const double forward_per_token = CountCost(net).ForwardFlopsPerSample() / ctx;
  const double comparable = forward_per_token - 2 * d * V - 2 * l * ctx * d;
  EXPECT_NEAR(comparable / kaplan, 1.0, 0.01);  // elementwise work is under 1%
}

TEST(TransformerZoo, Gpt2ActivationsMatchKorthikanti) {
  // Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
  // Transformer Models", sec. 4.1): a layer keeps s*b*h*(34 + 5*a*s/h) bytes
  // with 2-byte activations and 1-byte dropout masks: 32 bytes of 2-byte
  // tensors (16 elements) and 2 mask bytes per s*h, 4 bytes of 2-byte tensors
  // (2 elements) and 1 mask byte per a*s^2. With 4-byte activations, as
  // EstimateTrainingMemory(..., 4, 4) counts: 66*s*h + 9*a*s^2 bytes per layer.
  // Outside the layers, per sequence: the token ids (s), the embedding
  // dropout's mask (s*h bytes), ln_f's and lm_head's inputs (2*s*h) and the
  // loss's probabilities (s*V).
  const double s = 1024, h = 768, a = 12, l = 12, V = 50257;
  const double layers = l * (66 * s * h + 9 * a * s * s);
  const double outside = 4 * s + s * h + 4 * 2 * s * h + 4 * s * V;
  const MemoryEstimate m = EstimateTrainingMemory(Zoo("gpt2"), 1, Optimizer::kAdam, 4, 4);
  EXPECT_NEAR(m.activation_bytes / (layers + outside), 1.0, 1e-12);
}

TEST(TransformerZoo, Gpt2CheckpointSegmentsAreItsSubBlocks) {
  // One segment per layer before the blocks (wte, wpe, the embedding
  // dropout: a chain, cut after each), two per pre-norm block (the residual
  // stream is the only live tensor after add1 and after add2), then ln_f,
  // lm_head and the loss.
  const Network net = Zoo("gpt2", 1024);
  const std::vector<CheckpointSegment> segments = CheckpointSegments(net);
  ASSERT_EQ(segments.size(), 3u + 24u + 3u);
  for (int i = 0; i < 12; ++i) {
    const CheckpointSegment& attention = segments[3 + 2 * static_cast<size_t>(i)];
    const CheckpointSegment& mlp = segments[4 + 2 * static_cast<size_t>(i)];
    const std::string prefix = "layer" + std::to_string(i) + ".";
    EXPECT_EQ(net.layer(attention.first).name, prefix + "norm1");
    EXPECT_EQ(net.layer(attention.last).name, prefix + "add1");
    EXPECT_EQ(net.layer(mlp.first).name, prefix + "norm2");
    EXPECT_EQ(net.layer(mlp.last).name, prefix + "add2");
  }
  EXPECT_EQ(segments.front().first, 1);
  EXPECT_EQ(segments.back().last, net.size() - 1);
}

// Bytes per sequence a pre-norm transformer's sub-blocks save (4-byte activations,
// 1-byte dropout masks), their input (the cut before them) not included. The
// attention sub-block: the input of Q, K, V (s h), Q and K for the scores
// (2 s h), the softmax's output (a s^2), the dropout's mask (a s^2 / 4) and
// output (a s^2, read with V, s h, by the context), the output projection's
// input (s h), its dropout's mask (s h / 4): 21 s h + 9 a s^2 bytes. The MLP
// sub-block: fc1's input (s h), GELU's input (4 s h), fc2's input (4 s h),
// the mask (s h / 4): 37 s h. With the two normalized inputs (2 x 4 s h) that
// is Korthikanti's 66 s h + 9 a s^2 of Gpt2ActivationsMatchKorthikanti.
double AttentionSubBlockBytes(double s, double h, double a) { return 21 * s * h + 9 * a * s * s; }

TEST(TransformerZoo, RecomputationKeepsTheCutsAndTheLargestSegment) {
  // Full recomputation (Korthikanti et al. 2022, sec. 4.1: only each layer's
  // input kept), per sequence, 4-byte activations.
  // GPT-2 small at 1024 tokens: kept at the cuts, the token ids (s), wte's,
  // wpe's and the embedding dropout's outputs, the 24 sub-blocks' outputs and
  // ln_f's (28 of s*h) and lm_head's logits (s*V, the loss's input); the
  // largest segment is the loss's, its probabilities (4 s V bytes), larger
  // than an attention sub-block.
  {
    const double s = 1024, h = 768, a = 12, V = 50257;
    const double loss = 4 * s * V;
    ASSERT_GT(loss, AttentionSubBlockBytes(s, h, a));
    const Network net = Zoo("gpt2", 1024);
    const MemoryEstimate kept =
        EstimateTrainingMemory(net, 1, Optimizer::kAdam, 4, 4, AttentionKernel::kUnfused, true);
    EXPECT_NEAR(kept.activation_bytes / (4 * (s + 28 * s * h + s * V) + loss), 1.0, 1e-12);
    // Without recomputation: 12 (66 s h + 9 a s^2) and the rest; the
    // gradient peak does not change.
    const MemoryEstimate all = EstimateTrainingMemory(net, 1, Optimizer::kAdam, 4, 4);
    EXPECT_GT(all.activation_bytes, 2.5 * kept.activation_bytes);
    EXPECT_DOUBLE_EQ(all.activation_gradient_bytes, kept.activation_gradient_bytes);
  }
  // BERT-large at 512 tokens, post-norm: four cuts per block (after add1,
  // norm1, add2, norm2: each output is then the only live tensor), five
  // embedding layers, and in the heads one segment from the masked-LM head to
  // the pooler's token (the encoder's output stays live until then), then
  // pooler.dense, pooler.tanh, the classifier and its loss: 5 + 96 + 5.
  // Kept at the cuts: the ids (s), 5 + 96 outputs of s*h, the pooler's three
  // outputs of h and the classifier's 2. The largest segment is an attention
  // sub-block [q .. add1]: as above less the Q/K/V input (the cut before it)
  // and the output projection's input counted once: Q and K (2 s h), V (s h),
  // the softmax output, mask and dropout output (2.25 a s^2), the merged heads
  // (s h), the mask (s h / 4): 17 s h + 9 a s^2 bytes, more than the MLP's
  // 33 s h or the heads' (77 x 30522 probabilities and 4 x 77 x 1024 elements).
  {
    const double s = 512, h = 1024, a = 16;
    const Network net = Zoo("bert-large", 512);
    EXPECT_EQ(CheckpointSegments(net).size(), 5u + 96u + 5u);
    const MemoryEstimate kept =
        EstimateTrainingMemory(net, 1, Optimizer::kAdam, 4, 4, AttentionKernel::kUnfused, true);
    const double attention = 17 * s * h + 9 * a * s * s;
    ASSERT_GT(attention, 33 * s * h);
    EXPECT_NEAR(kept.activation_bytes / (4 * (s + 101 * s * h + 3 * h + 2) + attention), 1.0,
                1e-12);
  }
}

}  // namespace
}  // namespace fitspeed
