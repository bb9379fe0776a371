#!/usr/bin/env bash
# Config benchmark: the trainer's compose/print and sweep listing against Hydra 1.3.2 on the same
# configs/ tree. Writes a markdown table to stdout and to bench/results/config_bench.md.
#   bench/config_bench.sh
# Environment: TRAINER_BIN (default build/none/trainer, then build/debian/trainer),
# HYDRA_VENV (default ~/.cache/trainer/hydra-venv; created with hydra-core==1.3.2 if missing),
# BENCH_REPS (10), BENCH_HYDRA_SWEEP_REPS (1: each of Hydra's 1,000-job runs takes minutes),
# BENCH_SWEEP (1000), BENCH_BIG_SWEEP (10000), BENCH_LARGE_MB (10: the generated file of the
# large-file case; 0 skips it), BENCH_LARGE_REPS (3: Hydra takes minutes on 10 MB).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

trainer="${TRAINER_BIN:-}"
if [[ -z "$trainer" ]]; then
  for candidate in "$root/build/none/trainer" "$root/build/debian/trainer"; do
    if [[ -x "$candidate" ]]; then trainer="$candidate"; break; fi
  done
fi
if [[ -z "$trainer" || ! -x "$trainer" ]]; then
  echo "config_bench: no trainer binary: build one (scripts/build.sh) or set TRAINER_BIN" >&2
  exit 1
fi

venv="${HYDRA_VENV:-$HOME/.cache/trainer/hydra-venv}"
# shellcheck source=../scripts/common.sh
source "$root/scripts/common.sh"
# shellcheck source=bench_env.sh
source "$root/bench/bench_env.sh"
bench_hydra_venv "$venv"

exec python3 "$root/bench/config_bench.py" \
  --trainer "$(cd "$(dirname "$trainer")" && pwd)/$(basename "$trainer")" \
  --hydra-python "$venv/bin/python" \
  --configs "$root/configs" --root "$root" \
  --reps "${BENCH_REPS:-10}" --hydra-sweep-reps "${BENCH_HYDRA_SWEEP_REPS:-1}" \
  --sweep "${BENCH_SWEEP:-1000}" --big-sweep "${BENCH_BIG_SWEEP:-10000}" \
  --large-mb "${BENCH_LARGE_MB:-10}" --large-reps "${BENCH_LARGE_REPS:-3}" \
  --out "$root/bench/results/config_bench.md"
