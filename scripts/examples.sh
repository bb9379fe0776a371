#!/usr/bin/env bash
# Installs a built trainer into a temporary prefix, builds examples/custom_model against it with
# find_package(trainer) as a user would, and runs it: a model, dataset, callback and logger of the
# program's own, on its own data and on trainer's synthetic data. Exits non-zero on any failure.
#   scripts/examples.sh [BUILD_DIR]      (default build/debian; JOBS=N sets the build parallelism)
set -euo pipefail
source "$(dirname "$0")/common.sh"
build=${1:-$(build_dir debian)}
[[ -f "$build/CMakeCache.txt" ]] || die "$build is not a trainer build directory (run scripts/build.sh)"
example="$TRAINER_ROOT/examples/custom_model"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { say "examples: $*"; exit 1; }
# expect FILE PATTERN: FILE exists and has a line matching PATTERN (grep -E).
expect() { [[ -f "$1" ]] || fail "missing $1"; grep -Eq -- "$2" "$1" || fail "$1 has no line matching '$2'"; }

say "examples: installing $build into a temporary prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
say "examples: building examples/custom_model against it (find_package(trainer))"
cmake -S "$example" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$work/prefix" "${launcher[@]}" >/dev/null
cmake --build "$work/build" --parallel "${JOBS:-$(nproc)}"
my_trainer="$work/build/my_trainer"
common=(-cd "$example/configs" model=logreg callbacks=with_summary logger=with_jsonl
        trainer.enable_progress_bar=false test_after_fit=true)
mkdir -p "$work/cwd" && cd "$work/cwd"

say "examples: the installed trainer finds its configs and its engine"
"$work/prefix/bin/trainer" fit --cfg job -p model model=cnn | grep -q "name: cnn" || fail "installed trainer --cfg"
"$work/prefix/bin/trainer" --version | grep -q "LibTorch" || fail "installed trainer --version"

say "examples: my_trainer fit on its own dataset (quadrants), 2 epochs"
run="$work/quadrants"
"$my_trainer" fit "${common[@]}" data=quadrants trainer.max_epochs=2 hydra.run.dir="$run" ||
  fail "my_trainer fit data=quadrants failed"
expect "$run/trainer.log" "LogisticRegression"
expect "$run/epoch_summary.txt" "^epoch [0-9]+ step [0-9]+ val/acc [01]\\.[0-9]+"
[[ $(grep -o '^epoch [0-9]*' "$run/epoch_summary.txt" | tr '\n' ,) == "epoch 0,epoch 1," ]] ||
  fail "expected lines for epochs 0 and 1 in epoch_summary.txt"
expect "$run/metrics.jsonl" "\"val/acc\": "
expect "$run/metrics.jsonl" "\"summary/best\": "
expect "$run/metrics.jsonl" "\"test/acc\": "
expect "$run/metrics.csv" "summary/best"
[[ -f "$run/checkpoints/last.ckpt" ]] || fail "no checkpoint in $run"
# A linear model separates the quadrants: far above chance (0.25) after two epochs.
acc=$(grep -o '"test/acc": [0-9.]*' "$run/metrics.jsonl" | tail -1 | awk '{print $2}')
awk -v a="$acc" 'BEGIN { exit !(a > 0.9) }' || fail "test/acc $acc on quadrants (expected > 0.9)"

say "examples: resume from last.ckpt to 3 epochs"
"$my_trainer" fit "${common[@]}" data=quadrants trainer.max_epochs=3 ckpt_path=last hydra.run.dir="$run" ||
  fail "my_trainer resume failed"
[[ $(grep -o '^epoch [0-9]*' "$run/epoch_summary.txt" | tr '\n' ,) == "epoch 0,epoch 1,epoch 2," ]] ||
  fail "expected lines for epochs 0, 1 and 2 after resume"

say "examples: my_trainer fit on trainer's synthetic data, 1 epoch"
run="$work/synthetic"
"$my_trainer" fit "${common[@]}" data=synthetic data.num_samples=512 trainer.max_epochs=1 \
  hydra.run.dir="$run" || fail "my_trainer fit data=synthetic failed"
expect "$run/epoch_summary.txt" "^epoch [0-9]+ step "
expect "$run/metrics.jsonl" "\"train/loss"

say "examples: a misspelt model name lists the program's own"
if "$my_trainer" fit "${common[@]}" data=quadrants model.name=logrg hydra.run.dir="$work/bad" 2>"$work/err"; then
  fail "model.name=logrg should fail"
fi
expect "$work/err" "logreg"

say "examples: the dataset reads its own key (data.brightness) and rejects a bad value"
if "$my_trainer" fit "${common[@]}" data=quadrants data.brightness=1.5 hydra.run.dir="$work/bright" 2>"$work/err"; then
  fail "data.brightness=1.5 should fail"
fi
expect "$work/err" "data.brightness"

say "examples: custom_model passed (test/acc $acc)"
