#!/usr/bin/env python3
"""Serving, ridge vs llama.cpp, side by side: `ridge bench serve` against `ridge serve` and against
llama-cpp-python's OpenAI-compatible server on the same GGUF file, same threads, same requests.

For each request rate of the sweep, both servers are started fresh, each with 2 threads (-t):
`ridge serve -m MODEL -t 2` and `python3 -m llama_cpp.server --model MODEL --n_threads 2
--n_threads_batch 2`; once both answer, `ridge bench serve --json` (streamed /v1/completions,
Poisson arrivals) runs against ridge, then against llama.cpp, and both are stopped (also on an error
or Ctrl-C). Every run uses the same seed, so both servers get the same prompts and arrival times at
every rate, and the arrival times of one rate are those of another scaled; fresh servers keep ridge's
prefix cache from serving a prompt seen at the previous rate. With the default seed (0) and -n 25
the 24 Poisson gaps sum to 24.1 mean gaps, so the offered load is the nominal rate (another seed or
-n gives a realized rate that can be off by 1/sqrt(n) or more; ridge's req/s column shows it).

The output is one table per server (request and output-token throughput, TTFT / TPOT / ITL p50 and
p99, goodput and the share of requests meeting --slo), the goodput ratio ridge / llama.cpp per rate
and at each server's best rate, and the CPU that other processes took meanwhile. Both servers need
the whole machine, and other work skews their figures badly (2 compute threads each on 2 cores):
before each rate the script waits (up to --quiet-wait s) until other processes use at most
--max-other-cpu cores, and runs a rate again (up to --retries times; the quietest attempt counts)
when they took more.

The default workload fits a 2-core machine and the default model (SmolLM2-135M Q4_1): 128-token
prompts, 32 output tokens, SLO TTFT <= 1 s and TPOT <= 50 ms, rates 0.3 to 2.4 req/s; a full run
takes about 9 minutes on a quiet machine. llama.cpp serves one request at a time and its time to
first token alone is about 0.6 s here, so it meets that SLO for most requests only at the lowest
rate; with 64 output tokens that would take rates near 0.15 req/s, and the run over 10 minutes.

What llama.cpp is here: llama-cpp-python 0.3.36's server (a FastAPI app over one `Llama` object),
as tools/setup_test_deps.sh builds the library (portable AVX2, OpenMP). It serves one sequence at a
time: requests wait on a lock, with no batching of concurrent requests and no setting for it. That
is what a user of this server gets, and it is compared as it is, with these settings changed from
its defaults so that the comparison is fair to it:
  --interrupt_requests False  by default a request that arrives while another streams ends that
                              stream early (a truncated answer, then [DONE]); off, the requests
                              queue and each runs to completion
  --logits_all False          by default it computes the output layer for every prompt token (only
                              needed for logprobs); off, only for the last, as ridge does
  --use_mmap False            the weights are read into memory, not mapped (ridge copies them out
                              of its map too; mapped weights can decode slower on virtual machines)
  --verbose False             no timing print per request
Its streamed chunks carry no usage, so `ridge bench serve` counts its output tokens as the chunks
with text (one per token) and estimates its input tokens; it also ignores `ignore_eos` (not a field
it knows), so an answer can end early at the end-of-sequence token, which spares it work: the
"out tok/req" column shows how much (ridge always runs to --output-len). On the 2-vCPU machine its
time per output token settles at about 15 ms or about 45 ms from one stretch of requests to the next
(its own streaming in one process holds 13-14 ms), which moves its capacity by 2x: compare runs.

Goodput is requests per second that meet every bound of --slo, over the run's duration (from the
first arrival to the last response). At a rate a server cannot sustain, its queue grows for the
whole run, so those figures depend on --num-requests.

The server extras of llama-cpp-python are needed for this benchmark only (not for the tests):
    pip install "uvicorn>=0.22.0" "fastapi>=0.100.0" "pydantic-settings>=2.0.1" "sse-starlette>=1.6.1" \
        "starlette-context>=0.3.6,<0.4" "PyYAML>=5.1"

    python3 bench/compare_serve_llama_cpp.py [--ridge build/ridge] [-m FILE] [-t 2] [--rates 0.3,0.45,0.6,1.2,2.4]
        [-n 25] [--input-len fixed:128] [--output-len fixed:32] [--slo ttft=1s,tpot=50ms] [--json] [--json-out FILE]
"""
import argparse
import json
import math
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_llama_cpp import ROOT, ridge_home  # noqa: E402

