"""Helix under mpirun (--helix N: every sequence's KV dealt out position by position over the N ranks of
the tensor-parallel group, attention over each rank's own positions, partial results merged in rank order).

- Against one process: on F32 synthetic models, a latent-attention one (DeepSeek-V2-Lite-shaped, MLA, its
  layers dense: a router's top-k would turn a last-bit difference into a different expert now and then,
  tests/dist/helix_forward_test.cc covers the MoE layers) and a GQA one with fewer KV heads than ranks, next-token KL < 1e-4 and identical greedy continuations at 2
  and 3 ranks. On the quantized default model the merge's other rounding is amplified by int8
  activations: mean KL within 1e-3, as TP's reduce mode (the figures are in the issue's note).
- Whatever the batch: the engine's outputs under --helix 2 are the same all together, with prompts
  chunked, with preemption and from the prefix cache (a token's bits never depend on its batch).
- Capacity: the memory plan holds twice the tokens at 2 ranks in the same per-rank KV memory."""
import json
import re

import numpy as np
import pytest

from test_batch import N, PROMPTS
from test_forward import log_softmax
from test_parallel import mpirun, run

IDS = [(i * 7919) % 900 + 20 for i in range(300)]


@pytest.fixture(scope="module")
def f32_models(ridge_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("helix")
    mla, gqa = d / "mla.F32.gguf", d / "gqa.F32.gguf"
    run([ridge_bin, "synth", "deepseek-v2-lite", "-t", "F32", "--std", "0.05", "-o", str(mla), "--n-embd", "256",
         "--n-layer", "3", "--n-head", "4", "--n-ff", "512", "--n-vocab", "1000", "--n-expert", "4", "--n-expert-used", "2",
         "--n-ff-expert", "128", "--n-shared-expert", "1", "--n-layer-dense-lead", "3", "--kv-lora-rank", "128",
         "--qk-rope-head-dim", "32", "--qk-nope-head-dim", "64", "--v-head-dim", "64", "--n-ctx", "4096"])
    run([ridge_bin, "synth", "qwen3-0.6b", "-t", "F32", "--std", "0.05", "-o", str(gqa), "--n-embd", "256",
         "--n-layer", "3", "--n-head", "8", "--n-head-kv", "1", "--head-dim", "64", "--n-ff", "512", "--n-vocab", "1000",
         "--n-ctx", "4096"])
    mla_q8 = d / "mla.Q8_0.gguf"
    run([ridge_bin, "synth", "deepseek-v2-lite", "-t", "Q8_0", "-o", str(mla_q8), "--n-embd", "512", "--n-layer", "4",
         "--n-head", "4", "--n-ff", "1024", "--n-vocab", "1000", "--n-expert", "4", "--n-expert-used", "2",
         "--n-ff-expert", "256", "--n-layer-dense-lead", "4", "--kv-lora-rank", "256", "--qk-rope-head-dim", "32",
         "--qk-nope-head-dim", "64", "--v-head-dim", "64", "--n-ctx", "4096"])
    return {"mla": str(mla), "gqa": str(gqa), "mla-q8": str(mla_q8)}


def logits(ridge_bin, model, tmp_path, ranks=0):
    out = tmp_path / f"logits-{ranks}.bin"
    prefix = mpirun(ranks) if ranks else []
    flags = ["--helix", str(ranks)] if ranks else []
    run([*prefix, ridge_bin, "logits", "-m", model, "--tokens", ",".join(map(str, IDS)), "-o", str(out), *flags])
    return np.fromfile(out, dtype=np.float32).reshape(len(IDS), -1).astype(np.float64)


def kl_rows(p_logits, q_logits):
    lp, lq = log_softmax(p_logits), log_softmax(q_logits)
    return (np.exp(lp) * (lp - lq)).sum(axis=1)


def greedy(ridge_bin, model, ranks=0, n=24):
    prefix = mpirun(ranks) if ranks else []
    flags = ["--helix", str(ranks), "-t", "1"] if ranks else ["-t", "2"]
    proc = run([*prefix, ridge_bin, "run", "-m", model, "-p", "Once upon a time", "-n", str(n), "--ignore-eos", "--json",
                *flags])
    return json.loads(proc.stdout.splitlines()[0])["tokens"]


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("model", ["mla", "gqa"])
def test_next_tokens_match_one_process(ridge_bin, f32_models, tmp_path, model, ranks):
    one = logits(ridge_bin, f32_models[model], tmp_path)
    helix = logits(ridge_bin, f32_models[model], tmp_path, ranks)
    kl = kl_rows(one, helix)
    print(f"\n{model} helix {ranks}: KL mean {kl.mean():.2e} max {kl.max():.2e}")
    assert kl.max() < 1e-4
    assert (one.argmax(1) == helix.argmax(1)).all()
    assert greedy(ridge_bin, f32_models[model], ranks) == greedy(ridge_bin, f32_models[model])


# A quantized latent-attention model: int8 activations see the merge's other rounding, still within KL 1e-4.
@pytest.mark.parametrize("ranks", [2, 3])
def test_quantized_mla_model_within_kl(ridge_bin, f32_models, tmp_path, ranks):
    one = logits(ridge_bin, f32_models["mla-q8"], tmp_path)
    kl = kl_rows(one, logits(ridge_bin, f32_models["mla-q8"], tmp_path, ranks))
    print(f"\nQ8_0 MLA helix {ranks}: KL mean {kl.mean():.2e} max {kl.max():.2e}")
    assert kl.max() < 1e-4


def test_quantized_default_model_stays_close(ridge_bin, default_model, tmp_path):
    one = logits(ridge_bin, default_model, tmp_path)
    helix = logits(ridge_bin, default_model, tmp_path, 2)
    kl = kl_rows(one, helix)
    print(f"\ndefault model helix 2: KL mean {kl.mean():.2e} max {kl.max():.2e}, "
          f"argmax agreement {(one.argmax(1) == helix.argmax(1)).mean():.3f}")
    assert kl.mean() < 1e-3 and kl.max() < 2e-2
    assert (one.argmax(1) == helix.argmax(1)).mean() > 0.9


def run_batch(ridge_bin, model, tmp_path, prompts, *flags):
    req = tmp_path / "req.jsonl"
    req.write_text("".join(json.dumps({"id": i, "prompt": p, "max_tokens": N, "ignore_eos": True}) + "\n"
                           for i, p in enumerate(prompts)))
    out = tmp_path / "out.jsonl"
    proc = run([*mpirun(2), ridge_bin, "batch", "-i", str(req), "-o", str(out), "-m", model, "-t", "1", "--json",
                "--helix", "2", *flags])
    summary = json.loads(proc.stderr[proc.stderr.index("{\n"):])
    return {r["id"]: r["text"] for r in map(json.loads, out.read_text().splitlines())}, summary, proc.stderr


def test_engine_outputs_do_not_depend_on_the_batch(ridge_bin, default_model, tmp_path):
    together, _, log = run_batch(ridge_bin, default_model, tmp_path, PROMPTS)
    chunked, _, _ = run_batch(ridge_bin, default_model, tmp_path, PROMPTS, "--max-batched-tokens", "5")
    assert chunked == together
    preempted, summary, _ = run_batch(ridge_bin, default_model, tmp_path, PROMPTS, "--ctx-size", "64",
                                      "--kv-memory", "1536KiB")
    assert summary["preemptions"] > 0, summary
    assert preempted == together
    # The default block of 16 positions per rank: 32 under --helix 2.
    assert re.search(r"blocks x 32 tokens", log), log[-3000:]


def test_shared_prefix_is_served_from_the_cache(ridge_bin, default_model, tmp_path):
    prompts = ["You are a helpful assistant who answers briefly and precisely. " * 8 + p for p in PROMPTS[:4]]
    alone = {}
    for i, p in enumerate(prompts):
        alone[i] = run_batch(ridge_bin, default_model, tmp_path, [p], "--no-prefix-caching")[0][0]
    cached, summary, _ = run_batch(ridge_bin, default_model, tmp_path, prompts, "--max-num-seqs", "1")
    assert cached == alone
    assert summary["prefix_hit_tokens"] >= 3 * 64, summary  # two full blocks of 32 positions each


def test_the_pool_holds_twice_the_tokens(ridge_bin, default_model, tmp_path):
    req = tmp_path / "one.jsonl"
    req.write_text(json.dumps({"id": 0, "prompt": "Hi", "max_tokens": 1}) + "\n")

    def pool_tokens(ranks=0):
        prefix = mpirun(ranks) if ranks else []
        flags = ["--helix", str(ranks)] if ranks else []
        proc = run([*prefix, ridge_bin, "batch", "-i", str(req), "-o", str(tmp_path / "out.jsonl"), "-m", default_model,
                    "--kv-memory", "24MiB", "--ctx-size", "256", "-t", "1", *flags])
        m = re.search(r"= (\d+) tokens =", proc.stderr)
        assert m, proc.stderr[-3000:]
        return int(m.group(1))
    one, helix = pool_tokens(), pool_tokens(2)
    print(f"\n24 MiB of KV per rank: {one} tokens in one process, {helix} under --helix 2")
    assert helix == 2 * one
