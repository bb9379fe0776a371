#!/usr/bin/env bash
# The benchmark suite in one command. On CPU (the default) it runs, one after the other:
#   1. engine  trainer fit vs a hand-written LibTorch loop, per-epoch time (bench/engine_bench.py)
#   2. peers   trainer vs plain PyTorch vs Lightning 2.6, mlp (full epochs) and cnn (a fixed number
#              of batches an epoch), with the rows that switch the trainer's start-up tuning off
#              (bench/peer_bench.py)
#   3. loader  data loading alone: the trainer's BatchLoader vs torch's DataLoader, 0/1/2 workers
#              (bench/loader_bench.py)
#   4. config  compose + print, sweep listing and a 10 MB file vs Hydra 1.3.2 (bench/config_bench.py)
# and writes bench/results/suite_<UTC date-time>.md (every table, a summary of the ratios, the
# load average, every run's raw numbers as JSON lines) and bench/results/suite_<...>.png (the
# ratios as bars, drawn with matplotlib from the bench venv). The stages take about 7.5 minutes
# on 2 idle cores; on a fresh machine it first makes the venvs (PyPI) and the wheel build: 14 min 51 s
# in all, measured from an empty cache, before stage 4 gained its 10 MB file (about 2 minutes more,
# nearly all of it Hydra).
#
#   bench/suite.sh                 # the CPU suite
#   bench/suite.sh --quick         # every stage with one repetition and small budgets (~4 min)
#   bench/suite.sh --gpu --python /path/to/python --trainer /path/to/trainer
#                                  # 5. on a CUDA machine: trainer vs plain PyTorch vs Lightning on
#                                  # the GPU, mlp/cnn/resnet at precision 32 and 16-mixed (~5 min);
#                                  # the python must already have torch and lightning (nothing is
#                                  # installed or built in this mode)
#   bench/suite.sh --gpu-smoke     # the --gpu code path on the CPU (bf16-mixed for 16-mixed), 2
#                                  # batches an epoch: checks that mode on a machine without a GPU
#   bench/suite.sh --dry-run [...] # print what would run, run nothing
# Options: --python PATH (Python for the peers; default: the bench venv, or python3 with --gpu),
# --trainer PATH (default build/wheel/trainer, built when missing), --data-root DIR (default
# $DATA_ROOT or /usr/share/datasets/fashion-mnist), --out PATH (the results file), and budgets for a
# busy machine: --reps N (repetitions of stages 2 and 3; stage 1 runs N+2; default 3),
# --cnn-batches N (training batches an epoch of stage 2's cnn; 100), --sweep N (stage 4's sweep; 100),
# --passive-omp (OMP_WAIT_POLICY=PASSIVE for every program: on an oversubscribed machine OpenMP's
# spinning barriers made a 2-thread mlp epoch 100x slower, for the Python peers as for the trainer).
# Every program is built on / imports the same LibTorch: the torch wheel of scripts/common.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../scripts/common.sh
source "$root/scripts/common.sh"
# shellcheck source=bench_env.sh
source "$root/bench/bench_env.sh"

mode=cpu quick=0 dry=0 python="" trainer="" out="" reps_opt="" cnn_opt="" sweep_opt=""
data_root="${DATA_ROOT:-/usr/share/datasets/fashion-mnist}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --gpu) mode=gpu ;;
    --gpu-smoke) mode=gpu-smoke ;;
    --dry-run) dry=1 ;;
    --python) python="$2"; shift ;;
    --trainer) trainer="$2"; shift ;;
    --data-root) data_root="$2"; shift ;;
    --out) out="$2"; shift ;;
    --reps) reps_opt="$2"; shift ;;
    --cnn-batches) cnn_opt="$2"; shift ;;
    --sweep) sweep_opt="$2"; shift ;;
    --passive-omp) export OMP_WAIT_POLICY=PASSIVE ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) die "suite: unknown option $1 (see bench/suite.sh --help)" ;;
  esac
  shift
done

