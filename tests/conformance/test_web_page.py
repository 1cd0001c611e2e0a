"""The web page of `ridge serve` in headless Chromium: it lists the model, a typed message sent with the
Send button streams a reply into #output piece by piece (the same greedy text the API gives), the live
metrics count the request, the roofline chart plots the recent engine steps, and screenshots are taken.
Skipped only when no Chromium is installed (tools/setup_test_deps.sh installs Debian's `chromium`).
With RIDGE_SCREENSHOT_DIR set, the roofline test saves its screenshot there."""
import json
import os
import pathlib
import re

import pytest

from cdp import Browser, find_chromium
from serve_fixture import running_server

QUESTION = "Write a short story about a robot who learns to paint."
MAX_TOKENS = 40


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found (chromium, chromium-browser, google-chrome): "
                    "tools/setup_test_deps.sh installs Debian's chromium")
    return path


@pytest.fixture(scope="module")
def server(ridge_bin, default_model, chromium):
    with running_server(ridge_bin, default_model) as s:
        yield s


def text_of(selector):
    return f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent"


def test_chat_page_streams_a_reply(server, chromium, tmp_path):
    with Browser(chromium, tmp_path / "profile") as page:
        page.navigate(server.base_url + "/")
        model_id = page.wait_for("document.querySelector('#model').options.length && document.querySelector('#model').value")
        assert model_id == "SmolLM2-135M-Instruct.Q4_1"
        assert page.evaluate(text_of("#model-name")) == f"{model_id} · context 2048"
        assert page.evaluate("document.querySelector('#send').disabled") is False
        assert page.evaluate("document.querySelector('#stop').disabled") is True

        # Greedy, so the reply can be compared with the API's.
        page.evaluate(f"document.querySelector('#temperature').value = '0';"
                      f"document.querySelector('#max-tokens').value = '{MAX_TOKENS}'")
        # Every change to the reply's text while it streams is counted.
        page.evaluate("""window.replyUpdates = [];
            new MutationObserver(() => {
              const turn = document.querySelector('#output .turn.assistant');
              if (turn && turn.classList.contains('streaming') && turn.textContent) window.replyUpdates.push(turn.textContent.length);
            }).observe(document.querySelector('#output'), {childList: true, subtree: true, characterData: true})""")
        page.type_text("#prompt", QUESTION)
        assert page.evaluate("document.querySelector('#prompt').value") == QUESTION
        page.click("#send")

        # Text appears in the assistant turn while it is still streaming, then the turn ends with a note.
        first = page.wait_for("(() => { const t = document.querySelector('#output .turn.assistant');"
                              " return t && t.textContent ? t.textContent : null; })()", timeout=60)
        assert first.strip()
        page.wait_for("document.querySelector('#output .note') !== null", timeout=90)
        assert page.evaluate("document.querySelector('#output .turn.error')") is None, page.evaluate(text_of("#output"))
        reply = page.evaluate(text_of("#output .turn.assistant"))
        note = page.evaluate(text_of("#output .note"))
        updates = page.evaluate("window.replyUpdates")
        assert page.evaluate(text_of("#output .turn.user")) == QUESTION
        assert page.evaluate("document.querySelector('#prompt').value") == ""
        assert page.evaluate("document.querySelector('#output .turn.assistant').classList.contains('streaming')") is False
        assert page.evaluate("document.querySelector('#send').disabled") is False

        assert len(updates) >= 5, updates  # the reply grew piece by piece, not in one go
        assert updates == sorted(updates)
        assert updates[-1] == page.evaluate("document.querySelector('#output .turn.assistant').textContent.length")
        assert f"{MAX_TOKENS} tokens" in note and "finish: length" in note, note

        # The live metrics panel (polled each second) counts the finished request.
        page.wait_for(f"/^\\d+ \\/ [1-9]\\d* \\/ 0$/.test({text_of('#m-requests')})", timeout=10)
        page.wait_for(f"{text_of('#m-queue')} === '0 / 0'", timeout=10)
        assert page.evaluate(text_of("#m-kv")).endswith(" blocks)")

        shot = page.screenshot(tmp_path / "web_page.png")

        status, body = server.request("POST", "/v1/chat/completions", {
            "messages": [{"role": "user", "content": QUESTION}], "temperature": 0, "max_tokens": MAX_TOKENS})
        assert status == 200
        assert reply == json.loads(body)["choices"][0]["message"]["content"]

    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert int.from_bytes(data[16:20], "big") == 1200 and int.from_bytes(data[20:24], "big") == 800  # IHDR size
    print(f"screenshot: {shot}")


