#!/usr/bin/env python3
"""First-hand GPU measurements for fitspeed's LLM planner, in one bounded run.

    PYTHONUNBUFFERED=1 python3 bench/gpu/llm_kernels.py --out $OUT --budget-s 450

Sections, in priority order, each writing its CSV row by row (bench/gpu/README.md):
  gemm        BF16/FP16 GEMMs (F.linear, torch.matmul) and FP8 (torch._scaled_mm) at the
              layer shapes of Llama-3-8B, Llama-3-70B and GPT-3-175B under tensor
              parallelism 1/2/4/8, the backward's two products at one token count,
              vTrain's small GPT shapes in FP16 and a square-size sweep -> gemm.csv
  attention   causal scaled_dot_product_attention per forced backend and eager,
              forward and forward+backward -> attention.csv
  memory_ops  LayerNorm, RMSNorm, GELU, SiLU*mul, softmax, dropout, add, copy,
              forward and backward -> memory_ops.csv
  steps       whole training steps of GPT-2-medium and a Llama-style 1B written in
              plain torch here (then, if transformers imports, the same two models
              from transformers' configs) -> steps.csv
plus provenance.json (machine, versions, clocks, per-section wall time, what was
skipped and why) and log.txt.

Robustness: every measurement runs in try/except (an error or out-of-memory is a row
with its status, then the memory is freed and the run goes on); a time budget is
checked before each measurement against its estimated cost, each later section keeping
a reserve; a watchdog thread ends the process (after saving provenance) if the budget
plus a grace period is exceeded. --tiny runs every section at toy sizes (on the CPU with
--device cpu), --estimate prints the planned run time per section without measuring.
"""

import time

T_START = time.time()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import csv  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

try:
    import torch
    from torch import nn
    import torch.nn.functional as F
except Exception as exc:  # pragma: no cover - nothing to measure without torch
    print(f"llm_kernels.py: cannot import torch: {exc!r}", file=sys.stderr)
    sys.exit(2)

T_IMPORTED = time.time()

# ----------------------------------------------------------------------------------
# Shapes
# ----------------------------------------------------------------------------------

# Models of the GEMM sweep. kv_heads == heads: no grouped-query attention.
LLM_MODELS = [
    dict(model="llama-3-8b", hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, gated=True),
    dict(model="llama-3-70b", hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672, gated=True),
    dict(model="gpt-3-175b", hidden=12288, heads=96, kv_heads=96, head_dim=128, ffn=49152, gated=False),
]
TINY_LLM_MODELS = [
    dict(model="tiny-llama", hidden=128, heads=4, kv_heads=2, head_dim=32, ffn=256, gated=True),
    dict(model="tiny-gpt", hidden=96, heads=3, kv_heads=3, head_dim=32, ffn=384, gated=False),
]

# Whole-step models, written below in plain torch (Decoder) and, when transformers
# imports, built from its configs. Parameter counts: gpt2-medium 354,823,168 (as
# transformers' GPT2LMHeadModel), llama-1b 1,235,814,400 (Llama-3.2-1B's shape: tied
# embeddings, head_dim 64).
STEP_MODELS = [
    dict(model="gpt2-medium", layers=24, hidden=1024, heads=16, kv_heads=16, ffn=4096, vocab=50257,
         seq=1024, positions="learned", norm="layernorm", mlp="gelu", bias=True, tied=True, dropout=0.1),
    dict(model="llama-1b", layers=16, hidden=2048, heads=32, kv_heads=8, ffn=8192, vocab=128256,
         seq=2048, positions="rope", norm="rmsnorm", mlp="swiglu", bias=False, tied=True, dropout=0.0),
]
TINY_STEP_MODELS = [
    dict(model="tiny-gpt2", layers=2, hidden=64, heads=4, kv_heads=4, ffn=256, vocab=1000,
         seq=64, positions="learned", norm="layernorm", mlp="gelu", bias=True, tied=True, dropout=0.1),
    dict(model="tiny-llama", layers=2, hidden=64, heads=4, kv_heads=2, ffn=128, vocab=1000,
         seq=64, positions="rope", norm="rmsnorm", mlp="swiglu", bias=False, tied=True, dropout=0.0),
]


class Plan:
    """Every size list of the run; --tiny swaps in toy sizes."""

    def __init__(self, tiny, bwd_tokens):
        if tiny:
            self.llm_models = TINY_LLM_MODELS
            self.tps = [1, 2]
            self.tokens = [64, 128]
            self.bwd_tokens = 128
            self.vtrain_hidden = [64, 128]
            self.vtrain_seq = 32
            self.vtrain_mb = [1, 2]
            self.vtrain_tps = [1, 2]
            self.square = [64, 96, 128]
            self.attn_batch, self.attn_heads, self.attn_kv, self.attn_dim = 1, 4, 2, 32
            self.attn_seqs = [64, 128]
            self.eager_max_seq = 128
            self.mem_tokens = 256
            self.mem_hidden = [128, 256]
            self.step_models = TINY_STEP_MODELS
            self.step_mbs = [1, 2]
            self.step_warmup = 1
            self.step_min = 3
            self.step_max = 3
            self.warmup = 2
            self.min_reps = 3
            self.max_reps = 5
            self.target_s = 0.0
            self.max_item_s = 5.0
        else:
            self.llm_models = LLM_MODELS
            self.tps = [1, 2, 4, 8]
            self.tokens = [2048, 4096, 8192, 16384]
            self.bwd_tokens = bwd_tokens
            self.vtrain_hidden = [1024, 2048]
            self.vtrain_seq = 1024
            self.vtrain_mb = [1, 2, 4, 8, 16]
            self.vtrain_tps = [1, 2, 4, 8]
            self.square = [256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
            self.attn_batch, self.attn_heads, self.attn_kv, self.attn_dim = 1, 32, 8, 128
            self.attn_seqs = [1024, 2048, 4096, 8192, 16384, 32768]
            self.eager_max_seq = 8192
            self.mem_tokens = 8192
            self.mem_hidden = [4096, 8192]
            self.step_models = STEP_MODELS
            self.step_mbs = [1, 2, 4, 8, 16]
            self.step_warmup = 3
            self.step_min = 10
            self.step_max = 30
            self.warmup = 3       # calls before timing; the last one sizes the repetitions
            self.min_reps = 10
            self.max_reps = 100
            self.target_s = 0.1  # repetitions: enough for ~0.1 s of measured time
            self.max_item_s = 3.0


# Seconds each section keeps for itself: a section must stop when what is left of the
# budget falls to the sum of the reserves of the sections after it.
RESERVES = {"gemm": 90.0, "attention": 45.0, "memory_ops": 10.0, "steps": 90.0, "hf_steps": 60.0,
            "attention_cudnn": 20.0}
SECTIONS = ["gemm", "attention", "memory_ops", "steps", "hf_steps", "attention_cudnn"]

GEMM_COLUMNS = ["section", "model", "op", "pass", "dtype", "m", "n", "k", "tp", "tokens", "flops",
                "median_ms", "min_ms", "tflops", "layout", "reps", "status", "note"]
ATTN_COLUMNS = ["section", "backend", "pass", "dtype", "batch", "heads", "kv_heads", "head_dim", "seq",
                "causal", "flops_full", "flops_causal", "median_ms", "min_ms", "tflops", "tflops_full",
                "reps", "status", "note"]
MEM_COLUMNS = ["section", "op", "impl", "pass", "dtype", "tokens", "hidden", "elements", "bytes",
               "median_ms", "min_ms", "gbs", "reps", "status", "note"]
STEP_COLUMNS = ["section", "model", "impl", "micro_batch", "seq", "tokens", "params", "params_matmul",
                "layers", "hidden", "heads", "kv_heads", "vocab", "precision", "optimizer", "attention",
                "model_flops", "model_flops_causal", "median_ms", "min_ms", "host_ms", "steps",
                "tokens_per_s", "tflops", "tflops_causal", "peak_mem_gb", "status", "note"]

# Errors after which the CUDA context is unusable: everything later is skipped, not failed.
STICKY_CUDA_ERRORS = ("illegal memory access", "device-side assert", "unspecified launch failure",
                      "CUDA error: an illegal instruction", "misaligned address", "CUDA error: unknown error",
                      "cudaErrorLaunchFailure", "ECC error")

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}

