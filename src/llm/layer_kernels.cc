// The kernels of one transformer layer (layer_kernels.h).
#include "llm/layer_kernels.h"

#include <algorithm>
#include <cmath>

namespace fitspeed {

LayerShape MakeLayerShape(const TransformerConfig& m, int64_t seq_len, int64_t micro_batch, int tp,
                          int cp, int ep, int etp, TransformerLayerKind kind) {
  LayerShape s;
  s.hidden = static_cast<double>(m.hidden);
  const LatentAttention& mla = m.latent;
  const bool latent = mla.kv_rank > 0;
  s.head_dim = latent ? static_cast<double>(mla.nope_dim + mla.rope_dim)
                      : static_cast<double>(
                            m.head_dim > 0 ? m.head_dim : m.hidden / std::max<int64_t>(1, m.heads));
  s.v_dim = latent ? static_cast<double>(mla.v_dim) : s.head_dim;
  s.heads = static_cast<double>(m.heads) / tp;
  s.kv_heads = latent
                   ? s.heads
                   : std::max(1.0, static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) / tp);
  s.q_width = s.heads * s.head_dim;
  s.kv_width = s.kv_heads * s.head_dim;
  const int64_t dense_ffn = m.dense_ffn_hidden > 0 ? m.dense_ffn_hidden : m.ffn_hidden;
  s.ffn = static_cast<double>(kind.moe ? m.ffn_hidden : dense_ffn) / tp;
  s.micro_batch = static_cast<double>(micro_batch);
  s.seq = static_cast<double>(seq_len);
  s.seq_local = s.seq / cp;
  s.tokens = s.micro_batch * s.seq_local;
  s.tp = tp;
  s.cp = cp;
  s.ep = ep;
  s.etp = etp > 0 ? etp : tp;
  s.gated = m.feed_forward == FeedForwardKind::kGated;
  s.dropout = m.dropout;
  s.causal = m.causal;
  s.rope = m.positions == PositionEncoding::kRope;
  s.window = kind.sliding ? static_cast<double>(m.sliding_window) : 0.0;
  s.qk_norm = m.qk_norm;
  s.sandwich_norms = m.sandwich_norms;
  s.rms_norm = m.norm == NormKind::kRmsNorm;
  if (latent) {
    s.q_rank = static_cast<double>(mla.q_rank);
    s.kv_rank = static_cast<double>(mla.kv_rank);
    s.rope_dim = static_cast<double>(mla.rope_dim);
  }
  if (kind.moe && m.experts > 1) {
    s.experts = static_cast<double>(m.experts);
    s.top_k = static_cast<double>(m.top_k);
    s.expert_ffn = static_cast<double>(m.ffn_hidden) / s.etp;
    s.shared_ffn = static_cast<double>(m.shared_experts * m.ffn_hidden) / tp;
  }
  return s;
}

LayerShape MakeLayerShape(const TransformerConfig& m, int64_t seq_len, int64_t micro_batch, int tp,
                          int cp, int ep) {
  TransformerLayerKind largest;
  for (int64_t i = 0; i < m.layers && !largest.moe; ++i) largest.moe = LayerKindAt(m, i).moe;
  return MakeLayerShape(m, seq_len, micro_batch, tp, cp, ep, tp, largest);
}

double LayerShape::RoutedShare() const {
  const double busiest = capacity_factor > 0 ? std::min(imbalance, capacity_factor) : imbalance;
  return static_cast<double>(etp) / tp * busiest;
}

void ApplyTrainingToShape(LayerShape& shape, const LlmTraining& training) {
  shape.eager = training.kernels == LlmKernels::kEager;
  // Separate q, k, v and gate, up are the Llama lineage's modules (rotary
  // positions: Hugging Face's Llama, Mistral, Qwen, Gemma; torchtitan's;
  // MaxText's); GPT-2's modules project Q, K, V as one (c_attn).
  shape.separate_projections = training.separate_projections && shape.rope;
  shape.capacity_factor = training.capacity_factor;
  shape.imbalance = training.moe_imbalance;
  shape.activation_fp8_store = training.activation_fp8_store;
}

double KernelTimer::Gemm(double m, double n, double k, double batch) const {
  const double flops = 2.0 * m * n * k * batch;
  if (flops <= 0) return 0;
  // Calibration moves the curve along the size axis (a kernel of F FLOPs runs
  // as the curve's kernel of F x matrix_size_scale), so it never lifts the
  // efficiency above the curve's own plateau.
  double eff = matrix->At(flops * curve_size * matrix_size_scale);
  if (matrix->half_dim > 0) eff *= matrix->ShapeFactor(m, n, k);
  eff = std::min(eff, 1.0);
  if (ceiling > 0) eff = std::min(eff, ceiling / peak);
  // The roofline: no faster than moving its operands (1 byte each in the
  // 8-bit formats, 2 in 16 bits) and its 16-bit result at the memory curve.
  const double in_bytes = fp8_casts ? operand_bytes : 2.0;
  double t = std::max(flops / (peak * eff),
                      MemoryTime((in_bytes * (m * k + k * n) + 2.0 * m * n) * batch));
  if (fp8_casts) t += MemoryTime(cast_bytes * m * k * batch);  // read 16-bit, write 8-bit
  return t;
}

