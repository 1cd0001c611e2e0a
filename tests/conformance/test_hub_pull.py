"""`ridge pull` and `hf://` model names against a local server that speaks the Hub's protocol (fake_hub.py),
serving real model files: a GGUF repository with two quants and a split file (split by hand, loaded by
llama.cpp), a sentence-transformers safetensors repository, a private repository. Checked: the Hugging Face
cache layout that huggingface_hub itself reads and writes (its hf_hub_download, 0.36, against the same server
and cache), resume with a Range request after a cut connection, a corrupted byte, 401 / 404 / offline, hostile
names, and the pulled models running in ridge."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
from fake_hub import FakeHub, HubFile  # noqa: E402
from fetch_model import models_dir, sha256_of as sha256  # noqa: E402
from gguf_split import split_gguf  # noqa: E402
from serve_fixture import running_server  # noqa: E402

MODELS = pathlib.Path(models_dir())
SMOL = MODELS / "SmolLM2-135M-Instruct.Q4_1.gguf"
VOCAB = MODELS / "DeepSeek-R1-Distill-Qwen-7B.vocab.gguf"
MINILM = MODELS / "all-MiniLM-L6-v2"
GGUF_REPO = "ridge-test/SmolLM2-135M-Instruct-GGUF"
ST_REPO = "sentence-transformers/all-MiniLM-L6-v2"
VOCAB_REPO = "ridge-test/DeepSeek-R1-Vocab-GGUF"
PRIVATE_REPO = "ridge-test/Private-GGUF"
EVIL_REPO = "ridge-test/Evil-GGUF"
TOKEN = "hf_ridge_test_token"
Q41 = "SmolLM2-135M-Instruct-Q4_1.gguf"
Q80 = "SmolLM2-135M-Instruct-Q8_0.gguf"
SPLIT = ["split/SmolLM2-135M-Instruct-Q4_1-00001-of-00002.gguf", "split/SmolLM2-135M-Instruct-Q4_1-00002-of-00002.gguf"]
# TRANSFORMERS_OFFLINE counts as HF_HUB_OFFLINE for huggingface_hub (st_reference.py sets both in-process).
HF_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
           "HF_TOKEN_PATH")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    assert SMOL.exists() and VOCAB.exists(), f"models missing in {MODELS}: run make model"
    work = tmp_path_factory.mktemp("hub-files")
    shards = split_gguf(str(SMOL), str(work), "SmolLM2-135M-Instruct-Q4_1")
    with open(SMOL, "rb") as f:
        at = f.read(1 << 16).index(b"Smollm2 135M")  # the second quant: the model's name changed in its metadata
    h = FakeHub()
    h.add_repo(GGUF_REPO, {"README.md": HubFile(data=b"# SmolLM2-135M-Instruct GGUF\n"), Q41: HubFile(str(SMOL)),
                           Q80: HubFile(str(SMOL), patches={at + 6: b"3"}),
                           SPLIT[0]: HubFile(shards[0]), SPLIT[1]: HubFile(shards[1])})
    if MINILM.is_dir():
        files = {p.relative_to(MINILM).as_posix(): HubFile(str(p)) for p in MINILM.rglob("*") if p.is_file()}
        files["onnx/model.onnx"] = HubFile(data=b"an ONNX export ridge does not fetch")
        h.add_repo(ST_REPO, files)
    h.add_repo(VOCAB_REPO, {"DeepSeek-R1-Vocab-Q8_0.gguf": HubFile(str(VOCAB))})
    h.add_repo(PRIVATE_REPO, {"Private-Q8_0.gguf": HubFile(str(VOCAB))}, token=TOKEN)
    h.add_repo(EVIL_REPO, {"../../../../evil-Q8_0.gguf": HubFile(data=b"GGUF")})  # a hostile Hub's file list
    h.shards = shards
    h.start()
    yield h
    h.stop()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("hf-home")


def hub_env(hub, hf_home, **extra):
    env = {k: v for k, v in os.environ.items() if k not in HF_VARS}
    env.update({"HF_ENDPOINT": hub.url, "HF_HOME": str(hf_home), "HF_HUB_DISABLE_TELEMETRY": "1", **extra})
    return env


def ridge(ridge_bin, hub, hf_home, *args, **extra):
    return subprocess.run([ridge_bin, *args], capture_output=True, text=True, env=hub_env(hub, hf_home, **extra),
                          timeout=300)


def pull(ridge_bin, hub, hf_home, *args, **extra):
    return ridge(ridge_bin, hub, hf_home, "pull", *args, **extra)


def hf_hub_download(hub, hf_home, repo, filename):
    code = "import sys; from huggingface_hub import hf_hub_download; print(hf_hub_download(sys.argv[1], sys.argv[2]))"
    r = subprocess.run([sys.executable, "-c", code, repo, filename], capture_output=True, text=True,
                       env=hub_env(hub, hf_home), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip().splitlines()[-1]


def repo_folder(hf_home, repo):
    return pathlib.Path(hf_home) / "hub" / ("models--" + repo.replace("/", "--"))


def blob_gets(hub, sha):
    return [r for r in hub.requests("storage", "GET", f"/lfs/{sha}")]


def test_pull_a_quant_resumed_after_a_cut_into_the_hf_cache_layout(ridge_bin, hub, home):
    sha = hub.repos[GGUF_REPO].meta[Q41]["sha256"]
    assert sha == sha256(SMOL)
    hub.cut_once[sha] = 40_000_000
    r = pull(ridge_bin, hub, home, f"{GGUF_REPO}:q4_1")
    assert r.returncode == 0, r.stderr
    commit = hub.repos[GGUF_REPO].commit
    folder = repo_folder(home, GGUF_REPO)
    assert r.stdout.strip() == str(folder / "snapshots" / commit / Q41)
    gets = blob_gets(hub, sha)
    assert [g["range"] for g in gets] == [None, "bytes=40000000-"], gets  # resumed where the cut left it
    assert "resuming" in r.stderr and "SmolLM2-135M-Instruct-Q4_1.gguf" in r.stderr  # the log and the progress bar
    assert sha256(r.stdout.strip()) == sha
    # The layout huggingface_hub writes: blob named by the LFS SHA-256, relative link, refs/main = commit.
    assert os.readlink(folder / "snapshots" / commit / Q41) == f"../../blobs/{sha}"
    assert (folder / "refs" / "main").read_text() == commit
    assert sorted(p.name for p in (folder / "blobs").iterdir()) == [sha]  # nothing else fetched, no .incomplete
    # The token went nowhere (none given); the redirect was followed to the storage host.
    assert all(g["auth"] is None for g in hub.requests())


def test_default_quant_and_a_split_file(ridge_bin, hub, home):
    r = pull(ridge_bin, hub, home, GGUF_REPO)  # no Q4_K_M in the repository: llama.cpp's next choice is Q8_0
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("/" + Q80)
    assert sha256(r.stdout.strip()) == hub.repos[GGUF_REPO].meta[Q80]["sha256"] != sha256(SMOL)

    r = pull(ridge_bin, hub, home, f"{GGUF_REPO}:{SPLIT[1]}", "--quiet")  # a shard brings the whole split
    assert r.returncode == 0, r.stderr
    first = pathlib.Path(r.stdout.strip())
    assert first.as_posix().endswith(SPLIT[0])
    second = first.parent / pathlib.Path(SPLIT[1]).name
    assert sha256(first) == sha256(hub.shards[0]) and sha256(second) == sha256(hub.shards[1])
    llama_cpp = pytest.importorskip("llama_cpp")
    model = llama_cpp.Llama(model_path=str(first), n_ctx=64, verbose=False)  # llama.cpp reads both shards
    assert model.n_vocab() == 49152


def test_run_a_pulled_model_by_its_hub_name(ridge_bin, hub, home):
    args = ["-p", "The capital of France is", "-n", "4", "--temp", "0"]
    pulled = ridge(ridge_bin, hub, home, "run", "-m", f"hf://{GGUF_REPO}:Q4_1", *args)
    local = ridge(ridge_bin, hub, home, "run", "-m", str(SMOL), *args)
    assert pulled.returncode == 0 and local.returncode == 0, pulled.stderr + local.stderr
    assert pulled.stdout == local.stdout and "Paris" in pulled.stdout
    planned = ridge(ridge_bin, hub, home, "plan", f"hf://{GGUF_REPO}:Q4_1", "--json")  # the planner names models too
    assert planned.returncode == 0, planned.stderr
    local = json.loads(ridge(ridge_bin, hub, home, "plan", str(SMOL), "--json").stdout)
    assert json.loads(planned.stdout)["decode"] == local["decode"]


def test_serve_models_named_by_the_hub(ridge_bin, hub, home):
    """-m hf://... is served under the repository's name; -m NAME=hf://... under NAME."""
    models = [f"hf://{GGUF_REPO}:Q4_1", f"coder=hf://{GGUF_REPO}:Q8_0"]
    with running_server(ridge_bin, models, "--kv-memory", "64MiB", ctx_size=512, env=hub_env(hub, home),
                        startup_timeout=120) as server:
        status, body = server.request("GET", "/v1/models")
        assert status == 200, body
        names = sorted(m["id"] for m in json.loads(body)["data"])
        assert names == ["SmolLM2-135M-Instruct-GGUF", "coder"], names
        for name in names:
            status, body = server.request("POST", "/v1/completions", {"model": name, "prompt": "The capital of France is",
                                                                       "max_tokens": 3, "temperature": 0})
            assert status == 200, body
            assert json.loads(body)["choices"][0]["text"].strip()


