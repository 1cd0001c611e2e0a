#!/usr/bin/env python3
"""Checks every schema in bench/grammar_corpus/schemas/:

  * it is a valid draft 2020-12 schema (jsonschema's Draft202012Validator.check_schema);
  * it uses only the keywords the corpus allows (the subset ridge's compiler takes);
  * every $ref resolves, required names are declared, oneOf branches have different types,
    exclusiveMinimum/exclusiveMaximum sit on integers;
  * instances made by walking the schema (generate()) validate against it, formats included.

    python3 bench/grammar_corpus/check_corpus.py [--instances N] [--write-instances DIR] [-v]

Exit status 0 when every file passes. generate() is importable: bench/grammar_anchors.py uses it.
"""
import argparse
import datetime
import json
import os
import random
import re
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(HERE, "schemas")

KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "enum", "const", "anyOf", "oneOf", "allOf",
    "$ref", "$defs", "items", "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "pattern",
    "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "title", "description", "default", "examples",
}
ROOT_ONLY = {"$schema"}
FORMATS = {"date-time", "date", "time", "email", "uri", "uuid", "ipv4", "hostname"}

# Past this depth the generator stops taking optional properties, extra items and recursive branches,
# so recursive schemas (comment threads, file trees) give finite instances.
DEEP = 4


# ---------------------------------------------------------------- lint

def resolve(root, ref):
    if ref == "#":
        return root
    if not ref.startswith("#/$defs/"):
        raise ValueError(f"only local #/$defs refs are used in the corpus: {ref}")
    name = ref[len("#/$defs/"):]
    if name not in root.get("$defs", {}):
        raise ValueError(f"$ref to missing definition {ref}")
    return root["$defs"][name]


def branch_types(root, s, seen=()):
    """The JSON types a subschema can take, for the oneOf lint ('number' covers 'integer')."""
    if s is True or s == {}:
        return {"any"}
    if "$ref" in s:
        if s["$ref"] in seen:
            return {"any"}
        return branch_types(root, resolve(root, s["$ref"]), seen + (s["$ref"],))
    if "type" in s:
        t = s["type"]
        return set(t if isinstance(t, list) else [t])
    vals = [s["const"]] if "const" in s else s.get("enum")
    if vals is not None:
        return {json_type(v) for v in vals}
    out = set()
    for k in ("anyOf", "oneOf"):
        for b in s.get(k, []):
            out |= branch_types(root, b, seen)
    return out or {"any"}


def json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def overlap(a, b):
    if "any" in a or "any" in b:
        return True
    a = set(a) | ({"number"} if "integer" in a else set())
    b = set(b) | ({"number"} if "integer" in b else set())
    return bool(a & b)


def lint(root):
    problems = []

    def walk(s, where, is_root=False):
        if isinstance(s, bool):
            return
        if not isinstance(s, dict):
            problems.append(f"{where}: subschema is not an object")
            return
        for k in s:
            if k not in KEYWORDS and not (is_root and k in ROOT_ONLY):
                problems.append(f"{where}: keyword {k!r} is outside the corpus subset")
        if "$ref" in s:
            try:
                resolve(root, s["$ref"])
            except ValueError as e:
                problems.append(f"{where}: {e}")
        if "format" in s and s["format"] not in FORMATS:
            problems.append(f"{where}: format {s['format']!r} is outside the corpus subset")
        for k in ("exclusiveMinimum", "exclusiveMaximum"):
            if k in s and s.get("type") != "integer":
                problems.append(f"{where}: {k} is kept for integers")
        props = s.get("properties", {})
        for r in s.get("required", []):
            if r not in props and s.get("additionalProperties") is False:
                problems.append(f"{where}: required {r!r} is not declared and extra properties are closed")
        if "oneOf" in s:
            ts = [branch_types(root, b) for b in s["oneOf"]]
            for i in range(len(ts)):
                for j in range(i + 1, len(ts)):
                    if overlap(ts[i], ts[j]):
                        problems.append(f"{where}: oneOf branches {i} and {j} share a type")
        for k, v in props.items():
            walk(v, f"{where}/properties/{k}")
        for k, v in s.get("$defs", {}).items():
            walk(v, f"{where}/$defs/{k}")
        for k in ("items", "additionalProperties"):
            if k in s:
                walk(s[k], f"{where}/{k}")
        for k in ("prefixItems", "anyOf", "oneOf", "allOf"):
            for i, v in enumerate(s.get(k, [])):
                walk(v, f"{where}/{k}/{i}")

    walk(root, "#", True)
    return problems