double KernelTimer::Gemm16(double m, double n, double k, double batch) const {
  const double flops = 2.0 * m * n * k * batch;
  if (flops <= 0) return 0;
  double eff = matrix16->At(flops * matrix_size_scale);
  if (matrix16->half_dim > 0) eff *= matrix16->ShapeFactor(m, n, k);
  eff = std::min(eff, 1.0);
  if (ceiling16 > 0) eff = std::min(eff, ceiling16 / peak16);
  return std::max(flops / (peak16 * eff), MemoryTime(2.0 * (m * k + k * n + m * n) * batch));
}

double KernelTimer::Attention(double flops, bool backward, double m, double n, double k) const {
  if (flops <= 0) return 0;
  const EfficiencyCurve& curve = backward ? *attention_backward : *attention_forward;
  double eff = curve.At(flops * matrix_size_scale);
  // The tensor curve standing in for a missing attention curve keeps its
  // shape term (the attention curves have none).
  if (curve.half_dim > 0) eff *= curve.ShapeFactor(m, n, k);
  eff = std::min(eff, 1.0);
  // No faster than the device's best measured 16-bit product.
  if (ceiling16 > 0) eff = std::min(eff, ceiling16 / peak16);
  return flops / (peak16 * eff);
}

double KernelTimer::MemoryTime(double bytes) const {
  if (bytes <= 0) return 0;
  const double eff = std::min(1.0, memory->At(bytes) * memory_scale);
  return bytes / (bandwidth * eff);
}

double KernelTimer::NormalizationTime(double bytes) const {
  if (bytes <= 0) return 0;
  const double eff = std::min(1.0, normalization->At(bytes) * memory_scale);
  return bytes / (bandwidth * eff);
}

KernelTimer MakeKernelTimer(const Device& d, MatrixFormat format, const LlmCalibration& cal) {
  KernelTimer t;
  const bool tensor16 = d.tensor16_flops_per_s > 0;
  t.matrix = tensor16 ? &d.TensorEfficiency() : &d.compute_efficiency;
  const double peak16 = tensor16 ? d.tensor16_flops_per_s : d.fp32_flops_per_s;
  switch (format) {
    case MatrixFormat::k16:
      t.peak = peak16;
      break;
    case MatrixFormat::kFp8:
    case MatrixFormat::kFp8Block:
    case MatrixFormat::kMxfp8:
      t.peak = d.fp8_flops_per_s;
      break;
    case MatrixFormat::kInt8:
      t.peak = d.int8_flops_per_s;
      break;
    case MatrixFormat::kFp4:
    case MatrixFormat::kNvfp4:
      t.peak = d.fp4_flops_per_s;
      break;
  }
  // FP8: the device's FP8 curve (Device::Fp8Matrix: its own, or the 16-bit
  // curve carried at the same F/peak). INT8 and FP4: the 16-bit curve carried
  // to the faster format at the same F/peak, the rule the catalog carries
  // curves between devices by (docs/devices.md).
  const bool fp8 = format == MatrixFormat::kFp8 || format == MatrixFormat::kFp8Block ||
                   format == MatrixFormat::kMxfp8;
  if (fp8 && t.peak > 0) {
    const Device::MatrixCurve fp8 = d.Fp8Matrix();
    t.matrix = fp8.curve;
    t.curve_size = fp8.size_factor;
  } else {
    t.curve_size = t.peak > 0 ? peak16 / t.peak : 1.0;
  }
  t.fp8_casts = format != MatrixFormat::k16;
  // The quantization each product's input takes, bytes an element: read 2,
  // write 1 (one scale a tensor); block scaled, a row-wise and a column-wise
  // copy written (read 2, write 1 + 1; NVFP4: 0.5 + 0.5, and the weight
  // gradient's inputs, one product in three, Hadamard-transformed on the way:
  // read 2, write 0.5 more, 2.5 / 3 an element on average). Operands of 1
  // byte (NVFP4: half a byte) in the roofline.
  switch (format) {
    case MatrixFormat::kFp8Block:
    case MatrixFormat::kMxfp8:
      t.cast_bytes = 4.0;
      break;
    case MatrixFormat::kNvfp4:
      t.cast_bytes = 3.0 + 2.5 / 3.0;
      t.operand_bytes = 0.5;
      break;
    default:
      break;
  }
  t.matrix16 = tensor16 ? &d.TensorEfficiency() : &d.compute_efficiency;
  t.peak16 = peak16;
  // The measured ceilings: the 16-bit one for 16-bit products and attention,
  // the FP8 one for the FP8 recipes (none published for INT8 and FP4).
  t.ceiling16 = tensor16 ? d.achievable16.flops_per_s : 0.0;
  t.ceiling = format == MatrixFormat::k16 ? t.ceiling16 : fp8 ? d.achievable_fp8.flops_per_s : 0.0;
  t.attention_forward = tensor16 ? &d.AttentionEfficiency(false) : &d.compute_efficiency;
  t.attention_backward = tensor16 ? &d.AttentionEfficiency(true) : &d.compute_efficiency;
  t.matrix_size_scale = cal.matrix_size_scale;
  t.memory = &d.memory_efficiency;
  t.normalization = &d.NormalizationMemoryEfficiency();
  t.bandwidth = d.memory_bandwidth_bytes_per_s;
  t.memory_scale = cal.memory_scale;
  t.dispatch_s = cal.dispatch_s;
  return t;
}

