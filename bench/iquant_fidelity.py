#!/usr/bin/env python3
"""Fidelity of the i-quant artifacts ridge writes, judged against llama.cpp on the same files.

For a base model (default: the real Qwen2.5-Coder-0.5B-Instruct), `ridge imatrix` on a text, then for
each type `ridge quantize --type T --imatrix` (byte-identical to llama-quantize's file), and:
  1. next-token KL(llama.cpp || ridge) on the artifact itself: both engines' logits at every position
     of the text's first tokens (llama.cpp through llama-cpp-python, tests/conformance/llama_oracle.py),
     against the same figure for the base file (the bound the existing types meet);
  2. the artifact against the base: ridge's `eval kl` beside llama-perplexity's --kl-divergence (the
     same chunks, the second half of each scored), mean KL and top-1 agreement.

    python3 bench/iquant_fidelity.py [--base MODEL] [--types IQ4_XS,IQ3_XXS,IQ2_XXS] [--chunks 4] [--json]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))


def log_softmax(x):
    x = x - x.max(axis=1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=1, keepdims=True))


def run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    return out.stdout


def engine_kl(ridge, path, ids):
    """KL(llama.cpp || ridge) per position and top-1 agreement on one file."""
    from llama_oracle import LlamaOracle
    oracle = LlamaOracle(path, flash_attn=False)
    try:
        ref = log_softmax(oracle.logits(ids).astype(np.float64))
    finally:
        oracle.close()
    with tempfile.NamedTemporaryFile(suffix=".bin") as out:
        run([ridge, "logits", "-m", path, "--tokens", ",".join(map(str, ids)), "-o", out.name])
        got = log_softmax(np.fromfile(out.name, dtype=np.float32).reshape(len(ids), -1).astype(np.float64))
    kl = (np.exp(ref) * (ref - got)).sum(axis=1)
    return {"kl_mean": float(kl.mean()), "kl_max": float(kl.max()), "top1": float((ref.argmax(1) == got.argmax(1)).mean())}


def llama_perplexity_kl(binary, base_logits, path, text, ctx, chunks, threads):
    out = subprocess.run([binary, "-m", path, "-f", text, "-c", str(ctx), "--chunks", str(chunks), "-t", str(threads),
                          "--kl-divergence-base", base_logits, "--kl-divergence"], capture_output=True, text=True)
    log = out.stdout + out.stderr
    if out.returncode != 0:
        sys.exit(f"llama-perplexity failed on {path}:\n{log[-2000:]}")
    kld = re.search(r"Mean\s+KLD:\s+([-0-9.e]+)", log)
    top = re.search(r"Same top p:\s+([-0-9.e]+)", log)
    return {"kl_mean": float(kld.group(1)) if kld else None, "top1": float(top.group(1)) / 100 if top else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("--perplexity", default=os.path.join(HOME, "llama.cpp", "build-avx512", "bin", "llama-perplexity"))
    ap.add_argument("--base", default=os.path.join(HOME, "models", "Qwen2.5-Coder-0.5B-Instruct.gguf"))
    ap.add_argument("--types", default="IQ4_XS,IQ3_XXS,IQ2_XXS")
    ap.add_argument("--text", default=argparse.__file__, help="calibration and KL text (default: Python's argparse.py)")
    ap.add_argument("-c", "--ctx", type=int, default=512)
    ap.add_argument("--chunks", type=int, default=4)
    ap.add_argument("--positions", type=int, default=128, help="positions of the engine-vs-engine KL")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="iq_fidelity_")
    imatrix = os.path.join(work, "imatrix.gguf")
    run([a.ridge, "imatrix", "-m", a.base, "-f", a.text, "-o", imatrix, "-c", str(a.ctx), "--chunks", str(a.chunks),
         "-t", str(a.threads)])
    ids = [int(x) for x in run([a.ridge, "tokenize", "-m", a.base, "-f", a.text, "--ids-only"]).split()][: a.positions]
    base_logits = os.path.join(work, "base.kld")
    if os.path.exists(a.perplexity):
        run([a.perplexity, "-m", a.base, "-f", a.text, "-c", str(a.ctx), "--chunks", str(a.chunks), "-t", str(a.threads),
             "--kl-divergence-base", base_logits])
    result = {"base": os.path.basename(a.base), "text": a.text, "ctx": a.ctx, "chunks": a.chunks, "positions": len(ids),
              "rows": {}}
    result["rows"]["base"] = {"engines": engine_kl(a.ridge, a.base, ids)}
    for t in a.types.split(","):
        path = os.path.join(work, f"{t}.gguf")
        run([a.ridge, "quantize", a.base, path, "--type", t, "--imatrix", imatrix])
        row = {"bytes": os.path.getsize(path), "engines": engine_kl(a.ridge, path, ids)}
        row["ridge_eval_kl"] = json.loads(run([a.ridge, "eval", "kl", "--base", a.base, "-m", path, "-f", a.text, "-c",
                                               str(a.ctx), "--chunks", str(a.chunks), "-t", str(a.threads), "--json"]))
        if os.path.exists(a.perplexity):
            row["llama_perplexity"] = llama_perplexity_kl(a.perplexity, base_logits, path, a.text, a.ctx, a.chunks, a.threads)
        result["rows"][t] = row
        print(f"{t}: {json.dumps(row)}", file=sys.stderr)
    if a.json:
        print(json.dumps(result, indent=2))
        return
    print(f"\n{result['base']}, imatrix and KL text {os.path.basename(a.text)}, {a.chunks} chunks of {a.ctx}")
    print("\n| file | MiB | KL(llama.cpp ‖ ridge) mean / max, same file | top-1 agree | ridge eval kl vs base | "
          "llama-perplexity KLD vs base | ridge / llama.cpp top-1 vs base |")
    print("|---|---|---|---|---|---|---|")
    def fmt(v, spec):
        return "–" if v is None else format(v, spec)

    for name, row in result["rows"].items():
        e = row["engines"]
        rk, lk = row.get("ridge_eval_kl", {}), row.get("llama_perplexity", {})
        r_kl = rk.get("kl_mean", rk.get("mean_kl"))
        r_top = rk.get("top1", rk.get("top1_agreement"))
        mib = row.get("bytes", os.path.getsize(a.base)) / 2**20
        print(f"| {name} | {mib:.0f} | {e['kl_mean']:.2e} / {e['kl_max']:.2e} | {e['top1']:.3f} | {fmt(r_kl, '.4f')} | "
              f"{fmt(lk.get('kl_mean'), '.4f')} | {fmt(r_top, '.3f')} / {fmt(lk.get('top1'), '.3f')} |")

if __name__ == "__main__":
    main()
