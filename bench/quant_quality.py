#!/usr/bin/env python3
"""Quality of quantized artifacts against their base: next-token KL, top-1 agreement and
perplexity (`ridge eval kl`) beside HumanEval pass@1 (`ridge eval humaneval`), one table.

    python3 bench/quant_quality.py --base MODEL.gguf [--types Q8_0,Q6_K,...] [--limit N] [--chunks N]
        [--imatrix FILE]

An artifact is a `ridge quantize --type` name, MXFP4 (every layer matrix MXFP4: MXFP4_MOE with
--tensor-type), or NAME+imatrix / NAME+awq / NAME+awq-plain: quantized with --imatrix FILE, and with
--awq (its weighted or plain rounding) on top.

Each artifact is requantized from the base with `ridge quantize`; the base is judged too
(pass@1 of the file as shipped). Tests the seed's claim: which artifacts look fine on
perplexity / KL but lose on the task?
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)


def quantize_args(artifact, imatrix):
    name, _, variant = artifact.partition("+")
    args = ["--type", "MXFP4_MOE", "--tensor-type", r"blk\.=mxfp4"] if name == "MXFP4" else ["--type", name]
    if variant:
        if not imatrix:
            sys.exit(f"{artifact} needs --imatrix")
        args += ["--imatrix", imatrix] + {"imatrix": [], "awq": ["--awq"], "awq-plain": ["--awq", "--awq-rounding", "plain"]}[variant]
    return args


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True)
    ap.add_argument("--types", default="Q8_0,Q6_K,Q4_K_M,Q4_0,Q3_K_M,Q2_K")
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    ap.add_argument("--text", default=argparse.__file__, help="KL text (default: Python's argparse.py)")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--limit", type=int, default=0, help="HumanEval problems (0: all 164; -1: none, KL only)")
    ap.add_argument("--imatrix", help="the importance matrix of the +imatrix / +awq artifacts")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    subprocess.run([sys.executable, str(ROOT / "tools" / "fetch_model.py"), "humaneval"], check=True, capture_output=True)

    rows = []
    with tempfile.TemporaryDirectory(prefix="ridge-qq-") as tmp:
        artifacts = [("base", a.base)]
        for t in a.types.split(","):
            out = os.path.join(tmp, f"{t}.gguf")
            cmd = [a.ridge, "quantize", a.base, out, "-q", "--json", "-t", str(a.threads)] + quantize_args(t, a.imatrix)
            q = run_json(cmd)
            artifacts.append((t, out))
            print(f"quantized {t}: {q['bits_per_weight']:.2f} bits/weight in {q['seconds']:.1f} s", file=sys.stderr, flush=True)
        for name, path in artifacts:
            row = {"artifact": name, "bytes": os.path.getsize(path)}
            if name != "base":
                k = run_json([a.ridge, "eval", "kl", "--base", a.base, "-m", path, "-f", a.text, "--chunks", str(a.chunks),
                              "-c", str(a.ctx), "-t", str(a.threads), "--json"])
                row.update(kl_mean=k["kl_mean"], kl_p99=k["kl_p99"], top1=k["top1_agreement"], ppl=k["ppl_model"],
                           ppl_base=k["ppl_base"])
            if a.limit >= 0:
                h = run_json([a.ridge, "eval", "humaneval", "-m", path, "--limit", str(a.limit), "-t", str(a.threads), "--json"])
                row.update(pass_at_1=h["pass_at_1"], passed=h["passed"], problems=h["problems"])
            else:
                row.update(pass_at_1=float("nan"), passed=0, problems=0)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    base = rows[0]
    print(f"\nbase {pathlib.Path(a.base).name}; KL text {pathlib.Path(a.text).name} ({a.chunks} x {a.ctx} tokens); "
          f"HumanEval {base['problems']} problems, greedy, chat prompts")
    print(f"{'artifact':14} {'MiB':>7} {'KL mean':>9} {'KL p99':>8} {'top-1':>7} {'ppl':>8} {'pass@1':>7} {'Δ pts':>6}")
    for r in rows:
        kl = f"{r['kl_mean']:9.5f} {r['kl_p99']:8.4f} {100 * r['top1']:6.2f}% {r['ppl']:8.4f}" if "kl_mean" in r else \
             f"{'-':>9} {'-':>8} {'-':>7} {rows[1]['ppl_base'] if len(rows) > 1 else 0:8.4f}"
        drop = 100 * (r["pass_at_1"] - base["pass_at_1"])
        print(f"{r['artifact']:14} {r['bytes'] / 2**20:7.1f} {kl} {100 * r['pass_at_1']:6.2f}% {drop:+6.1f}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
