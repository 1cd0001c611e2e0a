#!/usr/bin/env python3
"""Helix (--helix 2) against TP 2 and one process on a long-context decode, side by side on this
machine, interleaved rounds, with the planner's prediction next to each figure.

Each run is `ridge plan MODEL --validate` (a prompt of CTX tokens, then decode steps at that context),
so the prefill of the long prompt is measured too. Layouts: one process with T threads; TP 2 and
Helix 2, two MPI ranks of T / 2 threads each. On a latent-attention (MLA) model TP keeps the
attention and the whole latent KV on every rank; Helix gives each rank every other position.
Per layout and context: decode ms/step (measured, predicted, ratio), each rank's time in collectives
per decode step, prefill seconds, and each rank's peak resident memory against the KV the memory
plan gives it.

    python3 bench/helix_side_by_side.py [-m FILE] [-c 16384,32768] [-n 16] [-r 1] [-t 2] [--json]

Default model: a synthetic one-layer DeepSeek-V2-Lite-shaped MLA model (latent 512 + RoPE 64, 2 heads,
Q8_0), written when absent: its decode at long context reads mostly KV.
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
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_rmaps_base_oversubscribe": "1", "RIDGE_DIST_STATS": "1"}  # each rank's time in collectives
SHAPE = ["--n-embd", "1024", "--n-layer", "1", "--n-head", "2", "--n-ff", "2048", "--n-vocab", "2000",
         "--n-expert", "4", "--n-expert-used", "2", "--n-ff-expert", "512", "--n-layer-dense-lead", "1",
         "--kv-lora-rank", "512", "--q-lora-rank", "0", "--qk-rope-head-dim", "64", "--qk-nope-head-dim", "128",
         "--v-head-dim", "128", "--n-ctx", "65536"]
KV_BYTES_PER_TOKEN = 1 * (512 + 64) * 2  # layers x latent row x f16, of the default model
COLLECTIVES = re.compile(r"rank (\d+): in the tensor-parallel group's collectives ([0-9.]+) ms a decode step")
MAXRSS = re.compile(r"maxrss_kib (\d+)")


def default_model(ridge):
    path = os.path.join(HOME, "synth", "helix-mla-1l.Q8_0.gguf")
    if not os.path.exists(path):
        subprocess.run([ridge, "synth", "deepseek-v2-lite", "-t", "Q8_0", "-o", path, *SHAPE], check=True)
    return path


def run_layout(ridge, model, layout, context, decode, threads):
    ranks = 1 if layout == "one" else 2
    flags = {"one": [], "tp2": ["--tp", "2"], "helix2": ["--helix", "2"]}[layout]
    prefix = [] if ranks == 1 else [shutil.which("mpirun"), "-np", "2", "--bind-to", "none", "-x", "RIDGE_DIST_STATS"]
    cmd = [*prefix, "/usr/bin/time", "-f", "maxrss_kib %M", ridge, "plan", model, "--validate", "--validate-prompt",
           str(context), "--validate-decode", str(decode), "--json", "-t", str(threads // ranks), *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=1500)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    comm = {int(r): float(ms) for r, ms in COLLECTIVES.findall(proc.stderr)}
    return {"layout": layout, "context": context, "decode_ms": 1e3 * out["decode"]["measured_s"],
            "predicted_ms": 1e3 * out["decode"]["predicted_s"], "prefill_s": out["prefill"]["measured_s"],
            "comm_ms": [comm[r] for r in sorted(comm)], "maxrss_mib": [int(k) / 1024 for k in MAXRSS.findall(proc.stderr)]}


def per_rank(runs, key, combine):
    n = min(len(x[key]) for x in runs)
    return [combine(x[key][i] for x in runs) for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-m", "--model")
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"))
    ap.add_argument("-c", "--contexts", default="16384,32768")
    ap.add_argument("-n", "--decode", type=int, default=16)
    ap.add_argument("-r", "--rounds", type=int, default=1)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    model = a.model or default_model(a.ridge)
    contexts = [int(c) for c in a.contexts.split(",")]
    runs = []
    for r in range(a.rounds):  # interleaved: every layout once per round and context
        for c in contexts:
            for layout in ["one", "tp2", "helix2"]:
                res = run_layout(a.ridge, model, layout, c, a.decode, a.threads)
                print(f"round {r + 1}: {json.dumps(res)}", file=sys.stderr, flush=True)  # each run as it ends
                runs.append(res)
    rows = []
    for c in contexts:
        for layout in ["one", "tp2", "helix2"]:
            mine = [x for x in runs if x["context"] == c and x["layout"] == layout]
            kvp = 2 if layout == "helix2" else 1
            rows.append({"context": c, "layout": layout, "rounds": len(mine),
                         "decode_ms": statistics.median(x["decode_ms"] for x in mine),
                         "predicted_ms": mine[0]["predicted_ms"],
                         "prefill_s": statistics.median(x["prefill_s"] for x in mine),
                         # per rank (its time in collectives; its peak resident memory), over the rounds
                         "comm_ms": per_rank(mine, "comm_ms", statistics.median),
                         "maxrss_mib": per_rank(mine, "maxrss_mib", max),
                         "kv_mib_per_rank": c * KV_BYTES_PER_TOKEN / kvp / 2**20 if not a.model else None})
    if a.json:
        print(json.dumps({"model": model, "threads": a.threads, "rows": rows}, indent=2))
        return
    print(f"model {os.path.basename(model)}, {a.threads} threads in all, {a.rounds} round(s), {a.decode} decode steps")
    print(f"{'context':>8} {'layout':>7} {'decode ms':>10} {'tok/s':>7} {'vs one':>7} {'predicted':>10} {'ratio':>6} "
          f"{'comm ms/step':>14} {'prefill s':>10} {'KV MiB/rank':>12} {'peak RSS MiB':>14}")
    for row in rows:
        one = next(x for x in rows if x["context"] == row["context"] and x["layout"] == "one")
        comm = "/".join(f"{v:.2f}" for v in row["comm_ms"]) or "-"
        rss = "/".join(f"{v:.0f}" for v in row["maxrss_mib"])
        kv = f"{row['kv_mib_per_rank']:.1f}" if row["kv_mib_per_rank"] is not None else "-"
        print(f"{row['context']:>8} {row['layout']:>7} {row['decode_ms']:>10.2f} {1e3 / row['decode_ms']:>7.1f} "
              f"{one['decode_ms'] / row['decode_ms']:>6.2f}x {row['predicted_ms']:>10.2f} "
              f"{row['decode_ms'] / row['predicted_ms']:>6.2f} {comm:>14} {row['prefill_s']:>10.1f} {kv:>12} {rss:>14}")


if __name__ == "__main__":
    main()
