"""Structured output end to end: `ridge serve` on the default model under every request field that
constrains the output (OpenAI's response_format, vLLM's guided_*, llama.cpp's grammar/json_schema),
every result checked by an external reference (the `jsonschema` package, Python's `re`), the official
`openai` client's parse helper with a Pydantic model, and hostile schemas that must get a clear 400
and leave the server serving."""
import json
import re

import jsonschema
import openai
import pydantic
import pytest

from serve_fixture import running_server

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"enum": ["Paris", "Lyon", "Nice"]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def server(ridge_bin, default_model):
    with running_server(ridge_bin, default_model) as s:
        yield s


def chat(server, body, status=200):
    got, raw = server.request("POST", "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "Describe a person as JSON."}], "max_tokens": 160, **body})
    assert got == status, raw
    return json.loads(raw)


def content(resp, i=0):
    return resp["choices"][i]["message"]["content"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_json_schema_output_validates(server, seed):
    resp = chat(server, {"response_format": {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON}},
                         "temperature": 1.0, "seed": seed})
    assert resp["choices"][0]["finish_reason"] == "stop", resp
    jsonschema.validate(json.loads(content(resp)), PERSON)


def test_json_object_mode(server):
    resp = chat(server, {"response_format": {"type": "json_object"}, "temperature": 0.8, "seed": 4})
    assert resp["choices"][0]["finish_reason"] in ("stop", "length")
    if resp["choices"][0]["finish_reason"] == "stop":
        assert isinstance(json.loads(content(resp)), dict)


def test_n_choices_each_follow_the_schema(server):
    resp = chat(server, {"guided_json": PERSON, "n": 3, "temperature": 1.0, "seed": 7})
    assert len(resp["choices"]) == 3
    for i in range(3):
        jsonschema.validate(json.loads(content(resp, i)), PERSON)


def test_regex_choice_and_gbnf(server):
    resp = chat(server, {"guided_regex": r"[A-Z][a-z]{2,6} [0-9]{2}", "temperature": 1.0, "seed": 3})
    assert re.fullmatch(r"[A-Z][a-z]{2,6} [0-9]{2}", content(resp)), content(resp)
    resp = chat(server, {"guided_choice": ["yes", "no", "maybe"], "temperature": 1.0, "seed": 5})
    assert content(resp) in ("yes", "no", "maybe")
    gbnf = 'root ::= "(" expr ")"\nexpr ::= [0-9]+ (("+" | "*") [0-9]+)*\n'
    resp = chat(server, {"grammar": gbnf, "temperature": 1.0, "seed": 6, "max_tokens": 40})
    if resp["choices"][0]["finish_reason"] == "stop":
        assert re.fullmatch(r"\([0-9]+([+*][0-9]+)*\)", content(resp)), content(resp)


def test_completions_endpoint_and_streaming(server):
    got, raw = server.request("POST", "/v1/completions", {
        "prompt": "A person:", "max_tokens": 160, "guided_json": PERSON, "temperature": 1.0, "seed": 9})
    assert got == 200, raw
    jsonschema.validate(json.loads(json.loads(raw)["choices"][0]["text"]), PERSON)
    got, raw = server.request("POST", "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "A person"}], "max_tokens": 160, "stream": True,
        "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}},
        "temperature": 1.0, "seed": 10})
    assert got == 200
    text = ""
    for line in raw.decode().splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            for c in json.loads(line[6:])["choices"]:
                text += c["delta"].get("content") or ""
    jsonschema.validate(json.loads(text), PERSON)


def test_jump_forward_counts_forced_tokens(server):
    before = server.metrics().get("ridge:grammar_forced_tokens_total", 0)
    schema = {"type": "object", "properties": {"orderIdentifier": {"type": "integer", "minimum": 0, "maximum": 9999},
                                               "customerName": {"type": "string", "maxLength": 5}},
              "required": ["orderIdentifier", "customerName"], "additionalProperties": False}
    resp = chat(server, {"guided_json": schema, "temperature": 0.0})
    assert resp["choices"][0]["finish_reason"] == "stop", resp
    text = content(resp)
    jsonschema.validate(json.loads(text), schema)
    assert text.startswith('{"orderIdentifier":')  # members in the schema's order
    assert server.metrics()["ridge:grammar_forced_tokens_total"] > before


