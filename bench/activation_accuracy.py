#!/usr/bin/env python3
"""What rounding activations costs: KL divergence of ridge's next-token distributions from ridge's own
with f32 activations (RIDGE_F32_ACTIVATIONS=1: every weight dequantized a row at a time and dotted in
f32), at every position of the conformance prompts and of their concatenation, on the default model;
plus top-1 agreement. Two rows: the int8 kernels (RIDGE_AMX_BF16=0; generated positions always take
them), and what prompts get (the bf16 tile GEMM on AMX-BF16 CPUs, for prompts of 64 tokens or more).

    python3 bench/activation_accuracy.py [--ridge build/ridge] [-m MODEL]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "conformance"))
from llama_oracle import LlamaOracle  # noqa: E402  (the tokenizer of the prompts)
from test_forward import PROMPTS, tokenize  # noqa: E402


def logits(ridge, model, ids, env):
    with tempfile.NamedTemporaryFile(suffix=".bin") as out:
        subprocess.run([ridge, "logits", "-m", model, "--tokens", ",".join(map(str, ids)), "-o", out.name],
                       check=True, capture_output=True, env={**os.environ, **env})
        return np.fromfile(out.name, dtype=np.float32).reshape(len(ids), -1).astype(np.float64)


def log_softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ridge", default="build/ridge")
    parser.add_argument("-m", "--model", default=os.path.join(os.environ.get("RIDGE_HOME", os.path.expanduser("~/.cache/ridge")),
                                                              "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    args = parser.parse_args()
    oracle = LlamaOracle(args.model)
    modes = {"int8": {"RIDGE_AMX_BF16": "0"}, "prompt": {}}
    kls = {m: [] for m in modes}
    agree = {m: 0 for m in modes}
    n = 0
    try:
        for text in list(PROMPTS) + [" ".join(PROMPTS)]:
            ids = tokenize(oracle, text)
            ref = log_softmax(logits(args.ridge, args.model, ids, {"RIDGE_F32_ACTIVATIONS": "1"}))
            for mode, env in modes.items():
                got = log_softmax(logits(args.ridge, args.model, ids, env))
                kls[mode].extend((np.exp(ref) * (ref - got)).sum(axis=1).tolist())
                agree[mode] += int((ref.argmax(axis=1) == got.argmax(axis=1)).sum())
            n += len(ids)
    finally:
        oracle.close()
    for mode in modes:
        print(f"{mode:6s} positions={n} mean_kl={np.mean(kls[mode]):.6f} max_kl={max(kls[mode]):.6f} "
              f"top1={agree[mode] / n:.4f}")


if __name__ == "__main__":
    main()
