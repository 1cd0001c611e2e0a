#!/usr/bin/env python3
"""Quantization wall time: `ridge quantize` against llama.cpp's quantizer (llama_model_quantize,
the code behind llama-quantize, through llama-cpp-python) on the same input, the same threads,
interleaved rounds; also checks that both wrote the same bytes.

    python3 bench/quantize_speed.py [--input F16.gguf] [--types Q4_K_M,Q4_0,Q8_0] [--rounds 3] [--threads 2]

Default input: a synthetic F16 model of TinyLlama-1.1B's shape (`ridge synth tinyllama-1.1b -t F16`).
"""
import argparse
import ctypes
import filecmp
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import llama_cpp as lc

ROOT = pathlib.Path(__file__).resolve().parent.parent
FTYPES = {"Q8_0": 7, "Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9, "Q2_K": 10, "Q3_K_M": 12, "Q4_K_M": 15, "Q5_K_M": 17,
          "Q6_K": 18}
_quiet = lc.llama_log_callback(lambda level, text, user: None)


def llama_quantize(src, dst, type_name, threads):
    lc.llama_log_set(_quiet, ctypes.c_void_p(0))
    p = lc.llama_model_quantize_default_params()
    p.ftype = FTYPES[type_name]
    p.nthread = threads
    p.allow_requantize = True
    t = time.perf_counter()
    if lc.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(p)) != 0:
        sys.exit("llama_model_quantize failed")
    return time.perf_counter() - t


def ridge_quantize(ridge, src, dst, type_name, threads):
    t = time.perf_counter()
    subprocess.run([ridge, "quantize", str(src), str(dst), "--type", type_name, "-q", "-t", str(threads)], check=True,
                   capture_output=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input")
    ap.add_argument("--types", default="Q4_K_M,Q4_0,Q8_0")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--ridge", default=str(ROOT / "build" / "ridge"))
    a = ap.parse_args()
    src = a.input
    if not src:
        home = os.environ.get("RIDGE_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "ridge")
        src = os.path.join(home, "synth", "tinyllama-1.1b.F16.gguf")
        if not os.path.exists(src):
            subprocess.run([a.ridge, "synth", "tinyllama-1.1b", "-t", "F16", "-o", src], check=True, capture_output=True)
    print(f"input {src} ({os.path.getsize(src) / 2**30:.2f} GiB), {a.threads} threads, {a.rounds} interleaved rounds")
    print(f"{'type':8} {'ridge s':>8} {'llama.cpp s':>11} {'ratio':>6}  same bytes")
    with tempfile.TemporaryDirectory(prefix="ridge-qs-", dir=os.path.dirname(os.path.abspath(src))) as tmp:
        for t in a.types.split(","):
            ours, theirs = [], []
            ridge_out, llama_out = os.path.join(tmp, "ridge.gguf"), os.path.join(tmp, "llama.gguf")
            for r in range(a.rounds):
                order = [0, 1] if r % 2 == 0 else [1, 0]
                for k in order:
                    if k == 0:
                        ours.append(ridge_quantize(a.ridge, src, ridge_out, t, a.threads))
                    else:
                        theirs.append(llama_quantize(src, llama_out, t, a.threads))
            same = filecmp.cmp(ridge_out, llama_out, shallow=False)
            mo, mt = statistics.median(ours), statistics.median(theirs)
            print(f"{t:8} {mo:8.2f} {mt:11.2f} {mt / mo:5.2f}x  {'yes' if same else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
