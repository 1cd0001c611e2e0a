"""Split GGUF files (llama.cpp's gguf-split layout: NAME-0000N-of-0000M.gguf, the first with the metadata,
each with some tensors) load in ridge as the whole file does: the default model split in three shards by
gguf_split.py gives bit-identical logits and greedy tokens in `ridge logits` and `ridge run`, the same answer
from `ridge serve`, the same bytes from `ridge quantize`, the same `ridge plan`, and a split BERT GGUF (all-MiniLM-L6-v2 by llama.cpp's
converter) the same vectors from `ridge embed`; `ridge info` and the served models' memory plan count
every shard; and llama.cpp (llama-cpp-python) loads the same shards with the same logits, so the split files
are valid. Hostile: a missing shard and a shard whose split.count disagrees fail with errors naming the file."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from gguf_split import split_gguf  # noqa: E402
from serve_fixture import running_server  # noqa: E402
from test_embeddings import minilm, ridge_embed  # noqa: E402,F401

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

IDS = [1, 504, 3458, 282, 4649, 314, 2, 28, 330, 1326]


@pytest.fixture(scope="module")
def shards(default_model, tmp_path_factory):
    return split_gguf(default_model, str(tmp_path_factory.mktemp("split")), "smol", parts=3)


def ridge(ridge_bin, *args):
    return subprocess.run([ridge_bin, *args], capture_output=True, text=True, timeout=300)


def logits(ridge_bin, model):
    with tempfile.NamedTemporaryFile(suffix=".bin") as out:
        r = ridge(ridge_bin, "logits", "-m", model, "--tokens", ",".join(map(str, IDS)), "-o", out.name)
        assert r.returncode == 0, r.stderr
        return np.fromfile(out.name, dtype=np.float32).reshape(len(IDS), -1)


def info(ridge_bin, model):
    r = ridge(ridge_bin, "info", "--json", model)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_split_files_follow_the_naming_rule(shards):
    assert [os.path.basename(p) for p in shards] == [f"smol-0000{i}-of-00003.gguf" for i in (1, 2, 3)]


def test_logits_of_the_split_are_the_whole_files_bit_for_bit(ridge_bin, default_model, shards):
    whole = logits(ridge_bin, default_model)
    assert np.array_equal(logits(ridge_bin, shards[0]), whole)
    assert np.array_equal(logits(ridge_bin, shards[2]), whole)  # a later shard names the same model


def test_run_generates_the_same_tokens(ridge_bin, default_model, shards):
    def tokens(model):
        r = ridge(ridge_bin, "run", "-m", model, "--tokens", ",".join(map(str, IDS)), "-n", "12", "--ignore-eos",
                  "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["tokens"]
    assert tokens(shards[0]) == tokens(default_model)


def test_info_counts_every_shard(ridge_bin, default_model, shards):
    whole, split = info(ridge_bin, default_model), info(ridge_bin, shards[0])
    assert split["n_shards"] == 3 and whole["n_shards"] == 1
    assert split["total"] == whole["total"]
    assert split["total"]["n_tensors"] == len(whole["tensors"]) > 100
    assert sorted((t["name"], t["n_bytes"]) for t in split["tensors"]) == \
        sorted((t["name"], t["n_bytes"]) for t in whole["tensors"])
    assert split["file_size"] == sum(os.path.getsize(p) for p in shards)
    assert split["hyperparameters"] == whole["hyperparameters"]


def test_plan_reads_the_split_as_the_whole_file(ridge_bin, default_model, shards):
    def plan(model):
        r = ridge(ridge_bin, "plan", model, "--json")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert json.dumps(out).count(model) == 1  # the model's path, in "source", is all that may differ
        return json.loads(r.stdout.replace(json.dumps(model)[1:-1], "MODEL"))
    assert plan(shards[0]) == plan(default_model)


def test_quantize_reads_the_split_as_the_whole_file(ridge_bin, default_model, shards, tmp_path):
    outs = [tmp_path / "split-q8.gguf", tmp_path / "whole-q8.gguf"]
    for model, out in zip((shards[0], default_model), outs):
        r = ridge(ridge_bin, "quantize", model, str(out), "--type", "Q8_0")
        assert r.returncode == 0, r.stderr
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert info(ridge_bin, str(outs[0]))["n_shards"] == 1  # no split keys carried into a whole file


def test_serve_answers_from_the_split(ridge_bin, default_model, shards):
    body = {"messages": [{"role": "user", "content": "Name three colours."}], "max_tokens": 12, "temperature": 0}
    answers = []
    for model in (shards[0], default_model):
        with running_server(ridge_bin, model, ctx_size=256) as s:
            status, out = s.request("POST", "/v1/chat/completions", body)
            assert status == 200, out
            answers.append(json.loads(out)["choices"][0]["message"]["content"])
    assert answers[0] == answers[1] and answers[0]


def test_served_memory_plan_counts_every_shard(ridge_bin, shards):
    # 80 MiB holds the first shard and the KV pool, not the whole model: the plan must refuse it.
    kv = 8 << 20
    with running_server(ridge_bin, None, "--models-dir", os.path.dirname(shards[0]), "--models-memory", "80MiB",
                        "--kv-memory", "8MiB", ctx_size=256) as s:
        status, out = s.request("GET", "/v1/models")
        assert [m["id"] for m in json.loads(out)["data"]] == ["smol-00001-of-00003"]  # one model, not three
        status, out = s.request("POST", "/models/load", {"model": "smol-00001-of-00003"})
        error = json.loads(out)["error"]
        assert status == 503 and error["code"] == "model_exceeds_memory_budget", out
        assert f"({sum(os.path.getsize(p) for p in shards) + kv} bytes" in error["message"], error["message"]
    assert os.path.getsize(shards[0]) + kv < 80 << 20


def test_embed_reads_a_split_bert_gguf(ridge_bin, minilm, tmp_path):
    src = subprocess.run([os.path.join(ROOT, "tools", "fetch_llama_cpp_src.sh")], check=True, capture_output=True,
                         text=True).stdout.strip()
    whole = str(tmp_path / "minilm.gguf")
    subprocess.run([sys.executable, os.path.join(src, "convert_hf_to_gguf.py"), minilm, "--outfile", whole,
                    "--outtype", "f16"], check=True, capture_output=True)
    os.mkdir(tmp_path / "split")
    first = split_gguf(whole, str(tmp_path / "split"), "minilm", parts=2)[0]
    texts = ["hello world", "Split files load as one.", "ünïcödé ✓"]
    assert np.array_equal(ridge_embed(ridge_bin, first, texts, tmp_path), ridge_embed(ridge_bin, whole, texts, tmp_path))


def test_llama_cpp_loads_the_same_split(default_model, shards):
    from llama_cpp import Llama

    def last_logits(path):
        llm = Llama(model_path=path, n_ctx=64, n_threads=2, logits_all=True, verbose=False)
        llm.eval(IDS)
        out = np.array(llm.scores[:len(IDS)], dtype=np.float32)
        llm.close()
        return out
    split, whole = last_logits(shards[0]), last_logits(default_model)
    assert split.shape == whole.shape == (len(IDS), 49152)
    assert np.abs(split - whole).max() < 1e-4


def copy_shards(shards, folder, skip=None):
    os.makedirs(folder, exist_ok=True)
    out = [shutil.copy(p, folder) if i != skip else os.path.join(folder, os.path.basename(p))
           for i, p in enumerate(shards)]
    return out


def refused(ridge_bin, model, named):
    for args in (["info", model], ["logits", "-m", model, "--tokens", "1,2", "-o", os.devnull]):
        r = ridge(ridge_bin, *args)
        assert r.returncode == 1, (args, r.returncode, r.stderr)  # an error, not a crash
        assert named in r.stderr, r.stderr
    return r.stderr


def test_a_missing_shard_is_named(ridge_bin, shards, tmp_path):
    copy = copy_shards(shards, tmp_path / "missing", skip=1)
    assert "missing" in refused(ridge_bin, copy[0], copy[1])


def test_a_shard_with_another_count_is_refused(ridge_bin, shards, tmp_path):
    copy = copy_shards(shards, tmp_path / "count")
    with open(copy[2], "r+b") as f:
        head = f.read(4096)
        at = head.index(b"split.count") + len(b"split.count")
        assert head[at:at + 4] == (2).to_bytes(4, "little")  # u16, as gguf-split writes it
        f.seek(at + 4)
        f.write((4).to_bytes(2, "little"))
    assert "split.count is 4" in refused(ridge_bin, copy[0], copy[2])
