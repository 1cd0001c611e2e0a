#!/usr/bin/env bash
# Builds llama.cpp's tools (llama-bench, llama-server, llama-batched-bench, llama-speculative,
# llama-quantize, llama-imatrix, llama-perplexity, llama-embedding) for this CPU, as ../shared/BENCHMARKING.md prescribes for speed comparisons:
# GGML_NATIVE off with the ISA spelled out (its AMX path faults on these virtual machines), from
# the llama-cpp-python 0.3.36 source tree. Benchmark-only; nothing in ridge links it.
#
#   tools/build_llama_cpp.sh [JOBS]          -> $RIDGE_HOME/llama.cpp/build-avx512/bin/... (every ISA this CPU has)
#   tools/build_llama_cpp.sh JOBS avx2       -> .../build-avx2/bin/llama-bench (AVX2 + FMA + F16C only)
#   tools/build_llama_cpp.sh JOBS avxvnni    -> .../build-avxvnni/bin/llama-bench (AVX2 + AVX-VNNI, no AVX-512)
# The last two stand in for the AVX2 and AVX-VNNI classes of CPU on a machine that has more.
set -euo pipefail
JOBS=${1:-$(nproc)}
LIMIT=${2:-}
HOME_DIR=${RIDGE_HOME:-$HOME/.cache/ridge}
SRC=$HOME_DIR/llama.cpp/src
if [ -n "$LIMIT" ]; then
  case "$LIMIT" in
    avx2) extra=() ;;
    avxvnni) extra=(-DGGML_AVX_VNNI=ON) ;;
    *) echo "unknown ISA limit '$LIMIT' (avx2, avxvnni)" >&2; exit 2 ;;
  esac
  BUILD=$HOME_DIR/llama.cpp/build-$LIMIT
  if [ ! -x "$BUILD/bin/llama-bench" ]; then
    "$(dirname "$0")/fetch_llama_cpp_src.sh" >/dev/null
    cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON \
      -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON "${extra[@]}" -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
      -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null
    cmake --build "$BUILD" -j "$JOBS" --target llama-bench
  fi
  echo "$BUILD/bin"
  exit 0
fi
BUILD=$HOME_DIR/llama.cpp/build-avx512
if [ -x "$BUILD/bin/llama-bench" ] && [ -x "$BUILD/bin/llama-server" ] && [ -x "$BUILD/bin/llama-imatrix" ] &&
   [ -x "$BUILD/bin/llama-embedding" ]; then
  echo "$BUILD/bin"
  exit 0
fi
"$(dirname "$0")/fetch_llama_cpp_src.sh" >/dev/null
isa=(-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON)
if grep -q avx512f /proc/cpuinfo; then
  isa+=(-DGGML_AVX512=ON)
  grep -q avx512_vnni /proc/cpuinfo && isa+=(-DGGML_AVX512_VNNI=ON)
  grep -q avx512vbmi /proc/cpuinfo && isa+=(-DGGML_AVX512_VBMI=ON)
  grep -q avx512_bf16 /proc/cpuinfo && isa+=(-DGGML_AVX512_BF16=ON)
fi
grep -q avx_vnni /proc/cpuinfo && isa+=(-DGGML_AVX_VNNI=ON)
cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF "${isa[@]}" \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target llama-bench llama-server llama-batched-bench llama-speculative llama-quantize \
  llama-imatrix llama-perplexity llama-embedding
echo "$BUILD/bin"
