// One training step of a transformer split over tensor, pipeline, context,
// expert and data parallel groups of catalogued accelerators: its time by
// part, its memory per GPU and whether it fits (docs/llm.md, "The split
// model").
//
// The step is built from the kernels of one layer (matrix products timed on
// the device's tensor-unit efficiency curve with its shape term, the
// memory-bound element-wise and normalization passes on its memory curves,
// each kernel no shorter than the host's dispatch of it), the collectives of
// each group on a two-level topology (the scale-up domain's links inside it,
// the network between), the pipeline schedule (1F1B, or interleaved with v
// virtual stages: T = m x max_i c_i + (p-1)/v x mean_i c_i), the exposed
// gradient reduction and the optimizer update. Memory follows Korthikanti et
// al. 2022 ("Reducing Activation Recomputation in Large Transformer Models")
// for the activations, generalized to grouped-query attention, gated
// feed-forward blocks and models without dropout, and the ZeRO paper
// (Rajbhandari et al. 2020) for weights, gradients and optimizer state.
//
//   fitspeed::TransformerConfig model = fitspeed::LoadTransformer("llama-3-70b");
//   fitspeed::LlmCluster cluster = fitspeed::MakeCluster(fitspeed::LoadDevice("h100"), 1024);
//   fitspeed::LlmSplit split;  split.tp = 8; split.pp = 4; split.dp = 32; ...
//   fitspeed::LlmStep step = fitspeed::ModelLlmStep(model, cluster, {.seq_len = 8192}, split);
#ifndef FITSPEED_LLM_SPLIT_H_
#define FITSPEED_LLM_SPLIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fitspeed/core/comm.h"
#include "fitspeed/device/device.h"
#include "fitspeed/llm/transformer.h"

namespace fitspeed {

// Activation recomputation (Korthikanti et al. 2022): none; selective, the
// attention core (scores, softmax, dropout, values) recomputed in the
// backward pass; full, each layer's forward pass run again from its input.
enum class Recompute { kNone, kSelective, kFull };
std::string RecomputeName(Recompute r);             // "none", "selective", "full"
Recompute ParseRecompute(const std::string& name);  // UsageError naming the choices

// What selective recomputation reruns, as Megatron-Core's
// --recompute-modules names it (a bit each): the attention core; the
// experts' activation function; the norms; multi-head latent attention's
// up-projections; a dense feed-forward block; a whole MoE block (router,
// dispatch, experts, combine, shared experts); the shared experts. Each drops
// the tensors only it would keep for the backward pass and runs its forward
// again before its backward.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,
  kRecomputeMoeAct = 1u << 1,
  kRecomputeLayernorm = 1u << 2,
  kRecomputeMlaUpProj = 1u << 3,
  kRecomputeMlp = 1u << 4,
  kRecomputeMoe = 1u << 5,
  kRecomputeSharedExperts = 1u << 6,
};
// "core_attn,moe_act" -> the bits; "" -> core_attn (Megatron's default).
// UsageError naming an unknown module and the choices.
unsigned ParseRecomputeModules(const std::string& names);
std::string RecomputeModulesName(unsigned modules);  // "core_attn,moe_act"

