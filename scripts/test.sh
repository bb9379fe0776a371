#!/usr/bin/env bash
# README command 2: installs what is missing, then builds and runs every test against both
# supported LibTorch builds (Debian 1.13 CPU, and the 2.11 CUDA wheel running the same CPU
# tests), plus the goldens regenerated with real Hydra (scripts/hydra_goldens.sh --check), the
# sanitizer build (unit tests and end-to-end tests, the engine's included; TRAINER_SANITIZE_ENGINE)
# and bounded fuzzing of the parsers.
#   scripts/test.sh [--libtorch=debian|wheel|all] [--quick]   (--quick: no format check, lint, goldens, sanitizers or fuzzing)
set -euo pipefail
source "$(dirname "$0")/common.sh"
libtorch=all
quick=0
for arg in "$@"; do
  case "$arg" in
    --libtorch=*) libtorch="${arg#*=}" ;;
    --quick) quick=1 ;;
    *) die "unknown argument '$arg'" ;;
  esac
done
start=$(date +%s)
"$TRAINER_ROOT/scripts/setup.sh" --libtorch="$libtorch"

# CI stops a run at 90 minutes, and then nothing lands. Under CI=true (or with
# TRAINER_TEST_BUDGET_S) the stages after the two variants' tests run only when the time they are
# expected to take still fits, and a stage left out is named with the numbers that decided it.
# Expected: the stage's last duration on this machine (recorded under $TRAINER_CACHE/stage-seconds),
# its build part grown by the share of this run's Debian compilations that missed the compiler
# cache (a change to a widely included header makes every build slow), or, never recorded, its
# cold-cache time. A run without a budget (a developer's) runs every stage.
budget=${TRAINER_TEST_BUDGET_S:-$([[ "${CI:-}" == true ]] && echo 5400 || echo 0)}
reserve=300  # seconds kept free at the end: the last stage's estimate may be short
seconds_dir="$TRAINER_CACHE/stage-seconds"
miss_percent=100  # of this run's Debian compilations; 100 until measured
record_seconds() { mkdir -p "$seconds_dir" && echo "$2" >"$seconds_dir/$1"; }
ccache_counts() {  # "hits misses" of the compiler cache so far
  ccache --print-stats 2>/dev/null |
    awk '$1 ~ /^(direct|preprocessed)_cache_hit$/ {h += $2} $1 == "cache_miss" {m = $2} END {print h + 0, m + 0}'
}
# expected_seconds STAGE COLD_BUILD_S COLD_TESTS_S
expected_seconds() {
  local build=$2 tests=$3
  if [[ -f "$seconds_dir/$1-build" ]]; then
    build=$(($(cat "$seconds_dir/$1-build") + $2 * miss_percent / 100))
    (( build > $2 )) && build=$2
  fi
  [[ -f "$seconds_dir/$1-tests" ]] && tests=$(cat "$seconds_dir/$1-tests")
  echo $((build + tests))
}
left_out=()
# fits STAGE COLD_BUILD_S COLD_TESTS_S: whether the stage is expected to end within the budget
fits() {
  ((budget == 0)) && return 0
  local expected elapsed
  expected=$(expected_seconds "$@")
  elapsed=$(($(date +%s) - start))
  ((elapsed + expected + reserve <= budget)) && return 0
  left_out+=("$1 (expected ${expected} s after ${elapsed} s; the budget is ${budget} s)")
  say "left out: $1, expected to take ${expected} s after ${elapsed} s, which would pass the ${budget} s budget" \
    "(TRAINER_TEST_BUDGET_S; CI's 90 minutes) with ${reserve} s to spare. Run it with scripts/test.sh, no CI=true."
  return 1
}
# timed_build STAGE VARIANT [cmake args...]: configure_and_build, its seconds recorded as STAGE-build
timed_build() {
  local stage=$1 begun; shift
  begun=$(date +%s)
  configure_and_build "$@" || return 1
  record_seconds "$stage-build" $(($(date +%s) - begun))
}

variants=()
case "$libtorch" in all) variants=(debian wheel) ;; *) variants=("$libtorch") ;; esac

failed=0
failures=()  # the stages that failed, listed again at the end where a CI log tail shows them
fail() { failed=1; failures+=("$1"); }
ctest_failed() {  # $1: stage name, $2: build dir; names the failed tests from ctest's own record
  local names
  names=$(sed 's/^[0-9]*://' "$2/Testing/Temporary/LastTestsFailed.log" 2>/dev/null | paste -sd' ' -)
  fail "$1${names:+ ($names)}"
}
for variant in "${variants[@]}"; do
  say "== $variant: build"
  read -r hits_before misses_before < <(ccache_counts)
  timed_build "$variant" "$variant"
  if [[ "$variant" == debian ]]; then
    read -r hits misses < <(ccache_counts)
    compiled=$((hits - hits_before + misses - misses_before))
    ((compiled > 0)) && miss_percent=$((100 * (misses - misses_before) / compiled))
    say "debian build: ${compiled} compilations, ${miss_percent} % of them not in the compiler cache"
  fi
  say "== $variant: tests"
  ctest --test-dir "$(build_dir "$variant")" --output-on-failure --timeout 900 ||
    ctest_failed "$variant: ctest" "$(build_dir "$variant")"
  if [[ "$variant" == debian ]]; then  # the wheel build installs the same way; one variant suffices
    say "== $variant: examples/custom_model built against the installed package"
    "$TRAINER_ROOT/scripts/examples.sh" "$(build_dir "$variant")" || fail "$variant: examples"
  fi
