#!/usr/bin/env python3
"""ResNet-50 training throughput on one GPU, and what each setting changes.

Issue 32 item 5: a publisher's PyTorch AMP ResNet-50 runs on A100/H100 are 1.5-1.8x slower than
fitspeed models while its TF32 runs are faster than modeled. The suspects lie outside the matrix
units: the input pipeline (CPU JPEG decoding and augmentation without DALI), the NCHW layout,
AMP's casts, cudnn.benchmark off. This script measures each directly on one GPU:

  1. training steps with synthetic, GPU-resident input: {TF32, AMP (FP16 autocast + GradScaler)}
     x {NCHW, channels_last} x {cudnn.benchmark on, off};
  2. the CPU JPEG loader alone (PIL decode, RandomResizedCrop(224), flip, ToTensor, Normalize, as
     torchvision's ImageNet reference does) at 8 and 16 worker processes, and one process's rate;
  3. training steps fed by that loader (pinned memory, non-blocking copies) at 8 and 16 workers;
  4. strict FP32 (TF32 off), if time remains.

Each row is written (and flushed) as soon as it is measured, so a run cut short keeps what it
measured. Files in --out: resnet50_steps.csv, resnet50_loader.csv, provenance.json, log.txt.

The JPEGs are synthetic (smooth random images with noise, 400-640 x 300-480 pixels, quality 90)
held in memory: decoding cost depends on pixels and entropy, not on the picture, but file reads
from disk are not part of this measurement (the loader reads bytes from RAM).

On a machine without a GPU: `python3 bench/gpu/resnet50_input.py --tiny --device cpu --out DIR`
runs every section at toy sizes (bench/gpu/test_resnet50_input.sh checks its files).
"""

import argparse
import csv
import gc
import io
import json
import os
import platform
import subprocess
import sys
import time
import traceback

T0 = time.time()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

try:
    import torchvision
    from torchvision import transforms
except ImportError as e:  # the whole measurement needs torchvision's ResNet-50 and transforms
    sys.exit(f"resnet50_input.py: torchvision is needed ({e})")
from PIL import Image  # noqa: E402

LOG = None


def log(msg):
    line = f"[{time.time() - T0:7.1f} s] {msg}"
    print(line, flush=True)
    if LOG:
        LOG.write(line + "\n")
        LOG.flush()


def smi(query):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip()
    except Exception as e:  # nvidia-smi absent (CPU test) or hung
        return f"unavailable: {e}"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


# ----------------------------------------------------------------------------------- images
def make_jpegs(count, tiny, seed=0):
    """Synthetic photographs: low-frequency colour fields plus noise, JPEG quality 90."""
    rng = np.random.default_rng(seed)
    blobs = []
    pixels = 0
    for _ in range(count):
        if tiny:
            w, h = int(rng.integers(80, 120)), int(rng.integers(60, 100))
        else:
            w, h = int(rng.integers(400, 641)), int(rng.integers(300, 481))
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        img = np.zeros((h, w, 3), np.float32)
        for c in range(3):
            for _ in range(4):
                fx, fy = rng.uniform(0.002, 0.03, 2)
                ph = rng.uniform(0, 6.3)
                img[:, :, c] += rng.uniform(20, 50) * np.sin(fx * x * 6.3 + fy * y * 6.3 + ph)
        img += 128 + rng.normal(0, 10, img.shape).astype(np.float32)
        buf = io.BytesIO()
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=90)
        blobs.append(buf.getvalue())
        pixels += w * h
    return blobs, pixels / count


