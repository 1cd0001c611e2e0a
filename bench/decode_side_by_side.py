#!/usr/bin/env python3
"""Decode, ridge vs llama.cpp side by side: tg N tok/s on the same GGUF files and threads, with the
bytes each token reads and the fraction of this machine's read bandwidth that makes.

Each round runs, for every file, `ridge bench run -p 0 -n N --json` and llama.cpp's `llama-bench`
(built for this CPU by tools/build_llama_cpp.sh; -lm mmap and -lm none, the faster counting), the
engines' order alternating round by round so drift in the machine hits both alike. Bandwidth is
`ridge probe`'s read bandwidth at these threads, measured at the start and at the end; a token's
bytes are ridge's count (weights + KV read per token), used for both engines.

    python3 bench/decode_side_by_side.py -m FILE [-m FILE ...] [-n 128] [-t 2] [-r 3] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")


def run_ridge(ridge, model, threads, n_gen):
    out = subprocess.run([ridge, "bench", "run", "-m", model, "-t", str(threads), "-p", "0", "-n", str(n_gen), "-r", "1",
                          "--json"], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)["results"][0]
    return r["mean_tps"], r["bytes_per_token"]


def run_llama_bench(llama_bench, model, threads, n_gen):
    best = 0.0
    for load_mode in ("mmap", "none"):
        out = subprocess.run([llama_bench, "-m", model, "-t", str(threads), "-p", "0", "-n", str(n_gen), "-r", "1",
                              "-lm", load_mode, "-o", "json"], check=True, capture_output=True, text=True)
        best = max([best] + [row["avg_ts"] for row in json.loads(out.stdout)])
    return best


def read_bandwidth(ridge, threads):
    out = subprocess.run([ridge, "probe", "-t", str(threads), "-r", "3", "--json", "--no-save"], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)["read_bandwidth_gbs"][str(threads)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("--llama-bench", default=os.path.join(HOME, "llama.cpp", "build-avx512", "bin", "llama-bench"))
    ap.add_argument("-m", "--model", action="append", required=True)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-n", "--n-gen", type=int, default=128)
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--no-llama", action="store_true", help="ridge only (formats llama.cpp lacks)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not a.no_llama and not os.path.exists(a.llama_bench):
        sys.exit(f"{a.llama_bench} not found: run tools/build_llama_cpp.sh (or pass --no-llama)")
    bandwidth = [read_bandwidth(a.ridge, a.threads)]
    runs = {m: {"ridge": [], "llama.cpp": [], "bytes": 0} for m in a.model}
    for round_ in range(a.rounds):
        for m in a.model:
            order = ["ridge", "llama.cpp"][:: 1 if round_ % 2 == 0 else -1]
            for engine in order:
                if engine == "ridge":
                    tps, runs[m]["bytes"] = run_ridge(a.ridge, m, a.threads, a.n_gen)
                elif a.no_llama:
                    continue
                else:
                    tps = run_llama_bench(a.llama_bench, m, a.threads, a.n_gen)
                runs[m][engine].append(tps)
            print(f"round {round_ + 1} {os.path.basename(m)}: ridge {runs[m]['ridge'][-1]:.1f}"
                  + ("" if a.no_llama else f" llama.cpp {runs[m]['llama.cpp'][-1]:.1f}") + " tok/s", file=sys.stderr)
    bandwidth.append(read_bandwidth(a.ridge, a.threads))
    bw = statistics.mean(bandwidth)
    result = {"threads": a.threads, "rounds": a.rounds, "n_gen": a.n_gen, "read_bandwidth_gbs": bandwidth, "models": {}}
    for m in a.model:
        r = runs[m]
        row = {"bytes_per_token": r["bytes"]}
        for engine in ("ridge", "llama.cpp"):
            if not r[engine]:
                continue
            mean = statistics.mean(r[engine])
            row[engine] = {"tps": mean, "std": statistics.stdev(r[engine]) if len(r[engine]) > 1 else 0.0,
                           "gbs": mean * r["bytes"] / 1e9, "of_bandwidth": mean * r["bytes"] / 1e9 / bw}
        if "llama.cpp" in row:
            row["ratio"] = row["ridge"]["tps"] / row["llama.cpp"]["tps"]
        result["models"][os.path.basename(m)] = row
    if a.json:
        print(json.dumps(result, indent=2))
        return
    print(f"\nread bandwidth at {a.threads} threads (ridge probe, start / end): " + " / ".join(f"{b:.1f}" for b in bandwidth)
          + " GB/s")
    print(f"\n| file | MiB/token | ridge tg{a.n_gen} t/s | ridge GB/s | % bw | llama.cpp t/s | llama.cpp % bw | ridge / llama.cpp |")
    print("|---|---|---|---|---|---|---|---|")
    for name, row in result["models"].items():
        x, y = row["ridge"], row.get("llama.cpp")
        tail = f"{y['tps']:.1f} ± {y['std']:.1f} | {100 * y['of_bandwidth']:.0f}% | {row['ratio']:.2f}x" if y else "– | – | –"
        print(f"| {name} | {row['bytes_per_token'] / 2**20:.1f} | {x['tps']:.1f} ± {x['std']:.1f} | {x['gbs']:.1f} | "
              f"{100 * x['of_bandwidth']:.0f}% | {tail} |")


if __name__ == "__main__":
    main()
