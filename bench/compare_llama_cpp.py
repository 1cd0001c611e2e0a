#!/usr/bin/env python3
"""ridge vs llama.cpp, side by side: pp512 and tg128 tok/s on the same GGUF files and thread counts.

Each round runs, for every (model, threads): `ridge bench run --json` (one timed run after its
warm-up), then llama.cpp with use_mmap=True and with use_mmap=False (each: load, warm-up, one timed
pp and tg). Rounds interleave the engines so drift in the machine's speed hits both alike. The table
gives mean ± stddev over rounds and the ratio ridge / llama.cpp, where llama.cpp is the faster of
its two mmap settings (mmap'd weights can decode several times slower on virtual machines).

llama.cpp is driven through llama-cpp-python's low-level API, measured as llama-bench does:
pp N = one llama_decode of N random tokens on an empty cache; tg N = N single-token llama_decode
calls on an empty cache (the same definitions as `ridge bench run`).

The llama.cpp here is llama-cpp-python 0.3.36 as tools/setup_test_deps.sh builds it: a portable
AVX2 build (GGML_NATIVE=OFF, AVX2 + FMA + F16C, no AVX-512 and no AMX, OpenMP threads, CPU
repacking on). Its native AMX path crashes in llama_decode on these virtual machines.

Default set: the default model (SmolLM2-135M Q4_1) and synthetic tinyllama-1.1b in Q4_0, Q4_1 and
Q8_0 (written with `ridge synth` into $RIDGE_HOME/synth/ when missing), at 1 and 2 threads.

    python3 bench/compare_llama_cpp.py [--ridge build/ridge] [-m FILE ...] [-t 1,2] [-r 3] [--json]
"""
import argparse
import ctypes
import json
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ridge_home():
    return os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")


def default_models(ridge):
    models = [os.path.join(ridge_home(), "models", "SmolLM2-135M-Instruct.Q4_1.gguf")]
    for type_name in ("Q4_0", "Q4_1", "Q8_0"):
        path = os.path.join(ridge_home(), "synth", f"tinyllama-1.1b.{type_name}.gguf")
        if not os.path.exists(path):
            print(f"writing {path}", file=sys.stderr)
            subprocess.run([ridge, "synth", "tinyllama-1.1b", "-t", type_name, "-o", path], check=True)
        models.append(path)
    return models


def run_ridge(ridge, model, threads, n_prompt, n_gen):
    """One timed pp and tg run (after ridge's own warm-up): {"pp": tok/s, "tg": tok/s}."""
    out = subprocess.run([ridge, "bench", "run", "-m", model, "-t", str(threads), "-p", str(n_prompt),
                          "-n", str(n_gen), "-r", "1", "--json"], check=True, capture_output=True, text=True)
    results = json.loads(out.stdout)["results"]
    return {r["test"][:2]: r["mean_tps"] for r in results}


_log_callback = None  # kept alive while llama.cpp holds it


def quiet_llama_cpp(llama_cpp):
    """Drop llama.cpp's load and context logs (errors still raise here)."""
    global _log_callback
    if _log_callback is None:
        _log_callback = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p())


class LlamaCpp:
    """A llama.cpp model and context through the low-level API."""

    def __init__(self, path, threads, use_mmap, n_ctx):
        import llama_cpp
        self.lib = llama_cpp
        quiet_llama_cpp(llama_cpp)
        llama_cpp.llama_backend_init()
        mparams = llama_cpp.llama_model_default_params()
        mparams.use_mmap = use_mmap
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), mparams)
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = n_ctx
        cparams.n_ubatch = n_ctx
        cparams.n_threads = threads
        cparams.n_threads_batch = threads
        self.ctx = llama_cpp.llama_init_from_model(self.model, cparams)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(llama_cpp.llama_model_get_vocab(self.model))
        self.rng = random.Random(1)

    def close(self):
        self.lib.llama_free(self.ctx)
        self.lib.llama_model_free(self.model)

    def _decode(self, tokens):
        array = (self.lib.llama_token * len(tokens))(*tokens)
        if self.lib.llama_decode(self.ctx, self.lib.llama_batch_get_one(array, len(tokens))) != 0:
            raise RuntimeError("llama_decode failed")

    def _tokens(self, n):
        return [self.rng.randrange(self.n_vocab) for _ in range(n)]

    def _clear(self):
        self.lib.llama_memory_clear(self.lib.llama_get_memory(self.ctx), True)

    def prefill_seconds(self, n):
        tokens = self._tokens(n)
        self._clear()
        start = time.perf_counter()
        self._decode(tokens)
        self.lib.llama_synchronize(self.ctx)
        return time.perf_counter() - start

    def generate_seconds(self, n):
        tokens = self._tokens(n)
        self._clear()
        start = time.perf_counter()
        for t in tokens:
            self._decode([t])
        self.lib.llama_synchronize(self.ctx)
        return time.perf_counter() - start


