"""The multi-host path over a real network stack, on this one machine: tools/netns_mpirun.sh puts one
MPI rank in each of two network namespaces joined by a veth pair (its own addresses, 10.77.0.1 and
10.77.0.2, exist only inside them; each namespace has its own host name), Open MPI starting the remote
rank through its rsh launcher (tools/netns_rsh.sh, no ssh) and the ranks talking TCP over the veth only.
Across the namespaces TP=2 and PP=2 give one process's greedy continuations on the default model;
`probe --dist` reports the transport as network, with a higher latency than over shared memory (the
reason tensor parallelism wants a high-bandwidth domain), and the measured bytes crossed the veth;
decode tok/s over the network and over shared memory are printed (no timing is asserted). The script
refuses clearly when it cannot work, and leaves no namespace or veth behind, whatever happens.
Needs root and iproute2: without them the tests fail and say so."""
import json
import os
import re
import glob
import secrets
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import ROOT
from test_parallel import ENV, LAYOUTS, greedy, mpirun

SCRIPT = str(ROOT / "tools" / "netns_mpirun.sh")
PROMPTS = ["The capital of France is", "def fibonacci(n):"]
VETH_LINE = re.compile(r"netns_mpirun\.sh: veth (\S+) .*: \S+ sent (\d+) bytes, received (\d+) bytes")


def ip(*args):
    """`ip ARGS`'s output; empty where iproute2 is missing (netns_ready then fails and says why)."""
    try:
        return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=60).stdout
    except FileNotFoundError:
        return ""


def ridge_netns():
    """The namespaces named ridge-a-* / ridge-b-* that exist now (ours and any other run's)."""
    out = ip("netns", "list")
    return {line.split()[0] for line in out.splitlines() if re.match(r"ridge-[ab]-", line)}


def ridge_links():
    """Links named ridge-a-* / ridge-b-* in this (the host's) namespace: a veth end never moved."""
    out = ip("-o", "link", "show")
    return {m.group(1) for m in re.finditer(r"^\d+: (ridge-[ab]-[a-z0-9]+)[@:]", out, re.M)}


def remove_leftovers(suffix):
    """Last resort for a script killed with SIGKILL (its trap cannot run): kill what runs in our
    namespaces, by pid, and delete them. Returns what was found left behind."""
    left = sorted(n for n in ridge_netns() if n.endswith("-" + suffix)) + \
        sorted(n for n in ridge_links() if n.endswith("-" + suffix))
    for ns in (f"ridge-a-{suffix}", f"ridge-b-{suffix}"):
        for pid in ip("netns", "pids", ns).split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        ip("netns", "del", ns)
        ip("link", "del", ns)
    for d in glob.glob(os.path.join(tempfile.gettempdir(), f"ridge-netns-{suffix}.*")):  # the hostfile's
        left.append(d)
        shutil.rmtree(d, ignore_errors=True)
    return left


class NetnsRunner:
    """Runs command lines through tools/netns_mpirun.sh, each with a fresh suffix it remembers, so
    that the check after the test can prove every namespace and veth of its runs is gone."""

    def __init__(self):
        self.suffixes = []

    def start(self, cmd, **kw):
        suffix = secrets.token_hex(3)
        self.suffixes.append(suffix)
        return subprocess.Popen([SCRIPT, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**ENV, "RIDGE_NETNS_SUFFIX": suffix}, start_new_session=True, **kw), suffix

    def __call__(self, cmd, timeout=600, check=True):
        proc, _ = self.start(cmd)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)  # the script's trap tears the namespaces down
            try:
                out, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
            pytest.fail(f"{' '.join(cmd)} across the namespaces ran past {timeout} s:\n{out[-2000:]}\n{err[-4000:]}")
        if check:
            assert proc.returncode == 0, \
                f"netns_mpirun.sh {' '.join(cmd)} failed ({proc.returncode}):\n{out[-2000:]}\n{err[-4000:]}"
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture
def netns_run():
    runner = NetnsRunner()
    yield runner
    left = [x for s in runner.suffixes for x in remove_leftovers(s)]
    assert not left, f"tools/netns_mpirun.sh left these behind (now removed): {left}"


