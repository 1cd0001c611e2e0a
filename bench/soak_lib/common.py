"""What every part of the soak uses: the mix of request kinds, the outcome classes and small helpers."""
import math
import os
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# kind -> default weight (percent of the draws)
MIX = {
    "chat_stream": 12, "chat": 7, "completion_stream": 10, "completion": 7,
    "chat_n": 5, "completion_stream_n": 4, "structured": 8, "tools": 8,
    "shared_prefix": 14, "too_long": 5, "cancel": 6, "vanish": 5, "slow_reader": 4,
}
BURST = "burst"
# Streams whose TTFT and inter-token gaps are compared between the first and the last window: one choice,
# read as fast as they come.
LATENCY_KINDS = ("chat_stream", "completion_stream", "shared_prefix")
FLAT_KEYS = {"rss_bytes": "RSS", "fds": "open fds", "threads": "threads", "kv_blocks_used": "KV blocks in use"}
UNEXPECTED = ("http_error", "stream_error", "transport_error", "timeout", "unexpected_success")


def now():
    return time.monotonic()


def percentile(values, q):
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def fmt_num(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.1f}{unit}"
    return f"{int(v)}{unit}"


def f2(v):
    return "-" if v is None else f"{v:.2f}"
