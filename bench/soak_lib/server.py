"""The server side of the soak: the `ridge serve` command line, starting it (and its banner and /health),
stopping it with SIGTERM, and sampling it: VmRSS, threads and open fds from /proc, CPU seconds of the server
and of the rest of the machine, its TCP connections, and /metrics."""
import http.client
import json
import os
import re
import resource
import shlex
import signal
import subprocess
import time

from .common import UNEXPECTED, f2, fmt_num, now

BANNER = re.compile(r"on http://([0-9.]+):(\d+)/")


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


def progress_line(s):
    rss = "-" if s["rss_bytes"] is None else f"{s['rss_bytes'] / 2**20:.1f}MiB"
    kv = f"{fmt_num(s['kv_blocks_used'])}/{fmt_num(s['kv_blocks_total'])}"
    return (f"[{s['t']:7.1f}s] rss {rss} fds {fmt_num(s['fds'])} thr {fmt_num(s['threads'])} kv {kv} "
            f"queue {fmt_num(s['waiting'])}w/{fmt_num(s['running'])}r | done {s['completed_total']} "
            f"({s['req_per_s']:.2f}/s) expected-400 {s['expected_400_total']} unexpected {s['unexpected_total']} "
            f"| cores server {f2(s['server_cores'])} other {f2(s['other_cores'])} | metrics {s['metrics_scrape_s']:.2f}s")


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


def served_context(host, port, default):
    """The context the server runs with (--ridge-args may have set it), from /v1/models; `default` where it
    does not say."""
    try:
        c = http.client.HTTPConnection(host, port, timeout=30)
        c.request("GET", "/v1/models")
        ctx = int(json.loads(c.getresponse().read())["data"][0]["max_model_len"])
        c.close()
        return ctx
    except (OSError, http.client.HTTPException, ValueError, KeyError, IndexError, TypeError):
        return default


def stop_server(proc, wait):
    """SIGTERM, then SIGKILL after `wait` s: {'returncode', 'seconds', 'killed'} (a 'note' when it was killed
    or had exited already)."""
    if proc.poll() is None:
        t = now()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=wait)
            return {"returncode": proc.returncode, "seconds": round(now() - t, 2), "killed": False}
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return {"returncode": proc.returncode, "seconds": round(now() - t, 2), "killed": True,
                    "note": f"no exit within {wait} s of SIGTERM: killed"}
    return {"returncode": proc.returncode, "note": "exited before the end of the run"}


class Sampling:
    """The samples of the server process and its /metrics (a part of workload.Soak: self.proc, self.port,
    self.records, self.samples, self.lock, self.sample_lock, ...)."""

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
