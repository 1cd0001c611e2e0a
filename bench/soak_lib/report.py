"""The soak's report: counts per kind, failures grouped by cause, the latency of the first vs the last
window, growth over the last two thirds (drained and under load), the targets, soak.json, requests.jsonl and
the text summary."""
import json
import math
import os
import re
import subprocess

from .common import FLAT_KEYS, LATENCY_KINDS, ROOT, UNEXPECTED, f2, fmt_num, percentile


def cpu_model():
    name, count = None, 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    count += 1
                    name = name or line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {"model": name, "logical_cpus": count or os.cpu_count()}


def git_describe():
    try:
        return subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def cause_key(rec):
    """What groups failures: status, error type/code and the message with its numbers blanked."""
    if rec["outcome"] in ("transport_error", "timeout"):
        return f"{rec['outcome']}: {re.sub(r'[0-9]+', 'N', rec.get('error_message') or '')[:160]}"
    status = rec.get("status")
    kind = f"{rec.get('error_type') or '-'}/{rec.get('error_code') or '-'}"
    msg = re.sub(r"[0-9]+", "N", rec.get("error_message") or "")[:160]
    prefix = "stream error after 200" if rec["outcome"] == "stream_error" else str(status)
    return f"{prefix} {kind}: {msg}"


def growth(samples, key, t_from, t_to, denom=None):
    """Least-squares line through (t, value) over [t_from, t_to]: its rise over the window as a percent of
    the window's mean value (or of `denom`)."""
    pts = [(s["t"], s[key]) for s in samples if s["phase"] == "load" and t_from <= s["t"] <= t_to and s[key] is not None]
    if len(pts) < 3:
        return {"n": len(pts), "growth_pct": None}
    n = len(pts)
    mt = sum(t for t, _ in pts) / n
    mv = sum(v for _, v in pts) / n
    var = sum((t - mt) ** 2 for t, _ in pts)
    slope = sum((t - mt) * (v - mv) for t, v in pts) / var if var > 0 else 0.0
    rise = slope * (pts[-1][0] - pts[0][0])
    base = denom if denom else mv
    return {"n": n, "first": pts[0][1], "last": pts[-1][1], "min": min(v for _, v in pts),
            "max": max(v for _, v in pts), "mean": round(mv, 3), "slope_per_min": round(slope * 60, 4),
            "growth_pct": round(100.0 * rise / base, 3) if base else None, "relative_to": "pool" if denom else "mean"}


def latency_window(records, t_from, t_to):
    rs = [r for r in records if r["kind"] in LATENCY_KINDS and r["outcome"] == "ok" and t_from <= r["t_start"] < t_to]
    ttft = [r["ttft"] for r in rs if r.get("ttft") is not None]
    itl = [x for r in rs for x in r.get("_itl", [])]
    ms = (lambda v: None if v is None else round(1e3 * v, 2))
    return {"from_s": round(t_from, 1), "to_s": round(t_to, 1), "streams": len(rs), "itl_gaps": len(itl),
            "ttft_p50_ms": ms(percentile(ttft, 50)), "ttft_p99_ms": ms(percentile(ttft, 99)),
            "itl_p50_ms": ms(percentile(itl, 50)), "itl_p99_ms": ms(percentile(itl, 99))}


def window_cpu(samples, t_from, t_to):
    """Cores the server and the rest of the machine (not this script) used on average over about [t_from, t_to]:
    between the samples nearest to its ends."""
    pts = sorted((s for s in samples if s.get("cpu_machine_s") is not None and s.get("cpu_server_s") is not None),
                 key=lambda s: s["t"])
    if len(pts) < 2:
        return {"server_cores": None, "other_cores": None}
    a = min(pts, key=lambda s: abs(s["t"] - t_from))
    b = min(pts, key=lambda s: abs(s["t"] - t_to))
    if b["t"] <= a["t"]:
        return {"server_cores": None, "other_cores": None}
    dt = b["t"] - a["t"]
    server = b["cpu_server_s"] - a["cpu_server_s"]
    other = (b["cpu_machine_s"] - a["cpu_machine_s"]) - server - (b["cpu_client_s"] - a["cpu_client_s"])
    return {"server_cores": round(server / dt, 3), "other_cores": round(max(0.0, other) / dt, 3),
            "cpu_from_s": a["t"], "cpu_to_s": b["t"]}