@pytest.mark.skipif(not MINILM.is_dir(), reason="all-MiniLM-L6-v2 not fetched (python3 tools/fetch_model.py minilm)")
def test_pull_a_safetensors_repository_and_embed_with_it(ridge_bin, hub, home):
    r = pull(ridge_bin, hub, home, f"hf://{ST_REPO}")
    assert r.returncode == 0, r.stderr
    snapshot = pathlib.Path(r.stdout.strip())
    assert snapshot == repo_folder(home, ST_REPO) / "snapshots" / hub.repos[ST_REPO].commit
    got = sorted(p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file())
    assert got == ["1_Pooling/config.json", "config.json", "config_sentence_transformers.json", "model.safetensors",
                   "modules.json", "sentence_bert_config.json", "special_tokens_map.json", "tokenizer.json",
                   "tokenizer_config.json", "vocab.txt"]
    for f in got:
        assert sha256(snapshot / f) == sha256(MINILM / f)
    offline = pull(ridge_bin, hub, home, f"hf://{ST_REPO}", HF_HUB_OFFLINE="1")  # index and modules read from the cache
    assert offline.returncode == 0 and offline.stdout == r.stdout, offline.stderr
    pulled = ridge(ridge_bin, hub, home, "embed", "-m", f"hf://{ST_REPO}", "-p", "a pulled encoder")
    local = ridge(ridge_bin, hub, home, "embed", "-m", str(MINILM), "-p", "a pulled encoder")
    assert pulled.returncode == 0 and local.returncode == 0, pulled.stderr + local.stderr
    assert pulled.stdout == local.stdout and '"embedding"' in pulled.stdout


