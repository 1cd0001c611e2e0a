"""`ridge synth` files load and run in both ridge and llama.cpp (llama-cpp-python), in every weight
type, and the two engines compute nearly the same logits on them.
"""
import json
import os
import subprocess

import llama_cpp
import numpy as np
import pytest

SHAPE = ["--n-embd", "256", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "512",
         "--n-vocab", "1000"]
TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q6_K"]
TOKENS = [0, 17, 300, 999, 5, 42, 512, 2]
# Correlation of ridge's and llama.cpp's last-position logits. llama.cpp quantizes activations to
# 8 bits for quantized weights, so those agree less closely than the float types.
MIN_CORRELATION = {"F32": 0.9999, "F16": 0.9999, "BF16": 0.999}


def synth(ridge_bin, path, *args):
    subprocess.run([ridge_bin, "synth", *args, "-o", str(path), "-f"], check=True, capture_output=True)
    assert os.path.exists(path)
    return str(path)


def llama_cpp_logits(path, tokens):
    llm = llama_cpp.Llama(model_path=path, n_ctx=64, n_threads=2, logits_all=True, verbose=False)
    llm.eval(tokens)
    logits = np.array(llm.scores[len(tokens) - 1], dtype=np.float32)
    text_tokens = llm.tokenize(b"hello world, this is a test", add_bos=False)
    del llm
    return logits, text_tokens


def ridge_logits(ridge_bin, path, tokens, out):
    subprocess.run([ridge_bin, "logits", "-m", path, "--tokens", ",".join(map(str, tokens)), "-o", str(out)],
                   check=True, capture_output=True)
    return np.fromfile(out, dtype=np.float32).reshape(len(tokens), -1)[-1]


@pytest.mark.parametrize("type_name", TYPES)
def test_both_engines_load_and_agree(ridge_bin, tmp_path, type_name):
    path = synth(ridge_bin, tmp_path / f"tiny.{type_name}.gguf", *SHAPE, "-t", type_name)
    theirs, text_tokens = llama_cpp_logits(path, TOKENS)
    assert theirs.shape == (1000,) and np.isfinite(theirs).all()
    assert 0 < len(text_tokens) < 20  # merges join letter pairs: fewer tokens than the 27 bytes

    run = subprocess.run([ridge_bin, "run", "-m", path, "--tokens", "1,2,3", "-n", "4", "--json"],
                         check=True, capture_output=True, text=True)
    assert len(json.loads(run.stdout)["tokens"]) == 4

    ours = ridge_logits(ridge_bin, path, TOKENS, tmp_path / "logits.f32")
    assert np.isfinite(ours).all()
    correlation = np.corrcoef(ours, theirs)[0, 1]
    assert correlation >= MIN_CORRELATION.get(type_name, 0.98), f"{type_name}: correlation {correlation:.5f}"


def test_named_shape_loads_in_both(ridge_bin, tmp_path):
    path = synth(ridge_bin, tmp_path / "smollm2.gguf", "smollm2-135m", "-t", "Q4_1")
    theirs, _ = llama_cpp_logits(path, TOKENS[:3])
    assert theirs.shape == (49152,) and np.isfinite(theirs).all()
    run = subprocess.run([ridge_bin, "run", "-m", path, "--tokens", "1,2,3", "-n", "2", "--json"],
                         check=True, capture_output=True, text=True)
    assert len(json.loads(run.stdout)["tokens"]) == 2