// The number format of the matrix products. k16: FP16 or BF16 (the device's
// 16-bit tensor type); kFp8: matrix products in FP8 with the rest in BF16, as
// NVIDIA's Transformer Engine runs them (one scale a tensor: its delayed or
// current scaling); kInt8: matrix products in INT8 (a TPU's AQT); kFp4:
// Blackwell's FP4 (one scale a tensor). Block-scaled recipes (Transformer
// Engine's, docs/llm.md "Low-precision recipes"), every linear layer's three
// products (forward, input and weight gradient) in the low format, each
// input quantized along both its rows and its columns (a scale a block runs
// along the reduction, so a transposed use needs its own copy):
// kFp8Block, DeepSeek-V3's FP8 (Float8BlockScaling: 1x128 blocks of
// activations and gradients, 128x128 of weights; Hopper and later);
// kMxfp8, MXFP8 (32-value blocks, power-of-two scales; devices whose
// "block_scaled" lists mxfp8: Blackwell, MI355X); kNvfp4, NVFP4 (16-value
// blocks with FP8 scales, a 16x16 Hadamard transform on the weight
// gradient's inputs; devices listing nvfp4). The attention core, norms,
// embedding, router and LoRA adapters stay in 16 bits in every format; the
// output head is timed in the format of the layers (Megatron runs it in
// BF16: a known difference, kept as the validated LLM cases were fitted
// with it); weights, gradients and activations are kept in 16 bits.
enum class MatrixFormat { k16, kFp8, kInt8, kFp4, kFp8Block, kMxfp8, kNvfp4 };
// "16-bit", "fp8", "int8", "fp4", "fp8-block", "mxfp8", "nvfp4"
std::string MatrixFormatName(MatrixFormat f);
// "mixed", "bf16", "fp16" -> k16; the names above. UsageError otherwise.
MatrixFormat ParseMatrixFormat(const std::string& name);

// How one step is split. Every group size >= 1; devices = tp x pp x cp x dp.
// The expert layers fold the same devices differently, as Megatron-Core's
// "MoE parallel folding" does (parallel_state.py, the expert rank order
// tp-ep-dp-pp over the tp x cp x dp ranks of a stage): each expert split over
// etp ranks, the experts over ep groups of those, and the rest, tp x cp x dp
// / (etp x ep), data parallel for the experts; etp x ep divides tp x cp x dp
// and ep the experts. An expert-parallel group's ranks sit etp apart.
struct LlmSplit {
  int tp = 1;   // tensor parallel (Megatron's column/row split)
  int pp = 1;   // pipeline stages
  int vp = 1;   // virtual stages per pipeline stage (interleaved 1F1B); 1: plain 1F1B
  int cp = 1;   // context parallel (ring attention over the sequence)
  int ep = 1;   // expert parallel (MoE models only)
  int etp = 0;  // expert tensor parallel (MoE only); 0: tp, Megatron's default
  int dp = 1;   // data parallel
  // The layers of each pipeline stage. Empty: even (pp x vp divides the
  // layers), else Megatron's pipeline layout (--pipeline-model-parallel-layout):
  // pp x vp virtual stages separated by '|', in order, each a string of 't'
  // (a transformer layer), 'E' (the embedding), 'L' (the final norm, output
  // projection and loss), 'm' (a multi-token prediction module), with 'X*n'
  // repeating an item or a parenthesized group: "Et*3|(tt|)*29m|L". The
  // embedding and loss, when absent from the layout, sit on the first and
  // last stage. PipelineLayoutOf turns the options into it.
  std::string layout;
  int64_t micro_batch = 1;   // sequences per micro-batch per data-parallel rank
  int64_t global_batch = 1;  // sequences per optimizer step; a multiple of micro_batch x dp
  Recompute recompute = Recompute::kNone;
  // With recompute kSelective: what is rerun (RecomputeModule bits).
  unsigned recompute_modules = kRecomputeCoreAttn;
  bool sequence_parallel = false;  // Megatron's: norms and dropout split over tp, RS + AG for AR
  int zero = 0;  // 0: DDP; 1: optimizer state sharded over dp; 2: + gradients; 3: + weights (FSDP)
  // ZeRO's sharding group (hybrid sharding): 0, every data-parallel rank (dp
  // x cp); g > 0 (zero >= 1, dividing dp x cp; dense models), the state
  // sharded over groups of g consecutive ranks and replicated across the dp x
  // cp / g groups, whose gradient shards are all-reduced after each
  // reduce-scatter (FSDP's HYBRID_SHARD, torchtitan's
  // data_parallel_shard_degree with a replicate degree, Megatron-Core's
  // --num-distributed-optimizer-instances, DeepSpeed's MiCS).
  int shard_group = 0;
  // The data-parallel communication overlapped: the gradient reduction with
  // the backward pass (DDP's buckets, Megatron's --overlap-grad-reduce) and,
  // with zero 1 or 2, the updated weights' all-gather with the next step's
  // forward pass (Megatron's --overlap-param-gather, NeMo's
  // overlap_param_sync); false: both run after the last micro-batch,
  // exposed (vTrain's runs).
  bool overlap_grad_reduce = true;
  // MoE: the expert all-to-alls of one micro-batch overlapped with another
  // micro-batch's compute (Megatron-Core's --overlap-moe-expert-parallel-comm,
  // its 1F1B all-to-all overlap; DeepSeek's DualPipe): a layer's all-to-alls
  // wait only for what its forward and backward kernels do not cover.
  // false: exposed (Megatron's default).
  bool overlap_moe_comm = false;
  // Transformer Engine's userbuffers overlap of the tensor-parallel
  // collectives with the products beside them (NeMo's tp_comm_overlap, its
  // MLPerf runs' TP_COMM_OVERLAP; Megatron's --tp-comm-overlap): each
  // sequence-parallel all-gather and reduce-scatter of a layer's forward pass,
  // and the output gradient's all-gather before a row-parallel product's
  // input gradient, split into tp chunks pipelined with that product. Needs
  // sequence parallelism (Megatron refuses it without) and tp > 1.
  bool tp_comm_overlap = false;

