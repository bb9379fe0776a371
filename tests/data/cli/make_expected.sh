#!/usr/bin/env bash
# Regenerates expected/ from real Hydra 1.3 (hydra-core 1.3.2 in a venv). Not run by the tests.
#   tests/data/cli/make_expected.sh /path/to/python-with-hydra
# bench/hydra_app.py runs as an executable named `trainer`, as an installed app does (so Hydra's
# --hydra-help shows `trainer -sc install=bash`), with tests/data/hydra_peer on PYTHONPATH:
# stand-ins for trainer's built-in launchers and sweepers, which Hydra lists as plugins and as
# hydra/launcher and hydra/sweeper options. `--info plugins` ends with the seconds Hydra's plugin
# scan took; that table (different every run; trainer scans no plugins) is not kept.
set -euo pipefail
python=${1:?python with hydra-core 1.3.2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
# expected/*.error (trainer's exit code and first line of an error) are not Hydra's: kept. The e2e
# test rewrites them with TRAINER_UPDATE_GOLDENS=1 (tests/e2e/error_golden.h).
mkdir -p "$here/expected" && rm -f "$here"/expected/*.out "$here"/expected/*.status
app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
{ echo "#!$python"; cat "$root/bench/hydra_app.py"; } >"$app/trainer"
chmod +x "$app/trainer"
export PYTHONPATH="$root/tests/data/hydra_peer"
n=0
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  read -r -a args <<<"$line"
  out="$here/expected/$(printf '%03d' $n)"
  set +e
  (cd "$here" && "$app/trainer" --config-path "$root/configs" "${args[@]}") >"$out.out" 2>/dev/null
  echo $? >"$out.status"
  sed -i '/^Profiling information$/,$d' "$out.out"
  # ...and the blank line before it.
  [[ "${args[*]}" == "--info plugins" ]] && sed -i '$d' "$out.out"
  # Paths under the checkout depend on where it lives: the test puts its own root back.
  sed -i "s|$root|@ROOT@|g" "$out.out"
  set -e
  n=$((n + 1))
done <"$here/cases.txt"
echo "wrote $n cases"
