"""`ridge serve` on the default model through the official `openai` Python client: completions and chat,
whole and streamed, n > 1, stop strings, logprobs, usage, stream_options, the models list, and the text
itself (greedy output equals `ridge run`'s, seeded sampling repeats).

Every response is checked twice against the client's types: the client builds its objects without
validating them, so `strict` validates what the server sent (pydantic raises on a missing field or a
wrong type)."""
import json
import subprocess

import openai
import pytest
from openai.types import Completion, Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from serve_fixture import running_server

PROMPT = "The capital of France is"
CHAT_QUESTION = "Reply with one word: yes or no. Is the sky blue?"


@pytest.fixture(scope="module")
def server(ridge_bin, default_model):
    with running_server(ridge_bin, default_model) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def model_id(client):
    return client.models.list().data[0].id


def strict(obj):
    """The object validated against its own type from exactly the fields the server sent."""
    return type(obj).model_validate(obj.model_dump(exclude_unset=True, warnings=False))


def strict_chunk(chunk):
    data = chunk.model_dump(exclude_unset=True, warnings=False)
    if isinstance(chunk, Completion):
        # Streamed legacy completions reuse the Completion type, whose finish_reason is not nullable,
        # yet OpenAI's own API (and vLLM) send null until a choice ends: validate the rest.
        for choice in data.get("choices", []):
            assert "finish_reason" in choice
            if choice["finish_reason"] is None:
                choice["finish_reason"] = "stop"
        Completion.model_validate(data)
        return chunk
    return type(chunk).model_validate(data)


def strict_stream(stream):
    chunks = [strict_chunk(c) for c in stream]
    assert chunks, "empty stream"
    return chunks


def ridge_run(ridge_bin, model, *args):
    out = subprocess.run([ridge_bin, "run", "-m", model, "-t", "2", "-c", "2048", "--json", *args],
                         check=True, capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout)


def ridge_tokenize(ridge_bin, model, text):
    out = subprocess.run([ridge_bin, "tokenize", "-m", model, "-p", text, "--ids-only"],
                         check=True, capture_output=True, text=True, timeout=60)
    return [int(t) for t in out.stdout.split()]


def greedy_completion(client, model_id, prompt, n_tokens, **kwargs):
    return strict(client.completions.create(model=model_id, prompt=prompt, max_tokens=n_tokens, temperature=0,
                                            extra_body={"ignore_eos": True}, **kwargs))


# ---- models -----------------------------------------------------------------------------------

def test_models_list(client, default_model):
    page = client.models.list()
    models = [strict(m) for m in page.data]
    assert len(models) == 1
    m = models[0]
    assert isinstance(m, Model)
    assert m.id == "SmolLM2-135M-Instruct.Q4_1"  # the file name without .gguf
    assert m.object == "model" and m.owned_by == "ridge" and m.created > 0
    assert m.model_extra.get("max_model_len") == 2048
    assert strict(client.models.retrieve(m.id)).id == m.id
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-model")


# ---- greedy output against `ridge run` ----------------------------------------------------------

def test_greedy_completion_equals_ridge_run(client, model_id, ridge_bin, default_model):
    n = 16
    first = greedy_completion(client, model_id, PROMPT, n)
    second = greedy_completion(client, model_id, PROMPT, n)
    assert isinstance(first, Completion) and first.object == "text_completion"
    assert first.model == model_id and first.id.startswith("cmpl-") and first.id != second.id
    assert len(first.choices) == 1 and first.choices[0].index == 0
    assert first.choices[0].finish_reason == "length"
    assert first.choices[0].text == second.choices[0].text  # temperature 0 is deterministic

    run = ridge_run(ridge_bin, default_model, "-p", PROMPT, "-n", str(n), "--ignore-eos")
    assert first.choices[0].text == run["text"]
    assert first.usage.completion_tokens == n == len(run["tokens"])
    assert first.usage.prompt_tokens == run["prompt_tokens"] == len(ridge_tokenize(ridge_bin, default_model, PROMPT))
    assert first.usage.total_tokens == first.usage.prompt_tokens + n


def test_greedy_chat_equals_ridge_run_chat(client, model_id, ridge_bin, default_model):
    messages = [{"role": "user", "content": CHAT_QUESTION}]
    a = strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=32, temperature=0))
    b = strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=32, temperature=0))
    assert isinstance(a, ChatCompletion) and a.object == "chat.completion" and a.id.startswith("chatcmpl-")
    assert a.choices[0].message.role == "assistant"
    assert a.choices[0].message.content == b.choices[0].message.content

    run = ridge_run(ridge_bin, default_model, "--chat", "-p", CHAT_QUESTION, "-n", "32")
    assert a.choices[0].message.content == run["text"]
    assert a.choices[0].finish_reason == run["finish_reason"]
    assert a.usage.prompt_tokens == run["prompt_tokens"]
    assert a.usage.completion_tokens == len(run["tokens"])


