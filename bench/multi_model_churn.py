#!/usr/bin/env python3
"""Churn between more models than fit (issue 43): clients asking every model at random of a server that
holds fewer of them at once.

    python3 bench/multi_model_churn.py [--duration 120] [--clients 8] [--models-max 2] [--server ridge] [--check]

The server (`build/ridge serve --models-dir DIR --models-max 2 --port 0 -t 2`, DIR holding links named
NAME.gguf to the models' files; --server llama: llama.cpp's router `llama-server --models-dir DIR
--models-max 2 -t 2` instead) starts with every model unloaded; --clients clients send chat requests back to
back for --duration s, each to a model drawn at random, streamed or not (--stream-fraction), max_tokens
--max-tokens, temperature 0.8. Counted: requests per model, streaming or not, and HTTP status; every
failure (a non-200, a stream without [DONE] or an error event, a transport error) with its message; TTFT
and latency p50 / p99 per model. /v1/models is polled every --poll s (each change of the models' states
kept, the most models seen loaded / in memory at once); /metrics is read every 5 s: model loads, unloads,
evictions (ridge:model_evictions_total) and load seconds per model.

Target: 0 failed requests (and never more than --models-max models loaded at once). With --check the exit
status is 1 when it is missed. JSON: --out (default bench/results/multi-model-churn-DATE-CPUTAG.json).
"""
import argparse
import collections
import os
import random
import re
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import multimodel_lib as mm  # noqa: E402

LABEL = re.compile(r'^(?:[a-z]+:)?(model_(?:loads|unloads|evictions|load_seconds)_total|model_loaded)\{.*model_name="([^"]*)"')
PROMPTS = ["Write a haiku about rivers.", "What is the capital of France?", "Explain recursion in one sentence.",
           "List three fruits.", "Write a Python function that adds two numbers.", "Tell me a joke about cats."]


def model_counters(metrics):
    """{counter: {model: value}} from parsed /metrics."""
    out = collections.defaultdict(dict)
    for k, v in (metrics or {}).items():
        m = LABEL.match(k)
        if m:
            out[m.group(1)][m.group(2)] = v
    return dict(out)