SERVERS = ("ridge", "llama.cpp")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, lines=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class Server:
    """A server process, its log file, and the model name it lists under /v1/models."""

    def __init__(self, name, command, port, log_path):
        self.name, self.command, self.port, self.log_path = name, command, port, log_path
        self.base_url = f"http://127.0.0.1:{port}"
        self.model_id = None
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def wait_ready(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.process.returncode} before it was ready:\n"
                                   f"{tail(self.log_path)}")
            try:
                with urllib.request.urlopen(self.base_url + "/v1/models", timeout=2) as r:
                    self.model_id = json.load(r)["data"][0]["id"]
                    return
            except (OSError, ValueError, KeyError, IndexError):
                time.sleep(0.5)
        raise RuntimeError(f"{self.name} not ready after {timeout_s:.0f} s:\n{tail(self.log_path)}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # both shut down gracefully on SIGINT
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


class CpuMeter:
    """CPU seconds the whole machine spent busy since creation, less what this script and its children spent
    (children count once they have been waited for): the work of other processes, which skews both servers."""

    def __init__(self):
        self.start = (self.machine_busy(), self.ours(), time.monotonic())

    @staticmethod
    def machine_busy():
        with open("/proc/stat") as f:
            user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
        return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def ours():
        self_, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return self_.ru_utime + self_.ru_stime + children.ru_utime + children.ru_stime

    def others(self):
        busy, ours, started = self.start
        seconds = time.monotonic() - started
        other = max(0.0, (self.machine_busy() - busy) - (self.ours() - ours))
        return {"seconds": seconds, "cpu_seconds": other, "cores": other / seconds if seconds > 0 else 0.0}


def run_bench(args, server, rate):
    """One `ridge bench serve` run; returns its summary (dict), with "exit_status" and, on failure, "stderr"."""
    command = [args.ridge, "bench", "serve", "--base-url", server.base_url, "--endpoint", "completions",
               "--model", server.model_id, "--input-len", args.input_len, "--output-len", args.output_len,
               "-n", str(args.num_requests), "--warmup", str(args.warmup), "--request-rate", rate,
               "--arrival", "poisson", "--seed", str(args.seed), "--slo", args.slo, "--json", "-q"]
    out = subprocess.run(command, capture_output=True, text=True)
    try:
        summary = json.loads(out.stdout)["summary"]
    except (ValueError, KeyError):
        summary = {"completed": 0, "failed": args.num_requests, "errors": []}
    summary["exit_status"] = out.returncode
    summary["command"] = command
    if out.returncode != 0 or summary.get("failed"):
        summary["stderr"] = out.stderr[-2000:]
    return summary


def good_fraction(s):
    sent = s.get("completed", 0) + s.get("failed", 0)
    return s.get("good_requests", 0) / sent if sent else 0.0


def ratio(a, b):
    if a is None or b is None:
        return None
    return a / b if b > 0 else (math.inf if a > 0 else None)


def fmt_ratio(r):
    return "-" if r is None else ("inf" if math.isinf(r) else f"{r:.2f}x")


def print_table(title, header, rows):
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    print(title)
    print("| " + " | ".join(h.rjust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).rjust(w) for c, w in zip(row, widths)) + " |")
    print()


def server_rows(results, name):
    rows = []
    for point in results:
        s = point[name]
        if not s.get("completed"):
            rows.append([point["rate"], "-", "-", "-", "-", "-", "-", "-", "-", "-", "0.00", "0%", s.get("failed", "-")])
            continue
        ms = lambda key, p: f"{s[key][p]:.0f}"  # noqa: E731
        rows.append([point["rate"], f"{s['request_throughput']:.2f}", f"{s['output_throughput']:.1f}",
                     f"{s['total_output_tokens'] / s['completed']:.1f}", ms("ttft_ms", "p50"), ms("ttft_ms", "p99"),
                     ms("tpot_ms", "p50"), ms("tpot_ms", "p99"), ms("itl_ms", "p50"), ms("itl_ms", "p99"),
                     f"{s['goodput']:.2f}", f"{100 * good_fraction(s):.0f}%", s["failed"]])
    return rows


