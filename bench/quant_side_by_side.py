#!/usr/bin/env python3
"""Prompt processing and generation of GGUF files, ridge vs llama.cpp vs ik_llama.cpp side by side:
pp P and tg N tok/s on the same files and threads, decode's bytes per token against this machine's
read bandwidth. For the quant types of the i-quant and AVX2 work (IQ4_XS, IQ3_S, IQ2_XXS, IQ1_S,
TQ2_0, ...), but any GGUF file runs.

Each round runs, for every file, `ridge bench run -p P -n N --json`, llama.cpp's `llama-bench`
(tools/build_llama_cpp.sh) with -lm mmap and -lm none, and ik_llama.cpp's `llama-bench`
(tools/build_ik_llama_cpp.sh) with -rtr 1 and -mmp 0 / 1, the faster setting of each anchor counting.
The engines' order rotates round by round so drift in the machine hits each alike. Nothing is built
here: an anchor not found is left out (say so with --no-llama / --no-ik to skip it on purpose).
Bandwidth is `ridge probe`'s read bandwidth at these threads, measured at the start and the end; a
token's bytes are ridge's count (weights + KV), used for every engine.

    python3 bench/quant_side_by_side.py -m FILE [-m FILE ...] [-p 512] [-n 64] [-t 2] [-r 2] [--json]

--depth D adds generation after D cached tokens (tg N @ dD: ridge bench run -d, llama-bench -d,
ik_llama.cpp's llama-bench -gp D,N), the long-context decode that attention bounds; -p 4096 -n 0 gives
prefill over long prompts.

--isa avx2 (or avxvnni) runs the class of CPU below this one: ridge with RIDGE_ISA set, the anchors'
builds limited to that ISA (tools/build_llama_cpp.sh 2 avx2, tools/build_ik_llama_cpp.sh 2 avx2).
Figures of a real AVX2-only CPU are the ones that count; these show the code paths on this machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from decode_side_by_side import read_bandwidth

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
ENGINES = ("ridge", "llama.cpp", "ik_llama.cpp")


def run_ridge(ridge, model, threads, n_prompt, n_gen):
    out = subprocess.run([ridge, "bench", "run", "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(n_gen),
                          "-r", "1", "--json"], check=True, capture_output=True, text=True, env=os.environ)
    pp = tg = 0.0
    per_token = 0
    for r in json.loads(out.stdout)["results"]:
        if r["test"].startswith("pp"):
            pp = r["mean_tps"]
        else:
            tg, per_token = r["mean_tps"], r.get("bytes_per_token", 0)
    return pp, tg, per_token


def best_llama_bench(binary, model, threads, n_prompt, n_gen, settings):
    """The best pp and tg over the anchor's settings (each a list of extra flags)."""
    pp = tg = 0.0
    for extra in settings:
        out = subprocess.run([binary, "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(n_gen), "-r", "1",
                              "-o", "json"] + extra, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{os.path.basename(binary)} {' '.join(extra)} failed on {os.path.basename(model)}: "
                  f"{out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        for row in json.loads(out.stdout):
            if row.get("n_prompt", 0) > 0 and row.get("n_gen", 0) == 0:
                pp = max(pp, row["avg_ts"])
            elif row.get("n_gen", 0) > 0 and row.get("n_prompt", 0) == 0:
                tg = max(tg, row["avg_ts"])
    return pp, tg


def run_ridge_depth(ridge, model, threads, n_gen, depth):
    out = subprocess.run([ridge, "bench", "run", "-m", model, "-t", str(threads), "-p", "0", "-n", str(n_gen),
                          "-d", str(depth), "-r", "1", "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["results"][0]["mean_tps"]


def best_depth_bench(binary, model, threads, n_gen, depth, settings, ik):
    """The best tg after `depth` cached tokens over the anchor's settings (ik: -gp depth,n_gen; else -d depth)."""
    tg = 0.0
    shape = ["-p", "0", "-n", "0", "-gp", f"{depth},{n_gen}"] if ik else ["-p", "0", "-n", str(n_gen), "-d", str(depth)]
    for extra in settings:
        out = subprocess.run([binary, "-m", model, "-t", str(threads), "-r", "1", "-o", "json"] + shape + extra,
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{os.path.basename(binary)} {' '.join(shape + extra)} failed on {os.path.basename(model)}: "
                  f"{out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        for row in json.loads(out.stdout):
            if row.get("n_gen", 0) > 0:
                tg = max(tg, row["avg_ts"])
    return tg


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def stats(values):
    return {"tps": statistics.mean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0} if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("--isa", choices=["avx2", "avxvnni"], help="run every engine as that class of CPU (see above)")
    ap.add_argument("--llama-bench")
    ap.add_argument("--ik-bench")
    ap.add_argument("-m", "--model", action="append", required=True)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-p", "--n-prompt", type=int, default=512)
    ap.add_argument("-n", "--n-gen", type=int, default=64)
    ap.add_argument("-r", "--rounds", type=int, default=2)
    ap.add_argument("--depth", type=int, default=0, help="also tg N after this many cached tokens")
    ap.add_argument("--no-llama", action="store_true")
    ap.add_argument("--no-ik", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.isa:
        os.environ["RIDGE_ISA"] = a.isa  # ridge bench and ridge probe inherit it
    a.llama_bench = a.llama_bench or os.path.join(HOME, "llama.cpp", f"build-{a.isa or 'avx512'}", "bin", "llama-bench")
    a.ik_bench = a.ik_bench or os.path.join(HOME, "ik_llama.cpp", f"build-{a.isa or 'native'}", "bin", "llama-bench")
    engines = ["ridge"]
    if not a.no_llama and os.path.exists(a.llama_bench):
        engines.append("llama.cpp")
    elif not a.no_llama:
        print(f"{a.llama_bench} not found (tools/build_llama_cpp.sh): llama.cpp left out", file=sys.stderr)
    if not a.no_ik and os.path.exists(a.ik_bench):
        engines.append("ik_llama.cpp")
    elif not a.no_ik:
        print(f"{a.ik_bench} not found (tools/build_ik_llama_cpp.sh): ik_llama.cpp left out", file=sys.stderr)

    bandwidth = [read_bandwidth(a.ridge, a.threads)]
    runs = {m: {e: {"pp": [], "tg": [], "tgd": []} for e in engines} | {"bytes": 0} for m in a.model}
    llama_settings = [["-lm", "mmap"], ["-lm", "none"]]
    ik_settings = [["-rtr", "1", "-mmp", "0"], ["-rtr", "1", "-mmp", "1"]]
    for round_ in range(a.rounds):
        for m in a.model:
            order = engines[round_ % len(engines):] + engines[:round_ % len(engines)]
            for engine in order:
                if engine == "ridge":
                    pp, tg, runs[m]["bytes"] = run_ridge(a.ridge, m, a.threads, a.n_prompt, a.n_gen)
                elif engine == "llama.cpp":
                    pp, tg = best_llama_bench(a.llama_bench, m, a.threads, a.n_prompt, a.n_gen, llama_settings)
                else:
                    pp, tg = best_llama_bench(a.ik_bench, m, a.threads, a.n_prompt, a.n_gen, ik_settings)
                if pp > 0:
                    runs[m][engine]["pp"].append(pp)
                if tg > 0:
                    runs[m][engine]["tg"].append(tg)
                tgd = 0.0
                if a.depth > 0 and a.n_gen > 0:
                    if engine == "ridge":
                        tgd = run_ridge_depth(a.ridge, m, a.threads, a.n_gen, a.depth)
                    elif engine == "llama.cpp":
                        tgd = best_depth_bench(a.llama_bench, m, a.threads, a.n_gen, a.depth, llama_settings, False)
                    else:
                        tgd = best_depth_bench(a.ik_bench, m, a.threads, a.n_gen, a.depth, ik_settings, True)
                    if tgd > 0:
                        runs[m][engine]["tgd"].append(tgd)
                print(f"round {round_ + 1} {os.path.basename(m)} {engine}: pp{a.n_prompt} {pp:.1f} tg{a.n_gen} {tg:.1f}"
                      + (f" tg{a.n_gen}@d{a.depth} {tgd:.1f}" if a.depth > 0 else ""), file=sys.stderr)
    bandwidth.append(read_bandwidth(a.ridge, a.threads))
    bw = statistics.mean(bandwidth)

    result = {"cpu": cpu_name(), "isa": a.isa or "native", "threads": a.threads, "rounds": a.rounds, "n_prompt": a.n_prompt,
              "n_gen": a.n_gen, "depth": a.depth,
              "read_bandwidth_gbs": bandwidth, "engines": engines, "models": {}}
    for m in a.model:
        row = {"bytes_per_token": runs[m]["bytes"]}
        for e in engines:
            row[e] = {"pp": stats(runs[m][e]["pp"]), "tg": stats(runs[m][e]["tg"]), "tgd": stats(runs[m][e]["tgd"])}
            if row[e]["tg"]:
                row[e]["tg"]["of_bandwidth"] = row[e]["tg"]["tps"] * runs[m]["bytes"] / 1e9 / bw
        result["models"][os.path.basename(m)] = row
    if a.json:
        print(json.dumps(result, indent=2))
        return

    print(f"\n{result['cpu']} ({'as ' + a.isa if a.isa else 'every ISA it has'}), {a.threads} threads, {a.rounds} rounds; read bandwidth (ridge probe, start / end): "
          + " / ".join(f"{b:.1f}" for b in bandwidth) + " GB/s")
    anchors = engines[1:]
    head = "| file | test | " + " | ".join(engines) + " | " + " | ".join(f"ridge / {e}" for e in anchors) + " | ridge % bw |"
    print("\n" + head)
    print("|" + "---|" * (head.count("|") - 1))

    def cell(s):
        return f"{s['tps']:.1f} ± {s['std']:.1f}" if s else "–"

    for name, row in result["models"].items():
        tests = (("pp", f"pp{a.n_prompt}"), ("tg", f"tg{a.n_gen}")) + ((("tgd", f"tg{a.n_gen}@d{a.depth}"),) if a.depth else ())
        for test, label in tests:
            r = row["ridge"][test]
            ratios = [f"{r['tps'] / row[e][test]['tps']:.2f}x" if r and row[e][test] else "–" for e in anchors]
            bw_cell = f"{100 * r['of_bandwidth']:.0f}%" if test == "tg" and r else ""
            print(f"| {name} | {label} | " + " | ".join(cell(row[e][test]) for e in engines) + " | "
                  + " | ".join(ratios) + f" | {bw_cell} |")


if __name__ == "__main__":
    main()