double AttentionPairs(double seq_q, double seq_kv, bool causal, double window) {
  if (!causal) return seq_q * seq_kv;
  // Causal over the whole sequence: query i meets i + 1 keys, about half the
  // square; in a window of w, min(i + 1, w): s w - w^2 / 2 once s >= w. A
  // ring's rank holds seq_q / seq_kv of the queries, balanced to that share.
  const double w = window > 0 ? std::min(window, seq_kv) : seq_kv;
  const double whole = seq_kv * w - 0.5 * w * w;
  return whole * seq_q / seq_kv;
}

FlashAttentionTimes TimeFlashAttention(const KernelTimer& t, double batch_heads, double seq_q,
                                       double seq_kv, double head_dim, bool causal, double chunks,
                                       double window, double v_dim) {
  const double dv = v_dim > 0 ? v_dim : head_dim;
  const double pairs = AttentionPairs(seq_q, seq_kv, causal, window);
  // Two products (scores over head_dim, values over v_dim) per query-key pair.
  const double forward_flops = 2.0 * pairs * (head_dim + dv) * batch_heads;
  // A ring's kernel: the rows against one K/V chunk of seq_kv / chunks.
  const double n = std::max(1.0, chunks);
  const double keys = (window > 0 ? std::min(window, seq_kv) : seq_kv) / n;
  const double rows = pairs / (keys * n);
  const double k = 0.5 * (head_dim + dv);
  FlashAttentionTimes out;
  out.forward_s = n * t.Attention(forward_flops / n, false, rows, keys, k);
  out.backward_s = n * t.Attention(2.5 * forward_flops / n, true, rows, keys, k);
  return out;
}

// One pass's kernels: the device's time for them and how many the host issues.
struct PassLayerKernels {
  double gpu = 0;
  double kernels = 0;
  void Add(double t, double n = 1) {
    gpu += t;
    kernels += n;
  }
};

// Element-wise work as eager PyTorch runs it (LlmKernels::kEager): each op
// of the module's Python code its own kernel, FP32 where the code upcasts.
// Bytes per element of the n-element tensor, from the ops listed and their
// autograd (tests/llm/framework_test.cc adds them up by hand).
//
// RMSNorm as Hugging Face's LlamaRMSNorm and torch.nn.RMSNorm's composite
// write it: x.to(float32) (read 2, write 4), pow(2) (4, 4), mean over the
// row (read 4), + eps and rsqrt (one value a row), x * rsqrt (4, 4),
// .to(bfloat16) (4, 2), weight * x (2, 2): 32 bytes in five element-wise
// kernels, 4 in one row reduction, two kernels of a value a row. Backward:
// grad * weight (2, 2), grad * x_normed (2 + 2, 2) and its sum over the
// tokens (read 2) for the weight's gradient, the cast to FP32 (2, 4), grad *
// rsqrt (4, 4), grad * x (4 + 4, 4) and its row sum (read 4) for rsqrt's
// gradient, rsqrt's and the mean's backward (a value a row; the mean's
// gradient expanded, write 4), pow's (x * 2: 4, 4; * grad: 4 + 4, 4), the
// two paths to x added (4 + 4, 4), the cast to bfloat16 (4, 2): 78 bytes in
// ten element-wise kernels, 6 in two reductions, two small kernels.
void EagerRmsNorm(const KernelTimer& t, double n, double rows, PassLayerKernels& f,
                  PassLayerKernels& b) {
  for (double bytes : {6.0, 8.0, 8.0, 6.0, 4.0}) f.Add(t.MemoryTime(bytes * n));
  f.Add(t.NormalizationTime(4.0 * n));
  f.Add(2.0 * t.MemoryTime(8.0 * rows), 2);
  for (double bytes : {4.0, 6.0, 6.0, 8.0, 12.0, 4.0, 8.0, 12.0, 12.0, 6.0})
    b.Add(t.MemoryTime(bytes * n));
  b.Add(t.NormalizationTime(2.0 * n));
  b.Add(t.NormalizationTime(4.0 * n));
  b.Add(2.0 * t.MemoryTime(8.0 * rows), 2);
}

// Rotary embedding as Hugging Face's apply_rotary_pos_emb writes it, on one
// tensor of n elements: x * cos (2, 2), rotate_half's negated half (1, 1)
// and concatenation (2, 2), * sin (2, 2), the sum (2 + 2, 2): 20 bytes in
// five kernels. Backward: grad * cos and grad * sin (2, 2 each), the
// negation's (1, 1), each half's slice_backward (zeros written 2, the half
// copied 1, 1: twice), the three gradients of x summed (2 + 2, 2 twice): 30
// bytes in nine kernels.
void EagerRope(const KernelTimer& t, double n, PassLayerKernels& f, PassLayerKernels& b) {
  for (double bytes : {4.0, 2.0, 4.0, 4.0, 6.0}) f.Add(t.MemoryTime(bytes * n));
  for (double bytes : {4.0, 4.0, 2.0, 2.0, 2.0, 2.0, 2.0, 6.0, 6.0}) b.Add(t.MemoryTime(bytes * n));
}

