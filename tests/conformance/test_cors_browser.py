"""CORS in a real browser: a page served from another origin (a Python http.server on another port) calls
`ridge serve`'s /v1/chat/completions with fetch() and an Authorization header, so headless Chromium sends
a preflight first. With --allowed-origins naming the page's origin (or `*`) the preflight is answered
without the API key, the call succeeds, the reply and the exposed X-Request-Id reach the page, and a
streamed reply can be read; without the flag, or from an origin not listed, the browser blocks the call
and fetch() rejects with a TypeError. Skipped only when no Chromium is installed, like test_web_page."""
import functools
import http.server
import json
import threading
import time

import pytest

from cdp import Browser, find_chromium
from serve_fixture import running_server

API_KEY = "cors-secret"

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>another origin</title></head><body>
<script>
// fetch() to ridge from this origin; the page's result, or the error the browser gave.
window.callRidge = async (url, body) => {
  try {
    const r = await fetch(url, {method: 'POST', body: JSON.stringify(body), headers: {
      'Content-Type': 'application/json', 'Authorization': 'Bearer %(key)s', 'X-Request-Id': 'cors-page-1'}});
    if (!body.stream) return {status: r.status, requestId: r.headers.get('X-Request-Id'), body: await r.json()};
    const reader = r.body.getReader(), decoder = new TextDecoder();
    let text = '', reads = 0;
    for (;;) {
      const {done, value} = await reader.read();
      if (done) break;
      reads += 1;
      text += decoder.decode(value, {stream: true});
    }
    return {status: r.status, requestId: r.headers.get('X-Request-Id'), text, reads};
  } catch (e) {
    return {error: e.name, message: e.message};
  }
};
</script></body></html>
""" % {"key": API_KEY}


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found (chromium, chromium-browser, google-chrome): "
                    "tools/setup_test_deps.sh installs Debian's chromium")
    return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page_origin(tmp_path_factory):
    """http://127.0.0.1:PORT serving page.html from a thread of this process."""
    folder = tmp_path_factory.mktemp("cors_page")
    (folder / "page.html").write_text(PAGE)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def allowing(ridge_bin, default_model, chromium, page_origin):
    with running_server(ridge_bin, default_model, "--api-key", API_KEY, "--allowed-origins", page_origin,
                        "--log-format", "json") as s:
        yield s


@pytest.fixture(scope="module")
def not_allowing(ridge_bin, default_model, chromium):
    with running_server(ridge_bin, default_model, "--api-key", API_KEY, "--log-format", "json") as s:
        yield s


def call_from_page(chromium, profile, page_url, server, body):
    with Browser(chromium, profile) as page:
        page.navigate(page_url)
        assert page.evaluate("location.origin") != server.base_url  # really another origin
        return page.evaluate(f"window.callRidge({json.dumps(server.api_url + '/chat/completions')}, {json.dumps(body)})")


CHAT = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8, "temperature": 0}


def access_log(server):
    with open(server.log_path, errors="replace") as f:
        text = f.read()
    return [json.loads(line) for line in text[:text.rfind("\n") + 1].splitlines()]


def chat_requests(server, request_id="cors-page-1", until=None, timeout=10):
    """(method, status) of each logged /v1/chat/completions request with the page's request id (the
    preflight carries none: any id the server made up); waits up to `timeout` for `until`."""
    deadline = time.monotonic() + timeout
    while True:
        lines = [l for l in access_log(server) if l.get("event") == "http_request" and l["path"] == "/v1/chat/completions"]
        methods = [(l["method"], l["status"]) for l in lines if l["method"] == "OPTIONS" or l["request_id"] == request_id]
        if until is None or until in methods or time.monotonic() > deadline:
            return methods
        time.sleep(0.05)


def test_allowed_origin_gets_the_reply(chromium, allowing, page_origin, tmp_path):
    result = call_from_page(chromium, tmp_path / "profile", page_origin + "/page.html", allowing, CHAT)
    assert "error" not in result, result
    assert result["status"] == 200, result
    assert result["requestId"] == "cors-page-1"  # readable: the server exposes X-Request-Id
    assert result["body"]["object"] == "chat.completion"
    assert result["body"]["choices"][0]["message"]["content"]

    # The browser asked first (a preflight, answered without the key), then sent the POST with it.
    methods = chat_requests(allowing, until=("POST", 200))
    assert ("OPTIONS", 204) in methods and ("POST", 200) in methods, methods
    assert methods.index(("OPTIONS", 204)) < methods.index(("POST", 200)), methods


def test_allowed_origin_streams(chromium, allowing, page_origin, tmp_path):
    result = call_from_page(chromium, tmp_path / "profile", page_origin + "/page.html", allowing,
                            {**CHAT, "max_tokens": 16, "stream": True})
    assert "error" not in result, result
    assert result["status"] == 200, result
    events = [line[len("data: "):] for line in result["text"].splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]", result["text"]
    content = "".join(json.loads(e)["choices"][0]["delta"].get("content") or ""
                      for e in events[:-1] if json.loads(e).get("choices"))
    assert content


def test_without_the_flag_the_browser_blocks_the_call(chromium, not_allowing, page_origin, tmp_path):
    result = call_from_page(chromium, tmp_path / "profile", page_origin + "/page.html", not_allowing, CHAT)
    assert result.get("error") == "TypeError", result
    # The preflight reached the server, got no CORS headers (and, without the key, a 401); no POST followed.
    time.sleep(0.3)
    assert chat_requests(not_allowing) == [("OPTIONS", 401)]


def test_an_origin_not_listed_is_blocked(chromium, allowing, page_origin, tmp_path):
    # The same page from "localhost" is another origin than "127.0.0.1" (the one listed).
    other = page_origin.replace("127.0.0.1", "localhost")
    before = chat_requests(allowing)
    result = call_from_page(chromium, tmp_path / "profile", other + "/page.html", allowing, CHAT)
    assert result.get("error") == "TypeError", result
    time.sleep(0.3)
    assert chat_requests(allowing)[len(before):] == [("OPTIONS", 401)]


def test_any_origin(ridge_bin, default_model, chromium, page_origin, tmp_path):
    with running_server(ridge_bin, default_model, "--api-key", API_KEY, "--allowed-origins", "*") as server:
        result = call_from_page(chromium, tmp_path / "profile", page_origin + "/page.html", server, CHAT)
    assert "error" not in result, result
    assert result["status"] == 200 and result["requestId"] == "cors-page-1", result
    assert result["body"]["choices"][0]["message"]["content"]