# ----------------------------------------------------------------------------------
# Output: log, CSVs, provenance
# ----------------------------------------------------------------------------------


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()

    def __call__(self, msg):
        line = f"[{time.time() - T_START:7.1f}s] {msg}"
        with self.lock:
            print(line, flush=True)
            try:
                self.f.write(line + "\n")
                self.f.flush()
            except Exception:
                pass


def fmt(v):
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return ""
        return f"{v:.6g}"
    return v


class CsvOut:
    def __init__(self, path, columns):
        self.columns = columns
        self.f = open(path, "w", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=columns, extrasaction="ignore")
        self.w.writeheader()
        self.f.flush()
        self.rows = 0

    def write(self, row):
        self.w.writerow({c: fmt(row.get(c, "")) for c in self.columns})
        self.f.flush()
        self.rows += 1


class Provenance:
    def __init__(self, path):
        self.path = path
        self.lock = threading.RLock()
        self.data = {}

    def save(self):
        with self.lock:
            tmp = self.path + ".tmp"
            try:
                with open(tmp, "w") as f:
                    json.dump(self.data, f, indent=1, default=str)
                os.replace(tmp, self.path)
            except Exception as exc:  # never let provenance stop the run
                print(f"provenance save failed: {exc!r}", file=sys.stderr)


def run_cmd(argv, timeout=15):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return (r.stdout.strip() or r.stderr.strip()) if r.returncode == 0 else \
            f"exit {r.returncode}: {r.stderr.strip()[:500]}"
    except Exception as exc:
        return f"unavailable: {exc!r}"


CLOCK_QUERY = "clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu"


def gpu_clocks():
    return run_cmd(["nvidia-smi", f"--query-gpu={CLOCK_QUERY}", "--format=csv"])


def package_version(name):
    try:
        from importlib import metadata
        return metadata.version(name)
    except Exception as exc:
        return f"absent ({type(exc).__name__})"


def short(exc):
    s = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("\r", " ")
    return s[:300]


def is_oom(exc):
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    return "out of memory" in str(exc).lower()


def free_memory(device):
    gc.collect()
    if device.type == "cuda":
        try:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        except Exception:  # a broken context raises here too: the run goes on regardless
            pass


def device_ctx(device):
    """torch.device as a context manager (torch >= 2.0): build modules on the device."""
    if hasattr(torch.device, "__enter__"):
        return device
    return contextlib.nullcontext()


# ----------------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------------


class Bench:
    """Times a callable: warm-up calls, then repetitions, each bracketed by CUDA events
    (host perf_counter on the CPU), optionally after overwriting a buffer larger than the
    L2 cache so that each repetition starts cold (as Triton's do_bench does)."""

    def __init__(self, device, plan):
        self.device = device
        self.cuda = device.type == "cuda"
        self.plan = plan
        self.flush_buf = None
        if self.cuda:
            l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0
            self.flush_buf = torch.empty(max(256 << 20, 4 * l2), dtype=torch.int8, device=device)

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def _once(self, fn, flush):
        if self.cuda:
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            if flush:
                self.flush_buf.zero_()
            s.record()
            fn()
            e.record()
            e.synchronize()
            return s.elapsed_time(e) / 1e3
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    def reps_for(self, t1):
        p = self.plan
        n = p.min_reps if p.target_s <= 0 else math.ceil(p.target_s / max(t1, 1e-6))
        n = max(p.min_reps, min(p.max_reps, n))
        if t1 * n > p.max_item_s:
            n = max(3, int(p.max_item_s / max(t1, 1e-9)))
        return n

    def time(self, fn, flush=True):
        p = self.plan
        for _ in range(max(0, p.warmup - 1)):
            fn()
        self.sync()
        t1 = self._once(fn, flush)
        reps = self.reps_for(t1)
        if self.cuda:
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            for i in range(reps):
                if flush:
                    self.flush_buf.zero_()
                starts[i].record()
                fn()
                ends[i].record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        else:
            times = []
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1e3)
        return dict(median_ms=statistics.median(times), min_ms=min(times), reps=reps)


def estimate_item(plan, t_kernel, fixed_s, flush=True, cuda=True):
    """Seconds one Bench.time call should take, for the budget and --estimate."""
    per_call = t_kernel + (8e-6 if cuda else 0.0) + ((256 << 20) / 3.0e12 if flush and cuda else 0.0)
    reps = max(plan.min_reps, min(plan.max_reps, math.ceil(plan.target_s / max(t_kernel, 1e-6))
                                  if plan.target_s > 0 else plan.min_reps))
    if t_kernel * reps > plan.max_item_s:
        reps = max(3, int(plan.max_item_s / max(t_kernel, 1e-9)))
    return fixed_s + (plan.warmup + reps + 1) * per_call


# ----------------------------------------------------------------------------------
# The run: budget, items, sections
# ----------------------------------------------------------------------------------


class SkipItem(Exception):
    """Raised by an item that cannot run here (an API or dtype the probe found missing):
    recorded as a skip with its reason, not as a row."""


class Item:
    """One measurement: its row's identifying fields, its estimated seconds, and run(),
    which returns the measured fields (a dict merged into the row)."""

    def __init__(self, row, est_s, run, group=None, label=None):
        self.row = row
        self.est_s = est_s
        self.run = run
        self.group = group
        self.label = label or " ".join(f"{k}={v}" for k, v in row.items() if k != "section")


