"""Many models in one `ridge serve` (the router: -m NAME=SOURCE more than once, or --models-dir), end to end on
real models: the default model (SmolLM2-135M), Qwen2.5-Coder-0.5B, Gemma 3 270M and all-MiniLM-L6-v2, plus
files that are no model at all.

- Each model answers, greedy, exactly what a one-model server of the same file answers; a model whose file is
  corrupt or truncated is a 503 `model_load_failed` (status `failed` with its error in /v1/models) and the other
  models keep answering the same.
- Under `--models-max 2` with three models and a crowd of clients, no request fails, models are evicted, and
  /v1/models never shows more than two models holding memory.
- 100 concurrent requests for an unloaded model load it once.
- POST /models/load and /models/unload, unloading under a stream in flight (it finishes; the model drains),
  `keep_alive`, `--idle-unload`.
- `--api-key` guards every route but /health and /; a model name that is a path is a 404; no file-system path
  leaks through /v1/models or /metrics.
- A hostile --models-dir (a symlink loop, text and empty *.gguf files, a directory of garbage), a model larger
  than --models-memory: clear errors, the good models still serve, the server lives and stops cleanly.
- /metrics: engine metrics per model (`model_name` label) and the load counters.

Every server is started with a small context (--ctx-size 512) and KV pool (--kv-memory 64MiB) per model, on
2 threads; the whole file runs in a few minutes on 2 cores. Run it alone: pytest -q tests/conformance/test_multi_model.py
(or -m multi_model)."""
import contextlib
import http.client
import json
import math
import os
import random
import re
import signal
import subprocess
import threading
import time

import pytest

from serve_fixture import running_server, start_server, stop_server, stream_chat

pytestmark = pytest.mark.multi_model

CTX = 512
KV = "64MiB"
MODELS_DIR = os.path.join(os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge"),
                          "models")
# key -> (file or directory in the models directory, the fetcher's name for it)
MODELS = {
    "smol": ("SmolLM2-135M-Instruct.Q4_1.gguf", "default"),
    "qwen": ("Qwen2.5-Coder-0.5B-Instruct.gguf", "qwen2.5-coder-0.5b"),
    "gemma": ("gemma-3-270m-Q4_K_M.gguf", "gemma3-270m"),
    "minilm": ("all-MiniLM-L6-v2", "all-minilm-l6-v2"),
}
CHAT_MODELS = ("smol", "qwen", "gemma")
PROMPTS = ["What is the capital of France? Answer in one sentence.",
           "Write a short poem about a river."]
EMBED_TEXTS = ["The cat sat on the mat.", "Paris is the capital of France."]


def model_path(key):
    """The model's path, or a skip that says how to fetch it."""
    name, fetch = MODELS[key]
    path = os.path.join(MODELS_DIR, name)
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing: python3 tools/fetch_model.py {fetch}")
    return path


# ---- HTTP helpers --------------------------------------------------------------------------------

def call(server, method, path, body=None, headers=None, timeout=180):
    """(status, parsed JSON or the raw bytes)."""
    status, data = server.request(method, path, body, headers=headers, timeout=timeout)
    try:
        return status, json.loads(data)
    except ValueError:
        return status, data


def chat_body(model, prompt, max_tokens=24, **extra):
    body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens, "temperature": 0, **extra}
    if model is not None:
        body["model"] = model
    return body


def chat(server, model, prompt, max_tokens=24, headers=None, timeout=180, **extra):
    return call(server, "POST", "/v1/chat/completions", chat_body(model, prompt, max_tokens, **extra), headers, timeout)


def answer(server, model, prompt, max_tokens=24, **extra):
    status, body = chat(server, model, prompt, max_tokens, **extra)
    assert status == 200, f"chat to {model!r}: {status} {body}\n--- server log ---\n{server.log()}"
    return body["choices"][0]["message"]["content"]


def error_of(status, body, expected_status, code=None):
    """The error object of an OpenAI-shaped error answer with this status (and code)."""
    assert status == expected_status, f"expected {expected_status}, got {status}: {body}"
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), body
    err = body["error"]
    assert isinstance(err.get("message"), str) and err["message"], body
    if code is not None:
        assert err.get("code") == code, body
    return err


def models(server, headers=None, query=""):
    """/v1/models as {id: entry}."""
    status, body = call(server, "GET", "/v1/models" + query, headers=headers, timeout=30)
    assert status == 200, body
    assert body.get("object") == "list", body
    ids = [m["id"] for m in body["data"]]
    assert len(ids) == len(set(ids)), f"an id listed twice: {ids}"
    return {m["id"]: m for m in body["data"]}


def state(entry):
    return entry["status"]["value"]


