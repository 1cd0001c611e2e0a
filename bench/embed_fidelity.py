#!/usr/bin/env python3
"""Fidelity of ridge's embeddings against sentence-transformers over a larger corpus than the tests run
(EmbeddingGemma's reference takes about a second a text on 2 threads): cosine of every vector at each
--dtype, and the retrieval set's ranking, written as JSON.

    python3 bench/embed_fidelity.py --model embeddinggemma-300m --texts 500 --out results.json
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
RIDGE = os.environ.get("RIDGE_BIN") or os.path.join(ROOT, "build", "ridge")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="embeddinggemma-300m")
    ap.add_argument("--texts", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtypes", default="f32,bf16,q8_0")
    ap.add_argument("--out")
    args = ap.parse_args()
    import embedding_corpus
    import st_reference
    directory = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fetch_model.py"), args.model], check=True,
                               capture_output=True, text=True).stdout.strip().splitlines()[-1]
    texts = embedding_corpus.texts(args.texts)
    start = time.monotonic()
    ref = st_reference.encode(directory, texts, threads=args.threads)
    st_seconds = time.monotonic() - start
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    report = {"model": args.model, "texts": len(texts), "sentence_transformers_seconds": st_seconds, "dtypes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "texts.jsonl")
        with open(src, "w") as f:
            f.writelines(json.dumps(t) + "\n" for t in texts)
        for dtype in args.dtypes.split(","):
            dst = os.path.join(tmp, f"{dtype}.jsonl")
            start = time.monotonic()
            subprocess.run([RIDGE, "embed", "-m", directory, "-i", src, "-o", dst, "-t", str(args.threads), "--dtype", dtype],
                           check=True, capture_output=True)
            seconds = time.monotonic() - start
            ours = np.array([json.loads(line)["embedding"] for line in open(dst)], dtype=np.float32)
            ours /= np.linalg.norm(ours, axis=1, keepdims=True)
            cos = (ours * ref).sum(axis=1)
            worst = int(np.argmin(cos))
            report["dtypes"][dtype] = {"cosine_min": float(cos.min()), "cosine_mean": float(cos.mean()),
                                       "below_0.9999": int((cos < 0.9999).sum()), "worst_text": texts[worst][:120],
                                       "ridge_seconds": seconds}
            print(f"{args.model} {dtype}: {len(texts)} texts, cosine min {cos.min():.7f} mean {cos.mean():.7f}, "
                  f"{int((cos < 0.9999).sum())} below 0.9999; ridge {seconds:.1f} s (load included), "
                  f"sentence-transformers {st_seconds:.1f} s", flush=True)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    report["cpu"] = cpu
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
