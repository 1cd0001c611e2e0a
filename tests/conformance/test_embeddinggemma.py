"""EmbeddingGemma-300M (Gemma 3 with bidirectional attention, F32 safetensors, its own
sentence-transformers pipeline: mean pooling, Dense 768->3072->768, Normalize, task prompts) against
sentence-transformers: token ids against Hugging Face tokenizers on tokenizer.json through
`ridge serve`'s /tokenize; vectors through `ridge embed` in f32, bf16 and q8_0, with a task prompt
and truncated; the ranking of a small retrieval set with the query / document prompts; the server's
/v1/embeddings against `ridge embed`.

sentence-transformers is slow on this model (one text a batch, nothing padded: about ten seconds
for the 60 texts below on two threads), so the vectors are ~60 texts, short and medium, with a few of 600-1000 tokens that reach
past the sliding layers' window (transformers reads sliding_window 512 as |i - j| < 257), each
computed once per module."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import embedding_corpus  # noqa: E402
import st_reference  # noqa: E402
from serve_fixture import running_server  # noqa: E402
from test_embeddings import cosines, ridge_embed  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EDGE_TEXTS = ["Hello world", " ", "  two  spaces  ", "\n\nnew\nlines\n", "\ttabs\t\t", "<bos>inline<eos> specials",
              "<start_of_turn>user\nhi<end_of_turn>", "<b>bold</b> and <unused7>", "▁literal▁marks▁▁", "emoji 🤗🦙",
              "ﬁ ligature, e\u0301, \u200b zero width", "日本語のテキスト", "x" * 500, "\x00nul", "a" + " " * 40 + "b"]


def st_vectors(model, texts, **kwargs):
    """sentence-transformers' vectors of `texts` (st_reference.encode), one text a batch: a batch pads every text
    to its longest, and a batch of 32 that holds one of the long texts below pads 31 others to ~900 tokens (the
    60 texts: 48 s in batches of 32, 9 s one at a time, the same vectors to a cosine of 1 - 1e-7)."""
    return st_reference.encode(model, texts, batch_size=1, **kwargs)


@pytest.fixture(scope="module")
def gemma():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fetch_model.py"), "embeddinggemma-300m"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def hf_tokenizer(gemma):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(os.path.join(gemma, "tokenizer.json"))


@pytest.fixture(scope="module")
def texts(hf_tokenizer):
    """56 short and medium texts (up to 400 tokens) spread over the corpus, then 4 of 600-1000 tokens."""
    corpus = embedding_corpus.texts(600)
    lengths = [len(hf_tokenizer.encode(t).ids) for t in corpus]
    short = [t for t, n in zip(corpus, lengths) if n <= 400]
    long = [t for t, n in zip(corpus, lengths) if 600 <= n <= 1000]
    return short[::len(short) // 56][:56] + long[:4]


@pytest.fixture(scope="module")
def reference(gemma, texts):
    """sentence-transformers' vectors: the texts without a prompt, the first 20 with the query prompt."""
    return st_vectors(gemma, texts, threads=2), st_vectors(gemma, texts[:20], prompt_name="query", threads=2)


@pytest.fixture(scope="module")
def server(ridge_bin, gemma):
    with running_server(ridge_bin, gemma, "--embedding-dtype", "f32") as s:
        yield s


def test_token_ids_equal_tokenizers(server, hf_tokenizer):
    corpus = embedding_corpus.texts(600) + EDGE_TEXTS
    differ = []
    for text in corpus:
        status, body = server.request("POST", "/tokenize", {"prompt": text})
        assert status == 200, body
        ours, want = json.loads(body)["tokens"], hf_tokenizer.encode(text).ids
        if ours != want:
            differ.append((text[:60], ours[:12], want[:12]))
    print(f"token ids: {len(corpus) - len(differ)} of {len(corpus)} texts equal to tokenizers'")
    assert not differ, differ[:5]
    status, body = server.request("POST", "/tokenize", {"prompt": "Hello world"})
    assert json.loads(body)["tokens"] == [2, 9259, 1902, 1]  # <bos> Hello ▁world <eos>