  int64_t Accumulation() const;  // global_batch / (micro_batch x dp)
  int Devices() const { return tp * pp * cp * dp; }
  int ExpertTp() const { return etp > 0 ? etp : tp; }
  // The experts' data-parallel size: tp x cp x dp / (etp x ep).
  int ExpertDp() const { return tp * cp * dp / (ExpertTp() * ep); }
  // The ranks ZeRO shards the dense state over: shard_group, or dp x cp.
  int ShardRanks() const { return shard_group > 0 ? shard_group : dp * cp; }
  // Whether Megatron-Core runs this schedule: the interleaved one (vp > 1)
  // takes the micro-batches in groups of microbatch_group_size_per_vp_stage,
  // pp by default (model_parallel_config.py), and refuses fewer micro-batches
  // than a group or a last group shorter than pp (schedules.py,
  // forward_backward_pipelining_with_interleaving): the micro-batches must be
  // a multiple of pp. Plain 1F1B (vp 1) runs any count.
  bool ScheduleRuns() const { return vp <= 1 || Accumulation() % pp == 0; }
};

// The uneven stages people give Megatron, as a layout (LlmSplit::layout):
// `first` and `last` the transformer layers of the first and last pipeline
// stage (--decoder-first/last-pipeline-num-layers; 0: not given), the rest
// spread evenly over the other stages; `embedding_as_layer` and
// `loss_as_layer` count the embedding and the loss as one layer each in the
// division (--account-for-embedding/loss-in-pipeline-split). With vp > 1 each
// stage's layers split evenly over its vp chunks. UsageError naming the
// option when the layers do not divide as Megatron requires.
std::string PipelineLayoutOf(const TransformerConfig& model, int pp, int vp, int64_t first,
                             int64_t last, bool embedding_as_layer, bool loss_as_layer);

// A layout string's stages: for each of the pp x vp virtual stages (Megatron's
// order: chunk c of rank r is stage c x pp + r), its transformer layers
// (first, count), the embedding, the loss and the multi-token prediction
// modules. UsageError naming the position of a malformed layout, a count that
// does not match the model's layers or MTP modules, or stages that are not pp
// x vp.
struct PipelineChunk {
  int64_t first_layer = 0, layers = 0;
  bool embedding = false, loss = false;
  int64_t mtp = 0;
};
// A layout written short: runs of equal stages as "(...|)*n", runs of 't' as
// "t*n" ("E|t|t|t|L" -> "E|(t|)*3L"); parses to the same stages.
std::string CompactPipelineLayout(const std::string& layout);

