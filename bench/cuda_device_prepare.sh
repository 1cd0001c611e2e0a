#!/usr/bin/env bash
# Prepares, on a machine without a GPU, what bench/cuda_device_check.sh needs on the GPU machine,
# which cannot download anything and takes at most 64 MiB per call (the working tree included):
#   build-carry/bin/   ridge and ridge_tests built with -DRIDGE_CUDA=ON (stripped)
#   build-carry/lib/   the shared libraries they need that a bare CUDA image may lack
#   build-carry/lib-compat/  libstdc++, OpenSSL, zlib: used only if the binaries do not start without them
#   build-carry/model.part1, model.part2   the default model (94 MB) cut in two, one part per call
# The device session then makes two calls, back to back (the machine keeps ignored files between
# calls while it stays warm):
#   1. carry [build-carry/model.part1]
#      command: mkdir -p build-stash && mv build-carry/model.part1 build-stash/ && nvidia-smi -L
#   2. carry [build-carry/bin, build-carry/lib, build-carry/model.part2]
#      command: bash bench/cuda_device_check.sh
# Without part 1 on the machine the check still runs everything except the default-model equality.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build-cuda}
PART1_BYTES=${PART1_BYTES:-58000000}
MODEL=${RIDGE_HOME:-$HOME/.cache/ridge}/models/SmolLM2-135M-Instruct.Q4_1.gguf

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRIDGE_CONFORMANCE=OFF -DRIDGE_BENCH=OFF -DRIDGE_CUDA=ON
fi
cmake --build "$BUILD" -j "${JOBS:-2}" --target ridge ridge_tests

rm -rf build-carry
mkdir -p build-carry/bin build-carry/lib build-carry/lib-compat
strip -o build-carry/bin/ridge "$BUILD/ridge"
strip -o build-carry/bin/ridge_tests "$BUILD/tests/ridge_tests"
# Everything the binaries link but libc, libstdc++ and the CUDA libraries the GPU image has.
ldd "$BUILD/ridge" "$BUILD/tests/ridge_tests" | awk '/=> \// {print $3}' | sort -u |
  grep -E 'lib(fmt|cpp-httplib|brotli[a-z]*|gomp)\.so' | while read -r lib; do cp -L "$lib" build-carry/lib/; done
ldd "$BUILD/ridge" | awk '/=> \// {print $3}' | grep -E 'lib(stdc\+\+|gcc_s|ssl|crypto|z)\.so' |
  while read -r lib; do cp -L "$lib" build-carry/lib-compat/; done

if [ -f "$MODEL" ]; then
  head -c "$PART1_BYTES" "$MODEL" > build-carry/model.part1
  tail -c +"$((PART1_BYTES + 1))" "$MODEL" > build-carry/model.part2
else
  echo "no default model at $MODEL (make model): the device check will skip the default-model equality" >&2
fi
du -sh build-carry/* | sed 's/^/  /'
echo "tree that travels: $(git ls-files -co --exclude-standard -z | du -cb --files0-from=- | tail -1 | cut -f1) bytes"