class Run:
    def __init__(self, args, out, log, prov, device, plan):
        self.args = args
        self.out = out
        self.log = log
        self.prov = prov
        self.device = device
        self.plan = plan
        self.cuda = device.type == "cuda"
        self.end = T_START + args.budget_s
        self.deadline = self.end
        self.enabled = [s for s in SECTIONS if s in args.sections]
        self.bench = None
        self.probes = {}          # capability probes: key -> None (works) or the error
        self.broken = None        # set by an error that leaves the CUDA context unusable
        self.quiet = False        # while only planning (estimates): record no skips
        self.assume_apis = False  # --estimate for a GPU from any machine: FP8 and SDPA assumed present
        self.rate = args.assume_tflops * 1e12   # BF16 dense FLOP/s, for the estimates
        self.bw = args.assume_gbs * 1e9          # bytes/s
        if not self.cuda:
            self.rate, self.bw = args.cpu_gflops * 1e9, args.cpu_gbs * 1e9

    # --- budget ---
    def begin_section(self, name):
        later = self.enabled[self.enabled.index(name) + 1:] if name in self.enabled else []
        reserve = 0.0 if self.args.tiny else sum(RESERVES[s] for s in later)
        self.deadline = self.end - reserve
        self.log(f"== section {name}: {self.deadline - time.time():.0f} s before its deadline "
                 f"(budget ends in {self.end - time.time():.0f} s, {reserve:.0f} s reserved for {later})")

    def skip(self, section, what, reason, kind=None):
        """Records a skipped item: provenance keeps the count per reason (kind: the reason
        without the item's numbers) and the first 40 items; the log shows each budget skip
        and the first item of every other reason."""
        if self.quiet:
            return
        kind = kind or reason
        with self.prov.lock:
            sk = self.prov.data.setdefault("skipped", {}).setdefault(
                section, {"count": 0, "reasons": {}, "items": []})
            sk["count"] += 1
            first = kind not in sk["reasons"]
            sk["reasons"][kind] = sk["reasons"].get(kind, 0) + 1
            if len(sk["items"]) < 40:
                sk["items"].append(f"{what}: {reason}")
        if first or kind == "budget":
            self.log(f"skip [{section}] {what}: {reason}" + ("" if kind == "budget" else
                                                             " (further skips for this reason: counted only)"))

    def probe(self, key, fn):
        """Runs fn (a tiny instance of a kind of measurement) once per key; if it fails
        (other than out of memory), every item of that kind is skipped with the error."""
        if key not in self.probes:
            try:
                fn()
                self.probes[key] = None
            except Exception as exc:  # noqa: BLE001
                if is_oom(exc):
                    return
                self.probes[key] = short(exc)
                self.log(f"probe {key} failed: {self.probes[key]}")
        if self.probes[key]:
            raise SkipItem(f"{key} fails on a tiny probe: {self.probes[key]}")

    # --- running items ---
    def run_items(self, section, items, writer, free_each=False):
        failed_groups = {}
        stats = dict(ok=0, error=0, oom=0, skipped=0)
        for it in items:
            if self.broken:
                self.skip(section, it.label, f"the CUDA context is broken ({self.broken})", kind="cuda broken")
                stats["skipped"] += 1
                continue
            if it.group is not None and it.group in failed_groups:
                self.skip(section, it.label, f"an earlier item of its group failed ({failed_groups[it.group]})")
                stats["skipped"] += 1
                continue
            now = time.time()
            if now + it.est_s > self.deadline:
                self.skip(section, it.label, f"budget: estimated {it.est_s:.2f} s, "
                          f"{self.deadline - now:.1f} s left before the section's deadline", kind="budget")
                stats["skipped"] += 1
                continue
            t0 = time.time()
            row = dict(it.row)
            failed = False
            try:
                res = it.run()
                row.update(res)
                row.setdefault("status", "ok")
            except SkipItem as exc:
                self.skip(section, it.label, str(exc))
                stats["skipped"] += 1
                continue
            except Exception as exc:  # noqa: BLE001 - every failure becomes a row
                failed = True
                row["status"] = "oom" if is_oom(exc) else "error"
                row["note"] = short(exc)
                if it.group is not None:
                    failed_groups[it.group] = f"{row['status']} at {it.label}"
                if self.cuda and any(m in str(exc) for m in STICKY_CUDA_ERRORS):
                    self.broken = f"{short(exc)[:160]} at {section} {it.label}"
                    self.log(f"CUDA context broken: {self.broken}; every later item is skipped")
                if self.args.verbose_errors:
                    self.log(traceback.format_exc())
            if failed or free_each:
                free_memory(self.device)
            stats[row["status"] if row["status"] in stats else "error"] += 1
            writer.write(row)
            dt = time.time() - t0
            shown = {k: row.get(k) for k in ("median_ms", "tflops", "gbs", "tokens_per_s") if row.get(k)}
            self.log(f"{section} {it.label}: {row['status']} "
                     + " ".join(f"{k}={fmt(v)}" for k, v in shown.items())
                     + (f" ({row.get('note')})" if row.get("note") else "")
                     + f" [{dt:.2f} s, est {it.est_s:.2f} s]")
        return stats


# ----------------------------------------------------------------------------------
# Section 1: GEMMs
# ----------------------------------------------------------------------------------


