#!/usr/bin/env bash
# Engine benchmark: per-epoch time of `trainer fit` in its default configuration (progress bar on
# a terminal, metrics.csv + TensorBoard loggers, checkpoints) against a hand-written LibTorch loop
# (bench/hand_loop/hand_loop.cpp) on the same model, data, seed and threads, interleaved in one run.
# Also the time from the command's start to the first training step. Prints a markdown table and
# writes it, with every run's raw numbers, to bench/results/engine_<UTC date-time>.txt.
#   bench/engine_bench.sh                  # trainer vs hand loop (+ trainer in the default OpenMP env)
#   BENCH_CASES=attrib bench/engine_bench.sh   # + trainer with bar / loggers / checkpoints / workers off
# Environment: TRAINER_BIN (default build/debian/trainer), BENCH_EPOCHS (3), BENCH_REPS (3),
# BENCH_CASES (pair | main | core | loader | attrib | all), BENCH_HAND_DEFAULT_ENV (1: also the hand loop without
# OMP_WAIT_POLICY=PASSIVE; very slow on a loaded machine, see BENCHMARKS.md), DATA_ROOT
# (/usr/share/datasets/fashion-mnist), HAND_BUILD_DIR (build/bench-hand).
# Needs Debian's libtorch-dev and zlib1g-dev (the hand loop is built on first use) and `script`
# (util-linux).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
if [[ ! -x "$trainer" ]]; then
  echo "engine_bench: no trainer binary at $trainer: build one with LibTorch (scripts/build.sh --libtorch=debian) or set TRAINER_BIN" >&2
  exit 1
fi
trainer="$(cd "$(dirname "$trainer")" && pwd)/$(basename "$trainer")"

hand_build="${HAND_BUILD_DIR:-$root/build/bench-hand}"
hand="$hand_build/hand_loop"
if [[ ! -x "$hand" || "$root/bench/hand_loop/hand_loop.cpp" -nt "$hand" ]]; then
  echo "engine_bench: building the hand loop in $hand_build" >&2
  cmake -S "$root/bench/hand_loop" -B "$hand_build" >/dev/null
  cmake --build "$hand_build" --parallel 1 >&2
fi

mkdir -p "$root/bench/results"
extra=()
[[ "${BENCH_HAND_DEFAULT_ENV:-0}" == 1 ]] && extra+=(--hand-default-env)
exec python3 "$root/bench/engine_bench.py" \
  --trainer "$trainer" --hand "$hand" \
  --root "${DATA_ROOT:-/usr/share/datasets/fashion-mnist}" \
  --epochs "${BENCH_EPOCHS:-3}" --reps "${BENCH_REPS:-3}" --cases "${BENCH_CASES:-main}" \
  "${extra[@]}" \
  --out "$root/bench/results/engine_$(date -u +%Y-%m-%dT%H%M).txt"
