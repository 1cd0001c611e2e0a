#!/usr/bin/env python3
"""The tiered KV cache on a prefix-heavy workload: DOCS distinct documents of DOC_TOKENS tokens each
(more than the KV pool holds), each asked about REPEATS times in a shuffled order, one request at a
time; TTFT p50/p99 (streamed, first token) and the prompt tokens the server computed, with the tiers
off and on (--kv-offload-ram, --kv-offload-dir). Then the server restarts on the same disk
directory and the workload runs again: the disk tier serves its hits.

  python3 bench/kv_tiers_bench.py [--docs 12] [--repeats 3] [--kv-memory 64MiB] [--ram 96MiB]
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE = os.path.join(ROOT, "build", "ridge")
BANNER = re.compile(r"on http://([0-9.]+):(\d+)/")


def start(args):
    log = tempfile.NamedTemporaryFile(prefix="ridge-tiers-", suffix=".log", delete=False)
    proc = subprocess.Popen([RIDGE, "serve", "--port", "0", *args], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        m = BANNER.search(open(log.name, errors="replace").read())
        if proc.poll() is not None:
            sys.exit(open(log.name).read()[-3000:])
        if m:
            try:
                urllib.request.urlopen(f"http://{m.group(1)}:{m.group(2)}/health", timeout=5)
                return proc, m.group(1), int(m.group(2))
            except OSError:
                pass
        time.sleep(0.2)
    sys.exit("the server did not start")


def ttft(host, port, prompt):
    conn = http.client.HTTPConnection(host, port, timeout=300)
    t0 = time.monotonic()
    conn.request("POST", "/v1/completions", json.dumps({"prompt": prompt, "max_tokens": 4, "temperature": 0, "stream": True}),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = None
    for line in resp:
        if line.startswith(b"data: ") and b"[DONE]" not in line and first is None:
            first = time.monotonic() - t0
    conn.close()
    return first


def metric(host, port, name):
    text = urllib.request.urlopen(f"http://{host}:{port}/metrics").read().decode()
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def run(label, args, prompts):
    proc, host, port = start(args)
    try:
        times = [ttft(host, port, p) for p in prompts]
        prefilled = metric(host, port, "ridge:prefill_tokens_computed_total")
        loaded = metric(host, port, "ridge:kv_offload_loaded_tokens_total")
        disk_hits = metric(host, port, 'ridge:kv_offload_hits_total{tier="disk"}')
    finally:
        proc.terminate()
        proc.wait()
    q = statistics.quantiles(times, n=100)
    row = {"config": label, "ttft_p50_ms": 1e3 * statistics.median(times), "ttft_p99_ms": 1e3 * q[98],
           "prefill_tokens_computed": prefilled, "tier_loaded_tokens": loaded, "disk_hit_blocks": disk_hits}
    print(json.dumps(row), flush=True)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="default")
    p.add_argument("--docs", type=int, default=12)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--doc-words", type=int, default=1500)
    p.add_argument("--kv-memory", default="64MiB")
    p.add_argument("--ram", default="96MiB")
    p.add_argument("--disk", default="2GiB")
    p.add_argument("--threads", default="2")
    a = p.parse_args()
    rng = random.Random(1)
    words = "report budget river station market engine garden window history signal paper coffee".split()
    docs = [f"Document {i}. " + " ".join(rng.choice(words) for _ in range(a.doc_words)) for i in range(a.docs)]
    order = [i for i in range(a.docs) for _ in range(a.repeats)]
    rng.shuffle(order)
    prompts = [docs[i] + f"\nQuestion {k}: what is it about?" for k, i in enumerate(order)]
    common = ["-m", a.model, "-t", a.threads, "--ctx-size", "2048", "--kv-memory", a.kv_memory]
    disk = tempfile.mkdtemp(prefix="ridge-kv-tier-")
    try:
        rows = [run("tiers off", common, prompts),
                run(f"RAM {a.ram} + disk", [*common, "--kv-offload-ram", a.ram, "--kv-offload-dir", disk, "--kv-offload-size", a.disk], prompts),
                run("after a restart, disk only", [*common, "--kv-offload-dir", disk, "--kv-offload-size", a.disk], prompts)]
    finally:
        shutil.rmtree(disk, ignore_errors=True)
    print(f"\n{a.docs} documents of {a.doc_words} words, each asked {a.repeats} times in shuffled order, one at a time; "
          f"KV pool {a.kv_memory}")
    print(f"| {'config':<28} | {'TTFT p50':>9} | {'TTFT p99':>9} | {'prompt tokens computed':>29} | {'loaded from tiers':>17} |")
    print("|" + "|".join("-" * (w + 2) for w in (28, 9, 9, 29, 17)) + "|")
    for r in rows:
        print(f"| {r['config']:<28} | {r['ttft_p50_ms']:>7.0f}ms | {r['ttft_p99_ms']:>7.0f}ms | {r['prefill_tokens_computed']:>29.0f} | "
              f"{r['tier_loaded_tokens']:>17.0f} |")


if __name__ == "__main__":
    main()