def test_usage_prompt_tokens_equal_the_tokenizer(client, model_id, ridge_bin, default_model):
    for prompt in ["Hello world", "Grüße aus München 🌍 — ça va?", "def f(x):\n    return x  # <|im_start|>"]:
        r = strict(client.completions.create(model=model_id, prompt=prompt, max_tokens=2, temperature=0,
                                             extra_body={"ignore_eos": True}))
        assert r.usage.prompt_tokens == len(ridge_tokenize(ridge_bin, default_model, prompt)), prompt
        assert r.usage.completion_tokens == 2
        assert r.usage.total_tokens == r.usage.prompt_tokens + 2
    # Token ids as the prompt: counted as given.
    ids = ridge_tokenize(ridge_bin, default_model, PROMPT)
    r = strict(client.completions.create(model=model_id, prompt=ids, max_tokens=4, temperature=0,
                                         extra_body={"ignore_eos": True}))
    assert r.usage.prompt_tokens == len(ids)
    assert r.choices[0].text == greedy_completion(client, model_id, PROMPT, 4).choices[0].text


def test_tokenize_routes_equal_ridge_tokenize(server, ridge_bin, default_model):
    for text in ["Hello world", "Grüße aus München 🌍 — ça va?", "<|im_start|>user\nhi<|im_end|>"]:
        want = ridge_tokenize(ridge_bin, default_model, text)
        status, body = server.request("POST", "/tokenize", {"prompt": text, "return_token_strs": True})
        assert status == 200, body
        r = json.loads(body)
        assert r["tokens"] == want and r["count"] == len(want), text
        assert len(r["token_strs"]) == len(want)
        status, body = server.request("POST", "/tokenize", {"content": text, "add_special": False})
        plain = json.loads(body)["tokens"]
        assert plain == [int(t) for t in subprocess.run(
            [ridge_bin, "tokenize", "-m", default_model, "-p", text, "--ids-only", "--no-special"],
            check=True, capture_output=True, text=True).stdout.split()]
        status, body = server.request("POST", "/detokenize", {"tokens": plain})
        assert status == 200, body
        assert json.loads(body)["prompt"] == text


# ---- streaming ----------------------------------------------------------------------------------

def test_streamed_completion_equals_whole(client, model_id):
    n = 12
    whole = greedy_completion(client, model_id, PROMPT, n)
    chunks = strict_stream(client.completions.create(model=model_id, prompt=PROMPT, max_tokens=n, temperature=0,
                                                     stream=True, stream_options={"include_usage": True},
                                                     extra_body={"ignore_eos": True}))
    usage_chunk, token_chunks = chunks[-1], chunks[:-1]
    assert usage_chunk.choices == [] and usage_chunk.usage is not None
    assert all(c.usage is None for c in token_chunks)
    assert all(isinstance(c, Completion) and c.id == chunks[0].id for c in chunks)
    assert all(len(c.choices) == 1 and c.choices[0].index == 0 for c in token_chunks)
    text_chunks = [c for c in token_chunks if c.choices[0].text]
    # One token per chunk (the text is ASCII, so no token's bytes wait for the next one).
    assert len(text_chunks) == n == usage_chunk.usage.completion_tokens
    assert "".join(c.choices[0].text for c in token_chunks) == whole.choices[0].text
    finishes = [c.choices[0].finish_reason for c in token_chunks if c.choices[0].finish_reason]
    assert finishes == ["length"] and token_chunks[-1].choices[0].finish_reason == "length"
    assert usage_chunk.usage.prompt_tokens == whole.usage.prompt_tokens
    assert usage_chunk.usage.total_tokens == whole.usage.prompt_tokens + n


