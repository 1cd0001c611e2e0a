"""Anthropic's Messages API end to end through the official `anthropic` SDK against `ridge serve`:
messages.create and messages.stream (the stream's final message equals the events' sum and the
non-streamed answer), stop_sequences, a tool round trip (tool_use, then a tool_result the model
reads), count_tokens against the prompt the server runs, the SDK's typed errors for hostile input,
and x-api-key. Thinking: a synthetic model with DeepSeek-R1's real tokenizer and chat template
(tools/fetch_model.py deepseek-r1-vocab), its output forced by a grammar, read as reasoning and
answer in all three APIs: Chat Completions (reasoning_content), streamed and not, and Messages
(thinking blocks)."""
import json
import os
import pathlib
import subprocess

import anthropic
import openai
import pytest

from serve_fixture import running_server

HOME = pathlib.Path(os.environ.get("RIDGE_HOME") or pathlib.Path.home() / ".cache" / "ridge")
ROOT = pathlib.Path(__file__).resolve().parents[2]
ASK = [{"role": "user", "content": "What is the capital of France?"}]
WEATHER = {"name": "get_weather", "description": "Get the current weather in a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40}},
                            "required": ["city"], "additionalProperties": False}}


@pytest.fixture(scope="module")
def server(ridge_bin, default_model):
    with running_server(ridge_bin, default_model, "--api-key", "sekrit") as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    return anthropic.Anthropic(base_url=server.base_url, api_key="sekrit", max_retries=0, timeout=300)


@pytest.fixture(scope="module")
def model_id(server):
    return openai.OpenAI(base_url=server.api_url, api_key="sekrit").models.list().data[0].id


# Greedy decoding; this SDK no longer takes temperature as an argument, the API still does.
GREEDY = {"extra_body": {"temperature": 0}}


def text_of(message):
    return "".join(b.text for b in message.content if b.type == "text")


def test_create_and_stream_agree(client, model_id):
    m = client.messages.create(model=model_id, max_tokens=24, **GREEDY, messages=ASK)
    assert m.type == "message" and m.role == "assistant" and m.id.startswith("msg_")
    assert m.stop_reason in ("end_turn", "max_tokens")
    assert m.usage.input_tokens > 0 and 0 < m.usage.output_tokens <= 24
    text = text_of(m)
    assert text.strip()
    with client.messages.stream(model=model_id, max_tokens=24, **GREEDY, messages=ASK) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(pieces) == text_of(final) == text
    assert final.stop_reason == m.stop_reason
    assert final.usage.output_tokens == m.usage.output_tokens


def test_system_and_stop_sequences(client, model_id):
    base = client.messages.create(model=model_id, max_tokens=24, **GREEDY, system="Answer in one word.", messages=ASK)
    text = text_of(base)
    word = text.split()[0] if text.split() else None
    if not word:
        pytest.skip("the model's answer is empty")
    stopped = client.messages.create(model=model_id, max_tokens=24, **GREEDY, system="Answer in one word.",
                                     messages=ASK, stop_sequences=[word])
    assert stopped.stop_reason == "stop_sequence"
    assert stopped.stop_sequence == word
    assert text_of(stopped) == text[:text.index(word)]


def test_tool_round_trip(client, model_id):
    ask = [{"role": "user", "content": "What's the weather like in Paris today?"}]
    m = client.messages.create(model=model_id, max_tokens=64, **GREEDY, tools=[WEATHER],
                               tool_choice={"type": "any", "disable_parallel_tool_use": True}, messages=ask)
    assert m.stop_reason == "tool_use"
    calls = [b for b in m.content if b.type == "tool_use"]
    assert calls and calls[0].name == "get_weather" and isinstance(calls[0].input.get("city"), str)
    # Streamed, the tool_use block's input_json deltas add up to the same call.
    with client.messages.stream(model=model_id, max_tokens=64, **GREEDY, tools=[WEATHER],
                                tool_choice={"type": "any", "disable_parallel_tool_use": True}, messages=ask) as stream:
        final = stream.get_final_message()
    streamed = [b for b in final.content if b.type == "tool_use"]
    assert [(b.name, b.input) for b in streamed] == [(b.name, b.input) for b in calls]
    # The result goes back by the call's id; the model answers in text.
    follow = ask + [{"role": "assistant", "content": m.content},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0].id,
                                                  "content": "Sunny, 21 degrees"}]}]
    answer = client.messages.create(model=model_id, max_tokens=32, **GREEDY, tools=[WEATHER], messages=follow)
    assert answer.stop_reason in ("end_turn", "max_tokens", "tool_use")
    assert answer.content