def test_a_corrupted_byte_is_caught_and_nothing_kept(ridge_bin, hub, tmp_path):
    sha = hub.repos[VOCAB_REPO].meta["DeepSeek-R1-Vocab-Q8_0.gguf"]["sha256"]
    hub.corrupt.add(sha)
    try:
        r = pull(ridge_bin, hub, tmp_path, VOCAB_REPO)
    finally:
        hub.corrupt.discard(sha)
    assert r.returncode == 1
    assert "DeepSeek-R1-Vocab-Q8_0.gguf: SHA-256 mismatch" in r.stderr, r.stderr
    folder = repo_folder(tmp_path, VOCAB_REPO)
    assert list((folder / "blobs").iterdir()) == []  # neither the final name nor the .incomplete
    assert not (folder / "snapshots" / hub.repos[VOCAB_REPO].commit / "DeepSeek-R1-Vocab-Q8_0.gguf").exists()
    r = pull(ridge_bin, hub, tmp_path, VOCAB_REPO)
    assert r.returncode == 0, r.stderr
    assert sha256(r.stdout.strip()) == sha256(VOCAB)


def test_private_repository_needs_a_token(ridge_bin, hub, tmp_path):
    r = pull(ridge_bin, hub, tmp_path, PRIVATE_REPO)
    assert r.returncode == 1
    assert "gated or private: pass a token with HF_TOKEN=... or `--hf-token`" in r.stderr, r.stderr
    assert "HTTP 401" in r.stderr
    r = pull(ridge_bin, hub, tmp_path, PRIVATE_REPO, "--hf-token", "hf_wrong")
    assert r.returncode == 1 and "gated or private" in r.stderr
    r = pull(ridge_bin, hub, tmp_path, PRIVATE_REPO, HF_TOKEN=TOKEN)
    assert r.returncode == 0, r.stderr
    assert sha256(r.stdout.strip()) == sha256(VOCAB)
    storage_auth = [g["auth"] for g in blob_gets(hub, hub.repos[PRIVATE_REPO].meta["Private-Q8_0.gguf"]["sha256"])]
    assert storage_auth and all(a is None for a in storage_auth)  # the token stays with the Hub's host
    (tmp_path / "token").write_text(TOKEN + "\n")  # huggingface_hub's token file, as `hf auth login` writes it
    r = pull(ridge_bin, hub, tmp_path, PRIVATE_REPO, "--revision", hub.repos[PRIVATE_REPO].commit)
    assert r.returncode == 0, r.stderr


