#!/usr/bin/env bash
# CPU mixed precision (issue 22, point 4): `trainer fit precision=bf16-mixed` against `precision=32`
# for model=mlp and model=cnn, step time and val/acc after the same steps, with the CPU's
# AVX512-BF16 / AMX flags named in the report (bench/cpu_precision.py). Markdown to stdout and
# bench/results/cpu_precision_<UTC time>.md.
#   bench/cpu_precision.sh [--reps 3]
# Environment: TRAINER_BIN (default build/debian/trainer), DATA_ROOT is the trainer's default.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
[[ -x "$trainer" ]] || { echo "cpu_precision: no trainer at $trainer (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$root/bench/results"
exec python3 "$root/bench/cpu_precision.py" --trainer "$trainer" \
  --out "$root/bench/results/cpu_precision_$(date -u +%Y-%m-%dT%H%M).md" "$@"
