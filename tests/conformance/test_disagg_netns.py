"""Disaggregated prefill/decode across two "hosts": a prefill and a decode instance in two network
namespaces joined by a veth pair, with addresses that exist only inside them, so the K/V crosses a
real TCP stack (UCX's TCP transport, no shared memory). Greedy output equals one co-located
instance's, and the veth carried at least the K/V bytes the decode instance received."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from serve_fixture import running_server

SUFFIX = f"{os.getpid() % 100000}"
NS_A, NS_B = f"rdA{SUFFIX}", f"rdB{SUFFIX}"
VETH_A, VETH_B = f"rdva{SUFFIX}", f"rdvb{SUFFIX}"
ADDR_A, ADDR_B = "10.79.0.1", "10.79.0.2"
PROMPTS = ["The committee reviewed the quarterly figures, the staffing plan and the schedule for the new building. " * 4,
           "Rain fell on the old town all night, and in the morning the river had risen over the lower road. " * 7]

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="needs root and iproute2 (network namespaces)")


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


@pytest.fixture(scope="module")
def namespaces():
    try:
        sh("ip", "netns", "add", NS_A)
        sh("ip", "netns", "add", NS_B)
        sh("ip", "link", "add", VETH_A, "type", "veth", "peer", "name", VETH_B)
        for ns, veth, addr in ((NS_A, VETH_A, ADDR_A), (NS_B, VETH_B, ADDR_B)):
            sh("ip", "link", "set", veth, "netns", ns)
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", veth)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", veth, "up")
        yield
    finally:
        for ns in (NS_A, NS_B):
            for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                subprocess.run(["kill", "-9", pid], check=False)
            sh("ip", "netns", "del", ns, check=False)


def in_ns(ns, veth, *cmd):
    return ["ip", "netns", "exec", ns, "env", f"UCX_NET_DEVICES={veth}", *cmd]


def start(cmd, log):
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def curl(ns, url, body=None, check=True):
    cmd = ["ip", "netns", "exec", ns, "curl", "-s", "--max-time", "120", url]
    if body is not None:
        cmd += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
    return sh(*cmd, check=check).stdout


def wait_health(ns, url, proc, log_path):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, open(log_path).read()[-3000:]
        if '"ok"' in curl(ns, url + "/health", check=False):  # refused until it listens
            return
        time.sleep(0.2)
    raise AssertionError(open(log_path).read()[-3000:])


def veth_bytes():
    out = sh("ip", "-n", NS_B, "-s", "link", "show", VETH_B).stdout
    rx = re.search(r"RX:.*\n\s*(\d+)", out)
    return int(rx.group(1))


def test_prefill_and_decode_in_two_namespaces(ridge_bin, default_model, namespaces, tmp_path):
    with running_server(ridge_bin, default_model, threads=1) as colocated:
        want = []
        for p in PROMPTS:
            status, body = colocated.request("POST", "/v1/completions", {"prompt": p, "max_tokens": 20, "temperature": 0})
            want.append(json.loads(body)["choices"][0]["text"])
    common = ["serve", "-m", default_model, "-t", "1", "--ctx-size", "2048"]
    logs = [open(tmp_path / "prefill.log", "wb"), open(tmp_path / "decode.log", "wb")]
    prefill = start(in_ns(NS_A, VETH_A, ridge_bin, *common, "--role", "prefill", "--host", ADDR_A, "--port", "8301"), logs[0])
    decode = start(in_ns(NS_B, VETH_B, ridge_bin, *common, "--role", "decode", "--host", ADDR_B, "--port", "8302",
                         "--prefill-endpoint", f"http://{ADDR_A}:8301", "--remote-prefill-min-tokens", "16"), logs[1])
    try:
        wait_health(NS_A, f"http://{ADDR_A}:8301", prefill, tmp_path / "prefill.log")
        wait_health(NS_B, f"http://{ADDR_B}:8302", decode, tmp_path / "decode.log")
        before = veth_bytes()
        got = []
        for p in PROMPTS:
            reply = json.loads(curl(NS_B, f"http://{ADDR_B}:8302/v1/completions",
                                    {"prompt": p, "max_tokens": 20, "temperature": 0}))
            got.append(reply["choices"][0]["text"])
        assert got == want
        metrics = curl(NS_B, f"http://{ADDR_B}:8302/metrics")
        received = float(re.search(r"^ridge:kv_transfer_received_bytes_total (\S+)$", metrics, re.M).group(1))
        assert re.search(r"^ridge:kv_transfer_remote_prefills_total 2$", metrics, re.M), metrics
        assert received > 0
        assert veth_bytes() - before >= received  # the K/V crossed the veth (TCP), not shared memory
    finally:
        for p in (prefill, decode):
            p.kill()
            p.wait()
        for log in logs:
            log.close()