LayerTimes TimeLayer(const LayerShape& s, const KernelTimer& t, const LlmTraining& tr, bool sp) {
  LayerTimes out;
  const double T = s.tokens;
  const double Tn = sp ? T / s.tp : T;  // tokens the norms and dropouts see
  const double h = s.hidden;
  const bool frozen = tr.lora_rank > 0;
  const double r = static_cast<double>(tr.lora_rank);
  const double per_gemm = t.fp8_casts ? 2.0 : 1.0;  // FP8: the cast, then the product
  PassLayerKernels f, b, af, ab;
  // A linear layer's three products; returns their times.
  auto linear = [&](double m, double n, double k, bool frozen_weight, double batch = 1) {
    LayerTimes::LinearTimes back;
    back.forward_s = t.Gemm(m, n, k, batch);
    f.Add(back.forward_s, per_gemm);
    back.dgrad_s = t.Gemm(m, k, n, batch);
    b.Add(back.dgrad_s, per_gemm);
    if (!frozen_weight) {
      back.wgrad_s = t.Gemm(k, n, m, batch);
      b.Add(back.wgrad_s, per_gemm);
    }
    return back;
  };
  const auto add_to = [](LayerTimes::LinearTimes& into, const LayerTimes::LinearTimes& back) {
    into.forward_s += back.forward_s;
    into.dgrad_s += back.dgrad_s;
    into.wgrad_s += back.wgrad_s;
  };
  const auto add_column = [&](int side, const LayerTimes::LinearTimes& back) {
    add_to(out.column[static_cast<size_t>(side)], back);
  };
  const auto add_row = [&](int side, const LayerTimes::LinearTimes& back) {
    add_to(out.row[static_cast<size_t>(side)], back);
  };
  // LoRA: x A (k -> r) then (x A) B (r -> n), added to the frozen product.
  // The adapters are plain 16-bit layers in every format (NeMo's
  // ParallelLinearAdapter builds them from Megatron's tensor-parallel
  // linears, not Transformer Engine's, so FP8 autocast leaves them alone;
  // PEFT's are torch Linears): three products each, no casts, and skinny
  // (rank r), so their operands' traffic (KernelTimer's roofline) sets them.
  auto linear16 = [&](double m, double n, double k) {
    f.Add(t.Gemm16(m, n, k));
    b.Add(t.Gemm16(m, k, n));
    b.Add(t.Gemm16(k, n, m));
  };
  // m x k input, m x n output on this GPU; `added_fwd` and `added_bwd`: the
  // elements of the sums with the frozen product's output and input gradient.
  auto lora = [&](double m, double n, double k, double added_fwd, double added_bwd) {
    if (!frozen) return;
    if (tr.lora_dropout) {
      // Dropout of the adapter's m x k input: read 2, write 2, mask 1 byte
      // forward; the gradient read 2, mask 1, written 2 backward.
      f.Add(t.MemoryTime(5.0 * m * k));
      b.Add(t.MemoryTime(5.0 * m * k));
    }
    linear16(m, r, k);
    linear16(m, n, r);
    // Forward: the adapter's output added to the frozen product's (read both,
    // write one); backward: its input gradient added to the frozen product's.
    f.Add(t.MemoryTime(3.0 * 2.0 * added_fwd));
    b.Add(t.MemoryTime(3.0 * 2.0 * added_bwd));
  };
  // The forward kernels added while `body` runs, into `part` (what
  // selective recomputation would rerun).
  const auto capture = [&](LayerTimes::Part& part, auto&& body) {
    const double gpu = f.gpu, kernels = f.kernels;
    body();
    part.gpu_s += f.gpu - gpu;
    part.kernels += f.kernels - kernels;
  };
  const auto layer_norm = [&] {
    if (s.eager && s.rms_norm) {
      EagerRmsNorm(t, Tn * h, Tn, f, b);
      return;
    }
    // One fused kernel each way (Transformer Engine's, Apex's, PyTorch's
    // native LayerNorm, a compiler's fusion).
    f.Add(t.NormalizationTime(2.0 * 2.0 * Tn * h));
    b.Add(t.NormalizationTime(3.0 * 2.0 * Tn * h));
  };
  // The input gradients of separate products of one input (q, k, v; gate,
  // up) summed by autograd: read 2 + 2, write 2 an element, one kernel each.
  const auto input_grad_sums = [&](double products) {
    b.Add((products - 1.0) * t.MemoryTime(6.0 * T * h), products - 1.0);
  };
  // Pre-attention norm: read and write the 16-bit hidden states.
  capture(out.norms, layer_norm);
  const double qkv = s.q_width + 2.0 * s.kv_width;
  const double out_width = s.heads * s.v_dim;  // the output projection's input
  if (s.kv_rank > 0) {
    // Multi-head latent attention as Megatron-Core's MLASelfAttention trains
    // it (no absorption): the down projections on every tensor-parallel rank
    // whole, each latent's RMSNorm, the up projections split by heads; the
    // decoupled rotary key shared by the heads, joined to each head's key.
    const double q_heads = s.heads * s.head_dim;
    if (s.q_rank > 0) {
      add_column(0, linear(T, s.q_rank, h, frozen));
      f.Add(t.NormalizationTime(2.0 * 2.0 * T * s.q_rank));
      b.Add(t.NormalizationTime(3.0 * 2.0 * T * s.q_rank));
      capture(out.mla_up_proj, [&] { linear(T, q_heads, s.q_rank, frozen); });
    } else {
      add_column(0, linear(T, q_heads, h, frozen));
    }
    add_column(0, linear(T, s.kv_rank + s.rope_dim, h, frozen));
    f.Add(t.NormalizationTime(2.0 * 2.0 * T * s.kv_rank));
    b.Add(t.NormalizationTime(3.0 * 2.0 * T * s.kv_rank));
    capture(out.mla_up_proj, [&] {
      linear(T, s.heads * (s.head_dim - s.rope_dim + s.v_dim), s.kv_rank, frozen);
      // Each head's key assembled from its part and the shared rotary key
      // (written forward, its gradient summed back over the heads backward).
      f.Add(t.MemoryTime(2.0 * 2.0 * T * s.kv_width));
      b.Add(t.MemoryTime(2.0 * 2.0 * T * s.kv_width));
    });
  } else if (s.separate_projections) {
    // q, k and v as three linear layers (Hugging Face's q_proj, k_proj,
    // v_proj; torchtitan's wq, wk, wv; MaxText's DenseGeneral each).
    add_column(0, linear(T, s.q_width, h, frozen));
    add_column(0, linear(T, s.kv_width, h, frozen));
    add_column(0, linear(T, s.kv_width, h, frozen));
    input_grad_sums(3.0);
  } else {
    // Fused QKV projection.
    add_column(0, linear(T, qkv, h, frozen));
  }
  if (s.qk_norm && s.eager) {
    // QK-norm as the framework's RMSNorm modules over each head.
    EagerRmsNorm(t, T * (s.q_width + s.kv_width), T * (s.heads + s.kv_heads), f, b);
  } else if (s.qk_norm) {
    // QK-norm: an RMSNorm over each query and key head.
    f.Add(t.NormalizationTime(2.0 * 2.0 * T * (s.q_width + s.kv_width)));
    b.Add(t.NormalizationTime(3.0 * 2.0 * T * (s.q_width + s.kv_width)));
  }
  // The QKV adapter (NeMo: A column-parallel with its output gathered, B
  // column-parallel) reads the gathered norm output; its input gradient,
  // reduce-scattered with sequence parallelism, joins the norm's.
  lora(T, qkv, h, T * qkv, Tn * h);
  // Rotary positions: Q and K read and written once forward (Megatron's and
  // Transformer Engine's fused kernel) and their gradients once backward.
  if (s.rope) {
    // Under MLA only the decoupled rotary parts: rope_dim of each query head
    // and the one shared key.
    const double q_rotated = s.kv_rank > 0 ? s.heads * s.rope_dim : s.q_width;
    const double k_rotated = s.kv_rank > 0 ? s.rope_dim : s.kv_width;
    if (s.eager) {
      EagerRope(t, T * q_rotated, f, b);
      EagerRope(t, T * k_rotated, f, b);
    } else {
      f.Add(t.MemoryTime(2.0 * 2.0 * T * (q_rotated + k_rotated)));
      b.Add(t.MemoryTime(2.0 * 2.0 * T * (q_rotated + k_rotated)));
    }
  }
  // Attention core.
  const double bh = s.micro_batch * s.heads;
  if (tr.flash_attention) {
    const FlashAttentionTimes fa = TimeFlashAttention(t, bh, s.seq_local, s.seq, s.head_dim,
                                                      s.causal, s.cp, s.window, s.v_dim);
    af.Add(fa.forward_s, s.cp);
    ab.Add(fa.backward_s, s.cp);
    if (s.cp > 1) {
      // Ring attention's bookkeeping as Transformer Engine's P2P ring
      // (AttnFuncWithCPAndKVP2P) does it, on the rank whose chunks cover every
      // row (the ring waits for it). Forward: K and V copied into the send
      // buffer (read, write), the output accumulator zeroed, the first chunk's
      // output and log-sum-exp written into it and each later chunk's merged
      // with it (read both, write one). Backward: the K/V buffer again, then
      // dQ and dK/dV likewise: the first chunk's copied, each later one added.
      const double q_bytes = 2.0 * T * s.q_width;
      const double kv_bytes = 2.0 * T * s.kv_width;
      const double later = s.cp - 1.0;
      af.Add(t.MemoryTime(4.0 * kv_bytes));  // K, V into the send buffer
      af.Add(t.MemoryTime(q_bytes));         // the accumulator zeroed
      af.Add(t.MemoryTime(2.0 * q_bytes));   // the first chunk's output in
      af.Add(later * t.MemoryTime(3.0 * q_bytes), later);
      ab.Add(t.MemoryTime(4.0 * kv_bytes));
      ab.Add(t.MemoryTime(2.0 * q_bytes) + t.MemoryTime(2.0 * 2.0 * kv_bytes), 2);
      ab.Add(later * (t.MemoryTime(3.0 * q_bytes) + t.MemoryTime(3.0 * 2.0 * kv_bytes)),
             2.0 * later);
    }
  } else {
    // Megatron's unfused path: Q, K, V rearranged, scores as one batched
    // product, fused scale-mask-softmax, dropout, values, output rearranged.
    const double scores = bh * s.seq * s.seq;  // elements
    af.Add(t.MemoryTime(2.0 * 2.0 * T * qkv), 3);
    af.Add(t.Gemm16(s.seq, s.seq, s.head_dim, bh));
    af.Add(t.NormalizationTime(2.0 * 2.0 * scores));
    if (s.dropout) af.Add(t.MemoryTime(5.0 * scores));
    af.Add(t.Gemm16(s.seq, s.head_dim, s.seq, bh));
    af.Add(t.MemoryTime(2.0 * 2.0 * T * s.q_width));
    ab.Add(t.MemoryTime(2.0 * 2.0 * T * s.q_width));
    ab.Add(2.0 * t.Gemm16(s.seq, s.head_dim, s.seq, bh), 2);  // grads of the probabilities and of V
    if (s.dropout) ab.Add(t.MemoryTime(5.0 * scores));
    ab.Add(t.NormalizationTime(3.0 * 2.0 * scores));
    ab.Add(2.0 * t.Gemm16(s.seq, s.head_dim, s.seq, bh), 2);  // grads of Q and K
    ab.Add(t.MemoryTime(2.0 * 2.0 * T * qkv), 3);
  }
  f.Add(af.gpu, af.kernels);
  b.Add(ab.gpu, ab.kernels);
  // Output projection, then bias, dropout and the residual add.
  add_row(0, linear(T, h, out_width, frozen));
  // The output projection's adapter (A row-parallel, B column-parallel: h /
  // tp columns, exchanged to the sequence-parallel layout or gathered) joins
  // the projection's output.
  lora(T, h / s.tp, s.q_width, Tn * h, T * s.q_width);
  const double residual = 2.0 * 3.0 * Tn * h + (s.dropout ? Tn * h : 0.0);
  // Sandwich norms (Gemma): one more norm after the attention and one after
  // the feed-forward block.
  const auto sandwich_norm = [&] {
    if (s.sandwich_norms) capture(out.norms, layer_norm);
  };
  sandwich_norm();
  f.Add(t.MemoryTime(residual));
  b.Add(t.MemoryTime(1.5 * residual));
  // Pre-MLP norm.
  capture(out.norms, layer_norm);
  const double act_bytes =
      2.0 * (s.gated ? 3.0 : 2.0);  // per inner element: read (2 if gated), write
  // The FP8 activation store: the SwiGLU's 2f-wide input cast to FP8 after
  // the forward (read 2, write 1 byte an element) and back before the
  // gradient (read 1, write 2).
  const double store_bytes = s.gated && s.activation_fp8_store ? 3.0 * 2.0 : 0.0;

  // A dense block of `inner` (on this GPU) over `tokens`.
  const auto dense_block = [&](double tokens, double inner) {
    if (s.gated && s.separate_projections) {
      // gate and up as two linear layers (gate_proj, up_proj; w1, w3).
      add_column(1, linear(tokens, inner, h, frozen));
      add_column(1, linear(tokens, inner, h, frozen));
      input_grad_sums(2.0);
    } else {
      add_column(1, linear(tokens, s.gated ? 2.0 * inner : inner, h, frozen));
    }
    if (s.gated && s.eager) {
      // act(gate) * up in two kernels: SiLU (read 2, write 2), the product
      // (2 + 2, 2). Backward: grad * up and grad * act (2 + 2, 2 each),
      // SiLU's backward (grad and its input read, 2 written).
      f.Add(t.MemoryTime(4.0 * tokens * inner));
      f.Add(t.MemoryTime(6.0 * tokens * inner));
      b.Add(3.0 * t.MemoryTime(6.0 * tokens * inner), 3);
    } else {
      f.Add(t.MemoryTime(act_bytes * tokens * inner));
      b.Add(t.MemoryTime(1.5 * act_bytes * tokens * inner));
    }
    if (store_bytes > 0) {
      f.Add(t.MemoryTime(store_bytes * tokens * inner));
      b.Add(t.MemoryTime(store_bytes * tokens * inner));
    }
    add_row(1, linear(tokens, h, inner, frozen));
  };
  if (s.experts > 0)
    capture(out.moe, [&] {
      // Router, top-k, permutation to the experts and back; the local experts'
      // products as one grouped kernel of the busiest rank's share of the
      // routed tokens (RoutedShare), each expert's inner size split over etp.
      // The router in 16 bits in every format (Megatron-Core's TopKRouter is
      // a plain linear, outside Transformer Engine's FP8 autocast).
      f.Add(t.Gemm16(T, s.experts, h));
      b.Add(t.Gemm16(T, h, s.experts));
      if (!frozen) b.Add(t.Gemm16(h, s.experts, T));
      f.Add(t.MemoryTime(2.0 * 4.0 * T * s.experts), 2);
      b.Add(t.MemoryTime(3.0 * 4.0 * T * s.experts), 2);
      const double routed = T * s.top_k * s.RoutedShare();
      const double local_experts = s.experts / s.ep;
      const double per_expert = routed / local_experts;
      const double ffn_e = s.expert_ffn;
      f.Add(2.0 * t.MemoryTime(2.0 * 2.0 * routed * h), 2);
      b.Add(2.0 * t.MemoryTime(2.0 * 2.0 * routed * h), 2);
      linear(per_expert, s.gated ? 2.0 * ffn_e : ffn_e, h, frozen, local_experts);
      capture(out.moe_act, [&] { f.Add(t.MemoryTime(act_bytes * routed * ffn_e)); });
      b.Add(t.MemoryTime(1.5 * act_bytes * routed * ffn_e));
      if (store_bytes > 0) {
        f.Add(t.MemoryTime(store_bytes * routed * ffn_e));
        b.Add(t.MemoryTime(store_bytes * routed * ffn_e));
      }
      linear(per_expert, h, ffn_e, frozen, local_experts);
      // Shared experts (DeepSeek): a dense block every token passes through.
      if (s.shared_ffn > 0) capture(out.shared_experts, [&] { dense_block(T, s.shared_ffn); });
    });
  else
    capture(out.mlp, [&] { dense_block(T, s.ffn); });
  sandwich_norm();
  f.Add(t.MemoryTime(residual));
  b.Add(t.MemoryTime(1.5 * residual));
  out.forward_gpu_s = f.gpu;
  out.forward_kernels = f.kernels;
  out.backward_gpu_s = b.gpu;
  out.backward_kernels = b.kernels;
  out.attention_fwd_gpu_s = af.gpu;
  out.attention_fwd_kernels = af.kernels;
  out.attention_bwd_gpu_s = ab.gpu;
  out.selective_recompute = !tr.flash_attention;
  return out;
}

