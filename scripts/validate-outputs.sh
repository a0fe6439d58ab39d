#!/usr/bin/env bash
# Writes what every `fitspeed validate` mode prints, and the data files it
# regenerates (devices/, intervals.json, frameworks.json), into OUTDIR, so
# that two builds can be compared byte for byte after a change that should not
# change behaviour:
#   scripts/validate-outputs.sh build/fitspeed /tmp/after
#   diff -r /tmp/before /tmp/after
# The outputs name the compiled-in data directory: compare builds of one
# checkout, or replace the paths (sed) first. Run from the repo root.
set -u
bin=$1; out=$2
mkdir -p "$out/devices"
run() { local name=$1; shift; "$bin" validate "$@" > "$out/$name.out" 2> "$out/$name.err"; echo "rc=$?" >> "$out/$name.err"; }
run cases
run cases_json --output json
run cases_csv --output csv
run cases_intervals --intervals-out "$out/intervals.json"
run kernels --kernels
run kernels_json --kernels --output json
run kernels_catalog --kernels --catalog-out "$out/devices"
run kernels_shape --kernels --shape-term
run frameworks --frameworks
run frameworks_json --frameworks --output json --frameworks-out "$out/frameworks.json"
run placements --placements
run placements_json --placements --output json
run placements_nodes --placements --placements-calibration-nodes 2
run layers --layers
run layers_json --layers --output json
run cases_nocv --no-cross-validation --no-cross-device --no-transfer --require-fit
grep -h "rc=" "$out"/*.err | sort | uniq -c
