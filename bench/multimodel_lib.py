"""What bench/model_switch.py, bench/model_interference.py and bench/multi_model_churn.py share (issue 43,
many models in one server): the CPU, a directory of links to the model files (the same names for ridge and
llama.cpp: both name a --models-dir file by its stem), starting and stopping a router server (ridge's or
llama-server's), streamed chat requests timed chunk by chunk, the models' states from /v1/models and the
/metrics samples."""
import datetime
import http.client
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak_lib.common import percentile  # noqa: E402,F401  (re-exported for the scripts)
from soak_lib.server import BANNER, log_tail, parse_metrics, server_preexec  # noqa: E402,F401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE = os.environ.get("RIDGE_BIN") or os.path.join(ROOT, "build", "ridge")
HOME = os.environ.get("RIDGE_HOME") or os.path.expanduser("~/.cache/ridge")
LLAMA_BIN = os.path.join(HOME, "llama.cpp", "build-avx512", "bin")
MODELS = os.path.join(HOME, "models")
# name -> file under ~/.cache/ridge/models (the fetcher's names, so that both servers answer to them)
MODEL_FILES = {
    "default": "SmolLM2-135M-Instruct.Q4_1.gguf",
    "qwen2.5-coder-0.5b": "Qwen2.5-Coder-0.5B-Instruct.gguf",
    "gemma3-270m": "gemma-3-270m-Q4_K_M.gguf",
}
WORDS = ("the river runs past old stone houses while children play near the water and birds sing in tall "
         "trees under a pale morning sky as merchants open their shops and carts roll over the bridge toward "
         "the market where bread fish and fruit are sold every day of the week").split()


def now():
    return time.monotonic()


def cpu_info():
    """{'model', 'logical_cpus', 'tag'}: tag amx (Intel Xeon with AMX), avx512 or avx2, for file names."""
    name, count, flags = None, 0, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    count += 1
                    name = name or line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    tag = "amx" if "amx_tile" in flags else "avx512" if "avx512f" in flags else "avx2"
    return {"model": name, "logical_cpus": count or os.cpu_count(), "tag": tag}


def cpu_line(cpu):
    return f"{cpu['model']} ({cpu['logical_cpus']} logical CPUs, {cpu['tag']})"


def default_out(prefix, cpu):
    return os.path.join(ROOT, "bench", "results", f"{prefix}-{datetime.date.today().isoformat()}-{cpu['tag']}.json")


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None