def test_openai_parse_helper(server):
    class City(pydantic.BaseModel):  # bounded, so a 135M model's greedy text ends within max_tokens
        name: str = pydantic.Field(max_length=16)
        country: str = pydantic.Field(max_length=16)
        population: int = pydantic.Field(ge=0, le=100_000_000)

    client = openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=120)
    done = client.chat.completions.parse(model=client.models.list().data[0].id, response_format=City,
                                         messages=[{"role": "user", "content": "Describe Paris."}],
                                         max_tokens=160, temperature=0.0)
    assert done.choices[0].finish_reason == "stop"
    assert isinstance(done.choices[0].message.parsed, City)


@pytest.mark.parametrize("field,expect", [
    ({"guided_json": {"type": "array", "uniqueItems": True}}, "uniqueItems"),
    ({"guided_json": {"type": "integer", "minimum": 5, "maximum": 3}}, "unsatisfiable"),
    ({"guided_json": "{not json"}, "guided_json"),
    ({"guided_regex": "(a)\\1"}, "backreference"),
    ({"grammar": "root ::= undefined-rule"}, "undefined-rule"),
    ({"grammar": "root ::= root \"a\" | \"b\""}, "left-recursive"),
    ({"grammar": "root ::= root \"a\""}, "unsatisfiable"),
    ({"guided_choice": []}, "guided_choice"),
    ({"response_format": {"type": "yaml"}}, "response_format.type"),
    ({"guided_json": {"type": "object"}, "guided_regex": "a"}, "both"),
])
def test_bad_specs_are_clear_400s(server, field, expect):
    resp = chat(server, field, status=400)
    assert expect.lower() in json.dumps(resp).lower(), resp


def test_hostile_schemas_leave_the_server_serving(server):
    # Deep nesting, a recursive schema, and a 1 MB schema: each a finished response or a 400.
    deep = {"type": "integer"}
    for _ in range(200):
        deep = {"type": "object", "properties": {"a": deep}, "required": ["a"], "additionalProperties": False}
    tree = {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {
        "type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}}, "required": ["v"],
        "additionalProperties": False}}, "$ref": "#/$defs/node"}
    big = {"type": "object", "properties": {f"field_{i:05d}": {"type": "string", "description": "x" * 40}
                                            for i in range(16000)}, "additionalProperties": False}
    assert len(json.dumps(big)) > 1_000_000
    for schema in (deep, tree, big):
        got, raw = server.request("POST", "/v1/chat/completions", {
            "messages": [{"role": "user", "content": "go"}], "max_tokens": 40, "guided_json": schema}, timeout=120)
        assert got in (200, 400), raw
    resp = chat(server, {"guided_json": PERSON, "temperature": 0.0})
    jsonschema.validate(json.loads(content(resp)), PERSON)


def test_batch_takes_the_same_fields(ridge_bin, default_model, tmp_path):
    import subprocess
    lines = [{"id": "a", "messages": [{"role": "user", "content": "A person"}], "guided_json": PERSON,
              "temperature": 1.0, "seed": 3, "max_tokens": 160},
             {"id": "b", "prompt": "Answer:", "guided_choice": ["yes", "no"], "max_tokens": 5},
             {"id": "c", "prompt": "Date:", "guided_regex": "[0-9]{4}-[0-9]{2}", "max_tokens": 12}]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join(json.dumps(l) for l in lines) + "\n")
    subprocess.run([ridge_bin, "batch", "-m", default_model, "-i", str(src), "-o", str(out)], check=True,
                   capture_output=True, timeout=300)
    got = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    jsonschema.validate(json.loads(got["a"]["text"]), PERSON)
    assert got["b"]["text"] in ("yes", "no")
    assert re.fullmatch(r"[0-9]{4}-[0-9]{2}", got["c"]["text"]), got["c"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"prompt": "x", "guided_json": {"type": "array", "uniqueItems": True}}) + "\n")
    r = subprocess.run([ridge_bin, "batch", "-m", default_model, "-i", str(bad), "-o", str(tmp_path / "o2")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "uniqueItems" in r.stderr, r.stderr