std::vector<PipelineChunk> ParsePipelineLayout(const TransformerConfig& model, int pp, int vp,
                                               const std::string& layout);

// How a framework runs the element-wise work of a layer (fitspeed/llm/framework.h):
// kFused, one kernel per norm, rotary embedding, activation and loss
// (Transformer Engine's and Megatron's fused kernels, torch.compile's and
// XLA's fusions); kEager, each PyTorch op of the module's code its own
// kernel (Hugging Face's and torchtitan's modules without compile).
enum class LlmKernels { kFused, kEager };
// How ZeRO levels shard (LlmSplit::zero): kZero, as Megatron's distributed
// optimizer and DeepSpeed do (16-bit weights beside the FP32 master in the
// optimizer state; ZeRO-2 gathers the updated weights once a step); kFsdp,
// as PyTorch FSDP, FSDP2 and MaxText do (the sharded parameters are the FP32
// master: 4 bytes and Adam's 8; zero 2, SHARD_GRAD_OP, gathers each
// micro-batch's weights once, kept to its backward).
enum class LlmSharding { kZero, kFsdp };

// What is trained and how.
struct LlmTraining {
  int64_t seq_len = 0;  // tokens per sequence; CheckSequenceLength applies
  // The framework (fitspeed/llm/framework.h, LlmFrameworks()), and what of it
  // the model reads, set from it by ApplyLlmFramework (MakeLlmTraining and
  // the requests call it): its kernels, q/k/v and gate/up as separate
  // products (Hugging Face's, torchtitan's, MaxText's modules) or fused
  // (Megatron's linear_qkv and linear_fc1), the whole step one compiled
  // program (XLA: no host launch per kernel) and its sharding.
  std::string framework = "megatron";
  LlmKernels kernels = LlmKernels::kFused;
  bool separate_projections = false;
  bool compiled_step = false;
  LlmSharding sharding = LlmSharding::kZero;
  MatrixFormat format = MatrixFormat::k16;
  // LoRA fine-tuning: adapters of this rank on every attention and
  // feed-forward matrix of a frozen base (0: full training). The base's
  // weight-gradient products, gradients, optimizer state and gradient
  // reduction vanish; the activation gradients remain.
  int64_t lora_rank = 0;
  // LoRA with dropout on each adapter's input (PEFT's lora_dropout > 0,
  // NeMo's adapter_dropout; MLPerf's Llama-2-70B LoRA: 0.1): a dropout pass
  // over that input forward and backward, and the dropped input and its mask
  // held for the adapter's weight gradient (3 bytes an element). Needs lora_rank > 0.
  bool lora_dropout = false;
  // Transformer Engine's FP8 parameters (NeMo's fp8_params,
  // te.fp8_model_init): the base weights held in FP8 alone, 1 byte each,
  // with no 16-bit copy (the trained weights' FP32 master stays in the
  // optimizer state; LoRA adapters stay 16-bit). Memory only: the FP8
  // products are timed alike. Needs format kFp8.
  bool fp8_weights = false;
  // The SwiGLU's input kept for the backward pass in FP8 (1 byte an element,
  // cast back before the gradient; Megatron's activation_func_fp8_input_store,
  // NeMo's MLPerf FP8_ACTIVATION): half the memory of the feed-forward's
  // largest held tensor, for a cast forward and one backward. Needs a gated
  // feed-forward.
  bool activation_fp8_store = false;
  // Each transformer layer's forward and backward pass captured as a CUDA
  // graph (Transformer Engine's make_graphed_callables: NeMo's
  // enable_cuda_graph, MLPerf's LAYER_CUDA_GRAPH=1): the host launches one
  // graph a pass instead of each kernel and collective, so a layer's pass is
  // no longer held to dispatch_s per kernel. The embedding, the output and
  // the loss stay eager.
  bool cuda_graphs = false;
  // Attention kernels: true, flash attention (the causal half of the score
  // and value products, no sequence-squared tensors in memory); false, the
  // products and a fused softmax over the whole score matrix (Megatron's
  // kernels before flash attention).
  bool flash_attention = true;
  // MoE routing. capacity_factor 0: dropless (Megatron-Core's default,
  // moe_expert_capacity_factor None): every routed token is computed, so the
  // busiest expert rank takes `moe_imbalance` x the mean share of the routed
  // tokens and sets the layer's pace. capacity_factor c > 0 (Switch
  // Transformer's): each expert is sized for c x its balanced share, tokens
  // above it dropped, so the busiest rank takes min(moe_imbalance, c) x.
  // moe_imbalance 1: routing balanced (the load-balancing loss's aim, stated
  // as an assumption in every output); > 1 a measured max/mean ratio.
  double capacity_factor = 0.0;
  double moe_imbalance = 1.0;
  // Multi-token prediction modules trained (Megatron's --mtp-num-layers);
  // -1: as the model's config gives them (TransformerConfig::mtp_layers).
  int64_t mtp_layers = -1;
  // Bytes per parameter of the gradients reduced and accumulated: 4
  // (Megatron's FP32 main_grad, the default: its arguments.py turns on
  // accumulate_allreduce_grads_in_fp32 for bf16, and Transformer Engine's FP8
  // recipes train over bf16 weights) or 2 (16-bit: Megatron with fp16,
  // DeepSpeed's and PyTorch DDP's default, NeMo's grad_sync_dtype bf16).
  double gradient_bytes = 4;
  // A fixed per-GPU allowance for the CUDA context, the communication
  // library's buffers and the matrix library's workspace, and a share of the
  // total for allocator fragmentation (docs/llm.md says where both come from).
  double workspace_bytes = 2.0e9;
  double fragmentation = 0.10;
};