# f32: the file's weights as they are; bf16: weights (and on AMX CPUs activations) rounded to bf16; q8_0: 8-bit weights.
@pytest.mark.parametrize("dtype, bound", [("f32", 0.9999), ("bf16", 0.9998), ("q8_0", 0.999)])
def test_vectors_equal_sentence_transformers(ridge_bin, gemma, texts, reference, tmp_path, dtype, bound):
    ours = ridge_embed(ridge_bin, gemma, texts, tmp_path, "--dtype", dtype)
    assert ours.shape == reference[0].shape == (len(texts), 768)
    cos = cosines(ours, reference[0])
    worst = int(np.argmin(cos))
    print(f"{dtype}: {len(texts)} texts: cosine min {cos.min():.7f} mean {cos.mean():.7f}; worst text {worst}: {texts[worst][:60]!r}")
    assert cos.min() >= bound, (worst, texts[worst][:200])
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)  # the pipeline's Normalize module


def test_query_prompt_equals_sentence_transformers(ridge_bin, gemma, texts, reference, tmp_path):
    ours = ridge_embed(ridge_bin, gemma, texts[:20], tmp_path, "--prompt-name", "query")
    cos = cosines(ours, reference[1])
    print(f"query prompt: 20 texts: cosine min {cos.min():.7f} mean {cos.mean():.7f}")
    assert cos.min() >= 0.9999
    assert cosines(ours, reference[0][:20]).min() < 0.99  # the prompt changed the vectors


def test_truncation_equals_sentence_transformers(ridge_bin, gemma, texts, tmp_path):
    longer = [t for t in texts if len(t) > 400][:4]
    model = st_reference.load(gemma)
    saved = model.max_seq_length
    model.max_seq_length = 48
    try:
        want = st_vectors(gemma, longer, threads=2)
    finally:
        model.max_seq_length = saved
    ours = ridge_embed(ridge_bin, gemma, longer, tmp_path, "--max-seq-length", "48")
    assert cosines(ours, want).min() >= 0.9999
    rows = [json.loads(line) for line in (tmp_path / "vectors.jsonl").read_text().splitlines()]
    assert all(r["n_tokens"] == 48 for r in rows)  # <bos>, 46 pieces, <eos>


def test_retrieval_ranking_equals_sentence_transformers(ridge_bin, gemma, tmp_path):
    r = embedding_corpus.retrieval_set()
    queries, passages = r["queries"], r["passages"]
    ours_q = ridge_embed(ridge_bin, gemma, queries, tmp_path, "--prompt-name", "query")
    ours_p = ridge_embed(ridge_bin, gemma, passages, tmp_path, "--prompt-name", "document")
    ref_q = st_reference.encode(gemma, queries, prompt_name="query", threads=2)  # short texts: batches pad little
    ref_p = st_reference.encode(gemma, passages, prompt_name="document", threads=2)
    ours_rank = np.argsort(-(ours_q @ ours_p.T), axis=1)
    ref_rank = np.argsort(-(ref_q @ ref_p.T), axis=1)
    assert (ours_rank[:, :5] == ref_rank[:, :5]).all()
    assert (ours_rank[:, 0] == np.array(r["relevant"])).mean() >= 0.75


def test_server_embeddings_equal_ridge_embed(server, ridge_bin, gemma, tmp_path):
    texts = ["The cat sits on the mat.", "Quantum chromodynamics", "naïve café"]
    status, body = server.request("POST", "/v1/embeddings", {"input": texts, "model": os.path.basename(gemma)})
    assert status == 200, body
    got = np.array([d["embedding"] for d in json.loads(body)["data"]], dtype=np.float32)
    assert np.array_equal(got, ridge_embed(ridge_bin, gemma, texts, tmp_path))
    status, body = server.request("POST", "/v1/embeddings", {"input": "a", "prompt_name": "query"})
    assert status == 200, body
    got = np.array(json.loads(body)["data"][0]["embedding"], dtype=np.float32)
    assert np.array_equal(got, ridge_embed(ridge_bin, gemma, ["a"], tmp_path, "--prompt-name", "query")[0])
    # /v1/rerank: cosines of the query under the query prompt and the documents under the document one.
    status, body = server.request("POST", "/v1/rerank", {"query": texts[0], "documents": texts[1:]})
    assert status == 200, body
    q = ridge_embed(ridge_bin, gemma, texts[:1], tmp_path, "--prompt-name", "query")[0]
    want = ridge_embed(ridge_bin, gemma, texts[1:], tmp_path, "--prompt-name", "document") @ q
    for r in json.loads(body)["results"]:
        assert abs(r["relevance_score"] - want[r["index"]]) < 1e-5