def wait_state(server, name, wanted, timeout=15.0, headers=None):
    """Polls /v1/models until `name`'s status is `wanted`; returns the seconds it took (fails on timeout)."""
    start = time.monotonic()
    seen = None
    while time.monotonic() - start < timeout:
        seen = models(server, headers)[name]
        if state(seen) == wanted:
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"{name} did not become {wanted} within {timeout} s: {seen}\n--- server log ---\n{server.log()}")


SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric_samples(server, headers=None):
    """Every sample of /metrics (histogram buckets left out) as (name, {labels}, value)."""
    status, data = server.request("GET", "/metrics", headers=headers, timeout=30)
    assert status == 200, data
    out = []
    for line in data.decode().splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a Prometheus sample: {line!r}"
        if m.group(1).endswith("_bucket"):
            continue
        out.append((m.group(1), dict(LABEL.findall(m.group(2) or "")), float(m.group(3))))
    return out


def metric(samples, name, **labels):
    """The sum of `name`'s samples whose labels include `labels`; None when there is none."""
    values = [v for n, ls, v in samples if n == name and all(ls.get(k) == w for k, w in labels.items())]
    return sum(values) if values else None


@contextlib.contextmanager
def router(ridge_bin, named, *extra, env=None, startup_timeout=90):
    """A router server for a `with` block: `named` is {NAME: SOURCE} (-m NAME=SOURCE each; may be empty when
    --models-dir is in `extra`). When the block passes, the server must still be alive and stop on SIGTERM
    with status 0 within 15 s; the log's tail is printed when anything fails."""
    server = start_server(ridge_bin, [f"{n}={p}" for n, p in named.items()], "--kv-memory", KV, *extra,
                          ctx_size=CTX, startup_timeout=startup_timeout, env=env)
    passed = False
    try:
        yield server
        passed = True
    finally:
        alive = server.proc.poll() is None
        started = time.monotonic()
        rc = stop_server(server, timeout=15)
        stop_seconds = time.monotonic() - started
        log = server.log(6000)
        os.unlink(server.log_path)
        if passed:
            assert alive, f"ridge serve died during the test (exit {server.proc.returncode}):\n{log}"
            assert rc == 0 and stop_seconds < 15, f"ridge serve exited with {rc} after {stop_seconds:.1f} s on SIGTERM:\n{log}"
        else:
            print(f"--- ridge serve (alive at the end: {alive}, exit {rc}) log tail ---\n{log}")


# ---- references: one model per server ------------------------------------------------------------

@pytest.fixture(scope="module")
def reference(ridge_bin):
    """Greedy answers of one-model servers (one at a time, same flags as the routers), and all-MiniLM's vectors
    from a server that serves it beside the default model: {"smol": {(prompt, max_tokens): text}, "minilm": [...]}."""
    out = {}
    for key in CHAT_MODELS:
        name, _ = MODELS[key]
        path = os.path.join(MODELS_DIR, name)
        if not os.path.exists(path):
            continue
        extra = ["--kv-memory", KV]
        minilm = os.path.join(MODELS_DIR, MODELS["minilm"][0])
        if key == "smol" and os.path.exists(minilm):
            extra += ["--embedding-model", minilm]
        with running_server(ridge_bin, path, *extra, ctx_size=CTX) as s:
            model_id = name[:-len(".gguf")]  # a one-model server names its model after the file
            assert model_id in models(s), models(s)
            answers = {}
            for prompt in PROMPTS:
                answers[(prompt, 24)] = answer(s, model_id, prompt, 24)
                assert answers[(prompt, 24)], f"{key} answers nothing to {prompt!r}: the comparison would be empty"
            answers[(PROMPTS[1], 16)] = answer(s, model_id, PROMPTS[1], 16)
            out[key] = answers
            if "--embedding-model" in extra:
                status, body = call(s, "POST", "/v1/embeddings", {"input": EMBED_TEXTS})
                assert status == 200, body
                out["minilm"] = [d["embedding"] for d in body["data"]]
    return out


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def write_corrupt_files(directory, smol_path):
    """corrupt.gguf: 4 MiB of random bytes; truncated.gguf: the default model's first 8 MiB (its header and
    vocabulary whole, its tensors cut off)."""
    corrupt = os.path.join(directory, "corrupt.gguf")
    with open(corrupt, "wb") as f:
        f.write(random.Random(43).randbytes(4 << 20))
    truncated = os.path.join(directory, "truncated.gguf")
    with open(smol_path, "rb") as src, open(truncated, "wb") as dst:
        dst.write(src.read(8 << 20))
    return corrupt, truncated


# ---- 1. three models and two broken files in one server --------------------------------------------