// The training of a sequence length, a precision ("mixed", "bf16", "fp16",
// "fp8", "int8", "fp4": ParseMatrixFormat), a LoRA rank (0: full training),
// the attention kernels, the gradient bytes (2 or 4; 0: the framework's for
// the precision, Megatron's 2 for "fp16" and 4 otherwise) and the framework
// (LlmFrameworks(); ApplyLlmFramework), the rest defaults. UsageError naming
// the value that breaks its rule (seq_len < 1, an unknown framework, ...).
LlmTraining MakeLlmTraining(int64_t seq_len, const std::string& precision, int64_t lora_rank,
                            bool flash_attention, double gradient_bytes,
                            const std::string& framework = "megatron");

// The devices and how they are joined: the scale-up domain (NVLink, a TPU
// slice's ICI) and the network between domains.
struct LlmCluster {
  Device device;
  int devices = 1;
  int domain = 8;                          // devices per scale-up domain (node)
  Link intra;                              // one direction, per device, inside the domain
  Link inter;                              // one direction, per device, between domains
  std::string intra_source, inter_source;  // where each link came from
};

// The cluster of `devices` devices: the domain is the device's
// scale_up_domain (8 when it does not say), the links its "devices" and
// "network" links; without a network link, 50 GB/s (400 Gb/s InfiniBand per
// GPU) and 5 us are assumed and the source says so. UsageError for devices < 1.
LlmCluster MakeCluster(const Device& device, int devices, int domain = 0);

// Constants the step model takes from calibration (docs/llm.md): the factor
// on the kernel size at which the device's matrix efficiency curve is read (a
// factor > 1 reaches the curve's efficiency at smaller kernels, never above its
// plateau), the factor on its memory efficiency, the host's dispatch time per
// kernel (a pass whose kernels the host issues slower than the device runs
// them leaves the device waiting) and a fixed time per step.
struct LlmCalibration {
  double matrix_size_scale = 1.0;
  double memory_scale = 1.0;
  double dispatch_s = 10e-6;
  double step_overhead_s = 0.0;
  std::string source =
      "uncalibrated: the catalog's curves, 10 us host dispatch per kernel (assumed)";
};

