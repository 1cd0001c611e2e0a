#!/usr/bin/env bash
# Test-only Python dependencies: llama.cpp (through llama-cpp-python) as the tokenizer and logits
# oracle, the gguf package as the dequantization reference. Never needed at run time.
set -euo pipefail
PY=${PYTHON:-python3}
need=()
$PY -c "import llama_cpp" 2>/dev/null || need+=("llama-cpp-python==0.3.36")
$PY -c "import gguf" 2>/dev/null || need+=("gguf==0.19.0")
$PY -c "import numpy" 2>/dev/null || need+=("numpy")
$PY -c "import pytest" 2>/dev/null || need+=("pytest")
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test dependencies: ${need[*]} (llama-cpp-python builds llama.cpp from source: several minutes)" >&2
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
    $PY -m pip install --disable-pip-version-check -q "${need[@]}"
fi