def test_count_tokens_is_the_prompt_that_runs(client, model_id):
    counted = client.messages.count_tokens(model=model_id, system="Be brief.", messages=ASK)
    m = client.messages.create(model=model_id, max_tokens=1, system="Be brief.", messages=ASK)
    assert counted.input_tokens == m.usage.input_tokens > 0


def test_hostile_requests_are_typed_errors(client, server, model_id):
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=model_id, max_tokens=8, messages=[
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nope", "content": "x"}]}])
    assert "toolu_nope" in str(e.value)
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model=model_id, max_tokens=0, messages=ASK)
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model=model_id, max_tokens=8, messages=[{"role": "user", "content": [{"type": "nonsense"}]}])
    with pytest.raises(anthropic.NotFoundError):
        client.messages.create(model="claude-opus-9", max_tokens=8, messages=ASK)
    bad_key = anthropic.Anthropic(base_url=server.base_url, api_key="wrong", max_retries=0)
    with pytest.raises(anthropic.AuthenticationError):
        bad_key.messages.create(model=model_id, max_tokens=8, messages=ASK)
    status, body = server.request("POST", "/v1/messages", b"{not json", headers={"x-api-key": "sekrit"})
    assert status == 400 and json.loads(body)["type"] == "error"


# ---- Thinking: DeepSeek-R1's tokenizer and template on a random-weight model, output forced by a grammar.

THINKING = "Paris is the capital.\nSo: Paris."
ANSWER = "The capital of France is Paris."
FORCED = 'root ::= "<think>\\n" "' + THINKING.replace("\n", "\\n") + '" "\\n</think>\\n\\n" "' + ANSWER + '"'


@pytest.fixture(scope="module")
def thinking_server(ridge_bin, tmp_path_factory):
    vocab = subprocess.run(["python3", str(ROOT / "tools" / "fetch_model.py"), "deepseek-r1-vocab"],
                           check=True, capture_output=True, text=True).stdout.strip()
    path = tmp_path_factory.mktemp("r1") / "r1-synth.gguf"
    subprocess.run([ridge_bin, "synth", "--arch", "qwen2", "--n-embd", "64", "--n-layer", "2", "--n-head", "2",
                    "--n-ff", "128", "--type", "Q8_0", "--vocab-from", vocab, "-o", str(path)],
                   check=True, capture_output=True)
    with running_server(ridge_bin, str(path), ctx_size=512) as s:
        yield s


