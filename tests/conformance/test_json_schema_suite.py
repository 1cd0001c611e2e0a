"""The JSON-Schema-Test-Suite (draft 2020-12) against `ridge grammar`: every schema is either refused
with an error naming what is unsupported, or compiled to a grammar that accepts exactly the valid
instances, in the compact and in the flexible whitespace policy. Target: 0 wrong.

Instances are serialised by json.dumps with raw UTF-8 (ensure_ascii=False: generation spells each
character one way, raw or its short escape), compact (separators "," ":") and flexible (indent=2). The grammar emits an object's named members in the order their names
first appear in the schema document (members it does not name may come anywhere), so instances get
their keys in that order first: `key_ranks` is the same walk as rank_names in json_schema.cc.

The suite ships in the jsonschema source distribution; tools/setup_test_deps.sh unpacks it into
~/.cache/ridge/jsonschema-suite. `format` is an annotation in draft 2020-12 (format.json expects any
string to pass), so the main run uses --format-annotation; the optional/ folder (format assertions,
bignums, ECMAScript regex corner cases) is reported separately and not asserted."""
import json
import math
import os
import pathlib
import subprocess

import pytest

SUITE = pathlib.Path(os.environ.get("RIDGE_JSONSCHEMA_SUITE") or
                     pathlib.Path(os.environ.get("RIDGE_HOME") or pathlib.Path.home() / ".cache" / "ridge") /
                     "jsonschema-suite") / "tests" / "draft2020-12"
# Compiled schemas out of all of them, at least: what the compiler reaches today (see the printed table).
MIN_COMPILED_FRACTION = 0.85


def key_ranks(schema):
    """Names by first appearance: keys of properties / dependentRequired / dependentSchemas /
    dependencies (and dependentRequired's dependents), required names, keys of objects in const / enum."""
    rank = {}

    def record(name):
        rank.setdefault(name, len(rank))

    def walk(node, mode):
        if isinstance(node, dict):
            for key, value in node.items():
                if mode == "value":
                    record(key)
                    walk(value, "value")
                elif mode == "names":
                    record(key)
                    if isinstance(value, list):
                        for s in value:
                            if isinstance(s, str):
                                record(s)
                    walk(value, "schema")
                elif key in ("properties", "dependentRequired", "dependentSchemas", "dependencies"):
                    walk(value, "names")
                elif key == "required" and isinstance(value, list):
                    for s in value:
                        if isinstance(s, str):
                            record(s)
                elif key in ("const", "enum"):
                    walk(value, "value")
                else:
                    walk(value, "schema")
        elif isinstance(node, list):
            for item in node:
                walk(item, "value" if mode == "value" else "schema")

    walk(schema, "schema")
    return rank


def reorder(value, rank):
    if isinstance(value, dict):
        keys = sorted(enumerate(value), key=lambda ik: (rank.get(ik[1], math.inf), ik[0]))
        return {k: reorder(value[k], rank) for _, k in keys}
    if isinstance(value, list):
        return [reorder(v, rank) for v in value]
    return value


def texts(schema, tests):
    rank = key_ranks(schema)
    data = [reorder(t["data"], rank) for t in tests]
    compact = [json.dumps(d, separators=(",", ":"), ensure_ascii=False) for d in data]
    flexible = [json.dumps(d, indent=2, ensure_ascii=False) for d in data]
    return compact, flexible


def names_a_feature(error):
    return any(word in error for word in ("not supported", "too complex", "too large", "too deeply", "cycle"))


