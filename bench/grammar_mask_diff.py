#!/usr/bin/env python3
"""Step-by-step token-mask comparison of ridge against external oracles (xgrammar, llguidance): replays
the walks `ridge bench grammar --dump-walks` wrote (token ids and, per step, the allowed count and an
FNV-1a hash of ridge's mask) through each oracle's matcher on the same vocabulary, and compares the
masks at every step. With ridge's raw masks (--dump-masks) it also says which tokens differ, and for
JSON schemas why.

    pip install xgrammar llguidance jsonschema regex     # benchmark-only; ridge never imports them
    build/ridge bench grammar -m MODEL --regex bench/grammar_corpus/regex.txt --gbnf bench/grammar_corpus/gbnf \
        --dump-vocab vocab.json --dump-walks walks.jsonl
    python3 bench/grammar_mask_diff.py --vocab vocab.json --walks walks.jsonl [--kinds regex,grammar]

JSON schemas (one core, about a minute per oracle on a 49k vocabulary, three on 152k):

    build/ridge bench grammar -m MODEL --schemas bench/grammar_corpus/schemas --steps 40 \
        [--all-spellings] --dump-vocab vocab.json --dump-walks walks.jsonl --dump-masks masks.bin
    python3 bench/grammar_mask_diff.py --vocab vocab.json --walks walks.jsonl --masks masks.bin \
        --kinds json_schema --oracles xgrammar,llguidance --json diff.json

The oracles are set as close to ridge's policy (which the walks record) as they go: whitespace
compact (no free whitespace, separators "," ":"), spaced (", " ": ") or flexible (at most 20 in a row);
xgrammar with strict_mode=False (an absent additionalProperties is open, as in JSON Schema and
ridge); llguidance with json_allow_general_unicode_escapes for --all-spellings walks. Ridge's
generation mode (the default: one spelling per value) is the closer match for both oracles; with
--all-spellings ridge also spells member names, enum, const and pattern strings with escapes, which
neither oracle takes, so most walks end early there (an oracle that rejects the token ridge chose
ends that walk's comparison: what follows is not comparable).

At a differing step, the tokens only ridge allows are offered to the oracle's matcher (llguidance's
mask keeps only its own tokenization of forced bytes, its matcher takes more: "narrowing"); what it
still refuses, and the tokens only the oracle allows, get a cause each (classify(): the position in
the instance, the schema there, the token's bytes; patterns checked with the regex module's partial
matches in ECMA-262 terms). CAUSES explains each one and CATEGORY says who is off: the oracle,
nobody (policy), ridge inside its documented subset, or ridge (a bug); "unclassified" needs a look.

For regex and GBNF walks xgrammar is the reference rather than llguidance: llguidance narrows its
masks to its own tokenization where the grammar forces bytes, ridge (like xgrammar) allows every token
the grammar allows. Benchmark-only: ridge never imports these packages.
"""
import argparse
import collections
import json
import os
import re
import sys

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


from grammar_oracles import ORACLES, fnv1a_bytes, ids_of  # noqa: E402
from grammar_positions import Position, SchemaView, keywords_of  # noqa: E402




# ---------------------------------------------------------------- causes