def report(args, results, commands):
    header = ["rate", "req/s", "out tok/s", "out tok/req", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "ITL p50",
              "ITL p99", "goodput", "good", "failed"]
    print(f"{args.num_requests} requests per rate (Poisson), input {args.input_len}, output {args.output_len}, "
          f"SLO {args.slo}, {args.threads} threads each; latencies in ms, goodput in req/s\n")
    for name in SERVERS:
        print_table(f"{name}: {' '.join(commands[name])}", header, server_rows(results, name))
    rows = []
    for point in results:
        r, l = point["ridge"], point["llama.cpp"]
        rows.append([point["rate"], f"{r.get('goodput') or 0:.2f}", f"{l.get('goodput') or 0:.2f}", fmt_ratio(point["ratio"]),
                     f"{100 * good_fraction(r):.0f}%", f"{100 * good_fraction(l):.0f}%", f"{point['other_cpu']['cores']:.2f}"])
    print_table("goodput (req/s), ridge / llama.cpp, same rate and requests; other processes' CPU use in cores",
                ["rate", "ridge", "llama.cpp", "ratio", "ridge good", "llama.cpp good", "other CPU"], rows)
    best = {name: max(results, key=lambda p: p[name].get("goodput") or 0) for name in SERVERS}
    print("best goodput: " + ", ".join(f"{name} {best[name][name].get('goodput') or 0:.2f} req/s at rate {best[name]['rate']}"
                                       for name in SERVERS) +
          f"; ratio {fmt_ratio(ratio(best['ridge']['ridge'].get('goodput'), best['llama.cpp']['llama.cpp'].get('goodput')))}")
    busy = [f"{p['rate']} ({p['other_cpu']['cores']:.2f} cores)" for p in results if p["other_cpu"]["cores"] > args.max_other_cpu]
    if busy:
        print(f"other processes took CPU during rate {', '.join(busy)}: those figures are skewed, run again")
    for point in results:
        for name in SERVERS:
            s = point[name]
            if s.get("failed") or s["exit_status"] != 0:
                print(f"\n{name} at rate {point['rate']}: {s.get('failed')} failed, exit status {s['exit_status']}")
                for e in s.get("errors", []):
                    print(f"  {e['count']} x {e['message']}")
                if s.get("stderr"):
                    print("  " + s["stderr"].strip().replace("\n", "\n  "))


def wait_for_quiet(max_cores, max_wait_s):
    """Waits (at most max_wait_s) for 5 s in which other processes use at most max_cores."""
    deadline = time.monotonic() + max_wait_s
    while True:
        meter = CpuMeter()
        time.sleep(5)
        cores = meter.others()["cores"]
        if cores <= max_cores or time.monotonic() >= deadline:
            return cores
        print(f"waiting for the machine: other processes use {cores:.2f} cores", file=sys.stderr)


def run_rate(args, rate, commands, servers, log_prefix):
    """Both servers started fresh (the prompts repeat from rate to rate, and ridge's prefix cache must not
    serve them from the last rate), the load run against ridge, then against llama.cpp; both stopped."""
    cpu = CpuMeter()
    for name in SERVERS:
        port = free_port()
        servers[name] = Server(name, [a.replace("{port}", str(port)) for a in commands[name]], port,
                               f"{log_prefix}-{name}.log")
    for name in SERVERS:
        servers[name].wait_ready(180)
    point = {"rate": rate}
    for name in SERVERS:
        started = time.monotonic()
        point[name] = s = run_bench(args, servers[name], rate)
        print(f"rate {rate}: {name}: {s.get('completed', 0)} completed, {s.get('failed', 0)} failed, goodput "
              f"{s.get('goodput') or 0:.2f} req/s ({time.monotonic() - started:.0f} s)", file=sys.stderr)
        if servers[name].process.poll() is not None:
            raise RuntimeError(f"{name} exited with status {servers[name].process.returncode} during the run:\n"
                               f"{tail(servers[name].log_path)}")
    for name in SERVERS:
        servers.pop(name).stop()
    point["other_cpu"] = cpu.others()
    point["ratio"] = ratio(point["ridge"].get("goodput"), point["llama.cpp"].get("goodput"))
    return point


def interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"), help="ridge binary")
    parser.add_argument("-m", "--model", default=os.path.join(ridge_home(), "models", "SmolLM2-135M-Instruct.Q4_1.gguf"),
                        help="GGUF file both servers load")
    parser.add_argument("-t", "--threads", type=int, default=2, help="threads of each server")
    parser.add_argument("--rates", default="0.3,0.45,0.6,1.2,2.4", help="request rates (req/s, Poisson)")
    parser.add_argument("-n", "--num-requests", type=int, default=25, help="measured requests per rate and server")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured requests before each run")
    parser.add_argument("--input-len", default="fixed:128", help="prompt length distribution (ridge bench serve)")
    parser.add_argument("--output-len", default="fixed:32", help="output length distribution (max_tokens)")
    parser.add_argument("--slo", default="ttft=1s,tpot=50ms", help="goodput objectives")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of prompts and arrivals, the same at every rate (the default, with -n 25, gives "
                             "Poisson gaps that sum to the nominal rate's)")
    parser.add_argument("--n-ctx", type=int, default=2048, help="llama.cpp's context (its default is 2048 too)")
    parser.add_argument("--max-other-cpu", type=float, default=0.15,
                        help="cores other processes may use: before a rate the script waits for a machine this quiet, "
                             "and a rate during which they used more runs again")
    parser.add_argument("--quiet-wait", type=float, default=120, help="seconds to wait at most for a quiet machine")
    parser.add_argument("--retries", type=int, default=2,
                        help="times a rate runs again when other processes took CPU (the quietest attempt counts)")
    parser.add_argument("--log-dir", help="keep both servers' logs here (default: a temporary folder, removed)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the tables")
    parser.add_argument("--json-out", help="also write the JSON to this file")
    args = parser.parse_args()
    if not os.path.exists(args.ridge):
        sys.exit(f"no ridge binary at {args.ridge}: cmake --build build --target ridge")
    if not os.path.exists(args.model):
        sys.exit(f"no model at {args.model} (make model fetches the default one)")
    rates = [r.strip() for r in args.rates.split(",") if r.strip()]

    # SIGTERM ends the run like Ctrl-C, so the finally below stops the servers.
    signal.signal(signal.SIGTERM, interrupted)
    log_dir_holder = None if args.log_dir else tempfile.TemporaryDirectory(prefix="serve_compare_")
    log_dir = args.log_dir or log_dir_holder.name
    os.makedirs(log_dir, exist_ok=True)
    alias = os.path.basename(args.model).removesuffix(".gguf")
    commands = {
        "ridge": [args.ridge, "serve", "-m", args.model, "-t", str(args.threads), "--port", "{port}"],
        "llama.cpp": [sys.executable, "-m", "llama_cpp.server", "--model", args.model, "--model_alias", alias,
                      "--n_threads", str(args.threads), "--n_threads_batch", str(args.threads), "--port", "{port}",
                      "--n_ctx", str(args.n_ctx), "--interrupt_requests", "False", "--logits_all", "False",
                      "--use_mmap", "False", "--verbose", "False"],
    }
    results = []
    servers = {}  # the ones running, for the finally below
    try:
        for rate in rates:
            best = None
            for attempt in range(args.retries + 1):
                wait_for_quiet(args.max_other_cpu, args.quiet_wait)
                point = run_rate(args, rate, commands, servers, os.path.join(log_dir, f"rate{rate}-{attempt}"))
                point["attempt"] = attempt
                if best is None or point["other_cpu"]["cores"] < best["other_cpu"]["cores"]:
                    best = point
                if point["other_cpu"]["cores"] <= args.max_other_cpu:
                    break
                print(f"rate {rate}: other processes took {point['other_cpu']['cores']:.2f} cores meanwhile"
                      + (", running it again" if attempt < args.retries else ""), file=sys.stderr)
            results.append(best)
    except BaseException:
        for name, server in servers.items():
            print(f"--- last lines of {name}'s log ({server.log_path}):\n{tail(server.log_path)}", file=sys.stderr)
        raise
    finally:
        for server in servers.values():
            server.stop()
        if log_dir_holder:
            log_dir_holder.cleanup()

    out = {"config": {k: v for k, v in vars(args).items() if k not in ("json", "json_out")},
           "commands": {k: [a.replace("{port}", "PORT") for a in v] for k, v in commands.items()},
           "cpus": os.cpu_count(),
           "results": [{**p, "ratio": None if p["ratio"] is None else (str(p["ratio"]) if math.isinf(p["ratio"]) else p["ratio"])}
                       for p in results]}
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(out, f, indent=2)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        report(args, results, out["commands"])


if __name__ == "__main__":
    main()
