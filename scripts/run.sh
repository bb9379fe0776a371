#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs trainer with the given arguments
# (default: `trainer fit` on the shipped configs/). Idempotent and incremental. Builds only what a
# run needs, the `trainer` binary and the engine it loads (libtrainer_engine.so); the tests are
# built by scripts/test.sh (or scripts/build.sh).
set -euo pipefail
source "$(dirname "$0")/common.sh"
"$TRAINER_ROOT/scripts/setup.sh" --libtorch=debian
configure_variant debian
[[ -x "$(build_dir debian)/trainer" ]] || say "building trainer and its engine (the first build takes minutes)"
build_targets debian trainer trainer_engine >/dev/null
cd "$TRAINER_ROOT"
if (($# == 0)); then set -- fit; fi
exec "$(build_dir debian)/trainer" "$@"
