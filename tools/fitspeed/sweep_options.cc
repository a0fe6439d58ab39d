// The table of `fitspeed sweep`'s options and the requests made from them
// (sweep_options.h).
#include "sweep_options.h"

#include <vector>

namespace fitspeed::cli {

namespace {

using V = SweepValues;

// The help of an option for the modes of `app` (one mode: its text; `sweep
// MODEL`, every mode: each text that differs, said for its mode).
std::string Help(unsigned app, const char* host, const char* device, const char* llm) {
  if (app == kHostMode) return host;
  if (app == kDeviceMode) return device;
  if (app == kLlmMode) return llm;
  std::string text;
  const char* said = nullptr;
  for (auto [t, prefix] : {std::pair{host, "On this CPU: "},
                           {device, "With --device: "},
                           {llm, "A transformer split: "}}) {
    if (t == nullptr || (said != nullptr && std::string(said) == t)) continue;
    text += (text.empty() ? "" : " ") + std::string(prefix) + t;
    said = t;
  }
  return text;
}

struct Row {
  unsigned modes;
  void (*add)(CLI::App& c, V& v, unsigned app);
};

// Each option once: the modes that take it, and how it is added.
const Row kRows[] = {
    {kEveryMode,
     [](CLI::App& c, V& v, unsigned app) {
       c.add_option("model", v.model,
                    Help(app, "Zoo network (see `fitspeed models`) or network JSON file",
                         "Zoo network (see `fitspeed models`) or network JSON file",
                         "A transformer: a built-in name (`fitspeed models --llm`), "
                         "transformer:key=value,... or a Hugging Face config.json"))
           ->required(app != kEveryMode);  // `sweep MODEL`: checked when no mode is named
     }},
    {kEveryMode,
     [](CLI::App& c, V& v, unsigned app) {
       const char* zoo =
           "Tokens per sequence of a sequence model (bert-*, gpt2*, tinyllama-*): batches then "
           "count sequences, and tokens/s = sequences/s x seq-len; default: the model's own";
       c.add_option("--seq-len", v.seq_len, Help(app, zoo, zoo, "Tokens per sequence; required"))
           ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
     }},
    {kDeviceMode,
     [](CLI::App& c, V& v, unsigned app) {
       c.add_option("--mean-tokens", v.mean_tokens,
                    Help(app, nullptr,
                         "Sequences without padding (a framework that removes it, as NVIDIA's "
                         "BERT with unpad or packing): the mean real tokens per sequence, 1 to "
                         "--seq-len (or the model's longest). The dense layers run on the real "
                         "tokens, attention within each sequence. MLPerf's BERT data: 254.43",
                         nullptr));
       c.add_option("--mean-square-tokens", v.mean_square_tokens,
                    Help(app, nullptr,
                         "With --mean-tokens: the mean of the squared tokens per sequence, which "
                         "sets the attention's work; from mean^2 to mean x the longest sequence. "
                         "Default mean^2",
                         nullptr));
       c.add_option("--head-positions", v.head_positions,
                    Help(app, nullptr,
                         "bert-*: the positions per sequence the masked-LM head is computed on "
                         "(the masked ones, gathered), 1 to the tokens per sequence. Default: 15% "
                         "of the tokens, rounded up",
                         nullptr));
     }},
    {kHostMode | kDeviceMode,
     [](CLI::App& c, V& v, unsigned app) {
       const char* b =
           "Batch sizes: 1,2,4,... or A:B (A doubling up to B) or auto (double from 1 until the "
           "throughput saturates or memory runs out); at most 2^30";
       c.add_option("--batches", v.batches, Help(app, b, b, nullptr))->capture_default_str();
       c.add_option("--max-batch", v.max_batch,
                    Help(app, "Largest batch of --batches auto", "Largest batch of --batches auto",
                         nullptr))
           ->capture_default_str()
           ->check(CLI::Range(int64_t{1}, kMaxSweepBatch));
       const char* o = "sgd, sgd-momentum (alias momentum), adam or rmsprop (with momentum)";
       c.add_option("--optimizer", v.optimizer, Help(app, o, o, nullptr))->capture_default_str();
       c.add_flag("--layers", v.layers,
                  Help(app, "Also print the per-layer time by pass at the largest batch",
                       "Also print the per-layer time by pass at the largest batch (also in "
                       "JSON, each layer marked compute- or memory-bound)",
                       nullptr));
       const char* p = "Also write an SVG plot of the measured points and the fitted curve";
       c.add_option("--plot", v.plot_path, Help(app, p, p, nullptr));
     }},
    {kEveryMode,
     [](CLI::App& c, V& v, unsigned app) {
       c.add_option("--precision", v.precision,
                    Help(app, "fp32 (default) or bf16 (host mixed precision; AVX-512+)",
                         "fp32 (default), tf32, mixed (FP16/BF16 tensor units) or fp8 (mixed, "
                         "with dense layers and a fused attention core in FP8 as Transformer "
                         "Engine runs them)",
                         "mixed (default), bf16 or fp16 (16-bit matrix units), fp8 (matrix "
                         "products in FP8, the rest BF16, as Transformer Engine runs them), "
                         "fp8-block (DeepSeek-style 1x128/128x128 blocks), mxfp8 or nvfp4 "
                         "(block-scaled, Blackwell), int8 or fp4, on a device that has them"))
           ->check(CLI::IsMember({"fp32", "bf16", "tf32", "mixed", "fp16", "fp8", "fp8-block",
                                  "mxfp8", "int8", "fp4", "nvfp4"}));
     }},
    {kHostMode,
     [](CLI::App& c, V& v, unsigned app) {
       c.add_option("--backend", v.backend,
                    Help(app, "onednn, or eigen (the reference, slower)", nullptr, nullptr))
           ->capture_default_str()
           ->check(CLI::IsMember({"onednn", "eigen"}));
       c.add_option("--threads", v.threads,
                    Help(app, "Kernel threads; 0: every available CPU", nullptr, nullptr))
           ->capture_default_str()
           ->check(CLI::Range(0, 4096));
       c.add_option("--warmup", v.warmup,
                    Help(app, "Steps run before timing each batch", nullptr, nullptr))
           ->capture_default_str()
           ->check(CLI::Range(0, 1000000));
       c.add_option("--min-repeats", v.min_repeats,
                    Help(app, "Timed steps per batch, at least", nullptr, nullptr))
           ->capture_default_str()
           ->check(CLI::Range(1, 1000000));
       c.add_option("--min-time", v.min_time_s,
                    Help(app, "Seconds of timed steps per batch, at least (after --min-repeats)",
                         nullptr, nullptr))
           ->capture_default_str()
           ->check(FiniteRange(0.0, 86400.0));
       c.add_option("--memory-limit", v.memory_limit_gib,
                    Help(app,
                         "Skip batches whose step needs more GiB; 0: 80% of the available "
                         "memory",
                         nullptr, nullptr))
           ->capture_default_str()
           ->check(FiniteRange(0.0, 1e9));
       CLI::Option* dp = c.add_flag(
           "--data-parallel", v.data_parallel.enabled,
           Help(app,
                "Run on every rank of an MPI job (mpirun -np N fitspeed sweep host MODEL "
                "--data-parallel): each rank trains on its 1/N of every batch, the gradients are "
                "averaged by MPI all-reduce in buckets started as soon as the backward pass "
                "finishes them (PyTorch DDP's method), rank 0 prints the report with the exposed "
                "communication; batches are global",
                nullptr, nullptr));
       c.add_option("--model-ranks", v.data_parallel.model_ranks,
                    Help(app,
                         "With --data-parallel --links: the ranks the modeled table predicts, at "
                         "the same per-rank batch; default: the run's own",
                         nullptr, nullptr))
           ->check(CLI::Range(1, 1 << 20))
           ->needs(dp);
     }},
    {kHostMode | kDeviceMode,
     [](CLI::App& c, V& v, unsigned app) {
       const char* b = "Gradient bucket size, MiB (PyTorch DDP's bucket_cap_mb)";
       const char* f = "The first bucket, MiB (DDP: 1), so the first all-reduce starts early";
       c.add_option("--bucket-mb", v.data_parallel.bucket_mib, Help(app, b, b, nullptr))
           ->capture_default_str()
           ->check(FiniteRange(1e-6, 1e6));
       c.add_option("--first-bucket-mb", v.data_parallel.first_bucket_mib, Help(app, f, f, nullptr))
           ->capture_default_str()
           ->check(FiniteRange(1e-6, 1e6));
     }},
    {kDeviceMode | kLlmMode,
     [](CLI::App& c, V& v, unsigned app) {
       const char* d = "A catalogued device (see `fitspeed devices`) or a device JSON file";
       c.add_option("--device", v.device, Help(app, nullptr, d, d))
           ->check([](const std::string& x) { return x.empty() ? "empty device" : ""; });
       c.add_option("--interval-level", v.interval_level,
                    Help(app, nullptr,
                         "Level of the prediction interval on every modeled throughput and step "
                         "time, from the model's out-of-sample errors on published cases of the "
                         "same device kind and precision group (docs/validation.md)",
                         "Level of the interval of LlmInterval (docs/llm.md)"))
           ->capture_default_str()
           ->check(FiniteRange(0.01, 0.99));
       c.add_option("--devices", v.devices,
                    Help(app, nullptr,
                         "Data-parallel devices sharing each batch (gradients all-reduced over "
                         "the device's link, ring formula); default 1",
                         "The devices in all, tp x pp x cp x dp (default tp x pp x cp)"))
           ->check(CLI::Range(1, 65536));
       c.add_option("--devices-per-node", v.devices_per_node,
                    Help(app, nullptr,
                         "Devices per node (0: all in one node). Below --devices (which it must "
                         "divide) the all-reduce is two-level: a ring in each node, then a ring "
                         "over the nodes over the network link (--links)",
                         "The devices per scale-up domain (0: the device's scale_up_domain, else "
                         "8)"))
           ->capture_default_str()
           ->check(CLI::Range(0, 65536));
     }},
    {kHostMode | kDeviceMode | kLlmMode,
     [](CLI::App& c, V& v, unsigned app) {
       c.add_option("--links", v.links,
                    Help(app,
                         "With --data-parallel: a links file (schema fitspeed.links/1) that "
                         "models the measured steps' all-reduces in a second table",
                         "A links file (schema fitspeed.links/1, e.g. written by `fitspeed "
                         "linkbench`) whose links replace the device's that connect the same "
                         "thing (\"devices\": the data-parallel all-reduce); bandwidth in bytes/s "
                         "per direction, latency in s per message",
                         "A links file applied before the cluster is made (\"devices\": inside "
                         "a scale-up domain, \"network\": between domains)"));
     }},
    {kDeviceMode,
     [](CLI::App& c, V& v, unsigned app) {
       c.add_option("--from", v.from,
                    Help(app, nullptr,
                         "Transfer from your own run: a measurement of MODEL on --from-device "
                         "(a training log with PATH@key=value, a cases CSV or a host sweep CSV); "
                         "the step model is calibrated on it and --device modeled with what was "
                         "fitted (docs/devices.md, \"Transfer from your own run\")",
                         nullptr));
       c.add_option("--from-device", v.from_device,
                    Help(app, nullptr,
                         "The device the --from measurement ran on: a catalog name (`host` for a "
                         "host sweep) or a device JSON file",
                         nullptr));
       c.add_option("--intervals", v.intervals,
                    Help(app, nullptr,
                         "An intervals file (schema fitspeed.intervals/1, written by `fitspeed "
                         "validate --intervals-out`) instead of the built-in errors",
                         nullptr));
       c.add_flag("--overlap,!--no-overlap", v.overlap,
                  Help(app, nullptr,
                       "All-reduce the gradients as PyTorch DDP does, in buckets (--bucket-mb, "
                       "--first-bucket-mb) started as the backward pass produces them; default "
                       "(--no-overlap): one all-reduce after the backward pass, all exposed",
                       nullptr));
       c.add_option("--layout", v.layout,
                    Help(app, nullptr,
                         "The activation layout, nchw (PyTorch's default) or nhwc "
                         "(channels_last); on a GPU whose tensor cores work in NHWC, nchw "
                         "convolutions pay transposes",
                         nullptr))
           ->check(CLI::IsMember({"nchw", "nhwc"}));
       c.add_option("--attention", v.attention,
                    Help(app, nullptr,
                         "unfused (scores, softmax and dropout each a kernel through memory: "
                         "PyTorch's eager attention; default) or fused (one FlashAttention-style "
                         "kernel per pass)",
                         nullptr))
           ->check(CLI::IsMember({"unfused", "fused"}));
       c.add_option("--amp-ops", v.amp_ops,
                    Help(app, nullptr,
                         "With --precision mixed: the layers AMP keeps in FP32, pytorch "
                         "(autocast), tensorflow (the AMP graph rewrite) or none (the model cast "
                         "to 16 bits whole, apex O2). Default: tensorflow with --framework "
                         "tensorflow or keras, else pytorch",
                         nullptr))
           ->check(CLI::IsMember({"pytorch", "tensorflow", "none"}));
       c.add_option("--fuse", v.fuse,
                    Help(app, nullptr,
                         "Element-wise work fused into batch norms: none or bn-relu-add (cuDNN's "
                         "fused batch norm, NVIDIA's MXNet ResNet-50). Default: bn-relu-add with "
                         "--framework mxnet --precision mixed, else none",
                         nullptr))
           ->check(CLI::IsMember({"none", "bn-relu-add"}));
       c.add_option(
            "--steps-per-execution", v.steps_per_execution,
            Help(app, nullptr, "Training steps per host call (Keras steps_per_execution)", nullptr))
           ->capture_default_str()
           ->check(CLI::Range(1, 1000000));
       c.add_option("--accumulation", v.accumulation,
                    Help(app, nullptr,
                         "Gradient accumulation, micro-batches per optimizer step (each batch of "
                         "--batches is one micro-batch; a step trains accumulation x batch)",
                         nullptr))
           ->capture_default_str()
           ->check(CLI::Range(1, 1000000));
       c.add_option("--input-rate", v.input_rate,
                    Help(app, nullptr,
                         "Samples/s the input pipeline delivers to each device; a step takes the "
                         "longer of the device's step and per-device batch / rate. 0: unlimited",
                         nullptr))
           ->capture_default_str()
           ->check(FiniteRange(0.0, 1e15));
     }},
    {kDeviceMode | kLlmMode,
     [](CLI::App& c, V& v, unsigned app) {
       c.add_option("--recompute", v.recompute,
                    Help(app, nullptr,
                         "Activation recomputation (bare --recompute or full): keep only the "
                         "tensors where the network is cut to one live tensor and run each "
                         "segment's forward again before its backward",
                         "none (default), selective (the attention core recomputed, Korthikanti "
                         "et al. 2022) or full (each layer's forward again)"))
           ->expected(0, 1)
           ->default_str("")
           ->check(CLI::IsMember({"", "none", "selective", "full"}));
       c.add_option("--framework", v.framework,
                    Help(app, nullptr,
                         "Apply this framework's profile (pytorch, tensorflow, mxnet, keras, "
                         "paddlepaddle, caffe: efficiency scales and host overhead fitted on its "
                         "published GPU runs; `fitspeed validate --frameworks`)",
                         LlmFrameworkHelp().c_str()));
     }},
    {kLlmMode,
     [](CLI::App& c, V& v, unsigned) {
       c.add_option("--tp", v.tp, "Tensor-parallel size (Megatron's split; divides the heads)")
           ->check(CLI::Range(1, 65536));
       c.add_option("--pp", v.pp, "Pipeline stages (divides the layers; 1F1B)")
           ->check(CLI::Range(1, 65536));
       c.add_option("--vp", v.vp, "Virtual stages per pipeline stage (interleaved 1F1B)")
           ->check(CLI::Range(1, 65536));
       c.add_option("--cp", v.cp,
                    "Context-parallel size (ring attention; 2 x cp divides "
                    "--seq-len)")
           ->check(CLI::Range(1, 65536));
       c.add_option("--ep", v.ep,
                    "Expert-parallel size (MoE; divides the experts, and etp x ep divides tp x "
                    "cp x dp)")
           ->check(CLI::Range(1, 65536));
       c.add_option("--etp", v.etp,
                    "Expert tensor-parallel size (MoE; Megatron's "
                    "--expert-tensor-parallel-size); default: tp")
           ->check(CLI::Range(1, 65536));
       c.add_flag("--overlap-moe-comm", v.overlap_moe_comm,
                  "MoE: the expert all-to-alls overlapped with another micro-batch's compute "
                  "(Megatron-Core's --overlap-moe-expert-parallel-comm, DeepSeek's DualPipe); "
                  "default: exposed");
       c.add_option("--micro-batch", v.micro_batch,
                    "Sequences per micro-batch per data-parallel rank (default 1)")
           ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
       c.add_option(
            "--global-batch", v.global_batch,
            "Sequences per optimizer step, a multiple of micro-batch x dp (dp = devices / "
            "(tp x pp x cp)); default micro-batch x dp, x pp with --vp > 1 (Megatron's interleaved "
            "schedule needs a multiple of pp micro-batches)")
           ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
       c.add_option("--zero", v.zero,
                    "ZeRO stage: 0 (DDP), 1 (optimizer state sharded over dp), 2 (+ "
                    "gradients), 3 (+ weights, FSDP's FULL_SHARD); default: the framework's "
                    "(megatron 0, fsdp and fsdp2 3)")
           ->check(CLI::Range(0, 3));
       c.add_option("--shard-group", v.shard_group,
                    "Hybrid sharding: ZeRO's state sharded over groups of this many "
                    "data-parallel ranks and replicated across the groups, whose gradient shards "
                    "are all-reduced (FSDP's HYBRID_SHARD, torchtitan's replicate x shard, "
                    "Megatron's --num-distributed-optimizer-instances); needs --zero >= 1; "
                    "default: every data-parallel rank")
           ->check(CLI::Range(1, 65536));
       c.add_flag("--sequence-parallel", v.sequence_parallel,
                  "Megatron's sequence parallelism (norms and dropout split over tp)");
       c.add_flag("--tp-comm-overlap", v.tp_comm_overlap,
                  "With --sequence-parallel: Transformer Engine's userbuffers overlap of the "
                  "tensor-parallel all-gathers and reduce-scatters with the products beside them "
                  "(Megatron's --tp-comm-overlap, NeMo's tp_comm_overlap); default: exposed");
       c.add_flag("--no-overlap-grad-reduce", v.no_overlap_grad_reduce,
                  "The gradient reduction runs after the last micro-batch, exposed (default: "
                  "overlapped with the backward pass)");
       AddLlmTrainingOptions(c, v.training, /*gradient_bytes=*/true, /*framework=*/false);
     }},
    {kEveryMode,
     [](CLI::App& c, V& v, unsigned) {
       AddOutputOption(c, v.output, HtmlReport::kYes);
       AddProgressOption(c, v.progress);
     }},
    {kHostMode | kDeviceMode, [](CLI::App& c, V& v, unsigned) { AddFitOptions(c, v.fit); }},
};

}  // namespace

SweepOptionModes AddSweepOptions(CLI::App& command, SweepValues& values, unsigned modes) {
  SweepOptionModes names;
  for (const Row& row : kRows) {
    if ((row.modes & modes) == 0) continue;
    const size_t before = command.get_options().size();
    row.add(command, values, modes);
    const std::vector<CLI::Option*> options = command.get_options();
    for (size_t i = before; i < options.size(); ++i) names.emplace_back(options[i], row.modes);
  }
  return names;
}

}  // namespace fitspeed::cli
