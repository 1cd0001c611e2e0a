#!/usr/bin/env python3
"""lm-evaluation-harness (local-completions, log-likelihood) against `ridge serve` beside llama.cpp on
the same GGUF and the same tokens: accuracy of both, the largest per-item log-likelihood difference,
and items (scored choices) per second.

    python3 bench/lm_eval_side_by_side.py [-m MODEL] [--limit N] [--batch-size B] [--json out.json]

llama-server cannot be the anchor here: its /v1/completions refuses `echo` ("Only no echo is
supported" in its source; this build ignores it and returns no prompt log-probabilities), which lm_eval's
log-likelihood requests need. llama.cpp's numbers come from llama-cpp-python in this process with the
logits of every position: the test suite's portable AVX2 build, recomputing each item's context -- an
accuracy and log-likelihood reference, not a speed anchor."""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "conformance"))
import lm_eval_task  # noqa: E402
from serve_fixture import running_server  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", "--model", default="default", help="a GGUF path or a name tools/fetch_model.py knows")
    ap.add_argument("--limit", type=int, default=None, help="questions (default: all 50)")
    ap.add_argument("--batch-size", type=int, default=4, help="prompts per request (lm_eval's batch_size)")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    args = ap.parse_args()
    model = args.model
    if not pathlib.Path(model).exists():
        model = subprocess.run([sys.executable, str(ROOT / "tools" / "fetch_model.py"), model], check=True,
                               capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="ridge-tok-") as tok:
        lm_eval_task.hf_tokenizer_dir(model, tok)
        with running_server(args.ridge, model, threads=args.threads) as server:
            name = json.loads(server.request("GET", "/v1/models")[1])["data"][0]["id"]
            acc, ridge_ll, seconds, n_items, docs = lm_eval_task.run_lm_eval(server.base_url, name, tok, args.limit,
                                                                             args.batch_size)
        ref_ll, ref_acc, ref_seconds = lm_eval_task.llama_cpp_logliks(model, tok, docs, args.threads)
    diffs = [abs(a - b) for x, y in zip(ridge_ll, ref_ll) for a, b in zip(x, y)]
    figures = {"model": pathlib.Path(model).name, "questions": len(docs), "items": n_items,
               "ridge": {"acc": acc, "seconds": seconds, "items_per_s": n_items / seconds},
               "llama_cpp_avx2_oracle_in_process": {"acc": ref_acc, "seconds": ref_seconds, "items_per_s": n_items / ref_seconds},
               "loglik_abs_diff": {"max": max(diffs), "mean": sum(diffs) / len(diffs)}}
    print(f"{figures['model']}: {len(docs)} questions, {n_items} scored choices (lm_eval local-completions, "
          f"batch {args.batch_size}, {args.threads} threads)")
    print(f"{'':24} {'acc':>6} {'items/s':>9}")
    print(f"{'ridge serve':24} {acc:6.3f} {n_items / seconds:9.1f}")
    print(f"{'llama.cpp (AVX2 oracle)':24} {ref_acc:6.3f} {n_items / ref_seconds:9.1f}")
    print(f"per-item log-likelihood |ridge - llama.cpp|: max {max(diffs):.4f}, mean {sum(diffs) / len(diffs):.4f} nats")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
