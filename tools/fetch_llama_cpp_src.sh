#!/usr/bin/env bash
# llama.cpp's source tree (from the llama-cpp-python 0.3.36 source distribution, as
# ../shared/BENCHMARKING.md says) into $RIDGE_HOME/llama.cpp/src: its converter
# (convert_hf_to_gguf.py, for the GGUF side of the embedding tests), its vocabulary test files, and
# what tools/build_llama_cpp.sh builds. Test and benchmark only; prints the directory.
set -euo pipefail
HOME_DIR=${RIDGE_HOME:-$HOME/.cache/ridge}
SRC=$HOME_DIR/llama.cpp/src
if [ ! -f "$SRC/CMakeLists.txt" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --disable-pip-version-check -q --no-deps --no-binary :all: "llama-cpp-python==0.3.36" -d "$tmp"
  tar -xzf "$tmp"/llama_cpp_python-*.tar.gz -C "$tmp"
  mkdir -p "$(dirname "$SRC")"
  rm -rf "$SRC" && mv "$tmp"/llama_cpp_python-*/vendor/llama.cpp "$SRC"
fi
echo "$SRC"