def used_keywords(root):
    """Keywords in schema positions (so a property named "allOf" does not count as allOf)."""
    used = set()

    def walk(s):
        if not isinstance(s, dict):
            return
        used.update(s)
        for k in ("properties", "$defs"):
            for v in s.get(k, {}).values():
                walk(v)
        for k in ("items", "additionalProperties"):
            walk(s.get(k))
        for k in ("prefixItems", "anyOf", "oneOf", "allOf"):
            for v in s.get(k, []):
                walk(v)

    walk(root)
    return used


def count_properties(root):
    """Properties declared anywhere in the document, each definition counted once (size buckets)."""
    n = 0

    def walk(s):
        nonlocal n
        if not isinstance(s, dict):
            return
        n += len(s.get("properties", {}))
        for v in s.get("properties", {}).values():
            walk(v)
        for k in ("items", "additionalProperties"):
            walk(s.get(k))
        for k in ("prefixItems", "anyOf", "oneOf", "allOf"):
            for v in s.get(k, []):
                walk(v)

    walk(root)
    for d in root.get("$defs", {}).values():
        walk(d)
    return n


# ---------------------------------------------------------------- instance generation

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def regex_sample(pattern, rng):
    """A string matching a simple regex, by walking Python's parse of it (classes, repeats,
    groups, alternation, anchors). Returns None for what it does not cover."""
    try:
        from re import _parser as sre_parse, _constants as sre_c
    except ImportError:  # Python < 3.11
        import sre_parse
        import sre_constants as sre_c
    try:
        tree = sre_parse.parse(pattern)
    except re.error:
        return None
    pool = "abcdefxyzABCXYZ0123456789_-. "

    def cat_char(cat):
        return {sre_c.CATEGORY_DIGIT: "7", sre_c.CATEGORY_WORD: "k", sre_c.CATEGORY_SPACE: " ",
                sre_c.CATEGORY_NOT_DIGIT: "q", sre_c.CATEGORY_NOT_WORD: "-", sre_c.CATEGORY_NOT_SPACE: "s"}[cat]

    def in_matches(items, ch):
        for op, av in items:
            if op == sre_c.LITERAL and ord(ch) == av:
                return True
            if op == sre_c.RANGE and av[0] <= ord(ch) <= av[1]:
                return True
            if op == sre_c.CATEGORY and re.fullmatch(
                    {sre_c.CATEGORY_DIGIT: r"\d", sre_c.CATEGORY_WORD: r"\w", sre_c.CATEGORY_SPACE: r"\s",
                     sre_c.CATEGORY_NOT_DIGIT: r"\D", sre_c.CATEGORY_NOT_WORD: r"\W",
                     sre_c.CATEGORY_NOT_SPACE: r"\S"}[av], ch):
                return True
        return False

    def gen(sub):
        out = []
        for op, av in sub:
            if op == sre_c.LITERAL:
                out.append(chr(av))
            elif op == sre_c.NOT_LITERAL:
                out.append(next(c for c in pool if ord(c) != av))
            elif op == sre_c.ANY:
                out.append("x")
            elif op == sre_c.IN:
                if av and av[0][0] == sre_c.NEGATE:
                    out.append(next(c for c in pool if not in_matches(av[1:], c)))
                else:
                    op2, av2 = rng.choice(av)
                    if op2 == sre_c.LITERAL:
                        out.append(chr(av2))
                    elif op2 == sre_c.RANGE:
                        out.append(chr(rng.randint(av2[0], av2[1])))
                    else:
                        out.append(cat_char(av2))
            elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT) or str(op) == "POSSESSIVE_REPEAT":
                lo, hi, item = av
                hi = lo + 3 if hi == sre_c.MAXREPEAT else min(hi, lo + 3)
                for _ in range(rng.randint(lo, hi)):
                    out.append(gen(item))
            elif op == sre_c.SUBPATTERN:
                out.append(gen(av[-1]))
            elif op == sre_c.BRANCH:
                out.append(gen(rng.choice(av[1])))
            elif op == sre_c.AT:
                pass
            else:
                raise ValueError(f"regex op {op} not covered")
        return "".join(out)

    for _ in range(20):
        try:
            s = gen(tree)
        except (ValueError, StopIteration):
            return None
        if re.search(pattern, s):
            return s
    return None


