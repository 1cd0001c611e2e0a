#!/usr/bin/env python3
"""Goodput under a latency SLO: `ridge serve --slo` alone against a grid search over
--max-num-seqs x --prefill-chunk and against the default configuration, on one workload.

The workload (Poisson arrivals, --seed fixed): most prompts short (uniform 32..384 tokens), a share
of long ones (2,000 tokens), outputs uniform 32..96 tokens. Each configuration gets a fresh server
and `ridge bench serve --sweep-rates` over the same rates; the script prints goodput (requests per
second that met every objective) per configuration and rate, the best grid point per rate, and the
ratios the SLO issue asks for:
  * --slo against the best grid point, rate by rate;
  * --slo against the default configuration at the first rate where the default breaks the SLO
    (fewer than 90% of its requests met every objective);
plus the capacity the --slo plan printed (streams at the design context) next to the measured knee
(the highest rate at which 90% of the requests met every objective).

    python3 bench/slo_sweep.py -m default --slo ttft=5s,itl=150ms --rates 0.15,0.25,0.35,0.5 -n 20
"""
import argparse
import json
import pathlib
import random
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
from serve_fixture import start_server, stop_server  # noqa: E402
sys.path.insert(0, str(ROOT / "bench"))
from bench_models import model_path  # noqa: E402

WORDS = ("time year people way day man thing woman life child world school state family student group country "
         "problem hand part place case week company system program question work government number night point "
         "home water room mother area money story fact month lot right study book eye job word business issue").split()


def write_dataset(path, n, seed, long_share, long_len):
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(n):
            length = long_len if rng.random() < long_share else rng.randint(32, 384)
            prompt = " ".join(rng.choice(WORDS) for _ in range(length))
            f.write(json.dumps({"prompt": prompt, "max_tokens": rng.randint(32, 96)}) + "\n")


def run_config(args, model, name, flags, dataset, workdir):
    server = start_server(args.ridge, model, "--served-model-name", "default", *flags, ctx_size=args.ctx_size,
                          threads=args.threads, startup_timeout=300)
    try:
        points = []
        # One run per rate, each with its own seed: a level must not replay the prompts of the one before,
        # which the prefix cache would then serve. Every configuration sees the same requests per rate.
        for i, rate in enumerate(args.rates.split(",")):
            out = pathlib.Path(workdir) / f"{name}-{i}.json"
            cmd = [args.ridge, "bench", "serve", "--base-url", server.base_url, "--dataset", dataset, "-n", str(args.n),
                   "--warmup", "2" if i == 0 else "0", "--request-rate", rate, "--slo", args.slo,
                   "--seed", str(args.seed + 101 * i), "--quiet", "--json-out", str(out)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            point = json.loads(out.read_text())["summary"]
            point["rate"] = float(rate)
            points.append(point)
        log = server.log(tail=20000)
    finally:
        stop_server(server)
    streams = re.search(r"holds (\d+) concurrent streams at context <= (\d+)", log)
    plan = {"streams": int(streams.group(1)), "context": int(streams.group(2))} if streams else None
    return [{"rate": p["rate"], "goodput": p["goodput"] or 0.0, "itl_p99_ms": p["itl_ms"]["p99"],
             "ttft_p99_ms": p["ttft_ms"]["p99"], "throughput": p["request_throughput"], "failed": p["failed"],
             "good": p["good_requests"], "completed": p["completed"]} for p in points], plan


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    ap.add_argument("--slo", default="ttft=5s,itl=150ms")
    ap.add_argument("--rates", default="0.15,0.25,0.35,0.5")
    ap.add_argument("-n", type=int, default=24, help="requests per rate")
    ap.add_argument("--seqs", default="4,16", help="grid: --max-num-seqs values")
    ap.add_argument("--chunks", default="32,128", help="grid: --prefill-chunk values")
    ap.add_argument("--long-share", type=float, default=0.15)
    ap.add_argument("--long-len", type=int, default=2000)
    ap.add_argument("--ctx-size", type=int, default=4096)
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json-out")
    args = ap.parse_args()
    model = model_path(args.model)
    with tempfile.TemporaryDirectory() as workdir:
        dataset = str(pathlib.Path(workdir) / "workload.jsonl")
        write_dataset(dataset, 8 * args.n, args.seed, args.long_share, args.long_len)
        configs = [("default", []), ("slo", ["--slo", args.slo])]
        for s in args.seqs.split(","):
            for c in args.chunks.split(","):
                configs.append((f"seqs{s}-chunk{c}", ["--max-num-seqs", s, "--prefill-chunk", c]))
        results, plan = {}, None
        for name, flags in configs:
            print(f"== {name}: ridge serve {' '.join(flags)}", file=sys.stderr, flush=True)
            results[name], p = run_config(args, model, name, flags, dataset, workdir)
            if name == "slo":
                plan = p
    rates = [r["rate"] for r in results["default"]]
    grid = [n for n in results if n.startswith("seqs")]
    print(f"goodput (req/s meeting {args.slo}); ITL p99 ms in brackets")
    print(f"{'config':<18}" + "".join(f"{'rate ' + str(r):>20}" for r in rates))
    for name, pts in results.items():
        print(f"{name:<18}" + "".join(f"{p['goodput']:>10.3f} [{p['itl_p99_ms']:>6.0f}]" for p in pts))
    summary = {"slo": args.slo, "model": args.model, "rates": rates, "results": results, "plan": plan}
    vs_grid = []
    for i, r in enumerate(rates):
        best = max(grid, key=lambda n: results[n][i]["goodput"])
        g = results[best][i]["goodput"]
        ratio = results["slo"][i]["goodput"] / g if g > 0 else float("nan")
        vs_grid.append({"rate": r, "best_grid": best, "ratio": ratio})
        print(f"rate {r}: --slo / best grid ({best}) = {ratio:.2f}")
    summary["slo_vs_best_grid"] = vs_grid
    # Broken: fewer than 90% of the requests met the SLO.
    broken = next((i for i, p in enumerate(results["default"]) if p["good"] < 0.9 * p["completed"]), None)
    if broken is not None:
        d = results["default"][broken]["goodput"]
        ratio = results["slo"][broken]["goodput"] / d if d > 0 else float("inf")
        summary["slo_vs_default_at_break"] = {"rate": rates[broken], "ratio": ratio}
        print(f"the default first breaks the SLO at rate {rates[broken]}: --slo / default = {ratio:.2f}")
    else:
        print("the default never broke the SLO at these rates")
    knee = max((p["rate"] for p in results["slo"] if p["good"] >= 0.9 * p["completed"]), default=None)
    summary["slo_knee_rate"] = knee
    if plan:
        print(f"the --slo plan: {plan['streams']} streams at context <= {plan['context']}; measured knee: rate {knee}")
    if args.json_out:
        pathlib.Path(args.json_out).write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
