#!/usr/bin/env bash
# Batch-size search on real Fashion-MNIST on the CPU: `trainer tune batch_size` for each model,
# memory limit and mode; prints the batch found, the trials and the time of each search.
#   bench/tune_bench.sh    env: TRAINER_BIN (build/debian/trainer), TUNE_MODELS ("mlp cnn"),
#                               TUNE_LIMITS_MB ("64 256"), TUNE_MODES ("power binsearch")
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
[[ -x "$trainer" ]] || { echo "tune_bench: no trainer at $trainer (scripts/build.sh, or set TRAINER_BIN)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '| model | limit MiB | mode | batch found | trials | search s | job wall s |\n|---|---|---|---|---|---|---|\n'
for model in ${TUNE_MODELS:-mlp cnn}; do
  for limit in ${TUNE_LIMITS_MB:-64 256}; do
    for mode in ${TUNE_MODES:-power binsearch}; do
      run="$work/$model-$limit-$mode"
      start=$(date +%s.%N)
      "$trainer" tune batch_size model="$model" +tuner.mode="$mode" +tuner.max_memory_mb="$limit" \
        trainer.enable_progress_bar=false hydra.run.dir="$run" > "$run.out" 2>&1 ||
        { cat "$run.out" >&2; exit 1; }
      end=$(date +%s.%N)
      found=$(sed -n 's/^tuned_batch_size=//p' "$run.out")
      trials=$(grep -c -- '- batch_size:' "$run/tune_batch_size.yaml")
      seconds=$(sed -n 's/^seconds: //p' "$run/tune_batch_size.yaml")
      printf '| %s | %s | %s | %s | %s | %.2f | %.2f |\n' "$model" "$limit" "$mode" "$found" "$trials" "$seconds" \
        "$(echo "$end - $start" | bc)"
    done
  done
done
