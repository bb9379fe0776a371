#!/usr/bin/env bash
# GPU checks run by hand on a CUDA machine (CI has none), from a bundle made by bench/gpu/bundle.sh:
#   source .gpu/env.sh && bench/gpu/checks.sh OUT_DIR [EPOCHS]
# 1. ResNet-18 on Fashion-MNIST with precision 32, 16-mixed and bf16-mixed, side by side, at batch 256
#    and 1024 (RESNET_RUNS): per-epoch time (median of epochs >= 1), test accuracy, mixed-precision
#    speed-ups; and batch 256 fp32 with cuDNN autotuning off (trainer.benchmark=false).
# 2. The NCCL path: the same binary under torchrun (world size 1), precision=16-mixed, whole fit.
# 3. Out of memory on the GPU: the one-paragraph error.
# 4. mlp / cnn throughput on the GPU, the simple profiler and the device stats monitor.
# 5. The peer: bench/gpu/ref_resnet.py, plain PyTorch's ResNet-18 step at the same batches and precisions.
# Every run's log lands in OUT_DIR; OUT_DIR/summary.md has the table.
set -uo pipefail
out="${1:?usage: gpu_checks.sh OUT_DIR [EPOCHS]}"
epochs="${2:-10}"
: "${TRAINER:?source the env.sh of bench/gpu/bundle.sh first}" "${DATA_ROOT:?}"
mkdir -p "$out"
runs="$out/runs"
mkdir -p "$runs"
summary="$out/summary.md"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

# fit NAME TIMEOUT ARGS...: one trainer run into runs/NAME, its console into NAME.log.
fit() {
  local name=$1 limit=$2; shift 2
  local start=$(date +%s%N)
  timeout "$limit" "$TRAINER" fit data.root="$DATA_ROOT" trainer.accelerator=cuda hydra.run.dir="$runs/$name" "$@" \
    >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc wall=$(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$out/walls.txt"
  return $rc
}

# epoch_stats LOG -> "median_epoch_s test_acc"
epoch_stats() {
  python3 - "$1" <<'EOF'
import re, statistics, sys
text = open(sys.argv[1], errors="replace").read()
epochs = [float(sec) for num, sec in re.findall(r"epoch (\d+) done in ([0-9.]+) s", text) if int(num) >= 1]
acc = re.findall(r"test/acc[ =:]+([0-9.]+)", text)
print(f"{statistics.median(epochs) if epochs else float('nan'):.3f} {acc[-1] if acc else 'nan'}")
EOF
}

note "# GPU checks $(date -u +%Y-%m-%dT%H:%MZ)"
note ""
note '```'
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$summary"
"$TRAINER" --version 2>&1 | tee -a "$summary"
note '```'

# RESNET_RUNS: batch:epochs:lr of each precision comparison (the learning rate grows with the batch).
read -r -a resnet_runs <<<"${RESNET_RUNS:-256:$epochs:2e-3 1024:$((epochs + 4)):4e-3}"
resnet=(model=resnet data.batch_size=256 optimizer=adamw optimizer.lr=2e-3 scheduler=cosine trainer.max_epochs="$epochs")
for run in "${resnet_runs[@]}"; do
  IFS=: read -r batch n lr <<<"$run"
  args=(model=resnet data.batch_size="$batch" optimizer=adamw optimizer.lr="$lr" scheduler=cosine trainer.max_epochs="$n")
  note ""
  note "## ResNet-18, Fashion-MNIST, batch $batch, AdamW (lr $lr) + cosine, $n epochs"
  note "| precision | epoch (s, median of epochs >= 1) | samples/s | test acc | speed-up vs 32 |"
  note "|---|---:|---:|---:|---:|"
  base=""
  for p in 32 16-mixed bf16-mixed; do
    fit "resnet_b${batch}_$p" "${RESNET_TIMEOUT:-150}" "${args[@]}" precision="$p"
    read -r sec acc < <(epoch_stats "$out/resnet_b${batch}_$p.log")
    [[ -z "$base" ]] && base=$sec
    speedup=$(python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$base" "$sec" 2>/dev/null)
    rate=$(python3 -c 'import sys; print("{:,.0f}".format(54000 / float(sys.argv[1])))' "$sec" 2>/dev/null)
    note "| $p | $sec | $rate | $acc | $speedup |"
  done
done
fit resnet_b256_32_nobenchmark "${RESNET_TIMEOUT:-150}" "${resnet[@]}" precision=32 trainer.max_epochs=3 trainer.benchmark=false
read -r sec acc < <(epoch_stats "$out/resnet_b256_32_nobenchmark.log")
note ""
note "batch 256, precision 32, trainer.benchmark=false (cuDNN autotuning off), 3 epochs: $sec s per epoch"

note ""
note "## NCCL (torchrun --nproc-per-node 1 --no-python, precision=16-mixed, ResNet-18, 3 epochs)"
start=$(date +%s%N)
timeout 100 python3 -m torch.distributed.run --nproc-per-node 1 --no-python "$TRAINER" fit data.root="$DATA_ROOT" \
  trainer.accelerator=cuda hydra.run.dir="$runs/nccl" "${resnet[@]}" trainer.max_epochs=3 precision=16-mixed \
  >"$out/nccl.log" 2>&1
note "rc=$? wall=$(( ($(date +%s%N) - start) / 1000000 )) ms"
note '```'
grep -E "data parallel|process group|nccl|NCCL|epoch [0-9]+ done|test/acc|Error" "$out/nccl.log" | head -20 | tee -a "$summary"
note '```'

note ""
note "## Out of memory (ResNet-18 width 512, batch 8192)"
fit oom 120 model=resnet model.width=512 data.batch_size=8192 trainer.limit_train_batches=2 trainer.max_epochs=1
note "rc=$?"
note '```'
grep -A3 "Error" "$out/oom.log" | head -12 | tee -a "$summary"
note '```'

note ""
note "## mlp / cnn on the GPU (2 epochs, batch 128 default), simple profiler, device stats monitor"
for m in mlp cnn; do
  fit "$m" 60 model="$m" trainer.max_epochs=2 trainer.profiler=simple +callbacks.device_stats_monitor={}
  read -r sec acc < <(epoch_stats "$out/$m.log")
  note "- $m: epoch 1 took $sec s, test acc $acc"
done
note '```'
sed -n '/profiler (simple)/,/^$/p' "$out/cnn.log" | head -30 | tee -a "$summary"
head -3 "$runs/cnn/metrics.csv" | cut -c1-600 | tee -a "$summary"
note '```'
cat "$out/walls.txt" >>"$summary"

note ""
note "## Plain PyTorch in the same run (bench/gpu/ref_resnet.py: the same ResNet-18 stem, data already on the GPU, no loader)"
note '```'
for batch in 256 1024; do python3 "$(dirname "$0")/ref_resnet.py" "$batch" 2>&1 | tee -a "$summary"; done
note '```'
