"""`ridge serve --slo`: the start-up plan in words, goodput counters per objective, the per-step
roofline in /metrics, the preemption guard under a KV pool far too small for the load, and
--slo-reject answering 503 with Retry-After when the predicted TTFT is already past the objective."""
import concurrent.futures
import json
import re
import urllib.error
import urllib.request

import pytest

from serve_fixture import running_server


def complete(server, prompt, max_tokens, timeout=300):
    body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True}
    return server.request("POST", "/v1/completions", body, timeout=timeout)


@pytest.fixture(scope="module")
def slo_server(ridge_bin, default_model):
    with running_server(ridge_bin, default_model, "--slo", "ttft=5s,itl=300ms,e2e=60s", startup_timeout=180) as s:
        yield s


def test_the_plan_is_printed_and_goodput_is_counted(slo_server):
    log = slo_server.log(tail=20000)
    plan = re.search(r"at ITL <= 300 ms this machine holds (\d+) concurrent streams at context <= (\d+)", log)
    assert plan, log
    assert int(plan.group(1)) >= 1
    assert re.search(r"chosen: --max-num-seqs (\d+) --max-batched-tokens (\d+) --prefill-chunk (\d+)", log), log
    for i in range(3):
        status, body = complete(slo_server, f"Tell me about the number {i}.", 16)
        assert status == 200, body
    m = slo_server.metrics()
    met = {k: v for k, v in m.items() if k.startswith("ridge:requests_slo_met_total")}
    missed = {k: v for k, v in m.items() if k.startswith("ridge:requests_slo_missed_total")}
    for slo in ("ttft", "itl", "e2e", "all"):
        key = f'{{slo="{slo}"}}'
        assert met["ridge:requests_slo_met_total" + key] + missed["ridge:requests_slo_missed_total" + key] == 3, (met, missed)
    # "all" is met only by requests that met every one.
    assert met['ridge:requests_slo_met_total{slo="all"}'] <= min(
        met[f'ridge:requests_slo_met_total{{slo="{s}"}}'] for s in ("ttft", "itl", "e2e"))


def test_each_step_is_on_the_roofline(slo_server):
    complete(slo_server, "Count from one to ten.", 24)
    m = slo_server.metrics()
    assert m["ridge:roofline_decode_steps_total"] > 0
    assert m["ridge:roofline_decode_bytes_total"] > 0 and m["ridge:roofline_decode_seconds_total"] > 0
    # Against the placeholder bandwidth (20 GB/s) when no probe profile exists: a model that fits in a
    # large last-level cache reads faster than that, so this only catches a wrong unit.
    assert 0 < m["ridge:roofline_decode_recent_bandwidth_fraction"] < 10
    for stage in ("attention", "ffn", "head"):
        assert m[f'ridge:roofline_bytes_total{{stage="{stage}"}}'] > 0
        assert m[f"ridge:roofline_bandwidth_fraction_{stage}_count"] > 0
    assert m["ridge:slo_step_bound_seconds"] == pytest.approx(0.3 * 0.85)
    status, body = slo_server.request("GET", "/metrics/json")
    slo = json.loads(body)["slo"]
    assert slo["steps"] and all(p["s"] > 0 and p["bytes"] > 0 for p in slo["steps"])
    assert slo["goodput"]["all"]["met"] + slo["goodput"]["all"]["missed"] >= 1


def test_the_guard_lowers_concurrency_when_preemptions_cascade(ridge_bin, default_model):
    # Room for about two sequences of the context (728 tokens); 12 clients that each grow to about 210.
    with running_server(ridge_bin, default_model, "--kv-memory", "16MiB", "--max-num-seqs", "12", ctx_size=512) as s:
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            results = list(pool.map(lambda i: complete(s, f"Story number {i}: once upon a time", 200), range(12)))
        assert all(status == 200 for status, _ in results), results[:2]
        m = s.metrics()
        assert m["ridge:num_preemptions_total"] > 0
        assert m["ridge:slo_preemption_cascades_total"] >= 1, s.log()
        assert "preemption cascade" in s.log(tail=50000)


def test_requests_that_cannot_meet_ttft_are_refused_with_retry_after(ridge_bin, default_model):
    with running_server(ridge_bin, default_model, "--slo", "ttft=300ms", "--slo-reject", "--slo-no-calibration",
                        ctx_size=4096) as s:
        long_prompt = " ".join(["word"] * 1500)
        complete(s, "Hello", 4)  # a first step, so the engine knows its prompt rate
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(raw_completion, s, long_prompt) for _ in range(8)]
            answers = [f.result() for f in futures]
        refused = [a for a in answers if a[0] == 503]
        assert refused, answers
        for status, headers, body in refused:
            assert int(headers["Retry-After"]) >= 1
            assert json.loads(body)["error"]["code"] == "slo_unmeetable"
        assert s.metrics()["ridge:slo_rejected_total"] == len(refused)


def raw_completion(server, prompt):
    body = json.dumps({"prompt": prompt, "max_tokens": 8}).encode()
    req = urllib.request.Request(server.api_url + "/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
