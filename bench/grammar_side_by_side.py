#!/usr/bin/env python3
"""ridge's grammar engine beside llguidance and xgrammar in one script: the same corpus
(bench/grammar_corpus: JSON Schemas of real APIs, regexes, GBNF grammars), the same vocabulary (a
real model's, written by `ridge bench grammar --dump-vocab`), one core each (taskset), walks of at
most --steps steps. Prints compile and per-token mask time p50 / p99 / max per engine.

    pip install llguidance xgrammar          # benchmark-only; ridge never imports them
    python3 bench/grammar_side_by_side.py [-m qwen2.5-coder-0.5b] [--steps 64] [--json out.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "bench", "grammar_corpus")


def one_core(cmd):
    return ["taskset", "-c", "0", *cmd]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("-m", "--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--json", metavar="FILE")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vocab, ridge_json, anchors_json = (os.path.join(tmp, f) for f in ("vocab.json", "ridge.json", "anchors.json"))
        subprocess.run(one_core([a.ridge, "bench", "grammar", "-m", a.model, "--schemas", os.path.join(CORPUS, "schemas"),
                                 "--regex", os.path.join(CORPUS, "regex.txt"), "--gbnf", os.path.join(CORPUS, "gbnf"),
                                 "--steps", str(a.steps), "--dump-vocab", vocab, "--json", ridge_json]),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(one_core([sys.executable, os.path.join(ROOT, "bench", "grammar_anchors.py"), "--vocab", vocab,
                                 "--steps", str(a.steps), "--json", anchors_json]),
                       check=True, stdout=subprocess.DEVNULL)
        ridge = json.load(open(ridge_json))
        anchors = json.load(open(anchors_json))
    rows = {"ridge": {"grammars": ridge["grammars"], "refused": ridge["refused"],
                      "compile_ms": [ridge["compile_seconds"][k] * 1e3 for k in ("p50", "p99", "max")],
                      "mask_us": [ridge["mask_seconds"][k] * 1e6 for k in ("p50", "p99", "max")],
                      "masks": ridge["mask_seconds"]["count"]}}
    for name, r in anchors["engines"].items():
        k = r["all"]
        rows[name] = {"grammars": k["items"], "refused": k["refused_count"],
                      "compile_ms": [k["compile_ms"][q] for q in ("p50", "p99", "max")],
                      "mask_us": [k["mask_us"][q] for q in ("p50", "p99", "max")], "masks": k["mask_us"]["n"]}
    print(f"{a.model}: {ridge['n_vocab']} tokens; {ridge['grammars']} grammars; walks of at most {a.steps} steps; one core each")
    print(f"| engine | grammars | refused | compile p50 / p99 / max (ms) | masks | mask p50 / p99 / max (us) |")
    print("|---|---|---|---|---|---|")
    for name, r in rows.items():
        c, m = r["compile_ms"], r["mask_us"]
        print(f"| {name} | {r['grammars']} | {r['refused']} | {c[0]:.2f} / {c[1]:.1f} / {c[2]:.1f} | {r['masks']} | "
              f"{m[0]:.1f} / {m[1]:.0f} / {m[2]:.0f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "steps": a.steps, "engines": rows}, f, indent=1)


if __name__ == "__main__":
    main()