def run_file(ridge_bin, path, format_annotation, all_spellings=True):
    groups = json.loads(path.read_text(encoding="utf-8"))
    lines = []
    for g in groups:
        compact, flexible = texts(g["schema"], g["tests"])
        for ws, t in (("compact", compact), ("flexible", flexible)):
            lines.append(json.dumps({"schema": g["schema"], "texts": t, "whitespace": ws,
                                     "format_annotation": format_annotation, "all_spellings": all_spellings},
                                    ensure_ascii=False))
    r = subprocess.run([ridge_bin, "grammar", "--batch"], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    answers = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(answers) == len(lines), r.stderr
    row = {"schemas": len(groups), "compiled": 0, "refused": 0, "wrong": 0, "wrong_instances": 0,
           "refused_without_reason": 0, "invalid_accepted": 0}
    details = []
    for i, g in enumerate(groups):
        expected = [t["valid"] for t in g["tests"]]
        a, b = answers[2 * i], answers[2 * i + 1]
        if "error" in a or "error" in b:
            error = a.get("error") or b.get("error")
            if "unsatisfiable" in error:  # the empty language: right when no instance is valid
                got = ([False] * len(expected),) * 2
            else:
                row["refused"] += 1
                if not names_a_feature(error):
                    row["refused_without_reason"] += 1
                details.append({"description": g["description"], "refused": error})
                continue
        else:
            got = (a["accepted"], b["accepted"])
        row["compiled"] += 1
        bad = [(t["description"], ws, ok)
               for ws, results in zip(("compact", "flexible"), got)
               for t, ok in zip(g["tests"], results) if ok != t["valid"]]
        row["invalid_accepted"] += sum(1 for _, _, ok in bad if ok)
        if bad:
            row["wrong"] += 1
            row["wrong_instances"] += len(bad)
            details.append({"description": g["description"], "wrong": bad})
    return row, details


def suite_files(optional):
    if not SUITE.is_dir():
        pytest.skip(f"JSON-Schema-Test-Suite not found at {SUITE}: run tools/setup_test_deps.sh")
    if optional:
        return sorted((SUITE / "optional").rglob("*.json"))
    return sorted(SUITE.glob("*.json"))


def print_table(title, rows):
    print(f"\n{title}")
    print(f"{'file':40} {'schemas':>8} {'compiled':>9} {'refused':>8} {'wrong':>6}")
    for name, row in rows.items():
        print(f"{name:40} {row['schemas']:8} {row['compiled']:9} {row['refused']:8} {row['wrong']:6}")


def total_of(rows):
    total = {k: sum(r[k] for r in rows.values()) for k in next(iter(rows.values()))}
    return total


def test_json_schema_suite(ridge_bin):
    rows, details = {}, {}
    for path in suite_files(optional=False):
        rows[path.name], details[path.name] = run_file(ridge_bin, path, format_annotation=True)
    total = total_of(rows)
    rows["TOTAL"] = total
    print_table("JSON-Schema-Test-Suite draft2020-12 (format as annotation)", rows)
    report = pathlib.Path(ridge_bin).resolve().parent / "json_schema_suite.json"
    report.write_text(json.dumps({"files": rows, "details": details}, indent=1, ensure_ascii=False))
    print(f"written to {report}")
    wrong = {name: [d for d in ds if "wrong" in d] for name, ds in details.items()}
    wrong = {name: ds for name, ds in wrong.items() if ds}
    assert total["wrong"] == 0, json.dumps(wrong, indent=1, ensure_ascii=False)
    assert total["refused_without_reason"] == 0, json.dumps(details, indent=1, ensure_ascii=False)
    assert total["compiled"] >= MIN_COMPILED_FRACTION * total["schemas"], total


def test_generation_spellings_never_accept_an_invalid_instance(ridge_bin):
    """The grammar generation uses spells each value one way (a string's characters raw or by their
    short escape, 5 and never 5.0): it may refuse a valid instance spelled otherwise, never accept an
    invalid one."""
    rows = {}
    for path in suite_files(optional=False):
        rows[path.name], _ = run_file(ridge_bin, path, format_annotation=True, all_spellings=False)
    total = total_of(rows)
    rows["TOTAL"] = total
    print_table("draft2020-12 in generation spellings (wrong = valid instances spelled otherwise)", rows)
    assert total["invalid_accepted"] == 0, {k: r["invalid_accepted"] for k, r in rows.items() if r["invalid_accepted"]}


def test_json_schema_suite_optional(ridge_bin):
    """Reported, not asserted: format assertions (our formats are a generation choice, not a validator),
    bignums, ECMAScript regex corners."""
    rows = {}
    details = {}
    for path in suite_files(optional=True):
        name = str(path.relative_to(SUITE))
        rows[name], details[name] = run_file(ridge_bin, path, format_annotation="format" not in path.parts)
    rows["TOTAL"] = total_of(rows)
    print_table("JSON-Schema-Test-Suite draft2020-12 optional/ (format asserted in optional/format)", rows)
    report = pathlib.Path(ridge_bin).resolve().parent / "json_schema_suite_optional.json"
    report.write_text(json.dumps({"files": rows, "details": details}, indent=1, ensure_ascii=False))
