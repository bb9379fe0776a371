#!/usr/bin/env bash
# Sweep benchmark: trainer's basic launcher against Hydra 1.3.2's over trivial jobs, and the local
# (parallel) launcher against the basic one. Markdown to stdout and bench/results/sweep_bench.md.
#   bench/sweep_bench.sh [--only a|b]
# Environment: TRAINER_BIN (default build/debian/trainer), HYDRA_VENV (default
# ~/.cache/trainer/hydra-venv; created with hydra-core==1.3.2 if missing, as config_bench.sh does),
# BENCH_JOBS (10), BENCH_REPS (3), BENCH_EPOCHS (2), BENCH_MODEL (cnn), BENCH_PARALLEL_REPS (3).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
if [[ ! -x "$trainer" ]]; then
  echo "sweep_bench: no trainer binary at $trainer: build one (scripts/build.sh) or set TRAINER_BIN" >&2
  exit 1
fi

venv="${HYDRA_VENV:-$HOME/.cache/trainer/hydra-venv}"
if ! "$venv/bin/python" -c 'import hydra; assert hydra.__version__ == "1.3.2"' 2>/dev/null; then
  echo "sweep_bench: creating $venv with hydra-core 1.3.2" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet hydra-core==1.3.2
fi

exec python3 "$root/bench/sweep_bench.py" \
  --trainer "$(cd "$(dirname "$trainer")" && pwd)/$(basename "$trainer")" \
  --hydra-python "$venv/bin/python" \
  --configs "$root/configs" --root "$root" \
  --jobs "${BENCH_JOBS:-10}" --reps "${BENCH_REPS:-3}" \
  --epochs "${BENCH_EPOCHS:-2}" --model "${BENCH_MODEL:-cnn}" --parallel-reps "${BENCH_PARALLEL_REPS:-3}" \
  --out "$root/bench/results/sweep_bench.md" "$@"
