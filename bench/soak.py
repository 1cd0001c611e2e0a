#!/usr/bin/env python3
"""A soak of `ridge serve` at saturation (issue 48, item 1): the script starts the server itself, drives
it for --duration seconds with --concurrency client workers sending a weighted mix of requests, samples
the server process every --sample-interval seconds, and writes a report.

The mix (--mix KIND=WEIGHT,... to change it; weight 0 turns a kind off):
  chat_stream / chat                 streaming and plain /v1/chat/completions
  completion_stream / completion     streaming and plain /v1/completions
  chat_n / completion_stream_n       n > 1 (2 or 3 choices)
  structured                         response_format json_schema (the answer is checked against it)
  tools                              a function tool, tool_choice "required" or the function named
  shared_prefix                      one of a few long system prompts (prefix cache and KV tier hits)
  too_long                           a prompt longer than the context: 400 is the EXPECTED answer
  cancel                             a stream closed by the client after a few chunks
  vanish                             a client that sends a stream request and resets the socket unread
  slow_reader                        a stream with logprobs read a little at a time from a small buffer
and every --burst-every seconds a burst of --burst-size simultaneous connections (more than
--http-threads). The first request of each kind is sent before the weighted draw starts, so every kind is
exercised even in a short run.

The server (defaults below, any flag overridable with --ridge-args, which wins over a default of the same
name) runs with the host-memory and disk KV tiers on (the disk tier in a temporary directory), prompt-lookup
speculative decoding, prefix caching, a small --http-threads and a context shorter than some prompts.

Sampled every --sample-interval s: VmRSS, Threads (/proc/PID/status), open fds (/proc/PID/fd), the server's
and the rest of the machine's CPU use, its TCP connections, and from /metrics the KV blocks in use, the
engine queue (waiting / running), prefix cache, KV tier and speculation counters. At a third of the run the
load pauses until the server has drained (nothing in flight, nothing running or waiting) for a checkpoint
sample, and again at the end: leaks show there exactly, without the load's noise. Every request is recorded
(requests.jsonl): kind, status, the cause of every non-2xx (status, error type/code and message), TTFT and
ITL of streams, latency. The report (--out DIR, default bench/results/soak-DATE-TIME):
  soak.json       config, CPU model, samples, counts per kind, failures by cause (expected 400s apart),
                  TTFT/ITL p50/p99 of the first vs the last window, growth over the last two thirds, targets
  soak.svg        RSS, fds, threads, KV blocks, queue, completed requests/s, CPU and /metrics answer time
  requests.jsonl  one line per request
  server.log      the server's output
Targets (issue 48): no crash, a clean exit on SIGTERM, 0 unexpected 5xx, 0 other unexpected failures
(4xx other than the expected 400, broken streams, transport errors, client timeouts); RSS / fds / threads /
KV blocks growth < 2% over the last two thirds of the run: the drained end vs the drained checkpoint (KV
blocks relative to the pool), and for RSS and threads also a least-squares line through the samples under
load (fds and KV blocks under load follow the load: reported, not judged); KV blocks in use back to 0 once
the load has drained; TTFT / ITL p50 and p99 of the last window within 10% of the first (windows of 5
minutes, or a sixth of shorter runs; a window where other processes used more than --busy-cores is flagged,
since the latencies then measure the machine as much as the server). 2xx answers that break their request's
contract (JSON off the schema, no tool call under tool_choice required, a wrong number of choices) are
reported as anomalies. The exit status is 1 when a target fails (--no-fail: 0), 2 when the server cannot be
started, 130 after a Ctrl-C (the report is still written).

  python3 bench/soak.py                                   # 30 minutes, 12 workers, the default model
  python3 bench/soak.py --duration 120 --out /tmp/soak-try
  python3 bench/soak.py --duration 600 --concurrency 16 --ridge-args='--kv-dtype int8 --max-num-seqs 32'
"""
# The entry point: the options and the run's order. The parts live in bench/soak_lib/ (see its __init__.py).
import argparse
import datetime
import os
import shlex
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak_lib.common import DEFAULT_MODEL_FILE, MIX, ROOT  # noqa: E402
from soak_lib.report import build_report, print_summary, save_report  # noqa: E402
from soak_lib.server import log_tail, served_context, server_command, start_server, stop_server  # noqa: E402
from soak_lib.svg import write_svg  # noqa: E402
from soak_lib.workload import Soak  # noqa: E402


