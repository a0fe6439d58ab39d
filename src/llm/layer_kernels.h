// The kernels of one transformer layer on one GPU of a split, timed on a
// device: private to the library, used by the llm layer (split.cc,
// planner.cc) and by the evidence's H200 check (gpu_llm_check.cc), which
// times the same kernels; tested through tests/llm. docs/llm.md, "The split
// model", lists every kernel.
#ifndef FITSPEED_SRC_LLM_LAYER_KERNELS_H_
#define FITSPEED_SRC_LLM_LAYER_KERNELS_H_

#include <array>
#include <cstdint>
#include <string>

#include "fitspeed/device/device.h"
#include "fitspeed/llm/split.h"
#include "fitspeed/llm/transformer.h"

namespace fitspeed {

// One layer's dimensions on one GPU: the micro-batch's tokens on this GPU
// (b x s / cp), widths split by tp.
struct LayerShape {
  double hidden = 0;
  double head_dim = 0;  // of the score product (query . key); MLA: nope + rope
  double v_dim = 0;     // of the value product; == head_dim but under MLA
  double heads = 0;     // query heads on this GPU (heads / tp)
  double kv_heads = 0;  // key/value heads on this GPU (at least 1: Megatron replicates)
  double q_width = 0;   // heads x head_dim
  double kv_width = 0;  // kv_heads x head_dim
  double ffn = 0;       // feed-forward inner size on this GPU: the dense block's (ffn / tp)
  double micro_batch = 0;
  double seq = 0;        // the whole sequence
  double seq_local = 0;  // this GPU's part of it (seq / cp)
  double tokens = 0;     // micro_batch x seq_local
  int tp = 1, cp = 1, ep = 1;
  int etp = 1;  // expert tensor parallel: each expert's inner size split over etp
  bool gated = false;
  bool dropout =
      false;  // GPT/BERT-style (LayerNorm, plain feed-forward): dropout after attention and MLP
  bool causal = true;
  bool rope = false;  // rotary positions: applied to Q and K in each layer
  double window = 0;  // sliding-window layer: the keys each query meets (0: the whole sequence)
  bool qk_norm = false;
  bool sandwich_norms = false;
  bool rms_norm = false;  // the model's norms are RMSNorm (else LayerNorm)
  // The framework's (LlmTraining::kernels, separate_projections): element-wise
  // work as eager PyTorch's ops, q/k/v and gate/up as separate products (in
  // models with rotary positions: the Llama lineage's modules; ApplyTrainingToShape).
  bool eager = false;
  bool separate_projections = false;
  // Multi-head latent attention (TransformerConfig::latent), whole (not split by tp).
  double q_rank = 0, kv_rank = 0, rope_dim = 0;
  // Mixture of experts (an MoE layer; 0 experts: a dense layer).
  double experts = 0;
  double top_k = 0;
  double expert_ffn = 0;              // one expert's inner size on this GPU (ffn / etp)
  double shared_ffn = 0;              // the shared experts' inner size on this GPU (/ tp)
  double capacity_factor = 0;         // 0: dropless
  double imbalance = 1;               // routed tokens on the busiest expert rank over the mean
  bool activation_fp8_store = false;  // LlmTraining::activation_fp8_store
  // The routed token-expert pairs this GPU's experts take per micro-batch
  // relative to T x top_k: etp / tp of the group's tokens, times the busiest
  // rank's share (the imbalance, capped by the capacity factor).
  double RoutedShare() const;
};

// The shape of one layer of `kind` (LayerKindAt); without a kind, the
// model's largest (an MoE layer when it has one).
LayerShape MakeLayerShape(const TransformerConfig& model, int64_t seq_len, int64_t micro_batch,
                          int tp, int cp, int ep, int etp, TransformerLayerKind kind);
LayerShape MakeLayerShape(const TransformerConfig& model, int64_t seq_len, int64_t micro_batch,
                          int tp, int cp, int ep = 1);
// The training's settings a layer's kernels and memory depend on: the
// framework's kernels and projections, the MoE capacity factor and
// imbalance, and the FP8 activation store.
void ApplyTrainingToShape(LayerShape& shape, const LlmTraining& training);

// Times kernels on one device in one matrix format.
struct KernelTimer {
  const EfficiencyCurve* matrix = nullptr;  // the curve the matrix products run on
  double peak = 0;                          // their peak, FLOP/s
  double curve_size =
      1;  // the curve is looked up at F x curve_size (the same F/peak as its own format)
  double matrix_size_scale = 1;
  const EfficiencyCurve* memory = nullptr;
  const EfficiencyCurve* normalization = nullptr;
  double bandwidth = 0;
  double memory_scale = 1;
  double dispatch_s = 0;
  bool fp8_casts = false;      // FP8 products cast their 16-bit input first
  double cast_bytes = 3.0;     // bytes that cast moves an element (MakeKernelTimer)
  double operand_bytes = 1.0;  // an element of a cast operand
  // Attention runs in 16 bits whatever the format of the layers' products
  // (Transformer Engine's FP8 recipe casts the linear layers' inputs only):
  // the device's 16-bit curve and peak, and its fused-attention curves
  // (Device::AttentionEfficiency) read at the same size scale.
  const EfficiencyCurve* matrix16 = nullptr;
  double peak16 = 0;
  const EfficiencyCurve* attention_forward = nullptr;
  const EfficiencyCurve* attention_backward = nullptr;
  // The device's measured achievable matmul rates (Device::achievable16,
  // achievable_fp8), FLOP/s: no product of the format runs faster than
  // `ceiling`, no 16-bit product or attention kernel faster than
  // `ceiling16`; 0: none published (the curve alone).
  double ceiling = 0, ceiling16 = 0;