def ridge_has_router(ridge=RIDGE):
    """Whether `ridge serve --help` lists --models-max (the router of issue 43 is built in)."""
    try:
        out = subprocess.run([ridge, "serve", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--models-max" in out.stdout + out.stderr


def snapshot_ridge(path):
    """A private copy of the ridge binary for the whole run (build/ridge may be rebuilt meanwhile), and a
    description: {'path', 'mtime', 'git'}."""
    if not os.path.exists(path):
        return path, {"path": path, "missing": True}
    d = tempfile.mkdtemp(prefix="ridge-bin-")
    snap = os.path.join(d, "ridge")
    shutil.copy2(path, snap)
    try:
        git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True,
                             timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        git = None
    return snap, {"path": path, "mtime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(path))),
                  "git": git}


def remove_snapshot(snap):
    """Deletes what snapshot_ridge() made (and nothing else)."""
    d = os.path.dirname(snap)
    if os.path.basename(d).startswith("ridge-bin-") and os.path.dirname(d) == tempfile.gettempdir():
        shutil.rmtree(d, ignore_errors=True)


def models_dir(names, copy=False):
    """A temporary directory holding NAME.gguf for each name: links to (or copies of) the model files. The
    files are read once (into the page cache) so that neither server pays for the disk."""
    d = tempfile.mkdtemp(prefix="ridge-multimodel-")
    for name in names:
        src = os.path.join(MODELS, MODEL_FILES[name]) if name in MODEL_FILES else name
        if not os.path.exists(src):
            raise SystemExit(f"model file missing: {src} (fetch it with tools/fetch_model.py)")
        dst = os.path.join(d, os.path.basename(src) if src == name else name + ".gguf")
        if copy:
            subprocess.run(["cp", src, dst], check=True)
        else:
            os.symlink(src, dst)
        with open(dst, "rb") as f:
            while f.read(1 << 24):
                pass
    return d


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """A router server: ridge (`ridge serve --models-dir DIR ...`, port 0, the port read from its banner) or
    llama.cpp (`llama-server --models-dir DIR ...` on a free port; its children get the router's flags, -t
    included; LLAMA_CACHE points at an empty directory so that only DIR's models are listed)."""

    def __init__(self, kind, cmd, log_path, env=None, port=None, shown_bin=None):
        self.kind, self.cmd, self.log_path, self.env, self.port = kind, cmd, log_path, env, port
        self.shown_bin = shown_bin  # the binary's name in command_line() (the run uses a snapshot of it)
        self.host = "127.0.0.1"
        self.proc = None

    @staticmethod
    def ridge(mdir, models_max, threads, extra="", log_path=None, ridge=RIDGE, shown_bin=None):
        cmd = [ridge, "serve", "--models-dir", mdir, "--models-max", str(models_max), "--host", "127.0.0.1",
               "--port", "0", "-t", str(threads)] + shlex.split(extra or "")
        return Server("ridge", cmd, log_path or tempfile.mktemp(prefix="ridge-serve-", suffix=".log"), shown_bin=shown_bin)

    @staticmethod
    def llama(mdir, models_max, threads, extra="", log_path=None):
        port = free_port()
        cmd = [os.path.join(LLAMA_BIN, "llama-server"), "--models-dir", mdir, "--models-max", str(models_max),
               "--host", "127.0.0.1", "--port", str(port), "-t", str(threads)] + shlex.split(extra or "")
        env = dict(os.environ, LLAMA_CACHE=tempfile.mkdtemp(prefix="llama-cache-empty-"))
        return Server("llama.cpp", cmd, log_path or tempfile.mktemp(prefix="llama-router-", suffix=".log"),
                      env=env, port=port)

    def command_line(self):
        env = f"LLAMA_CACHE={self.env['LLAMA_CACHE']} " if self.env and "LLAMA_CACHE" in self.env else ""
        return env + shlex.join(([self.shown_bin] if self.shown_bin else self.cmd[:1]) + self.cmd[1:])

    def start(self, timeout=120):
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     preexec_fn=server_preexec, env=self.env)
        log.close()
        deadline = now() + timeout
        while now() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited ({self.proc.returncode}) at start:\n{log_tail(self.log_path)}")
            if self.port is None:
                with open(self.log_path, errors="replace") as f:
                    m = BANNER.search(f.read())
                if m:
                    self.host, self.port = m.group(1), int(m.group(2))
            if self.port is not None:
                try:
                    status, _ = self.request("GET", "/health", timeout=5)
                    if status == 200:
                        return self
                except (OSError, http.client.HTTPException):
                    pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.kind} did not answer /health within {timeout} s:\n{log_tail(self.log_path)}")

    def stop(self, wait=30):
        """SIGTERM, SIGKILL after `wait` s; then the rest of its process group (llama.cpp's children)."""
        out = {}
        if self.proc is None:
            return out
        if self.proc.poll() is None:
            t = now()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                out["killed"] = True
            out["stop_seconds"] = round(now() - t, 2)
        out["returncode"] = self.proc.returncode
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session (server_preexec): only its children
            out["children_left"] = True
        except (ProcessLookupError, PermissionError):
            pass
        return out

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def connect(self, timeout=600):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, timeout=600):
        """(status, parsed JSON or text)."""
        c = self.connect(timeout)
        try:
            c.request(method, path, None if body is None else json.dumps(body),
                      {"Content-Type": "application/json"} if body is not None else {})
            r = c.getresponse()
            data = r.read().decode("utf-8", "replace")
            try:
                return r.status, json.loads(data)
            except ValueError:
                return r.status, data
        finally:
            c.close()

    def states(self, timeout=10):
        """{model id: status value} from GET /v1/models (None when it did not answer)."""
        try:
            status, body = self.request("GET", "/v1/models", timeout=timeout)
            if status != 200:
                return None
            return {m["id"]: (m.get("status") or {}).get("value") for m in body["data"]}
        except (OSError, http.client.HTTPException, KeyError, TypeError):
            return None

    def metrics(self, timeout=10):
        try:
            status, body = self.request("GET", "/metrics", timeout=timeout)
            return parse_metrics(body) if status == 200 and isinstance(body, str) else None
        except (OSError, http.client.HTTPException):
            return None

    def load(self, model, timeout=300):
        """POST /models/load, then wait for /v1/models to say loaded (llama.cpp answers before it is)."""
        t = now()
        status, body = self.request("POST", "/models/load", {"model": model}, timeout=timeout)
        if status != 200:
            raise RuntimeError(f"{self.kind}: POST /models/load {model} -> {status} {body}")
        while now() - t < timeout:
            if (self.states() or {}).get(model) == "loaded":
                return now() - t
            time.sleep(0.05)
        raise RuntimeError(f"{self.kind}: {model} not loaded {timeout} s after /models/load")

    def unload_all(self, timeout=120):
        for model, state in (self.states() or {}).items():
            if state not in ("unloaded", "failed", None):
                self.request("POST", "/models/unload", {"model": model}, timeout=timeout)
        t = now()
        while now() - t < timeout:
            if all(s in ("unloaded", "failed", None) for s in (self.states() or {}).values()):
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.kind}: models still loaded {timeout} s after /models/unload: {self.states()}")


