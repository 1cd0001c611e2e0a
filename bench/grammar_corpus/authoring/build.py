#!/usr/bin/env python3
"""Writes ../schemas/<api>_<thing>.json from the group modules in this folder.

    python3 bench/grammar_corpus/authoring/build.py

Files of schemas no longer written are removed, so the folder always matches the sources.
"""
import importlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "schemas")
GROUPS = ["dev", "chat", "commerce", "cloud", "google_ms", "tools", "forms", "misc", "large"]


def pretty(v, indent=0):
    """json.dumps(indent=2), except that short lists of scalars stay on one line."""
    pad = "  " * (indent + 1)
    if isinstance(v, dict) and v:
        body = ",\n".join(f"{pad}{json.dumps(k, ensure_ascii=False)}: {pretty(x, indent + 1)}" for k, x in v.items())
        return "{\n" + body + "\n" + "  " * indent + "}"
    if isinstance(v, list) and v:
        flat = json.dumps(v, ensure_ascii=False)
        if all(not isinstance(x, (dict, list)) for x in v) and len(flat) + 2 * indent < 100:
            return flat
        body = ",\n".join(pad + pretty(x, indent + 1) for x in v)
        return "[\n" + body + "\n" + "  " * indent + "]"
    return json.dumps(v, ensure_ascii=False)


def main():
    sys.path.insert(0, HERE)
    import dsl
    for g in GROUPS:
        importlib.import_module(g)
    names = [n for n, _ in dsl.REGISTRY]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        sys.exit(f"duplicate schema names: {dup}")
    bad = [n for n in names if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", n)]
    if bad:
        sys.exit(f"names must be <api>_<thing> in lower case: {bad}")
    os.makedirs(OUT, exist_ok=True)
    keep = set()
    for name, doc in dsl.REGISTRY:
        path = os.path.join(OUT, name + ".json")
        keep.add(name + ".json")
        with open(path, "w") as f:
            f.write(pretty(doc) + "\n")
    for f in os.listdir(OUT):
        if f.endswith(".json") and f not in keep:
            os.remove(os.path.join(OUT, f))
    print(f"wrote {len(names)} schemas to {OUT}")


if __name__ == "__main__":
    main()
