"""Embeddings against sentence-transformers: all-MiniLM-L6-v2 (real BERT weights, F32 safetensors,
its own sentence-transformers pipeline) through `ridge embed` and through `ridge serve`'s
/v1/embeddings (driven by the official openai client), /v1/rerank and /v1/score; the ranking of a
small retrieval set; hostile requests."""
import base64
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def minilm():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fetch_model.py"), "all-minilm-l6-v2"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def retrieval():
    r = embedding_corpus.retrieval_set()
    return r["queries"], r["passages"], r["relevant"]


def ridge_embed(ridge_bin, model, texts, tmp_path, *args):
    src = tmp_path / "texts.jsonl"
    dst = tmp_path / "vectors.jsonl"
    src.write_text("".join(json.dumps(t) + "\n" for t in texts))
    if "--dtype" not in args:
        args = (*args, "--dtype", "f32")  # the file's values, as the servers below run them
    subprocess.run([ridge_bin, "embed", "-m", model, "-i", str(src), "-o", str(dst), "-t", "2", *args],
                   check=True, capture_output=True, text=True)
    rows = [json.loads(line) for line in dst.read_text().splitlines()]
    assert [r["index"] for r in rows] == list(range(len(texts)))
    return np.array([r["embedding"] for r in rows], dtype=np.float32)


def cosines(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


@pytest.fixture(scope="module")
def corpus_reference(minilm):
    texts = embedding_corpus.texts(600)
    return texts, st_reference.encode(minilm, texts)


# f32: the file's weights as they are; bf16: the AMX tile path (f32 elsewhere); q8_0: 8-bit weights.
@pytest.mark.parametrize("dtype, bound", [("f32", 0.9999), ("bf16", 0.9999), ("q8_0", 0.999)])
def test_vectors_equal_sentence_transformers(ridge_bin, minilm, corpus_reference, tmp_path, dtype, bound):
    texts, ref = corpus_reference
    ours = ridge_embed(ridge_bin, minilm, texts, tmp_path, "--dtype", dtype)
    assert ours.shape == ref.shape
    cos = cosines(ours, ref)
    worst = int(np.argmin(cos))
    print(f"{dtype}: {len(texts)} texts: cosine min {cos.min():.7f} mean {cos.mean():.7f}; worst text {worst}: {texts[worst][:80]!r}")
    assert cos.min() >= bound, (worst, texts[worst][:200])
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)  # the pipeline's Normalize module


@pytest.fixture(scope="module")
def retrieval_reference(minilm):
    """sentence-transformers' vectors of the retrieval set's queries, then its passages."""
    queries, passages, _ = retrieval()
    return st_reference.encode(minilm, queries + passages)


def test_retrieval_ranking_equals_sentence_transformers(ridge_bin, minilm, retrieval_reference, tmp_path):
    queries, passages, relevant = retrieval()
    ours = ridge_embed(ridge_bin, minilm, queries + passages, tmp_path)
    ref = retrieval_reference.copy()
    for vectors in (ours, ref):
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    q = len(queries)
    ours_rank = np.argsort(-(ours[:q] @ ours[q:].T), axis=1)
    ref_rank = np.argsort(-(ref[:q] @ ref[q:].T), axis=1)
    assert (ours_rank[:, :5] == ref_rank[:, :5]).all()
    assert (ours_rank[:, 0] == np.array(relevant)).mean() >= 0.75  # and the set is a sensible one


@pytest.fixture(scope="module")
def server(ridge_bin, minilm):
    with running_server(ridge_bin, minilm, "--embedding-dtype", "f32") as s:
        yield s


def test_openai_client_embeddings(server, ridge_bin, minilm, tmp_path):
    import openai
    client = openai.OpenAI(base_url=server.api_url, api_key="unused")
    texts = ["The cat sits on the mat.", "Quantum chromodynamics", "naïve café", "x" * 3]
    got = client.embeddings.create(model=os.path.basename(minilm), input=texts)
    assert got.model == os.path.basename(minilm)
    vectors = np.array([d.embedding for d in got.data], dtype=np.float32)
    assert [d.index for d in got.data] == list(range(len(texts)))
    assert got.usage.prompt_tokens > len(texts)
    want = ridge_embed(ridge_bin, minilm, texts, tmp_path)
    assert np.array_equal(vectors, want)  # the server packs texts differently; the bits do not change
    # base64 (the client's default when numpy is present decodes it itself) and Matryoshka dimensions
    b64 = client.embeddings.create(model=os.path.basename(minilm), input=texts[0], encoding_format="base64")
    raw = b64.data[0].embedding
    decoded = np.frombuffer(base64.b64decode(raw), dtype="<f4") if isinstance(raw, str) else np.array(raw, dtype=np.float32)
    assert np.array_equal(decoded, want[0])
    short = client.embeddings.create(model=os.path.basename(minilm), input=texts[0], dimensions=64)
    v = np.array(short.data[0].embedding)
    assert v.shape == (64,) and abs(np.linalg.norm(v) - 1.0) < 1e-5
    assert np.allclose(v, want[0][:64] / np.linalg.norm(want[0][:64]), atol=1e-6)
    # token ids in, as OpenAI's API takes them
    ids = server.request("POST", "/tokenize", {"prompt": texts[0]})
    tokens = json.loads(ids[1])["tokens"]
    by_ids = client.embeddings.create(model=os.path.basename(minilm), input=[tokens])
    assert np.allclose(np.array(by_ids.data[0].embedding), want[0], atol=1e-6)


