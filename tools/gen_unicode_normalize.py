#!/usr/bin/env python3
"""Generate src/tokenizer/unicode_normalize_data.cc: the character tables of WordPiece (BERT) text
normalisation and pre-tokenisation, as Hugging Face `tokenizers` 0.22 applies them.

Why the tables are read from `tokenizers` itself and not only from `unicodedata`: the Rust library
mixes three Unicode versions. Lowercasing and White_Space come from Rust's std (Unicode 16),
control / punctuation / nonspacing-mark classes from the `unicode_categories` crate (about
Unicode 8), NFD and the combining-mark class from `unicode-normalization-alignments` (about
Unicode 12). The interpreter's `unicodedata` is one other version, so taking its answers would
split or lowercase recently assigned characters differently. So every code point is put through
tokenizers' own normalizers and pre-tokenizer once (about 10 s); `unicodedata` supplies the
canonical combining classes (which tokenizers does not expose; each one is checked against its NFD
reordering) and a report of how far the interpreter's Unicode differs, on stderr.

Usage: python3 tools/gen_unicode_normalize.py > src/tokenizer/unicode_normalize_data.cc
"""
import sys
import unicodedata as ud

import tokenizers
from tokenizers import normalizers, pre_tokenizers

MAX_CODEPOINT = 0x110000
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3  # decomposed by arithmetic in unicode_normalize.cc


def codepoints():
    return (cp for cp in range(MAX_CODEPOINT) if not 0xD800 <= cp <= 0xDFFF)


def probe():
    """Per code point: what each tokenizers component does to it alone."""
    def bert(**kw):
        base = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
        base.update(kw)
        return normalizers.BertNormalizer(**base)
    clean, strip = bert(clean_text=True), bert(strip_accents=True)
    nfd, lower, accents = normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()
    pre = pre_tokenizers.BertPreTokenizer()
    t = {k: set() for k in ("control", "whitespace", "punctuation", "nonspacing", "combining")}
    t["decomposition"], t["lowercase"] = {}, {}
    for cp in codepoints():
        c = chr(cp)
        if clean.normalize_str(c) == "":
            t["control"].add(cp)
        # 'a' on both sides: whitespace splits in two, punctuation is isolated in three pieces.
        pieces = len(pre.pre_tokenize_str("a" + c + "a"))
        if pieces == 2:
            t["whitespace"].add(cp)
        elif pieces == 3:
            t["punctuation"].add(cp)
        if strip.normalize_str(c) == "":
            t["nonspacing"].add(cp)
        if accents.normalize_str(c) == "":
            t["combining"].add(cp)
        d = nfd.normalize_str(c)
        if d != c and not HANGUL_FIRST <= cp <= HANGUL_LAST:
            t["decomposition"][cp] = [ord(x) for x in d]
        low = lower.normalize_str(c)
        if low != c:
            t["lowercase"][cp] = [ord(x) for x in low]
    return t


def combining_classes():
    """unicodedata's classes, kept only where tokenizers' NFD reorders by them (its Unicode is older:
    a mark it does not know has class 0 there)."""
    nfd = normalizers.NFD()
    out = {}
    for cp in codepoints():
        ccc = ud.combining(chr(cp))
        if ccc == 0:
            continue
        # A neighbour of another class must be moved across it exactly as unicodedata predicts.
        other = "\u0345" if ccc < 240 else "\u0334"  # classes 240 and 1
        text = "a" + other + chr(cp)
        if nfd.normalize_str(text) == ud.normalize("NFD", text):
            out[cp] = ccc
    return out


def spans(cps):
    out = []
    for cp in sorted(cps):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def class_runs(ccc):
    out = []
    for cp in sorted(ccc):
        if out and out[-1][1] == cp - 1 and out[-1][2] == ccc[cp]:
            out[-1][1] = cp
        else:
            out.append([cp, cp, ccc[cp]])
    return out


def case_runs(mapping):
    """Single code point mappings as runs: first + k * stride -> itself + delta, k < count."""
    out = []
    for cp in sorted(mapping):
        delta = mapping[cp] - cp
        if out:
            first, count, stride, d = out[-1]
            last = first + (count - 1) * stride
            if d == delta and (count == 1 and cp - last <= 2 or count > 1 and cp - last == stride):
                out[-1] = [first, count + 1, cp - last, d]
                continue
        out.append([cp, 1, 1, delta])
    return out


def emit_rows(rows, per_line):
    lines = []
    for i in range(0, len(rows), per_line):
        lines.append("    " + " ".join(rows[i:i + per_line]))
    return "\n".join(lines)


