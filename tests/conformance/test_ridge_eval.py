"""`ridge eval kl`, `ridge eval humaneval`, `ridge imatrix` and `ridge quantize --gate` end to end
on the default model: the HumanEval harness passes every canonical solution, KL of a model against
itself is zero, an importance matrix lowers the KL of a low-bit artifact on its own calibration
text, and a gate that is missed exits 3 and keeps the file with a report saying so.
"""
import argparse
import json
import os
import subprocess
import sys

import gguf
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT = argparse.__file__  # a real English + Python text every machine with python3 has


@pytest.fixture(scope="module")
def humaneval_data():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fetch_model.py"), "humaneval"],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def kl(ridge_bin, base, model, chunks=4):
    return run_json([ridge_bin, "eval", "kl", "--base", str(base), "-m", str(model), "-f", TEXT,
                     "--chunks", str(chunks), "-c", "256", "--json"])


def test_harness_passes_every_canonical_solution(ridge_bin, humaneval_data):
    r = run_json([ridge_bin, "eval", "humaneval", "--check-harness", "--json"])
    assert r["problems"] == 164
    assert r["failed"] == []


def test_humaneval_reports_each_problem(ridge_bin, default_model, humaneval_data, tmp_path):
    results = tmp_path / "he.jsonl"
    r = run_json([ridge_bin, "eval", "humaneval", "-m", default_model, "--limit", "3", "-n", "64", "--json",
                  "-o", str(results)])
    assert r["problems"] == 3 and 0 <= r["passed"] <= 3
    assert r["prompt_style"] == "chat"  # the model has a chat template
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [row["task_id"] for row in rows] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    for row in rows:
        assert row["status"] in ("passed", "failed", "timed out")
        assert 0 < row["completion_tokens"] <= 64
        assert row["solution"].startswith("from typing import List") or "def " in row["solution"]


def test_kl_of_a_model_against_itself_is_zero(ridge_bin, default_model):
    r = kl(ridge_bin, default_model, default_model, chunks=2)
    assert r["scored_tokens"] == 2 * 127  # positions n_ctx/2 .. n_ctx-2 predict the next, as llama-perplexity
    assert r["kl_mean"] < 1e-6 and r["top1_agreement"] == 1.0
    assert r["ppl_base"] == pytest.approx(r["ppl_model"], rel=1e-6)


def test_imatrix_lowers_kl_and_is_recorded(ridge_bin, default_model, tmp_path):
    imatrix = tmp_path / "imatrix.gguf"
    subprocess.run([ridge_bin, "imatrix", "-m", default_model, "-f", TEXT, "-o", str(imatrix), "--chunks", "6",
                    "-c", "256"], check=True, capture_output=True)
    reader = gguf.GGUFReader(str(imatrix))
    assert reader.fields["general.type"].contents() == "imatrix"
    names = {t.name for t in reader.tensors}
    assert "blk.0.attn_q.weight.in_sum2" in names and "blk.0.ffn_down.weight.counts" in names
    plain, weighted = tmp_path / "q4_0.gguf", tmp_path / "q4_0_imatrix.gguf"
    for out, extra in ((plain, []), (weighted, ["--imatrix", str(imatrix)])):
        subprocess.run([ridge_bin, "quantize", default_model, str(out), "--type", "Q4_0", "-q"] + extra,
                       check=True, capture_output=True)
    fields = gguf.GGUFReader(str(weighted)).fields
    assert fields["quantize.imatrix.chunks_count"].contents() == 6
    assert fields["quantize.imatrix.entries_count"].contents() == len(names) // 2
    kl_plain, kl_weighted = kl(ridge_bin, default_model, plain), kl(ridge_bin, default_model, weighted)
    assert kl_weighted["kl_mean"] < kl_plain["kl_mean"], (kl_weighted, kl_plain)


def test_gate_fails_keeps_the_file_and_says_so(ridge_bin, default_model, tmp_path):
    out = tmp_path / "q2k.gguf"
    r = subprocess.run([ridge_bin, "quantize", default_model, str(out), "--type", "Q2_K", "-q",
                        "--gate", f"max-kl=0.01,text={TEXT},chunks=2,ctx=256"], capture_output=True, text=True)
    assert r.returncode == 3, r.stderr[-2000:]
    assert out.exists()
    report = json.loads((tmp_path / "q2k.gguf.gate.json").read_text())
    assert report["passed"] is False and report["kl"]["passed"] is False
    assert report["kl"]["mean"] > 0.01


def test_gate_passes_a_close_artifact(ridge_bin, default_model, tmp_path):
    out = tmp_path / "q8.gguf"
    r = subprocess.run([ridge_bin, "quantize", default_model, str(out), "--type", "Q8_0", "-q",
                        "--gate", f"max-kl=0.05,text={TEXT},chunks=2,ctx=256"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((tmp_path / "q8.gguf.gate.json").read_text())["passed"] is True


@pytest.mark.parametrize("spec", ["max-kl=abc", "colour=blue", "base=x.gguf", "max-kl"])
def test_bad_gate_fails_before_quantizing(ridge_bin, default_model, tmp_path, spec):
    out = tmp_path / "bad.gguf"
    r = subprocess.run([ridge_bin, "quantize", default_model, str(out), "--type", "Q8_0", "-q", "--gate", spec],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "--gate" in r.stderr
    assert not out.exists()


def test_eval_errors_are_clear(ridge_bin, default_model, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "X/0"}\n')
    r = subprocess.run([ridge_bin, "eval", "humaneval", "-m", default_model, "--data", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and "line 1" in r.stderr
    r = subprocess.run([ridge_bin, "eval", "kl", "--base", default_model, "-m", "/nonexistent.gguf", "-f", TEXT],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "error:" in r.stderr
