#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for
# $FUZZ_SECONDS (default 20) seconds, $FUZZ_JOBS (default: one per CPU) at a
# time, seeded with the real logs in tests/data. A crash, a sanitizer report or
# an exception other than fitspeed::Error fails. A $BUILD_DIR that is already
# configured is used as it is (.ci/run's sanitizer build has the fuzzers on).
set -euo pipefail
cd "$(dirname "$0")/.."
FITSPEED_WITH_FUZZ=1 scripts/install-deps.sh
build_dir=${BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-20}
jobs=${FUZZ_JOBS:-$(nproc)}
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
    -DFITSPEED_BUILD_FUZZERS=ON -DFITSPEED_SANITIZE=ON -DFITSPEED_BUILD_TESTS=OFF \
    -DFITSPEED_BUILD_BENCH=OFF -DFITSPEED_BUILD_EXAMPLES=OFF >/dev/null
fi
targets=(auto csv nist keras mllog dllogger timm hf hfstate tfcnn megatron deepspeed nanogpt fairseq
         detectron2 lightning kerascsv wandb epochs tensorboard
         linklog intervals links fitjson kerneltable frameworks hfconfig publishers configfile
         planfix)
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
# And the built-in transformer configurations (the hfconfig target's format).
for f in data/llm-models/*.json; do
  cp "$f" "$seeds/$(echo "$f" | tr '/' '_')"
done
# And small configs of the layer-kind fields (hfconfig and configfile): lists, nested objects, nulls.
printf '{"model_type": "qwen3_moe", "num_hidden_layers": 4, "num_experts": 4, "decoder_sparse_step": 2, "mlp_only_layers": [0, 3], "use_sliding_window": true}' > "$seeds/cfg_qwen3_moe"
printf '{"model_type": "qwen3", "num_hidden_layers": 4, "use_sliding_window": true, "max_window_layers": 2, "layer_types": ["full_attention", "full_attention", "sliding_attention", "sliding_attention"]}' > "$seeds/cfg_qwen3"
printf '{"model_type": "deepseek_v3", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 2, "q_lora_rank": null, "kv_lora_rank": 8, "n_routed_experts": 4, "first_k_dense_replace": 1, "moe_layer_freq": 2, "num_nextn_predict_layers": 1}' > "$seeds/cfg_deepseek"
printf '{"model_type": "gpt_oss", "num_hidden_layers": 2, "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 128, "num_local_experts": 4}' > "$seeds/cfg_gpt_oss"
printf '{"model_type": "gemma3", "text_config": {"num_hidden_layers": 6, "sliding_window": 512, "attn_logit_softcapping": 50.0}}' > "$seeds/cfg_gemma3"
# And the publishers file (the publishers target's format).
cp data/publishers.json "$seeds/data_publishers.json"
# And plan --fix texts (the planfix target's format).
printf 'tp=8,pp=4,vp=2,cp=1,ep=1,dp=2,mb=2,recompute=full,sp=1,zero=1' > "$seeds/fix_all"
printf 'tp=8,recompute=selective' > "$seeds/fix_two"
# And pipeline layouts (the planfix target parses its text as one too).
printf 'Et*3|(tt|)*1m|L' > "$seeds/layout_mtp"
printf 'Ett|tt|tt|ttL' > "$seeds/layout_even"
printf 'E|((t|)*2)*2t*3,L' > "$seeds/layout_nested"
# One target: its summary line, or on a finding the end of its log.
fuzz_one() {
  local t=$1 log="$build_dir/fuzz-$1.log"
  mkdir -p "$build_dir/corpus-$t"
  "$build_dir/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=16384 -rss_limit_mb=2048 \
    -print_final_stats=0 -artifact_prefix="$build_dir/crash-$t-" "$build_dir/corpus-$t" "$seeds" \
    > "$log" 2>&1 || { echo "fuzz: $t found something:" >&2; tail -40 "$log" >&2; return 1; }
  echo "fuzz: $t $(grep -E '^#[0-9]+ +DONE' "$log" | tail -1)" >&2
}
# Each target runs single-threaded, so $jobs of them at a time each get a
# whole CPU for their $seconds: the same fuzzing as one after another.
failed=0
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
if ((failed)); then
  echo "fuzz: a target found something (above; inputs in $build_dir/crash-*)" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each, $jobs at a time, without a finding" >&2
