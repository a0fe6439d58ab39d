#!/usr/bin/env bash
# Data parallelism measured on this machine (issue 16): the MPI link
# benchmark, then per model a 1-rank and a 2-rank `sweep --data-parallel`
# (1 thread per rank) at the same per-rank batches, the 1-rank run also
# predicting 2 ranks from the measured links (--model-ranks 2), and one fit of
# both runs (v0 and t per rank count). Writes everything to $OUT (default
# out/data-parallel/) and prints the tables. Run it on an idle machine:
# the ranks take every CPU of a 2-CPU machine.
#
#   bench/data_parallel.sh [build/fitspeed]
set -euo pipefail
cd "$(dirname "$0")/.."
fitspeed=${1:-build/fitspeed}
out=${OUT:-out/data-parallel}
mkdir -p "$out"
# Open MPI refuses root without these (containers, CI).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe)

echo "== $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(mpirun --version | head -1)"
echo "== linkbench (2 ranks)"
"${mpi[@]}" -np 2 "$fitspeed" linkbench --links-out "$out/links.json" | tee "$out/linkbench.txt"

# The report of one JSON sweep: per batch the step, its compute and
# communication, and the modeled steps; and a CSV (batch, devices, step time)
# that `fitspeed fit` reads.
summarize() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import csv, json, sys
j = json.load(open(sys.argv[1]))
modeled = {m["per_rank_batch"]: m for m in j.get("modeled_communication", {}).get("steps", [])}
print("batch per_rank step_ms compute_ms copies_ms comm_ms exposed_ms bare_comm_ms hidden_% "
      "| modeled: ranks batch overlapped_ms serial_ms")
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["batch", "devices", "step_time_s"])
    for m in j["measurements"]:
        d = m["data_parallel"]
        w.writerow([m["batch"], d["ranks"], m["step_time_s"]])
        mm = modeled.get(d["per_rank_batch"])
        ms = lambda x: f"{x * 1e3:.2f}"
        print(m["batch"], d["per_rank_batch"], ms(m["step_time_s"]), ms(d["compute_s"]),
              ms(d["pack_s"] + d["average_s"]), ms(d["comm_cost_s"]), ms(d["exposed_comm_s"]),
              ms(d["bare_comm_s"]), f'{d["hidden_fraction"] * 100:.0f}', "|",
              *([mm["ranks"], mm["batch"], ms(mm["overlapped_step_s"]), ms(mm["serial_step_s"])]
                if mm else ["-"]))
    big = j["measurements"][-1]["data_parallel"]
    print("buckets at the largest batch (MiB, ready ms, all-reduce ms, bare ms):",
          [(round(b["bytes"] / 2**20, 3), round(b["ready_s"] * 1e3, 2),
            round(b["allreduce_s"] * 1e3, 2), round(b["bare_allreduce_s"] * 1e3, 2))
           for b in big["buckets"]])
PY
}

# model per-rank-batches
run() {
  local model=$1 batches=$2
  local one="" two=""
  for b in ${batches//,/ }; do
    one+="${one:+,}$b"
    two+="${two:+,}$((2 * b))"
  done
  echo "== $model, 1 rank, batches $one (predicting 2 ranks from the links)"
  "${mpi[@]}" -np 1 "$fitspeed" sweep "$model" --data-parallel --threads 1 --batches "$one" \
    --links "$out/links.json" --model-ranks 2 --output json > "$out/$model-1.json"
  summarize "$out/$model-1.json" "$out/$model-1.csv" | tee "$out/$model-1.txt"
  echo "== $model, 2 ranks, batches $two"
  "${mpi[@]}" -np 2 "$fitspeed" sweep "$model" --data-parallel --threads 1 --batches "$two" \
    --links "$out/links.json" --output json > "$out/$model-2.json"
  summarize "$out/$model-2.json" "$out/$model-2.csv" | tee "$out/$model-2.txt"
  echo "== $model: one fit of both runs"
  "$fitspeed" fit "$out/$model-1.csv" "$out/$model-2.csv" | tee "$out/$model-fit.txt"
}
run cnn-cifar-small 4,8,16,32,64,128
run resnet18-cifar 2,4,8,16
