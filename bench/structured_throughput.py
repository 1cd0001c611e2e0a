#!/usr/bin/env python3
"""Structured output's speed at batch 1: the same JSON-schema request through `ridge run` with
jump-forward, without it, and unconstrained for the same number of output tokens, interleaved over
several rounds. Prints output tokens per second of generation (first token to last) for each, and the
ratios. A schema with fixed keys is where jump-forward pays: the forced keys cost one prefill of a few
tokens instead of a decode step each.

    python3 bench/structured_throughput.py [--ridge build/ridge] [-m default] [--rounds 3]
"""
import argparse
import json
import statistics
import subprocess

SCHEMA = {
    "type": "object",
    "properties": {
        "customerIdentifier": {"type": "integer", "minimum": 0, "maximum": 999999},
        "shippingAddressLine": {"type": "string", "maxLength": 24},
        "deliveryInstructions": {"type": "string", "maxLength": 24},
        "expeditedShipping": {"type": "boolean"},
        "preferredCarrierName": {"enum": ["UPS", "FedEx", "DHL"]},
        "numberOfPackages": {"type": "integer", "minimum": 1, "maximum": 9},
    },
    "required": ["customerIdentifier", "shippingAddressLine", "deliveryInstructions", "expeditedShipping",
                 "preferredCarrierName", "numberOfPackages"],
    "additionalProperties": False,
}


def run(ridge, model, extra, max_tokens=200):
    cmd = [ridge, "run", "-m", model, "--chat", "-p", "Write a shipping order as JSON.", "-n", str(max_tokens), "--json",
           "-t", "2", *extra]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return len(out["tokens"]), out["decode_seconds"] + out["prefill_seconds"], out["prefill_seconds"], out["text"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ridge", default="build/ridge")
    ap.add_argument("-m", "--model", default="default")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    schema = ["--json-schema", json.dumps(SCHEMA)]
    rates = {"jump-forward": [], "no jump-forward": [], "unconstrained": []}
    for _ in range(a.rounds):
        n, total, prefill, text = run(a.ridge, a.model, schema)
        rates["jump-forward"].append(n / (total - prefill))
        n2, total2, prefill2, _ = run(a.ridge, a.model, schema + ["--no-jump-forward"])
        rates["no jump-forward"].append(n2 / (total2 - prefill2))
        n3, total3, prefill3, _ = run(a.ridge, a.model, ["--ignore-eos"], max_tokens=n)
        rates["unconstrained"].append(n3 / (total3 - prefill3))
    print(f"output: {text}")
    base = statistics.median(rates["unconstrained"])
    for name, r in rates.items():
        m = statistics.median(r)
        print(f"{name:16} {m:8.1f} tok/s  ({m / base:.2f}x unconstrained)  rounds: {', '.join(f'{x:.1f}' for x in r)}")


if __name__ == "__main__":
    main()