def test_thinking_is_separated_in_every_api(thinking_server):
    s = thinking_server
    oai = openai.OpenAI(base_url=s.api_url, api_key="unused", max_retries=0)
    model = oai.models.list().data[0].id
    r = oai.chat.completions.create(model=model, messages=ASK, max_tokens=100, extra_body={"grammar": FORCED})
    msg = r.choices[0].message
    assert msg.content == ANSWER
    assert msg.model_extra["reasoning_content"] == THINKING
    assert r.usage.completion_tokens_details.reasoning_tokens > 0
    assert r.usage.completion_tokens_details.reasoning_tokens < r.usage.completion_tokens

    reasoning, content = "", ""
    for chunk in oai.chat.completions.create(model=model, messages=ASK, max_tokens=100, stream=True,
                                             extra_body={"grammar": FORCED}):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        reasoning += (delta.model_extra or {}).get("reasoning_content") or ""
        content += delta.content or ""
    assert (reasoning, content) == (THINKING, ANSWER)

    raw = oai.chat.completions.create(model=model, messages=ASK, max_tokens=100,
                                      extra_body={"grammar": FORCED, "reasoning_format": "none"})
    assert raw.choices[0].message.content == f"<think>\n{THINKING}\n</think>\n\n{ANSWER}"

    claude = anthropic.Anthropic(base_url=s.base_url, api_key="unused", max_retries=0)
    m = claude.messages.create(model=model, max_tokens=100, messages=ASK, extra_body={"grammar": FORCED})
    assert [b.type for b in m.content] == ["thinking", "text"]
    assert m.content[0].thinking == THINKING and m.content[1].text == ANSWER
    with claude.messages.stream(model=model, max_tokens=100, messages=ASK, extra_body={"grammar": FORCED}) as stream:
        final = stream.get_final_message()
    assert [(b.type, getattr(b, "thinking", None) or getattr(b, "text", None)) for b in final.content] == \
        [("thinking", THINKING), ("text", ANSWER)]

    # The Responses API: a reasoning item, then the message.
    r = oai.responses.create(model=model, input=ASK, max_output_tokens=100, extra_body={"grammar": FORCED})
    assert [o.type for o in r.output] == ["reasoning", "message"]
    assert r.output[0].content[0].text == THINKING and r.output_text == ANSWER
    assert r.usage.output_tokens_details.reasoning_tokens > 0
    with oai.responses.stream(model=model, input=ASK, max_output_tokens=100, extra_body={"grammar": FORCED}) as stream:
        thinking_deltas = [e.delta for e in stream if e.type == "response.reasoning_text.delta"]
        final = stream.get_final_response()
    assert "".join(thinking_deltas) == THINKING
    assert final.output_text == ANSWER and final.output[0].content[0].text == THINKING


ANSWER_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
                 "additionalProperties": False}
OPEN_THINK = "151648"  # <think> in the R1 vocabulary


def test_budget_closes_the_thinking_and_the_schema_applies_after(thinking_server):
    s = thinking_server
    oai = openai.OpenAI(base_url=s.api_url, api_key="unused", max_retries=0)
    model = oai.models.list().data[0].id
    # logit_bias makes the random model open its thinking and keep writing the tag: only the budget
    # (5 tokens, then "\n</think>" forced) ends it; the schema then shapes the answer.
    r = oai.chat.completions.create(
        model=model, messages=ASK, max_tokens=60, temperature=0,
        response_format={"type": "json_schema", "json_schema": {"name": "answer", "schema": ANSWER_SCHEMA}},
        extra_body={"logit_bias": {OPEN_THINK: 100}, "reasoning_budget": 5})
    msg = r.choices[0].message
    assert json.loads(msg.content) in ({"ok": True}, {"ok": False})
    assert msg.model_extra["reasoning_content"] == "<think>" * 5
    assert 1 + 5 < r.usage.completion_tokens_details.reasoning_tokens <= 1 + 5 + 3
    # The same through Messages' thinking.budget_tokens.
    claude = anthropic.Anthropic(base_url=s.base_url, api_key="unused", max_retries=0)
    m = claude.messages.create(model=model, max_tokens=60, messages=ASK, thinking={"type": "enabled", "budget_tokens": 3},
                               extra_body={"temperature": 0, "logit_bias": {OPEN_THINK: 100},
                                           "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": ANSWER_SCHEMA}}})
    assert [b.type for b in m.content] == ["thinking", "text"]
    assert m.content[0].thinking == "<think>" * 3
    assert json.loads(m.content[1].text) in ({"ok": True}, {"ok": False})
    # Hostile: a budget of 0, a bias on a token outside the vocabulary.
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model=model, messages=ASK, max_tokens=5, extra_body={"reasoning_budget": 0})
    assert e.value.body["param"] == "reasoning_budget"
    with pytest.raises(anthropic.BadRequestError):
        claude.messages.create(model=model, max_tokens=5, messages=ASK, thinking={"type": "enabled", "budget_tokens": 0})
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model=model, messages=ASK, max_tokens=5, logit_bias={"999999": 5})
    assert e.value.body["param"] == "logit_bias"
