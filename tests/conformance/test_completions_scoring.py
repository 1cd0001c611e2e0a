"""What evaluation harnesses need from /v1/completions, end to end on the default model: `echo` with
log-probabilities over the prompt (the first token has none), vLLM's `prompt_logprobs`, a batch of
prompts sharing a context scored in one request (the same numbers as one request each), the prompt
log-probabilities against llama.cpp's logits (llama-cpp-python, every position), and
lm-evaluation-harness's local-completions model on a task defined on a local file
(tests/conformance/data/capitals.jsonl), its per-item log-likelihoods beside llama.cpp's."""
import json
import math
import pathlib
import sys

import pytest

from serve_fixture import running_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import lm_eval_task  # noqa: E402

CONTEXT = [504, 3575, 282, 4649, 314]  # "The capital of France is" in SmolLM2's vocabulary
CONTINUATIONS = [[7042], [3284, 30], [1169, 13, 378]]


@pytest.fixture(scope="module")
def server(ridge_bin, default_model):
    with running_server(ridge_bin, default_model) as s:
        yield s


def post(server, body):
    status, raw = server.request("POST", "/v1/completions", body)
    return status, json.loads(raw)


def test_echo_puts_the_prompt_before_the_completion(server):
    status, r = post(server, {"prompt": "The capital of France is", "max_tokens": 3, "temperature": 0, "logprobs": 2,
                              "echo": True})
    assert status == 200, r
    c = r["choices"][0]
    lp = c["logprobs"]
    assert c["text"].startswith("The capital of France is") and len(c["text"]) > len("The capital of France is")
    assert lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None
    assert len(lp["tokens"]) == 5 + 3 == len(lp["token_logprobs"]) == len(lp["text_offset"])
    assert "".join(lp["tokens"]) == c["text"]
    assert lp["text_offset"] == sorted(lp["text_offset"])
    assert all(x <= 0 for x in lp["token_logprobs"][1:])
    # The generated tokens' log-probabilities are those of the same request without echo.
    _, plain = post(server, {"prompt": "The capital of France is", "max_tokens": 3, "temperature": 0, "logprobs": 2})
    assert lp["token_logprobs"][5:] == plain["choices"][0]["logprobs"]["token_logprobs"]
    assert r["usage"]["prompt_tokens"] == 5


def test_vllm_prompt_logprobs(server):
    status, r = post(server, {"prompt": CONTEXT, "max_tokens": 1, "prompt_logprobs": 3})
    assert status == 200, r
    p = r["choices"][0]["prompt_logprobs"]
    assert len(p) == len(CONTEXT) and p[0] is None
    for token, entry in zip(CONTEXT[1:], p[1:]):
        assert str(token) in entry and entry[str(token)]["logprob"] <= 0
        assert 3 <= len(entry) <= 4  # the token and its three most likely alternatives (it may be one)
        ranks = sorted(e["rank"] for e in entry.values() if e["rank"] is not None)
        assert ranks == [1, 2, 3]


def test_a_batch_sharing_a_context_equals_one_request_each(server):
    prompts = [CONTEXT + c for c in CONTINUATIONS]
    status, batch = post(server, {"prompt": prompts, "max_tokens": 1, "temperature": 0, "logprobs": 1, "echo": True})
    assert status == 200, batch
    assert [c["index"] for c in batch["choices"]] == [0, 1, 2]
    assert batch["usage"]["prompt_tokens"] == sum(len(p) for p in prompts)
    for prompt, choice in zip(prompts, batch["choices"]):
        _, alone = post(server, {"prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": 1, "echo": True})
        assert choice["logprobs"]["token_logprobs"] == alone["choices"][0]["logprobs"]["token_logprobs"]
        assert choice["logprobs"]["tokens"] == alone["choices"][0]["logprobs"]["tokens"]


def test_scoring_requests_refused_with_reasons(server):
    assert post(server, {"prompt": "x", "echo": True, "stream": True})[0] == 400
    assert post(server, {"prompt": "x", "prompt_logprobs": 21})[0] == 400
    status, r = post(server, {"prompt": [[1, 2], [3, 99999999]], "echo": True})
    assert status == 400 and r["error"]["param"] == "prompt"
    status, r = post(server, {"prompt": "x", "logit_bias": {"99999999": 1}})
    assert status == 400 and r["error"]["param"] == "logit_bias"


# ---- against llama.cpp

@pytest.fixture(scope="module")
def tokenizer_dir(default_model, tmp_path_factory):
    return lm_eval_task.hf_tokenizer_dir(default_model, str(tmp_path_factory.mktemp("tok")))


def test_prompt_logprobs_agree_with_llama_cpp(server, default_model):
    np = pytest.importorskip("numpy")
    from llama_cpp import Llama
    llm = Llama(model_path=default_model, logits_all=True, n_ctx=256, n_threads=2, verbose=False)
    worst = 0.0
    for continuation in CONTINUATIONS:
        tokens = CONTEXT + continuation
        _, r = post(server, {"prompt": tokens, "max_tokens": 1, "logprobs": 0, "echo": True})
        ours = r["choices"][0]["logprobs"]["token_logprobs"][1:len(tokens)]
        llm.reset()
        llm.eval(tokens)
        logits = np.array(llm.scores[:len(tokens)], dtype=np.float64)
        for i in range(1, len(tokens)):
            row = logits[i - 1]
            ref = row[tokens[i]] - (row.max() + math.log(np.exp(row - row.max()).sum()))
            worst = max(worst, abs(ours[i - 1] - ref))
    # ridge's own int8 arithmetic, not llama.cpp's: 0.23 nats at most here (on tokens 11-17 nats unlikely),
    # a few hundredths on likely ones; an off-by-one position would be off by nats.
    assert worst < 0.5, f"largest per-token difference from llama.cpp: {worst:.4f} nats"


def test_lm_eval_harness_scores_like_llama_cpp(server, default_model, tokenizer_dir):
    name = json.loads(server.request("GET", "/v1/models")[1])["data"][0]["id"]
    acc, ours, _, n_items, docs = lm_eval_task.run_lm_eval(server.base_url, name, tokenizer_dir, limit=12, batch_size=4)
    assert n_items == 48
    ref, ref_acc, _ = lm_eval_task.llama_cpp_logliks(default_model, tokenizer_dir, docs)
    diffs = [abs(a - b) for x, y in zip(ours, ref) for a, b in zip(x, y)]
    # Not llama.cpp's arithmetic (see the README): 0.54 at most and 0.19 on average over all 50 questions.
    assert max(diffs) < 1.0 and sum(diffs) / len(diffs) < 0.3, f"max {max(diffs):.3f}, mean {sum(diffs) / len(diffs):.3f}"
    assert abs(acc - ref_acc) <= 1 / 12 + 1e-9  # at most one question decided differently