def layer_gemms(m, tp):
    """Forward products of one transformer layer under tensor parallelism tp, as (op, n, k):
    y[tokens, n] = x[tokens, k] @ W^T with W [n, k] (nn.Linear's layout)."""
    h, hd = m["hidden"], m["head_dim"]
    return [
        ("qkv", (m["heads"] + 2 * m["kv_heads"]) * hd // tp, h),
        ("attn_out", h, m["heads"] * hd // tp),
        ("ffn_up_gate" if m["gated"] else "ffn_up", (2 if m["gated"] else 1) * m["ffn"] // tp, h),
        ("ffn_down", h, m["ffn"] // tp),
    ]


def products(pass_, tokens, n, k):
    """The product a pass computes from a forward (tokens, n, k): (m, n, k, layout).
    fwd: x[T,k] @ W^T -> [T,n]; bwd_act: dy[T,n] @ W[n,k] -> [T,k];
    bwd_weight: dy^T[n,T] @ x[T,k] -> [n,k] (dW, as nn.Linear's backward computes it)."""
    if pass_ == "fwd":
        return tokens, n, k, "rc"
    if pass_ == "bwd_act":
        return tokens, k, n, "rr"
    return n, k, tokens, "cr"


def fp8_supported(run):
    if run.assume_apis:
        return None
    if not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no float8_e4m3fn"
    if not hasattr(torch, "_scaled_mm"):
        return f"torch {torch.__version__} has no _scaled_mm"
    if not run.cuda:
        return "FP8 GEMMs (torch._scaled_mm) need a CUDA device"
    cap = torch.cuda.get_device_capability(run.device)
    if cap < (8, 9):
        return f"FP8 needs compute capability >= 8.9, this GPU is {cap}"
    return None


def make_gemm(run, dtype, m, n, k, layout, probe=True):
    """A callable computing one product, operands made here (randn)."""
    if probe:
        run.probe(f"gemm {dtype} layout {layout}", lambda: make_gemm(run, dtype, 32, 32, 32, layout, False)())
    dev = run.device
    if dtype.startswith("fp8"):
        # torch._scaled_mm: a [m,k] row-major, b [k,n] column-major (b = W.t() with W [n,k]
        # contiguous), float8_e4m3fn both, float32 per-tensor scales (one element each),
        # m, n, k multiples of 16; out_dtype bf16. Fast accumulation: 'fp8_e4m3_fast'.
        if m % 16 or n % 16 or k % 16:
            raise ValueError("torch._scaled_mm needs m, n, k multiples of 16")
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
        sa = torch.ones((), device=dev, dtype=torch.float32)
        sb = torch.ones((), device=dev, dtype=torch.float32)
        fast = dtype.endswith("_fast")

        def fn():
            out = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                   use_fast_accum=fast)
            return out[0] if isinstance(out, tuple) else out   # torch < 2.5 returned (out, amax)
        fn()   # surface API errors before timing
        return fn
    dt = DTYPES[dtype]
    if layout == "rc":      # F.linear(x [m,k], W [n,k])
        x = torch.randn(m, k, device=dev, dtype=dt)
        w = torch.randn(n, k, device=dev, dtype=dt)
        return lambda: F.linear(x, w)
    if layout == "rr":      # a [m,k] @ b [k,n], both row-major
        a = torch.randn(m, k, device=dev, dtype=dt)
        b = torch.randn(k, n, device=dev, dtype=dt)
        return lambda: torch.matmul(a, b)
    a = torch.randn(k, m, device=dev, dtype=dt).t()   # "cr": a transposed view [m,k]
    b = torch.randn(k, n, device=dev, dtype=dt)
    return lambda: torch.matmul(a, b)


def gemm_item(run, section, model, op, pass_, dtype, m, n, k, tp, tokens, layout):
    flops = 2 * m * n * k
    row = dict(section=section, model=model, op=op, dtype=dtype, m=m, n=n, k=k, tp=tp, tokens=tokens,
               flops=flops, layout=layout)
    row["pass"] = pass_
    rate = run.rate * (2.0 if dtype.startswith("fp8") else 1.0)
    elem = 1 if dtype.startswith("fp8") else (4 if dtype == "fp32" else 2)
    t_kernel = max(flops / rate, elem * (m * k + n * k + m * n) / run.bw, 5e-6)
    est = estimate_item(run.plan, t_kernel, 0.004 + 3 * elem * (m * k + n * k) / 200e9 if run.cuda else 0.0,
                        cuda=run.cuda)

    def go():
        fn = make_gemm(run, dtype, m, n, k, layout)
        r = run.bench.time(fn)
        r["tflops"] = flops / (r["median_ms"] * 1e-3) / 1e12
        return r
    return Item(row, est, go, label=f"{section} {model} {op} {pass_} {dtype} m={m} n={n} k={k}")


def section_gemm(run):
    p = run.plan
    fp8_skip = fp8_supported(run)
    if fp8_skip:
        run.skip("gemm", "all FP8 products", fp8_skip)
    items = []

    def llm(dtypes, passes, tokens_list, section):
        for d in dtypes:
            if d.startswith("fp8") and fp8_skip:
                continue
            for m in p.llm_models:
                for tp in p.tps:
                    for tokens in tokens_list:
                        for op, n, k in layer_gemms(m, tp):
                            for ps in passes:
                                mm, nn_, kk, lay = products(ps, tokens, n, k)
                                items.append(gemm_item(run, section, m["model"], op, ps, d, mm, nn_, kk,
                                                       tp, tokens, lay))

    def square(dtypes):
        for d in dtypes:
            if d.startswith("fp8") and fp8_skip:
                continue
            for s in p.square:
                items.append(gemm_item(run, "square", "square", "matmul", "fwd", d, s, s, s, 1, s, "rc"))

    def vtrain():
        for h in p.vtrain_hidden:
            mdl = dict(model=f"vtrain-gpt-h{h}", hidden=h, heads=16, kv_heads=16, head_dim=h // 16,
                       ffn=4 * h, gated=False)
            for tp in p.vtrain_tps:
                for mb in p.vtrain_mb:
                    tokens = mb * p.vtrain_seq
                    for op, n, k in layer_gemms(mdl, tp):
                        for ps in ("fwd", "bwd_act", "bwd_weight"):
                            mm, nn_, kk, lay = products(ps, tokens, n, k)
                            items.append(gemm_item(run, "vtrain", mdl["model"], op, ps, "fp16", mm, nn_,
                                                   kk, tp, tokens, lay))

    # Priority order: what the planner needs most first.
    llm(["bf16"], ["fwd"], p.tokens, "llm")
    llm(["bf16"], ["bwd_act", "bwd_weight"], [p.bwd_tokens], "llm")
    llm(["fp8_e4m3"], ["fwd"], p.tokens, "llm")
    square(["bf16", "fp8_e4m3", "fp8_e4m3_fast", "fp16"] + (["fp32"] if not run.cuda else []))
    vtrain()
    llm(["fp16"], ["fwd"], p.tokens, "llm")
    llm(["fp16"], ["bwd_act", "bwd_weight"], [p.bwd_tokens], "llm")
    llm(["fp8_e4m3_fast"], ["fwd"], p.tokens, "llm")
    return items


# ----------------------------------------------------------------------------------
# Section 2: attention
# ----------------------------------------------------------------------------------


def sdpa_backends(run):
    """(name, backend or None, why-not) for the forced SDPA backends."""
    if run.assume_apis:
        return [(n, n, None) for n in ("default", "flash", "cudnn", "efficient")]
    if not hasattr(F, "scaled_dot_product_attention"):
        why = f"torch {torch.__version__} has no scaled_dot_product_attention"
        return [(n, None, why) for n in ("default", "flash", "cudnn", "efficient")]
    out = [("default", None, None)]
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: F401
    except Exception as exc:
        why = f"torch.nn.attention.sdpa_kernel unavailable: {short(exc)}"
        return out + [(n, None, why) for n in ("flash", "cudnn", "efficient")]
    for name, attr in (("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"),
                       ("efficient", "EFFICIENT_ATTENTION")):
        b = getattr(SDPBackend, attr, None)
        out.append((name, b, None if b is not None else f"SDPBackend has no {attr}"))
    return out


def eager_attention(q, k, v, mask):
    """matmul, causal mask, softmax in FP32 (as transformers' eager path), matmul."""
    rep = q.shape[1] // k.shape[1]
    if rep > 1:
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
    s = torch.matmul(q, k.transpose(-1, -2)) * (q.shape[-1] ** -0.5)
    s = s.masked_fill(mask, float("-inf"))
    pr = torch.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype)
    return torch.matmul(pr, v)


def attention_item(run, backend_name, backend, pass_, b, h, kv, d, s):
    dt = torch.bfloat16
    flops_full = 4 * b * h * s * s * d * (3.5 if pass_ == "fwd_bwd" else 1.0)
    flops_causal = flops_full / 2
    row = dict(section="attention", backend=backend_name, dtype="bf16", batch=b, heads=h, kv_heads=kv,
               head_dim=d, seq=s, causal=1, flops_full=int(flops_full), flops_causal=int(flops_causal))
    row["pass"] = pass_
    eager = backend_name == "eager"
    if eager:
        elems = b * h * s * s
        t_kernel = flops_full / run.rate + elems * (14 if pass_ == "fwd" else 40) / run.bw
        fixed = 0.05
    else:
        t_kernel = flops_causal / (0.6 * run.rate)
        fixed = 0.4 if backend_name == "cudnn" else 0.05   # cuDNN builds a graph per shape
    est = estimate_item(run.plan, t_kernel, fixed if run.cuda else 0.0, cuda=run.cuda)

    def go():
        dev = run.device
        if eager and run.cuda:
            need = b * h * s * s * (28 if pass_ == "fwd_bwd" else 14)
            free = torch.cuda.mem_get_info(dev)[0]
            if need > 0.8 * free:
                raise MemoryError(f"eager attention needs ~{need / 2**30:.0f} GiB, "
                                  f"{free / 2**30:.0f} GiB free: not run (out of memory)")
        grad = pass_ == "fwd_bwd"
        # [b, s, heads, d] transposed to [b, heads, s, d]: the layout a projection yields
        q = torch.randn(b, s, h, d, device=dev, dtype=dt).transpose(1, 2).requires_grad_(grad)
        k = torch.randn(b, s, kv, d, device=dev, dtype=dt).transpose(1, 2).requires_grad_(grad)
        v = torch.randn(b, s, kv, d, device=dev, dtype=dt).transpose(1, 2).requires_grad_(grad)
        if eager:
            mask = torch.ones(s, s, dtype=torch.bool, device=dev).triu(1)
            attn = lambda: eager_attention(q, k, v, mask)  # noqa: E731
        elif kv != h:
            attn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)  # noqa: E731
        else:
            attn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
        if grad:
            do = torch.randn(b, h, s, d, device=dev, dtype=dt)

            def fn():
                o = attn()
                torch.autograd.grad(o, (q, k, v), do)
        else:
            def fn():
                with torch.no_grad():
                    attn()
        ctx = contextlib.nullcontext()
        if backend is not None:
            from torch.nn.attention import sdpa_kernel
            ctx = sdpa_kernel(backend)
        with ctx:
            fn()   # surface "no available kernel" before timing
            r = run.bench.time(fn)
        r["tflops"] = flops_causal / (r["median_ms"] * 1e-3) / 1e12
        r["tflops_full"] = flops_full / (r["median_ms"] * 1e-3) / 1e12
        return r
    return Item(row, est, go, group=(backend_name, kv, pass_),
                label=f"{backend_name} {pass_} kv={kv} s={s}")


def section_attention(run, cudnn_only=False):
    """The SDPA backends and eager; cuDNN's backend runs in its own section at the end of
    the run (cudnn_only), so that a crash there cannot take the other sections with it."""
    sec = "attention_cudnn" if cudnn_only else "attention"
    p = run.plan
    items = []
    backends = []
    for name, backend, why in sdpa_backends(run):
        if (name == "cudnn") != cudnn_only:
            continue
        if why:
            run.skip(sec, f"SDPA backend {name}", why)
        elif not run.cuda and name != "default":
            # CPU: the forced backends are CUDA kernels; 'default' runs the CPU's own path.
            run.skip(sec, f"SDPA backend {name}", "a CUDA kernel, the device is cpu", kind="CUDA kernel, cpu")
        else:
            backends.append((name, backend))
    if not cudnn_only:
        backends.append(("eager", None))
    for s in p.attn_seqs:
        for name, backend in backends:
            if name == "eager" and s > p.eager_max_seq:
                continue
            for kv in (p.attn_heads, p.attn_kv):
                for ps in ("fwd", "fwd_bwd"):
                    items.append(attention_item(run, name, backend, ps, p.attn_batch, p.attn_heads, kv,
                                                p.attn_dim, s))
    return items


# ----------------------------------------------------------------------------------
# Section 3: memory-bound ops
# ----------------------------------------------------------------------------------

# Bytes moved per element of one [tokens, hidden] operand (BF16: 2 bytes), the minimum
# traffic: every input read once, every output written once (norm statistics, weights and
# their gradients, O(tokens) or O(hidden), left out). Dropout's mask is 1 byte (bool).
MEM_OPS = [
    # op, fwd bytes/elem, bwd bytes/elem (None: no backward kernel)
    ("copy", 4, None),             # read x, write y (a reference for attainable bandwidth)
    ("add", 6, None),              # residual: read a, b, write c; its backward passes dy on
    ("layernorm", 4, 6),           # fwd read x write y; bwd read dy, x write dx
    ("rmsnorm", 4, 6),
    ("gelu", 4, 6),                # erf GELU
    ("gelu_tanh", 4, 6),
    ("silu_mul", 6, 10),           # SwiGLU silu(g) * u: fwd read g, u write y; bwd read dy, g, u write dg, du
    ("softmax", 4, 6),             # over rows; bwd read y, dy write dx
    ("dropout", 5, 5),             # p 0.1: fwd read x write y, mask; bwd read dy, mask write dx
]


def mem_item(run, op, per_elem, pass_, tokens, h):
    elems = tokens * h
    nbytes = per_elem * elems
    impl = "torch"
    if op == "rmsnorm":
        impl = "F.rms_norm" if hasattr(F, "rms_norm") else "manual (pow, mean, rsqrt, mul: no F.rms_norm)"
    if op == "silu_mul":
        impl = "F.silu(g) * u (two kernels)"
    row = dict(section="memory_ops", op=op, impl=impl, dtype="bf16", tokens=tokens, hidden=h,
               elements=elems, bytes=nbytes)
    row["pass"] = pass_
    est = estimate_item(run.plan, max(nbytes / run.bw, 5e-6), 0.01 if run.cuda else 0.0, cuda=run.cuda)

    def go():
        dev, dt = run.device, torch.bfloat16
        grad = pass_ == "bwd"
        x = torch.randn(tokens, h, device=dev, dtype=dt, requires_grad=grad)
        inputs = [x]
        if op == "copy":
            f = lambda: x.clone()  # noqa: E731
        elif op == "add":
            y2 = torch.randn(tokens, h, device=dev, dtype=dt)
            f = lambda: x + y2  # noqa: E731
        elif op == "layernorm":
            w = torch.ones(h, device=dev, dtype=dt, requires_grad=grad)
            b = torch.zeros(h, device=dev, dtype=dt, requires_grad=grad)
            inputs += [w, b]
            f = lambda: F.layer_norm(x, (h,), w, b, 1e-5)  # noqa: E731
        elif op == "rmsnorm":
            w = torch.ones(h, device=dev, dtype=dt, requires_grad=grad)
            inputs.append(w)
            if hasattr(F, "rms_norm"):
                f = lambda: F.rms_norm(x, (h,), w, 1e-6)  # noqa: E731
            else:
                f = lambda: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w  # noqa: E731
        elif op == "gelu":
            f = lambda: F.gelu(x)  # noqa: E731
        elif op == "gelu_tanh":
            f = lambda: F.gelu(x, approximate="tanh")  # noqa: E731
        elif op == "silu_mul":
            u = torch.randn(tokens, h, device=dev, dtype=dt, requires_grad=grad)
            inputs.append(u)
            f = lambda: F.silu(x) * u  # noqa: E731
        elif op == "softmax":
            f = lambda: torch.softmax(x, dim=-1)  # noqa: E731
        elif op == "dropout":
            f = lambda: F.dropout(x, p=0.1, training=True)  # noqa: E731
        else:
            raise ValueError(op)
        if grad:
            y = f()
            dy = torch.randn_like(y)
            fn = lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True)  # noqa: E731
        else:
            def fn():
                with torch.no_grad():
                    f()
        fn()
        r = run.bench.time(fn)
        r["gbs"] = nbytes / (r["median_ms"] * 1e-3) / 1e9
        return r
    return Item(row, est, go, label=f"{op} {pass_} {tokens}x{h}")


