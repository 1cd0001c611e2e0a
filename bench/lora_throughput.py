#!/usr/bin/env python3
"""LoRA serving throughput (issue 47): 16 concurrent streamed greedy requests (max_tokens 64, ignore_eos) spread
over 1, 4 and 8 distinct rank-16 adapters against the same 16 requests on the base alone, in one `ridge serve`
that holds all 8 adapters (--max-loras 9: room for the load-time test's ninth); and the time to load an adapter
from disk (POST /v1/load_lora_adapter).

Each round runs the four configurations one after another, the order rotated every round (interleaved, so a
machine whose speed drifts hurts them alike); every configuration gets its own prompts (the same lengths), so no
configuration is helped by blocks another one left in the prefix cache.

Per configuration and round: decode tokens/s = the content chunks that arrive while all 16 streams are decoding
(from the moment the last stream got its first token to the moment the first stream finished) divided by that
window; also output tokens/s over the whole burst, TTFT and inter-token-latency medians. Summary: the median over
rounds of each, and the ratio of the 8-adapter decode tokens/s to the base's (target >= 0.8).

The adapters: tools/make_lora_adapters.py --distinct 8 --rank 16 (all seven targets, PEFT directories).

  python3 bench/lora_throughput.py                      # default model, 2 rounds; JSON to bench/results/
  python3 bench/lora_throughput.py -m qwen2.5-coder-0.5b --rounds 3 -t 2
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multimodel_lib import (MODEL_FILES, MODELS, RIDGE, ROOT, Server, chat, cpu_info, cpu_line,  # noqa: E402
                            default_out, loadavg, log_tail, now, percentile, remove_snapshot, snapshot_ridge)

sys.path.insert(0, os.path.join(ROOT, "tools"))
import make_lora_adapters  # noqa: E402

N_REQUESTS = 16
CONFIGS = {"base": 0, "1 adapter": 1, "4 adapters": 4, "8 adapters": 8}
WORDS = ("the river runs past old stone houses while children play near the water and birds sing in tall trees "
         "under a pale morning sky as merchants open their shops and carts roll over the bridge toward the market "
         "where bread fish and fruit are sold every day of the week").split()


def ridge_has_lora(ridge):
    try:
        out = subprocess.run([ridge, "serve", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--lora" in out.stdout + out.stderr


def model_path(name):
    path = os.path.join(MODELS, MODEL_FILES[name]) if name in MODEL_FILES else name
    if not os.path.exists(path):
        raise SystemExit(f"model file missing: {path}")
    return path


def assignment(config, base_name):
    """The model name of each of the 16 requests: the base, or adapters d0..d{k-1} round-robin."""
    k = CONFIGS[config]
    return [base_name if k == 0 else f"d{i % k}" for i in range(N_REQUESTS)]


def burst(server, names, prompts, max_tokens):
    """16 streams released together; their records (multimodel_lib.chat) and the decode-window figures."""
    records = [None] * len(names)
    barrier = threading.Barrier(len(names))

    def one(i):
        body = {"model": names[i], "messages": [{"role": "user", "content": prompts[i]}], "max_tokens": max_tokens,
                "temperature": 0, "stream": True, "stream_options": {"include_usage": True}, "ignore_eos": True}
        barrier.wait()
        records[i] = chat(server, body)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(names))]
    t0 = now()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t1 = now()
    failed = [r for r in records if not r["ok"]]
    out = {"requests": len(records), "failed": len(failed), "errors": [r["error"] for r in failed][:4]}
    ok = [r for r in records if r["ok"] and r["token_times"]]
    tokens = sum(r["tokens"] for r in ok)
    out["output_tokens"] = tokens
    out["burst_seconds"] = round(t1 - t0, 3)
    out["output_tok_s"] = round(tokens / (t1 - t0), 2) if t1 > t0 else None
    if len(ok) == len(records):
        start = max(r["token_times"][0] for r in ok)  # every stream decoding from here
        end = min(r["token_times"][-1] for r in ok)  # ... until the first one finishes
        in_window = sum(1 for r in ok for t in r["token_times"] if start < t <= end)
        out["decode_window_s"] = round(end - start, 3)
        out["decode_tok_s"] = round(in_window / (end - start), 2) if end > start else None
    else:
        out["decode_window_s"] = out["decode_tok_s"] = None
    ttfts = [r["ttft"] for r in ok if r["ttft"] is not None]
    itls = [b - a for r in ok for a, b in zip(r["token_times"], r["token_times"][1:])]
    out["ttft_p50_ms"] = round(1000 * statistics.median(ttfts), 1) if ttfts else None
    out["itl_p50_ms"] = round(1000 * statistics.median(itls), 2) if itls else None
    out["itl_p99_ms"] = round(1000 * percentile(itls, 99), 2) if itls else None
    return out


def prompts_for(rng, words):
    return [" ".join(rng.choice(WORDS) for _ in range(words)) + " Continue the story." for _ in range(N_REQUESTS)]


def load_times(server, adir, n, repeats):
    """Seconds of POST /v1/load_lora_adapter for each of the n adapter directories (names t<i>), `repeats` times
    (unloaded after each), and the answers that were not 200."""
    times, errors = [], []
    for rep in range(repeats):
        for i in range(n):
            name = f"t{i}"
            t = now()
            status, body = server.request("POST", "/v1/load_lora_adapter", {"lora_name": name, "lora_path": f"d{i}"})
            dt = now() - t
            if status != 200:
                errors.append(f"load d{i}: {status} {str(body)[:300]}")
                continue
            times.append(dt)
            status, body = server.request("POST", "/v1/unload_lora_adapter", {"lora_name": name})
            if status != 200:
                errors.append(f"unload {name}: {status} {str(body)[:300]}")
    return times, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-m", "--model", default="default", help="a name of multimodel_lib.MODEL_FILES or a GGUF path")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--prompt-words", type=int, default=24)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--load-repeats", type=int, default=2)
    ap.add_argument("--extra", default="", help="more `ridge serve` arguments")
    ap.add_argument("--out", help="JSON path (default bench/results/lora-throughput-DATE-CPU.json)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    cpu = cpu_info()
    if not ridge_has_lora(RIDGE):
        raise SystemExit(f"{RIDGE} serve --help lists no --lora: build ridge with LoRA support first")
    model = model_path(args.model)
    adir = tempfile.mkdtemp(prefix="ridge-lora-bench-")
    t = now()
    manifest = make_lora_adapters.make_adapters(
        model, adir, {f"d{i}": (args.rank, make_lora_adapters.ALL, 2.0 * args.rank, False) for i in range(8)},
        gguf_files=False, log=lambda s: None)
    make_seconds = now() - t
    adapter_bytes = manifest["d0"]["bytes"]
    print(f"CPU: {cpu_line(cpu)}; model {model}; 8 rank-{args.rank} adapters ({adapter_bytes / 1e6:.1f} MB each) "
          f"written in {make_seconds:.1f} s under {adir}")

    snap, ridge_info = snapshot_ridge(RIDGE)
    lora_args = [a for i in range(8) for a in ("--lora", f"d{i}={os.path.join(adir, f'd{i}')}")]
    cmd = [snap, "serve", "-m", model, "--host", "127.0.0.1", "--port", "0", "-t", str(args.threads),
           "--max-num-seqs", str(max(N_REQUESTS, 16)), "--max-loras", "9", "--lora-dir", adir, *lora_args,
           *args.extra.split()]
    server = Server("ridge", cmd, tempfile.mktemp(prefix="ridge-lora-bench-", suffix=".log"), shown_bin=RIDGE)
    result = {"bench": "lora_throughput", "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu": cpu,
              "ridge": ridge_info, "model": model, "args": vars(args), "adapter_rank": args.rank,
              "adapter_bytes": adapter_bytes, "command": server.command_line(), "loadavg_start": loadavg(),
              "rounds": []}
    try:
        t = now()
        server.start(timeout=300)
        result["server_start_s"] = round(now() - t, 2)
        status, listed = server.request("GET", "/v1/models")
        base_name = next(m["id"] for m in listed["data"] if not m.get("parent"))
        result["base_name"] = base_name
        # Warm-up: every adapter and the base once.
        for name in [base_name] + [f"d{i}" for i in range(8)]:
            rec = chat(server, {"model": name, "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4,
                                "temperature": 0, "stream": True})
            if not rec["ok"]:
                raise RuntimeError(f"warm-up request for {name} failed: {rec['error']}")
        rng = random.Random(args.seed)
        configs = list(CONFIGS)
        for rnd in range(args.rounds):
            order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
            row = {"round": rnd, "order": order, "configs": {}}
            for config in order:
                names = assignment(config, base_name)
                r = burst(server, names, prompts_for(rng, args.prompt_words), args.max_tokens)
                row["configs"][config] = r
                print(f"round {rnd} {config:>10}: decode {r['decode_tok_s']} tok/s (window {r['decode_window_s']} s), "
                      f"output {r['output_tok_s']} tok/s, TTFT p50 {r['ttft_p50_ms']} ms, ITL p50 {r['itl_p50_ms']} ms"
                      + (f", {r['failed']} failed: {r['errors']}" if r["failed"] else ""), flush=True)
            result["rounds"].append(row)
        times, errors = load_times(server, adir, 8, args.load_repeats)
        result["load_seconds"] = [round(x, 4) for x in times]
        result["load_errors"] = errors
        result["metrics_lora"] = {k: v for k, v in (server.metrics() or {}).items()
                                  if "lora" in k.lower() or "adapter" in k.lower()}
    except BaseException as e:
        result["error"] = f"{type(e).__name__}: {e}"
        result["log_tail"] = log_tail(server.log_path)
        print(f"FAILED: {result['error']}\n{result['log_tail']}", file=sys.stderr)
    finally:
        result["stop"] = server.stop()
        result["loadavg_end"] = loadavg()
        remove_snapshot(snap)

    summary = {}
    for config in CONFIGS:
        vals = [r["configs"][config] for r in result["rounds"] if config in r["configs"]]
        dec = [v["decode_tok_s"] for v in vals if v.get("decode_tok_s")]
        outp = [v["output_tok_s"] for v in vals if v.get("output_tok_s")]
        itl = [v["itl_p50_ms"] for v in vals if v.get("itl_p50_ms")]
        summary[config] = {"decode_tok_s_median": round(statistics.median(dec), 2) if dec else None,
                           "decode_tok_s": dec,
                           "output_tok_s_median": round(statistics.median(outp), 2) if outp else None,
                           "itl_p50_ms_median": round(statistics.median(itl), 2) if itl else None,
                           "failed": sum(v["failed"] for v in vals)}
    base = summary["base"]["decode_tok_s_median"]
    for config in CONFIGS:
        v = summary[config]["decode_tok_s_median"]
        summary[config]["ratio_to_base"] = round(v / base, 3) if v and base else None
    result["summary"] = summary
    ratio8 = summary["8 adapters"]["ratio_to_base"]
    result["ratio_8_adapters"] = ratio8
    result["target_ratio"] = 0.8
    result["meets_target"] = ratio8 is not None and ratio8 >= 0.8
    if result.get("load_seconds"):
        ls = sorted(result["load_seconds"])
        result["load_summary"] = {"n": len(ls), "median_s": round(statistics.median(ls), 4), "max_s": round(ls[-1], 4),
                                  "mb": round(adapter_bytes / 1e6, 2)}

    out = args.out or default_out("lora-throughput", cpu)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"\nCPU: {cpu_line(cpu)}; {args.rounds} rounds of {N_REQUESTS} streams x {args.max_tokens} tokens")
    for config, s in summary.items():
        print(f"  {config:>10}: decode {s['decode_tok_s_median']} tok/s (x{s['ratio_to_base']} of base), "
              f"output {s['output_tok_s_median']} tok/s, ITL p50 {s['itl_p50_ms_median']} ms, failed {s['failed']}")
    print(f"  8 adapters / base decode: {ratio8} (target >= 0.8: {'met' if result['meets_target'] else 'NOT met'})")
    if result.get("load_summary"):
        ls = result["load_summary"]
        print(f"  adapter load from disk (POST /v1/load_lora_adapter, {ls['mb']} MB): median {ls['median_s'] * 1000:.1f} ms, "
              f"max {ls['max_s'] * 1000:.1f} ms over {ls['n']}")
    if result.get("load_errors"):
        print(f"  load errors: {result['load_errors']}")
    print(f"JSON: {out}")
    shutil.rmtree(adir, ignore_errors=True)
    return 1 if "error" in result else 0


if __name__ == "__main__":
    sys.exit(main())
