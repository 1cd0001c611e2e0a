#!/usr/bin/env python3
"""Every injected fault in one report: runs the fault tests of the suite (pytest, each test on its own
server) and writes which faults the server survived, how long each took, and why one failed.

Faults: SIGKILL while the disk tier writes, then a restart (test_faults); a full file system under the
disk tier (test_faults); a cgroup memory limit (test_faults); a prefill instance killed or stopped
with SIGSTOP mid-transfer and a decode instance that dies (test_disagg); an MPI rank killed or stopped
with SIGSTOP (test_parallel_faults). A soak run's report (bench/soak.py --out DIR) can be joined in
with --soak DIR/soak.json.

    python3 bench/fault_report.py --out bench/results/faults.json
    python3 bench/fault_report.py --soak bench/results/soak-X/soak.json --out faults.json
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFORMANCE = ROOT / "tests" / "conformance"

FAULTS = [
    ("test_faults.py::test_sigkill_while_the_disk_tier_writes_loses_and_serves_nothing_bad",
     "SIGKILL while the disk tier writes; restart on the same directory"),
    ("test_faults.py::test_a_full_disk_tier_turns_into_misses_not_errors", "the disk tier's file system full (2 MiB tmpfs)"),
    ("test_faults.py::test_under_a_memory_limit_the_server_refuses_rather_than_dies", "a cgroup memory limit (~110 MiB above the started server)"),
    ("test_disagg.py::test_a_prefill_instance_that_dies_mid_transfer_costs_a_re_prefill", "a prefill instance killed mid-transfer"),
    ("test_disagg.py::test_a_prefill_instance_that_hangs_is_timed_out", "a prefill instance stopped (SIGSTOP) mid-transfer"),
    ("test_disagg.py::test_a_decode_instance_that_dies_frees_the_prefill_side", "a decode instance killed"),
    ("test_parallel_faults.py::test_a_killed_rank_ends_the_job", "an MPI rank killed"),
    ("test_parallel_faults.py::test_a_hung_rank_gives_503_then_ends_the_job", "an MPI rank stopped (SIGSTOP)"),
]


def run_tests(selected):
    with tempfile.TemporaryDirectory() as tmp:
        junit = pathlib.Path(tmp) / "junit.xml"
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", f"--junitxml={junit}", *[t for t, _ in selected]],
                       cwd=CONFORMANCE, check=False)
        wall = time.monotonic() - started
        cases = {}
        for case in ET.parse(junit).getroot().iter("testcase"):
            outcome, why = "passed", ""
            for tag in ("failure", "error", "skipped"):
                node = case.find(tag)
                if node is not None:
                    outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                    why = (node.get("message") or node.text or "").strip().splitlines()[0][:300] if (node.get("message") or node.text) else ""
            cases[case.get("name")] = {"outcome": outcome, "seconds": float(case.get("time", 0)), "why": why}
    return cases, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the report here (JSON)")
    ap.add_argument("--soak", help="a soak report (soak.json) to join in")
    ap.add_argument("-k", help="only the faults whose test name contains this")
    args = ap.parse_args()
    selected = [(t, d) for t, d in FAULTS if not args.k or args.k in t]
    cases, wall = run_tests(selected)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    rows = []
    for test, description in selected:
        name = test.split("::")[1]
        c = cases.get(name, {"outcome": "not run", "seconds": 0, "why": ""})
        rows.append({"fault": description, "test": test, **c})
    report = {"cpu": cpu, "wall_seconds": round(wall, 1), "faults": rows}
    if args.soak:
        soak = json.loads(pathlib.Path(args.soak).read_text())
        report["soak"] = {k: soak[k] for k in ("config", "targets", "summary") if k in soak} or soak
    print(f"{'fault':58} {'outcome':8} {'s':>6}")
    for r in rows:
        print(f"{r['fault'][:58]:58} {r['outcome']:8} {r['seconds']:6.1f}" + (f"  ({r['why']})" if r["why"] else ""))
    if args.out:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(report, indent=1))
    return 0 if all(r["outcome"] == "passed" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