[[ -f "$data_root/train-images-idx3-ubyte.gz" ]] ||
  die "suite: no Fashion-MNIST in $data_root: install Debian's dataset-fashion-mnist or pass --data-root DIR (the four *-ubyte.gz files)"
stamp=$(date -u +%Y-%m-%dT%H%M)
threads=$(nproc)

# What the stages need: the peer Python, the trainer, and on CPU the hand loop and loader bench.
venv="${PEER_VENV:-$TRAINER_CACHE/peer-venv}"
if [[ "$mode" == gpu ]]; then
  python="${python:-python3}"
  trainer="${trainer:-$root/build/wheel/trainer}"
  if [[ $dry == 0 ]]; then
    "$python" -c 'import torch, lightning; assert torch.cuda.is_available(), "torch sees no CUDA device"' ||
      die "suite --gpu: $python needs torch with a CUDA device and lightning (nothing is installed in this mode)"
    [[ -x "$trainer" ]] || die "suite --gpu: no trainer at $trainer: pass --trainer PATH (a CUDA build)"
  fi
elif [[ $dry == 0 ]]; then
  if [[ -z "$python" ]]; then
    bench_peer_venv "$venv" matplotlib
    python="$venv/bin/python"
  fi
  targets=()
  [[ -z "$trainer" && ! -x "$root/build/wheel/trainer" ]] && targets+=(trainer trainer_engine)
  [[ "$mode" == cpu ]] && targets+=(hand_loop loader_bench)
  [[ ${#targets[@]} -gt 0 ]] && bench_wheel_targets "${targets[@]}"
  [[ "$mode" == cpu ]] && bench_hydra_venv "${HYDRA_VENV:-$TRAINER_CACHE/hydra-venv}"
else
  python="${python:-$venv/bin/python}"
fi
trainer="${trainer:-$root/build/wheel/trainer}"
[[ $dry == 1 || -x "$trainer" ]] || die "suite: no trainer at $trainer"
[[ $dry == 1 ]] || trainer="$(cd "$(dirname "$trainer")" && pwd)/$(basename "$trainer")"

case "$mode" in
  cpu) out="${out:-$root/bench/results/suite_$stamp.md}" ;;
  gpu) out="${out:-$root/bench/results/suite_gpu_$stamp.md}" ;;
  gpu-smoke) out="${out:-${TMPDIR:-/tmp}/trainer-suite-gpu-smoke_$stamp.md}" ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/trainer-suite-XXXXXX")
# Kept when the suite fails, so the stages' results are not lost with it.
trap 'rc=$?; if [[ $rc -eq 0 ]]; then rm -rf "$work"; else say "suite: failed (exit $rc); the stages'"'"' outputs are in $work"; fi' EXIT
summary="$work/summary.jsonl"
sections=()
start_load=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M:%S')
t0=$SECONDS

# stage NAME TITLE FILE COMMAND...: runs one benchmark (its output to the terminal), keeps going
# when it fails (the report says so), and remembers its result file for the report.
stage() {
  local name=$1 title=$2 file=$3; shift 3
  say "suite: $name: $*"
  [[ $dry == 1 ]] && return 0
  local s=$SECONDS rc=0
  "$@" || rc=$?
  say "suite: $name finished in $((SECONDS - s)) s (exit $rc)"
  sections+=(--section "$title|$file|$((SECONDS - s))|$rc")
}

peers=(python3 "$root/bench/peer_bench.py" --trainer "$trainer" --python "$python" --peers "$root/bench/peers"
       --root "$data_root" --threads "$threads" --summary "$summary")