def test_rerank_and_score(server, retrieval_reference):
    queries, passages, relevant = retrieval()
    ref = np.concatenate([retrieval_reference[:1], retrieval_reference[len(queries):]])
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    want = ref[1:] @ ref[0]
    status, body = server.request("POST", "/v1/rerank", {"query": queries[0], "documents": passages, "top_n": 3})
    assert status == 200, body
    reply = json.loads(body)
    assert [r["index"] for r in reply["results"]] == list(np.argsort(-want)[:3])
    assert all(abs(r["relevance_score"] - want[r["index"]]) < 1e-4 for r in reply["results"])
    assert reply["results"][0]["document"]["text"] == passages[reply["results"][0]["index"]]
    status, body = server.request("POST", "/v1/score", {"text_1": queries[0], "text_2": passages[:4]})
    assert status == 200, body
    scores = [d["score"] for d in json.loads(body)["data"]]
    assert np.allclose(scores, want[:4], atol=1e-4)


@pytest.mark.parametrize("body, field", [
    ({"input": ""}, "input"),
    ({"input": []}, "input"),
    ({"input": [[1, 2, 99999999]]}, "input"),
    ({"input": [[-1]]}, "input"),
    ({"input": "a", "dimensions": 100000}, "dimensions"),
    ({"input": "a", "encoding_format": "base64", "dimensions": 385}, "dimensions"),
    ({"input": "a", "encoding_format": "int8"}, "encoding_format"),
    ({"input": "word " * 2000}, "input"),  # past the model's 256 tokens: refused unless "truncate"
    ({"input": {"text": "a"}}, "input"),
    ({"input": "a", "prompt_name": "nonexistent"}, "prompt_name"),
])
def test_hostile_embeddings_requests(server, body, field):
    status, reply = server.request("POST", "/v1/embeddings", body)
    assert status == 400, reply
    assert json.loads(reply)["error"]["param"] == field


def test_long_text_truncated_when_asked_and_many_inputs(server):
    status, reply = server.request("POST", "/v1/embeddings", {"input": "word " * 2000, "truncate": True})
    assert status == 200, reply
    assert json.loads(reply)["usage"]["prompt_tokens"] == 256
    status, reply = server.request("POST", "/v1/embeddings", {"input": [f"text {i}" for i in range(10000)]}, timeout=300)
    assert status == 200
    assert len(json.loads(reply)["data"]) == 10000
    status, reply = server.request("POST", "/v1/embeddings", {"input": ["a"] * 20000})
    assert status == 400  # more inputs than one request may hold


def test_embedding_metrics(server, minilm):
    before = server.metrics()
    key = 'ridge:embedding_inputs_total{model_name="%s"}' % os.path.basename(minilm)
    status, _ = server.request("POST", "/v1/embeddings", {"input": ["one", "two", "three"]})
    assert status == 200
    after = server.metrics()
    assert after[key] - before.get(key, 0.0) == 3
    tokens = 'ridge:embedding_tokens_total{model_name="%s"}' % os.path.basename(minilm)
    assert after[tokens] - before.get(tokens, 0.0) == 9  # [CLS] word [SEP], three times


def test_generation_is_refused_and_models_lists_the_model(server, minilm):
    status, reply = server.request("POST", "/v1/completions", {"prompt": "hello", "max_tokens": 4})
    assert status == 400 and b"embedding model" in reply
    status, reply = server.request("GET", "/v1/models")
    assert status == 200
    data = json.loads(reply)["data"]
    assert data[0]["id"] == os.path.basename(minilm) and data[0]["task"] == "embed"


def test_embedding_model_beside_a_generative_one(ridge_bin, minilm, default_model, tmp_path):
    """--embedding-model: one server answers chat with -m and embeddings with the second model."""
    import openai
    with running_server(ridge_bin, default_model, "--embedding-model", minilm, "--embedding-dtype", "f32") as s:
        client = openai.OpenAI(base_url=s.api_url, api_key="unused")
        ids = [m.id for m in client.models.list().data]
        assert ids == [os.path.basename(default_model)[:-len(".gguf")], os.path.basename(minilm)], ids
        chat = client.chat.completions.create(model=ids[0], max_tokens=4, messages=[{"role": "user", "content": "Hi"}])
        assert chat.choices[0].message.content
        got = client.embeddings.create(model=ids[1], input=["The cat sits on the mat."])
        want = ridge_embed(ridge_bin, minilm, ["The cat sits on the mat."], tmp_path)
        assert np.array_equal(np.array(got.data[0].embedding, dtype=np.float32), want[0])
        status, body = s.request("POST", "/v1/embeddings", {"model": ids[0], "input": "x"})
        assert status == 404, body  # the chat model makes no embeddings
