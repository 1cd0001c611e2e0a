#!/usr/bin/env python3
"""Is speculation never slower? Total output tokens/s of `ridge serve` with --speculative off and with
--speculative auto (and, for reference, always-on prompt lookup), from 1 to 64 concurrent requests
(`ridge bench serve --sweep-concurrency`), interleaved over rounds, every server running the whole
time on its own port. Synthetic prompts (random words): prompt lookup rarely finds anything there,
so what this measures is what speculating costs when it does not pay, and whether auto turns it off.

    python3 bench/spec_concurrency_sweep.py [-m default] [-c 1,4,16,64] [-n 64] [--rounds 2]
        [--draft-model qwen2.5-coder-0.5b]   # with -m qwen2.5-coder-1.5b: auto over the draft model
        [--temperature 1.0]                  # sampled outputs: drafts rejected more often
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
from serve_fixture import running_server  # noqa: E402


def served_model(url):
    with urllib.request.urlopen(url + "/v1/models", timeout=10) as r:
        return json.loads(r.read())["data"][0]["id"]


def sweep(ridge, url, levels, n, input_len, output_len, temperature=0.0, dataset=None):
    prompts = ["--dataset", dataset] if dataset else ["--input-len", f"fixed:{input_len}"]
    out = subprocess.run([ridge, "bench", "serve", "--base-url", url, "--model", served_model(url),
                          "--sweep-concurrency", levels, "-n", str(n), "--temperature", str(temperature),
                          *prompts, "--output-len", f"fixed:{output_len}", "--json", "-q"],
                         check=True, capture_output=True, text=True)
    data = json.loads(out.stdout)
    points = data if isinstance(data, list) else data.get("sweep", data.get("points"))
    return {int(p["concurrency"]): p["output_throughput"] for p in points}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("--draft-model")
    ap.add_argument("-c", "--concurrency", default="1,4,16,64")
    ap.add_argument("-n", "--num-requests", type=int, default=64)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("-k", "--num-speculative-tokens", type=int, default=4)
    ap.add_argument("--temperature", type=float, default=0.0,
                    help="of every request: sampled outputs are a workload where drafts are rejected more often")
    ap.add_argument("--task", choices=["words", "code"], default="words",
                    help="words: synthetic prompts of random words (low acceptance); code: HumanEval problems")
    a = ap.parse_args()
    dataset = None
    if a.task == "code":
        sys.path.insert(0, str(ROOT / "bench"))
        from speculative_serve import humaneval_prompts  # noqa: E402
        dataset = str(pathlib.Path(tempfile.mkdtemp()) / "humaneval.jsonl")
        with open(dataset, "w") as f:
            for p in humaneval_prompts(164):
                f.write(json.dumps({"prompt": p, "max_tokens": a.output_len}) + "\n")
    k = ["--num-speculative-tokens", str(a.num_speculative_tokens), "--max-num-seqs", "64"]
    draft = ["--draft-model", a.draft_model] if a.draft_model else []
    configs = {"off": ["--speculative", "off", "--max-num-seqs", "64"], "auto": ["--speculative", "auto", *draft, *k],
               "always": ["--speculative", "draft" if a.draft_model else "ngram", *draft, *k]}
    levels = [int(c) for c in a.concurrency.split(",")]
    runs = {name: {c: [] for c in levels} for name in configs}
    servers, stack = {}, []
    try:
        for name, args in configs.items():
            cm = running_server(a.ridge, a.model, *args, ctx_size=1024 if dataset else 512, startup_timeout=300)
            servers[name] = cm.__enter__().base_url
            stack.append(cm)
        for r in range(a.rounds):
            for name, url in servers.items():
                got = sweep(a.ridge, url, a.concurrency, a.num_requests, a.input_len, a.output_len, a.temperature,
                            dataset)
                for c in levels:
                    runs[name][c].append(got[c])
                print(f"round {r + 1} {name:<7} " + "  ".join(f"c{c} {got[c]:.1f}" for c in levels), file=sys.stderr)
    finally:
        for cm in reversed(stack):
            cm.__exit__(None, None, None)
    always = "draft model" if a.draft_model else "prompt lookup"
    print(f"\n{a.model}, {a.task} prompts: output tok/s by concurrency, mean of {a.rounds} rounds, temperature {a.temperature}; "
          f"'always' = {always} on every decode")
    print("| concurrency | off | auto | auto / off | always | always / off |")
    print("|---|---|---|---|---|---|")
    for c in levels:
        off, auto, on = (statistics.mean(runs[n][c]) for n in ("off", "auto", "always"))
        print(f"| {c} | {off:.1f} | {auto:.1f} | {auto / off:.2f}x | {on:.1f} | {on / off:.2f}x |")


if __name__ == "__main__":
    main()