def emit_table(ctype, name, rows, per_line, comment):
    return (f"// {comment}\nconst {ctype} {name}[] = {{\n{emit_rows(rows, per_line)}\n}};\n"
            f"const size_t {name}Count = sizeof({name}) / sizeof({name}[0]);\n")


def report_skew(t, ccc):
    """How the interpreter's Unicode differs from what tokenizers does (stderr only)."""
    diff = {"control": 0, "punctuation": 0, "nonspacing": 0, "lowercase": 0, "decomposition": 0}
    for cp in codepoints():
        c = chr(cp)
        cat = ud.category(c)
        control = cat in ("Cc", "Cf", "Co") and cp not in (9, 10, 13) or cp == 0xFFFD
        diff["control"] += control != (cp in t["control"])
        diff["punctuation"] += (cat[0] == "P" or (cp < 128 and c.isprintable() and not c.isalnum() and c != " ")) \
            != (cp in t["punctuation"])
        diff["nonspacing"] += (cat == "Mn") != (cp in t["nonspacing"]) and ud.decomposition(c) == ""
        diff["lowercase"] += (c.lower() != c) != (cp in t["lowercase"])
        diff["decomposition"] += (ud.normalize("NFD", c) != c) != (cp in t["decomposition"]) \
            and not HANGUL_FIRST <= cp <= HANGUL_LAST
    print(f"unicodedata {ud.unidata_version} vs tokenizers {tokenizers.__version__}, code points that differ: "
          + ", ".join(f"{k} {v}" for k, v in diff.items()), file=sys.stderr)


def main():
    t = probe()
    ccc = combining_classes()
    report_skew(t, ccc)
    pool, decomp_rows = [], []
    for cp, parts in sorted(t["decomposition"].items()):
        decomp_rows.append(f"{{0x{cp:05X}, {len(pool)}, {len(parts)}}},")
        pool.extend(parts)
    single = {cp: low[0] for cp, low in t["lowercase"].items() if len(low) == 1}
    multi = {cp: low for cp, low in t["lowercase"].items() if len(low) > 1}
    assert all(len(low) <= 3 for low in multi.values())

    out = [f"// Generated by tools/gen_unicode_normalize.py from tokenizers {tokenizers.__version__} "
           f"(classes from unicodedata {ud.unidata_version}). Do not edit.",
           '#include "tokenizer/unicode_normalize.h"', "", "namespace ridge::unicode::tables {", ""]
    set_comments = {
        "control": ("kBertControl", "Removed by BertNormalizer's clean_text (NUL, U+FFFD, Cc/Cf/Co but \\t \\n \\r)."),
        "whitespace": ("kBertWhitespace", "Rust's char::is_whitespace (White_Space)."),
        "punctuation": ("kBertPunctuation", "Isolated by BertPreTokenizer (ASCII punctuation and P*)."),
        "nonspacing": ("kNonspacingMark", "Dropped by BertNormalizer's strip_accents after NFD (Mn)."),
        "combining": ("kCombiningMark", "Dropped by the StripAccents normalizer (M*)."),
    }
    for key, (name, comment) in set_comments.items():
        rows = [f"{{0x{a:05X}, 0x{b:05X}}}," for a, b in spans(t[key])]
        out.append(emit_table("CodepointSpan", name, rows, 5, comment + " Inclusive spans."))
    rows = [f"{{0x{a:05X}, 0x{b:05X}, {c}}}," for a, b, c in class_runs(ccc)]
    out.append(emit_table("CombiningClassRun", "kCombiningClass", rows, 4,
                          "Canonical combining classes (0 where absent): inclusive spans of one class."))
    out.append(emit_table("Decomposition", "kDecompositions", decomp_rows, 4,
                          "Full canonical decompositions (Hangul syllables excepted): code point, offset in "
                          "kDecompositionData, length."))
    out.append(emit_table("uint32_t", "kDecompositionData", [f"0x{x:05X}," for x in pool], 10,
                          "The decompositions' code points, in canonical order."))
    rows = [f"{{0x{a:05X}, {n}, {s}, {d}}}," for a, n, s, d in case_runs(single)]
    out.append(emit_table("CaseRun", "kLowercaseRuns", rows, 4,
                          "Rust's char::to_lowercase for one-code-point results: first + k * stride maps to "
                          "itself + delta, k < count."))
    rows = []
    for cp, low in sorted(multi.items()):
        padded = low + [0] * (3 - len(low))
        rows.append(f"{{0x{cp:05X}, {{{', '.join(f'0x{x:05X}' for x in padded)}}}}},")
    out.append(emit_table("LongLowercase", "kLongLowercase", rows, 2,
                          "Lowercase mappings longer than one code point (SpecialCasing), 0-padded."))
    out.append("}  // namespace ridge::unicode::tables")
    print("\n".join(out))


if __name__ == "__main__":
    main()
