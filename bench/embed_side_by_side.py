#!/usr/bin/env python3
"""Embeddings per second, side by side: `ridge embed` against sentence-transformers (CPU PyTorch, the
model's own pipeline) and llama.cpp's llama-embedding (on GGUFs of the same model made by llama.cpp's
own converter), same texts, same threads, interleaved rounds.

    python3 bench/embed_side_by_side.py [--model all-minilm-l6-v2] [--threads 2] [--rounds 2]
        [--lengths 32,128,512] [--batches 1,64] [--dtypes f32,bf16,q8_0] [--out results.json]

Texts are made to be exactly L tokens long (specials included) with the model's tokenizer; every tool
is timed from tokenization to the last vector, model loading excluded (ridge and llama.cpp: from their
own log of the moment loading ended; sentence-transformers: encode() after a warm-up). ridge's achieved
GFLOP/s is printed beside its fraction of `ridge probe`'s compute roof when a probe profile exists.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
RIDGE = os.environ.get("RIDGE_BIN") or os.path.join(ROOT, "build", "ridge")
HOME = os.environ.get("RIDGE_HOME") or os.path.expanduser("~/.cache/ridge")
LLAMA_BIN = os.path.join(HOME, "llama.cpp", "build-avx512", "bin")
LLAMA_SRC = os.path.join(HOME, "llama.cpp", "src")
WORDS = ("the quick brown fox jumps over a lazy dog while scientists study complex systems in distant galaxies "
         "and engineers build bridges across wide rivers under cloudy skies").split()


def model_dir(name):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fetch_model.py"), name], check=True,
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def texts_of_length(tokenizer, length, n, seed):
    """n texts of exactly `length` tokens ([CLS] and [SEP] included) under `tokenizer`."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        words = [rng.choice(WORDS) for _ in range(length)]
        while len(tokenizer.encode(" ".join(words)).ids) > length:
            words.pop()
        if len(tokenizer.encode(" ".join(words)).ids) == length:
            out.append(" ".join(words))
    return out


def gguf_of(directory, outtype, workdir):
    path = os.path.join(workdir, f"{os.path.basename(directory)}-{outtype}.gguf")
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(LLAMA_SRC, "convert_hf_to_gguf.py"), directory, "--outfile", path,
                        "--outtype", outtype], check=True, capture_output=True)
    return path


def run_ridge(model, texts, batch, length, threads, dtype, workdir):
    src = os.path.join(workdir, "texts.jsonl")
    with open(src, "w") as f:
        f.writelines(json.dumps(t) + "\n" for t in texts)
    out = subprocess.run([RIDGE, "embed", "-m", model, "-i", src, "-o", os.devnull, "-t", str(threads), "--batch-size",
                          str(batch), "--max-seq-length", str(max(length, 2)), "--dtype", dtype, "--json-summary"],
                         check=True, capture_output=True, text=True)
    summary = json.loads([line for line in out.stderr.splitlines() if line.startswith("{")][-1])
    return summary["texts_per_s"], summary["gflops"]


LOG_TIME = re.compile(r"^(\d+)\.(\d+)\.(\d+)\.(\d+) ")


