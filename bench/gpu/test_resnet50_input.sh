#!/usr/bin/env bash
# Runs bench/gpu/resnet50_input.py and resnet50_profile.py at toy sizes on the CPU (--tiny) and
# checks their files: every configuration of resnet50_steps.csv measured (status ok, images/s > 0),
# the loader table's three rows, the provenance's JSON, and the profile's four summary rows.
# Needs Python with torch and torchvision (Debian: apt-get install python3-torch python3-torchvision).
#
#   bash bench/gpu/test_resnet50_input.sh            # PYTHON=... to choose the interpreter
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import torch, torchvision' 2>/dev/null; then
  echo "test_resnet50_input: $py lacks torch or torchvision (apt-get install python3-torch python3-torchvision)" >&2
  exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$py" "$here/resnet50_input.py" --tiny --device cpu --workers 2 --out "$out/in" >"$out/in.txt" 2>&1 ||
  { tail -30 "$out/in.txt" >&2; echo "resnet50_input.py --tiny failed" >&2; exit 1; }
"$py" "$here/resnet50_profile.py" --tiny --out "$out/prof" >"$out/prof.txt" 2>&1 ||
  { tail -30 "$out/prof.txt" >&2; echo "resnet50_profile.py --tiny failed" >&2; exit 1; }
"$py" - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
steps = list(csv.DictReader(open(f"{out}/in/resnet50_steps.csv")))
assert len(steps) == 13, f"{len(steps)} step rows, expected 8 synthetic + 4 fed + 1 fp32"
bad = [r for r in steps if r["status"] != "ok" or float(r["images_per_s"]) <= 0]
assert not bad, f"rows not measured: {bad}"
loader = list(csv.DictReader(open(f"{out}/in/resnet50_loader.csv")))
assert [r["workers"] for r in loader] == ["0", "2"], loader
assert all(r["status"] == "ok" and float(r["images_per_s"]) > 0 for r in loader), loader
prov = json.load(open(f"{out}/in/provenance.json"))
assert prov["skipped"] == [] and prov["jpegs"]["count"] == 16, prov
summary = list(csv.DictReader(open(f"{out}/prof/resnet50_kernel_summary.csv")))
assert len(summary) == 4 and all(float(r["kernel_ms_sum"]) > 0 for r in summary), summary
print("test_resnet50_input: ok (13 step rows, 2 loader rows, provenance, 4 profile rows)")
PY
