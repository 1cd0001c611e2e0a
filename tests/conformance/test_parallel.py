"""A model split across MPI ranks (--tp / --pp, started by mpirun) computes what one process computes:
next-token distributions within KL 1e-4 of the single process, greedy continuations identical, on the
default model and on a synthetic 1.1B Llama; and the engine's batching, prompt chunking, preemption and
prefix cache give the single process's outputs under TP=2 and PP=2. Four ranks (TP=2 x PP=2) share the
two cores, one thread each."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from test_batch import N, PROMPTS
from test_forward import log_softmax

LAYOUTS = {"tp2": (2, ["--tp", "2"]), "pp2": (2, ["--pp", "2"]), "tp2pp2": (4, ["--tp", "2", "--pp", "2"])}
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def mpirun(n):
    path = shutil.which("mpirun")
    assert path, "mpirun not found: tools/setup_deps.sh installs openmpi-bin"
    return [path, "-np", str(n), "--bind-to", "none"]


def run(cmd, timeout=600):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


def logits(ridge_bin, model, ids, tmp_path, layout=None):
    out = tmp_path / f"logits-{layout or 'one'}.bin"
    prefix, flags = ([], []) if layout is None else (mpirun(LAYOUTS[layout][0]), LAYOUTS[layout][1])
    run([*prefix, ridge_bin, "logits", "-m", model, "--tokens", ",".join(map(str, ids)), "-o", str(out), *flags])
    return np.fromfile(out, dtype=np.float32).reshape(len(ids), -1).astype(np.float64)


def greedy(ridge_bin, model, prompt, layout=None, n=32):
    prefix, flags = ([], ["-t", "2"]) if layout is None else (mpirun(LAYOUTS[layout][0]), [*LAYOUTS[layout][1], "-t", "1"])
    proc = run([*prefix, ridge_bin, "run", "-m", model, "-p", prompt, "-n", str(n), "--ignore-eos", "--json", *flags])
    return json.loads(proc.stdout.splitlines()[0])["tokens"]


@pytest.fixture(scope="module")
def synthetic(ridge_bin, tmp_path_factory):
    path = tmp_path_factory.mktemp("parallel") / "tinyllama-1.1b.Q4_0.gguf"
    run([ridge_bin, "synth", "tinyllama-1.1b", "-t", "Q4_0", "--std", "0.05", "-o", str(path)])
    return str(path)


@pytest.fixture(scope="module")
def models(default_model, synthetic):
    return {"default": default_model, "synthetic-1.1b": synthetic}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("model", ["default", "synthetic-1.1b"])
def test_next_token_distributions_match_one_process(ridge_bin, models, tmp_path, layout, model):
    rng = np.random.default_rng(5)
    ids = [int(t) for t in rng.integers(3, 30000, 48)]
    one = log_softmax(logits(ridge_bin, models[model], ids, tmp_path))
    split = log_softmax(logits(ridge_bin, models[model], ids, tmp_path, layout))
    kl = (np.exp(one) * (one - split)).sum(axis=1)
    print(f"\n{model} {layout}: mean KL {kl.mean():.2e} max {kl.max():.2e}")
    assert kl.mean() < 1e-4
    assert (one.argmax(axis=1) == split.argmax(axis=1)).mean() >= 0.97


@pytest.mark.parametrize("layout,model", [("tp2", "default"), ("pp2", "default"), ("tp2pp2", "default"),
                                          ("tp2", "synthetic-1.1b")])
def test_greedy_continuations_are_identical(ridge_bin, models, layout, model):
    # The logits test above already finds every layout bit-identical on both models; this is the CLI path.
    prompts = ["The capital of France is", "def fibonacci(n):"][: 2 if model == "default" else 1]
    for prompt in prompts:
        assert greedy(ridge_bin, models[model], prompt, layout) == greedy(ridge_bin, models[model], prompt)


@pytest.fixture(scope="module")
def one_process():
    """One process's outputs by flags, computed once for both layouts."""
    return {}


