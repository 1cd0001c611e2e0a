"""Tool calling end to end: `ridge serve` on Qwen2.5-Coder-0.5B-Instruct (a real model with a
tool-calling template) and on the default model (ChatML without one: Qwen2.5's tool format), driven
by the official `openai` client -- tool_choice auto / required / named, streamed and not (the
streamed deltas must add up to the non-streamed answer), parallel calls, tool results in the
conversation, the client's pydantic_function_tool helper -- every call's arguments validated with
`jsonschema` against its tool's parameters; and bad tool requests answered with a 400 naming the field."""
import json
import os
import pathlib

import jsonschema
import openai
import pydantic
import pytest

from serve_fixture import running_server

HOME = pathlib.Path(os.environ.get("RIDGE_HOME") or pathlib.Path.home() / ".cache" / "ridge")
QWEN = HOME / "models" / "Qwen2.5-Coder-0.5B-Instruct.gguf"

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "maxLength": 40},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"], "additionalProperties": False}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "Get the local time in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40}},
                   "required": ["city"], "additionalProperties": False}}}
TOOLS = [WEATHER, TIME]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
ASK = [{"role": "user", "content": "What's the weather like in Paris today?"}]


@pytest.fixture(scope="module", params=["qwen", "default"])
def server(request, ridge_bin, default_model):
    if request.param == "qwen" and not QWEN.exists():
        pytest.skip(f"{QWEN} is missing: python3 tools/fetch_model.py qwen2.5-coder-0.5b")
    model = str(QWEN) if request.param == "qwen" else default_model
    with running_server(ridge_bin, model) as s:
        s.name = request.param
        yield s


@pytest.fixture(scope="module")
def client(server):
    c = openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=300)
    c.model_name = c.models.list().data[0].id
    # The 135M default model, once it has written a call, goes on writing more of them in parallel
    # mode rather than ending its turn; it is asked for one call at a time.
    c.one_call = server.name == "default"
    return c


def create(client, **kwargs):
    args = {"model": client.model_name, "messages": ASK, "tools": TOOLS, "temperature": 0.0, "max_tokens": 80, **kwargs}
    if client.one_call and "parallel_tool_calls" not in kwargs:
        args["parallel_tool_calls"] = False
    return client.chat.completions.create(**args)


def check_calls(calls):
    for c in calls:
        assert c.type == "function" and c.id
        assert c.function.name in SCHEMAS, c
        jsonschema.validate(json.loads(c.function.arguments), SCHEMAS[c.function.name])


def collect_stream(stream):
    """The streamed deltas put together: content, and calls by index (id, name, arguments)."""
    content, calls, finish = "", {}, None
    for chunk in stream:
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        delta = choice.delta
        content += delta.content or ""
        for d in delta.tool_calls or []:
            if d.index not in calls:
                assert d.id and d.function.name, "a call's first delta carries its id and name"
                calls[d.index] = {"id": d.id, "name": d.function.name, "arguments": ""}
            else:
                assert d.id is None and d.function.name is None
            calls[d.index]["arguments"] += d.function.arguments or ""
    return content, [calls[i] for i in sorted(calls)], finish


def test_required_calls_a_tool_with_valid_arguments(client):
    r = create(client, tool_choice="required")
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.content is None
    assert choice.message.tool_calls
    check_calls(choice.message.tool_calls)


def test_named_function_is_the_one_called(client):
    r = create(client, tool_choice={"type": "function", "function": {"name": "get_time"}})
    calls = r.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["get_time"]
    check_calls(calls)


def test_parallel_tool_calls_false_makes_one_call(client):
    r = create(client, tool_choice="required", parallel_tool_calls=False,
               messages=[{"role": "user", "content": "Weather and time in Paris and in Rome?"}])
    assert len(r.choices[0].message.tool_calls) == 1
    check_calls(r.choices[0].message.tool_calls)


def test_auto_answers_with_calls_or_text(client):
    r = create(client, tool_choice="auto")
    choice = r.choices[0]
    if choice.message.tool_calls:
        assert choice.finish_reason == "tool_calls"
        check_calls(choice.message.tool_calls)
    else:
        assert choice.message.content


@pytest.mark.parametrize("tool_choice", ["auto", "required", {"type": "function", "function": {"name": "get_weather"}}])
def test_stream_adds_up_to_the_response(client, tool_choice):
    whole = create(client, tool_choice=tool_choice).choices[0]
    content, calls, finish = collect_stream(create(client, tool_choice=tool_choice, stream=True))
    assert finish == whole.finish_reason
    assert content == (whole.message.content or "")
    assert [(c["name"], c["arguments"]) for c in calls] == \
        [(c.function.name, c.function.arguments) for c in whole.message.tool_calls or []]


def test_tool_results_continue_the_conversation(client):
    first = create(client, tool_choice="required", parallel_tool_calls=False).choices[0].message
    call = first.tool_calls[0]
    messages = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temperature_c": 21, "sky": "clear"})},
    ]
    r = create(client, messages=messages, tool_choice="none", max_tokens=40)
    assert r.choices[0].message.content
    assert not r.choices[0].message.tool_calls


def test_pydantic_function_tool(client):
    class GetWeather(pydantic.BaseModel):
        city: str = pydantic.Field(max_length=30)
        unit: str = pydantic.Field(pattern="^(celsius|fahrenheit)$")

    r = client.chat.completions.parse(model=client.model_name, messages=ASK, tools=[openai.pydantic_function_tool(GetWeather)],
                                      tool_choice="required", temperature=0.0, max_tokens=80,
                                      parallel_tool_calls=not client.one_call)
    parsed = r.choices[0].message.tool_calls[0].function.parsed_arguments
    assert isinstance(parsed, GetWeather)


def test_metrics_count_tool_grammars(server, client):
    before = server.metrics().get("ridge:grammar_requests_total", 0)
    create(client, tool_choice="required")
    assert server.metrics()["ridge:grammar_requests_total"] > before


@pytest.mark.parametrize("body,param", [
    ({"tools": [{"type": "function", "function": {"name": "bad name!"}}]}, "tools[0].function.name"),
    ({"tools": [{"type": "nope"}]}, "tools[0].type"),
    ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "missing"}}}, "tool_choice"),
    ({"tools": TOOLS, "tool_choice": "always"}, "tool_choice"),
    ({"tool_choice": "required"}, "tool_choice"),
    ({"tools": [WEATHER, WEATHER]}, "tools[1].function.name"),
    ({"tools": TOOLS, "tool_choice": "required", "response_format": {"type": "json_object"}}, "tool_choice"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"x": {"type": "array", "uniqueItems": True}}}}}],
      "tool_choice": "required"}, "tools"),
    ({"tools": TOOLS, "messages": [{"role": "user", "content": "hi", "tool_calls": []}, {"role": "tool"}],
      "tool_choice": "auto"}, None),
])
def test_bad_tool_requests_are_400(server, body, param):
    got, raw = server.request("POST", "/v1/chat/completions", {"messages": ASK, "max_tokens": 4, **body})
    if param is None:  # accepted: an empty tool_calls list and a tool turn without content are harmless
        assert got == 200, raw
        return
    assert got == 400, raw
    assert json.loads(raw)["error"]["param"] == param, raw
    assert server.request("GET", "/health")[0] == 200
