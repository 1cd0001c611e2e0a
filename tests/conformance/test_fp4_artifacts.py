"""ridge's MXFP4 and NVFP4 artifacts of the default model, run by ridge and by llama.cpp (which has
both GGUF types and applies NVFP4's per-tensor "<name>.scale" factors): the two engines' next-token
distributions on the same file agree (mean KL below test_forward.py's 0.01 nats; top-1 disagreements
only at near-ties, where llama.cpp's own margin is under half a logit: the 4-bit artifacts of a
135M model have flatter distributions, so more of them, about 4% of positions), and the NVFP4 file
carries a factor for every NVFP4 matrix.
"""
import subprocess

import gguf
import numpy as np
import pytest

from llama_oracle import LlamaOracle
from test_forward import ORACLE_THREADS, PROMPTS, log_softmax, ridge_logits, tokenize

ARTIFACTS = {
    "NVFP4": ["--type", "NVFP4"],
    "MXFP4": ["--type", "MXFP4_MOE", "--tensor-type", r"blk\.=mxfp4"],
}


@pytest.fixture(scope="module", params=list(ARTIFACTS))
def artifact(request, ridge_bin, default_model, tmp_path_factory):
    path = tmp_path_factory.mktemp("fp4") / f"{request.param}.gguf"
    subprocess.run([ridge_bin, "quantize", str(default_model), str(path), *ARTIFACTS[request.param], "-q", "-t", "2"],
                   check=True, capture_output=True)
    return request.param, str(path)


def test_every_nvfp4_matrix_has_its_factor(artifact):
    kind, path = artifact
    tensors = {t.name: t for t in gguf.GGUFReader(path).tensors}
    qtype = gguf.GGMLQuantizationType[kind]
    quantized = [n for n, t in tensors.items() if t.tensor_type == qtype]
    assert len(quantized) >= 7 * 30  # every layer matrix of the 30-layer model
    for name in quantized:
        scale = tensors.get(name.removesuffix(".weight") + ".scale")
        if kind == "MXFP4":
            assert scale is None, name
            continue
        assert scale is not None and scale.tensor_type == gguf.GGMLQuantizationType.F32, name
        factor = float(np.asarray(scale.data).reshape(-1)[0])
        assert 0 < factor < 1e-2, (name, factor)  # amax / (6 * 448) of weights below 1


def test_llama_cpp_and_ridge_agree_on_the_artifact(ridge_bin, artifact):
    kind, path = artifact
    oracle = LlamaOracle(path, flash_attn=False, n_threads=ORACLE_THREADS)
    try:
        kls, agree, positions, margins = [], 0, 0, []
        for text in PROMPTS:
            ids = tokenize(oracle, text)
            raw = oracle.logits(ids)
            ref = log_softmax(raw)
            got = log_softmax(ridge_logits(ridge_bin, path, ids))
            kls.extend((np.exp(ref) * (ref - got)).sum(axis=1).tolist())
            agree += int((ref.argmax(axis=1) == got.argmax(axis=1)).sum())
            positions += len(ids)
            for i in np.flatnonzero(ref.argmax(axis=1) != got.argmax(axis=1)):
                margins.append(float(raw[i].max() - raw[i][got[i].argmax()]))
    finally:
        oracle.close()
    mean_kl, top1 = float(np.mean(kls)), agree / positions
    widest = max(margins, default=0.0)
    print(f"\n{kind}: positions={positions} mean_kl={mean_kl:.6f} top1={top1:.4f} widest disagreement {widest:.3f} logits")
    assert mean_kl < 0.01
    assert top1 >= 0.94
    assert widest < 0.5


def test_llama_cpp_loads_an_untied_nvfp4_file(ridge_bin, tmp_path):
    """With an untied output, token_embd is a lookup llama.cpp applies no factor to: ridge gives it
    Q4_K, so every ".scale" tensor of the file is one llama.cpp reads (it refuses files with others)."""
    import llama_cpp as lc

    f16, out = tmp_path / "f16.gguf", tmp_path / "nvfp4.gguf"
    subprocess.run([ridge_bin, "synth", "--n-embd", "256", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2",
                    "--n-ff", "512", "--n-vocab", "300", "-t", "F16", "-o", str(f16), "-f"], check=True, capture_output=True)
    subprocess.run([ridge_bin, "quantize", str(f16), str(out), "--type", "NVFP4", "-q"], check=True, capture_output=True)
    types = {t.name: t.tensor_type.name for t in gguf.GGUFReader(str(out)).tensors}
    assert types["token_embd.weight"] == "Q4_K" and "output.weight" in types
    llm = lc.Llama(model_path=str(out), n_ctx=64, n_threads=2, verbose=False)
    assert llm.n_vocab() == 300
