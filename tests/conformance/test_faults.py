"""Faults the server must survive without losing or corrupting anything:

* SIGKILL while the disk tier is writing, then a restart on the same directory: every block the
  server had reported written is there, interrupted writes are cleaned up, damaged files are found
  and never served, and the answers after the restart are the answers from before the kill.
* A full file system under the disk tier (a 2 MiB tmpfs): writes fail, are counted, and turn into
  misses; no request fails.
* A memory limit (a cgroup the test creates, v2 `memory.max` or v1 `memory.limit_in_bytes`, set
  ~110 MiB above what the server holds once started): the
  server sizes its KV pool inside it, refuses the prompts that do not fit with 503 and the numbers,
  and is never OOM-killed under a flood.

The tmpfs and cgroup tests need root (mounting, writing the cgroup tree); elsewhere they skip and say why.
"""
import concurrent.futures
import json
import os
import pathlib
import random
import signal
import stat
import subprocess
import tempfile
import time

import pytest

from serve_fixture import start_server, stop_server

WORDS = ("river mountain copper lantern velvet harbor meadow crystal thunder orchard falcon marble "
         "canyon ember glacier saffron timber quartz willow beacon prism tundra cobalt summit").split()


def document(i, words=380):
    rng = random.Random(1000 + i)
    return f"Document {i}. " + " ".join(rng.choice(WORDS) for _ in range(words))


def complete(server, prompt, max_tokens=8, timeout=300):
    status, body = server.request("POST", "/v1/completions",
                                  {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0}, timeout=timeout)
    return status, json.loads(body)


def text_of(server, prompt):
    status, body = complete(server, prompt)
    assert status == 200, body
    return body["choices"][0]["text"]


def tier_args(directory, kv_memory="40MiB"):
    # A pool of ~1,800 tokens: every few documents push the older ones' prefix blocks out, straight
    # to the disk tier (no RAM tier in between).
    return ["--kv-memory", kv_memory, "--kv-offload-dir", str(directory), "--kv-offload-size", "1GiB"]


def metric(server, name):
    return server.metrics().get(name, 0.0)


def test_sigkill_while_the_disk_tier_writes_loses_and_serves_nothing_bad(ridge_bin, default_model, tmp_path):
    tier = tmp_path / "tier"
    server = start_server(ridge_bin, default_model, *tier_args(tier), ctx_size=1024)
    try:
        before = {i: text_of(server, document(i)) for i in range(8)}
        assert metric(server, "ridge:kv_offload_disk_writes_total") > 0, server.log()
        # More documents in the background; the kill lands while their blocks are being written.
        pool = concurrent.futures.ThreadPoolExecutor(2)
        futures = [pool.submit(complete, server, document(i)) for i in range(8, 16)]
        reported = metric(server, "ridge:kv_offload_disk_writes_total")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            now = metric(server, "ridge:kv_offload_disk_writes_total")
            if now > reported:  # the writer is busy right now
                reported = now
                break
            time.sleep(0.02)
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait()
        for f in futures:
            try:
                f.result(timeout=60)
            except OSError:
                pass  # the connection died with the server
        pool.shutdown()
    finally:
        stop_server(server)
        os.unlink(server.log_path)

    files = sorted(tier.rglob("*.kvb"))
    assert len(files) >= reported, f"{len(files)} block files, {reported} reported written"
    # Damage two: one truncated (found at the start-up scan), one with a flipped payload byte (found
    # by its checksum when loaded).
    truncated, flipped = files[0], files[len(files) // 2]
    with open(truncated, "r+b") as f:
        f.truncate(os.path.getsize(truncated) // 2)
    with open(flipped, "r+b") as f:
        f.seek(os.path.getsize(flipped) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x5A]))

    server = start_server(ridge_bin, default_model, *tier_args(tier), ctx_size=1024)
    try:
        assert not list(tier.rglob("*.tmp")), "an interrupted write was left behind"
        m = server.metrics()
        assert m['ridge:kv_offload_blocks{tier="disk"}'] >= reported - 2, (m['ridge:kv_offload_blocks{tier="disk"}'], reported)
        assert m["ridge:kv_offload_corrupt_files_total"] >= 1  # the truncated file
        # Every document again: the prefix blocks come back from disk, checked; the answers are the same.
        for i in range(16):
            text = text_of(server, document(i))
            if i in before:
                assert text == before[i], (i, text, before[i])
        m = server.metrics()
        assert m['ridge:kv_offload_hits_total{tier="disk"}'] > 0, server.log()
        assert m["ridge:kv_offload_corrupt_files_total"] >= 1
        # The damaged blocks were computed again; what sits under their names now is whole.
        assert not truncated.exists() or os.path.getsize(truncated) == os.path.getsize(files[-1])
    finally:
        assert stop_server(server) == 0, server.log()
        os.unlink(server.log_path)


@pytest.fixture
def full_tmpfs():
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = pathlib.Path(tempfile.mkdtemp(prefix="ridge-full-"))
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(mount)
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        os.rmdir(mount)


def test_a_full_disk_tier_turns_into_misses_not_errors(ridge_bin, default_model, full_tmpfs):
    server = start_server(ridge_bin, default_model, *tier_args(full_tmpfs / "tier"), ctx_size=1024)
    try:
        before = {i: text_of(server, document(i)) for i in range(10)}
        deadline = time.monotonic() + 60
        while metric(server, "ridge:kv_offload_disk_write_failures_total") == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        m = server.metrics()
        assert m["ridge:kv_offload_disk_write_failures_total"] > 0, server.log()
        assert m["ridge:kv_offload_disk_writes_total"] > 0  # what fitted was written
        for i in range(10):
            assert text_of(server, document(i)) == before[i]
        assert server.proc.poll() is None
    finally:
        assert stop_server(server) == 0, server.log()
        os.unlink(server.log_path)


