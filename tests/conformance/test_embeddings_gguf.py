"""all-MiniLM-L6-v2 as a GGUF made by llama.cpp's own converter (convert_hf_to_gguf.py from the llama.cpp
sources, tools/fetch_llama_cpp_src.sh): ridge loads it, and its vectors agree with llama.cpp's on the same
file (llama-cpp-python, mean pooling, normalised) and with ridge's from the Hugging Face directory."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import embedding_corpus  # noqa: E402
from test_embeddings import cosines, minilm, ridge_embed  # noqa: E402,F401

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def converted(minilm, tmp_path_factory):
    src = subprocess.run([os.path.join(ROOT, "tools", "fetch_llama_cpp_src.sh")], check=True, capture_output=True,
                         text=True).stdout.strip()
    out = {}
    for outtype in ("f32", "q8_0"):
        path = str(tmp_path_factory.mktemp("gguf") / f"all-MiniLM-L6-v2-{outtype}.gguf")
        subprocess.run([sys.executable, os.path.join(src, "convert_hf_to_gguf.py"), minilm, "--outfile", path,
                        "--outtype", outtype], check=True, capture_output=True)
        out[outtype] = path
    return out


def llama_cpp_model(gguf):
    """One thread: the same vectors to the bit as two, as fast on this small model, and no spinning at ggml's
    per-operation barriers while the other core runs another test (ctest -j 2)."""
    from llama_cpp import Llama
    return Llama(model_path=gguf, embedding=True, n_ctx=512, n_batch=512, n_ubatch=512, n_threads=1, n_threads_batch=1,
                 pooling_type=1, verbose=False)


def llama_cpp_vectors(gguf, texts):
    model = llama_cpp_model(gguf)
    return np.array([model.embed(t, normalize=True) for t in texts], dtype=np.float32)


@pytest.fixture(scope="module")
def texts(minilm, converted):
    """Corpus texts under the directory's 256-token max_seq_length (so no side truncates) that llama.cpp's
    WordPiece splits as Hugging Face's does (it leaves Hangul syllables whole where tokenizers' NFD splits
    them into jamo; ridge follows tokenizers, test_wordpiece.py)."""
    from tokenizers import Tokenizer
    hf = Tokenizer.from_file(os.path.join(minilm, "tokenizer.json"))
    hf.no_truncation()
    hf.no_padding()  # all-MiniLM-L6-v2's tokenizer.json pads to 128
    model = llama_cpp_model(converted["f32"])
    same, differ = [], 0
    for t in embedding_corpus.texts(600):
        ids = hf.encode(t).ids
        if len(ids) > 256:
            continue
        if model.tokenize(t.encode(), add_bos=True, special=False) == ids:
            same.append(t)
        else:
            differ += 1
    print(f"llama.cpp tokenizes {len(same)} texts as tokenizers does, {differ} otherwise")
    assert len(same) >= 300
    return same[:200]


def test_gguf_vectors_equal_llama_cpp_and_the_directory(ridge_bin, minilm, converted, texts, tmp_path):
    from_gguf = ridge_embed(ridge_bin, converted["f32"], texts, tmp_path)
    from_dir = ridge_embed(ridge_bin, minilm, texts, tmp_path)
    llama = llama_cpp_vectors(converted["f32"], texts)
    vs_llama, vs_dir = cosines(from_gguf, llama), cosines(from_gguf, from_dir)
    print(f"{len(texts)} texts: cosine to llama.cpp min {vs_llama.min():.7f}, to the directory min {vs_dir.min():.7f}")
    assert vs_llama.min() >= 0.9999, texts[int(np.argmin(vs_llama))]
    assert vs_dir.min() >= 0.99999, texts[int(np.argmin(vs_dir))]  # same weights, same arithmetic


def test_q8_0_gguf_against_sentence_transformers(ridge_bin, minilm, converted, texts, tmp_path):
    """The Q8_0 file's vectors (int8 products in ridge and in llama.cpp alike) against the f32 reference."""
    import st_reference
    some = texts[::5]
    ref = st_reference.encode(minilm, some)
    ours, llama = cosines(ridge_embed(ridge_bin, converted["q8_0"], some, tmp_path), ref), cosines(
        llama_cpp_vectors(converted["q8_0"], some), ref)
    print(f"Q8_0 GGUF, {len(some)} texts: cosine to sentence-transformers min {ours.min():.5f} (llama.cpp {llama.min():.5f}), "
          f"mean {ours.mean():.6f} ({llama.mean():.6f})")
    assert ours.min() >= 0.999  # the bound the f32 directory meets at --dtype q8_0


def test_ridge_info_names_the_gguf_an_embedding_model(ridge_bin, converted, tmp_path):
    out = subprocess.run([ridge_bin, "embed", "-m", converted["f32"], "-p", "hello", "--json-summary"], check=True,
                         capture_output=True, text=True)
    summary = json.loads([line for line in out.stderr.splitlines() if line.startswith("{")][-1])
    assert summary["texts"] == 1 and summary["model"] == "all-MiniLM-L6-v2-f32"
