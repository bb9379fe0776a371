#!/usr/bin/env bash
# Build and run the image-decode benchmark (single-threaded).
#   bench/image_decode/run.sh [decode_bench options, e.g. --reps 21 --only jpeg]
# Env: DATA_DIR (generated images, default /tmp/image_decode_data),
#      BUILD_DIR (binary + results.csv, default /tmp/image_decode_build),
#      VENV (Python venv with scikit-image + Pillow, default /tmp/decode-venv).
# Needs: apt-get install -y --no-install-recommends g++ libjpeg62-turbo-dev libpng-dev \
#          libspng-dev libwebp-dev libopencv-imgcodecs-dev python3-venv
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA_DIR:-/tmp/image_decode_data}
BUILD=${BUILD_DIR:-/tmp/image_decode_build}
VENV=${VENV:-/tmp/decode-venv}
mkdir -p "$BUILD"

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q scikit-image==0.26.0 pillow==13.0.0  # the versions measured
fi
if [ ! -f "$DATA/sets.tsv" ] || [ "$HERE/make_images.py" -nt "$DATA/sets.tsv" ]; then
  rm -rf "$DATA"
  "$VENV/bin/python" "$HERE/make_images.py" "$DATA"
fi

g++ -std=c++17 -O2 -Wall -Wextra -o "$BUILD/decode_bench" "$HERE/decode_bench.cpp" \
  -I/usr/include/opencv4 \
  -ljpeg -lpng16 -lspng -lwebp -lopencv_imgcodecs -lopencv_imgproc -lopencv_core

echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$DATA/versions.txt"
OMP_NUM_THREADS=1 exec "$BUILD/decode_bench" "$DATA" --csv "$BUILD/results.csv" "$@"
