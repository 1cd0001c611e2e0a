"""A decoder GGUF as an embedding model (Qwen3-Embedding style: causal, last-token or mean pooling of the final
norm's states, normalised) against llama.cpp's embeddings of the same file (llama-cpp-python, pooling_type set):
`ridge synth` writes the models, since no decoder embedding model ships in a wheel."""
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import embedding_corpus  # noqa: E402
from test_embeddings import cosines, ridge_embed  # noqa: E402

# llama.cpp's pooling types
POOLING = {"mean": 1, "last": 3}


@pytest.fixture(scope="module", params=["qwen3-0.6b", "smollm2-135m"])
def decoder(request, ridge_bin, tmp_path_factory):
    """The shape's architecture, small, with the first 8192 tokens of its byte-level vocabulary: the texts below
    take as many tokens as with the whole one (6899 against 6835 for Qwen3's 151936), and llama.cpp, which
    computes the output layer's logits at every position it is asked embeddings for, runs 15 times faster."""
    path = str(tmp_path_factory.mktemp("decoder") / f"{request.param}.gguf")
    subprocess.run([ridge_bin, "synth", request.param, "--n-embd", "128", "--n-layer", "2", "--n-head", "4", "--n-head-kv",
                    "2", "--n-ff", "256", "--n-vocab", "8192", "--type", "F16", "--std", "0.05", "-o", path, "-f"],
                   check=True, capture_output=True)
    return path


@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_decoder_embeddings_equal_llama_cpp(ridge_bin, decoder, pooling, tmp_path):
    from llama_cpp import Llama
    # One thread: the same vectors to the bit as two, as fast on this small model, and no spinning at ggml's
    # per-operation barriers while the other core runs another test (ctest -j 2).
    model = Llama(model_path=decoder, embedding=True, n_ctx=2048, n_batch=2048, n_ubatch=2048, n_threads=1,
                  n_threads_batch=1, pooling_type=POOLING[pooling], verbose=False)
    # Texts within llama.cpp's context here (the synthetic byte-level vocabulary makes long texts long).
    texts = [t for t in embedding_corpus.texts(200) if t.strip() and len(model.tokenize(t.encode(), add_bos=True)) <= 2000][:60]
    ref = np.array([model.embed(t, normalize=True) for t in texts], dtype=np.float32)
    ours = ridge_embed(ridge_bin, decoder, texts, tmp_path, "--pooling", pooling)
    cos = cosines(ours, ref)
    print(f"{os.path.basename(decoder)} {pooling}: {len(texts)} texts, cosine min {cos.min():.7f}")
    assert cos.min() >= 0.9999, texts[int(np.argmin(cos))]


def test_decoder_without_pooling_is_refused_with_the_fix(ridge_bin, decoder):
    out = subprocess.run([ridge_bin, "embed", "-m", decoder, "-p", "hello"], capture_output=True, text=True)
    assert out.returncode == 1 and "--pooling last" in out.stderr, out.stderr