def section_memory(run):
    p = run.plan
    items = []
    for h in p.mem_hidden:
        for op, fwd, bwd in MEM_OPS:
            items.append(mem_item(run, op, fwd, "fwd", p.mem_tokens, h))
            if bwd is not None:
                items.append(mem_item(run, op, bwd, "bwd", p.mem_tokens, h))
    return items


# ----------------------------------------------------------------------------------
# Section 4: whole training steps
# ----------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, h, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))
        self.eps = eps

    def forward(self, x):
        if hasattr(F, "rms_norm"):
            return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight).to(x.dtype)


def has_gqa_sdpa(device):
    if not hasattr(F, "scaled_dot_product_attention"):
        return False
    try:
        q = torch.zeros(1, 2, 4, 8, device=device)
        k = torch.zeros(1, 1, 4, 8, device=device)
        F.scaled_dot_product_attention(q, k, k, is_causal=True, enable_gqa=True)
        return True
    except Exception:
        return False


class Block(nn.Module):
    """Pre-norm decoder block: norm, fused QKV, causal attention (SDPA or eager), output
    projection, residual; norm, MLP (GELU: fc, proj; SwiGLU: fused gate+up, down), residual."""

    def __init__(self, c, attn):
        super().__init__()
        h, hd = c["hidden"], c["hidden"] // c["heads"]
        self.c, self.attn, self.hd = c, attn, hd
        norm = (lambda: nn.LayerNorm(h, eps=1e-5)) if c["norm"] == "layernorm" else (lambda: RMSNorm(h))
        self.norm1, self.norm2 = norm(), norm()
        self.qkv = nn.Linear(h, (c["heads"] + 2 * c["kv_heads"]) * hd, bias=c["bias"])
        self.proj = nn.Linear(c["heads"] * hd, h, bias=c["bias"])
        if c["mlp"] == "swiglu":
            self.fc = nn.Linear(h, 2 * c["ffn"], bias=c["bias"])
        else:
            self.fc = nn.Linear(h, c["ffn"], bias=c["bias"])
        self.down = nn.Linear(c["ffn"], h, bias=c["bias"])
        self.drop = nn.Dropout(c["dropout"])
        self.gqa_sdpa = False

    def forward(self, x, rope):
        c, hd = self.c, self.hd
        b, s, _ = x.shape
        qkv = self.qkv(self.norm1(x))
        q, k, v = qkv.split([c["heads"] * hd, c["kv_heads"] * hd, c["kv_heads"] * hd], dim=-1)
        q = q.view(b, s, c["heads"], hd).transpose(1, 2)
        k = k.view(b, s, c["kv_heads"], hd).transpose(1, 2)
        v = v.view(b, s, c["kv_heads"], hd).transpose(1, 2)
        if rope is not None:
            cos, sin = rope
            q, k = apply_rope(q, cos[:s], sin[:s]), apply_rope(k, cos[:s], sin[:s])
        p = c["dropout"] if self.training else 0.0
        if self.attn == "sdpa":
            if c["kv_heads"] != c["heads"] and self.gqa_sdpa:
                o = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True, enable_gqa=True)
            else:
                rep = c["heads"] // c["kv_heads"]
                if rep > 1:
                    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
                o = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            o = eager_attention(q, k, v, mask)
            if p:
                o = F.dropout(o, p)   # (transformers drops the probabilities; same cost order)
        o = o.transpose(1, 2).reshape(b, s, c["heads"] * hd)
        x = x + self.drop(self.proj(o))
        a = self.fc(self.norm2(x))
        if c["mlp"] == "swiglu":
            g, u = a.chunk(2, dim=-1)
            a = F.silu(g) * u
        else:
            a = F.gelu(a, approximate="tanh")
        return x + self.drop(self.down(a))