def test_each_model_answers_as_its_own_server_and_broken_files_fail_cleanly(ridge_bin, reference, tmp_path):
    paths = {key: model_path(key) for key in (*CHAT_MODELS, "minilm")}
    corrupt, truncated = write_corrupt_files(str(tmp_path), paths["smol"])
    named = {**paths, "corrupt": corrupt, "truncated": truncated}
    with router(ridge_bin, named) as s:
        listed = models(s)
        assert set(listed) == set(named), listed
        for name, entry in listed.items():
            assert entry["object"] == "model" and entry["owned_by"] == "ridge", entry
            assert isinstance(entry["created"], int) and entry["created"] > 0, entry
            assert isinstance(entry["aliases"], list), entry
            assert state(entry) == "unloaded", entry  # nothing is loaded before its first request
            assert "error" not in entry["status"], entry
            assert isinstance(entry["bytes"], int) and entry["bytes"] >= 0, entry
            assert entry["requests_running"] == 0, entry

        # Not a model name: 400 (empty), 404 (unknown).
        error_of(*chat(s, "", PROMPTS[0]), 400)
        error_of(*chat(s, "no-such-model", PROMPTS[0]), 404, "model_not_found")

        # The first request loads its model; /v1/models answers meanwhile and shows loading, then loaded.
        seen = {key: set() for key in CHAT_MODELS}
        before = {}
        for key in CHAT_MODELS:
            result = {}
            t = threading.Thread(target=lambda: result.update(text=answer(s, key, PROMPTS[0])))
            t.start()
            while t.is_alive():
                seen[key].add(state(models(s)[key]))
                time.sleep(0.05)
            t.join()
            assert "text" in result, f"the first request to {key} failed (see the thread's error above)"
            before[key] = [result["text"], answer(s, key, PROMPTS[1])]
            assert seen[key] <= {"unloaded", "loading", "loaded"}, (key, seen[key])
        for key in CHAT_MODELS:
            assert before[key] == [reference[key][(p, 24)] for p in PROMPTS], \
                f"{key}: the router's greedy answers differ from a one-model server's"
        listed = models(s)
        for key in CHAT_MODELS:
            entry = listed[key]
            assert state(entry) == "loaded", entry
            assert entry.get("task") == "generate", entry
            assert entry.get("max_model_len") == CTX, entry
            assert entry["bytes"] > os.path.getsize(paths[key]) // 2, entry  # weights and KV pool
            assert entry["requests_running"] == 0, entry

        # The embedding model through the same server.
        status, body = call(s, "POST", "/v1/embeddings", {"model": "minilm", "input": EMBED_TEXTS})
        assert status == 200, body
        vectors = [d["embedding"] for d in body["data"]]
        assert len(vectors) == len(EMBED_TEXTS) and len(vectors[0]) == 384
        if "minilm" in reference:
            for got, want in zip(vectors, reference["minilm"]):
                assert cosine(got, want) > 0.9999
        assert models(s)["minilm"].get("task") == "embed", models(s)["minilm"]

        # Broken files: 503 model_load_failed with the load's error, status failed with that error; again on retry.
        for name in ("corrupt", "truncated"):
            for attempt in range(2):
                started = time.monotonic()
                status, body = chat(s, name, PROMPTS[0], timeout=60)
                err = error_of(status, body, 503, "model_load_failed")
                assert time.monotonic() - started < 30, f"{name}: the failed load took {time.monotonic() - started:.1f} s"
                entry = models(s)[name]
                assert state(entry) == "failed", entry
                error = entry["status"].get("error")
                assert isinstance(error, str) and len(error) >= 10, entry
                assert error in err["message"], f"{name}: the 503's message does not carry the load's error: {err} vs {entry}"
        status, body = call(s, "POST", "/models/load", {"model": "corrupt"})
        error_of(status, body, 503, "model_load_failed")

        # The good models were untouched: still loaded, the same answers.
        listed = models(s)
        for key in CHAT_MODELS:
            assert state(listed[key]) == "loaded", listed[key]
            assert [answer(s, key, p) for p in PROMPTS] == before[key], f"{key} answers differently after the failed loads"
        samples = metric_samples(s)
        for key in CHAT_MODELS:
            assert metric(samples, "ridge:model_loads_total", model_name=key) == 1, key


def test_models_preload_loads_every_model_at_start(ridge_bin, reference):
    paths = {key: model_path(key) for key in ("smol", "gemma")}
    with router(ridge_bin, paths, "--models-preload") as s:
        seen = set()
        deadline = time.monotonic() + 60
        while True:
            listed = models(s)
            seen |= {state(e) for e in listed.values()}
            if all(state(e) == "loaded" for e in listed.values()) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert all(state(e) == "loaded" for e in listed.values()), listed
        assert seen <= {"unloaded", "loading", "loaded"}, seen
        for key in paths:
            assert answer(s, key, PROMPTS[0]) == reference[key][(PROMPTS[0], 24)]
        samples = metric_samples(s)
        for key in paths:
            assert metric(samples, "ridge:model_loads_total", model_name=key) == 1, key  # not loaded again


# ---- 2. more models than --models-max, many clients -------------------------------------------------