  // `batch` products of m x n (reduction k) in one kernel.
  double Gemm(double m, double n, double k, double batch = 1) const;
  // The same in 16 bits (no cast): the unfused attention's batched products.
  double Gemm16(double m, double n, double k, double batch = 1) const;
  // One fused attention kernel of `flops`, forward or backward, in 16 bits;
  // m x n x k the dimensions of its products (the tensor curve's shape term
  // where the device has no attention curve).
  double Attention(double flops, bool backward, double m, double n, double k) const;
  double MemoryTime(double bytes) const;         // element-wise
  double NormalizationTime(double bytes) const;  // row reductions: norms, softmax
};

KernelTimer MakeKernelTimer(const Device& device, MatrixFormat format, const LlmCalibration& cal);

// Flash attention over `batch_heads` (micro-batch x heads) of `seq_q` query
// rows against `seq_kv` keys, scores over `head_dim` and values over `v_dim`
// (0: head_dim; MLA's differ): the score and value products of the unmasked
// query-key pairs (AttentionPairs: half of them when causal, s w - w^2 / 2 in
// a sliding window of `window` keys) in one kernel; the backward pass
// recomputes the scores, 2.5x the forward FLOPs. Timed in 16 bits on the
// device's attention curves (KernelTimer::Attention). `chunks` > 1: ring
// attention over that many ranks, the work split into as many kernels of
// equal FLOPs (Transformer Engine's load-balanced causal ring: the local
// causal block, then a half block per received K/V chunk), each timed at its
// own size.
struct FlashAttentionTimes {
  double forward_s = 0, backward_s = 0;
};
FlashAttentionTimes TimeFlashAttention(const KernelTimer& timer, double batch_heads, double seq_q,
                                       double seq_kv, double head_dim, bool causal,
                                       double chunks = 1, double window = 0, double v_dim = 0);
// Query-key pairs one head computes: seq_q x seq_kv without a mask; causal,
// seq_q / seq_kv of the sequence's (seq_kv w - w^2 / 2, w = min(window,
// seq_kv), window 0 for the whole sequence).
double AttentionPairs(double seq_q, double seq_kv, bool causal, double window);

// One layer's kernels per micro-batch (no communication): the device's time
// for each pass and the kernels the host issues for it. A pass takes the
// longer of the two: the host's queue runs ahead of the device until it
// starves it (docs/llm.md, "Host dispatch").
struct LayerTimes {
  double forward_gpu_s = 0, forward_kernels = 0;
  double backward_gpu_s = 0, backward_kernels = 0;
  // The attention core (scores, softmax, dropout, values): what selective
  // recomputation runs again and what hides ring attention's exchanges.
  double attention_fwd_gpu_s = 0, attention_fwd_kernels = 0;
  double attention_bwd_gpu_s = 0;
  bool selective_recompute = false;  // the core holds recomputable score tensors (no flash)
  // The forward kernels of what selective recomputation may rerun
  // (RecomputeModule), the attention core's above: the device's time and
  // how many the host issues.
  struct Part {
    double gpu_s = 0, kernels = 0;
  };
  Part norms, moe_act, mla_up_proj, mlp, moe, shared_experts;
  // The products of the attention's ([0]) and the dense feed-forward's ([1])
  // column-parallel input projections (QKV, MLA's down projections; the first
  // feed-forward product, an MoE layer's shared experts') and row-parallel
  // output projections (the attention's output projection; the last
  // feed-forward product): forward, input gradient and weight gradient.
  // Beside a column's forward product sequence parallelism gathers its input
  // (Transformer Engine's userbuffers overlap it, LlmSplit::tp_comm_overlap),
  // beside a row's it reduce-scatters the output; backward, beside a
  // column's input-gradient product sequence parallelism gathers its input
  // again, beside its weight gradient the input gradient is all-reduced or
  // reduce-scattered (Megatron's LinearWithGradAccumulationAndAsyncCommunication,
  // Transformer Engine's Linear and LayerNormLinear), and before a row's
  // input-gradient product its output gradient is gathered. 0 where there is
  // none (a frozen weight's gradient, an MoE layer without shared experts).
  struct LinearTimes {
    double forward_s = 0, dgrad_s = 0, wgrad_s = 0;
  };
  std::array<LinearTimes, 2> column{};
  std::array<LinearTimes, 2> row{};
  // The forward time of the modules `modules` names (core_attn only when
  // the core holds score tensors).
  Part Rerun(unsigned modules) const;
};

LayerTimes TimeLayer(const LayerShape& shape, const KernelTimer& timer, const LlmTraining& training,
                     bool sequence_parallel);

// The first stage's embedding and the last stage's final norm, output
// projection and loss, forward and backward, per micro-batch.
struct HeadTimes {
  double embedding_s = 0;
  double output_s = 0;
  double mtp_s =
      0;  // one multi-token prediction module less its layer (its head and loss included)
};

HeadTimes TimeHead(const LayerShape& shape, double padded_vocab, const KernelTimer& timer,
                   bool sequence_parallel, bool lora = false);

// Activation bytes one layer holds for the backward pass (split.h,
// LayerActivationBytes). `frozen_mlp`: the feed-forward block's weights are
// frozen (LoRA on the attention's matrices): its two products need no
// weight gradient, so their inputs (the block's input, 2 T h, and the
// activation's output, 2 T f) are not kept; the activation's input is.
double LayerActivationBytesOf(const LayerShape& shape, bool sequence_parallel, Recompute recompute,
                              bool flash_attention, bool frozen_mlp = false,
                              unsigned recompute_modules = kRecomputeCoreAttn);

// LoRA adapter parameters of one layer on one GPU: rank x (inputs + outputs)
// of the fused QKV and the output projection, split by tp.
double LoraParametersPerLayer(const LayerShape& shape, int64_t rank);

// Megatron's vocabulary padding: a multiple of 128 x tp.
double PaddedVocab(const TransformerConfig& model, int tp);

// The kinds of layer (TransformerLayerKind) as indices: sliding + 2 x moe.
constexpr int kTransformerKinds = 4;
inline int KindIndex(TransformerLayerKind k) { return (k.sliding ? 1 : 0) + (k.moe ? 2 : 0); }
inline TransformerLayerKind KindAtIndex(int i) {
  TransformerLayerKind k;
  k.sliding = (i & 1) != 0;
  k.moe = (i & 2) != 0;
  return k;
}

// What every split of one model, cluster and training shares: computed once
// by the planner.
struct LlmStepContext {
  TransformerParameters params;
  std::array<LayerParameters, kTransformerKinds> kind_params;  // one layer of each kind
  std::array<bool, kTransformerKinds> kinds_present{};  // the model's layers' and MTP's kinds
  int64_t mtp_layers = 0;                               // multi-token prediction modules trained
  double flops_per_token = 0;  // model FLOPs per token trained (3x forward; LoRA 2x)
  KernelTimer timer;
  std::string framework_note;  // the first of every step's notes (split.cc)
};
LlmStepContext MakeStepContext(const TransformerConfig& model, const LlmCluster& cluster,
                               const LlmTraining& training, const LlmCalibration& calibration);

// Every kind of layer's shape and kernels for one (tp, cp, ep, etp,
// micro-batch, sequence parallel), and the head's: what the planner caches.
struct ModelLayerTimes {
  std::array<LayerShape, kTransformerKinds> shapes;
  std::array<LayerTimes, kTransformerKinds> times;
  HeadTimes head;
};
ModelLayerTimes TimeModelLayers(const TransformerConfig& model, const LlmStepContext& context,
                                const LlmTraining& training, const LlmSplit& split);

// What a pipeline stage (a GPU's virtual chunks together) holds, for the
// distinct stages of a split: `index` the first stage of its content (the
// one holding the most micro-batches in flight), `count` how many stages hold it.
struct PipelineStage {
  std::array<double, kTransformerKinds> layers{};  // transformer layers of each kind
  bool embedding = false, loss = false;
  double mtp = 0;  // multi-token prediction modules
  int index = 0, count = 1;
  double LayerCount() const { return layers[0] + layers[1] + layers[2] + layers[3]; }
};
// The split's stages (even, or as its layout says; the multi-token
// prediction modules on the last unless the layout places them): every one
// in order, or with `distinct` one per content.
std::vector<PipelineStage> PipelineStagesOf(const TransformerConfig& model, const LlmSplit& split,
                                            int64_t mtp_layers, bool distinct);

// ModelLlmStep's body from the layers' times and the split's distinct
// stages; no validation. Its memory is the most loaded stage's, with
// stage_totals left empty unless `every_stage`.
LlmStep ModelLlmStepWith(const TransformerConfig& model, const LlmCluster& cluster,
                         const LlmTraining& training, const LlmSplit& split,
                         const LlmCalibration& calibration, const LlmStepContext& context,
                         const ModelLayerTimes& layers, const std::vector<PipelineStage>& stages,
                         bool every_stage = true);
// Memory per GPU over `stages` (distinct ones, or every one for stage_totals).
LlmMemory MemoryPerGpuWith(const TransformerConfig& model, const LlmStepContext& context,
                           const LlmCluster& cluster, const LlmTraining& training,
                           const LlmSplit& split, const ModelLayerTimes& layers,
                           const std::vector<PipelineStage>& stages);

}  // namespace fitspeed

#endif  // FITSPEED_SRC_LLM_LAYER_KERNELS_H_
