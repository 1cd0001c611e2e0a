"""The accuracy cost of each KV cache type: KL divergence of next-token distributions against the
f16 cache on the default model, over several prompts, one token at a time (so every position reads
its history back from the cache). Bounds are loose multiples of what was measured; the figures print."""
import subprocess

import numpy as np
import pytest

from test_forward import PROMPTS  # noqa: F401  (same prompts as the llama.cpp comparison)

N_VOCAB = 49152
BOUNDS = {"bf16": 0.01, "fp8": 0.1, "int8": 0.03}


def tokenize(ridge_bin, model, text):
    out = subprocess.run([ridge_bin, "tokenize", "-m", model, "--ids-only", "-p", text], check=True, capture_output=True, text=True)
    return [int(x) for x in out.stdout.replace(",", " ").split()]


def logits(ridge_bin, model, ids, dtype, tmp_path):
    path = tmp_path / f"{dtype}.bin"
    subprocess.run([ridge_bin, "logits", "-m", model, "--tokens", ",".join(map(str, ids)), "-o", str(path), "--batch", "1",
                    "--kv-dtype", dtype], check=True, capture_output=True)
    return np.fromfile(path, dtype=np.float32).reshape(len(ids), -1)


def kl(p_logits, q_logits):
    p = np.exp(p_logits - p_logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    lq = q_logits - q_logits.max(axis=1, keepdims=True)
    lq -= np.log(np.exp(lq).sum(axis=1, keepdims=True))
    lp = np.log(np.maximum(p, 1e-30))
    return (p * (lp - lq)).sum(axis=1)


@pytest.fixture(scope="module")
def reference(ridge_bin, default_model, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kv")
    ids = [tokenize(ridge_bin, default_model, p) for p in PROMPTS[:3]]
    return ids, [logits(ridge_bin, default_model, i, "f16", tmp) for i in ids]


@pytest.mark.parametrize("dtype", ["bf16", "fp8", "int8"])
def test_kv_dtype_kl_against_f16(ridge_bin, default_model, tmp_path, reference, dtype):
    ids, ref = reference
    kls, top1 = [], []
    for i, r in zip(ids, ref):
        got = logits(ridge_bin, default_model, i, dtype, tmp_path)
        kls.append(kl(r, got))
        top1.append(r.argmax(axis=1) == got.argmax(axis=1))
    kls, top1 = np.concatenate(kls), np.concatenate(top1)
    print(f"\nkv {dtype}: positions={len(kls)} mean_kl={kls.mean():.6f} max_kl={kls.max():.6f} top1={top1.mean():.4f}")
    assert kls.mean() < BOUNDS[dtype]
    assert top1.mean() > 0.9
