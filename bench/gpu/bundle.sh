#!/usr/bin/env bash
# Bundles a wheel build of trainer for a GPU machine that has Python's torch 2.11 (CUDA 13.0) but
# none of Debian's libraries and no network: the binary, the engine, the shipped configs, the shared
# libraries they need beyond glibc/libstdc++ and LibTorch (yaml-cpp, spdlog, fmt, cairo and its
# chain, ...), and Fashion-MNIST's gzipped IDX files.
#   bench/gpu/bundle.sh [build-dir (build/wheel)] [out-dir (.gpu)]
# On the GPU machine:  source <out-dir>/env.sh && bench/gpu/checks.sh OUT_DIR
#                  or  source <out-dir>/env.sh && $TRAINER fit trainer.accelerator=cuda data.root=$DATA_ROOT
# env.sh finds torch's lib/ through the machine's python3 (TORCH_PYTHON overrides it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build/wheel}"
out="${2:-$root/.gpu}"
data_root="${DATA_ROOT:-/usr/share/datasets/fashion-mnist}"
[[ -x "$build/trainer" && -f "$build/libtrainer_engine.so" ]] ||
  { echo "gpu_bundle: no wheel build in $build (scripts/build.sh --libtorch=wheel)" >&2; exit 1; }

rm -rf "$out/bin" "$out/lib" "$out/configs" "$out/data"
mkdir -p "$out/bin" "$out/lib" "$out/data"
cp "$build/trainer" "$build/libtrainer_engine.so" "$out/bin/"
strip --strip-debug "$out/bin/trainer" "$out/bin/libtrainer_engine.so"  # RelWithDebInfo: most of the size
cp -r "$root/configs" "$out/configs"
cp "$data_root"/*-ubyte.gz "$out/data/"

# Everything ldd resolves, except what the GPU machine provides itself: glibc and the C++ runtime
# (newer there), LibTorch and CUDA (from its torch wheel), the GPU driver.
keep_out='/(libc|libm|libdl|librt|libpthread|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libnvidia)[.-]|/torch/lib/|/nvidia/|/cuda'
for f in "$out/bin/trainer" "$out/bin/libtrainer_engine.so"; do
  ldd "$f" | awk '/=> \//{print $3}'
done | sort -u | grep -Ev "$keep_out" | while read -r lib; do cp -L "$lib" "$out/lib/"; done

cat >"$out/env.sh" <<'EOF'
# Sourced on the GPU machine: the bundle's libraries before the system's, LibTorch from python3's torch.
bundle="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
torch_lib=$("${TORCH_PYTHON:-python3}" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
export LD_LIBRARY_PATH="$bundle/lib:$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TRAINER="$bundle/bin/trainer" DATA_ROOT="$bundle/data" TRAINER_CONFIGS="$bundle/configs"
EOF
du -sh "$out" | awk '{print "gpu_bundle: " $1 " in '"$out"'"}'
