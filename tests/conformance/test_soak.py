"""bench/soak.py, briefly (issue 48): 40 seconds of the soak's whole mix (streaming and plain chat and
completions, n > 1, structured output, tools, shared prefixes with the KV tiers on, prompts past the context,
cancellations, clients that vanish, slow readers, bursts past --http-threads) against a real `ridge serve`
with prompt-lookup speculation. No crash, no unexpected 5xx, every kind of request answered, and a report
(soak.json, soak.svg) written. The flatness and latency targets need the long run (python3 bench/soak.py)."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOAK = ROOT / "bench" / "soak.py"


def soak_module():
    spec = importlib.util.spec_from_file_location("soak", SOAK)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_short_soak_answers_every_kind_without_5xx_or_crash(ridge_bin, default_model, tmp_path):
    out = tmp_path / "soak"
    cmd = [sys.executable, str(SOAK), "--duration", "40", "--concurrency", "4", "--sample-interval", "5",
           "--ridge", ridge_bin, "--model", default_model, "--out", str(out), "--request-timeout", "90",
           "--no-fail"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    tail = f"stdout:\n{run.stdout[-6000:]}\nstderr:\n{run.stderr[-3000:]}"
    assert run.returncode == 0, tail
    report = json.loads((out / "soak.json").read_text())

    assert report["crash"] is None, report["crash"]
    assert report["unexpected_5xx"] == 0, json.dumps(report["unexpected_failures"], indent=1)
    assert not report["client_bugs"], report["client_bugs"]  # soak.py itself raised: a bug in the script
    kinds = [*soak_module().MIX, "burst"]
    unanswered = [k for k in kinds if report["kinds"].get(k, {}).get("answered", 0) < 1]
    assert not unanswered, (unanswered, json.dumps(report["kinds"], indent=1), tail)
    # A prompt past the context is refused with 400 (context_length_exceeded), counted apart.
    assert report["kinds"]["too_long"]["outcomes"].get("expected_400", 0) >= 1
    assert all("context_length_exceeded" in cause for cause in report["expected_failures"])

    # The report: samples of the server process and /metrics, one line per request, a well-formed plot.
    assert len(report["samples"]) >= 4
    assert all(s["rss_bytes"] and s["fds"] and s["threads"] for s in report["samples"])
    assert any(s["kv_blocks_total"] for s in report["samples"])
    lines = (out / "requests.jsonl").read_text().splitlines()
    assert len(lines) == report["requests"] > 0
    svg = ET.parse(out / "soak.svg").getroot()
    assert svg.tag.endswith("svg") and len(svg.findall(".//{http://www.w3.org/2000/svg}polyline")) >= 6
