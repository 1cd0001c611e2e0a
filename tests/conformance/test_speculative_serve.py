"""`ridge serve --speculative`: the speculation a user sees through the API. Greedy completions are the
same with prompt lookup, a draft model (here the default model drafting for itself, so the vocabularies
agree) and auto as without speculation; every response's usage carries its acceptance
(`usage.spec_decode`), and /metrics counts drafts under vLLM's names, per position included."""
import json

import pytest

from serve_fixture import running_server

# A prompt the model continues by repeating what it was given: prompt lookup finds its drafts there.
PROMPT = ("Repeat the list exactly.\nList: apple, river, stone, candle, window, garden, silver, music, "
          "paper, orange.\nRepeat: apple, river, stone, candle, window, garden, silver, music,")
MAX_TOKENS = 24


def complete(server):
    status, body = server.request("POST", "/v1/completions",
                                  {"prompt": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0, "ignore_eos": True})
    assert status == 200, body
    return json.loads(body)


@pytest.fixture(scope="module")
def plain(ridge_bin, default_model):
    with running_server(ridge_bin, default_model) as s:
        yield complete(s)


@pytest.mark.parametrize("mode", ["ngram", "draft", "auto"])
def test_speculation_keeps_greedy_output_and_reports_acceptance(ridge_bin, default_model, plain, mode):
    extra = ["--speculative", mode, "--num-speculative-tokens", "4"]
    if mode != "ngram":
        extra += ["--draft-model", default_model]
    with running_server(ridge_bin, default_model, *extra) as s:
        got = complete(s)
        metrics = s.metrics()
    assert got["choices"][0]["text"] == plain["choices"][0]["text"]
    assert got["usage"]["completion_tokens"] == MAX_TOKENS
    if mode == "auto":
        return  # auto may find that drafting does not pay on this machine; the output is what counts
    spec = got["usage"]["spec_decode"]
    assert spec["draft_tokens"] > 0
    assert 0 < spec["accepted_tokens"] <= spec["draft_tokens"]
    assert spec["acceptance_rate"] == pytest.approx(spec["accepted_tokens"] / spec["draft_tokens"])
    assert metrics["ridge:spec_decode_num_draft_tokens_total"] == spec["draft_tokens"]
    assert metrics["ridge:spec_decode_num_accepted_tokens_total"] == spec["accepted_tokens"]
    assert metrics["ridge:spec_decode_num_drafts_total"] >= 1
    per_pos = {k: v for k, v in metrics.items() if k.startswith("ridge:spec_decode_num_accepted_tokens_per_pos_total")}
    assert per_pos and sum(per_pos.values()) == spec["accepted_tokens"]
