"""The real Gemma 3 270M (architecture gemma3) against llama.cpp: tokenizer ids on the tokenizer
corpus, next-token distributions (mean KL < 0.01 nats, top-1 >= 97% over one prompt of more than
600 positions, past the 512-position sliding window), greedy continuations, and its chat format
rendered as llama.cpp renders Gemma's.
"""
import ctypes
import json
import os
import subprocess

import numpy as np
import pytest

llama_cpp = pytest.importorskip("llama_cpp")

from llama_oracle import LlamaOracle  # noqa: E402
from test_forward import NEAR_TIE, PROMPTS, first_difference, log_softmax, ridge_logits, tie_gap, tokenize  # noqa: E402
from test_tokenizer import CORPUS, MODES, TEXTS, ridge_jsonl  # noqa: E402


@pytest.fixture(scope="module")
def gemma_model():
    home = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
    path = os.path.join(home, "models", "gemma-3-270m-Q4_K_M.gguf")
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing: python3 tools/fetch_model.py gemma3-270m")
    return path


@pytest.fixture(scope="module")
def oracle(gemma_model):
    o = LlamaOracle(gemma_model, flash_attn=False)
    yield o
    o.close()


@pytest.fixture(scope="module")
def vocab(gemma_model):
    return llama_cpp.Llama(model_path=gemma_model, vocab_only=True, verbose=False)


@pytest.mark.parametrize("add_special,parse_special", MODES)
def test_token_ids_match_llama_cpp(ridge_bin, gemma_model, vocab, tmp_path, add_special, parse_special):
    lines = [{k: v for k, v in e.items() if k != "id"} | {"add_special": add_special, "parse_special": parse_special}
             for e in CORPUS]
    ours = [r["ids"] for r in ridge_jsonl(ridge_bin, gemma_model, lines, tmp_path)]
    bad = [(e["id"], ids[:16], vocab.tokenize(text, add_bos=add_special, special=parse_special)[:16])
           for e, text, ids in zip(CORPUS, TEXTS, ours)
           if ids != vocab.tokenize(text, add_bos=add_special, special=parse_special)]
    print(f"gemma3 add_special={add_special} parse_special={parse_special}: {len(CORPUS) - len(bad)}/{len(CORPUS)}")
    assert not bad, f"{len(bad)} texts differ, first: {bad[:3]}"


def distributions(ridge_bin, model, oracle, ids):
    ref = log_softmax(oracle.logits(ids))
    got = log_softmax(ridge_logits(ridge_bin, model, ids))
    kl = (np.exp(ref) * (ref - got)).sum(axis=1)
    return kl, int((ref.argmax(axis=1) == got.argmax(axis=1)).sum())


def test_next_token_distributions_match_llama_cpp(ridge_bin, gemma_model, oracle):
    # One prompt of every kind of text in the default model's test, long enough to run past the
    # sliding window (512 positions): its later positions see only the window in five layers of six.
    ids = tokenize(oracle, " ".join(PROMPTS) + " " + PROMPTS[0])
    kl, top1 = distributions(ridge_bin, gemma_model, oracle, ids)
    mean_kl, agree = float(np.mean(kl)), top1 / len(ids)
    print(f"\ngemma3: positions={len(ids)} mean_kl={mean_kl:.6f} max_kl={kl.max():.6f} top1={agree:.4f}; "
          f"past the window mean KL {float(np.mean(kl[512:])):.6f}")
    assert len(ids) > 600
    assert mean_kl < 0.01
    assert agree >= 0.97


@pytest.mark.parametrize("prompt", ["The capital of France is", "def fibonacci(n):\n", "Once upon a time"])
def test_greedy_continuation_matches_llama_cpp(ridge_bin, gemma_model, oracle, prompt):
    """Identical, or departing only where llama.cpp's own top two logits are a near-tie (a rounding
    difference flips those; a real error departs where llama.cpp clearly prefers its token)."""
    ids = tokenize(oracle, prompt)
    expected = oracle.greedy(ids, 32)
    run = subprocess.run([ridge_bin, "run", "-m", gemma_model, "--tokens", ",".join(map(str, ids)), "-n", "32",
                          "--ignore-eos", "--json"], check=True, capture_output=True, text=True)
    got = json.loads(run.stdout)["tokens"]
    gap = tie_gap(oracle, ids, expected, got)
    print(f"\n{prompt!r}: first difference {first_difference(expected, got)}, llama.cpp's margin there {gap}")
    assert gap is None or abs(gap) <= NEAR_TIE


def test_chat_format_renders_as_llama_cpp_renders_gemma(ridge_bin, gemma_model):
    messages = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "What is 2+2?"}]
    ours = subprocess.run([ridge_bin, "chat-template", "-m", gemma_model, "--chat-template", "gemma"],
                          input=json.dumps({"messages": messages}).encode(), check=True, capture_output=True).stdout.decode()
    chat = (llama_cpp.llama_chat_message * len(messages))()
    keep = []
    for i, m in enumerate(messages):
        keep += [m["role"].encode(), m["content"].encode()]
        chat[i].role, chat[i].content = keep[-2], keep[-1]
    buf = ctypes.create_string_buffer(4096)
    n = llama_cpp.llama_chat_apply_template(b"gemma", chat, len(messages), True, buf, len(buf))
    assert 0 < n < len(buf)
    assert ours == buf.raw[:n].decode()