def run_llama_cpp(model, threads, use_mmap, n_prompt, n_gen):
    engine = LlamaCpp(model, threads, use_mmap, n_ctx=max(n_prompt, n_gen) + 16)
    try:
        engine.prefill_seconds(n_prompt)  # warm-up: pages in the weights, sizes the buffers
        engine.generate_seconds(4)
        return {"pp": n_prompt / engine.prefill_seconds(n_prompt), "tg": n_gen / engine.generate_seconds(n_gen)}
    finally:
        engine.close()


def summary(values):
    return {"mean": statistics.mean(values), "stddev": statistics.stdev(values) if len(values) > 1 else 0.0,
            "runs": values}


def compare(args):
    models = args.models or default_models(args.ridge)
    engines = ["ridge", "llama.cpp mmap", "llama.cpp no-mmap"]
    samples = {}  # (model, threads, engine, test) -> [tok/s]
    for round_index in range(args.rounds):
        for model in models:
            for threads in args.threads:
                name = os.path.basename(model)
                print(f"round {round_index + 1}/{args.rounds}: {name} t={threads}", file=sys.stderr)
                runs = {"ridge": run_ridge(args.ridge, model, threads, args.n_prompt, args.n_gen),
                        "llama.cpp mmap": run_llama_cpp(model, threads, True, args.n_prompt, args.n_gen),
                        "llama.cpp no-mmap": run_llama_cpp(model, threads, False, args.n_prompt, args.n_gen)}
                for engine, speeds in runs.items():
                    for test, tps in speeds.items():
                        samples.setdefault((model, threads, engine, test), []).append(tps)
    rows = []
    for model in models:
        for threads in args.threads:
            row = {"model": os.path.basename(model), "path": model, "threads": threads}
            for test in ("pp", "tg"):
                stats = {e: summary(samples[(model, threads, e, test)]) for e in engines}
                best = max(engines[1:], key=lambda e: stats[e]["mean"])
                row[test] = {"ridge": stats["ridge"], "llama_cpp": stats[best], "llama_cpp_setting": best,
                             "llama_cpp_other": stats[engines[2] if best == engines[1] else engines[1]],
                             "ratio": stats["ridge"]["mean"] / stats[best]["mean"]}
            rows.append(row)
    return rows


def print_table(rows, n_prompt, n_gen):
    def cell(s):
        return f"{s['mean']:.2f} ± {s['stddev']:.2f}"

    header = (f"| {'model':<36} | {'t':>2} | {'ridge pp' + str(n_prompt):>18} | {'llama.cpp pp' + str(n_prompt):>18} "
              f"| {'ratio':>5} | {'ridge tg' + str(n_gen):>16} | {'llama.cpp tg' + str(n_gen):>16} | {'ratio':>5} | {'llama.cpp best':<22} |")
    print(header)
    print("|" + "|".join("-" * len(part) for part in header.split("|")[1:-1]) + "|")
    for r in rows:
        pp, tg = r["pp"], r["tg"]
        settings = f"pp {pp['llama_cpp_setting'][10:]}, tg {tg['llama_cpp_setting'][10:]}"
        print(f"| {r['model']:<36} | {r['threads']:>2} | {cell(pp['ridge']):>18} | {cell(pp['llama_cpp']):>18} "
              f"| {pp['ratio']:>5.2f} | {cell(tg['ridge']):>16} | {cell(tg['llama_cpp']):>16} | {tg['ratio']:>5.2f} "
              f"| {settings:<22} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ridge", default=os.path.join(ROOT, "build", "ridge"), help="ridge binary")
    parser.add_argument("-m", "--model", dest="models", action="append", help="GGUF file (repeatable)")
    parser.add_argument("-t", "--threads", default="1,2", help="thread counts, e.g. 1,2")
    parser.add_argument("-p", "--n-prompt", type=int, default=512)
    parser.add_argument("-n", "--n-gen", type=int, default=128)
    parser.add_argument("-r", "--rounds", type=int, default=3, help="interleaved rounds (repetitions)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    rows = compare(args)
    if args.json:
        print(json.dumps({"n_prompt": args.n_prompt, "n_gen": args.n_gen, "rounds": args.rounds, "results": rows},
                         indent=2))
    else:
        print_table(rows, args.n_prompt, args.n_gen)


if __name__ == "__main__":
    main()