def build_report(soak, args, cmd, shutdown, duration_run, idle, baseline):
    recs = soak.records
    if soak.crash:
        # What broke when the server died is the crash, not a failure of its own: the crash time is when the
        # script saw the exit (polled every 0.25 s).
        for r in recs:
            if r["outcome"] in ("transport_error", "timeout", "stream_error") and r["t_end"] >= soak.crash["t"] - 0.5:
                r["outcome"] = "server_down"
    kinds = {}
    for r in recs:
        k = kinds.setdefault(r["kind"], {"sent": 0, "answered": 0, "outcomes": {}, "statuses": {}, "anomalies": 0})
        k["sent"] += 1
        k["outcomes"][r["outcome"]] = k["outcomes"].get(r["outcome"], 0) + 1
        if r.get("status") is not None:
            k["statuses"][str(r["status"])] = k["statuses"].get(str(r["status"]), 0) + 1
        if r["outcome"] in ("ok", "expected_400", "cancelled", "vanished"):
            k["answered"] += 1
        if r.get("anomaly"):
            k["anomalies"] += 1
    for k, v in kinds.items():
        lat = [r["latency"] for r in recs if r["kind"] == k and r["outcome"] == "ok" and r.get("latency") is not None]
        v["latency_p50_ms"] = None if not lat else round(1e3 * percentile(lat, 50), 1)
        v["latency_p99_ms"] = None if not lat else round(1e3 * percentile(lat, 99), 1)

    def by_cause(rs):
        out = {}
        for r in rs:
            key = cause_key(r)
            e = out.setdefault(key, {"count": 0, "kinds": {}, "example": None})
            e["count"] += 1
            e["kinds"][r["kind"]] = e["kinds"].get(r["kind"], 0) + 1
            if e["example"] is None:
                e["example"] = {k: v for k, v in r.items() if not k.startswith("_")}
        return dict(sorted(out.items(), key=lambda kv: -kv[1]["count"]))

    unexpected = [r for r in recs if r["outcome"] in UNEXPECTED]
    unexpected_5xx = [r for r in unexpected if r["outcome"] == "http_error" and (r.get("status") or 0) >= 500]
    anomalies = {}
    for r in recs:
        if r.get("anomaly"):
            key = f"{r['kind']}: {re.sub(r'[0-9]+', 'N', r['anomaly'])[:100]}"
            anomalies[key] = anomalies.get(key, 0) + 1

    d = duration_run
    w = min(300.0, d / 6.0)
    first = {**latency_window(recs, 0.0, w), **window_cpu(soak.samples, 0.0, w)}
    last = {**latency_window(recs, d - w, d + 1e-9), **window_cpu(soak.samples, d - w, d)}
    busy = max(first.get("other_cores") or 0.0, last.get("other_cores") or 0.0)
    flat_from = d / 3.0
    kv_total = next((s["kv_blocks_total"] for s in soak.samples if s.get("kv_blocks_total")), None)
    ck, end = soak.checkpoints.get("checkpoint"), soak.checkpoints.get("idle")

    def drained(key, denom=None):
        if ck is None or end is None or ck.get(key) is None or end.get(key) is None:
            return None
        a, b = ck[key], end[key]
        base = denom or a
        pct = 100.0 * (b - a) / base if base else (0.0 if a == b else math.inf)
        return {"checkpoint": a, "end": b, "growth_pct": round(pct, 3), "relative_to": "pool" if denom else "checkpoint"}

    flat = {"window_s": [round(flat_from, 1), round(d, 1)],
            "checkpoint_t": None if ck is None else ck["t"]}
    for key in FLAT_KEYS:
        denom = kv_total if key == "kv_blocks_used" else None
        flat[key] = {"under_load": growth(soak.samples, key, flat_from, d, denom=denom), "drained": drained(key, denom)}

    targets = []

    def target(name, ok, value, goal):
        targets.append({"target": name, "pass": ok, "value": value, "goal": goal})

    target("no crash", soak.crash is None, "alive" if soak.crash is None else
           f"exited with {soak.crash['returncode']} ({soak.crash.get('signal') or 'status'}) at {soak.crash['t']} s",
           "the server never exits during the run")
    target("clean shutdown", shutdown.get("returncode") == 0 and not shutdown.get("killed"),
           shutdown, "exit status 0 within --shutdown-wait s of SIGTERM")
    target("unexpected 5xx", len(unexpected_5xx) == 0, len(unexpected_5xx), 0)
    target("other unexpected failures", len(unexpected) - len(unexpected_5xx) == 0,
           len(unexpected) - len(unexpected_5xx), "0 (unexpected 4xx, broken streams, transport errors, timeouts)")
    for key, name in FLAT_KEYS.items():
        # Drained: the idle server at the checkpoint vs at the end (exact; what a leak leaves behind). Under
        # load: a least-squares line through the samples, a target only for RSS and threads (fds and KV
        # blocks follow the load).
        dr = flat[key]["drained"]
        ul = flat[key]["under_load"]["growth_pct"] if key in ("rss_bytes", "threads") else None
        values = [g for g in ((dr or {}).get("growth_pct"), ul) if g is not None]
        sc, unit = (2**20, " MiB") if key == "rss_bytes" else (1, "")
        shown = "; ".join(x for x in ((None if dr is None else
                                       f"drained {dr['checkpoint'] / sc:.1f} -> {dr['end'] / sc:.1f}{unit} ({dr['growth_pct']:+.2f}%)"),
                                      (None if ul is None else f"under load {ul:+.2f}%")) if x)
        target(f"{name} growth over the last two thirds", None if dr is None else all(g < args.growth_target for g in values),
               shown or "-", f"< {args.growth_target}%" + (" of the pool" if key == "kv_blocks_used" else ""))
    idle_kv = None if idle is None else idle.get("kv_blocks_used")
    target("KV blocks in use after the load drained", None if idle_kv is None else idle_kv == 0,
           "-" if idle_kv is None else int(idle_kv), 0)
    for metric in ("ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms"):
        a, b = first[metric], last[metric]
        enough = first["streams"] >= args.min_window_streams and last["streams"] >= args.min_window_streams
        if a is None or b is None or not enough or a == 0:
            target(f"{metric} last vs first window", None,
                   f"{fmt_num(a)} -> {fmt_num(b)} ms ({first['streams']} and {last['streams']} streams: too few)",
                   f"within {args.latency_tolerance}%")
        else:
            change = 100.0 * (b - a) / a
            note = f"; other processes used {busy:.2f} cores" if busy > args.busy_cores else ""
            target(f"{metric} last vs first window", abs(change) <= args.latency_tolerance,
                   f"{a:.1f} -> {b:.1f} ms ({change:+.1f}%{note})", f"within {args.latency_tolerance}%")

    counts = {o: sum(1 for r in recs if r["outcome"] == o) for o in sorted({r["outcome"] for r in recs})}
    last_m = next((x for x in reversed(soak.samples) if x.get("kv_blocks_total") is not None), {})
    counter_keys = ("prefix_hits", "prefix_queries", "tier_hits_ram", "tier_hits_disk", "tier_blocks_ram",
                    "tier_blocks_disk", "tier_disk_writes", "tier_corrupt_files", "tier_load_failures",
                    "spec_draft_tokens", "spec_accepted_tokens", "preemptions", "aborted", "generation_tokens")
    counters = {k: last_m.get(k) for k in counter_keys}
    if counters.get("spec_draft_tokens"):
        counters["spec_acceptance"] = round(counters["spec_accepted_tokens"] / counters["spec_draft_tokens"], 4)
    if counters.get("prefix_queries"):
        counters["prefix_hit_rate"] = round(counters["prefix_hits"] / counters["prefix_queries"], 4)
    return {
        "issue": 48,
        "started": soak.started_wall,
        "duration_s": round(d, 1),
        "interrupted": soak.interrupted,
        "config": {k: v for k, v in vars(args).items()},
        "server_command": cmd,
        "ridge_version": git_describe(),
        "cpu": cpu_model(),
        "requests": len(recs),
        "outcomes": counts,
        "kinds": dict(sorted(kinds.items())),
        "bursts": soak.bursts,
        "pauses": soak.pauses,
        "expected_failures": by_cause([r for r in recs if r["outcome"] == "expected_400"]),
        "unexpected_failures": by_cause(unexpected),
        "unexpected_5xx": len(unexpected_5xx),
        "client_bugs": by_cause([r for r in recs if r["outcome"] == "client_bug"]),
        "server_down_after_crash": sum(1 for r in recs if r["outcome"] == "server_down"),
        "anomalies": anomalies,
        "crash": soak.crash,
        "shutdown": shutdown,
        "metrics_scrape_failures": soak.metrics_failures,
        "metrics_scrape_max_s": max((x["metrics_scrape_s"] for x in soak.samples), default=None),
        "server_counters": counters,
        "latency": {"window_s": round(w, 1), "first": first, "last": last,
                    "machine_busy": busy > args.busy_cores},
        "flatness": flat,
        "baseline_idle": baseline,
        "after_drain_idle": idle,
        "targets": targets,
        "pass": all(t["pass"] is not False for t in targets),
        "samples": soak.samples,
    }


