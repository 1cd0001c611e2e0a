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
import argparse
import datetime
import http.client
import json
import math
import os
import random
import re
import resource
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BANNER = re.compile(r"on http://([0-9.]+):(\d+)/")
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# kind -> default weight (percent of the draws)
MIX = {
    "chat_stream": 12, "chat": 7, "completion_stream": 10, "completion": 7,
    "chat_n": 5, "completion_stream_n": 4, "structured": 8, "tools": 8,
    "shared_prefix": 14, "too_long": 5, "cancel": 6, "vanish": 5, "slow_reader": 4,
}
BURST = "burst"
# Streams whose TTFT and inter-token gaps are compared between the first and the last window: one choice,
# read as fast as they come.
LATENCY_KINDS = ("chat_stream", "completion_stream", "shared_prefix")
FLAT_KEYS = {"rss_bytes": "RSS", "fds": "open fds", "threads": "threads", "kv_blocks_used": "KV blocks in use"}
UNEXPECTED = ("http_error", "stream_error", "transport_error", "timeout", "unexpected_success")

WORDS = ("river stone candle window garden silver music paper orange mountain forest ocean cloud winter summer "
         "library engine signal bridge harbor lantern market island valley thunder meadow castle kitchen "
         "planet comet crystal feather compass journey letter mirror puzzle rocket shadow teacher village "
         "wizard yellow zebra anchor basket cactus dragon ember falcon glacier hammer igloo jungle kettle "
         "lemon marble needle otter pepper quartz ribbon saddle tiger umbrella violin walnut yarn acorn "
         "blanket copper desert echo fountain granite horizon ivory jasmine kayak lighthouse maple nectar "
         "orbit pebble quiver rainbow sapphire tunnel velvet whistle canyon dolphin emerald festival").split()

SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 16},
                         "age": {"type": "integer", "minimum": 0, "maximum": 120},
                         "city": {"type": "string", "enum": ["Paris", "Tokyo", "Lima", "Oslo"]}},
          "required": ["name", "age", "city"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {
             "name": "get_weather", "description": "The current weather in a city.",
             "parameters": {"type": "object",
                            "properties": {"city": {"type": "string"},
                                           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                            "required": ["city"]}}},
         {"type": "function", "function": {
             "name": "search_web", "description": "Search the web.",
             "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                            "required": ["query"]}}}]


# ---------------------------------------------------------------------------------------------- helpers
def now():
    return time.monotonic()


def percentile(values, q):
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def cpu_model():
    name, count = None, 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    count += 1
                    name = name or line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {"model": name, "logical_cpus": count or os.cpu_count()}


def git_describe():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def proc_sample(pid):
    """(rss bytes, threads, open fds) of a live process; None where /proc could not be read."""
    rss = threads = fds = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, ValueError):
        pass
    return rss, threads, fds


def cpu_seconds(pid):
    """(machine busy, the server process, this script) CPU seconds so far: what the rest of the machine did
    is the first less the other two (a build beside the soak skews its latencies)."""
    tick = os.sysconf("SC_CLK_TCK")
    machine = server = None
    try:
        with open("/proc/stat") as f:
            user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
        machine = (user + nice + system + irq + softirq) / tick
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        server = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    except (OSError, ValueError, IndexError):
        pass
    me = resource.getrusage(resource.RUSAGE_SELF)
    return machine, server, me.ru_utime + me.ru_stime


def server_sockets(port):
    """(established, close_wait) TCP connections on the server's side of `port` (/proc/net/tcp: the server's
    accepted sockets have the listening port as their local port). CLOSE_WAIT: the client has closed, the
    server has not yet."""
    est = cw = 0
    hexport = f":{port:04X}"
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                parts = line.split()
                if len(parts) > 3 and parts[1].endswith(hexport):
                    est += parts[3] == "01"
                    cw += parts[3] == "08"
    except (OSError, StopIteration):
        return None, None
    return est, cw


def parse_metrics(text):
    """Prometheus samples without histogram buckets: {'name{labels}': value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or "_bucket{" in line:
            continue
        try:
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
        except ValueError:
            continue
    return out


def error_of(status, body):
    """{'status', 'type', 'code', 'message'} from an error body (OpenAI's {"error": {...}} or anything)."""
    err = {"status": status, "type": None, "code": None, "message": None}
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    try:
        obj = json.loads(text)
        e = obj.get("error", obj) if isinstance(obj, dict) else {}
        if isinstance(e, dict):
            err.update(type=e.get("type"), code=e.get("code"), message=e.get("message"))
        else:
            err["message"] = str(e)
    except ValueError:
        err["message"] = text[:300]
    if err["message"] is not None:
        err["message"] = str(err["message"])[:300]
    return err


def cause_key(rec):
    """What groups failures: status, error type/code and the message with its numbers blanked."""
    if rec["outcome"] in ("transport_error", "timeout"):
        return f"{rec['outcome']}: {re.sub(r'[0-9]+', 'N', rec.get('error_message') or '')[:160]}"
    status = rec.get("status")
    kind = f"{rec.get('error_type') or '-'}/{rec.get('error_code') or '-'}"
    msg = re.sub(r"[0-9]+", "N", rec.get("error_message") or "")[:160]
    prefix = "stream error after 200" if rec["outcome"] == "stream_error" else str(status)
    return f"{prefix} {kind}: {msg}"


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def shared_prefixes(count, words):
    """`count` long system prompts, the same in every run (prefix cache and KV tiers hit them)."""
    out = []
    for k in range(count):
        rng = random.Random(1000 + k)
        rules = " ".join(f"Rule {i + 1}: always mention the {rng.choice(WORDS)} and the {rng.choice(WORDS)}."
                         for i in range(words // 8))
        out.append(f"You are assistant number {k} of the soak test. Follow these house rules. {rules} "
                   f"Background notes: {sentence(rng, words // 3)}.")
    return out


# -------------------------------------------------------------------------------------------- the client
class Soak:
    def __init__(self, args, host, port, proc):
        self.args = args
        self.host, self.port, self.proc = host, port, proc
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.records = []          # every request, in order of completion
        self.samples = []
        self.t0 = None             # monotonic time the load started
        self.crash = None          # {'t', 'returncode', 'signal'} once the server has exited during the run
        self.first_kinds = [k for k, w in args.mix.items() if w > 0]  # each kind once before the draw
        self.prefixes = shared_prefixes(args.prefixes, args.prefix_words)
        self.bursts = []           # [t, size] of each burst
        self.metrics_failures = 0
        self.req_file = None
        self.inflight = 0          # requests the clients have open (workers and bursts)
        self.paused = False        # a checkpoint: no new requests while the server drains
        self.pauses = []           # [from, to] of each checkpoint's pause
        self.sample_lock = threading.Lock()  # one sample at a time, in order
        self.checkpoints = {}      # phase -> the drained sample

    # --- recording
    def rel(self, t=None):
        return (now() if t is None else t) - self.t0

    def record(self, rec):
        rec["t_end"] = round(self.rel(), 4)
        if rec["outcome"] in ("transport_error", "timeout", "stream_error") and self.proc.returncode is not None:
            rec["outcome"] = "server_down"  # (Popen.poll() from several threads at once can miss the exit)
        with self.lock:
            self.records.append(rec)
            if self.req_file:
                row = {k: v for k, v in rec.items() if not k.startswith("_")}
                self.req_file.write(json.dumps(row) + "\n")

    def new_rec(self, kind, endpoint, stream, **extra):
        return {"kind": kind, "endpoint": endpoint, "stream": stream, "t_start": round(self.rel(), 4),
                "status": None, "outcome": None, **extra}

    # --- plumbing
    def connect(self, timeout=None):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout or self.args.request_timeout)

    def fail_transport(self, rec, e):
        rec["outcome"] = "timeout" if isinstance(e, (socket.timeout, TimeoutError)) else "transport_error"
        rec["error_message"] = f"{type(e).__name__}: {e}"

    def set_http_error(self, rec, status, body):
        err = error_of(status, body)
        rec.update(status=status, outcome="http_error", error_type=err["type"], error_code=err["code"],
                   error_message=err["message"])

    def post_json(self, rec, path, body, t_send):
        """Plain (non-stream) request; returns the parsed 2xx body or None (rec filled with the failure)."""
        conn = self.connect()
        try:
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            rec["status"] = resp.status
            rec["latency"] = round(now() - t_send, 4)
            if not 200 <= resp.status < 300:
                self.set_http_error(rec, resp.status, data)
                return None
            try:
                return json.loads(data)
            except ValueError:
                rec.update(outcome="stream_error", error_message="2xx body is not JSON: " + data[:120].decode("utf-8", "replace"))
                return None
        except (OSError, http.client.HTTPException) as e:
            self.fail_transport(rec, e)
            return None
        finally:
            conn.close()

    def stream(self, rec, path, body, t_send, stop_after=None):
        """A stream read line by line: TTFT (first chunk with content), inter-token gaps, chunks, choices.
        stop_after: close the connection after that many content chunks (a cancellation). Returns the
        content chunks' objects, or None on failure."""
        conn = self.connect()
        itl, chunks, objs = [], 0, []
        last = None
        indices = set()
        try:
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            resp = conn.getresponse()
            rec["status"] = resp.status
            if not 200 <= resp.status < 300:
                self.set_http_error(rec, resp.status, resp.read())
                rec["latency"] = round(now() - t_send, 4)
                return None
            done = False
            for raw in resp:
                line = raw.strip()
                if not line.startswith(b"data:"):
                    continue
                payload = line[5:].strip()
                if payload == b"[DONE]":
                    done = True
                    break
                t = now()
                try:
                    obj = json.loads(payload)
                except ValueError:
                    rec.update(outcome="stream_error", error_message="SSE data is not JSON: " + payload[:120].decode("utf-8", "replace"))
                    return None
                if "error" in obj:
                    err = error_of(resp.status, payload)
                    rec.update(outcome="stream_error", error_type=err["type"], error_code=err["code"],
                               error_message=err["message"])
                    return None
                objs.append(obj)
                has = False
                for c in obj.get("choices") or []:
                    indices.add(c.get("index", 0))
                    d = c.get("delta") or {}
                    if c.get("text") or d.get("content") or d.get("tool_calls") or d.get("reasoning_content"):
                        has = True
                if has:
                    chunks += 1
                    if last is None:
                        rec["ttft"] = round(t - t_send, 5)
                    else:
                        itl.append(t - last)
                    last = t
                    if stop_after is not None and chunks >= stop_after:
                        rec["outcome"] = "cancelled"
                        break
            rec["latency"] = round(now() - t_send, 4)
            rec["chunks"] = chunks
            rec["choices_seen"] = len(indices)
            rec["_itl"] = itl
            if itl:
                rec["itl_mean"] = round(sum(itl) / len(itl), 5)
                rec["itl_max"] = round(max(itl), 5)
            if rec["outcome"] == "cancelled":
                return objs
            if not done:
                rec.update(outcome="stream_error", error_message=f"stream ended without [DONE] after {chunks} chunks")
                return None
            return objs
        except (OSError, http.client.HTTPException) as e:
            self.fail_transport(rec, e)
            return None
        finally:
            conn.close()

    def raw_request(self, path, body, rcvbuf=None):
        """A socket with the HTTP request written to it (Connection: close)."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(self.args.request_timeout)
        s.connect((self.host, self.port))
        data = json.dumps(body).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n").encode()
        s.sendall(head + data)
        return s

    # --- the request kinds
    def user_prompt(self, rng):
        topic = rng.choice(["a short story", "a poem", "a list of facts", "a recipe", "an explanation",
                            "a dialogue", "advice"])
        return f"Write {topic} about the {rng.choice(WORDS)} and the {rng.choice(WORDS)}. {sentence(rng, rng.randint(4, 120))}"

    def max_tokens(self, rng):
        return rng.randint(self.args.min_tokens, self.args.max_tokens)

    def sampling(self, rng):
        return {"temperature": 0.0} if rng.random() < 0.5 else {"temperature": 0.8, "top_p": 0.95,
                                                                "seed": rng.randint(0, 1 << 30)}

    def do_chat(self, rng, kind, stream, n=1, messages=None, extra=None):
        body = {"messages": messages or [{"role": "user", "content": self.user_prompt(rng)}],
                "max_tokens": self.max_tokens(rng), "stream": stream, **self.sampling(rng), **(extra or {})}
        if n > 1:
            body["n"] = n
            body["temperature"] = 0.8
        rec = self.new_rec(kind, "chat", stream, n=n)
        t = now()
        if stream:
            objs = self.stream(rec, "/v1/chat/completions", body, t)
            if objs is not None and rec["outcome"] is None:
                rec["outcome"] = "ok"
                if n > 1 and rec.get("choices_seen") != n:
                    rec["anomaly"] = f"streamed {rec.get('choices_seen')} choices for n={n}"
            return rec, objs
        out = self.post_json(rec, "/v1/chat/completions", body, t)
        if out is not None:
            rec["outcome"] = "ok"
            choices = out.get("choices") or []
            if len(choices) != n:
                rec["anomaly"] = f"{len(choices)} choices for n={n}"
        return rec, out

    def do_completion(self, rng, kind, stream, n=1):
        prompt = f"{sentence(rng, rng.randint(3, 150))}. The {rng.choice(WORDS)} of the {rng.choice(WORDS)} is"
        body = {"prompt": prompt, "max_tokens": self.max_tokens(rng), "stream": stream, **self.sampling(rng)}
        if n > 1:
            body.update(n=n, temperature=0.8)
        rec = self.new_rec(kind, "completions", stream, n=n)
        t = now()
        if stream:
            objs = self.stream(rec, "/v1/completions", body, t)
            if objs is not None and rec["outcome"] is None:
                rec["outcome"] = "ok"
                if n > 1 and rec.get("choices_seen") != n:
                    rec["anomaly"] = f"streamed {rec.get('choices_seen')} choices for n={n}"
            return rec
        out = self.post_json(rec, "/v1/completions", body, t)
        if out is not None:
            rec["outcome"] = "ok"
            if len(out.get("choices") or []) != n:
                rec["anomaly"] = f"{len(out.get('choices') or [])} choices for n={n}"
        return rec

    def k_chat_stream(self, rng):
        return self.do_chat(rng, "chat_stream", True)[0]

    def k_chat(self, rng):
        return self.do_chat(rng, "chat", False)[0]

    def k_completion_stream(self, rng):
        return self.do_completion(rng, "completion_stream", True)

    def k_completion(self, rng):
        return self.do_completion(rng, "completion", False)

    def k_chat_n(self, rng):
        return self.do_chat(rng, "chat_n", False, n=rng.choice([2, 3]))[0]

    def k_completion_stream_n(self, rng):
        return self.do_completion(rng, "completion_stream_n", True, n=2)

    def k_structured(self, rng):
        messages = [{"role": "system", "content": "Answer in JSON."},
                    {"role": "user", "content": f"Invent a person who likes the {rng.choice(WORDS)}."}]
        extra = {"response_format": {"type": "json_schema", "json_schema": {"name": "person", "strict": True,
                                                                            "schema": SCHEMA}}}
        rec, out = self.do_chat(rng, "structured", False, messages=messages, extra=extra)
        if out is not None:
            c = (out.get("choices") or [{}])[0]
            if c.get("finish_reason") == "stop":
                try:
                    v = json.loads((c.get("message") or {}).get("content") or "")
                    if not (isinstance(v, dict) and set(SCHEMA["required"]) <= set(v) and set(v) <= set(SCHEMA["properties"])):
                        rec["anomaly"] = f"structured output off the schema: {json.dumps(v)[:120]}"
                except ValueError:
                    rec["anomaly"] = "structured output is not JSON: " + str((c.get("message") or {}).get("content"))[:120]
        return rec

    def k_tools(self, rng):
        named = rng.random() < 0.5
        choice = {"type": "function", "function": {"name": "get_weather"}} if named else "required"
        messages = [{"role": "user", "content": f"What is the weather in {rng.choice(['Paris', 'Tokyo', 'Lima', 'Oslo'])}?"}]
        stream = rng.random() < 0.4
        rec, out = self.do_chat(rng, "tools", stream, messages=messages,
                                extra={"tools": TOOLS, "tool_choice": choice, "max_tokens": 64})
        rec["tool_choice"] = "named" if named else "required"
        if out is not None and not stream:
            c = (out.get("choices") or [{}])[0]
            calls = (c.get("message") or {}).get("tool_calls") or []
            if c.get("finish_reason") != "length":
                if not calls:
                    rec["anomaly"] = f"no tool call under tool_choice {rec['tool_choice']} (finish {c.get('finish_reason')})"
                else:
                    try:
                        json.loads(calls[0]["function"]["arguments"])
                        if named and calls[0]["function"]["name"] != "get_weather":
                            rec["anomaly"] = f"called {calls[0]['function']['name']} for a named tool_choice"
                    except (ValueError, KeyError, TypeError):
                        rec["anomaly"] = "tool call arguments are not JSON"
        return rec

    def k_shared_prefix(self, rng):
        k = rng.randrange(len(self.prefixes))
        messages = [{"role": "system", "content": self.prefixes[k]},
                    {"role": "user", "content": f"Question {rng.randint(0, 9999)}: tell me about the {rng.choice(WORDS)}."}]
        rec, _ = self.do_chat(rng, "shared_prefix", True, messages=messages)
        rec["prefix"] = k
        return rec

    def k_too_long(self, rng):
        words = rng.randint(int(self.args.ctx_size * 1.2), int(self.args.ctx_size * 2))
        chat = rng.random() < 0.5
        stream = rng.random() < 0.5
        text = sentence(rng, words)
        body = ({"messages": [{"role": "user", "content": text}]} if chat else {"prompt": text})
        body.update(max_tokens=16, stream=stream)
        path = "/v1/chat/completions" if chat else "/v1/completions"
        rec = self.new_rec("too_long", "chat" if chat else "completions", stream, prompt_words=words)
        t = now()
        out = self.stream(rec, path, body, t) if stream else self.post_json(rec, path, body, t)
        if rec.get("status") == 400 and (rec.get("error_code") == "context_length_exceeded"
                                         or "context" in (rec.get("error_message") or "")):
            rec["outcome"] = "expected_400"
        elif out is not None and rec["outcome"] is None:
            rec.update(outcome="unexpected_success", error_message=f"{rec['status']} for a prompt of {words} words, past the context")
        return rec

    def k_cancel(self, rng):
        chat = rng.random() < 0.5
        after = rng.randint(1, 4)
        body_extra = {"max_tokens": self.args.max_tokens + 32, "stream": True, "ignore_eos": True}
        if chat:
            body = {"messages": [{"role": "user", "content": self.user_prompt(rng)}], **body_extra}
            path = "/v1/chat/completions"
        else:
            body = {"prompt": f"Once upon a time, the {rng.choice(WORDS)}", **body_extra}
            path = "/v1/completions"
        rec = self.new_rec("cancel", "chat" if chat else "completions", True, cancel_after=after)
        out = self.stream(rec, path, body, now(), stop_after=after)
        if out is not None and rec["outcome"] is None:
            rec["outcome"] = "ok"  # the stream ended before the client closed it
        return rec

    def k_vanish(self, rng):
        chat = rng.random() < 0.5
        body = ({"messages": [{"role": "user", "content": self.user_prompt(rng)}]} if chat
                else {"prompt": f"The {rng.choice(WORDS)} and the {rng.choice(WORDS)}"})
        body.update(max_tokens=self.args.max_tokens + 32, stream=rng.random() < 0.8, ignore_eos=True)
        wait = rng.choice([0.0, rng.uniform(0.05, 2.0)])
        rec = self.new_rec("vanish", "chat" if chat else "completions", body["stream"], vanish_after=round(wait, 3))
        try:
            s = self.raw_request("/v1/chat/completions" if chat else "/v1/completions", body)
            self.stop.wait(wait)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
            s.close()
            rec["outcome"] = "vanished"
        except OSError as e:
            self.fail_transport(rec, e)
        return rec

    def k_slow_reader(self, rng):
        body = {"messages": [{"role": "user", "content": self.user_prompt(rng)}], "max_tokens": 128,
                "stream": True, "logprobs": True, "top_logprobs": 10, "ignore_eos": True}
        rec = self.new_rec("slow_reader", "chat", True)
        t = now()
        buf = bytearray()
        try:
            s = self.raw_request("/v1/chat/completions", body, rcvbuf=4096)
            try:
                while True:
                    piece = s.recv(2048)
                    if not piece:
                        break
                    if not buf:
                        rec["ttfb"] = round(now() - t, 5)
                    buf += piece
                    if not self.hurry():  # once the run ends, read the rest at full speed
                        time.sleep(rng.uniform(0.05, 0.2))
            finally:
                s.close()
        except OSError as e:
            self.fail_transport(rec, e)
            return rec
        rec["latency"] = round(now() - t, 4)
        rec["bytes"] = len(buf)
        head, _, body_bytes = bytes(buf).partition(b"\r\n\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d+)", head)
        if not m:
            rec.update(outcome="transport_error", error_message=f"no HTTP status line in {len(buf)} bytes")
            return rec
        rec["status"] = int(m.group(1))
        if b"chunked" in head.lower():
            body_bytes = dechunk(body_bytes)
        if not 200 <= rec["status"] < 300:
            self.set_http_error(rec, rec["status"], body_bytes)
            return rec
        events = [ln[5:].strip() for ln in body_bytes.split(b"\n") if ln.startswith(b"data:")]
        for e in events:
            if e.startswith(b"{") and b'"error"' in e[:20]:
                err = error_of(rec["status"], e)
                rec.update(outcome="stream_error", error_type=err["type"], error_code=err["code"], error_message=err["message"])
                return rec
        rec["chunks"] = len(events)
        if b"[DONE]" not in events:
            rec.update(outcome="stream_error", error_message=f"slow stream ended without [DONE] after {len(events)} events")
        else:
            rec["outcome"] = "ok"
        return rec

    def k_burst_one(self, barrier, rng):
        body = {"prompt": f"{rng.choice(WORDS)} {rng.choice(WORDS)}", "max_tokens": 4, "temperature": 0}
        try:
            barrier.wait(timeout=30)
        except threading.BrokenBarrierError:
            pass
        rec = self.new_rec(BURST, "completions", False)
        if self.post_json(rec, "/v1/completions", body, now()) is not None:
            rec["outcome"] = "ok"
        self.record(rec)

    # --- threads
    def next_kind(self, rng):
        with self.lock:
            if self.first_kinds:
                return self.first_kinds.pop(0)
        kinds = [k for k, w in self.args.mix.items() if w > 0]
        return rng.choices(kinds, weights=[self.args.mix[k] for k in kinds])[0]

    def hurry(self):
        """Slow readers read at full speed once the run ends or a checkpoint drains the load."""
        return self.stop.is_set() or self.paused

    def begin(self, n=1):
        """Counts n requests in flight, unless a checkpoint holds new ones back (then False)."""
        with self.lock:
            if self.paused:
                return False
            self.inflight += n
            return True

    def end(self, n=1):
        with self.lock:
            self.inflight -= n

    def worker(self, i):
        rng = random.Random(self.args.seed * 1000 + i)
        while not self.stop.is_set():
            if not self.begin():
                self.stop.wait(0.05)
                continue
            try:
                kind = self.next_kind(rng)
                try:
                    rec = getattr(self, "k_" + kind)(rng)
                except Exception as e:  # a bug in this script must not look like a server failure
                    rec = self.new_rec(kind, None, None)
                    rec.update(outcome="client_bug", error_message=f"{type(e).__name__}: {e}")
                self.record(rec)
            finally:
                self.end()
            if rec["outcome"] == "server_down":
                break
            if "ConnectionRefused" in (rec.get("error_message") or ""):
                self.stop.wait(0.2)  # the server is gone or going: the main loop sees it within 0.25 s

    def checkpoint(self, phase):
        """Holds new requests back, waits for the clients' requests and the engine's queue to empty, and
        samples the idle server (phase 'checkpoint' or 'idle'); the load resumes after a checkpoint."""
        t_from = self.rel()
        with self.lock:
            self.paused = True
        deadline = now() + self.args.request_timeout + 10
        while self.inflight > 0 and now() < deadline and self.proc.poll() is None:
            time.sleep(0.05)
        s = None
        deadline = now() + 60
        while now() < deadline and self.proc.poll() is None:
            s = self.take_sample("drain")
            if s["waiting"] == 0 and s["running"] == 0:
                break
            time.sleep(0.5)
        if self.proc.poll() is None:
            time.sleep(1)
            s = self.take_sample(phase)
            s["drain_s"] = round(self.rel() - t_from, 2)
            self.checkpoints[phase] = s
        with self.lock:
            self.paused = phase == "idle"
            self.pauses.append([round(t_from, 2), round(self.rel(), 2)])
        return s

    def burster(self):
        rng = random.Random(self.args.seed * 7919)
        every = self.args.burst_every
        next_t = every / 2
        while not self.stop.wait(max(0.0, next_t - self.rel())):
            n = self.args.burst_size
            if not self.begin(n):
                next_t = self.rel() + 1
                continue
            barrier = threading.Barrier(n)
            with self.lock:
                self.bursts.append([round(self.rel(), 3), n])
            ts = [threading.Thread(target=self.k_burst_one, args=(barrier, random.Random(rng.random())), daemon=True)
                  for _ in range(n)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.end(n)
            next_t = max(next_t + every, self.rel() + 1)

    def scrape(self):
        t = now()
        conn = self.connect(timeout=self.args.metrics_timeout)
        try:
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            text = resp.read().decode("utf-8", "replace")
            if resp.status != 200:
                return None, now() - t
            return parse_metrics(text), now() - t
        except (OSError, http.client.HTTPException):
            return None, now() - t
        finally:
            conn.close()

    def take_sample(self, phase):
        with self.sample_lock:
            return self._take_sample(phase)

    def _take_sample(self, phase):
        t = self.rel()
        if phase == "load" and self.paused:
            phase = "pause"
        rss, threads, fds = proc_sample(self.proc.pid)
        cpu_machine, cpu_server, cpu_client = cpu_seconds(self.proc.pid)
        est, close_wait = server_sockets(self.port)
        m, scrape_s = self.scrape()
        if m is None:
            self.metrics_failures += 1
        with self.lock:
            prev_t = self.samples[-1]["t"] if self.samples else 0.0
            done = [r for r in self.records if prev_t < r["t_end"] <= t]
            total = len(self.records)
            unexpected = sum(1 for r in self.records if r["outcome"] in UNEXPECTED)
            expected = sum(1 for r in self.records if r["outcome"] == "expected_400")
        g = (lambda k: None if m is None else m.get("ridge:" + k))
        s = {"t": round(t, 2), "phase": phase, "rss_bytes": rss, "threads": threads, "fds": fds,
             "conns_established": est, "conns_close_wait": close_wait, "client_inflight": self.inflight,
             "kv_blocks_used": g("kv_cache_blocks_used"), "kv_blocks_total": g("kv_cache_blocks_total"),
             "waiting": g("num_requests_waiting"), "running": g("num_requests_running"),
             "preemptions": g("num_preemptions_total"), "prefix_hits": g("prefix_cache_hits_total"),
             "prefix_queries": g("prefix_cache_queries_total"),
             "tier_hits_ram": g('kv_offload_hits_total{tier="ram"}'),
             "tier_hits_disk": g('kv_offload_hits_total{tier="disk"}'),
             "tier_blocks_ram": g('kv_offload_blocks{tier="ram"}'),
             "tier_blocks_disk": g('kv_offload_blocks{tier="disk"}'),
             "tier_disk_writes": g("kv_offload_disk_writes_total"),
             "tier_corrupt_files": g("kv_offload_corrupt_files_total"),
             "tier_load_failures": g("kv_offload_load_failures_total"),
             "spec_draft_tokens": g("spec_decode_num_draft_tokens_total"),
             "spec_accepted_tokens": g("spec_decode_num_accepted_tokens_total"),
             "aborted": g('request_success_total{finished_reason="abort"}'),
             "generation_tokens": g("generation_tokens_total"),
             "cpu_machine_s": cpu_machine, "cpu_server_s": cpu_server, "cpu_client_s": round(cpu_client, 3),
             "server_cores": None, "other_cores": None,
             "metrics_scrape_s": round(scrape_s, 3), "completed": len(done), "completed_total": total,
             "req_per_s": round(len(done) / max(t - prev_t, 1e-9), 3) if self.samples else 0.0,
             "unexpected_total": unexpected, "expected_400_total": expected}
        prev = self.samples[-1] if self.samples else None
        if prev and None not in (prev["cpu_machine_s"], prev["cpu_server_s"], cpu_machine, cpu_server) and t > prev["t"]:
            dt = t - prev["t"]
            s["server_cores"] = round((cpu_server - prev["cpu_server_s"]) / dt, 3)
            other = (cpu_machine - prev["cpu_machine_s"]) - (cpu_server - prev["cpu_server_s"]) - (cpu_client - prev["cpu_client_s"])
            s["other_cores"] = round(max(0.0, other / dt), 3)
        with self.lock:
            self.samples.append(s)
        return s

    def sampler(self):
        k = 1
        while not self.stop.wait(max(0.0, k * self.args.sample_interval - self.rel())):
            k += 1
            if self.proc.poll() is not None:
                break
            s = self.take_sample("load")
            print(progress_line(s), flush=True)


def dechunk(data):
    out, i = bytearray(), 0
    while i < len(data):
        j = data.find(b"\r\n", i)
        if j < 0:
            break
        try:
            size = int(data[i:j].split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out += data[j + 2:j + 2 + size]
        i = j + 2 + size + 2
    return bytes(out)


def fmt_num(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.1f}{unit}"
    return f"{int(v)}{unit}"


def f2(v):
    return "-" if v is None else f"{v:.2f}"


def progress_line(s):
    rss = "-" if s["rss_bytes"] is None else f"{s['rss_bytes'] / 2**20:.1f}MiB"
    kv = f"{fmt_num(s['kv_blocks_used'])}/{fmt_num(s['kv_blocks_total'])}"
    return (f"[{s['t']:7.1f}s] rss {rss} fds {fmt_num(s['fds'])} thr {fmt_num(s['threads'])} kv {kv} "
            f"queue {fmt_num(s['waiting'])}w/{fmt_num(s['running'])}r | done {s['completed_total']} "
            f"({s['req_per_s']:.2f}/s) expected-400 {s['expected_400_total']} unexpected {s['unexpected_total']} "
            f"| cores server {f2(s['server_cores'])} other {f2(s['other_cores'])} | metrics {s['metrics_scrape_s']:.2f}s")


# ----------------------------------------------------------------------------------------------- server
def server_command(args, tier_dir):
    defaults = [("--ctx-size", str(args.ctx_size)), ("--http-threads", str(args.http_threads)),
                ("--kv-memory", args.kv_memory), ("--speculative", args.speculative)]
    if args.threads:
        defaults.append(("--threads", str(args.threads)))
    if not args.no_tiers:
        defaults += [("--kv-offload-ram", args.kv_offload_ram), ("--kv-offload-dir", tier_dir),
                     ("--kv-offload-size", args.kv_offload_size)]
    extra = shlex.split(args.ridge_args or "")
    given = {a.split("=", 1)[0] for a in extra if a.startswith("-")}
    aliases = {"--ctx-size": {"-c"}, "--threads": {"-t"}}
    cmd = [args.ridge, "serve", "-m", args.model, "--host", "127.0.0.1", "--port", "0"]
    for flag, value in defaults:
        if flag in given or aliases.get(flag, set()) & given:
            continue
        cmd += [flag, value]
    return cmd + extra


def server_preexec():
    """The server in a session of its own (a Ctrl-C of the soak is not the server's: the script stops it and
    reports), and sent SIGTERM should the script die (Linux's parent-death signal)."""
    os.setsid()
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def start_server(cmd, log_path, timeout):
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=server_preexec)
    log.close()
    deadline = now() + timeout
    host = port = None
    while now() < deadline:
        if proc.poll() is not None:
            return proc, None, None
        if port is None:
            with open(log_path, errors="replace") as f:
                m = BANNER.search(f.read())
            if m:
                host, port = m.group(1), int(m.group(2))
        if port is not None:
            try:
                c = http.client.HTTPConnection(host, port, timeout=5)
                c.request("GET", "/health")
                ok = c.getresponse().status == 200
                c.close()
                if ok:
                    return proc, host, port
            except (OSError, http.client.HTTPException):
                pass
        time.sleep(0.2)
    return proc, None, None


def log_tail(path, n=3000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


# ----------------------------------------------------------------------------------------------- report
def growth(samples, key, t_from, t_to, denom=None):
    """Least-squares line through (t, value) over [t_from, t_to]: its rise over the window as a percent of
    the window's mean value (or of `denom`)."""
    pts = [(s["t"], s[key]) for s in samples if s["phase"] == "load" and t_from <= s["t"] <= t_to and s[key] is not None]
    if len(pts) < 3:
        return {"n": len(pts), "growth_pct": None}
    n = len(pts)
    mt = sum(t for t, _ in pts) / n
    mv = sum(v for _, v in pts) / n
    var = sum((t - mt) ** 2 for t, _ in pts)
    slope = sum((t - mt) * (v - mv) for t, v in pts) / var if var > 0 else 0.0
    rise = slope * (pts[-1][0] - pts[0][0])
    base = denom if denom else mv
    return {"n": n, "first": pts[0][1], "last": pts[-1][1], "min": min(v for _, v in pts),
            "max": max(v for _, v in pts), "mean": round(mv, 3), "slope_per_min": round(slope * 60, 4),
            "growth_pct": round(100.0 * rise / base, 3) if base else None, "relative_to": "pool" if denom else "mean"}


def latency_window(records, t_from, t_to):
    rs = [r for r in records if r["kind"] in LATENCY_KINDS and r["outcome"] == "ok" and t_from <= r["t_start"] < t_to]
    ttft = [r["ttft"] for r in rs if r.get("ttft") is not None]
    itl = [x for r in rs for x in r.get("_itl", [])]
    ms = (lambda v: None if v is None else round(1e3 * v, 2))
    return {"from_s": round(t_from, 1), "to_s": round(t_to, 1), "streams": len(rs), "itl_gaps": len(itl),
            "ttft_p50_ms": ms(percentile(ttft, 50)), "ttft_p99_ms": ms(percentile(ttft, 99)),
            "itl_p50_ms": ms(percentile(itl, 50)), "itl_p99_ms": ms(percentile(itl, 99))}


def window_cpu(samples, t_from, t_to):
    """Cores the server and the rest of the machine (not this script) used on average over about [t_from, t_to]:
    between the samples nearest to its ends."""
    pts = sorted((s for s in samples if s.get("cpu_machine_s") is not None and s.get("cpu_server_s") is not None),
                 key=lambda s: s["t"])
    if len(pts) < 2:
        return {"server_cores": None, "other_cores": None}
    a = min(pts, key=lambda s: abs(s["t"] - t_from))
    b = min(pts, key=lambda s: abs(s["t"] - t_to))
    if b["t"] <= a["t"]:
        return {"server_cores": None, "other_cores": None}
    dt = b["t"] - a["t"]
    server = b["cpu_server_s"] - a["cpu_server_s"]
    other = (b["cpu_machine_s"] - a["cpu_machine_s"]) - server - (b["cpu_client_s"] - a["cpu_client_s"])
    return {"server_cores": round(server / dt, 3), "other_cores": round(max(0.0, other) / dt, 3),
            "cpu_from_s": a["t"], "cpu_to_s": b["t"]}


def build_report(soak, args, cmd, shutdown, duration_run, idle, baseline):
    recs = soak.records
    if soak.crash:
        # What broke when the server died is the crash, not a failure of its own: the crash time is when the
        # script saw the exit (polled every 0.25 s).
        for r in recs:
            if r["outcome"] in ("transport_error", "timeout", "stream_error") and r["t_end"] >= soak.crash["t"] - 0.5:
                r["outcome"] = "server_down"
    kinds = {}
    for r in recs:
        k = kinds.setdefault(r["kind"], {"sent": 0, "answered": 0, "outcomes": {}, "statuses": {}, "anomalies": 0})
        k["sent"] += 1
        k["outcomes"][r["outcome"]] = k["outcomes"].get(r["outcome"], 0) + 1
        if r.get("status") is not None:
            k["statuses"][str(r["status"])] = k["statuses"].get(str(r["status"]), 0) + 1
        if r["outcome"] in ("ok", "expected_400", "cancelled", "vanished"):
            k["answered"] += 1
        if r.get("anomaly"):
            k["anomalies"] += 1
    for k, v in kinds.items():
        lat = [r["latency"] for r in recs if r["kind"] == k and r["outcome"] == "ok" and r.get("latency") is not None]
        v["latency_p50_ms"] = None if not lat else round(1e3 * percentile(lat, 50), 1)
        v["latency_p99_ms"] = None if not lat else round(1e3 * percentile(lat, 99), 1)

    def by_cause(rs):
        out = {}
        for r in rs:
            key = cause_key(r)
            e = out.setdefault(key, {"count": 0, "kinds": {}, "example": None})
            e["count"] += 1
            e["kinds"][r["kind"]] = e["kinds"].get(r["kind"], 0) + 1
            if e["example"] is None:
                e["example"] = {k: v for k, v in r.items() if not k.startswith("_")}
        return dict(sorted(out.items(), key=lambda kv: -kv[1]["count"]))

    unexpected = [r for r in recs if r["outcome"] in UNEXPECTED]
    unexpected_5xx = [r for r in unexpected if r["outcome"] == "http_error" and (r.get("status") or 0) >= 500]
    anomalies = {}
    for r in recs:
        if r.get("anomaly"):
            key = f"{r['kind']}: {re.sub(r'[0-9]+', 'N', r['anomaly'])[:100]}"
            anomalies[key] = anomalies.get(key, 0) + 1

    d = duration_run
    w = min(300.0, d / 6.0)
    first = {**latency_window(recs, 0.0, w), **window_cpu(soak.samples, 0.0, w)}
    last = {**latency_window(recs, d - w, d + 1e-9), **window_cpu(soak.samples, d - w, d)}
    busy = max(first.get("other_cores") or 0.0, last.get("other_cores") or 0.0)
    flat_from = d / 3.0
    kv_total = next((s["kv_blocks_total"] for s in soak.samples if s.get("kv_blocks_total")), None)
    ck, end = soak.checkpoints.get("checkpoint"), soak.checkpoints.get("idle")

    def drained(key, denom=None):
        if ck is None or end is None or ck.get(key) is None or end.get(key) is None:
            return None
        a, b = ck[key], end[key]
        base = denom or a
        pct = 100.0 * (b - a) / base if base else (0.0 if a == b else math.inf)
        return {"checkpoint": a, "end": b, "growth_pct": round(pct, 3), "relative_to": "pool" if denom else "checkpoint"}

    flat = {"window_s": [round(flat_from, 1), round(d, 1)],
            "checkpoint_t": None if ck is None else ck["t"]}
    for key in FLAT_KEYS:
        denom = kv_total if key == "kv_blocks_used" else None
        flat[key] = {"under_load": growth(soak.samples, key, flat_from, d, denom=denom), "drained": drained(key, denom)}

    targets = []

    def target(name, ok, value, goal):
        targets.append({"target": name, "pass": ok, "value": value, "goal": goal})

    target("no crash", soak.crash is None, "alive" if soak.crash is None else
           f"exited with {soak.crash['returncode']} ({soak.crash.get('signal') or 'status'}) at {soak.crash['t']} s",
           "the server never exits during the run")
    target("clean shutdown", shutdown.get("returncode") == 0 and not shutdown.get("killed"),
           shutdown, "exit status 0 within --shutdown-wait s of SIGTERM")
    target("unexpected 5xx", len(unexpected_5xx) == 0, len(unexpected_5xx), 0)
    target("other unexpected failures", len(unexpected) - len(unexpected_5xx) == 0,
           len(unexpected) - len(unexpected_5xx), "0 (unexpected 4xx, broken streams, transport errors, timeouts)")
    for key, name in FLAT_KEYS.items():
        # Drained: the idle server at the checkpoint vs at the end (exact; what a leak leaves behind). Under
        # load: a least-squares line through the samples, a target only for RSS and threads (fds and KV
        # blocks follow the load).
        dr = flat[key]["drained"]
        ul = flat[key]["under_load"]["growth_pct"] if key in ("rss_bytes", "threads") else None
        values = [g for g in ((dr or {}).get("growth_pct"), ul) if g is not None]
        sc, unit = (2**20, " MiB") if key == "rss_bytes" else (1, "")
        shown = "; ".join(x for x in ((None if dr is None else
                                       f"drained {dr['checkpoint'] / sc:.1f} -> {dr['end'] / sc:.1f}{unit} ({dr['growth_pct']:+.2f}%)"),
                                      (None if ul is None else f"under load {ul:+.2f}%")) if x)
        target(f"{name} growth over the last two thirds", None if dr is None else all(g < args.growth_target for g in values),
               shown or "-", f"< {args.growth_target}%" + (" of the pool" if key == "kv_blocks_used" else ""))
    idle_kv = None if idle is None else idle.get("kv_blocks_used")
    target("KV blocks in use after the load drained", None if idle_kv is None else idle_kv == 0,
           "-" if idle_kv is None else int(idle_kv), 0)
    for metric in ("ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms"):
        a, b = first[metric], last[metric]
        enough = first["streams"] >= args.min_window_streams and last["streams"] >= args.min_window_streams
        if a is None or b is None or not enough or a == 0:
            target(f"{metric} last vs first window", None,
                   f"{fmt_num(a)} -> {fmt_num(b)} ms ({first['streams']} and {last['streams']} streams: too few)",
                   f"within {args.latency_tolerance}%")
        else:
            change = 100.0 * (b - a) / a
            note = f"; other processes used {busy:.2f} cores" if busy > args.busy_cores else ""
            target(f"{metric} last vs first window", abs(change) <= args.latency_tolerance,
                   f"{a:.1f} -> {b:.1f} ms ({change:+.1f}%{note})", f"within {args.latency_tolerance}%")

    counts = {o: sum(1 for r in recs if r["outcome"] == o) for o in sorted({r["outcome"] for r in recs})}
    last_m = next((x for x in reversed(soak.samples) if x.get("kv_blocks_total") is not None), {})
    counter_keys = ("prefix_hits", "prefix_queries", "tier_hits_ram", "tier_hits_disk", "tier_blocks_ram",
                    "tier_blocks_disk", "tier_disk_writes", "tier_corrupt_files", "tier_load_failures",
                    "spec_draft_tokens", "spec_accepted_tokens", "preemptions", "aborted", "generation_tokens")
    counters = {k: last_m.get(k) for k in counter_keys}
    if counters.get("spec_draft_tokens"):
        counters["spec_acceptance"] = round(counters["spec_accepted_tokens"] / counters["spec_draft_tokens"], 4)
    if counters.get("prefix_queries"):
        counters["prefix_hit_rate"] = round(counters["prefix_hits"] / counters["prefix_queries"], 4)
    return {
        "issue": 48,
        "started": soak.started_wall,
        "duration_s": round(d, 1),
        "interrupted": soak.interrupted,
        "config": {k: v for k, v in vars(args).items()},
        "server_command": cmd,
        "ridge_version": git_describe(),
        "cpu": cpu_model(),
        "requests": len(recs),
        "outcomes": counts,
        "kinds": dict(sorted(kinds.items())),
        "bursts": soak.bursts,
        "pauses": soak.pauses,
        "expected_failures": by_cause([r for r in recs if r["outcome"] == "expected_400"]),
        "unexpected_failures": by_cause(unexpected),
        "unexpected_5xx": len(unexpected_5xx),
        "client_bugs": by_cause([r for r in recs if r["outcome"] == "client_bug"]),
        "server_down_after_crash": sum(1 for r in recs if r["outcome"] == "server_down"),
        "anomalies": anomalies,
        "crash": soak.crash,
        "shutdown": shutdown,
        "metrics_scrape_failures": soak.metrics_failures,
        "metrics_scrape_max_s": max((x["metrics_scrape_s"] for x in soak.samples), default=None),
        "server_counters": counters,
        "latency": {"window_s": round(w, 1), "first": first, "last": last,
                    "machine_busy": busy > args.busy_cores},
        "flatness": flat,
        "baseline_idle": baseline,
        "after_drain_idle": idle,
        "targets": targets,
        "pass": all(t["pass"] is not False for t in targets),
        "samples": soak.samples,
    }


# --------------------------------------------------------------------------------------------------- svg
def nice_ceiling(v, ticks=4):
    """The smallest top of a 0-based axis at least v whose `ticks` steps are 1, 2, 2.5 or 5 times a power of 10."""
    if v <= 0:
        return 1.0
    step = v / ticks
    e = 10 ** math.floor(math.log10(step))
    for m in (1, 2, 2.5, 5, 10):
        if m * e >= step - 1e-12:
            return m * e * ticks
    return 10 * e * ticks


def label(v):
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:.0f}"
    return f"{v:.3g}"


def write_svg(path, report, samples):
    d = max(report["duration_s"], 1.0)
    load = sorted((s for s in samples if s["t"] <= d and s["phase"] != "idle"), key=lambda s: s["t"])
    panels = [
        ("RSS (MiB)", [("rss", "#1f77b4", [(s["t"], None if s["rss_bytes"] is None else s["rss_bytes"] / 2**20) for s in load])], False),
        ("open file descriptors", [("fds", "#1f77b4", [(s["t"], s["fds"]) for s in load])], True),
        ("threads", [("threads", "#1f77b4", [(s["t"], s["threads"]) for s in load])], True),
        ("KV blocks in use (dashed: pool)", [("used", "#1f77b4", [(s["t"], s["kv_blocks_used"]) for s in load]),
                                             ("pool", "#999999", [(s["t"], s["kv_blocks_total"]) for s in load])], True),
        ("engine queue: running (blue), waiting (orange)", [("running", "#1f77b4", [(s["t"], s["running"]) for s in load]),
                                                            ("waiting", "#ff7f0e", [(s["t"], s["waiting"]) for s in load])], True),
        ("completed requests / s (red: unexpected failures / s)",
         [("req/s", "#2ca02c", [(s["t"], s["req_per_s"]) for s in load[1:] if s["phase"] in ("load", "pause")]),
          ("failures/s", "#d62728", [(b["t"], (b["unexpected_total"] - a["unexpected_total"]) / max(b["t"] - a["t"], 1e-9))
                                     for a, b in zip(load, load[1:]) if b["phase"] in ("load", "pause")])], True),
        ("CPU cores: the server (blue), other processes (red)",
         [("server", "#1f77b4", [(s["t"], s["server_cores"]) for s in load]),
          ("other", "#d62728", [(s["t"], s["other_cores"]) for s in load])], True),
        ("/metrics answer time (s)", [("scrape", "#9467bd", [(s["t"], s["metrics_scrape_s"]) for s in load])], True),
    ]
    pw, ph, ml, mr, mt, mb, cols = 460, 170, 56, 14, 24, 28, 2
    rows = math.ceil(len(panels) / cols)
    head = 64
    W, H = cols * (pw + ml + mr) + 10, head + rows * (ph + mt + mb) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    verdict = "PASS" if report["pass"] else "FAIL"
    title = (f"ridge serve soak: {report['duration_s']:.0f} s, {report['config']['concurrency']} workers, "
             f"{report['requests']} requests, {report['unexpected_5xx']} unexpected 5xx, "
             f"{'crash' if report['crash'] else 'no crash'}: {verdict}")
    sub = (f"{report['cpu']['model']} ({report['cpu']['logical_cpus']} CPUs); shaded: the last two thirds "
           f"(flatness window); yellow: load paused to sample the drained server; ticks: bursts of {report['config']['burst_size']} connections")
    out.append(f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(title)}</text>')
    out.append(f'<text x="10" y="42" fill="#555">{escape(sub)}</text>')
    flat_from = report["flatness"]["window_s"][0]
    for i, (name, series, zero) in enumerate(panels):
        col, row = i % cols, i // cols
        x0 = 10 + col * (pw + ml + mr) + ml
        y0 = head + row * (ph + mt + mb) + mt
        vals = [v for _, _, pts in series for _, v in pts if v is not None]
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        if zero or lo <= 0.1 * hi:
            lo = 0.0
            hi = nice_ceiling(hi * 1.05)
        else:
            pad = max((hi - lo) * 0.15, abs(hi) * 0.01, 1e-9)
            lo, hi = lo - pad, hi + pad
        if hi <= lo:
            hi = lo + 1
        sx = (lambda t: x0 + pw * min(max(t / d, 0.0), 1.0))
        sy = (lambda v: y0 + ph - ph * (v - lo) / (hi - lo))
        out.append(f'<text x="{x0}" y="{y0 - 7}" font-weight="bold">{escape(name)}</text>')
        out.append(f'<rect x="{sx(flat_from):.1f}" y="{y0}" width="{sx(d) - sx(flat_from):.1f}" height="{ph}" fill="#f0f0f0"/>')
        for a, b in report["pauses"]:
            if a < d:
                out.append(f'<rect x="{sx(a):.1f}" y="{y0}" width="{max(sx(b) - sx(a), 1.5):.1f}" height="{ph}" fill="#fff2b3"/>')
        for k in range(5):
            v = lo + (hi - lo) * k / 4
            y = sy(v)
            out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + pw}" y2="{y:.1f}" stroke="#dddddd"/>')
            out.append(f'<text x="{x0 - 5}" y="{y + 4:.1f}" text-anchor="end" fill="#444">{escape(label(v))}</text>')
        for k in range(5):
            t = d * k / 4
            x = sx(t)
            out.append(f'<text x="{x:.1f}" y="{y0 + ph + 14}" text-anchor="middle" fill="#444">{int(t // 60)}:{int(t % 60):02d}</text>')
        for bt, _ in report["bursts"]:
            out.append(f'<line x1="{sx(bt):.1f}" y1="{y0 + ph}" x2="{sx(bt):.1f}" y2="{y0 + ph - 6}" stroke="#d62728"/>')
        if report["crash"]:
            cx = sx(report["crash"]["t"])
            out.append(f'<line x1="{cx:.1f}" y1="{y0}" x2="{cx:.1f}" y2="{y0 + ph}" stroke="#d62728" stroke-width="2"/>')
        out.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
        for sname, color, pts in series:
            segs, cur = [], []
            for t, v in pts:
                if v is None:
                    if cur:
                        segs.append(cur)
                    cur = []
                else:
                    cur.append(f"{sx(t):.1f},{sy(v):.1f}")
            if cur:
                segs.append(cur)
            dash = ' stroke-dasharray="5,3"' if sname == "pool" else ""
            for seg in segs:
                if len(seg) == 1:
                    x, y = seg[0].split(",")
                    out.append(f'<circle cx="{x}" cy="{y}" r="2" fill="{color}"/>')
                else:
                    out.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="{color}" stroke-width="1.5"{dash}/>')
    out.append("</svg>")
    text = "\n".join(out) + "\n"
    ET.fromstring(text)  # well-formed, or this raises
    with open(path, "w") as f:
        f.write(text)


# ----------------------------------------------------------------------------------------------- summary
def print_summary(report, out_dir):
    p = print
    p("")
    p(f"soak: {report['duration_s']:.0f} s, {report['requests']} requests, outcomes {json.dumps(report['outcomes'])}")
    p(f"{'kind':<22}{'sent':>7}{'answered':>10}{'ok':>7}{'exp.400':>9}{'cancel':>8}{'vanish':>8}{'unexp.':>8}{'anom.':>7}{'p50 ms':>9}{'p99 ms':>9}")
    for k, v in report["kinds"].items():
        o = v["outcomes"]
        bad = sum(o.get(x, 0) for x in UNEXPECTED)
        p(f"{k:<22}{v['sent']:>7}{v['answered']:>10}{o.get('ok', 0):>7}{o.get('expected_400', 0):>9}"
          f"{o.get('cancelled', 0):>8}{o.get('vanished', 0):>8}{bad:>8}{v['anomalies']:>7}"
          f"{fmt_num(v['latency_p50_ms']):>9}{fmt_num(v['latency_p99_ms']):>9}")
    if report["expected_failures"]:
        p("expected failures by cause:")
        for cause, e in report["expected_failures"].items():
            p(f"  {e['count']:>6}  {cause}")
    p("unexpected failures by cause:" + ("" if report["unexpected_failures"] else " none"))
    for cause, e in report["unexpected_failures"].items():
        p(f"  {e['count']:>6}  {cause}  {json.dumps(e['kinds'])}")
    if report["client_bugs"]:
        p("client-side exceptions (bugs in soak.py, not counted against the server):")
        for cause, e in report["client_bugs"].items():
            p(f"  {e['count']:>6}  {cause}")
    if report["anomalies"]:
        p("anomalies (2xx answers that break their request's contract; reported, not a target):")
        for cause, n in report["anomalies"].items():
            p(f"  {n:>6}  {cause}")
    c = report["server_counters"]
    p("server: " + ", ".join(f"{k} {fmt_num(v) if not isinstance(v, float) or v >= 1 else v}" for k, v in c.items()
                             if v is not None) + f"; /metrics slowest answer {fmt_num(report['metrics_scrape_max_s'])} s")
    lat = report["latency"]
    p(f"latency of {', '.join(LATENCY_KINDS)}: first {lat['window_s']:.0f} s vs last {lat['window_s']:.0f} s")
    for m in ("ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms"):
        p(f"  {m:<12} {fmt_num(lat['first'][m]):>10} {fmt_num(lat['last'][m]):>10}")
    p(f"  streams    {lat['first']['streams']:>10} {lat['last']['streams']:>10}")
    p(f"  server cores {f2(lat['first']['server_cores']):>8} {f2(lat['last']['server_cores']):>10}")
    p(f"  other cores  {f2(lat['first']['other_cores']):>8} {f2(lat['last']['other_cores']):>10}"
      "   (CPU used by other processes: a busy machine skews the comparison)")
    if lat["machine_busy"]:
        p("  WARNING: other processes used a significant share of the CPUs during a latency window; the latency "
          "targets measure the machine as much as the server")
    fl = report["flatness"]
    p(f"flatness over {fl['window_s'][0]:.0f}-{fl['window_s'][1]:.0f} s: drained (checkpoint at "
      f"{fmt_num(fl['checkpoint_t'])} s vs the end) and under load (least-squares line through the samples):")
    for key in FLAT_KEYS:
        scale = 2**20 if key == "rss_bytes" else 1
        dr, g = fl[key]["drained"], fl[key]["under_load"]
        line = f"  {key:<16}"
        line += (" drained -" if dr is None else
                 f" drained {dr['checkpoint'] / scale:>8.1f} -> {dr['end'] / scale:>8.1f} ({dr['growth_pct']:+.2f}% of the {dr['relative_to']})")
        if g.get("growth_pct") is None:
            line += f" | under load: too few samples ({g['n']})"
        else:
            line += (f" | under load {g['first'] / scale:.1f} -> {g['last'] / scale:.1f}, min {g['min'] / scale:.1f} "
                     f"max {g['max'] / scale:.1f}, line {g['growth_pct']:+.2f}% of the {g['relative_to']}")
        p(line)
    p("targets:")
    for t in report["targets"]:
        v = "PASS" if t["pass"] else ("n/a " if t["pass"] is None else "FAIL")
        val = t["value"] if isinstance(t["value"], (int, float, str)) or t["value"] is None else json.dumps(t["value"])
        p(f"  {v}  {t['target']:<44} {val}  (goal: {t['goal']})")
    p(f"overall: {'PASS' if report['pass'] else 'FAIL'}; report in {out_dir}/soak.json, plot in {out_dir}/soak.svg")


# ------------------------------------------------------------------------------------------------- main
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

    try:  # the context the server runs with (--ridge-args may have set it): too_long prompts exceed it
        c = http.client.HTTPConnection(host, port, timeout=30)
        c.request("GET", "/v1/models")
        args.ctx_size = int(json.loads(c.getresponse().read())["data"][0]["max_model_len"])
        c.close()
    except (OSError, http.client.HTTPException, ValueError, KeyError, IndexError, TypeError):
        pass
    soak = Soak(args, host, port, proc)
    soak.started_wall = datetime.datetime.now().isoformat(timespec="seconds")
    soak.interrupted = False
    soak.req_file = open(os.path.join(out_dir, "requests.jsonl"), "w")
    shutdown = {}
    idle = baseline = None
    try:
        soak.t0 = now()
        baseline = soak.take_sample("baseline")
        print(f"load: {args.concurrency} workers for {args.duration:.0f} s on http://{host}:{port}, "
              f"bursts of {args.burst_size} every {args.burst_every:.0f} s, samples every {args.sample_interval:.0f} s",
              flush=True)
        print(progress_line(baseline), flush=True)
        soak.samples[-1]["phase"] = "load"  # the first point of the plot
        threads = [threading.Thread(target=soak.worker, args=(i,), daemon=True) for i in range(args.concurrency)]
        threads.append(threading.Thread(target=soak.burster, daemon=True))
        sampler = threading.Thread(target=soak.sampler, daemon=True)
        for th in threads:
            th.start()
        sampler.start()
        end = soak.t0 + args.duration
        try:
            while now() < end:
                if "checkpoint" not in soak.checkpoints and soak.rel() >= args.duration / 3:
                    c = soak.checkpoint("checkpoint")
                    if c is not None:
                        print("drained checkpoint: " + progress_line(c), flush=True)
                if proc.poll() is not None:
                    soak.crash = {"t": round(soak.rel(), 2), "returncode": proc.returncode,
                                  "signal": signal.Signals(-proc.returncode).name if proc.returncode < 0 else None,
                                  "log_tail": log_tail(log_path)}
                    print(f"CRASH: ridge serve exited with {proc.returncode} at {soak.crash['t']} s", flush=True)
                    break
                time.sleep(0.25)
        except KeyboardInterrupt:
            soak.interrupted = True
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the report comes within about 30 s
            print("interrupted: stopping the load and writing the report", flush=True)
        duration_run = soak.rel()
        soak.stop.set()
        sampler.join(timeout=args.metrics_timeout + 5)
        # In-flight requests finish (slow readers speed up); the last sample is the load's end.
        deadline = now() + (5 if soak.crash else 30 if soak.interrupted else args.request_timeout + 10)
        for th in threads:
            th.join(timeout=max(0.1, deadline - now()))
        hung = sum(1 for th in threads if th.is_alive())
        if hung:
            print(f"{hung} client threads still waiting on the server after the run", flush=True)
        if soak.crash is None and proc.poll() is not None:
            soak.crash = {"t": round(soak.rel(), 2), "returncode": proc.returncode, "log_tail": log_tail(log_path)}
        if soak.crash is None and not hung:
            # Drained: nothing running or waiting, then the idle sample (KV blocks in use back to 0).
            idle = soak.checkpoint("idle")
            if idle is not None:
                print("drained at the end: " + progress_line(idle), flush=True)
    finally:
        if proc.poll() is None:
            t = now()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=args.shutdown_wait)
                shutdown = {"returncode": proc.returncode, "seconds": round(now() - t, 2), "killed": False}
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                shutdown = {"returncode": proc.returncode, "seconds": round(now() - t, 2), "killed": True,
                            "note": f"no exit within {args.shutdown_wait} s of SIGTERM: killed"}
        else:
            shutdown = {"returncode": proc.returncode, "note": "exited before the end of the run"}
        shutil.rmtree(tier_dir, ignore_errors=True)
        with soak.lock:
            soak.req_file.close()
            soak.req_file = None

    report = build_report(soak, args, cmd, shutdown, duration_run, idle, baseline)
    with open(os.path.join(out_dir, "requests.jsonl"), "w") as f:  # again, with the outcomes the report settled
        for r in soak.records:
            f.write(json.dumps({k: v for k, v in r.items() if not k.startswith("_")}) + "\n")
    with open(os.path.join(out_dir, "soak.json"), "w") as f:
        json.dump(report, f, indent=1)
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
