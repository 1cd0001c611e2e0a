"""`ridge serve --log-format json`: stderr is one JSON object a line from start to stop (time, level,
message; the memory plan with its numbers as fields), and every HTTP request gets one access line with
the X-Request-Id the response carried, its method, path, status, duration, the client's address and the
model the body named, errors included (a 404 route, a 400 body). The default text format keeps its
wording and prints no access lines."""
import datetime
import json
import os
import time
import urllib.request

import pytest

from serve_fixture import start_server, stop_server

MODEL = "SmolLM2-135M-Instruct.Q4_1"


@pytest.fixture(scope="module")
def server(ridge_bin, default_model):
    s = start_server(ridge_bin, default_model, "--log-format", "json")
    yield s
    stop_server(s)
    os.unlink(s.log_path)


def log_lines(server):
    """The complete lines the server has written so far."""
    with open(server.log_path, errors="replace") as f:
        text = f.read()
    return text[:text.rfind("\n") + 1].splitlines()


def access_lines(server, request_id, timeout=10):
    """The access lines of one request id; waits a little, since the line follows the response."""
    deadline = time.monotonic() + timeout
    while True:
        found = [line for line in map(json.loads, log_lines(server))
                 if line.get("event") == "http_request" and line.get("request_id") == request_id]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def the_access_line(server, request_id, method, path, status):
    found = access_lines(server, request_id)
    assert len(found) == 1, found
    line = found[0]
    assert line["method"] == method and line["path"] == path and line["status"] == status, line
    assert line["remote_addr"] == "127.0.0.1" and isinstance(line["remote_port"], int), line
    assert isinstance(line["duration_ms"], (int, float)) and 0 <= line["duration_ms"] < 120_000, line
    assert line["level"] == "info" and line["message"] == f"{method} {path} {status}", line
    datetime.datetime.fromisoformat(line["time"].replace("Z", "+00:00"))
    return line


def test_every_line_is_json(server):
    status, _ = server.request("GET", "/health", headers={"X-Request-Id": "lf-health"})
    assert status == 200
    the_access_line(server, "lf-health", "GET", "/health", 200)
    lines = log_lines(server)
    assert lines
    parsed = [json.loads(line) for line in lines]  # every line, from the first
    for p in parsed:
        assert {"time", "level", "message"} <= set(p), p
        assert p["level"] in ("info", "warning", "error"), p
        t = datetime.datetime.fromisoformat(p["time"].replace("Z", "+00:00"))
        assert t.tzinfo is not None and p["time"].endswith("Z"), p
    messages = [p["message"] for p in parsed]
    banner = next(m for m in messages if m.startswith("ridge serve: "))
    assert f"on http://127.0.0.1:{server.port}/" in banner, banner
    plan = next(p for p in parsed if p["message"].startswith("memory plan: "))
    assert plan["kv_blocks"] > 0 and plan["kv_bytes_per_token"] > 0 and plan["ctx_size"] == 2048, plan


def test_completion_is_logged_with_its_request_id_and_model(server):
    status, body = server.request("POST", "/v1/chat/completions",
                                  {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4},
                                  headers={"X-Request-Id": "lf-chat-1"})
    assert status == 200, body
    line = the_access_line(server, "lf-chat-1", "POST", "/v1/chat/completions", 200)
    assert line["model"] == MODEL

    # A streamed one is logged once, when its stream ends.
    status, body = server.request("POST", "/v1/completions", {"prompt": "Once upon", "max_tokens": 4, "stream": True},
                                  headers={"X-Request-Id": "lf-stream-1"})
    assert status == 200 and b"data: [DONE]" in body
    line = the_access_line(server, "lf-stream-1", "POST", "/v1/completions", 200)
    assert "model" not in line  # the body named none


def test_generated_request_id_is_the_one_on_the_response(server):
    with urllib.request.urlopen(server.base_url + "/v1/models", timeout=30) as r:
        assert r.status == 200
        request_id = r.headers["X-Request-Id"]
    assert request_id
    the_access_line(server, request_id, "GET", "/v1/models", 200)


def test_errors_are_logged_with_their_status(server):
    status, _ = server.request("GET", "/no/such/route", headers={"X-Request-Id": "lf-404"})
    assert status == 404
    the_access_line(server, "lf-404", "GET", "/no/such/route", 404)

    status, _ = server.request("POST", "/v1/chat/completions", b"{not json", headers={"X-Request-Id": "lf-400"})
    assert status == 400
    the_access_line(server, "lf-400", "POST", "/v1/chat/completions", 400)

    status, _ = server.request("POST", "/v1/chat/completions", {"model": "no-such-model", "messages": [{"role": "user", "content": "Hi"}]},
                               headers={"X-Request-Id": "lf-model-404"})
    assert status == 404
    assert the_access_line(server, "lf-model-404", "POST", "/v1/chat/completions", 404)["model"] == "no-such-model"


def test_stop_lines_are_json(ridge_bin, default_model):
    s = start_server(ridge_bin, default_model, "--log-format", "json")
    assert stop_server(s) == 0
    lines = log_lines(s)
    os.unlink(s.log_path)
    parsed = [json.loads(line) for line in lines]
    assert parsed[-1]["message"] == "ridge serve: stopped", lines[-3:]
    assert any("finishing requests in flight" in p["message"] for p in parsed), lines[-3:]


def test_text_format_is_unchanged(ridge_bin, default_model):
    s = start_server(ridge_bin, default_model)
    try:
        status, _ = s.request("GET", "/health", headers={"X-Request-Id": "lf-text"})
        assert status == 200
        time.sleep(0.3)
    finally:
        stop_server(s)
    lines = log_lines(s)
    os.unlink(s.log_path)
    assert not any(line.startswith("{") for line in lines), lines
    assert not any("lf-text" in line for line in lines), lines
    assert any(line.startswith("memory plan: weights ") and " MiB | KV f16 " in line for line in lines), lines
    assert any(line.startswith(f"ridge serve: {MODEL} (context 2048) on http://127.0.0.1:{s.port}/") for line in lines), lines
    assert lines[-1] == "ridge serve: stopped", lines[-3:]
