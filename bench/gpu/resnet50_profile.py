#!/usr/bin/env python3
"""Where a ResNet-50 training step's GPU time goes, by kernel, in AMP and TF32, NCHW and channels_last.

Follows bench/gpu/resnet50_input.py's measurement (same model, optimizer, batch, settings): after
10 warm-up steps, torch.profiler records 5 steps on the GPU; every kernel's time is summed, divided
by 5, and put in a category by its name (layout transposes, convolution, batch norm, element-wise,
optimizer, other). Writes resnet50_kernels.csv (every kernel name with its ms per step and category)
and resnet50_kernel_summary.csv (category sums per configuration) into --out.

    python3 bench/gpu/resnet50_profile.py --out DIR             # on the GPU
    python3 bench/gpu/resnet50_profile.py --out DIR --tiny      # CPU check (CPU ops, toy sizes)
"""
import argparse
import csv
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resnet50_input as r  # noqa: E402

CATEGORIES = [  # first match wins; names are lower-cased
    ("layout", ("nchwtonhwc", "nhwctonchw", "transpose", "permute", "convert_layout", "nchw2nhwc",
                "nhwc2nchw", "tensortransform")),
    ("batch_norm", ("bn_", "batch_norm", "batchnorm", "bn_fw", "bn_bw", "welford")),
    ("convolution", ("conv", "xmma", "implicit_gemm", "sm90_", "sm80_", "cutlass", "dgrad", "wgrad",
                     "fprop", "gemm", "cudnn")),
    ("optimizer", ("multi_tensor", "foreach", "sgd", "_amp_", "unscale", "non_finite")),
    ("element_wise", ("elementwise", "vectorized", "reduce", "pool", "threshold", "relu", "add",
                      "copy", "fill", "cast")),
]


def category(name):
    n = name.lower()
    for cat, keys in CATEGORIES:
        if any(k in n for k in keys):
            return cat
    return "other"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--steps", type=int, default=5)
    a = p.parse_args()
    batch, crop, classes, warm = (4, 64, 10, 1) if a.tiny else (256, 224, 1000, 10)
    os.makedirs(a.out, exist_ok=True)
    dev = torch.device("cuda" if torch.cuda.is_available() and not a.tiny else "cpu")
    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev.type == "cuda":
        acts = [torch.profiler.ProfilerActivity.CUDA]
    kf = open(os.path.join(a.out, "resnet50_kernels.csv"), "w", newline="")
    kw = csv.writer(kf)
    kw.writerow(["precision", "memory_format", "kernel", "category", "calls_per_step", "ms_per_step"])
    sf = open(os.path.join(a.out, "resnet50_kernel_summary.csv"), "w", newline="")
    sw = csv.writer(sf)
    cats = [c for c, _ in CATEGORIES] + ["other"]
    sw.writerow(["precision", "memory_format", "step_ms_wall", "kernel_ms_sum"] +
                [f"{c}_ms" for c in cats])
    for prec, mf in [("amp", "nchw"), ("amp", "channels_last"), ("tf32", "nchw"),
                     ("tf32", "channels_last")]:
        t0 = time.time()
        r.set_precision(prec)
        torch.backends.cudnn.benchmark = True
        tr = r.Trainer(dev, prec, mf == "channels_last", classes)
        x = torch.randn(batch, 3, crop, crop, device=dev).to(memory_format=tr.mf)
        y = torch.randint(0, classes, (batch,), device=dev)
        for _ in range(warm):
            tr.step(x, y)
        r.sync(dev)
        with torch.profiler.profile(activities=acts) as prof:
            t = time.perf_counter()
            for _ in range(a.steps):
                tr.step(x, y)
            r.sync(dev)
            wall = (time.perf_counter() - t) / a.steps
        sums = {c: 0.0 for c in cats}
        rows = []
        for e in prof.key_averages():
            if dev.type == "cuda":  # the attribute's name changed across torch versions
                us = max(getattr(e, "self_device_time_total", 0) or 0,
                         getattr(e, "self_cuda_time_total", 0) or 0)
            else:
                us = e.self_cpu_time_total
            if us <= 0:
                continue
            ms = us / 1e3 / a.steps
            c = category(e.key)
            sums[c] += ms
            rows.append((ms, e.key, c, e.count / a.steps))
        rows.sort(reverse=True)
        for ms, key, c, calls in rows:
            kw.writerow([prec, mf, key[:300], c, round(calls, 2), round(ms, 4)])
        sw.writerow([prec, mf, round(wall * 1e3, 3), round(sum(sums.values()), 3)] +
                    [round(sums[c], 3) for c in cats])
        kf.flush()
        sf.flush()
        print(f"{prec} {mf}: step {wall*1e3:.1f} ms; " +
              ", ".join(f"{c} {sums[c]:.1f}" for c in cats) + f" ({time.time()-t0:.0f} s)", flush=True)
        del tr, x, y, prof
        if dev.type == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
