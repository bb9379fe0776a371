#!/usr/bin/env bash
# Regenerates expected/ from real Hydra 1.3 (hydra-core 1.3.2 in a venv). Not run by the tests.
#   tests/data/cli_trees/make_expected.sh /path/to/python-with-hydra
# FROM=N keeps expected/ and (re)generates only cases N and later (for cases appended at the end).
# Each case runs in this directory with --config-path <this dir>/<tree> --config-name <config>.
# Single runs go through bench/hydra_app.py (Hydra's own --cfg/--info printing); multiruns (-m,
# hydra.mode=... on the command line, or mode: MULTIRUN in the primary config) through
# hydra_sweep_app.py, a real multirun whose jobs print their configs in trainer's preview format.
# Both run as a script named trainer.py, so Hydra's job name is trainer's. Paths under the
# checkout are written as @ROOT@, in the arguments of cases.txt and in expected/ (the test puts
# its own checkout back). tests/data/hydra_peer on PYTHONPATH makes Hydra list trainer's built-in
# launchers and sweepers among its plugins (--info, --info all), as trainer does.
set -euo pipefail
python=${1:?python with hydra-core 1.3.2}
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../../.." && pwd -P)
from=${FROM:-0}
# expected/*.error (trainer's exit code and first line of an error) are not Hydra's: kept. The e2e
# test rewrites them with TRAINER_UPDATE_GOLDENS=1 (tests/e2e/error_golden.h).
if [[ $from == 0 ]]; then rm -f "$here"/expected/*.out "$here"/expected/*.status; fi
mkdir -p "$here/expected"
apps=$(mktemp -d)
trap 'rm -rf "$apps"' EXIT
mkdir -p "$apps/run" "$apps/sweep"
export PYTHONPATH="$root/tests/data/hydra_peer"
cp "$root/bench/hydra_app.py" "$apps/run/trainer.py"
cp "$here/hydra_sweep_app.py" "$apps/sweep/trainer.py"
n=0
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  if ((n < from)); then n=$((n + 1)); continue; fi
  read -r -a words <<<"$line"
  tree=${words[0]}
  name=${words[1]}
  args=()
  multirun=0
  for word in "${words[@]:2}"; do
    word=${word//␣/ }
    word=${word//@ROOT@/$root}
    [[ "$word" == "-m" || "$word" == hydra.mode=* ]] && multirun=1
    args+=("$word")
  done
  grep -qs '^  mode: MULTIRUN' "$here/$tree/$name.yaml" && multirun=1
  out="$here/expected/$(printf '%03d' $n)"
  app="$apps/run/trainer.py"
  [[ $multirun == 1 ]] && app="$apps/sweep/trainer.py"
  set +e
  (cd "$here" && env -u TRAINER_TEST_ENV_SET TRAINER_TEST_ENV_SET=from-env \
    "$python" "$app" --config-path "$here/$tree" --config-name "$name" "${args[@]}") \
    >"$out.out" 2>"${ERR_DIR:-/tmp}/cli_trees_$(printf %03d $n).err"
  echo $? >"$out.status"
  sed -i "s|$root|@ROOT@|g" "$out.out"
  set -e
  n=$((n + 1))
done <"$here/cases.txt"
echo "wrote $n cases"