def chat_body(model, prompt, max_tokens, stream=True, temperature=0.0):
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens,
            "temperature": temperature, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    return body


def error_text(status, data):
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
    return f"HTTP {status}: {text[:400]}"


def chat(server, body, timeout=600, on_token=None):
    """One /v1/chat/completions request. Streamed: each SSE chunk with content is one token's arrival
    (`token_times`, monotonic; on_token(t) called for each); TTFT is the first of them. The record:
    model, stream, t_send, t_headers, ttft, latency, status, tokens (content chunks), usage_tokens (the
    usage the server reports), prompt_tokens, ok, error."""
    rec = {"model": body.get("model"), "stream": bool(body.get("stream")), "t_send": now(), "t_headers": None,
           "ttft": None, "latency": None, "status": None, "tokens": 0, "usage_tokens": None, "prompt_tokens": None,
           "ok": False, "error": None, "token_times": []}
    c = server.connect(timeout)
    try:
        c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        rec["t_headers"] = now() - rec["t_send"]
        rec["status"] = r.status
        if r.status != 200:
            rec["error"] = error_text(r.status, r.read())
            return rec
        if not body.get("stream"):
            data = r.read()
            rec["latency"] = now() - rec["t_send"]
            obj = json.loads(data)
            usage = obj.get("usage") or {}
            rec["usage_tokens"], rec["prompt_tokens"] = usage.get("completion_tokens"), usage.get("prompt_tokens")
            rec["ok"] = bool(obj.get("choices"))
            if not rec["ok"]:
                rec["error"] = "200 without choices: " + data[:300].decode("utf-8", "replace")
            return rec
        done = False
        for raw in r:
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                done = True
                break
            t = now()
            obj = json.loads(payload)
            if "error" in obj:
                rec["error"] = "error event: " + payload[:400].decode("utf-8", "replace")
                return rec
            for ch in obj.get("choices") or []:
                d = ch.get("delta") or {}
                if d.get("content") or d.get("reasoning_content"):
                    rec["tokens"] += 1
                    rec["token_times"].append(t)
                    if rec["ttft"] is None:
                        rec["ttft"] = t - rec["t_send"]
                    if on_token:
                        on_token(t)
            if obj.get("usage"):
                rec["usage_tokens"] = obj["usage"].get("completion_tokens")
                rec["prompt_tokens"] = obj["usage"].get("prompt_tokens")
        rec["latency"] = now() - rec["t_send"]
        rec["ok"] = done and rec["tokens"] > 0
        if not done:
            rec["error"] = f"stream ended without [DONE] after {rec['tokens']} tokens"
        elif not rec["tokens"]:
            rec["error"] = "stream without a token"
    except (OSError, http.client.HTTPException, ValueError) as e:
        rec["error"] = f"{type(e).__name__}: {e}"
        rec["latency"] = now() - rec["t_send"]
    finally:
        c.close()
    return rec


