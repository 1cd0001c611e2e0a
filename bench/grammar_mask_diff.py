#!/usr/bin/env python3
"""Step-by-step token-mask comparison of ridge against xgrammar (an external oracle): replays the walks
`ridge bench grammar --dump-walks` wrote (token ids and, per step, the allowed count and an FNV-1a hash
of ridge's mask) through xgrammar's matcher on the same vocabulary, and compares the masks at every step.

    build/ridge bench grammar -m MODEL --regex bench/grammar_corpus/regex.txt --gbnf bench/grammar_corpus/gbnf \\
        --dump-vocab vocab.json --dump-walks walks.jsonl
    python3 bench/grammar_mask_diff.py --vocab vocab.json --walks walks.jsonl [--kinds regex,grammar]

xgrammar is the reference here rather than llguidance: llguidance narrows its masks to its own
tokenization where the grammar forces bytes, ridge (like xgrammar) allows every token the grammar allows.
JSON schemas are compared too with --kinds json_schema, but there the engines' schema semantics differ by
design (ridge is exact: additionalProperties defaults to true, formats assert, one spelling per value), so
differences there are listed, not counted as errors. Benchmark-only: ridge never imports xgrammar.
"""
import argparse
import json
import os
import sys

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np


def fnv1a(words, n_vocab):
    """ridge's mask hash: FNV-1a 64 over ceil(V/8) bytes, token t at bit t%8 of byte t/8."""
    data = np.ascontiguousarray(words, dtype="<i4").view(np.uint8)[: (n_vocab + 7) // 8].copy()
    if n_vocab % 8:
        data[-1] &= (1 << (n_vocab % 8)) - 1
    h = 0xcbf29ce484222325
    for b in data.tobytes():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--walks", required=True)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "grammar_corpus"))
    ap.add_argument("--kinds", default="regex,grammar")
    ap.add_argument("--json", help="write the per-walk results here")
    args = ap.parse_args()

    import torch
    import xgrammar
    torch.set_num_threads(1)
    v = json.load(open(args.vocab))
    tokens = [bytes.fromhex(h) for h in v["tokens"]]
    stops = v["stop"]
    info = xgrammar.TokenizerInfo(tokens, xgrammar.VocabType.RAW, vocab_size=len(tokens), stop_token_ids=stops)
    compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)

    regexes = [l.rstrip("\n") for l in open(os.path.join(args.corpus, "regex.txt"))]
    kinds = set(args.kinds.split(","))
    rows, equal_walks, steps_equal, steps_total = [], 0, 0, 0
    for line in open(args.walks):
        w = json.loads(line)
        if w["kind"] not in kinds or w["error"]:
            continue
        name = w["name"]
        if w["kind"] == "regex":
            source = regexes[int(name.split("-")[1]) - 1]
            cg = compiler.compile_regex(source)
        elif w["kind"] == "grammar":
            cg = compiler.compile_grammar(open(os.path.join(args.corpus, "gbnf", name + ".gbnf")).read())
        else:
            text = open(os.path.join(args.corpus, "schemas", name + ".json")).read()
            cg = compiler.compile_json_schema(text, any_whitespace=False, separators=(",", ":"), strict_mode=False)
        m = xgrammar.GrammarMatcher(cg)
        mask = xgrammar.allocate_token_bitmask(1, len(tokens))
        first_diff, n_equal = None, 0
        for step, (want, count) in enumerate(zip(w["mask_fnv1a"], w["mask_counts"])):
            m.fill_next_token_bitmask(mask, 0)
            words = mask[0].numpy()
            bits = np.unpackbits(np.ascontiguousarray(words, dtype="<i4").view(np.uint8), bitorder="little")
            got_count = int(bits[: len(tokens)].sum())
            if fnv1a(words, len(tokens)) == want:
                n_equal += 1
            elif first_diff is None:
                first_diff = {"step": step, "ridge_allowed": count, "xgrammar_allowed": got_count,
                              "text_before": tokens_text(tokens, w["tokens"][:step])}
            if step >= len(w["tokens"]) or not m.accept_token(int(w["tokens"][step])):
                break
        steps_total += len(w["mask_counts"])
        steps_equal += n_equal
        equal_walks += first_diff is None
        rows.append({"kind": w["kind"], "name": name, "steps": len(w["mask_counts"]), "equal_steps": n_equal,
                     "first_difference": first_diff})
    print(f"{'kind':10} {'name':34} {'steps':>6} {'equal':>6}  first difference")
    for r in rows:
        d = r["first_difference"]
        note = "" if d is None else (f"step {d['step']}: ridge allows {d['ridge_allowed']}, xgrammar "
                                     f"{d['xgrammar_allowed']}, after {d['text_before'][-40:]!r}")
        print(f"{r['kind']:10} {r['name'][:34]:34} {r['steps']:6} {r['equal_steps']:6}  {note}")
    print(f"\nwalks with every mask equal: {equal_walks}/{len(rows)}; steps equal {steps_equal}/{steps_total}")
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


def tokens_text(tokens, ids):
    return b"".join(tokens[i] for i in ids).decode("utf-8", "replace")


if __name__ == "__main__":
    sys.exit(main())
