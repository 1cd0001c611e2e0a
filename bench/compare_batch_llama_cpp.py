#!/usr/bin/env python3
"""Batched decode, ridge vs llama.cpp, side by side: total decode tok/s at N concurrent sequences.

ridge: `ridge bench batch` (continuous-batching engine; only steps that decode one token for every
sequence are timed). llama.cpp: its batch API through llama-cpp-python's low-level bindings: N
sequences, each prefilled from its own random prompt (untimed), then steps of one llama_decode
holding one token of every sequence, timed, as llama-batched-bench's generation phase measures.
Both run on the same GGUF file with the same threads; rounds interleave the engines; llama.cpp
runs with and without use_mmap and the faster counts.

    python3 bench/compare_batch_llama_cpp.py [--ridge build/ridge] [-m FILE] [-c 1,4,16,64] [-t 2] [-r 2] [--json]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_llama_cpp import quiet_llama_cpp, ridge_home  # noqa: E402


def run_ridge(ridge, model, threads, concurrency, n_prompt, n_gen):
    out = subprocess.run([ridge, "bench", "batch", "-m", model, "-t", str(threads), "-c", ",".join(map(str, concurrency)),
                          "-p", str(n_prompt), "-n", str(n_gen), "-r", "1", "--json"],
                         check=True, capture_output=True, text=True)
    return {r["concurrency"]: r["mean_tps"] for r in json.loads(out.stdout)["results"]}


def run_llama_cpp(path, threads, use_mmap, n_seq, n_prompt, n_gen):
    import llama_cpp as L
    quiet_llama_cpp(L)
    L.llama_backend_init()
    mparams = L.llama_model_default_params()
    mparams.use_mmap = use_mmap
    model = L.llama_model_load_from_file(path.encode(), mparams)
    cparams = L.llama_context_default_params()
    cparams.n_ctx = n_seq * (n_prompt + n_gen + 8)
    cparams.n_batch = max(n_prompt, n_seq)
    cparams.n_ubatch = max(n_prompt, n_seq)
    cparams.n_seq_max = n_seq
    cparams.n_threads = threads
    cparams.n_threads_batch = threads
    ctx = L.llama_init_from_model(model, cparams)
    n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    rng = random.Random(1)
    batch = L.llama_batch_init(max(n_prompt, n_seq), 0, n_seq)

    def decode(entries):  # [(token, pos, seq, logits)]
        batch.n_tokens = len(entries)
        for i, (tok, pos, seq, want) in enumerate(entries):
            batch.token[i] = tok
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = want
        if L.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    def one_run():
        L.llama_memory_clear(L.llama_get_memory(ctx), True)
        for s in range(n_seq):
            decode([(rng.randrange(n_vocab), p, s, p == n_prompt - 1) for p in range(n_prompt)])
        start = time.perf_counter()
        for step in range(n_gen - 1):
            decode([(rng.randrange(n_vocab), n_prompt + step, s, True) for s in range(n_seq)])
        L.llama_synchronize(ctx)
        return n_seq * (n_gen - 1) / (time.perf_counter() - start)

    try:
        one_run()  # warm-up
        return one_run()
    finally:
        L.llama_batch_free(batch)
        L.llama_free(ctx)
        L.llama_model_free(model)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "ridge"))
    ap.add_argument("-m", "--model", default=os.path.join(ridge_home(), "models", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("-c", "--concurrency", default="1,4,16,64")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-p", "--n-prompt", type=int, default=64)
    ap.add_argument("-n", "--n-gen", type=int, default=64)
    ap.add_argument("-r", "--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    conc = [int(c) for c in args.concurrency.split(",")]
    ridge_runs = {c: [] for c in conc}
    llama_runs = {c: [] for c in conc}
    for rnd in range(args.rounds):
        print(f"round {rnd + 1}/{args.rounds}", file=sys.stderr)
        for c, tps in run_ridge(args.ridge, args.model, args.threads, conc, args.n_prompt, args.n_gen).items():
            ridge_runs[c].append(tps)
        for c in conc:
            best = max(run_llama_cpp(args.model, args.threads, mmap, c, args.n_prompt, args.n_gen) for mmap in (True, False))
            llama_runs[c].append(best)
    rows = []
    for c in conc:
        r, l = statistics.mean(ridge_runs[c]), statistics.mean(llama_runs[c])
        rows.append({"concurrency": c, "ridge_tps": r, "llama_cpp_tps": l, "ratio": r / l,
                     "ridge_runs": ridge_runs[c], "llama_cpp_runs": llama_runs[c]})
    if args.json:
        print(json.dumps({"model": args.model, "threads": args.threads, "rows": rows}, indent=2))
        return
    print(f"{os.path.basename(args.model)}, {args.threads} threads, prompt {args.n_prompt}, {args.n_gen} generated per sequence")
    print(f"| {'sequences':>9} | {'ridge tok/s':>11} | {'llama.cpp tok/s':>15} | {'ridge/llama.cpp':>15} |")
    print(f"|{'-' * 11}|{'-' * 13}|{'-' * 17}|{'-' * 17}|")
    for row in rows:
        print(f"| {row['concurrency']:>9} | {row['ridge_tps']:>11.1f} | {row['llama_cpp_tps']:>15.1f} | {row['ratio']:>14.2f}x |")


if __name__ == "__main__":
    main()