# Causes of differences, by id: what each engine does there, and who is right (per JSON, RFC 3339/3986/
# 5321 and JSON Schema 2020-12). Each was checked on whole instances (ridge grammar --check, the
# oracles' matchers, jsonschema with format checking); "policy" means both sides are valid choices.
CAUSES = {
    "narrowing": "llguidance's mask is narrower than its own matcher where the grammar forces bytes (it keeps "
                 "the canonical tokenization of them); its matcher takes ridge's tokens: no grammar difference",
    "llg-del": "llguidance refuses a raw DEL (U+007F) in strings; JSON allows it raw (only U+0000-U+001F must be "
               "escaped): oracle too narrow",
    "xgr-length-strings": "xgrammar spells minLength/maxLength strings as [^\"\\\\\\r\\n]{m,n}: raw control "
                          "characters (invalid JSON; oracle-only tokens) and no escapes at all (ridge-only): oracle wrong",
    "esc-names": "ridge --all-spellings spells member names every JSON way (\\u0061 for a); the oracles match names "
                 "on raw characters: policy (validation mode vs the oracles' one spelling)",
    "esc-constrained": "escapes inside enum/const/pattern/format strings: ridge takes them (every spelling with "
                       "--all-spellings; \\\" \\\\ and controls in generation mode), the oracle matches these "
                       "strings on raw characters only (xgrammar: no escapes at all there, so a value holding \" or "
                       "\\ cannot be written): policy with --all-spellings, oracle too narrow otherwise",
    "esc-free-xgr": "unconstrained strings: xgrammar takes every escape (\\/, \\uXXXX of any code unit, lone "
                    "surrogates too); ridge's generation mode only the short escapes a character needs: policy",
    "esc-free-llg": "unconstrained strings: ridge --all-spellings takes \\/ (llguidance never does) and \\uXXXX "
                    "of printable characters (llguidance only with json_allow_general_unicode_escapes, which this "
                    "script sets for --all-spellings walks): policy",
    "date-days": "format date / date-time: the oracle does not tie the day to month and year (xgrammar takes "
                 "02-30 and 04-31, llguidance 02-29 of any year); ridge exact (jsonschema agrees): oracle wrong",
    "dot-line-terminator": "pattern '.': ridge follows ECMA-262 ('.' matches no line terminator: \\n \\r "
                           "U+2028 U+2029); llguidance's '.' takes \\r (so does Python's re, hence the jsonschema "
                           "package): ridge per the spec",
    "num-canonical": "numbers: ridge's generation mode spells each value one way (no -0, no trailing fraction "
                     "zeros, no 1.0 for 1, no exponent but where numbers are unconstrained, there no e0 or leading "
                     "exponent zeros); the oracle takes those spellings: policy",
    "invalid-utf8-oracle": "the oracle allows bytes that are not UTF-8 after the text so far (xgrammar: ED A0-BF, "
                           "UTF-8 for surrogates): oracle wrong",
    "invalid-utf8-ridge": "ridge allows bytes that are not UTF-8 after the text so far: RIDGE BUG",
    "num-int-fraction": "integers: ridge --all-spellings takes a zero fraction (5.0 is an integer in JSON Schema), the "
                        "oracles integers without fraction: policy",
    "num-minus-zero": "ridge --all-spellings takes -0 (value 0) where the schema allows 0; the oracle not: policy",
    "xgr-num-digits": "bounded numbers: xgrammar allows at most 6 fraction digits; ridge any: oracle approximates",
    "order-unnamed": "members the schema does not name (additionalProperties, open objects): ridge allows them "
                     "anywhere among the named ones, the oracles only after them: policy (both valid JSON Schema)",
    "order-named": "named members' order: ridge orders by a name's first appearance in the whole schema document "
                   "(a nested 'label' after a top-level 'label'), the oracles by each object's own properties: policy",
    "xgr-allof": "xgrammar ignores allOf (the schema becomes any JSON value): oracle wrong",
    "uri-scheme-digits": "format uri: xgrammar's scheme has no digits (RFC 3986: ALPHA *(ALPHA / DIGIT / + - .)): "
                         "oracle too narrow",
    "uri-ridge-loose": "format uri: ridge approximates RFC 3986 as scheme ':' then any URI characters, so it takes "
                       "e.g. \"x:]\" or \"x:a#b#c\" (invalid per jsonschema + rfc3987 and llguidance): RIDGE BUG",
    "datetime-lowercase": "format date-time: ridge takes lowercase t/z (RFC 3339 5.6 allows them), xgrammar not: "
                          "oracle too narrow",
    "datetime-leap": "format date-time: the oracles take second 60 at any time, ridge only 23:59:60 UTC (the "
                     "JSON-Schema-Test-Suite also takes 15:59:60-08:00; the jsonschema package none): ridge narrower "
                     "than the Test Suite, oracles looser",
    "email-rfc5321": "format email: the oracle takes RFC 5321 forms ridge leaves out: a quoted local part (\"a b\"@x, "
                     "xgrammar) or an address literal (a@[127.0.0.1], llguidance); ridge takes dot-atom@hostname "
                     "only: ridge narrower (its formats are a generation subset; jsonschema only wants an @)",
    "xgr-pattern-open-end": "pattern without $: JSON Schema patterns search, ridge lets the string go on; xgrammar "
                            "anchors the end: oracle wrong",
    "xgr-pattern-length": "pattern with minLength/maxLength: xgrammar drops the length bounds: oracle wrong",
    "xgr-pattern-loose": "pattern: xgrammar's regex translation accepts strings the pattern rejects "
                         "(^[A-Z]{1,5}(\\.[A-Z]{1,2})?$ takes SELECT; an optional group before [A-Z]+): oracle wrong",
    "llg-pattern-escape": "pattern with a negated class holding a backslash ([^/\\\\]): llguidance lets an escaped "
                          "backslash \\\\ through: oracle wrong",
    "ridge-pattern-invalid": "ridge allows a token after which no string valid by the pattern and lengths "
                             "exists (checked with the regex module): RIDGE BUG",
    "oracle-pattern-length": "pattern with lengths: the oracle allows a token past maxLength: oracle wrong",
    "llg-pattern-loose": "pattern: llguidance allows a token no string valid by the pattern begins with: oracle wrong",
    "unclassified": "not matched by any rule: needs a look",
    "-": "regex and GBNF walks: differences listed, not classified",
}

