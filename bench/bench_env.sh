# Shared by the bench scripts (sourced after scripts/common.sh): the Python environments and the
# builds they measure, each made only when missing. Never downloads data.

# The venv with the pinned torch wheel (its LibTorch is what the wheel build links).
bench_torch_venv() {
  if [[ ! -x "$TORCH_VENV/bin/python" ]]; then
    say "bench: no torch venv at $TORCH_VENV: running scripts/setup.sh --libtorch=wheel"
    "$TRAINER_ROOT/scripts/setup.sh" --libtorch=wheel
  fi
}

# bench_peer_venv DIR [PIP_SPEC...]: a venv whose .pth file points at the torch venv's
# site-packages (so the peers use the very same torch; pip finds torch already satisfied), with
# Lightning 2.6 from PyPI and any further PIP_SPECs (e.g. matplotlib for the suite's plot).
bench_peer_venv() {
  local venv=$1; shift
  bench_torch_venv
  local torch_site
  torch_site=$(compgen -G "$TORCH_VENV/lib/python3*/site-packages" | head -1)
  if ! "$venv/bin/python" -c 'import lightning, torch' 2>/dev/null; then
    say "bench: making $venv (Lightning 2.6 over the torch of $TORCH_VENV)"
    "$TORCH_VENV/bin/python" -m venv "$venv"
    local site
    site=$(compgen -G "$venv/lib/python3*/site-packages" | head -1)
    echo "$torch_site" > "$site/trainer-torch-venv.pth"
    "$venv/bin/python" -m pip install --quiet 'lightning==2.6.*' >&2
  fi
  local spec
  for spec in "$@"; do
    "$venv/bin/python" -c "import ${spec%%[=<>]*}" 2>/dev/null ||
      "$venv/bin/python" -m pip install --quiet "$spec" >&2
  done
}

# bench_hydra_venv DIR: a venv with hydra-core 1.3.2 (the config benchmark's peer).
bench_hydra_venv() {
  local venv=$1
  if ! "$venv/bin/python" -c 'import hydra; assert hydra.__version__ == "1.3.2"' 2>/dev/null; then
    say "bench: creating $venv with hydra-core 1.3.2"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet hydra-core==1.3.2
  fi
}

# bench_wheel_targets TARGET...: configures build/wheel (LibTorch of the torch wheel) if needed and
# builds only the named targets (e.g. trainer trainer_engine hand_loop loader_bench).
bench_wheel_targets() {
  bench_torch_venv
  local dir
  dir=$(build_dir wheel)
  [[ -f "$dir/build.ninja" ]] || configure_variant wheel
  say "bench: building $* in $dir"
  cmake --build "$dir" --parallel "$(nproc)" --target "$@" >&2
}