@pytest.fixture(scope="module")
def netns_ready():
    """One trivial job across the namespaces first: where they cannot be made (not root, no iproute2,
    no netns support) every test fails with the script's own reason."""
    runner = NetnsRunner()
    try:
        proc = runner(["mpirun", "-np", "2", "hostname"], timeout=120, check=False)
    finally:
        for s in runner.suffixes:
            remove_leftovers(s)
    if proc.returncode != 0:
        pytest.fail(f"cannot run MPI across two network namespaces (tools/netns_mpirun.sh needs root and "
                    f"iproute2; tools/setup_test_deps.sh installs iproute2):\n{proc.stderr[-3000:]}")
    hosts = proc.stdout.split()
    assert len(hosts) == 2 and len(set(hosts)) == 2, f"expected one rank per namespace, got hosts {hosts}"


def netns_mpirun(n):
    return ["mpirun", "-np", str(n), "--bind-to", "none"]


def run_json(proc):
    return json.loads(proc.stdout.splitlines()[0])


def generate(ridge_bin, model, prompt, layout, n, runner=None):
    """`ridge run` split by `layout`, over the namespaces (runner) or shared memory (plain mpirun)."""
    ranks, flags = {**LAYOUTS, "helix2": (2, ["--helix", "2"])}[layout]
    args = [ridge_bin, "run", "-m", model, "-p", prompt, "-n", str(n), "--ignore-eos", "--json", *flags, "-t", "1"]
    if runner is not None:
        return run_json(runner([*netns_mpirun(ranks), *args]))
    proc = subprocess.run([*mpirun(ranks), *args], capture_output=True, text=True, env=ENV, timeout=600)
    assert proc.returncode == 0, f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    return run_json(proc)


def decode_tps(out):
    return (len(out["tokens"]) - 1) / out["decode_seconds"]


def veth_bytes(stderr):
    m = VETH_LINE.search(stderr)
    assert m, f"netns_mpirun.sh printed no veth traffic line:\n{stderr[-2000:]}"
    return int(m.group(2)), int(m.group(3))


@pytest.mark.parametrize("layout", ["tp2", "pp2"])
def test_greedy_continuations_across_namespaces_are_identical(ridge_bin, default_model, netns_ready, netns_run,
                                                              layout):
    for prompt in PROMPTS:
        split = generate(ridge_bin, default_model, prompt, layout, 32, netns_run)["tokens"]
        assert split == greedy(ridge_bin, default_model, prompt), f"{layout} across namespaces: {prompt!r}"


# Helix's partial attention merged over TCP: the same tokens as over shared memory (the merge's order is
# fixed, so the transport cannot change a bit; its distance from one process is test_parallel_helix's).
def test_helix_across_namespaces_matches_shared_memory(ridge_bin, default_model, netns_ready, netns_run):
    for prompt in PROMPTS[:2]:
        over_tcp = generate(ridge_bin, default_model, prompt, "helix2", 32, netns_run)["tokens"]
        assert over_tcp == generate(ridge_bin, default_model, prompt, "helix2", 32)["tokens"], prompt


def probe(cmd_prefix, ridge_bin, runner=None):
    args = [*cmd_prefix, ridge_bin, "probe", "--dist", "--json", "--no-save"]
    if runner is not None:
        proc = runner(args)
    else:
        proc = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=600)
        assert proc.returncode == 0, f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout), proc.stderr