def client(server, models, args, deadline, records, seed):
    rng = random.Random(seed)
    while mm.now() < deadline:
        model = rng.choice(models)
        stream = rng.random() < args.stream_fraction
        body = mm.chat_body(model, rng.choice(PROMPTS), args.max_tokens, stream=stream, temperature=0.8)
        rec = mm.chat(server, body, timeout=args.request_timeout)
        records.append(rec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="default,qwen2.5-coder-0.5b,gemma3-270m")
    ap.add_argument("--server", default="ridge", choices=["ridge", "llama"])
    ap.add_argument("--models-max", type=int, default=2)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--stream-fraction", type=float, default=0.5)
    ap.add_argument("--poll", type=float, default=0.5, help="seconds between two reads of /v1/models")
    ap.add_argument("--threads", "-t", type=int, default=2)
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--ridge", default=mm.RIDGE)
    ap.add_argument("--ridge-args", default="")
    ap.add_argument("--llama-args", default="")
    ap.add_argument("--copy", action="store_true", help="copy the model files into the models directory (default: links)")
    ap.add_argument("--request-timeout", type=float, default=300.0)
    ap.add_argument("--check", action="store_true", help="exit 1 when a request failed")
    ap.add_argument("--out")
    args = ap.parse_args()

    cpu = mm.cpu_info()
    if args.server == "ridge" and not mm.ridge_has_router(args.ridge):
        sys.exit(f"{args.ridge} serve --help lists no --models-max: this ridge has no router yet")
    print(f"CPU: {mm.cpu_line(cpu)}; load average {mm.loadavg()}", flush=True)
    args.ridge_snap, ridge_info = mm.snapshot_ridge(args.ridge)
    models = [m for m in args.models.split(",") if m]
    mdir = mm.models_dir(models, copy=args.copy)
    names = [os.path.basename(m)[:-5] if m.endswith(".gguf") else m for m in models]
    server = (mm.Server.ridge(mdir, args.models_max, args.threads, args.ridge_args, ridge=args.ridge_snap, shown_bin=args.ridge)
              if args.server == "ridge" else mm.Server.llama(mdir, args.models_max, args.threads, args.llama_args))
    print(f"{server.kind}: {server.command_line()}", flush=True)
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "server": server.kind,
              "command": server.command_line(), "models": names,
              "config": {k: v for k, v in vars(args).items() if k not in ("out", "check", "ridge_snap")},
              "ridge": ridge_info, "load_average_start": mm.loadavg()}
    records, metrics_samples = [], []
    try:
        server.start()
        report["states_at_start"] = server.states()
        t0 = mm.now()
        poller = mm.StatePoller(server, t0, interval=args.poll)
        poller.start()
        meter = mm.CpuMeter(server)
        deadline = t0 + args.duration
        threads = [threading.Thread(target=client, args=(server, names, args, deadline, records, args.seed + i), daemon=True)
                   for i in range(args.clients)]
        for th in threads:
            th.start()
        next_print = t0 + 10
        while any(th.is_alive() for th in threads):
            time.sleep(min(5.0, max(0.1, deadline - mm.now())) if mm.now() < deadline else 0.5)
            met = model_counters(server.metrics())
            metrics_samples.append((round(mm.now() - t0, 2), met))
            if mm.now() >= next_print:
                next_print += 10
                bad = sum(1 for r in records if not r["ok"])
                st = poller.timeline[-1][1] if poller.timeline else {}
                print(f"[{mm.now() - t0:6.1f}s] {len(records)} requests, {bad} failed; evictions "
                      f"{sum((met.get('model_evictions_total') or {}).values()):g}; states "
                      + " ".join(f"{k}={v}" for k, v in sorted(st.items())), flush=True)
        report["wall_s"] = round(mm.now() - t0, 2)
        report["cores"] = meter.read()
        timeline = poller.stop()
        report["poll_failures"] = poller.failures
        report["states"] = timeline
        report["metrics_samples"] = metrics_samples
        report["metrics_end"] = model_counters(server.metrics())
    finally:
        report["stop"] = server.stop()
        report["log"] = server.log_path
        if server.kind == "ridge":
            report["log_models"], report["loads_evicting_several"] = mm.ridge_model_log(server.log_path)
        shutil.rmtree(mdir, ignore_errors=True)
        mm.remove_snapshot(args.ridge_snap)

    # per model and stream: counts, statuses, latencies
    rows, per = [], {}
    for m in names:
        for stream in (True, False):
            rs = [r for r in records if r["model"] == m and r["stream"] == stream]
            ok = [r for r in rs if r["ok"]]
            d = {"requests": len(rs), "ok": len(ok), "statuses": dict(collections.Counter(str(r["status"]) for r in rs)),
                 "latency_p50": mm.percentile([r["latency"] for r in ok], 50),
                 "latency_p99": mm.percentile([r["latency"] for r in ok], 99),
                 "ttft_p50": mm.percentile([r["ttft"] for r in ok if r["ttft"] is not None], 50),
                 "ttft_p99": mm.percentile([r["ttft"] for r in ok if r["ttft"] is not None], 99)}
            per[f"{m} {'stream' if stream else 'plain'}"] = d
            rows.append([m, "stream" if stream else "plain", d["requests"], d["ok"],
                         " ".join(f"{k}:{v}" for k, v in sorted(d["statuses"].items())),
                         mm.fmt_s(d["ttft_p50"], 2), mm.fmt_s(d["ttft_p99"], 2),
                         mm.fmt_s(d["latency_p50"], 2), mm.fmt_s(d["latency_p99"], 2)])
    report["per_model"] = per
    failures = [mm.slim(r, t0) for r in records if not r["ok"]]
    report["failed_requests"] = len(failures)
    report["failures_by_cause"] = dict(collections.Counter(re.sub(r"[0-9]+", "N", r["error"] or "?")[:200] for r in failures))
    report["failures"] = failures[:200]
    report["requests"] = len(records)
    counts = collections.Counter()
    max_loaded = max_resident = 0
    for _, s in timeline:
        for m, v in s.items():
            counts[(m, v)] += 1
        max_loaded = max(max_loaded, sum(1 for v in s.values() if v == "loaded"))
        max_resident = max(max_resident, sum(1 for v in s.values() if v in ("loaded", "loading", "draining")))
    report["state_changes"] = len(timeline)
    report["states_seen"] = {m: sorted({v for (mm_, v) in counts if mm_ == m}) for m in names}
    # "loading" also covers a load that waits for room (a model draining to make it)
    report["max_loaded_at_once"], report["max_loaded_loading_draining_at_once"] = max_loaded, max_resident
    report["load_average_end"] = mm.loadavg()

    print(f"\n{server.kind}, {len(names)} models, --models-max {args.models_max}, {args.clients} clients, "
          f"{report['wall_s']:.0f} s, max_tokens {args.max_tokens}; {cpu['model']}, {args.threads} threads; seconds")
    mm.print_table(["model", "kind", "requests", "ok", "statuses", "TTFT p50", "TTFT p99", "latency p50", "latency p99"], rows)
    end = report["metrics_end"]
    if end:
        print("/metrics at the end: " + "; ".join(
            f"{c.replace('_total', '')} " + ", ".join(f"{m}={v:g}" for m, v in sorted(d.items())) for c, d in sorted(end.items())))
    print(f"{len(records)} requests, {len(failures)} failed; {len(timeline)} state changes seen in /v1/models "
          f"(polled every {args.poll} s, {poller.failures} polls unanswered); at most {max_loaded} loaded and "
          f"{max_resident} loaded/loading/draining at once; states seen: "
          + "; ".join(f"{m}: {','.join(v)}" for m, v in report["states_seen"].items()))
    print(f"cores: server {report['cores']['server_cores']}, this script {report['cores']['client_cores']}, "
          f"other processes {report['cores']['other_cores']}")
    if args.server == "ridge":
        n_loads = sum(1 for line in report.get("log_models", []) if " loaded in " in line)
        print(f"server log: {n_loads} loads, {len(report.get('loads_evicting_several', []))} of them evicted more than one model"
              + "".join(f"\n  {x['model']}: {'; '.join(x['evicted'])}" for x in report.get("loads_evicting_several", [])[:5]))
    for cause, n in report["failures_by_cause"].items():
        print(f"  FAILED x{n}: {cause}")
    ok = not failures and max_loaded <= args.models_max
    report["target"] = {"failed_requests": 0, "max_loaded_at_most": args.models_max, "met": ok}
    print("target (0 failed, <= models-max loaded at once): " + ("met" if ok else "MISSED"))
    print("commands run:\n  " + report["command"])
    mm.save(args.out or mm.default_out("multi-model-churn", cpu), report)
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
