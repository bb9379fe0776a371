#!/usr/bin/env bash
# Optimizer benchmark (issue 22): one optimizer step on the CPU, LibTorch's own Adam / AdamW / SGD
# against trainer's fused CPU step (Debian's LibTorch 1.13, and the wheel's 2.11 when build/wheel
# exists) and PyTorch 2.11's own optimizers from Python (foreach and fused=True), on the parameter
# shapes of model=mlp and model=cnn, interleaved. Markdown to stdout and
# bench/results/optimizer_<UTC time>.md.
# Then `trainer fit` (build/debian's) with optimizer.fused=null and false: the profiler's forward,
# backward and optimizer-step times per step.
#   bench/optimizer_bench.sh [--reps 5] [--steps 300] [--threads 2] [--models mlp,cnn]
# Environment: BENCH_TORCH_VENV (default ~/.cache/trainer/venv-torch-2.11.0, scripts/setup.sh's).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/common.sh"
venv="${BENCH_TORCH_VENV:-$TORCH_VENV}"
[[ -x "$venv/bin/python" ]] || { echo "optimizer_bench: no Python with torch at $venv (scripts/setup.sh --libtorch=all)" >&2; exit 1; }
benches=()
for variant in debian wheel; do
  [[ -f "$root/build/$variant/build.ninja" ]] || continue
  cmake --build "$root/build/$variant" --target optimizer_bench >&2
  benches+=(--bench "$root/build/$variant/bench/optimizer_bench")
done
((${#benches[@]})) || { echo "optimizer_bench: no build (scripts/build.sh --libtorch=debian)" >&2; exit 1; }
mkdir -p "$root/bench/results"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
exec python3 "$root/bench/optimizer_bench.py" "${benches[@]}" --python "$venv/bin/python" --trainer "$trainer" \
  --out "$root/bench/results/optimizer_$(date -u +%Y-%m-%dT%H%M).md" "$@"
