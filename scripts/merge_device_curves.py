#!/usr/bin/env python3
"""Merges regenerated efficiency curves into the catalog's device files.

`fitspeed validate kernels --catalog-out DIR` writes every catalog device the
kernel fits serve, in nlohmann's layout (one number per line). The files under
data/devices keep each curve's points on one line. This copies, for every
device file in DIR, each curve of its "efficiency" object (points, half_dim,
from, source, basis) into the file of the same name in data/devices, replacing
that curve's block (or adding it after the "tensor" block), and leaves every
other line of the catalog file as it is. The KernelFit ctest then checks the
catalog against the fits.

    build/fitspeed validate kernels --catalog-out /tmp/regen
    scripts/merge_device_curves.py /tmp/regen data/devices
"""
import json
import os
import re
import sys

ORDER = ["compute", "memory", "tensor", "fp8", "winograd", "depthwise", "memory_normalization",
         "attention_forward", "attention_backward"]


def number(x):
    r = repr(float(x))
    if "e" in r:
        m, e = r.split("e")
        return m + "e" + str(int(e))
    if float(x).is_integer():
        if abs(x) < 1e6:
            return str(int(x))
        m, e = ("%.15e" % x).split("e")
        return m.rstrip("0").rstrip(".") + "e" + str(int(e))
    return r


def block(key, curve, pad):
    lines = [f'{pad}"{key}": {{']
    fields = []
    fields.append('"points": [' + ", ".join(f"[{number(s)}, {number(e)}]" for s, e in curve["points"]) + "]")
    for name in ("half_dim", "from", "source", "basis"):
        if name in curve:
            v = curve[name]
            fields.append(f'"{name}": ' + (number(v) if name == "half_dim" else json.dumps(v, ensure_ascii=False)))
    lines += [pad + "  " + f for f in fields[:-1]]
    lines = [lines[0]] + [l + "," for l in lines[1:]] + [pad + "  " + fields[-1]]
    return "\n".join(lines) + "\n" + pad + "}"


def find_block(text, key, start, end):
    """(begin, stop) of `"key": {...}` inside text[start:end], or None."""
    m = re.compile(r'^(\s*)"' + re.escape(key) + r'": \{', re.M).search(text, start, end)
    if not m:
        return None
    depth, i = 0, m.end() - 1
    while i < end:
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return m.start(), i + 1, m.group(1)
        i += 1
    raise SystemExit(f"unbalanced block {key}")


def merge(new_path, old_path):
    new = json.load(open(new_path, encoding="utf-8"))
    text = open(old_path, encoding="utf-8").read()
    eff = find_block(text, "efficiency", 0, len(text))
    if eff is None:
        raise SystemExit(f"{old_path}: no efficiency object")
    begin, stop, pad = eff
    for key in ORDER:
        if key not in new["efficiency"]:
            continue
        inner = find_block(text, key, begin, stop)
        if inner:
            b, s, p = inner
            replacement = block(key, new["efficiency"][key], p)
            text = text[:b] + replacement + text[s:]
        else:
            anchor = find_block(text, "tensor", begin, stop)
            if anchor is None:
                raise SystemExit(f"{old_path}: no place for {key}")
            b, s, p = anchor
            text = text[:s] + ",\n" + block(key, new["efficiency"][key], p) + text[s:]
        begin, stop, pad = find_block(text, "efficiency", 0, len(text))
    json.loads(text)  # still a document
    open(old_path, "w", encoding="utf-8").write(text)


def main(args):
    if len(args) != 2:
        sys.exit(__doc__)
    for name in sorted(os.listdir(args[0])):
        if name.endswith(".json"):
            merge(os.path.join(args[0], name), os.path.join(args[1], name))


if __name__ == "__main__":
    main(sys.argv[1:])