def test_models_max_under_load_evicts_and_never_fails(ridge_bin, reference):
    paths = {key: model_path(key) for key in CHAT_MODELS}
    duration, n_clients = 25.0, 8
    with router(ridge_bin, paths, "--models-max", "2") as s:
        stop_at = time.monotonic() + duration
        lock = threading.Lock()
        results, failures, mismatches = [], [], []
        samples, sampler_errors = [], []
        finished = threading.Event()

        def client(i):
            rng = random.Random(i)
            while time.monotonic() < stop_at:
                key, streamed = rng.choice(CHAT_MODELS), rng.random() < 0.5
                body = chat_body(key, PROMPTS[1], 16)
                started = time.monotonic()
                try:
                    if streamed:
                        r = stream_chat(s, body, timeout=180)
                        ok = r.status == 200 and r.done and r.error is None and r.finish_reason is not None
                        detail, text = (r.status, r.error, r.finish_reason, r.done), r.text
                    else:
                        status, reply = chat(s, key, PROMPTS[1], 16, timeout=180)
                        ok = status == 200
                        detail = (status, reply)
                        text = reply["choices"][0]["message"]["content"] if ok else None
                except Exception as e:  # noqa: BLE001 - a failed request is a result here
                    ok, detail, text = False, repr(e), None
                with lock:
                    results.append((key, streamed, time.monotonic() - started))
                    if not ok:
                        failures.append((key, "stream" if streamed else "whole", detail))
                    elif text != reference[key][(PROMPTS[1], 16)]:
                        mismatches.append((key, streamed, text, reference[key][(PROMPTS[1], 16)]))

        def sampler():
            n = 0
            while not finished.is_set():
                try:
                    listed = models(s)
                    states = {k: state(e) for k, e in listed.items()}
                    loaded_gauge = None
                    if n % 4 == 0:
                        loaded_gauge = metric(metric_samples(s), "ridge:model_loaded")
                    samples.append((time.monotonic(), states, loaded_gauge))
                except Exception as e:  # noqa: BLE001
                    sampler_errors.append(repr(e))
                n += 1
                time.sleep(0.2)

        watcher = threading.Thread(target=sampler)
        watcher.start()
        clients = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)]
        for t in clients:
            t.start()
        for t in clients:
            t.join(timeout=duration + 240)
        finished.set()
        watcher.join(timeout=60)
        assert not any(t.is_alive() for t in clients), f"requests still hanging:\n{s.log()}"

        assert results, "no request finished"
        assert not failures, f"{len(failures)} of {len(results)} requests failed, e.g. {failures[:5]}\n{s.log()}"
        assert not sampler_errors, sampler_errors[:5]
        per_model = {key: sum(1 for r in results if r[0] == key) for key in CHAT_MODELS}
        assert all(per_model.values()), per_model
        loaded_at_once = max(sum(1 for v in st.values() if v == "loaded") for _, st, _ in samples)
        assert loaded_at_once <= 2, [st for _, st, _ in samples if sum(v == "loaded" for v in st.values()) > 2][:3]
        # A draining model still holds its memory: the cap counts it.
        resident = [st for _, st, _ in samples if sum(v in ("loaded", "draining") for v in st.values()) > 2]
        assert not resident, f"more than 2 models loaded or draining at once: {resident[:3]}"
        gauges = [g for _, _, g in samples if g is not None]
        assert gauges and max(gauges) <= 2, gauges
        m = metric_samples(s)
        evictions = metric(m, "ridge:model_evictions_total")
        loads = metric(m, "ridge:model_loads_total")
        assert evictions is not None and evictions >= 1, f"no eviction counted: {[x for x in m if 'model_' in x[0]]}"
        assert loads is not None and loads >= 4, f"3 models under a cap of 2 loaded only {loads} times"
        assert not mismatches, f"{len(mismatches)} of {len(results)} greedy answers differ from a one-model server's, " \
                               f"e.g. {mismatches[:3]}"
        print(f"{len(results)} requests {per_model}, {int(evictions)} evictions, {int(loads)} loads, "
              f"{len(samples)} /v1/models samples")


# ---- 3. one load for a crowd ---------------------------------------------------------------------

def test_100_concurrent_requests_load_the_model_once(ridge_bin):
    paths = {key: model_path(key) for key in ("smol", "gemma")}
    n = 100
    with router(ridge_bin, paths) as s:
        barrier = threading.Barrier(n)
        replies = [None] * n

        def one(i):
            barrier.wait()
            try:
                replies[i] = chat(s, "smol", PROMPTS[0], 8, timeout=240)
            except Exception as e:  # noqa: BLE001
                replies[i] = (None, repr(e))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        failed = [r for r in replies if r is None or r[0] != 200]
        assert not failed, f"{len(failed)} of {n} failed, e.g. {failed[:3]}\n{s.log()}"
        texts = {r[1]["choices"][0]["message"]["content"] for r in replies}
        assert len(texts) == 1, texts  # greedy: one answer
        m = metric_samples(s)
        assert metric(m, "ridge:model_loads_total", model_name="smol") == 1
        assert metric(m, "ridge:model_loads_total", model_name="gemma") in (None, 0)
        assert metric(m, "ridge:request_success_total", model_name="smol") == n
        listed = models(s)
        assert state(listed["smol"]) == "loaded" and state(listed["gemma"]) == "unloaded", listed