def test_streamed_chat_n2(client, model_id):
    messages = [{"role": "user", "content": CHAT_QUESTION}]
    whole = strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=8, temperature=0, n=2))
    assert [c.index for c in whole.choices] == [0, 1]
    chunks = strict_stream(client.chat.completions.create(model=model_id, messages=messages, max_tokens=8, temperature=0,
                                                          n=2, stream=True, stream_options={"include_usage": True}))
    assert all(isinstance(c, ChatCompletionChunk) and c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    texts, roles, finishes = {0: "", 1: ""}, {0: [], 1: []}, {0: [], 1: []}
    for c in chunks[:-1]:
        assert c.usage is None and len(c.choices) == 1
        ch = c.choices[0]
        if ch.delta.role:
            roles[ch.index].append(ch.delta.role)
        texts[ch.index] += ch.delta.content or ""
        if ch.finish_reason:
            finishes[ch.index].append(ch.finish_reason)
    # Each choice opens with its role before any content and ends with one finish reason.
    first_of = {i: next(c for c in chunks if c.choices and c.choices[0].index == i) for i in (0, 1)}
    assert all(first_of[i].choices[0].delta.role == "assistant" for i in (0, 1))
    assert roles == {0: ["assistant"], 1: ["assistant"]}
    for i in (0, 1):
        assert texts[i] == whole.choices[i].message.content  # greedy: both equal the whole response's
        assert finishes[i] == [whole.choices[i].finish_reason]
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert chunks[-1].usage.prompt_tokens == whole.usage.prompt_tokens


def test_stream_options_include_usage(client, model_id):
    for endpoint in ("completions", "chat"):
        def create(**kw):
            if endpoint == "completions":
                return client.completions.create(model=model_id, prompt=PROMPT, max_tokens=5, temperature=0,
                                                 stream=True, extra_body={"ignore_eos": True}, **kw)
            return client.chat.completions.create(model=model_id, messages=[{"role": "user", "content": "Hi"}],
                                                  max_tokens=5, temperature=0, stream=True,
                                                  extra_body={"ignore_eos": True}, **kw)

        plain = strict_stream(create())
        assert all(c.usage is None for c in plain), endpoint
        assert all(len(c.choices) == 1 for c in plain), endpoint  # no usage-only chunk

        with_usage = strict_stream(create(stream_options={"include_usage": True}))
        assert [i for i, c in enumerate(with_usage) if c.usage is not None] == [len(with_usage) - 1], endpoint
        last = with_usage[-1]
        assert last.choices == [] and last.usage.completion_tokens == 5, endpoint
        assert last.usage.total_tokens == last.usage.prompt_tokens + 5, endpoint
    # stream_options without stream is refused.
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model=model_id, prompt=PROMPT, max_tokens=2, stream_options={"include_usage": True})


# ---- n > 1 and seeds ------------------------------------------------------------------------------

def test_n_choices_have_indices_and_distinct_seeds(client, model_id):
    kwargs = dict(model=model_id, prompt="Once upon a time", max_tokens=16, temperature=1.0, n=4, seed=1234,
                  extra_body={"ignore_eos": True})
    a = strict(client.completions.create(**kwargs))
    assert [c.index for c in a.choices] == [0, 1, 2, 3]
    texts = [c.text for c in a.choices]
    assert all(texts) and all(c.finish_reason == "length" for c in a.choices)
    assert len(set(texts)) >= 3, texts  # each choice draws with its own seed
    assert a.usage.completion_tokens == 4 * 16
    assert a.usage.prompt_tokens == strict(client.completions.create(model=model_id, prompt="Once upon a time",
                                                                      max_tokens=1)).usage.prompt_tokens
    b = strict(client.completions.create(**kwargs))
    assert [c.text for c in b.choices] == texts  # the same seed, the same choices

    chat = strict(client.chat.completions.create(model=model_id, messages=[{"role": "user", "content": "Tell me a story."}],
                                                 max_tokens=12, temperature=1.0, n=3, seed=99,
                                                 extra_body={"ignore_eos": True}))
    assert [c.index for c in chat.choices] == [0, 1, 2]
    assert len({c.message.content for c in chat.choices}) >= 2
    assert chat.usage.completion_tokens == 3 * 12


def test_seeded_sampling_is_reproducible(client, model_id):
    def sample(seed, stream=False):
        kw = dict(model=model_id, messages=[{"role": "user", "content": "Write a short poem about rivers."}],
                  max_tokens=20, temperature=0.9, top_p=0.95, seed=seed, extra_body={"ignore_eos": True})
        if stream:
            return "".join(c.choices[0].delta.content or "" for c in strict_stream(
                client.chat.completions.create(stream=True, **kw)) if c.choices)
        return strict(client.chat.completions.create(**kw)).choices[0].message.content

    first = sample(7)
    assert sample(7) == first
    assert sample(7, stream=True) == first  # streaming does not change what is drawn
    others = {sample(s) for s in (8, 9, 10)}
    assert others - {first}, "different seeds all gave the same text"

    completion = lambda seed: strict(client.completions.create(model=model_id, prompt="Once upon a time", max_tokens=16,
                                                               temperature=0.8, seed=seed,
                                                               extra_body={"ignore_eos": True})).choices[0].text
    assert completion(5) == completion(5)


# ---- stop strings -----------------------------------------------------------------------------------

