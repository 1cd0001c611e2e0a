#!/usr/bin/env python3
"""MoE decode and prefill, ridge vs llama.cpp side by side, on a synthetic MoE file several times the
size of the last-level cache (default: `ridge synth olmoe-1b-7b -t Q4_0`, about 3.9 GB: 64 experts,
8 per token, 16 layers).

Each round runs `ridge bench run --json` and llama.cpp's `llama-bench` (built for this CPU by
tools/build_llama_cpp.sh; with -lm mmap and -lm none, the faster counts) on the same file and
threads, interleaved. It prints tok/s per engine (mean ± stddev over rounds), the ratios, and for
decode the bytes ridge reads per token against the active parameters' bytes computed here from the
file (every tensor outside the experts, plus n_expert_used / n_expert of each expert tensor).

    python3 bench/moe_decode.py [-m FILE] [-t 2] [-p 128] [-n 32] [-r 3] [--json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")


def default_model(ridge):
    path = os.path.join(HOME, "synth", "olmoe-1b-7b.Q4_0.gguf")
    if not os.path.exists(path):
        print(f"writing {path}", file=sys.stderr)
        subprocess.run([ridge, "synth", "olmoe-1b-7b", "-t", "Q4_0", "-o", path], check=True)
    return path


def active_bytes(path):
    """Bytes one decode token reads from the weights: non-expert tensors whole (one embedding row),
    expert tensors by the fraction of experts a token uses."""
    from gguf import GGUFReader

    r = GGUFReader(path)
    arch = str(r.fields["general.architecture"].contents())
    field = lambda key: int(r.fields[key].contents()) if key in r.fields else 1  # dense: one "expert"
    used, n_expert = field(f"{arch}.expert_used_count"), field(f"{arch}.expert_count")
    total, active = 0, 0.0
    for t in r.tensors:
        n = int(t.n_bytes)
        total += n
        if "_exps." in t.name:
            active += n * used / n_expert
        elif t.name == "token_embd.weight":
            active += n / int(t.shape[-1])  # one row (tied output counted below if so)
            if not any(x.name == "output.weight" for x in r.tensors):
                active += n
        else:
            active += n
    return total, active


def run_ridge(ridge, model, threads, n_prompt, n_gen):
    out = subprocess.run([ridge, "bench", "run", "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(n_gen),
                          "-r", "1", "--json"], check=True, capture_output=True, text=True)
    results = json.loads(out.stdout)["results"]
    return {r["test"][:2]: r for r in results}


def run_llama_bench(llama_bench, model, threads, n_prompt, n_gen, load_mode):
    out = subprocess.run([llama_bench, "-m", model, "-t", str(threads), "-p", str(n_prompt), "-n", str(n_gen), "-r", "1",
                          "-lm", load_mode, "-o", "json"], check=True, capture_output=True, text=True)
    rows = json.loads(out.stdout)
    return {("pp" if r["n_prompt"] > 0 else "tg"): r["avg_ts"] for r in rows}


def summary(values):
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("--llama-bench", default=os.path.join(HOME, "llama.cpp", "build-avx512", "bin", "llama-bench"))
    ap.add_argument("-m", "--model")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-p", "--n-prompt", type=int, default=128)
    ap.add_argument("-n", "--n-gen", type=int, default=32)
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(a.llama_bench):
        sys.exit(f"{a.llama_bench} not found: run tools/build_llama_cpp.sh")
    model = a.model or default_model(a.ridge)
    total, active = active_bytes(model)
    runs = {"ridge": {"pp": [], "tg": []}, "llama.cpp": {"pp": [], "tg": []}}
    ridge_bytes, experts = None, None
    for round_ in range(a.rounds):
        r = run_ridge(a.ridge, model, a.threads, a.n_prompt, a.n_gen)
        for test in ("pp", "tg"):
            runs["ridge"][test].append(r[test]["mean_tps"])
        ridge_bytes = r["tg"]["bytes_per_token"]
        experts = r["tg"].get("expert_tokens")
        best = {}
        for load_mode in ("mmap", "none"):
            l = run_llama_bench(a.llama_bench, model, a.threads, a.n_prompt, a.n_gen, load_mode)
            for test in ("pp", "tg"):
                best[test] = max(best.get(test, 0.0), l[test])
        for test in ("pp", "tg"):
            runs["llama.cpp"][test].append(best[test])
        print(f"round {round_ + 1}: ridge pp {r['pp']['mean_tps']:.1f} tg {r['tg']['mean_tps']:.2f} | "
              f"llama.cpp pp {best['pp']:.1f} tg {best['tg']:.2f}", file=sys.stderr)
    result = {"model": model, "file_bytes": total, "active_weight_bytes": active, "ridge_bytes_per_token": ridge_bytes,
              "expert_tokens": experts, "threads": a.threads, "rounds": a.rounds}
    for test in ("pp", "tg"):
        rm, rs = summary(runs["ridge"][test])
        lm, ls = summary(runs["llama.cpp"][test])
        result[test] = {"ridge": rm, "ridge_std": rs, "llama_cpp": lm, "llama_cpp_std": ls, "ratio": rm / lm}
    if a.json:
        print(json.dumps(result, indent=2))
        return
    print(f"\n{os.path.basename(model)}: {total / 2**30:.2f} GiB stored; active weights {active / 2**20:.1f} MiB per token; "
          f"ridge counts {ridge_bytes / 2**20:.1f} MiB read per decode token (weights and KV)")
    print(f"| test | ridge t/s | llama.cpp t/s | ridge / llama.cpp |")
    print(f"|---|---|---|---|")
    for test, n in (("pp", a.n_prompt), ("tg", a.n_gen)):
        x = result[test]
        print(f"| {test}{n} | {x['ridge']:.2f} ± {x['ridge_std']:.2f} | {x['llama_cpp']:.2f} ± {x['llama_cpp_std']:.2f} | "
              f"{x['ratio']:.2f}x |")
    if experts:
        print(f"tokens per expert (ridge, decode test): {experts}")


if __name__ == "__main__":
    main()
