#!/usr/bin/env bash
# Regenerates expected/ from real Hydra 1.3 (hydra-core 1.3.2 in a venv). Not run by the tests.
#   tests/data/completion/make_expected.sh /path/to/python-with-hydra
# Each case of cases.txt asks Hydra's bash completion for the candidates of one line, as the
# installed completion function does: COMP_LINE="trainer LINE" <app> -sc query=bash, where <app>
# is bench/hydra_app.py run as an executable named `trainer` (so Hydra's job name is trainer's)
# with --config-path TREE --config-name CONFIG, in this directory. tests/data/hydra_peer on
# PYTHONPATH gives Hydra trainer's built-in launchers and sweepers (hydra/launcher=local, ...).
# Paths under the checkout are written as @ROOT@, in cases.txt and in expected/.
set -euo pipefail
python=${1:?python with hydra-core 1.3.2}
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../../.." && pwd -P)
rm -rf "$here/expected" && mkdir -p "$here/expected"
app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
{ echo "#!$python"; cat "$root/bench/hydra_app.py"; } >"$app/trainer"
chmod +x "$app/trainer"
n=0
while IFS= read -r case_line; do
  [[ -z "$case_line" || "$case_line" == \#* ]] && continue
  read -r tree name _ <<<"$case_line"
  line=${case_line#*|}
  line=${line%|}
  line=${line//@ROOT@/$root}
  dir="$here/$tree"
  [[ "$tree" == - ]] && dir="$root/configs"
  out="$here/expected/$(printf '%03d' $n)"
  set +e
  (cd "$here" && COMP_LINE="trainer $line" PYTHONPATH="$root/tests/data/hydra_peer" \
    "$app/trainer" --config-path "$dir" --config-name "$name" -sc query=bash) >"$out.out" 2>/dev/null
  echo $? >"$out.status"
  set -e
  sed -i "s|$root|@ROOT@|g" "$out.out"
  n=$((n + 1))
done <"$here/cases.txt"
echo "wrote $n cases"
