"""The kernels a prompt's positions take (the bf16 tile GEMM on AMX-BF16 CPUs) against ridge's f32
reference (RIDGE_F32_ACTIVATIONS=1: weights dequantized, f32 activations): at least as close as the
int8 kernels (RIDGE_AMX_BF16=0), which generated positions take, on the default model, at every
position of the conformance prompts and of their concatenation (over 64 tokens, so the prompt path
is used). Where the CPU has no AMX-BF16, both runs take the int8 kernels and must agree exactly.
"""
import os
import subprocess
import tempfile

import numpy as np
import pytest

pytest.importorskip("llama_cpp")
from llama_oracle import LlamaOracle  # noqa: E402
from test_forward import PROMPTS, log_softmax, tokenize  # noqa: E402


def logits(ridge_bin, model, ids, env):
    with tempfile.NamedTemporaryFile(suffix=".bin") as out:
        subprocess.run([ridge_bin, "logits", "-m", model, "--tokens", ",".join(map(str, ids)), "-o", out.name],
                       check=True, capture_output=True, env={**os.environ, **env})
        return np.fromfile(out.name, dtype=np.float32).reshape(len(ids), -1).astype(np.float64)


def amx_bf16():
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return "amx_bf16" in flags and "avx512_bf16" in flags


def test_prompt_kernels_are_at_least_as_close_to_f32_as_int8(ridge_bin, default_model):
    oracle = LlamaOracle(default_model)
    kl = {"int8": [], "prompt": []}
    same = True
    try:
        for text in list(PROMPTS) + [" ".join(PROMPTS)]:
            ids = tokenize(oracle, text)
            ref = log_softmax(logits(ridge_bin, default_model, ids, {"RIDGE_F32_ACTIVATIONS": "1"}))
            int8 = logits(ridge_bin, default_model, ids, {"RIDGE_AMX_BF16": "0"})
            prompt = logits(ridge_bin, default_model, ids, {})
            same = same and np.array_equal(int8, prompt)
            for name, got in (("int8", int8), ("prompt", prompt)):
                lp = log_softmax(got)
                kl[name].extend((np.exp(ref) * (ref - lp)).sum(axis=1).tolist())
    finally:
        oracle.close()
    int8_kl, prompt_kl = float(np.mean(kl["int8"])), float(np.mean(kl["prompt"]))
    print(f"\nmean KL from f32: int8 {int8_kl:.6f}, prompt path {prompt_kl:.6f} over {len(kl['int8'])} positions")
    if not amx_bf16():
        assert same, "without AMX-BF16 a prompt takes the int8 kernels"
        return
    assert not same, "on an AMX-BF16 CPU a long prompt takes the bf16 tile GEMM"
    assert prompt_kl <= int8_kl