def slim(rec, t0=0.0):
    """A record for JSON: times relative to t0, token times dropped (counted)."""
    out = {k: v for k, v in rec.items() if k != "token_times"}
    out["t_send"] = round(rec["t_send"] - t0, 4)
    for k in ("t_headers", "ttft", "latency"):
        if out.get(k) is not None:
            out[k] = round(out[k], 4)
    return out


def random_prompt(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words))


class StatePoller(threading.Thread):
    """Polls /v1/models every `interval` s: [(t relative to t0, {model: state})], a row only when a state
    changed (and the first). With metrics=True also /metrics each time (the last kept)."""

    def __init__(self, server, t0, interval=0.25):
        super().__init__(daemon=True)
        self.server, self.t0, self.interval = server, t0, interval
        self.timeline, self.stop_event, self.failures = [], threading.Event(), 0

    def run(self):
        last = None
        while not self.stop_event.is_set():
            s = self.server.states(timeout=10)
            if s is None:
                self.failures += 1
            elif s != last:
                self.timeline.append((round(now() - self.t0, 3), s))
                last = s
            self.stop_event.wait(self.interval)

    def stop(self):
        self.stop_event.set()
        self.join(timeout=15)
        return self.timeline


def group_cpu_seconds(pgid):
    """CPU seconds of process group `pgid` (a server and, for llama.cpp, the model instances it spawned):
    each live member's user + system time and that of its children it has waited for (llama.cpp's router
    reaps the instances it unloads, so their time stays counted)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / tick
        except (OSError, ValueError, IndexError):
            continue
    return total


class CpuMeter:
    """Cores used between mark() and read(): the server's process group, this script, and everything else
    on the machine (a build or another benchmark beside this one: its figures then measure the machine)."""

    def __init__(self, server):
        self.server = server
        self.mark()

    def _now(self):
        import resource
        with open("/proc/stat") as f:
            user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
        machine = (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")
        me = resource.getrusage(resource.RUSAGE_SELF)
        return now(), machine, group_cpu_seconds(self.server.proc.pid), me.ru_utime + me.ru_stime

    def mark(self):
        self.start = self._now()

    def read(self):
        (t0, m0, s0, c0), (t1, m1, s1, c1) = self.start, self._now()
        dt = max(t1 - t0, 1e-9)
        return {"server_cores": round((s1 - s0) / dt, 3), "client_cores": round((c1 - c0) / dt, 3),
                "other_cores": round(max(0.0, (m1 - m0) - (s1 - s0) - (c1 - c0)) / dt, 3)}


def ridge_model_log(path):
    """ridge's "models: ..." log lines (loads, drains, unloads), and the loads that evicted more than one
    model (the "to make room for X" lines since X's previous load): (lines, [{'model', 'evicted'}])."""
    import re
    lines, pending, multi = [], {}, []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if not line.startswith("models:"):
                    continue
                lines.append(line.rstrip())
                m = re.search(r"(draining|unloading) (\S+) .*to make room for (\S+)", line)
                if m:
                    pending.setdefault(m.group(3), []).append(f"{m.group(1)} {m.group(2)}")
                    continue
                m = re.search(r"models: (\S+) loaded in", line)
                if m:
                    ev = pending.pop(m.group(1), [])
                    if len(ev) > 1:
                        multi.append({"model": m.group(1), "evicted": ev})
    except OSError:
        pass
    return lines, multi


def fmt_s(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def print_table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(r, widths)))  # noqa: E731
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def save(path, report):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {path}")
