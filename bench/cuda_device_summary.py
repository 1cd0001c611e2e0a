"""Summary of bench/cuda_device_check.sh: reads what the phases wrote and prints every figure.

usage: cuda_device_summary.py OUT TMP SECONDS
  OUT: unit.txt, probe.json, bench_default.json, bench_llama3_8b.json; summary.json is written there
  TMP: status (one "name rc=.. seconds=.." line per phase) and e2e_{cpu,cuda}_N.json (`ridge run --json`)
Standard library only (the GPU machine's Python has no project packages).
"""
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"{os.path.basename(path)}: {e}"}


def unit_results(path):
    text = open(path).read() if os.path.exists(path) else ""
    return {
        "passed": len(re.findall(r"^\[       OK \] ", text, re.M)),
        "failed": sorted(set(re.findall(r"^\[  FAILED  \] (\S+)", text, re.M))),
        "skipped": sorted(set(re.findall(r"^\[  SKIPPED \] ([A-Za-z]\S*)", text, re.M))),
    }


def e2e_results(tmp):
    results = []
    for cpu_file in sorted(glob.glob(os.path.join(tmp, "e2e_cpu_*.json"))):
        i = cpu_file.rsplit("_", 1)[1].split(".")[0]
        cpu, gpu = load(cpu_file), load(os.path.join(tmp, f"e2e_cuda_{i}.json"))
        if "tokens" not in cpu or "tokens" not in gpu:
            results.append({"prompt": i, "error": cpu.get("error") or gpu.get("error")})
            continue
        first = next((k for k, (a, b) in enumerate(zip(cpu["tokens"], gpu["tokens"])) if a != b), None)
        steps = max(len(gpu["tokens"]) - 1, 1)
        results.append({
            "prompt": i,
            "equal": cpu["tokens"] == gpu["tokens"],
            "first_difference": first,
            "tokens": len(cpu["tokens"]),
            "cpu_decode_tps": steps / max(cpu["decode_seconds"], 1e-9),
            "cuda_decode_tps": steps / max(gpu["decode_seconds"], 1e-9),
            "cpu_text": cpu["text"][:100],
            "cuda_text": gpu["text"][:100],
        })
    return results


def main():
    out, tmp, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    status = {}
    if os.path.exists(os.path.join(tmp, "status")):
        for line in open(os.path.join(tmp, "status")):
            name, _, value = line.strip().partition(" ")
            status[name] = value
    summary = {
        "seconds": seconds,
        "status": status,
        "unit": unit_results(os.path.join(out, "unit.txt")),
        "e2e": e2e_results(tmp),
        "probe": load(os.path.join(out, "probe.json")),
        "bench": {name: load(os.path.join(out, name + ".json")) for name in ("bench_default", "bench_llama3_8b")},
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)

    u = summary["unit"]
    print(f"unit tests: {u['passed']} passed, {len(u['failed'])} failed {u['failed']}, {len(u['skipped'])} skipped {u['skipped']}")
    for e in summary["e2e"]:
        print("e2e greedy CPU vs CUDA:", json.dumps(e))
    p = summary["probe"]
    print(f"probe: copy {p.get('copy_gbs', 0):.0f} GB/s, read {p.get('read_gbs', 0):.0f} GB/s, "
          f"bf16 {p.get('bf16_tflops', 0):.0f} TFLOP/s, fp8 {p.get('fp8_tflops', 0):.0f} TFLOP/s {p.get('error', '')}")
    for name, b in summary["bench"].items():
        if "error" in b:
            print(f"{name}: {b['error']}")
        for m in b.get("models", []):
            print(f"{name}: {m['model']} (roof {b.get('bandwidth_gbs', 0):.0f} GB/s from {b.get('bandwidth_source')}, "
                  f"bf16 peak {b.get('bf16_peak_tflops', 0):.0f} TFLOP/s)")
            for t in m["tests"]:
                print(f"  {t['test']:>7} x{t['batch']:<4} {t['tokens_per_second']:10.1f} tok/s {t['step_ms']:9.3f} ms/step "
                      f"{t['gbs']:7.0f} GB/s {t['tflops']:7.1f} TFLOP/s {100 * t['fraction']:5.1f}% of roof")
            for k in m.get("kernels", []):
                print(f"    {k['kernel']:<12} {k['launches']:4} launches {k['bytes'] / 1e6:9.2f} MB {k['us']:9.1f} us "
                      f"{k['gbs']:7.0f} GB/s")
    print(f"status: {json.dumps(status)}")
    print(f"total {seconds}s")


if __name__ == "__main__":
    main()
