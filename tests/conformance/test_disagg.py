"""Disaggregated prefill/decode between processes over UCX: a decode instance whose long prompts a
prefill instance computes gives exactly the greedy output of one co-located instance (prefix hits,
short prompts, a cancellation among them); a prefill instance that dies mid-transfer costs a local
re-prefill, not the request; a decode instance that dies leaves the prefill instance's blocks free."""
import concurrent.futures
import http.client
import json
import os
import time

import pytest

from serve_fixture import running_server, start_server, stop_server

DOC = ("The committee reviewed the quarterly figures, the staffing plan and the schedule for the new "
       "building, and asked for a revised estimate before the next meeting. ")
PROMPTS = [DOC * 6 + "Summarise the first point.",
           DOC * 6 + "What was asked for?",         # shares six sentences with the first: a prefix hit
           "Hello there.",                         # short: computed on the decode instance
           DOC * 11 + "List every item reviewed.",
           "Write a haiku about rain. " * 3]


def complete(server, prompt, max_tokens=24):
    status, body = server.request("POST", "/v1/completions",
                                  {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0}, timeout=120)
    assert status == 200, body
    return json.loads(body)["choices"][0]["text"]


# The deadlines are only a safety net against a hang: each wait returns as soon as its event happens, so
# on a machine busy with other work (two cores shared with builds) they are generous.
def wait_for(predicate, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def cancel_while_prefilling(server, prompt):
    """A streamed request whose client hangs up before its first token."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request("POST", "/v1/completions", json.dumps({"prompt": prompt, "max_tokens": 50, "stream": True}),
                 {"Content-Type": "application/json"})
    time.sleep(0.3)
    conn.close()


def decode_args(prefill):
    return ("--role", "decode", "--prefill-endpoint", prefill.base_url, "--remote-prefill-min-tokens", "16",
            "--kv-transfer-timeout", "30")


@pytest.fixture(scope="module")
def colocated(ridge_bin, default_model):
    with running_server(ridge_bin, default_model, threads=1) as s:
        yield s


def test_one_prefill_one_decode_is_the_colocated_instance(ridge_bin, default_model, colocated):
    # RIDGE_DISAGG_MODEL=FILE runs this one on another model (e.g. a synthetic 1.1B file; slow).
    model = os.environ.get("RIDGE_DISAGG_MODEL", default_model)
    if model != default_model:
        with running_server(ridge_bin, model, threads=1) as other:
            want = [complete(other, p) for p in PROMPTS]
    else:
        want = [complete(colocated, p) for p in PROMPTS]
    with running_server(ridge_bin, model, "--role", "prefill", threads=1) as prefill, \
         running_server(ridge_bin, model, *decode_args(prefill), threads=1) as decode:
        assert complete(decode, PROMPTS[0]) == want[0]  # cached on the decode side from here on
        with concurrent.futures.ThreadPoolExecutor(len(PROMPTS) + 1) as pool:
            cancelled = pool.submit(cancel_while_prefilling, decode, DOC * 9)
            got = list(pool.map(lambda p: complete(decode, p), PROMPTS))
            cancelled.result()
        assert got == want
        m = decode.metrics()
        assert m["ridge:kv_transfer_remote_prefills_total"] >= 3, m  # the long prompts and the cancelled one
        assert m["ridge:kv_transfer_failures_total"] == 0
        assert m["ridge:kv_transfer_received_bytes_total"] > 0
        assert m["ridge:prefix_cache_hits_total"] > 0
        # Nothing leaks on either side once the cancelled request's transfer is over.
        assert wait_for(lambda: decode.metrics()["ridge:kv_cache_blocks_used"] == 0 and
                        decode.metrics()["ridge:kv_transfer_quarantined_blocks"] == 0), decode.metrics()
        assert wait_for(lambda: prefill.metrics()["ridge:kv_cache_blocks_used"] == 0), prefill.metrics()
        p = prefill.metrics()
        assert p["ridge:kv_transfer_sent_total"] >= 3
        # One entry per transfer in the per-transfer histograms (bytes, achieved rate, exposed time).
        for name in ("sent_bytes", "send_bandwidth_bytes_per_second", "send_exposed_seconds"):
            assert p[f"ridge:kv_transfer_{name}_count"] == p["ridge:kv_transfer_sent_total"], (name, p)
        assert p["ridge:kv_transfer_send_bandwidth_bytes_per_second_sum"] > 0
        assert m["ridge:kv_transfer_received_bytes_count"] == m["ridge:kv_transfer_remote_prefills_total"]


def test_a_prefill_instance_that_dies_mid_transfer_costs_a_re_prefill(ridge_bin, default_model, colocated):
    long_prompt = DOC * 40 + "And the conclusion?"
    want = complete(colocated, long_prompt)
    prefill = start_server(ridge_bin, default_model, "--role", "prefill", threads=1)
    try:
        with running_server(ridge_bin, default_model, *decode_args(prefill), threads=1) as decode:
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                result = pool.submit(complete, decode, long_prompt)
                assert wait_for(lambda: decode.metrics()["ridge:kv_transfer_waiting_requests"] == 1)
                time.sleep(0.2)
                prefill.proc.kill()  # SIGKILL while it computes and sends
                assert result.result() == want
            m = decode.metrics()
            assert m["ridge:kv_transfer_failures_total"] == 1, m
            assert m["ridge:kv_transfer_re_prefills_total"] == 1
            # With no prefill instance at all, requests are still served (computed here).
            assert complete(decode, PROMPTS[3]) == complete(colocated, PROMPTS[3])
            assert wait_for(lambda: decode.metrics()["ridge:kv_cache_blocks_used"] == 0 and
                            decode.metrics()["ridge:kv_transfer_quarantined_blocks"] == 0), decode.metrics()
    finally:
        stop_server(prefill)


def test_a_prefill_instance_that_hangs_is_timed_out(ridge_bin, default_model, colocated):
    """SIGSTOP the prefill instance mid-transfer: after --kv-transfer-timeout the decode instance computes the
    prompt itself; when the prefill instance wakes, what it still writes lands in quarantined blocks."""
    import signal
    long_prompt = DOC * 30 + "Then what?"
    want = complete(colocated, long_prompt)
    with running_server(ridge_bin, default_model, "--role", "prefill", threads=1) as prefill:
        args = list(decode_args(prefill))
        args[args.index("--kv-transfer-timeout") + 1] = "2"
        with running_server(ridge_bin, default_model, *args, threads=1) as decode:
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                result = pool.submit(complete, decode, long_prompt)
                assert wait_for(lambda: decode.metrics()["ridge:kv_transfer_waiting_requests"] == 1)
                prefill.proc.send_signal(signal.SIGSTOP)
                try:
                    assert result.result(timeout=60) == want
                    assert decode.metrics()["ridge:kv_transfer_re_prefills_total"] == 1
                finally:
                    prefill.proc.send_signal(signal.SIGCONT)
            assert wait_for(lambda: decode.metrics()["ridge:kv_cache_blocks_used"] == 0 and
                            decode.metrics()["ridge:kv_transfer_quarantined_blocks"] == 0), decode.metrics()
        assert wait_for(lambda: prefill.metrics()["ridge:kv_cache_blocks_used"] == 0), prefill.metrics()


def test_a_decode_instance_that_dies_frees_the_prefill_side(ridge_bin, default_model):
    with running_server(ridge_bin, default_model, "--role", "prefill", threads=1) as prefill:
        decode = start_server(ridge_bin, default_model, *decode_args(prefill), threads=1)
        try:
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(lambda: decode.request("POST", "/v1/completions",
                                                   {"prompt": DOC * 40, "max_tokens": 5}, timeout=60))
                assert wait_for(lambda: prefill.metrics()["ridge:kv_cache_blocks_used"] > 0)
                decode.proc.kill()
        finally:
            stop_server(decode)
        assert wait_for(lambda: prefill.metrics()["ridge:kv_cache_blocks_used"] == 0), prefill.metrics()
        status, _ = prefill.request("GET", "/health")
        assert status == 200


def test_hostile_prefill_requests_get_clear_errors(ridge_bin, default_model):
    """A prefill instance's /ridge/kv/prefill refuses what it cannot do, with a JSON error, leaks nothing, and
    keeps serving."""
    import base64
    import re
    import struct
    with running_server(ridge_bin, default_model, "--role", "prefill", threads=1) as prefill:
        pool = json.loads(re.search(r"pool (\{.*\})", prefill.log()).group(1))
        base = {"transfer_id": "t", "tokens": [5, 6, 7] * 20, "first_position": 0, "blocks": [0, 1, 2, 3], "pool": pool}

        def blob(b):
            return struct.pack("<Q", len(b)) + b

        def peer(b):
            return base64.b64encode(b).decode()

        cases = [
            (b"not json", 400),
            ({**base, "pool": {**pool, "model": "0000"}, "peer": ""}, 409),   # another model
            ({**base, "pool": {**pool, "dtype": "int8"}, "peer": ""}, 409),   # another KV type
            ({**base, "peer": "!!"}, 400),                                    # not base64
            ({**base, "first_position": 5, "peer": ""}, 400),                 # not block-aligned
            ({**base, "blocks": [0, 1, 99999999, 3], "peer": ""}, 400),       # outside the peer's pool
            ({**base, "blocks": [0], "peer": ""}, 400),                       # too few blocks
            ({**base, "tokens": [10 ** 9], "blocks": [0], "peer": ""}, 400),  # outside the vocabulary
            ({**base, "tokens": "abc", "peer": ""}, 400),
            ({**base, "peer": peer(b"garbage")}, 500),                        # the transfer fails, cleanly
            ({**base, "peer": peer(b"RKX1" + blob(b"elsewhere") + blob(b"\x00" * 8))}, 500),
        ]
        for body, status in cases:
            got, text = prefill.request("POST", "/ridge/kv/prefill", body)
            assert got == status, (body if isinstance(body, bytes) else {k: body[k] for k in body if k != "pool"}, text)
            assert "error" in json.loads(text)
        assert wait_for(lambda: prefill.metrics()["ridge:kv_cache_blocks_used"] == 0), prefill.metrics()
        assert prefill.request("GET", "/health")[0] == 200
        assert complete(prefill, "Hello there.")  # still serves ordinary requests
