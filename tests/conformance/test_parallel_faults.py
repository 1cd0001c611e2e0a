"""A split model (TP, or Helix) whose rank dies or hangs: the job ends with a clear error within a bounded time, and
until then the server answers 503 instead of hanging new requests or returning partial results."""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pytest

from test_parallel import ENV, mpirun

BANNER = re.compile(r"on http://([0-9.]+):(\d+)/")
TIMEOUT_S = 10  # RIDGE_DIST_TIMEOUT of the job


def request(url, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"},
                                 method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def rank_pids(mpirun_pid):
    """{world rank: pid} of the processes mpirun started on this host."""
    out = subprocess.run(["ps", "--ppid", str(mpirun_pid), "-o", "pid="], capture_output=True, text=True).stdout
    ranks = {}
    for pid in map(int, out.split()):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        for item in env:
            if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                ranks[int(item.split(b"=")[1])] = pid
    return ranks


class SplitServer:
    def __init__(self, ridge_bin, model, *extra):
        fd, self.log_path = tempfile.mkstemp(prefix="ridge-split-serve-", suffix=".log")
        env = {**ENV, "RIDGE_DIST_TIMEOUT": str(TIMEOUT_S)}
        cmd = [*mpirun(2), "-x", "RIDGE_DIST_TIMEOUT", ridge_bin, "serve", "-m", model, "--port", "0", "-t", "1",
               "--ctx-size", "512", "--tp", "2", *extra]
        with os.fdopen(fd, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        self.url = None
        while time.monotonic() < deadline and self.url is None:
            assert self.proc.poll() is None, self.log()
            m = BANNER.search(self.log())
            if m:
                self.url = f"http://{m.group(1)}:{m.group(2)}"
            time.sleep(0.1)
        assert self.url, self.log()
        while request(self.url + "/health")[0] != 200:
            time.sleep(0.1)
        self.ranks = rank_pids(self.proc.pid)
        assert sorted(self.ranks) == [0, 1], self.ranks

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def request_metrics(self):
        return request(self.url + "/metrics")

    def complete(self, prompt="The capital of France is", max_tokens=8):
        return request(self.url + "/v1/completions", {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0})

    def close(self):
        for pid in self.ranks.values():
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        os.unlink(self.log_path)


# Tensor parallel, and Helix (each sequence's KV split by position over the same two ranks).
@pytest.fixture(params=[[], ["--helix", "2"]], ids=["tp2", "helix2"])
def server(ridge_bin, default_model, request):
    s = SplitServer(ridge_bin, default_model, *request.param)
    yield s
    s.close()


def test_a_killed_rank_ends_the_job(server):
    status, body, _ = server.complete()
    assert status == 200, body
    os.kill(server.ranks[1], signal.SIGKILL)
    start = time.monotonic()
    rc = server.proc.wait(timeout=30)
    print(f"\njob ended {time.monotonic() - start:.1f} s after rank 1 was killed, exit {rc}")
    assert rc != 0
    assert "exited on signal 9" in server.log() or "killed" in server.log().lower(), server.log()[-2000:]


def test_a_hung_rank_gives_503_then_ends_the_job(server):
    assert server.complete()[0] == 200
    os.kill(server.ranks[1], signal.SIGSTOP)
    start = time.monotonic()
    stuck = {}

    def in_flight():
        try:
            stuck["r"] = server.complete(max_tokens=4)
        except OSError as e:  # the job ended under it: no answer is the right answer
            stuck["error"] = e

    threading.Thread(target=in_flight, daemon=True).start()
    # The step in flight waits on rank 1: health and new requests say so.
    while True:
        status, body, headers = request(server.url + "/health", timeout=5)
        if status == 503:
            break
        assert time.monotonic() - start < TIMEOUT_S, "no 503 before the timeout"
        time.sleep(0.2)
    assert b"not answering" in body and headers.get("Retry-After")
    status, body, _ = server.complete()
    assert status == 503, body
    rc = server.proc.wait(timeout=TIMEOUT_S + 30)
    print(f"\n503 after {time.monotonic() - start:.1f} s of hang; job ended with exit {rc}")
    assert rc != 0
    assert "got no answer from the other ranks" in server.log(), server.log()[-2000:]
    # The request in flight got no partial completion: an error, or no answer at all.
    assert "r" not in stuck or stuck["r"][0] != 200