done

if ((quick == 0)); then
  say "== format: every tracked C++ file laid out as .clang-format says"
  "$TRAINER_ROOT/scripts/format.sh" --check || fail "format"
  # Cold-cache times on the 2-core machine: clang-tidy ~170 s; the goldens ~240 s (more while the
  # Hydra environment installs); the sanitizer build with the engine ~40 min and its tests ~24 min,
  # without it ~15 min and ~5 min; the fuzzing build ~4 min and its runs ~2 min.
  if fits lint 0 400; then
    say "== lint: clang-tidy with .clang-tidy (bugprone, performance) over the torch-free modules"
    begun=$(date +%s)
    "$TRAINER_ROOT/scripts/lint.sh" "$(build_dir "${variants[0]}")" || fail "lint"
    record_seconds lint-tests $(($(date +%s) - begun))
  fi
  if fits goldens 0 600; then
    say "== goldens: regenerated with real Hydra $HYDRA_VERSION, compared with the checkout"
    begun=$(date +%s)
    "$TRAINER_ROOT/scripts/hydra_goldens.sh" --check || fail "hydra goldens"
    record_seconds goldens-tests $(($(date +%s) - begun))
  fi
  # ASan + UBSan over every unit test and the end-to-end tests with the engine, built against
  # Debian's LibTorch (ours instrumented at -O1, LibTorch not; -DNDEBUG as LibTorch was built), or,
  # where that is not expected to fit the budget, over the torch-free modules' unit tests and the
  # end-to-end tests that need no engine (build/asan). TRAINER_SANITIZE_ENGINE: auto (the default)
  # as just said; 1 always the engine; 0 never (docs/testing.md).
  engine_sanitized=${TRAINER_SANITIZE_ENGINE:-auto}
  sanitizer_build=""
  if [[ "$engine_sanitized" == 1 ]] || { [[ "$engine_sanitized" == auto ]] && fits asan-engine 2400 1500; }; then
    sanitizer_build=asan-engine
  elif fits asan 900 400; then
    sanitizer_build=asan
  fi
  if [[ -n "$sanitizer_build" ]]; then
    sanitizer_start=$(date +%s)
    if [[ "$sanitizer_build" == asan-engine ]]; then
      say "== sanitizers (ASan + UBSan): every unit test and the end-to-end tests, the engine included"
      timed_build asan-engine asan-engine -DTRAINER_LIBTORCH=debian -DTRAINER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
        "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1 -DNDEBUG"
    else
      say "== sanitizers (ASan + UBSan): unit tests of the torch-free modules, end-to-end tests without the engine"
      timed_build asan asan -DTRAINER_LIBTORCH=none -DTRAINER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
    fi
    say "sanitizer build: $(($(date +%s) - sanitizer_start)) s"
    begun=$(date +%s)
    ctest --test-dir "$(build_dir "$sanitizer_build")" --output-on-failure --timeout 900 ||
      ctest_failed "sanitizers: ctest" "$(build_dir "$sanitizer_build")"
    record_seconds "$sanitizer_build-tests" $(($(date +%s) - begun))
    say "sanitizer build and tests: $(($(date +%s) - sanitizer_start)) s"
  fi
  if [[ -f "$TRAINER_ROOT/tests/fuzz/CMakeLists.txt" ]] && fits fuzz 240 150; then
    say "== fuzzing the override parser and the YAML loader (bounded)"
    CXX=clang++ timed_build fuzz fuzz -DTRAINER_LIBTORCH=none -DTRAINER_FUZZ=ON -DTRAINER_BUILD_TESTS=OFF
    begun=$(date +%s)
    "$TRAINER_ROOT/tests/fuzz/run.sh" "$(build_dir fuzz)" || fail "fuzzing"
    record_seconds fuzz-tests $(($(date +%s) - begun))
  fi
fi

say "all tests finished in $(( $(date +%s) - start )) s"
if ((${#left_out[@]})); then
  say "left out to stay within the ${budget} s budget (not failures; scripts/test.sh without CI=true runs them):"
  for stage in "${left_out[@]}"; do say "  - $stage"; done
fi
if ((failed)); then
  say "FAILED: ${#failures[@]} stage(s); each one's own output above says which test and why:"
  for stage in "${failures[@]}"; do say "  - $stage"; done
fi
exit $failed