def test_roofline_plots_the_engine_steps(server, chromium, tmp_path):
    # ridge serve sets up a step model by default, so /metrics/json has "slo" without --slo.
    for prompt in ("The capital of France is", "Once upon a time"):
        status, body = server.request("POST", "/v1/completions", {"prompt": prompt, "temperature": 0, "max_tokens": 8})
        assert status == 200, body
    status, body = server.request("GET", "/metrics/json")
    assert status == 200
    slo = json.loads(body)["slo"]
    assert slo is not None and slo["memory_bw"] > 0 and slo["compute_peak"] > 0 and slo["steps"], slo

    with Browser(chromium, tmp_path / "profile") as page:
        page.navigate(server.base_url + "/")
        # The metrics poll has run once the caption is filled in.
        caption = page.wait_for(text_of("#roofline-caption"), timeout=10)
        points = page.evaluate("document.querySelectorAll('#roofline .step-point').length")
        assert points > 0, caption
        assert points <= 240  # one per recent step (the server keeps 240)
        assert "decode at " in caption and "% of memory bandwidth" in caption and "step model error " in caption, caption
        assert page.evaluate("document.querySelector('#roofline-box').hidden") is False
        ticks = page.evaluate("[...document.querySelectorAll('#roofline text')].map((t) => t.textContent)")
        assert any(t.endswith("FLOP/s") and t.split()[0].replace(".", "").isdigit() for t in ticks), ticks
        assert any(t.startswith("compute ") for t in ticks) and any(t.startswith("memory ") for t in ticks), ticks
        # Coloured by prefill share: pure decode blue (the decode steps), pure prefill orange.
        fills = page.evaluate("[...document.querySelectorAll('#roofline .step-point')].map((c) => c.getAttribute('fill'))")
        assert all(re.fullmatch(r"rgb\(\d+,\d+,\d+\)", f) for f in fills), fills
        assert "rgb(47,111,223)" in fills, fills

        # The page's drawing itself, between two polls: goodput from "all", and no step model at all.
        shown = page.evaluate("""(() => {
            drawRoofline({memory_bw: 1e10, compute_peak: 1e12, measured_machine: true, decode_bandwidth_fraction: 0.5,
                          model_error: 0.25, goodput: {all: {met: 3, missed: 1}},
                          steps: [{s: 0.01, flops: 1e9, bytes: 1e8, tokens: 4, decode: 4, predicted_s: 0.01},
                                  {s: 0.02, flops: 1e10, bytes: 1e8, tokens: 64, decode: 0, predicted_s: 0.02}]});
            const withModel = [document.querySelectorAll('#roofline .step-point').length,
                               document.querySelector('#roofline-caption').textContent];
            drawRoofline(null);
            return [...withModel, document.querySelector('#roofline-box').hidden,
                    document.querySelector('#roofline-caption').textContent];
        })()""")
        assert shown == [2, "decode at 50.0% of memory bandwidth · step model error 25.0% · goodput 75.0% (3 / 4)",
                         True, "roofline: the engine has no step model"], shown

        # Back to the live chart for the screenshot.
        page.wait_for(f"{text_of('#roofline-caption')}.startsWith('decode at') && !/goodput 75.0%/.test({text_of('#roofline-caption')})",
                      timeout=10)
        page.evaluate("document.querySelector('#roofline-caption').scrollIntoView({block: 'end'})")
        out_dir = os.environ.get("RIDGE_SCREENSHOT_DIR")
        if out_dir:
            pathlib.Path(out_dir).mkdir(parents=True, exist_ok=True)
            shot = page.screenshot(pathlib.Path(out_dir) / "web_page_roofline.png")
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            print(f"screenshot: {shot}")