def run_llama(gguf, texts, batch, length, threads, workdir):
    src = os.path.join(workdir, "texts.txt")
    with open(src, "w") as f:
        f.write("\n".join(texts) + "\n")
    # llama-embedding packs texts until its context is full and asserts on contexts below a few hundred
    # tokens or not a multiple of 256: at small batches it gets 512 or more tokens a pass (more texts
    # than `batch`, in its favour).
    # Its non-causal pass attends over the whole micro-batch under a mask, so long texts go at most
    # 16384 tokens a pass (a power of two of texts): quadratically faster for it than 64 of 512 at once.
    per_pass = batch
    while per_pass > 1 and per_pass * (length + 1) > 16384:
        per_pass //= 2
    batch = per_pass
    tokens = (max(batch * (length + 1), 512) + 255) // 256 * 256
    cmd = [os.path.join(LLAMA_BIN, "llama-embedding"), "-m", gguf, "-f", src, "-t", str(threads), "-b", str(tokens), "-ub",
           str(tokens), "-c", str(tokens), "-np", str(batch if batch * (length + 1) >= 512 else 1), "--pooling", "mean", "--embd-normalize", "2",
           "--embd-output-format", "json"]
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if out.returncode != 0:
        print(f"   llama-embedding failed ({gguf}, {batch} texts a pass, context {tokens}): not counted", flush=True)
        return 0.0
    loaded = None
    for line in out.stderr.splitlines():
        m = LOG_TIME.match(line)
        if m and "system_info" in line:
            mi, s, ms, us = (int(g) for g in m.groups())
            loaded = mi * 60 + s + ms / 1e3 + us / 1e6
    # Its JSON is not always valid (it prints nan for a text it did not embed): count and check instead.
    if out.stdout.count('"embedding":') != len(texts) or "nan" in out.stdout:
        print(f"   llama-embedding gave no valid vector for some texts ({gguf}, batch {batch}): not counted", flush=True)
        return 0.0
    return len(texts) / (wall - (loaded or 0.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="all-minilm-l6-v2")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--lengths", default="32,128,512")
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--dtypes", default="f32,bf16,q8_0", help="ridge's --dtype values to run")
    ap.add_argument("--llama-types", default="f32,f16,q8_0", help="GGUF types for llama.cpp (its converter's --outtype)")
    ap.add_argument("--texts-batch1", type=int, default=16, help="texts per measurement at batch 1")
    ap.add_argument("--texts-batched", type=int, default=128, help="texts per measurement at larger batches")
    ap.add_argument("--out")
    args = ap.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    import st_reference
    from tokenizers import Tokenizer

    directory = model_dir(args.model)
    tokenizer = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    st = st_reference.load(directory, threads=args.threads)
    st.max_seq_length = max(int(x) for x in args.lengths.split(","))
    workdir = tempfile.mkdtemp(prefix="embed-bench-")
    ggufs = {t: gguf_of(directory, t, workdir) for t in args.llama_types.split(",") if t}
    rows = []
    for length in (int(x) for x in args.lengths.split(",")):
        for batch in (int(x) for x in args.batches.split(",")):
            n = args.texts_batch1 if batch == 1 else args.texts_batched
            texts = texts_of_length(tokenizer, length, n, seed=length * 1000 + batch)
            st.encode(texts[:batch], batch_size=batch)  # warm-up
            results = {}
            for r in range(args.rounds):
                for dtype in args.dtypes.split(","):
                    tps, gflops = run_ridge(directory, texts, batch, length, args.threads, dtype, workdir)
                    results.setdefault(f"ridge {dtype}", []).append(tps)
                    results.setdefault(f"ridge {dtype} GFLOP/s", []).append(gflops)
                start = time.monotonic()
                st.encode(texts, batch_size=batch)
                results.setdefault("sentence-transformers", []).append(n / (time.monotonic() - start))
                for t, path in ggufs.items():
                    results.setdefault(f"llama.cpp {t}", []).append(run_llama(path, texts, batch, length, args.threads, workdir))
            best = {k: max(v) for k, v in results.items()}
            row = {"length": length, "batch": batch, "texts": n, **best}
            rows.append(row)
            st_best = best["sentence-transformers"]
            llama_best = max((v for k, v in best.items() if k.startswith("llama.cpp")), default=0.0)  # 0: none valid
            for dtype in args.dtypes.split(","):
                key = f"ridge {dtype}"
                print(f"L={length:4d} batch={batch:3d} {key:11s} {best[key]:8.1f} texts/s ({best[key + ' GFLOP/s']:6.1f} GFLOP/s)"
                      f"  vs ST {st_best:8.1f} = {best[key] / st_best:5.2f}x"
                      + (f"  vs llama.cpp(best {llama_best:7.1f}) = {best[key] / llama_best:5.2f}x" if llama_best else ""),
                      flush=True)
            print("   anchors: " + ", ".join(f"{k} {v:.1f}" for k, v in best.items()
                                             if not k.startswith("ridge")), flush=True)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    report = {"cpu": cpu, "threads": args.threads, "rounds": args.rounds, "model": args.model, "rows": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
