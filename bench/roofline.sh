#!/usr/bin/env bash
# Roofline of the CPU training step (issue 22): the matrix products and convolutions of model=mlp's
# and model=cnn's training step timed at their own shapes with the trainer's LibTorch and threads
# (bench/roofline/roofline.cpp), against the FLOP/s `trainer fit` reports. Markdown to stdout and
# bench/results/roofline_<UTC time>.md.
#   bench/roofline.sh [--reps 3] [--kernel-reps 50]
# Environment: TRAINER_BIN (default build/debian/trainer; the roofline binary comes from its build).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
build="$(cd "$(dirname "$trainer")" && pwd)"
[[ -f "$build/build.ninja" || -f "$build/Makefile" ]] || { echo "roofline: no build at $build (scripts/build.sh)" >&2; exit 1; }
cmake --build "$build" --target roofline >&2
mkdir -p "$root/bench/results"
exec python3 "$root/bench/roofline.py" --roofline "$build/bench/roofline" --trainer "$build/trainer" \
  --out "$root/bench/results/roofline_$(date -u +%Y-%m-%dT%H%M).md" "$@"
