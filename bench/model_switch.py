#!/usr/bin/env python3
"""The cost of switching models (issue 43): ridge's router against llama.cpp's (llama-server --models-dir),
same model files, same threads, interleaved rounds.

    python3 bench/model_switch.py [--rounds 3] [--cycles 2] [--servers ridge,llama] [--no-swap] [--check]

Switching: each round starts each server afresh with every model unloaded and --models-max 1
(  ridge:     build/ridge serve --models-dir DIR --models-max 1 --port 0 -t 2
   llama.cpp: llama-server --models-dir DIR --models-max 1 --port P -t 2   (its router hands -t 2 to the
              model instances it spawns)  ),
then cycles --cycles times through the models, one streamed chat request at a time (max_tokens 16,
temperature 0): every request but the round's first finds another model loaded, so it pays an eviction and
a load. Timed per request: TTFT (send to the first content chunk: the load included) and the whole
request. The round's first request (nothing to evict) is reported apart as the cold load. The servers'
order alternates between rounds. DIR holds links named NAME.gguf to the files of ~/.cache/ridge/models, so
both servers call the models by the same names (both name a --models-dir file by its stem).

Forced swap under load (ridge; --swap-servers llama adds llama.cpp): --models-max 2, the first two models
loaded and each kept busy by --swap-clients closed-loop streaming clients (max_tokens --swap-max-tokens);
after --swap-warmup s a request for the third model forces the eviction of one of them. Reported: the busy
models' tokens/s over the --swap-before s before that request, during the swap window (from the request
to its first token) and over the --swap-after s after it, the third model's TTFT, and the models' states
from /v1/models (polled every 0.25 s).

Target (issue 43): ridge's median switch TTFT <= --target (0.5) x llama.cpp's, per model. With --check the
exit status is 1 when a model misses it or any request failed; otherwise 0 whatever the figures.
The JSON (--out, default bench/results/model-switch-DATE-CPUTAG.json) has every request.
"""
import argparse
import os
import random
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import multimodel_lib as mm  # noqa: E402

PROMPT = "Write a haiku about rivers."
BUSY = 0.3  # cores used by other processes above which a run's figures measure the machine as much as the server


def switch_run(server, models, cycles, max_tokens, gap):
    """One server start: cycles x the models (in the order given), each request timed; the server's states
    after each."""
    t0 = mm.now()
    server.start()
    out = {"command": server.command_line(), "requests": [], "states_at_start": server.states()}
    meter = mm.CpuMeter(server)
    try:
        first = True
        for c in range(cycles):
            for m in models:
                before = server.states()
                rec = mm.chat(server, mm.chat_body(m, PROMPT, max_tokens))
                rec["phase"] = "cold" if first else "switch"
                rec["cycle"] = c
                rec["loaded_before"] = sorted(k for k, v in (before or {}).items() if v == "loaded")
                rec["states_after"] = server.states()
                out["requests"].append(mm.slim(rec, t0))
                first = False
                print(f"   {server.kind:9s} {m:20s} {rec['phase']:6s} TTFT {mm.fmt_s(rec['ttft'])} s, "
                      f"total {mm.fmt_s(rec['latency'])} s, {rec['tokens']} tokens"
                      + ("" if rec["ok"] else f"  FAILED: {rec['error']}"), flush=True)
                time.sleep(gap)
        out["cores"] = meter.read()
        print(f"   {server.kind:9s} cores used: server {out['cores']['server_cores']}, other processes "
              f"{out['cores']['other_cores']}" + (" (busy machine)" if out["cores"]["other_cores"] > BUSY else ""), flush=True)
        if server.kind == "ridge":
            met = server.metrics() or {}
            out["metrics"] = {k: v for k, v in met.items() if k.startswith("ridge:model_")}
    finally:
        out["stop"] = server.stop()
        out["log"] = server.log_path
    return out


class Loop(threading.Thread):
    """A closed-loop streaming client of one model: request after request until stopped."""

    def __init__(self, server, model, max_tokens, stop, records, token_times, seed):
        super().__init__(daemon=True)
        self.server, self.model, self.max_tokens, self.stop = server, model, max_tokens, stop
        self.records, self.token_times, self.rng = records, token_times, random.Random(seed)

    def run(self):
        while not self.stop.is_set():
            body = mm.chat_body(self.model, "Tell a long story about " + mm.random_prompt(self.rng, 12), self.max_tokens)
            rec = mm.chat(self.server, body, on_token=self.token_times.append)
            self.records.append(rec)
            if not rec["ok"]:
                time.sleep(0.2)


def rate(times, a, b):
    return None if b <= a else sum(1 for t in times if a <= t < b) / (b - a)


