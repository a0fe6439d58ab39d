#!/usr/bin/env python3
"""fitspeed's host training step against PyTorch's, side by side.

Trains the same network with the same batch sizes and threads in PyTorch 1.13
(Debian's python3-torch; run with /usr/bin/python3) and with `fitspeed sweep`,
and prints fitspeed's step time / PyTorch's step time per batch size (below 1:
fitspeed is faster). Both run SGD with momentum 0.9, lr 1e-3, on one synthetic
batch filled before timing, timed the same way: warm-up steps, then steps until
a time and count budget, median of the step times.

    /usr/bin/python3 bench/pytorch_compare.py --fitspeed build/fitspeed \
        --model resnet18-cifar --batches 1,2,4,8,16,32,64 --threads 2

With --precision bf16, fitspeed runs `sweep --precision bf16` (BF16 activations,
FP32 master weights) and PyTorch runs the forward pass and the loss under
torch.autocast('cpu', dtype=torch.bfloat16) with FP32 parameters, as users run
mixed precision on CPUs (both need a CPU with AVX-512 BF16 or AMX).

Networks (as fitspeed's zoo defines them, src/model/zoo.cc):
  resnet18-cifar   kuangliu/pytorch-cifar models/resnet.py ResNet18()
  mlp-mnist        keras examples/mnist_mlp.py, 784-512-512-10 (no dropout)
  cnn-cifar-small  keras examples/cifar10_cnn.py (no dropout)
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

import torch
from torch import nn
import torch.nn.functional as F


class BasicBlock(nn.Module):
    def __init__(self, in_planes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride, bias=False),
                                          nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet18Cifar(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        blocks, in_planes = [], 64
        for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            for s in (stride, 1):
                blocks.append(BasicBlock(in_planes, planes, s))
                in_planes = planes
        self.layers = nn.Sequential(*blocks)
        self.linear = nn.Linear(512, classes)

    def forward(self, x):
        out = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.linear(torch.flatten(F.avg_pool2d(out, 4), 1))


def cnn_cifar_small():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3),
        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 6 * 6, 512), nn.ReLU(),
        nn.Linear(512, 10))


MODELS = {
    "resnet18-cifar": (ResNet18Cifar, (3, 32, 32), 10),
    "mlp-mnist": (lambda: nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                                        nn.ReLU(), nn.Linear(512, 10)), (784,), 10),
    "cnn-cifar-small": (cnn_cifar_small, (3, 32, 32), 10),
}


def pytorch_step_time(model_name, batch, args):
    """Median seconds of one training step, timed like fitspeed times it."""
    build, shape, classes = MODELS[model_name]
    torch.manual_seed(1)
    model = build()
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(batch, *shape)
    y = torch.randint(0, classes, (batch,))

    bf16 = args.precision == "bf16"

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()

    start, warm = time.perf_counter(), 0
    while warm < args.warmup or time.perf_counter() - start < 0.1:
        step()
        warm += 1
    times = []
    while len(times) < args.min_repeats or (sum(times) < args.min_time
                                            and len(times) < args.max_repeats):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fitspeed_step_times(model_name, batches, args):
    """{batch: median step seconds} from `fitspeed sweep --output json`."""
    command = [args.fitspeed, "sweep", model_name, "--batches", ",".join(map(str, batches)),
               "--threads", str(args.threads), "--warmup", str(args.warmup),
               "--min-repeats", str(args.min_repeats), "--min-time", str(args.min_time),
               "--precision", args.precision, "--output", "json"]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: measured, but no usable fit
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    result = json.loads(done.stdout)
    return {m["batch"]: m["step_time_s"] for m in result["measurements"]}, result["context"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fitspeed", default="build/fitspeed", help="the fitspeed binary")
    parser.add_argument("--model", action="append", choices=sorted(MODELS),
                        help="network (repeatable; default resnet18-cifar and mlp-mnist)")
    parser.add_argument("--batches", default="1,2,4,8,16,32,64")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--min-repeats", type=int, default=5)
    parser.add_argument("--max-repeats", type=int, default=1000)
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                        help="bf16: fitspeed --precision bf16 against PyTorch CPU autocast")
    args = parser.parse_args()
    models = args.model or ["resnet18-cifar", "mlp-mnist"]
    batches = [int(b) for b in args.batches.split(",")]
    torch.set_num_threads(args.threads)

    print(f"PyTorch {torch.__version__} ({torch.get_num_threads()} threads) against fitspeed "
          f"({args.threads} threads), {args.precision}; "
          f"ratio = fitspeed step time / PyTorch step time")
    for name in models:
        print(f"\n{name}")
        print(f"{'batch':>6} {'fitspeed_ms':>12} {'pytorch_ms':>11} {'ratio':>6}", flush=True)
        ratios, context = [], None
        # One batch at a time, fitspeed then PyTorch, so that both see the same
        # machine load.
        for b in batches:
            ours, context = fitspeed_step_times(name, [b], args)
            theirs = pytorch_step_time(name, b, args)
            if b not in ours:
                print(f"{b:>6} {'skipped':>12} {theirs * 1e3:>11.3f}")
                continue
            ratios.append(ours[b] / theirs)
            print(f"{b:>6} {ours[b] * 1e3:>12.3f} {theirs * 1e3:>11.3f} {ratios[-1]:>6.3f}",
                  flush=True)
        if ratios:
            print(f"geometric mean ratio {statistics.geometric_mean(ratios):.3f} "
                  f"({context['cpu']}, {context['isa']}, oneDNN {context['onednn_version']})")


if __name__ == "__main__":
    main()