LayerTimes::Part LayerTimes::Rerun(unsigned modules) const {
  Part p;
  const auto add = [&](unsigned bit, const Part& x) {
    if ((modules & bit) == 0) return;
    p.gpu_s += x.gpu_s;
    p.kernels += x.kernels;
  };
  if (selective_recompute)
    add(kRecomputeCoreAttn, Part{attention_fwd_gpu_s, attention_fwd_kernels});
  add(kRecomputeLayernorm, norms);
  add(kRecomputeMlaUpProj, mla_up_proj);
  add(kRecomputeMlp, mlp);
  if ((modules & kRecomputeMoe) != 0) {
    add(kRecomputeMoe, moe);  // its activation and shared experts included
  } else {
    add(kRecomputeMoeAct, moe_act);
    add(kRecomputeSharedExperts, shared_experts);
  }
  return p;
}

HeadTimes TimeHead(const LayerShape& s, double vocab, const KernelTimer& t, bool sp, bool lora) {
  HeadTimes out;
  const double T = s.tokens;
  const double Tn = sp ? T / s.tp : T;
  const double h = s.hidden;
  const double v = vocab / s.tp;
  const double d = t.dispatch_s;
  // Embedding lookup (read rows, write the hidden states) and its gradient's scatter-add.
  PassLayerKernels e;
  e.Add(t.MemoryTime(2.0 * 2.0 * T * h));
  if (!lora) e.Add(t.MemoryTime(3.0 * 2.0 * T * h));
  out.embedding_s = std::max(e.gpu, e.kernels * d);
  // Final norm, output projection, softmax cross-entropy over the vocabulary
  // shard (logits read, FP32 probabilities written, read back for the gradient).
  PassLayerKernels o;
  if (s.eager && s.rms_norm) {
    EagerRmsNorm(t, Tn * h, Tn, o, o);
  } else {
    o.Add(t.NormalizationTime(2.0 * 2.0 * Tn * h));
    o.Add(t.NormalizationTime(3.0 * 2.0 * Tn * h));
  }
  o.Add(t.Gemm(T, v, h));
  o.Add(t.Gemm(T, h, v));
  if (!lora) o.Add(t.Gemm(h, v, T));
  if (s.eager) {
    // Hugging Face's ForCausalLMLoss: the 16-bit logits upcast (read 2,
    // write 4), log_softmax over the row (4, 4), the loss gathered (a value
    // a row). Backward: the gathered gradient scattered into zeros (write
    // 4), log_softmax's backward (4 + 4, 4), the cast back (4, 2).
    o.Add(t.MemoryTime(6.0 * T * v));
    o.Add(t.NormalizationTime(8.0 * T * v));
    o.Add(t.MemoryTime(8.0 * T), 1);
    o.Add(t.MemoryTime(4.0 * T * v), 2);
    o.Add(t.NormalizationTime(12.0 * T * v));
    o.Add(t.MemoryTime(6.0 * T * v));
  } else {
    o.Add(t.NormalizationTime((2.0 + 4.0) * T * v), 3);
    o.Add(t.NormalizationTime((4.0 + 2.0) * T * v), 3);
  }
  out.output_s = std::max(o.gpu, o.kernels * d);
  // A multi-token prediction module less its layer: the norms of the
  // embedding and of the hidden state, their concatenation projected 2h -> h
  // (split by tp), then the output head and loss as above.
  PassLayerKernels p;
  p.Add(2.0 * t.NormalizationTime(2.0 * 2.0 * Tn * h), 2);
  p.Add(2.0 * t.NormalizationTime(3.0 * 2.0 * Tn * h), 2);
  p.Add(t.MemoryTime(2.0 * 2.0 * 2.0 * T * h));
  p.Add(t.Gemm(T, h / s.tp, 2.0 * h));
  p.Add(t.Gemm(T, 2.0 * h, h / s.tp));
  if (!lora) p.Add(t.Gemm(2.0 * h, h / s.tp, T));
  out.mtp_s = std::max(p.gpu, p.kernels * d) + out.output_s;
  return out;
}

