# Shared by the scripts: paths, versions and small helpers. Sourced, not run.
TRAINER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TORCH_WHEEL_VERSION=2.11.0
TENSORBOARD_VERSION=2.21.0
SAFETENSORS_VERSION=0.8.0
TORCHVISION_VERSION=0.26.0  # the release made for torch 2.11.0
PILLOW_VERSION=12.0.0
SCIKIT_LEARN_VERSION=1.9.1  # data=csv's tests train on the tables it ships (iris, wine, breast cancer)
PANDAS_VERSION=3.1.1       # the peer of bench/csv_load
MLFLOW_VERSION=3.17.2        # logger=mlflow's tests run a real `mlflow server` and read runs back with MlflowClient
OPTUNA_VERSION=5.0.0        # the TPE sampler's quality is compared with Optuna's (tests/launch/tpe_quality_test.cpp)
TRAINER_CACHE="${TRAINER_CACHE:-$HOME/.cache/trainer}"
TORCH_VENV="$TRAINER_CACHE/venv-torch-$TORCH_WHEEL_VERSION"
# Real Hydra, for regenerating the goldens it wrote (scripts/hydra_goldens.sh); omegaconf, PyYAML and
# antlr pinned too, since they print what the goldens hold.
HYDRA_VERSION=1.3.2
OMEGACONF_VERSION=2.3.1
PYYAML_VERSION=6.0.3
ANTLR4_VERSION=4.9.3
HYDRA_VENV="$TRAINER_CACHE/venv-hydra-$HYDRA_VERSION"
# Hydra's Optuna sweeper, for the planned-space goldens of lightning-hydra-template's tree
# (tests/data/template_optuna/make_expected.py) and the peer of bench/search_bench: the sweeper
# needs Optuna < 3, and Optuna 2.10 SQLAlchemy < 2; hydra-colorlog because the template selects it.
HYDRA_OPTUNA_SWEEPER_VERSION=1.2.0
HYDRA_OPTUNA_PINS=("hydra-core==$HYDRA_VERSION" "omegaconf==$OMEGACONF_VERSION" "antlr4-python3-runtime==$ANTLR4_VERSION"
  "hydra-optuna-sweeper==$HYDRA_OPTUNA_SWEEPER_VERSION" "optuna==2.10.1" "SQLAlchemy==1.4.54" "hydra-colorlog==1.2.0")
HYDRA_OPTUNA_VENV="$TRAINER_CACHE/venv-hydra-optuna-$HYDRA_OPTUNA_SWEEPER_VERSION"
# MLflow in its own venv: its pins (protobuf, numpy, pandas) need not agree with torch's or tensorboard's.
MLFLOW_VENV="$TRAINER_CACHE/venv-mlflow-$MLFLOW_VERSION"
export CCACHE_DIR="${CCACHE_DIR:-$TRAINER_CACHE/ccache}"
# Let every clone share cache hits: paths relative to the checkout, the build directory not hashed.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$TRAINER_ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"

say() { printf '[trainer] %s\n' "$*" >&2; }
die() { printf '[trainer] error: %s\n' "$*" >&2; exit 1; }
as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

# build_dir VARIANT -> the build directory of that LibTorch variant.
build_dir() { echo "$TRAINER_ROOT/build/$1"; }

# configure_variant VARIANT [extra cmake args...]: configures build/VARIANT (builds nothing).
configure_variant() {
  local variant=$1; shift
  local dir; dir=$(build_dir "$variant")
  local args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINER_LIBTORCH="$variant")
  if [[ "$variant" == wheel ]]; then
    local prefix
    # torch.utils.cmake_prefix_path, found without importing torch.
    prefix=$(compgen -G "$TORCH_VENV/lib/python3*/site-packages/torch/share/cmake" | head -1) ||
      die "no torch wheel in $TORCH_VENV: run scripts/setup.sh --libtorch=wheel"
    args+=(-DTRAINER_TORCH_PREFIX="$prefix")
  fi
  # The Python that reads our output formats back in tests (torch, tensorboard, safetensors).
  [[ -x "$TORCH_VENV/bin/python" ]] && args+=(-DTRAINER_TEST_PYTHON="$TORCH_VENV/bin/python")
  [[ -x "$MLFLOW_VENV/bin/python" ]] && args+=(-DTRAINER_MLFLOW_PYTHON="$MLFLOW_VENV/bin/python")
  cmake -S "$TRAINER_ROOT" -B "$dir" "${args[@]}" "$@" >/dev/null
}

# configure_and_build VARIANT [extra cmake args...]: configures build/VARIANT and builds everything
# in it (the tests included).
configure_and_build() {
  local variant=$1; shift
  configure_variant "$variant" "$@"
  cmake --build "$(build_dir "$variant")" --parallel "$(nproc)"
}

# build_targets VARIANT TARGET...: builds only these targets of the configured build/VARIANT (and
# what they link), e.g. the binary and the engine a run needs, without the tests.
build_targets() {
  local variant=$1; shift
  cmake --build "$(build_dir "$variant")" --parallel "$(nproc)" --target "$@"
}
