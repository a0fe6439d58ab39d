#!/usr/bin/env bash
# Runs bench/gpu/llm_kernels.py at toy sizes on the CPU (--tiny --device cpu) and checks
# its output: each CSV has its header and at least one measured row (status ok), the
# provenance is valid JSON with every section done, and the log exists. Needs Python with
# torch (Debian: apt-get install python3-torch python3-numpy; it runs with /usr/bin/python3).
# Also checks that --estimate prints the GPU plan and that a budget already spent skips
# items instead of running them.
#
#   bash bench/gpu/test_llm_kernels.sh            # PYTHON=... to choose the interpreter
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import torch' 2>/dev/null; then
  echo "test_llm_kernels: $py has no torch (apt-get install python3-torch)" >&2
  exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0
failed=0
check() {  # check NAME COMMAND...: counts a pass or a failure
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAILED: $name" >&2
  fi
}

"$py" "$here/llm_kernels.py" --tiny --device cpu --out "$out/run" --budget-s 300 >"$out/stdout.txt" 2>&1 || {
  echo "llm_kernels.py --tiny exited $?; its output:" >&2
  tail -40 "$out/stdout.txt" >&2
  exit 1
}

header_ok() {  # header_ok FILE FIRST_COLUMNS: the header starts with these columns
  [[ -f $1 ]] && head -1 "$1" | grep -q "^$2"
}
ok_rows() {  # ok_rows FILE: at least one row whose status column is "ok"
  "$py" - "$1" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = [r for r in rows if r.get("status") == "ok" and float(r.get("median_ms") or 0) > 0]
sys.exit(0 if ok else 1)
EOF
}
check "gemm.csv header" header_ok "$out/run/gemm.csv" \
  "section,model,op,pass,dtype,m,n,k,tp,tokens,flops,median_ms,min_ms,tflops,"
check "gemm.csv rows" ok_rows "$out/run/gemm.csv"
check "attention.csv header" header_ok "$out/run/attention.csv" \
  "section,backend,pass,dtype,batch,heads,kv_heads,head_dim,seq,causal,flops_full,flops_causal,median_ms,min_ms,tflops,tflops_full,"
check "attention.csv rows" ok_rows "$out/run/attention.csv"
check "memory_ops.csv header" header_ok "$out/run/memory_ops.csv" \
  "section,op,impl,pass,dtype,tokens,hidden,elements,bytes,median_ms,min_ms,gbs,"
check "memory_ops.csv rows" ok_rows "$out/run/memory_ops.csv"
check "steps.csv header" header_ok "$out/run/steps.csv" \
  "section,model,impl,micro_batch,seq,tokens,params,params_matmul,"
check "steps.csv rows" ok_rows "$out/run/steps.csv"
check "log.txt" test -s "$out/run/log.txt"
check "provenance.json" "$py" - "$out/run/provenance.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "complete", d["status"]
for s in ("gemm", "attention", "memory_ops", "steps", "hf_steps", "attention_cudnn"):
    assert d["sections"][s]["status"] == "done", (s, d["sections"][s])
    assert "wall_s" in d["sections"][s]
for k in ("command", "versions", "device", "plan", "start_utc", "end_utc", "skipped"):
    assert k in d, k
EOF
check "only the six files" test "$(ls "$out/run" | sort | tr '\n' ' ')" = \
  "attention.csv gemm.csv log.txt memory_ops.csv provenance.json steps.csv "

# --estimate: the GPU plan, printed without measuring; it must fit the default budget.
check "--estimate" "$py" - "$here/llm_kernels.py" <<'EOF'
import re, subprocess, sys
out = subprocess.run([sys.executable, sys.argv[1], "--estimate", "--device", "cuda"], capture_output=True,
                     text=True, check=True).stdout
total = float(re.search(r"total\s+([\d.]+) s", out).group(1))
assert 60 < total < 400, out
for s in ("gemm", "attention", "memory_ops", "steps", "hf_steps", "attention_cudnn"):
    assert re.search(rf"^\s+{s}\s+\d+ items", out, re.M), (s, out)
EOF

# A budget already spent: every item is skipped for the budget, the run still completes.
"$py" "$here/llm_kernels.py" --tiny --device cpu --out "$out/spent" --budget-s 0.01 \
  --sections memory_ops >"$out/spent.txt" 2>&1 || true
check "budget spent" "$py" - "$out/spent/provenance.json" "$out/spent/memory_ops.csv" <<'EOF'
import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "complete"
assert d["skipped"]["memory_ops"]["reasons"].get("budget", 0) > 0, d["skipped"]
assert list(csv.DictReader(open(sys.argv[2]))) == []
EOF

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