def test_not_found_names_what_is_missing(ridge_bin, hub, tmp_path):
    cases = [((f"ridge-test/Nope-GGUF",), "repository not found"),
             ((GGUF_REPO, "--revision", "v9"), "revision not found"),
             ((f"{GGUF_REPO}@v9:Q4_1",), "revision not found"),
             ((f"{GGUF_REPO}:nothere.gguf",), "file 'nothere.gguf' not found"),
             ((f"{GGUF_REPO}:Q3_K_S",), "has no GGUF file for quant 'Q3_K_S'")]
    for args, message in cases:
        r = pull(ridge_bin, hub, tmp_path, *args)
        assert r.returncode == 1 and message in r.stderr, (args, r.stderr)
    assert "HTTP 404" in pull(ridge_bin, hub, tmp_path, "ridge-test/Nope-GGUF").stderr


def test_offline_uses_the_cache_only(ridge_bin, hub, home, tmp_path):
    before = len(hub.requests())
    r = pull(ridge_bin, hub, tmp_path, f"{GGUF_REPO}:Q4_1", HF_HUB_OFFLINE="1")
    assert r.returncode == 1 and "HF_HUB_OFFLINE" in r.stderr, r.stderr
    online = pull(ridge_bin, hub, home, f"{GGUF_REPO}:Q4_1")
    assert online.returncode == 0, online.stderr
    before = len(hub.requests())
    r = pull(ridge_bin, hub, home, f"{GGUF_REPO}:Q4_1", HF_HUB_OFFLINE="1")
    assert r.returncode == 0, r.stderr
    assert r.stdout == online.stdout
    r = pull(ridge_bin, hub, home, f"{GGUF_REPO}:Q5_K_M", HF_HUB_OFFLINE="1")  # not cached
    assert r.returncode == 1 and "HF_HUB_OFFLINE" in r.stderr, r.stderr
    assert len(hub.requests()) == before  # no request at all
    # A Hub that cannot be reached: the cached snapshot serves, with a warning; nothing cached is an error.
    r = pull(ridge_bin, hub, home, f"{GGUF_REPO}:Q4_1", HF_ENDPOINT="http://127.0.0.1:1")
    assert r.returncode == 0 and r.stdout == online.stdout and "using the cached snapshot" in r.stderr, r.stderr
    r = pull(ridge_bin, hub, tmp_path, f"{GGUF_REPO}:Q4_1", HF_ENDPOINT="http://127.0.0.1:1")
    assert r.returncode == 1 and "cannot reach http://127.0.0.1:1" in r.stderr, r.stderr


