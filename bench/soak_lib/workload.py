"""The soak's load: --concurrency client workers drawing request kinds from the mix, bursts of simultaneous
connections, the drained checkpoints (the load paused until the server is idle) and the run loop that watches
the server for a crash."""
import datetime
import json
import random
import signal
import threading
import time

from .client import Client
from .common import now
from .kinds import Kinds, shared_prefixes
from .server import Sampling, log_tail, progress_line


class Soak(Kinds, Client, Sampling):
    """One soak: the state the clients, the sampler and the report share; requests from kinds.Kinds over
    client.Client, samples from server.Sampling."""

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
        self.started_wall = datetime.datetime.now().isoformat(timespec="seconds")
        self.interrupted = False   # a Ctrl-C stopped the load early

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

    def drive(self, log_path):
        """The run: the baseline sample, the workers, the bursts and the sampler for --duration s (a drained
        checkpoint at a third), then the load's end and the idle sample. Returns (seconds of load, the baseline
        sample, the idle sample or None); a crash or a Ctrl-C ends the load early (self.crash, self.interrupted)."""
        args, proc = self.args, self.proc
        self.t0 = now()
        baseline = self.take_sample("baseline")
        print(f"load: {args.concurrency} workers for {args.duration:.0f} s on http://{self.host}:{self.port}, "
              f"bursts of {args.burst_size} every {args.burst_every:.0f} s, samples every {args.sample_interval:.0f} s",
              flush=True)
        print(progress_line(baseline), flush=True)
        self.samples[-1]["phase"] = "load"  # the first point of the plot
        threads = [threading.Thread(target=self.worker, args=(i,), daemon=True) for i in range(args.concurrency)]
        threads.append(threading.Thread(target=self.burster, daemon=True))
        sampler = threading.Thread(target=self.sampler, daemon=True)
        for th in threads:
            th.start()
        sampler.start()
        end = self.t0 + args.duration
        try:
            while now() < end:
                if "checkpoint" not in self.checkpoints and self.rel() >= args.duration / 3:
                    c = self.checkpoint("checkpoint")
                    if c is not None:
                        print("drained checkpoint: " + progress_line(c), flush=True)
                if proc.poll() is not None:
                    self.crash = {"t": round(self.rel(), 2), "returncode": proc.returncode,
                                  "signal": signal.Signals(-proc.returncode).name if proc.returncode < 0 else None,
                                  "log_tail": log_tail(log_path)}
                    print(f"CRASH: ridge serve exited with {proc.returncode} at {self.crash['t']} s", flush=True)
                    break
                time.sleep(0.25)
        except KeyboardInterrupt:
            self.interrupted = True
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the report comes within about 30 s
            print("interrupted: stopping the load and writing the report", flush=True)
        duration_run = self.rel()
        self.stop.set()
        sampler.join(timeout=args.metrics_timeout + 5)
        # In-flight requests finish (slow readers speed up); the last sample is the load's end.
        deadline = now() + (5 if self.crash else 30 if self.interrupted else args.request_timeout + 10)
        for th in threads:
            th.join(timeout=max(0.1, deadline - now()))
        hung = sum(1 for th in threads if th.is_alive())
        if hung:
            print(f"{hung} client threads still waiting on the server after the run", flush=True)
        if self.crash is None and proc.poll() is not None:
            self.crash = {"t": round(self.rel(), 2), "returncode": proc.returncode, "log_tail": log_tail(log_path)}
        idle = None
        if self.crash is None and not hung:
            # Drained: nothing running or waiting, then the idle sample (KV blocks in use back to 0).
            idle = self.checkpoint("idle")
            if idle is not None:
                print("drained at the end: " + progress_line(idle), flush=True)
        return duration_run, baseline, idle
