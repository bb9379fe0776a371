#!/usr/bin/env bash
# Lists the sources without a test at the mirrored path: src/<module>/<file>.cpp whose
# tests/<module>/<file>_test.cpp does not exist, with the file's line count. Whether a listed file
# has logic of its own (or is covered by another module's or an end-to-end test) is for the reader.
#   scripts/untested_sources.sh          every such file, smallest first
set -euo pipefail
source "$(dirname "$0")/common.sh"
cd "$TRAINER_ROOT"
for source in src/*/*.cpp src/*/*/*.cpp; do
  [[ -f "$source" ]] || continue
  relative=${source#src/}
  [[ -f "tests/${relative%.cpp}_test.cpp" ]] || printf '%6d %s\n' "$(wc -l <"$source")" "$source"
done | sort -n
