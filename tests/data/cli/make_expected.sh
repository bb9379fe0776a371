#!/usr/bin/env bash
# Regenerates expected/ from real Hydra 1.3 (hydra-core 1.3.2 in a venv). Not run by the tests.
#   tests/data/cli/make_expected.sh /path/to/python-with-hydra
set -euo pipefail
python=${1:?python with hydra-core 1.3.2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rm -rf "$here/expected" && mkdir -p "$here/expected"
n=0
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  read -r -a args <<<"$line"
  out="$here/expected/$(printf '%03d' $n)"
  set +e
  (cd "$here" && "$python" "$root/bench/hydra_app.py" --config-path "$root/configs" "${args[@]}") >"$out.out" 2>/dev/null
  echo $? >"$out.status"
  # Paths under the checkout depend on where it lives: the test puts its own root back.
  sed -i "s|$root|@ROOT@|g" "$out.out"
  set -e
  n=$((n + 1))
done <"$here/cases.txt"
echo "wrote $n cases"