# ---- 4. loading and unloading by hand, keep_alive, --idle-unload -----------------------------------------

def test_load_unload_and_unload_under_a_stream(ridge_bin, reference):
    paths = {key: model_path(key) for key in ("smol", "gemma")}
    with router(ridge_bin, paths) as s:
        assert call(s, "POST", "/models/load", {"model": "smol"}) == \
            (200, {"success": True, "model": "smol", "status": "loaded"})
        assert state(models(s)["smol"]) == "loaded"
        assert state(models(s)["gemma"]) == "unloaded"
        assert answer(s, "smol", PROMPTS[0]) == reference["smol"][(PROMPTS[0], 24)]
        assert call(s, "POST", "/models/load", {"model": "smol"})[0] == 200  # loaded already: fine
        assert call(s, "POST", "/models/unload", {"model": "smol"}) == \
            (200, {"success": True, "model": "smol", "status": "unloaded"})
        assert state(models(s)["smol"]) == "unloaded"
        error_of(*call(s, "POST", "/models/unload", {"model": "smol"}), 400)  # not loaded
        error_of(*call(s, "POST", "/models/unload", {"model": "gemma"}), 400)
        error_of(*call(s, "POST", "/models/load", {"model": "nope"}), 404, "model_not_found")
        error_of(*call(s, "POST", "/models/unload", {"model": "nope"}), 404, "model_not_found")

        # Unload while a stream is in flight: it drains, the stream ends normally, then the model is unloaded.
        long_body = chat_body("smol", PROMPTS[1], 300, ignore_eos=True)
        status, whole = call(s, "POST", "/v1/chat/completions", long_body)
        assert status == 200 and whole["usage"]["completion_tokens"] == 300, whole
        unload_reply, listed_while_draining = {}, {}

        def unload_now():
            unload_reply["r"] = call(s, "POST", "/models/unload", {"model": "smol"})
            listed_while_draining["r"] = models(s)["smol"]

        r = stream_chat(s, long_body, on_first=unload_now)
        status, body = unload_reply["r"]
        assert status == 200 and body.get("success") is True, unload_reply
        assert body.get("status") == "draining" and body.get("requests_running") == 1, unload_reply
        assert state(listed_while_draining["r"]) == "draining", listed_while_draining
        assert r.status == 200 and r.error is None and r.done, vars(r)
        assert r.finish_reason == "length" and r.usage["completion_tokens"] == 300, vars(r)
        assert r.text == whole["choices"][0]["message"]["content"]  # the drained stream is the same greedy text
        wait_state(s, "smol", "unloaded", timeout=10)

        # A request that arrives while its model drains waits for it to load again.
        late = {}

        def unload_then_ask():
            unload_reply["r2"] = call(s, "POST", "/models/unload", {"model": "smol"})
            t = threading.Thread(target=lambda: late.update(r=chat(s, "smol", PROMPTS[0], 24)))
            t.start()
            late["t"] = t

        r = stream_chat(s, long_body, on_first=unload_then_ask)
        assert r.status == 200 and r.done and r.usage["completion_tokens"] == 300, vars(r)
        assert unload_reply["r2"][0] == 200 and unload_reply["r2"][1].get("status") == "draining", unload_reply
        late["t"].join(timeout=120)
        status, body = late["r"]
        assert status == 200, body
        assert body["choices"][0]["message"]["content"] == reference["smol"][(PROMPTS[0], 24)]
        m = metric_samples(s)
        assert metric(m, "ridge:model_loads_total", model_name="smol") == 4, m  # /models/load, the whole request, stream 2, the late one
        assert metric(m, "ridge:model_unloads_total", model_name="smol") == 3, m
        assert state(models(s)["smol"]) == "loaded"
        # No model named: 400 (an empty "model" is a 400 on every route of the router).
        for route in ("/models/load", "/models/unload"):
            for bad in ({}, {"model": 5}, {"model": ""}):
                status, body = call(s, "POST", route, bad)
                assert status == 400, (route, bad, status, body)


