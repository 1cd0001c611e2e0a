#!/usr/bin/env python3
"""What re-encoding at load costs (Q4_K as Q4_1, Q5_0 as Q8_0; model/pack_weights.h), on a Q4_K_M of
the default model made with llama.cpp's quantizer (written to $RIDGE_HOME/synth/ when missing; a
Q5_0/Q8_0/Q4_K/Q6_K mix, since 576 columns are not whole super-blocks). Mean KL divergence of the
next-token distributions and top-1 agreement at every position of the conformance prompts:
ridge (re-encoded) and ridge with RIDGE_PACK=0 (the file's types) against llama.cpp, and the two ridge
runs against each other, with int8 and with f32 activations (RIDGE_F32_ACTIVATIONS=1).

    python3 bench/recode_accuracy.py [--ridge build/ridge]
"""
import argparse
import ctypes
import os
import sys

import llama_cpp as lc
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "conformance"))
from activation_accuracy import log_softmax, logits  # noqa: E402
from llama_oracle import LlamaOracle  # noqa: E402
from test_forward import PROMPTS, tokenize  # noqa: E402


def quantized_model():
    home = os.environ.get("RIDGE_HOME", os.path.expanduser("~/.cache/ridge"))
    path = os.path.join(home, "synth", "SmolLM2-135M-Instruct.Q4_K_M.gguf")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        params = lc.llama_model_quantize_default_params()
        params.ftype = lc.LLAMA_FTYPE_MOSTLY_Q4_K_M
        params.allow_requantize = True
        source = os.path.join(home, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
        if lc.llama_model_quantize(source.encode(), path.encode(), ctypes.byref(params)) != 0:
            sys.exit(f"llama.cpp could not quantize {source}")
    return path


def compare(name, ref_rows, got_rows):
    kls, agree = [], []
    for ref, got in zip(ref_rows, got_rows):
        ref, got = log_softmax(ref), log_softmax(got)
        kls += (np.exp(ref) * (ref - got)).sum(axis=1).tolist()
        agree += (ref.argmax(axis=1) == got.argmax(axis=1)).tolist()
    print(f"{name:<52} positions {len(kls)}  mean KL {np.mean(kls):.6f}  top-1 {np.mean(agree):.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ridge", default="build/ridge")
    args = parser.parse_args()
    model = quantized_model()
    oracle = LlamaOracle(model, flash_attn=False)
    ids = [tokenize(oracle, text) for text in PROMPTS]
    run = lambda env: [logits(args.ridge, model, i, env) for i in ids]  # noqa: E731
    theirs = [oracle.logits(i) for i in ids]
    recoded, stored = run({}), run({"RIDGE_PACK": "0"})
    compare("ridge re-encoded vs llama.cpp", theirs, recoded)
    compare("ridge file types (RIDGE_PACK=0) vs llama.cpp", theirs, stored)
    compare("re-encoded vs file types", stored, recoded)
    f32 = {"RIDGE_F32_ACTIVATIONS": "1"}
    compare("re-encoded vs file types, both f32 activations", run({**f32, "RIDGE_PACK": "0"}), run(f32))


if __name__ == "__main__":
    main()