def apply_rope(x, cos, sin):
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class Decoder(nn.Module):
    """A minimal GPT/Llama-like causal LM: token embedding (+ learned positions), dropout,
    pre-norm blocks, final norm, output head (tied to the embedding when c['tied'])."""

    def __init__(self, c, attn):
        super().__init__()
        self.c = c
        h = c["hidden"]
        self.wte = nn.Embedding(c["vocab"], h)
        self.wpe = nn.Embedding(c["seq"], h) if c["positions"] == "learned" else None
        self.drop = nn.Dropout(c["dropout"])
        self.blocks = nn.ModuleList(Block(c, attn) for _ in range(c["layers"]))
        self.norm_f = nn.LayerNorm(h, eps=1e-5) if c["norm"] == "layernorm" else RMSNorm(h)
        self.head = None if c["tied"] else nn.Linear(h, c["vocab"], bias=False)
        if c["positions"] == "rope":
            hd = h // c["heads"]
            inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2).float() / hd))
            fr = torch.outer(torch.arange(c["seq"]).float(), inv)
            emb = torch.cat((fr, fr), dim=-1)
            self.register_buffer("cos", emb.cos(), persistent=False)
            self.register_buffer("sin", emb.sin(), persistent=False)
        else:
            self.cos = self.sin = None
        for mod in self.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, std=0.02)
                if getattr(mod, "bias", None) is not None:
                    nn.init.zeros_(mod.bias)

    def forward(self, ids):
        x = self.wte(ids)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        x = self.drop(x)
        rope = (self.cos, self.sin) if self.cos is not None else None
        for blk in self.blocks:
            x = blk(x, rope)
        x = self.norm_f(x)
        return F.linear(x, self.wte.weight) if self.head is None else self.head(x)


def build_own(run, c):
    attn = "sdpa" if hasattr(F, "scaled_dot_product_attention") else "eager"
    with device_ctx(run.device):
        model = Decoder(c, attn)
    model.to(run.device)
    gqa = attn == "sdpa" and has_gqa_sdpa(run.device)
    for blk in model.blocks:
        blk.gqa_sdpa = gqa
    desc = attn if attn == "eager" else ("sdpa" + (" enable_gqa" if c["kv_heads"] != c["heads"] and gqa else
                                                   " repeat_kv" if c["kv_heads"] != c["heads"] else ""))
    if attn == "eager":
        desc += f" (torch {torch.__version__} has no scaled_dot_product_attention)"
    return model, desc, lambda ids: model(ids[:, :-1]), True


def build_hf(run, c):
    import transformers
    if c["positions"] == "learned":
        conf = transformers.GPT2Config(n_layer=c["layers"], n_embd=c["hidden"], n_head=c["heads"],
                                       n_positions=c["seq"], vocab_size=c["vocab"], n_inner=c["ffn"])
    else:
        conf = transformers.LlamaConfig(hidden_size=c["hidden"], num_hidden_layers=c["layers"],
                                        num_attention_heads=c["heads"], num_key_value_heads=c["kv_heads"],
                                        intermediate_size=c["ffn"], vocab_size=c["vocab"],
                                        max_position_embeddings=max(c["seq"], 2048),
                                        tie_word_embeddings=c["tied"])
    conf.use_cache = False
    with device_ctx(run.device):
        try:
            model = transformers.AutoModelForCausalLM.from_config(conf, attn_implementation="sdpa")
        except TypeError:
            conf._attn_implementation = "sdpa"
            model = transformers.AutoModelForCausalLM.from_config(conf)
    model.to(device=run.device, dtype=torch.float32)   # FP32 master weights, as the own models
    model.train()
    impl = getattr(model.config, "_attn_implementation", "?")

    def loss_fn(ids):
        # transformers shifts the labels itself: input and labels are the same seq tokens
        return model(input_ids=ids[:, :-1], labels=ids[:, :-1], use_cache=False).loss
    return model, f"transformers {transformers.__version__} attn_implementation={impl}", loss_fn, False


def make_optimizer(run, params):
    if run.cuda:
        try:
            return torch.optim.AdamW(params, lr=1e-4, fused=True), "AdamW fused"
        except (TypeError, RuntimeError, ValueError) as exc:
            return torch.optim.AdamW(params, lr=1e-4), f"AdamW default (fused refused: {short(exc)[:80]})"
    return torch.optim.AdamW(params, lr=1e-4), "AdamW default (fused not requested off CUDA)"


