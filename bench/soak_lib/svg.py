"""The soak's plot (soak.svg), written by hand: one panel per series over the run (RSS, fds, threads, KV
blocks, the engine queue, completed requests/s, CPU, /metrics answer time), the flatness window shaded, the
drained checkpoints in yellow, the bursts as ticks."""
import math
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape


def nice_ceiling(v, ticks=4):
    """The smallest top of a 0-based axis at least v whose `ticks` steps are 1, 2, 2.5 or 5 times a power of 10."""
    if v <= 0:
        return 1.0
    step = v / ticks
    e = 10 ** math.floor(math.log10(step))
    for m in (1, 2, 2.5, 5, 10):
        if m * e >= step - 1e-12:
            return m * e * ticks
    return 10 * e * ticks


def label(v):
    if abs(v) >= 100 or float(v).is_integer():
        return f"{v:.0f}"
    return f"{v:.3g}"


def write_svg(path, report, samples):
    d = max(report["duration_s"], 1.0)
    load = sorted((s for s in samples if s["t"] <= d and s["phase"] != "idle"), key=lambda s: s["t"])
    panels = [
        ("RSS (MiB)", [("rss", "#1f77b4", [(s["t"], None if s["rss_bytes"] is None else s["rss_bytes"] / 2**20) for s in load])], False),
        ("open file descriptors", [("fds", "#1f77b4", [(s["t"], s["fds"]) for s in load])], True),
        ("threads", [("threads", "#1f77b4", [(s["t"], s["threads"]) for s in load])], True),
        ("KV blocks in use (dashed: pool)", [("used", "#1f77b4", [(s["t"], s["kv_blocks_used"]) for s in load]),
                                             ("pool", "#999999", [(s["t"], s["kv_blocks_total"]) for s in load])], True),
        ("engine queue: running (blue), waiting (orange)", [("running", "#1f77b4", [(s["t"], s["running"]) for s in load]),
                                                            ("waiting", "#ff7f0e", [(s["t"], s["waiting"]) for s in load])], True),
        ("completed requests / s (red: unexpected failures / s)",
         [("req/s", "#2ca02c", [(s["t"], s["req_per_s"]) for s in load[1:] if s["phase"] in ("load", "pause")]),
          ("failures/s", "#d62728", [(b["t"], (b["unexpected_total"] - a["unexpected_total"]) / max(b["t"] - a["t"], 1e-9))
                                     for a, b in zip(load, load[1:]) if b["phase"] in ("load", "pause")])], True),
        ("CPU cores: the server (blue), other processes (red)",
         [("server", "#1f77b4", [(s["t"], s["server_cores"]) for s in load]),
          ("other", "#d62728", [(s["t"], s["other_cores"]) for s in load])], True),
        ("/metrics answer time (s)", [("scrape", "#9467bd", [(s["t"], s["metrics_scrape_s"]) for s in load])], True),
    ]
    pw, ph, ml, mr, mt, mb, cols = 460, 170, 56, 14, 24, 28, 2
    rows = math.ceil(len(panels) / cols)
    head = 64
    W, H = cols * (pw + ml + mr) + 10, head + rows * (ph + mt + mb) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="Helvetica, Arial, sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>']
    verdict = "PASS" if report["pass"] else "FAIL"
    title = (f"ridge serve soak: {report['duration_s']:.0f} s, {report['config']['concurrency']} workers, "
             f"{report['requests']} requests, {report['unexpected_5xx']} unexpected 5xx, "
             f"{'crash' if report['crash'] else 'no crash'}: {verdict}")
    sub = (f"{report['cpu']['model']} ({report['cpu']['logical_cpus']} CPUs); shaded: the last two thirds "
           f"(flatness window); yellow: load paused to sample the drained server; ticks: bursts of {report['config']['burst_size']} connections")
    out.append(f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(title)}</text>')
    out.append(f'<text x="10" y="42" fill="#555">{escape(sub)}</text>')
    flat_from = report["flatness"]["window_s"][0]
    for i, (name, series, zero) in enumerate(panels):
        col, row = i % cols, i // cols
        x0 = 10 + col * (pw + ml + mr) + ml
        y0 = head + row * (ph + mt + mb) + mt
        vals = [v for _, _, pts in series for _, v in pts if v is not None]
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        if zero or lo <= 0.1 * hi:
            lo = 0.0
            hi = nice_ceiling(hi * 1.05)
        else:
            pad = max((hi - lo) * 0.15, abs(hi) * 0.01, 1e-9)
            lo, hi = lo - pad, hi + pad
        if hi <= lo:
            hi = lo + 1
        sx = (lambda t: x0 + pw * min(max(t / d, 0.0), 1.0))
        sy = (lambda v: y0 + ph - ph * (v - lo) / (hi - lo))
        out.append(f'<text x="{x0}" y="{y0 - 7}" font-weight="bold">{escape(name)}</text>')
        out.append(f'<rect x="{sx(flat_from):.1f}" y="{y0}" width="{sx(d) - sx(flat_from):.1f}" height="{ph}" fill="#f0f0f0"/>')
        for a, b in report["pauses"]:
            if a < d:
                out.append(f'<rect x="{sx(a):.1f}" y="{y0}" width="{max(sx(b) - sx(a), 1.5):.1f}" height="{ph}" fill="#fff2b3"/>')
        for k in range(5):
            v = lo + (hi - lo) * k / 4
            y = sy(v)
            out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + pw}" y2="{y:.1f}" stroke="#dddddd"/>')
            out.append(f'<text x="{x0 - 5}" y="{y + 4:.1f}" text-anchor="end" fill="#444">{escape(label(v))}</text>')
        for k in range(5):
            t = d * k / 4
            x = sx(t)
            out.append(f'<text x="{x:.1f}" y="{y0 + ph + 14}" text-anchor="middle" fill="#444">{int(t // 60)}:{int(t % 60):02d}</text>')
        for bt, _ in report["bursts"]:
            out.append(f'<line x1="{sx(bt):.1f}" y1="{y0 + ph}" x2="{sx(bt):.1f}" y2="{y0 + ph - 6}" stroke="#d62728"/>')
        if report["crash"]:
            cx = sx(report["crash"]["t"])
            out.append(f'<line x1="{cx:.1f}" y1="{y0}" x2="{cx:.1f}" y2="{y0 + ph}" stroke="#d62728" stroke-width="2"/>')
        out.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
        for sname, color, pts in series:
            segs, cur = [], []
            for t, v in pts:
                if v is None:
                    if cur:
                        segs.append(cur)
                    cur = []
                else:
                    cur.append(f"{sx(t):.1f},{sy(v):.1f}")
            if cur:
                segs.append(cur)
            dash = ' stroke-dasharray="5,3"' if sname == "pool" else ""
            for seg in segs:
                if len(seg) == 1:
                    x, y = seg[0].split(",")
                    out.append(f'<circle cx="{x}" cy="{y}" r="2" fill="{color}"/>')
                else:
                    out.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="{color}" stroke-width="1.5"{dash}/>')
    out.append("</svg>")
    text = "\n".join(out) + "\n"
    ET.fromstring(text)  # well-formed, or this raises
    with open(path, "w") as f:
        f.write(text)
