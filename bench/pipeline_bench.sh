#!/usr/bin/env bash
# Pipeline parallelism (issue 21): memory per stage against one process, cuts by parameters
# against cuts by measured time, and the measured idle share of each stage against GPipe's theory
# (p-1)/(m+p-1) for m = 1, 2, 4, 8 micro-batches, both schedules, 2 stages on this machine's CPU
# (shared memory and Gloo side by side), beside one process training the same model
# (bench/pipeline_bench.py). Markdown to stdout and bench/results/pipeline_<UTC time>.md.
#   bench/pipeline_bench.sh [--reps 3] [--batches 40] [--batch-size 256] [--only bubble,memory,balance]
#                           [--transports shared_memory,process_group]
# Environment: TRAINER_BIN (default build/debian/trainer).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
[[ -x "$trainer" ]] || { echo "pipeline_bench: no trainer at $trainer (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$root/bench/results"
exec python3 "$root/bench/pipeline_bench.py" --trainer "$trainer" \
  --out "$root/bench/results/pipeline_$(date -u +%Y-%m-%dT%H%M).md" "$@"
