"""Chat templates against llama.cpp: for every format name and several conversations, ridge's
rendered prompt must equal llama_chat_apply_template's byte for byte. The default model's own Jinja
template is also rendered with jinja2 (what transformers does) and must match ridge's render."""
import ctypes
import functools
import json
import subprocess

import pytest

llama_cpp = pytest.importorskip("llama_cpp")

# ridge name -> llama.cpp name (ridge's "mistral" is llama.cpp's "mistral-v3").
FORMATS = {
    "chatml": "chatml",
    "llama2": "llama2",
    "llama2-sys": "llama2-sys",
    "llama2-sys-bos": "llama2-sys-bos",
    "llama2-sys-strip": "llama2-sys-strip",
    "llama3": "llama3",
    "mistral": "mistral-v3",
    "mistral-v1": "mistral-v1",
    "mistral-v3-tekken": "mistral-v3-tekken",
    "mistral-v7": "mistral-v7",
    "mistral-v7-tekken": "mistral-v7-tekken",
    "gemma": "gemma",
    "phi3": "phi3",
    "phi4": "phi4",
    "falcon3": "falcon3",
    "zephyr": "zephyr",
    "monarch": "monarch",
    "orion": "orion",
    "openchat": "openchat",
    "vicuna": "vicuna",
    "vicuna-orca": "vicuna-orca",
    "deepseek": "deepseek",
    "deepseek2": "deepseek2",
    "deepseek3": "deepseek3",
    "command-r": "command-r",
    "llama4": "llama4",
    "granite": "granite",
    "megrez": "megrez",
    "exaone3": "exaone3",
    "smolvlm": "smolvlm",
}

CONVERSATIONS = {
    "single_user": [{"role": "user", "content": "Hello"}],
    "system_user": [
        {"role": "system", "content": "You are a test."},
        {"role": "user", "content": "What is 2+2?"},
    ],
    "multi_turn": [
        {"role": "system", "content": "  Answer briefly.\n"},
        {"role": "user", "content": "Hi there "},
        {"role": "assistant", "content": " Hello! How can I help?\n"},
        {"role": "user", "content": "Tell me a joke.\n\nPlease."},
    ],
    "no_system_multi": [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two"},
        {"role": "user", "content": "three"},
        {"role": "assistant", "content": "four"},
    ],
    "unicode": [{"role": "user", "content": "Grüße, 世界 👋"}],
}


def llama_cpp_render(template: str, messages, add_generation_prompt: bool) -> str:
    """llama.cpp's llama_chat_apply_template on a template name or a Jinja text."""
    keep = [(m["role"].encode(), m["content"].encode()) for m in messages]
    chat = (llama_cpp.llama_chat_message * max(1, len(keep)))()
    for i, (role, content) in enumerate(keep):
        chat[i].role = role
        chat[i].content = content
    size = 1 << 16
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_chat_apply_template(template.encode(), chat, len(keep), add_generation_prompt, buf, size)
    assert 0 <= n < size, f"llama.cpp rejected template {template!r}: {n}"
    return buf.raw[:n].decode()


def ridge_render(ridge_bin, messages, add_generation_prompt, *args) -> str:
    cmd = [ridge_bin, "chat-template", *args]
    if not add_generation_prompt:
        cmd.append("--no-generation-prompt")
    out = subprocess.run(cmd, input=json.dumps(messages).encode(), capture_output=True, check=True)
    return out.stdout.decode()


@pytest.mark.parametrize("add_generation_prompt", [True, False], ids=["gen", "nogen"])
@pytest.mark.parametrize("conversation", list(CONVERSATIONS))
@pytest.mark.parametrize("ridge_name", list(FORMATS))
def test_format_matches_llama_cpp(ridge_bin, ridge_name, conversation, add_generation_prompt):
    messages = CONVERSATIONS[conversation]
    expected = llama_cpp_render(FORMATS[ridge_name], messages, add_generation_prompt)
    got = ridge_render(ridge_bin, messages, add_generation_prompt, "--chat-template", ridge_name)
    assert got == expected