def step_item(run, c, impl, mb):
    p = run.plan
    seq, tokens = c["seq"], mb * c["seq"]
    hd = c["hidden"] // c["heads"]
    row = dict(section="steps", model=c["model"], impl=impl, micro_batch=mb, seq=seq, tokens=tokens,
               layers=c["layers"], hidden=c["hidden"], heads=c["heads"], kv_heads=c["kv_heads"],
               vocab=c["vocab"], precision="autocast bf16, fp32 master weights")
    # Estimate: 6 N tokens + attention at ~40% of the assumed rate, and a launch floor.
    n_est = c["layers"] * (c["hidden"] * (c["heads"] + 2 * c["kv_heads"]) * hd + c["hidden"] ** 2
                           + (3 if c["mlp"] == "swiglu" else 2) * c["hidden"] * c["ffn"]) + c["vocab"] * c["hidden"]
    flops_est = 6 * n_est * tokens + 12 * c["layers"] * c["hidden"] * seq * tokens
    t_step = max(flops_est / (0.4 * run.rate), (c["layers"] * 0.6e-3 if run.cuda else 0.0))
    n_steps = max(p.step_min, min(p.step_max, math.ceil(1.5 / max(t_step, 1e-6))))
    build = (3.0 + n_est * 16 / 50e9) if run.cuda else 0.5
    est = build + (p.step_warmup + n_steps) * t_step + (2.0 if impl != "fitspeed-torch" else 0.0)

    def go():
        dev = run.device
        builder = build_own if impl == "fitspeed-torch" else build_hf
        model, attn_desc, loss_of, _ = builder(run, c)
        params = sum(q.numel() for q in model.parameters())
        pos = c["seq"] * c["hidden"] if c["positions"] == "learned" else 0
        untied_table = 0 if c["tied"] else c["vocab"] * c["hidden"]
        matmul = params - pos - untied_table
        mf = 6 * matmul * tokens + 12 * c["layers"] * c["heads"] * hd * seq * tokens
        mfc = 6 * matmul * tokens + 6 * c["layers"] * c["heads"] * hd * seq * tokens
        opt, opt_desc = make_optimizer(run, model.parameters())
        ids = torch.randint(0, c["vocab"], (mb, seq + 1), device=dev)
        dev_type = "cuda" if run.cuda else "cpu"

        def step():
            with torch.autocast(device_type=dev_type, dtype=torch.bfloat16):
                loss = loss_of(ids)
                if impl == "fitspeed-torch":
                    loss = F.cross_entropy(loss.reshape(-1, c["vocab"]), ids[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        model.train()
        for _ in range(p.step_warmup):
            step()
        run.bench.sync()
        if run.cuda:
            torch.cuda.reset_peak_memory_stats(dev)
        t1 = time.perf_counter()
        step()
        run.bench.sync()
        t1 = time.perf_counter() - t1
        n = max(p.step_min, min(p.step_max, math.ceil(1.5 / max(t1, 1e-6))))
        left = run.deadline - time.time()
        if n * t1 > left:
            n = max(p.step_min if p.step_min * t1 < left else 3, int(left / max(t1, 1e-9)))
        times = []
        h0 = time.perf_counter()
        if run.cuda:
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
            for s, e in ev:
                s.record()
                step()
                e.record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) for s, e in ev]
        else:
            for _ in range(n):
                t = time.perf_counter()
                step()
                times.append((time.perf_counter() - t) * 1e3)
        host_ms = (time.perf_counter() - h0) * 1e3 / n
        med = statistics.median(times)
        out = dict(params=params, params_matmul=matmul, optimizer=opt_desc, attention=attn_desc,
                   model_flops=mf, model_flops_causal=mfc, median_ms=med, min_ms=min(times), host_ms=host_ms,
                   steps=n, tokens_per_s=tokens / (med * 1e-3), tflops=mf / (med * 1e-3) / 1e12,
                   tflops_causal=mfc / (med * 1e-3) / 1e12)
        if run.cuda:
            out["peak_mem_gb"] = torch.cuda.max_memory_allocated(dev) / 1e9
        with run.prov.lock:
            run.prov.data.setdefault("step_models", {})[f"{c['model']} {impl}"] = dict(
                params=params, params_matmul=matmul, config=c, attention=attn_desc)
        return out
    return Item(row, est, go, group=(c["model"], impl), label=f"{c['model']} {impl} mb={mb}")


def section_steps(run, impl):
    p = run.plan
    if impl != "fitspeed-torch" and not run.assume_apis:
        try:
            import transformers  # noqa: F401
        except Exception as exc:
            run.skip("hf_steps", "transformers models", f"transformers does not import: {short(exc)}")
            return []
    return [step_item(run, c, impl, mb) for c in p.step_models for mb in p.step_mbs]


# ----------------------------------------------------------------------------------
# Provenance and main
# ----------------------------------------------------------------------------------


def safe(fn):
    """fn()'s value, or the error as a string: no provenance detail may stop the run."""
    try:
        return fn()
    except Exception as exc:
        return f"unavailable: {short(exc)}"


def cpu_model():
    with open("/proc/cpuinfo") as f:
        return next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")


def torch_settings():
    mm = torch.backends.cuda.matmul
    out = {}
    for key, get in (
            ("matmul_allow_tf32", lambda: mm.allow_tf32),
            ("cudnn_allow_tf32", lambda: torch.backends.cudnn.allow_tf32),
            ("matmul_allow_fp16_reduced_precision_reduction", lambda: mm.allow_fp16_reduced_precision_reduction),
            ("matmul_allow_bf16_reduced_precision_reduction", lambda: mm.allow_bf16_reduced_precision_reduction),
            ("float32_matmul_precision", lambda: torch.get_float32_matmul_precision()),
            ("cudnn_benchmark", lambda: torch.backends.cudnn.benchmark)):
        out[key] = safe(get)
    out["note"] = ("left at torch's defaults (TF32 off for matmul, on for cuDNN; reduced-precision "
                   "reductions allowed in FP16/BF16 GEMMs); FP32 is not measured on the GPU")
    return out


def device_info(run):
    pr = torch.cuda.get_device_properties(run.device)
    return dict(type="cuda", name=pr.name, capability=f"{pr.major}.{pr.minor}",
                sm_count=pr.multi_processor_count, total_memory_bytes=pr.total_memory,
                l2_cache_bytes=getattr(pr, "L2_cache_size", None))


def collect_provenance(run, args):
    d = run.prov.data
    d["status"] = "running"
    d["command"] = " ".join(shlex.quote(a) for a in [os.path.basename(sys.executable)] + sys.argv)
    d["cwd"] = os.getcwd()
    d["env"] = {k: os.environ.get(k) for k in ("PYTHONUNBUFFERED", "CUDA_VISIBLE_DEVICES",
                                                "PYTORCH_CUDA_ALLOC_CONF", "NVIDIA_TF32_OVERRIDE",
                                                "CUBLAS_WORKSPACE_CONFIG") if os.environ.get(k) is not None}
    d["start_utc"] = datetime.datetime.fromtimestamp(T_START, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    d["import_torch_s"] = round(T_IMPORTED - T_START, 2)
    d["sections"] = {}
    d["skipped"] = {}
    d["plan"] = dict(tiny=args.tiny, budget_s=args.budget_s, grace_s=args.grace_s, sections=run.enabled,
                     reserves_s=RESERVES, warmup=run.plan.warmup, min_reps=run.plan.min_reps,
                     max_reps=run.plan.max_reps, target_measured_s=run.plan.target_s,
                     max_item_s=run.plan.max_item_s, step_warmup=run.plan.step_warmup,
                     step_min=run.plan.step_min, step_max=run.plan.step_max,
                     l2_flush_bytes=(run.bench.flush_buf.numel()
                                     if run.bench is not None and run.bench.flush_buf is not None else 0),
                     assume_tflops=args.assume_tflops, assume_gbs=args.assume_gbs)
    d["host"] = dict(hostname=safe(socket.gethostname), platform=safe(platform.platform),
                     python=sys.version.split()[0], cpus=os.cpu_count(), cpu=safe(cpu_model))
    d["versions"] = dict(torch=torch.__version__, cuda=safe(lambda: torch.version.cuda),
                         cudnn=safe(lambda: torch.backends.cudnn.version()),
                         transformers=package_version("transformers"), numpy=package_version("numpy"),
                         pandas=package_version("pandas"))
    d["torch_settings"] = torch_settings()
    d["device"] = safe(lambda: device_info(run)) if run.cuda else dict(type=run.device.type)
    if run.cuda:
        d["nvidia_smi"] = dict(
            gpu=run_cmd(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,power.limit,"
                         "clocks.max.mem,pstate,persistence_mode,compute_mode", "--format=csv"]),
            full=run_cmd(["nvidia-smi"]))
        d["clocks_before"] = gpu_clocks()


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "llm_kernels_out"), help="output folder")
    ap.add_argument("--budget-s", type=float, default=450.0, help="global time budget from process start")
    ap.add_argument("--grace-s", type=float, default=20.0,
                    help="the watchdog ends the process this long after the budget")
    ap.add_argument("--device", default="auto", help="auto (cuda if available), cuda, cuda:N or cpu")
    ap.add_argument("--tiny", action="store_true", help="toy sizes: every code path in seconds (CPU check)")
    ap.add_argument("--estimate", action="store_true", help="print the planned time per section and exit")
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma list of " + ",".join(SECTIONS))
    ap.add_argument("--bwd-tokens", type=int, default=4096, help="token count of the backward GEMMs")
    ap.add_argument("--assume-tflops", type=float, default=700.0, help="BF16 FLOP/s for estimates (FP8: 2x)")
    ap.add_argument("--assume-gbs", type=float, default=3500.0, help="memory GB/s for estimates")
    ap.add_argument("--cpu-gflops", type=float, default=20.0, help="CPU GFLOP/s for estimates")
    ap.add_argument("--cpu-gbs", type=float, default=5.0, help="CPU GB/s for estimates")
    ap.add_argument("--verbose-errors", action="store_true", help="log full tracebacks")
    a = ap.parse_args(argv)
    a.sections = [s.strip() for s in a.sections.split(",") if s.strip()]
    bad = [s for s in a.sections if s not in SECTIONS]
    if bad:
        ap.error(f"unknown sections {bad}")
    return a


