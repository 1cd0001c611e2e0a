"""Tool prompts against the models' own chat templates: for the tool-calling templates llama.cpp
keeps (Qwen2.5, Hermes 2 Pro / 3, Llama 3.1-3.3, Mistral Nemo) and the real Qwen2.5-Coder GGUF's,
ridge's rendering of conversations with tools, calls and results must equal the Jinja template's,
rendered with jinja2 the way transformers does (its sandbox, tojson as json.dumps, raise_exception,
strftime_now). Where a template refuses a conversation (raise_exception), ridge must refuse it too."""
import datetime
import functools
import json
import os
import pathlib
import subprocess

import pytest

jinja2 = pytest.importorskip("jinja2")
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402

HOME = pathlib.Path(os.environ.get("RIDGE_HOME") or pathlib.Path.home() / ".cache" / "ridge")
TEMPLATES = HOME / "chat-templates"
TODAY = datetime.datetime(2026, 12, 1)

# template file -> the tool format ridge must detect
TOOL_TEMPLATES = {
    "Qwen-Qwen2.5-7B-Instruct.jinja": "qwen2.5",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": "hermes",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja": "hermes",
    "meta-llama-Llama-3.1-8B-Instruct.jinja": "llama3",
    "meta-llama-Llama-3.2-3B-Instruct.jinja": "llama3",
    "meta-llama-Llama-3.3-70B-Instruct.jinja": "llama3",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja": "mistral",
}

WEATHER = {"type": "function", "function": {
    "name": "get_weather",
    "description": "Get the weather \"now\" in a city — ünïcode",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "  City name "},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "array", "items": {"type": "integer"}},
        "ratio": {"type": "number", "minimum": 1.5},
        "tags": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "any": {"type": ["string", "integer"]},
    }, "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "Local time.",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}}
NO_PARAMS = {"type": "function", "function": {"name": "ping", "description": "Ping.",
                                               "parameters": {"type": "object", "properties": {}}}}


def call(id_, name, args):
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


CALL_A = call("abcDEF123", "get_weather", {"city": "Paris", "unit": "celsius", "days": [1, 2]})
CALL_B = call("xyz789QRS", "get_time", {"zone": "Europe/Paris"})

CONVERSATIONS = {
    "single": [{"role": "user", "content": "What's the weather in Paris?"}],
    "system": [{"role": "system", "content": " Be brief. "}, {"role": "user", "content": "Weather in Paris?"}],
    "history": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL_A]},
        {"role": "tool", "tool_call_id": "abcDEF123", "content": "{\"temperature\": 21}"},
        {"role": "assistant", "content": "It is 21 degrees."},
        {"role": "user", "content": "And the time?"},
    ],
    "parallel": [
        {"role": "system", "content": "You help."},
        {"role": "user", "content": "Weather and time in Paris?"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL_A, CALL_B]},
        {"role": "tool", "tool_call_id": "abcDEF123", "content": "sunny"},
        {"role": "tool", "tool_call_id": "xyz789QRS", "content": "10:00"},
    ],
}
TOOL_SETS = {"two": [WEATHER, TIME], "no_params": [NO_PARAMS, TIME], "none": []}


def hf_render(template, messages, tools, add_generation_prompt=True):
    """What transformers' apply_chat_template renders (tool-call arguments as objects, as vLLM passes them)."""
    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: TODAY.strftime(fmt)
    hf_messages = []
    for m in messages:
        m = json.loads(json.dumps(m))
        for c in m.get("tool_calls") or []:
            c["function"]["arguments"] = json.loads(c["function"]["arguments"])
        if m.get("content") is None:
            m.pop("content", None) if m.get("tool_calls") else None
        hf_messages.append(m)
    kwargs = {"tools": tools} if tools else {}
    return env.from_string(template).render(messages=hf_messages, add_generation_prompt=add_generation_prompt,
                                            bos_token="", eos_token="</s>", **kwargs)


def ridge_render(ridge_bin, template, messages, tools):
    body = {"messages": messages}
    if tools:
        body["tools"] = tools
    return subprocess.run([ridge_bin, "chat-template", "--template", template, "--today", TODAY.strftime("%d %b %Y")],
                          input=json.dumps(body).encode(), capture_output=True)


def template_text(name):
    path = TEMPLATES / name
    if not path.exists():
        pytest.skip(f"{path} is missing: run tools/setup_test_deps.sh (it unpacks llama.cpp's chat templates)")
    return path.read_text()


@pytest.mark.parametrize("name", sorted(TOOL_TEMPLATES))
def test_tool_format_is_detected(ridge_bin, name):
    out = subprocess.run([ridge_bin, "chat-template", "--template", template_text(name), "--detect"],
                         capture_output=True, check=True)
    assert json.loads(out.stdout)["tool_format"] == TOOL_TEMPLATES[name]


def check_render(ridge_bin, template, conversation, tool_set):
    messages, tools = CONVERSATIONS[conversation], TOOL_SETS[tool_set]
    if tool_set == "none" and conversation in ("single", "system"):
        pytest.skip("no tools and no calls: the plain chat format renders it (test_chat_template.py)")
    try:
        expected = hf_render(template, messages, tools)
    except jinja2.exceptions.TemplateError as e:
        out = ridge_render(ridge_bin, template, messages, tools)
        assert out.returncode != 0, f"the template refuses this conversation ({e}) but ridge rendered it"
        return
    out = ridge_render(ridge_bin, template, messages, tools)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode() == expected


@pytest.mark.parametrize("tool_set", sorted(TOOL_SETS))
@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
@pytest.mark.parametrize("name", sorted(TOOL_TEMPLATES))
def test_tool_prompt_matches_the_template(ridge_bin, name, conversation, tool_set):
    check_render(ridge_bin, template_text(name), conversation, tool_set)


@functools.lru_cache(maxsize=None)
def qwen_coder_template():
    path = HOME / "models" / "Qwen2.5-Coder-0.5B-Instruct.gguf"
    if not path.exists():
        pytest.skip(f"{path} is missing: python3 tools/fetch_model.py qwen2.5-coder-0.5b")
    import gguf
    reader = gguf.GGUFReader(str(path))
    field = reader.fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode()


@pytest.mark.parametrize("tool_set", sorted(TOOL_SETS))
@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
def test_qwen_coder_gguf_template(ridge_bin, conversation, tool_set):
    check_render(ridge_bin, qwen_coder_template(), conversation, tool_set)
