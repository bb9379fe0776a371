#!/usr/bin/env bash
# Installs what trainer needs on Debian 12. Idempotent: a second run installs nothing.
#   scripts/setup.sh                   Debian's LibTorch 1.13 (CPU) and the build tools
#   scripts/setup.sh --libtorch=wheel  also the PyPI torch wheel's LibTorch (CUDA 13.0 build)
#   scripts/setup.sh --libtorch=all    both
# The wheel goes into a virtual environment outside the repository, shared by every clone:
# ${TRAINER_CACHE:-~/.cache/trainer}/venv-torch-<version>.
set -euo pipefail
source "$(dirname "$0")/common.sh"

libtorch=debian
for arg in "$@"; do
  case "$arg" in
    --libtorch=*) libtorch="${arg#*=}" ;;
    *) die "unknown argument '$arg' (expected --libtorch=debian|wheel|all)" ;;
  esac
done
case "$libtorch" in debian|wheel|all) ;; *) die "--libtorch must be debian, wheel or all" ;; esac

packages=(
  build-essential cmake ninja-build ccache pkg-config clang
  clang-tidy clang-format                         # scripts/lint.sh (the .clang-tidy profile)
  libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev catch2 zlib1g-dev
  libprotobuf-dev protobuf-compiler               # tests decode our TensorBoard events with protobuf
  nlohmann-json3-dev                              # safetensors headers
  libcsv-dev                                      # data=csv: the CSV tokenizer (RFC 4180 quoting)
  libcurl4-openssl-dev                            # logger=mlflow: the MLflow REST API (HTTPS, proxies, timeouts)
  libarchive-dev                                  # data=webdataset: tar shards (every tar dialect, compressed too)
  libcairo2-dev                                   # the sweep's metric plot (PNG)
  libjpeg62-turbo-dev libpng-dev libwebp-dev      # image decoders (bench/image_decode: measured fastest)
  libopencv-imgcodecs-dev                         # BMP and TIFF decoding
  libtorch-dev libgloo-dev libopenblas0-pthread   # Debian's LibTorch + Gloo headers + a fast BLAS
  dataset-fashion-mnist                           # the real Fashion-MNIST, gzipped IDX files
  slurmctld slurmd slurm-client munge             # a real one-node SLURM cluster for the SLURM launcher's tests
  python3 python3-venv
  zsh fish                                        # the shell-completion tests run in bash, zsh and fish
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's LibTorch calls whatever libblas.so.3 the alternatives point at; make it OpenBLAS.
blas=$(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | awk '/^Value:/{print $2}')
if [[ "$blas" != *openblas* ]]; then
  openblas=$(update-alternatives --list libblas.so.3-x86_64-linux-gnu 2>/dev/null | grep openblas | head -1 || true)
  [[ -n "$openblas" ]] && as_root update-alternatives --set libblas.so.3-x86_64-linux-gnu "$openblas" >/dev/null
fi

if [[ "$libtorch" == wheel || "$libtorch" == all ]]; then
  # The wheel's metadata directory says which version is installed without importing torch (~5 s).
  if ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/torch-$TORCH_WHEEL_VERSION*.dist-info" >/dev/null; then
    say "installing torch==$TORCH_WHEEL_VERSION into $TORCH_VENV (once for every clone)"
    mkdir -p "$(dirname "$TORCH_VENV")"
    python3 -m venv "$TORCH_VENV"
    "$TORCH_VENV/bin/pip" install -q --disable-pip-version-check "torch==$TORCH_WHEEL_VERSION"
  fi
  # What the tests read our outputs with: TensorBoard's own event reader, Python's safetensors;
  # and what they compare the image data with: torchvision (ImageFolder, transforms) and Pillow,
  # which also writes the test image trees from Fashion-MNIST; the tables scikit-learn ships
  # (data=csv's tests), pandas (the CSV load benchmark's peer) and Optuna (TPE's reference).
  if ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/tensorboard-$TENSORBOARD_VERSION.dist-info" >/dev/null ||
     ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/safetensors-$SAFETENSORS_VERSION.dist-info" >/dev/null ||
     ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/torchvision-$TORCHVISION_VERSION.dist-info" >/dev/null ||
     ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/pillow-$PILLOW_VERSION.dist-info" >/dev/null ||
     ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/scikit_learn-$SCIKIT_LEARN_VERSION.dist-info" >/dev/null ||
     ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/pandas-$PANDAS_VERSION.dist-info" >/dev/null ||
     ! compgen -G "$TORCH_VENV/lib/python3*/site-packages/optuna-$OPTUNA_VERSION.dist-info" >/dev/null; then
    say "installing tensorboard==$TENSORBOARD_VERSION safetensors==$SAFETENSORS_VERSION" \
      "torchvision==$TORCHVISION_VERSION pillow==$PILLOW_VERSION scikit-learn==$SCIKIT_LEARN_VERSION" \
      "pandas==$PANDAS_VERSION optuna==$OPTUNA_VERSION into $TORCH_VENV"
    "$TORCH_VENV/bin/pip" install -q --disable-pip-version-check "torch==$TORCH_WHEEL_VERSION" \
      "tensorboard==$TENSORBOARD_VERSION" "safetensors==$SAFETENSORS_VERSION" \
      "torchvision==$TORCHVISION_VERSION" "pillow==$PILLOW_VERSION" \
      "scikit-learn==$SCIKIT_LEARN_VERSION" "pandas==$PANDAS_VERSION" "optuna==$OPTUNA_VERSION"
  fi
  # logger=mlflow's tests: a real `mlflow server` and MlflowClient, in a venv of their own.
  if ! compgen -G "$MLFLOW_VENV/lib/python3*/site-packages/mlflow-$MLFLOW_VERSION.dist-info" >/dev/null; then
    say "installing mlflow==$MLFLOW_VERSION into $MLFLOW_VENV (once for every clone)"
    rm -rf "$MLFLOW_VENV"
    mkdir -p "$(dirname "$MLFLOW_VENV")"
    python3 -m venv "$MLFLOW_VENV"
    "$MLFLOW_VENV/bin/pip" install -q --disable-pip-version-check "mlflow==$MLFLOW_VERSION"
  fi
  [[ -x /usr/local/cuda/bin/nvcc ]] ||
    die "the torch wheel is a CUDA 13.0 build and needs the CUDA 13.0 toolkit at /usr/local/cuda to configure"
fi
say "set-up complete ($libtorch)"