def test_probe_tells_a_network_from_shared_memory(ridge_bin, netns_ready, netns_run):
    """The probe names the transport and the hosts, its messages cross the veth, and the network moves
    large messages slower than shared memory (fitted bandwidth, the best of up to three probes each
    way). The fitted latencies are printed, not compared: a few microseconds each, a busy machine's
    scheduling (make test beside busy loops) puts either side first."""
    best = {"shm": {}, "net": {}}
    fastest = {"shm": {}, "net": {}}
    for attempt in range(1, 4):
        shm, _ = probe(mpirun(2), ridge_bin)
        net, stderr = probe(netns_mpirun(2), ridge_bin, netns_run)
        assert shm["transport"] == "shared memory" and len(shm["hosts"]) == 1, shm["hosts"]
        assert net["transport"] == "network" and len(net["hosts"]) == 2, net["hosts"]
        assert net["ranks"] == 2 and net["backend"] == "mpi"
        # The 16 MiB ping-pong alone sends that much each way: the ranks' messages went over the veth.
        sent, received = veth_bytes(stderr)
        largest = max(s["bytes"] for s in net["send_recv"]["sizes"])
        assert sent >= largest and received >= largest, (sent, received, largest)
        for key, d in (("shm", shm), ("net", net)):
            for op in ("send_recv", "all_reduce"):
                fit = d[op]["fit"]
                if op not in best[key] or fit["latency_us"] < best[key][op]["latency_us"]:
                    best[key][op] = fit
                fastest[key][op] = max(fastest[key].get(op, 0.0), fit["bandwidth_gbs"])
        if all(fastest["net"][op] < fastest["shm"][op] for op in ("send_recv", "all_reduce")):
            break
    for key, name, d in (("shm", "shared memory", shm), ("net", "the namespaces (TCP over veth)", net)):
        b = best[key]
        print(f"\nprobe --dist over {name}: transport {d['transport']!r}, hosts {d['hosts']}: "
              f"send/recv latency {b['send_recv']['latency_us']:.2f} us, {b['send_recv']['bandwidth_gbs']:.2f} GB/s; "
              f"all-reduce latency {b['all_reduce']['latency_us']:.2f} us, "
              f"{b['all_reduce']['bandwidth_gbs']:.2f} GB/s", end="")
    print(f"\n(lowest of {attempt} probe(s) each way; veth traffic of the last: {sent} bytes sent, "
          f"{received} received by namespace A)")
    for op in ("send_recv", "all_reduce"):
        assert 0 < best["shm"][op]["latency_us"] and 0 < best["net"][op]["latency_us"], (op, best)
        assert fastest["net"][op] < fastest["shm"][op], (op, fastest)


@pytest.mark.parametrize("layout", ["tp2", "pp2"])
def test_decode_rate_across_namespaces_and_over_shared_memory(ridge_bin, default_model, netns_ready, netns_run,
                                                              layout):
    """Informational: the best of three 64-token greedy runs each way (two cores shared, one thread a rank)."""
    prompt = PROMPTS[0]
    net = [generate(ridge_bin, default_model, prompt, layout, 64, netns_run) for _ in range(3)]
    shm = [generate(ridge_bin, default_model, prompt, layout, 64) for _ in range(3)]
    assert all(o["tokens"] == shm[0]["tokens"] for o in net + shm)
    print(f"\n{layout} decode: {max(map(decode_tps, net)):.1f} tok/s across the namespaces (TCP over veth), "
          f"{max(map(decode_tps, shm)):.1f} tok/s over shared memory", end="")


def test_a_failing_job_leaves_nothing_behind(netns_ready, netns_run):
    proc = netns_run(["mpirun", "-np", "2", "false"], timeout=120, check=False)
    assert proc.returncode != 0
    # netns_run's check after the test: no namespace or veth with this run's suffix is left.


def test_a_terminated_job_leaves_nothing_behind(netns_ready, netns_run):
    proc, suffix = netns_run.start(["mpirun", "-np", "2", "sleep", "120"])
    deadline = time.monotonic() + 60
    while len(ridge_netns() & {f"ridge-a-{suffix}", f"ridge-b-{suffix}"}) < 2 or \
            not ip("netns", "pids", f"ridge-b-{suffix}"):
        assert proc.poll() is None and time.monotonic() < deadline, "the job never started in namespace B"
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert not (ridge_netns() & {f"ridge-a-{suffix}", f"ridge-b-{suffix}"})


def test_the_script_refuses_clearly_when_it_cannot_work(tmp_path):
    def script(*args, env=None, user=None):
        cmd = [SCRIPT, "mpirun", "-np", "2", "true"] if not args else [SCRIPT, *args]
        if user is not None:
            cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, env={**ENV, **(env or {})}, timeout=60)

    proc = script(user=65534) if os.geteuid() == 0 else script()
    assert proc.returncode == 2 and "must run as root" in proc.stderr, proc.stderr
    if os.geteuid() != 0:
        return
    fake = tmp_path / "ip"  # an `ip` without netns support
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    proc = script(env={"PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert proc.returncode == 2 and "'ip netns' is unavailable" in proc.stderr, proc.stderr
    proc = script("hostname")
    assert proc.returncode == 2 and "must start with mpirun" in proc.stderr, proc.stderr
    proc = script(env={"RIDGE_NETNS_SUFFIX": "Not/ok"})
    assert proc.returncode == 2 and "RIDGE_NETNS_SUFFIX" in proc.stderr, proc.stderr
