#!/usr/bin/env bash
# Peer benchmark: `trainer fit` against a plain PyTorch loop (bench/peers/plain_loop.py),
# PyTorch Lightning 2.6 (bench/peers/lightning_loop.py) and the hand-written LibTorch loop
# (bench/hand_loop/hand_loop.cpp, built against the same LibTorch) on the same models (mlp, cnn), data (the
# real Fashion-MNIST of Debian's dataset-fashion-mnist), batch size, split, optimizer and thread
# count, on CPU, interleaved in one run; plus trainer rows with each start-up tuning switched off
# (TRAINER_MALLOC_TUNING=0, TRAINER_INTRA_OP_THREADS=0). The trainer is the wheel build, i.e. the
# same LibTorch (torch 2.11) as the Python peers. Prints a markdown table (medians, ratios) and
# writes it with every run's raw numbers to bench/results/peer_<UTC date-time>.txt.
#   bench/peer_bench.sh
#   PEER_EPOCHS=1 PEER_REPS=1 PEER_MODELS=mlp PEER_LIMIT_TRAIN_BATCHES=40 bench/peer_bench.sh   # a smoke run
# Environment: TRAINER_BIN (default build/wheel/trainer, built here when missing), PEER_EPOCHS (2: epoch 0 is warm-up, epoch 1 is measured; a full run takes ~17 min on 2 quiet cores),
# PEER_REPS (3), PEER_MODELS (mlp,cnn), PEER_CASES (all | main: without the tuning rows | step: trainer,
# plain loop and hand loop only | libtorch: trainer and hand loop, e.g. with TRAINER_BIN=build/debian/trainer),
# PEER_THREADS (default: the cores this process may use, as the trainer picks),
# PEER_LIMIT_TRAIN_BATCHES / PEER_LIMIT_VAL_BATCHES (0 = all; for quick runs), DATA_ROOT,
# PEER_VENV (~/.cache/trainer/peer-venv), PEER_DEVICE (cpu | cuda), PEER_PRECISIONS (32; e.g. 32,16-mixed).
# bench/suite.sh runs this benchmark with the suite's budgets (and on a GPU with --gpu).
# Creates what it needs: the torch venv (scripts/setup.sh --libtorch=wheel) if missing, a venv with
# Lightning that sees that venv's torch (a .pth file; pip finds torch already satisfied), the
# wheel build of trainer. Never downloads data.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../scripts/common.sh
source "$root/scripts/common.sh"
# shellcheck source=bench_env.sh
source "$root/bench/bench_env.sh"

data_root="${DATA_ROOT:-/usr/share/datasets/fashion-mnist}"
[[ -f "$data_root/train-images-idx3-ubyte.gz" ]] ||
  die "peer_bench: no Fashion-MNIST in $data_root: install Debian's dataset-fashion-mnist (apt-get install dataset-fashion-mnist) or set DATA_ROOT"

venv="${PEER_VENV:-$TRAINER_CACHE/peer-venv}"
bench_peer_venv "$venv"

trainer="${TRAINER_BIN:-$root/build/wheel/trainer}"
if [[ ! -x "$trainer" ]]; then
  [[ -n "${TRAINER_BIN:-}" ]] && die "peer_bench: TRAINER_BIN=$trainer is not an executable"
  say "peer_bench: building the wheel variant of trainer (build/wheel; ~10 min on 2 cores)"
  bench_wheel_targets trainer trainer_engine
fi
trainer="$(cd "$(dirname "$trainer")" && pwd)/$(basename "$trainer")"
hand="$(dirname "$trainer")/bench/hand_loop"
if [[ ! -x "$hand" || "$root/bench/hand_loop/hand_loop.cpp" -nt "$hand" ]]; then
  if [[ -n "${TRAINER_BIN:-}" ]]; then
    cmake --build "$(dirname "$trainer")" --target hand_loop >&2
  else
    bench_wheel_targets hand_loop
  fi
fi

threads="${PEER_THREADS:-$(nproc)}"
mkdir -p "$root/bench/results"
exec python3 "$root/bench/peer_bench.py" \
  --trainer "$trainer" --hand "$hand" --python "$venv/bin/python" --peers "$root/bench/peers" --root "$data_root" \
  --epochs "${PEER_EPOCHS:-2}" --reps "${PEER_REPS:-3}" --models "${PEER_MODELS:-mlp,cnn}" \
  --cases "${PEER_CASES:-all}" --threads "$threads" \
  --device "${PEER_DEVICE:-cpu}" --precisions "${PEER_PRECISIONS:-32}" \
  --limit-train-batches "${PEER_LIMIT_TRAIN_BATCHES:-0}" --limit-val-batches "${PEER_LIMIT_VAL_BATCHES:-0}" \
  --out "$root/bench/results/peer_$(date -u +%Y-%m-%dT%H%M).txt"