def run_batch(ridge_bin, model, tmp_path, prompts, layout, *flags):
    req = tmp_path / "req.jsonl"
    req.write_text("".join(json.dumps({"id": i, "prompt": p, "max_tokens": N, "ignore_eos": True}) + "\n"
                           for i, p in enumerate(prompts)))
    out = tmp_path / f"out-{layout}.jsonl"
    prefix, threads = ([], "2") if layout is None else (mpirun(LAYOUTS[layout][0]), "1")
    extra = [] if layout is None else LAYOUTS[layout][1]
    proc = run([*prefix, ridge_bin, "batch", "-i", str(req), "-o", str(out), "-m", model, "-t", threads, "--json",
                *extra, *flags])
    summary = json.loads(proc.stderr[proc.stderr.index("{\n"):])
    return {r["id"]: r["text"] for r in map(json.loads, out.read_text().splitlines())}, summary


@pytest.mark.parametrize("layout", ["tp2", "pp2"])
@pytest.mark.parametrize("flags", [
    [],                                              # all together
    ["--max-batched-tokens", "5"],                   # prompts chunked, decodes interleaved
    ["--ctx-size", "64", "--kv-memory", "3MiB"],     # KV for ~2 sequences: preemption
], ids=["together", "chunked", "preempted"])
def test_engine_batches_as_one_process_does(ridge_bin, default_model, tmp_path, one_process, layout, flags):
    key = tuple(flags)
    if key not in one_process:
        one_process[key] = run_batch(ridge_bin, default_model, tmp_path, PROMPTS, None, *flags)[0]
    one = one_process[key]
    split, summary = run_batch(ridge_bin, default_model, tmp_path, PROMPTS, layout, *flags)
    assert split == one
    if "--kv-memory" in flags:
        assert summary["preemptions"] > 0


@pytest.mark.parametrize("layout", ["tp2", "pp2"])
def test_shared_prefix_is_served_from_the_cache(ridge_bin, default_model, tmp_path, layout):
    prompts = ["You are a helpful assistant who answers briefly and precisely. " * 8 + p for p in PROMPTS[:4]]
    one, _ = run_batch(ridge_bin, default_model, tmp_path, prompts, None, "--max-num-seqs", "1")
    split, summary = run_batch(ridge_bin, default_model, tmp_path, prompts, layout, "--max-num-seqs", "1")
    assert split == one
    assert summary["prefix_hit_tokens"] >= 3 * 80, summary


# Every architecture split across two MPI ranks, experts whole per rank (--ep 2) where it has them,
# and with data-parallel attention (all-to-all to the experts): rank 0's next-token logits are the
# single process's, bit for bit.
SPLIT_ARCHS = ["qwen3", "qwen3moe", "gemma3", "mixtral", "qwen2moe", "olmoe", "deepseek2-lite"]


@pytest.mark.parametrize("name", SPLIT_ARCHS)
def test_every_architecture_splits_exactly(ridge_bin, tmp_path, name):
    from test_synth import ARCHITECTURES, SMALL, synth
    args, dtype = ARCHITECTURES[name]
    path = synth(ridge_bin, tmp_path / f"{name}.gguf", *args, *SMALL, "-t", dtype, "--std", "0.3")
    ids = [int(t) for t in np.random.default_rng(2).integers(3, 512, 24)]
    one = logits(ridge_bin, path, ids, tmp_path)
    moe = "--n-expert" in args
    for layout, flags in [("tp2", ["--tp", "2"]), ("tp2ep", ["--tp", "2", "--ep", "2"]), ("pp2", ["--pp", "2"]),
                          ("dp2ep", ["--tp", "2", "--ep", "2", "--enable-dp-attention"])]:
        if layout in ("tp2ep", "dp2ep") and not moe:
            continue
        out = tmp_path / f"logits-{layout}.bin"
        run([*mpirun(2), ridge_bin, "logits", "-m", path, "--tokens", ",".join(map(str, ids)), "-o", str(out), *flags])
        split = np.fromfile(out, dtype=np.float32).reshape(len(ids), -1).astype(np.float64)
        assert np.array_equal(split, one), f"{name} {layout}: max difference {np.abs(split - one).max()}"
