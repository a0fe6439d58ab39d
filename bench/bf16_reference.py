#!/usr/bin/env python3
"""fitspeed's BF16 gradients against PyTorch's CPU autocast, on the same step.

Is the error of fitspeed's BF16 training step just bfloat16's own rounding?
PyTorch 1.13 (Debian's python3-torch; run with /usr/bin/python3) is the
independent check. bench/bf16_gradients dumps the timing-test networks
(tests/timing/test_network_builders.h) with their parameters, input batch
(batch 4, seed 1), labels, and the loss, layer outputs and parameter gradients
of fitspeed's double Eigen reference and of its oneDNN executor in FP32 and in
BF16. This script rebuilds each network in PyTorch from the dumped network
JSON, loads the same parameters and data, and computes the gradients in
float64, float32 and under torch.autocast('cpu', dtype=torch.bfloat16) with
float32 master parameters (as users run it).

    cmake --build build --target bf16_gradients
    /usr/bin/python3 bench/bf16_reference.py              # seed 1, per parameter and layer
    /usr/bin/python3 bench/bf16_reference.py --seeds 12   # medians over seeds 1..12
    options: --dump PROGRAM (default build/bench/bf16_gradients), --seed N, --json,
             --clip-inclusive (see below)

It first checks that PyTorch's float64 loss, layer outputs and gradients equal
fitspeed's double reference (error < 1e-10 with the floor below), which proves
the mirror exact, and exits with status 1 otherwise. Then it prints, per
network and per trainable parameter, the norm-relative error the tests use,
||a - b|| / max(||b||, 1e-2):

  fs32       fitspeed oneDNN FP32      against fitspeed double
  fs16       fitspeed oneDNN BF16      against fitspeed double
  pt32       PyTorch float32           against PyTorch float64
  pt16       PyTorch autocast BF16     against PyTorch float64
  fs16/pt16  fitspeed's BF16 error in units of PyTorch's
  em16       PyTorch float64 rounding to bfloat16 exactly where fitspeed stores
             bf16 (the input, every layer output and output gradient, the conv
             and dense kernels' copies) and nowhere else: BF16 storage alone

and the same errors for every layer's forward output, which locate where an
error starts. Parameters marked "zero" have an exact gradient of zero (a bias
before a batch-norm): their errors are rounding noise over the 1e-2 floor.
Last, which ops autocast ran in bf16 and which in fp32 (the dtypes of each
op's output and output gradient). --json prints all of it as JSON.

Layer semantics mirrored from src/model/network.cc (and docs/models.md): zero
padding as given by the JSON's explicit [top, bottom, left, right] ("same"
already resolved: stride 2 pads 0 top/left, 1 bottom/right), grouped conv,
dense on the last dimension ({T, F} rows too), batch-norm in training mode with
the batch's biased variance and Keras's epsilon (gamma 1 / beta 0 when scale /
center are off), ReLU clipped at max_value, max pooling where padding never
wins, average pooling with count_include_pad as given, softmax cross-entropy
averaged over all rows. A clipped ReLU passes no gradient at x == max_value,
as F.hardtanh / nn.ReLU6 and oneDNN's clip_v2 (fitspeed's oneDNN backend);
--clip-inclusive passes it there, as torch.clamp and fitspeed's Eigen
reference do. The two agree in float64, where x never equals max_value, but in
BF16 values round onto it.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F

FLOOR = 1e-2  # the tests' floor on ||b|| (tests/timing/test_networks.h, RelativeError)
MIRROR_TOLERANCE = 1e-10
# Whether a clipped ReLU passes the gradient where x == max_value (--clip-inclusive).
CLIP_INCLUSIVE = False


def relative_error(a, b, floor=FLOOR):
    a = torch.as_tensor(a, dtype=torch.float64).flatten()
    b = torch.as_tensor(b, dtype=torch.float64).flatten()
    return (torch.linalg.norm(a - b) / max(torch.linalg.norm(b).item(), floor)).item()


def pad_window(x, layer, value=0.0):
    top, bottom, left, right = layer["padding"]
    if top == bottom == left == right == 0:
        return x
    return F.pad(x, (left, right, top, bottom), value=value)


class _RoundStorage(torch.autograd.Function):
    """Rounds to bfloat16 (nearest even, through float32) a stored value and its gradient."""

    @staticmethod
    def forward(ctx, x):
        return x.float().bfloat16().to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g.float().bfloat16().to(g.dtype)


class _RoundValue(_RoundStorage):
    """Rounds a value (a kernel's bf16 copy); its gradient goes to the master copy as is."""

    @staticmethod
    def backward(ctx, g):
        return g


def forward(net, params, x, labels, trace=None, store=None, kernel=None):
    """The network's mean loss; `params` maps "<layer>/<param>" to tensors.

    With `trace` (a dict), records every layer's output tensor under its name.
    `store` (applied to the input and every layer's output) and `kernel`
    (applied to conv and dense kernels) emulate where fitspeed stores bf16.
    """
    store = store or (lambda t: t)
    kernel = kernel or (lambda t: t)
    out = {"input": store(x)}
    if trace is not None:
        trace["input"] = out["input"]
    for layer in net["layers"]:
        kind, name = layer["kind"], layer["name"]
        inputs = [out[i] for i in layer.get("inputs", [layer.get("input")])]
        a = inputs[0]
        p = lambda key: params.get(f"{name}/{key}")
        if kind == "conv2d":
            y = F.conv2d(pad_window(a, layer), kernel(p("kernel")), p("bias"),
                         stride=layer["stride"], groups=layer["groups"])
        elif kind == "dense":
            y = F.linear(a, kernel(p("kernel")), p("bias"))
        elif kind == "batch_norm":
            # Training mode: the batch's statistics; the moving ones (copied) are only updated.
            y = F.batch_norm(a, p("moving_mean").clone(), p("moving_variance").clone(), p("gamma"),
                             p("beta"), training=True, momentum=1 - layer["momentum"],
                             eps=layer["epsilon"])
        elif kind == "relu":
            top = layer.get("max_value")
            y = F.relu(a)
            if top is not None and CLIP_INCLUSIVE:
                y = y.clamp(max=top)  # gradient passes at x == top
            elif top is not None:
                # F.hardtanh(a, 0, top) (nn.ReLU6's op), whose backward has no BF16 CPU kernel
                # in 1.13: no gradient at x == top, as oneDNN's clip_v2 (fitspeed's oneDNN backend).
                y = y.masked_fill(a >= top, top)
        elif kind == "max_pool":
            y = F.max_pool2d(pad_window(a, layer, -math.inf), layer["kernel"], layer["stride"])
        elif kind == "avg_pool":
            y = F.avg_pool2d(pad_window(a, layer), layer["kernel"], layer["stride"])
            if not layer["count_include_pad"] and any(layer["padding"]):
                inside = pad_window(torch.ones_like(a[:1, :1]), layer)
                y = y / F.avg_pool2d(inside, layer["kernel"], layer["stride"])
        elif kind == "global_avg_pool":
            y = a.mean(dim=(2, 3))
        elif kind == "add":
            y = sum(inputs[1:], inputs[0])
        elif kind == "flatten":
            y = a.flatten(1)
        elif kind == "softmax_cross_entropy":
            loss = F.cross_entropy(a.reshape(-1, a.shape[-1]), labels)
            if trace is not None:
                trace[name] = loss
            return loss
        else:
            raise NotImplementedError(f"layer kind {kind!r} ({name}) has no PyTorch mirror here")
        out[name] = store(y)
        if trace is not None:
            trace[name] = out[name]
    raise ValueError(f"network {net['name']} has no loss layer")


# PyTorch runs: (parameter and input dtype, autocast to bf16, bf16 storage emulated).
MODES = {"fp64": (torch.float64, False, False), "fp32": (torch.float32, False, False),
         "bf16": (torch.float32, True, False), "em16": (torch.float64, False, True)}


def pytorch_step(doc, mode):
    """Loss, gradients, layer outputs and their dtypes in one of MODES."""
    dtype, autocast, emulate = MODES[mode]
    params = {p["name"]: torch.tensor(p["values"], dtype=torch.float64).reshape(p["shape"])
              .to(dtype).requires_grad_(p["trainable"]) for p in doc["params"]}
    x = torch.tensor(doc["input"], dtype=torch.float64).reshape([-1] + doc["input_shape"]).to(dtype)
    labels = torch.tensor(doc["labels"], dtype=torch.int64)
    trace, grad_dtypes = {}, {}
    rounding = {"store": _RoundStorage.apply, "kernel": _RoundValue.apply} if emulate else {}
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        loss = forward(doc["network"], params, x, labels, trace, **rounding)
    for name, y in trace.items():
        if y.requires_grad and y is not loss:
            y.register_hook(lambda g, name=name: grad_dtypes.__setitem__(name, g.dtype))
    loss.backward()
    short = lambda d: str(d).replace("torch.", "")
    return {"loss": loss.item(),
            "grads": {n: t.grad.double().flatten() for n, t in params.items() if t.requires_grad},
            "outputs": {n: y.detach().double().flatten() for n, y in trace.items()},
            "dtypes": {n: (short(y.dtype), short(grad_dtypes.get(n, "-")))
                       for n, y in trace.items()}}


def autocast_loss_in_fp32(doc, logits):
    """Whether autocast's cross-entropy of bf16 `logits` equals float32's, bit for bit."""
    labels = torch.tensor(doc["labels"], dtype=torch.int64)
    logits = logits.reshape(labels.numel(), -1).bfloat16()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = F.cross_entropy(logits, labels)
    return mixed.dtype == torch.float32 and mixed.item() == F.cross_entropy(logits.float(),
                                                                            labels).item()


def compare(doc):
    res = doc["results"]
    fs64, fs32, fs16 = res["eigen_double"], res["onednn_fp32"], res["onednn_bf16"]
    pt = {mode: pytorch_step(doc, mode) for mode in MODES}

    # The mirror must reproduce fitspeed's double reference exactly.
    mirror = {name: relative_error(pt["fp64"]["grads"][name], g)
              for name, g in fs64["grads"].items()}
    mirror.update({f"output of {name}": relative_error(pt["fp64"]["outputs"][name], y)
                   for name, y in fs64["outputs"].items()})
    mirror["loss"] = abs(pt["fp64"]["loss"] - fs64["loss"]) / abs(fs64["loss"])
    worst = max(mirror, key=mirror.get)
    if mirror[worst] > MIRROR_TOLERANCE:
        sys.exit(f"bf16_reference: the PyTorch mirror of {doc['name']} does not reproduce "
                 f"fitspeed's double reference: {worst} differs by {mirror[worst]:.3g} "
                 f"(> {MIRROR_TOLERANCE:g}); errors: {mirror}")

    def rows(key, names):
        out = []
        for n in names:
            row = {"name": n,
                   "fs32": relative_error(fs32[key][n], fs64[key][n]),
                   "fs16": fs16 and relative_error(fs16[key][n], fs64[key][n]),
                   "pt32": relative_error(pt["fp32"][key][n], pt["fp64"][key][n]),
                   "pt16": relative_error(pt["bf16"][key][n], pt["fp64"][key][n]),
                   "em16": relative_error(pt["em16"][key][n], pt["fp64"][key][n])}
            row["ratio"] = row["fs16"] / row["pt16"] if fs16 and row["pt16"] > 0 else None
            if key == "grads":
                row["zero"] = relative_error(fs64[key][n], [0.0] * len(fs64[key][n]), 1.0) < 1e-9
            out.append(row)
        return out

    layers = [layer["name"] for layer in doc["network"]["layers"][:-1]]
    trainable = [p["name"] for p in doc["params"] if p["trainable"]]
    losses = {"fitspeed_double": fs64["loss"], "fitspeed_fp32": fs32["loss"],
              "fitspeed_bf16": fs16 and fs16["loss"], "pytorch_fp64": pt["fp64"]["loss"],
              "pytorch_fp32": pt["fp32"]["loss"], "pytorch_bf16": pt["bf16"]["loss"],
              "pytorch_bf16_emulated": pt["em16"]["loss"]}
    # Reported: gradients with and without fitspeed's buffer reuse should agree to the last bit.
    reuse = {k: max(relative_error(r["grads"][n], r["grads_no_reuse"][n]) for n in trainable)
             for k, r in res.items() if r is not None}
    kind = {layer["name"]: layer["kind"] for layer in doc["network"]["layers"]}
    dtypes = [{"layer": n, "kind": kind[n], "output": o, "gradient": g}
              for n, (o, g) in pt["bf16"]["dtypes"].items() if n != "input"]
    return {"name": doc["name"], "mirror_error": mirror[worst], "losses": losses,
            "reuse_difference": reuse, "grads": rows("grads", trainable),
            "outputs": rows("outputs", layers[1:]), "autocast_dtypes": dtypes,
            "autocast_loss_in_fp32": autocast_loss_in_fp32(doc, pt["bf16"]["outputs"][layers[-1]])}


def fmt(v, spec=".2e"):
    return "-" if v is None else format(v, spec)


def print_table(result):
    print(f"== {result['name']}  (mirror: PyTorch fp64 vs fitspeed double, worst "
          f"{result['mirror_error']:.1e}; fitspeed with vs without buffer reuse, worst "
          f"{max(result['reuse_difference'].values()):.1e})")
    print("   loss: " + ", ".join(f"{k} {fmt(v, '.6f')}" for k, v in result["losses"].items()))
    header = ("   {:<24}" + "{:>10}" * 4 + "{:>11}{:>10}").format(
        "{}", "fs32", "fs16", "pt32", "pt16", "fs16/pt16", "em16")
    for key, title in (("grads", "gradient"), ("outputs", "layer output")):
        print(header.format(title))
        for r in result[key]:
            name = r["name"] + (" (zero)" if r.get("zero") else "")
            print(f"   {name:<24}" + "".join(f"{fmt(r[c]):>10}" for c in ("fs32", "fs16", "pt32",
                                                                         "pt16"))
                  + f"{fmt(r['ratio'], '.2f'):>11}{fmt(r['em16']):>10}")
    ran = {"bfloat16": [], "float32": []}
    for d in result["autocast_dtypes"]:
        ran.setdefault(d["output"], []).append(f"{d['layer']} ({d['kind']})")
    print("   autocast ran in bf16: " + ", ".join(ran["bfloat16"]))
    print("   autocast ran in fp32: " + ", ".join(ran["float32"])
          + (" (log-softmax and NLL in fp32: equal to float32's cross-entropy of the bf16 logits)"
             if result["autocast_loss_in_fp32"] else " (NOT equal to float32's cross-entropy)"))
    grads = sorted({d["gradient"] for d in result["autocast_dtypes"]} - {"-"})
    print(f"   autocast activation gradients: {', '.join(grads)}")
    print()


def summarize(runs):
    """Per network and parameter, medians over seeds (`runs`: compare() results per seed)."""
    rows = {}
    for results in runs:
        for result in results:
            for r in result["grads"]:
                rows.setdefault((result["name"], r["name"], r["zero"]), []).append(r)
    summary = []
    for (net, name, zero), rs in rows.items():
        ratios = [r["ratio"] for r in rs if r["ratio"] is not None]
        summary.append({"network": net, "name": name, "zero": zero,
                        **{c: statistics.median(r[c] for r in rs) if rs[0][c] is not None else None
                           for c in ("fs16", "pt16", "em16")},
                        "ratio_median": statistics.median(ratios) if ratios else None,
                        "ratio_min": min(ratios, default=None),
                        "ratio_max": max(ratios, default=None)})
    return summary


def print_summary(summary, seeds):
    print(f"medians over seeds 1..{seeds}; fs16/pt16 per seed: median [min, max]")
    print(("   {:<34}" + "{:>10}" * 3 + "{:>22}").format("gradient", "fs16", "pt16", "em16",
                                                         "fs16/pt16"))
    for r in summary:
        name = f"{r['network']} {r['name']}" + (" (zero)" if r["zero"] else "")
        ratio = (f"{fmt(r['ratio_median'], '.2f')} [{fmt(r['ratio_min'], '.2f')}, "
                 f"{fmt(r['ratio_max'], '.2f')}]")
        print(f"   {name:<34}{fmt(r['fs16']):>10}{fmt(r['pt16']):>10}{fmt(r['em16']):>10}"
              f"{ratio:>22}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", default="build/bench/bf16_gradients",
                        help="the bf16_gradients program (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="data and parameter seed (default 1)")
    parser.add_argument("--seeds", type=int, default=0,
                        help="instead of one seed's tables, a summary over seeds 1..SEEDS")
    parser.add_argument("--clip-inclusive", action="store_true",
                        help="let a clipped ReLU pass the gradient at x == max_value "
                        "(torch.clamp, fitspeed's Eigen reference) instead of stopping it there "
                        "(F.hardtanh, oneDNN's clip_v2)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    global CLIP_INCLUSIVE
    CLIP_INCLUSIVE = args.clip_inclusive
    torch.set_num_threads(1)
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))

    def dump(seed):
        return json.loads(subprocess.run([args.dump, str(seed)], check=True, capture_output=True,
                                         text=True, env=env).stdout)

    first = dump(1 if args.seeds else args.seed)
    if first["onednn"]["bf16"] is False:
        print(f"note: oneDNN {first['onednn']['version']} has no BF16 kernels on this CPU "
              f"(ISA {first['onednn']['isa']}): the fs16 column is empty", file=sys.stderr)
    header = {"onednn": first["onednn"], "torch": torch.__version__, "batch": first["batch"]}
    if args.seeds:
        runs = [[compare(doc) for doc in (first if s == 1 else dump(s))["networks"]]
                for s in range(1, args.seeds + 1)]
        summary = summarize(runs)
        if args.json:
            print(json.dumps({**header, "seeds": args.seeds, "summary": summary}, indent=1))
            return
    else:
        results = [compare(doc) for doc in first["networks"]]
        if args.json:
            print(json.dumps({**header, "seed": args.seed, "networks": results}, indent=1))
            return
    print(f"oneDNN {first['onednn']['version']} ISA {first['onednn']['isa']}, PyTorch "
          f"{torch.__version__}; batch {first['batch']}; errors ||a-b||/max(||b||, 1e-2)"
          + ("" if args.seeds else f"; seed {args.seed}") + "\n")
    if args.seeds:
        print_summary(summary, args.seeds)
        return
    for result in results:
        print_table(result)


if __name__ == "__main__":
    main()
