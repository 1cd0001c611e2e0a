#!/usr/bin/env python3
"""A KV pool too small for the offered load, with and without the preemption guard of `ridge serve`.

Every request grows to prompt + output tokens while the pool holds only a few of them at full length,
so running requests are preempted and recomputed, and under a naive scheduler preempted again. The
guard (on by default; `--no-preemption-guard` turns it off) lowers the number of running requests when
preemptions cascade. Prints, per setting and round: preemptions, preemptions per second, output tok/s,
goodput under --slo, and the cascades the guard reported.

    python3 bench/preemption_cascade.py -m default --kv-memory 16MiB -n 48 --rounds 2
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
sys.path.insert(0, str(ROOT / "bench"))
from serve_fixture import start_server, stop_server  # noqa: E402
from bench_models import model_path  # noqa: E402


def run(args, model, guard, workdir):
    flags = ["--served-model-name", "default", "--kv-memory", args.kv_memory, "--max-num-seqs", str(args.max_num_seqs),
             "--no-prefix-caching"]
    if not guard:
        flags.append("--no-preemption-guard")
    server = start_server(args.ridge, model, *flags, ctx_size=args.ctx_size, threads=args.threads, startup_timeout=120)
    try:
        out = pathlib.Path(workdir) / f"guard{int(guard)}.json"
        subprocess.run([args.ridge, "bench", "serve", "--base-url", server.base_url, "-n", str(args.n),
                        "--request-rate", str(args.rate), "--input-len", f"fixed:{args.input_len}",
                        "--output-len", f"fixed:{args.output_len}", "--slo", args.slo, "--quiet", "--seed", "3",
                        "--json-out", str(out)], check=True, stdout=subprocess.DEVNULL)
        summary = json.loads(out.read_text())["summary"]
        m = server.metrics()
    finally:
        stop_server(server)
    pre = m["ridge:num_preemptions_total"]
    return {"guard": guard, "preemptions": pre, "preemptions_per_s": pre / summary["duration_s"],
            "output_tok_s": summary["output_throughput"], "goodput": summary["goodput"] or 0.0,
            "duration_s": summary["duration_s"], "cascades": m.get("ridge:slo_preemption_cascades_total", 0),
            "recomputed_tokens": m["ridge:prefill_tokens_computed_total"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    ap.add_argument("--kv-memory", default="16MiB")
    ap.add_argument("--ctx-size", type=int, default=512)
    ap.add_argument("--max-num-seqs", type=int, default=32)
    ap.add_argument("-n", type=int, default=48)
    ap.add_argument("--rate", default="4")
    ap.add_argument("--input-len", type=int, default=64)
    ap.add_argument("--output-len", type=int, default=256)
    ap.add_argument("--slo", default="ttft=10s,itl=1s")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    model = model_path(args.model)
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for r in range(args.rounds):
            for guard in (True, False) if r % 2 == 0 else (False, True):  # interleaved
                row = run(args, model, guard, workdir)
                row["round"] = r
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(f"{'guard':<6} {'preempt':>8} {'preempt/s':>10} {'out tok/s':>10} {'goodput':>8} {'cascades':>9} {'prefilled':>10}")
    for row in rows:
        print(f"{'on' if row['guard'] else 'off':<6} {row['preemptions']:>8.0f} {row['preemptions_per_s']:>10.2f} "
              f"{row['output_tok_s']:>10.1f} {row['goodput']:>8.3f} {row['cascades']:>9.0f} {row['recomputed_tokens']:>10.0f}")


if __name__ == "__main__":
    main()