if [[ "$mode" == cpu ]]; then
  if [[ $quick == 1 ]]; then
    reps=1 engine_epochs=2 cnn_batches=20 config_reps=2 sweep=20 loader_epochs=2
  else
    reps=3 engine_epochs=3 cnn_batches=100 config_reps=5 sweep=100 loader_epochs=3
  fi
  # smaller budgets for a busy machine (the results file names them)
  reps=${reps_opt:-$reps} cnn_batches=${cnn_opt:-$cnn_batches} sweep=${sweep_opt:-$sweep}
  stage engine "1. Engine: trainer fit vs a hand-written LibTorch loop (MLP, full epochs)" "$work/engine.txt" \
    python3 "$root/bench/engine_bench.py" --trainer "$trainer" --hand "$root/build/wheel/bench/hand_loop" \
    --root "$data_root" --epochs "$engine_epochs" --reps "$((reps + 2))" --cases pair \
    --out "$work/engine.txt" --summary "$summary"
  stage peers-mlp "2a. Peers on CPU: mlp, full epochs" "$work/peers_mlp.txt" \
    "${peers[@]}" --models mlp --epochs 2 --reps "$reps" --cases all \
    --limit-train-batches 0 --limit-val-batches 0 --out "$work/peers_mlp.txt"
  stage peers-cnn "2b. Peers on CPU: cnn, $cnn_batches training batches an epoch" "$work/peers_cnn.txt" \
    "${peers[@]}" --models cnn --epochs 2 --reps "$reps" --cases all \
    --limit-train-batches "$cnn_batches" --limit-val-batches 10 --out "$work/peers_cnn.txt"
  stage loader "3. Data loading alone: trainer BatchLoader vs torch DataLoader" "$work/loader.txt" \
    python3 "$root/bench/loader_bench.py" --loader-bench "$root/build/wheel/bench/loader_bench" \
    --python "$python" --peers "$root/bench/peers" --root "$data_root" --workers 0,1,2 \
    --epochs "$loader_epochs" --reps "$reps" --threads 1 --out "$work/loader.txt" --summary "$summary"
  stage config "4. Config: compose and sweep listing vs Hydra 1.3.2" "$work/config.md" \
    python3 "$root/bench/config_bench.py" --trainer "$trainer" \
    --hydra-python "${HYDRA_VENV:-$TRAINER_CACHE/hydra-venv}/bin/python" --configs "$root/configs" --root "$root" \
    --reps "$config_reps" --hydra-sweep-reps 1 --sweep "$sweep" --big-sweep 10000 --large-reps 1 \
    --out "$work/config.md" --raw --summary "$summary"
else
  if [[ "$mode" == gpu ]]; then
    device=cuda precisions=32,16-mixed epochs=2 train_batches=200 val_batches=10
  else  # the same code path on the CPU: tiny budgets; fp16 autocast is CUDA-only in Lightning
    device=cpu precisions=32,bf16-mixed epochs=1 train_batches=2 val_batches=1
  fi
  stage gpu "5. Peers on $device: mlp, cnn, resnet at precision ${precisions/,/ and }" "$work/gpu.txt" \
    "${peers[@]}" --device "$device" --precisions "$precisions" --models mlp,cnn,resnet --epochs "$epochs" \
    --reps 1 --cases main --limit-train-batches "$train_batches" --limit-val-batches "$val_batches" \
    --out "$work/gpu.txt"
fi
[[ $dry == 1 ]] && exit 0

mkdir -p "$(dirname "$out")"
png="${out%.md}.png"
# The budgets in the report's title. (No `$(test && echo ...)` inside an assignment: under set -e a
# false test there ends the script, which is how a plain `bench/suite.sh` once lost its results.)
budget=""
if [[ "$mode" == cpu ]]; then
  budget=" (reps $reps, cnn $cnn_batches batches an epoch, sweep $sweep jobs"
  if [[ $quick == 1 ]]; then budget+=", quick"; fi
  if [[ -n "${OMP_WAIT_POLICY:-}" ]]; then budget+=", OMP_WAIT_POLICY=$OMP_WAIT_POLICY"; fi
  budget+=")"
fi
"$python" "$root/bench/suite_report.py" --mode "$mode$budget" \
  --summary "$summary" "${sections[@]}" --out "$out" --png "$png" --started "$started UTC" \
  --wall "$((SECONDS - t0))" --load-start "$start_load" --load-end "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --trainer "$trainer" --python "$python"
say "suite: results in $out (plot $png), $((SECONDS - t0)) s"