double LayerActivationBytesOf(const LayerShape& s, bool sp, Recompute recompute, bool flash,
                              bool frozen_mlp, unsigned modules) {
  // Korthikanti et al. 2022, sec. 4.1, per layer in 16-bit elements (2 bytes)
  // and 1-byte dropout masks, with b x s -> T tokens on this GPU:
  //   attention: QKV input 2Th | Q, K 2T(q + kv) | V 2T kv | output
  //     projection input 2T q | dropout mask Th | scores: softmax output
  //     2 a s T, its dropout mask a s T and output 2 a s T (a: heads here)
  //   MLP: input 2Th | up output 2T f (x2 gated) | activation output 2T f |
  //     dropout mask Th
  //   norms: two inputs, 4Th
  // For GPT (q = kv = h, f = 4h, dropout) this is T h (34 + 5 a s / h) before
  // tensor parallelism. Split by tp: Q, K, V, the projection input, the
  // scores, the MLP's inner tensors; by sequence parallelism the rest.
  //
  // Selective recomputation drops what each module it reruns alone keeps
  // (RecomputeModule): core_attn the score tensors; layernorm the two norm
  // outputs (the QKV and MLP inputs); mla_up_proj Q, K and V; mlp a dense
  // block's inner tensors; moe_act the experts' activation output; moe the
  // whole MoE block's (shared experts included); shared_experts theirs.
  const double T = s.tokens;
  const double h = s.hidden;
  const double mask = s.dropout ? 1.0 : 0.0;
  const auto drops = [&](unsigned bit) {
    return recompute == Recompute::kSelective && (modules & bit) != 0;
  };
  // attention input, its dropout mask, MLP input, its dropout mask, norm inputs
  const double norm_out = drops(kRecomputeLayernorm) ? 0.0 : 2.0 * T * h;
  const double mlp_input = frozen_mlp ? 0.0 : norm_out;
  // Eager RMSNorm keeps its FP32 input (4 bytes) and its 16-bit normalized
  // output (2, for the weight's gradient) where a fused norm keeps the
  // 16-bit input: 4 bytes an element more for each of the two norms.
  const double norm_inputs = s.eager && s.rms_norm ? 12.0 * T * h : 4.0 * T * h;
  const double rest = norm_out + mask * T * h + mlp_input + mask * T * h + norm_inputs;
  const double rest_here = sp ? rest / s.tp : rest;
  if (recompute == Recompute::kFull) return (sp ? 2.0 * T * h / s.tp : 2.0 * T * h);
  // Q and K, V, the output projection's input (MLA: every head's own V of
  // v_dim, and the output heads x v_dim).
  const double v_width = s.kv_rank > 0 ? s.heads * s.v_dim : s.kv_width;
  const double out_width = s.heads * s.v_dim;
  double attention = 2.0 * T * (s.q_width + s.kv_width) + 2.0 * T * v_width + 2.0 * T * out_width;
  if (s.kv_rank > 0 && drops(kRecomputeMlaUpProj))
    attention -= 2.0 * T * (s.q_width + s.kv_width) + 2.0 * T * v_width;
  // MLA: the query latent (the norm's input and output, the up projection's
  // input), the key/value latent with the rotary key (the norm's input) and
  // its normed part (the up projection's input).
  if (s.kv_rank > 0) attention += 2.0 * T * (2.0 * s.q_rank + 2.0 * s.kv_rank + s.rope_dim);
  // QK-norm's inputs.
  if (s.qk_norm) attention += 2.0 * T * (s.q_width + s.kv_width);
  double scores = 0;
  if (flash) {
    attention += 4.0 * T * s.heads;  // the softmax statistics (FP32 log-sum-exp per row)
  } else {
    scores = (2.0 + mask + 2.0 * mask) * s.heads * s.seq * T;
  }
  // The activation's input: 2 bytes an element, 1 in the FP8 store; its
  // output (the down projection's input) 2.
  const double input_bytes = s.gated && s.activation_fp8_store ? 1.0 : 2.0;
  const auto block = [&](double tokens, double inner, bool activation_rerun) {
    const double activation_output = frozen_mlp || activation_rerun ? 0.0 : 2.0 * tokens * inner;
    // Eager SiLU x up keeps the SiLU's output for the product's backward
    // beside the gate (SiLU's input) and up: one 16-bit inner tensor more.
    const double eager_act = s.gated && s.eager && !activation_rerun ? 2.0 * tokens * inner : 0.0;
    return input_bytes * tokens * inner * (s.gated ? 2.0 : 1.0) + activation_output + eager_act;
  };
  double mlp = 0;
  if (s.experts > 0) {
    if (!drops(kRecomputeMoe)) {
      const double routed = T * s.top_k * s.RoutedShare();
      // and the permuted expert inputs
      mlp = block(routed, s.expert_ffn, drops(kRecomputeMoeAct)) + 2.0 * routed * h;
      if (s.shared_ffn > 0 && !drops(kRecomputeSharedExperts)) mlp += block(T, s.shared_ffn, false);
    }
  } else if (!drops(kRecomputeMlp)) {
    mlp = block(T, s.ffn, false);
  }
  // Sandwich norms' inputs.
  if (s.sandwich_norms) attention += (sp ? 4.0 * T * h / s.tp : 4.0 * T * h);
  if (drops(kRecomputeCoreAttn)) scores = 0;
  return rest_here + attention + scores + mlp;
}

double LoraParametersPerLayer(const LayerShape& s, int64_t rank) {
  const double r = static_cast<double>(rank);
  const double qkv = s.q_width + 2.0 * s.kv_width;
  // A: d_in x r (replicated), B: r x d_out (split by tp), for QKV and the
  // output projection (row-parallel: A split by tp, B replicated).
  return r * (s.hidden + qkv) + r * (s.q_width + s.hidden);
}

}  // namespace fitspeed
