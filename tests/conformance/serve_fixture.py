"""Starting and stopping a real `ridge serve` for the end-to-end tests (test_openai_api, test_serve_hostile,
test_web_page). The server picks a free port itself (--port 0) and prints it; its output goes to a file whose
tail is shown when it fails to start or to stop."""
import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

BANNER = re.compile(r"on (https?)://([0-9.]+):(\d+)/")  # https with --ssl-certfile


class RidgeServer:
    def __init__(self, proc, log_path):
        self.proc = proc
        self.log_path = log_path
        self.scheme = "http"
        self.host = None
        self.port = None
        self.ssl_context = None  # an ssl.SSLContext that trusts an HTTPS server's certificate

    @property
    def base_url(self):
        return f"{self.scheme}://{self.host}:{self.port}"

    @property
    def api_url(self):
        return self.base_url + "/v1"

    def log(self, tail=4000):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-tail:]
        except OSError:
            return ""

    def request(self, method, path, body=None, headers=None, timeout=60):
        """(status, body bytes) of one request; HTTP errors are answers, not exceptions."""
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.ssl_context) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def metrics(self):
        """Prometheus samples without histogram buckets: {'name{labels}': value}."""
        status, text = self.request("GET", "/metrics")
        assert status == 200, text
        samples = {}
        for line in text.decode().splitlines():
            if not line or line.startswith("#") or "_bucket{" in line:
                continue
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
        return samples


def model_args(model):
    """-m arguments: one model (a path or name), several (a list: -m each, "NAME=SOURCE" as given), or none (None)."""
    if model is None:
        return []
    if isinstance(model, (list, tuple)):
        return [arg for m in model for arg in ("-m", m)]
    return ["-m", model]


def start_server(ridge_bin, model, *extra_args, ctx_size=2048, threads=2, startup_timeout=60, env=None, ssl_context=None):
    """Starts `ridge serve` and returns once /health answers 200; raises (after stopping it) otherwise.
    `model`: see model_args; `env`: variables added to this process's environment; `ssl_context`: what
    trusts the certificate of a server started with --ssl-certfile."""
    fd, log_path = tempfile.mkstemp(prefix="ridge-serve-", suffix=".log")
    cmd = [ridge_bin, "serve", *model_args(model), "--port", "0", "-t", str(threads), "--ctx-size", str(ctx_size),
           *extra_args]
    with os.fdopen(fd, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=None if env is None else {**os.environ, **env})
    server = RidgeServer(proc, log_path)
    server.ssl_context = ssl_context
    deadline = time.monotonic() + startup_timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"ridge serve exited with {proc.returncode} at start:\n{server.log()}")
            if server.port is None:
                m = BANNER.search(server.log())
                if m:
                    server.scheme, server.host, server.port = m.group(1), m.group(2), int(m.group(3))
            if server.port is not None:
                try:
                    if server.request("GET", "/health", timeout=5)[0] == 200:
                        return server
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"ridge serve did not answer /health within {startup_timeout} s:\n{server.log()}")
    except BaseException:
        stop_server(server)
        raise


def stop_server(server, timeout=20):
    """SIGTERM, then SIGKILL after `timeout` seconds; returns the exit status (negative: killed by a signal)."""
    proc = server.proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


@contextlib.contextmanager
def running_server(ridge_bin, model, *extra_args, **kwargs):
    """The server for a `with` block (a module-scoped fixture's body); always stopped, log file removed."""
    server = start_server(ridge_bin, model, *extra_args, **kwargs)
    try:
        yield server
    finally:
        rc = stop_server(server)
        log = server.log()
        os.unlink(server.log_path)
        if rc != 0:
            print(f"ridge serve exited with {rc}:\n{log}")


# A streamed chat completion read chunk by chunk (test_multi_model, test_lora).
class Stream:
    def __init__(self):
        self.status = None
        self.error = None
        self.text = ""
        self.finish_reason = None
        self.usage = None
        self.done = False
        self.chunks = 0


def stream_chat(server, body, headers=None, timeout=180, on_first=None):
    """A streamed chat completion read to its end; `on_first()` runs after the first content chunk."""
    res = Stream()
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        conn.request("POST", "/v1/chat/completions",
                     body=json.dumps({**body, "stream": True, "stream_options": {"include_usage": True}}),
                     headers={"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        res.status = r.status
        if r.status != 200:
            data = r.read()
            try:
                res.error = json.loads(data)
            except ValueError:
                res.error = data
            return res
        for raw in r:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                res.done = True
                break
            event = json.loads(data)
            if "error" in event:
                res.error = event
                continue
            for choice in event.get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    res.text += piece
                    res.chunks += 1
                    if res.chunks == 1 and on_first is not None:
                        on_first()
                if choice.get("finish_reason"):
                    res.finish_reason = choice["finish_reason"]
            if event.get("usage"):
                res.usage = event["usage"]
    finally:
        conn.close()
    return res
