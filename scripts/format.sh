#!/usr/bin/env bash
# clang-format with the repository's layout (.clang-format: Google style, 120 columns, includes
# grouped as C/POSIX, C++, other libraries, trainer/, private) over every tracked C++ file.
#   scripts/format.sh           rewrites the files in place
#   scripts/format.sh --check   changes nothing; lists the files that differ and fails if any do
set -euo pipefail
source "$(dirname "$0")/common.sh"
check=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    *) die "unknown argument '$arg'" ;;
  esac
done
command -v clang-format >/dev/null || die "clang-format is not installed (scripts/setup.sh installs it)"
cd "$TRAINER_ROOT"
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if ((check == 0)); then
  printf '%s\n' "${files[@]}" | xargs clang-format -i
  say "clang-format: ${#files[@]} files formatted"
  exit 0
fi
differ=()
for f in "${files[@]}"; do
  clang-format "$f" | cmp -s - "$f" || differ+=("$f")
done
if ((${#differ[@]})); then
  printf '  %s\n' "${differ[@]}" >&2
  die "clang-format: ${#differ[@]} of ${#files[@]} files differ from .clang-format's layout (above); scripts/format.sh rewrites them"
fi
say "clang-format: ${#files[@]} files follow .clang-format"
