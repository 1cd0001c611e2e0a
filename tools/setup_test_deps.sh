#!/usr/bin/env bash
# Test-only dependencies: llama.cpp (through llama-cpp-python) as the tokenizer and logits oracle,
# the gguf package as the dequantization reference, the official openai and anthropic clients for the
# end-to-end tests of `ridge serve`, pyzmq, msgpack and msgspec for its KV events, sentence-transformers as
# the embedding reference, and headless Chromium (Debian's chromium, driven through websocket-client) for
# its web page. Never needed at run time. Safe to re-run: only what is missing is installed.
set -euo pipefail
PY=${PYTHON:-python3}
# A portable AVX2 build of llama.cpp: its AMX path (picked by a native build on Sapphire Rapids)
# crashes in llama_decode on these virtual machines, and AVX2 is the path most users run.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF"
need=()
$PY -c "import llama_cpp" 2>/dev/null || need+=("llama-cpp-python==0.3.36")
$PY -c "import gguf" 2>/dev/null || need+=("gguf==0.19.0")
$PY -c "import numpy" 2>/dev/null || need+=("numpy")
$PY -c "import pytest" 2>/dev/null || need+=("pytest")
$PY -c "import openai, sys; sys.exit(int(openai.__version__.split('.')[0]) < 1)" 2>/dev/null || need+=("openai==3.57.0")
$PY -c "from websocket import create_connection" 2>/dev/null || need+=("websocket-client==1.9.2")
$PY -c "import jsonschema" 2>/dev/null || need+=("jsonschema==4.26.0")  # validity of structured output
$PY -c "import pydantic" 2>/dev/null || need+=("pydantic")
# A test CA and server certificate for `ridge serve --ssl-certfile` (test_tls).
$PY -c "import cryptography" 2>/dev/null || need+=("cryptography")
# lm-evaluation-harness and the Hugging Face tokenizer it loads (made from the GGUF) for the scoring
# tests (test_completions_scoring, bench/lm_eval_side_by_side.py); lm_eval 0.4.9 needs transformers 4.
$PY -c "import lm_eval, tenacity, transformers, sys; sys.exit(int(transformers.__version__.split('.')[0]) > 4)" 2>/dev/null ||
  need+=("lm_eval==0.4.9" "transformers==4.57.6" "datasets==3.6.0" "huggingface_hub==0.36.2" "tenacity" "aiohttp")
# References for Hugging Face checkpoints (test_tokenizer_json, test_jinja_templates, test_hub_pull): the
# `tokenizers` library for tokenizer.json, jinja2 as transformers renders chat templates, and
# huggingface_hub's own downloader sharing the cache with `ridge pull`. Usually already there with
# transformers and torch above.
$PY -c "import tokenizers" 2>/dev/null || need+=("tokenizers==0.22.2")
$PY -c "import jinja2" 2>/dev/null || need+=("jinja2==3.1.6")
$PY -c "import huggingface_hub" 2>/dev/null || need+=("huggingface_hub==0.36.2")
# Anthropic's official SDK for /v1/messages (test_anthropic_api).
$PY -c "import anthropic" 2>/dev/null || need+=("anthropic==2.17.0")
# A KV-aware router's side of --kv-events-endpoint (test_kv_events): a ZeroMQ subscriber, msgpack, and
# msgspec, the library vLLM encodes its KV events with.
$PY -c "import zmq" 2>/dev/null || need+=("pyzmq==27.1.0")
$PY -c "import msgpack" 2>/dev/null || need+=("msgpack==1.2.4")
$PY -c "import msgspec" 2>/dev/null || need+=("msgspec==0.22.0")
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test dependencies: ${need[*]} (llama-cpp-python builds llama.cpp from source: several minutes)" >&2
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CMAKE_ARGS}" \
    $PY -m pip install --disable-pip-version-check -q "${need[@]}"
fi
# sentence-transformers, the reference for the embedding models (tests/conformance/st_reference.py).
# A separate step with --no-deps: its dependencies (torch, transformers 4.x, tokenizers, scikit-learn,
# scipy, huggingface_hub, numpy, tqdm) come with lm_eval above, and letting pip resolve them here could
# pull another torch build (gigabytes of CUDA wheels) or move transformers past 4.x, which lm_eval 0.4.9
# needs. 5.7.0 is the newest 5.x (6.x wants transformers 5) and, unlike 5.1, needs no Pillow.
if ! $PY -c "import sentence_transformers" 2>/dev/null; then
  echo "installing test dependency: sentence-transformers==5.7.0 (--no-deps)" >&2
  $PY -m pip install --disable-pip-version-check -q --no-deps "sentence-transformers==5.7.0"
  $PY -c "import sentence_transformers" ||
    echo "warning: sentence-transformers does not import; the embedding reference tests will fail" >&2
fi

# Chromium for tests/conformance/test_web_page.py, which is skipped (and says why) if this fails.
if ! command -v chromium >/dev/null 2>&1 && ! dpkg -s chromium >/dev/null 2>&1; then
  echo "installing test dependency: chromium (Debian package)" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium; }; then
    echo "warning: chromium could not be installed; the web page test will be skipped" >&2
  fi
fi

