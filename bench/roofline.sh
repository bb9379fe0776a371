#!/usr/bin/env bash
# Roofline of the CPU training step (issue 22): the matrix products and convolutions of model=mlp's
# and model=cnn's training step timed at their own shapes with the trainer's LibTorch and threads
# (bench/roofline/roofline.cpp), against `trainer fit`'s step time and FLOP/s, with the defaults
# and with OpenBLAS's own thread pool kept (OPENBLAS_NUM_THREADS=<cores>; see
# include/trainer/engine/blas_threads.h). Markdown to stdout and bench/results/roofline_<UTC time>.md.
#   bench/roofline.sh [--reps 5] [--kernel-reps 50] [--variant "label:ENV=VALUE ..."]
# Environment: TRAINER_BIN (default build/debian/trainer; the roofline binary comes from its build).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
build="$(cd "$(dirname "$trainer")" && pwd)"
[[ -f "$build/build.ninja" || -f "$build/Makefile" ]] || { echo "roofline: no build at $build (scripts/build.sh)" >&2; exit 1; }
cmake --build "$build" --target roofline trainer >&2
mkdir -p "$root/bench/results"
exec python3 "$root/bench/roofline.py" --roofline "$build/bench/roofline" --trainer "$build/trainer" \
  --variant "OpenBLAS's own pool:OPENBLAS_NUM_THREADS=$(nproc)" \
  --out "$root/bench/results/roofline_$(date -u +%Y-%m-%dT%H%M).md" "$@"
