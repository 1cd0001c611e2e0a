"""OpenAI's Responses API end to end through the official `openai` SDK against `ridge serve`:
responses.create and responses.stream (the stream's final response equals its deltas and the
non-streamed answer; items keep their ids), instructions, a function-tool round trip
(function_call, then function_call_output), a JSON-schema answer through text.format,
previous_response_id over the server's store (store: false not kept), max_output_tokens as an
incomplete response, and hostile input as the SDK's typed errors. Chat Completions, Responses and
Messages give the same greedy text for the same conversation (50 of them)."""
import json

import anthropic
import jsonschema
import openai
import pytest

from serve_fixture import running_server

ASK = "What is the capital of France?"
WEATHER = {"type": "function", "name": "get_weather", "description": "Get the current weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40}},
                          "required": ["city"], "additionalProperties": False}}
CITY = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                         "country": {"type": "string", "maxLength": 30}},
        "required": ["city", "country"], "additionalProperties": False}


@pytest.fixture(scope="module")
def server(ridge_bin, default_model):
    with running_server(ridge_bin, default_model) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    c = openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=300)
    c.model_name = c.models.list().data[0].id
    return c


def test_create_and_stream_agree(client):
    r = client.responses.create(model=client.model_name, input=ASK, instructions="Answer briefly.",
                                temperature=0, max_output_tokens=24)
    assert r.object == "response" and r.id.startswith("resp_") and r.status in ("completed", "incomplete")
    assert r.output_text.strip()
    assert r.usage.input_tokens > 0 and 0 < r.usage.output_tokens <= 24
    with client.responses.stream(model=client.model_name, input=ASK, instructions="Answer briefly.",
                                 temperature=0, max_output_tokens=24) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response() if r.status == "completed" else None
    assert "".join(deltas) == r.output_text
    if final is not None:
        assert final.output_text == r.output_text and final.usage.output_tokens == r.usage.output_tokens


def test_incomplete_at_max_output_tokens(client):
    r = client.responses.create(model=client.model_name, input="Write a long story about a dragon.",
                                temperature=0, max_output_tokens=3)
    assert r.status == "incomplete" and r.incomplete_details.reason == "max_output_tokens"
    assert r.usage.output_tokens == 3


def test_function_tool_round_trip(client):
    r = client.responses.create(model=client.model_name, input="What's the weather like in Paris today?",
                                tools=[WEATHER], tool_choice="required", parallel_tool_calls=False, temperature=0,
                                max_output_tokens=64)
    calls = [o for o in r.output if o.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather"
    jsonschema.validate(json.loads(calls[0].arguments), WEATHER["parameters"])
    with client.responses.stream(model=client.model_name, input="What's the weather like in Paris today?",
                                 tools=[WEATHER], tool_choice="required", parallel_tool_calls=False, temperature=0,
                                 max_output_tokens=64) as stream:
        argument_deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    streamed = [o for o in final.output if o.type == "function_call"]
    assert [(c.name, c.arguments) for c in streamed] == [(c.name, c.arguments) for c in calls]
    assert "".join(argument_deltas) == calls[0].arguments
    # The output goes back by call_id, in a new request that lists the call...
    follow = client.responses.create(model=client.model_name, tools=[WEATHER], temperature=0, max_output_tokens=32, input=[
        {"role": "user", "content": "What's the weather like in Paris today?"},
        {"type": "function_call", "call_id": calls[0].call_id, "name": "get_weather", "arguments": calls[0].arguments},
        {"type": "function_call_output", "call_id": calls[0].call_id, "output": "Sunny, 21 degrees"}])
    assert follow.output
    # ... or after previous_response_id, which carries the call.
    chained = client.responses.create(model=client.model_name, previous_response_id=r.id, tools=[WEATHER], temperature=0,
                                      max_output_tokens=32, input=[
        {"type": "function_call_output", "call_id": calls[0].call_id, "output": "Sunny, 21 degrees"}])
    assert chained.output_text == follow.output_text


def test_json_schema_answer(client):
    r = client.responses.create(model=client.model_name, input="Name a city and its country as JSON.", temperature=0,
                                max_output_tokens=80,
                                text={"format": {"type": "json_schema", "name": "city", "schema": CITY, "strict": True}})
    jsonschema.validate(json.loads(r.output_text), CITY)


def test_previous_response_id_and_store(client):
    first = client.responses.create(model=client.model_name, input="My name is Ada.", temperature=0, max_output_tokens=16)
    follow = client.responses.create(model=client.model_name, previous_response_id=first.id, input="What is my name?",
                                     temperature=0, max_output_tokens=16)
    # The same conversation written out in full gives the same greedy answer.
    full = client.responses.create(model=client.model_name, temperature=0, max_output_tokens=16, input=[
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": "What is my name?"}])
    assert follow.output_text == full.output_text
    unstored = client.responses.create(model=client.model_name, input="Hi", store=False, max_output_tokens=4)
    with pytest.raises(openai.NotFoundError) as e:
        client.responses.create(model=client.model_name, previous_response_id=unstored.id, input="Again")
    assert e.value.body["code"] == "previous_response_not_found"
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=client.model_name, previous_response_id="resp_does_not_exist", input="x")


def test_hostile_input(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model=client.model_name, input=[
            {"type": "function_call_output", "call_id": "call_nope", "output": "x"}])
    assert e.value.body["param"] == "input[0].call_id"
    for bad in ([{"type": "mystery"}], [], [{"role": "wizard", "content": "x"}],
                [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]):
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model=client.model_name, input=bad)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=client.model_name, input="x", tools=[{"type": "web_search"}])
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=client.model_name, input="x", max_output_tokens=0)


# 50 conversations: ten asked outright, forty built from templates (a system prompt and one user turn each).
CONVERSATIONS = [
    "What is the capital of France?", "Write a haiku about the sea.", "Say hello in Spanish.",
    "Give me three colors.", "What is 2 + 2?", "Name a famous scientist.", "Describe a cat in one sentence.",
    "What day comes after Monday?", "Suggest a name for a dog.", "What is the opposite of hot?",
] + [f"What is {a} plus {b}?" for a, b in [(3, 4), (10, 7), (12, 30), (99, 1), (5, 5), (21, 21), (8, 13), (40, 2),
                                          (6, 9), (17, 25)]] \
  + [f"Name an animal that starts with the letter {c}." for c in "BCDFGHKLMP"] \
  + [f"Translate '{w}' into French." for w in ["cat", "house", "water", "friend", "book", "sun", "tree", "car", "bread", "night"]] \
  + [f"Give one fact about {t}." for t in ["the moon", "volcanoes", "honey", "penguins", "the Nile", "gold", "clouds",
                                           "Mount Everest", "octopuses", "rainbows"]]


def test_three_apis_give_the_same_greedy_text(server, client):
    assert len(CONVERSATIONS) == 50
    claude = anthropic.Anthropic(base_url=server.base_url, api_key="unused", max_retries=0)
    for question in CONVERSATIONS:
        chat = client.chat.completions.create(model=client.model_name, temperature=0, max_tokens=24,
                                              messages=[{"role": "system", "content": "Be brief."},
                                                        {"role": "user", "content": question}])
        resp = client.responses.create(model=client.model_name, temperature=0, max_output_tokens=24,
                                       instructions="Be brief.", input=question)
        msg = claude.messages.create(model=client.model_name, max_tokens=24, system="Be brief.",
                                     messages=[{"role": "user", "content": question}], extra_body={"temperature": 0})
        text = chat.choices[0].message.content
        assert resp.output_text == text, question
        assert "".join(b.text for b in msg.content if b.type == "text") == text, question
