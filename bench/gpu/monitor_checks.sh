#!/usr/bin/env bash
# The monitoring checks run by hand on a CUDA machine (CI has none), from a bundle made by
# bench/gpu/bundle.sh:
#   source .gpu/env.sh && bench/gpu/monitor_checks.sh OUT_DIR
# 1. MFU: ResNet-18 at batch 1024 in precision 32, 16-mixed and bf16-mixed (2 epochs), and the mlp and
#    cnn at their default batch, with the device stats monitor: the logged flops_per_sec and mfu
#    (medians), checked against FLOPs per sample x samples/s, and the NVML and CUDA memory columns.
# 2. The trace on CUDA: trainer.profiler=pytorch on ResNet-18 (16-mixed); bench/gpu/trace_summary.py
#    checks the phases nest in the steps and lists the kernels and copies Kineto recorded.
# 3. NVTX: the same run under nsys, when the machine has it (nvtx_sum report).
# 4. The batch-size search on CUDA: trainer tune batch_size, power and binsearch, and with a
#    tuner.max_memory_mb limit; fit with trainer.auto_scale_batch_size=binsearch.
# ACCEL=cpu SMOKE=1 runs the same code path on a machine without a GPU, with tiny budgets.
set -uo pipefail
out="${1:?usage: monitor_checks.sh OUT_DIR}"
: "${TRAINER:?source the env.sh of bench/gpu/bundle.sh first}" "${DATA_ROOT:?}"
here="$(cd "$(dirname "$0")" && pwd)"
accel="${ACCEL:-cuda}"
mkdir -p "$out/runs"
runs="$out/runs" summary="$out/summary.md"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
block() { note '```'; "$@" 2>&1 | tee -a "$summary"; note '```'; }
if [[ "${SMOKE:-0}" == 1 ]]; then
  budget=(trainer.max_epochs=1 trainer.limit_train_batches=12 trainer.limit_val_batches=2 trainer.limit_test_batches=2)
  resnet_batch=32 trials=4
else
  budget=(trainer.max_epochs=2) resnet_batch=1024 trials=25
fi

# run_trainer COMMAND NAME TIMEOUT ARGS...: one trainer run (COMMAND: "fit" or "tune batch_size") into runs/NAME, its console into NAME.log.
run_trainer() {
  local cmd=$1 name=$2 limit=$3; shift 3
  local start=$(date +%s%N)
  timeout "$limit" "$TRAINER" $cmd data.root="$DATA_ROOT" trainer.accelerator="$accel" \
    hydra.run.dir="$runs/$name" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  note "$name: rc=$rc wall=$(( ($(date +%s%N) - start) / 1000000 )) ms"
  return $rc
}

note "# GPU monitoring checks $(date -u +%Y-%m-%dT%H:%MZ)"
block nvidia-smi --query-gpu=name,memory.total,driver_version,pci.bus_id --format=csv,noheader

note ""
note "## 1. MFU and device stats"
mfu_runs=()
for p in 32 16-mixed bf16-mixed; do
  run_trainer fit "mfu_resnet_$p" 200 model=resnet data.batch_size="$resnet_batch" optimizer=adamw \
    optimizer.lr=4e-3 precision="$p" trainer.log_every_n_steps=10 +callbacks.device_stats_monitor={} "${budget[@]}"
  mfu_runs+=("mfu_resnet_$p")
done
for m in mlp cnn; do
  run_trainer fit "mfu_$m" 100 model="$m" trainer.log_every_n_steps=50 +callbacks.device_stats_monitor={} "${budget[@]}"
  mfu_runs+=("mfu_$m")
done
for r in "${mfu_runs[@]}"; do
  note "### $r"
  block grep -E "FLOPs|peak|device stats|NVML|nvml|precision|epoch [0-9]+ done|test/acc" "$out/$r.log"
  block python3 "$here/metrics_summary.py" "$runs/$r" samples_per_sec flops_per_sec mfu device_stats/
done

note ""
note "## 2. The trace on $accel (trainer.profiler=pytorch, ResNet-18, 16-mixed)"
trace_precision=16-mixed
[[ "$accel" == cpu ]] && trace_precision=bf16-mixed
run_trainer fit trace 150 model=resnet data.batch_size=256 precision="$trace_precision" trainer.profiler=pytorch \
  trainer.max_epochs=1 trainer.limit_train_batches=12 trainer.limit_val_batches=2 trainer.limit_test_batches=2
block grep -E "trace|profiler" "$out/trace.log"
block python3 "$here/trace_summary.py" "$runs/trace/fit-trace.json"
gzip -c "$runs/trace/fit-trace.json" >"$out/fit-trace.json.gz" 2>/dev/null

note ""
note "## 3. NVTX under nsys"
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [[ -n "$nsys" && "$accel" == cuda ]]; then
  timeout 200 "$nsys" profile --trace=cuda,nvtx --force-overwrite=true -o "$out/nsys_trace" \
    "$TRAINER" fit data.root="$DATA_ROOT" trainer.accelerator=cuda hydra.run.dir="$runs/nsys" model=resnet \
    data.batch_size=256 precision=16-mixed trainer.profiler=pytorch trainer.max_epochs=1 \
    trainer.limit_train_batches=12 trainer.limit_val_batches=2 trainer.limit_test_batches=2 >"$out/nsys.log" 2>&1
  note "nsys rc=$?"
  block "$nsys" stats --report nvtx_sum --format csv "$out/nsys_trace.nsys-rep"
else
  note "no nsys on this machine (or not CUDA): NVTX not checked"
fi

note ""
note "## 4. Batch-size search"
for mode in power binsearch; do
  run_trainer "tune batch_size" "tune_resnet_$mode" 200 model=resnet +tuner.mode="$mode" +tuner.max_trials="$trials"
  block grep -E "tuned_batch_size|batch size|trial|Error" "$out/tune_resnet_$mode.log"
  block cat "$runs/tune_resnet_$mode/tune_batch_size.yaml"
done
run_trainer "tune batch_size" tune_resnet_limit 200 model=resnet +tuner.mode=binsearch +tuner.max_memory_mb=4096 \
  +tuner.max_trials="$trials"
block cat "$runs/tune_resnet_limit/tune_batch_size.yaml"
run_trainer fit autoscale_cnn 200 model=cnn trainer.auto_scale_batch_size=binsearch +tuner.max_memory_mb=2048 \
  +tuner.max_trials="$trials" "${budget[@]}"
block grep -E "tuned_batch_size|batch size found|epoch [0-9]+ done|test/acc|Error" "$out/autoscale_cnn.log"
block grep -E "batch_size" "$runs/autoscale_cnn/.hydra/config.yaml"

# Logs, metrics and configs, without checkpoints and traces.
tar -C "$out" --exclude='*.ckpt' --exclude='fit-trace.json' --exclude='*.nsys-rep' --exclude='*.sqlite' \
  -czf "$out/logs.tar.gz" runs $(cd "$out" && ls ./*.log)