# iproute2 (`ip netns`, veth pairs) for tests/conformance/test_parallel_netns.py, whose MPI ranks run in
# two network namespaces (tools/netns_mpirun.sh, as root); the test fails (and says why) without it.
if ! command -v ip >/dev/null 2>&1 && ! dpkg -s iproute2 >/dev/null 2>&1; then
  echo "installing test dependency: iproute2 (Debian package)" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq iproute2; }; then
    echo "warning: iproute2 could not be installed; the network-namespace MPI test will fail" >&2
  fi
fi

# The JSON-Schema-Test-Suite for tests/conformance/test_json_schema_suite.py: it ships inside the
# jsonschema source distribution (json/tests/draft2020-12/...), so pip fetches it like any package;
# only its test files are kept. The test is skipped (and says why) if this fails.
SUITE_DIR="${RIDGE_HOME:-$HOME/.cache/ridge}/jsonschema-suite"
if [ ! -d "$SUITE_DIR/tests/draft2020-12" ]; then
  echo "fetching test data: JSON-Schema-Test-Suite (from the jsonschema sdist) into $SUITE_DIR" >&2
  suite_tmp=$(mktemp -d)
  if $PY -m pip download --disable-pip-version-check -q --no-deps --no-binary :all: "jsonschema==4.26.0" -d "$suite_tmp" &&
     tar -xzf "$suite_tmp"/jsonschema-*.tar.gz -C "$suite_tmp" && [ -d "$suite_tmp"/jsonschema-4.26.0/json/tests ]; then
    mkdir -p "$SUITE_DIR.partial"
    cp -r "$suite_tmp"/jsonschema-4.26.0/json/. "$SUITE_DIR.partial"/
    rm -rf "$SUITE_DIR" && mv "$SUITE_DIR.partial" "$SUITE_DIR"
  else
    echo "warning: the JSON-Schema-Test-Suite could not be fetched; its conformance test will be skipped" >&2
  fi
  rm -rf "$suite_tmp"
fi

# Chat templates of tool-calling models for tests/conformance/test_tool_templates.py: llama.cpp keeps
# the Jinja templates of many models (models/templates/*.jinja), and its source tree ships inside the
# llama-cpp-python sdist. Only the templates are kept. The test is skipped (and says why) if this fails.
TEMPLATES_DIR="${RIDGE_HOME:-$HOME/.cache/ridge}/chat-templates"
if [ ! -f "$TEMPLATES_DIR/meta-llama-Llama-3.1-8B-Instruct.jinja" ]; then
  echo "fetching test data: chat templates (from the llama-cpp-python sdist) into $TEMPLATES_DIR" >&2
  tmpl_tmp=$(mktemp -d)
  if $PY -m pip download --disable-pip-version-check -q --no-deps --no-binary :all: "llama-cpp-python==0.3.36" -d "$tmpl_tmp" &&
     tar -xzf "$tmpl_tmp"/llama_cpp_python-*.tar.gz -C "$tmpl_tmp" --wildcards '*/vendor/llama.cpp/models/templates/*'; then
    mkdir -p "$TEMPLATES_DIR.partial"
    cp "$tmpl_tmp"/llama_cpp_python-*/vendor/llama.cpp/models/templates/*.jinja "$TEMPLATES_DIR.partial"/
    rm -rf "$TEMPLATES_DIR" && mv "$TEMPLATES_DIR.partial" "$TEMPLATES_DIR"
  else
    echo "warning: the chat templates could not be fetched; their conformance test will be skipped" >&2
  fi
  rm -rf "$tmpl_tmp"
fi

# Qwen2.5-Coder-0.5B-Instruct (a real model with a tool-calling template) for the tool-calling tests;
# they are skipped (and say why) if this fails.
$PY "$(dirname "$0")/fetch_model.py" qwen2.5-coder-0.5b >/dev/null ||
  echo "warning: qwen2.5-coder-0.5b could not be fetched; the tool-calling tests on it will be skipped" >&2

# Gemma 3 270M (architecture gemma3) for its conformance test against llama.cpp; skipped (and says
# why) if this fails.
$PY "$(dirname "$0")/fetch_model.py" gemma3-270m >/dev/null ||
  echo "warning: gemma3-270m could not be fetched; its conformance test will be skipped" >&2

# llama.cpp's source tree, for its converter (the GGUF side of test_embeddings) and vocabulary files
# (test_wordpiece); nothing is built.
"$(dirname "$0")/fetch_llama_cpp_src.sh" >/dev/null ||
  echo "warning: llama.cpp's sources could not be fetched; the GGUF embedding test will fail" >&2

# all-MiniLM-L6-v2 (a sentence-transformers directory) for the embedding tests against
# sentence-transformers (test_embeddings, test_wordpiece), which fail and say so without it.
$PY "$(dirname "$0")/fetch_model.py" all-minilm-l6-v2 >/dev/null ||
  echo "warning: all-minilm-l6-v2 could not be fetched; the embedding tests will fail" >&2

# EmbeddingGemma-300M (a sentence-transformers directory, Gemma 3 with bidirectional attention) for
# its embedding test against sentence-transformers (test_embeddinggemma), which fails and says so without it.
$PY "$(dirname "$0")/fetch_model.py" embeddinggemma-300m >/dev/null ||
  echo "warning: embeddinggemma-300m could not be fetched; the EmbeddingGemma tests will fail" >&2