def parse_mix(text):
    mix = dict(MIX)
    if text:
        for part in text.split(","):
            if not part.strip():
                continue
            k, _, v = part.partition("=")
            k = k.strip()
            if k not in MIX:
                raise argparse.ArgumentTypeError(f"unknown kind {k!r} (kinds: {', '.join(MIX)})")
            mix[k] = float(v)
    if not any(w > 0 for w in mix.values()):
        raise argparse.ArgumentTypeError("every kind has weight 0")
    return mix


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_argument_group("run")
    g.add_argument("--duration", metavar="S", type=float, default=1800, help="seconds of load (default 1800)")
    g.add_argument("--concurrency", metavar="N", type=int, default=12, help="client workers, each one request at a time (default 12)")
    g.add_argument("--sample-interval", metavar="S", type=float, default=10, help="seconds between samples (default 10)")
    g.add_argument("--burst-every", metavar="S", type=float, default=None,
                   help="seconds between bursts (default 60, or an eighth of shorter runs, at least 10)")
    g.add_argument("--burst-size", metavar="N", type=int, default=None,
                   help="simultaneous connections per burst (default 2 x --http-threads + 4)")
    g.add_argument("--mix", metavar="KIND=W,...", type=parse_mix, default=dict(MIX),
                   help="change the weights of the kinds listed above (0: off); defaults: "
                        + " ".join(f"{k}={v}" for k, v in MIX.items()))
    g.add_argument("--min-tokens", metavar="N", type=int, default=8, help="smallest max_tokens drawn (default 8)")
    g.add_argument("--max-tokens", metavar="N", type=int, default=48, help="largest max_tokens drawn (default 48)")
    g.add_argument("--prefixes", metavar="N", type=int, default=6, help="distinct long shared system prompts (default 6)")
    g.add_argument("--prefix-words", metavar="N", type=int, default=200, help="words in each shared system prompt (default 200)")
    g.add_argument("--request-timeout", metavar="S", type=float, default=300, help="client socket timeout, s (default 300)")
    g.add_argument("--metrics-timeout", metavar="S", type=float, default=30, help="/metrics scrape timeout, s (default 30)")
    g.add_argument("--seed", metavar="N", type=int, default=1, help="seed of the workers' draws (default 1)")
    g.add_argument("--out", metavar="DIR", default=None, help="report directory (default bench/results/soak-YYYYmmdd-HHMMSS)")
    s = ap.add_argument_group("server")
    s.add_argument("--ridge", metavar="PATH", default=os.environ.get("RIDGE_BIN") or os.path.join(ROOT, "build", "ridge"),
                   help="the ridge binary (default $RIDGE_BIN or build/ridge)")
    s.add_argument("--model", metavar="PATH", default="default",
                   help=f"GGUF file, or 'default' ($RIDGE_HOME/models/{DEFAULT_MODEL_FILE}; `make model` fetches it)")
    s.add_argument("--ctx-size", metavar="N", type=int, default=512, help="--ctx-size (default 512; too_long prompts exceed it)")
    s.add_argument("--http-threads", metavar="N", type=int, default=8, help="--http-threads (default 8; bursts exceed it)")
    s.add_argument("--kv-memory", metavar="SIZE", default="64MiB", help="--kv-memory (default 64MiB: the pool fills, the tiers fill)")
    s.add_argument("--kv-offload-ram", metavar="SIZE", default="16MiB", help="--kv-offload-ram (default 16MiB)")
    s.add_argument("--kv-offload-size", metavar="SIZE", default="256MiB", help="--kv-offload-size of the disk tier (default 256MiB)")
    s.add_argument("--no-tiers", action="store_true", help="no --kv-offload-ram / --kv-offload-dir")
    s.add_argument("--speculative", metavar="MODE", default="ngram", help="--speculative (default ngram: prompt lookup, no draft model)")
    s.add_argument("--threads", metavar="N", type=int, default=None, help="--threads (default: the server's, all cores)")
    s.add_argument("--ridge-args", metavar="'FLAGS'", default="", help="more `ridge serve` flags as one string, written --ridge-args='--kv-dtype int8'; a flag given "
                        "here replaces the script's default for it")
    s.add_argument("--startup-timeout", metavar="S", type=float, default=180, help="seconds for /health to answer (default 180)")
    s.add_argument("--shutdown-wait", metavar="S", type=float, default=60, help="seconds for the server to exit after SIGTERM (default 60)")
    t = ap.add_argument_group("targets")
    t.add_argument("--growth-target", metavar="PCT", type=float, default=2.0, help="max growth, percent (default 2)")
    t.add_argument("--latency-tolerance", metavar="PCT", type=float, default=10.0, help="max change of TTFT/ITL p50/p99, percent (default 10)")
    t.add_argument("--min-window-streams", metavar="N", type=int, default=5,
                   help="streams each latency window needs for the latency targets to count (default 5)")
    t.add_argument("--busy-cores", metavar="CORES", type=float, default=0.25,
                   help="other processes' average cores above which a latency window is flagged as busy (default 0.25)")
    t.add_argument("--no-fail", action="store_true", help="exit 0 even when a target fails")
    args = ap.parse_args()

    if args.burst_every is None:
        args.burst_every = min(60.0, max(10.0, args.duration / 8))
    if args.burst_size is None:
        args.burst_size = 2 * args.http_threads + 4
    if args.model == "default":
        home = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
        args.model = os.path.join(home, "models", DEFAULT_MODEL_FILE)
    if not os.path.exists(args.model):
        sys.exit(f"model not found: {args.model} (make model, or python3 tools/fetch_model.py)")
    if not os.access(args.ridge, os.X_OK):
        sys.exit(f"ridge binary not found: {args.ridge} (make build)")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = args.out or os.path.join(ROOT, "bench", "results", f"soak-{stamp}")
    os.makedirs(out_dir, exist_ok=True)

    tier_dir = tempfile.mkdtemp(prefix="ridge-soak-tier-")
    cmd = server_command(args, tier_dir)
    log_path = os.path.join(out_dir, "server.log")
    print("server: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    proc, host, port = start_server(cmd, log_path, args.startup_timeout)
    if port is None:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(tier_dir, ignore_errors=True)
        print(log_tail(log_path), file=sys.stderr)
        print(f"ridge serve did not start (exit status {proc.returncode})", file=sys.stderr)
        return 2

    args.ctx_size = served_context(host, port, args.ctx_size)  # too_long prompts exceed it
    soak = Soak(args, host, port, proc)
    soak.req_file = open(os.path.join(out_dir, "requests.jsonl"), "w")
    try:
        duration_run, baseline, idle = soak.drive(log_path)
    finally:
        shutdown = stop_server(proc, args.shutdown_wait)
        shutil.rmtree(tier_dir, ignore_errors=True)
        with soak.lock:
            soak.req_file.close()
            soak.req_file = None

    report = build_report(soak, args, cmd, shutdown, duration_run, idle, baseline)
    save_report(out_dir, report, soak.records)
    write_svg(os.path.join(out_dir, "soak.svg"), report, soak.samples)
    print_summary(report, out_dir)
    if report["crash"]:
        print("server log tail:\n" + report["crash"]["log_tail"])
    if soak.interrupted:
        print(f"interrupted after {duration_run:.0f} of {args.duration:.0f} s")
        return 130
    return 0 if report["pass"] or args.no_fail else 1


if __name__ == "__main__":
    sys.exit(main())