def format_sample(fmt, rng):
    d = datetime.date(2020, 1, 1) + datetime.timedelta(days=rng.randint(0, 2500))
    t = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    return {
        "date-time": f"{d.isoformat()}T{t}Z",
        "date": d.isoformat(),
        "time": t + "Z",
        "email": f"{rng.choice(WORDS)}.{rng.choice(WORDS)}@example.com",
        "uri": f"https://example.com/{rng.choice(WORDS)}/{rng.randint(1, 999)}",
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "ipv4": ".".join(str(rng.randint(1, 254)) for _ in range(4)),
        "hostname": f"{rng.choice(WORDS)}.example.com",
    }.get(fmt)


def gen_string(s, rng):
    lo, hi = s.get("minLength", 0), s.get("maxLength")
    if "format" in s:
        v = format_sample(s["format"], rng)
        if v is not None:
            return v
    if "pattern" in s:
        for _ in range(10):
            v = regex_sample(s["pattern"], rng)
            if v is not None and len(v) >= lo and (hi is None or len(v) <= hi):
                return v
        raise ValueError(f"no sample for pattern {s['pattern']!r}")
    v = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
    while len(v) < lo:
        v += " " + rng.choice(WORDS)
    if hi is not None:
        v = v[:hi].rstrip() or "x" * min(hi, max(lo, 1))
    return v


def gen_integer(s, rng):
    lo = s.get("minimum", s["exclusiveMinimum"] + 1 if "exclusiveMinimum" in s else None)
    hi = s.get("maximum", s["exclusiveMaximum"] - 1 if "exclusiveMaximum" in s else None)
    if lo is None and hi is None:
        lo, hi = 0, 1000
    elif lo is None:
        lo = hi - 1000
    elif hi is None:
        hi = lo + 1000
    return rng.randint(int(lo), int(hi))


def gen_number(s, rng):
    lo, hi = s.get("minimum"), s.get("maximum")
    if lo is None and hi is None:
        lo, hi = 0, 1000
    elif lo is None:
        lo = hi - 1000
    elif hi is None:
        hi = lo + 1000
    v = round(rng.uniform(lo, hi), 2)
    return min(max(v, lo), hi)


def is_recursive_ref(s):
    return isinstance(s, dict) and ("$ref" in s or "items" in s and is_recursive_ref(s["items"]))


