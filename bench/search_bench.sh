#!/usr/bin/env bash
# Search benchmark: trainer's TPE + successive halving, random search and ASHA against Hydra 1.3.2's
# Optuna sweeper on the Fashion-MNIST mlp (best val/acc against trials and epochs, with a plot), and
# the ask/tell loop's cost per trial. Markdown to stdout and bench/results/search_<time>.md (+ .png).
#   bench/search_bench.sh [--only a|b] [--seeds 1,2] [--trials 50] [--epochs 4] [--cases random,tpe_sh,...]
# Environment: TRAINER_BIN (default build/debian/trainer), SEARCH_PEER_VENV (default
# ~/.cache/trainer/venv-hydra-optuna-1.2.0, the goldens' venv of scripts/common.sh: hydra-core 1.3.2,
# hydra-optuna-sweeper 1.2.0, optuna 2.10.1 (the sweeper needs optuna < 3); matplotlib is added).
# About 8 minutes a seed for (a) on the 2 cores of 2026-12 (75 on the slower ones before), 3 for (b). --from-json FILE reports (a) again from
# the search_<time>_runs.json a run saved, running nothing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
[[ -x "$trainer" ]] || { echo "search_bench: no trainer at $trainer (scripts/build.sh, or set TRAINER_BIN)" >&2; exit 1; }
source "$root/scripts/common.sh"
venv="${SEARCH_PEER_VENV:-$HYDRA_OPTUNA_VENV}"
if ! "$venv/bin/python" -c 'import hydra_plugins.hydra_optuna_sweeper, optuna, matplotlib
assert optuna.__version__ == "2.10.1"' 2>/dev/null; then
  echo "search_bench: installing ${HYDRA_OPTUNA_PINS[*]} matplotlib into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "${HYDRA_OPTUNA_PINS[@]}" matplotlib
fi
exec python3 "$root/bench/search_bench.py" \
  --trainer "$(cd "$(dirname "$trainer")" && pwd)/$(basename "$trainer")" \
  --peer-python "$venv/bin/python" --configs "$root/configs" --root "$root" \
  --results "$root/bench/results" "$@"