def test_stop_strings(client, model_id):
    full = greedy_completion(client, model_id, PROMPT, 16).choices[0].text
    words = full.split()
    assert len(words) >= 5, full
    stop = words[3]
    expected = full[:full.index(stop)]

    r = greedy_completion(client, model_id, PROMPT, 16, stop=stop)
    assert r.choices[0].text == expected and stop not in r.choices[0].text
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.completion_tokens < 16

    # Several stop strings: the earliest match in the text ends it.
    later = words[4]
    r = greedy_completion(client, model_id, PROMPT, 16, stop=[later, stop])
    assert r.choices[0].text == full[:min(full.index(stop), full.index(later))]

    # Streamed: no piece of the stop string is sent before the match is known.
    chunks = strict_stream(client.completions.create(model=model_id, prompt=PROMPT, max_tokens=16, temperature=0,
                                                     stop=[stop], stream=True, extra_body={"ignore_eos": True}))
    assert "".join(c.choices[0].text for c in chunks) == expected
    assert chunks[-1].choices[0].finish_reason == "stop"

    # Chat as well.
    messages = [{"role": "user", "content": "Describe the city of Paris in one sentence."}]
    chat_full = strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=24,
                                                      temperature=0)).choices[0].message.content
    chat_words = chat_full.split()
    assert len(chat_words) >= 4, chat_full
    chat_stop = chat_words[2]
    cut = strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=24, temperature=0,
                                                stop=chat_stop))
    assert cut.choices[0].message.content == chat_full[:chat_full.index(chat_stop)]
    assert cut.choices[0].finish_reason == "stop"


# ---- logprobs -----------------------------------------------------------------------------------------

def test_completion_logprobs(client, model_id, ridge_bin, default_model):
    n, k = 6, 3
    r = greedy_completion(client, model_id, PROMPT, n, logprobs=k)
    choice = r.choices[0]
    lp = choice.logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == n
    assert "".join(lp.tokens) == choice.text
    assert lp.text_offset == [sum(len(t) for t in lp.tokens[:i]) for i in range(n)]
    for token, logprob, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert logprob <= 0
        assert k <= len(top) <= k + 1 and top[token] == logprob  # the alternatives and the sampled token
        assert logprob == max(top.values())  # greedy: the sampled token is the most likely
    run = ridge_run(ridge_bin, default_model, "-p", PROMPT, "-n", str(n), "--ignore-eos")
    assert lp.token_logprobs == pytest.approx(run["logprobs"], abs=1e-4)

    # Streamed: one token's logprobs per chunk, as many as completion tokens.
    chunks = strict_stream(client.completions.create(model=model_id, prompt=PROMPT, max_tokens=n, temperature=0, logprobs=2,
                                                     stream=True, stream_options={"include_usage": True},
                                                     extra_body={"ignore_eos": True}))
    streamed = [c.choices[0].logprobs for c in chunks if c.choices and c.choices[0].logprobs]
    assert sum(len(x.tokens) for x in streamed) == n == chunks[-1].usage.completion_tokens
    assert [t for x in streamed for t in x.token_logprobs] == pytest.approx(lp.token_logprobs, abs=1e-6)
    assert all(2 <= len(top) <= 3 for x in streamed for top in x.top_logprobs)

    assert greedy_completion(client, model_id, PROMPT, 2).choices[0].logprobs is None  # not asked for


def test_chat_logprobs(client, model_id):
    messages = [{"role": "user", "content": CHAT_QUESTION}]
    r = strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=8, temperature=0,
                                              logprobs=True, top_logprobs=2))
    choice = r.choices[0]
    content = choice.logprobs.content
    assert len(content) == r.usage.completion_tokens > 0
    for entry in content:
        assert entry.logprob <= 0
        assert entry.bytes == list(entry.token.encode())
        assert len(entry.top_logprobs) == 2
        assert entry.top_logprobs[0].logprob >= entry.top_logprobs[1].logprob
        assert entry.top_logprobs[0].token == entry.token and entry.top_logprobs[0].logprob == entry.logprob  # greedy
    # The content is the tokens' text; an end-of-generation token, if sampled, shows no text.
    assert "".join(e.token for e in content).startswith(choice.message.content)

    plain = strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=3, temperature=0,
                                                  logprobs=True))
    assert all(e.top_logprobs == [] for e in plain.choices[0].logprobs.content)
    assert strict(client.chat.completions.create(model=model_id, messages=messages, max_tokens=3)).choices[0].logprobs is None

    chunks = strict_stream(client.chat.completions.create(model=model_id, messages=messages, max_tokens=6, temperature=0,
                                                          logprobs=True, top_logprobs=1, stream=True,
                                                          stream_options={"include_usage": True},
                                                          extra_body={"ignore_eos": True}))
    entries = [e for c in chunks if c.choices and c.choices[0].logprobs for e in c.choices[0].logprobs.content]
    assert len(entries) == 6 == chunks[-1].usage.completion_tokens
    assert all(len(e.top_logprobs) == 1 for e in entries)