// Time of one step by part, seconds, on the critical path of the slowest
// pipeline stage. compute + recompute + the exposed communication + bubble +
// optimizer + overhead = step_s.
struct LlmStepParts {
  double compute_s = 0;        // forward and backward of every micro-batch, no recompute
  double recompute_s = 0;      // the extra forward work recomputation adds
  double tensor_comm_s = 0;    // tensor (and sequence) parallel collectives, exposed
  double context_comm_s = 0;   // ring attention's exchanges not hidden by attention
  double expert_comm_s = 0;    // expert all-to-all
  double pipeline_comm_s = 0;  // point-to-point activations and gradients
  double bubble_s = 0;         // pipeline fill and drain
  double data_comm_s = 0;      // gradient reduction (and ZeRO-3 gathers) exposed
  double optimizer_s = 0;      // the update
  double overhead_s = 0;       // per-step fixed time
};

struct LlmMemory {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, logits = 0;
  double workspace = 0, fragmentation = 0;
  double total = 0;  // bytes on the most loaded GPU (of the most loaded pipeline stage)
  int stage = 0;     // that stage (0: the first)
  std::vector<double> stage_totals;  // bytes per GPU of each pipeline stage, in order
  double capacity = 0;               // the device's
  bool fits = false;
  double shortfall = 0;  // total - capacity when it does not fit, else 0
};

struct LlmStep {
  LlmSplit split;
  double step_s = 0;
  double sequences_per_s = 0;
  double tokens_per_s = 0;
  // Model FLOPs utilization: 3 x ForwardFlopsPerToken x tokens/s over the
  // devices' dense peak in the format used (recomputation not counted).
  double mfu = 0;
  LlmStepParts parts;
  LlmMemory memory;
  int64_t accumulation = 0;        // micro-batches per step
  std::vector<std::string> notes;  // assumptions this step rests on
};

// Throws UsageError when the split does not divide the model or the cluster:
// group sizes < 1, tp x pp x cp x dp != devices, heads or KV heads not
// divisible by tp, layers not divisible by pp x vp, vp > 1 without pp > 1,
// the sequence not divisible by 2 x cp, ep not dividing the experts or dp x
// cp, ep > 1 on a dense model, the global batch not a multiple of micro_batch
// x dp, zero outside 0..3, a format the device lacks.
void ValidateSplit(const TransformerConfig& model, const LlmCluster& cluster,
                   const LlmTraining& training, const LlmSplit& split);

// The part of ValidateSplit that does not depend on the split: the model, the
// sequence, the format on the device, LoRA rank, capacity factor, gradient bytes.
void ValidateTraining(const TransformerConfig& model, const LlmCluster& cluster,
                      const LlmTraining& training);

// The step of `split` (ValidateSplit first).
LlmStep ModelLlmStep(const TransformerConfig& model, const LlmCluster& cluster,
                     const LlmTraining& training, const LlmSplit& split,
                     const LlmCalibration& calibration = {});

// Memory per GPU alone (what ModelLlmStep puts in LlmStep::memory).
LlmMemory LlmMemoryPerGpu(const TransformerConfig& model, const LlmCluster& cluster,
                          const LlmTraining& training, const LlmSplit& split);

// Activation bytes of one layer for one micro-batch on one GPU, held for the
// backward pass (Korthikanti et al. 2022, Table 2 generalized; see the file
// comment): for a GPT layer (kv heads = heads, plain feed-forward 4h, dropout)
// without recomputation, tensor or sequence parallelism this is
// s*b*h*(34 + 5*a*s/h).
double LayerActivationBytes(const TransformerConfig& model, int64_t seq_len, int64_t micro_batch,
                            int tp, bool sequence_parallel, Recompute recompute,
                            bool flash_attention, int cp = 1);

}  // namespace fitspeed

#endif  // FITSPEED_LLM_SPLIT_H_
