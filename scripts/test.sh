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
  configure_and_build "$variant"
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
  say "== lint: clang-tidy with .clang-tidy (bugprone, performance) over the torch-free modules"
  "$TRAINER_ROOT/scripts/lint.sh" "$(build_dir "${variants[0]}")" || fail "lint"
  say "== goldens: regenerated with real Hydra $HYDRA_VERSION, compared with the checkout"
  "$TRAINER_ROOT/scripts/hydra_goldens.sh" --check || fail "hydra goldens"
  # ASan + UBSan over every unit test and the end-to-end tests with the engine, built against
  # Debian's LibTorch (ours instrumented at -O1, LibTorch not; -DNDEBUG as LibTorch was built).
  # That build takes ~40 min of wall time from a cold compiler cache (a few minutes warm).
  # TRAINER_SANITIZE_ENGINE=auto includes the engine unless this run has already taken longer than
  # TRAINER_SANITIZE_ENGINE_BEFORE_S (default 2100 s: a cold build came first), which keeps the
  # whole run inside CI's 90 minutes; auto is the default; 1 always includes it; 0 leaves it out
  # (docs/testing.md).
  sanitizer_start=$(date +%s)
  elapsed=$((sanitizer_start - start))
  engine_sanitized=${TRAINER_SANITIZE_ENGINE:-auto}
  if [[ "$engine_sanitized" == auto ]]; then
    engine_sanitized=1
    if ((elapsed > ${TRAINER_SANITIZE_ENGINE_BEFORE_S:-2100})); then
      engine_sanitized=0
      say "sanitizers: the run has taken ${elapsed} s (over ${TRAINER_SANITIZE_ENGINE_BEFORE_S:-2100} s, a cold build came first): the engine is left out of the sanitizer build this time, so the run stays within 90 min"
    fi
  fi
  if [[ "$engine_sanitized" == 1 ]]; then
    say "== sanitizers (ASan + UBSan): every unit test and the end-to-end tests, the engine included"
    configure_and_build asan-engine -DTRAINER_LIBTORCH=debian -DTRAINER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1 -DNDEBUG"
    sanitizer_build=asan-engine
  else
    say "== sanitizers (ASan + UBSan): unit tests of the torch-free modules, end-to-end tests without the engine"
    configure_and_build asan -DTRAINER_LIBTORCH=none -DTRAINER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
    sanitizer_build=asan
  fi
  say "sanitizer build: $(( $(date +%s) - sanitizer_start )) s"
  ctest --test-dir "$(build_dir "$sanitizer_build")" --output-on-failure --timeout 900 ||
    ctest_failed "sanitizers: ctest" "$(build_dir "$sanitizer_build")"
  say "sanitizer build and tests: $(( $(date +%s) - sanitizer_start )) s"
  if [[ -f "$TRAINER_ROOT/tests/fuzz/CMakeLists.txt" ]]; then
    say "== fuzzing the override parser and the YAML loader (bounded)"
    CXX=clang++ configure_and_build fuzz -DTRAINER_LIBTORCH=none -DTRAINER_FUZZ=ON -DTRAINER_BUILD_TESTS=OFF
    "$TRAINER_ROOT/tests/fuzz/run.sh" "$(build_dir fuzz)" || fail "fuzzing"
  fi
fi

say "all tests finished in $(( $(date +%s) - start )) s"
if ((failed)); then
  say "FAILED: ${#failures[@]} stage(s); each one's own output above says which test and why:"
  for stage in "${failures[@]}"; do say "  - $stage"; done
fi
exit $failed
