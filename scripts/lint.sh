#!/usr/bin/env bash
# clang-tidy with the repository's profile (.clang-tidy: bugprone, performance) over the sources of
# a configured build (its compile_commands.json). The torch-free modules take about 3 s a file;
# a file that includes LibTorch about 30 s, so those run only when asked for.
#   scripts/lint.sh [BUILD_DIR] [--all]   (default build/debian; --all: engine, data and models too)
set -euo pipefail
source "$(dirname "$0")/common.sh"
build="$(build_dir debian)"
all=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    -*) die "unknown argument '$arg'" ;;
    *) build="$arg" ;;
  esac
done
[[ -f "$build/compile_commands.json" ]] || die "no $build/compile_commands.json: configure a build first (scripts/build.sh)"
command -v clang-tidy >/dev/null || die "clang-tidy is not installed (scripts/setup.sh installs it)"
cd "$TRAINER_ROOT"
modules=(util config options launch formats tracking image)
((all)) && modules+=(data models engine)
mapfile -t files < <(for m in "${modules[@]}"; do find "src/$m" -name '*.cpp'; done; ls apps/trainer/*.cpp)
say "clang-tidy: ${#files[@]} files ($(IFS=' '; echo "${modules[*]}") and apps)"
start=$(date +%s)
# Only files the build compiles (a module absent from this build, e.g. without LibTorch, is skipped).
mapfile -t files < <(for f in "${files[@]}"; do grep -q "\"file\": \"[^\"]*$f\"" "$build/compile_commands.json" && echo "$f"; done)
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet 2>/dev/null >"$build/clang-tidy.txt" || true
cat "$build/clang-tidy.txt"
if grep -q "error:\|warning:" "$build/clang-tidy.txt"; then
  die "clang-tidy found problems (above; also in $build/clang-tidy.txt)"
fi
say "clang-tidy: clean, ${#files[@]} files in $(( $(date +%s) - start )) s"