def swap_run(server, models, args):
    busy, third = models[:2], models[2]
    server.start()
    out = {"command": server.command_line(), "busy": busy, "third": third}
    stop = threading.Event()
    records = {m: [] for m in busy}
    times = {m: [] for m in busy}
    poller = None
    try:
        for m in busy:
            out.setdefault("load_s", {})[m] = round(server.load(m), 3)
        m0 = server.metrics() if server.kind == "ridge" else None
        meter = mm.CpuMeter(server)
        t0 = mm.now()
        poller = mm.StatePoller(server, t0)
        poller.start()
        loops = [Loop(server, m, args.swap_max_tokens, stop, records[m], times[m], seed=i * 7 + j)
                 for i, m in enumerate(busy) for j in range(args.swap_clients)]
        for lp in loops:
            lp.start()
        time.sleep(args.swap_warmup + args.swap_before)
        rec = mm.chat(server, mm.chat_body(third, PROMPT, args.max_tokens))
        t_c = rec["t_send"]
        t_first = t_c + (rec["ttft"] if rec["ttft"] is not None else (rec["latency"] or 0.0))
        time.sleep(max(0.0, t_first + args.swap_after - mm.now()))
        stop.set()
        for lp in loops:
            lp.join(timeout=args.request_timeout)
        out["third_request"] = mm.slim(rec, t0)
        out["window_s"] = {"before": [round(t_c - args.swap_before - t0, 3), round(t_c - t0, 3)],
                           "during": [round(t_c - t0, 3), round(t_first - t0, 3)],
                           "after": [round(t_first - t0, 3), round(t_first + args.swap_after - t0, 3)]}
        per = {}
        for m in busy:
            rs = records[m]
            per[m] = {"tok_s_before": rate(times[m], t_c - args.swap_before, t_c),
                      "tok_s_during": rate(times[m], t_c, t_first),
                      "tok_s_after": rate(times[m], t_first, t_first + args.swap_after),
                      "requests": len(rs), "failed": [mm.slim(r, t0) for r in rs if not r["ok"]],
                      "per_second": [sum(1 for t in times[m] if t0 + s <= t < t0 + s + 1)
                                     for s in range(int(mm.now() - t0) + 1)]}
        out["busy_models"] = per
        out["states"] = poller.stop()
        out["cores"] = meter.read()
        if server.kind == "ridge":
            m1 = server.metrics() or {}
            out["metrics_delta"] = {k: v - (m0 or {}).get(k, 0.0) for k, v in m1.items()
                                    if k.startswith("ridge:model_") and v != (m0 or {}).get(k, 0.0)}
    finally:
        stop.set()
        if poller and poller.is_alive():
            poller.stop()
        out["stop"] = server.stop()
        out["log"] = server.log_path
        if server.kind == "ridge":
            out["log_models"], out["loads_evicting_several"] = mm.ridge_model_log(server.log_path)
    return out


def make_server(kind, mdir, models_max, args):
    if kind == "ridge":
        return mm.Server.ridge(mdir, models_max, args.threads, args.ridge_args, ridge=args.ridge_snap, shown_bin=args.ridge)
    return mm.Server.llama(mdir, models_max, args.threads, args.llama_args)


