#!/usr/bin/env python3
"""ridge's tool-calling prompts against llama.cpp's own Jinja rendering (`llama-server --jinja`, its
/apply-template endpoint): the conversations x tool sets of tests/conformance/test_tool_templates.py
on each tool template there and on the real Qwen2.5-Coder-0.5B GGUF's template. Prints, per template,
how many renders are byte-equal and the first difference of the others. (The conformance test compares
with jinja2, as transformers renders; this is the llama.cpp side, which needs a llama-server build:
tools/build_llama_cpp.sh.) Templates that print today's date get today's date from both. The template
files are served with the default model loaded, whose BOS text llama.cpp prints for {{ bos_token }}
where ridge prints nothing (it adds the BOS token when it tokenizes), and its EOS text for {{ eos_token }}
where ridge prints the template family's "</s>": neither is counted.

    python3 bench/tool_templates_llama_server.py [--llama-server PATH] [--ridge build/ridge]
"""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
from test_tool_templates import CONVERSATIONS, TEMPLATES, TOOL_SETS, TOOL_TEMPLATES  # noqa: E402

BOS, EOS = "<|im_start|>", "<|im_end|>"  # the default model's, which hosts the template files
HOME = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llama_server(binary, model, template_file):
    port = free_port()
    cmd = [binary, "-m", model, "--jinja", "--port", str(port), "-c", "2048", "-t", "1", "--no-warmup"]
    if template_file:
        cmd += ["--chat-template-file", template_file]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return proc, port
        except Exception:
            time.sleep(0.2)
    proc.kill()
    sys.exit(f"llama-server did not start: {' '.join(cmd)}")


def apply_template(port, messages, tools):
    body = {"messages": messages}
    if tools:
        body["tools"] = tools
    req = urllib.request.Request(f"http://127.0.0.1:{port}/apply-template", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        return json.loads(urllib.request.urlopen(req, timeout=30).read())["prompt"], None
    except urllib.error.HTTPError as e:
        return None, e.read().decode()[:200]


def ridge_render(ridge, messages, tools, template=None, model=None):
    body = {"messages": messages}
    if tools:
        body["tools"] = tools
    args = [ridge, "chat-template", "--today", datetime.date.today().strftime("%d %b %Y")]
    args += ["--template", template] if template else ["-m", model]
    r = subprocess.run(args, input=json.dumps(body).encode(), capture_output=True)
    return (r.stdout.decode(), None) if r.returncode == 0 else (None, r.stderr.decode()[:200])


def first_difference(a, b):
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"at byte {i}: ridge {a[max(0, i - 20):i + 30]!r} | llama.cpp {b[max(0, i - 20):i + 30]!r}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-server", default=os.path.join(HOME, "llama.cpp", "build-avx512", "bin", "llama-server"))
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    a = ap.parse_args()
    default_model = os.path.join(HOME, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    qwen = os.path.join(HOME, "models", "Qwen2.5-Coder-0.5B-Instruct.gguf")
    cases = [(name, str(TEMPLATES / name), default_model) for name in sorted(TOOL_TEMPLATES)]
    cases.append(("Qwen2.5-Coder-0.5B GGUF", None, qwen))
    total_equal = total = 0
    for label, template_file, model in cases:
        proc, port = llama_server(a.llama_server, model, template_file)
        equal, both_refuse, report = 0, 0, []
        try:
            template = open(template_file).read() if template_file else None
            for conv_name, messages in sorted(CONVERSATIONS.items()):
                for tools_name, tools in sorted(TOOL_SETS.items()):
                    ref, ref_err = apply_template(port, messages, tools)
                    ours, our_err = ridge_render(a.ridge, messages, tools, template, None if template else model)
                    # llama.cpp prints the loaded model's BOS text for {{ bos_token }}; ridge renders it empty
                    # and adds the BOS token when tokenizing.
                    if ref is not None and template and "bos_token" in template and ref.startswith(BOS):
                        ref = ref[len(BOS):]
                    # ... and the loaded model's EOS text for {{ eos_token }} (templates that never write it themselves)
                    if ref is not None and template and EOS not in template:
                        ref = ref.replace(EOS, "</s>")
                    if ref is None and ours is None:
                        both_refuse += 1
                    elif ref == ours:
                        equal += 1
                    else:
                        report.append(f"  {conv_name}/{tools_name}: " + (
                            f"llama.cpp refuses ({ref_err})" if ref is None else f"ridge refuses ({our_err})" if ours is None
                            else first_difference(ours, ref)))
        finally:
            proc.kill()
        n = len(CONVERSATIONS) * len(TOOL_SETS)
        total += n
        total_equal += equal + both_refuse
        print(f"{label}: {equal}/{n} byte-equal" + (f", {both_refuse} refused by both" if both_refuse else ""))
        for line in report[:8]:
            print(line)
    print(f"\nall templates: {total_equal}/{total} the same (equal or refused by both)")


if __name__ == "__main__":
    main()
