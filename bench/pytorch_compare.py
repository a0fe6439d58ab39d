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
    /usr/bin/python3 bench/pytorch_compare.py --model bert-base --seq-len 128 \
        --batches 1,2,4,8 --threads 2

A sequence model (bert-base, gpt2) trains on --seq-len tokens per sequence
(default 128; fitspeed gets the same --seq-len) and a batch counts sequences;
its input is random token ids (and labels), drawn once before timing.

With --precision bf16, fitspeed runs `sweep --precision bf16` (BF16 activations,
FP32 master weights) and PyTorch runs the forward pass and the loss under
torch.autocast('cpu', dtype=torch.bfloat16) with FP32 parameters, as users run
mixed precision on CPUs (both need a CPU with AVX-512 BF16 or AMX).

Networks (as fitspeed's zoo defines them, src/model/zoo.cc and
src/model/zoo_transformers.cc; each run prints both parameter counts):
  resnet18-cifar   kuangliu/pytorch-cifar models/resnet.py ResNet18()
  mlp-mnist        keras examples/mnist_mlp.py, 784-512-512-10 (no dropout)
  cnn-cifar-small  keras examples/cifar10_cnn.py (no dropout)
  bert-base        HF transformers BertForPreTraining (bert-base-uncased) in plain
                   torch.nn: post-norm encoder (layer-norm eps 1e-12), erf GELU,
                   dropout 0.1; the masked-LM head (dense, GELU, layer norm,
                   decoder tied to the word embeddings with its own bias) on
                   ceil(0.15 * seq-len) fixed positions per sequence, as fitspeed
                   gathers them (HF runs it on every position: the original BERT
                   scripts gather the masked ones); next-sentence head on the
                   pooled first token; loss = masked-LM mean + next-sentence mean
  gpt2             HF transformers GPT2LMHeadModel (gpt2) in plain torch.nn: pre-norm
                   causal decoder, tanh GELU, dropout 0.1, final layer norm, head
                   tied to the token embeddings (no bias); loss on every token
                   (fitspeed's; HF shifts the labels and drops the last token)
Q, K and V are three Linear layers in both (GPT-2's fused c_attn: the same
parameters and FLOPs).
"""

import argparse
import json
import math
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


class SelfAttention(nn.Module):
    """Multi-head self-attention of {B, T, d} through the output projection and its dropout."""

    def __init__(self, d, heads, dropout, causal_positions=0):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)
        # GPT-2's "bias" buffer: the lower triangle, sliced to T; None: no mask (BERT)
        causal = torch.ones(causal_positions, causal_positions, dtype=torch.bool).tril()
        self.register_buffer("causal", causal if causal_positions else None, persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        head_dim = d // self.heads

        def split(h):
            return h.view(b, t, self.heads, head_dim).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(head_dim)
        if self.causal is not None:
            scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
        probs = self.attn_dropout(F.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, d)
        return self.out_dropout(self.out(context))


class TransformerBlock(nn.Module):
    """Attention and MLP, each with a residual add, normalized before (pre-norm:
    GPT-2) or after the add (post-norm: BERT)."""

    def __init__(self, d, heads, pre_norm, eps, gelu, dropout, causal_positions=0):
        super().__init__()
        self.pre_norm = pre_norm
        self.attn = SelfAttention(d, heads, dropout, causal_positions)
        self.norm1 = nn.LayerNorm(d, eps=eps)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate=gelu),
                                 nn.Linear(4 * d, d), nn.Dropout(dropout))
        self.norm2 = nn.LayerNorm(d, eps=eps)

    def forward(self, x):
        if self.pre_norm:
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.mlp(x))


class BertForPreTraining(nn.Module):
    """BERT-base pre-training; forward(ids, mlm_labels, nsp_labels) returns the loss."""
    vocab = 30522

    def __init__(self, seq_len, layers=12, d=768, heads=12):
        super().__init__()
        self.word = nn.Embedding(self.vocab, d)
        self.position = nn.Embedding(512, d)
        self.segment = nn.Embedding(2, d)
        for table in (self.word, self.position, self.segment):
            nn.init.normal_(table.weight, std=0.02)  # initializer_range
        self.norm = nn.LayerNorm(d, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.layers = nn.Sequential(*(TransformerBlock(d, heads, False, 1e-12, "none", 0.1)
                                      for _ in range(layers)))
        self.mlm_transform = nn.Linear(d, d)
        self.mlm_gelu = nn.GELU()
        self.mlm_norm = nn.LayerNorm(d, eps=1e-12)
        self.mlm_bias = nn.Parameter(torch.zeros(self.vocab))  # the decoder's weight is self.word's
        self.pooler = nn.Linear(d, d)
        self.nsp = nn.Linear(d, 2)
        # Positions 0..T-1; segment 0 for the first half, 1 for the second
        # (fitspeed's SegmentOf); the k-th of `masked` positions is k*T/masked
        # (fitspeed's GatheredRow).
        self.masked = max(1, math.ceil(0.15 * seq_len))
        self.register_buffer("positions", torch.arange(seq_len), persistent=False)
        self.register_buffer("segments", torch.arange(seq_len) * 2 // seq_len, persistent=False)
        self.register_buffer("masked_rows", torch.arange(self.masked) * seq_len // self.masked,
                             persistent=False)

    def example(self, batch):
        return (torch.randint(0, self.vocab, (batch, len(self.positions))),
                torch.randint(0, self.vocab, (batch, self.masked)), torch.randint(0, 2, (batch,)))

    def forward(self, ids, mlm_labels, nsp_labels):
        x = self.word(ids) + self.position(self.positions) + self.segment(self.segments)
        x = self.layers(self.dropout(self.norm(x)))
        m = self.mlm_gelu(self.mlm_transform(x[:, self.masked_rows]))
        # .float(): PyTorch 1.13's CPU layer_norm takes no bf16 input with fp32
        # weights and autocast leaves it alone (the encoder's norms read fp32:
        # the residual adds promote); a no-op in fp32.
        m = self.mlm_norm(m.float())
        mlm_logits = F.linear(m, self.word.weight, self.mlm_bias)
        nsp_logits = self.nsp(torch.tanh(self.pooler(x[:, 0])))
        return (F.cross_entropy(mlm_logits.flatten(0, 1), mlm_labels.flatten())
                + F.cross_entropy(nsp_logits, nsp_labels))


class Gpt2LMHeadModel(nn.Module):
    """GPT-2 small; forward(ids, labels) returns the loss."""
    vocab = 50257

    def __init__(self, seq_len, layers=12, d=768, heads=12, positions=1024):
        super().__init__()
        self.wte = nn.Embedding(self.vocab, d)
        self.wpe = nn.Embedding(positions, d)
        for table in (self.wte, self.wpe):
            nn.init.normal_(table.weight, std=0.02)  # initializer_range
        self.dropout = nn.Dropout(0.1)
        self.layers = nn.Sequential(*(TransformerBlock(d, heads, True, 1e-5, "tanh", 0.1,
                                                       causal_positions=positions)
                                      for _ in range(layers)))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.register_buffer("positions", torch.arange(seq_len), persistent=False)

    def example(self, batch):
        shape = (batch, len(self.positions))
        return torch.randint(0, self.vocab, shape), torch.randint(0, self.vocab, shape)

    def forward(self, ids, labels):
        x = self.dropout(self.wte(ids) + self.wpe(self.positions))
        logits = F.linear(self.ln_f(self.layers(x)), self.wte.weight)  # tied, no bias
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten())


MODELS = {
    "resnet18-cifar": (ResNet18Cifar, (3, 32, 32), 10),
    "mlp-mnist": (lambda: nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                                        nn.ReLU(), nn.Linear(512, 10)), (784,), 10),
    "cnn-cifar-small": (cnn_cifar_small, (3, 32, 32), 10),
}
# Sequence models: built for --seq-len; example(batch) draws the inputs of forward,
# which returns the loss.
SEQUENCE_MODELS = {"bert-base": BertForPreTraining, "gpt2": Gpt2LMHeadModel}


def build_model(model_name, batch, args):
    """(network, function computing its training loss on one fixed synthetic batch)."""
    if model_name in SEQUENCE_MODELS:
        model = SEQUENCE_MODELS[model_name](args.seq_len)
        inputs = model.example(batch)
        return model, lambda: model(*inputs)
    build, shape, classes = MODELS[model_name]
    model = build()
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(batch, *shape)
    y = torch.randint(0, classes, (batch,))
    return model, lambda: loss_fn(model(x), y)


def seq_len_option(model_name, args):
    return ["--seq-len", str(args.seq_len)] if model_name in SEQUENCE_MODELS else []


def parameter_counts(model_name, args):
    """(fitspeed's trainable parameters, PyTorch's), tied tables counted once."""
    command = [args.fitspeed, "models", model_name, *seq_len_option(model_name, args),
               "--output", "json"]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    ours = json.loads(done.stdout)["models"][0]["trainable_params"]
    model, _ = build_model(model_name, 1, args)
    return ours, sum(p.numel() for p in model.parameters())


def pytorch_step_time(model_name, batch, args):
    """Median seconds of one training step, timed like fitspeed times it."""
    torch.manual_seed(1)
    model, compute_loss = build_model(model_name, batch, args)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    bf16 = args.precision == "bf16"

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = compute_loss()
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
    command = [args.fitspeed, "sweep", model_name, *seq_len_option(model_name, args),
               "--batches", ",".join(map(str, batches)), "--threads", str(args.threads),
               "--warmup", str(args.warmup), "--min-repeats", str(args.min_repeats),
               "--min-time", str(args.min_time),
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
    parser.add_argument("--model", action="append",
                        choices=sorted([*MODELS, *SEQUENCE_MODELS]),
                        help="network (repeatable; default resnet18-cifar and mlp-mnist)")
    parser.add_argument("--batches", default="1,2,4,8,16,32,64")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--min-repeats", type=int, default=5)
    parser.add_argument("--max-repeats", type=int, default=1000)
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                        help="bf16: fitspeed --precision bf16 against PyTorch CPU autocast")
    parser.add_argument("--seq-len", type=int, default=128,
                        help="tokens per sequence of bert-base and gpt2 (a batch counts sequences)")
    args = parser.parse_args()
    models = args.model or ["resnet18-cifar", "mlp-mnist"]
    batches = [int(b) for b in args.batches.split(",")]
    torch.set_num_threads(args.threads)

    print(f"PyTorch {torch.__version__} ({torch.get_num_threads()} threads) against fitspeed "
          f"({args.threads} threads), {args.precision}; "
          f"ratio = fitspeed step time / PyTorch step time")
    for name in models:
        fs_params, pt_params = parameter_counts(name, args)
        print(f"\n{name}" + (f", {args.seq_len} tokens per sequence" if name in SEQUENCE_MODELS
                             else "")
              + f"; trainable parameters: fitspeed {fs_params:,}, PyTorch {pt_params:,}"
              + ("" if fs_params == pt_params else " (DIFFERENT)"))
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
