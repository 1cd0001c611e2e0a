#!/usr/bin/env python3
"""A model split across MPI ranks against one process, side by side on this machine, interleaved
rounds, with the planner's prediction next to each figure.

- decode (tg): one process with T threads vs TP=T x 1 thread and PP=T x 1 thread (the ranks split
  the same memory bandwidth the threads of one process share);
- prefill of a long prompt (pp, default 2048 tokens) under PP=2: one piece per step (no overlap)
  against the prompt cut into chunks that flow through the stages back to back;
- the planner (`ridge plan --hw local --tp/--pp`, its figures from `ridge probe` and
  `mpirun ridge probe --dist`) for each decode layout.

    python3 bench/parallel_side_by_side.py [-m FILE] [-t 2] [-n 64] [-p 2048] [-r 3] [--json]

Default model: a synthetic 1.1B Llama (`ridge synth tinyllama-1.1b -t Q4_0`, written when absent).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def default_model(ridge):
    path = os.path.join(HOME, "synth", "tinyllama-1.1b.Q4_0.gguf")
    if not os.path.exists(path):
        subprocess.run([ridge, "synth", "tinyllama-1.1b", "-t", "Q4_0", "-o", path], check=True)
    return path


def bench(ridge, model, ranks, flags, test, reps, threads):
    prefix = [] if ranks == 1 else [shutil.which("mpirun"), "-np", str(ranks), "--bind-to", "core"]
    cmd = [*prefix, ridge, "bench", "run", "-m", model, "-t", str(threads), "-r", str(reps), "--json", *test, *flags]
    out = subprocess.run(cmd, capture_output=True, text=True, env=ENV, check=True).stdout
    return json.loads(out[out.index("{"):])["results"][0]["mean_tps"]


def predicted_prefill(ridge, model, pp, prompt, threads):
    """The planner's pipelined prefill: {pieces (1: whole, else chunked), and (1, 'one') for one process}."""
    out = subprocess.run([ridge, "plan", model, "--hw", "local", "-t", str(threads), "-c", "64", "-b", "1", "-p",
                          str(prompt), "-s", "parallel", "--json", "--pp", str(pp)], capture_output=True, text=True,
                         check=True).stdout
    rows = json.loads(out)["parallel"]["prefill"]
    return {("one" if r["pp"] == 1 else r["pieces"]): r["tok_s"] for r in rows}


def predicted_tps(ridge, model, flags, threads, one=False):
    out = subprocess.run([ridge, "plan", model, "--hw", "local", "-t", str(threads), "-c", "64", "-b", "1", "-s", "parallel",
                          "--json", *flags], capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)["parallel"]["rows"]
    tp = int(flags[flags.index("--tp") + 1]) if "--tp" in flags and not one else 1
    pp = int(flags[flags.index("--pp") + 1]) if "--pp" in flags and not one else 1
    return next(r["tok_s_total"] for r in rows if r["tp"] == tp and r["pp"] == pp and r["batch"] == 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("-m", "--model")
    ap.add_argument("-t", "--threads", type=int, default=2, help="threads of the one process = ranks of a split")
    ap.add_argument("-n", "--n-gen", type=int, default=64)
    ap.add_argument("-p", "--n-prompt", type=int, default=2048)
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    model = a.model or default_model(a.ridge)
    T = a.threads
    decode = {"one process": (1, [], T), f"TP={T}": (T, ["--tp", str(T)], 1), f"PP={T}": (T, ["--pp", str(T)], 1)}
    default_pieces = max(T, a.n_prompt // 256)
    prefill = {f"PP={T}, one piece": (T, ["--pp", str(T), "--pp-microbatches", "1"], 1),
               f"PP={T}, {T} chunks": (T, ["--pp", str(T), "--pp-microbatches", str(T)], 1),
               f"PP={T}, {default_pieces} chunks (default)": (T, ["--pp", str(T)], 1),
               "one process": (1, [], T)}
    got = {("tg", k): [] for k in decode} | {("pp", k): [] for k in prefill}
    for rnd in range(a.rounds):
        for k, (ranks, flags, threads) in decode.items():
            got[("tg", k)].append(bench(a.ridge, model, ranks, flags, ["-p", "0", "-n", str(a.n_gen)], 2, threads))
        for k, (ranks, flags, threads) in prefill.items():
            got[("pp", k)].append(bench(a.ridge, model, ranks, flags, ["-p", str(a.n_prompt), "-n", "0"], 1, threads))
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr)
    # The planner's table has the one-process row beside the split it is asked about.
    plan = {k: predicted_tps(a.ridge, model, flags or ["--tp", str(T)], T, one=not flags)
            for k, (ranks, flags, threads) in decode.items()}
    pre = predicted_prefill(a.ridge, model, T, a.n_prompt, T)
    pre_of = {f"PP={T}, one piece": pre.get(1), f"PP={T}, {default_pieces} chunks (default)": pre.get(default_pieces),
              "one process": pre.get("one")}
    rows = []
    for (test, k), v in got.items():
        base = statistics.mean(got[(test, "one process")])
        row = {"test": f"tg{a.n_gen}" if test == "tg" else f"pp{a.n_prompt}", "layout": k, "tok_s": statistics.mean(v),
               "stdev": statistics.stdev(v) if len(v) > 1 else 0.0, "vs_one_process": statistics.mean(v) / base}
        predicted = plan[k] if test == "tg" else pre_of.get(k)
        if predicted:
            row["predicted_tok_s"] = predicted
            row["predicted_vs_measured"] = predicted / row["tok_s"]
        rows.append(row)
    if a.json:
        print(json.dumps({"model": model, "threads": T, "rounds": a.rounds, "rows": rows}, indent=1))
        return
    print(f"{os.path.basename(model)}, {T} cores, {a.rounds} interleaved rounds")
    print(f"| {'test':8} | {'layout':26} | {'tok/s':>16} | {'vs one process':>14} | {'planner tok/s':>13} | {'plan/measured':>13} |")
    print(f"|{'-' * 10}|{'-' * 28}|{'-' * 18}|{'-' * 16}|{'-' * 15}|{'-' * 15}|")
    for r in rows:
        p = f"{r['predicted_tok_s']:.1f}" if "predicted_tok_s" in r else ""
        q = f"{r['predicted_vs_measured']:.2f}" if "predicted_vs_measured" in r else ""
        print(f"| {r['test']:8} | {r['layout']:26} | {r['tok_s']:8.1f} ± {r['stdev']:5.1f} | {r['vs_one_process']:13.2f}x | {p:>13} | {q:>13} |")


if __name__ == "__main__":
    main()
