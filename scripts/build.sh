#!/usr/bin/env bash
# Configures and builds one LibTorch variant into build/<variant>.
#   scripts/build.sh [--libtorch=debian|wheel|none] [extra cmake -D options]
set -euo pipefail
source "$(dirname "$0")/common.sh"
variant=debian
extra=()
for arg in "$@"; do
  case "$arg" in
    --libtorch=*) variant="${arg#*=}" ;;
    *) extra+=("$arg") ;;
  esac
done
configure_and_build "$variant" "${extra[@]}"
