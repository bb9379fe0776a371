#!/usr/bin/env bash
# Data-parallel benchmark (CPU, Gloo): 2 ranks against 1 on this machine, same global batch.
#   bench/ddp_bench.sh     env: TRAINER_BIN (build/debian/trainer), DDP_MODEL (mlp), DDP_EPOCHS (2), DDP_REPS (3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
[[ -x "$trainer" ]] || { echo "ddp_bench: no trainer at $trainer (scripts/build.sh, or set TRAINER_BIN)" >&2; exit 1; }
mkdir -p "$root/bench/results"
exec python3 "$root/bench/ddp_bench.py" --trainer "$trainer" --model "${DDP_MODEL:-mlp}" \
  --epochs "${DDP_EPOCHS:-2}" --reps "${DDP_REPS:-3}" --out "$root/bench/results/ddp_$(date -u +%Y-%m-%dT%H%M).txt"