def main(argv=None):
    args = parse_args(argv)
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", 0)
    plan = Plan(args.tiny, args.bwd_tokens)
    builders = {"gemm": section_gemm, "attention": section_attention, "memory_ops": section_memory,
                "steps": lambda r: section_steps(r, "fitspeed-torch"),
                "hf_steps": lambda r: section_steps(r, "hf-transformers"),
                "attention_cudnn": lambda r: section_attention(r, cudnn_only=True)}

    if args.estimate:
        class Quiet:
            def __call__(self, msg):
                pass
        run = Run(args, None, Quiet(), Provenance(os.devnull), device, plan)
        run.quiet = True
        if device.type == "cuda":
            run.assume_apis = True   # the GPU plan, estimated from any machine
        print(f"estimate for {device.type}{' (tiny)' if args.tiny else ''} at "
              f"{run.rate / 1e12:g} TFLOP/s BF16 (FP8 2x), {run.bw / 1e9:g} GB/s:")
        total = 0.0
        for s in run.enabled:
            items = builders[s](run)
            est = sum(i.est_s for i in items)
            total += est
            print(f"  {s:11s} {len(items):5d} items {est:7.1f} s")
        print(f"  {'total':11s}             {total:7.1f} s (+ start-up: import torch, CUDA context, "
              f"provenance, ~10-20 s)")
        return 0

    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    log = Log(os.path.join(out, "log.txt"))
    prov = Provenance(os.path.join(out, "provenance.json"))
    run = Run(args, out, log, prov, device, plan)
    def show_warning(message, category, filename, lineno, file=None, line=None):
        log(f"warning: {category.__name__}: {str(message)[:600]} ({os.path.basename(filename)}:{lineno})")
    warnings.showwarning = show_warning   # warnings (why a backend was refused, ...) into log.txt
    log(f"llm_kernels.py: torch {torch.__version__} on {device}; budget {args.budget_s:.0f} s "
        f"(+{args.grace_s:.0f} s grace); output {out}")

    finished = threading.Event()

    def finalize(status):
        with prov.lock:
            prov.data["status"] = status
            prov.data["end_utc"] = utc_now()
            prov.data["wall_s"] = round(time.time() - T_START, 1)
            if run.cuda:
                prov.data["clocks_after"] = gpu_clocks()
            prov.save()

    def watchdog():
        if finished.wait(max(1.0, T_START + args.budget_s + args.grace_s - time.time())):
            return
        log(f"WATCHDOG: {args.budget_s + args.grace_s:.0f} s passed; saving provenance and exiting")
        finalize("killed by watchdog (budget + grace exceeded)")
        os._exit(124)

    def on_term(signum, _frame):
        log(f"signal {signum}: saving provenance and exiting")
        finalize(f"terminated by signal {signum}")
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    threading.Thread(target=watchdog, daemon=True).start()

    try:
        if run.cuda:
            torch.cuda.init()
            torch.empty(1, device=device)   # create the context before anything is timed
        run.bench = Bench(device, plan)
        collect_provenance(run, args)
    except Exception as exc:
        prov.data["setup_error"] = short(exc)
        log(f"setup failed: {short(exc)}\n{traceback.format_exc()}")
        if run.bench is None:
            finalize("setup failed")
            finished.set()
            return 1
    prov.save()

    writers = {}
    try:
        writers = {"gemm": CsvOut(os.path.join(out, "gemm.csv"), GEMM_COLUMNS),
                   "attention": CsvOut(os.path.join(out, "attention.csv"), ATTN_COLUMNS),
                   "memory_ops": CsvOut(os.path.join(out, "memory_ops.csv"), MEM_COLUMNS)}
        writers["attention_cudnn"] = writers["attention"]
        writers["steps"] = writers["hf_steps"] = CsvOut(os.path.join(out, "steps.csv"), STEP_COLUMNS)
    except Exception as exc:
        log(f"cannot open the CSVs: {short(exc)}")
        finalize("cannot write output")
        finished.set()
        return 1

    # The plan: estimated seconds per section, before anything runs.
    planned = {}
    run.quiet = True
    for s in run.enabled:
        try:
            planned[s] = round(sum(i.est_s for i in builders[s](run)), 1)
        except Exception as exc:
            planned[s] = f"error: {short(exc)}"
    run.quiet = False
    prov.data.setdefault("plan", {})["estimated_s"] = planned
    prov.data.setdefault("sections", {})
    log(f"estimated seconds per section: {planned}")

    try:
        for s in SECTIONS:
            if s not in run.enabled:
                prov.data["sections"][s] = dict(status="not requested")
                continue
            t0 = time.time()
            run.begin_section(s)
            info = dict(start_s=round(t0 - T_START, 1))
            try:
                items = builders[s](run)
                info["items"] = len(items)
                info.update(run.run_items(s, items, writers[s],
                                          free_each=s in ("steps", "hf_steps", "attention", "attention_cudnn")))
                info["status"] = "done"
            except Exception as exc:  # a bug in a section builder: record, go on
                info["status"] = f"failed: {short(exc)}"
                log(f"section {s} failed: {traceback.format_exc()}")
            free_memory(device)
            info["wall_s"] = round(time.time() - t0, 1)
            if run.cuda:
                info["clocks_after"] = gpu_clocks()
            with prov.lock:
                prov.data["sections"][s] = info
            prov.save()
            log(f"== section {s} done in {info['wall_s']} s: {info}")
    except BaseException as exc:  # noqa: BLE001 - whatever escapes still leaves a provenance
        log(f"run stopped: {short(exc)}\n{traceback.format_exc()}")
        finalize(f"stopped: {short(exc)}")
        finished.set()
        return 1

    finalize("complete")
    finished.set()
    log(f"done in {time.time() - T_START:.1f} s; rows: "
        + ", ".join(f"{os.path.basename(w.f.name)} {w.rows}" for w in {id(w): w for w in writers.values()}.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
