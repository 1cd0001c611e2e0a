#!/usr/bin/env python3
"""Structured output under load: N concurrent chat requests to `ridge serve`, each with its own JSON
schema (N distinct schemas, so N grammars compiled and masked side by side), against the same N
requests unconstrained with the same number of output tokens each (ignore_eos, max_tokens = what the
structured answer took), interleaved over several rounds. Prints the median time per output token
(decode time / (output tokens - 1), from each stream's first and last token) of each, and the ratio.
Structured runs go with jump-forward (the server's default: forced tokens count as output tokens, as a
client sees them) and without it ("jump_forward": false, every token decoded: the masks' own cost).

    python3 bench/structured_concurrency.py [--ridge build/ridge] [-m default] [-n 16] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "conformance"))
from serve_fixture import running_server  # noqa: E402

FIELDS = [("orderNumber", {"type": "integer", "minimum": 0, "maximum": 99999}),
          ("customerName", {"type": "string", "maxLength": 20}),
          ("city", {"enum": ["Paris", "Lyon", "Nice", "Lille"]}),
          ("express", {"type": "boolean"}),
          ("note", {"type": "string", "maxLength": 24}),
          ("items", {"type": "integer", "minimum": 1, "maximum": 9})]


def schema(i):
    """Request i's own schema: the fields rotated and renamed, so no two compile to the same grammar."""
    fields = FIELDS[i % len(FIELDS):] + FIELDS[:i % len(FIELDS)]
    props = {f"{name}{i}": spec for name, spec in fields}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def stream(url, body, out, i):
    body = {**body, "stream": True, "stream_options": {"include_usage": True}}
    req = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    first = last = None
    tokens = 0
    with urllib.request.urlopen(req, timeout=600) as resp:
        for line in resp:
            line = line.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                now = time.perf_counter()
                first = first or now
                last = now
    out[i] = {"tokens": tokens, "tpot": (last - first) / max(tokens - 1, 1) if first else None}


def run_all(url, bodies):
    out = [None] * len(bodies)
    threads = [threading.Thread(target=stream, args=(url, b, out, i)) for i, b in enumerate(bodies)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ridge", default="build/ridge")
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("-n", "--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-t", "--threads", type=int, default=2)
    a = ap.parse_args()
    prompt = [{"role": "user", "content": "Write one shipping order as JSON."}]
    modes = {"jump-forward": True, "no jump-forward": False}
    tpots = {name: [] for name in [*modes, "unconstrained"]}
    with running_server(a.ridge, a.model, ctx_size=16384, threads=a.threads) as server:
        url = server.base_url
        for r in range(a.rounds):
            row = {}
            for name, jump in modes.items():
                bodies = [{"messages": prompt, "max_tokens": 200, "temperature": 0.8, "seed": 100 * r + i,
                           "jump_forward": jump,
                           "response_format": {"type": "json_schema",
                                               "json_schema": {"name": f"o{i}", "schema": schema(i)}}}
                          for i in range(a.concurrency)]
                structured = run_all(url, bodies)
                row[name] = statistics.median(x["tpot"] for x in structured if x["tpot"])
            plain = run_all(url, [{"messages": prompt, "max_tokens": s["tokens"], "ignore_eos": True, "temperature": 0.8,
                                   "seed": 100 * r + i} for i, s in enumerate(structured)])
            row["unconstrained"] = statistics.median(x["tpot"] for x in plain if x["tpot"])
            for name, v in row.items():
                tpots[name].append(v)
            print(f"round {r + 1}: " + ", ".join(f"{k} {v * 1e3:.1f} ms/token" for k, v in row.items()), flush=True)
        m = server.metrics()
    base = statistics.median(tpots["unconstrained"])
    for name, v in tpots.items():
        print(f"{a.concurrency} concurrent, {a.rounds} rounds: {name:16} median TPOT {statistics.median(v) * 1e3:6.1f} ms "
              f"({statistics.median(v) / base:.3f}x unconstrained)")
    print(f"server: grammar masks {m.get('ridge:grammar_masks_total', 0):.0f}, mask seconds "
          f"{m.get('ridge:grammar_mask_seconds_total', 0):.2f}, max mask {m.get('ridge:grammar_mask_max_seconds', 0) * 1e3:.1f} ms, "
          f"forced tokens {m.get('ridge:grammar_forced_tokens_total', 0):.0f}")


if __name__ == "__main__":
    main()