def test_keep_alive(ridge_bin):
    paths = {key: model_path(key) for key in ("smol", "gemma")}
    with router(ridge_bin, paths) as s:
        for value in ("30s", "5m", "1h", 30, -1):
            assert chat(s, "smol", PROMPTS[0], 4, keep_alive=value)[0] == 200, value
        assert state(models(s)["smol"]) == "loaded"
        for bad in ("banana", "5 parsecs", [1], {"s": 1}):
            status, body = chat(s, "smol", PROMPTS[0], 4, keep_alive=bad)
            assert 400 <= status < 500, (bad, status, body)
        # keep_alive 0: unloaded once the request ends.
        assert chat(s, "smol", PROMPTS[0], 4, keep_alive=0)[0] == 200
        wait_state(s, "smol", "unloaded", timeout=5)
        assert chat(s, "gemma", PROMPTS[0], 4, keep_alive="0s")[0] == 200
        wait_state(s, "gemma", "unloaded", timeout=5)
        m = metric_samples(s)
        assert metric(m, "ridge:model_unloads_total", model_name="smol") == 1
        assert metric(m, "ridge:model_evictions_total", model_name="smol") in (None, 0)


def post_with_headers(server, path, body, timeout=60):
    """(status, response headers, parsed body) of a POST."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), json.loads(r.read())
    finally:
        conn.close()


def test_load_timeout_is_503_with_retry_after(ridge_bin, reference):
    paths = {key: model_path(key) for key in ("smol", "qwen")}
    with router(ridge_bin, paths, "--model-load-timeout", "0.05") as s:
        status, headers, body = post_with_headers(s, "/v1/chat/completions", chat_body("qwen", PROMPTS[0]))
        error_of(status, body, 503, "model_load_timeout")
        assert int(headers.get("Retry-After", "0")) >= 1, headers
        # The load goes on without the request; once it is done the model answers.
        wait_state(s, "qwen", "loaded", timeout=60)
        assert answer(s, "qwen", PROMPTS[0]) == reference["qwen"][(PROMPTS[0], 24)]


def test_sigterm_finishes_a_stream_then_exits_zero(ridge_bin):
    paths = {key: model_path(key) for key in ("smol", "gemma")}
    s = start_server(ridge_bin, [f"{n}={p}" for n, p in paths.items()], "--kv-memory", KV, ctx_size=CTX)
    try:
        assert call(s, "POST", "/models/load", {"model": "gemma"})[0] == 200  # two engines to stop
        signalled = {}

        def terminate():
            s.proc.send_signal(signal.SIGTERM)
            signalled["t"] = time.monotonic()

        r = stream_chat(s, chat_body("smol", PROMPTS[1], 200, ignore_eos=True), on_first=terminate)
        assert r.status == 200 and r.done and r.error is None, vars(r)
        assert r.finish_reason == "length" and r.usage["completion_tokens"] == 200, vars(r)
        assert s.proc.wait(timeout=20) == 0, s.log()
        assert time.monotonic() - signalled["t"] < 20
        assert "stopped" in s.log()
    finally:
        stop_server(s)
        os.unlink(s.log_path)


def test_idle_unload(ridge_bin):
    paths = {key: model_path(key) for key in ("smol", "gemma")}
    with router(ridge_bin, paths, "--idle-unload", "2") as s:
        assert chat(s, "gemma", PROMPTS[0], 4, keep_alive=-1)[0] == 200  # never unloaded on idle
        assert chat(s, "smol", PROMPTS[0], 4)[0] == 200
        done = time.monotonic()
        time.sleep(0.5)
        assert state(models(s)["smol"]) == "loaded"
        waited = wait_state(s, "smol", "unloaded", timeout=10)
        idle = time.monotonic() - done
        assert 1.5 <= idle <= 8, f"smol unloaded after {idle:.1f} s idle (--idle-unload 2); waited {waited:.1f}"
        time.sleep(max(0.0, 3.5 - (time.monotonic() - done)))
        assert state(models(s)["gemma"]) == "loaded"  # keep_alive -1 outlives --idle-unload
        assert chat(s, "smol", PROMPTS[0], 4)[0] == 200  # loads again
        m = metric_samples(s)
        assert metric(m, "ridge:model_loads_total", model_name="smol") == 2
        assert metric(m, "ridge:model_unloads_total", model_name="smol") == 1
        assert metric(m, "ridge:model_unloads_total", model_name="gemma") in (None, 0)


# ---- 5. security -------------------------------------------------------------------------------------

def test_api_key_guards_every_route_and_names_are_not_paths(ridge_bin, tmp_path):
    smol = model_path("smol")
    mdir = tmp_path / "zz-private-models-4317"
    mdir.mkdir()
    os.symlink(smol, mdir / "smol.gguf")
    write_corrupt_files(str(mdir), smol)
    key = "s3cret-key"
    good = {"Authorization": f"Bearer {key}"}
    with router(ridge_bin, {}, "--models-dir", str(mdir), "--api-key", key) as s:
        guarded = [("GET", "/v1/models", None), ("GET", "/metrics", None),
                   ("POST", "/models/load", {"model": "smol"}), ("POST", "/models/unload", {"model": "smol"}),
                   ("POST", "/v1/chat/completions", chat_body("smol", PROMPTS[0], 4)),
                   ("POST", "/v1/completions", {"model": "smol", "prompt": "Hi", "max_tokens": 2})]
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"x-api-key": "wrong"}):
            for method, path, body in guarded:
                status, reply = call(s, method, path, body, headers=headers)
                assert status == 401, (method, path, headers, status, reply)
        assert s.request("GET", "/health")[0] == 200
        assert s.request("GET", "/")[0] == 200
        listed = models(s, good)
        assert {"smol", "corrupt", "truncated"} <= set(listed), listed
        assert state(listed["smol"]) == "unloaded", listed["smol"]  # the refused load did not load it
        assert models(s, {"x-api-key": key}) == listed

        # Names that are paths (or file names) are no model names.
        for name in ("../../etc/passwd", "/etc/passwd", "..", ".", smol, str(mdir / "smol.gguf"), "smol.gguf",
                     f"../{mdir.name}/smol", "./smol", f"{mdir.name}/smol", "smol/../smol", "%2e%2e%2fetc%2fpasswd"):
            error_of(*call(s, "POST", "/models/load", {"model": name}, headers=good), 404, "model_not_found")
            error_of(*chat(s, name, PROMPTS[0], 4, headers=good), 404, "model_not_found")
        after = models(s, good)
        assert set(after) == set(listed) and all(state(e) == "unloaded" for e in after.values()), after

        # Loaded and failed models: still no path in /v1/models or /metrics.
        assert call(s, "POST", "/models/load", {"model": "smol"}, headers=good)[0] == 200
        assert chat(s, "smol", PROMPTS[0], 4, headers={"x-api-key": key})[0] == 200
        error_of(*chat(s, "corrupt", PROMPTS[0], 4, headers=good), 503, "model_load_failed")
        error_of(*chat(s, "truncated", PROMPTS[0], 4, headers=good), 503, "model_load_failed")
        texts = {"/v1/models": s.request("GET", "/v1/models", headers=good)[1].decode(),
                 "/metrics": s.request("GET", "/metrics", headers=good)[1].decode()}
        assert "failed" in texts["/v1/models"]
        forbidden = ["/root", os.path.expanduser("~"), ".gguf", str(mdir), mdir.name, MODELS_DIR,
                     os.path.realpath(smol), str(tmp_path), "/tmp/"]
        leaks = [f"{route} shows {bad!r}: ...{text[max(0, text.find(bad) - 120):text.find(bad) + 120]}..."
                 for route, text in texts.items() for bad in forbidden if bad in text]
        assert not leaks, "\n".join(leaks)
        assert call(s, "POST", "/models/unload", {"model": "smol"}, headers=good)[0] == 200


# ---- 6. hostile model directories, a model over the memory budget ------------------------------------------

def test_hostile_models_dir(ridge_bin, reference, tmp_path):
    smol = model_path("smol")
    d = tmp_path / "zoo"
    d.mkdir()
    os.symlink(smol, d / "smol.gguf")
    os.symlink(d, d / "loop")                                   # a symlink loop: zoo/loop -> zoo
    os.symlink(d / "loop", d / "loop2.gguf")                    # a *.gguf that is a directory, through the loop
    (d / "x.gguf").write_text("this is a text file, not a model\n" * 100)
    (d / "empty.gguf").write_bytes(b"")
    os.symlink(tmp_path / "nowhere.gguf", d / "dangling.gguf")  # a dangling symlink
    (d / "dir.gguf").mkdir()                                    # a directory named like a model file
    garbage = d / "garbage"                                     # a directory that looks like sentence-transformers
    garbage.mkdir()
    rng = random.Random(6)
    (garbage / "config.json").write_text('{"model_type": "bert", "hidden_size": -7, ')
    (garbage / "modules.json").write_bytes(rng.randbytes(300))
    (garbage / "model.safetensors").write_bytes(rng.randbytes(1 << 16))
    (garbage / "tokenizer.json").write_text("[[[")
    (d / "notes.txt").write_text("not a model and not *.gguf\n")

    with router(ridge_bin, {}, "--models-dir", str(d)) as s:
        listed = models(s)
        assert {"smol", "x", "empty"} <= set(listed), listed
        assert "notes" not in listed and "notes.txt" not in listed, listed
        for name, entry in listed.items():
            assert state(entry) == "unloaded", entry  # a file that is not a model fails only when loaded
        assert answer(s, "smol", PROMPTS[0]) == reference["smol"][(PROMPTS[0], 24)]
        broken = [name for name in listed if name not in ("smol", "default")]
        for name in broken:
            status, body = chat(s, name, PROMPTS[0], 4, timeout=60)
            err = error_of(status, body, 503, "model_load_failed")
            entry = models(s)[name]
            assert state(entry) == "failed" and entry["status"].get("error"), entry
            assert entry["status"]["error"] in err["message"], (err, entry)
        assert s.proc.poll() is None
        assert answer(s, "smol", PROMPTS[0]) == reference["smol"][(PROMPTS[0], 24)]

        # A rescan finds a new file, keeps what is loaded, and survives the loop again.
        os.symlink(smol, d / "smol2.gguf")
        rescanned = models(s, query="?reload=1")
        assert "smol2" in rescanned and state(rescanned["smol"]) == "loaded", rescanned
        assert set(listed) <= set(rescanned), rescanned
        assert answer(s, "smol2", PROMPTS[0]) == reference["smol"][(PROMPTS[0], 24)]
        for name in broken:
            assert state(models(s)[name]) == "failed"


NUMBER = re.compile(r"(\d+(?:[.,]\d+)*)\s*(bytes|byte|B|KiB|MiB|GiB|KB|MB|GB|kB)?\b")
UNITS = {None: 1, "bytes": 1, "byte": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
         "KB": 1000, "kB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3}


def byte_counts(message):
    return [float(n.replace(",", "")) * UNITS[u] for n, u in NUMBER.findall(message)]


def test_model_over_the_memory_budget(ridge_bin, reference):
    paths = {key: model_path(key) for key in ("smol", "qwen")}
    budget = 250 << 20  # the default model (98 MB of weights + 64 MiB of KV) fits; Qwen 0.5B (491 MB) does not
    with router(ridge_bin, paths, "--models-memory", "250MiB") as s:
        assert answer(s, "smol", PROMPTS[0]) == reference["smol"][(PROMPTS[0], 24)]
        for attempt in ("chat", "load"):
            if attempt == "chat":
                status, body = chat(s, "qwen", PROMPTS[0], 4, timeout=60)
            else:
                status, body = call(s, "POST", "/models/load", {"model": "qwen"}, timeout=60)
            err = error_of(status, body, 503, "model_exceeds_memory_budget")
            counts = byte_counts(err["message"])
            assert any(abs(c - budget) <= 0.05 * budget for c in counts), f"the budget is not in {err['message']!r}"
            assert any(c >= 0.9 * os.path.getsize(paths["qwen"]) for c in counts), \
                f"the model's size is not in {err['message']!r}"
        listed = models(s)
        assert state(listed["smol"]) == "loaded", listed  # nothing was evicted for a model that cannot fit
        assert state(listed["qwen"]) != "loaded", listed
        assert answer(s, "smol", PROMPTS[1]) == reference["smol"][(PROMPTS[1], 24)]
        m = metric_samples(s)
        assert metric(m, "ridge:model_evictions_total") in (None, 0)
        assert metric(m, "ridge:model_loads_total", model_name="qwen") in (None, 0)


# ---- 7. metrics per model ------------------------------------------------------------------------------

ENGINE_METRICS = ["ridge:request_success_total", "ridge:generation_tokens_total", "ridge:prompt_tokens_total",
                  "ridge:num_requests_running", "ridge:num_requests_waiting", "ridge:kv_cache_usage_perc"]


def test_metrics_per_model(ridge_bin):
    paths = {key: model_path(key) for key in CHAT_MODELS}
    with router(ridge_bin, paths, "--alias", "smol=tiny,small") as s:
        assert models(s)["smol"]["aliases"] == ["tiny", "small"], models(s)["smol"]
        usage = {"smol": [], "gemma": []}
        for key in usage:
            status, body = chat(s, key, PROMPTS[0], 12)
            assert status == 200, body
            usage[key].append(body["usage"])
            # The alias reaches the same model; its metrics are the model's.
            r = stream_chat(s, chat_body("tiny" if key == "smol" else key, PROMPTS[1], 10))
            assert r.status == 200 and r.done and r.usage, vars(r)
            usage[key].append(r.usage)
        m = metric_samples(s)
        for name in ENGINE_METRICS:
            unlabeled = [x for x in m if x[0] == name and "model_name" not in x[1]]
            assert not unlabeled, f"{name} without model_name: {unlabeled}"
            for key in usage:
                assert metric(m, name, model_name=key) is not None, f"no {name}{{model_name=\"{key}\"}}"
        for key, us in usage.items():
            assert metric(m, "ridge:request_success_total", model_name=key) == 2, key
            assert metric(m, "ridge:generation_tokens_total", model_name=key) == sum(u["completion_tokens"] for u in us)
            assert metric(m, "ridge:prompt_tokens_total", model_name=key) == sum(u["prompt_tokens"] for u in us)
            assert metric(m, "ridge:model_loads_total", model_name=key) == 1
            assert metric(m, "ridge:model_loaded", model_name=key) == 1
            assert metric(m, "ridge:model_load_seconds_total", model_name=key) > 0
            assert metric(m, "ridge:model_unloads_total", model_name=key) in (None, 0)
            assert metric(m, "ridge:model_evictions_total", model_name=key) in (None, 0)
        assert metric(m, "ridge:model_loads_total", model_name="qwen") in (None, 0)
        assert metric(m, "ridge:model_loaded", model_name="qwen") in (None, 0)
        assert metric(m, "ridge:request_success_total", model_name="qwen") in (None, 0)