def generate(schema, rng, root=None, depth=0):
    """One instance of `schema` (a subschema of `root`), chosen at random from rng."""
    root = schema if root is None else root
    if schema is True or schema == {}:
        return rng.choice(WORDS)
    if schema is False:
        raise ValueError("false schema has no instance")
    if depth > 40:
        raise ValueError("recursion does not bottom out")
    if "$ref" in schema:
        return generate(resolve(root, schema["$ref"]), rng, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "allOf" in schema:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = resolve(root, part["$ref"]) if "$ref" in part else part
            for k, v in part.items():
                if k == "properties":
                    # a branch that only names a property (true) keeps the other branch's schema for it
                    props = dict(merged.get("properties", {}))
                    for name, sub in v.items():
                        if props.get(name, True) is True:
                            props[name] = sub
                    merged["properties"] = props
                elif k == "required":
                    merged["required"] = list(dict.fromkeys(merged.get("required", []) + v))
                else:
                    merged.setdefault(k, v)
        return generate(merged, rng, root, depth)
    for k in ("anyOf", "oneOf"):
        if k in schema:
            branches = schema[k]
            if depth > DEEP:  # prefer branches that end the recursion
                flat = [b for b in branches if not is_recursive_ref(b)]
                branches = flat or branches
            return generate(rng.choice(branches), rng, root, depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = "null" if depth > DEEP and "null" in t else rng.choice(t)
    if t is None:
        t = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if t == "object":
        out = {}
        req = set(schema.get("required", []))
        for name, sub in schema.get("properties", {}).items():
            if name in req or (depth <= DEEP and rng.random() < 0.5):
                out[name] = generate(sub, rng, root, depth + 1)
        addl = schema.get("additionalProperties", True)
        for name in req - set(out):
            out[name] = generate(addl if isinstance(addl, dict) else {}, rng, root, depth + 1)
        if not schema.get("properties") and isinstance(addl, dict) and depth <= DEEP:
            for _ in range(rng.randint(0, 2)):
                out[rng.choice(WORDS)] = generate(addl, rng, root, depth + 1)
        return out
    if t == "array":
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", True)
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        out = [generate(p, rng, root, depth + 1) for p in prefix]
        if items is not False:
            extra = max(lo - len(out), 0)
            if depth <= DEEP:
                extra += rng.randint(0, 2 if depth < 2 else 1)
            if hi is not None:
                extra = min(extra, hi - len(out))
            out += [generate(items, rng, root, depth + 1) for _ in range(extra)]
        return out
    if t == "string":
        return gen_string(schema, rng)
    if t == "integer":
        return gen_integer(schema, rng)
    if t == "number":
        return gen_number(schema, rng)
    if t == "boolean":
        return rng.random() < 0.5
    if t == "null":
        return None
    raise ValueError(f"unknown type {t!r}")


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=SCHEMAS)
    ap.add_argument("--instances", type=int, default=3, help="instances generated and validated per schema")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write-instances", metavar="DIR", help="write <name>.jsonl of the instances here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    checker = Draft202012Validator.FORMAT_CHECKER
    if args.write_instances:
        os.makedirs(args.write_instances, exist_ok=True)

    files = sorted(f for f in os.listdir(args.dir) if f.endswith(".json"))
    failed = 0
    sizes = {"small": 0, "medium": 0, "large": 0}
    features = {k: 0 for k in ("$ref", "recursive", "anyOf", "oneOf", "allOf", "prefixItems", "pattern", "format", "const")}
    for fname in files:
        path = os.path.join(args.dir, fname)
        errs = []
        try:
            with open(path) as f:
                doc = json.load(f)
            Draft202012Validator.check_schema(doc)
        except (ValueError, SchemaError) as e:
            errs.append(f"not a valid schema: {str(e).splitlines()[0]}")
            doc = None
        if doc is not None:
            errs += lint(doc)
            v = Draft202012Validator(doc, format_checker=checker)
            rng = random.Random(f"{args.seed}:{fname}")
            lines = []
            for i in range(args.instances):
                try:
                    inst = generate(doc, rng)
                except (ValueError, RecursionError) as e:
                    errs.append(f"instance {i}: generator failed: {e}")
                    break
                bad = sorted(v.iter_errors(inst), key=lambda e: e.path)
                if bad:
                    errs.append(f"instance {i} does not validate: {bad[0].message} at {list(bad[0].absolute_path)}")
                lines.append(json.dumps(inst, separators=(",", ":"), ensure_ascii=False))
            if args.write_instances:
                with open(os.path.join(args.write_instances, fname[:-5] + ".jsonl"), "w") as f:
                    f.write("\n".join(lines) + "\n")
            n = count_properties(doc)
            sizes["small" if n <= 10 else "medium" if n < 50 else "large"] += 1
            used = used_keywords(doc)
            for k in features:
                if k == "recursive":  # a definition that refers to itself
                    features[k] += any(f'"#/$defs/{d}"' in json.dumps(body) for d, body in doc.get("$defs", {}).items())
                else:
                    features[k] += k in used
            if args.verbose:
                print(f"{fname}: {n} properties")
        if errs:
            failed += 1
            print(f"FAIL {fname}")
            for e in errs:
                print(f"  {e}")
    checked = sorted(f for f in FORMATS if f in checker.checkers)
    print(f"{len(files)} schemas, {len(files) - failed} pass, {failed} fail; "
          f"{args.instances} instances each, formats asserted: {', '.join(checked)}")
    print("sizes (properties across nesting): small <=10: {small}, medium 11-49: {medium}, large >=50: {large}".format(**sizes))
    print("schemas using: " + ", ".join(f"{k} {v}" for k, v in features.items()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
