#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for
# $FUZZ_SECONDS (default 20) seconds, seeded with the real logs in tests/data.
# A crash, a sanitizer report or an exception other than fitspeed::Error fails.
set -euo pipefail
cd "$(dirname "$0")/.."
FITSPEED_WITH_FUZZ=1 scripts/install-deps.sh
build_dir=${BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-20}
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFITSPEED_BUILD_FUZZERS=ON -DFITSPEED_SANITIZE=ON -DFITSPEED_BUILD_TESTS=OFF \
  -DFITSPEED_BUILD_BENCH=OFF -DFITSPEED_BUILD_EXAMPLES=OFF >/dev/null
targets=(auto csv nist keras mllog dllogger timm hf hfstate tfcnn megatron deepspeed nanogpt lightning kerascsv wandb epochs tensorboard
         linklog intervals links fitjson kerneltable frameworks)
cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]/#/fuzz_}"

seeds="$build_dir/fuzz-seeds"
rm -rf "$seeds" && mkdir -p "$seeds"
# Seeds: every real log under tests/data, cut to 16 KiB so runs stay quick.
find tests/data -type f | while read -r f; do
  head -c 16384 "$f" > "$seeds/$(echo "$f" | tr '/' '_')"
done
# And the head of every kernel table (the kerneltable target's own formats).
for f in data/kernels/*.csv; do
  head -n 40 "$f" > "$seeds/$(echo "$f" | tr '/' '_')"
done
for t in "${targets[@]}"; do
  corpus="$build_dir/corpus-$t"
  mkdir -p "$corpus"
  echo "fuzz: $t for ${seconds}s" >&2
  "$build_dir/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=2048 \
    -print_final_stats=0 -artifact_prefix="$build_dir/crash-$t-" "$corpus" "$seeds" \
    > "$build_dir/fuzz-$t.log" 2>&1 || { tail -40 "$build_dir/fuzz-$t.log"; exit 1; }
  grep -E '^#[0-9]+ +DONE' "$build_dir/fuzz-$t.log" | tail -1 >&2 || true
done
echo "fuzz: all targets ran ${seconds}s without a finding" >&2
