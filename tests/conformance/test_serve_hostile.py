"""`ridge serve` on the default model under hostile or careless clients: malformed and mistyped bodies,
bodies over the limit, invalid UTF-8, prompts longer than the context, unknown models and routes,
a burst of 200 connections, clients that vanish mid-request (no KV block may leak), and SIGTERM.
Every refusal is an OpenAI-shaped JSON error with the right status; nothing is a 500, nothing hangs."""
import http.client
import json
import signal
import socket
import threading
import time

import openai
import pytest
from openai.types import Completion

from serve_fixture import running_server, start_server, stop_server

CTX = 2048
MODEL = "SmolLM2-135M-Instruct.Q4_1"  # the name the server gives the default model


@pytest.fixture(scope="module")
def server(ridge_bin, default_model):
    with running_server(ridge_bin, default_model, ctx_size=CTX) as s:
        yield s


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=120)


def post_raw(server, path, body, content_type="application/json", timeout=60):
    """(status, parsed JSON body or raw bytes) of a POST with exactly these body bytes."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": content_type})
        r = conn.getresponse()
        data = r.read()
    finally:
        conn.close()
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, data


def assert_error(status, body, expected_status, code=None, param=None):
    assert status == expected_status, body
    assert isinstance(body, dict) and set(body) == {"error"}, body
    err = body["error"]
    assert isinstance(err["message"], str) and err["message"]
    assert isinstance(err["type"], str) and err["type"]
    assert "param" in err and "code" in err
    if code is not None:
        assert err["code"] == code, err
    if param is not None:
        assert err["param"] == param, err
    return err


def wait_idle(server, timeout=10.0):
    """Polls /metrics until nothing runs or waits and no KV block is in use; returns the last samples."""
    deadline = time.monotonic() + timeout
    while True:
        m = server.metrics()
        idle = (m["ridge:num_requests_running"] == 0 and m["ridge:num_requests_waiting"] == 0
                and m["ridge:kv_cache_blocks_used"] == 0)
        if idle or time.monotonic() > deadline:
            return m
        time.sleep(0.1)


def assert_idle(server, timeout=10.0):
    m = wait_idle(server, timeout)
    assert m["ridge:num_requests_running"] == 0, m
    assert m["ridge:num_requests_waiting"] == 0, m
    assert m["ridge:kv_cache_blocks_used"] == 0, m  # no KV block leaked
    assert m["ridge:kv_cache_usage_perc"] == 0, m
    return m


def assert_still_serving(client):
    r = client.completions.create(model=MODEL, prompt="Hello", max_tokens=2, extra_body={"ignore_eos": True})
    assert r.usage.completion_tokens == 2


ABORTED = 'ridge:request_success_total{finished_reason="abort"}'


# ---- bad bodies -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/v1/completions", "/v1/chat/completions"])
@pytest.mark.parametrize("body", [
    b'{"prompt": "hi", ',                    # truncated
    b'{"prompt": "hi"} trailing',            # garbage after the object
    b"{'prompt': 'hi'}",                     # not JSON quotes
    b'{"prompt": "hi", "max_tokens": NaN}',  # not a JSON literal
    b'{"prompt": "hi", "max_tokens": 1e400}',  # a number no double holds
    b"",
    b"null",
    b"[1, 2, 3]",
    b'"just a string"',
])
def test_malformed_json_is_400(server, path, body):
    status, reply = post_raw(server, path, body)
    assert_error(status, reply, 400)


@pytest.mark.parametrize("field,value", [
    ("prompt", 5), ("prompt", {"text": "hi"}), ("prompt", [1.5, 2]), ("prompt", [-1]),
    ("max_tokens", "16"), ("max_tokens", 0), ("max_tokens", -5), ("max_tokens", 2.5),
    ("temperature", "hot"), ("temperature", -1), ("top_p", 0), ("top_p", [1]),
    ("n", "2"), ("n", 0), ("n", 100000), ("stream", "yes"), ("stream", 1), ("stop", 7), ("stop", [None]),
    ("logprobs", 1000), ("logprobs", "many"), ("seed", "abc"), ("seed", 1.5), ("ignore_eos", "true"),
    ("model", 42), ("stream_options", "include_usage"),
])
def test_wrong_types_are_400(server, field, value):
    body = {"prompt": "hi", "max_tokens": 2, field: value}
    status, reply = post_raw(server, "/v1/completions", json.dumps(body).encode())
    assert_error(status, reply, 400, param=field)


@pytest.mark.parametrize("messages,param", [
    ("hello", "messages"), ({"role": "user"}, "messages"), ([1, 2], "messages[0]"),
    ([{"content": "hi"}], "messages[0].role"), ([{"role": "wizard", "content": "hi"}], "messages[0].role"),
    ([{"role": "user", "content": 5}], "messages[0].content"),
    ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], "messages[0].content"),
])
def test_wrong_message_types_are_400(server, messages, param):
    status, reply = post_raw(server, "/v1/chat/completions", json.dumps({"messages": messages}).encode())
    assert_error(status, reply, 400, param=param)


def test_empty_messages_and_prompts_are_400(server, client):
    status, reply = post_raw(server, "/v1/chat/completions", b'{"messages": []}')
    assert_error(status, reply, 400, param="messages")
    status, reply = post_raw(server, "/v1/chat/completions", b'{"max_tokens": 3}')
    assert_error(status, reply, 400, param="messages")
    for prompt in ["", [], [[]]]:
        status, reply = post_raw(server, "/v1/completions", json.dumps({"prompt": prompt}).encode())
        assert_error(status, reply, 400, param="prompt")
    status, reply = post_raw(server, "/v1/completions", b'{"max_tokens": 3}')
    assert_error(status, reply, 400, param="prompt")
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL, messages=[])
    assert e.value.status_code == 400


@pytest.mark.parametrize("raw", [
    b"\xff\xfe",            # bytes never valid in UTF-8
    b"\xc0\xaf",            # an overlong encoding of '/'
    b"\xe2\x82",            # a truncated three-byte sequence
    b"\xed\xa0\x80",        # a UTF-16 surrogate encoded as UTF-8
    b"\xf4\x90\x80\x80",    # past U+10FFFF
])
def test_invalid_utf8_is_400(server, raw):
    status, reply = post_raw(server, "/v1/completions", b'{"prompt": "abc' + raw + b'def", "max_tokens": 2}')
    assert_error(status, reply, 400)
    body = b'{"messages": [{"role": "user", "content": "x' + raw + b'"}], "max_tokens": 2}'
    status, reply = post_raw(server, "/v1/chat/completions", body)
    assert_error(status, reply, 400)


def test_body_over_the_limit_is_413(server, client):
    body = b'{"prompt": "' + b"a" * (10 << 20) + b'", "max_tokens": 1}'
    status, reply = post_raw(server, "/v1/completions", body)
    assert_error(status, reply, 413)
    assert_still_serving(client)


# ---- limits -----------------------------------------------------------------------------------------

def test_prompt_longer_than_the_context_is_400(server, client):
    status, reply = post_raw(server, "/v1/completions", json.dumps({"prompt": "hello " * CTX, "max_tokens": 4}).encode())
    assert_error(status, reply, 400, code="context_length_exceeded", param="prompt")
    # A prompt of exactly the context leaves no room for one token either.
    status, reply = post_raw(server, "/v1/completions", json.dumps({"prompt": [504] * CTX}).encode())
    assert_error(status, reply, 400, code="context_length_exceeded", param="prompt")
    messages = [{"role": "user", "content": "hello " * CTX}]
    status, reply = post_raw(server, "/v1/chat/completions", json.dumps({"messages": messages}).encode())
    assert_error(status, reply, 400, code="context_length_exceeded", param="messages")
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=MODEL, messages=messages, stream=True)
    assert e.value.code == "context_length_exceeded"


def test_huge_max_tokens_is_clamped(client):
    # A question the model answers in a few words and then ends: the huge budget is no error.
    for field in ("max_tokens", "max_completion_tokens"):
        r = client.chat.completions.create(model=MODEL, temperature=0, extra_body={field: 2**31 - 1}, messages=[
            {"role": "user", "content": "Reply with one word: yes or no. Is the sky blue?"}])
        assert r.choices[0].finish_reason in ("stop", "length")
        assert 0 < r.usage.completion_tokens <= CTX - r.usage.prompt_tokens


def test_huge_max_tokens_fills_the_context_exactly(ridge_bin, default_model):
    # A small context shows the clamp itself: generation stops where the context is full.
    small = start_server(ridge_bin, default_model, ctx_size=64)
    try:
        c = openai.OpenAI(base_url=small.api_url, api_key="unused", max_retries=0, timeout=60)
        for prompt_len in (60, 63):
            r = c.completions.create(model=MODEL, prompt=[504] * prompt_len, max_tokens=10**9, temperature=0,
                                     extra_body={"ignore_eos": True})
            assert r.choices[0].finish_reason == "length"
            assert r.usage.prompt_tokens == prompt_len
            assert r.usage.completion_tokens == 64 - prompt_len
        with pytest.raises(openai.BadRequestError) as e:
            c.completions.create(model=MODEL, prompt=[504] * 64, max_tokens=1)
        assert e.value.code == "context_length_exceeded"
        assert wait_idle(small)["ridge:kv_cache_blocks_used"] == 0
    finally:
        assert stop_server(small) == 0


def test_unknown_model_is_404(server, client):
    with pytest.raises(openai.NotFoundError) as e:
        client.completions.create(model="no-such-model", prompt="hi", max_tokens=2)
    assert e.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}], max_tokens=2)
    status, reply = server.request("GET", "/v1/models/no-such-model")
    assert_error(status, json.loads(reply), 404, code="model_not_found")


@pytest.mark.parametrize("method,path", [("GET", "/v1/nope"), ("POST", "/nope"), ("GET", "/v2/completions"),
                                         ("POST", "/v1/completion"), ("DELETE", "/v1/models")])
def test_unknown_route_is_404(server, method, path):
    status, reply = server.request(method, path, body=b"{}" if method == "POST" else None)
    assert_error(status, json.loads(reply), 404)


# ---- load and vanishing clients ----------------------------------------------------------------------

def test_200_concurrent_connections(server, client):
    n = 200
    statuses, failures = [None] * n, []

    def one(i):
        try:
            conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
            body = {"prompt": f"Item number {i} is", "max_tokens": 3, "temperature": 0.5, "seed": i}
            conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            conn.close()
            statuses[i] = r.status
            if r.status == 200:
                c = Completion.model_validate_json(data)
                assert c.usage.completion_tokens <= 3 and c.choices[0].finish_reason in ("stop", "length")
            else:
                assert_error(r.status, json.loads(data), r.status)
        except Exception as e:  # noqa: BLE001 - every failure is reported below
            failures.append(f"{i}: {e!r}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, 150 - (time.monotonic() - started)))
    assert not any(t.is_alive() for t in threads), "requests still hanging"
    assert not failures, failures[:5]
    assert set(statuses) <= {200, 429, 503}, {s: statuses.count(s) for s in set(statuses)}
    assert statuses.count(200) >= n // 2, {s: statuses.count(s) for s in set(statuses)}
    assert_idle(server)
    assert_still_serving(client)


def open_request(server, body):
    s = socket.create_connection((server.host, server.port), timeout=30)
    data = json.dumps(body).encode()
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (server.host.encode(), len(data)) + data)
    return s


def test_clients_that_vanish_mid_request_leak_nothing(server, client):
    before = server.metrics()[ABORTED]
    long = {"max_tokens": 1500, "ignore_eos": True, "temperature": 0.8}
    # Streaming clients: each reads its first token's event, then hangs up.
    streamers = [open_request(server, {"prompt": f"Once upon a time, story {i}:", "stream": True, **long}) for i in range(6)]
    for s in streamers:
        got = b""
        while b"data: " not in got:
            piece = s.recv(4096)
            assert piece, "the server closed a stream before its first token"
            got += piece
        assert got.startswith(b"HTTP/1.1 200")
    # Clients of whole responses: they hang up while their generation runs.
    waiters = [open_request(server, {"prompt": f"Chapter {i}.", **long}) for i in range(4)]
    deadline = time.monotonic() + 30
    while server.metrics()["ridge:num_requests_running"] < len(streamers) + len(waiters):
        assert time.monotonic() < deadline, "the requests never ran together"
        time.sleep(0.05)
    # And a few that never finish sending their request.
    half = socket.create_connection((server.host, server.port))
    half.sendall(b"POST /v1/completions HTTP/1.1\r\nContent-Length: 1000\r\n\r\n{\"prompt\": ")
    headers_only = socket.create_connection((server.host, server.port))
    headers_only.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
    for s in streamers + waiters + [half, headers_only]:
        s.close()

    m = assert_idle(server, timeout=10)  # well before 1500 tokens could have been generated
    assert m[ABORTED] - before == len(streamers) + len(waiters)
    assert_still_serving(client)


def test_sigterm_exits_zero_after_finishing_requests(ridge_bin, default_model):
    own = start_server(ridge_bin, default_model, ctx_size=256)
    try:
        c = openai.OpenAI(base_url=own.api_url, api_key="unused", max_retries=0, timeout=60)
        stream = c.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=24, temperature=0, stream=True,
                                      extra_body={"ignore_eos": True})
        chunks = iter(stream)
        texts = [next(chunks).choices[0].text]  # running now
        own.proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        rest = list(chunks)  # the request in flight finishes
        texts += [ch.choices[0].text for ch in rest]
        assert rest and rest[-1].choices[0].finish_reason == "length"
        assert len([t for t in texts if t]) == 24
        assert own.proc.wait(timeout=10) == 0
        assert time.monotonic() - signalled < 10
        assert "stopped" in own.log()
    finally:
        stop_server(own)


def test_sigterm_when_idle_exits_zero_at_once(ridge_bin, default_model):
    own = start_server(ridge_bin, default_model, ctx_size=256)
    try:
        # A client holding an idle keep-alive connection (as HTTP clients' pools do) does not hold it up.
        conn = http.client.HTTPConnection(own.host, own.port, timeout=10)
        conn.request("GET", "/v1/models")
        assert conn.getresponse().read()
        own.proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert own.proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 3
        conn.close()
    finally:
        stop_server(own)