class Cgroup:
    """A memory cgroup with a limit, v2 where the unified tree has the memory controller, else v1."""

    def __init__(self, limit_bytes):
        name = f"ridge-test-{os.getpid()}-{random.randrange(1 << 30)}"
        unified = next((p for p in (pathlib.Path("/sys/fs/cgroup"), pathlib.Path("/sys/fs/cgroup/unified"))
                        if (p / "cgroup.controllers").exists()
                        and "memory" in (p / "cgroup.controllers").read_text(errors="ignore").split()), None)
        if unified is not None:
            subtree = unified / "cgroup.subtree_control"
            if "memory" not in subtree.read_text().split():
                subtree.write_text("+memory")
            self.dir, self.limit_file, self.version = unified / name, "memory.max", 2
        elif pathlib.Path("/sys/fs/cgroup/memory").is_dir():
            self.dir, self.limit_file, self.version = pathlib.Path("/sys/fs/cgroup/memory") / name, "memory.limit_in_bytes", 1
        else:
            raise OSError("no memory cgroup controller is mounted")
        self.dir.mkdir()
        self.set_limit(limit_bytes)
        if self.version == 1 and (self.dir / "memory.swappiness").exists():
            (self.dir / "memory.swappiness").write_text("0")

    def set_limit(self, limit_bytes):
        (self.dir / self.limit_file).write_text(str(limit_bytes) if limit_bytes else ("max" if self.version == 2 else "-1"))

    def working_set(self):
        """Usage less inactive file pages, as ridge counts it (core/memory_limit.h)."""
        usage = int((self.dir / ("memory.current" if self.version == 2 else "memory.usage_in_bytes")).read_text())
        stat = dict(line.split() for line in (self.dir / "memory.stat").read_text().splitlines())
        return usage - int(stat.get("inactive_file" if self.version == 2 else "total_inactive_file", 0))

    def oom_kills(self):
        if self.version == 2:
            events = dict(line.split() for line in (self.dir / "memory.events").read_text().splitlines())
            return int(events.get("oom_kill", 0))
        control = dict(line.split() for line in (self.dir / "memory.oom_control").read_text().splitlines())
        return int(control.get("oom_kill", 0))

    def launcher(self, ridge_bin, directory):
        """An executable that joins the cgroup and becomes ridge (same pid)."""
        path = pathlib.Path(directory) / "ridge-in-cgroup"
        path.write_text(f"#!/bin/sh\necho $$ > {self.dir}/cgroup.procs\nexec {ridge_bin} \"$@\"\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    def remove(self):
        for _ in range(50):
            try:
                self.dir.rmdir()
                return
            except OSError:
                time.sleep(0.1)


@pytest.fixture
def memory_cgroup():
    if os.geteuid() != 0:
        pytest.skip("creating a cgroup needs root")
    try:
        group = Cgroup(0)
    except OSError as e:
        pytest.skip(f"cannot create a memory cgroup here: {e}")
    yield group
    group.remove()


def test_under_a_memory_limit_the_server_refuses_rather_than_dies(ridge_bin, default_model, memory_cgroup, tmp_path):
    launcher = memory_cgroup.launcher(ridge_bin, tmp_path)
    # What the server holds once started, measured without a limit; then a limit that leaves the KV
    # pool ~48 MiB beside it and the reserve (64 MiB at this size): the default pool (a full context
    # of 8,192 tokens, 180 MiB for this model) does not fit, so the server must shrink it and say so.
    server = start_server(launcher, default_model, ctx_size=8192)
    baseline = memory_cgroup.working_set()
    assert stop_server(server) == 0
    os.unlink(server.log_path)
    limit_mib = (baseline >> 20) + 64 + 48
    memory_cgroup.set_limit(limit_mib << 20)
    server = start_server(launcher, default_model, ctx_size=8192)
    try:
        log = server.log()
        assert f"memory: the limit of {limit_mib} MiB" in log, log
        held = int(log.split("a request holds at most ")[1].split(" tokens")[0])
        assert 64 <= held < 8192
        # A prompt longer than the pool holds: 503 with the numbers, and a Retry-After.
        status, body = server.request("POST", "/v1/completions", {"prompt": "word " * (held + 200), "max_tokens": 4})
        assert status == 503, body
        error = json.loads(body)["error"]
        assert error["code"] == "memory_limit"
        assert f"{limit_mib} MiB" in error["message"] and str(held) in error["message"], error
        # A flood of prompts that fit, more than run at once: all answered (200, or 503 when memory
        # is short at that moment), and the server lives.
        prompts = [document(i, words=int(held * 0.3)) for i in range(12)]
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            statuses = [s for s, _ in pool.map(lambda p: complete(server, p, max_tokens=48), prompts)]
        assert set(statuses) <= {200, 503}, statuses
        assert statuses.count(200) >= 6, statuses
        assert server.proc.poll() is None, server.log()
        assert memory_cgroup.oom_kills() == 0
        assert text_of(server, "The capital of France is")
    finally:
        assert stop_server(server) == 0, server.log()
        os.unlink(server.log_path)
