#!/usr/bin/env python3
"""Two ridge builds side by side: `ridge bench run` of each, interleaved round by round, so a change's
speed-up is a ratio measured under the same drift of the machine.

Build the baseline from the commit before the change (e.g. `git stash; cmake --build build;
cp build/ridge /tmp/ridge-base; git stash pop; cmake --build build`), then

    python3 bench/ab_binaries.py --base /tmp/ridge-base --new build/ridge [-m default] [-p 512,2048,4096]
                                 [-n 0] [-t 2] [-r 3] [--json]

Prints, per test (pp512, tg128, ...), the median tokens/s of each build over the rounds and new/base.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench(binary, model, prompts, gens, threads):
    cmd = [binary, "bench", "run", "-m", model, "-p", prompts, "-n", gens, "-t", str(threads), "-r", "1", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {r["test"]: r["mean_tps"] for r in json.loads(out)["results"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the baseline ridge binary")
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "ridge"), help="the changed ridge binary")
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("-p", "--n-prompt", default="512,2048,4096")
    ap.add_argument("-n", "--n-gen", default="0")
    ap.add_argument("-t", "--threads", type=int, default=os.cpu_count())
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    runs = {"base": [], "new": []}
    for i in range(args.rounds):
        # Alternate which build goes first so a round's warm-up favours neither.
        order = ("base", "new") if i % 2 == 0 else ("new", "base")
        for name in order:
            binary = args.base if name == "base" else args.new
            runs[name].append(bench(binary, args.model, args.n_prompt, args.n_gen, args.threads))
        print(f"round {i + 1}/{args.rounds}: " + "  ".join(
            f"{t} {runs['base'][-1][t]:.1f} -> {runs['new'][-1][t]:.1f}" for t in runs["base"][-1]), file=sys.stderr)

    rows = []
    for test in runs["base"][0]:
        base = statistics.median(r[test] for r in runs["base"])
        new = statistics.median(r[test] for r in runs["new"])
        rows.append({"test": test, "base_tps": base, "new_tps": new, "ratio": new / base,
                     "base_runs": [r[test] for r in runs["base"]], "new_runs": [r[test] for r in runs["new"]]})
    if args.json:
        print(json.dumps({"model": args.model, "threads": args.threads, "rounds": args.rounds, "rows": rows}, indent=2))
        return
    print(f"{'test':>8} {'base t/s':>10} {'new t/s':>10} {'new/base':>9}")
    for r in rows:
        print(f"{r['test']:>8} {r['base_tps']:>10.1f} {r['new_tps']:>10.1f} {r['ratio']:>8.2f}x")


if __name__ == "__main__":
    main()