def summarize(runs, models, servers):
    """{server: {model: {'switch': [...], 'cold': [...]}}} of ok records."""
    out = {s: {m: {"switch_ttft": [], "switch_latency": [], "cold_ttft": [], "cold_latency": [], "tokens": [],
                   "failed": 0} for m in models} for s in servers}
    for run in runs:
        for r in run["requests"]:
            d = out[run["server"]][r["model"]]
            if not r["ok"]:
                d["failed"] += 1
                continue
            d[r["phase"] + "_ttft"].append(r["ttft"])
            d[r["phase"] + "_latency"].append(r["latency"])
            d["tokens"].append(r["tokens"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="default,qwen2.5-coder-0.5b,gemma3-270m",
                    help="names of ~/.cache/ridge/models files (see multimodel_lib.MODEL_FILES) or .gguf paths")
    ap.add_argument("--servers", default="ridge,llama", help="ridge, llama or both")
    ap.add_argument("--rounds", type=int, default=3, help="switching rounds (0: only the forced swap)")
    ap.add_argument("--cycles", type=int, default=2, help="passes over the models per server start")
    ap.add_argument("--threads", "-t", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--gap", type=float, default=0.5, help="seconds between two requests")
    ap.add_argument("--ridge", default=mm.RIDGE)
    ap.add_argument("--ridge-args", default="", help="more flags for ridge serve")
    ap.add_argument("--llama-args", default="", help="more flags for llama-server (handed to its instances)")
    ap.add_argument("--copy", action="store_true", help="copy the model files into the models directory (default: links)")
    ap.add_argument("--no-swap", action="store_true", help="skip the forced swap under load")
    ap.add_argument("--swap-servers", default="ridge")
    ap.add_argument("--swap-clients", type=int, default=4, help="streaming clients per busy model")
    ap.add_argument("--swap-max-tokens", type=int, default=64)
    ap.add_argument("--swap-warmup", type=float, default=5.0)
    ap.add_argument("--swap-before", type=float, default=10.0)
    ap.add_argument("--swap-after", type=float, default=10.0)
    ap.add_argument("--request-timeout", type=float, default=300.0)
    ap.add_argument("--target", type=float, default=0.5, help="ridge / llama.cpp median switch TTFT, at most")
    ap.add_argument("--check", action="store_true", help="exit 1 when the target is missed or a request failed")
    ap.add_argument("--out")
    args = ap.parse_args()

    cpu = mm.cpu_info()
    models = [m for m in args.models.split(",") if m]
    servers = ["llama" if s.startswith("llama") else s for s in args.servers.split(",") if s]
    if "ridge" in servers + args.swap_servers.split(",") and not mm.ridge_has_router(args.ridge):
        sys.exit(f"{args.ridge} serve --help lists no --models-max: this ridge has no router yet")
    print(f"CPU: {mm.cpu_line(cpu)}; load average {mm.loadavg()}", flush=True)
    args.ridge_snap, ridge_info = mm.snapshot_ridge(args.ridge)
    mdir = mm.models_dir(models, copy=args.copy)
    print(f"models directory {mdir}: {', '.join(sorted(os.listdir(mdir)))}", flush=True)
    names = [os.path.basename(m)[:-5] if m.endswith(".gguf") else m for m in models]
    report = {"cpu": cpu, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "models": names, "rounds": args.rounds,
              "cycles": args.cycles, "threads": args.threads, "max_tokens": args.max_tokens, "prompt": PROMPT,
              "llama_server": os.path.join(mm.LLAMA_BIN, "llama-server"), "ridge": ridge_info,
              "load_average_start": mm.loadavg(), "runs": [], "commands": []}
    failed = 0
    try:
        for r in range(args.rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for kind in order:
                server = make_server(kind, mdir, 1, args)
                print(f"round {r + 1}/{args.rounds} {server.kind}: {server.command_line()}", flush=True)
                report["commands"].append(server.command_line())
                # each round starts from another model: every model gets cold loads and the same number of switches
                rot = names[r % len(names):] + names[:r % len(names)]
                run = switch_run(server, rot, args.cycles, args.max_tokens, args.gap)
                run.update(server=server.kind, round=r)
                report["runs"].append(run)
                failed += sum(1 for q in run["requests"] if not q["ok"])
        labels = ["ridge" if s == "ridge" else "llama.cpp" for s in servers]
        summ = summarize(report["runs"], names, labels)
        p50 = lambda v: mm.percentile(v, 50)  # noqa: E731
        print(f"\nModel switch (models-max 1), median of {args.rounds} rounds x {args.cycles} cycles; "
              f"{cpu['model']}, {args.threads} threads; seconds")
        rows, table = [], []
        for m in names:
            row = {"model": m}
            for lab in labels:
                d = summ[lab][m]
                row[lab] = {"switch_ttft_p50": p50(d["switch_ttft"]), "switch_ttft_min": min(d["switch_ttft"], default=None),
                            "switch_ttft_max": max(d["switch_ttft"], default=None),
                            "switch_latency_p50": p50(d["switch_latency"]), "cold_ttft_p50": p50(d["cold_ttft"]),
                            "cold_latency_p50": p50(d["cold_latency"]), "n_switch": len(d["switch_ttft"]),
                            "tokens_p50": p50(d["tokens"]), "failed": d["failed"]}
            if "ridge" in labels and "llama.cpp" in labels:
                a, b = row["ridge"], row["llama.cpp"]
                row["ratio_switch_ttft"] = a["switch_ttft_p50"] / b["switch_ttft_p50"] if a["switch_ttft_p50"] and b["switch_ttft_p50"] else None
                row["ratio_switch_latency"] = a["switch_latency_p50"] / b["switch_latency_p50"] if a["switch_latency_p50"] and b["switch_latency_p50"] else None
                row["ratio_cold_ttft"] = a["cold_ttft_p50"] / b["cold_ttft_p50"] if a["cold_ttft_p50"] and b["cold_ttft_p50"] else None
                # best against best: the least disturbed switch of each (a busy machine inflates the medians)
                row["ratio_switch_ttft_min"] = a["switch_ttft_min"] / b["switch_ttft_min"] if a["switch_ttft_min"] and b["switch_ttft_min"] else None
            rows.append(row)
            for lab in labels:
                x = row[lab]
                table.append([m, lab, x["n_switch"], mm.fmt_s(x["switch_ttft_p50"]),
                              f"{mm.fmt_s(x['switch_ttft_min'])}..{mm.fmt_s(x['switch_ttft_max'])}",
                              mm.fmt_s(x["switch_latency_p50"]), mm.fmt_s(x["cold_ttft_p50"]), mm.fmt_s(x["tokens_p50"], 0),
                              x["failed"]])
            if "ratio_switch_ttft" in row:
                table.append(["", "ridge / llama.cpp", "", mm.fmt_s(row["ratio_switch_ttft"], 2) + "x",
                              mm.fmt_s(row["ratio_switch_ttft_min"], 2) + "x (min)",
                              mm.fmt_s(row["ratio_switch_latency"], 2) + "x", mm.fmt_s(row["ratio_cold_ttft"], 2) + "x", "", ""])
        if args.rounds:
            mm.print_table(["model", "server", "n", "switch TTFT p50", "min..max", "request p50", "cold TTFT p50",
                            "tokens", "failed"], table)
        report["summary"] = rows
        busy = [f"{x['server']} round {x['round'] + 1}" for x in report["runs"] if x.get("cores", {}).get("other_cores", 0) > BUSY]
        report["busy_runs"] = busy
        if busy:
            print(f"WARNING: other processes used more than {BUSY} cores during {', '.join(busy)}: rerun on a quiet machine")
        ratios = [r["ratio_switch_ttft"] for r in rows if r.get("ratio_switch_ttft")]
        if ratios:
            import math
            report["ratio_switch_ttft_geomean"] = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
            print(f"ridge / llama.cpp switch TTFT, geometric mean over the models: {report['ratio_switch_ttft_geomean']:.2f}x")
        target_ok = all(r.get("ratio_switch_ttft") is not None and r["ratio_switch_ttft"] <= args.target for r in rows) \
            if rows and "ratio_switch_ttft" in rows[0] and args.rounds else None
        report["target"] = {"ratio_switch_ttft_max": args.target, "met": target_ok}
        if target_ok is not None:
            print(f"target ridge / llama.cpp switch TTFT <= {args.target}x per model: {'met' if target_ok else 'MISSED'}")

        if not args.no_swap:
            report["swap"] = []
            for kind in ["llama" if s.startswith("llama") else s for s in args.swap_servers.split(",") if s]:
                server = make_server(kind, mdir, 2, args)
                print(f"\nforced swap under load, {server.kind}: {server.command_line()}", flush=True)
                report["commands"].append(server.command_line())
                sw = swap_run(server, names, args)
                sw["server"] = server.kind
                report["swap"].append(sw)
                failed += sum(len(d["failed"]) for d in sw.get("busy_models", {}).values())
                tr = sw.get("third_request") or {}
                failed += 0 if tr.get("ok") else 1
                print(f"Forced swap ({server.kind}, models-max 2, {args.swap_clients} streams on each of "
                      f"{', '.join(sw['busy'])}; then one request for {sw['third']}); {cpu['model']}")
                print(f"  {sw['third']}: sent at t={tr.get('t_send', 0):.2f}s, TTFT {mm.fmt_s(tr.get('ttft'))} s, request {mm.fmt_s(tr.get('latency'))} s"
                      + ("" if tr.get("ok") else f"  FAILED: {tr.get('error')}"))
                tab = []
                for m, d in (sw.get("busy_models") or {}).items():
                    dur = sw["window_s"]["during"]
                    tab.append([m, mm.fmt_s(d["tok_s_before"], 1), mm.fmt_s(d["tok_s_during"], 1) + f" ({dur[1] - dur[0]:.2f} s)",
                                mm.fmt_s(d["tok_s_after"], 1), d["requests"], len(d["failed"])])
                mm.print_table(["busy model", f"tok/s {args.swap_before:.0f} s before", "tok/s during swap",
                                f"tok/s {args.swap_after:.0f} s after", "requests", "failed"], tab)
                print(f"  cores used: server {sw['cores']['server_cores']}, other processes {sw['cores']['other_cores']}")
                for t, s in sw.get("states", []):
                    print(f"  t={t:7.2f}s  " + "  ".join(f"{k}={v}" for k, v in sorted(s.items())))
                for x in sw.get("loads_evicting_several", []):
                    print(f"  the load of {x['model']} evicted {len(x['evicted'])} models: {'; '.join(x['evicted'])} (server log)")
                if sw.get("metrics_delta"):
                    print("  /metrics during the run: " + ", ".join(f"{k} +{v:g}" for k, v in sorted(sw["metrics_delta"].items())))
    finally:
        shutil.rmtree(mdir, ignore_errors=True)
        mm.remove_snapshot(args.ridge_snap)
    report["failed_requests"] = failed
    report["load_average_end"] = mm.loadavg()
    print("\ncommands run:")
    for c in report["commands"]:
        print("  " + c)
    if failed:
        print(f"{failed} request(s) FAILED (see the JSON)")
    mm.save(args.out or mm.default_out("model-switch", cpu), report)
    if args.check and (failed or report["target"]["met"] is False):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
