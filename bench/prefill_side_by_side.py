#!/usr/bin/env python3
"""Prefill (and optionally decode), ridge vs llama.cpp side by side on the same GGUF files and threads.

Each round runs, for every file: `ridge bench run --json` with the prompt kernels as a serving
prompt gets them (the bf16 tile GEMM on AMX-BF16 CPUs), the same with RIDGE_AMX_BF16=0 (the int8
kernels), and llama.cpp's `llama-bench` built for this CPU by tools/build_llama_cpp.sh (AVX-512,
no AMX: its AMX path faults on these virtual machines) with -lm mmap and -lm none, the faster
counting. Engines interleave within a round, so drift in the machine's speed hits all alike. The
machine's AMX peaks (`ridge probe`) are measured at the start and the end, for context.

Default files: the real Qwen2.5-Coder-1.5B-Instruct Q4_K_M and synthetic tinyllama-1.1b in Q4_0, Q8_0,
Q4_K and BF16 (written with `ridge synth` into $RIDGE_HOME/synth/ when missing).

    python3 bench/prefill_side_by_side.py [-m FILE ...] [-p 512] [-n 0] [-t 2] [-r 3] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")


def default_models(ridge):
    models = [os.path.join(HOME, "models", "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf")]
    for t in ("Q4_0", "Q8_0", "Q4_K", "BF16"):
        path = os.path.join(HOME, "synth", f"tinyllama-1.1b.{t}.gguf")
        if not os.path.exists(path):
            print(f"writing {path}", file=sys.stderr)
            subprocess.run([ridge, "synth", "tinyllama-1.1b", "-t", t, "-o", path], check=True, capture_output=True)
        models.append(path)
    return [m for m in models if os.path.exists(m)]


def run_ridge(ridge, model, threads, n_prompt, n_gen, int8):
    env = {**os.environ, **({"RIDGE_AMX_BF16": "0"} if int8 else {})}
    out = subprocess.run([ridge, "bench", "run", "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(n_gen),
                          "-r", "1", "--json"], check=True, capture_output=True, text=True, env=env)
    return {r["test"][:2]: r["mean_tps"] for r in json.loads(out.stdout)["results"]}


def run_llama_bench(llama_bench, model, threads, n_prompt, n_gen):
    best = {}
    for load_mode in ("mmap", "none"):
        out = subprocess.run([llama_bench, "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(n_gen), "-r", "1",
                              "-lm", load_mode, "-o", "json"], check=True, capture_output=True, text=True)
        for row in json.loads(out.stdout):
            test = "pp" if row["n_prompt"] > 0 else "tg"
            best[test] = max(best.get(test, 0.0), row["avg_ts"])
    return best


def amx_peaks(ridge, threads):
    out = subprocess.run([ridge, "probe", "-t", str(threads), "-r", "2", "--json", "--no-save"], check=True,
                         capture_output=True, text=True)
    p = json.loads(out.stdout)
    at = lambda key: p.get(key, {}).get(str(threads))
    return {"amx_int8_gops": at("peak_amx_int8_gops"), "amx_bf16_gflops": at("peak_amx_bf16_gflops"),
            "int8_vnni_gops": at("peak_int8_gops")}


def summary(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("--llama-bench", default=os.path.join(HOME, "llama.cpp", "build-avx512", "bin", "llama-bench"))
    ap.add_argument("-m", "--model", action="append")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-p", "--n-prompt", type=int, default=512)
    ap.add_argument("-n", "--n-gen", type=int, default=0)
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(a.llama_bench):
        sys.exit(f"{a.llama_bench} not found: run tools/build_llama_cpp.sh")
    models = a.model or default_models(a.ridge)
    tests = ["pp"] + (["tg"] if a.n_gen > 0 else [])
    engines = ("ridge", "ridge int8", "llama.cpp")
    runs = {m: {e: {t: [] for t in tests} for e in engines} for m in models}
    peaks = [amx_peaks(a.ridge, a.threads)]
    for round_ in range(a.rounds):
        for m in models:
            got = {"ridge": run_ridge(a.ridge, m, a.threads, a.n_prompt, a.n_gen, False),
                   "ridge int8": run_ridge(a.ridge, m, a.threads, a.n_prompt, a.n_gen, True),
                   "llama.cpp": run_llama_bench(a.llama_bench, m, a.threads, a.n_prompt, a.n_gen)}
            for e in engines:
                for t in tests:
                    runs[m][e][t].append(got[e][t])
            print(f"round {round_ + 1} {os.path.basename(m)}: " +
                  " | ".join(f"{e} pp {got[e]['pp']:.1f}" for e in engines), file=sys.stderr)
    peaks.append(amx_peaks(a.ridge, a.threads))
    result = {"threads": a.threads, "rounds": a.rounds, "n_prompt": a.n_prompt, "n_gen": a.n_gen, "probe": peaks,
              "models": {}}
    for m in models:
        r = {}
        for t in tests:
            s = {e: summary(runs[m][e][t]) for e in engines}
            r[t] = {e: {"mean": s[e][0], "std": s[e][1]} for e in engines}
            r[t]["ratio"] = s["ridge"][0] / s["llama.cpp"][0]
            r[t]["ratio_int8"] = s["ridge int8"][0] / s["llama.cpp"][0]
        result["models"][os.path.basename(m)] = r
    if a.json:
        print(json.dumps(result, indent=2))
        return
    print(f"\nprobe at start / end, {a.threads} threads: AMX int8 " +
          " / ".join(f"{p['amx_int8_gops'] or 0:.0f}" for p in peaks) + " GOP/s, AMX bf16 " +
          " / ".join(f"{p['amx_bf16_gflops'] or 0:.0f}" for p in peaks) + " GFLOP/s")
    for t in tests:
        n = a.n_prompt if t == "pp" else a.n_gen
        print(f"\n| file | ridge {t}{n} t/s | ridge int8 | llama.cpp | ridge / llama.cpp | int8 / llama.cpp |")
        print("|---|---|---|---|---|---|")
        for name, r in result["models"].items():
            x = r[t]
            print(f"| {name} | {x['ridge']['mean']:.1f} ± {x['ridge']['std']:.1f} | {x['ridge int8']['mean']:.1f} | "
                  f"{x['llama.cpp']['mean']:.1f} ± {x['llama.cpp']['std']:.1f} | {x['ratio']:.2f}x | {x['ratio_int8']:.2f}x |")


if __name__ == "__main__":
    main()
