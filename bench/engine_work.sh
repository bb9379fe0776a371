#!/usr/bin/env bash
# Load-independent companion of bench/engine_bench.sh: the work (instructions executed, counted by
# Valgrind's cachegrind without cache simulation; this VM exposes no hardware counters to
# `perf stat`) that one training epoch costs in `trainer fit` (default configuration, progress
# bar on a terminal) and in the hand-written loop. Slow: each epoch runs ~20-50x slower.
#
# Wall time on a shared 2-core machine moves by +-30 % from run to run, far more than the 2 %
# overhead budget; instruction counts barely move with load. To keep busy-waiting threads (whose
# spinning depends on timing) out of the count, both programs are pinned to one CPU with
# `taskset -c 0`: both then use 1 intra-op thread and OpenBLAS runs single-threaded, the same in
# both; the trainer's loader threads still run (they block, they do not spin).
# Per-epoch work = (count of an E2-epoch run - count of an E1-epoch run) / (E2 - E1), which
# cancels start-up, the trainer's final test pass and everything else done once per process.
#   bench/engine_work.sh            # BENCH_REPS (1), BENCH_E1 (1), BENCH_E2 (2), TRAINER_BIN
# Prints one line per run and a summary; appends both to bench/results/engine_work_<date>.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trainer="${TRAINER_BIN:-$root/build/debian/trainer}"
hand="${HAND_BUILD_DIR:-$root/build/bench-hand}/hand_loop"
data="${DATA_ROOT:-/usr/share/datasets/fashion-mnist}"
reps="${BENCH_REPS:-1}" e1="${BENCH_E1:-1}" e2="${BENCH_E2:-2}"
[[ -x "$hand" ]] || { echo "engine_work: build the hand loop first (bench/engine_bench.sh does)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "engine_work: needs valgrind" >&2; exit 1; }
out="$root/bench/results/engine_work_$(date -u +%Y-%m-%dT%H%M).txt"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# count NAME EPOCHS CMD...: instructions of CMD (all threads) run under a terminal on CPU 0.
count() {
  local name="$1" epochs="$2"; shift 2
  local dir; dir="$(mktemp -d -p "$work")"
  local cmd; cmd="$(printf '%q ' "$@")"
  cmd="${cmd//@DIR@/$dir}"
  (cd "$dir" && OMP_WAIT_POLICY=PASSIVE script -qefc \
      "taskset -c 0 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --log-file=$dir/vg.txt $cmd" \
      /dev/null >/dev/null)
  local instr
  instr="$(awk '/I *refs:/ {gsub(",", "", $NF); print $NF}' "$dir/vg.txt")"
  echo "$name epochs=$epochs instructions=$instr load=$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out"
  rm -rf "$dir"
}

{
  echo "# engine_work $(date -u '+%Y-%m-%d %H:%M') UTC: instructions:u per process, pinned to CPU 0 (taskset -c 0)"
  echo "# trainer: $trainer; hand loop: $hand; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
for ((r = 0; r < reps; r++)); do
  for e in "$e1" "$e2"; do
    if (( r % 2 == 0 )); then
      count trainer "$e" "$trainer" fit "trainer.max_epochs=$e" "hydra.run.dir=@DIR@/run"
      count hand "$e" "$hand" --root "$data" --epochs "$e" --out @DIR@
    else
      count hand "$e" "$hand" --root "$data" --epochs "$e" --out @DIR@
      count trainer "$e" "$trainer" fit "trainer.max_epochs=$e" "hydra.run.dir=@DIR@/run"
    fi
  done
done
awk -v e1="$e1" -v e2="$e2" '
  /^(trainer|hand) epochs=/ {
    split($2, a, "="); split($3, b, "=")
    n[$1, a[2]]++; s[$1, a[2]] += b[2]
  }
  END {
    for (p = 0; p < 2; p++) {
      who = p ? "hand" : "trainer"
      per[who] = (s[who, e2] / n[who, e2] - s[who, e1] / n[who, e1]) / (e2 - e1)
      start[who] = s[who, e1] / n[who, e1] - per[who] * e1
      printf "%s: %.5g instructions per epoch, %.5g once per process (start-up; the trainer also tests)\n", who, per[who], start[who]
    }
    printf "trainer / hand, instructions per epoch: %.4f\n", per["trainer"] / per["hand"]
  }' "$out" | tee -a "$out"
echo "results: $out"
