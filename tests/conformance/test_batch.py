"""`ridge batch` on the default model: greedy outputs equal `ridge run`'s, request by request,
whether the engine runs them together, chunks their prompts, preempts them for lack of KV space,
or serves a shared prefix from the cache; and every KV cache type stays close to f16."""
import json
import subprocess

import pytest

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):",
    "Once upon a time, in a small village by the sea,",
    "The three laws of thermodynamics are",
    "Translate to French: I like apples.",
    "List the planets of the solar system: Mercury,",
    "import numpy as np\nx = np.arange(10)\n",
    "The quick brown fox",
]
N = 24


def run_alone(ridge_bin, model, prompt):
    out = subprocess.run([ridge_bin, "run", "-m", model, "-p", prompt, "-n", str(N), "--ignore-eos", "--json", "-t", "2"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["text"]


def run_batch(ridge_bin, model, tmp_path, prompts, *flags):
    req = tmp_path / "req.jsonl"
    req.write_text("".join(json.dumps({"id": i, "prompt": p, "max_tokens": N, "ignore_eos": True}) + "\n"
                           for i, p in enumerate(prompts)))
    out = tmp_path / "out.jsonl"
    proc = subprocess.run([ridge_bin, "batch", "-i", str(req), "-o", str(out), "-m", model, "-t", "2", "--json", *flags],
                          check=True, capture_output=True, text=True)
    summary = json.loads(proc.stderr[proc.stderr.index("{\n"):])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return {r["id"]: r for r in rows}, summary


@pytest.fixture(scope="module")
def alone(ridge_bin, default_model):
    return {i: run_alone(ridge_bin, default_model, p) for i, p in enumerate(PROMPTS)}


@pytest.mark.parametrize("flags", [
    [],                                              # all together
    ["--max-batched-tokens", "5"],                   # prompts chunked, decodes interleaved
    ["--ctx-size", "64", "--kv-memory", "3MiB"],     # KV for ~2 sequences: preemption
], ids=["together", "chunked", "preempted"])
def test_batch_matches_single_runs(ridge_bin, default_model, tmp_path, alone, flags):
    got, summary = run_batch(ridge_bin, default_model, tmp_path, PROMPTS, *flags)
    for i in range(len(PROMPTS)):
        assert got[i]["text"] == alone[i], f"prompt {i} with {flags}"
        assert got[i]["usage"]["completion_tokens"] == N
    if "--kv-memory" in flags:
        assert summary["preemptions"] > 0
    print(flags, summary)


def test_shared_prefix_is_served_from_the_cache(ridge_bin, default_model, tmp_path, alone):
    system = "You are a helpful assistant who answers briefly and precisely. " * 8
    prompts = [system + p for p in PROMPTS]
    got, summary = run_batch(ridge_bin, default_model, tmp_path, prompts, "--max-num-seqs", "1")
    expect = {i: run_alone(ridge_bin, default_model, p) for i, p in enumerate(prompts[:3])}
    for i in expect:
        assert got[i]["text"] == expect[i]
    assert summary["prefix_hit_tokens"] >= 7 * 80, summary
    assert all(got[i]["usage"]["cached_tokens"] >= 80 for i in range(1, len(prompts)))


@pytest.mark.parametrize("dtype", ["bf16", "fp8", "int8"])
def test_other_kv_types_run(ridge_bin, default_model, tmp_path, alone, dtype):
    got, _ = run_batch(ridge_bin, default_model, tmp_path, PROMPTS, "--kv-dtype", dtype)
    same_start = sum(got[i]["text"][:12] == alone[i][:12] for i in range(len(PROMPTS)))
    assert same_start >= len(PROMPTS) // 2, f"{dtype}: {same_start} of {len(PROMPTS)} outputs start like f16's"