def test_huggingface_hub_and_ridge_share_the_cache(ridge_bin, hub, home, tmp_path):
    # huggingface_hub finds ridge's file: a HEAD for its metadata, no download.
    r = pull(ridge_bin, hub, home, f"{GGUF_REPO}:Q4_1")
    assert r.returncode == 0, r.stderr
    sha = hub.repos[GGUF_REPO].meta[Q41]["sha256"]
    gets = len(blob_gets(hub, sha))
    assert hf_hub_download(hub, home, GGUF_REPO, Q41) == r.stdout.strip()
    assert len(blob_gets(hub, sha)) == gets
    # ridge finds huggingface_hub's files, an LFS one (named by its SHA-256) and a git one (by its blob id).
    vocab_sha = hub.repos[VOCAB_REPO].meta["DeepSeek-R1-Vocab-Q8_0.gguf"]["sha256"]
    theirs = hf_hub_download(hub, tmp_path, VOCAB_REPO, "DeepSeek-R1-Vocab-Q8_0.gguf")
    gets = len(blob_gets(hub, vocab_sha))
    r = pull(ridge_bin, hub, tmp_path, f"{VOCAB_REPO}:Q8_0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == theirs and len(blob_gets(hub, vocab_sha)) == gets
    readme = hf_hub_download(hub, tmp_path, GGUF_REPO, "README.md")
    resolves = len(hub.requests("hub", "GET", "/resolve/"))
    r = pull(ridge_bin, hub, tmp_path, f"{GGUF_REPO}:README.md")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == readme and len(hub.requests("hub", "GET", "/resolve/")) == resolves


def test_hostile_names_are_refused_before_anything_is_written(ridge_bin, hub, tmp_path):
    before = len(hub.requests())
    for name in ["../etc/passwd", "hf://ridge-test/../../etc", "ridge-test/..", "hf://ridge-test/x/../../y",
                 "ridge-test/repo:../../../tmp/x.gguf", "ridge-test/repo@../../refs:Q4_1", "/etc/passwd"]:
        r = pull(ridge_bin, hub, tmp_path, name)
        assert r.returncode == 1 and "error:" in r.stderr, (name, r.stderr)
    r = ridge(ridge_bin, hub, tmp_path, "run", "-m", "hf://ridge-test/..", "-p", "x", "-n", "1")
    assert r.returncode == 1 and "not a valid Hub repository id" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == [] and len(hub.requests()) == before
    r = pull(ridge_bin, hub, tmp_path / "home", EVIL_REPO)  # a file list naming paths outside the repository
    assert r.returncode == 1 and "not a safe relative path" in r.stderr, r.stderr
    assert not list(tmp_path.rglob("evil*")) and not (tmp_path / "home" / "hub").exists()


def test_https_with_the_systems_certificate_check(ridge_bin, tmp_path):
    """The Hub is HTTPS: ridge checks the server's certificate against the trusted CAs (OpenSSL's default
    paths, which SSL_CERT_FILE overrides), and refuses a server it cannot verify."""
    test_tls = pytest.importorskip("test_tls")
    certs = test_tls.make_certificates(tmp_path)
    tls_hub = FakeHub(tls=(str(certs["cert"]), str(certs["key"])))
    tls_hub.add_repo(VOCAB_REPO, {"DeepSeek-R1-Vocab-Q8_0.gguf": HubFile(str(VOCAB))})
    tls_hub.start()
    try:
        r = pull(ridge_bin, tls_hub, tmp_path / "untrusted", VOCAB_REPO, SSL_CERT_FILE=str(certs["other_key"]))
        assert r.returncode == 1 and "cannot reach https://127.0.0.1" in r.stderr, r.stderr
        r = pull(ridge_bin, tls_hub, tmp_path / "trusted", VOCAB_REPO, SSL_CERT_FILE=str(certs["ca"]))
        assert r.returncode == 0, r.stderr
        assert sha256(r.stdout.strip()) == sha256(VOCAB)
        assert [g["server"] for g in tls_hub.requests(method="GET")] == ["hub", "hub", "storage"]
    finally:
        tls_hub.stop()