def print_summary(report, out_dir):
    p = print
    p("")
    p(f"soak: {report['duration_s']:.0f} s, {report['requests']} requests, outcomes {json.dumps(report['outcomes'])}")
    p(f"{'kind':<22}{'sent':>7}{'answered':>10}{'ok':>7}{'exp.400':>9}{'cancel':>8}{'vanish':>8}{'unexp.':>8}{'anom.':>7}{'p50 ms':>9}{'p99 ms':>9}")
    for k, v in report["kinds"].items():
        o = v["outcomes"]
        bad = sum(o.get(x, 0) for x in UNEXPECTED)
        p(f"{k:<22}{v['sent']:>7}{v['answered']:>10}{o.get('ok', 0):>7}{o.get('expected_400', 0):>9}"
          f"{o.get('cancelled', 0):>8}{o.get('vanished', 0):>8}{bad:>8}{v['anomalies']:>7}"
          f"{fmt_num(v['latency_p50_ms']):>9}{fmt_num(v['latency_p99_ms']):>9}")
    if report["expected_failures"]:
        p("expected failures by cause:")
        for cause, e in report["expected_failures"].items():
            p(f"  {e['count']:>6}  {cause}")
    p("unexpected failures by cause:" + ("" if report["unexpected_failures"] else " none"))
    for cause, e in report["unexpected_failures"].items():
        p(f"  {e['count']:>6}  {cause}  {json.dumps(e['kinds'])}")
    if report["client_bugs"]:
        p("client-side exceptions (bugs in soak.py, not counted against the server):")
        for cause, e in report["client_bugs"].items():
            p(f"  {e['count']:>6}  {cause}")
    if report["anomalies"]:
        p("anomalies (2xx answers that break their request's contract; reported, not a target):")
        for cause, n in report["anomalies"].items():
            p(f"  {n:>6}  {cause}")
    c = report["server_counters"]
    p("server: " + ", ".join(f"{k} {fmt_num(v) if not isinstance(v, float) or v >= 1 else v}" for k, v in c.items()
                             if v is not None) + f"; /metrics slowest answer {fmt_num(report['metrics_scrape_max_s'])} s")
    lat = report["latency"]
    p(f"latency of {', '.join(LATENCY_KINDS)}: first {lat['window_s']:.0f} s vs last {lat['window_s']:.0f} s")
    for m in ("ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms"):
        p(f"  {m:<12} {fmt_num(lat['first'][m]):>10} {fmt_num(lat['last'][m]):>10}")
    p(f"  streams    {lat['first']['streams']:>10} {lat['last']['streams']:>10}")
    p(f"  server cores {f2(lat['first']['server_cores']):>8} {f2(lat['last']['server_cores']):>10}")
    p(f"  other cores  {f2(lat['first']['other_cores']):>8} {f2(lat['last']['other_cores']):>10}"
      "   (CPU used by other processes: a busy machine skews the comparison)")
    if lat["machine_busy"]:
        p("  WARNING: other processes used a significant share of the CPUs during a latency window; the latency "
          "targets measure the machine as much as the server")
    fl = report["flatness"]
    p(f"flatness over {fl['window_s'][0]:.0f}-{fl['window_s'][1]:.0f} s: drained (checkpoint at "
      f"{fmt_num(fl['checkpoint_t'])} s vs the end) and under load (least-squares line through the samples):")
    for key in FLAT_KEYS:
        scale = 2**20 if key == "rss_bytes" else 1
        dr, g = fl[key]["drained"], fl[key]["under_load"]
        line = f"  {key:<16}"
        line += (" drained -" if dr is None else
                 f" drained {dr['checkpoint'] / scale:>8.1f} -> {dr['end'] / scale:>8.1f} ({dr['growth_pct']:+.2f}% of the {dr['relative_to']})")
        if g.get("growth_pct") is None:
            line += f" | under load: too few samples ({g['n']})"
        else:
            line += (f" | under load {g['first'] / scale:.1f} -> {g['last'] / scale:.1f}, min {g['min'] / scale:.1f} "
                     f"max {g['max'] / scale:.1f}, line {g['growth_pct']:+.2f}% of the {g['relative_to']}")
        p(line)
    p("targets:")
    for t in report["targets"]:
        v = "PASS" if t["pass"] else ("n/a " if t["pass"] is None else "FAIL")
        val = t["value"] if isinstance(t["value"], (int, float, str)) or t["value"] is None else json.dumps(t["value"])
        p(f"  {v}  {t['target']:<44} {val}  (goal: {t['goal']})")
    p(f"overall: {'PASS' if report['pass'] else 'FAIL'}; report in {out_dir}/soak.json, plot in {out_dir}/soak.svg")


def save_report(out_dir, report, records):
    """soak.json, and requests.jsonl again with the outcomes the report settled."""
    with open(os.path.join(out_dir, "requests.jsonl"), "w") as f:
        for r in records:
            f.write(json.dumps({k: v for k, v in r.items() if not k.startswith("_")}) + "\n")
    with open(os.path.join(out_dir, "soak.json"), "w") as f:
        json.dump(report, f, indent=1)
