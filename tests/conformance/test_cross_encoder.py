"""A cross-encoder (BertForSequenceClassification, one label) through /v1/rerank and /v1/score against
sentence-transformers' CrossEncoder: no reranker ships in a wheel, so transformers writes a small one with
random weights (seeded) beside all-MiniLM-L6-v2's tokenizer files."""
import json
import os
import shutil
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from serve_fixture import running_server  # noqa: E402
from test_embeddings import minilm  # noqa: E402,F401

QUERY = "How do plants make food?"
DOCS = ["Photosynthesis turns light, water and carbon dioxide into sugar.", "The stock market fell sharply on Monday.",
        "Leaves hold chlorophyll, which absorbs light.", "Rust is iron oxide.", "", "Plants plants plants " * 40]


@pytest.fixture(scope="module")
def cross_encoder(minilm, tmp_path_factory):
    import torch
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=512, num_labels=1)
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # larger weights than the init's, so scores spread across (0, 1)
        for p in model.parameters():
            p.mul_(4.0 if p.dim() > 1 else 1.0)
    out = tmp_path_factory.mktemp("cross-encoder")
    model.save_pretrained(out, safe_serialization=True)
    for name in ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(minilm, name), out / name)
    return str(out)


@pytest.fixture(scope="module")
def reference(cross_encoder):
    from sentence_transformers import CrossEncoder
    model = CrossEncoder(cross_encoder, device="cpu", max_length=512)
    return model.predict([(QUERY, d) for d in DOCS])


def test_rerank_and_score_equal_sentence_transformers(ridge_bin, cross_encoder, reference):
    assert reference.std() > 0.01, reference  # a test of something
    with running_server(ridge_bin, cross_encoder, "--embedding-dtype", "f32") as s:
        status, body = s.request("POST", "/v1/rerank", {"query": QUERY, "documents": DOCS})
        assert status == 200, body
        results = json.loads(body)["results"]
        got = np.zeros(len(DOCS))
        for r in results:
            got[r["index"]] = r["relevance_score"]
        print("ridge", np.round(got, 6), "sentence-transformers", np.round(reference, 6))
        assert np.allclose(got, reference, atol=1e-5)
        assert [r["index"] for r in results] == list(np.argsort(-reference, kind="stable"))
        status, body = s.request("POST", "/v1/score", {"text_1": QUERY, "text_2": DOCS[:2]})
        assert status == 200, body
        assert np.allclose([d["score"] for d in json.loads(body)["data"]], reference[:2], atol=1e-5)
        status, body = s.request("POST", "/v1/embeddings", {"input": "x"})
        assert status == 400 and b"cross-encoder" in body
