#!/usr/bin/env python3
"""`ridge serve --slo` started on a busy machine: how long start-up takes, what it plans, and how
well the step model it calibrated predicts the steps of real traffic afterwards.

With `--busy N` the script runs N busy loops (`stress-ng --cpu N`, else Python spinners) for the
whole run, as a machine that is also building code. It starts `ridge serve --slo SPEC`, times the
wait for /health, reads the plan from the log (streams at the design context), then sends that many
concurrent streaming chat requests (at least one) for --load-seconds and compares, for the steps the
server ran under that load, the step model's prediction made before each step against its measured
time (`/metrics/json` slo.steps: s, predicted_s).

    python3 bench/slo_busy_start.py --busy 2 --slo ttft=1s,itl=40ms
    python3 bench/slo_busy_start.py --busy 0 --rounds 2 --json out.json

Targets (issue 48): ready within 20 s; median |predicted - measured| / measured within 30%.
"""
import argparse
import json
import multiprocessing
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
from serve_fixture import start_server, stop_server  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from bench_models import model_path  # noqa: E402

PLAN = re.compile(r"holds (\d+) concurrent streams at context <= (\d+)")


def spin(stop_at):
    while time.time() < stop_at:
        pass


def busy_loops(n, seconds):
    """N busy loops for `seconds`: stress-ng when installed, else Python processes."""
    if n <= 0:
        return []
    if shutil.which("stress-ng"):
        return [subprocess.Popen(["stress-ng", "--cpu", str(n), "--timeout", f"{int(seconds)}s"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    procs = [multiprocessing.Process(target=spin, args=(time.time() + seconds,)) for _ in range(n)]
    for p in procs:
        p.start()
    return procs


def stop_busy(procs):
    for p in procs:
        if isinstance(p, subprocess.Popen):
            p.terminate()
            p.wait()
        else:
            p.terminate()
            p.join()


def stream_chat(base_url, prompt, max_tokens, stop_at):
    while time.time() < stop_at:
        body = json.dumps({"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
                           "stream": True, "ignore_eos": True}).encode()
        req = urllib.request.Request(base_url + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as r:
            for _ in r:
                pass


def one_round(args, ridge, model):
    busy = busy_loops(args.busy, args.load_seconds + 120)
    try:
        time.sleep(1)  # the loops are running before the server starts
        started = time.monotonic()
        server = start_server(ridge, model, "--slo", args.slo, ctx_size=args.ctx_size, threads=args.threads,
                              startup_timeout=180)
        ready_s = time.monotonic() - started
        try:
            log = server.log(20000)
            m = PLAN.search(log)
            streams = int(m.group(1)) if m else 0
            design_context = int(m.group(2)) if m else 0
            calib = [line for line in log.splitlines() if line.startswith("slo: ")]
            stop_at = time.time() + args.load_seconds
            prompt = " ".join(["Tell me a long story about the sea and ships."] * args.prompt_repeat)
            workers = [threading.Thread(target=stream_chat, args=(server.base_url, prompt, args.max_tokens, stop_at))
                       for _ in range(max(streams, 1))]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            _, after = server.request("GET", "/metrics/json")
            # The server ran nothing before the load, so its recent window (240 steps) is all load.
            steps = (json.loads(after).get("slo") or {}).get("steps", [])
            errors = [abs(p["predicted_s"] - p["s"]) / p["s"] for p in steps if p["s"] > 0]
            decode_only = [abs(p["predicted_s"] - p["s"]) / p["s"] for p in steps if p["s"] > 0 and p["decode"] == p["tokens"]]
        finally:
            stop_server(server)
    finally:
        stop_busy(busy)
    return {
        "busy_loops": args.busy, "ready_s": round(ready_s, 2), "planned_streams": streams,
        "design_context": design_context, "load_streams": max(streams, 1), "steps": len(errors),
        "median_relative_error": statistics.median(errors) if errors else None,
        "mean_relative_error": statistics.fmean(errors) if errors else None,
        "predicted_over_measured_total": (sum(p["predicted_s"] for p in steps) / sum(p["s"] for p in steps)) if steps else None,
        "median_signed_error": statistics.median((p["predicted_s"] - p["s"]) / p["s"] for p in steps if p["s"] > 0) if steps else None,
        "share_within_30pct": sum(e <= 0.3 for e in errors) / len(errors) if errors else None,
        "decode_steps_median_relative_error": statistics.median(decode_only) if decode_only else None,
        "startup_log": calib,
        "step_points": steps,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("--slo", default="ttft=1s,itl=40ms")
    ap.add_argument("--busy", type=int, default=2, help="busy loops beside the server (default 2)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--load-seconds", type=float, default=20)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--prompt-repeat", type=int, default=20, help="copies of a 10-word sentence in each prompt")
    ap.add_argument("--ctx-size", type=int, default=8192)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--json", help="write the rounds here")
    args = ap.parse_args()
    model = model_path(args.model)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    rounds = []
    for i in range(args.rounds):
        r = one_round(args, args.ridge, model)
        rounds.append(r)
        print("\n".join(r["startup_log"]))
        print(f"round {i + 1}: {args.busy} busy loops: ready in {r['ready_s']} s; planned {r['planned_streams']} streams at "
              f"context <= {r['design_context']}; under {r['load_streams']} streams, {r['steps']} steps: predicted vs measured "
              f"median {100 * (r['median_relative_error'] or 0):.0f}%, mean {100 * (r['mean_relative_error'] or 0):.0f}%, "
              f"{100 * (r['share_within_30pct'] or 0):.0f}% of steps within 30% (decode-only steps: median "
              f"{100 * (r['decode_steps_median_relative_error'] or 0):.0f}%); all steps predicted / measured "
              f"{r['predicted_over_measured_total'] or 0:.2f}, median signed {100 * (r['median_signed_error'] or 0):+.0f}%")
    ok = all(r["ready_s"] <= 20 and r["median_relative_error"] is not None and r["median_relative_error"] <= 0.3 for r in rounds)
    print(f"cpu: {cpu}; targets (ready <= 20 s, median error <= 30%): {'met' if ok else 'NOT met'}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"cpu": cpu, "slo": args.slo, "rounds": rounds}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
