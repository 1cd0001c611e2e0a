#!/usr/bin/env python3
"""Disaggregated prefill/decode against co-location, side by side on this machine (interleaved rounds).

The workload: STREAMS decoding streams (short prompts, long outputs, a closed loop) while a 2,000-token
prompt arrives every LONG_EVERY seconds. Both halves are `ridge bench serve` runs started together
against the same endpoint. Configurations: one co-located instance with every core (`-t 2`) at each
--prefill-chunk of CHUNKS, and one prefill + one decode instance with one thread each (1P1D).
Reports decode ITL p99 / TPOT and the long prompts' TTFT p50/p99, goodput at the ITL SLO, and for
1P1D the transfer timeline of the long prompts (GET /ridge/kv/transfers on the prefill instance).

  python3 bench/disagg_side_by_side.py [--model default] [--rounds 2] [--json-out report.json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE = os.path.join(ROOT, "build", "ridge")
BANNER = re.compile(r"on http://([0-9.]+):(\d+)/")


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def start(args, label):
    log = tempfile.NamedTemporaryFile(prefix=f"ridge-{label}-", suffix=".log", delete=False)
    proc = subprocess.Popen([RIDGE, "serve", "--port", "0", *args], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        text = open(log.name, errors="replace").read()
        m = BANNER.search(text)
        if proc.poll() is not None:
            sys.exit(f"{label} exited:\n{text[-3000:]}")
        if m:
            url = f"http://{m.group(1)}:{m.group(2)}"
            try:
                get(url + "/health")
                return proc, url, log.name
            except OSError:
                pass
        time.sleep(0.2)
    sys.exit(f"{label} did not start")


def stop(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def bench_serve(url, args, out):
    model = json.loads(get(url + "/v1/models"))["data"][0]["id"]
    subprocess.run([RIDGE, "bench", "serve", "--base-url", url, "--model", model, "-q", "--json-out", out, *args],
                   check=True, stdout=subprocess.DEVNULL)


def run_config(name, a):
    common = ["-m", a.model, "--ctx-size", "4096", "--kv-memory", "1GiB"]
    if name == "1P1D":
        prefill, purl, _ = start([*common, "-t", "1", "--role", "prefill"], "prefill")
        decode, url, _ = start([*common, "-t", "1", "--role", "decode", "--prefill-endpoint", purl,
                                "--remote-prefill-min-tokens", "256"], "decode")
        procs = [prefill, decode]
    else:
        chunk = name.split("=")[1]
        server, url, _ = start([*common, "-t", "2", "--prefill-chunk", chunk], name)
        procs, purl = [server], None
    tmp = tempfile.mkdtemp(prefix="disagg-")
    streams = ["-c", str(a.streams), "-n", str(a.streams * a.requests_per_stream), "--input-len", "fixed:64",
               "--output-len", f"fixed:{a.output_len}", "--slo", f"itl={a.itl_slo_ms}ms", "--seed", "1"]
    longs = ["--request-rate", str(1.0 / a.long_every), "--arrival", "constant", "-n", str(a.n_long),
             "--input-len", f"fixed:{a.long_len}", "--output-len", "fixed:4", "--slo", f"ttft={a.ttft_slo_s}s", "--seed", "2"]
    try:
        t1 = threading.Thread(target=bench_serve, args=(url, streams, f"{tmp}/streams.json"))
        t2 = threading.Thread(target=bench_serve, args=(url, longs, f"{tmp}/longs.json"))
        t1.start(); time.sleep(1.0); t2.start()
        t1.join(); t2.join()
        s = json.load(open(f"{tmp}/streams.json"))["summary"]
        l = json.load(open(f"{tmp}/longs.json"))["summary"]
        transfers = json.loads(get(purl + "/ridge/kv/transfers")) if purl else []
        metrics = get(url + "/metrics").decode()
    finally:
        stop(procs)
    result = {"config": name,
              "itl_p50_ms": s["itl_ms"]["p50"], "itl_p99_ms": s["itl_ms"]["p99"],
              "tpot_p50_ms": s["tpot_ms"]["p50"], "tpot_p99_ms": s["tpot_ms"]["p99"],
              "decode_tok_s": s["output_throughput"],
              "streams_in_slo": s.get("good_requests", 0) / max(1, s["completed"]),
              "long_ttft_p50_ms": l["ttft_ms"]["p50"], "long_ttft_p99_ms": l["ttft_ms"]["p99"],
              "long_goodput": l.get("goodput"), "errors": s["failed"] + l["failed"]}
    long_transfers = [t for t in transfers if t.get("tokens", 0) >= a.long_len - 64 and t.get("ok")]
    ok = [t for t in transfers if t.get("ok")]
    if ok and ok[-1].get("transport_put_seconds_total"):
        last = ok[-1]
        result["transport_put_gbs"] = last["transport_bytes_total"] / last["transport_put_seconds_total"] / 1e9
    if long_transfers:
        result["transfers"] = [{k: t[k] for k in ("tokens", "bytes", "descriptors", "blocks", "puts", "compute_done",
                                                 "transfer_done")} | {"layer_sent": t["layer_sent"]} for t in long_transfers]
    m = re.search(r"^ridge:kv_transfer_failures_total (\S+)$", metrics, re.M)
    if m:
        result["transfer_failures"] = float(m.group(1))
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="default")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--streams", type=int, default=4)
    p.add_argument("--requests-per-stream", type=int, default=4)
    p.add_argument("--output-len", type=int, default=192)
    p.add_argument("--long-len", type=int, default=2000)
    p.add_argument("--long-every", type=float, default=6.0)
    p.add_argument("--n-long", type=int, default=4)
    p.add_argument("--chunks", default="64,256")
    p.add_argument("--itl-slo-ms", type=float, default=60)
    p.add_argument("--ttft-slo-s", type=float, default=2)
    p.add_argument("--json-out")
    a = p.parse_args()
    configs = [f"colocated-chunk={c}" for c in a.chunks.split(",")] + ["1P1D"]
    rounds = []
    for r in range(a.rounds):
        for name in (configs if r % 2 == 0 else list(reversed(configs))):
            res = run_config(name, a)
            res["round"] = r
            rounds.append(res)
            print(json.dumps({k: v for k, v in res.items() if k != "transfers"}), flush=True)
    print(f"\n{a.streams} decoding streams (64-token prompts, {a.output_len} tokens out) + a {a.long_len}-token prompt every "
          f"{a.long_every} s; median of {a.rounds} interleaved rounds; SLO itl<={a.itl_slo_ms} ms, ttft<={a.ttft_slo_s} s")
    print(f"| {'config':<20} | {'ITL p50':>8} | {'ITL p99':>8} | {'TPOT p50':>8} | {'decode tok/s':>12} | "
          f"{'long TTFT p50':>13} | {'long TTFT p99':>13} | {'streams in SLO':>14} |")
    print("|" + "|".join("-" * (w + 2) for w in (20, 8, 8, 8, 12, 13, 13, 14)) + "|")
    for name in configs:
        rs = [x for x in rounds if x["config"] == name]
        med = lambda k: statistics.median(x[k] for x in rs)
        good = med("streams_in_slo")
        print(f"| {name:<20} | {med('itl_p50_ms'):>8.1f} | {med('itl_p99_ms'):>8.1f} | {med('tpot_p50_ms'):>8.1f} | "
              f"{med('decode_tok_s'):>12.1f} | {med('long_ttft_p50_ms'):>13.0f} | {med('long_ttft_p99_ms'):>13.0f} | {good:>14.2f} |")
    for x in rounds:
        if "transport_put_gbs" in x:
            print(f"\nround {x['round']}: the prefill instance's transport moved its bytes at {x['transport_put_gbs']:.1f} GB/s "
                  "while posting puts (all transfers; compare `ridge bench kv-transfer`)")
        for t in x.get("transfers", [])[:1]:
            sent = t["layer_sent"]
            print(f"\nround {x['round']} transfer of {t['tokens']} positions: {t['bytes'] / 1e6:.1f} MB in {t['puts']} puts "
                  f"({t['descriptors']} descriptors for {t['blocks']} blocks); layers handed over from {sent[0]:.3f} s to "
                  f"{sent[-1]:.3f} s, compute done {t['compute_done']:.3f} s, last byte landed {t['transfer_done']:.3f} s "
                  f"(exposed {1e3 * (t['transfer_done'] - t['compute_done']):.2f} ms)")
    if a.json_out:
        json.dump(rounds, open(a.json_out, "w"), indent=1)


if __name__ == "__main__":
    main()