class JpegDataset(torch.utils.data.Dataset):
    """Decodes in-memory JPEGs and applies torchvision's ImageNet training transforms."""

    def __init__(self, blobs, length, crop, classes):
        self.blobs = blobs
        self.classes = classes
        self.length = length
        self.tf = transforms.Compose([
            transforms.RandomResizedCrop(crop),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        img = Image.open(io.BytesIO(self.blobs[i % len(self.blobs)])).convert("RGB")
        return self.tf(img), i % self.classes


def make_loader(blobs, batch, workers, batches, crop, classes, pin):
    ds = JpegDataset(blobs, batch * batches, crop, classes)
    return torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False, num_workers=workers,
                                       pin_memory=pin, drop_last=True, prefetch_factor=2,
                                       persistent_workers=False, timeout=300)


# ------------------------------------------------------------------------------------ steps
class Trainer:
    def __init__(self, dev, precision, channels_last, classes):
        self.dev = dev
        self.precision = precision
        self.mf = torch.channels_last if channels_last else torch.contiguous_format
        self.model = torchvision.models.resnet50(num_classes=classes).to(dev)
        self.model = self.model.to(memory_format=self.mf)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        self.loss = nn.CrossEntropyLoss()
        self.cuda = dev.type == "cuda"
        self.amp = precision == "amp"
        self.scaler = None
        if self.amp and self.cuda:  # torch.amp.GradScaler from torch 2.3, torch.cuda.amp before
            self.scaler = (torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler")
                           else torch.cuda.amp.GradScaler())

    def step(self, x, y):
        self.opt.zero_grad(set_to_none=True)
        if self.amp:
            dtype = torch.float16 if self.cuda else torch.bfloat16
            with torch.autocast(device_type=self.dev.type, dtype=dtype):
                loss = self.loss(self.model(x), y)
        else:
            loss = self.loss(self.model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        return loss


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def set_precision(precision):
    tf32 = precision in ("tf32", "amp")
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32


def summarize(times, batch, wall):
    t = np.array(times)
    return {
        "images_per_s": round(batch * len(times) / wall, 2),
        "step_ms_median": round(float(np.median(t)) * 1e3, 3),
        "step_ms_p10": round(float(np.percentile(t, 10)) * 1e3, 3),
        "step_ms_p90": round(float(np.percentile(t, 90)) * 1e3, 3),
    }


def run_synthetic(dev, cfg, a):
    set_precision(cfg["precision"])
    torch.backends.cudnn.benchmark = cfg["cudnn_benchmark"]
    tr = Trainer(dev, cfg["precision"], cfg["memory_format"] == "channels_last", a.classes)
    x = torch.randn(a.batch, 3, a.crop, a.crop, device=dev).to(memory_format=tr.mf)
    y = torch.randint(0, a.classes, (a.batch,), device=dev)
    t_warm = time.perf_counter()
    for _ in range(a.warmup):
        tr.step(x, y)
    sync(dev)
    warm_s = time.perf_counter() - t_warm
    times = []
    t_all = time.perf_counter()
    for _ in range(a.steps):
        t = time.perf_counter()
        tr.step(x, y)
        sync(dev)
        times.append(time.perf_counter() - t)
    wall = time.perf_counter() - t_all
    row = summarize(times, a.batch, wall)
    row.update(warmup_s=round(warm_s, 2), timed_steps=a.steps, warmup_steps=a.warmup)
    return row


def run_fed(dev, cfg, a, blobs):
    set_precision(cfg["precision"])
    torch.backends.cudnn.benchmark = cfg["cudnn_benchmark"]
    tr = Trainer(dev, cfg["precision"], cfg["memory_format"] == "channels_last", a.classes)
    w = cfg["workers"]
    # The loader's queue holds up to workers x prefetch_factor batches made before training
    # starts; warm-up consumes them so the timed steps run at the steady rate.
    warm = a.warmup + 2 * w
    loader = make_loader(blobs, a.batch, w, warm + a.loader_steps, a.crop, a.classes,
                         dev.type == "cuda")
    it = iter(loader)
    t_warm = time.perf_counter()
    for _ in range(warm):
        x, y = next(it)
        x = x.to(dev, non_blocking=True).to(memory_format=tr.mf)
        y = y.to(dev, non_blocking=True)
        tr.step(x, y)
    sync(dev)
    warm_s = time.perf_counter() - t_warm
    times = []
    t_all = time.perf_counter()
    for _ in range(a.loader_steps):
        t = time.perf_counter()
        x, y = next(it)
        x = x.to(dev, non_blocking=True).to(memory_format=tr.mf)
        y = y.to(dev, non_blocking=True)
        tr.step(x, y)
        sync(dev)
        times.append(time.perf_counter() - t)
    wall = time.perf_counter() - t_all
    del it, loader
    row = summarize(times, a.batch, wall)
    row.update(warmup_s=round(warm_s, 2), timed_steps=a.loader_steps, warmup_steps=warm)
    return row


def run_loader_only(workers, a, blobs):
    if workers == 0:  # one process, no DataLoader: the per-core cost of one image
        ds = JpegDataset(blobs, 10 ** 9, a.crop, a.classes)
        n = a.single_images
        for i in range(8):
            ds[i]
        t = time.perf_counter()
        for i in range(n):
            ds[i]
        wall = time.perf_counter() - t
        return {"images": n, "wall_s": round(wall, 3), "images_per_s": round(n / wall, 2),
                "ms_per_image": round(wall / n * 1e3, 3)}
    warm = 2 * workers + 2
    total = warm + a.loader_steps
    loader = make_loader(blobs, a.batch, workers, total, a.crop, a.classes, False)
    it = iter(loader)
    for _ in range(warm):
        next(it)
    t = time.perf_counter()
    for _ in range(a.loader_steps):
        next(it)
    wall = time.perf_counter() - t
    del it, loader
    n = a.loader_steps * a.batch
    return {"images": n, "wall_s": round(wall, 3), "images_per_s": round(n / wall, 2),
            "ms_per_image": round(wall / n * 1e3 * workers, 3)}


# ------------------------------------------------------------------------------------- main
STEP_FIELDS = ["section", "precision", "memory_format", "cudnn_benchmark", "input", "workers",
               "batch", "crop", "warmup_steps", "timed_steps", "images_per_s", "step_ms_median",
               "step_ms_p10", "step_ms_p90", "warmup_s", "peak_mem_gib", "wall_s", "status", "note"]
LOADER_FIELDS = ["workers", "batch", "crop", "images", "wall_s", "images_per_s", "ms_per_image",
                 "status", "note"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=420)
    p.add_argument("--device", default="auto")
    p.add_argument("--tiny", action="store_true", help="toy sizes (CPU check)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--warmup", type=int, default=15)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--loader-steps", type=int, default=40)
    p.add_argument("--workers", default="16,8")
    p.add_argument("--images", type=int, default=512)
    p.add_argument("--single-images", type=int, default=300)
    a = p.parse_args()
    a.crop, a.classes = 224, 1000
    if a.tiny:
        a.batch, a.warmup, a.steps, a.loader_steps = 4, 1, 2, 2
        a.images, a.single_images, a.crop, a.classes = 16, 8, 64, 10
    os.makedirs(a.out, exist_ok=True)
    global LOG
    LOG = open(os.path.join(a.out, "log.txt"), "w")
    dev = torch.device("cuda" if (a.device == "auto" and torch.cuda.is_available()) else
                       ("cpu" if a.device == "auto" else a.device))
    workers = [int(w) for w in a.workers.split(",") if w]
    if a.tiny:
        workers = [min(w, 2) for w in workers]
        workers = sorted(set(workers), reverse=True)

    prov = {
        "script": "bench/gpu/resnet50_input.py", "command": " ".join(sys.argv),
        "utc_start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T0)),
        "python": sys.version.split()[0], "torch": torch.__version__,
        "torchvision": torchvision.__version__, "pillow": Image.__version__,
        "numpy": np.__version__, "device": str(dev), "host_cpu": cpu_model(),
        "host_cpus_visible": os.cpu_count(),
        "sched_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "settings": {"batch": a.batch, "crop": a.crop, "warmup": a.warmup, "steps": a.steps,
                     "loader_steps": a.loader_steps, "optimizer": "SGD momentum 0.9 wd 1e-4",
                     "amp": "torch.autocast float16 + GradScaler (bfloat16, no scaler, on CPU)",
                     "tf32": "torch.backends.cuda.matmul.allow_tf32 and cudnn.allow_tf32 True for "
                             "tf32 and amp, False for fp32"},
        "skipped": [],
    }
    try:
        st = os.statvfs("/dev/shm")  # DataLoader workers hand batches over through it
        prov["dev_shm_gib"] = round(st.f_blocks * st.f_frsize / 2 ** 30, 1)
    except OSError as e:
        prov["dev_shm_gib"] = f"unavailable: {e}"
    if dev.type == "cuda":
        prop = torch.cuda.get_device_properties(dev)
        prov.update(gpu=prop.name, sm_count=prop.multi_processor_count,
                    gpu_memory_gib=round(prop.total_memory / 2 ** 30, 1),
                    cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                    driver_and_clocks_before=smi("driver_version,clocks.sm,clocks.mem,power.draw,"
                                                 "temperature.gpu"))
    log(f"device {dev} {prov.get('gpu', '')}; host {prov['host_cpu']}, {os.cpu_count()} CPUs; "
        f"torch {torch.__version__}, torchvision {torchvision.__version__}")

    steps_f = open(os.path.join(a.out, "resnet50_steps.csv"), "w", newline="")
    steps_w = csv.DictWriter(steps_f, fieldnames=STEP_FIELDS)
    steps_w.writeheader()
    load_f = open(os.path.join(a.out, "resnet50_loader.csv"), "w", newline="")
    load_w = csv.DictWriter(load_f, fieldnames=LOADER_FIELDS)
    load_w.writeheader()

    def left():
        return a.budget_s - (time.time() - T0)

    t = time.time()
    blobs, mean_px = make_jpegs(a.images, a.tiny)
    prov["jpegs"] = {"count": len(blobs), "mean_bytes": int(np.mean([len(b) for b in blobs])),
                     "mean_pixels": int(mean_px), "quality": 90, "make_s": round(time.time() - t, 1)}
    log(f"{len(blobs)} JPEGs, mean {prov['jpegs']['mean_bytes']} bytes, {int(mean_px)} pixels")

    # Guessed costs (s) on an H100/H200 at batch 256, for the budget check only.
    def guess(cfg):
        if a.tiny:
            return 5
        per = {"amp": 0.09, "tf32": 0.20, "fp32": 0.45}[cfg["precision"]]
        if cfg["input"] == "synthetic":
            return (a.warmup + a.steps) * per * 1.3 + (15 if cfg["cudnn_benchmark"] else 5)
        return (a.warmup + 2 * cfg["workers"] + a.loader_steps) * max(per, 0.1) * 1.3 + 12

    plan = []
    for prec, mf, bench in [("amp", "channels_last", True), ("amp", "nchw", True),
                            ("tf32", "nchw", True), ("tf32", "channels_last", True),
                            ("amp", "nchw", False), ("tf32", "nchw", False),
                            ("amp", "channels_last", False), ("tf32", "channels_last", False)]:
        plan.append(dict(section="synthetic", precision=prec, memory_format=mf,
                         cudnn_benchmark=bench, input="synthetic", workers=0))
    plan.append(dict(section="loader_only", workers=0))
    for w in workers:
        plan.append(dict(section="loader_only", workers=w))
    for prec, mf in [("amp", "nchw"), ("tf32", "nchw"), ("amp", "channels_last"),
                     ("tf32", "channels_last")]:
        for w in workers:
            plan.append(dict(section="fed", precision=prec, memory_format=mf, cudnn_benchmark=True,
                             input="cpu_jpeg", workers=w))
    plan.append(dict(section="synthetic", precision="fp32", memory_format="nchw",
                     cudnn_benchmark=True, input="synthetic", workers=0))

    broken = None
    for cfg in plan:
        name = " ".join(f"{k}={v}" for k, v in cfg.items())
        if broken:
            prov["skipped"].append({"item": name, "reason": f"CUDA context unusable: {broken}"})
            continue
        est = guess(cfg) if cfg["section"] != "loader_only" else (8 if cfg["workers"] else 6)
        if est > left() - 10:
            prov["skipped"].append({"item": name, "reason": f"budget: needs ~{est:.0f} s, "
                                                            f"{left():.0f} s left"})
            log(f"skip {name}: budget")
            continue
        t = time.time()
        status, note, row = "ok", "", {}
        try:
            if dev.type == "cuda":
                torch.cuda.reset_peak_memory_stats(dev)
            if cfg["section"] == "loader_only":
                row = run_loader_only(cfg["workers"], a, blobs)
            elif cfg["section"] == "synthetic":
                row = run_synthetic(dev, cfg, a)
            else:
                row = run_fed(dev, cfg, a, blobs)
        except torch.cuda.OutOfMemoryError as e:
            status, note = "oom", str(e).splitlines()[0][:200]
        except Exception as e:  # recorded, then the run goes on
            status, note = "error", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            log(traceback.format_exc())
            if any(s in str(e) for s in ("illegal memory", "device-side assert", "unspecified launch")):
                broken = note
        wall = round(time.time() - t, 2)
        if cfg["section"] == "loader_only":
            load_w.writerow({"workers": cfg["workers"], "batch": a.batch, "crop": a.crop,
                             **row, "status": status, "note": note})
            load_f.flush()
        else:
            peak = (round(torch.cuda.max_memory_allocated(dev) / 2 ** 30, 2)
                    if dev.type == "cuda" else "")
            steps_w.writerow({**cfg, "batch": a.batch, "crop": a.crop, **row,
                              "peak_mem_gib": peak, "wall_s": wall, "status": status, "note": note})
            steps_f.flush()
        log(f"{status} {name}: {row.get('images_per_s', '')} images/s "
            f"({row.get('step_ms_median', row.get('ms_per_image', ''))} ms), {wall} s")
        gc.collect()
        if dev.type == "cuda":
            torch.cuda.empty_cache()

    if dev.type == "cuda":
        prov["clocks_after"] = smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")
    prov["utc_end"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    prov["wall_s"] = round(time.time() - T0, 1)
    with open(os.path.join(a.out, "provenance.json"), "w") as f:
        json.dump(prov, f, indent=2)
    log(f"done in {prov['wall_s']} s; {len(prov['skipped'])} skipped")


if __name__ == "__main__":
    main()