def test_unknown_name_is_a_clear_error(ridge_bin):
    out = subprocess.run([ridge_bin, "chat-template", "--chat-template", "nope"], input=b"[]", capture_output=True)
    assert out.returncode != 0
    assert b"--chat-template" in out.stderr and b"chatml" in out.stderr


def test_unknown_template_is_a_clear_error(ridge_bin):
    out = subprocess.run([ridge_bin, "chat-template", "--template", "{{ messages | tojson }}"], input=b"[]",
                         capture_output=True)
    assert out.returncode != 0
    assert b"unknown chat template" in out.stderr and b"--chat-template" in out.stderr


# Template texts in the style of the real ones: each family's detection must agree with llama.cpp's.
TEMPLATE_SNIPPETS = [
    "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\n' + m['content'] + '<|im_end|>\n'}}{% endfor %}",
    "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\n\n' + "
    "m['content'] | trim + '<|eot_id|>' }}{% endfor %}",
    "{% for m in messages %}{{ '<start_of_turn>' + m['role'] + '\n' + m['content'] | trim + '<end_of_turn>\n' }}"
    "{% endfor %}",
    "{% for m in messages %}{{'<|' + m['role'] + '|>' + '\n' + m['content'] + '<|end|>\n'}}{% endfor %}"
    "{{ '<|assistant|>\n' }}",
    "{% if messages[0]['role'] == 'system' %}{% set system_message = '<<SYS>>\\n' + messages[0]['content'] + "
    "'\\n<</SYS>>\\n\\n' %}{% endif %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}",
    "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'user' %}{{ '[INST] ' + m['content'] + ' [/INST]' }}"
    "{% else %}{{ m['content'] + eos_token }}{% endif %}{% endfor %}",
    "{{ bos_token }}{% for m in messages %}[AVAILABLE_TOOLS]{{ '[INST] ' + m['content'] + '[/INST]' }}{% endfor %}",
    "{{ '[SYSTEM_PROMPT]' + system + '[/SYSTEM_PROMPT]' }}{{ '[INST]' + m['content'] + '[/INST]' }}",
    "{% for m in messages %}{{'<|' + m['role'] + '|>\n' + m['content'] + '<|endoftext|>\n'}}{% endfor %}"
    "{{ '<|user|>' }}",
]


@pytest.mark.parametrize("index", range(len(TEMPLATE_SNIPPETS)))
def test_detected_template_renders_like_llama_cpp(ridge_bin, index):
    template = TEMPLATE_SNIPPETS[index]
    messages = CONVERSATIONS["multi_turn"]
    expected = llama_cpp_render(template, messages, True)
    assert ridge_render(ridge_bin, messages, True, "--template", template) == expected


@functools.cache  # gguf-py reads the whole vocabulary: two seconds a call
def smollm2_template(path):
    gguf = pytest.importorskip("gguf")
    reader = gguf.GGUFReader(path)
    field = reader.fields["tokenizer.chat_template"]
    return bytes(field.parts[field.data[0]]).decode()


def test_default_model_template_is_chatml_with_default_system(ridge_bin, default_model):
    out = subprocess.run([ridge_bin, "chat-template", "-m", default_model, "--detect"], capture_output=True, check=True)
    detected = json.loads(out.stdout)
    assert detected["format"] == "chatml"
    assert "SmolLM" in detected["default_system_prompt"]


@pytest.mark.parametrize("add_generation_prompt", [True, False], ids=["gen", "nogen"])
@pytest.mark.parametrize("conversation", list(CONVERSATIONS))
def test_default_model_matches_its_jinja_template(ridge_bin, default_model, conversation, add_generation_prompt):
    jinja2 = pytest.importorskip("jinja2")
    template = smollm2_template(default_model)
    messages = CONVERSATIONS[conversation]
    env = jinja2.Environment(loader=jinja2.BaseLoader())
    expected = env.from_string(template).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                                 bos_token="<|im_start|>", eos_token="<|im_end|>")
    got = ridge_render(ridge_bin, messages, add_generation_prompt, "-m", default_model)
    assert got == expected