def _string_after(partial, text):
    """The characters of a JSON string written so far (`partial`, escaped) and then `text`, and
    whether `text` closes the string."""
    raw, i = partial + text, len(partial)
    closed = None
    j = 0
    while j < len(raw):
        if raw[j] == "\\":
            j += 2
            continue
        if raw[j] == '"' and j >= i:
            closed = j
            break
        j += 1
    if closed is not None:
        return _decoded_prefix(raw[:closed]), True
    return _decoded_prefix(raw), False


def ecma_to_python(pattern):
    """ECMA-262 pattern to the `regex` module's dialect where they differ on the corpus' patterns:
    '.' excludes every line terminator (\\n \\r U+2028 U+2029), \\d and \\w are ASCII."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e in "dw":
                ranges = "0-9" if e == "d" else "A-Za-z0-9_"
                out.append(ranges if in_class else "[" + ranges + "]")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":  # a leading ] is a member
                out.append("[]")
                i += 2
                continue
        elif c == ".":
            c = "[^\\n\\r\\u2028\\u2029]"
        out.append(c)
        i += 1
    return "".join(out)


def pattern_verdict(nodes, value_raw, text):
    """Whether a string that begins with what is written (`value_raw`, escaped) and then `text` can
    still be valid by some schema in `nodes` that has a pattern (JSON Schema patterns search; the
    `regex` module's partial matches tell whether a string can still be extended into a match) and by
    its lengths: "ok", "pattern" (no string matching begins so) or "length"."""
    import regex
    s, closed = _string_after(value_raw, text)
    verdicts = []
    for n in nodes:
        p = n.get("pattern")
        if not isinstance(p, str):
            continue
        p = ecma_to_python(p)
        try:
            full = regex.search(p, s) is not None
            viable = full if closed else regex.search(p, s, partial=True) is not None
        except regex.error:
            return "ok"
        maxlen = n.get("maxLength") if isinstance(n.get("maxLength"), int) else None
        minlen = n.get("minLength") if isinstance(n.get("minLength"), int) else 0
        if not viable:
            verdicts.append("pattern")
        elif maxlen is not None and (len(s) > maxlen or (not closed and len(s) == maxlen and not full)):
            verdicts.append("length")
        elif closed and len(s) < minlen:
            verdicts.append("length")
        else:
            return "ok"
    return verdicts[0] if verdicts else "ok"


def _decoded_prefix(partial):
    """The characters of a partial JSON string (escapes decoded; a trailing half escape dropped)."""
    for cut in range(len(partial), max(-1, len(partial) - 7), -1):
        try:
            return json.loads('"' + partial[:cut] + '"')
        except ValueError:
            continue
    return partial


# Who a cause puts in the wrong: the oracle ("oracle": too narrow, too loose, or only a narrower mask),
# nobody ("policy": both are valid choices), ridge narrower than a reference but inside its documented
# subset ("ridge-narrower"), ridge ("ridge-bug"); unclassified needs a look.
CATEGORY = {c: "oracle" for c in (
    "narrowing", "llg-del", "xgr-length-strings", "xgr-num-digits", "xgr-allof", "uri-scheme-digits",
    "datetime-lowercase", "date-days", "dot-line-terminator", "xgr-pattern-open-end", "xgr-pattern-length",
    "xgr-pattern-loose", "llg-pattern-escape", "llg-pattern-loose", "oracle-pattern-length", "invalid-utf8-oracle")}
CATEGORY.update({c: "policy" for c in (
    "esc-names", "esc-free-xgr", "esc-free-llg", "num-canonical", "num-int-fraction", "num-minus-zero",
    "order-unnamed", "order-named")})
CATEGORY.update({"datetime-leap": "ridge-narrower", "email-rfc5321": "ridge-narrower", "uri-ridge-loose": "ridge-bug",
                 "ridge-pattern-invalid": "ridge-bug", "invalid-utf8-ridge": "ridge-bug", "unclassified": "unclassified",
                 "-": "unclassified"})
RANK = ["oracle", "policy", "ridge-narrower", "ridge-bug", "unclassified"]


def category(cause, all_spellings):
    if cause == "esc-constrained":  # ridge's validation mode spells them, generation mode only as needed
        return "policy" if all_spellings else "oracle"
    return CATEGORY.get(cause, "unclassified")


def make_context(view, pos, before, oracle, all_spellings):
    nodes = view.at(pos.path, pos.containers) if pos.state not in ("key", "key_string") else \
        view.object_nodes(pos.path, pos.containers)
    ancestors, names, is_open = set(), set(), False
    for k in range(len(pos.path) + 1):
        ancestors |= keywords_of(view.at(pos.path[:k], pos.containers[:k]))
    for node in nodes:
        names |= set(node.get("properties", {})) | set(node.get("required", []))
        is_open |= node.get("additionalProperties", True) is not False and \
            node.get("unevaluatedProperties", True) is not False
    return Context(before, pos, nodes, oracle, frozenset(ancestors), names, is_open, all_spellings)


def classify_token(side, t, ctx, view, other_allows):
    """classify(), for a token that may span JSON elements ('","\\' ends a string and begins a member
    name): the difference lies in the first element whose end the other engine refuses (asked for a
    token of exactly the bytes up to there), else in the last; that element is classified at its own
    position."""
    if side == "narrowing":
        return "narrowing"
    text = t.decode("utf-8", "surrogateescape")
    if not _valid_utf8_after(ctx.before[-4:], t):
        return "invalid-utf8-" + side
    probe = ctx.pos.copy()
    cuts = [k for k in probe.feed(text) if k < len(text)]
    if not cuts:
        return classify(side, t, ctx)
    start, unknown = 0, False
    for k in cuts:
        allowed = other_allows(side, text[:k].encode("utf-8", "surrogateescape"))
        if allowed is False:
            break
        unknown |= allowed is None
        start = k
    else:
        k = len(text)
    pos = ctx.pos.copy()
    pos.feed(text[:start])
    seg = text[start:k].encode("utf-8", "surrogateescape")
    sub = make_context(view, pos, ctx.before + text[:start], ctx.oracle, ctx.all_spellings) if start else ctx
    cause = classify(side, seg, sub)
    if cause == "unclassified" and unknown:
        cause = classify(side, text[:cuts[0]].encode("utf-8", "surrogateescape"), ctx)
    return cause


def _utf8_prefix_ok(data):
    """Whether `data` is a prefix of well-formed UTF-8 (RFC 3629: no overlongs, surrogates or code
    points past U+10FFFF)."""
    i, n = 0, len(data)
    while i < n:
        b = data[i]
        if b < 0x80:
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            ranges = [(0x80, 0xBF)]
        elif b == 0xE0:
            ranges = [(0xA0, 0xBF), (0x80, 0xBF)]
        elif b == 0xED:
            ranges = [(0x80, 0x9F), (0x80, 0xBF)]
        elif 0xE1 <= b <= 0xEF:
            ranges = [(0x80, 0xBF)] * 2
        elif b == 0xF0:
            ranges = [(0x90, 0xBF), (0x80, 0xBF), (0x80, 0xBF)]
        elif 0xF1 <= b <= 0xF3:
            ranges = [(0x80, 0xBF)] * 3
        elif b == 0xF4:
            ranges = [(0x80, 0x8F), (0x80, 0xBF), (0x80, 0xBF)]
        else:
            return False
        for j, (lo, hi) in enumerate(ranges):
            if i + 1 + j >= n:
                return True
            if not lo <= data[i + 1 + j] <= hi:
                return False
        i += 1 + len(ranges)
    return True


def _valid_utf8_after(before, t):
    """Whether the bytes of `t` go on from the text before (which may end inside a character) as UTF-8."""
    tail = before.encode("utf-8", "surrogateescape")[-3:]
    start = len(tail)
    for k in range(len(tail) - 1, -1, -1):  # the last lead byte: where an incomplete character may begin
        if tail[k] < 0x80 or tail[k] >= 0xC0:
            start = k
            break
    return _utf8_prefix_ok(tail[start:] + t)


class Context:
    """What the classifier knows of one differing step: the position, the schemas there, the
    keywords of those and of the enclosing ones, and the member names of the enclosing object."""

    def __init__(self, before, pos, nodes, oracle, ancestors, names, is_open, all_spellings):
        self.before, self.pos, self.nodes, self.oracle = before, pos, nodes, oracle
        self.ancestors, self.names, self.is_open, self.all_spellings = ancestors, names, is_open, all_spellings
        self.kws = keywords_of(nodes)
        self.fmt = next((k[7:] for k in sorted(self.kws) if k.startswith("format=")), None)
        self.patterns = [n.get("pattern") for n in nodes if isinstance(n.get("pattern"), str)]
        self.maxlen = min((n["maxLength"] for n in nodes if isinstance(n.get("maxLength"), int)), default=None)
        st = pos.state
        self.value = _decoded_prefix(pos.partial) if st in ("string", "key_string") else ""


def classify(side, t, c):
    """The cause (a CAUSES id) of one token `t` (bytes) that one side alone allows at a step. side:
    "ridge" (ridge-only, and the oracle's matcher refuses it), "oracle" (oracle-only), or
    "narrowing" (ridge-only, but the oracle's matcher takes it: its mask is narrower than itself)."""
    if side == "narrowing":
        return "narrowing"
    st, kws, fmt = c.pos.state, c.kws, c.fmt
    xgr, llg = c.oracle == "xgrammar", c.oracle == "llguidance"
    esc = b"\\" in t
    if xgr and side == "oracle" and "allOf" in c.ancestors:
        return "xgr-allof"
    if llg and side == "ridge" and b"\x7f" in t:
        return "llg-del"
    if st in ("key", "key_string"):
        if side == "oracle" and xgr and (esc or c.before.endswith("\\")):
            return "esc-free-xgr"
        if side == "ridge" and esc:
            # A member name spelled with an escape: a named member in another spelling, unless the
            # object takes members it does not name here (then any name may begin so).
            return "order-unnamed" if c.is_open else "esc-names"
        text = t.decode("utf-8", "replace")
        if st == "key":
            text = text[1:] if text.startswith('"') else ""
        key = c.value + text.split('"')[0]
        named = key in c.names if '"' in text else any(n.startswith(key) for n in c.names)
        if side == "ridge" and c.is_open:
            return "order-unnamed"  # ridge takes a member it does not name here: any name may begin so
        return "order-named" if named else "order-unnamed"
    in_string = st == "string" or (st in ("value", "colon") and t.lstrip(b":").startswith(b'"'))
    if in_string:
        lengths = kws & {"minLength", "maxLength"}
        verdict = "ok"
        if c.patterns:
            text = t.decode("utf-8", "replace")
            if st != "string":
                text = text.lstrip(":")[1:]
            verdict = pattern_verdict(c.nodes, c.pos.partial if st == "string" else "", text)
            if side == "ridge" and verdict != "ok":
                return "ridge-pattern-invalid"
        if xgr and lengths and not c.patterns and not fmt and not (kws & {"enum", "const"}):
            if (side == "oracle" and any(b < 0x20 for b in t)) or (side == "ridge" and esc):
                return "xgr-length-strings"
        if fmt == "email" and side == "oracle" and (esc or b"[" in t):
            return "email-rfc5321"
        if side == "ridge" and esc:
            if c.patterns or fmt or kws & {"enum", "const"}:
                return "esc-constrained"
            if llg:
                return "esc-free-llg"
        if side == "oracle" and xgr and (esc or c.before.endswith("\\")) and not c.patterns and not fmt:
            return "esc-free-xgr"
        if fmt == "uri":
            if xgr and side == "ridge" and ":" not in c.value and t[:1].isdigit():
                return "uri-scheme-digits"
            if side == "ridge" and any(ch in t for ch in b"[]#"):
                return "uri-ridge-loose"
        if fmt in ("date", "date-time") and side == "oracle" and t[:1].isdigit() and \
                re.search(r"(^|[^0-9])[0-9]{4}-[0-9]{2}-[0-9]?$", c.value):
            return "date-days"
        if fmt == "date-time":
            if side == "ridge" and t[:1] in (b"t", b"z"):
                return "datetime-lowercase"
            if side == "oracle" and t[:1] == b"6" and c.value.endswith(":"):
                return "datetime-leap"
        if c.patterns:
            if side == "ridge" and xgr and any(not p.endswith("$") for p in c.patterns):
                return "xgr-pattern-open-end"
            if side == "oracle" and verdict == "length":
                return "xgr-pattern-length" if xgr else "oracle-pattern-length"
            if side == "oracle" and verdict == "pattern":
                if llg and b"\\\\" in t:
                    return "llg-pattern-escape"
                if any(x in t for x in (b"\\r", b"\\u2028", b"\\u2029", b"\r")) and \
                        any("." in p for p in c.patterns):
                    return "dot-line-terminator"
                return "xgr-pattern-loose" if xgr else "llg-pattern-loose"
        return "unclassified"
    if st == "number" or re.match(rb"^:?(-|[0-9.])", t):
        num = c.pos.partial if st == "number" else ""
        if side == "oracle":
            if re.search(rb"[eE.]|^[,}\]]", t) or ("e" in num.lower() and t[:1].isdigit()) or \
                    (num == "-" and t[:1] == b"0"):
                return "num-canonical"
        else:
            if "type=integer" in kws and t[:1] == b".":
                return "num-int-fraction"
            if t.lstrip(b":").startswith(b"-"):
                return "num-minus-zero"
            if xgr and "." in num and len(num.split(".")[1]) >= 6 and t[:1].isdigit():
                return "xgr-num-digits"
    return "unclassified"


# ---------------------------------------------------------------- run

def load_source(kind, name, corpus, regexes):
    if kind == "regex":
        return regexes[int(name.split("-")[1]) - 1]
    if kind == "grammar":
        return open(os.path.join(corpus, "gbnf", name + ".gbnf")).read()
    return open(os.path.join(corpus, "schemas", name + ".json")).read()


def show(tokens, ids, k):
    return [tokens[int(i)].decode("utf-8", "backslashreplace") if tokens[int(i)] else f"<special {int(i)}>" for i in ids[:k]]


def compare_walk(oracle, w, source, tokens, ridge_masks, args):
    """Replays ridge's walk through `oracle`; per step, whether the masks agree and if not how."""
    n = len(tokens)
    by_bytes = {t: i for i, t in enumerate(tokens) if t}
    m = oracle.compile(w["kind"], source)
    schema = json.loads(source) if w["kind"] == "json_schema" else None
    view = SchemaView(schema) if schema is not None else None
    steps, rejected = [], None
    for step, (want, count) in enumerate(zip(w["mask_fnv1a"], w["mask_counts"])):
        got = oracle.fill(m)
        equal = fnv1a_bytes(got) == want
        rec = {"step": step, "equal": equal, "equal_probed": equal}
        if not equal:
            rec.update({"ridge_allowed": count, "oracle_allowed": int(np.unpackbits(got, bitorder="little")[:n].sum())})
            before = b"".join(tokens[i] for i in w["tokens"][:step]).decode("utf-8", "replace")
            rec["before"] = before[-60:]
            if ridge_masks is not None:
                mine = ridge_masks[step]
                r_only = ids_of(mine & ~got, n)
                o_only = ids_of(got & ~mine, n)
                probed = r_only[: args.probe]
                taken = oracle.probe(m, probed)
                r_taken = [int(t) for t, ok in zip(probed, taken) if ok]
                r_refused = [int(t) for t, ok in zip(probed, taken) if not ok] + [int(t) for t in r_only[args.probe:]]
                rec["equal_probed"] = not len(o_only) and not r_refused and len(r_only) <= args.probe
                rec.update({"ridge_only": int(len(r_only)), "oracle_only": int(len(o_only)),
                            "ridge_only_taken_by_matcher": len(r_taken)})
                findings = []
                ctx = None
                if view is not None:
                    text = b"".join(tokens[i] for i in w["tokens"][:step]).decode("utf-8", "surrogateescape")
                    ctx = make_context(view, Position(text), text, oracle.name, args.all_spellings)
                    rec["path"] = "/".join(str(p) for p in ctx.pos.path)
                    rec["state"] = ctx.pos.state
                    rec["keywords"] = sorted(ctx.kws)

                def other_allows(side, head):
                    """Whether the other engine takes a token of exactly these bytes here (None: no such token)."""
                    tid = by_bytes.get(head)
                    if tid is None:
                        return None
                    if side == "oracle":
                        return bool((mine[tid >> 3] >> (tid & 7)) & 1)
                    return oracle.probe(m, [tid])[0]

                for side, ids in (("ridge", r_refused), ("oracle", [int(t) for t in o_only]),
                                  ("narrowing", r_taken)):
                    groups = collections.defaultdict(list)
                    for t in ids:
                        cause = "narrowing" if side == "narrowing" else \
                            classify_token(side, tokens[t], ctx, view, other_allows) if ctx else "-"
                        groups[cause].append(t)
                    for cause, members in groups.items():
                        findings.append({"side": side, "cause": cause, "count": len(members),
                                         "examples": show(tokens, members, args.examples)})
                rec["findings"] = findings
        steps.append(rec)
        if step >= len(w["tokens"]):
            break
        if not oracle.accept(m, w["tokens"][step]):
            t = w["tokens"][step]
            rejected = {"step": step, "token": show(tokens, [t], 1)[0]}
            break
    return steps, rejected


def summarize(rows, all_spellings=False):
    """Walk and step counts, differing steps by the worst category of their causes, and the findings
    (one side's tokens at one differing step) by cause."""
    out = {"walks": len(rows), "walks_cut": sum(1 for r in rows if r["rejected"]),
           "walks_equal": sum(1 for r in rows if not r["differences"] and not r["rejected"]),
           "walks_equal_probed": sum(1 for r in rows if r["equal_probed"] == r["compared"] and not r["rejected"]),
           "steps": sum(r["steps"] for r in rows), "compared": sum(r["compared"] for r in rows),
           "equal": sum(r["equal_steps"] for r in rows), "equal_probed": sum(r["equal_probed"] for r in rows)}
    by = {}
    out["differing_steps_by_category"] = worst = {k: 0 for k in RANK}
    for r in rows:
        for d in r["differences"]:
            cats = [category(f["cause"], all_spellings) for f in d.get("findings", [])] or ["unclassified"]
            worst[max(cats, key=RANK.index)] += 1
            for f in d.get("findings", []):
                c = by.setdefault((f["side"], f.get("cause", "-")), {"findings": 0, "schemas": set(), "example": None})
                c["findings"] += 1
                c["schemas"].add(r["name"])
                if c["example"] is None:
                    c["example"] = {"name": r["name"], "step": d["step"], "before": d["before"],
                                    "tokens": f["examples"], "count": f["count"]}
    out["causes"] = [{"side": side, "cause": cause, "findings": c["findings"], "schemas": len(c["schemas"]),
                      "example": c["example"]} for (side, cause), c in sorted(by.items(), key=lambda x: -x[1]["findings"])]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--walks", required=True)
    ap.add_argument("--masks", help="ridge's raw masks (ridge bench grammar --dump-masks): which tokens differ")
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "grammar_corpus"))
    ap.add_argument("--kinds", default="regex,grammar")
    ap.add_argument("--oracles", default="xgrammar", help="comma-separated: xgrammar, llguidance")
    ap.add_argument("--whitespace", choices=["compact", "spaced", "flexible"],
                    help="the JSON whitespace ridge's walks were made with (default: what the walks say, else compact)")
    ap.add_argument("--xgr-strict", action="store_true", help="xgrammar strict_mode (closes open objects and arrays)")
    ap.add_argument("--llg-unicode-escapes", action="store_true",
                    help="llguidance json_allow_general_unicode_escapes (\\uXXXX for printable characters too)")
    ap.add_argument("--filter", default="", help="only grammars whose name contains this")
    ap.add_argument("--probe", type=int, default=4096,
                    help="at most this many ridge-only tokens a step are offered to the oracle's matcher")
    ap.add_argument("--examples", type=int, default=6, help="decoded example tokens per side of a differing step")
    ap.add_argument("--quiet", action="store_true", help="no per-walk table")
    ap.add_argument("--json", help="write the per-walk results here")
    args = ap.parse_args()

    v = json.load(open(args.vocab))
    tokens = [bytes.fromhex(h) for h in v["tokens"]]
    stops = v["stop"]
    n = len(tokens)
    nbytes = (n + 7) // 8
    walks = [json.loads(line) for line in open(args.walks)]
    policy = {(w.get("whitespace"), w.get("all_spellings"), w.get("format_annotation")) for w in walks}
    if len(policy) > 1:
        sys.exit(f"{args.walks}: walks made in different JSON policies {policy}")
    ws, all_spellings, format_annotation = policy.pop() if policy else (None, None, None)
    args.whitespace = args.whitespace or ws or "compact"
    args.all_spellings = bool(all_spellings)
    print(f"ridge's walks: whitespace {args.whitespace}, "
          f"{'every spelling (--all-spellings)' if all_spellings else 'one spelling per value (generation)'}, "
          f"format {'an annotation' if format_annotation else 'asserted'}")
    oracles = [ORACLES[o](tokens, stops, args) for o in args.oracles.split(",")]
    regexes = [l.rstrip("\n") for l in open(os.path.join(args.corpus, "regex.txt"))]
    kinds = set(args.kinds.split(","))
    masks = np.memmap(args.masks, dtype=np.uint8, mode="r") if args.masks else None
    offset = 0  # walks write their steps' masks in order
    results = {o.name: [] for o in oracles}
    summaries = {}
    for w in walks:
        n_steps = len(w["mask_counts"])
        mine = None
        if masks is not None:
            mine = np.asarray(masks[offset * nbytes:(offset + n_steps) * nbytes]).reshape(n_steps, nbytes)
            if n_steps and fnv1a_bytes(mine[0]) != w["mask_fnv1a"][0]:
                sys.exit(f"{args.masks}: masks out of step with {args.walks} at {w['name']}")
        offset += n_steps
        if w["kind"] not in kinds or (w["error"] and not n_steps) or args.filter not in w["name"]:
            continue
        source = load_source(w["kind"], w["name"], args.corpus, regexes)
        for o in oracles:
            row = {"kind": w["kind"], "name": w["name"], "steps": n_steps, "text": w["text"]}
            try:
                steps, rejected = compare_walk(o, w, source, tokens, mine, args)
            except Exception as e:  # an oracle refusing a grammar is a result
                row["refused"] = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
                results[o.name].append(row)
                continue
            row["compared"] = len(steps)
            row["equal_steps"] = sum(s["equal"] for s in steps)
            row["equal_probed"] = sum(s["equal_probed"] for s in steps)
            row["differences"] = [s for s in steps if not s["equal"]]
            row["rejected"] = rejected
            if o.warnings:
                row["oracle_warnings"] = o.warnings
            results[o.name].append(row)

    for o in oracles:
        rows = results[o.name]
        ok = [r for r in rows if "refused" not in r]
        if not args.quiet:
            print(f"\n== {o.name} {o.version}")
            print(f"{'kind':11} {'name':38} {'steps':>5} {'repl':>5} {'equal':>5}  first difference; causes")
            for r in rows:
                if "refused" in r:
                    print(f"{r['kind']:11} {r['name'][:38]:38} {r['steps']:5} {'':>5} {'':>5}  refused: {r['refused'][:90]}")
                    continue
                d = r["differences"][0] if r["differences"] else None
                note = ""
                if d:
                    note = f"step {d['step']} after {d['before'][-24:]!r}: ridge {d['ridge_allowed']}, {o.name} {d['oracle_allowed']}"
                    for f in d.get("findings", [])[:2]:
                        note += f"; {f['side']}-only {f['count']} {f['examples'][:2]}"
                    causes = sorted({f["cause"] for x in r["differences"] for f in x.get("findings", [])})
                    if causes:
                        note += f"; causes: {', '.join(causes)}"
                if r["rejected"]:
                    note += f"; rejects ridge's token {r['rejected']['token']!r} at step {r['rejected']['step']}"
                print(f"{r['kind']:11} {r['name'][:38]:38} {r['steps']:5} {r['compared']:5} {r['equal_steps']:5}  {note}")
        summary = summarize(ok, args.all_spellings)
        summaries[o.name] = summary
        print(f"\n{o.name} {o.version}: {len(ok)} walks compared ({len(rows) - len(ok)} refused by {o.name}), "
              f"{summary['walks_equal']} with every mask equal"
              + (f" ({summary['walks_equal_probed']} once its matcher is asked)" if masks is not None else "")
              + f"; {summary['walks_cut']} cut short where it rejects ridge's token")
        print(f"  steps: ridge {summary['steps']}, replayed {summary['compared']}, equal {summary['equal']}"
              + (f", equal once its matcher is asked about ridge-only tokens {summary['equal_probed']}"
                 if masks is not None else ""))
        if masks is not None:
            print("  differing steps by who is off (the worst of their causes): " +
                  ", ".join(f"{k} {v}" for k, v in summary["differing_steps_by_category"].items()))
        if summary["causes"]:
            print(f"  {'findings':>8} {'schemas':>7}  {'side':14} {'who is off':14} cause: example (schema, step, after, tokens)")
        for c in summary["causes"]:
            e = c["example"]
            print(f"  {c['findings']:8} {c['schemas']:7}  {c['side'] + '-only':14} {category(c['cause'], args.all_spellings):14} "
                  f"{c['cause']}: {e['name']} step "
                  f"{e['step']} after {e['before'][-24:]!r} {e['tokens'][:3]}")
    if masks is not None and any(s["causes"] for s in summaries.values()):
        print("\ncauses:")
        for cause in sorted({c["cause"] for s in summaries.values() for c in s["causes"]}):
            print(f"  {cause}: {CAUSES.get(cause, '')}")
    if args.json:
        json.dump({o.name: {"version": o.version, "summary": summaries[o.name], "walks": results[o.name]}
                   for o in oracles}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
