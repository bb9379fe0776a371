#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs trainer with the given arguments
# (default: `trainer fit` on the shipped configs/). Idempotent and incremental.
set -euo pipefail
source "$(dirname "$0")/common.sh"
"$TRAINER_ROOT/scripts/setup.sh" --libtorch=debian
configure_and_build debian >/dev/null
cd "$TRAINER_ROOT"
if (($# == 0)); then set -- fit; fi
exec "$(build_dir debian)/trainer" "$@"
